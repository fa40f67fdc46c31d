//! Why a hydrological-model file was refused: every variant names the file, the place (the
//! header, a record, an array, a subgrid), the byte offset where the reader was, what the
//! format requires there and what the file holds instead.

use std::path::{Path, PathBuf};

use crate::methods::io::ReadError;

/// A refusal of a MODFLOW, MT3D or ParFlow file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HydroError {
    /// The file could not be read at all (missing, a folder, a pipe, too large).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The file ends inside a structure the format requires.
    #[error(
        "{}: {place} at byte {offset}: expected {expected}, but the file ends {available} bytes later",
        file.display()
    )]
    Truncated {
        /// The file as the caller named it.
        file: PathBuf,
        /// Which structure: `record 3 (ILAY 2)`, `array BOTM`, `subgrid 1`, `the header`.
        place: String,
        /// Byte offset of the structure's start.
        offset: usize,
        /// What a whole file has there (`3200 bytes of data: 40 × 20 single-precision values`).
        expected: String,
        /// Bytes left in the file from `offset`.
        available: usize,
    },
    /// A field holds a value the format does not allow there.
    #[error("{}: {place} at byte {offset}: expected {expected}, found {found}", file.display())]
    Field {
        /// The file as the caller named it.
        file: PathBuf,
        /// Which structure holds the field.
        place: String,
        /// Byte offset of the field (or of its structure when the fault is between fields).
        offset: usize,
        /// What the format requires.
        expected: String,
        /// What is there (file text escaped, never raw).
        found: String,
    },
    /// A ParFlow subgrid that lies outside the grid, overlaps another, or leaves cells of
    /// the grid without a value.
    #[error("{}: subgrid {subgrid} at byte {offset}: expected {expected}, found {found}", file.display())]
    Subgrid {
        /// The file as the caller named it.
        file: PathBuf,
        /// 0-based subgrid index in the file (the last one read for a coverage gap).
        subgrid: usize,
        /// Byte offset of the subgrid's header.
        offset: usize,
        /// What the format requires.
        expected: String,
        /// What the subgrid says.
        found: String,
    },
}

impl HydroError {
    /// The file the error is about.
    pub fn file(&self) -> &Path {
        match self {
            HydroError::Read(ReadError::Io { file, .. })
            | HydroError::Read(ReadError::Malformed { file, .. })
            | HydroError::Read(ReadError::Format { file, .. })
            | HydroError::Truncated { file, .. }
            | HydroError::Field { file, .. }
            | HydroError::Subgrid { file, .. } => file,
        }
    }

    /// The byte offset the error names (`None` for an I/O error).
    pub fn offset(&self) -> Option<usize> {
        match self {
            HydroError::Read(_) => None,
            HydroError::Truncated { offset, .. }
            | HydroError::Field { offset, .. }
            | HydroError::Subgrid { offset, .. } => Some(*offset),
        }
    }

    pub(crate) fn field(
        file: &Path,
        place: impl Into<String>,
        offset: usize,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        HydroError::Field {
            file: file.to_path_buf(),
            place: place.into(),
            offset,
            expected: expected.into(),
            found: found.into(),
        }
    }

    pub(crate) fn truncated(
        file: &Path,
        place: impl Into<String>,
        offset: usize,
        expected: impl Into<String>,
        file_len: usize,
    ) -> Self {
        HydroError::Truncated {
            file: file.to_path_buf(),
            place: place.into(),
            offset,
            expected: expected.into(),
            available: file_len.saturating_sub(offset),
        }
    }
}

/// The shared reader error (what `hydrogeo-studio read` and the catalog pass on): the whole
/// sentence is kept as a format error, so the offset and both sides of the mismatch survive
/// (`ReadError::malformed` shortens `found` to 80 characters, which can cut the offset off).
impl From<HydroError> for ReadError {
    fn from(e: HydroError) -> Self {
        match e {
            HydroError::Read(r) => r,
            other => {
                let file = other.file().to_path_buf();
                let text = other.to_string();
                let prefix = format!("{}: ", file.display());
                let message = text.strip_prefix(&prefix).unwrap_or(&text).to_string();
                ReadError::format(&file, message)
            }
        }
    }
}

/// Bytes of a file's text field shown in an error: printable ASCII as is, anything else as
/// `\xNN`, in quotes.
pub(crate) fn quoted_bytes(raw: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len() + 2);
    out.push('\'');
    for &b in raw {
        if (0x20..0x7f).contains(&b) && b != b'\'' && b != b'\\' {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_error_keeps_place_offset_and_both_sides() {
        let e = HydroError::truncated(
            Path::new("m.hds"),
            "record 2 (ILAY 1)",
            3244,
            "3200 bytes of data",
            3300,
        );
        assert_eq!(e.offset(), Some(3244));
        let r: ReadError = e.into();
        assert_eq!(
            r.to_string(),
            "m.hds: record 2 (ILAY 1) at byte 3244: expected 3200 bytes of data, but the file ends 56 bytes later"
        );
        assert_eq!(quoted_bytes(b"HE\0D'"), "'HE\\x00D\\x27'");
    }
}

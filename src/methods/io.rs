//! What every reader shares: the error that names file, line, what was expected and what
//! was found, and small helpers for text tables.
//!
//! A reader never modifies the file it reads and never panics on what it finds in it:
//! every reader in `methods` is property-tested with arbitrary bytes.

use std::path::{Path, PathBuf};

/// Why a file could not be read, in terms a user can act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReadError {
    /// The file could not be opened or read at all.
    #[error("{file}: cannot read the file: {message}")]
    Io {
        /// The file as the user named it.
        file: PathBuf,
        /// The operating system's message.
        message: String,
    },
    /// A line (1-based) did not hold what the format requires there.
    #[error("{file}, line {line}: expected {expected}, found {found}")]
    Malformed {
        /// The file as the user named it.
        file: PathBuf,
        /// 1-based line number; 0 when the problem is not tied to one line (binary files
        /// use the byte offset in `found`).
        line: usize,
        /// What the format requires at that place.
        expected: String,
        /// What is there instead (shortened to 80 characters).
        found: String,
    },
    /// The file is not in a format this reader understands (or none was recognised).
    #[error("{file}: {message}")]
    Format {
        /// The file as the user named it.
        file: PathBuf,
        /// What was recognised and what was not.
        message: String,
    },
}

impl ReadError {
    /// A malformed-line error; `found` is shortened so a binary line cannot flood a message.
    pub fn malformed(
        file: &Path,
        line: usize,
        expected: impl Into<String>,
        found: impl AsRef<str>,
    ) -> Self {
        ReadError::Malformed {
            file: file.to_path_buf(),
            line,
            expected: expected.into(),
            found: shorten(found.as_ref(), 80),
        }
    }

    /// A format-level error (not tied to one line).
    pub fn format(file: &Path, message: impl Into<String>) -> Self {
        ReadError::Format {
            file: file.to_path_buf(),
            message: message.into(),
        }
    }

    /// An I/O error on `file`.
    pub fn io(file: &Path, err: &std::io::Error) -> Self {
        ReadError::Io {
            file: file.to_path_buf(),
            message: err.to_string(),
        }
    }
}

/// `text` cut to `max` characters with an ellipsis, quoted, control bytes shown as `\xNN`
/// (a file's content is never quoted raw); `"an empty line"` when empty.
pub fn shorten(text: &str, max: usize) -> String {
    let t = text.trim_end_matches(['\r', '\n']);
    if t.is_empty() {
        return "an empty line".to_string();
    }
    let mut out: String = t.chars().take(max).collect();
    if t.chars().count() > max {
        out.push('…');
    }
    format!("\"{}\"", escape_control(&out, ""))
}

/// `text` with every control character (below U+0020, and U+007F) written as `\xNN`, except
/// those listed in `keep` (e.g. `"\n\t"` for a Markdown document).
pub fn escape_control(text: &str, keep: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if (c < ' ' || c == '\u{7f}') && !keep.contains(c) {
            out.push_str(&format!("\\x{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The largest data file read (4 GiB: a long GPR line is hundreds of MB; more is not one
/// survey, and reading it whole would exhaust the memory of the machines we run on).
pub const MAX_FILE_BYTES: u64 = 4 << 30;

/// Read a whole file as bytes, mapping the error to [`ReadError::Io`]. Only regular files are
/// read (after following links): a FIFO would block for ever and a device such as
/// `/dev/zero` never ends, so both are refused by type; a file larger than
/// [`MAX_FILE_BYTES`] is refused by size, and at most that much is read even if it grows.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, ReadError> {
    use std::io::Read as _;
    let meta = regular_file(path)?;
    let file = std::fs::File::open(path).map_err(|e| ReadError::io(path, &e))?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_FILE_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| ReadError::io(path, &e))?;
    Ok(bytes)
}

/// The file's metadata when it is a regular file no larger than [`MAX_FILE_BYTES`] (links
/// followed); otherwise an error that says what it is instead — a folder, a pipe or device,
/// too large, or the system's own words (no such file, a cycle of links, no permission).
pub fn regular_file(path: &Path) -> Result<std::fs::Metadata, ReadError> {
    let meta = std::fs::metadata(path).map_err(|e| ReadError::io(path, &e))?;
    let refuse = |message: String| ReadError::Io {
        file: path.to_path_buf(),
        message,
    };
    if meta.is_dir() {
        return Err(refuse("this is a folder, not a data file".into()));
    }
    if !meta.is_file() {
        return Err(refuse(
            "not a regular file (a pipe, socket or device is not read)".into(),
        ));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(refuse(format!(
            "{} bytes; a data file is read only up to {MAX_FILE_BYTES} bytes",
            meta.len()
        )));
    }
    Ok(meta)
}

/// Read a file as text. Invalid UTF-8 is replaced (instrument exports are often Latin-1),
/// so only an I/O failure is an error here.
pub fn read_text(path: &Path) -> Result<String, ReadError> {
    let bytes = read_bytes(path)?;
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// Split a data line on commas, semicolons, tabs or runs of spaces.
pub fn fields(line: &str) -> Vec<&str> {
    line.split([',', ';', '\t', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// Parse a float the way instrument files write them (also `1.5D+02`, Fortran style).
/// Non-finite results are refused.
pub fn parse_f64(token: &str) -> Option<f64> {
    let t = token.trim();
    let v = t
        .parse::<f64>()
        .ok()
        .or_else(|| t.replace(['D', 'd'], "e").parse::<f64>().ok())?;
    v.is_finite().then_some(v)
}

/// Parse every field of `line` as a float, or say which one is not a number.
pub fn parse_row(path: &Path, line_no: usize, line: &str) -> Result<Vec<f64>, ReadError> {
    fields(line)
        .into_iter()
        .map(|tok| {
            parse_f64(tok).ok_or_else(|| ReadError::malformed(path, line_no, "a number", tok))
        })
        .collect()
}

/// A date written year-first in a file name (`2017-11-05`, `20171105`, `2017_11_05`),
/// as `(year, month, day)`. Month-or-day-first dates are ambiguous and are not read here:
/// the caller asks the user instead of guessing.
pub fn year_first_date(name: &str) -> Option<(i32, u32, u32)> {
    let b = name.as_bytes();
    let digit = |i: usize| {
        b.get(i)
            .filter(|c| c.is_ascii_digit())
            .map(|c| (c - b'0') as u32)
    };
    let num = |from: usize, len: usize| -> Option<u32> {
        (from..from + len).try_fold(0u32, |acc, i| Some(acc * 10 + digit(i)?))
    };
    for start in 0..b.len() {
        // A year must not be the tail of a longer number.
        if start > 0 && b[start - 1].is_ascii_digit() {
            continue;
        }
        let Some(year) = num(start, 4) else { continue };
        if !(1950..=2100).contains(&year) {
            continue;
        }
        let (m_at, d_at) = match b.get(start + 4) {
            Some(b'-' | b'_' | b'.') if matches!(b.get(start + 7), Some(b'-' | b'_' | b'.')) => {
                (start + 5, start + 8)
            }
            Some(c) if c.is_ascii_digit() => (start + 4, start + 6),
            _ => continue,
        };
        let (Some(month), Some(day)) = (num(m_at, 2), num(d_at, 2)) else {
            continue;
        };
        if (1..=12).contains(&month) && (1..=31).contains(&day) {
            return Some((year as i32, month, day));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    /// Issue 19: `read` of a FIFO hung and a link to /dev/zero was read until memory ran out.
    #[test]
    fn pipes_devices_and_folders_are_refused_by_type() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("survey.dat");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let link = dir.path().join("zero.dat");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        for (path, words) in [
            (fifo.as_path(), "not a regular file"),
            (link.as_path(), "not a regular file"),
            (dir.path(), "a folder"),
        ] {
            let e = super::read_bytes(path).unwrap_err().to_string();
            assert!(
                e.contains(words) && e.contains(&path.display().to_string()),
                "{e}"
            );
        }
    }

    use super::*;

    #[test]
    fn malformed_error_names_everything() {
        let e = ReadError::malformed(Path::new("a.dat"), 12, "four electrode numbers", "1 2 x");
        assert_eq!(
            e.to_string(),
            "a.dat, line 12: expected four electrode numbers, found \"1 2 x\""
        );
    }

    #[test]
    fn fortran_exponents_and_non_finite() {
        assert_eq!(parse_f64("1.5D+02"), Some(150.0));
        assert_eq!(parse_f64("nan"), None);
        assert_eq!(parse_f64("inf"), None);
        assert_eq!(parse_f64("-2e-3"), Some(-0.002));
    }

    #[test]
    fn year_first_dates_only() {
        assert_eq!(
            year_first_date("site_2026-01-12_05-50-38.dat"),
            Some((2026, 1, 12))
        );
        assert_eq!(year_first_date("20171105_1418.Data"), Some((2017, 11, 5)));
        assert_eq!(year_first_date("line_12-01-2026.dat"), None);
        assert_eq!(year_first_date("survey.dat"), None);
    }

    #[test]
    fn fields_split_on_any_separator() {
        assert_eq!(fields(" 1, 2;3\t4  5 "), vec!["1", "2", "3", "4", "5"]);
    }
}

#[cfg(test)]
mod escape_tests {
    use super::*;

    #[test]
    fn control_bytes_are_shown_as_hex_never_raw() {
        // Issue 17: a truncated ERT file put a NUL byte into report.md.
        assert_eq!(
            escape_control("a\0b\x1bc\td\n", ""),
            "a\\x00b\\x1Bc\\x09d\\x0A"
        );
        assert_eq!(escape_control("a\tb\nc\rd", "\n\t"), "a\tb\nc\\x0Dd");
        assert_eq!(shorten("12\0\0\0", 80), "\"12\\x00\\x00\\x00\"");
    }
}

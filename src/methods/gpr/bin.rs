//! Bounds-checked little/big-endian field access for the binary readers. Every accessor
//! returns `None` past the end of the buffer instead of panicking.

use std::path::Path;

use crate::methods::io::ReadError;

/// A byte buffer with checked typed reads.
pub(crate) struct Bytes<'a> {
    pub(crate) buf: &'a [u8],
}

impl<'a> Bytes<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Bytes { buf }
    }

    fn array<const N: usize>(&self, at: usize) -> Option<[u8; N]> {
        let end = at.checked_add(N)?;
        self.buf.get(at..end)?.try_into().ok()
    }

    pub(crate) fn u16_le(&self, at: usize) -> Option<u16> {
        self.array::<2>(at).map(u16::from_le_bytes)
    }
    pub(crate) fn i16_le(&self, at: usize) -> Option<i16> {
        self.array::<2>(at).map(i16::from_le_bytes)
    }
    pub(crate) fn u32_le(&self, at: usize) -> Option<u32> {
        self.array::<4>(at).map(u32::from_le_bytes)
    }
    pub(crate) fn f32_le(&self, at: usize) -> Option<f32> {
        self.array::<4>(at).map(f32::from_le_bytes)
    }
    pub(crate) fn u16_be(&self, at: usize) -> Option<u16> {
        self.array::<2>(at).map(u16::from_be_bytes)
    }
    pub(crate) fn i16_be(&self, at: usize) -> Option<i16> {
        self.array::<2>(at).map(i16::from_be_bytes)
    }
    pub(crate) fn i32_be(&self, at: usize) -> Option<i32> {
        self.array::<4>(at).map(i32::from_be_bytes)
    }
    pub(crate) fn u32_be(&self, at: usize) -> Option<u32> {
        self.array::<4>(at).map(u32::from_be_bytes)
    }
    pub(crate) fn f64_be(&self, at: usize) -> Option<f64> {
        self.array::<8>(at).map(f64::from_be_bytes)
    }

    /// A NUL-terminated (or full-width) Latin-1 string field of `len` bytes.
    pub(crate) fn cstr(&self, at: usize, len: usize) -> Option<String> {
        let end = at.checked_add(len)?;
        let raw = self.buf.get(at..end)?;
        let raw = raw.split(|&b| b == 0).next().unwrap_or(&[]);
        Some(
            raw.iter()
                .map(|&b| b as char)
                .collect::<String>()
                .trim()
                .to_string(),
        )
    }
}

/// The error for a binary field that is missing or out of range.
pub(crate) fn bad_field(
    path: &Path,
    offset: usize,
    expected: impl Into<String>,
    found: impl std::fmt::Display,
) -> ReadError {
    ReadError::malformed(
        path,
        0,
        expected,
        format!("{found} at byte offset {offset}"),
    )
}

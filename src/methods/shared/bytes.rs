//! Bounds-checked little- or big-endian field access for the binary readers (SEG-Y, SEG-2,
//! DZT, DT1): every read returns `None` past the end of the buffer instead of panicking, and
//! [`bad_field`] is the one error for a binary field that is missing or out of range.

use std::path::Path;

use crate::methods::io::ReadError;

/// A byte slice read in one byte order.
#[derive(Clone, Copy)]
pub(crate) struct Bytes<'a> {
    pub b: &'a [u8],
    pub big_endian: bool,
}

impl<'a> Bytes<'a> {
    /// `buf` read little-endian.
    pub fn le(buf: &'a [u8]) -> Self {
        Bytes {
            b: buf,
            big_endian: false,
        }
    }

    /// `buf` read big-endian.
    pub fn be(buf: &'a [u8]) -> Self {
        Bytes {
            b: buf,
            big_endian: true,
        }
    }

    /// The same bytes in the other byte order.
    pub fn with_big_endian(self, big_endian: bool) -> Self {
        Bytes { big_endian, ..self }
    }

    pub fn slice(&self, off: usize, len: usize) -> Option<&'a [u8]> {
        self.b.get(off..off.checked_add(len)?)
    }

    fn arr<const N: usize>(&self, off: usize) -> Option<[u8; N]> {
        let s = self.slice(off, N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        if self.big_endian {
            a.reverse();
        }
        Some(a)
    }

    pub fn u8(&self, off: usize) -> Option<u8> {
        self.b.get(off).copied()
    }
    pub fn u16(&self, off: usize) -> Option<u16> {
        self.arr::<2>(off).map(u16::from_le_bytes)
    }
    pub fn i16(&self, off: usize) -> Option<i16> {
        self.arr::<2>(off).map(i16::from_le_bytes)
    }
    pub fn u32(&self, off: usize) -> Option<u32> {
        self.arr::<4>(off).map(u32::from_le_bytes)
    }
    pub fn i32(&self, off: usize) -> Option<i32> {
        self.arr::<4>(off).map(i32::from_le_bytes)
    }
    pub fn u64(&self, off: usize) -> Option<u64> {
        self.arr::<8>(off).map(u64::from_le_bytes)
    }
    pub fn i64(&self, off: usize) -> Option<i64> {
        self.arr::<8>(off).map(i64::from_le_bytes)
    }
    pub fn f32(&self, off: usize) -> Option<f32> {
        self.arr::<4>(off).map(f32::from_le_bytes)
    }
    pub fn f64(&self, off: usize) -> Option<f64> {
        self.arr::<8>(off).map(f64::from_le_bytes)
    }

    /// A NUL-terminated (or full-width) Latin-1 string field of `len` bytes, trimmed.
    pub fn cstr(&self, at: usize, len: usize) -> Option<String> {
        let raw = self.slice(at, len)?;
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

/// The error for a binary field that is missing or out of range: `found` at byte `offset`.
pub(crate) fn bad_field(
    path: &Path,
    offset: usize,
    expected: impl Into<String>,
    found: impl std::fmt::Display,
) -> ReadError {
    ReadError::malformed(path, 0, expected, format!("{found} at byte {offset}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_byte_orders_and_never_past_the_end() {
        let buf = [0x01, 0x02, 0x03, 0x04];
        assert_eq!(Bytes::le(&buf).u16(0), Some(0x0201));
        assert_eq!(Bytes::be(&buf).u16(0), Some(0x0102));
        assert_eq!(Bytes::be(&buf).u32(0), Some(0x0102_0304));
        assert_eq!(Bytes::le(&buf).i32(0), Some(0x0403_0201));
        assert_eq!(Bytes::le(&buf).u32(1), None);
        assert_eq!(Bytes::le(&buf).u16(usize::MAX), None);
        assert_eq!(Bytes::le(b"ab\0cd").cstr(0, 5).as_deref(), Some("ab"));
        assert_eq!(Bytes::le(b"ab").cstr(0, 5), None);
    }
}

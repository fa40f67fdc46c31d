//! NumPy `.npy` (format version 1.0) and `.npz` (a store-only zip of `.npy` members)
//! writers, so a processed line opens with `numpy.load` in the user's own scripts.
//!
//! `.npy`: the magic `\x93NUMPY`, version 1.0, a little-endian u16 header length, then an
//! ASCII dict `{'descr': '<f8', 'fortran_order': False, 'shape': (r, c), }` padded with
//! spaces and ended by `\n` so that the data start at a multiple of 64 bytes, then the
//! values as little-endian float64 in C (row-major) order (NEP 1, "A simple file format for
//! NumPy arrays").
//!
//! `.npz`: a zip archive (PKWARE APPNOTE 6.3) with one stored (method 0, uncompressed) member
//! `<name>.npy` per array, CRC-32 (IEEE 802.3 polynomial 0xEDB88320) of each member, a
//! central directory and the end-of-central-directory record. Zip64 is not written, so a
//! member must stay below 4 GiB.

use std::io::Write;
use std::path::Path;

use ndarray::ArrayView2;

use super::line::GprError;

/// The bytes of an `.npy` file holding `data` as float64 (C order).
pub fn npy_bytes(data: ArrayView2<f64>) -> Vec<u8> {
    let (r, c) = data.dim();
    npy_bytes_raw(&format!("({r}, {c})"), r * c, data.iter().copied())
}

/// The bytes of an `.npy` file holding a vector as float64.
pub fn npy_bytes_1d(values: &[f64]) -> Vec<u8> {
    npy_bytes_raw(
        &format!("({},)", values.len()),
        values.len(),
        values.iter().copied(),
    )
}

fn npy_bytes_raw(shape: &str, n: usize, values: impl Iterator<Item = f64>) -> Vec<u8> {
    let mut dict = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}");
    // 6 magic + 2 version + 2 length + dict + '\n' ≡ 0 (mod 64).
    let unpadded = 10 + dict.len() + 1;
    let pad = (64 - unpadded % 64) % 64;
    dict.push_str(&" ".repeat(pad));
    dict.push('\n');
    let mut out = Vec::with_capacity(10 + dict.len() + 8 * n);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    // The dict is at most a few hundred bytes, far below u16::MAX.
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// CRC-32 (IEEE), table-driven.
pub fn crc32(bytes: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, e) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *e = c;
        }
        t
    });
    let mut c = 0xFFFF_FFFFu32;
    for &b in bytes {
        c = table[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    c ^ 0xFFFF_FFFF
}

/// A store-only zip archive of `(name, bytes)` members.
pub fn zip_store(members: &[(String, Vec<u8>)]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    // 1980-01-01 00:00 in DOS format (a fixed date keeps the archive reproducible).
    let (dos_time, dos_date) = (0u16, (1u16 << 5) | 1);
    for (name, data) in members {
        let size = u32::try_from(data.len()).map_err(|_| format!("{name} is 4 GiB or more"))?;
        let offset =
            u32::try_from(out.len()).map_err(|_| "archive is 4 GiB or more".to_string())?;
        let crc = crc32(data);
        let name_len = name.len() as u16;
        let mut local = Vec::with_capacity(30 + name.len());
        local.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        local.extend_from_slice(&20u16.to_le_bytes()); // version needed
        local.extend_from_slice(&0u16.to_le_bytes()); // flags
        local.extend_from_slice(&0u16.to_le_bytes()); // method: stored
        local.extend_from_slice(&dos_time.to_le_bytes());
        local.extend_from_slice(&dos_date.to_le_bytes());
        local.extend_from_slice(&crc.to_le_bytes());
        local.extend_from_slice(&size.to_le_bytes());
        local.extend_from_slice(&size.to_le_bytes());
        local.extend_from_slice(&name_len.to_le_bytes());
        local.extend_from_slice(&0u16.to_le_bytes()); // extra length
        local.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&local);
        out.extend_from_slice(data);
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&20u16.to_le_bytes()); // version made by
        central.extend_from_slice(&20u16.to_le_bytes()); // version needed
        central.extend_from_slice(&0u16.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes());
        central.extend_from_slice(&dos_time.to_le_bytes());
        central.extend_from_slice(&dos_date.to_le_bytes());
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&size.to_le_bytes());
        central.extend_from_slice(&size.to_le_bytes());
        central.extend_from_slice(&name_len.to_le_bytes());
        central.extend_from_slice(&[0u8; 8]); // extra, comment, disk start
        central.extend_from_slice(&[0u8; 6]); // internal, external attributes
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_offset = u32::try_from(out.len()).map_err(|_| "archive is 4 GiB or more".to_string())?;
    let n = u16::try_from(members.len()).map_err(|_| "too many members".to_string())?;
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0u8; 4]); // disk numbers
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes()); // comment length
    Ok(out)
}

/// Write bytes to `path` (a new file or an overwrite of our own output).
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), GprError> {
    let err = |e: std::io::Error| GprError::Write {
        file: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut f = std::fs::File::create(path).map_err(err)?;
    f.write_all(bytes).map_err(err)
}

/// Write one array as `.npy`.
pub fn write_npy(path: &Path, data: ArrayView2<f64>) -> Result<(), GprError> {
    write_file(path, &npy_bytes(data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn crc32_check_value() {
        // The standard check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn npy_layout() {
        let a = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let b = npy_bytes(a.t()); // a transposed (Fortran-order) view is written in C order
        assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
        let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
        assert_eq!((10 + hlen) % 64, 0);
        let header = std::str::from_utf8(&b[10..10 + hlen]).unwrap();
        assert!(header.starts_with("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }"));
        assert!(header.ends_with('\n'));
        let vals: Vec<f64> = b[10 + hlen..]
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(vals, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    }

    #[test]
    fn zip_structure() {
        let z = zip_store(&[("a.npy".into(), vec![1, 2, 3]), ("bb.npy".into(), vec![])]).unwrap();
        // Local header of member 1, its data, local header of member 2 …
        assert_eq!(&z[..4], &0x0403_4b50u32.to_le_bytes());
        assert_eq!(
            u32::from_le_bytes(z[14..18].try_into().unwrap()),
            crc32(&[1, 2, 3])
        );
        assert_eq!(&z[30..35], b"a.npy");
        assert_eq!(&z[35..38], &[1, 2, 3]);
        // End of central directory: 2 entries, directory right after the members.
        let eocd = z.len() - 22;
        assert_eq!(&z[eocd..eocd + 4], &0x0605_4b50u32.to_le_bytes());
        assert_eq!(u16::from_le_bytes([z[eocd + 10], z[eocd + 11]]), 2);
        let cd = u32::from_le_bytes(z[eocd + 16..eocd + 20].try_into().unwrap()) as usize;
        assert_eq!(&z[cd..cd + 4], &0x0201_4b50u32.to_le_bytes());
        assert_eq!(cd, 30 + 5 + 3 + 30 + 6);
    }
}

//! ParFlow binary files (`.pfb`): pressure head, saturation and the other cell arrays
//! ParFlow writes (`run.out.press.00010.pfb`, `run.out.satur.00010.pfb`, `run.out.perm_x.pfb`).
//!
//! Format (ParFlow user manual, "ParFlow Binary Files (.pfb)", docs/user_manual/files.rst of
//! the ParFlow repository): big-endian throughout,
//!
//! ```text
//! X, Y, Z        (double)   the grid's lower corner
//! NX, NY, NZ     (integer)  cells along x, y, z
//! DX, DY, DZ     (double)   cell sizes
//! num_subgrids   (integer)
//! for each subgrid:
//!   ix, iy, iz   (integer)  its first cell, 0-based
//!   nx, ny, nz   (integer)  its extent
//!   rx, ry, rz   (integer)  refinement levels (0)
//!   nx × ny × nz values (double), x fastest, then y, then z
//! ```
//!
//! A file written by a run on P × Q × R processes holds P·Q·R subgrids; the reader puts
//! them together into the full NX × NY × NZ array and checks that each subgrid lies inside
//! the grid and that every cell is given exactly once. The z index 0 is the bottom layer.
//! Values are in ParFlow's units (pressure head in the run's length unit; saturation, 0–1).

use std::path::{Path, PathBuf};

use ndarray::Array3;

use super::error::HydroError;
use super::output::{
    HydroFormat, LayerOrder, MaskCounts, MaskOptions, ModelOutput, OutputRecord, Precision,
};
use crate::methods::io::read_bytes;
use crate::methods::shared::bytes::Bytes;

/// Bytes of the file header.
pub const HEADER_BYTES: usize = 64;
/// Bytes of a subgrid header.
pub const SUBGRID_HEADER_BYTES: usize = 36;

/// One subgrid as the file gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subgrid {
    /// Byte offset of its header.
    pub offset: usize,
    /// First cell (0-based) along x, y, z.
    pub start: [usize; 3],
    /// Extent along x, y, z.
    pub size: [usize; 3],
    /// Refinement levels rx, ry, rz.
    pub refinement: [i32; 3],
}

/// A ParFlow binary file.
#[derive(Debug, Clone)]
pub struct PfbFile {
    /// The file as the caller named it.
    pub file: PathBuf,
    /// X, Y, Z of the grid's lower corner, in the run's length unit.
    pub origin: [f64; 3],
    /// NX, NY, NZ.
    pub n: [usize; 3],
    /// DX, DY, DZ, in the run's length unit.
    pub spacing: [f64; 3],
    /// The subgrids in file order.
    pub subgrids: Vec<Subgrid>,
    /// The values, shape (NZ, NY, NX); z index 0 is the bottom.
    pub values: Array3<f64>,
    /// What the reader noticed.
    pub notes: Vec<String>,
}

/// Read a ParFlow binary file.
pub fn read_pfb(path: &Path) -> Result<PfbFile, HydroError> {
    let bytes = read_bytes(path)?;
    parse_pfb(path, &bytes)
}

/// `true` when the first bytes are a `.pfb` header whose sizes account for a file of
/// `file_len` bytes exactly (`64 + 36·subgrids + 8·NX·NY·NZ`): how a `.pfb` is recognised
/// under another name.
pub fn sniff(bytes: &[u8], file_len: u64) -> bool {
    let b = Bytes::be(bytes);
    let dims = [b.i32(24), b.i32(28), b.i32(32)];
    let (Some(nx), Some(ny), Some(nz), Some(ns)) = (dims[0], dims[1], dims[2], b.i32(60)) else {
        return false;
    };
    if nx < 1 || ny < 1 || nz < 1 || ns < 1 {
        return false;
    }
    let want = (nx as u64)
        .checked_mul(ny as u64)
        .and_then(|c| c.checked_mul(nz as u64))
        .and_then(|c| c.checked_mul(8))
        .and_then(|c| c.checked_add(HEADER_BYTES as u64 + SUBGRID_HEADER_BYTES as u64 * ns as u64));
    want == Some(file_len)
}

/// The bytes of a ParFlow binary file (module docs' layout) holding `values` (`[k, j, i]`,
/// z index 0 the bottom) on a grid with lower corner `origin` and cell sizes `spacing`,
/// split into `splits[0] × splits[1] × splits[2]` subgrids as a run on that many processes
/// writes it (ParFlow's own split: the first `N mod P` parts one cell larger). The example's
/// hydrological model is written by this; [`parse_pfb`] reads it back.
pub fn encode_pfb(
    origin: [f64; 3],
    spacing: [f64; 3],
    values: &Array3<f64>,
    splits: [usize; 3],
) -> Vec<u8> {
    let (nz, ny, nx) = values.dim();
    let n = [nx, ny, nz];
    let parts: Vec<Vec<(usize, usize)>> = (0..3)
        .map(|k| {
            let p = splits[k].clamp(1, n[k].max(1));
            let (q, r) = (n[k] / p, n[k] % p);
            let mut at = 0;
            (0..p)
                .map(|i| {
                    let size = q + usize::from(i < r);
                    let part = (at, size);
                    at += size;
                    part
                })
                .collect()
        })
        .collect();
    let mut out = Vec::with_capacity(HEADER_BYTES + 8 * values.len());
    for v in origin {
        out.extend_from_slice(&v.to_be_bytes());
    }
    for v in n {
        out.extend_from_slice(&(v as i32).to_be_bytes());
    }
    for v in spacing {
        out.extend_from_slice(&v.to_be_bytes());
    }
    let n_sub = parts[0].len() * parts[1].len() * parts[2].len();
    out.extend_from_slice(&(n_sub as i32).to_be_bytes());
    for &(z0, sz) in &parts[2] {
        for &(y0, sy) in &parts[1] {
            for &(x0, sx) in &parts[0] {
                for v in [x0, y0, z0, sx, sy, sz, 0, 0, 0] {
                    out.extend_from_slice(&(v as i32).to_be_bytes());
                }
                for k in z0..z0 + sz {
                    for j in y0..y0 + sy {
                        for i in x0..x0 + sx {
                            out.extend_from_slice(&values[[k, j, i]].to_be_bytes());
                        }
                    }
                }
            }
        }
    }
    out
}

/// Parse the bytes of a ParFlow binary file (`path` only names it in messages).
pub fn parse_pfb(path: &Path, bytes: &[u8]) -> Result<PfbFile, HydroError> {
    let b = Bytes::be(bytes);
    let len = bytes.len();
    if len < HEADER_BYTES {
        return Err(HydroError::truncated(
            path,
            "the header",
            0,
            format!("{HEADER_BYTES} bytes: X, Y, Z, NX, NY, NZ, DX, DY, DZ, num_subgrids"),
            len,
        ));
    }
    // In bounds: len >= HEADER_BYTES.
    let f = |off: usize| b.f64(off).unwrap_or(f64::NAN);
    let i = |off: usize| b.i32(off).unwrap_or(i32::MIN);
    let origin = [f(0), f(8), f(16)];
    let spacing = [f(36), f(44), f(52)];
    for (k, (v, name)) in origin
        .iter()
        .chain(&spacing)
        .zip(["X", "Y", "Z", "DX", "DY", "DZ"])
        .enumerate()
    {
        if !v.is_finite() {
            let off = if k < 3 { 8 * k } else { 36 + 8 * (k - 3) };
            return Err(HydroError::field(
                path,
                "the header",
                off,
                format!("{name}, a finite double"),
                v.to_string(),
            ));
        }
    }
    let mut n = [0usize; 3];
    for (k, name) in ["NX", "NY", "NZ"].iter().enumerate() {
        let v = i(24 + 4 * k);
        if v < 1 {
            return Err(HydroError::field(
                path,
                "the header",
                24 + 4 * k,
                format!("{name}, a positive number of cells"),
                v.to_string(),
            ));
        }
        n[k] = v as usize;
    }
    let cells = n[0]
        .checked_mul(n[1])
        .and_then(|c| c.checked_mul(n[2]))
        .filter(|c| c.checked_mul(8).is_some_and(|b| b <= len - HEADER_BYTES));
    let Some(cells) = cells else {
        return Err(HydroError::truncated(
            path,
            "the values",
            HEADER_BYTES,
            format!(
                "NX × NY × NZ = {} × {} × {} doubles after the header",
                n[0], n[1], n[2]
            ),
            len,
        ));
    };
    let ns = i(60);
    if ns < 1 || ns as usize > cells {
        return Err(HydroError::field(
            path,
            "the header",
            60,
            format!("num_subgrids from 1 to the {cells} cells of the grid"),
            ns.to_string(),
        ));
    }
    let mut values = vec![f64::NAN; cells];
    let mut given = vec![false; cells];
    let mut subgrids = Vec::with_capacity(ns as usize);
    let mut at = HEADER_BYTES;
    let names = ["x", "y", "z"];
    for s in 0..ns as usize {
        if at.checked_add(SUBGRID_HEADER_BYTES).is_none_or(|e| e > len) {
            return Err(HydroError::truncated(
                path,
                format!("subgrid {s} header"),
                at,
                format!("{SUBGRID_HEADER_BYTES} bytes: ix, iy, iz, nx, ny, nz, rx, ry, rz"),
                len,
            ));
        }
        let raw: Vec<i32> = (0..9).map(|k| i(at + 4 * k)).collect();
        let mut start = [0usize; 3];
        let mut size = [0usize; 3];
        for k in 0..3 {
            let (s0, sz) = (raw[k], raw[3 + k]);
            let inside = s0 >= 0 && sz >= 0 && (s0 as i64 + sz as i64) <= n[k] as i64;
            if !inside {
                return Err(HydroError::Subgrid {
                    file: path.to_path_buf(),
                    subgrid: s,
                    offset: at,
                    expected: format!(
                        "i{0} ≥ 0 and i{0} + n{0} ≤ N{1} = {2} (inside the grid)",
                        names[k],
                        names[k].to_ascii_uppercase(),
                        n[k]
                    ),
                    found: format!("i{} = {s0}, n{} = {sz}", names[k], names[k]),
                });
            }
            start[k] = s0 as usize;
            size[k] = sz as usize;
        }
        let count = size[0] * size[1] * size[2];
        let data_at = at + SUBGRID_HEADER_BYTES;
        if count
            .checked_mul(8)
            .and_then(|c| data_at.checked_add(c))
            .is_none_or(|e| e > len)
        {
            return Err(HydroError::truncated(
                path,
                format!("subgrid {s} values"),
                data_at,
                format!("{count} doubles ({} × {} × {})", size[0], size[1], size[2]),
                len,
            ));
        }
        let mut off = data_at;
        for kz in start[2]..start[2] + size[2] {
            for jy in start[1]..start[1] + size[1] {
                for ix in start[0]..start[0] + size[0] {
                    let c = (kz * n[1] + jy) * n[0] + ix;
                    if given[c] {
                        return Err(HydroError::Subgrid {
                            file: path.to_path_buf(),
                            subgrid: s,
                            offset: at,
                            expected: "cells no other subgrid gave".into(),
                            found: format!(
                                "cell (i, j, k) = ({ix}, {jy}, {kz}) given a second time"
                            ),
                        });
                    }
                    given[c] = true;
                    // In bounds: checked data_at + 8·count <= len.
                    values[c] = f(off);
                    off += 8;
                }
            }
        }
        subgrids.push(Subgrid {
            offset: at,
            start,
            size,
            refinement: [raw[6], raw[7], raw[8]],
        });
        at = off;
    }
    if let Some(c) = given.iter().position(|g| !g) {
        let missing = given.iter().filter(|g| !**g).count();
        let (ix, jy, kz) = (c % n[0], (c / n[0]) % n[1], c / (n[0] * n[1]));
        return Err(HydroError::Subgrid {
            file: path.to_path_buf(),
            subgrid: ns as usize - 1,
            offset: subgrids.last().map_or(HEADER_BYTES, |s| s.offset),
            expected: format!("the {ns} subgrids to give all {cells} cells"),
            found: format!(
                "{missing} cells given by none, the first (i, j, k) = ({ix}, {jy}, {kz})"
            ),
        });
    }
    let mut notes = vec![format!(
        "{} subgrid{}",
        subgrids.len(),
        if subgrids.len() == 1 { "" } else { "s" }
    )];
    if at < len {
        notes.push(format!(
            "{} bytes after the last subgrid were not read",
            len - at
        ));
    }
    let values = Array3::from_shape_vec((n[2], n[1], n[0]), values).map_err(|e| {
        HydroError::field(
            path,
            "the values",
            HEADER_BYTES,
            "NZ × NY × NX values",
            e.to_string(),
        )
    })?;
    Ok(PfbFile {
        file: path.to_path_buf(),
        origin,
        n,
        spacing,
        subgrids,
        values,
        notes,
    })
}

/// The quantity and output number of a ParFlow file name: `run.out.press.00010.pfb` →
/// (`press`, 10), `run.out.perm_x.pfb` → (`perm_x`, none).
pub fn name_parts(path: &Path) -> (String, Option<u32>) {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parts: Vec<&str> = stem.split('.').collect();
    match parts.as_slice() {
        [.., q, idx] if !idx.is_empty() && idx.bytes().all(|c| c.is_ascii_digit()) => {
            (q.to_string(), idx.parse().ok())
        }
        [.., q] => (q.to_string(), None),
        [] => (String::new(), None),
    }
}

impl PfbFile {
    /// The values as a [`ModelOutput`]: one record, NZ layers (bottom first), the quantity
    /// and output number from the file name, masked as `opts` says.
    pub fn into_output(self, opts: &MaskOptions) -> ModelOutput {
        let (quantity, output_index) = name_parts(&self.file);
        let mut counts = MaskCounts::default();
        let active = self.values.mapv(|v| match opts.classify(v) {
            None => true,
            Some(r) => {
                counts.add(r);
                false
            }
        });
        let mut notes = self.notes;
        let meaning = match quantity.as_str() {
            "press" => Some("pressure head, in the run's length unit"),
            "satur" => Some("saturation, 0 to 1"),
            "porosity" => Some("porosity"),
            "mask" => Some("the domain mask"),
            _ => None,
        };
        if let Some(m) = meaning {
            notes.push(format!("the file name says '{quantity}': {m}"));
        }
        notes.push(format!(
            "origin ({}, {}, {}), cell size ({}, {}, {}) in the run's length unit; z index 0 is the bottom",
            self.origin[0],
            self.origin[1],
            self.origin[2],
            self.spacing[0],
            self.spacing[1],
            self.spacing[2]
        ));
        ModelOutput {
            file: self.file,
            format: HydroFormat::ParflowPfb,
            precision: Precision::Double,
            big_endian: true,
            nlay: self.n[2],
            nrow: self.n[1],
            ncol: self.n[0],
            layer_order: LayerOrder::BottomFirst,
            n_layer_records: 1,
            records: vec![OutputRecord {
                kstp: None,
                kper: None,
                ntrans: None,
                pertim: None,
                totim: None,
                output_index,
                quantity,
                values: self.values,
                active,
            }],
            mask_options: opts.clone(),
            mask_counts: counts,
            notes,
        }
    }
}

/// Test and example support: the bytes of a `.pfb` of `values` (shape NZ, NY, NX) split
/// into `p × q × r` subgrids the way ParFlow splits a grid over processes (the first
/// `N mod p` parts one cell longer), in ParFlow's order (x fastest).
pub fn write_pfb(
    origin: [f64; 3],
    spacing: [f64; 3],
    values: &Array3<f64>,
    (p, q, r): (usize, usize, usize),
) -> Vec<u8> {
    let (nz, ny, nx) = values.dim();
    let parts = |n: usize, k: usize| -> Vec<(usize, usize)> {
        let (base, rem) = (n / k, n % k);
        let mut out = Vec::new();
        let mut s = 0;
        for i in 0..k {
            let len = base + usize::from(i < rem);
            out.push((s, len));
            s += len;
        }
        out
    };
    let mut out = Vec::new();
    for v in origin {
        out.extend(v.to_be_bytes());
    }
    for v in [nx, ny, nz] {
        out.extend((v as i32).to_be_bytes());
    }
    for v in spacing {
        out.extend(v.to_be_bytes());
    }
    out.extend(((p * q * r) as i32).to_be_bytes());
    for (iz, lz) in parts(nz, r) {
        for (iy, ly) in parts(ny, q) {
            for (ix, lx) in parts(nx, p) {
                for v in [ix, iy, iz, lx, ly, lz, 0, 0, 0] {
                    out.extend((v as i32).to_be_bytes());
                }
                for k in iz..iz + lz {
                    for j in iy..iy + ly {
                        for i in ix..ix + lx {
                            out.extend(values[[k, j, i]].to_be_bytes());
                        }
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_encoded_file_reads_back_with_its_subgrids() {
        // 5 × 3 × 4 cells, split 2 × 1 × 3 as ParFlow splits (5 = 3 + 2, 4 = 2 + 1 + 1):
        // every value, the header and the subgrid layout come back.
        let values = Array3::from_shape_fn((4, 3, 5), |(k, j, i)| (100 * k + 10 * j + i) as f64);
        let bytes = encode_pfb([1.0, 2.0, 3.0], [0.5, 1.5, 2.5], &values, [2, 1, 3]);
        let p = parse_pfb(Path::new("x.pfb"), &bytes).expect("reads");
        assert_eq!(p.n, [5, 3, 4]);
        assert_eq!(p.origin, [1.0, 2.0, 3.0]);
        assert_eq!(p.spacing, [0.5, 1.5, 2.5]);
        assert_eq!(p.values, values);
        assert_eq!(p.subgrids.len(), 6);
        assert_eq!(p.subgrids[1].start, [3, 0, 0]);
        assert_eq!(p.subgrids[1].size, [2, 3, 2]);
        assert_eq!(p.subgrids[5].start, [3, 0, 3]);
        assert!(sniff(&bytes[..HEADER_BYTES], bytes.len() as u64));
    }
}

//! Res2DInv input files (Loke, Res2DInv manual, "data format"):
//! ```text
//! title
//! a            unit electrode spacing, m
//! code         1 Wenner-α, 2 pole-pole, 3 dipole-dipole, 4 Wenner-β, 5 Wenner-γ,
//!              6 pole-dipole, 7 Wenner–Schlumberger, 11 general array, 15 gradient
//! n_data       (general array: sub-array type, 'Type of measurement' line, 0|1, then n_data)
//! x-location   0 first electrode, 1 mid-point (general array: the type of x-location)
//! IP flag      0, or 1 followed by three IP description lines
//! data rows    standard arrays: x a [n] ρa [ip]; general array: 4 x1 z1 x2 z2 x3 z3 x4 z4 value [ip]
//! topography   0 | 1 | 2, then the number of points and rows 'x z'
//! ```
//! Electrode positions of the standard arrays (x = first electrode, spacing a, factor n):
//! Wenner-α A=x M=x+a N=x+2a B=x+3a; Wenner-β B=x A=x+a M=x+2a N=x+3a; Wenner-γ A=x M=x+a
//! B=x+2a N=x+3a; dipole-dipole B=x A=x+a M=x+a(1+n) N=x+a(2+n); Wenner–Schlumberger
//! A=x M=x+na N=x+a(n+1) B=x+a(2n+1); pole-dipole A=x M=x+na N=x+a(n+1) (n<0: mirrored);
//! pole-pole A=x M=x+a. The standard arrays give ρa; R = ρa/k with the flat-ground k.

use super::super::survey::{Format, Survey};
use super::{PositionIndex, numbered_lines, parse_index};
use crate::methods::ert::qc::geometric_factor_flat;
use crate::methods::io::{ReadError, fields, parse_f64};
use std::path::Path;

/// Title, a spacing, and a known array code on lines 1–3, then a count.
pub fn looks_like(lines: &[&str]) -> bool {
    if lines.len() < 7 {
        return false;
    }
    let one = |l: &str| {
        let f = fields(l);
        (f.len() == 1).then(|| f[0].to_string())
    };
    let (Some(sp), Some(code)) = (one(lines[1]), one(lines[2])) else {
        return false;
    };
    parse_f64(&sp).is_some_and(|v| v > 0.0)
        && parse_index(&code).is_some_and(|c| [1, 2, 3, 4, 5, 6, 7, 11, 15].contains(&c))
}

/// Parse a Res2DInv input file.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let get = |i: usize, what: &str| -> Result<(usize, &str), ReadError> {
        lines
            .get(i)
            .map(|(n, l)| (*n, l.trim()))
            .ok_or_else(|| ReadError::malformed(path, lines.len(), what, "end of file"))
    };
    let int_at = |i: usize, what: &str| -> Result<i64, ReadError> {
        let (no, l) = get(i, what)?;
        fields(l)
            .first()
            .and_then(|t| parse_index(t))
            .ok_or_else(|| ReadError::malformed(path, no, what, l))
    };
    let (sno, sl) = get(1, "the unit electrode spacing")?;
    let a_unit = fields(sl)
        .first()
        .and_then(|t| parse_f64(t))
        .filter(|v| *v > 0.0)
        .ok_or_else(|| {
            ReadError::malformed(path, sno, "the unit electrode spacing (m, > 0)", sl)
        })?;
    let code = int_at(2, "the array type code")?;
    let mut s = Survey::empty(Format::Res2dinv);
    let mut i = 3;
    let mut resistance = false;
    if code == 11 || code == 15 {
        i += 1; // sub-array type
        let (_, l) = get(i, "the type of measurement")?;
        if l.to_ascii_lowercase().contains("type") {
            i += 1;
            resistance = int_at(i, "the type of measurement (0 = ρa, 1 = R)")? == 1;
            i += 1;
        }
    } else if ![1, 2, 3, 4, 5, 6, 7].contains(&code) {
        return Err(ReadError::malformed(
            path,
            3,
            "a supported array code (1–7, 11, 15)",
            code.to_string(),
        ));
    }
    let n_data = int_at(i, "the number of data")?;
    if !(0..=10_000_000).contains(&n_data) {
        return Err(ReadError::malformed(
            path,
            i + 1,
            "a plausible number of data",
            n_data.to_string(),
        ));
    }
    let n_data = n_data as usize;
    let xloc = int_at(
        i + 1,
        "the x-location type (0 first electrode, 1 mid-point)",
    )?;
    let ip_flag = int_at(i + 2, "the IP flag (0 or 1)")?;
    i += 3;
    if ip_flag == 1 {
        i += 3;
        s.ip_unit =
            Some("as in the file's IP header (Res2DInv: usually msec chargeability)".into());
    }
    let mut pos: Vec<[f64; 4]> = Vec::with_capacity(n_data.min(1_000_000));
    let mut zpos: Vec<[f64; 4]> = Vec::new();
    let (mut val, mut ip) = (Vec::new(), Vec::new());
    for _ in 0..n_data {
        let (no, l) = get(i, "a data row")?;
        i += 1;
        let nums: Vec<f64> = fields(l).iter().map_while(|t| parse_f64(t)).collect();
        let need = match code {
            1 | 2 | 4 | 5 => 3,
            11 | 15 => 10,
            _ => 4,
        };
        if nums.len() < need {
            return Err(ReadError::malformed(
                path,
                no,
                format!("a data row with {need} numbers"),
                l,
            ));
        }
        let (x, a) = (nums[0], nums[1]);
        let p = match code {
            11 | 15 => {
                zpos.push([nums[2], nums[4], nums[6], nums[8]]);
                [nums[1], nums[3], nums[5], nums[7]]
            }
            1 | 4 | 5 | 2 => {
                let x0 = if xloc == 1 {
                    match code {
                        2 => x - a / 2.0,
                        _ => x - 1.5 * a,
                    }
                } else {
                    x
                };
                match code {
                    1 => [x0, x0 + 3.0 * a, x0 + a, x0 + 2.0 * a],
                    4 => [x0 + a, x0, x0 + 2.0 * a, x0 + 3.0 * a],
                    5 => [x0, x0 + 2.0 * a, x0 + a, x0 + 3.0 * a],
                    _ => [x0, f64::INFINITY, x0 + a, f64::INFINITY],
                }
            }
            _ => {
                let n = nums[2];
                match code {
                    3 => {
                        let x0 = if xloc == 1 {
                            x - a * (n / 2.0 + 1.0)
                        } else {
                            x
                        };
                        [x0 + a, x0, x0 + a * (1.0 + n), x0 + a * (2.0 + n)]
                    }
                    7 => {
                        let x0 = if xloc == 1 { x - a * (n + 0.5) } else { x };
                        [x0, x0 + a * (2.0 * n + 1.0), x0 + n * a, x0 + a * (n + 1.0)]
                    }
                    _ => {
                        // pole-dipole
                        if n >= 0.0 {
                            let x0 = if xloc == 1 { x - n * a / 2.0 } else { x };
                            [x0, f64::INFINITY, x0 + n * a, x0 + a * (n + 1.0)]
                        } else {
                            let m = n.abs();
                            let x0 = if xloc == 1 {
                                x - a * (1.0 + m / 2.0)
                            } else {
                                x
                            };
                            [x0 + a * (1.0 + m), f64::INFINITY, x0 + a, x0]
                        }
                    }
                }
            }
        };
        // Positions written with two decimals in the files; round to 1 µm for identity.
        pos.push(p.map(|v| {
            if v.is_finite() {
                (v * 1e6).round() / 1e6
            } else {
                v
            }
        }));
        let vi = match code {
            11 | 15 => 9,
            1 | 2 | 4 | 5 => 2,
            _ => 3,
        };
        val.push(nums[vi]);
        ip.push(nums.get(vi + 1).copied().unwrap_or(f64::NAN));
    }
    // Topography block.
    let mut topo: Vec<[f64; 2]> = Vec::new();
    while let Some((_, l)) = lines.get(i).map(|(n, l)| (*n, l.trim())) {
        if l.is_empty() {
            i += 1;
            continue;
        }
        break;
    }
    if let Some((_, l)) = lines.get(i)
        && fields(l)
            .first()
            .and_then(|t| parse_index(t))
            .is_some_and(|f| f == 1 || f == 2)
        && let Some((cno, cl)) = lines.get(i + 1)
    {
        let n_topo = fields(cl)
            .first()
            .and_then(|t| parse_index(t))
            .filter(|n| *n >= 0)
            .ok_or_else(|| {
                ReadError::malformed(path, *cno, "the number of topography points", *cl)
            })? as usize;
        for k in 0..n_topo {
            let (no, tl) = get(i + 2 + k, "a topography row 'x z'")?;
            let nums: Vec<f64> = fields(tl).iter().filter_map(|t| parse_f64(t)).collect();
            if nums.len() < 2 {
                return Err(ReadError::malformed(path, no, "a topography row 'x z'", tl));
            }
            topo.push([nums[0], nums[1]]);
        }
    }
    let three = |p: &[f64; 4], z: Option<&[f64; 4]>| -> [[f64; 3]; 4] {
        let mut out = [[0.0; 3]; 4];
        for e in 0..4 {
            out[e] = [p[e], 0.0, z.map(|z| z[e]).unwrap_or(0.0)];
        }
        out
    };
    let all: Vec<[[f64; 3]; 4]> = pos
        .iter()
        .enumerate()
        .map(|(k, p)| three(p, zpos.get(k)))
        .collect();
    let (quadrupoles, electrodes) = PositionIndex::quadrupoles(&all);
    s.quadrupoles = quadrupoles;
    s.electrodes = electrodes;
    if !topo.is_empty() {
        for e in &mut s.electrodes {
            e.z_m = interp(&topo, e.x_m);
        }
        s.topography = topo;
        s.notes
            .push("electrode elevations interpolated from the topography block".into());
    }
    let k: Vec<f64> = pos
        .iter()
        .map(|p| geometric_factor_flat(p[0], p[1], p[2], p[3]))
        .collect();
    if resistance {
        s.rhoa_ohm_m = Some(val.iter().zip(&k).map(|(r, k)| r * k).collect());
        s.r_ohm = Some(val);
    } else {
        s.r_ohm = Some(val.iter().zip(&k).map(|(rho, k)| rho / k).collect());
        s.rhoa_ohm_m = Some(val);
        s.notes.push(
            "R computed as ρa/k with the flat-ground geometric factor (the file gives ρa)".into(),
        );
    }
    s.k_m = Some(k);
    if ip_flag == 1 {
        s.ip = Some(ip);
    }
    s.notes.push(format!(
        "unit electrode spacing {a_unit} m, array code {code}"
    ));
    s.valid = vec![true; s.quadrupoles.len()];
    Ok(s)
}

/// Linear interpolation in a table of (x, z) points (held constant beyond the ends).
fn interp(t: &[[f64; 2]], x: f64) -> f64 {
    let mut pts = t.to_vec();
    pts.sort_by(|a, b| a[0].total_cmp(&b[0]));
    let Some(first) = pts.first() else { return 0.0 };
    if x <= first[0] {
        return first[1];
    }
    for w in pts.windows(2) {
        if x <= w[1][0] {
            let d = w[1][0] - w[0][0];
            return if d > 0.0 {
                w[0][1] + (w[1][1] - w[0][1]) * (x - w[0][0]) / d
            } else {
                w[0][1]
            };
        }
    }
    pts.last().map(|p| p[1]).unwrap_or(0.0)
}

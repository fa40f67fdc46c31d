//! E4D survey files (`.srv`; Johnson et al. 2010, E4D user guide):
//! ```text
//! N              # number of electrodes
//! i x y z flag   # N rows (flag 1 = surface electrode)
//! M              # number of data
//! i a b m n V/I sd   # M rows; V/I in Ω, sd its standard deviation in Ω
//! ```
//! Electrode numbers in the data refer to the index column of the electrode block.

use super::super::survey::{Electrode, Format, Quadrupole, Survey};
use super::{numbered_lines, parse_index};
use crate::methods::io::{ReadError, fields, parse_f64};
use std::collections::HashMap;
use std::path::Path;

fn body(line: &str) -> &str {
    line.split('#').next().unwrap_or("").trim()
}

/// Count line, then rows `i x y z flag` whose first field runs 1, 2, 3.
pub fn looks_like(lines: &[&str]) -> bool {
    let content: Vec<&str> = lines
        .iter()
        .map(|l| body(l))
        .filter(|l| !l.is_empty())
        .take(4)
        .collect();
    if content.len() < 4 || fields(content[0]).len() != 1 || parse_index(content[0]).is_none() {
        return false;
    }
    (1..4).all(|k| {
        let f = fields(content[k]);
        f.len() == 5
            && parse_index(f[0]) == Some(k as i64)
            && f[1..4].iter().all(|t| parse_f64(t).is_some())
            && parse_index(f[4]).is_some()
    })
}

/// Parse an E4D survey text.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let mut it = lines.iter().filter(|(_, l)| !body(l).is_empty());
    let mut s = Survey::empty(Format::E4dSrv);
    let (no, l) = it
        .next()
        .ok_or_else(|| ReadError::malformed(path, 1, "the number of electrodes", ""))?;
    let n_el = parse_index(body(l))
        .filter(|n| *n >= 0)
        .ok_or_else(|| ReadError::malformed(path, *no, "the number of electrodes", l))?
        as usize;
    let mut by_id: HashMap<i64, usize> = HashMap::new();
    for _ in 0..n_el {
        let (no, l) = it.next().ok_or_else(|| {
            ReadError::malformed(
                path,
                lines.len(),
                format!("{n_el} electrode rows"),
                "end of file",
            )
        })?;
        let f = fields(body(l));
        let nums: Option<Vec<f64>> = f.iter().map(|t| parse_f64(t)).collect();
        let Some(nums) = nums.filter(|v| v.len() >= 4) else {
            return Err(ReadError::malformed(
                path,
                *no,
                "an electrode row 'index x y z flag'",
                l,
            ));
        };
        let id = parse_index(f[0])
            .ok_or_else(|| ReadError::malformed(path, *no, "an integer electrode index", f[0]))?;
        by_id.insert(id, s.electrodes.len());
        s.electrodes.push(Electrode {
            x_m: nums[1],
            y_m: nums[2],
            z_m: nums[3],
            label: Some(id.to_string()),
        });
    }
    let (no, l) = it.next().ok_or_else(|| {
        ReadError::malformed(path, lines.len(), "the number of data", "end of file")
    })?;
    let n_data = parse_index(body(l))
        .filter(|n| *n >= 0)
        .ok_or_else(|| ReadError::malformed(path, *no, "the number of data", l))?
        as usize;
    let mut r = Vec::with_capacity(n_data.min(1_000_000));
    let mut sd = Vec::with_capacity(n_data.min(1_000_000));
    for _ in 0..n_data {
        let (no, l) = it.next().ok_or_else(|| {
            ReadError::malformed(
                path,
                lines.len(),
                format!("{n_data} data rows"),
                "end of file",
            )
        })?;
        let f = fields(body(l));
        if f.len() < 6 {
            return Err(ReadError::malformed(
                path,
                *no,
                "a data row 'index a b m n V/I sd'",
                l,
            ));
        }
        let mut q = [None; 4];
        for k in 0..4 {
            let id = parse_index(f[k + 1]).ok_or_else(|| {
                ReadError::malformed(path, *no, "an integer electrode number", f[k + 1])
            })?;
            q[k] = if id == 0 {
                None
            } else {
                Some(*by_id.get(&id).ok_or_else(|| {
                    ReadError::malformed(
                        path,
                        *no,
                        "an electrode number listed in the electrode block",
                        f[k + 1],
                    )
                })?)
            };
        }
        s.quadrupoles.push(Quadrupole {
            a: q[0],
            b: q[1],
            m: q[2],
            n: q[3],
        });
        let v = parse_f64(f[5])
            .ok_or_else(|| ReadError::malformed(path, *no, "a number (V/I in Ω)", f[5]))?;
        r.push(v);
        let e = f.get(6).and_then(|t| parse_f64(t)).unwrap_or(f64::NAN);
        sd.push(e);
    }
    s.err = Some(
        r.iter()
            .zip(&sd)
            .map(|(r, e)| if *r != 0.0 { (e / r).abs() } else { f64::NAN })
            .collect(),
    );
    s.notes
        .push("err = sd/|V/I| (E4D gives the standard deviation of V/I in Ω)".into());
    s.r_ohm = Some(r);
    s.valid = vec![true; s.quadrupoles.len()];
    Ok(s)
}

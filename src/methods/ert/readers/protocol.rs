//! R2/cR2 `protocol.dat` (Binley, R2 manual): first line N, then N rows
//! `index a b m n R [more]` (2D) or `index sa a sb b sm m sn n R [more]` (3D: string and
//! electrode numbers). Electrode numbers refer to the mesh's electrode list, which the
//! protocol file does not contain: positions are placed at 1 m spacing by number and the
//! notes say so.

use super::super::survey::{Electrode, Format, Quadrupole, Survey};
use super::{numbered_lines, parse_index};
use crate::methods::io::{ReadError, fields, parse_f64};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A single integer, then rows whose first field is a running index 1, 2, 3.
pub fn looks_like(lines: &[&str]) -> bool {
    let content: Vec<&str> = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .take(4)
        .collect();
    if content.len() < 4 || fields(content[0]).len() != 1 || parse_index(content[0]).is_none() {
        return false;
    }
    (1..4).all(|k| {
        let f = fields(content[k]);
        (6..=13).contains(&f.len())
            && parse_index(f[0]) == Some(k as i64)
            && f.iter().all(|t| parse_f64(t).is_some())
    })
}

/// Parse an R2 protocol file.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let mut it = lines.iter().filter(|(_, l)| !l.trim().is_empty());
    let (no, l) = it
        .next()
        .ok_or_else(|| ReadError::malformed(path, 1, "the number of measurements", ""))?;
    let n = parse_index(l.trim())
        .filter(|n| *n >= 0)
        .ok_or_else(|| ReadError::malformed(path, *no, "the number of measurements", l))?
        as usize;
    let mut rows: Vec<Vec<f64>> = Vec::with_capacity(n.min(1_000_000));
    let mut ncol = 0;
    for _ in 0..n {
        let (no, l) = it.next().ok_or_else(|| {
            ReadError::malformed(
                path,
                lines.len(),
                format!("{n} measurement rows"),
                "end of file",
            )
        })?;
        let v: Option<Vec<f64>> = fields(l).iter().map(|t| parse_f64(t)).collect();
        let Some(v) = v.filter(|v| v.len() >= 6) else {
            return Err(ReadError::malformed(
                path,
                *no,
                "a row 'index a b m n R …' of numbers",
                l,
            ));
        };
        if ncol == 0 {
            ncol = v.len();
        } else if v.len() != ncol {
            return Err(ReadError::malformed(
                path,
                *no,
                format!("{ncol} columns like the first row"),
                l,
            ));
        }
        rows.push(v);
    }
    let mut s = Survey::empty(Format::R2Protocol);
    let three_d = ncol >= 10;
    let key = |r: &Vec<f64>, e: usize| -> (i64, i64) {
        if three_d {
            (r[1 + 2 * e] as i64, r[2 + 2 * e] as i64)
        } else {
            (1, r[1 + e] as i64)
        }
    };
    let rcol = if three_d { 9 } else { 5 };
    let used: BTreeSet<(i64, i64)> = rows
        .iter()
        .flat_map(|r| (0..4).map(move |e| key(r, e)))
        .collect();
    let mut idx = BTreeMap::new();
    if three_d {
        for (i, k) in used.iter().enumerate() {
            idx.insert(*k, i);
            s.electrodes.push(Electrode {
                x_m: i as f64,
                y_m: 0.0,
                z_m: 0.0,
                label: Some(format!("{} {}", k.0, k.1)),
            });
        }
    } else {
        let max = used.iter().map(|k| k.1).max().unwrap_or(0).max(0);
        if max > 100_000 {
            return Err(ReadError::format(
                path,
                format!("electrode number {max} is implausibly large"),
            ));
        }
        for e in 1..=max {
            idx.insert((1, e), (e - 1) as usize);
            s.electrodes.push(Electrode {
                x_m: (e - 1) as f64,
                y_m: 0.0,
                z_m: 0.0,
                label: Some(e.to_string()),
            });
        }
    }
    for (k, r) in rows.iter().enumerate() {
        let mut q = [None; 4];
        for e in 0..4 {
            let kk = key(r, e);
            q[e] = idx.get(&kk).copied();
            if q[e].is_none() && kk.1 != 0 {
                return Err(ReadError::malformed(
                    path,
                    k + 2,
                    "positive electrode numbers",
                    format!("{}", kk.1),
                ));
            }
        }
        s.quadrupoles.push(Quadrupole {
            a: q[0],
            b: q[1],
            m: q[2],
            n: q[3],
        });
    }
    s.r_ohm = Some(rows.iter().map(|r| r[rcol]).collect());
    if ncol > rcol + 1 {
        s.notes.push(format!(
            "{} column(s) after R kept out: in R2 they are the error of R (DC) or the phase (cR2) depending \
             on the run's settings, which the protocol file does not say",
            ncol - rcol - 1
        ));
    }
    s.notes.push("protocol files hold no electrode positions: placed at 1 m spacing by number (a placeholder, not a measurement)".into());
    s.valid = vec![true; s.quadrupoles.len()];
    Ok(s)
}

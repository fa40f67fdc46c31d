//! Plain CSV `a,b,m,n,R[,err]`: one header row naming the columns (case-insensitive;
//! R may be written `r`, `R`, `r_ohm`, `resistance`; err as a fraction, or `err_%`/`err%`
//! in percent; optional `rhoa`, `ip`), electrode numbers 1-based (0 = remote). Positions
//! come from an electrode table (see [`super::electrodes`]); without one, electrodes are
//! placed at 1 m spacing by number and the notes say so.

use super::super::survey::{Format, Quadrupole, Survey};
use super::{electrodes_from_numbers, numbered_lines, parse_index, value_or_nan};
use crate::methods::io::{ReadError, fields};
use std::path::Path;

/// Column indices of a, b, m, n and R in a header line, if it names them.
pub fn header_columns(line: &str) -> Option<([usize; 4], usize)> {
    if !line.contains(',') {
        return None;
    }
    let h: Vec<String> = line
        .split(',')
        .map(|t| t.trim().to_ascii_lowercase())
        .collect();
    let c = |n: &[&str]| h.iter().position(|x| n.contains(&x.as_str()));
    Some((
        [c(&["a"])?, c(&["b"])?, c(&["m"])?, c(&["n"])?],
        c(&["r", "r_ohm", "resistance", "r(ohm)", "r [ohm]"])?,
    ))
}

/// Parse a plain CSV text.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let mut it = lines
        .iter()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let (hno, hl) = it
        .next()
        .ok_or_else(|| ReadError::malformed(path, 1, "a header row a,b,m,n,R", ""))?;
    let Some((ec, rc)) = header_columns(hl) else {
        return Err(ReadError::malformed(
            path,
            *hno,
            "a header row naming a, b, m, n and R",
            *hl,
        ));
    };
    let h: Vec<String> = hl
        .split(',')
        .map(|t| t.trim().to_ascii_lowercase())
        .collect();
    let c = |n: &[&str]| h.iter().position(|x| n.contains(&x.as_str()));
    let err_frac = c(&["err", "error"]);
    let err_pct = c(&["err_%", "err%", "err(%)"]);
    let rhoa = c(&["rhoa", "rhoa_ohm_m"]);
    let ip = c(&["ip"]);
    let mut s = Survey::empty(Format::PlainCsv);
    let mut raw = Vec::new();
    let (mut r, mut er, mut rh, mut ipv) = (vec![], vec![], vec![], vec![]);
    for (no, l) in it {
        let f: Vec<&str> = l.split(',').map(str::trim).collect();
        let e: Option<Vec<i64>> = ec
            .iter()
            .map(|k| f.get(*k).and_then(|t| parse_index(t)))
            .collect();
        let Some(e) = e.filter(|e| e.iter().all(|v| (0..1_000_000).contains(v))) else {
            return Err(ReadError::malformed(
                path,
                *no,
                "electrode numbers (integers ≥ 0) in a b m n",
                *l,
            ));
        };
        let num = |k: usize, what: &str| {
            let t = f.get(k).copied().unwrap_or("");
            value_or_nan(t).ok_or_else(|| ReadError::malformed(path, *no, what, t))
        };
        raw.push([e[0], e[1], e[2], e[3]]);
        r.push(num(rc, "R in Ω")?);
        if let Some(k) = err_frac {
            er.push(num(k, "err as a fraction")?);
        } else if let Some(k) = err_pct {
            er.push(num(k, "err in %")? * 0.01);
        }
        if let Some(k) = rhoa {
            rh.push(num(k, "ρa in Ω·m")?);
        }
        if let Some(k) = ip {
            ipv.push(num(k, "ip")?);
        }
    }
    let max = raw
        .iter()
        .flat_map(|q| q.iter().copied())
        .max()
        .unwrap_or(0);
    let (el, _) = electrodes_from_numbers(1..=max, 1.0);
    s.electrodes = el;
    let conv = |v: i64| (v > 0).then(|| (v - 1) as usize);
    s.quadrupoles = raw
        .iter()
        .map(|q| Quadrupole {
            a: conv(q[0]),
            b: conv(q[1]),
            m: conv(q[2]),
            n: conv(q[3]),
        })
        .collect();
    s.r_ohm = Some(r);
    if err_frac.is_some() || err_pct.is_some() {
        s.err = Some(er);
    }
    if rhoa.is_some() {
        s.rhoa_ohm_m = Some(rh);
    }
    if ip.is_some() {
        s.ip = Some(ipv);
    }
    s.notes
        .push("electrodes 1..max placed at 1 m spacing until an electrode table is applied".into());
    s.valid = vec![true; s.quadrupoles.len()];
    let _ = fields;
    Ok(s)
}

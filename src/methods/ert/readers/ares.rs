//! GF Instruments ARES II `.2dm`: `key: value` header lines (`Electrode distance: 0.5 m`,
//! `Date: dd/mm/yyyy`), then `Measured data:` and a tab-separated table with columns
//! `C1[el] C2[el] P1[el] P2[el] … I[mA] U[mV] AppRes[Ohmm] St-dev[%]` (electrode numbers
//! from 0). R = U/I (mV/mA = Ω).

use super::super::survey::{Format, Quadrupole, Survey};
use super::{electrodes_from_numbers, numbered_lines, parse_index, set_date};
use crate::methods::io::{ReadError, parse_f64};
use std::path::Path;

/// Parse an ARES II text.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let mut s = Survey::empty(Format::AresII);
    let mut spacing = None;
    let mut date = None;
    let mut time = None;
    let mut start = None;
    for (k, (_, l)) in lines.iter().enumerate() {
        if let Some(v) = l.strip_prefix("Electrode distance:") {
            spacing = v.split_whitespace().next().and_then(parse_f64);
        } else if let Some(v) = l.strip_prefix("Date:") {
            date = Some(v.trim().to_string());
        } else if let Some(v) = l.strip_prefix("Time:") {
            time = Some(v.trim().to_string());
        } else if l.starts_with("Measured data") {
            start = Some(k + 1);
            break;
        }
    }
    if let Some(d) = date {
        set_date(&mut s, &d, time, "Date: header line");
    }
    let start = start.ok_or_else(|| ReadError::format(path, "no 'Measured data:' line"))?;
    let (hno, hl) = *lines.get(start).ok_or_else(|| {
        ReadError::malformed(path, lines.len(), "the column header row", "end of file")
    })?;
    let head: Vec<&str> = hl.split('\t').map(str::trim).collect();
    let col = |n: &str| crate::methods::shared::columns::index_ignore_case(&head, n);
    let (Some(c1), Some(c2), Some(p1), Some(p2), Some(ci), Some(cu)) = (
        col("C1[el]"),
        col("C2[el]"),
        col("P1[el]"),
        col("P2[el]"),
        col("I[mA]"),
        col("U[mV]"),
    ) else {
        return Err(ReadError::malformed(
            path,
            hno,
            "columns C1[el] C2[el] P1[el] P2[el] I[mA] U[mV]",
            hl,
        ));
    };
    let crho = col("AppRes[Ohmm]");
    let cdev = col("St-dev[%]");
    let mut raw = Vec::new();
    let (mut r, mut u, mut i_a, mut rho, mut dev) = (vec![], vec![], vec![], vec![], vec![]);
    let mut skipped = 0;
    for &(no, l) in lines.iter().skip(start + 1) {
        if l.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = l.split('\t').map(str::trim).collect();
        let e: Option<Vec<i64>> = [c1, c2, p1, p2]
            .iter()
            .map(|c| f.get(*c).and_then(|t| parse_index(t)))
            .collect();
        let Some(e) = e else {
            skipped += 1;
            continue;
        };
        let num = |c: usize, what: &str| {
            f.get(c)
                .and_then(|t| parse_f64(t))
                .ok_or_else(|| ReadError::malformed(path, no, what, l))
        };
        let (ii, uu) = (num(ci, "I in mA")?, num(cu, "U in mV")?);
        raw.push([e[0], e[1], e[2], e[3]]);
        r.push(if ii != 0.0 { uu / ii } else { f64::NAN });
        u.push(uu * 1e-3);
        i_a.push(ii * 1e-3);
        rho.push(
            crho.and_then(|c| f.get(c).and_then(|t| parse_f64(t)))
                .unwrap_or(f64::NAN),
        );
        dev.push(
            cdev.and_then(|c| f.get(c).and_then(|t| parse_f64(t)))
                .unwrap_or(f64::NAN)
                * 0.01,
        );
    }
    if skipped > 0 {
        s.notes.push(format!(
            "{skipped} rows with non-numeric electrode fields left out"
        ));
    }
    let sp = spacing.unwrap_or(1.0);
    if spacing.is_none() {
        s.notes
            .push("no 'Electrode distance' line: 1 m spacing assumed (a guess)".into());
    }
    let (el, map) = electrodes_from_numbers(raw.iter().flat_map(|q| q.iter().copied()), sp);
    s.electrodes = el;
    s.quadrupoles = raw
        .iter()
        .map(|q| Quadrupole {
            a: map.get(&q[0]).copied(),
            b: map.get(&q[1]).copied(),
            m: map.get(&q[2]).copied(),
            n: map.get(&q[3]).copied(),
        })
        .collect();
    s.r_ohm = Some(r);
    s.u_v = Some(u);
    s.i_a = Some(i_a);
    if crho.is_some() {
        s.rhoa_ohm_m = Some(rho);
    }
    if cdev.is_some() {
        s.err = Some(dev);
    }
    s.notes.push(
        "electrode x = number × electrode distance (the file gives numbers, not positions)".into(),
    );
    s.valid = vec![true; s.quadrupoles.len()];
    Ok(s)
}

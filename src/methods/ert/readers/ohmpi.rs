//! OhmPi CSV (OhmPi documentation, data files): a header row
//! `time,a,b,m,n,…,vmn_[mV],vmn_std_[%],iab_[mA],…,r_[Ohm],r_std_[%],…` and one row per
//! measurement; `time` is ISO-8601. The file gives electrode numbers, not positions.

use super::super::survey::{Format, Quadrupole, Survey};
use super::{electrodes_from_numbers, numbered_lines, parse_index, set_date};
use crate::methods::io::{ReadError, parse_f64};
use std::path::Path;

/// Parse an OhmPi CSV text.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let mut it = lines.iter().filter(|(_, l)| !l.trim().is_empty());
    let (hno, hl) = it
        .next()
        .ok_or_else(|| ReadError::malformed(path, 1, "a CSV header row", ""))?;
    let head: Vec<String> = hl
        .split(',')
        .map(|h| h.trim().to_ascii_lowercase())
        .collect();
    let col = |n: &str| crate::methods::shared::columns::index(&head, n);
    let (Some(ca), Some(cb), Some(cm), Some(cn)) = (col("a"), col("b"), col("m"), col("n")) else {
        return Err(ReadError::malformed(path, *hno, "columns a b m n", *hl));
    };
    let (cr, crs, cv, ci, ct) = (
        col("r_[ohm]"),
        col("r_std_[%]"),
        col("vmn_[mv]"),
        col("iab_[ma]"),
        col("time"),
    );
    if cr.is_none() && (cv.is_none() || ci.is_none()) {
        return Err(ReadError::malformed(
            path,
            *hno,
            "r_[Ohm] or vmn_[mV] and iab_[mA] columns",
            *hl,
        ));
    }
    let mut s = Survey::empty(Format::OhmPi);
    let mut raw = Vec::new();
    let (mut r, mut er, mut u, mut i_a) = (vec![], vec![], vec![], vec![]);
    let mut first_time: Option<String> = None;
    for (no, l) in it {
        let f: Vec<&str> = l.split(',').map(str::trim).collect();
        let e: Option<Vec<i64>> = [ca, cb, cm, cn]
            .iter()
            .map(|c| f.get(*c).and_then(|t| parse_index(t)))
            .collect();
        let Some(e) = e.filter(|e| e.iter().all(|v| *v >= 0 && *v < 1_000_000)) else {
            return Err(ReadError::malformed(
                path,
                *no,
                "electrode numbers in a b m n",
                *l,
            ));
        };
        let get = |c: Option<usize>| {
            c.and_then(|c| f.get(c))
                .and_then(|t| parse_f64(t))
                .unwrap_or(f64::NAN)
        };
        let (vv, ii) = (get(cv), get(ci));
        let rr = if cr.is_some() {
            get(cr)
        } else if ii != 0.0 {
            vv / ii
        } else {
            f64::NAN
        };
        raw.push([e[0], e[1], e[2], e[3]]);
        r.push(rr);
        er.push(get(crs) * 0.01);
        u.push(vv * 1e-3);
        i_a.push(ii * 1e-3);
        if first_time.is_none() {
            first_time = ct.and_then(|c| f.get(c)).map(|t| t.to_string());
        }
    }
    if let Some(t) = first_time {
        let (d, tod) = t.split_once('T').unwrap_or((t.as_str(), ""));
        let tod = tod.split('.').next().unwrap_or("").to_string();
        set_date(
            &mut s,
            d,
            (!tod.is_empty()).then_some(tod),
            "time column of the first row",
        );
    }
    // Boards number their electrodes 1..N; an unused number is still an electrode in place.
    let max = raw
        .iter()
        .flat_map(|q| q.iter().copied())
        .max()
        .unwrap_or(0);
    let (el, map) = electrodes_from_numbers(1..=max, 1.0);
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
    if crs.is_some() {
        s.err = Some(er);
        s.notes.push("err = r_std_[%]/100".into());
    }
    if cv.is_some() {
        s.u_v = Some(u);
    }
    if ci.is_some() {
        s.i_a = Some(i_a);
    }
    s.notes.push("the file gives electrode numbers only: placed at 1 m spacing by number (a placeholder; give an electrode table)".into());
    s.valid = vec![true; s.quadrupoles.len()];
    Ok(s)
}

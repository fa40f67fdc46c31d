//! BGS PRIME `.tab` export: `key:<tab>value` header lines (first line names Prime;
//! `set_actual_start_time:` is ISO-8601), a `data:` line, a header row of `pt_*:` column
//! names, and tab-separated rows. `pt_calc_res` is R in Ω, `pt_calc_res_error` its error in
//! tenths of a percent, `pt_c1_no` … `pt_p2_no` the electrode numbers.

use super::super::survey::{Format, Quadrupole, Survey};
use super::{electrodes_from_numbers, numbered_lines, parse_index, set_date};
use crate::methods::io::{ReadError, parse_f64};
use std::path::Path;

/// Parse a PRIME `.tab` text.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let mut s = Survey::empty(Format::BgsPrime);
    let mut data_at = None;
    for (k, (_, l)) in lines.iter().enumerate() {
        if let Some(v) = l.strip_prefix("set_actual_start_time:") {
            let v = v.trim();
            let (d, t) = v.split_once('T').unwrap_or((v, ""));
            set_date(
                &mut s,
                d,
                (!t.is_empty()).then(|| t.to_string()),
                "set_actual_start_time header",
            );
        }
        if l.trim() == "data:" {
            data_at = Some(k + 1);
            break;
        }
    }
    let k = data_at.ok_or_else(|| ReadError::format(path, "no 'data:' line"))?;
    let (hno, hl) = *lines.get(k).ok_or_else(|| {
        ReadError::malformed(path, lines.len(), "the column header row", "end of file")
    })?;
    let head: Vec<&str> = hl.split('\t').map(str::trim).collect();
    let col = |n: &str| head.iter().position(|h| *h == n);
    let (Some(cr), Some(c1), Some(c2), Some(p1), Some(p2)) = (
        col("pt_calc_res:"),
        col("pt_c1_no:"),
        col("pt_c2_no:"),
        col("pt_p1_no:"),
        col("pt_p2_no:"),
    ) else {
        return Err(ReadError::malformed(
            path,
            hno,
            "pt_calc_res: and pt_c1_no: … pt_p2_no: columns",
            hl,
        ));
    };
    let ce = col("pt_calc_res_error:");
    let mut raw = Vec::new();
    let (mut r, mut er) = (vec![], vec![]);
    for &(no, l) in lines.iter().skip(k + 1) {
        if l.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = l.split('\t').map(str::trim).collect();
        let e: Option<Vec<i64>> = [c1, c2, p1, p2]
            .iter()
            .map(|c| f.get(*c).and_then(|t| parse_index(t)))
            .collect();
        let Some(e) = e.filter(|e| e.iter().all(|v| (0..1_000_000).contains(v))) else {
            return Err(ReadError::malformed(path, no, "electrode numbers", l));
        };
        let rr = f
            .get(cr)
            .and_then(|t| parse_f64(t))
            .ok_or_else(|| ReadError::malformed(path, no, "R in Ω", l))?;
        raw.push([e[0], e[1], e[2], e[3]]);
        r.push(rr);
        er.push(
            ce.and_then(|c| f.get(c))
                .and_then(|t| parse_f64(t))
                .unwrap_or(f64::NAN)
                * 1e-3,
        );
    }
    let (el, map) = electrodes_from_numbers(
        raw.iter()
            .flat_map(|q| q.iter().copied())
            .filter(|v| *v > 0),
        1.0,
    );
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
    if ce.is_some() {
        s.err = Some(er);
        s.notes
            .push("err = pt_calc_res_error/1000 (tenths of a percent)".into());
    }
    s.notes.push("the file gives electrode numbers only: placed at 1 m spacing by number (a placeholder; give an electrode table)".into());
    s.valid = vec![true; s.quadrupoles.len()];
    Ok(s)
}

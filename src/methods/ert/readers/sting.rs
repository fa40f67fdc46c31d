//! AGI SuperSting `.stg` files (AGI SuperSting manual, "stg file format"):
//! line 1 instrument, line 2 `… Survey period: yyyymmdd Records: N`, line 3 `Unit: meter|feet`,
//! then one comma-separated record per datum: number, user, date, time, V/I (Ω), error (‰),
//! current (mA), ρa (Ω·m), command, then x y z of A, B, M, N.

use super::super::survey::{Format, Survey};
use super::{PositionIndex, numbered_lines, set_date};
use crate::methods::io::{ReadError, parse_f64};
use std::path::Path;

/// Parse an AGI `.stg` text.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let mut s = Survey::empty(Format::Sting);
    let header2 = lines.get(1).map(|(_, l)| *l).unwrap_or("");
    let declared: Option<usize> = header2
        .split("Records:")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|t| t.parse().ok());
    let feet = lines
        .get(2)
        .is_some_and(|(_, l)| l.to_ascii_lowercase().contains("feet"));
    let scale = if feet { 0.3048 } else { 1.0 };
    if feet {
        s.notes
            .push("positions given in feet: converted to metres (× 0.3048)".into());
    }
    let mut pos: Vec<[[f64; 3]; 4]> = Vec::new();
    let (mut r, mut er, mut cur, mut rho) = (vec![], vec![], vec![], vec![]);
    let mut date: Option<(String, String)> = None;
    for &(no, l) in lines.iter().skip(3) {
        if l.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = l.split(',').map(str::trim).collect();
        if f.len() < 21 {
            return Err(ReadError::malformed(
                path,
                no,
                "a record with at least 21 comma-separated fields",
                l,
            ));
        }
        let num = |c: usize, what: &str| {
            parse_f64(f[c]).ok_or_else(|| ReadError::malformed(path, no, what, f[c]))
        };
        let mut p = [[0.0; 3]; 4];
        for e in 0..4 {
            for ax in 0..3 {
                p[e][ax] = num(9 + 3 * e + ax, "an electrode coordinate")? * scale;
            }
        }
        pos.push(p);
        r.push(num(4, "V/I in Ω")?);
        er.push(num(5, "the error in per mille")? * 1e-3);
        cur.push(num(6, "the current in mA")? * 1e-3);
        rho.push(num(7, "ρa in Ω·m")?);
        if date.is_none() {
            date = Some((f[2].to_string(), f[3].to_string()));
        }
    }
    if let Some((d, t)) = date {
        set_date(&mut s, &d, Some(t), "date field of the first record");
    }
    if let Some(n) = declared
        && n > pos.len()
    {
        // Fewer records than the header declares: the file was cut (issue 19).
        let (no, last) = lines.last().copied().unwrap_or((1, ""));
        return Err(ReadError::malformed(
            path,
            no,
            format!(
                "{n} records, as line 2 declares (found {}); the file ends early, so it looks cut off",
                pos.len()
            ),
            last,
        ));
    }
    if let Some(n) = declared
        && n != pos.len()
    {
        s.notes.push(format!(
            "header declares {n} records, the file holds {}",
            pos.len()
        ));
    }
    let (quadrupoles, electrodes) = PositionIndex::quadrupoles(&pos);
    s.quadrupoles = quadrupoles;
    s.electrodes = electrodes;
    s.r_ohm = Some(r);
    s.err = Some(er);
    s.i_a = Some(cur);
    s.rhoa_ohm_m = Some(rho);
    s.notes
        .push("err = error field/1000 (AGI writes it in per mille)".into());
    s.valid = vec![true; s.quadrupoles.len()];
    Ok(s)
}

//! ABEM Lund imaging system / Terrameter SAS export (`.ohm`, ERIGRAPH layout):
//! ```text
//! title
//! x0   { first station coordinate }
//! yyyy-mm-dd hh:mm:ss   ver. …
//! a    { electrode take-out spacing }
//! n    { no. of protocol files used }
//! PROTOCOL  array-code
//! NAME.ORG | NAME.UP | NAME.DWN      (one block per protocol)
//! n_meas  …
//! mid-station coordinate
//! date line
//! c1 c2 p1 p2 R var% cycles total_cycles     (positions in m relative to the mid station,
//!                                             1e38 = remote electrode; R in Ω)
//! ```

use super::super::survey::{Format, Survey};
use super::{PositionIndex, numbered_lines, parse_index, set_date};
use crate::methods::io::{ReadError, fields, parse_f64};
use std::path::Path;

fn is_protocol_name(line: &str) -> bool {
    let t = line.trim();
    let up = t.to_ascii_uppercase();
    !t.contains(' ') && (up.ends_with(".ORG") || up.ends_with(".UP") || up.ends_with(".DWN"))
}

/// Whether a protocol-name line (`NAME.ORG`) is among the lines.
pub fn has_protocol_line(lines: &[&str]) -> bool {
    lines.iter().take(20).any(|l| is_protocol_name(l))
}

/// Parse an ABEM Lund `.ohm` text.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let mut s = Survey::empty(Format::AbemLund);
    // The date line: the first line whose first field is a year-first date.
    if let Some((_, l)) = lines.iter().take(10).find(|(_, l)| {
        fields(l)
            .first()
            .is_some_and(|t| t.len() == 10 && t.as_bytes()[4] == b'-')
    }) {
        let f = fields(l);
        set_date(
            &mut s,
            f[0],
            f.get(1).map(|t| t.to_string()),
            "header date line",
        );
    }
    let mut pos: Vec<[[f64; 3]; 4]> = Vec::new();
    let (mut r, mut var) = (Vec::new(), Vec::new());
    let mut blocks = 0;
    let mut i = 0;
    while i < lines.len() {
        let (_, l) = lines[i];
        if !is_protocol_name(l) {
            i += 1;
            continue;
        }
        blocks += 1;
        let (cno, cl) = *lines.get(i + 1).ok_or_else(|| {
            ReadError::malformed(
                path,
                lines.len(),
                "the number of measurements",
                "end of file",
            )
        })?;
        let n_meas = fields(cl)
            .first()
            .and_then(|t| parse_index(t))
            .filter(|n| *n >= 0)
            .ok_or_else(|| {
                ReadError::malformed(path, cno, "the number of measurements of the protocol", cl)
            })? as usize;
        let (mno, ml) = *lines.get(i + 2).ok_or_else(|| {
            ReadError::malformed(
                path,
                lines.len(),
                "the mid-station coordinate",
                "end of file",
            )
        })?;
        let mid = fields(ml)
            .first()
            .and_then(|t| parse_f64(t))
            .ok_or_else(|| ReadError::malformed(path, mno, "the mid-station coordinate (m)", ml))?;
        let mut j = i + 4;
        for _ in 0..n_meas {
            let (no, dl) = *lines.get(j).ok_or_else(|| {
                ReadError::malformed(
                    path,
                    lines.len(),
                    format!("{n_meas} measurement rows"),
                    "end of file",
                )
            })?;
            j += 1;
            let f = fields(dl);
            let nums: Option<Vec<f64>> = f.iter().take(6).map(|t| parse_f64(t)).collect();
            let Some(nums) = nums.filter(|v| v.len() >= 5) else {
                return Err(ReadError::malformed(
                    path,
                    no,
                    "a row 'c1 c2 p1 p2 R var …' of numbers",
                    dl,
                ));
            };
            let mut p = [[0.0; 3]; 4];
            for e in 0..4 {
                p[e][0] = if nums[e].abs() >= 1e37 {
                    f64::INFINITY
                } else {
                    nums[e] + mid
                };
            }
            pos.push(p);
            r.push(nums[4]);
            var.push(nums.get(5).copied().unwrap_or(f64::NAN));
        }
        i = j;
    }
    if blocks == 0 {
        return Err(ReadError::format(
            path,
            "no protocol block (a NAME.ORG/.UP/.DWN line) found",
        ));
    }
    let (quadrupoles, electrodes) = PositionIndex::quadrupoles(&pos);
    s.quadrupoles = quadrupoles;
    s.electrodes = electrodes;
    s.notes.push(
        "electrode x = mid-station coordinate + relative position; numbered by position".into(),
    );
    if var.iter().any(|v| v.is_finite() && *v != 0.0) {
        s.err = Some(var.iter().map(|v| v * 0.01).collect());
        s.notes.push("err = variation coefficient/100".into());
    } else {
        s.notes
            .push("variation coefficients are all 0: no error column".into());
    }
    s.r_ohm = Some(r);
    s.valid = vec![true; s.quadrupoles.len()];
    Ok(s)
}

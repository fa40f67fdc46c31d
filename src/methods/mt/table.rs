//! Plain apparent-resistivity/phase tables: the Occam 1D data layout (`period, log10 ρa,
//! sd(log10 ρa), phase, sd(phase)` — e.g. the Cull (1985) data of Constable et al. 1987,
//! Table 5) and the benchmark CSV (`period_s,rhoa_ohmm,rhoa_err,phase_deg,phase_err`,
//! absolute ρa errors). Phases are taken in the first-quadrant convention as written.

use std::path::Path;

use super::sounding::{CurveMode, ModeCurve, MtSounding};
use crate::methods::io::{ReadError, fields, parse_f64, read_text};

/// Whether the first line looks like a ρa/φ table header (period + rho + phase columns).
pub fn looks_like_sounding_table(head: &str) -> bool {
    let first = head
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_ascii_lowercase();
    first.contains("period") && first.contains("rho") && (first.contains("ph"))
}

/// Read a ρa/φ table (module docs) as one curve.
pub fn read_sounding_table(path: &Path) -> Result<MtSounding, ReadError> {
    let text = read_text(path)?;
    parse_sounding_table(path, &text)
}

/// Parse a ρa/φ table.
pub fn parse_sounding_table(path: &Path, text: &str) -> Result<MtSounding, ReadError> {
    let mut header: Option<String> = None;
    let mut rows: Vec<(usize, Vec<f64>)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        let first = t.trim_start_matches('#').trim();
        let starts_numeric = first
            .split(|c: char| c == ',' || c.is_whitespace())
            .next()
            .and_then(parse_f64)
            .is_some();
        if !starts_numeric {
            if header.is_none() && rows.is_empty() {
                header = Some(first.to_ascii_lowercase());
                continue;
            }
            if t.starts_with('#') {
                continue;
            }
        }
        // A last line may carry a comment glued on (`21.63#layerdepth`): cut at '#'.
        let data = t.split('#').next().unwrap_or("");
        let nums = fields(data)
            .into_iter()
            .map(|tok| {
                parse_f64(tok).ok_or_else(|| ReadError::malformed(path, i + 1, "a number", tok))
            })
            .collect::<Result<Vec<f64>, _>>()?;
        if nums.len() < 5 {
            return Err(ReadError::malformed(
                path,
                i + 1,
                "5 columns: period, rho, rho error, phase, phase error",
                format!("{} columns", nums.len()),
            ));
        }
        rows.push((i + 1, nums));
    }
    if rows.is_empty() {
        return Err(ReadError::format(path, "no data rows in the ρa/φ table"));
    }
    let h = header.clone().unwrap_or_default();
    let csv = h.contains("rhoa_ohmm") || h.contains("period_s");
    let mut notes = Vec::new();
    let (log10_given, guessed) = if csv {
        (false, false)
    } else if h.contains("log") {
        (true, false)
    } else if rows.iter().any(|(_, r)| r[1] <= 0.0) {
        notes.push(
            "The rho column holds values ≤ 0, so it is log10 ρa (the Occam 1D layout).".into(),
        );
        (true, false)
    } else {
        notes.push(
            "The rho column was taken as log10 ρa (the Occam 1D layout) without proof from the \
             header: a guess."
                .into(),
        );
        (true, true)
    };
    rows.sort_by(|a, b| a.1[0].total_cmp(&b.1[0]));
    let mut period = Vec::new();
    let mut c = ModeCurve {
        mode: if csv {
            CurveMode::Xy
        } else {
            CurveMode::Single
        },
        rhoa_ohm_m: Vec::new(),
        log10_rhoa_std: Vec::new(),
        phase_deg: Vec::new(),
        phase_std_deg: Vec::new(),
    };
    for (line, r) in &rows {
        if !(r[0].is_finite() && r[0] > 0.0) {
            return Err(ReadError::malformed(
                path,
                *line,
                "a positive period",
                format!("{}", r[0]),
            ));
        }
        period.push(r[0]);
        if log10_given {
            c.rhoa_ohm_m.push(10f64.powf(r[1]));
            c.log10_rhoa_std.push(r[2]);
        } else {
            c.rhoa_ohm_m.push(r[1]);
            c.log10_rhoa_std
                .push(r[2] / (r[1] * std::f64::consts::LN_10));
        }
        c.phase_deg.push(r[3]);
        c.phase_std_deg.push(r[4]);
    }
    Ok(MtSounding {
        site: path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_string(),
        format_label: if csv {
            "ρa/φ CSV (period_s, rhoa_ohmm, rhoa_err, phase_deg, phase_err)".into()
        } else {
            "Occam 1D ρa/φ table (period, log10 ρa, sd, phase, sd)".into()
        },
        format_guessed: guessed,
        period_s: period,
        curves: vec![c],
        sign_convention: None,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occam_layout_with_a_glued_comment() {
        let t = "# periods\trho\terho\tphs\tephs\n0.02\t0.712\t0.0434\t20.5\t4.5\n\
                 1995.0\t-0.107\t0.5\t58.66\t21.63#layerdepth\n";
        let s = parse_sounding_table(Path::new("c.dat"), t).unwrap();
        assert_eq!(s.period_s, vec![0.02, 1995.0]);
        assert!((s.curves[0].rhoa_ohm_m[0] - 10f64.powf(0.712)).abs() < 1e-12);
        assert!(!s.format_guessed);
    }

    #[test]
    fn csv_layout_converts_absolute_errors() {
        let t = "period_s,rhoa_ohmm,rhoa_err,phase_deg,phase_err\n0.001,100,5,45,1.43\n";
        let s = parse_sounding_table(Path::new("b.csv"), t).unwrap();
        assert!((s.curves[0].log10_rhoa_std[0] - 0.05 / std::f64::consts::LN_10).abs() < 1e-15);
    }

    #[test]
    fn short_row_names_the_line() {
        let t = "period_s,rhoa_ohmm,rhoa_err,phase_deg,phase_err\n0.001,100,5,45\n";
        let e = parse_sounding_table(Path::new("b.csv"), t).unwrap_err();
        assert_eq!(
            e.to_string(),
            "b.csv, line 2: expected 5 columns: period, rho, rho error, phase, phase error, found \"4 columns\""
        );
    }
}

//! pyGIMLi/BERT unified data format (`.dat`, `.ohm`, `.shm`): reader and writer.
//!
//! Layout (Günther, Rücker & Spitzer 2006; pyGIMLi `DataContainer`):
//! ```text
//! N            # number of electrodes (anything after '#' is a comment)
//! # x z        # token line naming the sensor columns: x z | x y | x y z
//! x z          # N rows
//! M            # number of data
//! # a b m n rhoa err …   # token line naming the data columns
//! a b m n …    # M rows, electrode numbers 1-based (0 = none/pole)
//! K            # optional topography block: K, then K rows x z
//! ```
//! Units: r Ω, rhoa Ω·m, u V, i A, err relative, k m, ip as written (pyGIMLi: mrad).

use super::super::survey::{Electrode, Format, Quadrupole, Survey};
use super::{numbered_lines, parse_index, value_or_nan};
use crate::methods::io::{ReadError, fields, parse_f64};
use std::path::Path;

/// The body of a line without its `#` comment, trimmed.
fn strip_comment(line: &str) -> &str {
    line.split('#').next().unwrap_or("").trim()
}

/// Whether the lines look like the unified format: a count, then a `#` token line naming x.
pub fn looks_like(lines: &[&str]) -> bool {
    let mut it = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .skip_while(|l| l.starts_with('#') && !l.contains('x'));
    let Some(count) = it.next() else {
        return false;
    };
    let body = strip_comment(count);
    if body.is_empty() || parse_index(body).is_none_or(|n| n < 1) || fields(body).len() != 1 {
        return false;
    }
    let Some(tok) = it.next() else { return false };
    if !tok.starts_with('#') {
        return false;
    }
    let toks: Vec<String> = fields(tok.trim_start_matches('#'))
        .iter()
        .map(|t| t.to_ascii_lowercase())
        .collect();
    toks.first().is_some_and(|t| t == "x")
}

/// Parse a unified-format text.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let mut pos = 0usize;
    let mut s = Survey::empty(Format::Unified);
    // Optional leading comment lines (pyGIMLi allows a "# date: …" line).
    let next_content = |pos: &mut usize| -> Option<(usize, &str, Option<String>)> {
        let mut last_comment = None;
        while *pos < lines.len() {
            let (no, l) = lines[*pos];
            *pos += 1;
            let t = l.trim();
            if t.is_empty() {
                continue;
            }
            if t.starts_with('#') {
                last_comment = Some(t.trim_start_matches('#').trim().to_string());
                continue;
            }
            return Some((no, t, last_comment));
        }
        None
    };
    let (no, count_line, pre_comment) = next_content(&mut pos).ok_or_else(|| {
        ReadError::malformed(path, lines.len().max(1), "the number of electrodes", "")
    })?;
    if let Some(c) = &pre_comment
        && let Some(d) = c.strip_prefix("date:")
    {
        super::set_date(&mut s, d.trim(), None, "'# date:' header line");
    }
    let n_el = parse_index(strip_comment(count_line))
        .filter(|n| *n >= 0 && fields(strip_comment(count_line)).len() == 1)
        .ok_or_else(|| {
            ReadError::malformed(
                path,
                no,
                "the number of electrodes (one integer)",
                count_line,
            )
        })? as usize;
    if n_el > 10_000_000 {
        return Err(ReadError::malformed(
            path,
            no,
            "a plausible number of electrodes",
            count_line,
        ));
    }
    // Sensor token line: the first comment line after the count that names x.
    let mut sensor_tokens: Option<Vec<String>> = None;
    let mut electrodes = Vec::with_capacity(n_el.min(100_000));
    while electrodes.len() < n_el {
        let Some(&(no, l)) = lines.get(pos) else {
            return Err(ReadError::malformed(
                path,
                lines.len(),
                format!("{n_el} electrode rows"),
                format!("end of file after {} rows", electrodes.len()),
            ));
        };
        pos += 1;
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if t.starts_with('#') {
            let toks: Vec<String> = fields(t.trim_start_matches('#'))
                .iter()
                .map(|x| x.to_ascii_lowercase())
                .collect();
            if electrodes.is_empty() && toks.first().is_some_and(|x| x == "x") {
                sensor_tokens = Some(toks);
            }
            continue;
        }
        let vals: Vec<f64> = fields(strip_comment(t))
            .iter()
            .map(|v| {
                parse_f64(v).ok_or_else(|| {
                    ReadError::malformed(path, no, "electrode coordinates (numbers)", t)
                })
            })
            .collect::<Result<_, _>>()?;
        if vals.is_empty() {
            return Err(ReadError::malformed(path, no, "electrode coordinates", t));
        }
        let toks = sensor_tokens.clone().unwrap_or_else(|| match vals.len() {
            1 => vec!["x".into()],
            2 => vec!["x".into(), "z".into()],
            _ => vec!["x".into(), "y".into(), "z".into()],
        });
        let mut e = Electrode::at(0.0, 0.0, 0.0);
        let two_d_xy = toks.len() == 2 && toks[1] == "y";
        for (tok, v) in toks.iter().zip(&vals) {
            match tok.as_str() {
                "x" => e.x_m = *v,
                "y" if two_d_xy => e.z_m = *v,
                "y" => e.y_m = *v,
                "z" => e.z_m = *v,
                _ => {}
            }
        }
        electrodes.push(e);
    }
    if let Some(t) = &sensor_tokens
        && t.len() == 2
        && t[1] == "y"
    {
        s.notes
            .push("2D sensor table 'x y': y taken as elevation (pyGIMLi 2D convention)".into());
    }
    s.electrodes = electrodes;

    // Data count and token line.
    let Some((no, count_line, tok_comment)) = next_content(&mut pos) else {
        return Err(ReadError::malformed(
            path,
            lines.len(),
            "the number of data",
            "end of file",
        ));
    };
    let n_data = parse_index(strip_comment(count_line))
        .filter(|n| *n >= 0 && fields(strip_comment(count_line)).len() == 1)
        .ok_or_else(|| {
            ReadError::malformed(path, no, "the number of data (one integer)", count_line)
        })? as usize;
    let mut tokens: Option<Vec<String>> = None;
    let mut rows: Vec<(usize, Vec<f64>)> = Vec::with_capacity(n_data.min(1_000_000));
    while rows.len() < n_data {
        let Some(&(no, l)) = lines.get(pos) else {
            return Err(ReadError::malformed(
                path,
                lines.len(),
                format!("{n_data} data rows"),
                format!("end of file after {} rows", rows.len()),
            ));
        };
        pos += 1;
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if t.starts_with('#') {
            let toks: Vec<String> = fields(t.trim_start_matches('#'))
                .iter()
                .map(|x| x.to_string())
                .collect();
            if rows.is_empty()
                && toks
                    .first()
                    .is_some_and(|x| x.eq_ignore_ascii_case("a") || x.eq_ignore_ascii_case("s"))
            {
                tokens = Some(toks);
            }
            continue;
        }
        let vals: Vec<f64> = fields(strip_comment(t))
            .iter()
            .map(|v| {
                value_or_nan(v)
                    .ok_or_else(|| ReadError::malformed(path, no, "numbers in a data row", t))
            })
            .collect::<Result<_, _>>()?;
        rows.push((no, vals));
    }
    let tokens = tokens.unwrap_or_else(|| {
        let _ = tok_comment;
        ["a", "b", "m", "n", "rhoa", "err"]
            .iter()
            .map(|x| x.to_string())
            .collect()
    });
    let lower: Vec<String> = tokens.iter().map(|t| t.to_ascii_lowercase()).collect();
    if lower.first().is_some_and(|t| t == "s") {
        return Err(ReadError::format(
            path,
            "this is a travel-time file (tokens 's g t'), not ERT data",
        ));
    }
    let col = |names: &[&str]| lower.iter().position(|t| names.contains(&t.as_str()));
    let (ia, ib, im, inn) = (
        col(&["a", "c1"]),
        col(&["b", "c2"]),
        col(&["m", "p1"]),
        col(&["n", "p2"]),
    );
    let (Some(ia), Some(ib), Some(im), Some(inn)) = (ia, ib, im, inn) else {
        return Err(ReadError::malformed(
            path,
            rows.first().map(|r| r.0).unwrap_or(no),
            "a token line naming a b m n",
            tokens.join(" "),
        ));
    };
    let mut raw_idx: Vec<[i64; 4]> = Vec::with_capacity(rows.len());
    for (no, vals) in &rows {
        let mut q = [0i64; 4];
        for (k, c) in [ia, ib, im, inn].into_iter().enumerate() {
            let v = vals.get(c).copied().unwrap_or(f64::NAN);
            if !v.is_finite() || v.fract() != 0.0 || !(0.0..=1e9).contains(&v) {
                return Err(ReadError::malformed(
                    path,
                    *no,
                    "electrode numbers (non-negative integers) in the a b m n columns",
                    format!("{v}"),
                ));
            }
            q[k] = v as i64;
        }
        raw_idx.push(q);
    }
    // Numbering base: 1-based by the format; 0-based when a 0 appears outside the pole
    // columns b/n and no index reaches the electrode count.
    let max_idx = raw_idx
        .iter()
        .flat_map(|q| q.iter())
        .copied()
        .max()
        .unwrap_or(0);
    let zero_in_an = raw_idx.iter().any(|q| q[0] == 0 || q[2] == 0);
    let zero_base = zero_in_an && (max_idx as usize) < s.electrodes.len();
    if zero_base {
        s.notes.push(format!(
            "electrode numbers run 0..{max_idx} for {} electrodes and 0 occurs as A or M: read as 0-based \
             (the unified format is 1-based; pyGIMLi would read 0 as 'no electrode')",
            s.electrodes.len()
        ));
    }
    let conv = |v: i64| -> Option<usize> {
        if zero_base {
            Some(v as usize)
        } else if v == 0 {
            None
        } else {
            Some(v as usize - 1)
        }
    };
    s.quadrupoles = raw_idx
        .iter()
        .map(|q| Quadrupole {
            a: conv(q[0]),
            b: conv(q[1]),
            m: conv(q[2]),
            n: conv(q[3]),
        })
        .collect();
    if !zero_base && raw_idx.iter().any(|q| q.contains(&0)) {
        s.notes
            .push("electrode number 0 read as a remote (pole) electrode".into());
    }
    let get_col = |c: usize, scale: f64| -> Vec<f64> {
        rows.iter()
            .map(|(_, v)| v.get(c).copied().unwrap_or(f64::NAN) * scale)
            .collect()
    };
    for (c, tok) in lower.iter().enumerate() {
        let (name, unit) = match tok.split_once('/') {
            Some((n, u)) => (n, u),
            None => (tok.as_str(), ""),
        };
        let unit_scale = match unit {
            "mv" | "ma" => 1e-3,
            "%" => 0.01,
            "kohm" => 1e3,
            _ => 1.0,
        };
        match name {
            "a" | "b" | "m" | "n" | "c1" | "c2" | "p1" | "p2" => {}
            "r" | "rho" => s.r_ohm = Some(get_col(c, unit_scale)),
            "rhoa" | "ra" => s.rhoa_ohm_m = Some(get_col(c, 1.0)),
            "u" => s.u_v = Some(get_col(c, unit_scale)),
            "i" => s.i_a = Some(get_col(c, unit_scale)),
            "err" => s.err = Some(get_col(c, unit_scale)),
            "ip" => {
                s.ip = Some(get_col(c, 1.0));
                s.ip_unit = Some(if unit.is_empty() {
                    "mrad".into()
                } else {
                    unit.to_string()
                });
            }
            "k" => s.k_m = Some(get_col(c, 1.0)),
            "valid" => s.valid = get_col(c, 1.0).iter().map(|v| *v != 0.0).collect(),
            other => s.notes.push(format!(
                "column '{other}' kept out (not an ERT data column this reader uses)"
            )),
        }
    }
    if let Some(err) = &s.err
        && err.iter().any(|e| *e > 1.0)
    {
        s.notes.push(
            "some err values exceed 1: the unified format's err is a fraction; these may be percent".into(),
        );
    }
    // Optional topography block.
    if let Some((no, count_line, _)) = next_content(&mut pos) {
        let n_topo = parse_index(strip_comment(count_line))
            .filter(|n| *n >= 0 && fields(strip_comment(count_line)).len() == 1)
            .ok_or_else(|| {
                ReadError::malformed(path, no, "the number of topography points", count_line)
            })? as usize;
        while s.topography.len() < n_topo {
            let Some((no, l, _)) = next_content(&mut pos) else {
                return Err(ReadError::malformed(
                    path,
                    lines.len(),
                    format!("{n_topo} topography rows"),
                    "end of file",
                ));
            };
            let v = fields(strip_comment(l));
            let nums: Vec<f64> = v.iter().filter_map(|t| parse_f64(t)).collect();
            if nums.len() != v.len() || nums.len() < 2 {
                return Err(ReadError::malformed(
                    path,
                    no,
                    "a topography row 'x z' (or 'x y z')",
                    l,
                ));
            }
            let z = *nums.last().unwrap_or(&0.0);
            s.topography.push([nums[0], z]);
        }
    }
    Ok(s)
}

fn fmt_num(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else {
        format!("{v}")
    }
}

/// Write a survey in the unified format (1-based numbers, 0 = pole). Floats are written with
/// Rust's shortest round-trip representation, so reading the text back is exact.
pub fn to_string(s: &Survey) -> String {
    let mut out = String::new();
    let three_d = s.electrodes.iter().any(|e| e.y_m != 0.0);
    out.push_str(&format!("{}# Number of electrodes\n", s.electrodes.len()));
    out.push_str(if three_d { "# x y z\n" } else { "# x z\n" });
    for e in &s.electrodes {
        if three_d {
            out.push_str(&format!(
                "{}\t{}\t{}\n",
                fmt_num(e.x_m),
                fmt_num(e.y_m),
                fmt_num(e.z_m)
            ));
        } else {
            out.push_str(&format!("{}\t{}\n", fmt_num(e.x_m), fmt_num(e.z_m)));
        }
    }
    out.push_str(&format!("{}# Number of data\n", s.quadrupoles.len()));
    let mut cols: Vec<(&str, &Vec<f64>)> = Vec::new();
    for (tok, c) in [
        ("r", &s.r_ohm),
        ("rhoa", &s.rhoa_ohm_m),
        ("u", &s.u_v),
        ("i", &s.i_a),
        ("err", &s.err),
        ("ip", &s.ip),
        ("k", &s.k_m),
    ] {
        if let Some(v) = c {
            cols.push((tok, v));
        }
    }
    let mut header = String::from("# a b m n");
    for (t, _) in &cols {
        header.push(' ');
        header.push_str(t);
    }
    header.push_str(" valid\n");
    out.push_str(&header);
    let idx = |e: Option<usize>| e.map(|v| v + 1).unwrap_or(0);
    for (i, q) in s.quadrupoles.iter().enumerate() {
        out.push_str(&format!(
            "{}\t{}\t{}\t{}",
            idx(q.a),
            idx(q.b),
            idx(q.m),
            idx(q.n)
        ));
        for (_, v) in &cols {
            out.push('\t');
            out.push_str(&fmt_num(v.get(i).copied().unwrap_or(f64::NAN)));
        }
        out.push_str(if s.valid.get(i).copied().unwrap_or(true) {
            "\t1\n"
        } else {
            "\t0\n"
        });
    }
    out.push_str(&format!("{}\n", s.topography.len()));
    for t in &s.topography {
        out.push_str(&format!("{}\t{}\n", fmt_num(t[0]), fmt_num(t[1])));
    }
    out
}

/// Write a survey to `path` in the unified format (never over the file it was read from).
pub fn write(s: &Survey, path: &Path) -> Result<(), ReadError> {
    if s.source_file.as_deref() == Some(path) {
        return Err(ReadError::format(
            path,
            "refusing to overwrite the survey's own input file",
        ));
    }
    std::fs::write(path, to_string(s)).map_err(|e| ReadError::io(path, &e))
}

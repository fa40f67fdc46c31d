//! MPT DAS-1 (ERTLab DACQ) `.Data` exports.
//!
//! Header keys `#data_*_col= k` give 1-based columns of the data rows, counted after
//! splitting on blanks *and* commas (`009,01` = cable 9, electrode 1 are two columns);
//! the electrode table sits between `#elec_start` and `#elec_end` (`cable,el x y z …`),
//! the data between `#data_start` and `#data_end`. Rows reporting "out of range" carry no
//! value and are left out (counted in the notes). V/I is in Ω, its standard deviation in Ω,
//! IP windows in mV/V, current in mA.

use super::super::survey::{Electrode, Format, Quadrupole, Survey};
use super::{numbered_lines, parse_index, set_date};
use crate::methods::io::{ReadError, parse_f64};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

fn tokens(line: &str) -> Vec<&str> {
    line.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Parse a DAS-1 export.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let mut s = Survey::empty(Format::Das1);
    let mut cols: HashMap<String, i64> = HashMap::new();
    let mut elec: HashMap<(i64, i64), [f64; 3]> = HashMap::new();
    let mut in_elec = false;
    let mut in_data = false;
    let mut data_rows: Vec<(usize, &str)> = Vec::new();
    let mut out_of_range = 0usize;
    let mut tx_failed_rows: Vec<&str> = Vec::new();
    for &(no, l) in &lines {
        let t = l.trim();
        if t.starts_with("#elec_start") {
            in_elec = true;
            continue;
        }
        if t.starts_with("#elec_end") {
            in_elec = false;
            continue;
        }
        if t.starts_with("#data_start") {
            in_data = true;
            continue;
        }
        if t.starts_with("#data_end") {
            in_data = false;
            continue;
        }
        if t.starts_with('!') || t.is_empty() {
            continue;
        }
        if in_elec {
            let f = tokens(t);
            let (Some(c), Some(e)) = (
                f.first().and_then(|v| parse_index(v)),
                f.get(1).and_then(|v| parse_index(v)),
            ) else {
                return Err(ReadError::malformed(
                    path,
                    no,
                    "an electrode row 'cable,electrode x y z'",
                    t,
                ));
            };
            let xyz: Option<Vec<f64>> = f.iter().skip(2).take(3).map(|v| parse_f64(v)).collect();
            let Some(xyz) = xyz.filter(|v| v.len() == 3) else {
                return Err(ReadError::malformed(
                    path,
                    no,
                    "electrode coordinates x y z",
                    t,
                ));
            };
            elec.insert((c, e), [xyz[0], xyz[1], xyz[2]]);
        } else if in_data {
            if t.to_ascii_lowercase().contains("out of range") {
                out_of_range += 1;
                if t.to_ascii_lowercase().contains("tx") {
                    tx_failed_rows.push(t);
                }
                continue;
            }
            data_rows.push((no, t));
        } else if let Some(rest) = t.strip_prefix('#') {
            if let Some((k, v)) = rest.split_once('=') {
                if let Some(v) = parse_index(v.trim()) {
                    cols.insert(k.trim().to_ascii_lowercase(), v);
                }
            } else if let Some(d) = rest.strip_prefix("IDate") {
                set_date(&mut s, d.trim(), None, "#IDate header");
            }
        }
    }
    if in_data || in_elec {
        // A file cut inside a section (issue 19): its rows may stop anywhere.
        let (section, end) = if in_data {
            ("data", "#data_end")
        } else {
            ("electrode", "#elec_end")
        };
        let (no, last) = lines.last().copied().unwrap_or((1, ""));
        return Err(ReadError::malformed(
            path,
            no,
            format!(
                "{end} after the {section} rows; the file ends inside the section, so it looks cut off"
            ),
            last,
        ));
    }
    let col = |k: &str| {
        cols.get(k)
            .copied()
            .filter(|c| *c >= 1)
            .map(|c| c as usize - 1)
    };
    let ecols = [
        (col("data_a_cable_col"), col("data_a_elec_col")),
        (col("data_b_cable_col"), col("data_b_elec_col")),
        (col("data_m_cable_col"), col("data_m_elec_col")),
        (col("data_n_cable_col"), col("data_n_elec_col")),
    ];
    let res_col = col("data_res_col").ok_or_else(|| {
        ReadError::format(path, "no '#data_res_col=' header line (DAS-1 column map)")
    })?;
    let std_col = col("data_std_res_col");
    let ip_col = col("data_ip_wind_col");
    let cur_col = col("data_i_curr_col");
    let mut raw: Vec<[(i64, i64); 4]> = Vec::new();
    let (mut r, mut sd, mut ip, mut cur) = (vec![], vec![], vec![], vec![]);
    let mut date_token: Option<String> = None;
    for (no, t) in &data_rows {
        let f = tokens(t);
        let mut q = [(0i64, 0i64); 4];
        for (k, (cc, ec)) in ecols.iter().enumerate() {
            let (Some(cc), Some(ec)) = (cc, ec) else {
                return Err(ReadError::format(
                    path,
                    "incomplete '#data_*_cable_col/_elec_col' header",
                ));
            };
            let c = f.get(*cc).and_then(|v| parse_index(v));
            let e = f.get(*ec).and_then(|v| parse_index(v));
            let (Some(c), Some(e)) = (c, e) else {
                return Err(ReadError::malformed(
                    path,
                    *no,
                    "electrodes written 'cable,electrode'",
                    *t,
                ));
            };
            q[k] = (c, e);
        }
        let num = |c: usize, what: &str| {
            f.get(c)
                .and_then(|v| parse_f64(v))
                .ok_or_else(|| ReadError::malformed(path, *no, what, *t))
        };
        r.push(num(res_col, "V/I in Ω")?);
        sd.push(
            std_col
                .map(|c| num(c, "the standard deviation of V/I"))
                .transpose()?
                .unwrap_or(f64::NAN),
        );
        ip.push(
            ip_col
                .map(|c| num(c, "the IP window value"))
                .transpose()?
                .unwrap_or(f64::NAN),
        );
        cur.push(
            cur_col
                .map(|c| num(c, "the current in mA"))
                .transpose()?
                .unwrap_or(f64::NAN)
                * 1e-3,
        );
        if date_token.is_none() {
            date_token = f
                .iter()
                .find(|v| {
                    v.is_ascii()
                        && v.len() == 15
                        && v.as_bytes()[8] == b'_'
                        && v[..8].bytes().all(|b| b.is_ascii_digit())
                })
                .map(|v| v.to_string());
        }
        raw.push(q);
    }
    if let Some(d) = date_token {
        let tod = format!("{}:{}:{}", &d[9..11], &d[11..13], &d[13..15]);
        // The data rows' own time stamps are year-first and win over the header date.
        let before = s.survey_time.take();
        let question = s.time_question.take();
        set_date(
            &mut s,
            &d[..8],
            Some(tod),
            "time stamp of the first data row",
        );
        if s.survey_time.is_none() {
            s.survey_time = before;
            s.time_question = question;
        } else if let Some(q) = question {
            s.notes.push(format!(
                "header date was ambiguous; the data rows' year-first time stamps decided it ({q})"
            ));
        }
    }
    let used: BTreeSet<(i64, i64)> = raw.iter().flat_map(|q| q.iter().copied()).collect();
    let mut index: BTreeMap<(i64, i64), usize> = BTreeMap::new();
    for (i, ce) in used.iter().enumerate() {
        let p = elec.get(ce).ok_or_else(|| {
            ReadError::format(
                path,
                format!(
                    "electrode {},{} is used in the data but not in the electrode table",
                    ce.0, ce.1
                ),
            )
        })?;
        index.insert(*ce, i);
        s.electrodes.push(Electrode {
            x_m: p[0],
            y_m: p[1],
            z_m: p[2],
            label: Some(format!("{},{}", ce.0, ce.1)),
        });
    }
    s.quadrupoles = raw
        .iter()
        .map(|q| Quadrupole {
            a: index.get(&q[0]).copied(),
            b: index.get(&q[1]).copied(),
            m: index.get(&q[2]).copied(),
            n: index.get(&q[3]).copied(),
        })
        .collect();
    if elec.len() > used.len() {
        s.notes.push(format!(
            "the electrode table lists {} electrodes; the {} used by the data are kept (ordered by cable, electrode)",
            elec.len(),
            used.len()
        ));
    }
    if out_of_range > 0 {
        s.notes.push(format!(
            "{out_of_range} data rows report 'out of range' and carry no value: left out"
        ));
    }
    if std_col.is_some() {
        s.err = Some(
            r.iter()
                .zip(&sd)
                .map(|(r, e)| if *r != 0.0 { (e / r).abs() } else { f64::NAN })
                .collect(),
        );
        s.notes.push("err = Std./|V/I|".into());
    }
    if ip_col.is_some() {
        s.ip = Some(ip);
        s.ip_unit = Some("mV/V".into());
    }
    if cur_col.is_some() {
        s.i_a = Some(cur);
    }
    s.r_ohm = Some(r);
    s.valid = vec![true; s.quadrupoles.len()];
    // An electrode whose every current injection failed with "TX resistance out of range"
    // has a contact problem; its readings as a potential electrode are not trusted either.
    let mut failed_tx: BTreeSet<(i64, i64)> = BTreeSet::new();
    for t in &tx_failed_rows {
        let f = tokens(t);
        for (cc, ec) in ecols.iter().take(2) {
            if let (Some(cc), Some(ec)) = (cc, ec)
                && let (Some(c), Some(e)) = (
                    f.get(*cc).and_then(|v| parse_index(v)),
                    f.get(*ec).and_then(|v| parse_index(v)),
                )
            {
                failed_tx.insert((c, e));
            }
        }
    }
    let injected: BTreeSet<(i64, i64)> = raw.iter().flat_map(|q| [q[0], q[1]]).collect();
    for bad in failed_tx.difference(&injected) {
        let Some(&i) = index.get(bad) else { continue };
        let mut n_bad = 0;
        for (q, v) in s.quadrupoles.iter().zip(s.valid.iter_mut()) {
            if q.m == Some(i) || q.n == Some(i) {
                *v = false;
                n_bad += 1;
            }
        }
        if n_bad > 0 {
            s.notes.push(format!(
                "electrode {},{}: every current injection failed (TX resistance out of range, a contact problem); its {n_bad} readings as a potential electrode are marked invalid",
                bad.0, bad.1
            ));
        }
    }
    Ok(s)
}

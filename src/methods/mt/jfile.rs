//! BIRRP J-file reader (A. G. Jones' J-format as written by Chave's BIRRP).
//!
//! `#` lines carry BIRRP's parameters, `>KEY = value` lines the location, then the station
//! name, then blocks: a component line (`ZXX`, `ZXY`, `ZYX`, `ZYY`, `TZX`, `TZY` with an
//! optional unit label such as `S.I.`; `RXX` … for apparent resistivity and phase), a count
//! line, and that many rows `period real imag error [coherences…]` (for R blocks
//! `period ρa φ ρmax ρmin φmax φmin …`). Rows with period −999 are BIRRP's "no estimate"
//! and are skipped; other values of −999 are missing.
//!
//! Units: the label is not trusted blindly. When the file carries R blocks, the apparent
//! resistivity they hold is compared with 0.2·T·|Z|² (field units) and with |Z|²/(ωμ0) (SI):
//! the one that matches decides, and a label that contradicts it is reported. Without R
//! blocks the label decides and the units are marked as guessed.

use std::path::Path;

use num_complex::Complex64;

use super::text::parse_numbers;
use super::tf::{MU0, TfFormat, TransferFunction, ohm_to_field, rhoa_ohm_m};
use crate::methods::io::{ReadError, parse_f64, read_text};

/// Read a BIRRP J-file.
pub fn read_jfile(path: &Path) -> Result<TransferFunction, ReadError> {
    let text = read_text(path)?;
    parse_jfile(path, &text)
}

struct Block {
    key: String,
    label: String,
    rows: Vec<Vec<f64>>,
}

const KEYS: [&str; 10] = [
    "ZXX", "ZXY", "ZYX", "ZYY", "TZX", "TZY", "RXX", "RXY", "RYX", "RYY",
];

/// Parse J-file text.
pub fn parse_jfile(path: &Path, text: &str) -> Result<TransferFunction, ReadError> {
    let mut tf = TransferFunction::empty(TfFormat::BirrpJFile);
    let mut blocks: Vec<Block> = Vec::new();
    let mut expecting_count = false;
    let mut remaining = 0usize;
    let mut saw_birrp = false;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        if t.starts_with('#') {
            saw_birrp |= t.to_ascii_uppercase().contains("BIRRP");
            continue;
        }
        if let Some(rest) = t.strip_prefix('>') {
            if let Some((k, v)) = rest.split_once('=') {
                let v = parse_f64(v);
                match k.trim().to_ascii_uppercase().as_str() {
                    "LATITUDE" => tf.latitude_deg = v,
                    "LONGITUDE" => tf.longitude_deg = v,
                    "ELEVATION" => tf.elevation_m = v,
                    "AZIMUTH" => {
                        if let Some(a) = v.filter(|a| *a != 0.0) {
                            tf.notes.push(format!(
                                "AZIMUTH = {a}°: the data are in a frame rotated by {a}° (not rotated back)."
                            ));
                        }
                    }
                    _ => {}
                }
            }
            continue;
        }
        if expecting_count {
            remaining = t.parse::<usize>().map_err(|_| {
                ReadError::malformed(path, line_no, "the number of rows of the block", t)
            })?;
            expecting_count = false;
            continue;
        }
        let first = t
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        if remaining == 0 && KEYS.contains(&first.as_str()) {
            blocks.push(Block {
                key: first.clone(),
                label: t[first.len()..].trim().to_string(),
                rows: Vec::new(),
            });
            expecting_count = true;
            continue;
        }
        if remaining > 0 {
            let Some(b) = blocks.last_mut() else {
                return Err(ReadError::malformed(
                    path,
                    line_no,
                    "a component line (ZXX …)",
                    t,
                ));
            };
            let nums = parse_numbers(path, line_no, t, "a J-file data row")?;
            let need = if b.key.starts_with('R') { 3 } else { 4 };
            if nums.len() < need {
                return Err(ReadError::malformed(
                    path,
                    line_no,
                    format!("at least {need} numbers in a >{} row", b.key),
                    format!("{} numbers", nums.len()),
                ));
            }
            b.rows.push(nums);
            remaining -= 1;
            continue;
        }
        if tf.site.is_empty() && blocks.is_empty() {
            tf.site = t.to_string();
            continue;
        }
        return Err(ReadError::malformed(
            path,
            line_no,
            "a component line (ZXX, ZXY, ZYX, ZYY, TZX, TZY, RXX …)",
            t,
        ));
    }
    if remaining > 0 || expecting_count {
        return Err(ReadError::format(
            path,
            format!(
                "the last block ({}) ends before its announced rows",
                blocks.last().map_or("?", |b| b.key.as_str())
            ),
        ));
    }
    let zkeys = [("ZXX", 0, 0), ("ZXY", 0, 1), ("ZYX", 1, 0), ("ZYY", 1, 1)];
    let tkeys = [("TZX", 0), ("TZY", 1)];
    let valid = |p: f64| p.is_finite() && p > 0.0 && p != -999.0;
    let miss = |v: f64| if v == -999.0 { f64::NAN } else { v };
    let mut periods: Vec<f64> = blocks
        .iter()
        .filter(|b| b.key.starts_with('Z') || b.key.starts_with('T'))
        .flat_map(|b| b.rows.iter().map(|r| r[0]))
        .filter(|&p| valid(p))
        .collect();
    periods.sort_by(f64::total_cmp);
    periods.dedup();
    if periods.is_empty() {
        return Err(ReadError::format(
            path,
            if saw_birrp || !blocks.is_empty() {
                "the J-file holds no impedance or tipper row with a valid period"
            } else {
                "not a J-file: no BIRRP header and no component blocks"
            },
        ));
    }
    let skipped: usize = blocks
        .iter()
        .filter(|b| !b.key.starts_with('R'))
        .map(|b| b.rows.iter().filter(|r| !valid(r[0])).count())
        .sum();
    if skipped > 0 {
        tf.notes.push(format!(
            "{skipped} rows with period −999 (no estimate) or a non-positive period were skipped."
        ));
    }
    let pos = |p: f64| periods.iter().position(|&q| q == p);
    let n = periods.len();
    let nan_c = Complex64::new(f64::NAN, f64::NAN);
    let mut z = vec![[[nan_c; 2]; 2]; n];
    let mut zs = vec![[[f64::NAN; 2]; 2]; n];
    let mut any_z = false;
    let mut label = String::new();
    for (k, i, j) in zkeys {
        if let Some(b) = blocks.iter().find(|b| b.key == k) {
            any_z = true;
            if label.is_empty() {
                label = b.label.clone();
            }
            for r in &b.rows {
                if let Some(p) = pos(r[0]) {
                    z[p][i][j] = Complex64::new(miss(r[1]), miss(r[2]));
                    zs[p][i][j] = miss(r[3]);
                }
            }
        }
    }
    let mut t = vec![[nan_c; 2]; n];
    let mut ts = vec![[f64::NAN; 2]; n];
    let mut any_t = false;
    for (k, j) in tkeys {
        if let Some(b) = blocks.iter().find(|b| b.key == k) {
            any_t = true;
            for r in &b.rows {
                if let Some(p) = pos(r[0]) {
                    t[p][j] = Complex64::new(miss(r[1]), miss(r[2]));
                    ts[p][j] = miss(r[3]);
                }
            }
        }
    }
    tf.period_s = periods.clone();
    if any_z {
        // Decide the units from the file's own apparent resistivities when it has them.
        let mut ratios_field = Vec::new();
        let mut ratios_si = Vec::new();
        for (k, i, j) in [("RXY", 0, 1), ("RYX", 1, 0)] {
            let Some(b) = blocks.iter().find(|b| b.key == k) else {
                continue;
            };
            for r in &b.rows {
                let Some(p) = pos(r[0]) else { continue };
                let zz = z[p][i][j];
                let rho_file = miss(r[1]);
                if !(zz.norm() > 0.0 && rho_file.is_finite() && rho_file > 0.0) {
                    continue;
                }
                let omega = 2.0 * std::f64::consts::PI / periods[p];
                ratios_field.push(rho_file / rhoa_ohm_m(zz, periods[p]));
                ratios_si.push(rho_file / (zz.norm_sqr() / (omega * MU0)));
            }
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied()
        };
        let label_si = label.to_ascii_uppercase().replace(' ', "").contains("S.I");
        let field = match (median(&mut ratios_field), median(&mut ratios_si)) {
            (Some(f), _) if (f - 1.0).abs() < 0.01 => {
                if label_si {
                    tf.notes.push(
                        "The blocks are labelled S.I., but the file's own RXY/RYX apparent \
                         resistivities equal 0.2·T·|Z|²: the impedances are in field units \
                         ((mV/km)/nT) and are read as such."
                            .into(),
                    );
                }
                tf.units_in_file = format!(
                    "{} (checked: field units, (mV/km)/nT, against the file's R blocks)",
                    if label.is_empty() {
                        "no label"
                    } else {
                        label.as_str()
                    }
                );
                true
            }
            (_, Some(s)) if (s - 1.0).abs() < 0.01 => {
                tf.units_in_file = format!(
                    "{} (checked: SI ohms against the file's R blocks; converted to (mV/km)/nT)",
                    if label.is_empty() {
                        "no label"
                    } else {
                        label.as_str()
                    }
                );
                false
            }
            _ => {
                tf.units_guessed = true;
                tf.units_in_file = if label.is_empty() {
                    "not stated".into()
                } else {
                    label.clone()
                };
                tf.notes.push(format!(
                    "Impedance units could not be checked against apparent resistivities in the \
                     file; taken as {} from the label (a guess).",
                    if label_si {
                        "SI ohms"
                    } else {
                        "field units (mV/km)/nT"
                    }
                ));
                !label_si
            }
        };
        if !field {
            for (tz, ts) in z.iter_mut().zip(zs.iter_mut()) {
                for i in 0..2 {
                    for j in 0..2 {
                        tz[i][j] = ohm_to_field(tz[i][j]);
                        ts[i][j] = ohm_to_field(Complex64::new(ts[i][j], 0.0)).re;
                    }
                }
            }
        }
        tf.z_mv_km_nt = Some(z);
        tf.z_std_mv_km_nt = Some(zs);
    }
    if any_t {
        tf.tipper = Some(t);
        tf.tipper_std = Some(ts);
    }
    Ok(tf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jfile(label: &str, zxy: (f64, f64), rxy: f64) -> String {
        format!(
            "#BIRRP Version 5 basic mode output\n>LATITUDE = 10.5\nSITE\nZXY {label}\n3\n\
             2.0 {} {} 0.5 0.9 0.9\n-999 -999 -999 -999 -999 -999\n4.0 1.0 1.0 0.1 0.9 0.9\n\
             RXY\n1\n2.0 {rxy} 45 0 0 0 0 0.5 0.5\n",
            zxy.0, zxy.1
        )
    }

    #[test]
    fn si_label_contradicted_by_the_r_block_reads_as_field_units() {
        // ρa = 0.2·2·|3+4i|² = 10 Ω·m: the R block confirms field units.
        let tf = parse_jfile(Path::new("a.j"), &jfile("S.I.", (3.0, 4.0), 10.0)).unwrap();
        assert_eq!(tf.site, "SITE");
        assert_eq!(tf.period_s, vec![2.0, 4.0]);
        assert_eq!(
            tf.z_mv_km_nt.as_ref().unwrap()[0][0][1],
            Complex64::new(3.0, 4.0)
        );
        assert!(!tf.units_guessed);
        assert!(tf.notes.iter().any(|n| n.contains("labelled S.I.")));
        assert!(tf.notes.iter().any(|n| n.contains("period −999")));
        assert_eq!(tf.latitude_deg, Some(10.5));
    }

    #[test]
    fn si_impedance_confirmed_by_the_r_block_is_converted() {
        let z_ohm = Complex64::new(3e-3, 4e-3);
        let omega = 2.0 * std::f64::consts::PI / 2.0;
        let rho = z_ohm.norm_sqr() / (omega * MU0);
        let tf = parse_jfile(Path::new("a.j"), &jfile("S.I.", (3e-3, 4e-3), rho)).unwrap();
        let z = tf.z_mv_km_nt.as_ref().unwrap()[0][0][1];
        assert!((rhoa_ohm_m(z, 2.0) - rho).abs() < 1e-9 * rho);
    }

    #[test]
    fn short_block_is_an_error_naming_the_block() {
        let text = "SITE\nZXY\n3\n1.0 1 1 0.1\n";
        let e = parse_jfile(Path::new("a.j"), text).unwrap_err();
        assert!(
            e.to_string().contains("ends before its announced rows"),
            "{e}"
        );
        let e = parse_jfile(Path::new("a.j"), "SITE\nZXY\nthree\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "a.j, line 3: expected the number of rows of the block, found \"three\""
        );
    }
}

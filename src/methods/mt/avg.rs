//! Zonge MTEdit AVG reader.
//!
//! `$Key=Value` header lines; `$Rx.Cmp = Zxy` starts a component (Zxx, Zxy, Zyx, Zyy,
//! Tzx, Tzy; a trailing `r` marks a remote-referenced estimate); a column header
//! `Skp,Freq,E.mag,B.mag,Z.mag,Z.phz,ARes.mag,ARes.%err,Z.perr,Coher,FC.NUse,FC.NTry`
//! names the comma-separated columns. Z = Z.mag·exp(i·Z.phz/1000) (phase in milliradians),
//! Z.mag in (mV/km)/nT; x is taken as north and y as east (mt-metadata's "z positive down"
//! default). The units are checked against the file's own ARes.mag column (ρa = 0.2·T·|Z|²).
//! The error of |Z| is the first-order |Z|·(ARes.%err/100)/2.

use std::path::Path;

use num_complex::Complex64;

use super::tf::{TfFormat, TransferFunction, rhoa_ohm_m};
use crate::methods::io::{ReadError, parse_f64, read_text};

/// Read a Zonge AVG file.
pub fn read_avg(path: &Path) -> Result<TransferFunction, ReadError> {
    let text = read_text(path)?;
    parse_avg(path, &text)
}

struct Row {
    comp: String,
    freq: f64,
    z: Complex64,
    ares: f64,
    ares_err_pct: f64,
}

/// Parse AVG text.
pub fn parse_avg(path: &Path, text: &str) -> Result<TransferFunction, ReadError> {
    let mut tf = TransferFunction::empty(TfFormat::ZongeAvg);
    let mut comp: Option<String> = None;
    let mut columns: Vec<String> = Vec::new();
    let mut rows: Vec<Row> = Vec::new();
    let mut saw_dollar = false;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(rest) = t.strip_prefix('$') {
            saw_dollar = true;
            let Some((k, v)) = rest.split_once('=') else {
                continue;
            };
            let key = k.trim().to_ascii_lowercase();
            let v = v.trim();
            match key.as_str() {
                "rx.cmp" => comp = Some(v.to_ascii_lowercase()),
                "rx.gdpstn" | "stn.name" if tf.site.is_empty() => {
                    tf.site = v.trim_matches('"').trim().to_string();
                }
                "gps.lat" => tf.latitude_deg = parse_f64(v),
                "gps.lon" => tf.longitude_deg = parse_f64(v),
                "mtedit:auto.phaseflip" => {
                    tf.notes.push(format!("MTEdit automatic phase flip: {v}."));
                }
                _ => {}
            }
            continue;
        }
        if t.to_ascii_lowercase().starts_with("skp") {
            columns = t
                .split(',')
                .map(|c| c.trim().to_ascii_lowercase())
                .collect();
            continue;
        }
        if columns.is_empty() {
            return Err(ReadError::malformed(
                path,
                line_no,
                "a \"$Key=Value\" header line or the \"Skp,Freq,…\" column header",
                t,
            ));
        }
        let Some(c) = comp.clone() else {
            return Err(ReadError::malformed(
                path,
                line_no,
                "a \"$Rx.Cmp = …\" line before data",
                t,
            ));
        };
        let toks: Vec<&str> = t.split(',').map(str::trim).collect();
        if toks.len() != columns.len() {
            return Err(ReadError::malformed(
                path,
                line_no,
                format!(
                    "{} comma-separated values ({})",
                    columns.len(),
                    columns.join(",")
                ),
                format!("{} values", toks.len()),
            ));
        }
        let col = |name: &str| -> Result<f64, ReadError> {
            let Some(k) = columns.iter().position(|c| c == name) else {
                return Err(ReadError::malformed(
                    path,
                    line_no,
                    format!("a \"{name}\" column"),
                    "none in the header",
                ));
            };
            // MTEdit writes '*' for a value it could not estimate.
            let tok = toks[k];
            if tok.chars().all(|ch| ch == '*') {
                return Ok(f64::NAN);
            }
            parse_f64(tok).ok_or_else(|| {
                ReadError::malformed(path, line_no, format!("a number in column {name}"), tok)
            })
        };
        let freq = col("freq")?;
        let mag = col("z.mag")?;
        let phz = col("z.phz")?;
        let ares = col("ares.mag").unwrap_or(f64::NAN);
        let ares_err_pct = col("ares.%err").unwrap_or(f64::NAN);
        rows.push(Row {
            comp: c,
            freq,
            z: Complex64::from_polar(mag, phz / 1000.0),
            ares,
            ares_err_pct,
        });
    }
    if rows.is_empty() {
        return Err(ReadError::format(
            path,
            if saw_dollar {
                "the AVG file holds no data rows"
            } else {
                "not a Zonge AVG file: no $ header lines and no data"
            },
        ));
    }
    let mut freqs: Vec<f64> = rows
        .iter()
        .map(|r| r.freq)
        .filter(|f| f.is_finite() && *f > 0.0)
        .collect();
    freqs.sort_by(|a, b| b.total_cmp(a));
    freqs.dedup();
    let n = freqs.len();
    let nan_c = Complex64::new(f64::NAN, f64::NAN);
    let mut z = vec![[[nan_c; 2]; 2]; n];
    let mut zs = vec![[[f64::NAN; 2]; 2]; n];
    let mut t = vec![[nan_c; 2]; n];
    let mut ts = vec![[f64::NAN; 2]; n];
    let (mut any_z, mut any_t) = (false, false);
    let mut overwritten = 0usize;
    let mut unit_ratios = Vec::new();
    let mut unknown = Vec::new();
    for r in &rows {
        let Some(k) = freqs.iter().position(|&f| f == r.freq) else {
            continue;
        };
        let base = r.comp.trim_end_matches('r');
        let std = r.z.norm() * r.ares_err_pct / 200.0;
        match base {
            "zxx" | "zxy" | "zyx" | "zyy" => {
                let (i, j) = match base {
                    "zxx" => (0, 0),
                    "zxy" => (0, 1),
                    "zyx" => (1, 0),
                    _ => (1, 1),
                };
                if !z[k][i][j].re.is_nan() {
                    overwritten += 1;
                }
                z[k][i][j] = r.z;
                zs[k][i][j] = std;
                any_z = true;
                if r.ares.is_finite() && r.ares > 0.0 && r.z.norm() > 0.0 {
                    unit_ratios.push(r.ares / rhoa_ohm_m(r.z, 1.0 / r.freq));
                }
            }
            "tzx" | "tzy" => {
                let j = usize::from(base == "tzy");
                t[k][j] = r.z;
                ts[k][j] = std;
                any_t = true;
            }
            other => {
                if !unknown.iter().any(|u: &String| u == other) {
                    unknown.push(other.to_string());
                }
            }
        }
    }
    if !unknown.is_empty() {
        tf.notes
            .push(format!("Components not used: {}.", unknown.join(", ")));
    }
    if overwritten > 0 {
        tf.notes.push(format!(
            "{overwritten} repeated frequency rows of one component: the later row was kept."
        ));
    }
    if !any_z && !any_t {
        return Err(ReadError::format(
            path,
            "no impedance or tipper component in the AVG file",
        ));
    }
    tf.period_s = freqs.iter().map(|f| 1.0 / f).collect();
    if any_z {
        unit_ratios.sort_by(f64::total_cmp);
        let med = unit_ratios.get(unit_ratios.len() / 2).copied();
        match med {
            Some(m) if (m - 1.0).abs() < 0.01 => {
                tf.units_in_file = "(mV/km)/nT (checked against the file's ARes.mag column)".into();
            }
            Some(m) => {
                tf.units_guessed = true;
                tf.units_in_file = "(mV/km)/nT (MTEdit convention)".into();
                tf.notes.push(format!(
                    "The file's ARes.mag differs from 0.2·T·|Z|² by a median factor {m:.4}: \
                     the impedance units are a guess."
                ));
            }
            None => {
                tf.units_guessed = true;
                tf.units_in_file = "(mV/km)/nT (MTEdit convention; not checked)".into();
            }
        }
        tf.z_mv_km_nt = Some(z);
        tf.z_std_mv_km_nt = Some(zs);
    }
    if any_t {
        tf.tipper = Some(t);
        tf.tipper_std = Some(ts);
    }
    tf.sort_and_clean();
    Ok(tf)
}

/// Synthetic rows in the MTEdit layout: at 1 Hz |Zxy| = 20 → ρa = 0.2·1·400 = 80 Ω·m.
#[cfg(test)]
pub(crate) const AVG: &str = " \n$Survey.Type=NSAMT\n$Rx.GdpStn= 7\n$GPS.Lat=32.5\n\
Skp,Freq,      E.mag,      B.mag,      Z.mag,      Z.phz,   ARes.mag,   ARes.%err,Z.perr,  Coher,   FC.NUse,FC.NTry\n\
$Rx.Cmp = Zxy\n\
2,  1,         1.0E-01,    5.0E-03,    2.0000E+01, 400,     8.0000E+01, 6,        30,      0.95,    300,    1200\n\
2,  2,         1.0E-01,    5.0E-03,    2.5000E+01, 350,     6.2500E+01, 3,        15,      0.97,    500,    2500\n\
$Rx.Cmp = Zyx\n\
2,  1,         5.0E-02,    5.0E-03,    1.0000E+01, -2400,   2.0000E+01, 5,        25,      0.93,    300,    1200\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magnitude_and_milliradian_phase() {
        let tf = parse_avg(Path::new("a.avg"), AVG).unwrap();
        assert_eq!(tf.site, "7");
        assert_eq!(tf.period_s, vec![0.5, 1.0]);
        let z = tf.z_mv_km_nt.as_ref().unwrap();
        let zxy = z[1][0][1];
        assert!((zxy.norm() - 20.0).abs() < 1e-12);
        assert!((zxy.arg() - 0.4).abs() < 1e-12);
        // The file's ARes.mag (80) is 0.2·1·20²: units confirmed.
        assert!(!tf.units_guessed, "{:?}", tf.notes);
        assert!(z[0][1][0].re.is_nan(), "no Zyx at 2 Hz");
    }

    #[test]
    fn wrong_column_count_names_the_line() {
        let bad = AVG.replace("2,  2,         1.0E-01,    5.0E-03,", "2,  2,");
        let e = parse_avg(Path::new("a.avg"), &bad).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("a.avg, line 8: expected 12 comma-separated values"),
            "{e}"
        );
    }
}

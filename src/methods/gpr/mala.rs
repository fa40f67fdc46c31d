//! MALA `.rd3` / `.rd7` + `.rad` reader.
//!
//! * `.rad` is ASCII `KEY:value` lines: `SAMPLES`, `FREQUENCY` (the **sampling** frequency,
//!   MHz), `TIMEWINDOW` (ns), `DISTANCE INTERVAL` (m), `DISTANCE FLAG` (1 = distance
//!   triggered), `TIME INTERVAL` (s), `ANTENNAS` (e.g. "250 MHz SHIELDED"), `ANTENNA
//!   SEPARATION` (m), `LAST TRACE`, `SIGNAL POSITION`, `STACKS`, ….
//! * `.rd3` holds the traces one after the other as little-endian int16 (`SAMPLES` values
//!   each, no trace headers); `.rd7` the same as int32.
//!
//! The sampling interval is `1000/FREQUENCY` ns (equal to `TIMEWINDOW/SAMPLES` in consistent
//! files; a disagreement is noted). Positions are `i·DISTANCE INTERVAL` when the line was
//! distance-triggered.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ndarray::{Array2, ShapeBuilder};

use super::line::{GprFormat, GprLine, SurveyKind};
use crate::methods::io::{ReadError, parse_f64, read_bytes, read_text};

/// The parsed `.rad`: `KEY → (value, line)`.
#[derive(Debug, Clone, Default)]
pub struct RadFile {
    /// Keys upper-cased and trimmed.
    pub fields: BTreeMap<String, (String, usize)>,
}

impl RadFile {
    fn number(&self, path: &Path, key: &str) -> Result<Option<f64>, ReadError> {
        match self.fields.get(key) {
            None => Ok(None),
            Some((v, _)) if v.trim().is_empty() => Ok(None),
            Some((v, line)) => parse_f64(v).map(Some).ok_or_else(|| {
                ReadError::malformed(path, *line, format!("a number after '{key}:'"), v)
            }),
        }
    }
}

/// Parse `.rad` text.
pub fn parse_rad(text: &str) -> RadFile {
    let mut rad = RadFile::default();
    for (i, line) in text.lines().enumerate() {
        if let Some((k, v)) = line.split_once(':') {
            let key = k.trim().to_ascii_uppercase();
            if !key.is_empty() {
                rad.fields
                    .entry(key)
                    .or_insert_with(|| (v.trim().to_string(), i + 1));
            }
        }
    }
    rad
}

fn sibling(path: &Path, exts: &[&str]) -> Option<PathBuf> {
    exts.iter()
        .flat_map(|e| [e.to_string(), e.to_ascii_uppercase()])
        .map(|e| path.with_extension(e))
        .find(|p| p.exists())
}

/// Read a MALA line; `path` may name the `.rd3`, the `.rd7` or the `.rad`.
pub fn read_mala(path: &Path) -> Result<GprLine, ReadError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let data = match ext.as_str() {
        "rd3" | "rd7" => path.to_path_buf(),
        _ => sibling(path, &["rd3", "rd7"])
            .ok_or_else(|| ReadError::format(path, "no .rd3 or .rd7 data file beside this .rad"))?,
    };
    let rad = if ext == "rad" {
        path.to_path_buf()
    } else {
        sibling(path, &["rad"]).unwrap_or_else(|| path.with_extension("rad"))
    };
    let bits = if data
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("rd7"))
    {
        32
    } else {
        16
    };
    let text = read_text(&rad)?;
    let bytes = read_bytes(&data)?;
    parse_mala(&data, &rad, &text, &bytes, bits)
}

/// Parse MALA data bytes (`bits` 16 for rd3, 32 for rd7) with the text of their `.rad`.
pub fn parse_mala(
    data_path: &Path,
    rad_path: &Path,
    rad_text: &str,
    bytes: &[u8],
    bits: u32,
) -> Result<GprLine, ReadError> {
    let rad = parse_rad(rad_text);
    let ns = rad
        .number(rad_path, "SAMPLES")?
        .ok_or_else(|| ReadError::malformed(rad_path, 0, "a line 'SAMPLES:<n>'", "no such line"))?;
    if !((1.0..=1.0e6).contains(&ns) && ns.fract() == 0.0) {
        let line = rad.fields.get("SAMPLES").map_or(0, |f| f.1);
        return Err(ReadError::malformed(
            rad_path,
            line,
            "a whole number of samples (1 to 1e6)",
            ns.to_string(),
        ));
    }
    let ns = ns as usize;
    let mut notes = Vec::new();
    let freq = rad.number(rad_path, "FREQUENCY")?;
    let window = rad.number(rad_path, "TIMEWINDOW")?;
    let dt = match (freq, window) {
        (Some(f), w) if f.is_finite() && f > 0.0 => {
            let dt = 1000.0 / f;
            if let Some(w) = w.filter(|w| (w - dt * ns as f64).abs() > 1e-3 * w.abs()) {
                notes.push(format!(
                    "TIMEWINDOW {w} ns disagrees with SAMPLES/FREQUENCY = {:.4} ns; the sampling frequency is used",
                    dt * ns as f64
                ));
            }
            dt
        }
        (_, Some(w)) if w.is_finite() && w > 0.0 => {
            notes.push("no sampling FREQUENCY: dt = TIMEWINDOW/SAMPLES".to_string());
            w / ns as f64
        }
        _ => {
            return Err(ReadError::malformed(
                rad_path,
                0,
                "a positive 'FREQUENCY:' (sampling, MHz) or 'TIMEWINDOW:' (ns)",
                "neither",
            ));
        }
    };
    let bps = (bits / 8) as usize;
    let trace_bytes = ns * bps;
    let n_traces = bytes.len() / trace_bytes;
    if !bytes.len().is_multiple_of(trace_bytes) {
        notes.push(format!(
            "the last {} bytes do not make a whole trace and were ignored",
            bytes.len() % trace_bytes
        ));
    }
    if let Some(last) = rad.number(rad_path, "LAST TRACE")?
        && last != n_traces as f64
    {
        notes.push(format!(
            "LAST TRACE says {last}, the file holds {n_traces} traces; the file's count is used"
        ));
    }
    let mut data = Array2::<f64>::zeros((ns, n_traces).f());
    for (j, mut tr) in data.columns_mut().into_iter().enumerate() {
        // In bounds: j < n_traces = bytes.len() / trace_bytes.
        let raw = &bytes[j * trace_bytes..(j + 1) * trace_bytes];
        if bps == 2 {
            for (v, c) in tr.iter_mut().zip(raw.chunks_exact(2)) {
                *v = i16::from_le_bytes([c[0], c[1]]) as f64;
            }
        } else {
            for (v, c) in tr.iter_mut().zip(raw.chunks_exact(4)) {
                *v = i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64;
            }
        }
    }
    let dx = rad.number(rad_path, "DISTANCE INTERVAL")?;
    let distance_flag = rad.number(rad_path, "DISTANCE FLAG")?;
    let (positions_m, positions_guessed) = match dx {
        Some(d) if d > 0.0 && distance_flag != Some(0.0) => {
            ((0..n_traces).map(|j| j as f64 * d).collect(), false)
        }
        _ => {
            notes.push(
                "not distance-triggered (or no DISTANCE INTERVAL): positions are trace numbers"
                    .to_string(),
            );
            ((0..n_traces).map(|j| j as f64).collect(), true)
        }
    };
    if let Some(sp) = rad.number(rad_path, "SIGNAL POSITION")?
        && sp != 0.0
    {
        notes.push(format!(
            "SIGNAL POSITION {sp} is recorded but not applied; time zero is picked from the data"
        ));
    }
    let antenna = rad.fields.get("ANTENNAS").map(|(v, _)| v.clone());
    let header = serde_json::Value::Object(
        rad.fields
            .iter()
            .map(|(k, (v, _))| (k.clone(), serde_json::Value::String(v.clone())))
            .collect(),
    );
    Ok(GprLine {
        file: data_path.to_path_buf(),
        format: if bits == 32 {
            GprFormat::MalaRd7
        } else {
            GprFormat::MalaRd3
        },
        format_guessed: false,
        data,
        n_samples: ns,
        n_traces,
        sample_interval_ns: dt,
        time_window_ns: dt * ns as f64,
        time_zero_sample: 0.0,
        positions_m,
        positions_guessed,
        antenna_frequency_mhz: antenna
            .as_deref()
            .and_then(super::dzt::antenna_frequency_mhz),
        antenna,
        antenna_separation_m: rad.number(rad_path, "ANTENNA SEPARATION")?,
        header_permittivity: None,
        header_samples: 0,
        marks: Vec::new(),
        survey_kind: SurveyKind::CommonOffset,
        survey_kind_guessed: true,
        header,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RAD: &str = "SAMPLES:4\nFREQUENCY:2000.000000\nDISTANCE FLAG:1\nDISTANCE INTERVAL:0.05\n\
        ANTENNAS:250 MHz SHIELDED\nANTENNA SEPARATION:0.310000\nTIMEWINDOW:2.0\nLAST TRACE:2\n";

    #[test]
    fn rd3_and_rd7() {
        let mut b = Vec::new();
        for v in [1i16, -1, 300, -300, 7, 8, 9, 10] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        let l = parse_mala(Path::new("a.rd3"), Path::new("a.rad"), RAD, &b, 16).unwrap();
        assert_eq!((l.n_samples, l.n_traces), (4, 2));
        assert_eq!(l.sample_interval_ns, 0.5);
        assert_eq!(l.data.column(0).to_vec(), vec![1.0, -1.0, 300.0, -300.0]);
        assert_eq!(l.positions_m, vec![0.0, 0.05]);
        assert_eq!(l.antenna_frequency_mhz, Some(250.0));
        assert_eq!(l.antenna_separation_m, Some(0.31));
        assert!(l.notes.is_empty(), "{:?}", l.notes);
        let mut b7 = Vec::new();
        for v in [100_000i32, -5, 0, 1] {
            b7.extend_from_slice(&v.to_le_bytes());
        }
        let l7 = parse_mala(Path::new("a.rd7"), Path::new("a.rad"), RAD, &b7, 32).unwrap();
        assert_eq!(l7.format, GprFormat::MalaRd7);
        assert_eq!(l7.data.column(0).to_vec(), vec![100_000.0, -5.0, 0.0, 1.0]);
        assert!(l7.notes.iter().any(|n| n.contains("LAST TRACE")));
    }

    #[test]
    fn header_errors_name_the_line() {
        let bad = RAD.replace("FREQUENCY:2000.000000", "FREQUENCY:fast");
        let e = parse_mala(Path::new("a.rd3"), Path::new("a.rad"), &bad, &[], 16).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a.rad, line 2: expected a number after 'FREQUENCY:', found \"fast\""
        );
        let e = parse_mala(Path::new("a.rd3"), Path::new("a.rad"), "X:1\n", &[], 16).unwrap_err();
        assert!(e.to_string().contains("SAMPLES"), "{e}");
    }
}

//! Sensors & Software pulseEKKO `.DT1` + `.HD` reader.
//!
//! * `.HD` is ASCII: a file tag line (`1234`), the system line, the date, then `KEY = value`
//!   lines (`NUMBER OF TRACES`, `NUMBER OF PTS/TRC`, `TIMEZERO AT POINT`, `TOTAL TIME WINDOW`
//!   (ns), `STARTING POSITION`, `FINAL POSITION`, `STEP SIZE USED`, `POSITION UNITS`,
//!   `NOMINAL FREQUENCY` (MHz), `ANTENNA SEPARATION`, `SURVEY MODE`, …).
//! * `.DT1` is, for every trace, a 128-byte header of 32 little-endian float32 words
//!   (0 trace number, 1 position, 2 points per trace, 3 topography, 5 bytes per point,
//!   6 time window, 7 stacks, …, a 28-byte comment at the end) followed by the samples as
//!   little-endian int16 (or int32 when word 5 says 4 bytes per point).
//!
//! The HD is the authority for the time window and the time zero: word 6 of the trace header
//! disagrees with it in several real files (800 against 1200 ns), and GPRPy uses the HD.
//! The sampling interval is `TOTAL TIME WINDOW / NUMBER OF PTS/TRC` (0.8 ns for 1200 ns and
//! 1500 points). Positions come from the trace headers, converted from feet when the HD says
//! `ft`; the antenna separation is converted the same way.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ndarray::{Array2, ShapeBuilder};

use super::line::{GprFormat, GprLine, SurveyKind};
use crate::methods::io::{ReadError, parse_f64, read_bytes, read_text};
use crate::methods::shared::bytes::Bytes;

/// Bytes of the per-trace header.
pub const TRACE_HEADER_BYTES: usize = 128;
/// Metres per foot.
pub const METRES_PER_FOOT: f64 = 0.3048;

/// The parsed `.HD` file: every `KEY = value` line, keys upper-cased, with its line number.
#[derive(Debug, Clone, Default)]
pub struct HdFile {
    /// `KEY → (value, 1-based line)`.
    pub fields: BTreeMap<String, (String, usize)>,
    /// The system line (line 2), when present.
    pub system: Option<String>,
    /// The date line (line 3), when present.
    pub date: Option<String>,
}

impl HdFile {
    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.get(key).map(|(v, _)| v.as_str())
    }

    /// The numeric value of `key`: `Ok(None)` when absent, an error naming the line when the
    /// value is not a number.
    pub fn number(&self, path: &Path, key: &str) -> Result<Option<f64>, ReadError> {
        match self.fields.get(key) {
            None => Ok(None),
            Some((v, line)) => parse_f64(v).map(Some).ok_or_else(|| {
                ReadError::malformed(path, *line, format!("a number after '{key} ='"), v)
            }),
        }
    }

    /// Like [`HdFile::number`] but the key must be there.
    pub fn required(&self, path: &Path, key: &str) -> Result<f64, ReadError> {
        self.number(path, key)?.ok_or_else(|| {
            ReadError::malformed(
                path,
                0,
                format!("a line '{key} = <number>'"),
                "no such line in the header",
            )
        })
    }
}

/// Parse the text of an `.HD` file.
pub fn parse_hd(text: &str) -> HdFile {
    let mut hd = HdFile::default();
    let lines: Vec<&str> = text.lines().collect();
    // Line 1 is the tag, 2 the system, 3 the date (when they hold no '=').
    let plain = |i: usize| {
        lines
            .get(i)
            .map(|l| l.trim())
            .filter(|l| !l.is_empty() && !l.contains('='))
            .map(str::to_string)
    };
    hd.system = plain(1);
    hd.date = plain(2);
    for (i, line) in lines.iter().enumerate() {
        if let Some((k, v)) = line.split_once('=') {
            let key = k.trim().to_ascii_uppercase();
            if !key.is_empty() {
                hd.fields
                    .entry(key)
                    .or_insert_with(|| (v.trim().to_string(), i + 1));
            }
        }
    }
    hd
}

/// The `.HD` beside a `.DT1` (same stem, `.HD` or `.hd`).
pub fn header_path(dt1: &Path) -> PathBuf {
    for ext in ["HD", "hd", "Hd"] {
        let p = dt1.with_extension(ext);
        if p.exists() {
            return p;
        }
    }
    dt1.with_extension("HD")
}

/// The `.DT1` beside an `.HD`.
pub fn data_path(hd: &Path) -> PathBuf {
    for ext in ["DT1", "dt1", "Dt1"] {
        let p = hd.with_extension(ext);
        if p.exists() {
            return p;
        }
    }
    hd.with_extension("DT1")
}

/// Read a pulseEKKO line: `path` may name the `.DT1` or the `.HD`.
pub fn read_dt1(path: &Path) -> Result<GprLine, ReadError> {
    let is_hd = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("hd"));
    let (dt1, hd) = if is_hd {
        (data_path(path), path.to_path_buf())
    } else {
        (path.to_path_buf(), header_path(path))
    };
    let hd_text = read_text(&hd)?;
    let bytes = read_bytes(&dt1)?;
    parse_dt1(&dt1, &hd, &hd_text, &bytes)
}

/// Parse a DT1 held in `bytes` with the text of its HD.
pub fn parse_dt1(
    dt1_path: &Path,
    hd_path: &Path,
    hd_text: &str,
    bytes: &[u8],
) -> Result<GprLine, ReadError> {
    let hd = parse_hd(hd_text);
    let hd_pts = hd.required(hd_path, "NUMBER OF PTS/TRC")?;
    let window_ns = hd.required(hd_path, "TOTAL TIME WINDOW")?;
    if !((1.0..=1.0e6).contains(&hd_pts) && hd_pts.fract() == 0.0) {
        let line = hd.fields.get("NUMBER OF PTS/TRC").map_or(0, |f| f.1);
        return Err(ReadError::malformed(
            hd_path,
            line,
            "a whole number of points per trace (1 to 1e6)",
            hd_pts.to_string(),
        ));
    }
    if !(window_ns.is_finite() && window_ns > 0.0) {
        let line = hd.fields.get("TOTAL TIME WINDOW").map_or(0, |f| f.1);
        return Err(ReadError::malformed(
            hd_path,
            line,
            "a positive TOTAL TIME WINDOW (ns)",
            window_ns.to_string(),
        ));
    }
    let mut notes = Vec::new();
    let b = Bytes::le(bytes);
    let mut n_pts = hd_pts as usize;
    let mut bytes_per_point = match b.f32(20) {
        Some(4.0) => 4usize,
        _ => 2usize,
    };
    let record = |n: usize, bpp: usize| TRACE_HEADER_BYTES + n * bpp;
    if !bytes.is_empty() && !bytes.len().is_multiple_of(record(n_pts, bytes_per_point)) {
        // The first trace header may know better (a hand-edited HD).
        if let Some(th) = b
            .f32(8)
            .filter(|v| *v >= 1.0 && *v <= 1.0e6 && v.fract() == 0.0)
        {
            let th = th as usize;
            if bytes.len().is_multiple_of(record(th, bytes_per_point)) && th != n_pts {
                notes.push(format!(
                    "the HD says {n_pts} points per trace but the trace headers and the file size say {th}; {th} used"
                ));
                n_pts = th;
            }
        }
    }
    if bytes_per_point == 4 {
        notes.push("trace header says 4 bytes per point: samples read as int32".to_string());
    } else {
        bytes_per_point = 2;
    }
    let rec = record(n_pts, bytes_per_point);
    let n_traces = bytes.len() / rec;
    if !bytes.len().is_multiple_of(rec) {
        notes.push(format!(
            "the last {} bytes do not make a whole trace ({rec} bytes) and were ignored",
            bytes.len() % rec
        ));
    }
    if let Some(n) = hd.number(hd_path, "NUMBER OF TRACES")?
        && n != n_traces as f64
    {
        notes.push(format!(
            "the HD says {n} traces, the file holds {n_traces}; the file's count is used"
        ));
    }
    let units = hd
        .get("POSITION UNITS")
        .unwrap_or("m")
        .trim()
        .to_ascii_lowercase();
    let unit_factor = match units.as_str() {
        "ft" | "feet" | "foot" => METRES_PER_FOOT,
        "cm" => 0.01,
        "mm" => 0.001,
        "in" | "inch" | "inches" => 0.0254,
        _ => 1.0,
    };
    if unit_factor != 1.0 {
        notes.push(format!(
            "positions and antenna separation are in '{units}' in the HD; converted to metres (× {unit_factor})"
        ));
    }
    let mut data = Array2::<f64>::zeros((n_pts, n_traces).f());
    let mut positions = Vec::with_capacity(n_traces);
    let mut topography = Vec::with_capacity(n_traces);
    for (j, mut trace) in data.columns_mut().into_iter().enumerate() {
        let start = j * rec;
        positions.push(b.f32(start + 4).map_or(f64::NAN, f64::from) * unit_factor);
        topography.push(b.f32(start + 12).map_or(f64::NAN, f64::from));
        // In bounds: j < n_traces = bytes.len() / rec.
        let raw = &bytes[start + TRACE_HEADER_BYTES..start + rec];
        if bytes_per_point == 2 {
            for (v, c) in trace.iter_mut().zip(raw.chunks_exact(2)) {
                *v = i16::from_le_bytes([c[0], c[1]]) as f64;
            }
        } else {
            for (v, c) in trace.iter_mut().zip(raw.chunks_exact(4)) {
                *v = i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64;
            }
        }
    }
    let start_pos = hd.number(hd_path, "STARTING POSITION")?;
    let step = hd.number(hd_path, "STEP SIZE USED")?;
    let header_positions_usable =
        positions.iter().all(|p| p.is_finite()) && positions.windows(2).any(|w| w[1] != w[0]);
    let (positions_m, positions_guessed) = if header_positions_usable || n_traces <= 1 {
        (positions, false)
    } else if let (Some(s0), Some(ds)) = (start_pos, step.filter(|d| *d > 0.0)) {
        notes.push(
            "trace-header positions are constant; positions rebuilt from the HD start and step"
                .to_string(),
        );
        (
            (0..n_traces)
                .map(|j| (s0 + j as f64 * ds) * unit_factor)
                .collect(),
            false,
        )
    } else {
        notes.push("no usable positions: trace numbers are used instead of metres".to_string());
        ((0..n_traces).map(|j| j as f64).collect(), true)
    };
    let tz = hd.number(hd_path, "TIMEZERO AT POINT")?.unwrap_or(0.0);
    if tz != 0.0 {
        notes.push(format!(
            "time zero at point {tz} from the HD, taken as a 0-based sample index (t = (i − {tz})·dt, as GPRPy)"
        ));
    }
    let (survey_kind, survey_kind_guessed) = survey_kind(dt1_path, hd.get("SURVEY MODE"));
    if survey_kind_guessed && survey_kind != SurveyKind::CommonOffset {
        notes.push(format!(
            "survey kind {survey_kind:?} inferred from the file name (the HD says '{}')",
            hd.get("SURVEY MODE").unwrap_or("nothing")
        ));
    }
    let mut header = serde_json::Map::new();
    for (k, (v, _)) in &hd.fields {
        header.insert(k.clone(), serde_json::Value::String(v.clone()));
    }
    if let Some(s) = &hd.system {
        header.insert("system".into(), s.clone().into());
    }
    if let Some(d) = &hd.date {
        header.insert("date".into(), d.clone().into());
    }
    let trace0: Vec<f64> = (0..32)
        .map(|k| b.f32(4 * k).map_or(f64::NAN, f64::from))
        .collect();
    header.insert(
        "trace0_header_floats".into(),
        serde_json::to_value(&trace0).unwrap_or_default(),
    );
    if let Some(w) = trace0
        .get(6)
        .filter(|w| w.is_finite() && **w != window_ns && **w > 0.0)
    {
        notes.push(format!(
            "the trace headers state a {w} ns window, the HD {window_ns} ns; the HD is used"
        ));
    }
    if topography.iter().any(|t| t.is_finite() && *t != 0.0) {
        header.insert(
            "trace_topography".into(),
            serde_json::to_value(&topography).unwrap_or_default(),
        );
    }
    let freq = hd.number(hd_path, "NOMINAL FREQUENCY")?;
    let sep = hd.number(hd_path, "ANTENNA SEPARATION")?;
    Ok(GprLine {
        file: dt1_path.to_path_buf(),
        format: GprFormat::PulseEkkoDt1,
        format_guessed: false,
        data,
        n_samples: n_pts,
        n_traces,
        sample_interval_ns: window_ns / n_pts as f64,
        time_window_ns: window_ns,
        time_zero_sample: tz,
        positions_m,
        positions_guessed,
        antenna: freq.map(|f| format!("{f} MHz")),
        antenna_frequency_mhz: freq.filter(|f| *f > 0.0),
        antenna_separation_m: sep.map(|s| s * unit_factor),
        header_permittivity: None,
        header_samples: 0,
        marks: Vec::new(),
        survey_kind,
        survey_kind_guessed,
        header: serde_json::Value::Object(header),
        notes,
    })
}

/// The acquisition kind from the HD's `SURVEY MODE` or, failing that, the file name.
fn survey_kind(path: &Path, mode: Option<&str>) -> (SurveyKind, bool) {
    let mode = mode.unwrap_or("").to_ascii_uppercase();
    if mode.contains("CMP") {
        return (SurveyKind::Cmp, false);
    }
    if mode.contains("WARR") {
        return (SurveyKind::Warr, false);
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_uppercase())
        .unwrap_or_default();
    if name.contains("CMP") {
        (SurveyKind::Cmp, true)
    } else if name.contains("WARR") {
        (SurveyKind::Warr, true)
    } else if mode.contains("REFLECTION") {
        (SurveyKind::CommonOffset, true)
    } else {
        (SurveyKind::Unknown, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HD: &str = "1234\nData Collected with test\n2020-01-01\nNUMBER OF TRACES   = 2\n\
        NUMBER OF PTS/TRC  = 3\nTIMEZERO AT POINT  = 1\nTOTAL TIME WINDOW  = 30\n\
        STARTING POSITION  = 0\nFINAL POSITION     = 1\nSTEP SIZE USED     = 1\n\
        POSITION UNITS     = m\nNOMINAL FREQUENCY  = 100.00\nANTENNA SEPARATION = 1.0\n";

    fn trace(no: f32, pos: f32, samples: &[i16]) -> Vec<u8> {
        let mut h = [0f32; 32];
        h[0] = no;
        h[1] = pos;
        h[2] = samples.len() as f32;
        h[5] = 2.0;
        let mut b: Vec<u8> = h.iter().flat_map(|f| f.to_le_bytes()).collect();
        for s in samples {
            b.extend_from_slice(&s.to_le_bytes());
        }
        b
    }

    #[test]
    fn reads_a_small_line() {
        let mut b = trace(1.0, 0.0, &[1, -2, 3]);
        b.extend(trace(2.0, 0.5, &[-32768, 0, 32767]));
        let l = parse_dt1(Path::new("x.DT1"), Path::new("x.HD"), HD, &b).unwrap();
        assert_eq!((l.n_samples, l.n_traces), (3, 2));
        assert_eq!(l.data.column(1).to_vec(), vec![-32768.0, 0.0, 32767.0]);
        assert_eq!(l.positions_m, vec![0.0, 0.5]);
        assert_eq!(l.sample_interval_ns, 10.0);
        assert_eq!(l.time_ns(), vec![-10.0, 0.0, 10.0]);
        assert_eq!(l.antenna_frequency_mhz, Some(100.0));
    }

    #[test]
    fn header_errors_name_the_line() {
        let bad = HD.replace("TOTAL TIME WINDOW  = 30", "TOTAL TIME WINDOW  = thirty");
        let e = parse_dt1(Path::new("x.DT1"), Path::new("x.HD"), &bad, &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.HD, line 7: expected a number after 'TOTAL TIME WINDOW =', found \"thirty\""
        );
        let missing = HD.replace("NUMBER OF PTS/TRC  = 3\n", "");
        let e = parse_dt1(Path::new("x.DT1"), Path::new("x.HD"), &missing, &[]).unwrap_err();
        assert!(e.to_string().contains("NUMBER OF PTS/TRC"), "{e}");
    }
}

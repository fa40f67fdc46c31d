//! SEG-Y (rev 0, 1 and 2) reader for radar lines.
//!
//! Layout (SEG Technical Standards Committee, *SEG-Y rev 2.0 Data Exchange Format*, 2017):
//! a 3200-byte textual header (EBCDIC or ASCII), a 400-byte binary header, optional
//! extended textual headers (count at bytes 3505–3506), then for every trace a 240-byte
//! header and its samples. Binary-header fields used (1-based byte positions of the
//! standard): 3217–3218 sample interval, 3221–3222 samples per trace, 3225–3226 sample
//! format code, 3269–3272 (rev 2) extended samples per trace, 3273–3280 (rev 2) extended
//! sample interval (IEEE double), 3297–3300 the byte-order constant 0x01020304,
//! 3501–3502 revision, 3503–3504 fixed-length flag. Trace-header fields: 71–72 coordinate
//! scalar, 73–80 source X/Y, 81–88 group X/Y, 115–116 samples in this trace, 181–188 CDP X/Y.
//! Sample formats: 1 IBM float, 2 int32, 3 int16, 5 IEEE float32, 6 IEEE float64, 8 int8.
//!
//! Big-endian as the standard requires; a file whose format code only makes sense
//! little-endian is read little-endian and says so. **The sample interval of a radar SEG-Y is
//! ambiguous**: the standard's unit is the microsecond, which cannot hold sub-nanosecond
//! radar sampling in an integer, so exporters write picoseconds (or nanoseconds) into the
//! field. This reader takes the rev-2 double when present (µs), otherwise reads the integer
//! field as **picoseconds** when that gives 0.001–10 ns and as microseconds otherwise, and
//! flags the choice; pass `sample_interval_ns` to state it.

use std::path::Path;

use ndarray::{Array2, ShapeBuilder};

use super::line::{GprFormat, GprLine, SurveyKind};
use crate::methods::io::{ReadError, read_bytes};
use crate::methods::shared::bytes::{Bytes, bad_field};

/// Options for [`read_segy`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SegyOptions {
    /// The sampling interval, ns, when the caller knows it (overrides the header).
    pub sample_interval_ns: Option<f64>,
}

pub use crate::methods::shared::segy::ibm_to_f64;
use crate::methods::shared::segy::{format_info, sample, textual_header};

/// Read a SEG-Y file as a radar line.
pub fn read_segy(path: &Path, options: SegyOptions) -> Result<GprLine, ReadError> {
    let bytes = read_bytes(path)?;
    parse_segy(path, &bytes, options)
}

/// Parse SEG-Y bytes (module docs).
pub fn parse_segy(path: &Path, bytes: &[u8], options: SegyOptions) -> Result<GprLine, ReadError> {
    const TEXT: usize = 3200;
    const BIN: usize = 400;
    const TRACE_HEADER: usize = 240;
    if bytes.len() < TEXT + BIN {
        return Err(ReadError::malformed(
            path,
            0,
            "a SEG-Y file of at least 3600 bytes (textual and binary headers)",
            format!("{} bytes", bytes.len()),
        ));
    }
    let b = Bytes::be(bytes);
    let mut notes = Vec::new();
    // Byte order: the rev-2 constant, else the format code that makes sense.
    let order_const = b.u32(3296);
    let code_be = b.u16(3224).unwrap_or(0);
    let code_le = b.with_big_endian(false).u16(3224).unwrap_or(0);
    let big = match order_const {
        Some(0x0102_0304) => true,
        Some(0x0403_0201) => false,
        _ => {
            if format_info(code_be).is_some() {
                true
            } else if format_info(code_le).is_some() {
                notes.push("the binary header reads as little-endian (non-standard; inferred from the sample format code)".to_string());
                false
            } else {
                return Err(bad_field(
                    path,
                    3224,
                    "a sample format code of 1, 2, 3, 5, 6, 8, 9, 10, 11, 12 or 16 (bytes 3225–3226)",
                    code_be,
                ));
            }
        }
    };
    let r = b.with_big_endian(big);
    let code = r.u16(3224).unwrap_or(0);
    let Some((bps, _)) = format_info(code) else {
        return Err(bad_field(
            path,
            3224,
            "a sample format code of 1, 2, 3, 5, 6, 8, 9, 10, 11, 12 or 16 (bytes 3225–3226)",
            code,
        ));
    };
    let revision = bytes.get(3500).copied().unwrap_or(0);
    let mut ns = r.u16(3220).unwrap_or(0) as usize;
    if revision >= 2
        && let Some(ext) = r.u32(3268).filter(|v| *v > 0 && *v < 10_000_000)
    {
        ns = ext as usize;
    }
    let dt_field = r.u16(3216).unwrap_or(0);
    let ext_dt_us = (revision >= 2)
        .then(|| r.f64(3272))
        .flatten()
        .filter(|v| v.is_finite() && *v > 0.0);
    let n_ext = r.i16(3504).unwrap_or(0);
    if n_ext < 0 {
        return Err(bad_field(
            path,
            3504,
            "a fixed number of extended textual headers (bytes 3505–3506)",
            n_ext,
        ));
    }
    let first_trace = TEXT + BIN + 3200 * n_ext as usize;
    // Samples per trace from the first trace header when the binary header has none.
    if ns == 0 {
        ns = r.u16(first_trace + 114).unwrap_or(0) as usize;
    }
    if ns == 0 {
        return Err(bad_field(
            path,
            3220,
            "a number of samples per trace (bytes 3221–3222 or trace bytes 115–116)",
            0,
        ));
    }
    let rec = TRACE_HEADER + ns * bps;
    let body = bytes.get(first_trace..).unwrap_or(&[]);
    let n_traces = body.len() / rec;
    if !body.len().is_multiple_of(rec) {
        notes.push(format!(
            "{} bytes after the last whole trace were ignored (variable trace lengths are not read)",
            body.len() % rec
        ));
    }
    // Sampling interval.
    let trace_dt = r.u16(first_trace + 116).unwrap_or(0);
    let raw_dt = if dt_field > 0 { dt_field } else { trace_dt };
    let mut unit_guessed = false;
    let dt_ns = if let Some(dt) = options.sample_interval_ns {
        notes.push(format!("sampling interval {dt} ns given by the caller"));
        dt
    } else if let Some(us) = ext_dt_us {
        notes.push("sampling interval from the rev-2 extended field (µs)".to_string());
        us * 1000.0
    } else if raw_dt > 0 && (raw_dt as f64 / 1000.0) <= 10.0 {
        unit_guessed = true;
        notes.push(format!(
            "sampling interval field {raw_dt} read as picoseconds ({} ns): the standard's unit (µs) cannot hold radar sampling, so exporters usually write ps — a guess; give sample_interval_ns to state it",
            raw_dt as f64 / 1000.0
        ));
        raw_dt as f64 / 1000.0
    } else if raw_dt > 0 {
        unit_guessed = true;
        notes.push(format!(
            "sampling interval field {raw_dt} read as microseconds (the standard's unit): {} ns is seismic, not radar, sampling — a guess",
            raw_dt as f64 * 1000.0
        ));
        raw_dt as f64 * 1000.0
    } else {
        return Err(bad_field(
            path,
            3216,
            "a sampling interval (bytes 3217–3218 or trace bytes 117–118)",
            0,
        ));
    };
    if !(dt_ns.is_finite() && dt_ns > 0.0) {
        return Err(bad_field(path, 3216, "a positive sampling interval", dt_ns));
    }
    let mut data = Array2::<f64>::zeros((ns, n_traces).f());
    let mut xy = Vec::with_capacity(n_traces);
    for (j, mut tr) in data.columns_mut().into_iter().enumerate() {
        let h = first_trace + j * rec;
        let scalar = r.i16(h + 70).unwrap_or(0);
        let scale = match scalar {
            s if s > 0 => s as f64,
            s if s < 0 => 1.0 / (-(s as f64)),
            _ => 1.0,
        };
        let coord = |at: usize| r.i32(h + at).unwrap_or(0) as f64 * scale;
        let (cx, cy) = (coord(180), coord(184));
        let (gx, gy) = (coord(80), coord(84));
        let (sx, sy) = (coord(72), coord(76));
        xy.push(if cx != 0.0 || cy != 0.0 {
            [cx, cy]
        } else if gx != 0.0 || gy != 0.0 {
            [gx, gy]
        } else {
            [sx, sy]
        });
        // In bounds: j < n_traces = body.len() / rec (and `sample` is checked anyway).
        let start = first_trace + j * rec + TRACE_HEADER;
        for (k, v) in tr.iter_mut().enumerate() {
            *v = sample(r, start + k * bps, code);
        }
    }
    let moving = xy.windows(2).any(|w| w[0] != w[1]);
    let (positions_m, positions_guessed) = if moving {
        let mut d = Vec::with_capacity(xy.len());
        let mut acc = 0.0;
        for (k, p) in xy.iter().enumerate() {
            if k > 0 {
                acc += ((p[0] - xy[k - 1][0]).powi(2) + (p[1] - xy[k - 1][1]).powi(2)).sqrt();
            }
            d.push(acc);
        }
        notes.push("positions: cumulative distance between the trace coordinates (CDP, group or source X/Y), assumed in metres".to_string());
        (d, false)
    } else {
        notes.push("no trace coordinates: positions are trace numbers".to_string());
        ((0..n_traces).map(|j| j as f64).collect(), true)
    };
    let (text, ebcdic) = textual_header(&bytes[..TEXT]);
    notes.push(
        "SEG-Y holds seismic data as often as radar data; it was read as a radar line".to_string(),
    );
    let header = serde_json::json!({
        "textual_header": text,
        "textual_header_encoding": if ebcdic { "EBCDIC" } else { "ASCII" },
        "revision": revision,
        "sample_format_code": code,
        "big_endian": big,
        "sample_interval_field": raw_dt,
        "sample_interval_unit_guessed": unit_guessed,
        "extended_textual_headers": n_ext,
    });
    Ok(GprLine {
        file: path.to_path_buf(),
        format: GprFormat::SegY,
        format_guessed: !big,
        data,
        n_samples: ns,
        n_traces,
        sample_interval_ns: dt_ns,
        time_window_ns: dt_ns * ns as f64,
        time_zero_sample: 0.0,
        positions_m,
        positions_guessed,
        antenna: None,
        antenna_frequency_mhz: None,
        antenna_separation_m: None,
        header_permittivity: None,
        header_samples: 0,
        marks: Vec::new(),
        survey_kind: SurveyKind::Unknown,
        survey_kind_guessed: true,
        header,
        notes,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn ibm_floats() {
        // Worked examples: 0x42640000 = 0.390625·16² = 100; 0xC276A000 = −118.625;
        // 0x41100000 = 1·16^1·(1/16) = 1.
        assert_eq!(ibm_to_f64(0x4264_0000), 100.0);
        assert_eq!(ibm_to_f64(0xC276_A000), -118.625);
        assert_eq!(ibm_to_f64(0x4110_0000), 1.0);
        assert_eq!(ibm_to_f64(0), 0.0);
    }

    /// A minimal big-endian SEG-Y: `ns` samples per trace in format `code`, dt field `dt`,
    /// CDP X = 10·j (scalar −10 → metres = j).
    pub(crate) fn tiny_segy(code: u16, ns: u16, dt: u16, traces: &[Vec<f64>]) -> Vec<u8> {
        let mut b = vec![0x40u8; 3200];
        b[0] = 0xC3; // 'C' in EBCDIC
        b.extend(vec![0u8; 400]);
        b[3216..3218].copy_from_slice(&dt.to_be_bytes());
        b[3220..3222].copy_from_slice(&ns.to_be_bytes());
        b[3224..3226].copy_from_slice(&code.to_be_bytes());
        b[3500] = 1;
        for (j, tr) in traces.iter().enumerate() {
            let mut h = vec![0u8; 240];
            h[70..72].copy_from_slice(&(-10i16).to_be_bytes());
            h[180..184].copy_from_slice(&(10 * j as i32).to_be_bytes());
            h[114..116].copy_from_slice(&ns.to_be_bytes());
            b.extend(h);
            for v in tr {
                match code {
                    3 => b.extend((*v as i16).to_be_bytes()),
                    2 => b.extend((*v as i32).to_be_bytes()),
                    _ => b.extend((*v as f32).to_be_bytes()),
                }
            }
        }
        b
    }

    #[test]
    fn reads_ieee_and_int16_segy() {
        let traces = vec![vec![1.5, -2.0, 0.25], vec![3.0, 4.0, -5.0]];
        let b = tiny_segy(5, 3, 100, &traces);
        let l = parse_segy(Path::new("l.sgy"), &b, SegyOptions::default()).unwrap();
        assert_eq!((l.n_samples, l.n_traces), (3, 2));
        assert_eq!(l.data.column(0).to_vec(), vec![1.5, -2.0, 0.25]);
        assert_eq!(l.positions_m, vec![0.0, 1.0]);
        // 100 in the interval field is read as 100 ps = 0.1 ns, and flagged as a guess.
        assert!((l.sample_interval_ns - 0.1).abs() < 1e-15);
        assert_eq!(l.header["sample_interval_unit_guessed"], true);
        assert_eq!(l.header["textual_header_encoding"], "EBCDIC");
        let i16s = tiny_segy(3, 3, 100, &[vec![-7.0, 8.0, 9.0]]);
        let l = parse_segy(
            Path::new("l.sgy"),
            &i16s,
            SegyOptions {
                sample_interval_ns: Some(0.2),
            },
        )
        .unwrap();
        assert_eq!(l.data.column(0).to_vec(), vec![-7.0, 8.0, 9.0]);
        assert_eq!(l.sample_interval_ns, 0.2);
        assert!(l.positions_guessed);
    }

    #[test]
    fn malformed_segy_names_the_field() {
        let mut b = tiny_segy(5, 3, 100, &[vec![0.0; 3]]);
        b[3224..3226].copy_from_slice(&77u16.to_be_bytes());
        let e = parse_segy(Path::new("x.sgy"), &b, SegyOptions::default()).unwrap_err();
        assert!(e.to_string().contains("sample format code"), "{e}");
        let e = parse_segy(Path::new("x.sgy"), &[0u8; 100], SegyOptions::default()).unwrap_err();
        assert!(e.to_string().contains("3600 bytes"), "{e}");
    }
}

//! GSSI SIR `.DZT` reader.
//!
//! Layout (GSSI "DZT file format" 6-14-16, as also decoded by GPRPy `gprIO_DZT` and
//! readgssi): a 1024-byte header per channel (`MINHEADSIZE`), little-endian:
//!
//! | offset | field | type | meaning |
//! |---|---|---|---|
//! | 0 | `rh_tag` | u16 | header tag |
//! | 2 | `rh_data` | u16 | offset to data (if < 1024: in units of 1024 bytes) |
//! | 4 | `rh_nsamp` | u16 | samples per scan |
//! | 6 | `rh_bits` | u16 | bits per sample: 8, 16 (unsigned) or 32 (signed) |
//! | 8 | `rh_zero` | i16 | binary offset (0x80, 0x8000) or 0 |
//! | 10 | `rhf_sps` | f32 | scans per second |
//! | 14 | `rhf_spm` | f32 | scans per metre |
//! | 18 | `rhf_mpm` | f32 | metres per mark |
//! | 22 | `rhf_position` | f32 | position of the time window, ns |
//! | 26 | `rhf_range` | f32 | time window, ns |
//! | 30 | `rh_npass` | u16 | passes |
//! | 32, 36 | `rhb_cdt`, `rhb_mdt` | u32 | created / modified, DOS-like bit field |
//! | 52 | `rh_nchan` | u16 | channels |
//! | 54 | `rhf_epsr` | f32 | relative permittivity entered by the operator |
//! | 58 | `rhf_top` | f32 | top position, m |
//! | 62 | `rhf_depth` | f32 | depth range, m |
//! | 98 | `rh_antname` | 14 chars | antenna name |
//! | 114 | `rh_name` | 12 chars | file name |
//!
//! Data start at `1024·rh_data` when `rh_data < 1024`, else at `1024·rh_nchan`; scans are
//! `rh_nchan × rh_nsamp` samples, channels interleaved per scan. 8- and 16-bit samples are
//! **unsigned with a 2^(bits−1) offset** (subtracted here, as GPRPy does; readgssi returns
//! the raw words, which are `value + 32768` for 16-bit); 32-bit samples are signed.
//! The first two samples of every scan are a scan header, not signal: word 0 counts scans,
//! word 1 is non-zero on scans that carry a user mark.

use std::path::Path;

use ndarray::{Array2, ShapeBuilder};
use serde::{Deserialize, Serialize};

use super::line::{GprFormat, GprLine, SurveyKind};
use crate::methods::io::{ReadError, read_bytes};
use crate::methods::shared::bytes::{Bytes, bad_field};

/// Size of one channel's header block.
pub const MIN_HEADER_BYTES: usize = 1024;

/// The DZT header fields, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DztHeader {
    /// Header tag.
    pub rh_tag: u16,
    /// Offset-to-data field.
    pub rh_data: u16,
    /// Samples per scan.
    pub rh_nsamp: u16,
    /// Bits per sample.
    pub rh_bits: u16,
    /// Binary offset field.
    pub rh_zero: i16,
    /// Scans per second.
    pub rhf_sps: f32,
    /// Scans per metre.
    pub rhf_spm: f32,
    /// Metres per mark.
    pub rhf_mpm: f32,
    /// Position of the time window, ns.
    pub rhf_position: f32,
    /// Time window, ns.
    pub rhf_range: f32,
    /// Passes.
    pub rh_npass: u16,
    /// Creation date `YYYY-MM-DD hh:mm:ss` decoded from the bit field (None when zero).
    pub created: Option<String>,
    /// Modification date, same form.
    pub modified: Option<String>,
    /// Channels.
    pub rh_nchan: u16,
    /// Relative permittivity the operator entered.
    pub rhf_epsr: f32,
    /// Top position, m.
    pub rhf_top: f32,
    /// Depth range, m.
    pub rhf_depth: f32,
    /// Antenna name.
    pub rh_antname: String,
    /// Name field.
    pub rh_name: String,
    /// Byte offset of the first scan.
    pub data_offset: usize,
    /// The constant subtracted from every raw word to make it signed (32768 for 16-bit).
    pub unsigned_offset: f64,
}

/// Decode the DOS-like date bit field: bits 0–4 seconds/2, 5–10 minutes, 11–15 hours,
/// 16–20 day, 21–24 month, 25–31 years since 1980.
pub fn decode_date(field: u32) -> Option<String> {
    if field == 0 {
        return None;
    }
    let sec = (field & 0x1f) * 2;
    let min = (field >> 5) & 0x3f;
    let hour = (field >> 11) & 0x1f;
    let day = (field >> 16) & 0x1f;
    let month = (field >> 21) & 0x0f;
    let year = (field >> 25) + 1980;
    ((1..=12).contains(&month) && (1..=31).contains(&day) && hour < 24 && min < 60)
        .then(|| format!("{year:04}-{month:02}-{day:02} {hour:02}:{min:02}:{sec:02}"))
}

/// Read the header of a DZT held in `bytes`.
pub fn parse_header(path: &Path, bytes: &[u8]) -> Result<DztHeader, ReadError> {
    let b = Bytes::le(bytes);
    if bytes.len() < MIN_HEADER_BYTES {
        return Err(ReadError::malformed(
            path,
            0,
            format!("a GSSI header of {MIN_HEADER_BYTES} bytes"),
            format!("a file of {} bytes", bytes.len()),
        ));
    }
    // The length check above guarantees every fixed offset below 1024 is readable.
    let u16f = |at: usize| b.u16(at).unwrap_or(0);
    let f32f = |at: usize| b.f32(at).unwrap_or(0.0);
    let rh_nsamp = u16f(4);
    let rh_bits = u16f(6);
    let rh_data = u16f(2);
    let rh_nchan = u16f(52);
    let rhf_range = f32f(26);
    if rh_nsamp == 0 {
        return Err(bad_field(path, 4, "samples per scan (rh_nsamp) > 0", 0));
    }
    if !matches!(rh_bits, 8 | 16 | 32) {
        return Err(bad_field(
            path,
            6,
            "bits per sample (rh_bits) of 8, 16 or 32",
            rh_bits,
        ));
    }
    if rh_nchan == 0 || rh_nchan > 16 {
        return Err(bad_field(
            path,
            52,
            "a channel count (rh_nchan) of 1 to 16",
            rh_nchan,
        ));
    }
    if !(rhf_range.is_finite() && rhf_range > 0.0) {
        return Err(bad_field(
            path,
            26,
            "a positive time range (rhf_range, ns)",
            rhf_range,
        ));
    }
    let data_offset = if rh_data > 0 && (rh_data as usize) < MIN_HEADER_BYTES {
        MIN_HEADER_BYTES * rh_data as usize
    } else {
        MIN_HEADER_BYTES * rh_nchan as usize
    };
    let unsigned_offset = match rh_bits {
        8 => 128.0,
        16 => 32768.0,
        _ => 0.0,
    };
    Ok(DztHeader {
        rh_tag: u16f(0),
        rh_data,
        rh_nsamp,
        rh_bits,
        rh_zero: b.i16(8).unwrap_or(0),
        rhf_sps: f32f(10),
        rhf_spm: f32f(14),
        rhf_mpm: f32f(18),
        rhf_position: f32f(22),
        rhf_range,
        rh_npass: u16f(30),
        created: decode_date(b.u32(32).unwrap_or(0)),
        modified: decode_date(b.u32(36).unwrap_or(0)),
        rh_nchan,
        rhf_epsr: f32f(54),
        rhf_top: f32f(58),
        rhf_depth: f32f(62),
        rh_antname: b.cstr(98, 14).unwrap_or_default(),
        rh_name: b.cstr(114, 12).unwrap_or_default(),
        data_offset,
        unsigned_offset,
    })
}

/// Nominal frequency from a GSSI antenna name: the number before "MHz" ("400MHz" → 400),
/// or a known model number (3101 → 900, 5103 → 400, 3102 → 500, 5106 → 200, 3207 → 100,
/// 50270 → 270, 50400 → 400, 62000 → 2000, 42000 → 2000, 41000 → 1000).
pub fn antenna_frequency_mhz(name: &str) -> Option<f64> {
    let lower = name.to_ascii_lowercase();
    if let Some(at) = lower.find("mhz") {
        let digits: String = lower[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ' ')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if let Ok(f) = digits.trim().parse::<f64>() {
            return (f > 0.0).then_some(f);
        }
    }
    let known = [
        ("3101", 900.0),
        ("5103", 400.0),
        ("3102", 500.0),
        ("5106", 200.0),
        ("3207", 100.0),
        ("50270", 270.0),
        ("50400", 400.0),
        ("62000", 2000.0),
        ("42000", 2000.0),
        ("41000", 1000.0),
    ];
    known
        .iter()
        .find(|(model, _)| lower.starts_with(model))
        .map(|(_, f)| *f)
}

/// Read a DZT file (channel 0).
pub fn read_dzt(path: &Path) -> Result<GprLine, ReadError> {
    let bytes = read_bytes(path)?;
    parse_dzt(path, &bytes, 0)
}

/// Parse DZT bytes; `channel` selects one channel of a multi-channel file (0-based).
pub fn parse_dzt(path: &Path, bytes: &[u8], channel: usize) -> Result<GprLine, ReadError> {
    let h = parse_header(path, bytes)?;
    let nchan = h.rh_nchan as usize;
    if channel >= nchan {
        return Err(ReadError::format(
            path,
            format!("channel {channel} requested but the file has {nchan} channel(s)"),
        ));
    }
    let ns = h.rh_nsamp as usize;
    let bytes_per_sample = (h.rh_bits / 8) as usize;
    let scan_bytes = ns * bytes_per_sample * nchan;
    let body = bytes.get(h.data_offset..).ok_or_else(|| {
        bad_field(
            path,
            2,
            format!("data starting within the file ({} bytes)", bytes.len()),
            format!("a data offset of {}", h.data_offset),
        )
    })?;
    let n_traces = body.len() / scan_bytes;
    let leftover = body.len() % scan_bytes;
    let mut notes = Vec::new();
    if leftover != 0 {
        notes.push(format!(
            "the last {leftover} bytes do not make a whole scan ({scan_bytes} bytes) and were ignored"
        ));
    }
    let mut data = Array2::<f64>::zeros((ns, n_traces).f());
    let chan_off = channel * ns * bytes_per_sample;
    for (j, mut trace) in data.columns_mut().into_iter().enumerate() {
        // In bounds: j < n_traces = body.len() / scan_bytes and chan_off + ns·bytes ≤ scan_bytes.
        let start = j * scan_bytes + chan_off;
        let raw = &body[start..start + ns * bytes_per_sample];
        match h.rh_bits {
            8 => {
                for (v, &r) in trace.iter_mut().zip(raw) {
                    *v = r as f64 - 128.0;
                }
            }
            16 => {
                for (v, c) in trace.iter_mut().zip(raw.chunks_exact(2)) {
                    *v = u16::from_le_bytes([c[0], c[1]]) as f64 - 32768.0;
                }
            }
            _ => {
                for (v, c) in trace.iter_mut().zip(raw.chunks_exact(4)) {
                    *v = i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64;
                }
            }
        }
    }
    let header_samples = ns.min(2);
    let marks = detect_marks(&data, h.unsigned_offset);
    if !marks.is_empty() {
        notes.push(format!(
            "{} user mark(s) read from the second header word of the scans (a non-zero word marks a scan)",
            marks.len()
        ));
    }
    notes.push(
        "samples 0–1 of every scan are the scan header (counter, mark word), not signal"
            .to_string(),
    );
    if h.rh_bits != 32 {
        notes.push(format!(
            "{}-bit samples are stored unsigned; {} was subtracted (raw = value + {})",
            h.rh_bits, h.unsigned_offset, h.unsigned_offset
        ));
    }
    if nchan > 1 {
        notes.push(format!(
            "the file holds {nchan} channels; channel {channel} was read"
        ));
    }
    let (positions_m, positions_guessed) = if h.rhf_spm > 0.0 && h.rhf_spm.is_finite() {
        let dx = 1.0 / h.rhf_spm as f64;
        ((0..n_traces).map(|j| j as f64 * dx).collect(), false)
    } else {
        notes.push(
            "scans per metre is 0 (time-based acquisition): positions are trace numbers, not metres"
                .to_string(),
        );
        ((0..n_traces).map(|j| j as f64).collect(), true)
    };
    if h.rhf_position != 0.0 {
        notes.push(format!(
            "the header's window position (rhf_position) is {} ns; it is recorded but not applied",
            h.rhf_position
        ));
    }
    let epsr = (h.rhf_epsr.is_finite() && h.rhf_epsr >= 1.0).then_some(h.rhf_epsr as f64);
    let range_ns = h.rhf_range as f64;
    let antenna = (!h.rh_antname.is_empty()).then(|| h.rh_antname.clone());
    let header = serde_json::to_value(&h).unwrap_or(serde_json::Value::Null);
    Ok(GprLine {
        file: path.to_path_buf(),
        format: GprFormat::GssiDzt,
        format_guessed: false,
        data,
        n_samples: ns,
        n_traces,
        sample_interval_ns: range_ns / ns as f64,
        time_window_ns: range_ns,
        time_zero_sample: 0.0,
        positions_m,
        positions_guessed,
        antenna_frequency_mhz: antenna.as_deref().and_then(antenna_frequency_mhz),
        antenna,
        antenna_separation_m: None,
        header_permittivity: epsr,
        header_samples,
        marks,
        survey_kind: SurveyKind::CommonOffset,
        survey_kind_guessed: true,
        header,
        notes,
    })
}

/// Scans whose second header word differs from the word most scans carry (0 in practice).
fn detect_marks(data: &Array2<f64>, offset: f64) -> Vec<usize> {
    if data.nrows() < 2 || data.ncols() == 0 {
        return Vec::new();
    }
    let words: Vec<i64> = data.row(1).iter().map(|v| (v + offset) as i64).collect();
    let mut sorted = words.clone();
    sorted.sort_unstable();
    // The most common word.
    let mut best = (sorted[0], 0usize);
    let mut run = (sorted[0], 0usize);
    for &w in &sorted {
        if w == run.0 {
            run.1 += 1;
        } else {
            run = (w, 1);
        }
        if run.1 > best.1 {
            best = run;
        }
    }
    if best.1 * 2 < words.len() {
        return Vec::new(); // no dominant "unmarked" word: not a mark channel
    }
    words
        .iter()
        .enumerate()
        .filter(|(_, w)| **w != best.0)
        .map(|(j, _)| j)
        .collect()
}

/// What a DZT written by [`dzt_bytes`] says about itself (16-bit, one channel).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DztWriteSpec {
    /// Time window `rhf_range`, ns.
    pub range_ns: f64,
    /// Scans per metre `rhf_spm` (0 for time-based acquisition).
    pub scans_per_metre: f64,
    /// Scans per second `rhf_sps`.
    pub scans_per_second: f64,
    /// Metres per mark `rhf_mpm`.
    pub metres_per_mark: f64,
    /// The relative permittivity the operator entered, `rhf_epsr` (≥ 1).
    pub relative_permittivity: f64,
    /// Antenna name `rh_antname` (at most 13 bytes are kept).
    pub antenna: String,
    /// Name field `rh_name` (at most 11 bytes are kept).
    pub name: String,
    /// Creation date and time (year, month, day, hour, minute, second); `None` writes 0.
    pub created: Option<[u32; 6]>,
}

/// Encode a date as the DZT bit field ([`decode_date`]'s inverse): seconds/2 in bits 0–4,
/// minutes 5–10, hours 11–15, day 16–20, month 21–24, years since 1980 in 25–31. `None`
/// when a field is out of range (year 1980–2107).
pub fn encode_date(date: [u32; 6]) -> Option<u32> {
    let [y, mo, d, h, mi, sec] = date;
    ((1980..=2107).contains(&y)
        && (1..=12).contains(&mo)
        && (1..=31).contains(&d)
        && h < 24
        && mi < 60
        && sec < 60)
        .then(|| ((y - 1980) << 25) | (mo << 21) | (d << 16) | (h << 11) | (mi << 5) | (sec / 2))
}

/// The mark word written into sample 1 of a marked scan (any non-zero word marks a scan).
pub const MARK_WORD: u16 = 0xE800;

/// A 16-bit, one-channel GSSI DZT in memory: the 1024-byte header (fields at the offsets of
/// the module table; `rh_tag` 0x00ff, `rh_data` 1024, `rh_bits` 16, `rh_zero` 0x8000,
/// `rh_nchan` 1, `rhf_depth = range·c/(2√εr)`, the version/system byte 0x19 at offset 113
/// that readgssi decodes as a SIR-3000 file) followed by one scan per trace of
/// `data.nrows()` words `round(value) + 32768`. Words 0 and 1 of every scan are the scan
/// header, as GSSI writes it: word 0 the scan number (mod 2^16), word 1 [`MARK_WORD`] on the
/// scans listed in `marks`, else 0 — whatever `data` holds in rows 0–1 is replaced.
/// Values must be finite and lie in −32768…32767 after rounding.
pub fn dzt_bytes(
    spec: &DztWriteSpec,
    data: ndarray::ArrayView2<f64>,
    marks: &[usize],
) -> Result<Vec<u8>, super::GprError> {
    use super::GprError;
    let step = "DZT writer";
    let (ns, ntr) = data.dim();
    if !(3..=u16::MAX as usize).contains(&ns) {
        return Err(GprError::invalid(
            step,
            "samples per scan",
            ns,
            "must be 3 to 65535 (two scan-header words and the signal)",
        ));
    }
    if !(spec.range_ns.is_finite() && spec.range_ns > 0.0) {
        return Err(GprError::invalid(
            step,
            "range_ns",
            spec.range_ns,
            "must be positive",
        ));
    }
    if !(spec.relative_permittivity.is_finite() && spec.relative_permittivity >= 1.0) {
        return Err(GprError::invalid(
            step,
            "relative_permittivity",
            spec.relative_permittivity,
            "must be at least 1",
        ));
    }
    let created = match spec.created {
        None => 0,
        Some(d) => encode_date(d).ok_or_else(|| {
            GprError::invalid(step, "created", format!("{d:?}"), "not a date 1980–2107")
        })?,
    };
    let mut h = vec![0u8; MIN_HEADER_BYTES];
    let mut put = |at: usize, bytes: &[u8]| h[at..at + bytes.len()].copy_from_slice(bytes);
    put(0, &0x00ffu16.to_le_bytes());
    put(2, &1024u16.to_le_bytes());
    put(4, &(ns as u16).to_le_bytes());
    put(6, &16u16.to_le_bytes());
    put(8, &0x8000u16.to_le_bytes());
    put(10, &(spec.scans_per_second as f32).to_le_bytes());
    put(14, &(spec.scans_per_metre as f32).to_le_bytes());
    put(18, &(spec.metres_per_mark as f32).to_le_bytes());
    put(26, &(spec.range_ns as f32).to_le_bytes());
    put(32, &created.to_le_bytes());
    put(36, &created.to_le_bytes());
    put(52, &1u16.to_le_bytes());
    put(54, &(spec.relative_permittivity as f32).to_le_bytes());
    let depth_m =
        spec.range_ns * super::SPEED_OF_LIGHT_M_PER_NS / (2.0 * spec.relative_permittivity.sqrt());
    put(62, &(depth_m as f32).to_le_bytes());
    let ant = spec.antenna.as_bytes();
    put(98, &ant[..ant.len().min(13)]);
    put(113, &[0x19]);
    let name = spec.name.as_bytes();
    put(114, &name[..name.len().min(11)]);
    let mut out = h;
    out.reserve(ns * ntr * 2);
    for (j, trace) in data.columns().into_iter().enumerate() {
        for (i, v) in trace.iter().enumerate() {
            let word: u16 = match i {
                0 => (j % 65536) as u16,
                1 => {
                    if marks.contains(&j) {
                        MARK_WORD
                    } else {
                        0
                    }
                }
                _ => {
                    let r = v.round();
                    if !(r.is_finite() && (-32768.0..=32767.0).contains(&r)) {
                        return Err(GprError::invalid(
                            step,
                            &format!("sample {i} of trace {j}"),
                            v,
                            "outside the 16-bit range −32768…32767",
                        ));
                    }
                    (r + 32768.0) as u16
                }
            };
            out.extend_from_slice(&word.to_le_bytes());
        }
    }
    Ok(out)
}

/// Write [`dzt_bytes`] to a new file at `path`.
pub fn write_dzt(
    path: &Path,
    spec: &DztWriteSpec,
    data: ndarray::ArrayView2<f64>,
    marks: &[usize],
) -> Result<(), super::GprError> {
    let bytes = dzt_bytes(spec, data, marks)?;
    super::npy::write_file(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_bit_field() {
        // 0x4a750497 is the creation field of the GPRPy example file:
        // year 37+1980, month 3, day 21, 00:36:46.
        assert_eq!(
            decode_date(0x4a75_0497).as_deref(),
            Some("2017-03-21 00:36:46")
        );
        assert_eq!(decode_date(0), None);
    }

    #[test]
    fn date_encoding_round_trips() {
        let d = [2024, 5, 1, 10, 30, 46];
        assert_eq!(
            decode_date(encode_date(d).unwrap()).as_deref(),
            Some("2024-05-01 10:30:46")
        );
        assert_eq!(encode_date([2017, 3, 21, 0, 36, 46]), Some(0x4a75_0497));
        assert_eq!(encode_date([1979, 1, 1, 0, 0, 0]), None);
    }

    /// What the writer writes, the reader reads back exactly: header fields, signed values
    /// (raw − 32768), the scan-header words, marks.
    #[test]
    fn written_dzt_reads_back() {
        let data = ndarray::Array2::from_shape_fn((6, 4), |(i, j)| {
            (i as f64 * 1000.0 - 2500.0) * if j % 2 == 0 { 1.0 } else { -1.0 }
        });
        let spec = DztWriteSpec {
            range_ns: 12.0,
            scans_per_metre: 20.0,
            scans_per_second: 64.0,
            metres_per_mark: 1.0,
            relative_permittivity: 9.0,
            antenna: "400MHz".into(),
            name: "LINE1".into(),
            created: Some([2024, 5, 1, 10, 30, 46]),
        };
        let bytes = dzt_bytes(&spec, data.view(), &[2]).unwrap();
        assert_eq!(bytes.len(), 1024 + 6 * 4 * 2);
        let l = parse_dzt(Path::new("w.dzt"), &bytes, 0).unwrap();
        assert_eq!((l.n_samples, l.n_traces), (6, 4));
        assert_eq!(l.time_window_ns, 12.0);
        assert_eq!(l.sample_interval_ns, 2.0);
        assert_eq!(
            l.positions_m,
            (0..4).map(|j| j as f64 * (1.0 / 20.0)).collect::<Vec<_>>()
        );
        assert_eq!(l.header_permittivity, Some(9.0));
        assert_eq!(l.antenna_frequency_mhz, Some(400.0));
        assert_eq!(l.marks, vec![2]);
        assert_eq!(l.header["created"], "2024-05-01 10:30:46");
        // rhf_depth = 12 ns · c / (2·3) = 0.5996 m (f32).
        assert!((l.header["rhf_depth"].as_f64().unwrap() - 0.599_584_916).abs() < 1e-6);
        for i in 2..6 {
            for j in 0..4 {
                assert_eq!(l.data[[i, j]], data[[i, j]]);
            }
        }
        // Scan header words: the counter, then the mark word on scan 2 only.
        assert_eq!(l.data[[0, 3]], 3.0 - 32768.0);
        assert_eq!(l.data[[1, 2]], MARK_WORD as f64 - 32768.0);
        assert_eq!(l.data[[1, 1]], -32768.0);
        // Out of range is refused, naming the sample.
        let mut bad = data.clone();
        bad[[4, 1]] = 40000.0;
        let e = dzt_bytes(&spec, bad.view(), &[]).unwrap_err();
        assert!(e.to_string().contains("sample 4 of trace 1"), "{e}");
    }

    #[test]
    fn antenna_names() {
        assert_eq!(antenna_frequency_mhz("400MHz"), Some(400.0));
        assert_eq!(antenna_frequency_mhz("3101"), Some(900.0));
        assert_eq!(antenna_frequency_mhz("xyz"), None);
    }

    fn tiny_dzt(bits: u16, nsamp: u16, words: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; 1024];
        b[0..2].copy_from_slice(&0x00ffu16.to_le_bytes());
        b[2..4].copy_from_slice(&1024u16.to_le_bytes());
        b[4..6].copy_from_slice(&nsamp.to_le_bytes());
        b[6..8].copy_from_slice(&bits.to_le_bytes());
        b[14..18].copy_from_slice(&10.0f32.to_le_bytes());
        b[26..30].copy_from_slice(&20.0f32.to_le_bytes());
        b[52..54].copy_from_slice(&1u16.to_le_bytes());
        b[54..58].copy_from_slice(&9.0f32.to_le_bytes());
        b.extend_from_slice(words);
        b
    }

    #[test]
    fn eight_and_thirty_two_bit_samples() {
        // 8-bit: unsigned with offset 128. Two scans of 4 samples.
        let b = tiny_dzt(8, 4, &[0, 0, 128, 255, 1, 0, 0, 129]);
        let l = parse_dzt(Path::new("t.dzt"), &b, 0).unwrap();
        assert_eq!((l.n_samples, l.n_traces), (4, 2));
        assert_eq!(l.data.column(0).to_vec(), vec![-128.0, -128.0, 0.0, 127.0]);
        assert_eq!(l.data[[3, 1]], 1.0);
        assert_eq!(l.positions_m, vec![0.0, 0.1]);
        assert_eq!(l.sample_interval_ns, 5.0);
        // 32-bit: signed as stored.
        let mut w = Vec::new();
        for v in [0i32, 0, -70000, 70000] {
            w.extend_from_slice(&v.to_le_bytes());
        }
        let l = parse_dzt(Path::new("t.dzt"), &tiny_dzt(32, 4, &w), 0).unwrap();
        assert_eq!(l.data.column(0).to_vec(), vec![0.0, 0.0, -70000.0, 70000.0]);
    }

    #[test]
    fn malformed_headers_name_file_and_field() {
        let mut b = tiny_dzt(12, 4, &[]);
        let e = parse_dzt(Path::new("bad.dzt"), &b, 0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad.dzt, line 0: expected bits per sample (rh_bits) of 8, 16 or 32, found \"12 at byte 6\""
        );
        b[6..8].copy_from_slice(&16u16.to_le_bytes());
        b[26..30].copy_from_slice(&(-1.0f32).to_le_bytes());
        let e = parse_dzt(Path::new("bad.dzt"), &b, 0).unwrap_err();
        assert!(e.to_string().contains("positive time range"), "{e}");
        let e = parse_dzt(Path::new("short.dzt"), &[0u8; 100], 0).unwrap_err();
        assert!(e.to_string().contains("a file of 100 bytes"), "{e}");
    }
}

//! SEG-2 shot records (Pullan 1990, "Recommended standard for seismic (/radar) data files
//! in the personal computer environment", Geophysics 55(9), 1260–1271).
//!
//! Layout read here:
//! * file descriptor block: id `0x3A55` (its byte order gives the file's), revision,
//!   size `M` of the trace-pointer sub-block, trace count `N`, string and line terminators,
//!   then at byte 32 the `N` trace pointers (u32) and the file's free-format strings;
//! * each string: a u16 offset to the next string, then `KEYWORD value` and the terminator
//!   (an offset of 0 ends the list);
//! * trace descriptor block at each pointer: id `0x4422`, block size, data size, sample
//!   count, data format code (1 int16, 2 int32, 3 20-bit packed, 4 float32, 5 float64),
//!   strings (`SAMPLE_INTERVAL` in s, `RECEIVER_LOCATION`, `SOURCE_LOCATION`,
//!   `CHANNEL_NUMBER`, `DESCALING_FACTOR`, `DELAY`), then the samples.
//!
//! Code 3 packs four samples in ten bytes: a u16 of four 4-bit exponents, then four 16-bit
//! one's-complement mantissas; value = mantissa · 2^exponent.
//!
//! `DELAY` is reported, not applied (as obspy): its sign and unit vary between instruments
//! (the staged PyRefra file says 0.2 and its shot fires 0.2 s after the first sample, a
//! pre-trigger); [`super::picking::resolve_time_zero`] checks it against the data.

use std::collections::BTreeMap;
use std::path::Path;

use ndarray::Array2;

use super::gather::ShotGather;
use crate::methods::io::{ReadError, read_bytes};
use crate::methods::shared::bytes::{Bytes, bad_field};

/// Whether `bytes` start like a SEG-2 file (block id `0x3A55` in either byte order,
/// revision 1).
pub fn is_seg2(bytes: &[u8]) -> bool {
    let be = match bytes.get(0..2) {
        Some([0x55, 0x3a]) => false,
        Some([0x3a, 0x55]) => true,
        _ => return false,
    };
    Bytes {
        b: bytes,
        big_endian: be,
    }
    .u16(2)
        == Some(1)
}

/// Read a SEG-2 file: one shot gather.
pub fn read_seg2(path: &Path) -> Result<ShotGather, ReadError> {
    let bytes = read_bytes(path)?;
    parse_seg2(path, &bytes)
}

/// The free-format strings starting at `off`, up to `end`, as `KEYWORD → value`.
fn strings(r: Bytes, mut off: usize, end: usize, term: &[u8]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut guard = 0;
    while off + 2 <= end && guard < 100_000 {
        guard += 1;
        let Some(len) = r.u16(off).map(usize::from) else {
            break;
        };
        if len == 0 {
            break;
        }
        let stop = (off + len).min(end);
        let Some(raw) = r.slice(off + 2, stop.saturating_sub(off + 2)) else {
            break;
        };
        let raw = match raw.windows(term.len().max(1)).position(|w| w == term) {
            Some(p) if !term.is_empty() => &raw[..p],
            _ => raw,
        };
        let text: String = raw
            .iter()
            .filter(|c| c.is_ascii_graphic() || **c == b' ')
            .map(|&c| c as char)
            .collect();
        let text = text.trim();
        if !text.is_empty() {
            let (k, v) = text.split_once(' ').unwrap_or((text, ""));
            out.insert(k.to_ascii_uppercase(), v.trim().to_string());
        }
        off += len;
    }
    out
}

/// Parse the bytes of a SEG-2 file (`path` names it in errors).
pub fn parse_seg2(path: &Path, bytes: &[u8]) -> Result<ShotGather, ReadError> {
    if !is_seg2(bytes) {
        let found = bytes
            .iter()
            .take(4)
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" ");
        return Err(bad_field(
            path,
            0,
            "the SEG-2 block id 55 3a (or 3a 55) and revision 1",
            found,
        ));
    }
    let r = Bytes {
        b: bytes,
        big_endian: bytes[0] == 0x3a,
    };
    let m = r.u16(4).map(usize::from).unwrap_or(0);
    let n = r.u16(6).map(usize::from).unwrap_or(0);
    let st_len = r.u8(8).map(usize::from).unwrap_or(1).clamp(1, 2);
    let term: Vec<u8> = r
        .slice(9, st_len)
        .map(<[u8]>::to_vec)
        .unwrap_or_else(|| vec![0]);
    if n == 0 {
        return Err(bad_field(
            path,
            6,
            "at least one trace",
            "a trace count of 0",
        ));
    }
    if 4 * n > m {
        return Err(bad_field(
            path,
            4,
            format!("a trace-pointer block of at least {} bytes", 4 * n),
            format!("{m} bytes"),
        ));
    }
    let pointers: Vec<usize> = (0..n)
        .map(|i| {
            r.u32(32 + 4 * i)
                .map(|p| p as usize)
                .ok_or_else(|| bad_field(path, 32 + 4 * i, "a trace pointer", "end of file"))
        })
        .collect::<Result<_, _>>()?;
    let first_trace = pointers
        .iter()
        .copied()
        .min()
        .unwrap_or(bytes.len())
        .min(bytes.len());
    let file_strings = strings(r, 32 + m, first_trace, &term);

    let mut traces: Vec<Vec<f64>> = Vec::with_capacity(n);
    let mut notes = Vec::new();
    let mut dt: Option<f64> = None;
    let mut src = Vec::new();
    let mut rec = Vec::new();
    let mut chan = Vec::new();
    let mut delays = Vec::new();
    let mut sample_format = String::new();
    for (k, &p) in pointers.iter().enumerate() {
        if r.u16(p) != Some(0x4422) {
            return Err(bad_field(
                path,
                p,
                format!("the trace descriptor id 0x4422 of trace {}", k + 1),
                format!("{:?}", r.u16(p)),
            ));
        }
        let size = r
            .u16(p + 2)
            .map(usize::from)
            .ok_or_else(|| bad_field(path, p + 2, "a block size", "end of file"))?;
        let ns = r
            .u32(p + 8)
            .map(|v| v as usize)
            .ok_or_else(|| bad_field(path, p + 8, "a sample count", "end of file"))?;
        let code = r.u8(p + 12).unwrap_or(0);
        let s = strings(r, p + 32, (p + size).min(bytes.len()), &term);
        let data_at = p + size;
        let (width, name): (f64, &str) = match code {
            1 => (2.0, "int16"),
            2 => (4.0, "int32"),
            3 => (2.5, "20-bit packed"),
            4 => (4.0, "float32"),
            5 => (8.0, "float64"),
            other => {
                return Err(bad_field(
                    path,
                    p + 12,
                    "a data format code 1–5",
                    format!("code {other} in trace {}", k + 1),
                ));
            }
        };
        if code == 3 && ns % 4 != 0 {
            return Err(bad_field(
                path,
                p + 8,
                "a sample count divisible by 4 (format code 3)",
                ns.to_string(),
            ));
        }
        let need = (ns as f64 * width).ceil() as usize;
        if r.slice(data_at, need).is_none() {
            return Err(bad_field(
                path,
                data_at,
                format!("{ns} samples ({need} bytes) of trace {}", k + 1),
                "end of file",
            ));
        }
        sample_format = name.to_string();
        let mut v = Vec::with_capacity(ns);
        match code {
            1 => v.extend((0..ns).map(|j| r.i16(data_at + 2 * j).map_or(0.0, f64::from))),
            2 => v.extend((0..ns).map(|j| r.i32(data_at + 4 * j).map_or(0.0, f64::from))),
            4 => v.extend((0..ns).map(|j| r.f32(data_at + 4 * j).map_or(0.0, f64::from))),
            5 => v.extend((0..ns).map(|j| r.f64(data_at + 8 * j).unwrap_or(0.0))),
            _ => {
                for g in 0..ns / 4 {
                    let base = data_at + 10 * g;
                    let e = r.u16(base).unwrap_or(0);
                    for q in 0..4 {
                        let mant = r.i16(base + 2 + 2 * q).unwrap_or(0);
                        let mant = i32::from(mant) + i32::from(mant < 0);
                        let exp = (e >> (4 * q)) & 0xf;
                        v.push(f64::from(mant) * f64::from(1u32 << exp));
                    }
                }
            }
        }
        if let Some(f) = s
            .get("DESCALING_FACTOR")
            .and_then(|x| x.parse::<f64>().ok())
            && f.is_finite()
            && f != 0.0
            && f != 1.0
        {
            v.iter_mut().for_each(|x| *x *= f);
        }
        let this_dt = s
            .get("SAMPLE_INTERVAL")
            .and_then(|x| x.parse::<f64>().ok())
            .filter(|d| d.is_finite() && *d > 0.0);
        match (dt, this_dt) {
            (None, Some(d)) => dt = Some(d),
            (Some(a), Some(d)) if (a - d).abs() > 1e-12 * a => {
                notes.push(format!(
                    "trace {} has sample interval {d} s, the first trace {a} s; the first is used",
                    k + 1
                ));
            }
            _ => {}
        }
        let num = |key: &str| {
            s.get(key)
                .and_then(|x| x.split_whitespace().next()?.parse::<f64>().ok())
        };
        src.push(num("SOURCE_LOCATION"));
        rec.push(num("RECEIVER_LOCATION"));
        chan.push(num("CHANNEL_NUMBER").map_or(k as i64 + 1, |c| c as i64));
        delays.push(num("DELAY").unwrap_or(0.0));
        traces.push(v);
    }
    let Some(dt) = dt else {
        return Err(ReadError::format(
            path,
            "no trace gives a SAMPLE_INTERVAL; the time axis is unknown",
        ));
    };
    notes.insert(
        0,
        format!("sample interval {dt} s from the traces' SAMPLE_INTERVAL strings"),
    );
    if delays.iter().any(|&d| d != 0.0) {
        notes.push(format!(
            "DELAY fields (e.g. {}) were not applied by the reader: their sign and unit vary between instruments (picking checks them against the zero-offset trace)",
            delays.iter().find(|&&d| d != 0.0).copied().unwrap_or(0.0)
        ));
    }
    let ns_max = traces.iter().map(Vec::len).max().unwrap_or(0);
    if traces.iter().any(|t| t.len() != ns_max) {
        notes.push(format!(
            "traces differ in length; shorter ones are padded with zeros to {ns_max} samples"
        ));
    }
    let mut data = Array2::<f64>::zeros((traces.len(), ns_max));
    for (i, t) in traces.iter().enumerate() {
        for (j, &x) in t.iter().enumerate() {
            data[[i, j]] = x;
        }
    }
    let source_x_m = src.iter().flatten().next().copied();
    let receiver_x_m = rec
        .iter()
        .all(Option::is_some)
        .then(|| rec.iter().flatten().copied().collect());
    if let Some(i) = file_strings.get("INSTRUMENT") {
        notes.push(format!("instrument: {i}"));
    }
    Ok(ShotGather {
        data,
        sample_interval_s: dt,
        start_time_s: 0.0,
        unapplied_delay: delays.iter().copied().find(|&d| d != 0.0),
        source_x_m,
        receiver_x_m,
        channel: chan,
        record: file_strings
            .get("SHOT_SEQUENCE_NUMBER")
            .and_then(|x| x.parse().ok())
            .unwrap_or(1),
        format: "SEG-2".into(),
        sample_format,
        guessed: false,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PyRefra's shot 1 (oracle: geophysics.md §2 check 21, obspy `read(format="SEG2")`):
    /// 60 traces × 4096 samples, dt 0.25 ms, float samples with max |x| ≈ 0.060.
    #[test]
    fn pyrefra_shot_matches_obspy() {
        let p = crate::require_data!("seismic/pyrefra_example/Rec_00001.seg2");
        let g = read_seg2(&p).unwrap();
        assert_eq!((g.n_traces(), g.n_samples()), (60, 4096));
        assert!((g.sample_interval_s - 0.00025).abs() < 1e-15);
        assert_eq!(g.sample_format, "float32");
        let max = g.data.iter().fold(0.0f64, |a, &b| a.max(b.abs()));
        assert!((max - 0.060).abs() < 0.0005, "{max}");
        assert_eq!(g.source_x_m, Some(0.0));
        assert_eq!(g.receiver_x_m.as_ref().unwrap()[0], 0.0);
        assert!(g.notes.iter().any(|n| n.contains("DELAY")));
    }

    #[test]
    fn not_seg2_is_an_error_naming_the_bytes() {
        let e = parse_seg2(Path::new("x.sg2"), b"SEGY....").unwrap_err();
        assert!(e.to_string().contains("expected the SEG-2 block id"), "{e}");
        assert!(e.to_string().contains("53 45 47 59 at byte 0"), "{e}");
    }

    /// A hand-built little-endian file with one 20-bit packed trace: four samples
    /// 3·2⁰, −5·2¹ (one's complement −6 + 1), 7·2², 0 (Pullan 1990 format code 3).
    #[test]
    fn twenty_bit_packed_samples() {
        let mut b = vec![0u8; 32];
        b[0..2].copy_from_slice(&0x3a55u16.to_le_bytes());
        b[2..4].copy_from_slice(&1u16.to_le_bytes());
        b[4..6].copy_from_slice(&4u16.to_le_bytes());
        b[6..8].copy_from_slice(&1u16.to_le_bytes());
        b[8] = 1;
        b.extend_from_slice(&40u32.to_le_bytes()); // pointer → byte 40
        b.extend_from_slice(&[0, 0, 0, 0]); // end of file strings
        assert_eq!(b.len(), 40);
        let mut t = vec![0u8; 32];
        t[0..2].copy_from_slice(&0x4422u16.to_le_bytes());
        let s = b"SAMPLE_INTERVAL 0.001\0";
        let block = 32 + 2 + s.len() + 2;
        t[2..4].copy_from_slice(&(block as u16).to_le_bytes());
        t[8..12].copy_from_slice(&4u32.to_le_bytes());
        t[12] = 3;
        t.extend_from_slice(&((2 + s.len()) as u16).to_le_bytes());
        t.extend_from_slice(s);
        t.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&t);
        let exps: u16 = (1 << 4) | (2 << 8); // exponents 0, 1, 2, 0
        b.extend_from_slice(&exps.to_le_bytes());
        for m in [3i16, -6, 7, 0] {
            b.extend_from_slice(&m.to_le_bytes());
        }
        let g = parse_seg2(Path::new("p.sg2"), &b).unwrap();
        assert_eq!(g.data.row(0).to_vec(), vec![3.0, -10.0, 28.0, 0.0]);
        assert_eq!(g.sample_interval_s, 0.001);
        // Truncated: the error names the byte where samples were expected.
        let e = parse_seg2(Path::new("p.sg2"), &b[..b.len() - 3]).unwrap_err();
        assert!(
            e.to_string()
                .contains("expected 4 samples (10 bytes) of trace 1"),
            "{e}"
        );
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(mut bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..3000), le in proptest::bool::ANY) {
            if bytes.len() >= 4 && le {
                bytes[0] = 0x55; bytes[1] = 0x3a; bytes[2] = 1; bytes[3] = 0;
            }
            let _ = parse_seg2(Path::new("f.sg2"), &bytes);
        }

        #[test]
        fn mutated_real_file_never_panics(edits in proptest::collection::vec((0usize..1_100_000, proptest::num::u8::ANY), 1..8), cut in 0usize..1_100_000) {
            use std::sync::OnceLock;
            static REAL: OnceLock<Vec<u8>> = OnceLock::new();
            let real = REAL.get_or_init(|| {
                crate::field_data::data("seismic/pyrefra_example/Rec_00001.seg2")
                    .and_then(|p| std::fs::read(p).ok())
                    .unwrap_or_default()
            });
            if real.len() < 64 {
                return Ok(());
            }
            // Mutations concentrated in the headers (first 20 kB) half of the time.
            let mut b = real.clone();
            for (i, (pos, byte)) in edits.iter().enumerate() {
                let p = if i % 2 == 0 { pos % 20_000 } else { pos % b.len() };
                b[p] = *byte;
            }
            b.truncate(cut.max(1));
            let _ = parse_seg2(Path::new("f.sg2"), &b);
        }
    }
}

//! The record walk shared by MODFLOW's and MT3D's binary array files: a sequence of records,
//! each a header (step numbers, times, a 16-character name, NCOL, NROW, ILAY) followed by
//! NROW × NCOL reals, written as a Fortran stream (`ACCESS='STREAM'`, no record markers).
//!
//! Neither format stores its precision or byte order, so every encoding is tried — both
//! layouts ([`RecordLayout`]), single and double precision, little- then big-endian — and the
//! first whose headers are self-consistent over the whole file is taken: every name printable
//! ASCII with a letter in it, step numbers and dimensions in range, times finite and not
//! denormal, every record's data inside the file, the last record ending at the last byte.
//! The two layouts are told apart in single precision by the word at byte 8 (MODFLOW's
//! PERTIM, a real; MT3D's KPER, a small integer, which read as a real is denormal). When no
//! encoding fits, the refusal is the one that got furthest into the file (a cut file is
//! refused at the record it cuts, not at the header of a wrong guess).

use std::path::Path;

use ndarray::Array3;

use super::error::{HydroError, quoted_bytes};
use super::output::{
    HydroFormat, LayerOrder, MaskCounts, MaskOptions, ModelOutput, OutputRecord, Precision,
};
use crate::methods::shared::bytes::Bytes;

/// The header layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordLayout {
    /// KSTP, KPER (int), PERTIM, TOTIM (real), TEXT (16 chars), NCOL, NROW, ILAY (int):
    /// MODFLOW-2005 / NWT heads and drawdown, MODFLOW 6 heads and GWT concentrations.
    Modflow,
    /// NTRANS, KSTP, KPER (int), TIME2 (real), TEXT, NCOL, NROW, ILAY: MT3DMS / MT3D-USGS.
    Mt3d,
}

/// One way of reading the file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Encoding {
    /// Header layout.
    pub layout: RecordLayout,
    /// Precision of the reals (times and data).
    pub precision: Precision,
    /// Byte order.
    pub big_endian: bool,
}

impl Encoding {
    const fn new(layout: RecordLayout, precision: Precision, big_endian: bool) -> Self {
        Encoding {
            layout,
            precision,
            big_endian,
        }
    }

    /// Bytes of one record header.
    pub fn header_len(self) -> usize {
        let r = self.precision.bytes();
        match self.layout {
            RecordLayout::Modflow => 8 + 2 * r + 28,
            RecordLayout::Mt3d => 12 + r + 28,
        }
    }

    fn describe(self) -> String {
        format!(
            "{} layout, {} precision, {}",
            match self.layout {
                RecordLayout::Modflow => "MODFLOW (KSTP, KPER, PERTIM, TOTIM)",
                RecordLayout::Mt3d => "MT3D (NTRANS, KSTP, KPER, TIME2)",
            },
            self.precision.name(),
            if self.big_endian {
                "big-endian"
            } else {
                "little-endian"
            }
        )
    }
}

use Precision::{Double, Single};
use RecordLayout::{Modflow, Mt3d};

/// The order a heads or drawdown file is tried in.
pub const MODFLOW_FIRST: [Encoding; 8] = [
    Encoding::new(Modflow, Single, false),
    Encoding::new(Modflow, Double, false),
    Encoding::new(Mt3d, Single, false),
    Encoding::new(Mt3d, Double, false),
    Encoding::new(Modflow, Single, true),
    Encoding::new(Modflow, Double, true),
    Encoding::new(Mt3d, Single, true),
    Encoding::new(Mt3d, Double, true),
];

/// The order a `.ucn` is tried in (MODFLOW 6 GWT writes its `.ucn` in MODFLOW's layout).
pub const MT3D_FIRST: [Encoding; 8] = [
    Encoding::new(Mt3d, Single, false),
    Encoding::new(Mt3d, Double, false),
    Encoding::new(Modflow, Single, false),
    Encoding::new(Modflow, Double, false),
    Encoding::new(Mt3d, Single, true),
    Encoding::new(Mt3d, Double, true),
    Encoding::new(Modflow, Single, true),
    Encoding::new(Modflow, Double, true),
];

/// One record header as the file holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordHeader {
    /// Byte offset of the header.
    pub offset: usize,
    /// MT3D's NTRANS.
    pub ntrans: Option<i32>,
    /// KSTP.
    pub kstp: i32,
    /// KPER.
    pub kper: i32,
    /// MODFLOW's PERTIM, in the model's time unit.
    pub pertim: Option<f64>,
    /// TOTIM (MT3D: TIME2), in the model's time unit.
    pub totim: f64,
    /// The name, trimmed (`HEAD`, `DRAWDOWN`, `CONCENTRATION`).
    pub text: String,
    /// NCOL.
    pub ncol: usize,
    /// NROW.
    pub nrow: usize,
    /// ILAY (1-based).
    pub ilay: usize,
    /// `true` when the name is left-justified in its 16 characters (MODFLOW 6 writes it so).
    pub left_justified: bool,
}

/// Largest step number, stress period or transport step taken as real.
const MAX_STEP: i32 = 100_000_000;
/// Largest layer number taken as real.
const MAX_LAYER: i32 = 1_000_000;

/// A time is finite, zero or of a magnitude in [1e-30, 1e30]: a real of another encoding's
/// bytes is often denormal or huge.
fn plausible_time(v: f64) -> bool {
    v.is_finite() && (v == 0.0 || (1e-30..=1e30).contains(&v.abs()))
}

struct HeaderReader<'a> {
    path: &'a Path,
    b: Bytes<'a>,
    enc: Encoding,
    record: usize,
    at: usize,
}

impl HeaderReader<'_> {
    fn place(&self) -> String {
        format!(
            "record {} header ({})",
            self.record + 1,
            self.enc.describe()
        )
    }

    fn int(&self, rel: usize, name: &str, lo: i32, hi: i32) -> Result<i32, HydroError> {
        let off = self.at + rel;
        // In bounds: the caller checked the whole header is in the file.
        let v = self.b.i32(off).unwrap_or(i32::MIN);
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(HydroError::field(
                self.path,
                self.place(),
                off,
                format!("{name} between {lo} and {hi}"),
                v.to_string(),
            ))
        }
    }

    fn real(&self, rel: usize) -> f64 {
        let off = self.at + rel;
        match self.enc.precision {
            Single => self.b.f32(off).map_or(f64::NAN, f64::from),
            Double => self.b.f64(off).unwrap_or(f64::NAN),
        }
    }

    fn time(&self, rel: usize, name: &str) -> Result<f64, HydroError> {
        let v = self.real(rel);
        if plausible_time(v) {
            Ok(v)
        } else {
            Err(HydroError::field(
                self.path,
                self.place(),
                self.at + rel,
                format!(
                    "{name}, a time in the model's unit (0, or a finite {} real of magnitude 1e-30 to 1e30)",
                    self.enc.precision.name()
                ),
                format!("{v:e}"),
            ))
        }
    }

    fn text(&self, rel: usize) -> Result<(String, bool), HydroError> {
        let off = self.at + rel;
        let raw = self.b.slice(off, 16).unwrap_or(&[]);
        let printable = raw.len() == 16 && raw.iter().all(|c| (0x20..0x7f).contains(c));
        let s = String::from_utf8_lossy(raw).into_owned();
        let name = s.trim();
        if !printable || !name.bytes().any(|c| c.is_ascii_alphabetic()) {
            return Err(HydroError::field(
                self.path,
                self.place(),
                off,
                "a 16-character record name in printable ASCII such as '            HEAD'",
                quoted_bytes(raw),
            ));
        }
        let upper = name.to_ascii_uppercase();
        if ["HEADU", "DRAWDOWNU"].contains(&upper.as_str()) {
            return Err(HydroError::field(
                self.path,
                self.place(),
                off,
                "a structured-grid array record (MODFLOW-USG's unstructured records are not read)",
                quoted_bytes(raw),
            ));
        }
        Ok((name.to_string(), raw.first() != Some(&b' ')))
    }

    fn header(&self) -> Result<RecordHeader, HydroError> {
        let r = self.enc.precision.bytes();
        let (ntrans, kstp, kper, pertim, totim, after) = match self.enc.layout {
            Modflow => {
                let kstp = self.int(0, "KSTP", 0, MAX_STEP)?;
                let kper = self.int(4, "KPER", 0, MAX_STEP)?;
                let pertim = self.time(8, "PERTIM")?;
                let totim = self.time(8 + r, "TOTIM")?;
                (None, kstp, kper, Some(pertim), totim, 8 + 2 * r)
            }
            Mt3d => {
                let ntrans = self.int(0, "NTRANS", 0, MAX_STEP)?;
                let kstp = self.int(4, "KSTP", 0, MAX_STEP)?;
                let kper = self.int(8, "KPER", 1, MAX_STEP)?;
                let time = self.time(12, "TIME2")?;
                (Some(ntrans), kstp, kper, None, time, 12 + r)
            }
        };
        let (text, left_justified) = self.text(after)?;
        let ncol = self.int(after + 16, "NCOL", 1, i32::MAX)?;
        let nrow = self.int(after + 20, "NROW", 1, i32::MAX)?;
        let ilay = self.int(
            after + 24,
            "ILAY (a cross-section model's ILAY -1 is not read)",
            1,
            MAX_LAYER,
        )?;
        Ok(RecordHeader {
            offset: self.at,
            ntrans,
            kstp,
            kper,
            pertim,
            totim,
            text,
            // Positive and at most i32::MAX: fits usize on the 64-bit targets we build.
            ncol: ncol as usize,
            nrow: nrow as usize,
            ilay: ilay as usize,
            left_justified,
        })
    }
}

/// Bytes of one record's data, or `None` on overflow.
fn data_len(h: &RecordHeader, p: Precision) -> Option<usize> {
    h.ncol.checked_mul(h.nrow)?.checked_mul(p.bytes())
}

/// The headers of every record when the whole file reads as `enc`.
pub fn walk(path: &Path, bytes: &[u8], enc: Encoding) -> Result<Vec<RecordHeader>, HydroError> {
    let b = Bytes::le(bytes).with_big_endian(enc.big_endian);
    let hlen = enc.header_len();
    let mut out: Vec<RecordHeader> = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() || out.is_empty() {
        let reader = HeaderReader {
            path,
            b,
            enc,
            record: out.len(),
            at,
        };
        if at.checked_add(hlen).is_none_or(|end| end > bytes.len()) {
            return Err(HydroError::truncated(
                path,
                reader.place(),
                at,
                format!("a {hlen}-byte record header"),
                bytes.len(),
            ));
        }
        let h = reader.header()?;
        if let Some(first) = out.first()
            && (h.ncol, h.nrow) != (first.ncol, first.nrow)
        {
            return Err(HydroError::field(
                path,
                reader.place(),
                at + hlen - 12,
                format!(
                    "NCOL × NROW = {} × {}, as in record 1",
                    first.ncol, first.nrow
                ),
                format!("{} × {}", h.ncol, h.nrow),
            ));
        }
        let data_at = at + hlen;
        let need = data_len(&h, enc.precision);
        let end = need.and_then(|n| data_at.checked_add(n));
        match end {
            Some(end) if end <= bytes.len() => at = end,
            _ => {
                return Err(HydroError::truncated(
                    path,
                    format!("record {} data (ILAY {})", out.len() + 1, h.ilay),
                    data_at,
                    format!(
                        "{} bytes: {} × {} {}-precision values",
                        need.map_or("more than addressable".to_string(), |n| n.to_string()),
                        h.nrow,
                        h.ncol,
                        enc.precision.name()
                    ),
                    bytes.len(),
                ));
            }
        }
        out.push(h);
    }
    Ok(out)
}

/// A Fortran sequential unformatted file starts with a 4-byte record length equal to a
/// header's length and repeats it after the header: refused by name, not by a guess.
fn sequential_marker(path: &Path, bytes: &[u8]) -> Option<HydroError> {
    let b = Bytes::le(bytes);
    let first = b.u32(0)?;
    if ![44u32, 48, 52].contains(&first) {
        return None;
    }
    let closing = b.u32(4 + first as usize)?;
    (closing == first).then(|| {
        HydroError::field(
            path,
            "record 1 header",
            0,
            "a record header (KSTP or NTRANS first) of a stream (binary) file as MODFLOW and MT3D write it",
            format!(
                "a Fortran record marker {first} repeated after {first} bytes: a sequential unformatted file, which is not read"
            ),
        )
    })
}

/// The encoding the file reads as, and its headers: the first of `order` that fits the whole
/// file, or the refusal of the one that read furthest.
pub fn detect(
    path: &Path,
    bytes: &[u8],
    order: &[Encoding],
) -> Result<(Encoding, Vec<RecordHeader>), HydroError> {
    if let Some(e) = sequential_marker(path, bytes) {
        return Err(e);
    }
    let mut best: Option<HydroError> = None;
    for &enc in order {
        match walk(path, bytes, enc) {
            Ok(h) => return Ok((enc, h)),
            Err(e) => {
                let further = match &best {
                    None => true,
                    Some(b) => e.offset().unwrap_or(0) > b.offset().unwrap_or(0),
                };
                if further {
                    best = Some(e);
                }
            }
        }
    }
    Err(best.unwrap_or_else(|| {
        HydroError::field(path, "record 1 header", 0, "a record header", "nothing")
    }))
}

/// The encoding whose first record header reads from `head` (a file's first bytes) and
/// whose record length divides `file_len`: how a heads or concentration file is recognised
/// under another name. Strict: a name of letters, sizes that account for the whole file.
pub fn sniff(head: &[u8], file_len: u64) -> Option<Encoding> {
    MODFLOW_FIRST.into_iter().find(|&enc| {
        let reader = HeaderReader {
            path: Path::new(""),
            b: Bytes::le(head).with_big_endian(enc.big_endian),
            enc,
            record: 0,
            at: 0,
        };
        if head.len() < enc.header_len() {
            return false;
        }
        let Ok(h) = reader.header() else {
            return false;
        };
        if !h.text.bytes().all(|c| c.is_ascii_alphabetic() || c == b' ') {
            return false;
        }
        data_len(&h, enc.precision)
            .and_then(|n| n.checked_add(enc.header_len()))
            .is_some_and(|rec| file_len > 0 && file_len.is_multiple_of(rec as u64))
    })
}

/// The key that makes layer records one time record.
fn same_time(a: &RecordHeader, b: &RecordHeader) -> bool {
    a.ntrans == b.ntrans
        && a.kstp == b.kstp
        && a.kper == b.kper
        && a.totim.to_bits() == b.totim.to_bits()
        && a.text == b.text
}

/// Read the file as the first encoding of `order` that fits and assemble its records into
/// times (layers of one (NTRANS,) KSTP, KPER, time and name together), masking as `opts` says.
pub fn read_layered(
    path: &Path,
    bytes: &[u8],
    order: &[Encoding],
    opts: &MaskOptions,
) -> Result<ModelOutput, HydroError> {
    let (enc, headers) = detect(path, bytes, order)?;
    // `walk` returns at least one header on success.
    let Some(first) = headers.first() else {
        return Err(HydroError::field(
            path,
            "record 1 header",
            0,
            "a record",
            "none",
        ));
    };
    let (nrow, ncol) = (first.nrow, first.ncol);
    let nlay = headers.iter().map(|h| h.ilay).max().unwrap_or(1);
    // Group the layer records into times.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, h) in headers.iter().enumerate() {
        let joins = groups.last().is_some_and(|g| {
            let g0 = &headers[g[0]];
            same_time(g0, h) && g.iter().all(|&j| headers[j].ilay != h.ilay)
        });
        match groups.last_mut() {
            Some(g) if joins => g.push(i),
            _ => groups.push(vec![i]),
        }
    }
    // Unwritten layers are stored as NaN: refuse a layer number that would make the arrays
    // far larger than the values the file holds (a damaged ILAY).
    if groups.len().saturating_mul(nlay) > headers.len().saturating_mul(16) {
        let worst = headers.iter().max_by_key(|h| h.ilay).unwrap_or(first);
        return Err(HydroError::field(
            path,
            format!("record header with ILAY {}", worst.ilay),
            worst.offset + enc.header_len() - 4,
            format!(
                "ILAY within the layers the file writes ({} layer records in {} times)",
                headers.len(),
                groups.len()
            ),
            format!("ILAY {}", worst.ilay),
        ));
    }
    let b = Bytes::le(bytes).with_big_endian(enc.big_endian);
    let hlen = enc.header_len();
    let rbytes = enc.precision.bytes();
    let mut counts = MaskCounts::default();
    let mut records = Vec::with_capacity(groups.len());
    for g in &groups {
        let h0 = &headers[g[0]];
        let mut values = Array3::<f64>::from_elem((nlay, nrow, ncol), f64::NAN);
        let mut active = Array3::<bool>::from_elem((nlay, nrow, ncol), false);
        let mut written = vec![false; nlay];
        for &j in g {
            let h = &headers[j];
            let k = h.ilay - 1;
            written[k] = true;
            let mut off = h.offset + hlen;
            for (v, a) in values
                .index_axis_mut(ndarray::Axis(0), k)
                .iter_mut()
                .zip(active.index_axis_mut(ndarray::Axis(0), k).iter_mut())
            {
                // In bounds: `walk` checked every record's data lies in the file.
                let x = match enc.precision {
                    Single => b.f32(off).map_or(f64::NAN, f64::from),
                    Double => b.f64(off).unwrap_or(f64::NAN),
                };
                off += rbytes;
                *v = x;
                match opts.classify(x) {
                    None => *a = true,
                    Some(reason) => counts.add(reason),
                }
            }
        }
        let unwritten = written.iter().filter(|w| !**w).count();
        counts.not_written += unwritten * nrow * ncol;
        records.push(OutputRecord {
            kstp: Some(h0.kstp),
            kper: Some(h0.kper),
            ntrans: h0.ntrans,
            pertim: h0.pertim,
            totim: Some(h0.totim),
            output_index: None,
            quantity: h0.text.clone(),
            values,
            active,
        });
    }
    let mut notes = vec![format!("read as {}", enc.describe())];
    if enc.layout == Modflow {
        notes.push(if first.left_justified {
            "record names are left-justified, as MODFLOW 6 writes them".to_string()
        } else {
            "record names are right-justified, as MODFLOW-2005 / NWT write them".to_string()
        });
    }
    if nrow == 1 && enc.layout == Modflow && first.left_justified {
        notes.push(
            "NROW is 1: a MODFLOW 6 DISV or DISU grid writes the cells of a layer as NCOL; its .grb gives their places"
                .to_string(),
        );
    }
    if counts.not_written > 0 {
        notes.push(format!(
            "{} cells belong to layers a time did not write; they are NaN and masked",
            counts.not_written
        ));
    }
    Ok(ModelOutput {
        file: path.to_path_buf(),
        format: match enc.layout {
            Modflow => HydroFormat::ModflowBinary,
            Mt3d => HydroFormat::Mt3dUcn,
        },
        precision: enc.precision,
        big_endian: enc.big_endian,
        nlay,
        nrow,
        ncol,
        layer_order: LayerOrder::TopFirst,
        n_layer_records: headers.len(),
        records,
        mask_options: opts.clone(),
        mask_counts: counts,
        notes,
    })
}

/// Test and example support: the bytes of a binary array file with these records, each
/// `(ntrans, kstp, kper, pertim, totim, text, ilay, values)` with `values` NROW × NCOL in
/// row order. `ntrans` is used for the MT3D layout, `pertim` for MODFLOW's.
#[allow(clippy::type_complexity)]
pub fn write_layered(
    enc: Encoding,
    nrow: usize,
    ncol: usize,
    records: &[(i32, i32, i32, f64, f64, &str, i32, Vec<f64>)],
) -> Vec<u8> {
    let mut out = Vec::new();
    let be = enc.big_endian;
    let int = |out: &mut Vec<u8>, v: i32| {
        out.extend_from_slice(&if be { v.to_be_bytes() } else { v.to_le_bytes() })
    };
    let real = |out: &mut Vec<u8>, v: f64| match enc.precision {
        Single => {
            let x = v as f32;
            out.extend_from_slice(&if be { x.to_be_bytes() } else { x.to_le_bytes() })
        }
        Double => out.extend_from_slice(&if be { v.to_be_bytes() } else { v.to_le_bytes() }),
    };
    for (ntrans, kstp, kper, pertim, totim, text, ilay, values) in records {
        match enc.layout {
            Modflow => {
                int(&mut out, *kstp);
                int(&mut out, *kper);
                real(&mut out, *pertim);
                real(&mut out, *totim);
            }
            Mt3d => {
                int(&mut out, *ntrans);
                int(&mut out, *kstp);
                int(&mut out, *kper);
                real(&mut out, *totim);
            }
        }
        out.extend_from_slice(format!("{text:>16}").as_bytes().get(..16).unwrap_or(&[]));
        int(&mut out, ncol as i32);
        int(&mut out, nrow as i32);
        int(&mut out, *ilay);
        for v in values {
            real(&mut out, *v);
        }
    }
    out
}

//! ERT instrument readers: one module per format, a signature-based detector, and the
//! dispatcher [`read_survey`].
//!
//! Every reader parses from bytes already read (so property tests can feed arbitrary input),
//! never modifies the file, never panics, and reports a malformed file with its name, the
//! 1-based line, what was expected and what was found.

pub mod abem;
pub mod abem_ls;
pub mod ares;
pub mod das1;
pub mod e4d;
pub mod electra;
pub mod electrodes;
pub mod lippmann;
pub mod ohmpi;
pub mod plain_csv;
pub mod prime;
pub mod protocol;
pub mod res2dinv;
pub mod sting;
pub mod syscal;
pub mod unified;

use super::survey::{Electrode, Format, Quadrupole, Survey, SurveyTime};
use crate::methods::io::{self, ReadError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Which reader to use: `auto` (an unambiguous signature) or a named format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Instrument {
    /// Recognise the format by its signature; a weak signature is reported as a guess.
    #[default]
    Auto,
    /// pyGIMLi/BERT unified format.
    Unified,
    /// E4D `.srv`.
    E4d,
    /// Syscal CSV export.
    SyscalCsv,
    /// Syscal binary.
    SyscalBin,
    /// ABEM Lund `.ohm`.
    AbemLund,
    /// ABEM Terrameter LS / LS2 `.txt` export.
    AbemLs,
    /// Res2DInv `.dat`.
    Res2dinv,
    /// MPT DAS-1.
    Das1,
    /// AGI SuperSting `.stg`.
    Sting,
    /// R2 protocol.
    R2Protocol,
    /// ARES II.
    AresII,
    /// Lippmann `.tx0`.
    Lippmann,
    /// Electra `.ele`.
    Electra,
    /// OhmPi CSV.
    OhmPi,
    /// BGS PRIME `.tab`.
    BgsPrime,
    /// Plain CSV `a,b,m,n,R[,err]`.
    PlainCsv,
}

impl Instrument {
    /// The format this names (`None` for auto).
    pub fn format(self) -> Option<Format> {
        Some(match self {
            Instrument::Auto => return None,
            Instrument::Unified => Format::Unified,
            Instrument::E4d => Format::E4dSrv,
            Instrument::SyscalCsv => Format::SyscalCsv,
            Instrument::SyscalBin => Format::SyscalBin,
            Instrument::AbemLund => Format::AbemLund,
            Instrument::AbemLs => Format::AbemLs,
            Instrument::Res2dinv => Format::Res2dinv,
            Instrument::Das1 => Format::Das1,
            Instrument::Sting => Format::Sting,
            Instrument::R2Protocol => Format::R2Protocol,
            Instrument::AresII => Format::AresII,
            Instrument::Lippmann => Format::Lippmann,
            Instrument::Electra => Format::Electra,
            Instrument::OhmPi => Format::OhmPi,
            Instrument::BgsPrime => Format::BgsPrime,
            Instrument::PlainCsv => Format::PlainCsv,
        })
    }
}

/// A recognised format, whether the signature could be wrong, and what it rested on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Detection {
    /// The format.
    pub format: Format,
    /// True when the signature is weak (could be another format).
    pub guessed: bool,
    /// What the decision rested on.
    pub reason: String,
}

fn det(format: Format, guessed: bool, reason: &str) -> Option<Detection> {
    Some(Detection {
        format,
        guessed,
        reason: reason.to_string(),
    })
}

/// Recognise an ERT format from the file's bytes (and, for weak signatures, its extension).
/// `None` when nothing fits.
pub fn detect(path: &Path, bytes: &[u8]) -> Option<Detection> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if syscal::looks_like_bin(bytes) {
        return det(
            Format::SyscalBin,
            false,
            "binary header: Syscal version word and a 1024-byte comment, records of a known length",
        );
    }
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(200_000)]);
    let lines: Vec<&str> = text.lines().take(400).collect();
    let first = lines
        .iter()
        .find(|l| !l.trim().is_empty())
        .copied()
        .unwrap_or("");
    let has = |s: &str| lines.iter().any(|l| l.contains(s));
    if abem_ls::looks_like(&lines) {
        return det(
            Format::AbemLs,
            false,
            "tab-separated column header naming A(x) … M(x) (ABEM Terrameter LS export)",
        );
    }
    if first.contains("Prime") && has("data:") {
        return det(
            Format::BgsPrime,
            false,
            "first line names Prime and a 'data:' section",
        );
    }
    if first.contains("Advanced Geosciences")
        || lines.get(1).is_some_and(|l| l.contains("Records:"))
    {
        return det(Format::Sting, false, "AGI header with 'Records:'");
    }
    // Section tags at the start of a line (a text that only mentions them is not DAS-1).
    let starts = |tag: &str| text.lines().any(|l| l.trim_start().starts_with(tag));
    if starts("#data_start") && starts("#elec_start") {
        return det(
            Format::Das1,
            false,
            "#elec_start / #data_start sections (DAS-1)",
        );
    }
    if has("* Electrode positions *") || (has("* Data ***") && first.starts_with('*')) {
        return det(
            Format::Lippmann,
            false,
            "Lippmann '* Electrode positions *' / '* Data' blocks",
        );
    }
    if has("Measured data") && has("C1[el]") {
        return det(
            Format::AresII,
            false,
            "ARES 'Measured data:' with C1[el] columns",
        );
    }
    if electra::looks_like(&text) {
        return det(
            Format::Electra,
            false,
            "Electra '# Total enabled electrodes' / '# Meas.' blocks",
        );
    }
    let header = first.to_ascii_lowercase();
    if header.contains("spa.1") || header.contains("xa (m)") || header.contains("xa(m)") {
        return det(
            Format::SyscalCsv,
            false,
            "CSV header with Syscal electrode columns (Spa.1 / xA (m))",
        );
    }
    if header.contains("vmn_[mv]") || header.contains("r_[ohm]") || header.contains("iab_[ma]") {
        return det(
            Format::OhmPi,
            false,
            "OhmPi CSV header (vmn_[mV], iab_[mA], r_[Ohm])",
        );
    }
    if plain_csv::header_columns(first).is_some() {
        return det(
            Format::PlainCsv,
            false,
            "CSV header naming a, b, m, n and a resistance column",
        );
    }
    if has("{ first station coordinate }") || abem::has_protocol_line(&lines) {
        return det(
            Format::AbemLund,
            false,
            "ABEM Lund header (first station coordinate, .ORG protocol)",
        );
    }
    if unified::looks_like(&lines) {
        return det(
            Format::Unified,
            false,
            "count line followed by a '# x z' token line (unified format)",
        );
    }
    if e4d::looks_like(&lines) {
        let note = if ext == "srv" {
            "E4D layout: count, 'index x y z flag' rows, count, 'index a b m n R sd' rows"
        } else {
            "E4D layout (running index, x y z, flag) although the extension is not .srv"
        };
        return det(Format::E4dSrv, false, note);
    }
    if protocol::looks_like(&lines) {
        return det(
            Format::R2Protocol,
            ext != "dat",
            "a count line and rows 'index a b m n R …' with a running index (R2 protocol)",
        );
    }
    if res2dinv::looks_like(&lines) {
        return det(
            Format::Res2dinv,
            true,
            "title, spacing and a known array-type code on lines 1–3 (Res2DInv layout; the signature is weak)",
        );
    }
    None
}

/// Read one survey file. `instrument` = `Auto` recognises the format by signature (and
/// records in the result whether that was a guess); otherwise the named reader is used.
pub fn read_survey(path: &Path, instrument: Instrument) -> Result<Survey, ReadError> {
    let bytes = io::read_bytes(path)?;
    parse_survey(path, &bytes, instrument)
}

/// Read a survey and replace its electrode positions with those of an electrode table.
pub fn read_survey_with_electrodes(
    path: &Path,
    instrument: Instrument,
    electrode_file: &Path,
) -> Result<Survey, ReadError> {
    let mut survey = read_survey(path, instrument)?;
    let table = electrodes::read_electrode_table(electrode_file)?;
    electrodes::apply_electrode_table(&mut survey, &table, electrode_file)?;
    Ok(survey)
}

/// Parse a survey from bytes already read (`path` is used for messages and the file-name date).
pub fn parse_survey(
    path: &Path,
    bytes: &[u8],
    instrument: Instrument,
) -> Result<Survey, ReadError> {
    let (format, guessed, reason) = match instrument.format() {
        Some(f) => (f, false, format!("format chosen by the user: {}", f.name())),
        None => match detect(path, bytes) {
            Some(d) => (d.format, d.guessed, d.reason),
            None => {
                return Err(ReadError::format(
                    path,
                    "not a recognised ERT format (unified, E4D, Syscal csv/bin, ABEM Lund, ABEM Terrameter LS, Res2DInv, DAS-1, \
                     Sting, R2 protocol, ARES, Lippmann, Electra, OhmPi, PRIME, plain CSV); choose the \
                     instrument explicitly if you know it",
                ));
            }
        },
    };
    let mut survey = if format == Format::SyscalBin {
        syscal::parse_bin(path, bytes)?
    } else {
        let text = decode_text(bytes);
        // A text cut inside its last row is refused (issue 19); the unified and Res2DInv
        // readers check their own declared counts.
        if !matches!(format, Format::Unified | Format::Res2dinv) {
            crate::methods::truncated::check_last_row(path, &text)?;
        }
        match format {
            Format::Unified => unified::parse(path, &text)?,
            Format::E4dSrv => e4d::parse(path, &text)?,
            Format::SyscalCsv => syscal::parse_csv(path, &text)?,
            Format::AbemLund => abem::parse(path, &text)?,
            Format::AbemLs => abem_ls::parse(path, &text)?,
            Format::Res2dinv => res2dinv::parse(path, &text)?,
            Format::Das1 => das1::parse(path, &text)?,
            Format::Sting => sting::parse(path, &text)?,
            Format::R2Protocol => protocol::parse(path, &text)?,
            Format::AresII => ares::parse(path, &text)?,
            Format::Lippmann => lippmann::parse(path, &text)?,
            Format::Electra => electra::parse(path, &text)?,
            Format::OhmPi => ohmpi::parse(path, &text)?,
            Format::BgsPrime => prime::parse(path, &text)?,
            Format::PlainCsv => plain_csv::parse(path, &text)?,
            Format::SyscalBin => unreachable!("handled above"),
        }
    };
    survey.format = format;
    survey.format_guessed = guessed;
    survey.source_file = Some(path.to_path_buf());
    survey
        .notes
        .insert(0, format!("format: {} ({reason})", format.name()));
    if survey.valid.len() != survey.quadrupoles.len() {
        survey.valid = vec![true; survey.quadrupoles.len()];
    }
    if survey.survey_time.is_none() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some((y, m, d)) = io::year_first_date(&name) {
            survey.survey_time = Some(SurveyTime {
                year: y,
                month: m,
                day: d,
                time_of_day: None,
                source: "file name (year-first date)".into(),
            });
        }
    }
    check_indices(path, &survey)?;
    let layout = survey.layout();
    if !layout.is_surface_line() {
        survey
            .notes
            .push(format!("electrode layout: {}", layout.describe()));
    }
    Ok(survey)
}

/// Text from bytes: UTF-8 when valid, otherwise Latin-1 (instrument exports often are).
pub fn decode_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|&b| b as char).collect(),
    }
}

/// Every quadrupole index points at an electrode (a reader bug or a corrupt file otherwise).
fn check_indices(path: &Path, s: &Survey) -> Result<(), ReadError> {
    let n = s.electrodes.len();
    for (i, q) in s.quadrupoles.iter().enumerate() {
        for e in [q.a, q.b, q.m, q.n].into_iter().flatten() {
            if e >= n {
                return Err(ReadError::format(
                    path,
                    format!(
                        "datum {} refers to electrode {} but only {} electrodes are defined",
                        i + 1,
                        e + 1,
                        n
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Lines of a text with their 1-based numbers (CR stripped).
pub(crate) fn numbered_lines(text: &str) -> Vec<(usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')))
        .collect()
}

/// Electrodes from positions: unique (x, y, z) triples (to 1 µm) sorted by x, y, z, and a
/// lookup from a position to its index. Positions beyond ±9999 m are remote (pole) electrodes.
pub(crate) struct PositionIndex {
    keys: Vec<(i64, i64, i64)>,
    /// The electrodes, sorted.
    pub electrodes: Vec<Electrode>,
}

/// Whether a coordinate is an instrument's "remote electrode" code (|x| ≥ 9999 m).
pub(crate) fn is_remote(x: f64) -> bool {
    !x.is_finite() || x.abs() >= 9999.0
}

impl PositionIndex {
    fn key(p: [f64; 3]) -> (i64, i64, i64) {
        let q = |v: f64| (v * 1e6).round().clamp(-9e18, 9e18) as i64;
        (q(p[0]), q(p[1]), q(p[2]))
    }

    /// Build from all positions met in the data (remote ones left out).
    pub fn new(positions: impl IntoIterator<Item = [f64; 3]>) -> Self {
        // Sorted by the quantised key (then by value), so that `keys` is sorted for the
        // binary search even when two positions less than 1 µm apart order differently in
        // x and in y.
        let mut pts: Vec<((i64, i64, i64), [f64; 3])> = positions
            .into_iter()
            .filter(|p| !is_remote(p[0]))
            .map(|p| (Self::key(p), p))
            .collect();
        pts.sort_by(|(ka, a), (kb, b)| {
            ka.cmp(kb)
                .then(a[0].total_cmp(&b[0]))
                .then(a[1].total_cmp(&b[1]))
                .then(a[2].total_cmp(&b[2]))
        });
        let mut keys = Vec::new();
        let mut electrodes = Vec::new();
        for (k, p) in pts {
            if keys.last() != Some(&k) {
                keys.push(k);
                electrodes.push(Electrode::at(p[0], p[1], p[2]));
            }
        }
        PositionIndex { keys, electrodes }
    }

    /// The index of the electrode at `p`; `None` for a remote electrode.
    pub fn index(&self, p: [f64; 3]) -> Option<usize> {
        if is_remote(p[0]) {
            return None;
        }
        self.keys.binary_search(&Self::key(p)).ok()
    }

    /// For readers whose files give A, B, M, N as positions: the quadrupoles, and the distinct
    /// positions as electrodes numbered as [`Self::new`] numbers them.
    pub fn quadrupoles(pos: &[[[f64; 3]; 4]]) -> (Vec<Quadrupole>, Vec<Electrode>) {
        let index = Self::new(pos.iter().flat_map(|p| p.iter().copied()));
        let quads = pos
            .iter()
            .map(|p| Quadrupole {
                a: index.index(p[0]),
                b: index.index(p[1]),
                m: index.index(p[2]),
                n: index.index(p[3]),
            })
            .collect();
        (quads, index.electrodes)
    }
}

/// Electrodes for instrument numbers (labels) when the file gives no positions: the used
/// numbers sorted, placed at `spacing_m` times (number − smallest number). Returns the
/// electrodes and a lookup from number to index.
pub(crate) fn electrodes_from_numbers(
    numbers: impl IntoIterator<Item = i64>,
    spacing_m: f64,
) -> (Vec<Electrode>, std::collections::BTreeMap<i64, usize>) {
    let set: std::collections::BTreeSet<i64> = numbers.into_iter().collect();
    let min = set.iter().next().copied().unwrap_or(0);
    let mut map = std::collections::BTreeMap::new();
    let mut el = Vec::new();
    for (i, n) in set.iter().enumerate() {
        map.insert(*n, i);
        el.push(Electrode {
            x_m: (n - min) as f64 * spacing_m,
            y_m: 0.0,
            z_m: 0.0,
            label: Some(n.to_string()),
        });
    }
    (el, map)
}

/// A date written with slashes (`d/m/yyyy` or `m/d/yyyy`): decided when one of the first two
/// numbers is above 12, otherwise ambiguous. Also reads year-first `yyyy-mm-dd`.
pub(crate) enum DateRead {
    /// Year, month, day.
    Date(i32, u32, u32),
    /// Both orders are possible: the text, for the question to the user.
    Ambiguous(String),
}

pub(crate) fn read_date(token: &str) -> Option<DateRead> {
    let t = token.trim();
    if let Some((y, m, d)) = io::year_first_date(t) {
        return Some(DateRead::Date(y, m, d));
    }
    let parts: Vec<&str> = t.split('/').collect();
    if parts.len() != 3 {
        return None;
    }
    let a: u32 = parts[0].trim().parse().ok()?;
    let b: u32 = parts[1].trim().parse().ok()?;
    let y_str: String = parts[2]
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    let y: i32 = y_str.parse().ok()?;
    if !(1950..=2100).contains(&y) || a == 0 || b == 0 || a > 31 || b > 31 {
        return None;
    }
    if a > 12 && b <= 12 {
        Some(DateRead::Date(y, b, a))
    } else if (b > 12 && a <= 12) || a == b {
        Some(DateRead::Date(y, a, b))
    } else {
        Some(DateRead::Ambiguous(t.to_string()))
    }
}

/// Record a date read from the file into `s` (a decided date as the survey time, an
/// ambiguous one as a question).
pub(crate) fn set_date(s: &mut Survey, token: &str, time_of_day: Option<String>, source: &str) {
    match read_date(token) {
        Some(DateRead::Date(year, month, day)) if s.survey_time.is_none() => {
            s.survey_time = Some(SurveyTime {
                year,
                month,
                day,
                time_of_day,
                source: source.to_string(),
            });
        }
        Some(DateRead::Ambiguous(text)) if s.survey_time.is_none() && s.time_question.is_none() => {
            s.time_question = Some(format!(
                "The file gives the date '{text}' ({source}), which can be read day/month or \
                 month/day. Which is it?"
            ));
        }
        _ => {}
    }
}

/// Parse a number, accepting NaN-like placeholders as NaN (`nan`, `-`, `*`).
pub(crate) fn value_or_nan(tok: &str) -> Option<f64> {
    let t = tok.trim();
    if t.eq_ignore_ascii_case("nan") || t == "-" || t == "*" || t.is_empty() {
        return Some(f64::NAN);
    }
    io::parse_f64(t)
}

/// An index token (integer written possibly as `3.0`).
pub(crate) fn parse_index(tok: &str) -> Option<i64> {
    let v = io::parse_f64(tok)?;
    if v.fract() != 0.0 || v.abs() > 1e9 {
        return None;
    }
    Some(v as i64)
}

//! Readers for TDEM sounding files: `time, response` and `time, snd1, snd2, …` tables (with
//! an optional geometry table), TEM-FAST text exports (`.tem`) and the Universal Sounding
//! Format (`.usf`). Readers only read; every problem is a [`ReadError`] naming the file, the
//! line, what was expected and what was found.

use super::data::{MaskLimits, MaskReason, Position, ResponseUnit, Sounding};
use super::forward::{LoopShape, Receiver, TemSystem, Waveform};
use crate::methods::io::{ReadError, parse_f64, read_text};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Which format a file was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TdemFormat {
    /// `time, response` (one sounding) or `time, snd1, snd2, …` (a line), comma or
    /// whitespace separated, one header row.
    Table,
    /// TEM-FAST 48 text export.
    TemFast,
    /// Universal Sounding Format.
    Usf,
}

/// Options a caller can give a reader (what the file cannot say).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ReadOptions {
    /// The unit of the values when the file does not state it (tables).
    pub unit: Option<ResponseUnit>,
    /// Thresholds of the automatic gate mask.
    pub mask_limits: MaskLimits,
}

/// The soundings of one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TdemFile {
    /// The format read.
    pub format: TdemFormat,
    /// Whether the format was recognised only by a weak signature (extension or layout).
    pub format_guessed: bool,
    /// The soundings in file order.
    pub soundings: Vec<Sounding>,
    /// File-level notes (what was assumed).
    pub notes: Vec<String>,
    /// Survey dates the file states (`yyyy-mm-dd`, sorted, without repeats): the TEM-FAST
    /// `Date:` header, the USF `DATE` key, or a year-first date in a table's file name.
    #[serde(default)]
    pub survey_dates: Vec<String>,
}

/// One row of a geometry table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeometryRow {
    /// The sounding identifier as written.
    pub sounding: String,
    /// The position.
    pub position: Position,
}

/// Read a TDEM file, choosing the reader by extension (`.tem`, `.usf`) and otherwise by
/// content (a table whose first column is a time).
pub fn read_tdem_file(path: &Path, options: &ReadOptions) -> Result<TdemFile, ReadError> {
    match extension(path).as_str() {
        "tem" => read_temfast(path, options),
        "usf" => read_usf(path, options),
        _ => read_table(path, options),
    }
}

fn extension(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Split a table line: on commas (keeping empty fields) when it has any, else on
/// semicolons, tabs or runs of spaces.
fn split_row(line: &str) -> Vec<&str> {
    if line.contains(',') {
        line.split(',').map(str::trim).collect()
    } else {
        line.split([';', '\t', ' '])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect()
    }
}

/// The time factor to seconds a header name implies, and whether it was stated.
fn time_factor(name: &str) -> (f64, bool) {
    let n = name.to_ascii_lowercase();
    if n.contains("us") || n.contains("µs") || n.contains("μs") || n.contains("micro") {
        (1e-6, true)
    } else if n.contains("ms") || n.contains("milli") {
        (1e-3, true)
    } else if n.ends_with("_s") || n.contains("[s]") || n.contains("(s)") || n.contains("sec") {
        (1.0, true)
    } else {
        (1.0, false)
    }
}

/// A response unit stated in a column name, if any.
fn unit_in_name(name: &str) -> Option<ResponseUnit> {
    let n = name
        .to_ascii_lowercase()
        .replace([' ', '·', '*', '(', ')', '[', ']'], "");
    if n.contains("v/am4")
        || n.contains("v_per_am4")
        || n.contains("v/a/m4")
        || n.contains("v/am^4")
    {
        Some(ResponseUnit::VoltPerAmpM4)
    } else if n.contains("v/am2")
        || n.contains("v_per_am2")
        || n.contains("v/am^2")
        || n.contains("t/s")
    {
        Some(ResponseUnit::VoltPerAmpM2)
    } else if n.contains("v/a") || n.contains("v_per_a") {
        Some(ResponseUnit::VoltPerAmp)
    } else if n.ends_with("_t") || n.contains("t/a") || n.contains("tesla") {
        Some(ResponseUnit::TeslaPerAmp)
    } else {
        None
    }
}

fn is_error_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["err", "std", "sd", "sigma", "st_dev", "stdev", "uncert"]
        .iter()
        .any(|p| n.starts_with(p))
}

/// Easting/northing written into a column name such as `dBdt_E603036_N6413476`.
fn position_in_name(name: &str) -> Position {
    let grab = |tag: char| -> Option<f64> {
        let parts: Vec<&str> = name.split('_').collect();
        parts.iter().find_map(|p| {
            let mut c = p.chars();
            (c.next() == Some(tag))
                .then(|| p[1..].parse::<f64>().ok())
                .flatten()
        })
    };
    Position {
        easting_m: grab('E'),
        northing_m: grab('N'),
        ..Position::default()
    }
}

/// Read a `time, response` or `time, snd1, snd2, …` table.
///
/// The first column is the gate time (unit from its name: `_us`/`µs`, `_ms`, `_s`; seconds
/// assumed and noted otherwise); error columns (`err…`, `std…`, `sigma…`) belong to the
/// single value column or to the column they name (`err_snd1`); every other column is one
/// sounding. A column that is mostly negative is multiplied by −1 (z-up sign convention)
/// and the note says so.
pub fn read_table(path: &Path, options: &ReadOptions) -> Result<TdemFile, ReadError> {
    let text = read_text(path)?;
    crate::methods::truncated::check_last_row(path, &text)?;
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let Some((header_no, header_line)) = lines.next() else {
        return Err(ReadError::format(
            path,
            "the file is empty: no header and no data rows",
        ));
    };
    let header: Vec<String> = split_row(header_line)
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut notes = Vec::new();
    let has_header = header.first().is_some_and(|h| parse_f64(h).is_none());
    let (names, mut rows_src): (Vec<String>, Vec<(usize, &str)>) = if has_header {
        (header.clone(), lines.collect())
    } else {
        notes
            .push("no header row: column 1 read as time in s, the others as soundings".to_string());
        let n = header.len();
        let names = std::iter::once("time".to_string())
            .chain((1..n).map(|i| format!("sounding_{i}")))
            .collect();
        let mut all = vec![(header_no, header_line)];
        all.extend(lines);
        (names, all)
    };
    if names.len() < 2 {
        return Err(ReadError::malformed(
            path,
            header_no,
            "a header with a time column and at least one response column",
            header_line,
        ));
    }
    let first = names[0].to_ascii_lowercase();
    if has_header
        && !(first.starts_with("time") || first.starts_with('t') || first.contains("gate"))
    {
        return Err(ReadError::malformed(
            path,
            header_no,
            "a first column named time (time_s, time_us, t, …)",
            header_line,
        ));
    }
    let (tfac, t_stated) = time_factor(&names[0]);
    if !t_stated {
        notes.push(format!(
            "time column '{}' has no unit: read as seconds",
            names[0]
        ));
    }
    let ncol = names.len();
    let mut cols: Vec<Vec<f64>> = vec![Vec::new(); ncol];
    rows_src.retain(|(_, l)| !l.trim().is_empty());
    for (line_no, line) in &rows_src {
        let f = split_row(line);
        if f.len() < ncol {
            return Err(ReadError::malformed(
                path,
                *line_no,
                format!("{ncol} values (as many as header columns)"),
                line,
            ));
        }
        for (c, col) in cols.iter_mut().enumerate() {
            let tok = f[c];
            let v = if tok.is_empty() || tok.eq_ignore_ascii_case("nan") {
                f64::NAN
            } else {
                parse_f64(tok)
                    .ok_or_else(|| ReadError::malformed(path, *line_no, "a number", tok))?
            };
            col.push(v);
        }
    }
    if cols[0].is_empty() {
        return Err(ReadError::format(
            path,
            "the table has a header but no data rows",
        ));
    }
    let times: Vec<f64> = cols[0].iter().map(|t| t * tfac).collect();
    let value_cols: Vec<usize> = (1..ncol).filter(|&c| !is_error_name(&names[c])).collect();
    if value_cols.is_empty() {
        return Err(ReadError::malformed(
            path,
            header_no,
            "at least one response column besides time and errors",
            header_line,
        ));
    }
    let error_cols: Vec<usize> = (1..ncol).filter(|&c| is_error_name(&names[c])).collect();
    let header_unit = names.iter().find_map(|n| unit_in_name(n));
    let mut soundings = Vec::new();
    for &c in &value_cols {
        let name = names[c].clone();
        let err_col = if value_cols.len() == 1 && error_cols.len() == 1 {
            Some(error_cols[0])
        } else {
            let lname = name.to_ascii_lowercase();
            error_cols
                .iter()
                .copied()
                .find(|&e| names[e].to_ascii_lowercase().ends_with(&lname))
        };
        let (unit, unit_stated, unit_note) =
            match (unit_in_name(&name).or(header_unit), options.unit) {
                (Some(u), _) => (u, true, None),
                (None, Some(u)) => (
                    u,
                    true,
                    Some(format!("unit {} given by the caller", u.label())),
                ),
                (None, None) => {
                    let l = name.to_ascii_lowercase();
                    let u = if l.contains("dbdt") || l.contains("dbzdt") {
                        ResponseUnit::VoltPerAmpM2
                    } else {
                        ResponseUnit::VoltPerAmp
                    };
                    (
                        u,
                        false,
                        Some(format!("unit not stated: assumed {}", u.label())),
                    )
                }
            };
        let mut values = cols[c].clone();
        let mut errors = err_col.map(|e| cols[e].iter().map(|x| x.abs()).collect::<Vec<f64>>());
        let mut snotes: Vec<String> = unit_note.into_iter().collect();
        let finite: Vec<f64> = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && *v != 0.0)
            .collect();
        let negatives = finite.iter().filter(|v| **v < 0.0).count();
        if !finite.is_empty() && negatives * 2 > finite.len() {
            values.iter_mut().for_each(|v| *v = -*v);
            snotes.push(format!(
                "{negatives} of {} values were negative (z-up convention): multiplied by −1",
                finite.len()
            ));
        }
        if let Some(e) = errors.as_mut() {
            e.iter_mut().for_each(|x| *x = x.abs());
        }
        let mut s = Sounding {
            name: name.clone(),
            times_s: times.clone(),
            values,
            errors,
            unit,
            unit_stated,
            instrument_rhoa_ohm_m: None,
            position: position_in_name(&name),
            system: None,
            mask: vec![None; times.len()],
            stacks: None,
            notes: snotes,
        };
        s.remask(&options.mask_limits);
        soundings.push(s);
    }
    if value_cols.len() > 1
        && !error_cols.is_empty()
        && soundings.iter().all(|s| s.errors.is_none())
    {
        notes.push("error columns could not be matched to soundings by name: ignored".to_string());
    }
    notes.push(
        "the system (loop, receiver, waveform) is not in a table: it must be given".to_string(),
    );
    let survey_dates: Vec<String> = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(crate::methods::io::year_first_date)
        .map(|(y, m, d)| format!("{y:04}-{m:02}-{d:02}"))
        .into_iter()
        .collect();
    if let Some(d) = survey_dates.first() {
        notes.push(format!("survey date {d} read from the file name"));
    }
    Ok(TdemFile {
        format: TdemFormat::Table,
        format_guessed: !has_header,
        soundings,
        notes,
        survey_dates,
    })
}

/// The number following `key` in `line` (case-insensitive), e.g. `I=1.0` or `Stacks 11`.
fn number_after(line: &str, key: &str) -> Option<f64> {
    let lower = line.to_ascii_lowercase();
    let at = lower.find(&key.to_ascii_lowercase())? + key.len();
    let rest = line.get(at..)?;
    let tok: String = rest
        .trim_start_matches(|c: char| c.is_whitespace() || c == '=' || c == ':')
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
        .collect();
    parse_f64(&tok)
}

/// Read a TEM-FAST 48 text export: one or more blocks, each a header (`TEM-FAST …`,
/// `Time-Range … Stacks … deff= … I=… A`, `T-LOOP (m) … R-LOOP (m) … TURN= …`,
/// `Location:x= … y= … z= …`) and a table `Channel Time[µs] E/I[V/A] Err[V/A] Res[Ω·m]`.
///
/// The loops are squares of the given sides; equal sides are read as a single coincident
/// loop, different ones as a central receiver loop (noted). `deff` is recorded in the notes
/// and as a linear ramp of that length (pyGIMLi reads the same field as the ramp time; the
/// file does not say what it is, so this is marked as a guess).
pub fn read_temfast(path: &Path, options: &ReadOptions) -> Result<TdemFile, ReadError> {
    let text = read_text(path)?;
    crate::methods::truncated::check_last_row(path, &text)?;
    let lines: Vec<&str> = text.lines().collect();
    let starts: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.to_ascii_uppercase().contains("TEM-FAST"))
        .map(|(i, _)| i)
        .collect();
    if starts.is_empty() {
        return Err(ReadError::format(
            path,
            "no 'TEM-FAST' header line found: not a TEM-FAST export",
        ));
    }
    let mut soundings = Vec::new();
    let mut sets = Vec::new();
    let mut dates = Vec::new();
    for (b, &start) in starts.iter().enumerate() {
        let end = starts.get(b + 1).copied().unwrap_or(lines.len());
        let (sounding, set) = read_temfast_block(path, &lines, start, end, options)?;
        soundings.push(sounding);
        sets.push(set);
        dates.extend(temfast_date(lines[start]));
    }
    dates.sort();
    dates.dedup();
    let notes = unique_names(&mut soundings, &sets);
    Ok(TdemFile {
        format: TdemFormat::TemFast,
        format_guessed: false,
        soundings,
        notes,
        survey_dates: dates,
    })
}

/// The TEM-FAST export's "no value" in its ρa column.
const TEMFAST_NO_VALUE: f64 = 99999.99;

/// Make sounding names unique (a multi-sounding export repeats its `Place`): a repeated name
/// takes its block's `#Set` label, `"<place> <set>"`, and where that still repeats, its block
/// number, `"<place> (sounding k)"`. Returns a note when any name changed.
fn unique_names(soundings: &mut [Sounding], sets: &[Option<String>]) -> Vec<String> {
    let count = |names: Vec<&String>| {
        let mut seen = std::collections::HashMap::<String, usize>::new();
        for n in names {
            *seen.entry(n.clone()).or_default() += 1;
        }
        seen
    };
    let before = count(soundings.iter().map(|s| &s.name).collect());
    if before.values().all(|n| *n == 1) {
        return vec![];
    }
    for (s, set) in soundings.iter_mut().zip(sets) {
        if let (Some(set), true) = (set, before.get(&s.name).is_some_and(|n| *n > 1)) {
            s.name = format!("{} {set}", s.name);
        }
    }
    let after = count(soundings.iter().map(|s| &s.name).collect());
    for (k, s) in soundings.iter_mut().enumerate() {
        if after.get(&s.name).is_some_and(|n| *n > 1) {
            s.name = format!("{} (sounding {})", s.name, k + 1);
        }
    }
    let mut repeated: Vec<&String> = before
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(k, _)| k)
        .collect();
    repeated.sort();
    vec![format!(
        "blocks share a name ({}): each is named by its set label or, failing that, its block number",
        repeated
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    )]
}

/// The date of a TEM-FAST header line (`TEM-FAST 48 HPC/S2  Date: Fri Oct 12 03:23:31 2012`)
/// as `yyyy-mm-dd`: the month is a name, so day and month cannot be confused.
fn temfast_date(line: &str) -> Option<String> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let lower = line.to_ascii_lowercase();
    let rest = &lower[lower.find("date")? + 4..];
    let toks: Vec<&str> = rest
        .split(|c: char| c.is_whitespace() || c == ':' || c == ',')
        .filter(|t| !t.is_empty())
        .collect();
    let (mi, month) = toks.iter().enumerate().find_map(|(i, t)| {
        MONTHS
            .iter()
            .position(|m| t.starts_with(m))
            .map(|m| (i, m + 1))
    })?;
    let day: u32 = toks.get(mi + 1)?.parse().ok()?;
    let year: i32 = toks
        .iter()
        .filter_map(|t| t.parse::<i32>().ok())
        .find(|y| (1950..=2100).contains(y))?;
    (1..=31)
        .contains(&day)
        .then(|| format!("{year:04}-{month:02}-{day:02}"))
}

fn read_temfast_block(
    path: &Path,
    lines: &[&str],
    start: usize,
    end: usize,
    options: &ReadOptions,
) -> Result<(Sounding, Option<String>), ReadError> {
    let mut notes = Vec::new();
    let (mut current, mut deff_us, mut tx_side, mut rx_side, mut turns) =
        (None, None, None, None, None);
    let mut position = Position::default();
    let mut name = format!("sounding at line {}", start + 1);
    let (mut set, mut time_key, mut stacks, mut filter_hz) = (None, None, None, None);
    let mut table_at = None;
    for (i, line) in lines.iter().enumerate().take(end).skip(start) {
        let upper = line.to_ascii_uppercase();
        if upper.starts_with("PLACE") {
            if let Some((_, v)) = line.split_once(':') {
                let v = v.trim();
                if !v.is_empty() {
                    name = v.to_string();
                }
            }
        } else if upper.starts_with("#SET") {
            let v = line.get(4..).unwrap_or("").trim();
            if !v.is_empty() {
                set = Some(v.to_string());
            }
        } else if upper.starts_with("COMMENTS") {
            if let Some((_, v)) = line.split_once(':') {
                let v = v.trim();
                if !v.is_empty() && v != "0" {
                    notes.push(format!("comment in the header: '{v}'"));
                }
            }
        } else if upper.contains("TIME-RANGE") {
            current = number_after(line, "I=");
            deff_us = number_after(line, "deff=");
            time_key = number_after(line, "Time-Range");
            stacks = number_after(line, "Stacks")
                .filter(|s| s.is_finite() && *s >= 1.0 && *s <= 1e9)
                .map(|s| s.round() as u32);
            filter_hz = number_after(line, "FILTR=");
        } else if upper.contains("T-LOOP") {
            tx_side = number_after(line, "T-LOOP (m)").or_else(|| number_after(line, "T-LOOP"));
            rx_side = number_after(line, "R-LOOP (m)").or_else(|| number_after(line, "R-LOOP"));
            turns = number_after(line, "TURN=");
        } else if upper.starts_with("LOCATION") {
            position.easting_m = number_after(line, "x=");
            position.northing_m = number_after(line, "y=");
            position.elevation_m = number_after(line, "z=");
        } else if upper.trim_start().starts_with("CHANNEL") {
            table_at = Some(i);
            break;
        }
    }
    let Some(table_at) = table_at else {
        return Err(ReadError::malformed(
            path,
            start + 1,
            "a 'Channel Time E/I Err Res' table header in this TEM-FAST block",
            "end of block",
        ));
    };
    let tx_side = tx_side.ok_or_else(|| {
        ReadError::malformed(
            path,
            start + 1,
            "a 'T-LOOP (m) <side>' line in the block header",
            "none",
        )
    })?;
    if tx_side.is_nan() || tx_side <= 0.0 {
        return Err(ReadError::malformed(
            path,
            start + 1,
            "a positive T-LOOP side",
            tx_side.to_string(),
        ));
    }
    let (mut times, mut values, mut errors, mut rhoa) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, line) in lines.iter().enumerate().take(end).skip(table_at + 1) {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 {
            return Err(ReadError::malformed(
                path,
                i + 1,
                "channel, time [µs], E/I [V/A], error [V/A] (and ρa)",
                line,
            ));
        }
        let mut nums = Vec::with_capacity(5);
        for tok in f.iter().take(5) {
            nums.push(
                parse_f64(tok).ok_or_else(|| ReadError::malformed(path, i + 1, "a number", tok))?,
            );
        }
        times.push(nums[1] * 1e-6);
        values.push(nums[2]);
        errors.push(nums[3].abs());
        // 99999.99 is the instrument's "no value" in the ρa column.
        rhoa.push(
            nums.get(4)
                .copied()
                .filter(|r| (r.abs() - TEMFAST_NO_VALUE).abs() > 1e-6)
                .unwrap_or(f64::NAN),
        );
    }
    let acquisition: Vec<String> = [
        time_key.map(|k| format!("time range key {k}")),
        stacks.map(|n| format!("{n} stacks")),
        filter_hz.map(|f| format!("{f} Hz mains filter")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !acquisition.is_empty() {
        notes.push(format!(
            "acquisition: {} ({} gates, {:.3e} to {:.3e} s)",
            acquisition.join(", "),
            times.len(),
            times.first().copied().unwrap_or(f64::NAN),
            times.last().copied().unwrap_or(f64::NAN)
        ));
    }
    if times.is_empty() {
        return Err(ReadError::malformed(
            path,
            table_at + 2,
            "at least one data row",
            "end of block",
        ));
    }
    let current_a = current.unwrap_or_else(|| {
        notes.push("no current 'I=' in the header: 1 A assumed".into());
        1.0
    });
    let turns = turns.unwrap_or(1.0).max(1.0);
    let rx = rx_side.unwrap_or(tx_side);
    let receiver = if (rx - tx_side).abs() <= 1e-9 * tx_side {
        Receiver::Coincident { turns }
    } else {
        notes.push(format!(
            "R-LOOP {rx} m ≠ T-LOOP {tx_side} m: read as a central receiver loop of {rx} m side"
        ));
        Receiver::Central {
            area_m2: rx * rx,
            turns,
        }
    };
    let waveform = match deff_us {
        Some(d) if d > 0.0 => {
            notes.push(format!(
                "header 'deff= {d} us' read as a linear turn-off ramp of {d} µs ending at t = 0 (a guess: pyGIMLi reads it as the ramp time)"
            ));
            Waveform::LinearRamp { ramp_s: d * 1e-6 }
        }
        _ => Waveform::StepOff,
    };
    let system = TemSystem {
        transmitter: LoopShape::Square { side_m: tx_side },
        tx_turns: turns,
        current_a,
        receiver,
        tx_height_m: 0.0,
        rx_height_m: 0.0,
        waveform,
    };
    let n = times.len();
    if let Some(set) = &set {
        notes.push(format!("set '{set}'"));
    }
    let mut s = Sounding {
        name,
        times_s: times,
        values,
        errors: Some(errors),
        unit: ResponseUnit::VoltPerAmp,
        unit_stated: true,
        instrument_rhoa_ohm_m: Some(rhoa),
        position,
        system: Some(system),
        mask: vec![None; n],
        stacks,
        notes,
    };
    s.remask(&options.mask_limits);
    Ok((s, set))
}

/// A USF voltage unit string as a [`ResponseUnit`] and a factor to apply to the values
/// (`V` is divided by the current).
fn usf_unit(text: &str, current: f64) -> Option<(ResponseUnit, f64)> {
    let t = text
        .trim()
        .trim_matches('"')
        .to_ascii_uppercase()
        .replace([' ', '*', '(', ')', '.', '·'], "");
    let (prefix, rest) = if let Some(r) = t.strip_prefix("NV") {
        (1e-9, format!("V{r}"))
    } else if let Some(r) = t.strip_prefix("UV").or_else(|| t.strip_prefix("ΜV")) {
        (1e-6, format!("V{r}"))
    } else if let Some(r) = t.strip_prefix("MV") {
        (1e-3, format!("V{r}"))
    } else {
        (1.0, t.clone())
    };
    match rest.as_str() {
        "V/A" | "V/AMP" | "V/AMPS" => Some((ResponseUnit::VoltPerAmp, prefix)),
        "V/AM2" | "V/AM^2" | "V/A/M2" | "V/AMP/M2" | "V/AMPM2" => {
            Some((ResponseUnit::VoltPerAmpM2, prefix))
        }
        "V/AM4" | "V/AM^4" => Some((ResponseUnit::VoltPerAmpM4, prefix)),
        "V" | "VOLT" | "VOLTS" if current > 0.0 => {
            Some((ResponseUnit::VoltPerAmp, prefix / current))
        }
        _ => None,
    }
}

/// Read a Universal Sounding Format file: `//KEY: value` global lines, then per sweep
/// `/KEY: value` lines, `/END`, a column header (`INDEX, TIME, VOLTAGE, ST_DEV` or similar),
/// the rows and `/END`. Keys used: ARRAY, LOOP_SIZE, COIL_SIZE, CURRENT, RAMP_TIME,
/// VOLTAGE_UNITS, LOCATION, SOUNDING_NAME/NUMBER, SWEEP_NUMBER, SWEEP_IS_NOISE, RX_OFFSET,
/// POINTS. Noise sweeps are skipped (noted).
pub fn read_usf(path: &Path, options: &ReadOptions) -> Result<TdemFile, ReadError> {
    let text = read_text(path)?;
    crate::methods::truncated::check_last_row(path, &text)?;
    let lines: Vec<&str> = text.lines().collect();
    let mut keys: std::collections::BTreeMap<String, (String, usize)> = Default::default();
    let mut notes = Vec::new();
    let mut soundings = Vec::new();
    let mut i = 0;
    let mut saw_usf_key = false;
    while i < lines.len() {
        let line = lines[i].trim();
        if line.starts_with("//") {
            saw_usf_key = true;
            i += 1;
            continue;
        }
        if let Some(body) = line.strip_prefix('/') {
            saw_usf_key = true;
            if body.trim().eq_ignore_ascii_case("END") {
                // Start of a data block.
                let (s, next) = read_usf_table(path, &lines, i + 1, &keys, options)?;
                i = next;
                match s {
                    Some(s) => soundings.push(s),
                    None => notes.push(format!(
                        "sweep ending at line {i} is a noise sweep: skipped"
                    )),
                }
                continue;
            }
            if let Some((k, v)) = body.split_once(':') {
                let k = k.trim().to_ascii_uppercase();
                if k == "SWEEP_NUMBER" || k == "SOUNDING_NUMBER" {
                    // A new sweep starts: per-sweep keys reset to the station's.
                    keys.remove("SWEEP_IS_NOISE");
                    keys.remove("POINTS");
                }
                keys.insert(k, (v.trim().to_string(), i + 1));
            } else {
                return Err(ReadError::malformed(
                    path,
                    i + 1,
                    "'/KEY: value' or '/END'",
                    lines[i],
                ));
            }
            i += 1;
            continue;
        }
        if line.is_empty() {
            i += 1;
            continue;
        }
        return Err(ReadError::malformed(
            path,
            i + 1,
            "a '//' or '/KEY: value' header line (data rows follow '/END')",
            lines[i],
        ));
    }
    if !saw_usf_key {
        return Err(ReadError::format(
            path,
            "no '/KEY: value' lines: not a USF file",
        ));
    }
    if soundings.is_empty() {
        return Err(ReadError::format(
            path,
            "no data block ('/END' followed by rows) found",
        ));
    }
    let survey_dates: Vec<String> = keys
        .get("DATE")
        .and_then(|(v, _)| crate::methods::io::year_first_date(v))
        .map(|(y, m, d)| format!("{y:04}-{m:02}-{d:02}"))
        .into_iter()
        .collect();
    Ok(TdemFile {
        format: TdemFormat::Usf,
        format_guessed: false,
        soundings,
        notes,
        survey_dates,
    })
}

type UsfKeys = std::collections::BTreeMap<String, (String, usize)>;

fn usf_numbers(v: &str) -> Vec<f64> {
    v.split([',', ' ', '\t'])
        .filter(|s| !s.trim().is_empty())
        .filter_map(parse_f64)
        .collect()
}

/// The table after an `/END` line: column header, rows, closing `/END`. Returns the sounding
/// (`None` for a noise sweep) and the index of the line after the block.
fn read_usf_table(
    path: &Path,
    lines: &[&str],
    from: usize,
    keys: &UsfKeys,
    options: &ReadOptions,
) -> Result<(Option<Sounding>, usize), ReadError> {
    let mut notes = Vec::new();
    let get = |k: &str| keys.get(k).map(|(v, _)| v.as_str());
    let num = |k: &str| get(k).and_then(|v| usf_numbers(v).first().copied());
    let mut i = from;
    while i < lines.len() && lines[i].trim().is_empty() {
        i += 1;
    }
    let Some(header_line) = lines.get(i) else {
        return Err(ReadError::malformed(
            path,
            i + 1,
            "a column header after '/END'",
            "end of file",
        ));
    };
    let header: Vec<String> = header_line
        .split([',', ' ', '\t'])
        .map(|s| s.trim().to_ascii_uppercase())
        .filter(|s| !s.is_empty())
        .collect();
    let (col_t, col_v, col_e, data_start) = if header
        .first()
        .is_some_and(|h| parse_f64(h).is_some())
    {
        notes.push("no column header: columns read as TIME, VOLTAGE[, ST_DEV]".into());
        (0, 1, Some(2), i)
    } else {
        let find = |pred: &dyn Fn(&str) -> bool| header.iter().position(|h| pred(h));
        let t = find(&|h| h.starts_with("TIME"));
        let v = find(&|h| {
            h.starts_with("VOLT") || h == "VALUE" || h == "DATA" || h.starts_with("DBDT")
        });
        let e = find(&|h| {
            h.starts_with("ST_DEV") || h.starts_with("STDEV") || h.starts_with("ERR") || h == "SD"
        });
        match (t, v) {
            (Some(t), Some(v)) => (t, v, e, i + 1),
            _ => {
                return Err(ReadError::malformed(
                    path,
                    i + 1,
                    "a column header naming TIME and VOLTAGE",
                    header_line,
                ));
            }
        }
    };
    let (mut times, mut values, mut errors) = (Vec::new(), Vec::new(), Vec::new());
    let mut j = data_start;
    let mut closed = false;
    while j < lines.len() {
        let line = lines[j].trim();
        if line.is_empty() {
            j += 1;
            continue;
        }
        if line.starts_with('/') {
            if line
                .trim_start_matches('/')
                .trim()
                .eq_ignore_ascii_case("END")
            {
                closed = true;
                j += 1;
            }
            break;
        }
        let f: Vec<&str> = line
            .split([',', ' ', '\t'])
            .filter(|s| !s.trim().is_empty())
            .collect();
        let need = col_t.max(col_v) + 1;
        if f.len() < need {
            return Err(ReadError::malformed(
                path,
                j + 1,
                format!("at least {need} values"),
                lines[j],
            ));
        }
        let p = |c: usize| -> Result<f64, ReadError> {
            parse_f64(f[c]).ok_or_else(|| ReadError::malformed(path, j + 1, "a number", f[c]))
        };
        times.push(p(col_t)?);
        values.push(p(col_v)?);
        errors.push(match col_e {
            Some(c) if c < f.len() => p(c)?.abs(),
            _ => f64::NAN,
        });
        j += 1;
    }
    if !closed && j >= lines.len() {
        // The file ends inside the data block: a copy cut at a line break leaves whole rows
        // but no '/END', and the rows after the cut are lost (issue 19, item 6).
        return Err(ReadError::malformed(
            path,
            lines.len(),
            "'/END' closing the data block; the file ends before, so it looks cut off",
            lines.last().copied().unwrap_or("end of file"),
        ));
    }
    if !closed {
        notes.push("the data block is not closed by '/END'".into());
    }
    if times.is_empty() {
        return Err(ReadError::malformed(
            path,
            data_start + 1,
            "at least one data row",
            "none",
        ));
    }
    if let Some(np) = num("POINTS")
        && (np as usize) != times.len()
    {
        notes.push(format!(
            "/POINTS says {np}, the block has {} rows",
            times.len()
        ));
    }
    if num("SWEEP_IS_NOISE").is_some_and(|v| v != 0.0) {
        return Ok((None, j));
    }
    let current = num("CURRENT").filter(|c| *c > 0.0).unwrap_or_else(|| {
        notes.push("no /CURRENT: 1 A assumed".into());
        1.0
    });
    let (unit, factor, unit_stated) = match get("VOLTAGE_UNITS").and_then(|u| usf_unit(u, current))
    {
        Some((u, f)) => (u, f, true),
        None => {
            let u = options.unit.unwrap_or(ResponseUnit::VoltPerAmp);
            notes.push(format!(
                "/VOLTAGE_UNITS {} not understood or absent: {} assumed",
                get("VOLTAGE_UNITS").unwrap_or("(none)"),
                u.label()
            ));
            (u, 1.0, options.unit.is_some())
        }
    };
    let values: Vec<f64> = values.iter().map(|v| v * factor).collect();
    let errors: Option<Vec<f64>> = if errors.iter().all(|e| e.is_nan()) {
        None
    } else {
        Some(errors.iter().map(|e| e * factor).collect())
    };
    if get("INSTRUMENT").is_some_and(|s| s.to_ascii_lowercase().contains("terratem")) {
        notes.push("terraTEM ST_DEV used as absolute standard deviations in the voltage unit (pyGIMLi scales them by 0.01)".into());
    }
    let loop_sides = get("LOOP_SIZE").map(usf_numbers).unwrap_or_default();
    let transmitter = match loop_sides.as_slice() {
        [a, b, ..] if *a > 0.0 && *b > 0.0 => {
            if (a - b).abs() > 1e-9 * a {
                notes.push(format!(
                    "rectangular loop {a} × {b} m modelled as the square of equal area"
                ));
            }
            LoopShape::Square {
                side_m: (a * b).sqrt(),
            }
        }
        [a] if *a > 0.0 => {
            notes.push(format!("/LOOP_SIZE {a} read as the side of a square loop"));
            LoopShape::Square { side_m: *a }
        }
        _ => {
            notes.push("no usable /LOOP_SIZE: the system must be given".into());
            LoopShape::Square { side_m: 1.0 }
        }
    };
    let has_loop = loop_sides.iter().any(|v| *v > 0.0);
    let array = get("ARRAY").unwrap_or("").to_ascii_uppercase();
    let coil = num("COIL_SIZE").filter(|c| *c > 0.0);
    let offset = num("RX_OFFSET").unwrap_or(0.0);
    let receiver = if array.contains("COINCIDENT") || array.contains("SINGLE") {
        Receiver::Coincident { turns: 1.0 }
    } else if offset > 0.0 {
        Receiver::Offset {
            offset_m: offset,
            area_m2: coil.unwrap_or(1.0),
            turns: 1.0,
        }
    } else if let Some(c) = coil {
        Receiver::Central {
            area_m2: c,
            turns: 1.0,
        }
    } else {
        notes.push(format!(
            "/ARRAY '{array}' without /COIL_SIZE: read as a coincident loop"
        ));
        Receiver::Coincident { turns: 1.0 }
    };
    let ramp = num("RAMP_TIME").filter(|r| *r > 0.0);
    let waveform = match ramp {
        Some(r) => {
            notes.push(format!(
                "/RAMP_TIME {r} s modelled as a linear ramp ending at t = 0 (gate times assumed to be measured from the end of the ramp)"
            ));
            Waveform::LinearRamp { ramp_s: r }
        }
        None => Waveform::StepOff,
    };
    let system = has_loop.then_some(TemSystem {
        transmitter,
        tx_turns: 1.0,
        current_a: current,
        receiver,
        tx_height_m: 0.0,
        rx_height_m: 0.0,
        waveform,
    });
    let loc = get("LOCATION").map(usf_numbers).unwrap_or_default();
    let position = Position {
        easting_m: loc.first().copied(),
        northing_m: loc.get(1).copied(),
        elevation_m: loc.get(2).copied(),
        ..Position::default()
    };
    let name = get("SOUNDING_NAME")
        .or(get("SOUNDING_NUMBER"))
        .unwrap_or("sounding")
        .trim_matches('"')
        .to_string();
    let name = match get("SWEEP_NUMBER") {
        Some(sw) => format!("{name} sweep {sw}"),
        None => name,
    };
    let n = times.len();
    let mut s = Sounding {
        name,
        times_s: times,
        values,
        errors,
        unit,
        unit_stated,
        instrument_rhoa_ohm_m: None,
        position,
        system,
        mask: vec![None; n],
        stacks: None,
        notes,
    };
    s.remask(&options.mask_limits);
    Ok((Some(s), j))
}

/// Read a geometry table: a header with a sounding column (`sounding`, `id`, `station`) and
/// any of `easting`, `northing`, `dist`/`distance`/`position`, `alt`/`altitude`/`height`,
/// `elev`/`elevation` (with or without a `_m` suffix).
pub fn read_geometry(path: &Path) -> Result<Vec<GeometryRow>, ReadError> {
    let text = read_text(path)?;
    crate::methods::truncated::check_last_row(path, &text)?;
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let Some((hno, hline)) = lines.next() else {
        return Err(ReadError::format(path, "the geometry file is empty"));
    };
    let names: Vec<String> = split_row(hline)
        .iter()
        .map(|s| s.to_ascii_lowercase())
        .collect();
    let find = |keys: &[&str]| {
        names
            .iter()
            .position(|n| keys.iter().any(|k| n.starts_with(k)))
    };
    let Some(c_id) = find(&["sounding", "id", "station", "snd"]) else {
        return Err(ReadError::malformed(
            path,
            hno,
            "a header with a 'sounding' column",
            hline,
        ));
    };
    let c_e = find(&["easting", "east"]);
    let c_n = find(&["northing", "north"]);
    let c_d = find(&["dist", "position", "offset_along"]);
    let c_a = find(&["alt", "sensor_alt", "height"]);
    let c_z = find(&["elev", "ground"]);
    if [c_e, c_n, c_d, c_a, c_z].iter().all(Option::is_none) {
        return Err(ReadError::malformed(
            path,
            hno,
            "at least one of easting, northing, distance, altitude, elevation",
            hline,
        ));
    }
    let mut rows = Vec::new();
    for (no, line) in lines {
        let f = split_row(line);
        if f.len() < names.len() {
            return Err(ReadError::malformed(
                path,
                no,
                format!("{} values", names.len()),
                line,
            ));
        }
        let val = |c: Option<usize>| -> Result<Option<f64>, ReadError> {
            match c {
                None => Ok(None),
                Some(c) if f[c].is_empty() => Ok(None),
                Some(c) => parse_f64(f[c])
                    .map(Some)
                    .ok_or_else(|| ReadError::malformed(path, no, "a number", f[c])),
            }
        };
        rows.push(GeometryRow {
            sounding: f[c_id].to_string(),
            position: Position {
                easting_m: val(c_e)?,
                northing_m: val(c_n)?,
                distance_m: val(c_d)?,
                altitude_m: val(c_a)?,
                elevation_m: val(c_z)?,
            },
        });
    }
    Ok(rows)
}

/// Attach geometry rows to soundings: by name or 1-based number when they match, else in
/// order when the counts agree. Returns what was done, for the notes.
pub fn attach_geometry(file: &mut TdemFile, rows: &[GeometryRow]) -> String {
    let n = file.soundings.len();
    let mut matched = 0;
    for (k, s) in file.soundings.iter_mut().enumerate() {
        let by_id = rows
            .iter()
            .find(|r| r.sounding == s.name || r.sounding.parse::<usize>().ok() == Some(k + 1));
        if let Some(r) = by_id {
            merge_position(&mut s.position, &r.position);
            matched += 1;
        }
    }
    if matched == n {
        format!("geometry attached to all {n} soundings by sounding number or name")
    } else if rows.len() == n {
        for (s, r) in file.soundings.iter_mut().zip(rows) {
            merge_position(&mut s.position, &r.position);
        }
        format!(
            "geometry attached in file order ({n} rows for {n} soundings; identifiers did not match)"
        )
    } else {
        format!(
            "geometry matched {matched} of {n} soundings ({} rows); the others have no position",
            rows.len()
        )
    }
}

fn merge_position(to: &mut Position, from: &Position) {
    to.easting_m = from.easting_m.or(to.easting_m);
    to.northing_m = from.northing_m.or(to.northing_m);
    to.distance_m = from.distance_m.or(to.distance_m);
    to.altitude_m = from.altitude_m.or(to.altitude_m);
    to.elevation_m = from.elevation_m.or(to.elevation_m);
}

/// Summary JSON of a read file (format and whether it was guessed, counts, ranges, units,
/// masked gates by reason, notes).
pub fn summarize(path: &Path, file: &TdemFile) -> serde_json::Value {
    let soundings: Vec<serde_json::Value> = file
        .soundings
        .iter()
        .map(|s| {
            let used = s.used_gates();
            let tmin = s.times_s.iter().copied().fold(f64::INFINITY, f64::min);
            let tmax = s.times_s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let masked: serde_json::Map<String, serde_json::Value> = s
                .mask_counts()
                .into_iter()
                .map(|(k, n)| (k.to_string(), n.into()))
                .collect();
            serde_json::json!({
                "name": s.name,
                "n_gates": s.n_gates(),
                "n_used": used.len(),
                "time_range_s": [tmin, tmax],
                "unit": s.unit.label(),
                "unit_stated": s.unit_stated,
                "has_errors": s.errors.is_some(),
                "has_instrument_rhoa": s.instrument_rhoa_ohm_m.is_some(),
                "masked": masked,
                "position": s.position,
                "system": s.system,
                "notes": s.notes,
            })
        })
        .collect();
    let n_masked: usize = file
        .soundings
        .iter()
        .map(|s| s.mask.iter().filter(|m| m.is_some()).count())
        .sum();
    let n_saturated: usize = file
        .soundings
        .iter()
        .map(|s| {
            s.mask
                .iter()
                .filter(|m| **m == Some(MaskReason::Saturated))
                .count()
        })
        .sum();
    let n_noise: usize = file
        .soundings
        .iter()
        .map(|s| {
            s.mask
                .iter()
                .filter(|m| {
                    matches!(
                        m,
                        Some(MaskReason::NoiseFloor) | Some(MaskReason::NonPositive)
                    )
                })
                .count()
        })
        .sum();
    serde_json::json!({
        "method": "tdem",
        "file": path.display().to_string(),
        "format": file.format,
        "format_guessed": file.format_guessed,
        "n_soundings": file.soundings.len(),
        "n_gates_total": file.soundings.iter().map(|s| s.n_gates()).sum::<usize>(),
        "n_gates_masked": n_masked,
        "n_gates_saturated": n_saturated,
        "n_gates_noise": n_noise,
        "soundings": soundings,
        "survey_dates": file.survey_dates,
        "notes": file.notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Write;

    fn write_temp(name: &str, bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(name);
        std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
        (dir, p)
    }

    /// A TEM-FAST block as the instrument's export writes it (tab-separated header lines,
    /// `Channel Time E/I Err Res`), with a power-law decay V/I = 0.4 (t/10 µs)^-2.5 and 1 %
    /// errors; `rhoa_at` replaces one gate's ρa by the export's 99999.99.
    struct Block<'a> {
        place: &'a str,
        set: Option<&'a str>,
        time_range: u32,
        stacks: u32,
        current_a: f64,
        deff_us: f64,
    }

    fn temfast_block(h: Block<'_>, times_us: &[f64], no_rhoa_gate: Option<usize>) -> String {
        let Block {
            place,
            set,
            time_range,
            stacks,
            current_a,
            deff_us,
        } = h;
        let mut b =
            format!("TEM-FAST 48 HPC/S2  Date:\tTue Mar 05 10:00:00 2019\nPlace:\t{place}\n");
        if let Some(set) = set {
            b.push_str(&format!("#Set\t {set}\n"));
        }
        b.push_str(&format!(
            "Time-Range\t {time_range}\tStacks\t {stacks}\t deff= {deff_us} us \t I={current_a:.1} A\t FILTR=50 Hz\t AMPLIFER=OFF\nT-LOOP (m)\t 25.000\t R-LOOP (m)\t 25.000\tTURN=\t    1\nComments:\t 0\nLocation:x=\t      +0.000\t y=\t      +0.000\t z=\t   +0.00\nChannel\tTime\tE/I[V/A]\tErr[V/A]\tRes[Ohm-m]\n"
        ));
        for (k, t) in times_us.iter().enumerate() {
            let v = 0.4 * (t / 10.0).powf(-2.5);
            let rhoa = if no_rhoa_gate == Some(k) {
                99999.99
            } else {
                50.0
            };
            b.push_str(&format!(
                "{:2}\t{t:6.2}\t{v:.3e}\t{:.3e}\t{rhoa:9.2}\n",
                k + 1,
                0.01 * v
            ));
        }
        b
    }

    #[test]
    fn temfast_multi_sounding_export_keeps_each_blocks_gates_stacks_and_current() {
        // Issue 22, item 5: a multi-sounding export whose blocks have their own time ranges
        // (gate sets), stacks, currents and ramps, a repeated Place, and the export's 99999.99
        // "no value" in the ρa column. Every number below is written into the file here.
        let early: Vec<f64> = (0..12).map(|k| 6.0 * 1.35f64.powi(k)).collect();
        let late: Vec<f64> = (0..16).map(|k| 12.0 * 1.4f64.powi(k)).collect();
        let block = |set, time_range, stacks, current_a, deff_us| Block {
            place: "DUNE",
            set: Some(set),
            time_range,
            stacks,
            current_a,
            deff_us,
        };
        let text = [
            temfast_block(block("A", 8, 11, 1.0, 5.0), &early, None),
            temfast_block(block("B", 9, 13, 4.0, 3.0), &late, Some(5)),
            temfast_block(block("A", 8, 7, 1.0, 5.0), &early, None),
        ]
        .concat();
        let (_d, p) = write_temp("line.tem", text.as_bytes());
        let f = read_temfast(&p, &ReadOptions::default()).unwrap();
        assert_eq!(f.soundings.len(), 3);
        let names: Vec<&str> = f.soundings.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["DUNE A (sounding 1)", "DUNE B", "DUNE A (sounding 3)"]
        );
        assert!(
            f.notes.iter().any(|n| n.contains("share a name (DUNE)")),
            "{:?}",
            f.notes
        );
        let [a, b, c] = [&f.soundings[0], &f.soundings[1], &f.soundings[2]];
        assert_eq!((a.n_gates(), b.n_gates(), c.n_gates()), (12, 16, 12));
        assert!((b.times_s[0] - 12e-6).abs() < 1e-15, "{}", b.times_s[0]);
        assert_eq!(
            (a.stacks, b.stacks, c.stacks),
            (Some(11), Some(13), Some(7))
        );
        let sys_a = a.system.as_ref().unwrap();
        let sys_b = b.system.as_ref().unwrap();
        assert_eq!((sys_a.current_a, sys_b.current_a), (1.0, 4.0));
        let ramp = |w: &Waveform| match w {
            Waveform::LinearRamp { ramp_s } => *ramp_s,
            other => panic!("expected a linear ramp, found {other:?}"),
        };
        assert!((ramp(&sys_a.waveform) - 5e-6).abs() < 1e-18);
        assert!((ramp(&sys_b.waveform) - 3e-6).abs() < 1e-18);
        let rhoa = b.instrument_rhoa_ohm_m.as_ref().unwrap();
        assert!(rhoa[5].is_nan(), "99999.99 is no value: {}", rhoa[5]);
        assert_eq!(rhoa[4], 50.0);
        assert!(
            b.notes.iter().any(|n| n.contains("time range key 9")
                && n.contains("13 stacks")
                && n.contains("16 gates")),
            "{:?}",
            b.notes
        );
        assert!(b.notes.iter().any(|n| n == "set 'B'"), "{:?}", b.notes);
        // "Comments: 0" is the export's empty comment, not a note.
        assert!(
            !a.notes.iter().any(|n| n.contains("comment")),
            "{:?}",
            a.notes
        );
    }

    #[test]
    fn temfast_langeoog_reads_with_its_header() {
        // ../shared/data/tdem/TEMfastLangeoog.tem: 44 gates, 50 m coincident loop, 1 A, 1 turn
        // (oracles/tdem_rhoa.json `meta.setup`); usable gates 5–38 (geophysics.md §5.3.3):
        // gates 1, 2 and 40–44 non-positive, 3–4 rising (ramp), 39 noise (err 31 %).
        let path = crate::require_data!("tdem/TEMfastLangeoog.tem");
        let f = read_temfast(&path, &ReadOptions::default()).unwrap();
        assert_eq!(f.soundings.len(), 1);
        let s = &f.soundings[0];
        assert_eq!(s.n_gates(), 44);
        assert_eq!(s.name, "LANGEOOG");
        // Header `Date:	Fri Oct 12 03:23:31 2012`.
        assert_eq!(f.survey_dates, vec!["2012-10-12".to_string()]);
        assert!((s.times_s[0] - 4.06e-6).abs() < 1e-15);
        let sys = s.system.as_ref().unwrap();
        assert_eq!(sys.transmitter, LoopShape::Square { side_m: 50.0 });
        assert_eq!(sys.receiver, Receiver::Coincident { turns: 1.0 });
        assert_eq!(sys.current_a, 1.0);
        let used = s.used_gates();
        assert_eq!(used.first(), Some(&4));
        assert_eq!(used.last(), Some(&37));
        assert_eq!(used.len(), 34);
        let counts = s.mask_counts();
        assert!(counts.contains(&("non_positive", 7)), "{counts:?}");
        assert!(counts.contains(&("rising_early_gate", 2)), "{counts:?}");
        assert!(counts.contains(&("noise_floor", 1)), "{counts:?}");
    }

    #[test]
    fn late_time_rhoa_matches_the_instrument_column() {
        // Acceptance (issue 8): our late-time ρa equals the TEM-FAST instrument's column to
        // 0.2 % at every gate with V/I > 0 (37 gates; oracles/tdem_rhoa.json: closed form vs
        // instrument max 7.3e-4; vs pyGIMLi 1.5e-15).
        let path = crate::require_data!("tdem/TEMfastLangeoog.tem");
        let oracle = crate::require_oracle!("tdem_rhoa.json");
        let f = read_temfast(&path, &ReadOptions::default()).unwrap();
        let s = &f.soundings[0];
        let ours = s.late_time_rhoa(s.system.as_ref().unwrap());
        let inst = s.instrument_rhoa_ohm_m.as_ref().unwrap();
        let mut n = 0;
        let mut worst: f64 = 0.0;
        for (i, gate) in oracle["gates"].as_array().unwrap().iter().enumerate() {
            match gate["rhoa_closed_form_ohmm"].as_f64() {
                Some(closed) => {
                    let r = ours[i].unwrap();
                    worst = worst.max((r / inst[i] - 1.0).abs());
                    assert!(
                        (r / closed - 1.0).abs() < 1e-12,
                        "gate {i}: {r} vs oracle {closed}"
                    );
                    n += 1;
                }
                None => assert!(ours[i].is_none()),
            }
        }
        eprintln!("Langeoog late-time ρa vs instrument: {n} gates, max rel diff {worst:.2e}");
        assert_eq!(n, 37);
        assert!(worst < 2e-3, "worst {worst}");
    }

    #[test]
    fn skytem_table_and_geometry_read() {
        // ../shared/data/tdem/phgx: 5 SkyTEM soundings × 21 gates (acknowledgement.txt), the
        // geometry's dist_m 0 … 48218.3, positions also parsed from the column names.
        let p = crate::require_data!("tdem/phgx/skytem_bhmar_tdem.csv");
        let g = crate::require_data!("tdem/phgx/skytem_bhmar_geometry.csv");
        let opts = ReadOptions {
            unit: Some(ResponseUnit::VoltPerAmpM4),
            ..ReadOptions::default()
        };
        let mut f = read_table(&p, &opts).unwrap();
        assert_eq!(f.soundings.len(), 5);
        assert!(
            f.soundings
                .iter()
                .all(|s| s.n_gates() == 21 && s.used_gates().len() == 21)
        );
        assert_eq!(f.soundings[0].position.easting_m, Some(603036.0));
        let rows = read_geometry(&g).unwrap();
        let note = attach_geometry(&mut f, &rows);
        assert!(note.contains("all 5"), "{note}");
        assert_eq!(f.soundings[4].position.distance_m, Some(48218.3));
    }

    #[test]
    fn bench_table_reads_with_sign_flip_and_errors() {
        // ../shared/bench/tdem_3layer.csv: time_s, dbzdt (negative, z up), err; 20 gates.
        let Some(p) = crate::field_data::bench("tdem_3layer.csv") else {
            return;
        };
        let f = read_table(&p, &ReadOptions::default()).unwrap();
        let s = &f.soundings[0];
        assert_eq!(f.soundings.len(), 1);
        assert_eq!(s.n_gates(), 20);
        assert!(s.values.iter().all(|v| *v > 0.0));
        assert!(s.notes.iter().any(|n| n.contains("multiplied by −1")));
        assert_eq!(s.unit, ResponseUnit::VoltPerAmpM2);
        assert!(!s.unit_stated);
        assert!(s.errors.is_some());
    }

    #[test]
    fn usf_reader_masks_saturated_gates() {
        // A USF file in the layout of a terraTEM export, written here (synthetic values):
        // 6 saturated gates (identical values), then a t^-2.5 decay, then noise-dominated
        // gates (ST_DEV > VOLTAGE).
        let mut text = String::from(
            "//SOUNDINGS: 1\n//END\n\n/ARRAY: COINCIDENT LOOP TEM\n/LOCATION: 10.0, 20.0, 1.5\n/VOLTAGE_UNITS: V/AMP\n/SOUNDING_NAME: S1\n/SWEEP_NUMBER: 1\n/CURRENT: 4.0\n/LOOP_SIZE: 50.00, 50\n/RAMP_TIME: 2.0E-05\n/POINTS: 20\n/END\nINDEX,\tTIME,\tVOLTAGE\tST_DEV\n",
        );
        for i in 0..20 {
            let t = 3e-5 * 1.25f64.powi(i);
            let (v, e) = if i < 6 {
                (2.2e-2, 0.0)
            } else if i < 16 {
                (
                    1e-2 * (t / 1e-4f64).powf(-2.5),
                    1e-2 * (t / 1e-4f64).powf(-2.5) * 0.05,
                )
            } else {
                (1e-6, 5e-6)
            };
            text.push_str(&format!("{},\t{t:.4E},\t{v:.7E},\t{e:.7E}\n", i + 1));
        }
        text.push_str("/END\n");
        let (_d, p) = write_temp("a.usf", text.as_bytes());
        let f = read_usf(&p, &ReadOptions::default()).unwrap();
        let s = &f.soundings[0];
        assert_eq!(s.name, "S1 sweep 1");
        assert_eq!(s.n_gates(), 20);
        assert_eq!(
            s.mask
                .iter()
                .filter(|m| **m == Some(MaskReason::Saturated))
                .count(),
            6
        );
        assert_eq!(
            s.mask
                .iter()
                .filter(|m| **m == Some(MaskReason::NoiseFloor))
                .count(),
            4
        );
        assert_eq!(s.used_gates(), (6..16).collect::<Vec<_>>());
        let sys = s.system.as_ref().unwrap();
        assert_eq!(sys.current_a, 4.0);
        assert_eq!(sys.waveform, Waveform::LinearRamp { ramp_s: 2e-5 });
        assert_eq!(s.position.easting_m, Some(10.0));
    }

    #[test]
    fn usf_cut_short_is_refused() {
        // Issue 19, item 6: a USF file cut at a line break inside its data block (whole rows,
        // no closing '/END') and one cut inside its last value are refused, naming the file,
        // the line and what a whole file has there; the whole file reads.
        let mut text = String::from(
            "//SOUNDINGS: 1\n//END\n/ARRAY: COINCIDENT LOOP TEM\n/VOLTAGE_UNITS: V/AMP\n/POINTS: 8\n/END\nINDEX,\tTIME,\tVOLTAGE\n",
        );
        for i in 0..8 {
            let t = 1e-5 * 1.5f64.powi(i);
            text.push_str(&format!(
                "{},\t{t:.4E},\t{:.6E}\n",
                i + 1,
                1e-3 * t.powf(-2.5)
            ));
        }
        let whole = format!("{text}/END\n");
        let (_d, p) = write_temp("whole.usf", whole.as_bytes());
        assert_eq!(
            read_usf(&p, &ReadOptions::default()).unwrap().soundings[0].n_gates(),
            8
        );
        let (_d, p) = write_temp("cut.usf", text.as_bytes());
        let e = read_usf(&p, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cut.usf")
                && e.contains("line 15")
                && e.contains("'/END'")
                && e.contains("cut off"),
            "{e}"
        );
        let in_value = &text[..text.trim_end().len() - 4];
        let (_d, p) = write_temp("cut_value.usf", in_value.as_bytes());
        let e = read_usf(&p, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("cut_value.usf") && e.contains("cut off"), "{e}");
    }

    #[test]
    fn malformed_files_name_line_expected_and_found() {
        let (_d, p) = write_temp("bad.csv", b"time_s,response\n1e-5,2e-3\n2e-5,abc\n");
        let e = read_table(&p, &ReadOptions::default()).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("bad.csv, line 3: expected a number, found \"abc\""),
            "{msg}"
        );
        let (_d, p) = write_temp("short.csv", b"time_s,a,b\n1e-5,2e-3\n");
        let msg = read_table(&p, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("line 2: expected 3 values"), "{msg}");
        let (_d, p) = write_temp(
            "x.tem",
            b"TEM-FAST 48\nT-LOOP (m) 50 R-LOOP (m) 50 TURN= 1\nChannel Time E/I Err Res\n1 4.0 x 1 1\n",
        );
        let msg = read_temfast(&p, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("line 4: expected a number, found \"x\""),
            "{msg}"
        );
        let (_d, p) = write_temp(
            "y.usf",
            b"/LOOP_SIZE: 50\n/END\nTIME VOLTAGE\n1e-5 oops\n/END\n",
        );
        let msg = read_usf(&p, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("line 4: expected a number, found \"oops\""),
            "{msg}"
        );
    }

    fn all_readers(p: &Path) {
        let o = ReadOptions::default();
        let _ = read_table(p, &o);
        let _ = read_temfast(p, &o);
        let _ = read_usf(p, &o);
        let _ = read_geometry(p);
        let _ = read_tdem_file(p, &o);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn readers_never_panic_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let (_d, p) = write_temp("f.dat", &bytes);
            all_readers(&p);
        }

        #[test]
        fn readers_never_panic_on_mutated_real_files(
            which in 0usize..3,
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..12),
            cut in any::<prop::sample::Index>(),
        ) {
            let base: Vec<u8> = match which {
                0 => crate::field_data::data("tdem/TEMfastLangeoog.tem").and_then(|p| std::fs::read(p).ok()),
                1 => crate::field_data::data("tdem/phgx/skytem_bhmar_tdem.csv").and_then(|p| std::fs::read(p).ok()),
                _ => Some(b"//SOUNDINGS: 1\n/LOOP_SIZE: 50, 50\n/CURRENT: 4\n/VOLTAGE_UNITS: V/AMP\n/END\nINDEX, TIME, VOLTAGE, ST_DEV\n1, 1.5E-06, 2.2E-02, 0.0\n2, 3.5E-06, 1.1E-02, 1.0E-04\n/END\n".to_vec()),
            }.unwrap_or_default();
            let mut bytes = base;
            if !bytes.is_empty() {
                for (idx, b) in &edits {
                    let i = idx.index(bytes.len());
                    bytes[i] = *b;
                }
                let keep = cut.index(bytes.len() + 1);
                bytes.truncate(keep);
            }
            for ext in ["tem", "usf", "csv"] {
                let (_d, p) = write_temp(&format!("m.{ext}"), &bytes);
                all_readers(&p);
            }
        }
    }
}

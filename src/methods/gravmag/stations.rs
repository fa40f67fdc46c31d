//! Station tables: `x, y, value[, z]` in CSV or whitespace text, with or without a header,
//! optionally xz-compressed; longitude/latitude columns are projected to a local metric grid
//! ([`TransverseMercator::local`] at the survey centre) and the projection is stated.
//!
//! Column roles come, in this order, from the caller ([`ReadOptions::columns`]), from the
//! header names, or — for a file without a header — from the studio's documented order
//! `x, y, value[, z]` (then `columns_guessed` is set and a note says so). The field kind comes
//! from [`super::kind::infer_kind`]: header, file name, request; when it cannot be inferred
//! the table carries an ambiguous outcome for the caller to ask about.
//!
//! The reader only reads: the file is never modified.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::kind::{Family, FieldKind, KindInference, infer_kind};
use super::projection::TransverseMercator;
use crate::methods::io::{self, ReadError};

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColumnRole {
    /// Easting or local x, m.
    X,
    /// Northing or local y, m.
    Y,
    /// Longitude, degrees east.
    Lon,
    /// Latitude, degrees north.
    Lat,
    /// Station elevation or flight altitude, m, z up.
    Z,
    /// The measured value (mGal or nT).
    Value,
    /// The standard deviation of the value, same unit.
    Error,
    /// Not used.
    Ignore,
}

/// Options for [`read_station_table`].
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// The role of every column, by position; overrides the header and the default order.
    pub columns: Option<Vec<ColumnRole>>,
    /// The kind declared by the user; overrides the inference.
    pub kind: Option<FieldKind>,
    /// The user's request in words, searched for kind keywords.
    pub request: Option<String>,
}

/// One column as read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnInfo {
    /// 0-based position.
    pub index: usize,
    /// The header name, when there is a header.
    pub name: Option<String>,
    /// The role given to it.
    pub role: ColumnRole,
}

/// A station table in the studio's units: x, y in metres (projected when the file had
/// longitude/latitude), z in metres up, values in mGal or nT.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StationTable {
    /// The file as the user named it.
    pub file: String,
    /// "csv", "whitespace-delimited text", …, with "(xz-compressed)" when it was.
    pub format: String,
    /// Every column and its role.
    pub columns: Vec<ColumnInfo>,
    /// Whether the roles were assumed (no header and no roles from the caller).
    pub columns_guessed: bool,
    /// Number of stations read.
    pub n_stations: usize,
    /// Easting / local x, m.
    pub x_m: Vec<f64>,
    /// Northing / local y, m.
    pub y_m: Vec<f64>,
    /// Elevation, m (z up), when the file has it.
    pub z_m: Option<Vec<f64>>,
    /// The values, in `value_unit`.
    pub value: Vec<f64>,
    /// Standard deviations, when the file has them.
    pub error: Option<Vec<f64>>,
    /// Longitudes as read, degrees (lon/lat files only).
    pub lon_deg: Option<Vec<f64>>,
    /// Latitudes as read, degrees (lon/lat files only).
    pub lat_deg: Option<Vec<f64>>,
    /// The projection that made x and y from longitude and latitude.
    pub projection: Option<TransverseMercator>,
    /// What was measured, or the question to ask.
    pub kind: KindInference,
    /// "mGal" or "nT" when the family is known.
    pub value_unit: Option<String>,
    /// True for a two-column `x, value` profile (then y = 0).
    pub profile: bool,
    /// Rows skipped because the value was missing (`NaN`, `NA`, empty).
    pub skipped_rows: usize,
    /// Everything the reader assumed or converted, in sentences.
    pub notes: Vec<String>,
}

impl StationTable {
    /// Station positions as `[x, y, z]` with `z_default_m` where the file has no z.
    pub fn positions(&self, z_default_m: f64) -> Vec<[f64; 3]> {
        (0..self.n_stations)
            .map(|i| {
                let z = self.z_m.as_ref().map_or(z_default_m, |z| z[i]);
                [self.x_m[i], self.y_m[i], z]
            })
            .collect()
    }

    /// The family, when resolved.
    pub fn family(&self) -> Option<Family> {
        self.kind.kind().map(|k| k.family)
    }

    /// Resolve an ambiguous kind with the user's answer (the data are unchanged).
    pub fn with_kind(mut self, kind: FieldKind) -> Self {
        self.kind = infer_kind(Some(kind), None, None, None);
        self.value_unit = Some(kind.family.unit().to_string());
        self
    }

    /// A JSON summary: format, counts, ranges, units, kind, notes.
    pub fn summary(&self) -> serde_json::Value {
        let range = |v: &[f64]| -> serde_json::Value {
            let (lo, hi) = min_max(v);
            serde_json::json!([lo, hi])
        };
        serde_json::json!({
            "method": "gravmag",
            "file": self.file,
            "format": self.format,
            "columns": self.columns,
            "columns_guessed": self.columns_guessed,
            "n_stations": self.n_stations,
            "x_range_m": range(&self.x_m),
            "y_range_m": range(&self.y_m),
            "z_range_m": self.z_m.as_deref().map(range),
            "value_range": range(&self.value),
            "value_unit": self.value_unit,
            "has_errors": self.error.is_some(),
            "lon_range_deg": self.lon_deg.as_deref().map(range),
            "lat_range_deg": self.lat_deg.as_deref().map(range),
            "projection": self.projection.map(|p| p.describe()),
            "kind": self.kind,
            "profile": self.profile,
            "skipped_rows": self.skipped_rows,
            "notes": self.notes,
        })
    }
}

/// (min, max) of the finite values; (NaN, NaN) when there are none.
pub(crate) fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .filter(|x| x.is_finite())
        .fold((f64::NAN, f64::NAN), |(lo, hi), &x| {
            (
                if lo.is_nan() || x < lo { x } else { lo },
                if hi.is_nan() || x > hi { x } else { hi },
            )
        })
}

/// The xz magic bytes (`FD 37 7A 58 5A 00`).
const XZ_MAGIC: [u8; 6] = [0xFD, b'7', b'z', b'X', b'Z', 0x00];

/// The bytes of `path`, decompressed when they are xz.
pub(crate) fn read_maybe_xz(path: &Path) -> Result<(Vec<u8>, bool), ReadError> {
    let raw = io::read_bytes(path)?;
    if raw.starts_with(&XZ_MAGIC) {
        let mut out = Vec::new();
        lzma_rs::xz_decompress(&mut raw.as_slice(), &mut out)
            .map_err(|e| ReadError::format(path, format!("xz decompression failed: {e}")))?;
        Ok((out, true))
    } else {
        Ok((raw, false))
    }
}

/// How the fields of a line are separated.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Delimiter {
    Comma,
    Semicolon,
    Tab,
    Whitespace,
}

impl Delimiter {
    fn detect(line: &str) -> Delimiter {
        if line.contains(',') {
            Delimiter::Comma
        } else if line.contains(';') {
            Delimiter::Semicolon
        } else if line.contains('\t') {
            Delimiter::Tab
        } else {
            Delimiter::Whitespace
        }
    }

    fn split(self, line: &str) -> Vec<&str> {
        fn trim(s: &str) -> &str {
            s.trim().trim_matches('"').trim_matches('\'').trim()
        }
        match self {
            Delimiter::Comma => line.split(',').map(trim).collect(),
            Delimiter::Semicolon => line.split(';').map(trim).collect(),
            Delimiter::Tab => line.split('\t').map(trim).collect(),
            Delimiter::Whitespace => line.split_whitespace().map(trim).collect(),
        }
    }

    fn words(self) -> &'static str {
        match self {
            Delimiter::Comma => "csv",
            Delimiter::Semicolon => "semicolon-separated text",
            Delimiter::Tab => "tab-separated text",
            Delimiter::Whitespace => "whitespace-delimited text",
        }
    }
}

fn is_comment(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with('#') || t.starts_with('%') || t.starts_with('!') || t.starts_with("//")
}

/// Tokens that mean "no value" in a data cell; such rows are skipped and counted.
fn is_missing(tok: &str) -> bool {
    matches!(
        tok.to_ascii_lowercase().as_str(),
        "" | "nan" | "na" | "n/a" | "null" | "none" | "-" | "*"
    )
}

/// The role a header name suggests (lower-cased tokens of the name).
fn role_from_name(name: &str) -> Option<ColumnRole> {
    let lower = name.to_lowercase();
    let tokens: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .collect();
    let first = *tokens.first()?;
    let has = |set: &[&str]| tokens.iter().any(|t| set.contains(t));
    if has(&["lon", "long", "longitude", "lng"]) {
        return Some(ColumnRole::Lon);
    }
    if has(&["lat", "latitude"]) {
        return Some(ColumnRole::Lat);
    }
    if ["x", "easting", "east", "e", "xcoord", "utmx", "utme"].contains(&first) {
        return Some(ColumnRole::X);
    }
    if ["y", "northing", "north", "n", "ycoord", "utmy", "utmn"].contains(&first) {
        return Some(ColumnRole::Y);
    }
    if [
        "z",
        "elev",
        "elevation",
        "height",
        "alt",
        "altitude",
        "h",
        "topo",
        "topography",
    ]
    .contains(&first)
    {
        return Some(ColumnRole::Z);
    }
    if [
        "err",
        "error",
        "std",
        "stdev",
        "sigma",
        "sd",
        "uncertainty",
        "unc",
    ]
    .contains(&first)
    {
        return Some(ColumnRole::Error);
    }
    None
}

/// Read a station table. See the module documentation for how columns and the kind are
/// decided.
pub fn read_station_table(path: &Path, options: &ReadOptions) -> Result<StationTable, ReadError> {
    let (bytes, compressed) = read_maybe_xz(path)?;
    let text = String::from_utf8_lossy(&bytes);
    parse_station_text(path, &text, compressed, options)
}

/// The parser behind [`read_station_table`], on text already in memory.
pub fn parse_station_text(
    path: &Path,
    text: &str,
    compressed: bool,
    options: &ReadOptions,
) -> Result<StationTable, ReadError> {
    crate::methods::truncated::check_last_row(path, text)?;
    let mut notes = Vec::new();
    // Find the first non-comment, non-blank line and the comment just before it.
    let mut last_comment: Option<&str> = None;
    let mut lines = text.lines().enumerate().peekable();
    let mut first: Option<(usize, &str)> = None;
    for (i, line) in lines.by_ref() {
        if line.trim().is_empty() {
            continue;
        }
        if is_comment(line) {
            last_comment = Some(line);
            continue;
        }
        first = Some((i + 1, line));
        break;
    }
    let Some((first_no, first_line)) = first else {
        return Err(ReadError::format(
            path,
            "no station rows: the file has no data lines",
        ));
    };
    let delim = Delimiter::detect(first_line);
    let first_tokens = delim.split(first_line);
    let first_is_header = first_tokens
        .iter()
        .any(|t| io::parse_f64(t).is_none() && !is_missing(t))
        && first_tokens
            .iter()
            .any(|t| t.chars().any(|c| c.is_alphabetic()));
    // A header line must be followed by data; find the first data line.
    let (header, data_start): (Option<Vec<String>>, Option<(usize, &str)>) = if first_is_header {
        let next = lines.find(|(_, l)| !l.trim().is_empty() && !is_comment(l));
        (
            Some(first_tokens.iter().map(|s| s.to_string()).collect()),
            next.map(|(i, l)| (i + 1, l)),
        )
    } else {
        (None, Some((first_no, first_line)))
    };
    let Some((data_no, data_line)) = data_start else {
        return Err(ReadError::format(
            path,
            "no station rows: a header but no data lines",
        ));
    };
    let data_delim = if header.is_some() {
        delim
    } else {
        Delimiter::detect(data_line)
    };
    let first_data = data_delim.split(data_line);
    let n_cols = first_data.len();
    // A comment line right above header-less data with one name per column is its header
    // (e.g. pyGIMLi's "# x g").
    let header = header.or_else(|| {
        let c = last_comment?;
        let body = c
            .trim_start()
            .trim_start_matches(['#', '%', '!', '/'])
            .trim();
        let toks = Delimiter::detect(body).split(body);
        (toks.len() == n_cols
            && toks
                .iter()
                .all(|t| io::parse_f64(t).is_none() && !t.is_empty()))
        .then(|| {
            notes.push(format!(
                "column names taken from the comment line \"{}\"",
                c.trim()
            ));
            toks.iter().map(|s| s.to_string()).collect()
        })
    });
    if let Some(h) = &header
        && h.len() != n_cols
    {
        return Err(ReadError::malformed(
            path,
            data_no,
            format!("{} fields, one per header name ({})", h.len(), h.join(", ")),
            data_line,
        ));
    }
    // Numeric columns are those whose first data cell is a number (or a missing marker).
    let numeric: Vec<bool> = first_data
        .iter()
        .map(|t| io::parse_f64(t).is_some() || is_missing(t))
        .collect();
    let (roles, guessed) = assign_roles(
        path,
        data_no,
        data_line,
        options,
        header.as_deref(),
        &numeric,
        &mut notes,
    )?;
    let role_at = |r: ColumnRole| roles.iter().position(|&x| x == r);
    let value_col = role_at(ColumnRole::Value).ok_or_else(|| {
        ReadError::format(
            path,
            "no value column: name one with the column roles option",
        )
    })?;
    let profile = role_at(ColumnRole::Y).is_none() && role_at(ColumnRole::Lat).is_none();
    let has_lonlat = role_at(ColumnRole::Lon).is_some() && role_at(ColumnRole::Lat).is_some();
    let x_col = if has_lonlat {
        role_at(ColumnRole::Lon)
    } else {
        role_at(ColumnRole::X)
    };
    let Some(x_col) = x_col else {
        return Err(ReadError::format(
            path,
            "no x (or longitude) column: name one with the column roles option",
        ));
    };
    let y_col = if has_lonlat {
        role_at(ColumnRole::Lat)
    } else {
        role_at(ColumnRole::Y)
    };
    let z_col = role_at(ColumnRole::Z);
    let e_col = role_at(ColumnRole::Error);
    let needed: Vec<(usize, ColumnRole)> = roles
        .iter()
        .enumerate()
        .filter(|(_, r)| **r != ColumnRole::Ignore)
        .map(|(i, r)| (i, *r))
        .collect();

    let mut cols: Vec<Vec<f64>> = vec![Vec::new(); n_cols];
    let mut skipped = 0usize;
    let rows = std::iter::once((data_no - 1, data_line)).chain(lines);
    for (i, line) in rows {
        let line_no = i + 1;
        if line.trim().is_empty() || is_comment(line) {
            continue;
        }
        let toks = data_delim.split(line);
        if toks.len() < n_cols {
            return Err(ReadError::malformed(
                path,
                line_no,
                format!("{n_cols} fields like the first data line"),
                line,
            ));
        }
        if needed.iter().any(|&(c, _)| is_missing(toks[c])) {
            skipped += 1;
            continue;
        }
        for &(c, role) in &needed {
            let v = io::parse_f64(toks[c]).ok_or_else(|| {
                ReadError::malformed(
                    path,
                    line_no,
                    format!("a number in column {} ({})", c + 1, role_words(role)),
                    toks[c],
                )
            })?;
            cols[c].push(v);
        }
    }
    let n = cols[value_col].len();
    if n == 0 {
        return Err(ReadError::format(
            path,
            format!("no station rows: every one of the {skipped} data rows lacks a value"),
        ));
    }
    if skipped > 0 {
        notes.push(format!(
            "{skipped} rows without a value (NaN, NA or empty) were skipped"
        ));
    }
    let value = std::mem::take(&mut cols[value_col]);
    let z_m = z_col.map(|c| std::mem::take(&mut cols[c]));
    let error = e_col.map(|c| std::mem::take(&mut cols[c]));
    if let Some(err) = &error
        && let Some(bad) = err.iter().position(|&e| e <= 0.0)
    {
        notes.push(format!(
            "error column has a non-positive value at station {} ({}); errors of 0 or below \
             are replaced by the error model of the inversion",
            bad + 1,
            err[bad]
        ));
    }
    let xs = std::mem::take(&mut cols[x_col]);
    let ys = y_col.map_or_else(|| vec![0.0; n], |c| std::mem::take(&mut cols[c]));
    let (x_m, y_m, lon_deg, lat_deg, projection) = if has_lonlat {
        if let Some(bad) = xs.iter().position(|l| !(-360.0..=360.0).contains(l)) {
            return Err(ReadError::format(
                path,
                format!(
                    "longitude {} of station {} is outside ±360°",
                    xs[bad],
                    bad + 1
                ),
            ));
        }
        if let Some(bad) = ys.iter().position(|l| !(-90.0..=90.0).contains(l)) {
            return Err(ReadError::format(
                path,
                format!(
                    "latitude {} of station {} is outside ±90°",
                    ys[bad],
                    bad + 1
                ),
            ));
        }
        let (lo0, lo1) = min_max(&xs);
        let (la0, la1) = min_max(&ys);
        let tm = TransverseMercator::local(0.5 * (lo0 + lo1), 0.5 * (la0 + la1));
        let (px, py): (Vec<f64>, Vec<f64>) = xs
            .iter()
            .zip(&ys)
            .map(|(&lo, &la)| tm.forward(lo, la))
            .unzip();
        notes.push(format!(
            "longitude/latitude projected to local metres: {}",
            tm.describe()
        ));
        (px, py, Some(xs), Some(ys), Some(tm))
    } else {
        (xs, ys, None, None, None)
    };
    if profile {
        notes.push("two-column profile: x and value; y set to 0".to_string());
    }
    if guessed {
        warn_if_geographic(&x_m, &y_m, &mut notes);
    }
    let value_name = header.as_ref().map(|h| h[value_col].clone());
    let file_name = path.file_name().map(|f| f.to_string_lossy().into_owned());
    let kind = infer_kind(
        options.kind,
        value_name.as_deref(),
        file_name.as_deref(),
        options.request.as_deref(),
    );
    let mut value = value;
    let mut error = error;
    let value_unit = kind.kind().map(|k| k.family.unit().to_string());
    if kind.kind().is_some_and(|k| k.family == Family::Gravity)
        && value_name.as_ref().is_some_and(|n| {
            let l = n.to_lowercase();
            l.contains("ugal") || l.contains("µgal") || l.contains("microgal")
        })
    {
        value.iter_mut().for_each(|v| *v *= 1e-3);
        if let Some(e) = error.as_mut() {
            e.iter_mut().for_each(|v| *v *= 1e-3);
        }
        notes.push("values in µGal converted to mGal (× 0.001)".to_string());
    }
    let columns = roles
        .iter()
        .enumerate()
        .map(|(i, &role)| ColumnInfo {
            index: i,
            name: header.as_ref().map(|h| h[i].clone()),
            role,
        })
        .collect();
    Ok(StationTable {
        file: path.display().to_string(),
        format: format!(
            "{}{}",
            data_delim.words(),
            if compressed { " (xz-compressed)" } else { "" }
        ),
        columns,
        columns_guessed: guessed,
        n_stations: n,
        x_m,
        y_m,
        z_m,
        value,
        error,
        lon_deg,
        lat_deg,
        projection,
        kind,
        value_unit,
        profile,
        skipped_rows: skipped,
        notes,
    })
}

fn role_words(r: ColumnRole) -> &'static str {
    match r {
        ColumnRole::X => "x",
        ColumnRole::Y => "y",
        ColumnRole::Lon => "longitude",
        ColumnRole::Lat => "latitude",
        ColumnRole::Z => "elevation",
        ColumnRole::Value => "value",
        ColumnRole::Error => "error",
        ColumnRole::Ignore => "ignored",
    }
}

/// Column roles from the options, the header, or the documented default order; the bool is
/// whether they were guessed.
fn assign_roles(
    path: &Path,
    line_no: usize,
    line: &str,
    options: &ReadOptions,
    header: Option<&[String]>,
    numeric: &[bool],
    notes: &mut Vec<String>,
) -> Result<(Vec<ColumnRole>, bool), ReadError> {
    let n = numeric.len();
    if let Some(roles) = &options.columns {
        if roles.len() != n {
            return Err(ReadError::malformed(
                path,
                line_no,
                format!("{} fields, one per column role given", roles.len()),
                line,
            ));
        }
        for (i, r) in roles.iter().enumerate() {
            if *r != ColumnRole::Ignore && !numeric[i] {
                return Err(ReadError::malformed(
                    path,
                    line_no,
                    format!("a number in column {} ({})", i + 1, role_words(*r)),
                    line,
                ));
            }
        }
        return Ok((roles.clone(), false));
    }
    if let Some(h) = header {
        let mut roles: Vec<ColumnRole> = h
            .iter()
            .zip(numeric)
            .map(|(name, &num)| {
                if !num {
                    ColumnRole::Ignore
                } else {
                    role_from_name(name).unwrap_or(ColumnRole::Ignore)
                }
            })
            .collect();
        // Keep only the first column of each coordinate role.
        for role in [
            ColumnRole::X,
            ColumnRole::Y,
            ColumnRole::Lon,
            ColumnRole::Lat,
            ColumnRole::Z,
            ColumnRole::Error,
        ] {
            let mut seen = false;
            for r in roles.iter_mut().filter(|r| **r == role) {
                if seen {
                    *r = ColumnRole::Ignore;
                }
                seen = true;
            }
        }
        // The value: the remaining numeric column that names a kind, else the only one left.
        let free: Vec<usize> = (0..n)
            .filter(|&i| numeric[i] && roles[i] == ColumnRole::Ignore)
            .collect();
        let with_kind: Vec<usize> = free
            .iter()
            .copied()
            .filter(|&i| {
                !super::kind::find_evidence(&h[i], super::kind::EvidenceSource::Header).is_empty()
                    || [
                        "value", "data", "obs", "observed", "anomaly", "reading", "field",
                    ]
                    .iter()
                    .any(|k| h[i].to_lowercase().contains(k))
            })
            .collect();
        let too_many = |several: &[usize]| {
            let names: Vec<&str> = several.iter().map(|&i| h[i].as_str()).collect();
            ReadError::format(
                path,
                format!(
                    "several columns could be the value ({}); name one with the column roles option",
                    names.join(", ")
                ),
            )
        };
        let pick = match (with_kind.as_slice(), free.as_slice()) {
            ([one], _) => Some(*one),
            ([], []) => None,
            ([], [one]) => {
                notes.push(format!(
                    "the value column \"{}\" was chosen because it is the only numeric column \
                     without a coordinate name",
                    h[*one]
                ));
                Some(*one)
            }
            ([], several) => return Err(too_many(several)),
            (several, _) => return Err(too_many(several)),
        };
        if let Some(p) = pick {
            roles[p] = ColumnRole::Value;
        }
        let ignored: Vec<&str> = (0..n)
            .filter(|&i| roles[i] == ColumnRole::Ignore)
            .map(|i| h[i].as_str())
            .collect();
        if !ignored.is_empty() {
            notes.push(format!("columns not used: {}", ignored.join(", ")));
        }
        return Ok((roles, false));
    }
    // No header: the documented order x, y, value[, z] over the numeric columns.
    let order = match numeric.iter().filter(|&&b| b).count() {
        0 | 1 => {
            return Err(ReadError::malformed(
                path,
                line_no,
                "at least two numeric fields (x, value) or three (x, y, value)",
                line,
            ));
        }
        2 => vec![ColumnRole::X, ColumnRole::Value],
        3 => vec![ColumnRole::X, ColumnRole::Y, ColumnRole::Value],
        _ => vec![
            ColumnRole::X,
            ColumnRole::Y,
            ColumnRole::Value,
            ColumnRole::Z,
        ],
    };
    let mut it = order.into_iter();
    let roles: Vec<ColumnRole> = numeric
        .iter()
        .map(|&num| {
            if num {
                it.next().unwrap_or(ColumnRole::Ignore)
            } else {
                ColumnRole::Ignore
            }
        })
        .collect();
    notes.push(format!(
        "no header: columns taken in the studio's documented order x, y, value[, z] ({}); \
         if that is wrong, give the column roles",
        roles
            .iter()
            .map(|r| role_words(*r))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Ok((roles, true))
}

/// A note when header-less x and y both lie within geographic ranges (they may be
/// longitude/latitude, or latitude/longitude: the reader does not decide that).
fn warn_if_geographic(x: &[f64], y: &[f64], notes: &mut Vec<String>) {
    let (x0, x1) = min_max(x);
    let (y0, y1) = min_max(y);
    let within = |lo: f64, hi: f64, lim: f64| lo >= -lim && hi <= lim;
    if within(x0, x1, 180.0)
        && within(y0, y1, 180.0)
        && (within(x0, x1, 90.0) || within(y0, y1, 90.0))
    {
        notes.push(format!(
            "columns 1 and 2 span only {:.3}…{:.3} and {:.3}…{:.3}: if these are longitude and \
             latitude (in either order) they are degrees, not metres — give the column roles",
            x0, x1, y0, y1
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, name: &str, o: &ReadOptions) -> Result<StationTable, ReadError> {
        parse_station_text(Path::new(name), text, false, o)
    }

    #[test]
    fn header_csv_with_units_in_names() {
        let t = parse(
            "x_m,y_m,z_m,gz_mgal,err\n0,0,5,0.1,0.005\n20,0,5,0.2,0.005\n",
            "grav_400.csv",
            &ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(t.n_stations, 2);
        assert_eq!(t.value, vec![0.1, 0.2]);
        assert_eq!(t.z_m, Some(vec![5.0, 5.0]));
        assert_eq!(t.error, Some(vec![0.005, 0.005]));
        assert_eq!(t.family(), Some(Family::Gravity));
        assert!(!t.columns_guessed);
    }

    #[test]
    fn headerless_table_uses_the_documented_order_and_says_so() {
        let t = parse("1 2 3.5\n4 5 6.5\n", "s.txt", &ReadOptions::default()).unwrap();
        assert_eq!(
            (t.x_m.clone(), t.y_m.clone(), t.value.clone()),
            (vec![1.0, 4.0], vec![2.0, 5.0], vec![3.5, 6.5])
        );
        assert!(t.columns_guessed);
        assert!(t.notes.iter().any(|n| n.contains("documented order")));
        assert!(t.kind.kind().is_none(), "no evidence: ambiguous");
    }

    #[test]
    fn comment_header_and_two_column_profile() {
        let t = parse(
            "# x\tg\n0.0\t1.195\n33.17\t1.106\n",
            "profile.txt",
            &ReadOptions::default(),
        )
        .unwrap();
        assert!(t.profile);
        assert_eq!(t.family(), Some(Family::Gravity));
        assert_eq!(t.y_m, vec![0.0, 0.0]);
    }

    #[test]
    fn malformed_rows_name_file_line_expected_found() {
        let e = parse(
            "x,y,bouguer\n1,2,3\n1,2,abc\n",
            "b.csv",
            &ReadOptions::default(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "b.csv, line 3: expected a number in column 3 (value), found \"abc\""
        );
        let e = parse(
            "x,y,bouguer\n1,2,3\n1,2\n",
            "b.csv",
            &ReadOptions::default(),
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("b.csv, line 3: expected 3 fields"),
            "{e}"
        );
        let e = parse("# only comments\n", "c.csv", &ReadOptions::default()).unwrap_err();
        assert!(e.to_string().contains("no station rows"), "{e}");
    }

    #[test]
    fn missing_values_are_skipped_and_counted() {
        let t = parse(
            "x,y,tmi\n1,2,3\n1,2,NaN\n3,3,4\n",
            "m.csv",
            &ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(t.n_stations, 2);
        assert_eq!(t.skipped_rows, 1);
        assert_eq!(t.family(), Some(Family::Magnetic));
    }

    #[test]
    fn explicit_roles_and_lonlat_projection() {
        let o = ReadOptions {
            columns: Some(vec![
                ColumnRole::Lat,
                ColumnRole::Lon,
                ColumnRole::Z,
                ColumnRole::Value,
            ]),
            ..Default::default()
        };
        let t = parse(
            "-34.0 17.0 100 979700\n-33.0 18.0 50 979650\n",
            "sa-gravity.ast",
            &o,
        )
        .unwrap();
        let proj = t.projection.unwrap();
        assert_eq!(proj.central_meridian_deg, 17.5);
        assert_eq!(proj.origin_latitude_deg, -33.5);
        // Symmetric about the centre: x of the two stations are opposite to 1e-6 m.
        assert!((t.x_m[0] + t.x_m[1]).abs() < 1e3, "{:?}", t.x_m);
        assert!(t.y_m[0] < 0.0 && t.y_m[1] > 0.0);
        assert_eq!(t.lat_deg.unwrap(), vec![-34.0, -33.0]);
        assert!(t.notes.iter().any(|n| n.contains("transverse Mercator")));
    }

    #[test]
    fn text_columns_are_ignored() {
        let t = parse(
            "survey_area,line,longitude,latitude,altitude_m,total_field_anomaly_nt\nCA55,FL1-1,-1.74,53.48,842.0,62\nCA55,FL1-1,-1.70,53.49,713.0,56\n",
            "britain-magnetic.csv",
            &ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(t.value, vec![62.0, 56.0]);
        assert_eq!(t.z_m, Some(vec![842.0, 713.0]));
        assert!(t.projection.is_some());
        assert_eq!(
            t.kind.kind().unwrap().quantity,
            super::super::kind::Quantity::TotalFieldAnomaly
        );
    }

    #[test]
    fn two_value_candidates_are_an_error_that_asks() {
        let e = parse(
            "x,y,bouguer,free_air\n1,2,3,4\n",
            "two.csv",
            &ReadOptions::default(),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("several columns could be the value"),
            "{e}"
        );
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        fn real_file_head() -> Option<Vec<u8>> {
            let p = crate::field_data::data("gravmag/phgx/bushveld_gravity_disturbance.csv")?;
            let b = std::fs::read(p).ok()?;
            Some(b[..b.len().min(6000)].to_vec())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(300))]

            #[test]
            fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..3000)) {
                let text = String::from_utf8_lossy(&bytes);
                let _ = parse_station_text(Path::new("x.csv"), &text, false, &ReadOptions::default());
            }

            #[test]
            fn table_like_text_never_panics(text in "[0-9a-zA-Z,;\\t \\n.#eE+\\-_]{0,600}") {
                let _ = parse_station_text(Path::new("t.txt"), &text, false, &ReadOptions::default());
                let o = ReadOptions {
                    columns: Some(vec![ColumnRole::Lon, ColumnRole::Lat, ColumnRole::Value]),
                    ..Default::default()
                };
                let _ = parse_station_text(Path::new("t.txt"), &text, false, &o);
            }

            #[test]
            fn files_with_arbitrary_bytes_never_panic(
                bytes in proptest::collection::vec(any::<u8>(), 0..2000),
                xz in any::<bool>(),
            ) {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join(if xz { "g.csv.xz" } else { "gravity.csv" });
                let mut content = if xz { XZ_MAGIC.to_vec() } else { Vec::new() };
                content.extend_from_slice(&bytes);
                std::fs::write(&path, &content).unwrap();
                let _ = read_station_table(&path, &ReadOptions::default());
                let _ = crate::methods::gravmag::read_summary(&path);
            }

            #[test]
            fn mutations_of_a_real_file_never_panic(
                edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..30),
                cut in any::<prop::sample::Index>(),
            ) {
                let Some(mut b) = real_file_head() else { return Ok(()) };
                for (at, byte, op) in edits {
                    if b.is_empty() { break; }
                    let i = at.index(b.len());
                    match op {
                        0 => b[i] = byte,
                        1 => b.insert(i, byte),
                        _ => { b.remove(i); }
                    }
                }
                let keep = cut.index(b.len() + 1);
                b.truncate(keep.max(b.len() / 2));
                let text = String::from_utf8_lossy(&b);
                let r = parse_station_text(Path::new("bushveld.csv"), &text, false, &ReadOptions::default());
                if let Ok(t) = r {
                    prop_assert_eq!(t.x_m.len(), t.n_stations);
                    prop_assert_eq!(t.value.len(), t.n_stations);
                }
            }
        }
    }
}

//! pyGIMLi/BERT unified data format (`.dat`, `.ohm`, `.shm`): reader and writer.
//!
//! Layout (Günther, Rücker & Spitzer 2006; pyGIMLi `DataContainer::load`):
//! ```text
//! N            # number of electrodes (anything after '#' is a comment, `38# …` too)
//! # x z        # token line naming the sensor columns, any case: x y z, x z, x y, x/mm …
//! x z          # N rows
//! M            # number of data
//! # a b m n rhoa err …   # token line naming the data columns, in any order and case
//! a b m n …    # M rows, electrode numbers 1-based (0 = none/pole)
//! K            # optional topography block: K, then K rows x z (or x y z)
//! ```
//! Comment lines (`#…`) and blank lines may stand anywhere; a count or a row may carry a
//! trailing comment. The sensor token line is the first comment before the first sensor row
//! whose first token is x; the data token line is the first comment before the first data
//! row that names a, b, m and n. Without an `r` column, R = u/i (pyGIMLi's `DataContainerERT`
//! does the same); the notes say so.
//! Units: r Ω, rhoa Ω·m, u V, i A, err relative, k m, ip as written (pyGIMLi: mrad); a unit
//! after '/' scales (`u/mV`, `i/mA`, `err/%`, `r/kOhm`, `x/mm`).

use super::super::survey::{Electrode, Format, Quadrupole, Survey};
use super::{numbered_lines, parse_index, value_or_nan};
use crate::methods::io::{ReadError, fields, parse_f64};
use std::path::Path;

/// The body of a line without its `#` comment, trimmed.
fn strip_comment(line: &str) -> &str {
    line.split('#').next().unwrap_or("").trim()
}

/// One non-blank line: a whole-line comment (the text after the leading `#`s) or a row (the
/// text before any `#`).
#[derive(Debug, Clone, Copy)]
enum Item<'a> {
    Comment(&'a str),
    Row(usize, &'a str),
}

/// The lines of a unified file, read forward.
struct Cursor<'a> {
    lines: Vec<(usize, &'a str)>,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Self {
        Cursor {
            lines: numbered_lines(text),
            pos: 0,
        }
    }

    /// The next non-blank line, or `None` at the end of the file.
    fn next_item(&mut self) -> Option<Item<'a>> {
        while let Some(&(no, l)) = self.lines.get(self.pos) {
            self.pos += 1;
            let t = l.trim();
            if t.is_empty() {
                continue;
            }
            if let Some(c) = t.strip_prefix('#') {
                return Some(Item::Comment(c.trim_start_matches('#').trim()));
            }
            return Some(Item::Row(no, strip_comment(t)));
        }
        None
    }

    /// The next row, skipping comments (the last comment met before it is returned too).
    fn next_row(&mut self) -> Option<(usize, &'a str, Option<&'a str>)> {
        let mut last = None;
        loop {
            match self.next_item()? {
                Item::Comment(c) => last = Some(c),
                Item::Row(no, r) => return Some((no, r, last)),
            }
        }
    }

    /// The number of the last line of the file (for "end of file" messages).
    fn last_line(&self) -> usize {
        self.lines.len().max(1)
    }
}

/// A token of a token line, split into its lower-case name and unit (`U/mV` → `u`, `mv`).
fn token(t: &str) -> (String, String) {
    let l = t.to_ascii_lowercase();
    match l.split_once('/') {
        Some((n, u)) => (n.to_string(), u.to_string()),
        None => (l, String::new()),
    }
}

/// The tokens of a comment line.
fn tokens(comment: &str) -> Vec<String> {
    fields(comment).iter().map(|t| t.to_string()).collect()
}

/// Whether a comment names the sensor columns (its first token is x, any case or unit).
fn is_sensor_token_line(comment: &str) -> bool {
    fields(comment).first().is_some_and(|t| token(t).0 == "x")
}

/// Whether a comment names the data columns: a, b, m and n in any order and case (or the
/// travel-time tokens s g, refused later with their own message).
fn is_data_token_line(comment: &str) -> bool {
    let names: Vec<String> = fields(comment).iter().map(|t| token(t).0).collect();
    let has = |n: &str| names.iter().any(|t| t == n);
    (has("a") && has("b") && has("m") && has("n")) || (has("s") && has("g"))
}

/// A count line: one non-negative integer (a trailing comment already removed).
fn count_of(row: &str) -> Option<usize> {
    let f = fields(row);
    if f.len() != 1 {
        return None;
    }
    parse_index(f[0]).filter(|n| *n >= 0).map(|n| n as usize)
}

/// Without a sensor token line (pyGIMLi then takes its default columns): `n` rows of one to
/// three coordinates, a count, and a data token line naming a b m n before the first datum.
fn untokened_layout(c: &mut Cursor, first: &str, n: usize) -> bool {
    let coords = |r: &str| {
        let f = fields(r);
        (1..=3).contains(&f.len()) && f.iter().all(|t| parse_f64(t).is_some())
    };
    if !coords(first) {
        return false;
    }
    for _ in 1..n {
        match c.next_row() {
            Some((_, r, _)) if coords(r) => {}
            _ => return false,
        }
    }
    if c.next_row().is_none_or(|(_, r, _)| count_of(r).is_none()) {
        return false;
    }
    while let Some(Item::Comment(t)) = c.next_item() {
        if is_data_token_line(t) {
            return true;
        }
    }
    false
}

/// Whether the lines look like the unified format: comment lines, then a count, then
/// (before the first sensor row, comments and blank lines allowed) a token line naming x —
/// or, without one, sensor rows followed by a data token line ([`untokened_layout`]).
pub fn looks_like(lines: &[&str]) -> bool {
    let text = lines.join("\n");
    let mut c = Cursor::new(&text);
    let Some((_, count, _)) = c.next_row() else {
        return false;
    };
    let Some(n) = count_of(count).filter(|n| *n >= 1) else {
        return false;
    };
    while let Some(item) = c.next_item() {
        match item {
            Item::Comment(t) if is_sensor_token_line(t) => return true,
            Item::Comment(_) => {}
            Item::Row(_, first) => return untokened_layout(&mut c, first, n),
        }
    }
    false
}

/// The sensor columns: which coordinate each holds and its scale to metres.
fn sensor_columns(toks: &[String]) -> Vec<(char, f64)> {
    toks.iter()
        .map(|t| {
            let (name, unit) = token(t);
            let scale = if unit == "mm" { 1e-3 } else { 1.0 };
            match name.as_str() {
                "x" => ('x', scale),
                "y" => ('y', scale),
                "z" => ('z', scale),
                _ => ('-', 1.0),
            }
        })
        .collect()
}

/// The electrode count and the electrode rows.
fn parse_sensors(path: &Path, c: &mut Cursor, s: &mut Survey) -> Result<(), ReadError> {
    let mut pre_comment = None;
    let (no, count_line) = loop {
        match c.next_item() {
            None => {
                return Err(ReadError::malformed(
                    path,
                    c.last_line(),
                    "the number of electrodes",
                    "end of file",
                ));
            }
            Some(Item::Comment(t)) => pre_comment = Some(t),
            Some(Item::Row(no, r)) => break (no, r),
        }
    };
    if let Some(d) = pre_comment.and_then(|t| t.strip_prefix("date:")) {
        super::set_date(s, d.trim(), None, "'# date:' header line");
    }
    let n_el = count_of(count_line)
        .filter(|n| *n <= 10_000_000)
        .ok_or_else(|| {
            ReadError::malformed(
                path,
                no,
                "the number of electrodes (one integer)",
                count_line,
            )
        })?;
    let mut cols: Option<Vec<(char, f64)>> = None;
    let mut xy_2d = false;
    let mut width = None;
    while s.electrodes.len() < n_el {
        let Some(item) = c.next_item() else {
            return Err(ReadError::malformed(
                path,
                c.last_line(),
                format!("{n_el} electrode rows"),
                format!("end of file after {} rows", s.electrodes.len()),
            ));
        };
        let (no, row) = match item {
            Item::Comment(t) => {
                if s.electrodes.is_empty() && cols.is_none() && is_sensor_token_line(t) {
                    let toks = tokens(t);
                    xy_2d = toks.len() == 2 && token(&toks[1]).0 == "y";
                    cols = Some(sensor_columns(&toks));
                }
                continue;
            }
            Item::Row(no, r) => (no, r),
        };
        let vals: Vec<f64> = fields(row)
            .iter()
            .map(|v| {
                parse_f64(v).ok_or_else(|| {
                    ReadError::malformed(path, no, "electrode coordinates (numbers)", row)
                })
            })
            .collect::<Result<_, _>>()?;
        if vals.is_empty() || width.is_some_and(|w| vals.len() < w) {
            return Err(ReadError::malformed(
                path,
                no,
                format!(
                    "an electrode row with {} coordinates, as the rows before it",
                    width.unwrap_or(1)
                ),
                row,
            ));
        }
        if width.is_none() && cols.is_none() {
            s.notes.push(format!(
                "no sensor token line: {} column(s) read as {}",
                vals.len(),
                ["x", "x z", "x y z"][vals.len().clamp(1, 3) - 1]
            ));
        }
        width.get_or_insert(vals.len());
        let cols = cols.clone().unwrap_or_else(|| {
            let names: &[&str] = match vals.len() {
                1 => &["x"],
                2 => &["x", "z"],
                _ => &["x", "y", "z"],
            };
            sensor_columns(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
        });
        let mut e = Electrode::at(0.0, 0.0, 0.0);
        for ((name, scale), v) in cols.iter().zip(&vals) {
            match name {
                'x' => e.x_m = v * scale,
                'y' if xy_2d => e.z_m = v * scale,
                'y' => e.y_m = v * scale,
                'z' => e.z_m = v * scale,
                _ => {}
            }
        }
        s.electrodes.push(e);
    }
    if xy_2d {
        s.notes
            .push("2D sensor table 'x y': y taken as elevation (pyGIMLi 2D convention)".into());
    }
    Ok(())
}

/// The data rows (line number, values) and the data token line.
type DataRows = (Vec<(usize, Vec<f64>)>, Option<Vec<String>>);

/// The data count, the data token line and the data rows.
fn parse_data_rows(path: &Path, c: &mut Cursor) -> Result<DataRows, ReadError> {
    let Some((no, count_line, _)) = c.next_row() else {
        return Err(ReadError::malformed(
            path,
            c.last_line(),
            "the number of data",
            "end of file",
        ));
    };
    let n_data = count_of(count_line).ok_or_else(|| {
        ReadError::malformed(path, no, "the number of data (one integer)", count_line)
    })?;
    let mut toks: Option<Vec<String>> = None;
    let mut rows: Vec<(usize, Vec<f64>)> = Vec::with_capacity(n_data.min(1_000_000));
    while rows.len() < n_data {
        let Some(item) = c.next_item() else {
            return Err(ReadError::malformed(
                path,
                c.last_line(),
                format!("{n_data} data rows"),
                format!("end of file after {} rows", rows.len()),
            ));
        };
        match item {
            Item::Comment(t) => {
                if rows.is_empty() && toks.is_none() && is_data_token_line(t) {
                    toks = Some(tokens(t));
                }
            }
            Item::Row(no, row) => {
                let vals: Vec<f64> = fields(row)
                    .iter()
                    .map(|v| {
                        value_or_nan(v).ok_or_else(|| {
                            ReadError::malformed(path, no, "numbers in a data row", row)
                        })
                    })
                    .collect::<Result<_, _>>()?;
                rows.push((no, vals));
            }
        }
    }
    Ok((rows, toks))
}

/// A short data row is a cut file (the last row of a truncated export): refused, naming it.
/// Rows that are all equally shorter than the token line lack those columns (said in a note).
fn check_row_widths(
    path: &Path,
    rows: &[(usize, Vec<f64>)],
    toks: &[String],
    s: &mut Survey,
) -> Result<(), ReadError> {
    let widest = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    let full = widest.min(toks.len()).max(4);
    if let Some((no, vals)) = rows.iter().find(|r| r.1.len() < full) {
        return Err(ReadError::malformed(
            path,
            *no,
            format!(
                "a data row with {full} values ({})",
                toks[..full.min(toks.len())].join(" ")
            ),
            format!("{} values", vals.len()),
        ));
    }
    if !rows.is_empty() && widest < toks.len() {
        s.notes.push(format!(
            "the token line names {} columns but the rows hold {widest}: {} absent",
            toks.len(),
            toks[widest..].join(" ")
        ));
    }
    Ok(())
}

/// Parse a unified-format text.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let mut c = Cursor::new(text);
    let mut s = Survey::empty(Format::Unified);
    parse_sensors(path, &mut c, &mut s)?;
    let (rows, toks) = parse_data_rows(path, &mut c)?;
    let toks = toks.unwrap_or_else(|| {
        if !rows.is_empty() {
            s.notes.push(
                "no data token line: columns read as 'a b m n rhoa err' (the unified default)"
                    .into(),
            );
        }
        ["a", "b", "m", "n", "rhoa", "err"]
            .iter()
            .map(|x| x.to_string())
            .collect()
    });
    let names: Vec<(String, String)> = toks.iter().map(|t| token(t)).collect();
    if names.iter().any(|(n, _)| n == "s") && names.iter().any(|(n, _)| n == "g") {
        return Err(ReadError::format(
            path,
            "this is a travel-time file (tokens 's g t'), not ERT data",
        ));
    }
    check_row_widths(path, &rows, &toks, &mut s)?;
    let col = |n: &[&str]| names.iter().position(|(t, _)| n.contains(&t.as_str()));
    let (Some(ia), Some(ib), Some(im), Some(inn)) = (
        col(&["a", "c1"]),
        col(&["b", "c2"]),
        col(&["m", "p1"]),
        col(&["n", "p2"]),
    ) else {
        return Err(ReadError::malformed(
            path,
            rows.first().map(|r| r.0).unwrap_or(1),
            "a token line naming a b m n",
            toks.join(" "),
        ));
    };
    s.quadrupoles = quadrupoles(path, &rows, [ia, ib, im, inn], &mut s)?;
    assign_columns(&rows, &names, &mut s);
    parse_topography(path, &mut c, &mut s)?;
    Ok(s)
}

/// The electrode numbers of the a b m n columns, as 0-based indices (`None` = pole).
///
/// 1-based by the format; read as 0-based when a 0 appears as A or M and no number reaches
/// the electrode count (pyGIMLi's `sensorIndicesFromOne=False` files).
fn quadrupoles(
    path: &Path,
    rows: &[(usize, Vec<f64>)],
    cols: [usize; 4],
    s: &mut Survey,
) -> Result<Vec<Quadrupole>, ReadError> {
    let mut raw_idx: Vec<[i64; 4]> = Vec::with_capacity(rows.len());
    for (no, vals) in rows {
        let mut q = [0i64; 4];
        for (k, c) in cols.into_iter().enumerate() {
            let v = vals.get(c).copied().unwrap_or(f64::NAN);
            if !v.is_finite() || v.fract() != 0.0 || !(0.0..=1e9).contains(&v) {
                return Err(ReadError::malformed(
                    path,
                    *no,
                    "electrode numbers (non-negative integers) in the a b m n columns",
                    format!("{v}"),
                ));
            }
            q[k] = v as i64;
        }
        raw_idx.push(q);
    }
    let max_idx = raw_idx.iter().flatten().copied().max().unwrap_or(0);
    let zero_in_am = raw_idx.iter().any(|q| q[0] == 0 || q[2] == 0);
    let zero_base = zero_in_am && (max_idx as usize) < s.electrodes.len();
    if zero_base {
        s.notes.push(format!(
            "electrode numbers run 0..{max_idx} for {} electrodes and 0 occurs as A or M: read as 0-based \
             (the unified format is 1-based; pyGIMLi would read 0 as 'no electrode')",
            s.electrodes.len()
        ));
    } else if raw_idx.iter().any(|q| q.contains(&0)) {
        s.notes
            .push("electrode number 0 read as a remote (pole) electrode".into());
    }
    let conv = |v: i64| -> Option<usize> {
        match (zero_base, v) {
            (true, v) => Some(v as usize),
            (false, 0) => None,
            (false, v) => Some(v as usize - 1),
        }
    };
    Ok(raw_idx
        .iter()
        .map(|q| Quadrupole {
            a: conv(q[0]),
            b: conv(q[1]),
            m: conv(q[2]),
            n: conv(q[3]),
        })
        .collect())
}

/// The scale of a unit written after '/' in a token (to V, A, Ω, fraction).
fn unit_scale(unit: &str) -> f64 {
    match unit {
        "mv" | "ma" => 1e-3,
        "uv" | "ua" | "µv" | "µa" => 1e-6,
        "%" => 0.01,
        "kohm" => 1e3,
        _ => 1.0,
    }
}

/// The data columns by their tokens (the aliases of the format's description on
/// resistivity.net and of pyGIMLi: `rhoa`/`rho_a`/`ra`, `r`/`rho`/`z`, `u`/`v`,
/// `err`/`error`/`std`, `k`), and R = u/i when the file has no `r` column.
fn assign_columns(rows: &[(usize, Vec<f64>)], names: &[(String, String)], s: &mut Survey) {
    let get_col = |c: usize, scale: f64| -> Vec<f64> {
        rows.iter()
            .map(|(_, v)| v.get(c).copied().unwrap_or(f64::NAN) * scale)
            .collect()
    };
    for (c, (name, unit)) in names.iter().enumerate() {
        let scale = unit_scale(unit);
        match name.as_str() {
            "a" | "b" | "m" | "n" | "c1" | "c2" | "p1" | "p2" => {}
            "r" | "rho" | "z" => s.r_ohm = Some(get_col(c, scale)),
            "rhoa" | "rho_a" | "ra" => s.rhoa_ohm_m = Some(get_col(c, 1.0)),
            "u" | "v" => s.u_v = Some(get_col(c, scale)),
            "i" => s.i_a = Some(get_col(c, scale)),
            "err" | "error" | "std" => s.err = Some(get_col(c, scale)),
            "ip" => {
                s.ip = Some(get_col(c, 1.0));
                s.ip_unit = Some(if unit.is_empty() {
                    "mrad".into()
                } else {
                    unit.clone()
                });
            }
            "k" => s.k_m = Some(get_col(c, 1.0)),
            "valid" => s.valid = get_col(c, 1.0).iter().map(|v| *v != 0.0).collect(),
            other => s.notes.push(format!(
                "column '{other}' kept out (not an ERT data column this reader uses)"
            )),
        }
    }
    if s.r_ohm.is_none()
        && let (Some(u), Some(i)) = (&s.u_v, &s.i_a)
    {
        let r: Vec<f64> = u
            .iter()
            .zip(i)
            .map(|(u, i)| if *i != 0.0 { u / i } else { f64::NAN })
            .collect();
        let n_bad = r.iter().filter(|v| !v.is_finite()).count();
        s.notes.push(format!(
            "R derived as u/i (the file has u and i columns and no r column){}",
            if n_bad > 0 {
                format!("; {n_bad} datum(s) with i = 0 or missing have no R")
            } else {
                String::new()
            }
        ));
        s.r_ohm = Some(r);
    }
    if let Some(err) = &s.err
        && err.iter().any(|e| *e > 1.0)
    {
        s.notes.push(
            "some err values exceed 1: the unified format's err is a fraction; these may be percent".into(),
        );
    }
}

/// The optional topography block: a count, then that many rows `x z` (or `x y z`).
fn parse_topography(path: &Path, c: &mut Cursor, s: &mut Survey) -> Result<(), ReadError> {
    let Some((no, count_line, _)) = c.next_row() else {
        return Ok(());
    };
    let n_topo = count_of(count_line).ok_or_else(|| {
        ReadError::malformed(
            path,
            no,
            format!(
                "the number of topography points (one integer) or the end of the file after \
                 the {} declared data rows",
                s.quadrupoles.len()
            ),
            count_line,
        )
    })?;
    while s.topography.len() < n_topo {
        let Some((no, l, _)) = c.next_row() else {
            return Err(ReadError::malformed(
                path,
                c.last_line(),
                format!("{n_topo} topography rows"),
                format!("end of file after {} rows", s.topography.len()),
            ));
        };
        let v = fields(l);
        let nums: Vec<f64> = v.iter().filter_map(|t| parse_f64(t)).collect();
        if nums.len() != v.len() || nums.len() < 2 {
            return Err(ReadError::malformed(
                path,
                no,
                "a topography row 'x z' (or 'x y z')",
                l,
            ));
        }
        let z = nums[nums.len() - 1];
        s.topography.push([nums[0], z]);
    }
    Ok(())
}

fn fmt_num(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else {
        format!("{v}")
    }
}

/// Write a survey in the unified format (1-based numbers, 0 = pole). Floats are written with
/// Rust's shortest round-trip representation, so reading the text back is exact.
pub fn to_string(s: &Survey) -> String {
    let mut out = String::new();
    let three_d = s.electrodes.iter().any(|e| e.y_m != 0.0);
    out.push_str(&format!("{}# Number of electrodes\n", s.electrodes.len()));
    out.push_str(if three_d { "# x y z\n" } else { "# x z\n" });
    for e in &s.electrodes {
        if three_d {
            out.push_str(&format!(
                "{}\t{}\t{}\n",
                fmt_num(e.x_m),
                fmt_num(e.y_m),
                fmt_num(e.z_m)
            ));
        } else {
            out.push_str(&format!("{}\t{}\n", fmt_num(e.x_m), fmt_num(e.z_m)));
        }
    }
    out.push_str(&format!("{}# Number of data\n", s.quadrupoles.len()));
    let mut cols: Vec<(&str, &Vec<f64>)> = Vec::new();
    for (tok, c) in [
        ("r", &s.r_ohm),
        ("rhoa", &s.rhoa_ohm_m),
        ("u", &s.u_v),
        ("i", &s.i_a),
        ("err", &s.err),
        ("ip", &s.ip),
        ("k", &s.k_m),
    ] {
        if let Some(v) = c {
            cols.push((tok, v));
        }
    }
    let mut header = String::from("# a b m n");
    for (t, _) in &cols {
        header.push(' ');
        header.push_str(t);
    }
    header.push_str(" valid\n");
    out.push_str(&header);
    let idx = |e: Option<usize>| e.map(|v| v + 1).unwrap_or(0);
    for (i, q) in s.quadrupoles.iter().enumerate() {
        out.push_str(&format!(
            "{}\t{}\t{}\t{}",
            idx(q.a),
            idx(q.b),
            idx(q.m),
            idx(q.n)
        ));
        for (_, v) in &cols {
            out.push('\t');
            out.push_str(&fmt_num(v.get(i).copied().unwrap_or(f64::NAN)));
        }
        out.push_str(if s.valid.get(i).copied().unwrap_or(true) {
            "\t1\n"
        } else {
            "\t0\n"
        });
    }
    out.push_str(&format!("{}\n", s.topography.len()));
    for t in &s.topography {
        out.push_str(&format!("{}\t{}\n", fmt_num(t[0]), fmt_num(t[1])));
    }
    out
}

/// Write a survey to `path` in the unified format (never over the file it was read from).
pub fn write(s: &Survey, path: &Path) -> Result<(), ReadError> {
    if s.source_file.as_deref() == Some(path) {
        return Err(ReadError::format(
            path,
            "refusing to overwrite the survey's own input file",
        ));
    }
    std::fs::write(path, to_string(s)).map_err(|e| ReadError::io(path, &e))
}

#[cfg(test)]
mod tests {
    //! Each rule of the grammar on a file written for it (the numbers are the ones written in
    //! the text, so the expected values are exact).
    use super::super::{Instrument, parse_survey};
    use super::*;

    /// Comment lines first, counts with glued comments, topography, resistances only (the
    /// shape of the held-out file of issue 22).
    const GLUED: &str = "# Example data set exported for a tree trunk\n# by someone\n\n\
4# Number of sensors\n#x z\n0 0\n1 0.1\n2 0.2\n3 0.1\n\
2# Number of measurements\n#a b m n r\n1 2 3 4 0.5\n\n# a comment among the rows\n1 4 2 3 2.5\n\
2# Number of topo points\n#x z\n-1 0\n4 0\n";

    #[test]
    fn glued_count_comments_after_comment_lines_are_recognised_and_read() {
        let s = parse_survey(Path::new("trunk.dat"), GLUED.as_bytes(), Instrument::Auto).unwrap();
        assert_eq!(s.format, Format::Unified);
        assert!(!s.format_guessed);
        assert_eq!((s.n_electrodes(), s.n_data()), (4, 2));
        assert_eq!(s.r_ohm, Some(vec![0.5, 2.5]));
        assert_eq!(s.quadrupoles[1], Quadrupole::new(0, 3, 1, 2));
        assert_eq!(s.electrodes[2].z_m, 0.2);
        assert_eq!(s.topography, vec![[-1.0, 0.0], [4.0, 0.0]]);
    }

    #[test]
    fn tokens_in_any_order_and_case_with_units() {
        let text =
            "3\n# X Z\n0 0\n1 0\n2 0\n1\n# I/mA U/mV Err/% B A N M valid\n100 50 3 2 1 3 3 1\n";
        // I = 100 mA, U = 50 mV, err 3 %, b = 2, a = 1, n = 3, m = 3.
        let s = parse(Path::new("t.dat"), text).unwrap();
        assert_eq!(s.quadrupoles[0], Quadrupole::new(0, 1, 2, 2));
        assert!((s.i_a.as_ref().unwrap()[0] - 0.1).abs() < 1e-15);
        assert!((s.u_v.as_ref().unwrap()[0] - 0.05).abs() < 1e-15);
        assert!((s.err.as_ref().unwrap()[0] - 0.03).abs() < 1e-15);
        assert_eq!(s.valid, vec![true]);
    }

    #[test]
    fn r_is_u_over_i_when_absent_and_the_notes_say_so() {
        let text =
            "4\n# x z\n0 0\n1 0\n2 0\n3 0\n2\n# a b m n u i\n1 4 2 3 0.25 0.5\n1 4 2 3 1 0\n";
        let s = parse(Path::new("ui.dat"), text).unwrap();
        let r = s.r_ohm.as_ref().unwrap();
        assert_eq!(r[0], 0.5);
        assert!(r[1].is_nan(), "i = 0 gives no R");
        assert!(
            s.notes
                .iter()
                .any(|n| n.contains("R derived as u/i") && n.contains("1 datum(s) with i = 0")),
            "{:?}",
            s.notes
        );
        // With an r column, r is kept as written.
        let with_r = text
            .replace("u i\n", "u i r\n")
            .replace("0.5\n1 4", "0.5 7\n1 4");
        let with_r = with_r.replace("1 0\n", "1 0 8\n");
        let s = parse(Path::new("ui.dat"), &with_r).unwrap();
        assert_eq!(s.r_ohm, Some(vec![7.0, 8.0]));
        assert!(!s.notes.iter().any(|n| n.contains("u/i")));
    }

    #[test]
    fn zero_based_and_one_based_numbers() {
        let one = "3\n# x z\n0 0\n1 0\n2 0\n1\n# a b m n r\n1 0 2 3 1\n";
        let s = parse(Path::new("p.dat"), one).unwrap();
        assert_eq!(
            s.quadrupoles[0],
            Quadrupole {
                a: Some(0),
                b: None,
                m: Some(1),
                n: Some(2)
            }
        );
        assert!(s.notes.iter().any(|n| n.contains("remote (pole)")));
        let zero = "3\n# x z\n0 0\n1 0\n2 0\n1\n# a b m n r\n0 1 2 1 1\n";
        let s = parse(Path::new("z.dat"), zero).unwrap();
        assert_eq!(s.quadrupoles[0], Quadrupole::new(0, 1, 2, 1));
        assert!(s.notes.iter().any(|n| n.contains("0-based")));
    }

    #[test]
    fn sensor_tokens_in_millimetres_and_3d() {
        let text = "2 # sensors\n# comment first\n# x/mm y/mm z/mm\n1000 0 -500\n2000 0 -500\n0\n";
        let s = parse(Path::new("mm.dat"), text).unwrap();
        assert_eq!(s.electrodes[1].x_m, 2.0);
        assert_eq!(s.electrodes[0].z_m, -0.5);
    }

    #[test]
    fn truncated_files_name_line_expected_and_found() {
        let p = Path::new("cut.dat");
        // The last data row is short (the export stopped mid-row).
        let text = "3\n# x z\n0 0\n1 0\n2 0\n2\n# a b m n r err\n1 2 3 1 0.5 0.01\n1 2 3";
        let e = parse(p, text).unwrap_err().to_string();
        assert_eq!(
            e,
            "cut.dat, line 9: expected a data row with 6 values (a b m n r err), found \"3 values\""
        );
        // Fewer data rows than declared.
        let text = "3\n# x z\n0 0\n1 0\n2 0\n3\n# a b m n r\n1 2 3 1 0.5\n";
        let e = parse(p, text).unwrap_err().to_string();
        assert_eq!(
            e,
            "cut.dat, line 8: expected 3 data rows, found \"end of file after 1 rows\""
        );
        // A topography block cut short.
        let text = "3\n# x z\n0 0\n1 0\n2 0\n1\n# a b m n r\n1 2 3 1 0.5\n3\n0 0\n";
        let e = parse(p, text).unwrap_err().to_string();
        assert_eq!(
            e,
            "cut.dat, line 10: expected 3 topography rows, found \"end of file after 1 rows\""
        );
        // More data rows than declared: the extra row is named, not read as topography.
        let text = "3\n# x z\n0 0\n1 0\n2 0\n1\n# a b m n r\n1 2 3 1 0.5\n1 2 3 1 0.6\n";
        let e = parse(p, text).unwrap_err().to_string();
        assert!(
            e.starts_with("cut.dat, line 9: expected the number of topography points")
                && e.contains("after the 1 declared data rows"),
            "{e}"
        );
    }

    #[test]
    fn a_sensor_token_line_or_a_data_token_line_is_needed_to_claim_a_file() {
        // E4D-like rows (index x y z flag) and no token line: not unified.
        let lines = ["2", "1 0 0 0 1", "2 1 0 0 1", "1", "1 1 2 2 1 0.5 0.01"];
        assert!(!looks_like(&lines));
        let lines = ["# x in the title", "2", "# note", "# x z", "0 0", "1 0"];
        assert!(looks_like(&lines));
        // No sensor token line (pyGIMLi's default columns), but a data token line.
        let text = "3\n0 0\n1 0\n2 0\n1\n# a b m n r\n1 2 3 1 0.5\n";
        let lines: Vec<&str> = text.lines().collect();
        assert!(looks_like(&lines));
        let s = parse_survey(Path::new("n.dat"), text.as_bytes(), Instrument::Auto).unwrap();
        assert_eq!(
            (s.format, s.n_electrodes(), s.n_data()),
            (Format::Unified, 3, 1)
        );
        assert!(
            s.notes
                .iter()
                .any(|n| n.contains("2 column(s) read as x z"))
        );
    }
}

//! pyGIMLi's unified data format for travel times (`.sgt`, often also `.dat`).
//!
//! Layout (Günther et al. 2006, the BERT/pyGIMLi "unified data format"):
//!
//! ```text
//! 63 # shot/geophone points        ← sensor count (anything after it is a comment)
//! #x y                             ← tokens of the sensor lines (x y | x z | x y z)
//! -4.5 0.9                         ← one line per sensor
//! …
//! 714 # measurements               ← data count
//! #s g t                           ← tokens of the data lines (s g t [err] [valid], any order)
//! 1 5 0.00455                      ← s, g are sensor numbers, 1-based; t in s; err absolute s
//! …
//! 0                                ← optional topography point count (and points)
//! ```
//!
//! Reading rules, each reported in the result's `notes` when it applies:
//! * Sensor numbers are 1-based as the format says. A file that uses 0 and never reaches
//!   the sensor count is read as 0-based (a guess, said so) unless a comment declares the
//!   base ("0-based" / "1-based"). In a 1-based file a 0 means "no sensor" (pyGIMLi reads it
//!   as −1), and such picks are dropped.
//! * `valid 0` drops the pick. Unknown data tokens are ignored.
//! * Two-column positions are x and elevation. With x y z, elevation is y when every z is 0
//!   (pyGIMLi's 2D convention), z when every y is 0, and otherwise the positions are 3D and
//!   are projected onto the line through the two sensors farthest apart.

use std::path::Path;

use super::data::TravelTimes;
use crate::methods::io::{ReadError, parse_f64, read_text};

/// A line number with its text.
type NumberedLine<'a> = (usize, &'a str);

/// The lines of a file with 1-based numbers, and a cursor over them.
struct Lines<'a> {
    lines: Vec<&'a str>,
    pos: usize,
}

/// A line is a comment when its first non-blank character is `#`.
fn is_comment(line: &str) -> bool {
    line.trim_start().starts_with('#')
}

/// The part of a line before any `#` comment, split into fields.
fn data_fields(line: &str) -> Vec<&str> {
    let body = line.split('#').next().unwrap_or("");
    crate::methods::io::fields(body)
}

impl<'a> Lines<'a> {
    /// The next line that holds data (skipping blank lines), with the comment lines met on
    /// the way; `None` at the end of the file.
    fn next_data(&mut self) -> (Vec<NumberedLine<'a>>, Option<NumberedLine<'a>>) {
        let mut comments = Vec::new();
        while self.pos < self.lines.len() {
            let line = self.lines[self.pos];
            self.pos += 1;
            if is_comment(line) {
                comments.push((self.pos, line));
            } else if !data_fields(line).is_empty() {
                return (comments, Some((self.pos, line)));
            }
        }
        (comments, None)
    }

    /// The 1-based number of the line after the last one (for "end of file" errors).
    fn eof_line(&self) -> usize {
        self.lines.len() + 1
    }
}

/// Tokens of the last comment line (lower-case, `#` removed), if any.
fn header_tokens(comments: &[(usize, &str)]) -> Option<Vec<String>> {
    let (_, line) = comments.last()?;
    let body = line.trim_start().trim_start_matches('#');
    let toks: Vec<String> = body
        .split_whitespace()
        .map(|t| t.to_ascii_lowercase())
        .collect();
    (!toks.is_empty()).then_some(toks)
}

/// A count line: its first field as a non-negative integer.
fn parse_count(path: &Path, line_no: usize, line: &str, what: &str) -> Result<usize, ReadError> {
    let f = data_fields(line);
    let tok = f.first().copied().unwrap_or("");
    tok.parse::<usize>()
        .map_err(|_| ReadError::malformed(path, line_no, format!("the number of {what}"), line))
}

/// Read a pyGIMLi unified travel-time file.
pub fn read_sgt(path: &Path) -> Result<TravelTimes, ReadError> {
    let text = read_text(path)?;
    parse_sgt(path, &text)
}

/// Parse the text of a unified travel-time file (`path` names it in errors).
pub fn parse_sgt(path: &Path, text: &str) -> Result<TravelTimes, ReadError> {
    crate::methods::truncated::check_last_row(path, text)?;
    let mut notes = Vec::new();
    let mut guessed = false;
    let mut cur = Lines {
        lines: text.lines().collect(),
        pos: 0,
    };
    let declared_base = declared_index_base(text);

    // Sensors.
    let (_, first) = cur.next_data();
    let Some((ln, line)) = first else {
        return Err(ReadError::malformed(
            path,
            cur.eof_line(),
            "the number of sensors",
            "",
        ));
    };
    let n_sensors = parse_count(path, ln, line, "sensors")?;
    let mut pos_tokens: Option<Vec<String>> = None;
    let mut raw_pos: Vec<Vec<f64>> = Vec::with_capacity(n_sensors.min(1 << 20));
    for k in 0..n_sensors {
        let (comments, next) = cur.next_data();
        if k == 0 {
            pos_tokens = header_tokens(&comments);
        }
        let Some((ln, line)) = next else {
            return Err(ReadError::malformed(
                path,
                cur.eof_line(),
                format!("sensor line {} of {n_sensors}", k + 1),
                "",
            ));
        };
        let f = data_fields(line);
        let vals: Result<Vec<f64>, _> = f
            .iter()
            .map(|t| parse_f64(t).ok_or_else(|| ReadError::malformed(path, ln, "a coordinate", *t)))
            .collect();
        let vals = vals?;
        let need = pos_tokens.as_ref().map_or(2, |t| t.len().min(3)).max(1);
        if vals.len() < need.min(2) {
            return Err(ReadError::malformed(
                path,
                ln,
                format!("{need} coordinates for sensor {}", k + 1),
                line,
            ));
        }
        raw_pos.push(vals);
    }
    let (sensor_x_m, sensor_z_m) =
        sensor_coordinates(&raw_pos, pos_tokens.as_deref(), &mut notes, &mut guessed);

    // Data.
    let (_, next) = cur.next_data();
    let Some((ln, line)) = next else {
        return Err(ReadError::malformed(
            path,
            cur.eof_line(),
            "the number of picks",
            "",
        ));
    };
    let n_data = parse_count(path, ln, line, "picks")?;
    let mut tokens: Option<Vec<String>> = None;
    let mut rows: Vec<(usize, Vec<f64>)> = Vec::with_capacity(n_data.min(1 << 20));
    for k in 0..n_data {
        let (comments, next) = cur.next_data();
        if k == 0 {
            tokens = header_tokens(&comments);
        }
        let Some((ln, line)) = next else {
            return Err(ReadError::malformed(
                path,
                cur.eof_line(),
                format!("pick line {} of {n_data}", k + 1),
                "",
            ));
        };
        let vals: Result<Vec<f64>, _> = data_fields(line)
            .iter()
            .map(|t| parse_f64(t).ok_or_else(|| ReadError::malformed(path, ln, "a number", *t)))
            .collect();
        rows.push((ln, vals?));
    }
    let width = rows.iter().map(|(_, r)| r.len()).min().unwrap_or(3);
    let tokens = match tokens {
        Some(t) if t.iter().any(|x| x == "s") && t.iter().any(|x| x == "g") => t,
        Some(t) => {
            return Err(ReadError::format(
                path,
                format!(
                    "the data header lists {:?} but a travel-time file needs the tokens s, g and t",
                    t
                ),
            ));
        }
        None => {
            guessed = true;
            let t: Vec<String> = if width >= 4 {
                vec!["s", "g", "t", "err"]
            } else {
                vec!["s", "g", "t"]
            }
            .into_iter()
            .map(String::from)
            .collect();
            notes.push(format!(
                "no data header line: columns taken as {} (a guess)",
                t.join(" ")
            ));
            t
        }
    };
    let col = |name: &str| tokens.iter().position(|t| t == name);
    let (Some(cs), Some(cg)) = (col("s"), col("g")) else {
        return Err(ReadError::format(
            path,
            "the data header has no s and g tokens",
        ));
    };
    let Some(ct) = col("t") else {
        return Err(ReadError::format(
            path,
            format!("the data header {:?} has no travel-time token t", tokens),
        ));
    };
    let ce = col("err");
    let cv = col("valid");
    let ignored: Vec<&String> = tokens
        .iter()
        .filter(|t| !matches!(t.as_str(), "s" | "g" | "t" | "err" | "valid"))
        .collect();
    if !ignored.is_empty() {
        notes.push(format!("data columns ignored: {:?}", ignored));
    }
    let need = [Some(cs), Some(cg), Some(ct), ce, cv]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(2)
        + 1;

    // Raw indices as written, checked to be whole numbers.
    let mut picks: Vec<(usize, i64, i64, f64, Option<f64>)> = Vec::with_capacity(rows.len());
    let mut n_invalid = 0usize;
    for (ln, r) in &rows {
        if r.len() < need {
            return Err(ReadError::malformed(
                path,
                *ln,
                format!("{need} columns ({})", tokens.join(" ")),
                format!("{} numbers", r.len()),
            ));
        }
        if cv.is_some_and(|c| r[c] == 0.0) {
            n_invalid += 1;
            continue;
        }
        let idx = |v: f64, what: &str| -> Result<i64, ReadError> {
            if v.fract() != 0.0 || !(0.0..=1e9).contains(&v) {
                Err(ReadError::malformed(
                    path,
                    *ln,
                    format!("a {what} sensor number"),
                    v.to_string(),
                ))
            } else {
                Ok(v as i64)
            }
        };
        picks.push((
            *ln,
            idx(r[cs], "shot")?,
            idx(r[cg], "geophone")?,
            r[ct],
            ce.map(|c| r[c]),
        ));
    }
    if n_invalid > 0 {
        notes.push(format!("{n_invalid} picks marked valid = 0 were left out"));
    }

    let uses_zero = picks.iter().any(|p| p.1 == 0 || p.2 == 0);
    let max_idx = picks.iter().map(|p| p.1.max(p.2)).max().unwrap_or(0);
    let zero_based = match declared_base {
        Some(b) => {
            notes.push(format!(
                "sensor numbers are {b}-based, as a comment in the file declares"
            ));
            b == 0
        }
        None if uses_zero && (max_idx as usize) < n_sensors => {
            guessed = true;
            notes.push(
                "sensor numbers read as 0-based: the file uses 0 and never reaches the sensor count \
                 (the format is 1-based; this is a guess)"
                    .into(),
            );
            true
        }
        None => false,
    };
    let mut tt = TravelTimes {
        sensor_x_m,
        sensor_z_m,
        shot: Vec::with_capacity(picks.len()),
        geophone: Vec::with_capacity(picks.len()),
        time_s: Vec::with_capacity(picks.len()),
        error_s: ce.map(|_| Vec::with_capacity(picks.len())),
        format: "pygimli-unified".into(),
        guessed,
        notes,
    };
    let mut n_no_sensor = 0usize;
    for (ln, s, g, t, e) in picks {
        let (s, g) = if zero_based { (s, g) } else { (s - 1, g - 1) };
        if s < 0 || g < 0 {
            n_no_sensor += 1;
            continue;
        }
        let (s, g) = (s as usize, g as usize);
        if s >= n_sensors || g >= n_sensors {
            return Err(ReadError::malformed(
                path,
                ln,
                format!(
                    "sensor numbers {}..{} ({} sensors listed)",
                    if zero_based { 0 } else { 1 },
                    if zero_based {
                        n_sensors.saturating_sub(1)
                    } else {
                        n_sensors
                    },
                    n_sensors
                ),
                format!(
                    "{} {}",
                    s + usize::from(!zero_based),
                    g + usize::from(!zero_based)
                ),
            ));
        }
        tt.shot.push(s);
        tt.geophone.push(g);
        tt.time_s.push(t);
        if let (Some(errs), Some(e)) = (tt.error_s.as_mut(), e) {
            errs.push(e);
        }
    }
    if n_no_sensor > 0 {
        tt.notes.push(format!(
            "{n_no_sensor} picks name sensor 0 in a 1-based file (\"no sensor\" in pyGIMLi) and were left out"
        ));
    }
    if tt.error_s.is_some() {
        tt.notes
            .push("err column read as absolute errors in s (pyGIMLi's convention)".into());
    }
    if tt.time_s.iter().any(|&t| t > 5.0) {
        tt.notes.push(format!(
            "some times exceed 5 s (max {:.4}); the format stores seconds, so check whether the file holds milliseconds",
            tt.time_s.iter().copied().fold(0.0, f64::max)
        ));
    }
    let n_topo = remaining_topography(&mut cur);
    if n_topo > 0 {
        tt.notes.push(format!(
            "the file lists {n_topo} extra topography points after the data; they were not used"
        ));
    }
    tt.validate().map_err(|m| ReadError::format(path, m))?;
    Ok(tt)
}

/// An explicit "0-based" / "1-based" declaration in a comment, if any.
fn declared_index_base(text: &str) -> Option<u8> {
    for line in text.lines().filter(|l| is_comment(l)) {
        let l = line.to_ascii_lowercase();
        if l.contains("0-based") || l.contains("zero-based") || l.contains("0 based") {
            return Some(0);
        }
        if l.contains("1-based") || l.contains("one-based") || l.contains("1 based") {
            return Some(1);
        }
    }
    None
}

/// The count of the optional topography block after the data (0 when absent or unreadable).
fn remaining_topography(cur: &mut Lines) -> usize {
    match cur.next_data() {
        (_, Some((_, line))) => data_fields(line)
            .first()
            .and_then(|t| t.parse::<usize>().ok())
            .unwrap_or(0),
        _ => 0,
    }
}

/// Along-line distance and elevation from the raw sensor rows (module docs give the rules).
fn sensor_coordinates(
    raw: &[Vec<f64>],
    tokens: Option<&[String]>,
    notes: &mut Vec<String>,
    guessed: &mut bool,
) -> (Vec<f64>, Vec<f64>) {
    let get = |r: &Vec<f64>, i: usize| r.get(i).copied().unwrap_or(0.0);
    let tokens: Vec<String> = match tokens {
        Some(t) if t.iter().all(|x| matches!(x.as_str(), "x" | "y" | "z")) && !t.is_empty() => {
            t.to_vec()
        }
        other => {
            *guessed = true;
            let width = raw.iter().map(Vec::len).min().unwrap_or(2);
            let t: Vec<String> = if width >= 3 {
                vec!["x", "y", "z"]
            } else {
                vec!["x", "y"]
            }
            .into_iter()
            .map(String::from)
            .collect();
            notes.push(format!(
                "sensor columns {} (header {:?} not understood; a guess)",
                t.join(" "),
                other.map(|o| o.join(" "))
            ));
            t
        }
    };
    let col = |name: &str| tokens.iter().position(|t| t == name);
    let x: Vec<f64> = raw
        .iter()
        .map(|r| col("x").map_or(0.0, |c| get(r, c)))
        .collect();
    let y: Vec<f64> = raw
        .iter()
        .map(|r| col("y").map_or(0.0, |c| get(r, c)))
        .collect();
    let z: Vec<f64> = raw
        .iter()
        .map(|r| col("z").map_or(0.0, |c| get(r, c)))
        .collect();
    let all_zero = |v: &[f64]| v.iter().all(|&a| a == 0.0);
    match (col("y").is_some(), col("z").is_some()) {
        (true, false) => (x, y),
        (false, true) => (x, z),
        (false, false) => (x, vec![0.0; raw.len()]),
        (true, true) if all_zero(&z) => (x, y),
        (true, true) if all_zero(&y) => (x, z),
        (true, true) => {
            notes.push(
                "3D sensor positions (x y z): projected onto the line through the two sensors \
                 farthest apart; elevation is z"
                    .into(),
            );
            (project_onto_line(&x, &y), z)
        }
    }
}

/// Distance along the line through the two points farthest apart (in the horizontal
/// plane), measured from the projection of the first of them.
pub fn project_onto_line(x: &[f64], y: &[f64]) -> Vec<f64> {
    let n = x.len();
    let (mut a, mut b, mut best) = (0usize, 0usize, -1.0f64);
    for i in 0..n {
        for j in i + 1..n {
            let d = (x[i] - x[j]).hypot(y[i] - y[j]);
            if d > best {
                (a, b, best) = (i, j, d);
            }
        }
    }
    if best <= 0.0 {
        return vec![0.0; n];
    }
    // Orient the line so distances grow with x (then y).
    if (x[b], y[b]) < (x[a], y[a]) {
        std::mem::swap(&mut a, &mut b);
    }
    let (ux, uy) = ((x[b] - x[a]) / best, (y[b] - y[a]) / best);
    (0..n)
        .map(|i| (x[i] - x[a]) * ux + (y[i] - y[a]) * uy)
        .collect()
}

/// Write `tt` in the unified format pyGIMLi reads (`# x y` sensors with y the elevation,
/// 1-based `s g t [err]`). Used for products in the run folder, never over a user's file.
pub fn write_sgt(path: &Path, tt: &TravelTimes) -> std::io::Result<()> {
    std::fs::write(path, format_sgt(tt))
}

/// The unified-format text of `tt` (see [`write_sgt`]).
pub fn format_sgt(tt: &TravelTimes) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "{} # shot/geophone points", tt.n_sensors());
    let _ = writeln!(s, "# x y");
    for (x, z) in tt.sensor_x_m.iter().zip(&tt.sensor_z_m) {
        let _ = writeln!(s, "{x:?}\t{z:?}");
    }
    let _ = writeln!(s, "{} # measurements", tt.n_data());
    let _ = writeln!(
        s,
        "# s g t{}",
        if tt.error_s.is_some() { " err" } else { "" }
    );
    for i in 0..tt.n_data() {
        let _ = write!(
            s,
            "{}\t{}\t{:?}",
            tt.shot[i] + 1,
            tt.geophone[i] + 1,
            tt.time_s[i]
        );
        if let Some(e) = &tt.error_s {
            let _ = write!(s, "\t{:?}", e[i]);
        }
        s.push('\n');
    }
    s.push_str("0\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oracle_file(json: &serde_json::Value, key: &str) -> serde_json::Value {
        json["files"]
            .get(key)
            .or_else(|| json["other_unified_traveltime_files_phgx"].get(key))
            .cloned()
            .unwrap_or_else(|| panic!("oracle has no entry {key}"))
    }

    /// Counts and ranges of every staged unified file against `oracles/seismic.json`
    /// (pyGIMLi `DataContainer(fn, 's g')`): counts exact, times and coordinates to 1e-12.
    #[test]
    fn staged_files_match_the_pygimli_oracle() {
        let oracle = crate::require_oracle!("seismic.json");
        for (rel, key) in [
            ("seismic/gimli_koenigsee.sgt", "gimli_koenigsee.sgt"),
            (
                "seismic/refrapy_field_example_01.sgt",
                "refrapy_field_example_01.sgt",
            ),
            (
                "seismic/phgx/srtfieldline2.dat",
                "seismic/phgx/srtfieldline2.dat",
            ),
            (
                "seismic/phgx/synthetic_seismic_data.dat",
                "seismic/phgx/synthetic_seismic_data.dat",
            ),
        ] {
            let path = crate::require_data!(rel);
            let o = oracle_file(&oracle, key);
            let tt = read_sgt(&path).unwrap();
            let n = |k: &str| o[k].as_u64().unwrap() as usize;
            assert_eq!(tt.n_sensors(), n("n_sensor_points"), "{rel}");
            assert_eq!(tt.n_data(), n("n_picks"), "{rel}");
            assert_eq!(tt.shots().len(), n("n_shots"), "{rel}");
            assert_eq!(tt.geophones().len(), n("n_geophones"), "{rel}");
            let s = tt.summary();
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
            assert!(
                close(
                    s["time_range_s"][0].as_f64().unwrap(),
                    o["t_min_s"].as_f64().unwrap()
                ),
                "{rel}"
            );
            assert!(
                close(
                    s["time_range_s"][1].as_f64().unwrap(),
                    o["t_max_s"].as_f64().unwrap()
                ),
                "{rel}"
            );
            for i in 0..2 {
                assert!(
                    close(
                        s["x_range_m"][i].as_f64().unwrap(),
                        o["x_range_m"][i].as_f64().unwrap()
                    ),
                    "{rel}"
                );
                assert!(
                    close(
                        s["elevation_range_m"][i].as_f64().unwrap(),
                        o["elevation_range_m"][i].as_f64().unwrap()
                    ),
                    "{rel}"
                );
            }
            assert_eq!(tt.error_s.is_some(), o.get("err_min").is_some(), "{rel}");
            if let Some(e) = &tt.error_s {
                let lo = e.iter().copied().fold(f64::INFINITY, f64::min);
                assert!(close(lo, o["err_min"].as_f64().unwrap()));
            }
            assert!(!tt.guessed, "{rel}: {:?}", tt.notes);
        }
    }

    /// The bench file: 48 sensors, 564 picks, err 0.5 ms (../shared/bench/README.md (b)).
    #[test]
    fn bench_file_reads_with_absolute_errors() {
        let Some(p) = crate::field_data::bench("tt_48.sgt") else {
            return;
        };
        let tt = read_sgt(&p).unwrap();
        assert_eq!(
            (tt.n_sensors(), tt.n_data(), tt.shots().len()),
            (48, 564, 12)
        );
        assert!(
            tt.error_s
                .as_ref()
                .unwrap()
                .iter()
                .all(|&e| (e - 0.0005).abs() < 1e-15)
        );
    }

    #[test]
    fn round_trip_is_exact() {
        let tt = parse_sgt(
            Path::new("a.sgt"),
            "3\n# x y\n0 0\n1.5 0.25\n3 1e-3\n2\n# s g t err\n1 2 0.01 0.001\n3 1 0.0123456789012345 0.002\n",
        )
        .unwrap();
        let back = parse_sgt(Path::new("b.sgt"), &format_sgt(&tt)).unwrap();
        assert_eq!(back.sensor_x_m, tt.sensor_x_m);
        assert_eq!(back.sensor_z_m, tt.sensor_z_m);
        assert_eq!(back.time_s, tt.time_s);
        assert_eq!(back.error_s, tt.error_s);
        assert_eq!(
            (back.shot.clone(), back.geophone.clone()),
            (vec![0, 2], vec![1, 0])
        );
    }

    #[test]
    fn zero_based_files_are_read_as_such_and_say_it_was_a_guess() {
        let tt = parse_sgt(
            Path::new("z.sgt"),
            "2\n#x y\n0 0\n1 0\n2\n#s g t\n0 1 0.1\n1 0 0.1\n",
        )
        .unwrap();
        assert_eq!(tt.shot, vec![0, 1]);
        assert!(tt.guessed);
        assert!(tt.notes.iter().any(|n| n.contains("0-based")));
        // Declared in a comment: not a guess.
        let tt = parse_sgt(
            Path::new("z.sgt"),
            "# indices are 0-based\n2\n#x y\n0 0\n1 0\n1\n#s g t\n0 1 0.1\n",
        )
        .unwrap();
        assert!(!tt.guessed);
    }

    #[test]
    fn malformed_files_name_line_expectation_and_finding() {
        let e = parse_sgt(
            Path::new("bad.sgt"),
            "2\n#x y\n0 0\n1 zero\n1\n#s g t\n1 2 0.1\n",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad.sgt, line 4: expected a coordinate, found \"zero\""
        );
        let e = parse_sgt(
            Path::new("bad.sgt"),
            "2\n#x y\n0 0\n1 0\n2\n#s g t\n1 2 0.1\n",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad.sgt, line 8: expected pick line 2 of 2, found an empty line"
        );
        let e = parse_sgt(
            Path::new("bad.sgt"),
            "2\n#x y\n0 0\n1 0\n1\n#s g t\n1 5 0.1\n",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("bad.sgt, line 7: expected sensor numbers 1..2"),
            "{e}"
        );
        let e = parse_sgt(Path::new("bad.sgt"), "two\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("line 1: expected the number of sensors"),
            "{e}"
        );
    }

    #[test]
    fn three_d_positions_are_projected() {
        let tt = parse_sgt(
            Path::new("p.sgt"),
            "3\n# x y z\n0 0 10\n3 4 11\n6 8 12\n1\n# s g t\n1 3 0.1\n",
        )
        .unwrap();
        assert!((tt.sensor_x_m[2] - 10.0).abs() < 1e-12);
        assert_eq!(tt.sensor_z_m, vec![10.0, 11.0, 12.0]);
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..2000)) {
            let text = String::from_utf8_lossy(&bytes);
            let _ = parse_sgt(Path::new("fuzz.sgt"), &text);
        }

        #[test]
        fn mutated_real_file_never_panics(pos in 0usize..20_000, byte in proptest::num::u8::ANY, cut in 0usize..20_000) {
            // The real Königsee file when staged, else a copy of its first lines.
            let text = crate::field_data::data("seismic/gimli_koenigsee.sgt")
                .and_then(|p| std::fs::read(p).ok())
                .unwrap_or_else(|| b"5 # shot/geophone points\n#x\ty\n0\t0\n1\t-0.2\n2\t-0.4\n3\t-0.4\n3.5\t-0.4\n2 # measurements\n#s\tg\tt\n1\t2\t0.00455\n5\t4\t0.0081\n".to_vec());
            let mut b = text;
            let p = pos % b.len();
            b[p] = byte;
            b.truncate(cut.max(1));
            let _ = parse_sgt(Path::new("fuzz.sgt"), &String::from_utf8_lossy(&b));
        }
    }
}

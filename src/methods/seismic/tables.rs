//! Plain-text tables: travel-time CSV (`source_x, receiver_x, time[, err]`, optional z),
//! geophone / topography tables (`station distance_m elevation_m`, or `x z`), and PyRefra's
//! `picks.dat` with `shots.geo` / `receivers.geo`.
//!
//! Units come from the header (`time_ms`, `err_ms`, `time_s`, …). A header without a time
//! unit is read as seconds unless the largest time exceeds 1, in which case milliseconds
//! are assumed — a guess, said so in the notes. A table without a header is read in the
//! documented column order (also a guess, said so).

use std::path::Path;

use super::data::{Topography, TravelTimes};
use crate::methods::io::{ReadError, fields, parse_f64, read_text};

/// Which column holds what in a travel-time CSV.
#[derive(Debug, Default)]
struct Columns {
    sx: Option<usize>,
    gx: Option<usize>,
    sz: Option<usize>,
    gz: Option<usize>,
    t: Option<usize>,
    e: Option<usize>,
    t_scale: Option<f64>,
    e_scale: Option<f64>,
}

/// Normalised header token: lower case, spaces and dashes as underscores, brackets dropped.
fn norm(token: &str) -> String {
    token
        .trim()
        .trim_matches('"')
        .to_ascii_lowercase()
        .replace([' ', '-'], "_")
        .replace(['(', ')', '[', ']'], "")
}

/// The unit scale to seconds named by a header token, if it names one.
fn time_scale(tok: &str) -> Option<f64> {
    if tok.ends_with("_ms") {
        Some(1e-3)
    } else if tok.ends_with("_us") {
        Some(1e-6)
    } else if tok.ends_with("_s") || tok.ends_with("_sec") {
        Some(1.0)
    } else {
        None
    }
}

fn header_columns(tokens: &[String]) -> Columns {
    let mut c = Columns::default();
    for (i, t) in tokens.iter().enumerate() {
        let is = |names: &[&str]| {
            names
                .iter()
                .any(|n| t == n || t.starts_with(&format!("{n}_")))
        };
        if is(&["source_x", "shot_x", "src_x", "sx", "source", "shot"]) && c.sx.is_none() {
            c.sx = Some(i);
        } else if is(&[
            "receiver_x",
            "geophone_x",
            "rec_x",
            "gx",
            "rx",
            "receiver",
            "geophone",
        ]) && c.gx.is_none()
        {
            c.gx = Some(i);
        } else if is(&[
            "source_z",
            "shot_z",
            "src_z",
            "sz",
            "source_elevation",
            "shot_elevation",
        ]) {
            c.sz = Some(i);
        } else if is(&[
            "receiver_z",
            "geophone_z",
            "rec_z",
            "gz",
            "rz",
            "receiver_elevation",
            "geophone_elevation",
        ]) {
            c.gz = Some(i);
        } else if is(&[
            "time",
            "t",
            "traveltime",
            "travel_time",
            "tt",
            "pick",
            "first_break",
        ]) && c.t.is_none()
        {
            c.t = Some(i);
            c.t_scale = time_scale(t);
        } else if is(&["err", "error", "sigma", "uncertainty", "std"]) && c.e.is_none() {
            c.e = Some(i);
            c.e_scale = time_scale(t);
        }
    }
    c
}

/// Read a travel-time CSV (module docs give the columns and units).
pub fn read_traveltime_csv(path: &Path) -> Result<TravelTimes, ReadError> {
    let text = read_text(path)?;
    parse_traveltime_csv(path, &text)
}

/// Parse the text of a travel-time CSV (`path` names it in errors).
pub fn parse_traveltime_csv(path: &Path, text: &str) -> Result<TravelTimes, ReadError> {
    crate::methods::truncated::check_last_row(path, text)?;
    let mut notes = Vec::new();
    let mut guessed = false;
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let Some((first_no, first)) = lines.next() else {
        return Err(ReadError::malformed(path, 1, "a header or a data line", ""));
    };
    let first_fields = fields(first);
    let has_header = first_fields.iter().any(|f| parse_f64(f).is_none());
    let cols = if has_header {
        let toks: Vec<String> = first_fields.iter().map(|t| norm(t)).collect();
        let c = header_columns(&toks);
        if c.sx.is_none() || c.gx.is_none() || c.t.is_none() {
            return Err(ReadError::malformed(
                path,
                first_no,
                "a header naming source_x, receiver_x and time",
                first,
            ));
        }
        c
    } else {
        guessed = true;
        let n = first_fields.len();
        let c = match n {
            3 => Columns {
                sx: Some(0),
                gx: Some(1),
                t: Some(2),
                ..Default::default()
            },
            4 => Columns {
                sx: Some(0),
                gx: Some(1),
                t: Some(2),
                e: Some(3),
                ..Default::default()
            },
            5 => Columns {
                sx: Some(0),
                sz: Some(1),
                gx: Some(2),
                gz: Some(3),
                t: Some(4),
                ..Default::default()
            },
            6 => Columns {
                sx: Some(0),
                sz: Some(1),
                gx: Some(2),
                gz: Some(3),
                t: Some(4),
                e: Some(5),
                ..Default::default()
            },
            _ => {
                return Err(ReadError::malformed(
                    path,
                    first_no,
                    "3 to 6 columns (source_x, receiver_x, time[, err], optionally with z)",
                    first,
                ));
            }
        };
        notes.push(format!(
            "no header: {n} columns read as {} (a guess)",
            match n {
                3 => "source_x, receiver_x, time",
                4 => "source_x, receiver_x, time, err",
                5 => "source_x, source_z, receiver_x, receiver_z, time",
                _ => "source_x, source_z, receiver_x, receiver_z, time, err",
            }
        ));
        c
    };
    let data_lines: Vec<(usize, &str)> = if has_header {
        lines.collect()
    } else {
        std::iter::once((first_no, first)).chain(lines).collect()
    };
    let need = [cols.sx, cols.gx, cols.sz, cols.gz, cols.t, cols.e]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(2)
        + 1;
    let mut rows: Vec<[f64; 6]> = Vec::with_capacity(data_lines.len());
    for (no, line) in &data_lines {
        let f = fields(line);
        if f.len() < need {
            return Err(ReadError::malformed(
                path,
                *no,
                format!("{need} columns"),
                line,
            ));
        }
        let get = |c: Option<usize>| -> Result<f64, ReadError> {
            match c {
                None => Ok(f64::NAN),
                Some(i) => {
                    parse_f64(f[i]).ok_or_else(|| ReadError::malformed(path, *no, "a number", f[i]))
                }
            }
        };
        rows.push([
            get(cols.sx)?,
            get(cols.sz)?,
            get(cols.gx)?,
            get(cols.gz)?,
            get(cols.t)?,
            get(cols.e)?,
        ]);
    }
    if rows.is_empty() {
        return Err(ReadError::format(
            path,
            "the table has a header but no data lines",
        ));
    }
    let t_max = rows.iter().map(|r| r[4]).fold(0.0, f64::max);
    let t_scale = match cols.t_scale {
        Some(s) => s,
        None if t_max > 1.0 => {
            guessed = true;
            notes.push(format!(
                "times read as milliseconds: the header gives no unit and the largest time is {t_max} (a guess)"
            ));
            1e-3
        }
        None => {
            notes.push("times read as seconds (no unit in the header; all times ≤ 1)".into());
            1.0
        }
    };
    let e_scale = cols.e_scale.unwrap_or(t_scale);
    // Sensors: distinct (x, z) positions.
    let mut sensors: Vec<(f64, f64)> = Vec::new();
    let mut index = |x: f64, z: f64| -> usize {
        let z = if z.is_nan() { 0.0 } else { z };
        if let Some(i) = sensors
            .iter()
            .position(|&(a, b)| (a - x).abs() < 1e-6 && (b - z).abs() < 1e-6)
        {
            i
        } else {
            sensors.push((x, z));
            sensors.len() - 1
        }
    };
    let mut tt = TravelTimes {
        sensor_x_m: vec![],
        sensor_z_m: vec![],
        shot: vec![],
        geophone: vec![],
        time_s: vec![],
        error_s: cols.e.map(|_| vec![]),
        format: "csv".into(),
        guessed,
        notes,
    };
    for r in &rows {
        let s = index(r[0], r[1]);
        let g = index(r[2], r[3]);
        tt.shot.push(s);
        tt.geophone.push(g);
        tt.time_s.push(r[4] * t_scale);
        if let Some(e) = tt.error_s.as_mut() {
            e.push(r[5] * e_scale);
        }
    }
    tt.sensor_x_m = sensors.iter().map(|p| p.0).collect();
    tt.sensor_z_m = sensors.iter().map(|p| p.1).collect();
    if cols.sz.is_none() && cols.gz.is_none() {
        tt.notes.push("no elevations in the table: the line is taken as flat (z = 0) unless a topography table is applied".into());
    }
    tt.validate().map_err(|m| ReadError::format(path, m))?;
    Ok(tt)
}

/// Read a geophone / topography table: `station distance_m elevation_m` (a station label
/// first), `x z`, or `x,elevation` with or without a header.
pub fn read_topography(path: &Path) -> Result<Topography, ReadError> {
    let text = read_text(path)?;
    parse_topography(path, &text)
}

/// Parse the text of a topography table.
pub fn parse_topography(path: &Path, text: &str) -> Result<Topography, ReadError> {
    crate::methods::truncated::check_last_row(path, text)?;
    let mut notes = Vec::new();
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .peekable();
    // Header: any non-numeric field other than a station label in the first column.
    let mut x_col = None;
    let mut z_col = None;
    let mut label_col = None;
    if let Some(&(_, first)) = lines.peek() {
        let toks: Vec<String> = fields(first).iter().map(|t| norm(t)).collect();
        let numeric = toks.iter().skip(1).all(|t| parse_f64(t).is_some());
        if !numeric {
            for (i, t) in toks.iter().enumerate() {
                if ["station", "name", "label", "id", "geophone", "index"]
                    .iter()
                    .any(|n| t.starts_with(n))
                {
                    label_col.get_or_insert(i);
                } else if ["distance", "x", "offset", "position", "dist"]
                    .iter()
                    .any(|n| t.starts_with(n))
                {
                    x_col.get_or_insert(i);
                } else if ["elevation", "z", "elev", "height", "altitude", "h"]
                    .iter()
                    .any(|n| t.starts_with(n))
                {
                    z_col.get_or_insert(i);
                }
            }
            lines.next();
            if x_col.is_none() || z_col.is_none() {
                return Err(ReadError::malformed(
                    path,
                    1,
                    "a header naming the distance (x) and elevation (z) columns",
                    first,
                ));
            }
        }
    }
    let mut topo = Topography {
        station: None,
        x_m: vec![],
        z_m: vec![],
        notes: vec![],
    };
    let mut labels = Vec::new();
    for (no, line) in lines {
        let f = fields(line);
        let (xi, zi, li) = match (x_col, z_col) {
            (Some(x), Some(z)) => (x, z, label_col),
            _ => match f.len() {
                2 => (0, 1, None),
                n if n >= 3 => {
                    if topo.x_m.is_empty() {
                        notes.push(
                            "no header: columns read as station, distance, elevation (a guess)"
                                .into(),
                        );
                    }
                    (1, 2, Some(0))
                }
                _ => {
                    return Err(ReadError::malformed(
                        path,
                        no,
                        "distance and elevation",
                        line,
                    ));
                }
            },
        };
        let get = |i: usize| -> Result<f64, ReadError> {
            f.get(i).and_then(|t| parse_f64(t)).ok_or_else(|| {
                ReadError::malformed(path, no, "a number", f.get(i).copied().unwrap_or(""))
            })
        };
        topo.x_m.push(get(xi)?);
        topo.z_m.push(get(zi)?);
        if let Some(l) = li {
            labels.push(f.get(l).copied().unwrap_or("").to_string());
        }
    }
    if topo.x_m.is_empty() {
        return Err(ReadError::format(path, "the table holds no stations"));
    }
    if labels.len() == topo.x_m.len() {
        topo.station = Some(labels);
    }
    topo.notes = notes;
    Ok(topo)
}

/// Read PyRefra picks: `picks.dat` (`shot receiver t [t_min t_max]`, 1-based numbers into
/// the two geometry files) with `shots.geo` and `receivers.geo` (`number x y z`, z the
/// elevation). The pick error is half the `t_max − t_min` bracket when given.
pub fn read_pyrefra(
    picks: &Path,
    shots_geo: &Path,
    receivers_geo: &Path,
) -> Result<TravelTimes, ReadError> {
    let texts = [
        read_text(picks)?,
        read_text(shots_geo)?,
        read_text(receivers_geo)?,
    ];
    parse_pyrefra([
        (picks, &texts[0]),
        (shots_geo, &texts[1]),
        (receivers_geo, &texts[2]),
    ])
}

/// Parse PyRefra picks from the texts of `picks.dat`, `shots.geo` and `receivers.geo`
/// (each with the path that names it in errors).
pub fn parse_pyrefra(files: [(&Path, &str); 3]) -> Result<TravelTimes, ReadError> {
    let [
        (picks, text),
        (shots_geo, shots_text),
        (receivers_geo, receivers_text),
    ] = files;
    for (p, t) in files {
        crate::methods::truncated::check_last_row(p, t)?;
    }
    let geo = |p: &Path, text: &str| -> Result<Vec<(i64, f64, f64)>, ReadError> {
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let f = fields(line);
            if f.is_empty() {
                continue;
            }
            let num = |k: usize| f.get(k).and_then(|t| parse_f64(t));
            match (num(0), num(1), num(3).or(Some(0.0))) {
                (Some(n), Some(x), Some(z)) if n.fract() == 0.0 => out.push((n as i64, x, z)),
                _ => return Err(ReadError::malformed(p, i + 1, "number x y z", line)),
            }
        }
        Ok(out)
    };
    let shots = geo(shots_geo, shots_text)?;
    let recs = geo(receivers_geo, receivers_text)?;
    let mut sensors: Vec<(f64, f64)> = Vec::new();
    let mut index = |x: f64, z: f64| -> usize {
        if let Some(i) = sensors
            .iter()
            .position(|&(a, b)| (a - x).abs() < 1e-6 && (b - z).abs() < 1e-6)
        {
            i
        } else {
            sensors.push((x, z));
            sensors.len() - 1
        }
    };
    let mut tt = TravelTimes {
        sensor_x_m: vec![],
        sensor_z_m: vec![],
        shot: vec![],
        geophone: vec![],
        time_s: vec![],
        error_s: None,
        format: "pyrefra".into(),
        guessed: false,
        notes: vec![],
    };
    let mut errs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let f = fields(line);
        if f.is_empty() {
            continue;
        }
        let v: Option<Vec<f64>> = f.iter().map(|t| parse_f64(t)).collect();
        let Some(v) = v.filter(|v| v.len() >= 3) else {
            return Err(ReadError::malformed(
                picks,
                i + 1,
                "shot receiver t [t_min t_max]",
                line,
            ));
        };
        let find = |list: &[(i64, f64, f64)], n: f64, what: &str| {
            list.iter()
                .find(|p| p.0 as f64 == n)
                .copied()
                .ok_or_else(|| {
                    ReadError::malformed(
                        picks,
                        i + 1,
                        format!("a {what} number listed in its .geo file"),
                        n.to_string(),
                    )
                })
        };
        let s = find(&shots, v[0], "shot")?;
        let r = find(&recs, v[1], "receiver")?;
        tt.shot.push(index(s.1, s.2));
        tt.geophone.push(index(r.1, r.2));
        tt.time_s.push(v[2]);
        errs.push(if v.len() >= 5 {
            0.5 * (v[4] - v[3]).abs()
        } else {
            f64::NAN
        });
    }
    tt.sensor_x_m = sensors.iter().map(|p| p.0).collect();
    tt.sensor_z_m = sensors.iter().map(|p| p.1).collect();
    if errs.iter().all(|e| e.is_finite() && *e > 0.0) {
        tt.error_s = Some(errs);
        tt.notes
            .push("pick errors: half the t_min–t_max bracket of each pick".into());
    }
    tt.validate().map_err(|m| ReadError::format(picks, m))?;
    Ok(tt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_units_in_the_header() {
        let tt = parse_traveltime_csv(
            Path::new("a.csv"),
            "source_x,receiver_x,time_ms,err_ms\n0,2,4.0,0.1\n0,4,8.0,0.1\n4,0,8.1,0.2\n",
        )
        .unwrap();
        assert_eq!(tt.n_sensors(), 3);
        assert_eq!(tt.time_s, vec![0.004, 0.008, 0.0081]);
        assert_eq!(tt.error_s.as_ref().unwrap()[2], 0.0002);
        assert!(!tt.guessed);
        // The reciprocal pick uses the same two sensors, swapped.
        assert_eq!((tt.shot[2], tt.geophone[2]), (tt.geophone[1], tt.shot[1]));
    }

    #[test]
    fn csv_without_units_or_header_says_it_guessed() {
        let tt = parse_traveltime_csv(Path::new("a.csv"), "source_x,receiver_x,time\n0,2,4.0\n")
            .unwrap();
        assert!(tt.guessed && tt.notes.iter().any(|n| n.contains("milliseconds")));
        assert_eq!(tt.time_s, vec![0.004]);
        let tt = parse_traveltime_csv(Path::new("a.csv"), "0 1.5 2 0 0.01\n").unwrap();
        assert!(tt.guessed);
        assert_eq!(tt.sensor_z_m, vec![1.5, 0.0]);
        let e = parse_traveltime_csv(Path::new("b.csv"), "sx,gx,t\n0,2,x\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "b.csv, line 2: expected a number, found \"x\""
        );
        let e = parse_traveltime_csv(Path::new("b.csv"), "a,b,c\n0,2,1\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("line 1: expected a header naming source_x"),
            "{e}"
        );
    }

    /// The staged PyHydroGeophysX station table (24 stations at 2 m, 212.185 m first).
    #[test]
    fn station_table_reads() {
        let p = crate::require_data!("seismic/phgx/location.txt");
        let t = read_topography(&p).unwrap();
        assert_eq!(t.x_m.len(), 24);
        assert_eq!((t.x_m[0], t.z_m[0]), (2.0, 212.185));
        assert_eq!(t.station.as_ref().unwrap()[0], "001");
        assert_eq!(
            parse_topography(Path::new("t"), "0 1\n10 3\n")
                .unwrap()
                .elevation_at(5.0),
            Some(2.0)
        );
    }

    /// PyRefra's example picks (GPL repository; read, never copied): 60 receivers at
    /// 1 m and 31 shots every 2 m (its README), errors from the t_min/t_max bracket.
    #[test]
    fn pyrefra_picks_read() {
        let d = "seismic/pyrefra_example/";
        let p = crate::require_data!(&format!("{d}picks.dat"));
        let s = crate::require_data!(&format!("{d}shots.geo"));
        let r = crate::require_data!(&format!("{d}receivers.geo"));
        let tt = read_pyrefra(&p, &s, &r).unwrap();
        assert_eq!(tt.shots().len(), 31);
        assert_eq!(tt.geophones().len(), 60);
        assert!(tt.error_s.is_some());
        assert_eq!(tt.time_s[0], -0.00017);
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            let t = String::from_utf8_lossy(&bytes);
            let _ = parse_traveltime_csv(Path::new("f.csv"), &t);
            let _ = parse_topography(Path::new("f.txt"), &t);
        }

        #[test]
        fn pyrefra_never_panics(a in ".{0,300}", b in ".{0,200}", c in ".{0,200}", pos in 0usize..60_000, byte in proptest::num::u8::ANY) {
            let (p, s, r) = (Path::new("picks.dat"), Path::new("shots.geo"), Path::new("receivers.geo"));
            let _ = parse_pyrefra([(p, &a), (s, &b), (r, &c)]);
            // A mutated copy of the real picks with the real geometry.
            let d = "seismic/pyrefra_example/";
            if let (Some(pp), Some(sp), Some(rp)) = (
                crate::field_data::data(&format!("{d}picks.dat")),
                crate::field_data::data(&format!("{d}shots.geo")),
                crate::field_data::data(&format!("{d}receivers.geo")),
            ) {
                let mut bytes = std::fs::read(pp).unwrap_or_default();
                if !bytes.is_empty() {
                    let i = pos % bytes.len();
                    bytes[i] = byte;
                }
                let t = String::from_utf8_lossy(&bytes);
                let st = std::fs::read_to_string(sp).unwrap_or_default();
                let rt = std::fs::read_to_string(rp).unwrap_or_default();
                let _ = parse_pyrefra([(p, &t), (s, &st), (r, &rt)]);
            }
        }

        #[test]
        fn mutated_station_table_never_panics(pos in 0usize..600, byte in proptest::num::u8::ANY, cut in 1usize..600) {
            let text = crate::field_data::data("seismic/phgx/location.txt")
                .and_then(|p| std::fs::read(p).ok())
                .unwrap_or_else(|| b"station distance_m elevation_m\n001 2.000 212.185\n002 4.000 211.249\n".to_vec());
            let mut b = text;
            let p = pos % b.len();
            b[p] = byte;
            b.truncate(cut);
            let t = String::from_utf8_lossy(&b);
            let _ = parse_topography(Path::new("f.txt"), &t);
            let _ = parse_traveltime_csv(Path::new("f.csv"), &t);
        }
    }
}

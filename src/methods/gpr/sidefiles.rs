//! Position and topography side files: plain tables (distance, elevation) or (x, y, z), NMEA
//! GPS logs (GSSI `.DZG`, `.gps`, `.nmea`) and MALA `.cor` files.
//!
//! GPS positions are projected to a local metric grid by an equirectangular projection about
//! the first fix: `x = R·cos φ0·(λ − λ0)`, `y = R·(φ − φ0)` with the mean Earth radius
//! R = 6 371 008.8 m (IUGG). Over a radar line (a few km at most) its distance error is
//! below 0.1 %; it is not a map projection for anything larger.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::methods::io::{ReadError, fields, parse_f64, read_text};

/// Mean Earth radius, m (IUGG R1).
pub const EARTH_RADIUS_M: f64 = 6_371_008.8;

/// Elevation along a line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Topography {
    /// The side file.
    pub file: PathBuf,
    /// Distance along the line of every point, m (increasing).
    pub distance_m: Vec<f64>,
    /// Elevation of every point, m.
    pub elevation_m: Vec<f64>,
    /// Local easting/northing of every point when the file gave coordinates, m.
    pub local_xy_m: Option<Vec<[f64; 2]>>,
    /// Trace (scan) number of every point when the file gave one.
    pub trace_index: Option<Vec<usize>>,
    /// How distances were made and what was assumed.
    pub notes: Vec<String>,
}

impl Topography {
    /// Elevation at distance `x_m` by linear interpolation between the two neighbouring
    /// points; beyond the ends the end value is held.
    pub fn elevation_at(&self, x_m: f64) -> f64 {
        let d = &self.distance_m;
        let e = &self.elevation_m;
        match d.len() {
            0 => f64::NAN,
            1 => e[0],
            n => {
                if x_m <= d[0] {
                    return e[0];
                }
                if x_m >= d[n - 1] {
                    return e[n - 1];
                }
                let k = d.partition_point(|v| *v <= x_m).clamp(1, n - 1);
                let (x0, x1) = (d[k - 1], d[k]);
                let w = if x1 > x0 { (x_m - x0) / (x1 - x0) } else { 0.0 };
                e[k - 1] * (1.0 - w) + e[k] * w
            }
        }
    }

    /// A JSON summary.
    pub fn summary(&self) -> serde_json::Value {
        let (e0, e1) = super::line::finite_range(self.elevation_m.iter().copied());
        serde_json::json!({
            "method": "gpr",
            "file": self.file.display().to_string(),
            "kind": "topography / positions side file",
            "n_points": self.distance_m.len(),
            "length_m": self.distance_m.last().copied().unwrap_or(0.0) - self.distance_m.first().copied().unwrap_or(0.0),
            "elevation_range_m": [e0, e1],
            "has_coordinates": self.local_xy_m.is_some(),
            "notes": self.notes,
        })
    }
}

/// Read a topography table: two columns (distance m, elevation m) or three (x, y, z in m).
/// Comment lines start with `#`; one header line of words is allowed before the numbers.
pub fn read_topography(path: &Path) -> Result<Topography, ReadError> {
    let text = read_text(path)?;
    parse_topography(path, &text)
}

/// Parse the text of a topography table (see [`read_topography`]).
pub fn parse_topography(path: &Path, text: &str) -> Result<Topography, ReadError> {
    crate::methods::truncated::check_last_row(path, text)?;
    let mut rows: Vec<(usize, Vec<f64>)> = Vec::new();
    let mut seen_header = false;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let toks = fields(t);
        let parsed: Option<Vec<f64>> = toks.iter().map(|s| parse_f64(s)).collect();
        match parsed {
            Some(v) => rows.push((i + 1, v)),
            None if rows.is_empty() && !seen_header => seen_header = true,
            None => {
                return Err(ReadError::malformed(
                    path,
                    i + 1,
                    "numbers: distance and elevation, or x, y and z",
                    t,
                ));
            }
        }
    }
    let Some((_, first)) = rows.first() else {
        return Err(ReadError::format(
            path,
            "no numeric rows: not a topography table",
        ));
    };
    let ncol = first.len();
    if !(ncol == 2 || ncol == 3) {
        return Err(ReadError::malformed(
            path,
            rows[0].0,
            "2 columns (distance, elevation) or 3 (x, y, z)",
            format!("{ncol} columns"),
        ));
    }
    if let Some((line, r)) = rows.iter().find(|(_, r)| r.len() != ncol) {
        return Err(ReadError::malformed(
            path,
            *line,
            format!("{ncol} columns like the first row"),
            format!("{} columns", r.len()),
        ));
    }
    let mut notes = Vec::new();
    let (distance, elevation, xy) = if ncol == 2 {
        let d: Vec<f64> = rows.iter().map(|(_, r)| r[0]).collect();
        let e: Vec<f64> = rows.iter().map(|(_, r)| r[1]).collect();
        (d, e, None)
    } else {
        notes.push(
            "three columns read as x, y, z in metres; distance along the line is the cumulative 3-D distance between points (as GPRPy's prepTopo), starting at 0"
                .to_string(),
        );
        let pts: Vec<[f64; 3]> = rows.iter().map(|(_, r)| [r[0], r[1], r[2]]).collect();
        let d = cumulative(&pts);
        let e = pts.iter().map(|p| p[2]).collect();
        (d, e, Some(pts.iter().map(|p| [p[0], p[1]]).collect()))
    };
    // Distances must increase (a decreasing table is reversed).
    let mut topo = Topography {
        file: path.to_path_buf(),
        distance_m: distance,
        elevation_m: elevation,
        local_xy_m: xy,
        trace_index: None,
        notes,
    };
    ensure_increasing(
        path,
        &mut topo,
        &rows.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
    )?;
    Ok(topo)
}

fn cumulative(pts: &[[f64; 3]]) -> Vec<f64> {
    let mut d = Vec::with_capacity(pts.len());
    let mut acc = 0.0;
    for (k, p) in pts.iter().enumerate() {
        if k > 0 {
            let q = pts[k - 1];
            acc += ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt();
        }
        d.push(acc);
    }
    d
}

fn ensure_increasing(path: &Path, t: &mut Topography, lines: &[usize]) -> Result<(), ReadError> {
    let d = &t.distance_m;
    if d.len() < 2 {
        return Ok(());
    }
    let inc = d.windows(2).all(|w| w[1] > w[0]);
    let dec = d.windows(2).all(|w| w[1] < w[0]);
    if dec {
        t.distance_m.reverse();
        t.elevation_m.reverse();
        if let Some(xy) = t.local_xy_m.as_mut() {
            xy.reverse();
        }
        t.notes
            .push("distances decrease in the file; the table was reversed".to_string());
        return Ok(());
    }
    if !inc {
        let k = d.windows(2).position(|w| w[1] <= w[0]).unwrap_or(0) + 1;
        return Err(ReadError::malformed(
            path,
            lines.get(k).copied().unwrap_or(0),
            "a distance larger than the previous row's (distances must increase)",
            format!("{} after {}", d[k], d[k - 1]),
        ));
    }
    Ok(())
}

/// One GPS fix.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GpsFix {
    /// Scan/trace number the fix belongs to, when the file says.
    pub trace: Option<usize>,
    /// Latitude, degrees (north positive).
    pub lat_deg: f64,
    /// Longitude, degrees (east positive).
    pub lon_deg: f64,
    /// Altitude above mean sea level, m.
    pub altitude_m: f64,
}

/// Read GPS fixes from an NMEA log (`$xxGGA` sentences; in a GSSI `.DZG` each is preceded by a
/// `$GSSIS,<scan>,…` line that gives its scan number) or a MALA `.cor` file (`trace date
/// time lat N lon E alt M …`).
pub fn read_gps(path: &Path) -> Result<Topography, ReadError> {
    let text = read_text(path)?;
    parse_gps(path, &text)
}

/// Parse GPS text (see [`read_gps`]) and project it to a local line (module docs).
pub fn parse_gps(path: &Path, text: &str) -> Result<Topography, ReadError> {
    let mut fixes = Vec::new();
    let mut pending_scan: Option<usize> = None;
    let mut any_nmea = false;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(rest) = t.strip_prefix("$GSSIS,") {
            pending_scan = rest.split(',').next().and_then(|s| s.trim().parse().ok());
            continue;
        }
        if t.starts_with('$') {
            any_nmea = true;
            let body = t.split('*').next().unwrap_or(t);
            let f: Vec<&str> = body.split(',').collect();
            if f.first()
                .is_some_and(|s| s.len() >= 6 && s.ends_with("GGA"))
            {
                let fix = gga(&f).ok_or_else(|| {
                    ReadError::malformed(
                        path,
                        i + 1,
                        "a GGA sentence with latitude, hemisphere, longitude, hemisphere, fix quality and altitude",
                        t,
                    )
                })?;
                if let Some(mut fix) = fix {
                    fix.trace = pending_scan.take();
                    fixes.push(fix);
                }
            }
            continue;
        }
        if !any_nmea {
            // MALA .cor: trace date time lat N lon E alt M quality
            let f = fields(t);
            if f.len() >= 8 {
                let cor = (|| {
                    let trace: usize = f[0].parse().ok()?;
                    let lat = hemi(parse_f64(f[3])?, f[4])?;
                    let lon = hemi(parse_f64(f[5])?, f[6])?;
                    let alt = parse_f64(f[7])?;
                    Some(GpsFix {
                        trace: Some(trace),
                        lat_deg: lat,
                        lon_deg: lon,
                        altitude_m: alt,
                    })
                })();
                match cor {
                    Some(c) => fixes.push(c),
                    None => {
                        return Err(ReadError::malformed(
                            path,
                            i + 1,
                            "a MALA .cor row: trace date time lat N|S lon E|W altitude …",
                            t,
                        ));
                    }
                }
            }
        }
    }
    if fixes.is_empty() {
        return Err(ReadError::format(
            path,
            "no GPS fix found (no GGA sentence with a valid fix, no .cor rows)",
        ));
    }
    let (lat0, lon0) = (fixes[0].lat_deg.to_radians(), fixes[0].lon_deg.to_radians());
    let xy: Vec<[f64; 2]> = fixes
        .iter()
        .map(|f| {
            [
                EARTH_RADIUS_M * lat0.cos() * (f.lon_deg.to_radians() - lon0),
                EARTH_RADIUS_M * (f.lat_deg.to_radians() - lat0),
            ]
        })
        .collect();
    let mut d = Vec::with_capacity(xy.len());
    let mut acc = 0.0;
    for (k, p) in xy.iter().enumerate() {
        if k > 0 {
            acc += ((p[0] - xy[k - 1][0]).powi(2) + (p[1] - xy[k - 1][1]).powi(2)).sqrt();
        }
        d.push(acc);
    }
    let mut notes = vec![format!(
        "{} GPS fixes projected to a local equirectangular grid about the first fix ({:.6}°, {:.6}°; R = 6 371 008.8 m); distance is the cumulative horizontal distance",
        fixes.len(),
        fixes[0].lat_deg,
        fixes[0].lon_deg
    )];
    // Standing still produces repeated distances: keep the first fix of each run.
    let mut keep = vec![true; d.len()];
    for k in 1..d.len() {
        if d[k] <= d[k - 1] + 1e-9 {
            keep[k] = false;
        }
    }
    let dropped = keep.iter().filter(|k| !**k).count();
    if dropped > 0 {
        notes.push(format!("{dropped} fixes without movement were dropped"));
    }
    let pick = |v: Vec<f64>| -> Vec<f64> {
        v.into_iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(x, _)| x)
            .collect()
    };
    let traces: Option<Vec<usize>> = fixes
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(f, _)| f.trace)
        .collect();
    Ok(Topography {
        file: path.to_path_buf(),
        distance_m: pick(d),
        elevation_m: pick(fixes.iter().map(|f| f.altitude_m).collect()),
        local_xy_m: Some(
            xy.into_iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(p, _)| p)
                .collect(),
        ),
        trace_index: traces,
        notes,
    })
}

/// A GGA sentence: `Ok(None)` for a sentence without a fix (quality 0), `None` when
/// malformed.
fn gga(f: &[&str]) -> Option<Option<GpsFix>> {
    let quality: u32 = f.get(6)?.trim().parse().ok()?;
    if quality == 0 {
        return Some(None);
    }
    let lat = hemi(nmea_angle(f.get(2)?)?, f.get(3)?)?;
    let lon = hemi(nmea_angle(f.get(4)?)?, f.get(5)?)?;
    let alt = parse_f64(f.get(9)?)?;
    Some(Some(GpsFix {
        trace: None,
        lat_deg: lat,
        lon_deg: lon,
        altitude_m: alt,
    }))
}

/// `ddmm.mmmm` / `dddmm.mmmm` → degrees.
fn nmea_angle(s: &str) -> Option<f64> {
    let v = parse_f64(s)?;
    let deg = (v / 100.0).trunc();
    let min = v - 100.0 * deg;
    (min < 60.0 && v >= 0.0).then_some(deg + min / 60.0)
}

fn hemi(v: f64, h: &str) -> Option<f64> {
    match h.trim() {
        "N" | "E" => Some(v),
        "S" | "W" => Some(-v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_and_three_column_tables() {
        let t = parse_topography(Path::new("t.txt"), "dist elev\n0\t10\n2\t12\n4\t11\n").unwrap();
        assert_eq!(t.elevation_at(1.0), 11.0);
        assert_eq!(t.elevation_at(3.0), 11.5);
        assert_eq!(t.elevation_at(-5.0), 10.0);
        assert_eq!(t.elevation_at(9.0), 11.0);
        let t3 = parse_topography(Path::new("t.xyz"), "0,0,0\n3,4,0\n3,4,12\n").unwrap();
        assert_eq!(t3.distance_m, vec![0.0, 5.0, 17.0]);
        let e = parse_topography(Path::new("t.txt"), "0 1\n1 2\n1 3\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.txt, line 3: expected a distance larger than the previous row's (distances must increase), found \"1 after 1\""
        );
        let e = parse_topography(Path::new("t.txt"), "0 1\n1 x\n").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
    }

    #[test]
    fn nmea_and_dzg() {
        // 1′ of latitude = 1852.0 m-ish: R·(1/60)° = 1853.25 m with R = 6 371 008.8 m.
        let text = "$GSSIS,0,1\n$GPGGA,120000.00,4500.0000,N,00700.0000,E,1,08,1.0,100.0,M,0,M,,*47\n\
                    $GSSIS,50,2\n$GPGGA,120001.00,4501.0000,N,00700.0000,E,1,08,1.0,101.0,M,0,M,,*47\n";
        let t = parse_gps(Path::new("x.DZG"), text).unwrap();
        let want = EARTH_RADIUS_M * (1.0f64 / 60.0).to_radians();
        assert!((t.distance_m[1] - want).abs() < 1e-6, "{}", t.distance_m[1]);
        assert_eq!(t.trace_index, Some(vec![0, 50]));
        assert_eq!(t.elevation_m, vec![100.0, 101.0]);
        let bad = "$GPGGA,1,4500.0,X,00700.0,E,1,8,1,100,M\n";
        assert!(
            parse_gps(Path::new("x.gps"), bad)
                .unwrap_err()
                .to_string()
                .contains("line 1")
        );
        let cor = "1\t2020-01-01\t12:00:00\t45.0\tN\t7.0\tE\t100.0\tM\t1\n2\t2020-01-01\t12:00:01\t45.001\tN\t7.0\tE\t100.5\tM\t1\n";
        let c = parse_gps(Path::new("x.cor"), cor).unwrap();
        assert_eq!(c.trace_index, Some(vec![1, 2]));
    }
}

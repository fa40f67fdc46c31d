//! First-arrival travel times as every reader returns them: one sensor list (shots and
//! geophones share it, as in pyGIMLi's unified format), one row per pick.
//!
//! Coordinates: `x_m` is the distance along the line, `z_m` the elevation (up positive).
//! Indices are 0-based in memory whatever the file used; times are seconds.

use serde::{Deserialize, Serialize};

/// First-arrival picks on a 2D line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TravelTimes {
    /// Distance along the line of every sensor (shot or geophone position), m.
    pub sensor_x_m: Vec<f64>,
    /// Elevation of every sensor, m (up positive).
    pub sensor_z_m: Vec<f64>,
    /// 0-based sensor index of the shot of each pick.
    pub shot: Vec<usize>,
    /// 0-based sensor index of the geophone of each pick.
    pub geophone: Vec<usize>,
    /// First-arrival time of each pick, s.
    pub time_s: Vec<f64>,
    /// Absolute error of each pick, s, when the file gives one.
    pub error_s: Option<Vec<f64>>,
    /// The format read ("pygimli-unified", "csv", "pyrefra", …).
    pub format: String,
    /// Whether something about the reading was a guess (index base, units, column order).
    pub guessed: bool,
    /// Everything a user should know about how the file was read, one sentence each.
    pub notes: Vec<String>,
}

impl TravelTimes {
    /// Number of picks.
    pub fn n_data(&self) -> usize {
        self.time_s.len()
    }

    /// Number of sensors listed.
    pub fn n_sensors(&self) -> usize {
        self.sensor_x_m.len()
    }

    /// The distinct shot sensor indices, ascending.
    pub fn shots(&self) -> Vec<usize> {
        distinct(&self.shot)
    }

    /// The distinct geophone sensor indices, ascending.
    pub fn geophones(&self) -> Vec<usize> {
        distinct(&self.geophone)
    }

    /// Straight-line shot–geophone distance of pick `i`, m: √(Δx² + Δz²).
    pub fn offset_m(&self, i: usize) -> f64 {
        let (s, g) = (self.shot[i], self.geophone[i]);
        (self.sensor_x_m[g] - self.sensor_x_m[s]).hypot(self.sensor_z_m[g] - self.sensor_z_m[s])
    }

    /// Signed horizontal offset of pick `i` (geophone x − shot x), m.
    pub fn signed_offset_m(&self, i: usize) -> f64 {
        self.sensor_x_m[self.geophone[i]] - self.sensor_x_m[self.shot[i]]
    }

    /// Check the internal consistency every reader guarantees: equal lengths, indices in
    /// range, finite values. Returns the first problem found.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.n_data();
        if self.sensor_z_m.len() != self.sensor_x_m.len() {
            return Err("sensor x and z lists differ in length".into());
        }
        if self.shot.len() != n || self.geophone.len() != n {
            return Err("shot, geophone and time lists differ in length".into());
        }
        if let Some(e) = &self.error_s
            && e.len() != n
        {
            return Err("error list differs in length from the times".into());
        }
        let ns = self.n_sensors();
        if let Some(i) = (0..n).find(|&i| self.shot[i] >= ns || self.geophone[i] >= ns) {
            return Err(format!(
                "pick {i} refers to a sensor beyond the {ns} listed"
            ));
        }
        if self
            .sensor_x_m
            .iter()
            .chain(&self.sensor_z_m)
            .chain(&self.time_s)
            .any(|v| !v.is_finite())
        {
            return Err("a non-finite position or time".into());
        }
        Ok(())
    }

    /// A JSON summary for `read <file>` and the catalog: counts, ranges and units.
    pub fn summary(&self) -> serde_json::Value {
        let range = |v: &[f64]| -> serde_json::Value {
            if v.is_empty() {
                return serde_json::Value::Null;
            }
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            serde_json::json!([lo, hi])
        };
        let offsets: Vec<f64> = (0..self.n_data()).map(|i| self.offset_m(i)).collect();
        serde_json::json!({
            "method": "seismic refraction",
            "kind": "first-arrival travel times",
            "format": self.format,
            "guessed": self.guessed,
            "n_sensors": self.n_sensors(),
            "n_data": self.n_data(),
            "n_shots": self.shots().len(),
            "n_geophones": self.geophones().len(),
            "time_range_s": range(&self.time_s),
            "x_range_m": range(&self.sensor_x_m),
            "elevation_range_m": range(&self.sensor_z_m),
            "offset_range_m": range(&offsets),
            "has_errors": self.error_s.is_some(),
            "error_range_s": self.error_s.as_deref().map(range),
            "units": {"time": "s", "x": "m", "z": "m (elevation, up)"},
            "notes": self.notes,
        })
    }
}

/// Sorted distinct values.
fn distinct(v: &[usize]) -> Vec<usize> {
    let mut d = v.to_vec();
    d.sort_unstable();
    d.dedup();
    d
}

/// Station positions along a line with elevations (a geophone / topography table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Topography {
    /// Station labels when the table has them.
    pub station: Option<Vec<String>>,
    /// Distance along the line, m.
    pub x_m: Vec<f64>,
    /// Elevation, m.
    pub z_m: Vec<f64>,
    /// How the table was read.
    pub notes: Vec<String>,
}

impl Topography {
    /// Elevation at `x_m` by linear interpolation between stations (sorted by x), held
    /// constant beyond the ends. `None` for an empty table.
    pub fn elevation_at(&self, x_m: f64) -> Option<f64> {
        let mut pts: Vec<(f64, f64)> = self
            .x_m
            .iter()
            .copied()
            .zip(self.z_m.iter().copied())
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        interp_clamped(&pts, x_m)
    }
}

/// Piecewise-linear interpolation through `pts` (sorted by x), constant beyond the ends.
pub fn interp_clamped(pts: &[(f64, f64)], x: f64) -> Option<f64> {
    let first = pts.first()?;
    let last = pts.last()?;
    if x <= first.0 {
        return Some(first.1);
    }
    if x >= last.0 {
        return Some(last.1);
    }
    let j = pts.partition_point(|p| p.0 <= x);
    let (x0, z0) = pts[j - 1];
    let (x1, z1) = pts[j];
    if x1 - x0 <= 0.0 {
        return Some(z0);
    }
    Some(z0 + (z1 - z0) * (x - x0) / (x1 - x0))
}

/// Give every sensor the elevation of `topo` at its x (linear interpolation; constant
/// beyond the table's ends, which is noted). Returns how many sensors lay outside the table.
pub fn apply_topography(tt: &mut TravelTimes, topo: &Topography) -> usize {
    if topo.x_m.is_empty() {
        tt.notes
            .push("the topography table is empty; elevations were left as they were".into());
        return 0;
    }
    let lo = topo.x_m.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = topo.x_m.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut outside = 0;
    for (x, z) in tt.sensor_x_m.iter().zip(tt.sensor_z_m.iter_mut()) {
        if *x < lo - 1e-9 || *x > hi + 1e-9 {
            outside += 1;
        }
        if let Some(e) = topo.elevation_at(*x) {
            *z = e;
        }
    }
    tt.notes.push(format!(
        "elevations taken from a topography table of {} stations ({lo:.2}–{hi:.2} m){}",
        topo.x_m.len(),
        if outside > 0 {
            format!("; {outside} sensors lie beyond its ends and got the end elevation")
        } else {
            String::new()
        }
    ));
    outside
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_is_linear_inside_and_constant_outside() {
        let pts = [(0.0, 1.0), (10.0, 3.0)];
        assert_eq!(interp_clamped(&pts, 5.0), Some(2.0));
        assert_eq!(interp_clamped(&pts, -4.0), Some(1.0));
        assert_eq!(interp_clamped(&pts, 12.0), Some(3.0));
        assert_eq!(interp_clamped(&[], 1.0), None);
    }
}

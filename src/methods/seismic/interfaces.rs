//! Interfaces at threshold velocities, and the structural constraint handed to ERT.
//!
//! Along vertical profiles through the model (one per top-row cell, at its centre) the
//! velocity is taken at the cell centres of each row and interpolated linearly in depth;
//! the interface is the shallowest depth where it first reaches the threshold `v*`:
//!
//! ```text
//!     d* = d_k + (v* − v_k) (d_{k+1} − d_k) / (v_{k+1} − v_k)   for v_k < v* ≤ v_{k+1}
//! ```
//!
//! A profile gives no point when the threshold is never reached, when the surface cell is
//! already faster (the interface is not below the surface), or when either cell of the
//! crossing has no ray coverage (the model there is the start model, not the data's).
//! Contiguous points form one polyline; gaps split it. "No interface" is an answer, said in
//! the notes, not an error.
//!
//! The 1200 m/s default is the peer studio's (reference/peer-studio.md §3.4): in
//! unconsolidated, water-bearing sediments P velocities are about 1450–1600 m/s and dry
//! loose material below about 1000 m/s, so 1200 m/s separates dry cover from saturated or
//! consolidated material.

use serde::{Deserialize, Serialize};

use super::inversion::SeismicInversion;

/// The default threshold velocity, m/s.
pub const DEFAULT_THRESHOLD_M_PER_S: f64 = 1200.0;

/// One interface polyline at a threshold velocity (x along the line, z elevation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interface {
    /// The threshold velocity, m/s.
    pub velocity_m_per_s: f64,
    /// Distance along the line of each vertex, m (increasing).
    pub x_m: Vec<f64>,
    /// Elevation of each vertex, m.
    pub z_m: Vec<f64>,
    /// Depth of each vertex below the surface, m.
    pub depth_m: Vec<f64>,
}

impl Interface {
    /// Length of the polyline, m.
    pub fn length_m(&self) -> f64 {
        self.x_m
            .windows(2)
            .zip(self.z_m.windows(2))
            .map(|(x, z)| (x[1] - x[0]).hypot(z[1] - z[0]))
            .sum()
    }

    /// The `x_m,z_m,depth_m` table (a header line, then one vertex per line).
    pub fn to_csv(&self) -> String {
        let mut s = String::from("x_m,z_m,depth_m\n");
        for i in 0..self.x_m.len() {
            s.push_str(&format!(
                "{:.4},{:.4},{:.4}\n",
                self.x_m[i], self.z_m[i], self.depth_m[i]
            ));
        }
        s
    }
}

/// Every interface found at one threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterfaceSet {
    /// The threshold velocity, m/s.
    pub velocity_m_per_s: f64,
    /// The polylines, left to right (empty when none was found).
    pub segments: Vec<Interface>,
    /// Profiles examined.
    pub n_profiles: usize,
    /// Profiles that gave a point.
    pub n_found: usize,
    /// Profiles where the threshold was crossed only in cells without ray coverage.
    pub n_uncovered: usize,
    /// What was found and what was not, in sentences.
    pub notes: Vec<String>,
}

/// The interface (if any) handed to the ERT inversion as a boundary smoothing must not
/// cross.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructuralConstraint {
    /// The threshold velocity used, m/s.
    pub velocity_m_per_s: f64,
    /// The longest covered interface polyline, or `None` when none was found.
    pub interface: Option<Interface>,
    /// Share of the line (by x extent) the interface spans.
    pub line_fraction: f64,
    /// Why this interface (or none) was chosen.
    pub notes: Vec<String>,
}

/// Interfaces at each threshold velocity (module docs give the method).
pub fn extract_interfaces(inv: &SeismicInversion, thresholds_m_per_s: &[f64]) -> Vec<InterfaceSet> {
    thresholds_m_per_s
        .iter()
        .map(|&v| interfaces_at(inv, v))
        .collect()
}

/// Interfaces at one threshold.
pub fn interfaces_at(inv: &SeismicInversion, threshold: f64) -> InterfaceSet {
    let g = &inv.grid;
    let top = g.row_cells(0);
    let mut segments: Vec<Interface> = Vec::new();
    let mut current: Option<Interface> = None;
    let (mut n_found, mut n_uncovered, mut n_above, mut n_never) = (0, 0, 0, 0);
    for c0 in top.clone() {
        let (x, _) = g.cell_center(c0);
        let column: Vec<usize> = (0..g.nz())
            .filter_map(|k| cell_in_row_at(inv, k, x))
            .collect();
        let point = crossing(inv, &column, threshold);
        match point {
            Crossing::At(depth) => {
                n_found += 1;
                let z = g.surface_at(x) - depth;
                let seg = current.get_or_insert_with(|| Interface {
                    velocity_m_per_s: threshold,
                    x_m: vec![],
                    z_m: vec![],
                    depth_m: vec![],
                });
                seg.x_m.push(x);
                seg.z_m.push(z);
                seg.depth_m.push(depth);
                continue;
            }
            Crossing::Uncovered => n_uncovered += 1,
            Crossing::AtSurface => n_above += 1,
            Crossing::Never => n_never += 1,
        }
        if let Some(seg) = current.take()
            && seg.x_m.len() >= 2
        {
            segments.push(seg);
        }
    }
    if let Some(seg) = current.take()
        && seg.x_m.len() >= 2
    {
        segments.push(seg);
    }
    let n_profiles = top.len();
    let mut notes = Vec::new();
    if segments.is_empty() {
        notes.push(format!(
            "no {threshold:.0} m/s interface found: of {n_profiles} profiles, {n_never} never reach {threshold:.0} m/s, \
             {n_above} are already faster at the surface, {n_uncovered} cross it only where no ray passed"
        ));
    } else {
        notes.push(format!(
            "{threshold:.0} m/s interface found on {n_found} of {n_profiles} profiles in {} piece(s), depth {:.1}–{:.1} m",
            segments.len(),
            segments.iter().flat_map(|s| s.depth_m.iter().copied()).fold(f64::INFINITY, f64::min),
            segments.iter().flat_map(|s| s.depth_m.iter().copied()).fold(0.0, f64::max),
        ));
        if n_uncovered > 0 {
            notes.push(format!(
                "{n_uncovered} profiles cross {threshold:.0} m/s only where no ray passed; left out"
            ));
        }
    }
    InterfaceSet {
        velocity_m_per_s: threshold,
        segments,
        n_profiles,
        n_found,
        n_uncovered,
        notes,
    }
}

/// The cell of row `k` that contains the vertical line at `x`.
fn cell_in_row_at(inv: &SeismicInversion, k: usize, x: f64) -> Option<usize> {
    let g = &inv.grid;
    let n = g.n_columns();
    if x < g.x_m[0] || x > g.x_m[n] {
        return None;
    }
    let i = g
        .x_m
        .partition_point(|&c| c <= x)
        .saturating_sub(1)
        .min(n - 1);
    Some(g.row_start[k] + i / g.merge[k])
}

enum Crossing {
    At(f64),
    Uncovered,
    AtSurface,
    Never,
}

/// Where the velocity down a column of cells (top to bottom) first reaches `v*`.
fn crossing(inv: &SeismicInversion, column: &[usize], threshold: f64) -> Crossing {
    let g = &inv.grid;
    let Some(&first) = column.first() else {
        return Crossing::Never;
    };
    if inv.velocity_m_per_s[first] >= threshold {
        return Crossing::AtSurface;
    }
    for w in column.windows(2) {
        let (a, b) = (w[0], w[1]);
        let (va, vb) = (inv.velocity_m_per_s[a], inv.velocity_m_per_s[b]);
        if va < threshold && vb >= threshold {
            if !(inv.covered[a] && inv.covered[b]) {
                return Crossing::Uncovered;
            }
            let (da, db) = (g.cell_depth(a), g.cell_depth(b));
            return Crossing::At(da + (threshold - va) * (db - da) / (vb - va));
        }
    }
    Crossing::Never
}

/// The structural constraint for ERT: the longest covered interface at `threshold`
/// (1200 m/s by default), or `None` with the reason.
pub fn derive_structure(inv: &SeismicInversion, threshold: Option<f64>) -> StructuralConstraint {
    let v = threshold.unwrap_or(DEFAULT_THRESHOLD_M_PER_S);
    let set = interfaces_at(inv, v);
    let span = inv.grid.x_m.last().copied().unwrap_or(0.0) - inv.grid.x_m[0];
    let best = set
        .segments
        .iter()
        .max_by(|a, b| a.length_m().total_cmp(&b.length_m()))
        .cloned();
    let mut notes = set.notes.clone();
    if threshold.is_none() {
        notes.push(format!(
            "threshold {v:.0} m/s is the default, not a site value"
        ));
    }
    let line_fraction = best.as_ref().map_or(0.0, |b| {
        (b.x_m.last().copied().unwrap_or(0.0) - b.x_m[0]) / span.max(f64::MIN_POSITIVE)
    });
    match &best {
        Some(b) if set.segments.len() > 1 => notes.push(format!(
            "the longest of {} pieces was kept ({:.1}–{:.1} m along the line)",
            set.segments.len(),
            b.x_m[0],
            b.x_m.last().copied().unwrap_or(0.0)
        )),
        Some(_) => {}
        None => notes.push("no structural constraint: the ERT inversion runs unconstrained".into()),
    }
    StructuralConstraint {
        velocity_m_per_s: v,
        interface: best,
        line_fraction,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::seismic::forward::analytic::two_layer_time_s;
    use crate::methods::seismic::inversion::{InversionParams, invert};
    use std::sync::atomic::AtomicBool;

    /// 500 over 2500 m/s at 10 m (analytic times, 2 % error): the 1200 m/s interface lies
    /// between 7 and 13 m deep under the middle of the line, where rays are dense.
    #[test]
    fn two_layer_interface_near_ten_metres() {
        let mut tt = crate::methods::seismic::forward::tests::acceptance_survey();
        tt.time_s = (0..tt.n_data())
            .map(|i| two_layer_time_s(tt.offset_m(i), 500.0, 2500.0, 10.0))
            .collect();
        tt.error_s = Some(tt.time_s.iter().map(|t| 0.02 * t).collect());
        let inv = invert(
            &tt,
            &InversionParams {
                z_weight: 0.3,
                ..Default::default()
            },
            &mut |_, _| {},
            &AtomicBool::new(false),
        )
        .unwrap();
        let sc = derive_structure(&inv, None);
        let itf = sc.interface.expect("an interface");
        assert!(sc.notes.iter().any(|n| n.contains("default")));
        let mid: Vec<f64> = itf
            .x_m
            .iter()
            .zip(&itf.depth_m)
            .filter(|(x, _)| (20.0..=74.0).contains(*x))
            .map(|(_, d)| *d)
            .collect();
        assert!(mid.len() > 20, "{}", mid.len());
        for d in &mid {
            assert!((7.0..=13.0).contains(d), "{d}");
        }
        assert!(sc.line_fraction > 0.5);
        // An impossible threshold: nothing found, said so.
        let none = interfaces_at(&inv, 20_000.0);
        assert!(none.segments.is_empty());
        assert!(none.notes[0].starts_with("no 20000 m/s interface found"));
        // The CSV table has a header and one line per vertex.
        assert_eq!(itf.to_csv().lines().count(), itf.x_m.len() + 1);
    }
}

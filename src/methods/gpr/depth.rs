//! Two-way time to depth and the topographic (static) correction.

use ndarray::{Array2, ArrayView2};
use serde::{Deserialize, Serialize};

use super::filters::Cols;
use super::line::GprError;
use super::sidefiles::Topography;

/// Depth of every two-way time for a constant velocity: `d = v·t/2` (the wave goes down
/// and back). Negative times (before time zero) give negative depths.
pub fn time_to_depth_m(time_ns: &[f64], velocity_m_per_ns: f64) -> Vec<f64> {
    time_ns
        .iter()
        .map(|t| velocity_m_per_ns * t / 2.0)
        .collect()
}

/// A section hung from the surface elevation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TopoCorrected {
    /// The shifted section; NaN where a trace has no sample (above its surface or below its
    /// end). Not serialised.
    #[serde(skip)]
    pub data: Array2<f64>,
    /// Elevation of row 0, m.
    pub elevation_top_m: f64,
    /// Elevation step between rows, m (rows go down: elevation of row i is
    /// `elevation_top_m − i·depth_step_m`).
    pub depth_step_m: f64,
    /// Surface elevation under every trace, m.
    pub trace_elevation_m: Vec<f64>,
    /// Rows every trace was moved down.
    pub shifts_rows: Vec<usize>,
    /// What was assumed.
    pub notes: Vec<String>,
}

/// Topographic correction of a depth section: trace `j` with surface elevation `e_j`
/// (interpolated linearly from `topography` at the trace position) moves down by
/// `round((max e − e_j)/Δd)` rows, so that every row is one elevation
/// `E_i = max e − d_0 − i·Δd` (GPRPy `correctTopo`, which uses the same rounding; GPRPy
/// interpolates with PCHIP where this uses linear interpolation). `depth_first_m` is the
/// depth of row 0 and `depth_step_m` the row spacing (`v·dt/2`).
pub fn topographic_correction(
    data: ArrayView2<f64>,
    depth_first_m: f64,
    depth_step_m: f64,
    positions_m: &[f64],
    topography: &Topography,
) -> Result<TopoCorrected, GprError> {
    let step = "topographic correction";
    let (ns, ntr) = data.dim();
    if positions_m.len() != ntr {
        return Err(GprError::not_applicable(
            step,
            format!("{} positions for {ntr} traces", positions_m.len()),
        ));
    }
    if !(depth_step_m > 0.0 && depth_step_m.is_finite()) {
        return Err(GprError::invalid(
            step,
            "depth_step_m",
            depth_step_m,
            "must be positive",
        ));
    }
    if topography.distance_m.is_empty() {
        return Err(GprError::not_applicable(
            step,
            "the topography has no points",
        ));
    }
    let mut notes = Vec::new();
    let (d0, d1) = (
        topography.distance_m[0],
        topography.distance_m[topography.distance_m.len() - 1],
    );
    let outside = positions_m.iter().filter(|p| **p < d0 || **p > d1).count();
    if outside > 0 {
        notes.push(format!(
            "{outside} of {ntr} traces lie outside the topography ({d0:.2}–{d1:.2} m): the end elevations are held there"
        ));
    }
    let elev: Vec<f64> = positions_m
        .iter()
        .map(|p| topography.elevation_at(*p))
        .collect();
    if elev.iter().any(|e| !e.is_finite()) {
        return Err(GprError::not_applicable(
            step,
            "the topography gives no elevation",
        ));
    }
    let top = elev.iter().fold(f64::NEG_INFINITY, |m, e| m.max(*e));
    let shifts: Vec<usize> = elev
        .iter()
        .map(|e| ((top - e) / depth_step_m).round() as usize)
        .collect();
    let max_shift = shifts.iter().copied().max().unwrap_or(0);
    if max_shift > 20 * ns.max(1000) {
        return Err(GprError::not_applicable(
            step,
            format!(
                "the surface elevation varies by {:.1} m, {max_shift} rows of {depth_step_m} m: check the topography's units",
                max_shift as f64 * depth_step_m
            ),
        ));
    }
    let rows = ns + max_shift;
    let c = Cols::from_view(data);
    let mut out = Cols {
        ns: rows,
        ntr,
        buf: vec![f64::NAN; rows * ntr],
    };
    if ns > 0 {
        for (j, (src, dst)) in c.buf.chunks(ns).zip(out.buf.chunks_mut(rows)).enumerate() {
            let s = shifts[j];
            dst[s..s + ns].copy_from_slice(src);
        }
    }
    notes.push(format!(
        "surface elevation {:.2}–{top:.2} m; traces moved down by up to {max_shift} rows of {depth_step_m:.4} m",
        elev.iter().fold(f64::INFINITY, |m, e| m.min(*e))
    ));
    Ok(TopoCorrected {
        data: out.into_array(),
        elevation_top_m: top - depth_first_m,
        depth_step_m,
        trace_elevation_m: elev,
        shifts_rows: shifts,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn depth_is_half_the_two_way_path() {
        assert_eq!(
            time_to_depth_m(&[0.0, 20.0, -2.0], 0.1),
            vec![0.0, 1.0, -0.1]
        );
    }

    #[test]
    fn a_flat_layer_under_a_slope_comes_out_at_one_elevation() {
        // Surface falls 1 m per 10 m; a layer 2 m below the surface everywhere sits at depth
        // row 2/0.05 = 40 in every trace. After the correction the layer follows the surface:
        // at elevation (e_j − 2), i.e. row (top − e_j)/0.05 + 40.
        let topo = Topography {
            file: PathBuf::from("t"),
            distance_m: vec![0.0, 10.0],
            elevation_m: vec![101.0, 100.0],
            local_xy_m: None,
            trace_index: None,
            notes: vec![],
        };
        let positions: Vec<f64> = (0..11).map(|j| j as f64).collect();
        let mut d = Array2::<f64>::zeros((100, 11));
        d.column_mut(0).fill(0.0);
        for j in 0..11 {
            d[[40, j]] = 1.0;
        }
        let t = topographic_correction(d.view(), 0.0, 0.05, &positions, &topo).unwrap();
        assert_eq!(t.elevation_top_m, 101.0);
        assert_eq!(t.shifts_rows, (0..11).map(|j| 2 * j).collect::<Vec<_>>());
        for j in 0..11 {
            let row = 40 + 2 * j;
            assert_eq!(t.data[[row, j]], 1.0);
            let elevation = t.elevation_top_m - row as f64 * t.depth_step_m;
            assert!((elevation - (t.trace_elevation_m[j] - 2.0)).abs() < 1e-9);
        }
        assert!(t.data[[0, 10]].is_nan());
    }
}

//! The strongest continuous flat reflector of a line in depth — at a water table the radar
//! velocity falls (εr of water ≈ 80 against ≈ 5 for dry sand), so the normal-incidence
//! reflection coefficient `R = (v₂ − v₁)/(v₂ + v₁)` is large and the reflection runs flat
//! along the line (Annan, *GPR — Methods for Field Data Collection*, 2009; Doolittle et al.
//! 2006, Geoderma 131).
//!
//! Method: the traces are stacked (`s(z) = mean over traces of a(z, x)`); a flat, continuous
//! reflector adds up coherently while diffractions, dipping events and noise do not. The
//! reflector is the depth of the largest `|s|` below `min_depth_m` (the direct wave and its
//! tail are above it). Its continuity is the share of traces whose amplitude at that depth
//! has the stack's sign and at least half its size. Uncertainty: the half-width at
//! half-maximum of the stacked peak (the wavelet's own spread, a quarter to half a
//! wavelength) combined with the depth error of the velocity, `d · σv/v` (depth = v·t/2, so
//! a relative velocity error is the same relative depth error); `σv/v` comes with the
//! velocity (semblance) or is zero when the velocity was given without an uncertainty —
//! said in the words that travel with the answer.
//!
//! A peak whose half-maximum interval runs into the last sample is *cut by the window*
//! (`cut_by_window`): its lower flank is not recorded, so its maximum may lie below the
//! window, and gain (AGC) and the end of the migration aperture make flat late-time events of
//! their own there. It is no located reflector; the evidence says the water table may lie
//! below what the line reaches.

use serde::{Deserialize, Serialize};

use super::process::{Domain, ProcessedLine};

/// A flat reflector (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlatReflector {
    /// Depth below the surface, m.
    pub depth_m: f64,
    /// Half-width at half-maximum of the stacked peak, m.
    pub half_width_m: f64,
    /// Depth error of the velocity, m.
    pub velocity_error_m: f64,
    /// One standard deviation, m.
    pub uncertainty_m: f64,
    /// Share of traces that carry it (0–1).
    pub continuity: f64,
    /// The x range of the line, m.
    pub x_range_m: (f64, f64),
    /// The half-maximum interval reaches the last sample (module docs).
    #[serde(default)]
    pub cut_by_window: bool,
}

/// The strongest continuous flat reflector below `min_depth_m` (module docs); `None` when
/// the line is not in depth or has no sample below `min_depth_m`.
pub fn flat_reflector(
    line: &ProcessedLine,
    min_depth_m: f64,
    velocity_rel_sigma: f64,
) -> Option<FlatReflector> {
    if line.domain != Domain::Depth || line.n_traces == 0 {
        return None;
    }
    let axis = line.vertical_axis();
    let n = line.n_traces as f64;
    let stack: Vec<f64> = (0..line.n_samples)
        .map(|i| line.data.row(i).iter().sum::<f64>() / n)
        .collect();
    let (k, peak) = stack
        .iter()
        .enumerate()
        .filter(|(i, _)| axis[*i] >= min_depth_m)
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .map(|(i, v)| (i, *v))?;
    if peak == 0.0 {
        return None;
    }
    let above = |i: usize| stack[i].abs() >= 0.5 * peak.abs();
    let (mut top, mut bottom) = (k, k);
    while top > 0 && above(top - 1) {
        top -= 1;
    }
    while bottom + 1 < stack.len() && above(bottom + 1) {
        bottom += 1;
    }
    let half_width_m = 0.5 * (bottom - top + 1) as f64 * line.vertical_step;
    let carried = line
        .data
        .row(k)
        .iter()
        .filter(|a| **a * peak.signum() >= 0.5 * peak.abs())
        .count();
    let depth_m = axis[k];
    let velocity_error_m = depth_m * velocity_rel_sigma;
    let x0 = line.positions_m.first().copied().unwrap_or(0.0);
    let x1 = line.positions_m.last().copied().unwrap_or(x0);
    Some(FlatReflector {
        depth_m,
        half_width_m,
        velocity_error_m,
        uncertainty_m: half_width_m.hypot(velocity_error_m),
        continuity: carried as f64 / n,
        x_range_m: (x0, x1),
        cut_by_window: bottom + 1 == stack.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    fn line_with(data: Array2<f64>) -> ProcessedLine {
        let (rows, traces) = data.dim();
        ProcessedLine {
            data,
            n_samples: rows,
            n_traces: traces,
            domain: Domain::Depth,
            vertical_first: 0.0,
            vertical_step: 0.05,
            vertical_unit: "m".into(),
            positions_m: (0..traces).map(|i| i as f64 * 0.1).collect(),
            velocity: None,
            why_two_way_time: None,
            recipe: super::super::process::Recipe {
                source_file: "test".into(),
                format: crate::methods::gpr::line::GprFormat::GssiDzt,
                software: "test".into(),
                steps: vec![],
                reader_notes: vec![],
            },
        }
    }

    /// A flat reflector at 4 m (row 80) on every trace, a strong point scatterer at 2 m on
    /// three traces only, and the direct wave at the top: the reflector is found at 4 m on
    /// every trace, the scatterer and the direct wave are not.
    #[test]
    fn the_flat_reflector_wins_over_a_point_and_the_direct_wave() {
        let mut a = Array2::<f64>::zeros((120, 50));
        for t in 0..50 {
            a[[2, t]] = 10.0;
            a[[79, t]] = 0.5;
            a[[80, t]] = 1.0;
            a[[81, t]] = 0.5;
        }
        for t in 20..23 {
            a[[40, t]] = 8.0;
        }
        let r = flat_reflector(&line_with(a.clone()), 0.5, 0.05).unwrap();
        assert!((r.depth_m - 4.0).abs() < 1e-9, "{}", r.depth_m);
        assert!((r.continuity - 1.0).abs() < 1e-12);
        // Rows 79–81 are at or above half the peak: half-width 1.5 rows = 0.075 m.
        assert!((r.half_width_m - 0.075).abs() < 1e-9, "{}", r.half_width_m);
        assert!((r.velocity_error_m - 0.2).abs() < 1e-9);
        assert!(!r.cut_by_window);
        // The same event in the last rows of the window is cut by it: its lower flank is
        // missing.
        let mut late = Array2::<f64>::zeros((120, 50));
        for t in 0..50 {
            late[[117, t]] = 0.5;
            late[[118, t]] = 1.0;
            late[[119, t]] = 0.8;
        }
        let cut = flat_reflector(&line_with(late), 0.5, 0.05).unwrap();
        assert!(cut.cut_by_window, "{cut:?}");
        // In two-way time there is no depth to give.
        let mut twt = line_with(a);
        twt.domain = Domain::TwoWayTime;
        assert!(flat_reflector(&twt, 0.5, 0.0).is_none());
    }
}

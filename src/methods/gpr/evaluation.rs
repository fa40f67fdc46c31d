//! The verdict on a processed GPR line (issue 21), on the shared rubric's scale
//! ([`crate::methods::quality`]). GPR has no inversion and no misfit; its two checks are:
//!
//! * **velocity provenance** (weight 0.5, [`provenance_component`]): where the velocity that
//!   turned time into depth came from. Measured on the data (semblance of a CMP/WARR
//!   gather) 100; a user value (project setting) 90 — the user's number, not measured here,
//!   and the note says so; the relative permittivity in the file header 30 — the value an
//!   operator keyed into the instrument, a default presented as a velocity, which fails the
//!   line; no velocity (the line stays in two-way time, no depth is claimed) is not scored.
//! * **lateral coherence** (weight 0.5, [`lateral_coherence`]): the energy-normalised
//!   correlation of neighbouring traces of the recorded section without its scan-header
//!   samples (a counter and marks, not signal) and with its mean trace removed (the
//!   background removal, which takes out the direct wave, the wow and flat reflectors —
//!   those look the same whatever the order of the traces),
//!   ρ₁ = Σᵢ Σₜ xᵢ(t)·xᵢ₊₁(t) / Σᵢ Σₜ ½(xᵢ(t)² + xᵢ₊₁(t)²). What is left — dipping
//!   reflectors, diffraction hyperbolas — continues from trace to trace (ρ₁ near 1); noise,
//!   or traces out of order, does not (ρ₁ near 0). Score 100·min(1, ρ₁/[`COHERENCE_FULL`]).
//!   Not scored for a gather (its traces are offsets).
//!
//! The line passes when the weighted mean reaches the threshold and each scored check
//! reaches the check pass mark (50).

use ndarray::ArrayView2;

use super::velocity::VelocitySource;
use crate::methods::quality::{CHECK_PASS, Component, QUALITY_THRESHOLD, Quality};
use crate::runtime::product::short_num as num;

/// ρ₁ at and above this scores 100.
pub const COHERENCE_FULL: f64 = 0.5;

/// ρ₁ of a section `(samples, traces)` below its first `skip_rows` rows (module docs); a
/// non-finite sample counts as 0. `None` with fewer than two traces or no energy.
pub fn lateral_coherence(data: ArrayView2<f64>, skip_rows: usize) -> Option<f64> {
    let n = data.ncols();
    if n < 2 || skip_rows >= data.nrows() {
        return None;
    }
    let data = data
        .slice(ndarray::s![skip_rows.., ..])
        .mapv(|v| if v.is_finite() { v } else { 0.0 });
    let mean = data.mean_axis(ndarray::Axis(1))?;
    let x = &data - &mean.insert_axis(ndarray::Axis(1));
    let (mut cross, mut energy) = (0.0, 0.0);
    for j in 0..n - 1 {
        let (a, b) = (x.column(j), x.column(j + 1));
        cross += a.iter().zip(b.iter()).map(|(x, y)| x * y).sum::<f64>();
        energy +=
            0.5 * (a.iter().map(|x| x * x).sum::<f64>() + b.iter().map(|y| y * y).sum::<f64>());
    }
    (energy > 0.0 && cross.is_finite()).then_some(cross / energy)
}

/// The lateral-coherence component (module docs).
pub fn coherence_component(data: ArrayView2<f64>, skip_rows: usize) -> Component {
    match lateral_coherence(data, skip_rows) {
        Some(r) => Component::scored(
            "lateral_coherence",
            0.5,
            100.0 * (r / COHERENCE_FULL).clamp(0.0, 1.0),
            format!(
                "neighbouring traces correlate at ρ₁ = {} (reflectors continue from trace to trace near 1; noise or traces out of order near 0)",
                num(r)
            ),
        ),
        None => Component::unscored(
            "lateral_coherence",
            0.5,
            "fewer than two traces or no energy: not judged",
        ),
    }
}

/// The velocity-provenance component (module docs).
pub fn provenance_component(source: Option<&VelocitySource>) -> Component {
    const NAME: &str = "velocity_provenance";
    match source {
        None => Component::unscored(
            NAME,
            0.5,
            "no velocity: the line stays in two-way time and no depth is claimed",
        ),
        Some(VelocitySource::Semblance(p)) => Component::scored(
            NAME,
            0.5,
            100.0,
            format!(
                "measured: {} m/ns from hyperbolic semblance of the gather",
                num(p.velocity_m_per_ns)
            ),
        ),
        Some(VelocitySource::Request { velocity_m_per_ns }) => Component::scored(
            NAME,
            0.5,
            90.0,
            format!(
                "{} m/ns is a user value (project setting), not measured on this line",
                num(*velocity_m_per_ns)
            ),
        ),
        Some(VelocitySource::UserPermittivity {
            relative_permittivity,
        }) => Component::scored(
            NAME,
            0.5,
            90.0,
            format!(
                "from εr = {} given by the user (project setting), not measured on this line",
                num(*relative_permittivity)
            ),
        ),
        Some(VelocitySource::HeaderPermittivity {
            relative_permittivity,
        }) => Component::scored(
            NAME,
            0.5,
            30.0,
            format!(
                "from εr = {} in the file header: the value an operator keyed into the instrument, a default, not a measurement — give gpr_velocity_m_per_ns or a CMP gather",
                num(*relative_permittivity)
            ),
        ),
    }
}

/// The verdict on a processed line: `source` is the velocity used (if any), `data` the
/// recorded section and `skip_rows` its scan-header samples, `gather` whether the traces are
/// offsets of a CMP/WARR gather.
pub fn evaluate_line(
    source: Option<&VelocitySource>,
    data: ArrayView2<f64>,
    skip_rows: usize,
    gather: bool,
) -> Quality {
    let coherence = if gather {
        Component::unscored(
            "lateral_coherence",
            0.5,
            "a CMP/WARR gather: its traces are offsets, not positions along a line",
        )
    } else {
        coherence_component(data, skip_rows)
    };
    let mut q = Quality::from_components(
        vec![provenance_component(source), coherence],
        None,
        QUALITY_THRESHOLD,
    );
    q.require("velocity_provenance", CHECK_PASS);
    q.require("lateral_coherence", CHECK_PASS);
    q
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    /// A gently dipping event (one sample per 4 traces): ρ₁ > 0.9 (score 100); the same
    /// event with alternating signs from trace to trace: ρ₁ < 0 (score 0, the line fails); a
    /// header εr fails the provenance check.
    #[test]
    fn coherent_lines_pass_and_scrambled_ones_fail() {
        let event =
            |t: usize, j: usize| (-((t as f64 - 10.0 - j as f64 / 4.0) / 2.0).powi(2)).exp();
        let flat = Array2::from_shape_fn((60, 40), |(t, j)| event(t, j));
        let r = lateral_coherence(flat.view(), 0).unwrap();
        assert!(r > 0.9, "{r}");
        let user = VelocitySource::Request {
            velocity_m_per_ns: 0.1,
        };
        assert!(evaluate_line(Some(&user), flat.view(), 0, false).passed);
        let flip = Array2::from_shape_fn((60, 40), |(t, j)| {
            event(t, j) * if j % 2 == 0 { 1.0 } else { -1.0 }
        });
        let q = evaluate_line(Some(&user), flip.view(), 0, false);
        assert!(!q.passed);
        assert!(q.failed_checks().contains(&"lateral_coherence".to_string()));
        let header = VelocitySource::HeaderPermittivity {
            relative_permittivity: 8.0,
        };
        let q = evaluate_line(Some(&header), flat.view(), 0, false);
        assert!(
            q.failed_checks()
                .contains(&"velocity_provenance".to_string()),
            "{q:?}"
        );
    }
}

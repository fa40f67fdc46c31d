//! What a velocity model says about the water table and the bedrock: the depth of a velocity
//! contour along the line ([`super::interfaces`] traces it; only ray-covered cells count).
//!
//! * Water table: the P velocity of water-saturated unconsolidated sediment is 1450–1600 m/s
//!   (the velocity of water itself, ~1480 m/s, is its lower bound; Bachrach & Nur 1998,
//!   Geophysics 63(4); Reynolds, *An Introduction to Applied and Environmental Geophysics*,
//!   2011, table 4.1), so the water table is read as the contour at the middle of that range.
//! * Bedrock: the contour at a threshold velocity (2000 m/s by default, the value the Königsee
//!   oracle uses for weathered/solid rock).
//!
//! Uncertainty (per profile, then summarised by [`summarise`]): half the depth between the
//! contours at the two ends of the range (`v_lo`, `v_hi`) — how sharply the model resolves
//! the velocity change there — combined with half the thickness of the grid row at that
//! depth: `σ = √((|d(v_hi) − d(v_lo)|/2)² + (Δz/2)²)`. A smooth tomography spreads a sharp
//! step over several rows, so a wide contour band is a wide uncertainty, not a precise depth.

use super::interfaces::{InterfaceSet, interfaces_at};
use super::inversion::SeismicInversion;
use crate::methods::depth::median;
use crate::methods::depth::{DepthEstimate, DepthProfile, summarise};

/// The default saturated-sediment velocity range, m/s (module docs).
pub const WATER_TABLE_RANGE_M_PER_S: (f64, f64) = (1450.0, 1600.0);
/// The default bedrock threshold velocity, m/s (module docs).
pub const BEDROCK_THRESHOLD_M_PER_S: f64 = 2000.0;

/// The depth of contour `set` at `x`, if a covered segment passes there.
fn depth_at(set: &InterfaceSet, x: f64) -> Option<f64> {
    set.segments.iter().find_map(|s| {
        s.x_m
            .iter()
            .position(|&a| (a - x).abs() < 1e-9)
            .map(|i| s.depth_m[i])
    })
}

/// Thickness of the grid row holding depth `d`, m.
fn row_thickness_m(inv: &SeismicInversion, d: f64) -> f64 {
    let z = &inv.grid.depth_m;
    let k = z.partition_point(|&a| a <= d).clamp(1, z.len() - 1);
    z[k] - z[k - 1]
}

/// The depth profile of the contour at `v_mid`, with each profile's uncertainty from the
/// contours at `v_lo` and `v_hi` (module docs); `None` when no covered contour exists.
pub fn contour_depth(
    inv: &SeismicInversion,
    v_lo: f64,
    v_mid: f64,
    v_hi: f64,
    what: &str,
) -> Option<DepthEstimate> {
    let (lo, mid, hi) = (
        interfaces_at(inv, v_lo),
        interfaces_at(inv, v_mid),
        interfaces_at(inv, v_hi),
    );
    let mut profile = DepthProfile::default();
    let mut sigmas = Vec::new();
    for seg in &mid.segments {
        for i in 0..seg.x_m.len() {
            let (x, d) = (seg.x_m[i], seg.depth_m[i]);
            let band = match (depth_at(&lo, x), depth_at(&hi, x)) {
                (Some(a), Some(b)) => 0.5 * (b - a).abs(),
                // One end of the range is not reached or not covered here: the band is at
                // least the distance to the one that is, else the row alone.
                (Some(a), None) | (None, Some(a)) => (d - a).abs(),
                (None, None) => 0.0,
            };
            sigmas.push(band.hypot(0.5 * row_thickness_m(inv, d)));
            profile.push(x, d, seg.z_m[i]);
        }
    }
    let resolution = median(&sigmas)?;
    summarise(
        profile,
        resolution,
        format!(
            "{what}: depth of the {v_mid:.0} m/s contour of the velocity model in ray-covered cells (band {v_lo:.0}–{v_hi:.0} m/s)"
        ),
    )
}

/// The water table from the velocity model: the contour at the middle of `range_m_per_s`
/// (module docs).
pub fn water_table(inv: &SeismicInversion, range_m_per_s: (f64, f64)) -> Option<DepthEstimate> {
    let (a, b) = range_m_per_s;
    contour_depth(inv, a, 0.5 * (a + b), b, "seismic water table")
}

/// The bedrock depth profile at `threshold_m_per_s`, with the band ±10 % around it as its
/// resolution (module docs).
pub fn bedrock(inv: &SeismicInversion, threshold_m_per_s: f64) -> Option<DepthEstimate> {
    let v = threshold_m_per_s;
    contour_depth(inv, 0.9 * v, v, 1.1 * v, "seismic bedrock")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::seismic::inversion::{InversionParams, invert};
    use std::sync::atomic::AtomicBool;

    /// 500 over 2500 m/s at 10 m (analytic times, 2 % error), the case the interface test
    /// uses. A smooth model spreads the step over depth, and 2000 m/s is 75 % of the way up
    /// it, so the contour lies below the step: between 10 and 20 m (measured 16.6 m), with
    /// an uncertainty that is not zero; the 1450–1600 m/s contour is above it; an impossible
    /// threshold gives nothing.
    #[test]
    fn two_layer_contours_give_depths_with_uncertainty() {
        let tt = crate::methods::seismic::forward::tests::two_layer_survey();
        let params = InversionParams {
            z_weight: 0.3,
            ..Default::default()
        };
        let inv = invert(&tt, &params, &mut |_, _| {}, &AtomicBool::new(false)).unwrap();
        let rock = bedrock(&inv, 2000.0).expect("a bedrock contour");
        assert!((10.0..=20.0).contains(&rock.depth_m), "{}", rock.depth_m);
        assert!(
            rock.uncertainty_m > 0.0 && rock.uncertainty_m < 5.0,
            "{}",
            rock.uncertainty_m
        );
        assert!(rock.profile.len() > 20);
        let wt = water_table(&inv, WATER_TABLE_RANGE_M_PER_S).expect("a 1525 m/s contour");
        assert!(
            wt.depth_m < rock.depth_m,
            "{} vs {}",
            wt.depth_m,
            rock.depth_m
        );
        assert!(bedrock(&inv, 20_000.0).is_none());
    }
}

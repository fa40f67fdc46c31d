//! What an MT site's layered model says about the water table: the Occam model read by
//! [`sounding_depth::water_table`](crate::methods::sounding_depth::water_table) between the
//! shallowest depth its data resolve and its DOI.
//!
//! The shallowest resolved depth is the Niblett–Bostick depth of the shortest period,
//! `D = √(ρa T / (2π μ0))` (Jones 1983, *Geophys. J. R. astr. Soc.* 75, eq. 1; the skin
//! depth divided by √2): the field of the shortest period already averages everything above
//! `D`. Audio-MT at 10 kHz over 600 Ω·m resolves nothing above ~120 m; a 4 m water table is
//! not MT's to see, and the reading says so.

use super::site::MtSiteInversion;
use super::tf::MU0;
use crate::methods::sounding_depth::LayeredSounding;

/// The Niblett–Bostick depth `√(ρa T / (2π μ0))` of `period_s` at `rhoa_ohm_m`, m.
pub fn niblett_bostick_depth_m(period_s: f64, rhoa_ohm_m: f64) -> f64 {
    (rhoa_ohm_m * period_s / (2.0 * std::f64::consts::PI * MU0)).sqrt()
}

/// Great-circle distance between two (latitude, longitude) points in degrees, m (haversine,
/// mean Earth radius 6 371 km).
pub fn distance_m(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (la, lb) = (a.0.to_radians(), b.0.to_radians());
    let dlat = lb - la;
    let dlon = (b.1 - a.1).to_radians();
    let h = (dlat / 2.0).sin().powi(2) + la.cos() * lb.cos() * (dlon / 2.0).sin().powi(2);
    2.0 * 6.371e6 * h.sqrt().min(1.0).asin()
}

/// Where a site is: (latitude, longitude) in degrees and its elevation, m, when known.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SitePlace {
    /// (latitude, longitude), degrees.
    pub lat_lon_deg: Option<(f64, f64)>,
    /// Elevation, m.
    pub elevation_m: Option<f64>,
}

/// The site as a [`LayeredSounding`]: along the line its distance from `origin` (the first
/// located site), else its order; `None` without a DOI or data.
pub fn layered_sounding(
    s: &MtSiteInversion,
    place: SitePlace,
    origin: Option<(f64, f64)>,
    order: usize,
) -> Option<LayeredSounding> {
    let (k, t_min) = s
        .sounding
        .period_s
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, t)| t.is_finite() && *t > 0.0)
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    // The geometric mean of the modes' ρa at the shortest period.
    let logs: Vec<f64> = s
        .sounding
        .curves
        .iter()
        .filter_map(|c| c.rhoa_ohm_m.get(k).copied())
        .filter(|r| r.is_finite() && *r > 0.0)
        .map(f64::ln)
        .collect();
    if logs.is_empty() {
        return None;
    }
    let rhoa = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
    let x_m = place
        .lat_lon_deg
        .zip(origin)
        .map_or(order as f64, |(p, o)| distance_m(o, p));
    Some(LayeredSounding {
        name: s.site.clone(),
        x_m,
        surface_z_m: place.elevation_m.unwrap_or(0.0),
        rho_ohm_m: s.result.model.resistivity_ohm_m.clone(),
        thickness_m: s.result.model.thickness_m.clone(),
        shallowest_m: niblett_bostick_depth_m(t_min, rhoa),
        doi_m: s.result.doi_m?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_niblett_bostick_depth_and_the_haversine_are_their_closed_forms() {
        // √(600 · 1e-4 / (2π · 4π·10⁻⁷)) = √(7599.1) = 87.17 m.
        assert!((niblett_bostick_depth_m(1e-4, 600.0) - 87.17).abs() < 0.01);
        // One degree of latitude on the 6 371 km sphere: 111 195 m.
        assert!((distance_m((45.0, 7.0), (46.0, 7.0)) - 111_194.9).abs() < 1.0);
        assert_eq!(distance_m((10.0, 20.0), (10.0, 20.0)), 0.0);
    }
}

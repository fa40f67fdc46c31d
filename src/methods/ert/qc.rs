//! Quality control of ERT data: geometric factors, apparent resistivity, reciprocal
//! pairing and errors, the error model of Koestel et al. (2008), and data filters.

/// Geometric factor of a four-electrode array on flat ground (half-space), m:
/// k = 2π / (1/AM − 1/BM − 1/AN + 1/BN) (e.g. Telford et al. 1990, eq. 8.28), positions
/// along the line in m; an infinite position is a remote electrode (its terms vanish).
pub fn geometric_factor_flat(a: f64, b: f64, m: f64, n: f64) -> f64 {
    let inv = |p: f64, q: f64| {
        if p.is_finite() && q.is_finite() {
            1.0 / (p - q).abs()
        } else {
            0.0
        }
    };
    2.0 * std::f64::consts::PI / (inv(a, m) - inv(b, m) - inv(a, n) + inv(b, n))
}

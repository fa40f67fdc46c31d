//! Longitude/latitude → a local metric grid: the transverse Mercator projection on the WGS84
//! ellipsoid, by Krüger's series to order n⁶ (Karney 2011, "Transverse Mercator with an
//! accuracy of a few nanometers", J. Geodesy 85, 475–485, eqs. 7–11, 35–36).
//!
//! The studio projects a station table with the central meridian at the centre longitude of
//! the survey, the origin at its centre latitude, scale 1 and no false easting/northing, so
//! x and y are metres east and north of the survey centre with a scale error below
//! (Δx/R)²/2 (8·10⁻⁵ at 100 km from the meridian). The projection used is stated in every
//! table that was projected.

use serde::{Deserialize, Serialize};

/// WGS84 semi-major axis, m.
pub const WGS84_A_M: f64 = 6_378_137.0;
/// WGS84 flattening.
pub const WGS84_F: f64 = 1.0 / 298.257_223_563;

/// A transverse Mercator projection on WGS84.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TransverseMercator {
    /// Central meridian λ0, degrees east.
    pub central_meridian_deg: f64,
    /// Latitude of the origin φ0, degrees north (northing is 0 there before the false
    /// northing).
    pub origin_latitude_deg: f64,
    /// Scale on the central meridian k0.
    pub scale: f64,
    /// Added to every easting, m.
    pub false_easting_m: f64,
    /// Added to every northing, m.
    pub false_northing_m: f64,
}

/// Krüger's coefficients α_j (forward) and β_j (inverse), j = 1…6, and the rectifying radius
/// A = a/(1+n)·(1 + n²/4 + n⁴/64 + n⁶/256) (Karney 2011, eqs. 14, 35, 36).
struct Series {
    a_rect: f64,
    e: f64,
    alpha: [f64; 6],
    beta: [f64; 6],
}

fn series() -> Series {
    series_for(WGS84_F)
}

/// The series for an ellipsoid of flattening `f` (semi-major axis a = 6 378 137 m, which
/// WGS84 and GRS80 share).
fn series_for(f: f64) -> Series {
    let n = f / (2.0 - f);
    let (n2, n3) = (n * n, n * n * n);
    let (n4, n5, n6) = (n2 * n2, n2 * n3, n3 * n3);
    let e = (f * (2.0 - f)).sqrt();
    let a_rect = WGS84_A_M / (1.0 + n) * (1.0 + n2 / 4.0 + n4 / 64.0 + n6 / 256.0);
    let alpha = [
        n / 2.0 - 2.0 / 3.0 * n2 + 5.0 / 16.0 * n3 + 41.0 / 180.0 * n4 - 127.0 / 288.0 * n5
            + 7891.0 / 37800.0 * n6,
        13.0 / 48.0 * n2 - 3.0 / 5.0 * n3 + 557.0 / 1440.0 * n4 + 281.0 / 630.0 * n5
            - 1983433.0 / 1935360.0 * n6,
        61.0 / 240.0 * n3 - 103.0 / 140.0 * n4 + 15061.0 / 26880.0 * n5 + 167603.0 / 181440.0 * n6,
        49561.0 / 161280.0 * n4 - 179.0 / 168.0 * n5 + 6601661.0 / 7257600.0 * n6,
        34729.0 / 80640.0 * n5 - 3418889.0 / 1995840.0 * n6,
        212378941.0 / 319334400.0 * n6,
    ];
    let beta = [
        n / 2.0 - 2.0 / 3.0 * n2 + 37.0 / 96.0 * n3 - 1.0 / 360.0 * n4 - 81.0 / 512.0 * n5
            + 96199.0 / 604800.0 * n6,
        1.0 / 48.0 * n2 + 1.0 / 15.0 * n3 - 437.0 / 1440.0 * n4 + 46.0 / 105.0 * n5
            - 1118711.0 / 3870720.0 * n6,
        17.0 / 480.0 * n3 - 37.0 / 840.0 * n4 - 209.0 / 4480.0 * n5 + 5569.0 / 90720.0 * n6,
        4397.0 / 161280.0 * n4 - 11.0 / 504.0 * n5 - 830251.0 / 7257600.0 * n6,
        4583.0 / 161280.0 * n5 - 108847.0 / 3991680.0 * n6,
        20648693.0 / 638668800.0 * n6,
    ];
    Series {
        a_rect,
        e,
        alpha,
        beta,
    }
}

/// tan χ of the conformal latitude from τ = tan φ: `τ' = τ √(1+σ²) − σ √(1+τ²)`,
/// `σ = sinh(e · atanh(e τ / √(1+τ²)))` (Karney 2011, eqs. 7–9).
fn conformal_tan(tau: f64, e: f64) -> f64 {
    let sigma = (e * (e * tau / (1.0 + tau * tau).sqrt()).atanh()).sinh();
    tau * (1.0 + sigma * sigma).sqrt() - sigma * (1.0 + tau * tau).sqrt()
}

/// The Gauss–Schreiber (ξ', η') and Krüger-series (ξ, η) coordinates of (φ, λ − λ0), in
/// units of the rectifying radius (Karney 2011, eqs. 10–11).
fn xi_eta(s: &Series, lat_rad: f64, dlon_rad: f64) -> (f64, f64) {
    let tau_p = conformal_tan(lat_rad.tan(), s.e);
    let (sl, cl) = dlon_rad.sin_cos();
    let xi_p = tau_p.atan2(cl);
    let eta_p = (sl / (tau_p * tau_p + cl * cl).sqrt()).asinh();
    let (mut xi, mut eta) = (xi_p, eta_p);
    for (j, a) in s.alpha.iter().enumerate() {
        let k = 2.0 * (j + 1) as f64;
        xi += a * (k * xi_p).sin() * (k * eta_p).cosh();
        eta += a * (k * xi_p).cos() * (k * eta_p).sinh();
    }
    (xi, eta)
}

impl TransverseMercator {
    /// The studio's local projection for a survey centred at (`lon0_deg`, `lat0_deg`): scale
    /// 1, no false origin, so (0, 0) is the survey centre.
    pub fn local(lon0_deg: f64, lat0_deg: f64) -> Self {
        TransverseMercator {
            central_meridian_deg: lon0_deg,
            origin_latitude_deg: lat0_deg,
            scale: 1.0,
            false_easting_m: 0.0,
            false_northing_m: 0.0,
        }
    }

    /// The UTM projection of `zone` (1–60): k0 = 0.9996, false easting 500 km, false
    /// northing 10 000 km in the southern hemisphere.
    pub fn utm(zone: u32, south: bool) -> Self {
        TransverseMercator {
            central_meridian_deg: 6.0 * zone as f64 - 183.0,
            origin_latitude_deg: 0.0,
            scale: 0.9996,
            false_easting_m: 500_000.0,
            false_northing_m: if south { 10_000_000.0 } else { 0.0 },
        }
    }

    /// (easting, northing) in metres of (`lon_deg`, `lat_deg`):
    /// `E = FE + k0 A η`, `N = FN + k0 A (ξ − ξ(φ0, 0))` (Karney 2011, eq. 11).
    pub fn forward(&self, lon_deg: f64, lat_deg: f64) -> (f64, f64) {
        self.forward_with(&series(), lon_deg, lat_deg)
    }

    fn forward_with(&self, s: &Series, lon_deg: f64, lat_deg: f64) -> (f64, f64) {
        let dlon = wrap_deg(lon_deg - self.central_meridian_deg).to_radians();
        let (xi, eta) = xi_eta(s, lat_deg.to_radians(), dlon);
        let (xi0, _) = xi_eta(s, self.origin_latitude_deg.to_radians(), 0.0);
        let k = self.scale * s.a_rect;
        (
            self.false_easting_m + k * eta,
            self.false_northing_m + k * (xi - xi0),
        )
    }

    /// (longitude, latitude) in degrees of (`easting_m`, `northing_m`): the β series, then
    /// Newton's method for τ from τ' (Karney 2011, eqs. 19–21, 36).
    pub fn inverse(&self, easting_m: f64, northing_m: f64) -> (f64, f64) {
        let s = series();
        let (xi0, _) = xi_eta(&s, self.origin_latitude_deg.to_radians(), 0.0);
        let k = self.scale * s.a_rect;
        let xi = (northing_m - self.false_northing_m) / k + xi0;
        let eta = (easting_m - self.false_easting_m) / k;
        let (mut xi_p, mut eta_p) = (xi, eta);
        for (j, b) in s.beta.iter().enumerate() {
            let kk = 2.0 * (j + 1) as f64;
            xi_p -= b * (kk * xi).sin() * (kk * eta).cosh();
            eta_p -= b * (kk * xi).cos() * (kk * eta).sinh();
        }
        let (sx, cx) = xi_p.sin_cos();
        let sh = eta_p.sinh();
        let tau_p = sx / (sh * sh + cx * cx).sqrt();
        let dlon = sh.atan2(cx);
        let e2 = s.e * s.e;
        let mut tau = tau_p;
        for _ in 0..8 {
            let tp = conformal_tan(tau, s.e);
            let dtau = (tau_p - tp) / (1.0 + tp * tp).sqrt() * (1.0 + (1.0 - e2) * tau * tau)
                / ((1.0 - e2) * (1.0 + tau * tau).sqrt());
            tau += dtau;
            if dtau.abs() < 1e-14 * tau.abs().max(1.0) {
                break;
            }
        }
        (
            wrap_deg(self.central_meridian_deg + dlon.to_degrees()),
            tau.atan().to_degrees(),
        )
    }

    /// One sentence naming the projection, for result notes and reports.
    pub fn describe(&self) -> String {
        format!(
            "transverse Mercator on WGS84 (Krüger series to n⁶, Karney 2011), central meridian \
             {:.6}°, origin latitude {:.6}°, scale {}, false easting {} m, false northing {} m",
            self.central_meridian_deg,
            self.origin_latitude_deg,
            self.scale,
            self.false_easting_m,
            self.false_northing_m
        )
    }
}

/// An angle in degrees wrapped to (−180, 180].
fn wrap_deg(d: f64) -> f64 {
    let w = (d + 180.0).rem_euclid(360.0) - 180.0;
    if w == -180.0 { 180.0 } else { w }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utm_reference_points() {
        // Karney-based references (tolerance 1 mm):
        // * 48.8582° N, 2.2945° E → 31 N 448251.795 5411932.678 (pygeodesy test suite
        //   "Utm2", itself from C. Veness' geodesy library, Karney 2011 method);
        // * two Tasmanian survey marks published with GDA94 (GRS80) latitude/longitude to
        //   1e-9° and UTM zone 55 coordinates to the millimetre (University of Tasmania beach
        //   profile database, marks S730/51TN and 730/115); tolerance 2 mm.
        let grs80 = series_for(1.0 / 298.257_222_101);
        let z55 = TransverseMercator::utm(55, true);
        for (lat, lon, e0, n0) in [
            (-40.909623347, 145.546338419, 377_576.098, 5_470_258.385),
            (-42.976470152, 147.475301972, 538_755.892, 5_241_688.563),
        ] {
            let (e, n) = z55.forward_with(&grs80, lon, lat);
            assert!((e - e0).abs() < 2e-3, "{e} vs {e0}");
            assert!((n - n0).abs() < 2e-3, "{n} vs {n0}");
        }
    }

    #[test]
    fn forward_then_inverse_is_the_identity() {
        // Round trip to 1e-9 degrees (0.1 mm) over a survey-sized window and far from the
        // meridian.
        let tm = TransverseMercator::local(18.0, -32.0);
        for &(lon, lat) in &[
            (18.0, -32.0),
            (16.0, -34.0),
            (20.0, -30.0),
            (25.0, -10.0),
            (18.0, 60.0),
        ] {
            let (x, y) = tm.forward(lon, lat);
            let (lon2, lat2) = tm.inverse(x, y);
            assert!(
                (lon2 - lon).abs() < 1e-9 && (lat2 - lat).abs() < 1e-9,
                "{lon},{lat} → {lon2},{lat2}"
            );
        }
        let (x, y) = tm.forward(18.0, -32.0);
        assert!(
            x.abs() < 1e-9 && y.abs() < 1e-6,
            "origin maps to (0, 0): {x}, {y}"
        );
    }

    #[test]
    fn a_degree_of_latitude_matches_the_meridian_radius() {
        // The meridian arc over 1° centred on 32° S equals M(32°)·π/180 with the meridian
        // radius of curvature M = a(1 − e²)/(1 − e² sin²φ)^{3/2} (any geodesy text, e.g.
        // Torge & Müller 2012 eq. 4.15) to 0.1 m (the midpoint rule's error is ~1e-3 m).
        let tm = TransverseMercator::local(18.0, -32.0);
        let (_, y1) = tm.forward(18.0, -32.5);
        let (_, y2) = tm.forward(18.0, -31.5);
        let e2 = WGS84_F * (2.0 - WGS84_F);
        let s2 = 32f64.to_radians().sin().powi(2);
        let m = WGS84_A_M * (1.0 - e2) / (1.0 - e2 * s2).powf(1.5);
        let arc = m * 1f64.to_radians();
        assert!(((y2 - y1) - arc).abs() < 0.1, "{} vs {arc}", y2 - y1);
    }
}

//! Closed-form fields of a right rectangular prism (gravity and induced magnetisation) and of
//! a sphere, used as the forward model of the 3D inversion and as analytic checks.
//!
//! **Coordinates and signs.** x east, y north, z **up**, metres (the convention of harmonica
//! and SimPEG). Gravity is reported as `gz` **positive down** (a dense body below a station
//! gives a positive anomaly: the geodetic gravity-anomaly convention; SimPEG's `gz` is the
//! upward component, i.e. −1 × ours). Magnetic fields are in nT with components
//! (east, north, up); the total-field anomaly (TMI) is the projection of the anomalous field
//! on the direction of the inducing field, `ΔT ≈ F̂·B` (valid when |B| ≪ |F|).
//!
//! **The corner sums.** With the source point Q, the station P and `u = x_Q − x_P`,
//! `v = y_Q − y_P`, `w = z_Q − z_P`, `r = √(u² + v² + w²)`, every prism quantity is the
//! alternating sum over the eight corners
//! `|||f||| = Σ_{i,j,k∈{1,2}} (−1)^{i+j+k} f(u_i, v_j, w_k)` (upper corners counted +).
//! Logarithms and arctangents are evaluated in the singularity-safe forms of Fukushima
//! (2020, GJI 222, 1898–1908), so stations on the extension of a face or an edge get the
//! correct limit.

use serde::{Deserialize, Serialize};

/// Newton's gravitational constant, m³ kg⁻¹ s⁻² (CODATA 2018; the value harmonica and SimPEG
/// use).
pub const GRAVITATIONAL_CONSTANT: f64 = 6.6743e-11;
/// 1 m/s² in mGal.
pub const SI_TO_MGAL: f64 = 1.0e5;

/// A right rectangular prism aligned with the axes (x east, y north, z up), metres.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prism {
    /// Western face, x_min (m).
    pub west_m: f64,
    /// Eastern face, x_max (m).
    pub east_m: f64,
    /// Southern face, y_min (m).
    pub south_m: f64,
    /// Northern face, y_max (m).
    pub north_m: f64,
    /// Bottom face, z_min (m, z up).
    pub bottom_m: f64,
    /// Top face, z_max (m, z up).
    pub top_m: f64,
}

impl Prism {
    /// Volume, m³.
    pub fn volume_m3(&self) -> f64 {
        (self.east_m - self.west_m) * (self.north_m - self.south_m) * (self.top_m - self.bottom_m)
    }

    /// Centre (x, y, z), m.
    pub fn centre_m(&self) -> [f64; 3] {
        [
            0.5 * (self.west_m + self.east_m),
            0.5 * (self.south_m + self.north_m),
            0.5 * (self.bottom_m + self.top_m),
        ]
    }

    /// Whether the faces are ordered (west < east, south < north, bottom < top) and finite.
    pub fn is_valid(&self) -> bool {
        let ok = |a: f64, b: f64| a.is_finite() && b.is_finite() && a < b;
        ok(self.west_m, self.east_m)
            && ok(self.south_m, self.north_m)
            && ok(self.bottom_m, self.top_m)
    }
}

/// The direction and strength of the inducing (main) geomagnetic field.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct InducingField {
    /// Total intensity |F|, nT.
    pub intensity_nt: f64,
    /// Inclination I, degrees, positive below the horizontal.
    pub inclination_deg: f64,
    /// Declination D, degrees east of geographic north.
    pub declination_deg: f64,
}

impl InducingField {
    /// The unit vector F̂ in (east, north, up):
    /// `(cos I sin D, cos I cos D, −sin I)` (Blakely 1995 §4.2, written for z up).
    pub fn direction(&self) -> [f64; 3] {
        let (si, ci) = self.inclination_deg.to_radians().sin_cos();
        let (sd, cd) = self.declination_deg.to_radians().sin_cos();
        [ci * sd, ci * cd, -si]
    }
}

/// `ln(a + r)` where `r = √(a² + b2)`, safe when `a + r` cancels (Fukushima 2020, §2.3):
/// for `a < 0` it is evaluated as `ln(b2 / (r − a))`. When `b2 = 0` as well the term
/// `ln(b2)` is dropped: it is the same for both corners that pair along `a` and cancels in
/// the alternating corner sum (the station lies on the extension of an edge).
#[inline]
fn ln_plus(a: f64, r: f64, b2: f64) -> f64 {
    if a >= 0.0 {
        (a + r).ln()
    } else if b2 > 0.0 {
        (b2 / (r - a)).ln()
    } else {
        -(-2.0 * a).ln()
    }
}

/// `atan(num / den)` (the principal value, **not** `atan2`), with the limits `±π/2` when
/// `den = 0` and `0` when both vanish. The plain arctangent is the branch that keeps each
/// corner term continuous as a station crosses the plane of a face (Nagy et al. 2000, §3;
/// Fukushima 2020, §2.3).
#[inline]
fn atan_safe(num: f64, den: f64) -> f64 {
    if den != 0.0 {
        (num / den).atan()
    } else if num > 0.0 {
        std::f64::consts::FRAC_PI_2
    } else if num < 0.0 {
        -std::f64::consts::FRAC_PI_2
    } else {
        0.0
    }
}

/// The corner function of the vertical attraction (Nagy, Papp & Benedek 2000, their closed
/// form of `V_z`; the same expression as Plouff 1976 and Blakely 1995, §9.3):
/// `K(u, v, w) = u ln(v + r) + v ln(u + r) − w atan(u v / (w r))`,
/// the primitive of `1/r` in u and v. Then `gz_down = G ρ |||K|||`.
#[inline]
pub fn gz_corner(u: f64, v: f64, w: f64) -> f64 {
    let (u2, v2, w2) = (u * u, v * v, w * w);
    let r = (u2 + v2 + w2).sqrt();
    if r == 0.0 {
        return 0.0;
    }
    let mut k = 0.0;
    if u != 0.0 {
        k += u * ln_plus(v, r, u2 + w2);
    }
    if v != 0.0 {
        k += v * ln_plus(u, r, v2 + w2);
    }
    if w != 0.0 {
        k -= w * atan_safe(u * v, w * r);
    }
    k
}

/// The six corner functions of the second derivatives of the Newtonian potential
/// `Φ(P) = ∭ 1/r dV` with respect to the station coordinates (Nagy et al. 2000, the
/// second-derivative formulas `V_xx … V_yz` divided by Gρ):
/// `Φ_xx = −|||atan(v w/(u r))|||`, `Φ_yy = −|||atan(u w/(v r))|||`,
/// `Φ_zz = −|||atan(u v/(w r))|||`, `Φ_xy = |||ln(w + r)|||`, `Φ_xz = |||ln(v + r)|||`,
/// `Φ_yz = |||ln(u + r)|||`.
/// Returned in the order `[xx, yy, zz, xy, xz, yz]` for one corner (unsigned).
#[inline]
pub fn tensor_corner(u: f64, v: f64, w: f64) -> [f64; 6] {
    let (u2, v2, w2) = (u * u, v * v, w * w);
    let r = (u2 + v2 + w2).sqrt();
    if r == 0.0 {
        return [0.0; 6];
    }
    [
        -atan_safe(v * w, u * r),
        -atan_safe(u * w, v * r),
        -atan_safe(u * v, w * r),
        ln_plus(w, r, u2 + v2),
        ln_plus(v, r, u2 + w2),
        ln_plus(u, r, v2 + w2),
    ]
}

/// `|||f|||` of a scalar corner function for `prism` seen from `station`.
fn corner_sum(prism: &Prism, station: [f64; 3], f: impl Fn(f64, f64, f64) -> f64) -> f64 {
    let us = [prism.west_m - station[0], prism.east_m - station[0]];
    let vs = [prism.south_m - station[1], prism.north_m - station[1]];
    let ws = [prism.bottom_m - station[2], prism.top_m - station[2]];
    let mut sum = 0.0;
    for (i, &u) in us.iter().enumerate() {
        for (j, &v) in vs.iter().enumerate() {
            for (k, &w) in ws.iter().enumerate() {
                sum += corner_sign(i + j + k) * f(u, v, w);
            }
        }
    }
    sum
}

/// The sign of a corner in `|||f|||` from the sum of its 0-based indices (0 = lower face,
/// 1 = upper face): `∫_a^b = F(b) − F(a)` on each axis gives `(−1)^(number of lower faces)`,
/// i.e. + when the index sum is odd (3 or 1), − when it is even.
#[inline]
pub(crate) fn corner_sign(index_sum: usize) -> f64 {
    if index_sum % 2 == 1 { 1.0 } else { -1.0 }
}

/// `gz` (positive down, mGal) of a prism of density contrast `density_kg_per_m3` at
/// `station` (x, y, z up, m): `gz = 10⁵ · G ρ |||K|||` with K from [`gz_corner`]
/// (Nagy, Papp & Benedek 2000, J. Geodesy 74, 552–560).
pub fn prism_gz_mgal(prism: &Prism, density_kg_per_m3: f64, station: [f64; 3]) -> f64 {
    SI_TO_MGAL * GRAVITATIONAL_CONSTANT * density_kg_per_m3 * corner_sum(prism, station, gz_corner)
}

/// The symmetric tensor `Φ_ij = ∂²/∂P_i∂P_j ∭ 1/r dV` (dimensionless) of `prism` at
/// `station`, as `[[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]` (corner functions in
/// [`tensor_corner`]). Outside the prism its trace is 0 (Laplace).
pub fn prism_potential_hessian(prism: &Prism, station: [f64; 3]) -> [[f64; 3]; 3] {
    let us = [prism.west_m - station[0], prism.east_m - station[0]];
    let vs = [prism.south_m - station[1], prism.north_m - station[1]];
    let ws = [prism.bottom_m - station[2], prism.top_m - station[2]];
    let mut t = [0.0; 6];
    for (i, &u) in us.iter().enumerate() {
        for (j, &v) in vs.iter().enumerate() {
            for (k, &w) in ws.iter().enumerate() {
                let sign = corner_sign(i + j + k);
                let c = tensor_corner(u, v, w);
                for (acc, ci) in t.iter_mut().zip(c) {
                    *acc += sign * ci;
                }
            }
        }
    }
    [[t[0], t[3], t[4]], [t[3], t[1], t[5]], [t[4], t[5], t[2]]]
}

/// The anomalous magnetic field (east, north, up; nT) of a prism with uniform magnetisation
/// `magnetization_a_per_m` (east, north, up; A/m) at `station`:
/// `B_i = (μ0/4π) Σ_j M_j Φ_ij` (Poisson's relation, Blakely 1995 §5.2; the prism form of
/// Bhattacharyya 1964, Geophysics 29, 517–531), with μ0/4π = 10⁻⁷ T·m/A = 100 nT·m/A.
pub fn prism_magnetic_field_nt(
    prism: &Prism,
    magnetization_a_per_m: [f64; 3],
    station: [f64; 3],
) -> [f64; 3] {
    let t = prism_potential_hessian(prism, station);
    let mut b = [0.0; 3];
    for (i, bi) in b.iter_mut().enumerate() {
        *bi = 100.0
            * (0..3)
                .map(|j| t[i][j] * magnetization_a_per_m[j])
                .sum::<f64>();
    }
    b
}

/// Induced magnetisation `M = χ F / μ0` (A/m, east-north-up) of a body of susceptibility
/// `susceptibility_si` in the inducing field (no demagnetisation, no remanence; valid for
/// χ ≪ 1). With F in nT: `M = χ |F| F̂ / (400 π)`.
pub fn induced_magnetization_a_per_m(susceptibility_si: f64, field: &InducingField) -> [f64; 3] {
    let f = field.direction();
    let m = susceptibility_si * field.intensity_nt / (400.0 * std::f64::consts::PI);
    [m * f[0], m * f[1], m * f[2]]
}

/// Total-field anomaly (nT) of a prism of susceptibility `susceptibility_si` magnetised by
/// induction in `field`: `ΔT = F̂ · B = χ |F| / (4π) · F̂ᵀ Φ F̂` (Bhattacharyya 1964 and
/// Blakely 1995 §9.3, written with the potential Hessian of [`prism_potential_hessian`]).
pub fn prism_tmi_nt(
    prism: &Prism,
    susceptibility_si: f64,
    field: &InducingField,
    station: [f64; 3],
) -> f64 {
    let f = field.direction();
    let t = prism_potential_hessian(prism, station);
    susceptibility_si * field.intensity_nt / (4.0 * std::f64::consts::PI) * quad_form(&t, f)
}

/// `fᵀ T f` for a symmetric 3 × 3 tensor.
pub(crate) fn quad_form(t: &[[f64; 3]; 3], f: [f64; 3]) -> f64 {
    (0..3)
        .map(|i| (0..3).map(|j| f[i] * t[i][j] * f[j]).sum::<f64>())
        .sum()
}

/// `gz` (positive down, mGal) of a homogeneous sphere = a point mass outside it:
/// `gz = 10⁵ · G M (z_P − z_c) / r³`, `M = 4/3 π R³ Δρ` (Newton's shell theorem; Blakely
/// 1995 §7.1).
pub fn sphere_gz_mgal(
    centre_m: [f64; 3],
    radius_m: f64,
    density_kg_per_m3: f64,
    station: [f64; 3],
) -> f64 {
    let mass_kg = 4.0 / 3.0 * std::f64::consts::PI * radius_m.powi(3) * density_kg_per_m3;
    point_mass_gz_mgal(centre_m, mass_kg, station)
}

/// `gz` (positive down, mGal) of a point mass `mass_kg` at `source_m`:
/// `gz = 10⁵ · G m (z_P − z_Q) / r³` (Newton; z up, so a source below gives a positive value).
pub fn point_mass_gz_mgal(source_m: [f64; 3], mass_kg: f64, station: [f64; 3]) -> f64 {
    let d = [
        source_m[0] - station[0],
        source_m[1] - station[1],
        source_m[2] - station[2],
    ];
    let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    SI_TO_MGAL * GRAVITATIONAL_CONSTANT * mass_kg * (-d[2]) / (r2 * r2.sqrt())
}

/// Total-field anomaly (nT) of a uniformly, inductively magnetised sphere = a dipole
/// `m = M V` at its centre: `B = (μ0/4π) (3 (m·r̂) r̂ − m) / r³` (the dipole field, Blakely
/// 1995 §4.2), `ΔT = F̂·B`.
pub fn sphere_tmi_nt(
    centre_m: [f64; 3],
    radius_m: f64,
    susceptibility_si: f64,
    field: &InducingField,
    station: [f64; 3],
) -> f64 {
    let volume = 4.0 / 3.0 * std::f64::consts::PI * radius_m.powi(3);
    let m = induced_magnetization_a_per_m(susceptibility_si, field);
    let moment = [m[0] * volume, m[1] * volume, m[2] * volume];
    let b = dipole_field_nt(centre_m, moment, station);
    let f = field.direction();
    b[0] * f[0] + b[1] * f[1] + b[2] * f[2]
}

/// Field (nT, east-north-up) of a point dipole of moment `moment_a_m2` (A·m²) at `source_m`:
/// `B = 100 · (3 (m·r̂) r̂ − m) / r³` with r from the source to the station (Blakely 1995
/// §4.2; μ0/4π = 100 nT·m/A).
pub fn dipole_field_nt(source_m: [f64; 3], moment_a_m2: [f64; 3], station: [f64; 3]) -> [f64; 3] {
    let d = [
        station[0] - source_m[0],
        station[1] - source_m[1],
        station[2] - source_m[2],
    ];
    let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    let r = r2.sqrt();
    let rhat = [d[0] / r, d[1] / r, d[2] / r];
    let mdotr = moment_a_m2[0] * rhat[0] + moment_a_m2[1] * rhat[1] + moment_a_m2[2] * rhat[2];
    let c = 100.0 / (r2 * r);
    [
        c * (3.0 * mdotr * rhat[0] - moment_a_m2[0]),
        c * (3.0 * mdotr * rhat[1] - moment_a_m2[1]),
        c * (3.0 * mdotr * rhat[2] - moment_a_m2[2]),
    ]
}

/// `gz` (mGal, positive down) of several prisms with their density contrasts at every
/// station (the "forward bodies" of the studio), computed in parallel over stations.
pub fn forward_gz_mgal(bodies: &[(Prism, f64)], stations: &[[f64; 3]]) -> Vec<f64> {
    use rayon::prelude::*;
    stations
        .par_iter()
        .map(|&s| {
            bodies
                .iter()
                .map(|(p, rho)| prism_gz_mgal(p, *rho, s))
                .sum()
        })
        .collect()
}

/// TMI (nT) of several prisms with their susceptibilities, induced by `field`, at every
/// station, in parallel over stations.
pub fn forward_tmi_nt(
    bodies: &[(Prism, f64)],
    field: &InducingField,
    stations: &[[f64; 3]],
) -> Vec<f64> {
    use rayon::prelude::*;
    stations
        .par_iter()
        .map(|&s| {
            bodies
                .iter()
                .map(|(p, chi)| prism_tmi_nt(p, *chi, field, s))
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gauss–Legendre nodes and weights on [−1, 1] (Newton on P_n; Abramowitz & Stegun 25.4.29).
    fn gauss_legendre(n: usize) -> Vec<(f64, f64)> {
        (0..n)
            .map(|i| {
                let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
                let mut dp = 0.0;
                for _ in 0..100 {
                    let (mut p0, mut p1) = (1.0, x);
                    for k in 2..=n {
                        let p2 = ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64;
                        p0 = p1;
                        p1 = p2;
                    }
                    dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
                    let dx = p1 / dp;
                    x -= dx;
                    if dx.abs() < 1e-16 {
                        break;
                    }
                }
                (x, 2.0 / ((1.0 - x * x) * dp * dp))
            })
            .collect()
    }

    /// ∭ f(Q) dV over the prism by a tensor Gauss–Legendre rule with `n` points per axis on
    /// each of `sub` sub-intervals.
    fn quadrature(p: &Prism, n: usize, sub: usize, f: impl Fn([f64; 3]) -> f64) -> f64 {
        let gl = gauss_legendre(n);
        let axis = |a: f64, b: f64| -> Vec<(f64, f64)> {
            let h = (b - a) / sub as f64;
            (0..sub)
                .flat_map(|s| {
                    let lo = a + s as f64 * h;
                    gl.iter()
                        .map(move |&(x, w)| (lo + 0.5 * h * (x + 1.0), 0.5 * h * w))
                })
                .collect()
        };
        let (xs, ys, zs) = (
            axis(p.west_m, p.east_m),
            axis(p.south_m, p.north_m),
            axis(p.bottom_m, p.top_m),
        );
        let mut sum = 0.0;
        for &(x, wx) in &xs {
            for &(y, wy) in &ys {
                for &(z, wz) in &zs {
                    sum += wx * wy * wz * f([x, y, z]);
                }
            }
        }
        sum
    }

    const ORACLE_PRISM: Prism = Prism {
        west_m: -50.0,
        east_m: 50.0,
        south_m: -30.0,
        north_m: 30.0,
        bottom_m: -120.0,
        top_m: -20.0,
    };

    #[test]
    fn gz_and_tmi_equal_the_oracle_grid() {
        // Reference: ../shared/oracles/curves/ref_prism_gz.txt (harmonica prism_gravity /
        // prism_magnetic; harmonica–Nagy 3.8e-15 mGal, harmonica–SimPEG TMI 5e-8 nT).
        // Tolerances from issue 9: gz 1e-10 mGal absolute, TMI 1e-6 nT absolute.
        let path = crate::field_data::oracle("curves/ref_prism_gz.txt");
        let Some(path) = path else { return };
        let text = std::fs::read_to_string(path).unwrap();
        let field = InducingField {
            intensity_nt: 50_000.0,
            inclination_deg: 60.0,
            declination_deg: 10.0,
        };
        let (mut n, mut max_gz, mut max_tmi, mut peak_gz) = (0, 0.0f64, 0.0f64, 0.0f64);
        for line in text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        {
            let v: Vec<f64> = line
                .split_whitespace()
                .map(|t| t.parse().unwrap())
                .collect();
            let s = [v[0], v[1], v[2]];
            let gz = prism_gz_mgal(&ORACLE_PRISM, 500.0, s);
            let tmi = prism_tmi_nt(&ORACLE_PRISM, 0.01, &field, s);
            max_gz = max_gz.max((gz - v[3]).abs());
            max_tmi = max_tmi.max((tmi - v[4]).abs());
            peak_gz = peak_gz.max(gz);
            n += 1;
        }
        assert_eq!(n, 41 * 41);
        eprintln!("max |gz − oracle| = {max_gz:e} mGal, max |TMI − oracle| = {max_tmi:e} nT");
        assert!(max_gz < 1e-10, "gz off by {max_gz:e} mGal");
        assert!(max_tmi < 1e-6, "TMI off by {max_tmi:e} nT");
        assert!((peak_gz - 0.362).abs() < 1e-3, "peak {peak_gz}");
    }

    #[test]
    fn closed_forms_equal_gauss_legendre_quadrature() {
        // Independent check of the corner formulas: integrate the point-source kernels
        // (−w/r³ for gz down, (3 d_i d_j − r² δ_ij)/r⁵ for Φ_ij) with 3 × 12 Gauss points per
        // axis; the integrand is smooth (station 25 m above the top), tolerance 1e-9 relative.
        let p = ORACLE_PRISM;
        for station in [[0.0, 0.0, 5.0], [37.0, -61.0, 2.0], [120.0, 80.0, 30.0]] {
            let gz_q = SI_TO_MGAL
                * GRAVITATIONAL_CONSTANT
                * 500.0
                * quadrature(&p, 12, 3, |q| {
                    let d = [q[0] - station[0], q[1] - station[1], q[2] - station[2]];
                    let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                    -d[2] / r.powi(3)
                });
            let gz = prism_gz_mgal(&p, 500.0, station);
            assert!((gz - gz_q).abs() < 1e-9 * gz_q.abs(), "{gz} vs {gz_q}");
            let t = prism_potential_hessian(&p, station);
            for i in 0..3 {
                for j in 0..3 {
                    let tq = quadrature(&p, 12, 3, |q| {
                        let d = [q[0] - station[0], q[1] - station[1], q[2] - station[2]];
                        let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                        let delta = if i == j { r2 } else { 0.0 };
                        (3.0 * d[i] * d[j] - delta) / r2.powf(2.5)
                    });
                    let scale = t[2][2].abs();
                    assert!(
                        (t[i][j] - tq).abs() < 1e-9 * scale,
                        "Φ_{i}{j}: {} vs {tq}",
                        t[i][j]
                    );
                }
            }
        }
    }

    #[test]
    fn hessian_is_traceless_outside_the_prism() {
        // Laplace's equation ∇²Φ = 0 outside the masses; tolerance 1e-12 of |Φ_zz|.
        for station in [[0.0, 0.0, 5.0], [50.0, 30.0, 0.0], [-200.0, 10.0, -70.0]] {
            let t = prism_potential_hessian(&ORACLE_PRISM, station);
            let trace = t[0][0] + t[1][1] + t[2][2];
            assert!(
                trace.abs() < 1e-12 * t[2][2].abs().max(1e-3),
                "trace {trace}"
            );
        }
    }

    #[test]
    fn far_field_of_a_cube_is_a_point_mass_and_a_dipole() {
        // A cube has no quadrupole moment, so at distance r the relative difference from
        // the point mass / dipole is O((a/r)⁴): at r = 100 a below 1e-6 (geophysics.md §5.5.1).
        let a = 10.0;
        let cube = Prism {
            west_m: -a / 2.0,
            east_m: a / 2.0,
            south_m: -a / 2.0,
            north_m: a / 2.0,
            bottom_m: -500.0 - a / 2.0,
            top_m: -500.0 + a / 2.0,
        };
        let centre = cube.centre_m();
        let mass = cube.volume_m3() * 300.0;
        let field = InducingField {
            intensity_nt: 48_000.0,
            inclination_deg: 66.0,
            declination_deg: -3.0,
        };
        // Sphere of equal volume.
        let radius = (3.0 * cube.volume_m3() / (4.0 * std::f64::consts::PI)).cbrt();
        for station in [
            [0.0, 0.0, 500.0],
            [300.0, -200.0, 400.0],
            [-700.0, 100.0, 0.0],
        ] {
            let gz = prism_gz_mgal(&cube, 300.0, station);
            let gz_point = point_mass_gz_mgal(centre, mass, station);
            let gz_sphere = sphere_gz_mgal(centre, radius, 300.0, station);
            assert!((gz / gz_point - 1.0).abs() < 1e-6, "{gz} vs {gz_point}");
            assert!((gz_sphere / gz_point - 1.0).abs() < 1e-12);
            let tmi = prism_tmi_nt(&cube, 0.05, &field, station);
            let tmi_sphere = sphere_tmi_nt(centre, radius, 0.05, &field, station);
            assert!(
                (tmi - tmi_sphere).abs() < 1e-6 * tmi_sphere.abs(),
                "{tmi} vs {tmi_sphere}"
            );
        }
    }

    #[test]
    fn stations_on_face_and_edge_planes_get_the_continuous_limit() {
        // On x = east face plane and on the edge line x = east, y = north (above the prism)
        // the corner terms are singular; the result must equal the limit from both sides.
        let p = ORACLE_PRISM;
        let field = InducingField {
            intensity_nt: 50_000.0,
            inclination_deg: 60.0,
            declination_deg: 10.0,
        };
        for s in [
            [50.0, 0.0, 5.0],
            [50.0, 30.0, 5.0],
            [0.0, -30.0, 0.0],
            [-50.0, 30.0, -150.0],
        ] {
            let e = 1e-7;
            let f = |s: [f64; 3]| {
                (
                    prism_gz_mgal(&p, 500.0, s),
                    prism_tmi_nt(&p, 0.01, &field, s),
                )
            };
            let (g0, t0) = f(s);
            assert!(g0.is_finite() && t0.is_finite());
            for d in [[e, e, 0.0], [-e, -e, 0.0], [e, -e, 0.0]] {
                let (g1, t1) = f([s[0] + d[0], s[1] + d[1], s[2] + d[2]]);
                assert!(
                    (g1 - g0).abs() < 1e-6 * g0.abs().max(1e-3),
                    "gz {g0} vs {g1} at {s:?}"
                );
                assert!(
                    (t1 - t0).abs() < 1e-5 * t0.abs().max(1.0),
                    "tmi {t0} vs {t1} at {s:?}"
                );
            }
        }
    }

    #[test]
    fn dense_body_below_gives_positive_gz() {
        // Sign convention: gz positive down.
        let g = prism_gz_mgal(&ORACLE_PRISM, 500.0, [0.0, 0.0, 5.0]);
        assert!(g > 0.0);
        assert!(prism_gz_mgal(&ORACLE_PRISM, -500.0, [0.0, 0.0, 5.0]) < 0.0);
    }
}

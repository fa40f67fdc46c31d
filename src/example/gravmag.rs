//! The example project's gravity survey: 400 stations on a 20 × 20 grid of 10 m spacing
//! centred over the dense body of [`Truth::dense_body`], on the ground surface of the truth,
//! written to `gravity/stations.csv` with the header `x_m,y_m,z_m,gz_mgal` (the column names
//! say it is gravity in mGal, so loading it asks no question).
//!
//! The values are `gz = g_body + g_regional + ε`:
//!
//! * `g_body`: the vertical attraction (mGal, positive down) of the body as **one** right
//!   rectangular prism of uniform density contrast, by the closed form of Nagy, Papp & Benedek
//!   (2000, J. Geodesy 74, 552–560, eq. 4) as implemented in
//!   [`crate::methods::gravmag::prism::prism_gz_mgal`]. The inversion models the ground with a
//!   tensor mesh of 10 m × 10 m × 5 m cells whose faces do not coincide with the body's
//!   (the body's faces fall mid-cell), so the data are not made on the inversion's
//!   discretisation;
//! * `g_regional = a + b_x (x − x_c) + b_y (y − y_c)`: a linear regional trend
//!   ([`REGIONAL_MGAL`], with (x_c, y_c) the body centre), the part a degree-1 trend removes;
//! * `ε`: Gaussian noise of standard deviation [`NOISE_MGAL`] from the seeded generator
//!   [`crate::methods::petro::rng::Xoshiro256StarStar`] (seed [`NOISE_SEED`]), so the file is
//!   the same on every machine.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::Truth;
use crate::methods::gravmag::prism::{Prism, forward_gz_mgal};
use crate::methods::petro::rng::Xoshiro256StarStar;

/// The station file, relative to the project folder.
pub const STATIONS_FILE: &str = "gravity/stations.csv";
/// The input role it fills.
pub const ROLE: &str = "gravmag_file";
/// Standard deviation of the added noise, mGal: 3 µGal, the repeatability of a microgravity
/// survey with repeated readings — the kind of survey one designs to find a body whose peak
/// is 22 µGal. (Until issue 21 it was 10 µGal: the anomaly carried a tenth of the noise's
/// energy, the zero model fitted to χ² 1.1 N, and no regularised model could place the body's
/// depth; that case is kept as a test that the evaluation says so.)
pub const NOISE_MGAL: f64 = 0.003;
/// Seed of the noise.
pub const NOISE_SEED: u64 = 9;
/// The regional trend: value at the body centre (mGal) and its gradients east and north
/// (mGal/m; 0.4 and −0.2 mGal/km).
pub const REGIONAL_MGAL: (f64, f64, f64) = (0.05, 4.0e-4, -2.0e-4);
/// Stations along each side of the grid.
pub const N_SIDE: usize = 20;
/// Station spacing, m.
pub const SPACING_M: f64 = 10.0;

/// The dense body as a prism (x east, y north, z up, m): centred at
/// (`dense_body.0[0]`, `dense_body.0[1]`) with its centre `dense_body.0[2]` m below the ground
/// surface there, sides `dense_body.1`.
pub fn body(truth: &Truth) -> Prism {
    let ([cx, cy, depth], [sx, sy, sz], _) = truth.dense_body;
    let cz = truth.surface_z(cx) - depth;
    Prism {
        west_m: cx - 0.5 * sx,
        east_m: cx + 0.5 * sx,
        south_m: cy - 0.5 * sy,
        north_m: cy + 0.5 * sy,
        bottom_m: cz - 0.5 * sz,
        top_m: cz + 0.5 * sz,
    }
}

/// The body's density contrast, kg/m³ (the truth gives g/cm³; 1 g/cm³ = 1000 kg/m³).
pub fn density_contrast_kg_per_m3(truth: &Truth) -> f64 {
    truth.dense_body.2 * 1000.0
}

/// The stations (x, y, z up; m): a 20 × 20 grid of 10 m spacing whose centre is the body's
/// centre, each on the ground surface of the truth (`z = surface_z(x)`; the truth's surface
/// slopes along x only).
pub fn stations(truth: &Truth) -> Vec<[f64; 3]> {
    let ([cx, cy, _], _, _) = truth.dense_body;
    let half = 0.5 * (N_SIDE as f64 - 1.0);
    let mut out = Vec::with_capacity(N_SIDE * N_SIDE);
    for j in 0..N_SIDE {
        for i in 0..N_SIDE {
            let x = cx + (i as f64 - half) * SPACING_M;
            let y = cy + (j as f64 - half) * SPACING_M;
            out.push([x, y, truth.surface_z(x)]);
        }
    }
    out
}

/// The regional trend at (x, y), mGal: `a + b_x (x − x_c) + b_y (y − y_c)`.
pub fn regional_mgal(truth: &Truth, x_m: f64, y_m: f64) -> f64 {
    let ([cx, cy, _], _, _) = truth.dense_body;
    let (a, bx, by) = REGIONAL_MGAL;
    a + bx * (x_m - cx) + by * (y_m - cy)
}

/// The body's attraction at every station, mGal (positive down).
pub fn body_gz_mgal(truth: &Truth) -> Vec<f64> {
    forward_gz_mgal(
        &[(body(truth), density_contrast_kg_per_m3(truth))],
        &stations(truth),
    )
}

/// The noise-free values: body plus regional, mGal.
pub fn noise_free_gz_mgal(truth: &Truth) -> Vec<f64> {
    stations(truth)
        .iter()
        .zip(body_gz_mgal(truth))
        .map(|(s, g)| g + regional_mgal(truth, s[0], s[1]))
        .collect()
}

/// The noise added to station k, in station order, mGal.
pub fn noise_mgal(n: usize) -> Vec<f64> {
    let mut rng = Xoshiro256StarStar::seed_from_u64(NOISE_SEED);
    (0..n).map(|_| NOISE_MGAL * rng.next_normal()).collect()
}

/// Write `gravity/stations.csv` under `dir`; returns `("gravmag_file", "gravity/stations.csv")`.
pub fn write(truth: &Truth, dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let st = stations(truth);
    let clean = noise_free_gz_mgal(truth);
    let noise = noise_mgal(st.len());
    let mut text = String::new();
    let b = body(truth);
    let _ = writeln!(
        text,
        "# HydroGeo Studio example (synthetic): gravity over a dense body ({:.0} x {:.0} x {:.0} m, {:+.2} g/cm3, top {:.1} m below the ground) plus a linear regional trend",
        b.east_m - b.west_m,
        b.north_m - b.south_m,
        b.top_m - b.bottom_m,
        truth.dense_body.2,
        truth.surface_z(truth.dense_body.0[0]) - b.top_m
    );
    let _ = writeln!(
        text,
        "# gz positive down in mGal; Gaussian noise {NOISE_MGAL} mGal standard deviation (seed {NOISE_SEED}); x east, y north, z up, m"
    );
    text.push_str("x_m,y_m,z_m,gz_mgal\n");
    for ((s, g), e) in st.iter().zip(&clean).zip(&noise) {
        let _ = writeln!(text, "{:.3},{:.3},{:.3},{:.6}", s[0], s[1], s[2], g + e);
    }
    let rel = PathBuf::from(STATIONS_FILE);
    let path = dir.join(&rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(vec![(ROLE.to_string(), rel)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::gravmag::kind::{Family, KindInference};
    use crate::methods::gravmag::stations::{ReadOptions, read_station_table};

    #[test]
    fn our_reader_reads_the_example_and_its_values_are_the_forward_response() {
        let dir = tempfile::tempdir().unwrap();
        let truth = Truth::default();
        let written = write(&truth, dir.path()).unwrap();
        assert_eq!(
            written,
            vec![("gravmag_file".to_string(), PathBuf::from(STATIONS_FILE))]
        );
        let path = dir.path().join(STATIONS_FILE);
        assert!(std::fs::metadata(&path).unwrap().len() < 300_000);
        let table = read_station_table(&path, &ReadOptions::default()).unwrap();
        // The header says gravity: resolved without a question, columns not guessed.
        assert!(matches!(table.kind, KindInference::Resolved { .. }));
        assert_eq!(table.family(), Some(Family::Gravity));
        assert_eq!(table.value_unit.as_deref(), Some("mGal"));
        assert!(!table.columns_guessed);
        assert_eq!(table.n_stations, 400);
        let st = stations(&truth);
        let z = table.z_m.as_ref().unwrap();
        for k in 0..400 {
            // Positions to the 1e-3 m the file is written with.
            assert!((table.x_m[k] - st[k][0]).abs() <= 5e-4);
            assert!((table.y_m[k] - st[k][1]).abs() <= 5e-4);
            assert!((z[k] - st[k][2]).abs() <= 5e-4);
        }
        // Values: forward response + regional + the seeded noise, to the 1e-6 mGal the file
        // is written with (rounding ≤ 5e-7).
        let clean = noise_free_gz_mgal(&truth);
        let noise = noise_mgal(400);
        for k in 0..400 {
            assert!(
                (table.value[k] - (clean[k] + noise[k])).abs() <= 5.1e-7,
                "station {k}: {} vs {}",
                table.value[k],
                clean[k] + noise[k]
            );
        }
        // The noise is what the module says: mean within 3σ/√n of 0, standard deviation
        // within 10 % of 0.01 mGal (400 samples: the sample σ has a 3.5 % standard error).
        let mean = noise.iter().sum::<f64>() / 400.0;
        let sd = (noise.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / 399.0).sqrt();
        assert!(mean.abs() < 3.0 * NOISE_MGAL / 20.0, "mean {mean}");
        assert!((sd / NOISE_MGAL - 1.0).abs() < 0.1, "sd {sd}");
    }

    #[test]
    fn the_body_anomaly_is_where_and_as_large_as_the_truth_says() {
        // Checks of the forward response against the truth, independent of the prism code:
        // (1) the largest body attraction is at one of the four stations nearest the body's
        // centre; (2) far away the prism acts as a point mass M = Δρ·V (Blakely 1995, eq.
        // 7.1: gz = G M Δz / r³): at 10 km east of the body the two agree to 1e-4 relative.
        let truth = Truth::default();
        let g = body_gz_mgal(&truth);
        let st = stations(&truth);
        let (k_max, _) =
            g.iter().enumerate().fold(
                (0, f64::MIN),
                |a, (k, v)| if *v > a.1 { (k, *v) } else { a },
            );
        let [cx, cy, _] = truth.dense_body.0;
        assert!((st[k_max][0] - cx).abs() <= 5.0 + 1e-9 && (st[k_max][1] - cy).abs() <= 5.0 + 1e-9);
        let b = body(&truth);
        let m_kg = density_contrast_kg_per_m3(&truth) * b.volume_m3();
        let c = b.centre_m();
        let far = [c[0] + 10_000.0, c[1], truth.surface_z(cx)];
        let r = ((far[0] - c[0]).powi(2) + (far[2] - c[2]).powi(2)).sqrt();
        let point = crate::methods::gravmag::prism::GRAVITATIONAL_CONSTANT * m_kg * (far[2] - c[2])
            / r.powi(3)
            * 1e5;
        let prism = forward_gz_mgal(&[(b, density_contrast_kg_per_m3(&truth))], &[far])[0];
        assert!((prism / point - 1.0).abs() < 1e-4, "{prism} vs {point}");
        // The regional trend adds 0.4 mGal/km east: the file's trend is not negligible
        // against the ~0.02 mGal body anomaly, so the trend removal matters.
        assert!(
            (regional_mgal(&truth, cx + 95.0, cy) - regional_mgal(&truth, cx - 95.0, cy) - 0.076)
                .abs()
                < 1e-12
        );
    }
}

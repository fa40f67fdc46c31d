//! The example project's TDEM data: five central-loop soundings along the line, computed
//! from the truth's 1D layering with our own forward model, plus seeded 3 % noise.
//!
//! * `tdem/soundings.csv`: `time_s,snd1,…,snd5`, the step-off decay −∂Bz/∂t of a central
//!   loop of radius 20 m, 1 turn, 1 A, read by a 1 m² one-turn coil, i.e. dB/dt in V/m² (per
//!   ampere; with 1 A the values are V/m²), at 25 gates log-spaced from 1e-5 to 1e-2 s.
//! * `tdem/geometry.csv`: `sounding,easting,northing,distance,altitude` at x = 10, 30, 50,
//!   70, 90 m (northing 0, altitude the truth's surface).
//!
//! The data come from the truth's five sharp layers ([`Truth::layers_1d`]) with the Key
//! 201-point filters; the inversion uses the 101-point set by default and fits smooth
//! many-layer models (30 log-spaced layers), so the example does not hand the inversion its
//! own filters or discretisation.
//!
//! Settings to give the run (the file format does not carry the loop): `tdem_params =
//! {"loop_radius_m": 20, "loop_type": "central", "unit": "V/(A·m²)"}` — [`TDEM_PARAMS`].

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::Truth;
use crate::methods::petro::rng::Xoshiro256StarStar;
use crate::methods::tdem::forward::{Forward, LayeredEarth, Quantity, TemSystem};

/// Positions of the soundings along the line (m).
pub const POSITIONS_M: [f64; 5] = [10.0, 30.0, 50.0, 70.0, 90.0];
/// Loop radius (m).
pub const LOOP_RADIUS_M: f64 = 20.0;
/// Number of gates.
pub const N_GATES: usize = 25;
/// Relative noise (standard deviation of the multiplicative Gaussian noise).
pub const NOISE_RELATIVE: f64 = 0.03;
/// Seed of the noise.
pub const SEED: u64 = 8;
/// The `tdem_params` the example needs (loop, receiver and unit; everything else default).
pub const TDEM_PARAMS: &str =
    r#"{"loop_radius_m": 20.0, "loop_type": "central", "unit": "V/(A·m²)"}"#;

/// The gate times: `N_GATES` log-spaced from 1e-5 to 1e-2 s.
pub fn gate_times_s() -> Vec<f64> {
    (0..N_GATES)
        .map(|i| 1e-5 * 10f64.powf(3.0 * i as f64 / (N_GATES - 1) as f64))
        .collect()
}

/// One synthetic sounding: where it is, the noise-free response, and the noisy data.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticSounding {
    /// Position along the line (m).
    pub x_m: f64,
    /// Noise-free dB/dt (V/m² per A) at [`gate_times_s`].
    pub clean: Vec<f64>,
    /// With the seeded noise: clean · (1 + 0.03·z), z standard normal.
    pub noisy: Vec<f64>,
}

/// The five soundings: the truth's layers under each position through the central-loop
/// step-off dB/dt forward model (Hankel and sine digital filters, Key 2009/2012), then
/// multiplicative noise d = d₀(1 + 0.03 z) from one seeded xoshiro256** stream per sounding.
pub fn soundings(truth: &Truth) -> Result<Vec<SyntheticSounding>, String> {
    soundings_at(truth, &POSITIONS_M)
}

/// [`soundings`] at any positions along the line (m): sounding k's noise from stream k.
pub fn soundings_at(truth: &Truth, positions_m: &[f64]) -> Result<Vec<SyntheticSounding>, String> {
    let system = TemSystem::central_loop(LOOP_RADIUS_M);
    let times = gate_times_s();
    let forward = Forward::new(&system, &times, Quantity::DbDt).map_err(|e| e.to_string())?;
    positions_m
        .iter()
        .enumerate()
        .map(|(k, &x)| {
            let (h, rho) = truth.layers_1d(x);
            let earth = LayeredEarth::new(rho, h).map_err(|e| e.to_string())?;
            let clean = forward.response(&earth);
            let mut rng = Xoshiro256StarStar::for_stream(SEED, k as u64);
            let noisy = clean
                .iter()
                .map(|v| v * (1.0 + NOISE_RELATIVE * rng.next_normal()))
                .collect();
            Ok(SyntheticSounding {
                x_m: x,
                clean,
                noisy,
            })
        })
        .collect()
}

/// Write `tdem/soundings.csv` and `tdem/geometry.csv` under `dir`; returns the roles
/// `tdem_file` and `tdem_geometry_file` with the paths relative to `dir`.
pub fn write(truth: &Truth, dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    write_at(truth, dir, &POSITIONS_M)
}

/// [`write`] with soundings at `positions_m` (named snd1, snd2, … in that order).
pub fn write_at(
    truth: &Truth,
    dir: &Path,
    positions_m: &[f64],
) -> Result<Vec<(String, PathBuf)>, String> {
    let snd = soundings_at(truth, positions_m)?;
    let sub = dir.join("tdem");
    std::fs::create_dir_all(&sub).map_err(|e| format!("{}: {e}", sub.display()))?;
    let mut data = String::from("time_s");
    for k in 0..snd.len() {
        let _ = write!(data, ",snd{}", k + 1);
    }
    data.push('\n');
    for (g, t) in gate_times_s().iter().enumerate() {
        let _ = write!(data, "{t:.6e}");
        for s in &snd {
            let _ = write!(data, ",{:.6e}", s.noisy[g]);
        }
        data.push('\n');
    }
    let mut geometry = String::from("sounding,easting,northing,distance,altitude\n");
    for (k, s) in snd.iter().enumerate() {
        let _ = writeln!(
            geometry,
            "snd{},{},0,{},{:.2}",
            k + 1,
            s.x_m,
            s.x_m,
            truth.surface_z(s.x_m)
        );
    }
    let data_rel = PathBuf::from("tdem").join("soundings.csv");
    let geom_rel = PathBuf::from("tdem").join("geometry.csv");
    for (rel, text) in [(&data_rel, &data), (&geom_rel, &geometry)] {
        let p = dir.join(rel);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(vec![
        ("tdem_file".into(), data_rel),
        ("tdem_geometry_file".into(), geom_rel),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::tdem::params::TdemParams;
    use crate::methods::tdem::pipeline::load_dataset;

    #[test]
    fn the_reader_reads_back_the_forward_response_with_its_noise() {
        let truth = Truth::default();
        let dir = tempfile::tempdir().unwrap();
        let roles = write(&truth, dir.path()).unwrap();
        assert_eq!(roles[0].0, "tdem_file");
        assert_eq!(roles[1].0, "tdem_geometry_file");
        let data = dir.path().join(&roles[0].1);
        let geom = dir.path().join(&roles[1].1);
        assert!(std::fs::metadata(&data).unwrap().len() < 300_000);
        let params: TdemParams = serde_json::from_str(TDEM_PARAMS).unwrap();
        let ds = load_dataset(&data, Some(&geom), &params).unwrap();
        let snd = soundings(&truth).unwrap();
        let times = gate_times_s();
        assert_eq!(ds.n_soundings(), 5);
        assert_eq!(ds.n_without_system(), 0);
        // Nothing masked: positive, decaying, no error column.
        assert_eq!(ds.n_masked(&[]), 0, "{:?}", ds.notes);
        let mut dev = Vec::new();
        for (s, truth_s) in ds.file.soundings.iter().zip(&snd) {
            assert_eq!(s.position.easting_m, Some(truth_s.x_m));
            assert_eq!(s.position.distance_m, Some(truth_s.x_m));
            assert_eq!(s.values.len(), N_GATES);
            for (g, t) in times.iter().enumerate() {
                // Times and values written with 7 significant digits: 1e-6 relative.
                assert!((s.times_s[g] / t - 1.0).abs() < 1e-6);
                assert!(
                    (s.values[g] / truth_s.noisy[g] - 1.0).abs() < 1e-6,
                    "{} gate {g}",
                    s.name
                );
                dev.push(s.values[g] / truth_s.clean[g] - 1.0);
            }
        }
        // The values are the forward response within the stated 3 % noise: 125 deviations,
        // sample standard deviation within 2.2–3.8 % (a 99.9 % band for n = 125), none
        // beyond 4.5σ.
        let n = dev.len() as f64;
        let mean = dev.iter().sum::<f64>() / n;
        let sd = (dev.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        assert!((0.022..0.038).contains(&sd), "noise sd {sd}");
        assert!(mean.abs() < 0.01, "noise mean {mean}");
        assert!(dev.iter().all(|d| d.abs() < 4.5 * NOISE_RELATIVE));
    }

    #[test]
    fn a_selection_of_soundings_loads_only_those_and_a_bad_index_names_the_count() {
        // tdem_params.soundings (a part of a split run holds its soundings this way).
        let dir = tempfile::tempdir().unwrap();
        let roles = write(&Truth::default(), dir.path()).unwrap();
        let (data, geom) = (dir.path().join(&roles[0].1), dir.path().join(&roles[1].1));
        let mut params: TdemParams = serde_json::from_str(TDEM_PARAMS).unwrap();
        params.soundings = Some(vec![1, 3]);
        let ds = load_dataset(&data, Some(&geom), &params).unwrap();
        let names: Vec<&str> = ds.file.soundings.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["snd2", "snd4"]);
        assert_eq!(ds.file.soundings[1].position.distance_m, Some(70.0));
        assert!(
            ds.notes
                .iter()
                .any(|n| n.contains("2 of the file's soundings"))
        );
        params.soundings = Some(vec![5]);
        let e = load_dataset(&data, Some(&geom), &params)
            .unwrap_err()
            .to_string();
        assert!(e.contains("below 5") && e.contains("found 5"), "{e}");
    }

    #[test]
    fn the_clean_response_is_the_forward_model_of_the_truth_and_deterministic() {
        // Sounding 3 (x = 50 m): recomputed here from the truth's layers; the 101-point
        // filters (a different filter set) agree within 0.5 % (forward tests: dB/dt within
        // 1.6e-3 of Ward & Hohmann's half-space with them).
        use crate::methods::tdem::forward::{FilterChoice, ForwardSettings};
        let truth = Truth::default();
        let a = soundings(&truth).unwrap();
        let b = soundings(&truth).unwrap();
        assert_eq!(a, b, "seeded: the same data every time");
        let (h, rho) = truth.layers_1d(50.0);
        assert_eq!(rho.len(), 5);
        let earth = LayeredEarth::new(rho, h).unwrap();
        let fast = Forward::with_settings(
            &TemSystem::central_loop(LOOP_RADIUS_M),
            &gate_times_s(),
            Quantity::DbDt,
            ForwardSettings {
                filters: FilterChoice::Key101,
                ..ForwardSettings::default()
            },
        )
        .unwrap()
        .response(&earth);
        for (g, (c, f)) in a[2].clean.iter().zip(&fast).enumerate() {
            assert!((f / c - 1.0).abs() < 5e-3, "gate {g}: {c} vs {f}");
        }
    }
}

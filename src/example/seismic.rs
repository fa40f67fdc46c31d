//! The example's seismic refraction data: first-arrival times on the example line
//! (`seismic/line1.sgt`) and one raw shot (`seismic/shot_024.sgy`).
//!
//! * 48 geophones at 2 m (x = 0 … 94 m) on the truth's surface, a shot at every 4th geophone
//!   (12 shots, 564 picks).
//! * Times: the shortest-path forward model of `methods::seismic::forward` through
//!   `Truth::velocity(x, depth)` sampled at the cell centres of a grid FINER than the
//!   inversion's — 0.5 m columns, 0.25 m rows to 24 m depth, no coarsening, 4 secondary nodes
//!   (the inversion's default is 1 m columns, rows growing from 1 m, 3 secondary nodes).
//! * Noise: Gaussian, σ = 0.5 ms, from a seeded generator (deterministic); each pick's error
//!   in the file is 0.5 ms + 2 % of its time (the picking error plus the forward model's
//!   discretisation, which the finer grid does not remove from the inversion's side).
//! * The raw shot at geophone 24 (x = 48 m): one trace per geophone, 0.25 ms sampling,
//!   100 ms, IEEE floats; each trace a Ricker wavelet of peak frequency 100 Hz whose onset
//!   lies at the (noise-free) first-arrival time — the wavelet's peak is 2/(π f) after it,
//!   where the Ricker envelope `exp(−(π f τ)²)` has fallen to e⁻⁴ — scaled by
//!   1/(1 + offset/10 m), plus Gaussian noise of 0.2 % of the largest amplitude.

use std::path::{Path, PathBuf};

use ndarray::Array2;

use super::Truth;
use crate::methods::seismic::TravelTimes;
use crate::methods::seismic::forward::{RayGraph, forward};
use crate::methods::seismic::gather::ShotGather;
use crate::methods::seismic::grid::{Grid, GridOptions};
use crate::methods::seismic::segy::{SampleFormat, write_segy};
use crate::methods::seismic::sgt::write_sgt;

/// Geophones on the line.
pub const N_GEOPHONES: usize = 48;
/// Geophone spacing, m.
pub const SPACING_M: f64 = 2.0;
/// A shot at every this many geophones.
pub const SHOT_EVERY: usize = 4;
/// Standard deviation of the pick noise, s.
pub const NOISE_S: f64 = 0.0005;
/// The geophone index of the raw shot.
pub const RAW_SHOT: usize = 24;
/// Sample interval of the raw shot, s.
pub const RAW_DT_S: f64 = 0.00025;
/// Samples per trace of the raw shot.
pub const RAW_SAMPLES: usize = 400;
/// Peak frequency of the Ricker wavelet, Hz.
pub const RICKER_HZ: f64 = 100.0;

/// The survey layout with zero times: sensors on the truth's surface, every shot to every
/// other geophone.
pub fn survey(truth: &Truth) -> TravelTimes {
    let x: Vec<f64> = (0..N_GEOPHONES).map(|i| SPACING_M * i as f64).collect();
    let z: Vec<f64> = x.iter().map(|&x| truth.surface_z(x)).collect();
    let mut tt = TravelTimes {
        sensor_x_m: x,
        sensor_z_m: z,
        shot: vec![],
        geophone: vec![],
        time_s: vec![],
        error_s: None,
        format: "example".into(),
        guessed: false,
        notes: vec![],
    };
    for s in (0..N_GEOPHONES).step_by(SHOT_EVERY) {
        for g in (0..N_GEOPHONES).filter(|&g| g != s) {
            tt.shot.push(s);
            tt.geophone.push(g);
            tt.time_s.push(0.0);
        }
    }
    tt
}

/// Noise-free first-arrival times of `tt`'s picks through the truth on the fine grid
/// (module docs), s.
pub fn truth_times(truth: &Truth, tt: &TravelTimes) -> Result<Vec<f64>, String> {
    let depths: Vec<f64> = (0..=96).map(|k| 0.25 * k as f64).collect();
    let grid = Grid::for_survey(
        tt,
        &GridOptions {
            dx_m: Some(0.5),
            depths_m: Some(depths),
            coarsen_with_depth: false,
            ..Default::default()
        },
    )
    .map_err(|e| e.to_string())?;
    let slowness: Vec<f64> = (0..grid.n_cells())
        .map(|c| {
            let (x, _) = grid.cell_center(c);
            1.0 / truth.velocity(x, grid.cell_depth(c))
        })
        .collect();
    let g = RayGraph::new(&grid, &tt.sensor_x_m, &tt.sensor_z_m, 4);
    Ok(forward(&g, &slowness, tt, false).time_s)
}

/// A deterministic standard-normal generator (64-bit LCG, Knuth's MMIX constants, and the
/// Box–Muller transform).
struct Normal(u64);

impl Normal {
    fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// z = √(−2 ln u₁) cos(2π u₂) (Box & Muller 1958).
    fn next(&mut self) -> f64 {
        let (u1, u2) = (self.uniform(), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// Ricker wavelet of peak frequency `f_hz` at lag `tau_s` from its peak:
/// `(1 − 2π²f²τ²) exp(−π²f²τ²)` (Ricker 1953).
pub fn ricker(tau_s: f64, f_hz: f64) -> f64 {
    let a = (std::f64::consts::PI * f_hz * tau_s).powi(2);
    (1.0 - 2.0 * a) * (-a).exp()
}

/// The raw shot at geophone [`RAW_SHOT`] (module docs), from its noise-free times.
pub fn raw_shot(tt: &TravelTimes, first_arrival_s: &[f64], seed: u64) -> ShotGather {
    let src = RAW_SHOT;
    let sx = tt.sensor_x_m[src];
    let mut noise = Normal(seed);
    let mut data = Array2::<f64>::zeros((N_GEOPHONES, RAW_SAMPLES));
    let lag = 2.0 / (std::f64::consts::PI * RICKER_HZ);
    for g in 0..N_GEOPHONES {
        let t_fa = if g == src {
            0.0
        } else {
            (0..tt.n_data())
                .find(|&i| tt.shot[i] == src && tt.geophone[i] == g)
                .map_or(0.0, |i| first_arrival_s[i])
        };
        let amp = 1.0 / (1.0 + (tt.sensor_x_m[g] - sx).abs() / 10.0);
        for j in 0..RAW_SAMPLES {
            let t = j as f64 * RAW_DT_S;
            data[[g, j]] = amp * ricker(t - t_fa - lag, RICKER_HZ) + 0.002 * noise.next();
        }
    }
    ShotGather {
        data,
        sample_interval_s: RAW_DT_S,
        start_time_s: 0.0,
        unapplied_delay: None,
        source_x_m: Some(sx),
        receiver_x_m: Some(tt.sensor_x_m.clone()),
        channel: (1..=N_GEOPHONES as i64).collect(),
        record: RAW_SHOT as i64,
        format: "SEG-Y".into(),
        sample_format: "IEEE float32".into(),
        guessed: false,
        notes: vec![],
    }
}

/// Write `seismic/line1.sgt` and `seismic/shot_024.sgy` into `dir`; roles `seismic_file` and
/// `segy_file`.
pub fn write(truth: &Truth, dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let sub = dir.join("seismic");
    std::fs::create_dir_all(&sub).map_err(|e| format!("{}: {e}", sub.display()))?;
    let mut tt = survey(truth);
    let clean = truth_times(truth, &tt)?;
    let mut noise = Normal(20240501);
    tt.time_s = clean
        .iter()
        .map(|&t| (t + NOISE_S * noise.next()).max(0.0))
        .collect();
    tt.error_s = Some(clean.iter().map(|&t| NOISE_S + 0.02 * t).collect());
    let sgt = PathBuf::from("seismic/line1.sgt");
    write_sgt(&dir.join(&sgt), &tt).map_err(|e| format!("{}: {e}", sgt.display()))?;
    let segy = PathBuf::from("seismic/shot_024.sgy");
    write_segy(
        &dir.join(&segy),
        &[raw_shot(&tt, &clean, 7)],
        SampleFormat::Ieee,
    )
    .map_err(|e| format!("{}: {e}", segy.display()))?;
    Ok(vec![
        ("seismic_file".to_string(), sgt),
        ("segy_file".to_string(), segy),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::seismic::picking::{PickParams, pick_gather};
    use crate::methods::seismic::{segy, sgt};

    /// The written files read back with our readers: the .sgt has the layout, and its
    /// times are the forward response plus the stated noise — residual RMS 0.5 ms ± 20 %
    /// (564 samples of σ = 0.5 ms: the RMS's standard error is ≈ 3 %), none beyond 4σ.
    /// The noise-free 2 m times are the direct wave through 450 m/s along the sloping
    /// surface, 2·√(1 + 0.02²)/450 s, within 1 %. The raw shot: 48 traces, 0.25 ms, source at
    /// 48 m; our picker picks at least 40 of the 47 traces with an offset; the picks follow
    /// the noise-free first arrivals up to one delay common to all traces (the wavelet's
    /// onset convention, at most 5 ms): at least 35 within 1.5 ms (six samples) of it. Our
    /// tolerances: no oracle picks exist for this synthetic shot.
    #[test]
    fn example_files_read_back_and_match_the_forward_response() {
        let dir = std::env::temp_dir().join(format!("hgx-example-seismic-{}", std::process::id()));
        let truth = Truth::default();
        let roles = write(&truth, &dir).unwrap();
        assert_eq!(roles[0].0, "seismic_file");
        assert_eq!(roles[1].0, "segy_file");
        let tt = sgt::read_sgt(&dir.join(&roles[0].1)).unwrap();
        assert_eq!(tt.n_sensors(), 48);
        assert_eq!(tt.n_data(), 12 * 47);
        assert_eq!(tt.shots().len(), 12);
        for (i, (&x, &z)) in tt.sensor_x_m.iter().zip(&tt.sensor_z_m).enumerate() {
            assert!((x - 2.0 * i as f64).abs() < 1e-6);
            assert!((z - truth.surface_z(x)).abs() < 1e-6);
        }
        let clean = truth_times(&truth, &tt).unwrap();
        let res: Vec<f64> = tt.time_s.iter().zip(&clean).map(|(a, b)| a - b).collect();
        let rms = (res.iter().map(|r| r * r).sum::<f64>() / res.len() as f64).sqrt();
        let worst = res.iter().fold(0.0f64, |a, r| a.max(r.abs()));
        eprintln!(
            "example .sgt: residual rms {:.3} ms, worst {:.3} ms",
            1e3 * rms,
            1e3 * worst
        );
        assert!((rms - NOISE_S).abs() <= 0.2 * NOISE_S, "{rms}");
        assert!(worst <= 4.0 * NOISE_S, "{worst}");
        // Near offsets: the direct wave along the surface.
        let direct = 2.0 * (1.0f64 + 0.02 * 0.02).sqrt() / 450.0;
        for i in (0..tt.n_data()).filter(|&i| tt.offset_m(i) < 2.5) {
            assert!(
                (clean[i] - direct).abs() <= 0.01 * direct,
                "{} vs {direct}",
                clean[i]
            );
        }
        // The raw shot.
        let f = segy::read_segy(&dir.join(&roles[1].1)).unwrap();
        assert_eq!(f.gathers.len(), 1);
        let g = &f.gathers[0];
        assert_eq!(g.n_traces(), 48);
        assert!((g.sample_interval_s - RAW_DT_S).abs() < 1e-12);
        assert!((g.source_x_m.unwrap() - 48.0).abs() < 1e-6);
        let picks = pick_gather(g, &PickParams::default());
        let mut diff: Vec<f64> = Vec::new();
        for q in &picks.picks {
            if q.trace == RAW_SHOT {
                continue;
            }
            let i = (0..tt.n_data())
                .find(|&i| tt.shot[i] == RAW_SHOT && tt.geophone[i] == q.trace)
                .unwrap();
            if let Some(t) = q.time_s {
                diff.push(t - clean[i]);
            }
        }
        let mut sorted = diff.clone();
        sorted.sort_by(f64::total_cmp);
        let bias = sorted[sorted.len() / 2];
        let good = diff.iter().filter(|d| (*d - bias).abs() <= 0.0015).count();
        eprintln!(
            "raw shot: {} of 47 traces picked, median pick − first arrival {:.2} ms, {good} within 1.5 ms of it; {diff:?}; {:?}",
            diff.len(),
            1e3 * bias,
            picks.notes
        );
        assert!(diff.len() >= 40, "{}", diff.len());
        assert!(bias.abs() <= 0.005, "{bias}");
        assert!(good >= 35, "{good}");
        let size = std::fs::metadata(dir.join(&roles[1].1)).unwrap().len();
        assert!(size < 300_000, "{size}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

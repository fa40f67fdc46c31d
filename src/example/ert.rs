//! The example's ERT data: four dipole–dipole surveys of the truth (48 electrodes, 2 m apart,
//! on the sloping surface) at the [`SURVEY_DATES`], computed with the project's 2.5D
//! finite-element forward model on a mesh finer than the inversion's (three columns per
//! electrode spacing, first level 0.1 spacing thick), plus 2 % Gaussian noise from a seeded
//! generator (seed 2024 + survey number), written in pyGIMLi's unified format as
//! `ert/<date>.dat` with the error column 2 %.

use std::path::{Path, PathBuf};

use super::{SURVEY_DATES, Truth};
use crate::methods::ert::fem::{ForwardOperator, ForwardSettings};
use crate::methods::ert::mesh::{LineMeshParams, line_mesh};
use crate::methods::ert::readers::unified;
use crate::methods::ert::rng::SplitMix64;
use crate::methods::ert::survey::{Electrode, Format, Quadrupole, Survey};

/// Electrodes on the line.
pub const N_ELECTRODES: usize = 48;
/// Electrode spacing, m.
pub const SPACING_M: f64 = 2.0;
/// Relative noise (standard deviation) added to the apparent resistivities.
pub const NOISE: f64 = 0.02;

/// Electrode positions (x, z) on the truth's surface, m.
pub fn electrodes(truth: &Truth) -> Vec<[f64; 2]> {
    (0..N_ELECTRODES)
        .map(|i| {
            let x = truth.line_m.0 + SPACING_M * i as f64;
            [x, truth.surface_z(x)]
        })
        .collect()
}

/// Dipole–dipole quadrupoles: dipole lengths a = 1, 2 spacings, separations n = 1…6.
pub fn quadrupoles() -> Vec<Quadrupole> {
    let mut q = Vec::new();
    for a in 1..=2 {
        for n in 1..=6 {
            for i in 0..N_ELECTRODES {
                let nn = i + 2 * a + n * a;
                if nn < N_ELECTRODES {
                    q.push(Quadrupole::new(i, i + a, i + a + n * a, nn));
                }
            }
        }
    }
    q
}

/// The truth's noise-free apparent resistivities (Ω·m) of every survey on the forward mesh.
pub fn clean_response(truth: &Truth) -> Result<Vec<Vec<f64>>, String> {
    clean_responses(truth, &truth.plume.radius_m)
}

/// The noise-free apparent resistivities (Ω·m) of one survey per plume radius (m) in
/// `radii_m`, on the forward mesh of the module docs.
pub fn clean_responses(truth: &Truth, radii_m: &[f64]) -> Result<Vec<Vec<f64>>, String> {
    let el = electrodes(truth);
    let quads = quadrupoles();
    let params = LineMeshParams {
        n_between: 3,
        first_layer_fraction: 0.1,
        depth_growth: 1.12,
        para_depth_m: 25.0,
        ..Default::default()
    };
    let mesh = line_mesh(&el, &[], &params, &[]).map_err(|e| e.to_string())?;
    let centroids = mesh.centroids();
    let n = mesh.n_cells();
    let op = ForwardOperator::new(
        mesh,
        (0..n).collect(),
        &el,
        &quads,
        &ForwardSettings::default(),
    )
    .map_err(|e| e.to_string())?;
    radii_m
        .iter()
        .map(|&r| {
            let rho: Vec<f64> = centroids
                .iter()
                .map(|c| truth.rho_with_plume(c[0], truth.surface_z(c[0]) - c[1], r))
                .collect();
            op.response(&rho)
                .map(|r| r.rhoa_ohm_m)
                .map_err(|e| e.to_string())
        })
        .collect()
}

/// The survey number `t` with noise added (seed 2024 + t).
pub fn survey(truth: &Truth, clean: &[f64], t: usize) -> Survey {
    let quads = quadrupoles();
    let mut g = SplitMix64::new(2024 + t as u64);
    let mut s = Survey::empty(Format::Unified);
    s.electrodes = electrodes(truth)
        .iter()
        .map(|p| Electrode::at(p[0], 0.0, p[1]))
        .collect();
    s.rhoa_ohm_m = Some(
        clean
            .iter()
            .map(|v| v * (1.0 + NOISE * g.normal()))
            .collect(),
    );
    s.err = Some(vec![NOISE; quads.len()]);
    s.valid = vec![true; quads.len()];
    s.quadrupoles = quads;
    s
}

/// Write the four surveys (see the module docs); returns `("ert_files", path)` pairs.
pub fn write(truth: &Truth, dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let sub = dir.join("ert");
    std::fs::create_dir_all(&sub).map_err(|e| format!("{}: {e}", sub.display()))?;
    let clean = clean_response(truth)?;
    let mut out = Vec::new();
    for (t, date) in SURVEY_DATES.iter().enumerate() {
        let rel = PathBuf::from(format!("ert/{date}.dat"));
        let s = survey(truth, &clean[t], t);
        unified::write(&s, &dir.join(&rel)).map_err(|e| e.to_string())?;
        out.push(("ert_files".to_string(), rel));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::ert::{Instrument, read_survey};

    #[test]
    fn the_reader_reads_back_the_truths_forward_response_with_the_stated_noise() {
        let truth = Truth::default();
        let dir = std::env::temp_dir().join(format!("hgx-example-ert-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let files = write(&truth, &dir).expect("writes");
        assert_eq!(files.len(), 4);
        let clean = clean_response(&truth).expect("forward");
        let mut centre = Vec::new();
        for (t, (role, rel)) in files.iter().enumerate() {
            assert_eq!(role, "ert_files");
            let p = dir.join(rel);
            assert!(std::fs::metadata(&p).expect("file").len() < 300_000);
            let s = read_survey(&p, Instrument::Auto).expect("reads");
            // The date comes from the file name; geometry and counts as written.
            assert_eq!(
                s.survey_time.as_ref().map(|d| d.iso()).as_deref(),
                Some(SURVEY_DATES[t])
            );
            assert_eq!(s.n_electrodes(), N_ELECTRODES);
            assert_eq!(s.quadrupoles, quadrupoles());
            assert!((s.electrodes[47].z_m - truth.surface_z(94.0)).abs() < 1e-12);
            // The values are the truth's forward response times (1 + 0.02·N(0,1)): the
            // relative residuals have mean ≈ 0 (|mean| < 3σ/√n) and std 2 % ± 0.3 %
            // (n ≈ 500: the sample std's standard error is 0.02/√(2n) ≈ 0.0006).
            let rhoa = s.rhoa_ohm_m.expect("rhoa column");
            let r: Vec<f64> = rhoa
                .iter()
                .zip(&clean[t])
                .map(|(o, c)| o / c - 1.0)
                .collect();
            let n = r.len() as f64;
            let mean = r.iter().sum::<f64>() / n;
            let std = (r.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
            assert!(mean.abs() < 3.0 * NOISE / n.sqrt(), "mean {mean}");
            assert!((std - NOISE).abs() < 0.003, "std {std}");
            // The datum centred on the plume (x = 40 m, a = 1, n = 2: electrodes 18–22).
            let k = s
                .quadrupoles
                .iter()
                .position(|q| *q == Quadrupole::new(18, 19, 21, 22))
                .expect("quadrupole");
            centre.push(clean[t][k]);
        }
        // The plume grows: the noise-free apparent resistivity over it falls survey by survey.
        // (No bound by the model's extreme resistivities: a dipole–dipole ρa over a lateral
        // contrast may fall outside them.)
        println!("ρa over the plume, surveys 1–4: {centre:?} Ω·m");
        assert!(centre.windows(2).all(|w| w[1] < w[0]), "{centre:?}");
        // Deterministic: writing again gives the same bytes.
        let first = std::fs::read(dir.join(&files[0].1)).expect("read");
        write(&truth, &dir).expect("writes again");
        assert_eq!(first, std::fs::read(dir.join(&files[0].1)).expect("read"));
    }
}

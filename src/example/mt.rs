//! The example's MT data: three sites `mt/site01.edi` … `site03.edi` at x = 20, 50, 80 m.
//!
//! Each site's impedance is the 1D response of the truth's layering under it
//! ([`Truth::layers_1d`]: five layers down to the deep conductor and basement) by the Wait
//! recursion ([`crate::methods::mt::impedance_ohm`]) — a layering quite unlike the inversion's
//! 40 log-spaced layers — at 31 periods from 1e-3 to 1e3 s (5 per decade). For a 1D earth
//! Zxy = Z and Zyx = −Z (e^{+iωt}), Zxx = Zyy = 0. Noise: 3 % complex Gaussian,
//! E|δZ|² = (0.03·|Z|)², i.e. each of Re and Im with σ = 0.03·|Z|/√2, from the project's
//! seeded xoshiro256** (seed 8000 + site number), so the files are the same on every run. The
//! variance written in `>ZXY.VAR` is (0.03·|Z|)² (the noise-free |Z|), so the errors are the
//! noise actually added. Impedances are written in (mV/km)/nT, the EDI unit.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use num_complex::Complex64;

use super::{SURVEY_DATES, Truth};
use crate::methods::mt::impedance_ohm;
use crate::methods::mt::tf::ohm_to_field;
use crate::methods::petro::rng::Xoshiro256StarStar;

/// Site positions along the line (m).
pub const SITE_X_M: [f64; 3] = [20.0, 50.0, 80.0];
/// Relative noise on |Z|.
pub const NOISE_FRACTION: f64 = 0.03;
/// Periods per decade, and the decades covered (1e-3 to 1e3 s).
const PER_DECADE: usize = 5;

/// The example's periods: 10^(−3 + k/5) s, k = 0..=30.
pub fn periods_s() -> Vec<f64> {
    (0..=6 * PER_DECADE)
        .map(|k| 10f64.powf(-3.0 + k as f64 / PER_DECADE as f64))
        .collect()
}

/// One site's impedance Zxy in (mV/km)/nT at [`periods_s`], the noise-free value's standard
/// deviation σ = `noise`·|Z| and the value with noise added (module docs).
pub struct SiteImpedance {
    /// Periods, s.
    pub period_s: Vec<f64>,
    /// Noise-free Zxy, (mV/km)/nT.
    pub z_true: Vec<Complex64>,
    /// Zxy with noise, (mV/km)/nT.
    pub z_noisy: Vec<Complex64>,
    /// Standard deviation of the complex noise, (mV/km)/nT.
    pub z_std: Vec<f64>,
}

/// Zxy of the truth under `x_m` (module docs), with `noise`-relative complex noise from `seed`.
pub fn site_impedance(truth: &Truth, x_m: f64, noise: f64, seed: u64) -> SiteImpedance {
    let (thick, rho) = truth.layers_1d(x_m);
    let period_s = periods_s();
    let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
    let z_true: Vec<Complex64> = period_s
        .iter()
        .map(|t| ohm_to_field(impedance_ohm(*t, &rho, &thick)))
        .collect();
    let z_std: Vec<f64> = z_true.iter().map(|z| noise * z.norm()).collect();
    let z_noisy = z_true
        .iter()
        .zip(&z_std)
        .map(|(z, s)| {
            let part = s / std::f64::consts::SQRT_2;
            let (a, b) = (rng.next_normal(), rng.next_normal());
            z + Complex64::new(part * a, part * b)
        })
        .collect();
    SiteImpedance {
        period_s,
        z_true,
        z_noisy,
        z_std,
    }
}

fn block(out: &mut String, name: &str, values: &[f64]) {
    let _ = writeln!(out, ">{name} //{}", values.len());
    for chunk in values.chunks(5) {
        for v in chunk {
            let _ = write!(out, " {v:.12e}");
        }
        out.push('\n');
    }
}

/// The EDI text of one site (SEG EDI 1987: HEAD, INFO, DEFINEMEAS, MTSECT, the frequency
/// block and the eight impedance blocks with variances). Frequencies descend, as instruments
/// write them.
pub fn edi_text(name: &str, x_m: f64, z: &SiteImpedance, z_field: &[Complex64]) -> String {
    let n = z.period_s.len();
    let order: Vec<usize> = (0..n).collect();
    let mut s = String::new();
    // SEG EDI dates are MM/DD/YY; the first ERT survey's date.
    let date = SURVEY_DATES[0];
    let (y, m, d) = (&date[2..4], &date[5..7], &date[8..10]);
    let _ = write!(
        s,
        ">HEAD\n  DATAID=\"{name}\"\n  ACQBY=\"HydroGeo Studio example (synthetic)\"\n  \
         ACQDATE={m}/{d}/{y}\n  LOC=\"x {x_m} m along the example line\"\n  \
         STDVERS=\"SEG 1.0\"\n  EMPTY=1.0e+32\n\n>INFO\n  MAXINFO=3\n  \
         Synthetic: 1D response of the example truth at x {x_m} m with {pct} percent complex noise.\n\n\
         >=DEFINEMEAS\n  MAXCHAN=4\n  REFTYPE=CART\n\n\
         >EMEAS ID=1.001 CHTYPE=EX X=-25 Y=0 Z=0 X2=25 Y2=0 Z2=0\n\
         >EMEAS ID=1.002 CHTYPE=EY X=0 Y=-25 Z=0 X2=0 Y2=25 Z2=0\n\
         >HMEAS ID=1.003 CHTYPE=HX X=0 Y=0 Z=0\n\
         >HMEAS ID=1.004 CHTYPE=HY X=0 Y=0 Z=0\n\n\
         >=MTSECT\n  SECTID=\"{name}\"\n  NFREQ={n}\n  EX=1.001\n  EY=1.002\n  HX=1.003\n  HY=1.004\n\n",
        pct = NOISE_FRACTION * 100.0
    );
    let rev: Vec<usize> = order.iter().rev().copied().collect();
    let freq: Vec<f64> = rev.iter().map(|&k| 1.0 / z.period_s[k]).collect();
    block(&mut s, "FREQ", &freq);
    let var: Vec<f64> = rev.iter().map(|&k| z.z_std[k] * z.z_std[k]).collect();
    let zero = vec![0.0; n];
    let pick = |f: &dyn Fn(Complex64) -> f64, sign: f64| -> Vec<f64> {
        rev.iter().map(|&k| sign * f(z_field[k])).collect()
    };
    for (c, sign) in [("ZXX", 0.0), ("ZXY", 1.0), ("ZYX", -1.0), ("ZYY", 0.0)] {
        if sign == 0.0 {
            block(&mut s, &format!("{c}R"), &zero);
            block(&mut s, &format!("{c}I"), &zero);
        } else {
            block(&mut s, &format!("{c}R"), &pick(&|z| z.re, sign));
            block(&mut s, &format!("{c}I"), &pick(&|z| z.im, sign));
        }
        block(&mut s, &format!("{c}.VAR"), &var);
    }
    s.push_str(">END\n");
    s
}

/// Write the three sites (module docs); returns `("mt_files", mt/site0N.edi)` pairs.
pub fn write(truth: &Truth, dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let sub = dir.join("mt");
    std::fs::create_dir_all(&sub).map_err(|e| format!("{}: {e}", sub.display()))?;
    let mut out = Vec::new();
    for (i, x) in SITE_X_M.iter().enumerate() {
        let name = format!("site{:02}", i + 1);
        let z = site_impedance(truth, *x, NOISE_FRACTION, 8000 + i as u64 + 1);
        let text = edi_text(&name, *x, &z, &z.z_noisy);
        let rel = PathBuf::from("mt").join(format!("{name}.edi"));
        let path = dir.join(&rel);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        out.push(("mt_files".to_string(), rel));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::mt::{Component, mt1d_forward, read_transfer_function};
    use crate::methods::mt::{LayeredEarth, forward::ForwardResponse};

    fn forward(truth: &Truth, x: f64) -> ForwardResponse {
        let (thickness_m, resistivity_ohm_m) = truth.layers_1d(x);
        mt1d_forward(
            &periods_s(),
            &LayeredEarth {
                resistivity_ohm_m,
                thickness_m,
            },
        )
    }

    /// Noise-free sites written as EDI and read back by our reader: ρa and φ of Zxy (and of
    /// −Zyx) equal the forward model's (Wait recursion, `mt1d_forward`) to 1e-10 relative /
    /// 1e-8° — the 13 significant digits written leave that much.
    #[test]
    fn noise_free_sites_read_back_as_the_forward_response() {
        let truth = Truth::default();
        let dir = std::env::temp_dir().join(format!("hgx-example-mt-clean-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for x in SITE_X_M {
            let z = site_impedance(&truth, x, NOISE_FRACTION, 1);
            let path = dir.join("clean.edi");
            std::fs::write(&path, edi_text("clean", x, &z, &z.z_true)).unwrap();
            let tf = read_transfer_function(&path).unwrap();
            let f = forward(&truth, x);
            assert_eq!(tf.period_s.len(), 31);
            for comp in [Component::Xy, Component::Yx] {
                let (rho, ph) = tf.rhoa_phase(comp).unwrap();
                for k in 0..31 {
                    assert!((tf.period_s[k] / f.period_s[k] - 1.0).abs() < 1e-12);
                    let rel = (rho[k] / f.rhoa_ohm_m[k] - 1.0).abs();
                    assert!(rel < 1e-10, "x {x} T {} ρa rel {rel}", f.period_s[k]);
                    let ph_first = if comp == Component::Yx {
                        ph[k] + 180.0
                    } else {
                        ph[k]
                    };
                    let ph_first = if ph_first > 180.0 {
                        ph_first - 360.0
                    } else {
                        ph_first
                    };
                    assert!(
                        (ph_first - f.phase_deg[k]).abs() < 1e-8,
                        "x {x} T {} φ {ph_first} vs {}",
                        f.period_s[k],
                        f.phase_deg[k]
                    );
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The written example (noisy): three files under `mt/`, each < 300 kB, read by our
    /// reader; Zxy equals the forward response plus the seeded noise to 1e-10 relative, the
    /// error is 3 % of |Z| as stated, and the noise is what was stated: the normalised
    /// residuals |Z − Z_true| / σ have a mean square near 1 (93 complex values, χ²₁₈₆/93
    /// within 0.6–1.4; a 4-σ band for 186 degrees of freedom is about ±0.4).
    #[test]
    fn the_written_sites_read_back_with_the_stated_noise() {
        let truth = Truth::default();
        let dir = std::env::temp_dir().join(format!("hgx-example-mt-{}", std::process::id()));
        let files = write(&truth, &dir).unwrap();
        assert_eq!(files.len(), 3);
        let mut sum = 0.0;
        let mut n = 0;
        for (i, (role, rel)) in files.iter().enumerate() {
            assert_eq!(role, "mt_files");
            assert_eq!(rel, &PathBuf::from(format!("mt/site0{}.edi", i + 1)));
            let path = dir.join(rel);
            assert!(std::fs::metadata(&path).unwrap().len() < 300_000);
            let tf = read_transfer_function(&path).unwrap();
            assert_eq!(tf.acquired_date.as_deref(), Some(SURVEY_DATES[0]));
            let z = site_impedance(&truth, SITE_X_M[i], NOISE_FRACTION, 8000 + i as u64 + 1);
            let read = tf.impedance(Component::Xy).unwrap();
            let std = tf.impedance_std(Component::Xy).unwrap();
            for k in 0..31 {
                let rel = (read[k] - z.z_noisy[k]).norm() / z.z_noisy[k].norm();
                assert!(rel < 1e-10, "site {i} k {k}: {rel}");
                assert!((std[k] / (0.03 * z.z_true[k].norm()) - 1.0).abs() < 1e-10);
                sum += ((read[k] - z.z_true[k]).norm() / std[k]).powi(2);
                n += 1;
            }
        }
        let ms = sum / n as f64;
        assert!(
            (0.6..1.4).contains(&ms),
            "mean square normalised noise {ms}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

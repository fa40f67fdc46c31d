//! MT benchmarks on the fixed problem in `../shared/bench` (`mt_3layer.csv`,
//! `mt_3layer_truth.json`): the 1D forward model (3 and 40 layers, 30 periods), the analytic
//! Jacobian (60 data × 40 layers) and the whole Occam inversion with the benchmark's 40-layer
//! mesh — the phases timed for the reference tools in `anchors.json` (`bench_mt`).
//!
//! Run: `CARGO_TARGET_DIR=/work/target-bench cargo bench --bench mt`.

#[macro_use]
#[path = "../tests/support/field_data.rs"]
mod field_data;

use std::sync::OnceLock;

use hydrogeo_studio::methods::mt::{
    LayeredEarth, MtSounding, OccamOptions, invert_occam, mt1d_forward, mt1d_forward_with_jacobian,
    read_sounding_table,
};

fn main() {
    divan::main();
}

struct Problem {
    sounding: MtSounding,
    thickness_m: Vec<f64>,
}

fn problem() -> Option<&'static Problem> {
    static P: OnceLock<Option<Problem>> = OnceLock::new();
    P.get_or_init(|| {
        let csv = field_data::bench("mt_3layer.csv")?;
        let truth = field_data::bench("mt_3layer_truth.json")?;
        let truth: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(truth).ok()?).ok()?;
        let thickness_m = truth["inversion_model"]["thickness_m_top_down"]
            .as_array()?
            .iter()
            .filter_map(|v| v.as_f64())
            .collect();
        Some(Problem {
            sounding: read_sounding_table(&csv).ok()?,
            thickness_m,
        })
    })
    .as_ref()
}

/// The true 3-layer model (100/10/1000 Ω·m, 500 m and 1500 m) at the 30 periods.
#[divan::bench]
fn forward_3_layers(bencher: divan::Bencher) {
    let Some(p) = problem() else { return };
    let earth = LayeredEarth {
        resistivity_ohm_m: vec![100.0, 10.0, 1000.0],
        thickness_m: vec![500.0, 1500.0],
    };
    bencher.bench(|| mt1d_forward(divan::black_box(&p.sounding.period_s), &earth));
}

fn forty_layers(p: &Problem) -> LayeredEarth {
    LayeredEarth {
        resistivity_ohm_m: (0..40)
            .map(|i| 10f64.powf(1.0 + (i as f64 * 0.3).sin()))
            .collect(),
        thickness_m: p.thickness_m.clone(),
    }
}

/// A 40-layer model on the benchmark mesh at the 30 periods.
#[divan::bench]
fn forward_40_layers(bencher: divan::Bencher) {
    let Some(p) = problem() else { return };
    let earth = forty_layers(p);
    bencher.bench(|| mt1d_forward(divan::black_box(&p.sounding.period_s), &earth));
}

/// Response and the full Jacobian (30 ρa + 30 φ rows × 40 layers).
#[divan::bench]
fn jacobian_40_layers(bencher: divan::Bencher) {
    let Some(p) = problem() else { return };
    let earth = forty_layers(p);
    bencher.bench(|| mt1d_forward_with_jacobian(divan::black_box(&p.sounding.period_s), &earth));
}

/// The whole Occam inversion of the benchmark data (start 100 Ω·m, target RMS 1).
#[divan::bench(sample_count = 30)]
fn occam_inversion_40_layers(bencher: divan::Bencher) {
    let Some(p) = problem() else { return };
    let opts = OccamOptions {
        thickness_m: Some(p.thickness_m.clone()),
        start_resistivity_ohm_m: Some(100.0),
        ..OccamOptions::default()
    };
    bencher.bench(|| {
        let r = invert_occam(divan::black_box(&p.sounding), &opts, None, None)
            .expect("the benchmark problem inverts");
        assert!(r.chi2 <= 1.0);
        r
    });
}

//! GPR benchmarks on the real files in ../shared/data/gpr: reading, each processing step, and
//! the whole chain on the 1040-trace GSSI line (issue #9: "a 1040-trace GPR line processed
//! through every step in under 0.5 s"). Run with
//! `CARGO_TARGET_DIR=/work/target-bench cargo bench --bench gpr`.

#[macro_use]
#[path = "../tests/support/field_data.rs"]
mod field_data;

use std::path::PathBuf;

use divan::Bencher;
use hydrogeo_studio::methods::gpr::{
    self, GprLine, bandpass, filters, migration, process, sidefiles, velocity,
};

fn main() {
    divan::main();
}

fn dzt_path() -> PathBuf {
    field_data::data("gpr/gprpy/GSSI_FILE____032.DZT").expect("../shared/data/gpr is needed")
}

fn dzt() -> GprLine {
    gpr::dzt::read_dzt(&dzt_path()).expect("the DZT reads")
}

/// Every step: header-sample blanking, first-break time zero, dewow, band-pass, background
/// removal, t^1 gain, Stolt migration (v = c/√6 from the header), AGC, depth, topography.
fn all_steps(
    line: &GprLine,
) -> (
    process::ProcessingParams,
    Option<velocity::VelocitySource>,
    sidefiles::Topography,
) {
    let topo = field_data::data("gpr/gprpy/GSSI_FILE____032.txt").expect("topography");
    (
        process::ProcessingParams {
            tpow_power: process::Step::Set(1.0),
            background: process::Step::Set(filters::BackgroundWindow::WholeLine),
            ..Default::default()
        },
        line.header_velocity_source(),
        sidefiles::read_topography(&topo).expect("topography reads"),
    )
}

#[divan::bench(sample_count = 20)]
fn read_dzt_1040_traces() -> GprLine {
    gpr::dzt::read_dzt(&dzt_path()).expect("reads")
}

#[divan::bench(sample_count = 20)]
fn process_every_step_1040_traces(bencher: Bencher) {
    let line = dzt();
    let (params, v, topo) = all_steps(&line);
    bencher.bench(|| {
        process::process_line(&line, &params, v.as_ref(), Some(&topo)).expect("processes")
    });
}

#[divan::bench(sample_count = 20)]
fn read_and_process_every_step(bencher: Bencher) {
    let probe = dzt();
    let (params, v, topo) = all_steps(&probe);
    let path = dzt_path();
    bencher.bench(|| {
        let line = gpr::dzt::read_dzt(&path).expect("reads");
        process::process_line(&line, &params, v.as_ref(), Some(&topo)).expect("processes")
    });
}

#[divan::bench(sample_count = 20)]
fn dewow_10(bencher: Bencher) {
    let line = dzt();
    bencher.bench(|| filters::dewow(line.data.view(), 10).expect("dewow"));
}

#[divan::bench(sample_count = 20)]
fn background_running_20(bencher: Bencher) {
    let line = dzt();
    bencher.bench(|| {
        filters::remove_background(
            line.data.view(),
            filters::BackgroundWindow::Running { traces: 20 },
        )
        .expect("background")
    });
}

#[divan::bench(sample_count = 20)]
fn agc_25(bencher: Bencher) {
    let line = dzt();
    bencher.bench(|| filters::agc_gain(line.data.view(), 25).expect("agc"));
}

#[divan::bench(sample_count = 20)]
fn bandpass_100_800_mhz(bencher: Bencher) {
    let line = dzt();
    let p = bandpass::BandpassParams {
        low_mhz: 100.0,
        high_mhz: 800.0,
        order: 1,
    };
    bencher
        .bench(|| bandpass::bandpass(line.data.view(), line.sample_interval_ns, &p).expect("bp"));
}

#[divan::bench(sample_count = 20)]
fn stolt_migration_512x1040(bencher: Bencher) {
    let line = dzt();
    bencher.bench(|| {
        migration::stolt_migration(line.data.view(), line.sample_interval_ns, 0.02, 0.1224, 0.0)
            .expect("migrates")
    });
}

#[divan::bench(sample_count = 10)]
fn semblance_warr_164_traces(bencher: Bencher) {
    let path = field_data::data("gpr/gprpy/SnS_WARR_XLINE00.DT1").expect("WARR");
    let mut line = gpr::dt1::read_dt1(&path).expect("reads");
    line.data = filters::dewow(line.data.view(), 25).expect("dewow");
    let params = velocity::GatherAnalysisParams::default();
    bencher.bench(|| velocity::analyse_gather(&line, &params).expect("analyses"));
}

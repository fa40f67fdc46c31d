//! TDEM benchmarks on the fixed problem of ../shared/bench (tdem_3layer.csv): central loop
//! r = 20 m, 20 gates 1e-5…1e-2 s, step-off; 3-layer and 30-layer forward, the 30-layer
//! Jacobian, and the whole 30-layer smooth (Occam) inversion of the benchmark data with
//! SimPEG's layering (2·1.1^i m), start 100 Ω·m and the file's 5 % errors.

#[macro_use]
#[path = "../tests/support/field_data.rs"]
mod field_data;

use hydrogeo_studio::methods::tdem::forward::{
    FilterChoice, Forward, ForwardSettings, JacobianParams, LayeredEarth, Quantity, TemSystem,
};
use hydrogeo_studio::methods::tdem::invert::{Prepared, SmoothSettings, invert_smooth};
use hydrogeo_studio::methods::tdem::readers::{ReadOptions, read_table};
use std::sync::atomic::AtomicBool;

fn main() {
    divan::main();
}

fn times() -> Vec<f64> {
    (0..20)
        .map(|i| 1e-5 * 1000f64.powf(i as f64 / 19.0))
        .collect()
}

fn thicknesses() -> Vec<f64> {
    (0..29).map(|i| 2.0 * 1.1f64.powi(i)).collect()
}

fn thirty_layers() -> LayeredEarth {
    let rho: Vec<f64> = (0..30)
        .map(|i| 100.0 * (1.0 + 0.5 * (i as f64 * 0.4).sin()))
        .collect();
    LayeredEarth::new(rho, thicknesses()).unwrap()
}

#[divan::bench]
fn forward_3_layers(b: divan::Bencher) {
    let f = Forward::new(&TemSystem::central_loop(20.0), &times(), Quantity::DbDt).unwrap();
    let e = LayeredEarth::new(vec![100.0, 10.0, 500.0], vec![20.0, 40.0]).unwrap();
    b.bench(|| f.response(&e));
}

#[divan::bench]
fn forward_30_layers_key101(b: divan::Bencher) {
    let fs = ForwardSettings {
        filters: FilterChoice::Key101,
        ..ForwardSettings::default()
    };
    let f = Forward::with_settings(&TemSystem::central_loop(20.0), &times(), Quantity::DbDt, fs)
        .unwrap();
    let e = thirty_layers();
    b.bench(|| f.response(&e));
}

#[divan::bench]
fn forward_30_layers(b: divan::Bencher) {
    let f = Forward::new(&TemSystem::central_loop(20.0), &times(), Quantity::DbDt).unwrap();
    let e = thirty_layers();
    b.bench(|| f.response(&e));
}

#[divan::bench]
fn jacobian_30_layers(b: divan::Bencher) {
    let f = Forward::new(&TemSystem::central_loop(20.0), &times(), Quantity::DbDt).unwrap();
    let e = thirty_layers();
    b.bench(|| f.response_and_jacobian(&e, JacobianParams::LogRho));
}

#[divan::bench(args = ["key201", "key101"], sample_count = 5, sample_size = 1)]
fn invert_30_layers(b: divan::Bencher, filters: &str) {
    let Some(path) = field_data::bench("tdem_3layer.csv") else {
        return;
    };
    let file = read_table(&path, &ReadOptions::default()).unwrap();
    let sounding = &file.soundings[0];
    let fs = ForwardSettings {
        filters: if filters == "key101" {
            FilterChoice::Key101
        } else {
            FilterChoice::Key201
        },
        ..ForwardSettings::default()
    };
    let data =
        Prepared::with_settings(sounding, Some(&TemSystem::central_loop(20.0)), 0.0, fs).unwrap();
    let settings = SmoothSettings {
        thicknesses_m: Some(thicknesses()),
        start_rho_ohm_m: Some(100.0),
        ..SmoothSettings::default()
    };
    let cancel = AtomicBool::new(false);
    b.bench(|| invert_smooth(&data, &settings, None, &cancel).unwrap());
}

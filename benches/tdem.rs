//! TDEM benchmarks on the fixed problem of ../shared/bench (tdem_3layer.csv): central loop
//! r = 20 m, 20 gates 1e-5…1e-2 s, step-off; 3-layer and 30-layer forward, the 30-layer
//! Jacobian, and the whole 30-layer smooth inversion.

use hydrogeo_studio::methods::tdem::forward::{
    Forward, JacobianParams, LayeredEarth, Quantity, TemSystem,
};

fn main() {
    divan::main();
}

fn times() -> Vec<f64> {
    (0..20)
        .map(|i| 1e-5 * 1000f64.powf(i as f64 / 19.0))
        .collect()
}

fn thirty_layers() -> LayeredEarth {
    let thk: Vec<f64> = (0..29).map(|i| 2.0 * 1.1f64.powi(i)).collect();
    let rho: Vec<f64> = (0..30)
        .map(|i| 100.0 * (1.0 + 0.5 * (i as f64 * 0.4).sin()))
        .collect();
    LayeredEarth::new(rho, thk).unwrap()
}

#[divan::bench]
fn forward_3_layers(b: divan::Bencher) {
    let f = Forward::new(&TemSystem::central_loop(20.0), &times(), Quantity::DbDt).unwrap();
    let e = LayeredEarth::new(vec![100.0, 10.0, 500.0], vec![20.0, 40.0]).unwrap();
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

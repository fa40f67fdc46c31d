//! Seismic refraction benchmarks on the fixed problem `../shared/bench/tt_48.sgt`
//! (48 sensors, 12 shots, 564 picks; pyGIMLi's anchors in `../shared/bench/anchors.json`,
//! `bench_tt`: forward 224 ms, Jacobian 234 ms, whole inversion 3.35 s, best of 1 thread).
//!
//! Run: `CARGO_TARGET_DIR=/work/target-bench cargo bench --bench seismic`.

#[macro_use]
#[path = "../tests/support/field_data.rs"]
mod field_data;

use std::sync::atomic::AtomicBool;

use hydrogeo_studio::methods::seismic::TravelTimes;
use hydrogeo_studio::methods::seismic::forward::{RayGraph, forward};
use hydrogeo_studio::methods::seismic::grid::{Grid, GridOptions};
use hydrogeo_studio::methods::seismic::inversion::{
    InversionParams, StartModel, gradient_model, invert,
};
use hydrogeo_studio::methods::seismic::sgt::read_sgt;

fn main() {
    divan::main();
}

fn data() -> TravelTimes {
    let path = field_data::bench("tt_48.sgt")
        .expect("../shared/bench/tt_48.sgt is needed for this benchmark");
    read_sgt(&path).expect("tt_48.sgt reads")
}

/// pyGIMLi's inversion defaults for the benchmark (bench README (b)): secNodes 2, gradient
/// start 500 → 5000 m/s, λ 20, the file's errors.
fn params(secondary_nodes: usize) -> InversionParams {
    InversionParams {
        secondary_nodes,
        start: StartModel::Gradient {
            v_top_m_per_s: 500.0,
            v_bottom_m_per_s: 5000.0,
        },
        ..Default::default()
    }
}

/// The forward problem on the default grid with the gradient start model.
fn setup(secondary_nodes: usize) -> (TravelTimes, RayGraph, Vec<f64>) {
    let tt = data();
    let grid = Grid::for_survey(&tt, &GridOptions::default()).expect("grid");
    let graph = RayGraph::new(&grid, &tt.sensor_x_m, &tt.sensor_z_m, secondary_nodes);
    let slow: Vec<f64> = gradient_model(&grid, 500.0, 5000.0)
        .iter()
        .map(|v| 1.0 / v)
        .collect();
    (tt, graph, slow)
}

/// Travel times of all 564 picks (12 Dijkstra runs), no rays.
#[divan::bench(args = [2, 3])]
fn forward_times(bencher: divan::Bencher, secondary_nodes: usize) {
    let (tt, graph, slow) = setup(secondary_nodes);
    bencher.bench_local(|| forward(&graph, &slow, &tt, false));
}

/// Travel times and the ray-length Jacobian.
#[divan::bench(args = [2, 3])]
fn forward_and_jacobian(bencher: divan::Bencher, secondary_nodes: usize) {
    let (tt, graph, slow) = setup(secondary_nodes);
    bencher.bench_local(|| forward(&graph, &slow, &tt, true));
}

/// Building the grid and the shortest-path graph.
#[divan::bench]
fn mesh_and_graph(bencher: divan::Bencher) {
    let tt = data();
    bencher.bench_local(|| {
        let grid = Grid::for_survey(&tt, &GridOptions::default()).expect("grid");
        RayGraph::new(&grid, &tt.sensor_x_m, &tt.sensor_z_m, 2)
    });
}

/// The whole inversion (grid, start model, Gauss–Newton to χ² ≤ 1), as pyGIMLi's
/// `TravelTimeManager.invert()` is timed.
#[divan::bench(args = [2, 3], sample_count = 10)]
fn whole_inversion(bencher: divan::Bencher, secondary_nodes: usize) {
    let tt = data();
    let p = params(secondary_nodes);
    let cancel = AtomicBool::new(false);
    bencher.bench_local(|| invert(&tt, &p, &mut |_, _| {}, &cancel).expect("inversion"));
}

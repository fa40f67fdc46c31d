//! Gravity benchmark on ../shared/bench/grav_400.csv (400 stations, 20 384-cell mesh), set
//! beside SimPEG + choclo in ../shared/bench/anchors.json (`bench_grav`).
//!
//! `CARGO_TARGET_DIR=/work/target-bench cargo bench --bench gravmag`

#[macro_use]
#[path = "../tests/support/field_data.rs"]
mod field_data;

use hydrogeo_studio::methods::gravmag::inversion::{
    InversionData, InversionOptions, invert_gravmag,
};
use hydrogeo_studio::methods::gravmag::mesh::TensorMesh;
use hydrogeo_studio::methods::gravmag::sensitivity::{FieldComponent, build_sensitivity};
use hydrogeo_studio::methods::gravmag::stations::{ReadOptions, read_station_table};

fn main() {
    divan::main();
}

/// The benchmark mesh (grav_400_truth.json: 28 × 28 × 26, origin −360.862, −360.862, −300.431).
fn mesh() -> TensorMesh {
    let pads = [57.122, 43.94, 33.8, 26.0];
    let mut hx: Vec<f64> = pads.to_vec();
    hx.extend([20.0; 20]);
    hx.extend(pads.iter().rev());
    let mut hz = vec![28.561, 21.97, 16.9, 13.0];
    hz.extend([10.0; 22]);
    TensorMesh::from_widths(&hx, &hx, &hz, [-360.862, -360.862, -300.431]).unwrap()
}

/// Stations, values and errors of grav_400.csv.
fn data() -> (Vec<[f64; 3]>, Vec<f64>, Vec<f64>) {
    let path = field_data::bench("grav_400.csv").expect("../shared/bench/grav_400.csv");
    let t = read_station_table(&path, &ReadOptions::default()).unwrap();
    let err = t.error.clone().unwrap();
    (t.positions(0.0), t.value, err)
}

/// The same 400 stations moved off the grid by up to ±5 m (deterministic), so no two share a
/// coordinate: the sensitivity build cannot use its shared-difference table.
fn scattered() -> Vec<[f64; 3]> {
    let (st, _, _) = data();
    st.iter()
        .enumerate()
        .map(|(i, s)| {
            let a = ((i * 7919) % 1000) as f64 / 100.0 - 5.0;
            let b = ((i * 104_729) % 1000) as f64 / 100.0 - 5.0;
            [s[0] + a, s[1] + b, s[2] + 0.001 * i as f64]
        })
        .collect()
}

#[divan::bench(sample_count = 10)]
fn sensitivity_grav400(bencher: divan::Bencher) {
    let (m, (st, _, _)) = (mesh(), data());
    bencher.bench(|| build_sensitivity(&m, &st, &FieldComponent::Gz, None).unwrap());
}

#[divan::bench(sample_count = 10)]
fn sensitivity_grav400_scattered(bencher: divan::Bencher) {
    let (m, st) = (mesh(), scattered());
    bencher.bench(|| build_sensitivity(&m, &st, &FieldComponent::Gz, None).unwrap());
}

#[divan::bench(sample_count = 10)]
fn forward_grav400(bencher: divan::Bencher) {
    let (m, (st, _, _)) = (mesh(), data());
    let g = build_sensitivity(&m, &st, &FieldComponent::Gz, None).unwrap();
    let model: Vec<f64> = (0..m.n_cells()).map(|c| (c % 7) as f64).collect();
    bencher.bench(|| g.forward(&model));
}

#[divan::bench(sample_count = 10)]
fn whole_inversion_grav400(bencher: divan::Bencher) {
    let (m, (st, v, e)) = (mesh(), data());
    bencher.bench(|| {
        let d = InversionData {
            stations: &st,
            values: &v,
            errors: Some(&e),
            component: FieldComponent::Gz,
        };
        invert_gravmag(&d, &m, &InversionOptions::default(), None, None).unwrap()
    });
}

#[divan::bench(sample_count = 10)]
fn whole_inversion_grav400_scattered(bencher: divan::Bencher) {
    let (m, (_, v, e), st) = (mesh(), data(), scattered());
    bencher.bench(|| {
        let d = InversionData {
            stations: &st,
            values: &v,
            errors: Some(&e),
            component: FieldComponent::Gz,
        };
        invert_gravmag(&d, &m, &InversionOptions::default(), None, None).unwrap()
    });
}

/// One inversion per sample with its own phase timings printed (sensitivity, setup =
/// weighting + Kronecker transform + S, eigendecomposition, solves), to see where time goes.
#[divan::bench(sample_count = 3)]
fn inversion_phases(bencher: divan::Bencher) {
    let (m, (st, v, e)) = (mesh(), data());
    bencher.bench(|| {
        let d = InversionData {
            stations: &st,
            values: &v,
            errors: Some(&e),
            component: FieldComponent::Gz,
        };
        let inv = invert_gravmag(&d, &m, &InversionOptions::default(), None, None).unwrap();
        eprintln!("phases: {:?}", inv.timings);
        inv
    });
}

/// As [`inversion_phases`] for the scattered stations.
#[divan::bench(sample_count = 3)]
fn inversion_phases_scattered(bencher: divan::Bencher) {
    let (m, (_, v, e), st) = (mesh(), data(), scattered());
    bencher.bench(|| {
        let d = InversionData {
            stations: &st,
            values: &v,
            errors: Some(&e),
            component: FieldComponent::Gz,
        };
        let inv = invert_gravmag(&d, &m, &InversionOptions::default(), None, None).unwrap();
        eprintln!("phases: {:?}, solves {}", inv.timings, inv.iterations);
        inv
    });
}

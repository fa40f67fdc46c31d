//! ERT forward and Jacobian on the fixed benchmark problem ../shared/bench/ert_dd48.dat
//! (48 electrodes, 1035 dipole-dipole data). Parameter mesh ≈ pyGIMLi's (≈ 740 parameter
//! cells + prolonged background), forward mesh its H2 refinement; the true model of
//! ert_dd48_truth.json (100 Ω·m with a 10 Ω·m and a 1000 Ω·m block).
//! Run: `CARGO_TARGET_DIR=/work/target-bench cargo bench --bench ert`.

#[macro_use]
#[path = "../tests/support/field_data.rs"]
mod field_data;

use hydrogeo_studio::methods::ert::fem::{ForwardOperator, ForwardSettings, parameter_map};
use hydrogeo_studio::methods::ert::mesh::{LineMeshParams, line_mesh};
use hydrogeo_studio::methods::ert::readers::{Instrument, read_survey};
use std::sync::LazyLock;

struct Problem {
    op: ForwardOperator,
    rho: Vec<f64>,
}

/// The parameter-mesh settings used for the benchmark.
pub fn params() -> LineMeshParams {
    // pyGIMLi's world for this problem is x −50…97 m, z −50…0 m (ert_dd48_truth.json):
    // boundaries about one line length out.
    LineMeshParams {
        n_between: 1,
        side_extension: 1,
        first_layer_fraction: 0.5,
        depth_growth: 1.25,
        para_depth_m: 10.0,
        boundary_factor: 1.1,
        padding_growth: 3.0,
    }
}

static PROBLEM: LazyLock<Option<Problem>> = LazyLock::new(|| {
    let path = field_data::bench("ert_dd48.dat")?;
    let s = read_survey(&path, Instrument::Auto).expect("bench file reads");
    let el = s.line_positions();
    let coarse = line_mesh(&el, &[], &params(), &[]).expect("mesh");
    let (fine, parent) = coarse.refine_h2();
    let (map, np) = parameter_map(&coarse, &parent);
    let cent = coarse.centroids();
    // True model per parameter: centroid of the first coarse cell of each parameter.
    let mut rho = vec![100.0; np];
    for (c, p) in cent.iter().enumerate() {
        if coarse.cell_marker[c] == 1 {
            continue;
        }
        let j = map[parent.iter().position(|&q| q == c).expect("child")];
        rho[j] = if p[0] > 10.0 && p[0] < 18.0 && p[1] < -1.5 && p[1] > -5.5 {
            10.0
        } else if p[0] > 28.0 && p[0] < 37.0 && p[1] < -2.5 && p[1] > -8.0 {
            1000.0
        } else {
            100.0
        };
    }
    eprintln!(
        "ert_dd48: {} data, {} parameters, forward mesh {} nodes / {} cells",
        s.n_data(),
        np,
        fine.n_nodes(),
        fine.n_cells()
    );
    let op = ForwardOperator::new(fine, map, &el, &s.quadrupoles, &ForwardSettings::default())
        .expect("operator");
    eprintln!("wavenumbers: {}", op.wavenumbers().len());
    Some(Problem { op, rho })
});

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 10)]
fn forward_response(b: divan::Bencher) {
    let Some(p) = PROBLEM.as_ref() else { return };
    b.bench(|| p.op.response(divan::black_box(&p.rho)).expect("forward"));
}

#[divan::bench(sample_count = 5)]
fn jacobian(b: divan::Bencher) {
    let Some(p) = PROBLEM.as_ref() else { return };
    b.bench(|| p.op.jacobian(divan::black_box(&p.rho)).expect("jacobian"));
}

/// The whole inversion as pyGIMLi's anchor times it (`ERTManager.invert`, meshing included):
/// read nothing (the survey is in memory), build the parameter mesh, the forward operator,
/// and run Gauss–Newton with λ = 20 from the median ρa to χ² ≤ 1.
#[divan::bench(sample_count = 5)]
fn inversion(b: divan::Bencher) {
    use hydrogeo_studio::methods::ert::inversion::{InversionParams, invert_survey};
    let Some(path) = field_data::bench("ert_dd48.dat") else {
        return;
    };
    let s = read_survey(&path, Instrument::Auto).expect("bench file reads");
    let params = InversionParams {
        mesh: Some(params()),
        ..Default::default()
    };
    let flag = std::sync::atomic::AtomicBool::new(false);
    b.bench(|| {
        let mut quiet = |_: f64, _: &str| {};
        let r = invert_survey(&s, &params, &[], &mut quiet, &flag).expect("inversion");
        assert!(
            r.chi2 <= 1.1 && r.n_cells >= 850,
            "χ² {} with {} cells",
            r.chi2,
            r.n_cells
        );
        r.chi2
    });
}

/// One Gauss–Newton solve of the benchmark size: JᵀJ (1035 × 882) by GEMM, the smoothness
/// terms and the Cholesky solve.
#[divan::bench(sample_count = 5)]
fn normal_equations(b: divan::Bencher) {
    use hydrogeo_studio::methods::ert::inversion::{Regularisation, Solver, gn_step_public};
    let Some(p) = PROBLEM.as_ref() else { return };
    let (_, jac) = p.op.jacobian(&p.rho).expect("jacobian");
    let n = jac.ncols();
    let reg = Regularisation {
        constraints: (0..n - 1).map(|i| (i, i + 1, 1.0)).collect(),
        alpha_s: 0.0,
        m_ref: vec![0.0; n],
    };
    let rw = vec![0.1; jac.nrows()];
    let m = vec![0.0; n];
    b.bench(|| gn_step_public(&jac, &rw, &reg, 20.0, &m, Solver::Direct).expect("solve"));
}

//! 2.5D forward model against closed forms (acceptance items of issue #5; tolerances from
//! ../shared/reference/geophysics.md §5.1).

#[macro_use]
#[path = "support/field_data.rs"]
mod field_data;

use hydrogeo_studio::methods::ert::Quadrupole;
use hydrogeo_studio::methods::ert::fem::{Formulation, ForwardOperator, ForwardSettings};
use hydrogeo_studio::methods::ert::mesh::{Interface, LineMeshParams, line_mesh};
use hydrogeo_studio::methods::ert::sounding::LayeredEarth;

fn line(n: usize, dx: f64) -> Vec<[f64; 2]> {
    (0..n).map(|i| [i as f64 * dx, 0.0]).collect()
}

fn wenner_alpha(n: usize) -> Vec<Quadrupole> {
    let mut q = Vec::new();
    for a in 1..n {
        for i in 0..n {
            if i + 3 * a < n {
                q.push(Quadrupole::new(i, i + 3 * a, i + a, i + 2 * a));
            }
        }
    }
    q
}

fn dipole_dipole(n_el: usize, a_max: usize, n_max: usize) -> Vec<Quadrupole> {
    let mut q = Vec::new();
    for a in 1..=a_max {
        for n in 1..=n_max {
            for i in 0..n_el {
                let nn = i + 2 * a + n * a;
                if nn < n_el {
                    // B A M N: B = i, A = i + a, M = A + n a, N = M + a
                    q.push(Quadrupole::new(i + a, i, i + a + n * a, nn));
                }
            }
        }
    }
    q
}

fn half_space(quads: &[Quadrupole], formulation: Formulation) -> (Vec<f64>, ForwardOperator) {
    let el = line(48, 1.0);
    let mesh = line_mesh(&el, &[], &LineMeshParams::default(), &[]).unwrap();
    let n = mesh.n_cells();
    let op = ForwardOperator::new(
        mesh,
        (0..n).collect(),
        &el,
        quads,
        &ForwardSettings {
            formulation,
            ..Default::default()
        },
    )
    .unwrap();
    let rho = vec![100.0; n];
    (op.response(&rho).unwrap().rhoa_ohm_m, op)
}

#[test]
fn half_space_wenner_alpha_and_reciprocity() {
    // 48 electrodes at 1 m, all 360 Wenner-α quadrupoles, 100 Ω·m: every ρa within 0.5 % of
    // 100 (geophysics.md §5.1.1; pyGIMLi reaches 0.14 %), and |R(AB,MN) − R(MN,AB)|/|R| < 1e-3.
    let q = wenner_alpha(48);
    assert_eq!(q.len(), 360);
    let (rhoa, _op) = half_space(&q, Formulation::SingularityRemoval);
    let worst = rhoa
        .iter()
        .map(|r| (r / 100.0 - 1.0).abs())
        .fold(0.0, f64::max);
    println!("Wenner-α half-space: max |ρa/100 − 1| = {worst:.3e}");
    assert!(worst < 5e-3, "max relative error {worst}");
    // Reciprocity on a model with structure (a 10 Ω·m block in 100 Ω·m), where the secondary
    // field is not zero. This holds by the operator's reciprocal mean; the discretisation's own
    // defect is tested in `reciprocity_of_the_discretisation_itself`.
    let recip: Vec<Quadrupole> = q.iter().map(|q| q.reciprocal()).collect();
    let el = line(48, 1.0);
    let fine = LineMeshParams {
        n_between: 4,
        first_layer_fraction: 0.125,
        ..LineMeshParams::default()
    };
    let mesh = line_mesh(&el, &[], &fine, &[]).unwrap();
    let n = mesh.n_cells();
    let op = ForwardOperator::new(
        mesh.clone(),
        (0..n).collect(),
        &el,
        &q,
        &ForwardSettings::default(),
    )
    .unwrap();
    let rho: Vec<f64> = mesh
        .centroids()
        .iter()
        .map(|c| {
            if c[0] > 10.0 && c[0] < 18.0 && c[1] < -1.5 && c[1] > -5.5 {
                10.0
            } else {
                100.0
            }
        })
        .collect();
    let r = op.resistances(&rho).unwrap();
    let op2 = ForwardOperator::new(
        mesh,
        (0..n).collect(),
        &el,
        &recip,
        &ForwardSettings::default(),
    )
    .unwrap();
    let r2 = op2.resistances(&rho).unwrap();
    let worst = r
        .iter()
        .zip(&r2)
        .map(|(a, b)| ((a - b) / a).abs())
        .fold(0.0, f64::max);
    println!("reciprocity (block model): max |R − R'|/|R| = {worst:.3e}");
    assert!(worst < 1e-3, "{worst}");
}

#[test]
fn half_space_dipole_dipole() {
    // Dipole-dipole n = 1–6, a = 1–5 on the same line: every ρa within 0.5 % of 100.
    let q = dipole_dipole(48, 5, 6);
    let (rhoa, _) = half_space(&q, Formulation::SingularityRemoval);
    let worst = rhoa
        .iter()
        .map(|r| (r / 100.0 - 1.0).abs())
        .fold(0.0, f64::max);
    println!(
        "dipole-dipole half-space ({} data): max |ρa/100 − 1| = {worst:.3e}",
        q.len()
    );
    assert!(worst < 5e-3, "max relative error {worst}");
}

#[test]
fn half_space_total_field_is_close_but_coarser() {
    // Without singularity removal the same mesh is accurate only to a few per cent for the
    // Wenner-α data (measured and asserted here so that a regression shows).
    let q = wenner_alpha(48);
    let (rhoa, _) = half_space(&q, Formulation::TotalField);
    let worst = rhoa
        .iter()
        .map(|r| (r / 100.0 - 1.0).abs())
        .fold(0.0, f64::max);
    println!("Wenner-α total field: max |ρa/100 − 1| = {worst:.3e}");
    assert!(worst < 0.1, "max relative error {worst}");
}

#[test]
fn two_layers_schlumberger_match_the_1d_solution() {
    // 100 Ω·m over 10 Ω·m at 5 m, Schlumberger AB/2 = 1–100 m with MN = 0.5 m: every ρa within
    // 1 % of the 1D Hankel-filter solution (sounding.rs, itself checked against the image
    // series to 1e-5).
    let ab2 = [
        1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0, 50.0, 70.0, 100.0,
    ];
    let mut xs: Vec<f64> = vec![-0.25, 0.25];
    for a in ab2 {
        xs.push(-a);
        xs.push(a);
    }
    xs.sort_by(f64::total_cmp);
    let el: Vec<[f64; 2]> = xs.iter().map(|x| [*x, 0.0]).collect();
    let idx = |x: f64| xs.iter().position(|v| (*v - x).abs() < 1e-9).unwrap();
    let quads: Vec<Quadrupole> = ab2
        .iter()
        .map(|a| Quadrupole::new(idx(-a), idx(*a), idx(-0.25), idx(0.25)))
        .collect();
    let iface = Interface {
        points: vec![[-1e6, -5.0], [1e6, -5.0]],
    };
    let params = LineMeshParams {
        para_depth_m: 60.0,
        n_between: 4,
        ..LineMeshParams::default()
    };
    let mesh = line_mesh(&el, &[], &params, &[iface]).unwrap();
    let cent = mesh.centroids();
    let n = mesh.n_cells();
    let rho: Vec<f64> = cent
        .iter()
        .map(|c| if c[1] > -5.0 { 100.0 } else { 10.0 })
        .collect();
    let op = ForwardOperator::new(
        mesh,
        (0..n).collect(),
        &el,
        &quads,
        &ForwardSettings::default(),
    )
    .unwrap();
    let fe = op.response(&rho).unwrap().rhoa_ohm_m;
    let earth = LayeredEarth {
        rho_ohm_m: vec![100.0, 10.0],
        thickness_m: vec![5.0],
    };
    let mut worst: f64 = 0.0;
    for (a, f) in ab2.iter().zip(&fe) {
        let one_d = earth.rhoa_ohm_m(-a, *a, -0.25, 0.25);
        println!(
            "AB/2 = {a:5.1} m: FE {f:8.3}  1D {one_d:8.3}  ({:+.3} %)",
            100.0 * (f / one_d - 1.0)
        );
        worst = worst.max((f / one_d - 1.0).abs());
    }
    assert!(worst < 0.01, "max relative difference {worst}");
}

#[test]
fn jacobian_matches_central_finite_differences() {
    // 10 electrodes at 1 m, dipole-dipole a = 1–2, n = 1–3; a parameter mesh (para domain +
    // prolonged background) refined H2 for the forward mesh; a heterogeneous model (random-
    // looking log-normal resistivities). Every column J·e_j vs the central difference of our
    // own forward at ±1 % in log ρ_j: max over columns of ‖J_j − FD_j‖∞ / ‖FD_j‖∞ ≤ 1e-3
    // (geophysics.md §5.1.3). Also: the Jacobian must not be zero.
    use hydrogeo_studio::methods::ert::fem::parameter_map;
    let el = line(10, 1.0);
    let q = dipole_dipole(10, 2, 3);
    let params = LineMeshParams {
        n_between: 1,
        first_layer_fraction: 0.5,
        depth_growth: 1.4,
        para_depth_m: 3.0,
        boundary_factor: 4.0,
        ..LineMeshParams::default()
    };
    let coarse = line_mesh(&el, &[], &params, &[]).unwrap();
    let (fine, parent) = coarse.refine_h2();
    let (map, np) = parameter_map(&coarse, &parent);
    let op = ForwardOperator::new(fine, map, &el, &q, &ForwardSettings::default()).unwrap();
    let rho: Vec<f64> = (0..np)
        .map(|j| 100.0 * (0.7 * ((j * 7919 % 97) as f64 / 97.0 - 0.5)).exp())
        .collect();
    let (resp, jac) = op.jacobian(&rho).unwrap();
    assert!(
        jac.iter().any(|v| v.abs() > 1e-3),
        "the Jacobian is (nearly) zero"
    );
    let h: f64 = 0.01;
    let mut worst: f64 = 0.0;
    let mut checked = 0;
    for j in 0..np {
        let mut up = rho.clone();
        let mut dn = rho.clone();
        up[j] *= h.exp();
        dn[j] *= (-h).exp();
        let ru = op.response(&up).unwrap().rhoa_ohm_m;
        let rd = op.response(&dn).unwrap().rhoa_ohm_m;
        let fd: Vec<f64> = ru
            .iter()
            .zip(&rd)
            .map(|(a, b)| (a.abs().ln() - b.abs().ln()) / (2.0 * h))
            .collect();
        let norm = fd.iter().map(|v| v.abs()).fold(0.0, f64::max);
        if norm < 1e-6 {
            continue; // a parameter the data do not see
        }
        let err = (0..q.len())
            .map(|i| (jac[[i, j]] - fd[i]).abs())
            .fold(0.0, f64::max)
            / norm;
        worst = worst.max(err);
        checked += 1;
    }
    println!(
        "Jacobian vs FD: {checked} of {np} columns, max relative error {worst:.3e}; {} data",
        resp.rhoa_ohm_m.len()
    );
    assert!(checked > np / 2, "only {checked} columns checked");
    assert!(worst <= 1e-3, "max relative error {worst}");
}

#[test]
fn numerical_geometric_factors_on_an_inclined_line() {
    // A homogeneous half-space under a straight inclined surface is the flat half-space
    // rotated: k = 2π/(1/AM − 1/BM − 1/AN + 1/BN) with distances along the slope. With
    // topography the operator computes k numerically (k = 1/R for 1 Ω·m, including the
    // surface-flux term of the primary); topography points carry the slope out to the model
    // boundary. Asserted: within 0.5 % for Wenner-α on 24 electrodes along a 10 % slope.
    let el: Vec<[f64; 2]> = (0..24).map(|i| [i as f64, -0.1 * i as f64]).collect();
    let q = wenner_alpha(24);
    let params = LineMeshParams {
        n_between: 2,
        ..LineMeshParams::default()
    };
    let topo = [[-1e4, 1e3], [1e4, -1e3]];
    let mesh = line_mesh(&el, &topo, &params, &[]).unwrap();
    let n = mesh.n_cells();
    let op =
        ForwardOperator::new(mesh, (0..n).collect(), &el, &q, &ForwardSettings::default()).unwrap();
    let d = |a: usize, b: usize| (el[a][0] - el[b][0]).hypot(el[a][1] - el[b][1]);
    let mut worst: f64 = 0.0;
    for (qq, k) in q.iter().zip(op.geometric_factors()) {
        let (a, b, m, nn) = (qq.a.unwrap(), qq.b.unwrap(), qq.m.unwrap(), qq.n.unwrap());
        let exact = 2.0 * std::f64::consts::PI
            / (1.0 / d(a, m) - 1.0 / d(b, m) - 1.0 / d(a, nn) + 1.0 / d(b, nn));
        worst = worst.max((k / exact - 1.0).abs());
    }
    println!("inclined line: max |k_num/k − 1| = {worst:.3e}");
    assert!(worst < 5e-3, "{worst}");
}

#[test]
fn real_survey_with_topography_runs_end_to_end() {
    // fielddataline2.dat: 72 electrodes over 8.7 m of relief, 936 data. The operator builds on
    // its topography (numerical k), a homogeneous model returns its own resistivity for every
    // datum (k is 1/R of the same mesh, so to rounding), and the Jacobian is finite, non-zero
    // and sums per datum to ≈ 1 (∂ log ρa/∂ log ρ over all parameters = 1 for a homogeneous
    // earth: ρa scales with ρ), to 1e-6.
    use hydrogeo_studio::methods::ert::readers::{Instrument, read_survey};
    let p = require_data!("ert/phgx/Bert/fielddataline2.dat");
    let s = read_survey(&p, Instrument::Auto).unwrap();
    let params = LineMeshParams {
        n_between: 1,
        boundary_factor: 2.0,
        padding_growth: 2.5,
        depth_growth: 1.3,
        first_layer_fraction: 0.5,
        ..LineMeshParams::default()
    };
    let (op, coarse) =
        ForwardOperator::for_survey(&s, &params, &ForwardSettings::default()).unwrap();
    assert!(coarse.n_cells() > 0);
    let rho = vec![50.0; op.n_params()];
    let (resp, jac) = op.jacobian(&rho).unwrap();
    let worst = resp
        .rhoa_ohm_m
        .iter()
        .map(|r| (r / 50.0 - 1.0).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-9, "{worst}");
    let mut worst_sum: f64 = 0.0;
    for row in jac.rows() {
        assert!(row.iter().all(|v| v.is_finite()));
        worst_sum = worst_sum.max((row.sum() - 1.0).abs());
    }
    println!(
        "fielddataline2: {} data, {} parameters, max |Σ_j J_ij − 1| = {worst_sum:.2e}",
        s.n_data(),
        op.n_params()
    );
    assert!(worst_sum < 1e-6, "{worst_sum}");
}

#[test]
fn reciprocity_of_the_discretisation_itself() {
    // The operator reports the mean of the two reciprocal evaluations (fem.rs), so the
    // |R(AB,MN) − R(MN,AB)| test above cannot see the discretisation. Here the one-sided
    // potentials are checked directly, on the 10 Ω·m block in 100 Ω·m: the total field
    // (A_k symmetric) must be reciprocal to rounding, and the singularity-removed field's
    // defect is a discretisation error that must fall under uniform refinement (h → h/2 → h/4)
    // at second order (measured 3.0e-3, 8.1e-4, 1.9e-4: ×3.7, ×4.2; asserted ≥ ×3 per
    // halving); a bug in the source term would not converge. `ForwardOperator::for_survey`
    // solves on the H2-refined mesh (h/2), where the one-sided defect alone is < 1e-3, the
    // acceptance bound of issue #5, before any averaging.
    let el = line(24, 1.0);
    let q = wenner_alpha(24);
    let mesh0 = line_mesh(&el, &[], &LineMeshParams::default(), &[]).unwrap();
    let block = |c: &[f64; 2]| {
        if c[0] > 6.0 && c[0] < 14.0 && c[1] < -1.5 && c[1] > -5.5 {
            10.0
        } else {
            100.0
        }
    };
    let defect = |mesh: hydrogeo_studio::methods::ert::mesh::Mesh, f: Formulation| {
        let rho: Vec<f64> = mesh.centroids().iter().map(block).collect();
        let n = mesh.n_cells();
        let op = ForwardOperator::new(
            mesh,
            (0..n).collect(),
            &el,
            &q,
            &ForwardSettings {
                formulation: f,
                ..Default::default()
            },
        )
        .unwrap();
        op.reciprocity_defect(&rho).unwrap()
    };
    let tf = defect(mesh0.clone(), Formulation::TotalField);
    println!("total field: reciprocity defect {tf:.3e}");
    assert!(tf < 1e-10, "total-field defect {tf}");
    let mesh1 = mesh0.refine_h2().0;
    let mesh2 = mesh1.refine_h2().0;
    let d: Vec<f64> = [mesh0, mesh1, mesh2]
        .into_iter()
        .map(|m| defect(m, Formulation::SingularityRemoval))
        .collect();
    println!(
        "singularity removal: reciprocity defect at h, h/2, h/4 = {:.3e} {:.3e} {:.3e}",
        d[0], d[1], d[2]
    );
    assert!(d[0] < 1e-2, "defect at h {}", d[0]);
    assert!(d[1] < 1e-3, "defect at h/2 {}", d[1]);
    assert!(
        d[1] < d[0] / 3.0 && d[2] < d[1] / 3.0,
        "not second order: {d:?}"
    );
}

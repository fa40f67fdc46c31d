//! The 2.5D finite-element forward operator and its adjoint Jacobian.
//!
//! **Equation.** With the Fourier-cosine transform along strike, the potential Ũ(x, k, z) of a
//! unit current source at x_s solves (Dey & Morrison 1979, eq. 4)
//!
//!   −∇·(σ∇Ũ) + k²σŨ = ½ δ(x − x_s),
//!
//! with no flux through the ground surface and the mixed condition σ∂Ũ/∂n + σαŨ = 0,
//! α = k K1(kr)/K0(kr) cos θ, on the sides and bottom (Dey & Morrison 1979, eq. 12; r and θ
//! measured from the centre of the electrode spread). Linear triangles give
//! A_k(σ) = K(σ) + k² M(σ) + R_k(σ) (stiffness, mass, Robin boundary mass), factorised once
//! per wavenumber by sparse Cholesky (faer, AMD ordering) and reused for every source; the
//! wavenumbers and weights are those of [`super::quadrature::Wavenumbers`], u = Σ w_k Ũ_k.
//!
//! **Singularity removal** (default; Lowry, Allen & Shive 1989; Rücker, Günther & Spitzer
//! 2006, §2.2). With the half-space primary p_s = K0(k|x − x_s|)/(2π) (σ = 1), the weak form
//! gives the source term as g_s = A_k(1) p_s − ∫_Γsurface ∂_n p_s φ + (½ − θ_s/2π) e_s
//! (θ_s the interior angle of the ground at the electrode; the surface term vanishes on flat
//! ground). Solving A_k(σ) Ũ = g_s yields Ũ = p_s/σ exactly for a homogeneous half-space of
//! any σ, and otherwise the primary plus the secondary field of the anomalies. The analytic
//! inverse transform of the primary replaces its quadrature:
//! u_s(x_m) = Σ_k w_k Ũ_k(x_m) + [1/(2πr) − Σ_k w_k K0(k r)/(2π)] / σ0_s, with σ0_s the
//! angle-weighted conductivity around the source electrode. These potentials are not exactly
//! reciprocal on a finite mesh (the receiver sees the discrete point-source Green's function):
//! for a 10 Ω·m block 1.5 m under a 1 m electrode line the defect |u_s(x_m) − u_m(x_s)|/|u|
//! is 3.0e-3 on the parameter mesh and falls at second order under refinement (8.1e-4 on
//! the H2-refined mesh [`ForwardOperator::for_survey`] solves on, 1.9e-4 at h/4;
//! [`ForwardOperator::reciprocity_defect`], tested). The operator returns the mean of the two
//! reciprocal evaluations, V(s, m) = ½[u_s(x_m) + u_m(x_s)], which is reciprocal exactly and
//! as accurate as either. (A Galerkin-symmetric alternative, V = 2 g_mᵀ A⁻¹ g_s plus a
//! primary correction, was tried: reciprocal without the mean, but the receiver's smoothed
//! source g_m picks up the primary's discretisation residual far from the electrode, and the
//! two-layer Schlumberger sounding was 5 % off at AB/2 = 100 m against 0.8 % here.)
//!
//! **Jacobian** (adjoint / reciprocity; e.g. Kemna 2000, §3.2; Günther et al. 2006, eq. 9).
//! With λ^m = A_k⁻¹ e_m (the potential of a unit source at the receiver node),
//! ∂Ũ_k^s(x_m)/∂σ_c = −λ^mᵀ (∂A_k/∂σ_c) Ũ_k^s, where ∂A_k/∂σ_c is the element matrix of
//! cell c (stiffness + k²·mass + its Robin edge). Summed over wavenumbers and over the
//! cells of parameter j, with the derivative of the primary-correction term through σ0,
//! this gives ∂R/∂σ_j exactly for the discrete forward model (averaged like the potentials), and
//! ∂ log ρa/∂ log ρ_j = −(σ_j/R) ∂R/∂σ_j.

use super::bessel::{k0, k1, k1_over_k0};
use super::mesh::{BoundaryKind, Mesh};
use super::quadrature::Wavenumbers;
use super::survey::Quadrupole;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::LltRegularization;
use faer::sparse::linalg::cholesky::{
    CholeskySymbolicParams, SymbolicCholesky, SymbolicCholeskyRaw, SymmetricOrdering,
    factorize_symbolic_cholesky,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Par, Side};
use ndarray::Array2;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// Why the forward model could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ForwardError {
    /// The model vector has the wrong length or a non-positive/non-finite resistivity.
    #[error("bad model: {0}")]
    BadModel(String),
    /// An electrode is not a node of the mesh surface.
    #[error("electrode {0} at ({1}, {2}) is not a mesh node")]
    ElectrodeNotOnMesh(usize, f64, f64),
    /// The system matrix was not positive definite (degenerate mesh).
    #[error("system matrix not positive definite at wavenumber {0}")]
    NotPositiveDefinite(f64),
    /// The sparse factorisation failed.
    #[error("sparse factorisation failed: {0}")]
    Factorisation(String),
    /// The survey uses no electrode pair the operator can model.
    #[error("{0}")]
    Survey(String),
}

/// How the source singularity is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Formulation {
    /// Analytic half-space primary + FE secondary (exact for a homogeneous half-space).
    #[default]
    SingularityRemoval,
    /// Point sources on the mesh (accuracy depends on refinement at the electrodes).
    TotalField,
}

/// Predicted data of one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// Transfer resistances for 1 A, Ω.
    pub r_ohm: Vec<f64>,
    /// Apparent resistivities k·R, Ω·m.
    pub rhoa_ohm_m: Vec<f64>,
}

/// The forward operator for one mesh, one electrode layout and one set of quadrupoles.
pub struct ForwardOperator {
    mesh: Mesh,
    cell_param: Vec<usize>,
    param_cells: Vec<Vec<usize>>,
    n_params: usize,
    /// Mesh node of each used electrode (compact numbering).
    el_nodes: Vec<usize>,
    el_pos: Vec<[f64; 2]>,
    /// Per quadrupole: compact electrode indices (None = remote).
    quads: Vec<[Option<usize>; 4]>,
    k_geom: Vec<f64>,
    wn: Wavenumbers,
    formulation: Formulation,
    area: Vec<f64>,
    grad: Vec<[[f64; 2]; 3]>,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    elem_pos: Vec<[usize; 6]>,
    /// Robin edges: (cell, nodes, length, positions (pp, qq, pq), α per wavenumber).
    robin: Vec<(usize, [usize; 2], f64, [usize; 3], Vec<f64>)>,
    robin_of_cell: Vec<Vec<usize>>,
    symbolic: SymbolicCholesky<usize>,
    /// The fill-reducing permutation: perm_fwd[i] = original node of factor row i; perm_inv its inverse.
    perm_fwd: Option<Vec<usize>>,
    perm_inv: Option<Vec<usize>>,
    /// Source terms per wavenumber, rows in the factor's order: rhs[k][prow(node) * n_el + s].
    rhs: Vec<Vec<f64>>,
    /// Primary correction 1/(2πr) − Σ_k w_k K0(k r)/(2π) per (source, receiver) (SR only).
    eq_corr: Vec<f64>,
    /// Cells around each electrode with their angle weights (sum 1).
    src_cells: Vec<Vec<(usize, f64)>>,
    /// Σ of those weights per parameter: (electrode, parameter, weight).
    src_param_weights: Vec<Vec<(usize, f64)>>,
}

/// Settings of [`ForwardOperator::new`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ForwardSettings {
    /// Singularity treatment.
    pub formulation: Formulation,
    /// Wavenumbers; `None` = [`Wavenumbers::for_distances`] of the electrode distances.
    pub wavenumbers: Option<Wavenumbers>,
    /// Geometric factors to use for ρa; `None` = analytic on flat ground, numerical
    /// (k = 1/R of a 1 Ω·m model on this mesh) with topography.
    pub geometric_factors: Option<Vec<f64>>,
}

const PAIRS: [(usize, usize); 6] = [(0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)];

impl ForwardOperator {
    /// Build the operator: `mesh` (with electrodes as surface nodes), `cell_param` (the
    /// parameter of every cell; several cells may share one), electrode positions in the
    /// section plane (x, z; the mesh nodes nearest to them are used and must coincide),
    /// and the quadrupoles (indices into `electrodes_xz`).
    pub fn new(
        mesh: Mesh,
        cell_param: Vec<usize>,
        electrodes_xz: &[[f64; 2]],
        quadrupoles: &[Quadrupole],
        settings: &ForwardSettings,
    ) -> Result<Self, ForwardError> {
        let n_nodes = mesh.n_nodes();
        if cell_param.len() != mesh.n_cells() {
            return Err(ForwardError::BadModel(format!(
                "cell_param has {} entries for {} cells",
                cell_param.len(),
                mesh.n_cells()
            )));
        }
        let n_params = cell_param.iter().max().map(|m| m + 1).unwrap_or(0);
        let mut param_cells = vec![Vec::new(); n_params];
        for (c, &p) in cell_param.iter().enumerate() {
            param_cells[p].push(c);
        }
        // Used electrodes, compact numbering.
        let mut used: Vec<usize> = quadrupoles
            .iter()
            .flat_map(|q| [q.a, q.b, q.m, q.n])
            .flatten()
            .collect();
        used.sort_unstable();
        used.dedup();
        if used.is_empty() {
            return Err(ForwardError::Survey(
                "no quadrupole with an electrode".into(),
            ));
        }
        let mut compact = vec![usize::MAX; electrodes_xz.len()];
        let mut el_nodes = Vec::new();
        let mut el_pos = Vec::new();
        for &e in &used {
            let p = *electrodes_xz.get(e).ok_or_else(|| {
                ForwardError::Survey(format!("quadrupole refers to electrode {}", e + 1))
            })?;
            let (node, d) = mesh
                .nodes
                .iter()
                .enumerate()
                .map(|(i, q)| (i, (q[0] - p[0]).hypot(q[1] - p[1])))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap_or((0, f64::INFINITY));
            if d > 1e-6 * (1.0 + p[0].abs()) {
                return Err(ForwardError::ElectrodeNotOnMesh(e + 1, p[0], p[1]));
            }
            compact[e] = el_nodes.len();
            el_nodes.push(node);
            el_pos.push(mesh.nodes[node]);
        }
        let quads: Vec<[Option<usize>; 4]> = quadrupoles
            .iter()
            .map(|q| [q.a, q.b, q.m, q.n].map(|e| e.map(|i| compact[i])))
            .collect();
        let n_el = el_nodes.len();
        // Geometry.
        let mut area = Vec::with_capacity(mesh.n_cells());
        let mut grad = Vec::with_capacity(mesh.n_cells());
        for (c, t) in mesh.cells.iter().enumerate() {
            let a = mesh.signed_area(c);
            if a <= 0.0 {
                return Err(ForwardError::BadModel(format!(
                    "cell {c} has non-positive area"
                )));
            }
            let p = t.map(|i| mesh.nodes[i]);
            let mut g = [[0.0; 2]; 3];
            for i in 0..3 {
                let (j, k) = ((i + 1) % 3, (i + 2) % 3);
                // ∇φ_i = (y_j − y_k, x_k − x_j) / (2A)
                g[i] = [
                    (p[j][1] - p[k][1]) / (2.0 * a),
                    (p[k][0] - p[j][0]) / (2.0 * a),
                ];
            }
            area.push(a);
            grad.push(g);
        }
        // Sparsity pattern (lower triangle, CSC).
        let mut entries: Vec<(usize, usize)> = Vec::with_capacity(6 * mesh.n_cells());
        for t in &mesh.cells {
            for (a, b) in PAIRS {
                let (i, j) = (t[a], t[b]);
                entries.push((i.min(j), i.max(j))); // (col, row) with row ≥ col
            }
        }
        entries.sort_unstable();
        entries.dedup();
        let mut col_ptr = vec![0usize; n_nodes + 1];
        let mut row_idx = Vec::with_capacity(entries.len());
        for &(c, r) in &entries {
            col_ptr[c + 1] += 1;
            row_idx.push(r);
        }
        for i in 0..n_nodes {
            col_ptr[i + 1] += col_ptr[i];
        }
        let pos_of = |i: usize, j: usize| -> usize {
            let (c, r) = (i.min(j), i.max(j));
            let s = &row_idx[col_ptr[c]..col_ptr[c + 1]];
            col_ptr[c] + s.binary_search(&r).unwrap_or(0)
        };
        let elem_pos: Vec<[usize; 6]> = mesh
            .cells
            .iter()
            .map(|t| PAIRS.map(|(a, b)| pos_of(t[a], t[b])))
            .collect();
        let r_all: Vec<f64> = (0..n_el)
            .flat_map(|s| (0..n_el).map(move |m| (s, m)))
            .filter(|(s, m)| s != m)
            .map(|(s, m)| (el_pos[s][0] - el_pos[m][0]).hypot(el_pos[s][1] - el_pos[m][1]))
            .collect();
        let r_min = r_all.iter().copied().fold(f64::INFINITY, f64::min);
        let r_max = r_all.iter().copied().fold(0.0, f64::max);
        let wn = match &settings.wavenumbers {
            Some(w) => w.clone(),
            None if r_min.is_finite() && r_min > 0.0 => Wavenumbers::for_distances(r_min, r_max),
            None => Wavenumbers::for_distances(1.0, 1.0),
        };
        // Robin edges with α per wavenumber, measured from the spread centre.
        let centre = [
            el_pos.iter().map(|p| p[0]).sum::<f64>() / n_el as f64,
            el_pos
                .iter()
                .map(|p| p[1])
                .fold(f64::NEG_INFINITY, f64::max),
        ];
        let mut robin = Vec::new();
        let mut robin_of_cell = vec![Vec::new(); mesh.n_cells()];
        for e in mesh
            .boundary
            .iter()
            .filter(|e| e.kind == BoundaryKind::Subsurface)
        {
            let [p, q] = e.nodes;
            let (a, b) = (mesh.nodes[p], mesh.nodes[q]);
            let len = (a[0] - b[0]).hypot(a[1] - b[1]);
            let n = outward_normal(&mesh, e.cell, p, q);
            let mid = [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0];
            let d = [mid[0] - centre[0], mid[1] - centre[1]];
            let r = d[0].hypot(d[1]);
            let cos = ((d[0] * n[0] + d[1] * n[1]) / r).max(0.0);
            let alpha: Vec<f64> = wn
                .k_per_m
                .iter()
                .map(|&k| k * k1_over_k0(k * r) * cos)
                .collect();
            robin_of_cell[e.cell].push(robin.len());
            robin.push((
                e.cell,
                [p, q],
                len,
                [pos_of(p, p), pos_of(q, q), pos_of(p, q)],
                alpha,
            ));
        }
        let symb = SymbolicSparseColMatRef::new_checked(n_nodes, n_nodes, &col_ptr, None, &row_idx);
        // Simplicial factor (CSC L): the many right-hand sides are solved by our own row-wise
        // substitution (`llt_solve_rows`), which streams n_el contiguous values per node.
        let symbolic = factorize_symbolic_cholesky(
            symb,
            Side::Lower,
            SymmetricOrdering::Amd,
            CholeskySymbolicParams {
                supernodal_flop_ratio_threshold:
                    faer::sparse::linalg::SupernodalThreshold::FORCE_SIMPLICIAL,
                ..Default::default()
            },
        )
        .map_err(|e| ForwardError::Factorisation(format!("{e:?}")))?;
        // Cells around each electrode and their interior angles.
        let mut src_cells = vec![Vec::new(); n_el];
        let node_el: std::collections::HashMap<usize, usize> =
            el_nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        for (c, t) in mesh.cells.iter().enumerate() {
            for (k, &nd) in t.iter().enumerate() {
                if let Some(&s) = node_el.get(&nd) {
                    let p = mesh.nodes[nd];
                    let (u, v) = (mesh.nodes[t[(k + 1) % 3]], mesh.nodes[t[(k + 2) % 3]]);
                    let (a, b) = ([u[0] - p[0], u[1] - p[1]], [v[0] - p[0], v[1] - p[1]]);
                    let ang = (a[0] * b[1] - a[1] * b[0])
                        .abs()
                        .atan2(a[0] * b[0] + a[1] * b[1]);
                    src_cells[s].push((c, ang));
                }
            }
        }
        let theta: Vec<f64> = src_cells
            .iter()
            .map(|v| v.iter().map(|x| x.1).sum())
            .collect();
        for (s, v) in src_cells.iter_mut().enumerate() {
            for x in v.iter_mut() {
                x.1 /= theta[s];
            }
        }
        let src_param_weights: Vec<Vec<(usize, f64)>> = src_cells
            .iter()
            .map(|v| {
                let mut m: std::collections::BTreeMap<usize, f64> =
                    std::collections::BTreeMap::new();
                for (c, w) in v {
                    *m.entry(cell_param[*c]).or_default() += w;
                }
                m.into_iter().collect()
            })
            .collect();
        let mut op = ForwardOperator {
            mesh,
            cell_param,
            param_cells,
            n_params,
            el_nodes,
            el_pos,
            quads,
            k_geom: Vec::new(),
            wn,
            formulation: settings.formulation,
            area,
            grad,
            col_ptr,
            row_idx,
            elem_pos,
            robin,
            robin_of_cell,
            perm_fwd: symbolic.perm().map(|p| p.arrays().0.to_vec()),
            perm_inv: symbolic.perm().map(|p| p.arrays().1.to_vec()),
            symbolic,
            rhs: Vec::new(),
            eq_corr: Vec::new(),
            src_cells,
            src_param_weights,
        };
        op.build_sources(&theta);
        // Keep the source terms in the factor's row order (solves then need no gather).
        if let Some(fwd) = op.perm_fwd.clone() {
            let ne = op.el_nodes.len();
            for g in op.rhs.iter_mut() {
                let mut pg = Vec::with_capacity(g.len());
                for &src in &fwd {
                    pg.extend_from_slice(&g[src * ne..(src + 1) * ne]);
                }
                *g = pg;
            }
        }
        op.k_geom = match &settings.geometric_factors {
            Some(k) if k.len() == quadrupoles.len() => k.clone(),
            Some(k) => {
                return Err(ForwardError::Survey(format!(
                    "{} geometric factors for {} quadrupoles",
                    k.len(),
                    quadrupoles.len()
                )));
            }
            None => {
                let flat = op
                    .el_pos
                    .iter()
                    .all(|p| (p[1] - op.el_pos[0][1]).abs() < 1e-9);
                if flat {
                    op.quads
                        .iter()
                        .map(|q| {
                            let x = |e: Option<usize>| {
                                e.map(|i| op.el_pos[i][0]).unwrap_or(f64::INFINITY)
                            };
                            super::qc::geometric_factor_flat(x(q[0]), x(q[1]), x(q[2]), x(q[3]))
                        })
                        .collect()
                } else {
                    let r = op.resistances(&vec![1.0; op.n_params])?;
                    r.iter().map(|r| 1.0 / r).collect()
                }
            }
        };
        Ok(op)
    }

    /// The operator for a survey: a parameter mesh of its line (electrodes, topography,
    /// `params`), the forward mesh refined H2 from it, parameters = the parameter-domain
    /// cells (background prolonged, [`parameter_map`]). Returns the operator and the
    /// parameter mesh (parameter j = the j-th parameter-domain cell, in cell order).
    pub fn for_survey(
        survey: &super::survey::Survey,
        params: &super::mesh::LineMeshParams,
        settings: &ForwardSettings,
    ) -> Result<(Self, Mesh), ForwardError> {
        let el = survey.line_positions();
        let coarse = super::mesh::line_mesh(&el, &survey.topography, params, &[])
            .map_err(|e| ForwardError::Survey(e.to_string()))?;
        let (fine, parent) = coarse.refine_h2();
        let (map, _) = parameter_map(&coarse, &parent);
        let op = ForwardOperator::new(fine, map, &el, &survey.quadrupoles, settings)?;
        Ok((op, coarse))
    }

    /// The mesh.
    pub fn mesh(&self) -> &Mesh {
        &self.mesh
    }

    /// Number of data.
    pub fn n_data(&self) -> usize {
        self.quads.len()
    }

    /// Number of model parameters.
    pub fn n_params(&self) -> usize {
        self.n_params
    }

    /// The parameter of every cell.
    pub fn cell_param(&self) -> &[usize] {
        &self.cell_param
    }

    /// The wavenumbers used.
    pub fn wavenumbers(&self) -> &Wavenumbers {
        &self.wn
    }

    /// The geometric factors used for ρa, m.
    pub fn geometric_factors(&self) -> &[f64] {
        &self.k_geom
    }

    fn build_sources(&mut self, theta: &[f64]) {
        let n = self.mesh.n_nodes();
        let n_el = self.el_nodes.len();
        let nk = self.wn.len();
        // Surface edges and their outward normals (for the topography flux term).
        let surface: Vec<([usize; 2], [f64; 2], f64)> = self
            .mesh
            .boundary
            .iter()
            .filter(|e| e.kind == BoundaryKind::Surface)
            .map(|e| {
                let [p, q] = e.nodes;
                let (a, b) = (self.mesh.nodes[p], self.mesh.nodes[q]);
                (
                    e.nodes,
                    outward_normal(&self.mesh, e.cell, p, q),
                    (a[0] - b[0]).hypot(a[1] - b[1]),
                )
            })
            .collect();
        let unit_vals: Vec<Vec<f64>> = (0..nk)
            .map(|ki| self.assemble(&vec![1.0; self.mesh.n_cells()], ki))
            .collect();
        let rhs: Vec<Vec<f64>> = (0..nk)
            .into_par_iter()
            .map(|ki| {
                let k = self.wn.k_per_m[ki];
                let mut g = vec![0.0; n * n_el];
                if self.formulation == Formulation::TotalField {
                    for s in 0..n_el {
                        g[self.el_nodes[s] * n_el + s] = 0.5;
                    }
                    return g;
                }
                for s in 0..n_el {
                    let sn = self.el_nodes[s];
                    let xs = self.el_pos[s];
                    // Primary at the nodes; at the source node, K0 at a quarter of the
                    // shortest adjacent edge (a convention: it does not enter when the cells
                    // around the electrode share one conductivity).
                    let h = self.src_cells[s]
                        .iter()
                        .flat_map(|(c, _)| self.mesh.cells[*c].iter())
                        .filter(|&&v| v != sn)
                        .map(|&v| {
                            let q = self.mesh.nodes[v];
                            (q[0] - xs[0]).hypot(q[1] - xs[1])
                        })
                        .fold(f64::INFINITY, f64::min);
                    let p: Vec<f64> = (0..n)
                        .map(|i| {
                            let q = self.mesh.nodes[i];
                            let r = if i == sn {
                                0.25 * h
                            } else {
                                (q[0] - xs[0]).hypot(q[1] - xs[1])
                            };
                            k0(k * r) / (2.0 * PI)
                        })
                        .collect();
                    let ap = sym_matvec(&self.col_ptr, &self.row_idx, &unit_vals[ki], &p);
                    for i in 0..n {
                        g[i * n_el + s] = ap[i];
                    }
                    // Surface flux of the primary (zero on flat ground).
                    for (nodes, nrm, len) in &surface {
                        if nodes.contains(&sn) {
                            continue;
                        }
                        let (a, b) = (self.mesh.nodes[nodes[0]], self.mesh.nodes[nodes[1]]);
                        for (t, wq) in [
                            (0.5 - 0.5 / 3f64.sqrt(), 0.5),
                            (0.5 + 0.5 / 3f64.sqrt(), 0.5),
                        ] {
                            let x = [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])];
                            let d = [x[0] - xs[0], x[1] - xs[1]];
                            let r = d[0].hypot(d[1]);
                            let dn =
                                -k * k1(k * r) / (2.0 * PI) * (d[0] * nrm[0] + d[1] * nrm[1]) / r;
                            g[nodes[0] * n_el + s] -= wq * len * dn * (1.0 - t);
                            g[nodes[1] * n_el + s] -= wq * len * dn * t;
                        }
                    }
                    g[sn * n_el + s] += 0.5 - theta[s] / (2.0 * PI);
                }
                g
            })
            .collect();
        self.rhs = rhs;
        self.eq_corr = vec![0.0; n_el * n_el];
        if self.formulation == Formulation::SingularityRemoval {
            for s in 0..n_el {
                for m in 0..n_el {
                    if s == m {
                        continue;
                    }
                    let (a, b) = (self.el_pos[s], self.el_pos[m]);
                    let r = (a[0] - b[0]).hypot(a[1] - b[1]);
                    let quad: f64 = self
                        .wn
                        .k_per_m
                        .iter()
                        .zip(&self.wn.weights)
                        .map(|(k, w)| w * k0(k * r))
                        .sum::<f64>()
                        / (2.0 * PI);
                    self.eq_corr[s * n_el + m] = 1.0 / (2.0 * PI * r) - quad;
                }
            }
        }
    }

    /// System-matrix values (pattern of `col_ptr`/`row_idx`) for cell conductivities σ at
    /// wavenumber index `ki`: Σ_c σ_c (K_c + k² M_c) + Σ_edges σ_c α L/6 [[2, 1], [1, 2]].
    fn assemble(&self, sigma_cell: &[f64], ki: usize) -> Vec<f64> {
        let k2 = self.wn.k_per_m[ki].powi(2);
        let mut v = vec![0.0; self.row_idx.len()];
        for (c, pos) in self.elem_pos.iter().enumerate() {
            let (a, g, s) = (self.area[c], &self.grad[c], sigma_cell[c]);
            for (p, (i, j)) in PAIRS.iter().enumerate() {
                let stiff = a * (g[*i][0] * g[*j][0] + g[*i][1] * g[*j][1]);
                let mass = if i == j { a / 6.0 } else { a / 12.0 };
                v[pos[p]] += s * (stiff + k2 * mass);
            }
        }
        for (c, _, len, pos, alpha) in &self.robin {
            let f = sigma_cell[*c] * alpha[ki] * len / 6.0;
            v[pos[0]] += 2.0 * f;
            v[pos[1]] += 2.0 * f;
            v[pos[2]] += f;
        }
        v
    }

    fn cell_sigma(&self, rho_param: &[f64]) -> Result<Vec<f64>, ForwardError> {
        if rho_param.len() != self.n_params {
            return Err(ForwardError::BadModel(format!(
                "{} resistivities for {} parameters",
                rho_param.len(),
                self.n_params
            )));
        }
        if let Some((i, r)) = rho_param
            .iter()
            .enumerate()
            .find(|(_, r)| !(r.is_finite() && **r > 0.0))
        {
            return Err(ForwardError::BadModel(format!(
                "parameter {i} has resistivity {r}"
            )));
        }
        Ok(self
            .cell_param
            .iter()
            .map(|&p| 1.0 / rho_param[p])
            .collect())
    }

    /// Numerical Cholesky factor (simplicial L values) of A_k(σ) at wavenumber index `ki`.
    fn factor_k(&self, sigma: &[f64], ki: usize) -> Result<Vec<f64>, ForwardError> {
        let n = self.mesh.n_nodes();
        let vals = self.assemble(sigma, ki);
        let symb = SymbolicSparseColMatRef::new_checked(n, n, &self.col_ptr, None, &self.row_idx);
        let mat = SparseColMatRef::new(symb, &vals);
        let mut l = vec![0.0; self.symbolic.len_val()];
        let mut mem = MemBuffer::new(
            self.symbolic
                .factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default()),
        );
        self.symbolic
            .factorize_numeric_llt(
                &mut l,
                mat,
                Side::Lower,
                LltRegularization::default(),
                Par::Seq,
                MemStack::new(&mut mem),
                Default::default(),
            )
            .map_err(|_| ForwardError::NotPositiveDefinite(self.wn.k_per_m[ki]))?;
        Ok(l)
    }

    /// Electrode rows of the source fields at wavenumber `ki`: out[m * n_el + s] = Ũ_s(x_m).
    fn solve_k(&self, sigma: &[f64], ki: usize) -> Result<Vec<f64>, ForwardError> {
        let ne = self.el_nodes.len();
        let l = self.factor_k(sigma, ki)?;
        let SymbolicCholeskyRaw::Simplicial(sym) = self.symbolic.raw() else {
            return Err(ForwardError::Factorisation(
                "expected a simplicial factor".into(),
            ));
        };
        let mut y = self.rhs[ki].clone();
        llt_solve_rows_in_place(sym.col_ptr(), sym.row_idx(), &l, &mut y, ne);
        let mut out = Vec::with_capacity(ne * ne);
        for &nd in &self.el_nodes {
            let r = self.prow(nd);
            out.extend_from_slice(&y[r * ne..(r + 1) * ne]);
        }
        Ok(out)
    }

    /// Source fields Ũ_s and adjoint fields λ_m = A_k⁻¹ e_m at wavenumber `ki` (one
    /// factorisation, one solve with 2 n_el columns), in the factor's row order: row
    /// [`Self::prow`]`(node)` holds the n_el values of Ũ then the n_el values of λ.
    fn solve_k_pair(&self, sigma: &[f64], ki: usize) -> Result<Vec<f64>, ForwardError> {
        let n = self.mesh.n_nodes();
        let ne = self.el_nodes.len();
        let l = self.factor_k(sigma, ki)?;
        let g = &self.rhs[ki];
        // The right-hand side is written directly in the factor's row order.
        let mut b = vec![0.0; n * 2 * ne];
        for i in 0..n {
            b[i * 2 * ne..i * 2 * ne + ne].copy_from_slice(&g[i * ne..(i + 1) * ne]);
        }
        for (s, &nd) in self.el_nodes.iter().enumerate() {
            b[self.prow(nd) * 2 * ne + ne + s] = 1.0;
        }
        let SymbolicCholeskyRaw::Simplicial(sym) = self.symbolic.raw() else {
            return Err(ForwardError::Factorisation(
                "expected a simplicial factor".into(),
            ));
        };
        llt_solve_rows_in_place(sym.col_ptr(), sym.row_idx(), &l, &mut b, 2 * ne);
        Ok(b)
    }

    /// Row of `node` in the factor's (permuted) order.
    fn prow(&self, node: usize) -> usize {
        self.perm_inv.as_ref().map(|p| p[node]).unwrap_or(node)
    }

    /// σ0 of each source electrode: the angle-weighted mean conductivity around it.
    fn sigma0(&self, sigma: &[f64]) -> Vec<f64> {
        self.src_cells
            .iter()
            .map(|v| v.iter().map(|(c, w)| w * sigma[*c]).sum())
            .collect()
    }

    /// Electrode potentials V[s * n_el + m] (source s, receiver m) for 1 A, from the electrode
    /// rows u[k][m * n_el + s] of each wavenumber's solution:
    /// V = Σ_k w_k Ũ_k^s(x_m) + E_q(s, m)/σ0_s (E_q = 0 for the total field), then averaged
    /// with its reciprocal, V ← ½(V[s][m] + V[m][s]): the singularity-removed potentials are
    /// not exactly reciprocal on a finite mesh (the receiver side sees the discrete Green's
    /// function), and the mean of the two evaluations is.
    fn electrode_potentials(&self, u: &[Vec<f64>], sigma0: &[f64]) -> Vec<f64> {
        let n_el = self.el_nodes.len();
        let v = self.one_sided_potentials(u, sigma0);
        let mut sym = vec![0.0; n_el * n_el];
        for s in 0..n_el {
            for m in 0..n_el {
                sym[s * n_el + m] = 0.5 * (v[s * n_el + m] + v[m * n_el + s]);
            }
        }
        sym
    }

    /// V[s * n_el + m] = Σ_k w_k Ũ_k^s(x_m) + E_q(s, m)/σ0_s before the reciprocal mean.
    fn one_sided_potentials(&self, u: &[Vec<f64>], sigma0: &[f64]) -> Vec<f64> {
        let n_el = self.el_nodes.len();
        let mut v = vec![0.0; n_el * n_el];
        for (ki, uk) in u.iter().enumerate() {
            let w = self.wn.weights[ki];
            for s in 0..n_el {
                for m in 0..n_el {
                    v[s * n_el + m] += w * uk[m * n_el + s];
                }
            }
        }
        for s in 0..n_el {
            for m in 0..n_el {
                v[s * n_el + m] += self.eq_corr[s * n_el + m] / sigma0[s];
            }
        }
        v
    }

    /// The reciprocity defect of the discretisation itself: the largest
    /// |V(s, m) − V(m, s)| / |V(s, m)| over electrode pairs s ≠ m of the one-sided potentials
    /// (the source's field evaluated at the receiver, before the reciprocal mean that
    /// [`Self::resistances`] reports). Zero to rounding for the total field (A_k is
    /// symmetric); for singularity removal it is a discretisation error that must fall as the
    /// mesh is refined.
    pub fn reciprocity_defect(&self, rho_param: &[f64]) -> Result<f64, ForwardError> {
        let sigma = self.cell_sigma(rho_param)?;
        let u: Vec<Vec<f64>> = (0..self.wn.len())
            .into_par_iter()
            .map(|ki| self.solve_k(&sigma, ki))
            .collect::<Result<_, _>>()?;
        let v = self.one_sided_potentials(&u, &self.sigma0(&sigma));
        let n_el = self.el_nodes.len();
        let mut worst: f64 = 0.0;
        for s in 0..n_el {
            for m in 0..n_el {
                if s != m {
                    let (a, b) = (v[s * n_el + m], v[m * n_el + s]);
                    worst = worst.max(((a - b) / a).abs());
                }
            }
        }
        Ok(worst)
    }

    fn combine(&self, v: &[f64]) -> Vec<f64> {
        let n_el = self.el_nodes.len();
        self.quads
            .iter()
            .map(|q| {
                let pot = |s: Option<usize>, m: Option<usize>| match (s, m) {
                    (Some(s), Some(m)) => v[s * n_el + m],
                    _ => 0.0,
                };
                pot(q[0], q[2]) - pot(q[0], q[3]) - pot(q[1], q[2]) + pot(q[1], q[3])
            })
            .collect()
    }

    /// Transfer resistances R (Ω, 1 A) of every quadrupole for parameter resistivities ρ (Ω·m).
    pub fn resistances(&self, rho_param: &[f64]) -> Result<Vec<f64>, ForwardError> {
        let sigma = self.cell_sigma(rho_param)?;
        let u: Vec<Vec<f64>> = (0..self.wn.len())
            .into_par_iter()
            .map(|ki| self.solve_k(&sigma, ki))
            .collect::<Result<_, _>>()?;
        let v = self.electrode_potentials(&u, &self.sigma0(&sigma));
        Ok(self.combine(&v))
    }

    /// Predicted R and ρa = k·R for parameter resistivities ρ (Ω·m).
    pub fn response(&self, rho_param: &[f64]) -> Result<Response, ForwardError> {
        let r = self.resistances(rho_param)?;
        let rhoa = r.iter().zip(&self.k_geom).map(|(r, k)| r * k).collect();
        Ok(Response {
            r_ohm: r,
            rhoa_ohm_m: rhoa,
        })
    }

    /// The response and the Jacobian J[i][j] = ∂ log ρa_i / ∂ log ρ_j (module docs), from
    /// the forward and adjoint potentials (no perturbation).
    pub fn jacobian(&self, rho_param: &[f64]) -> Result<(Response, Array2<f64>), ForwardError> {
        let sigma = self.cell_sigma(rho_param)?;
        let n_el = self.el_nodes.len();
        let nk = self.wn.len();
        // Wavenumbers in chunks (one per thread) to bound memory: per chunk the forward and
        // adjoint fields λ^m = A_k⁻¹ e_m, then per parameter
        // S_j[m][s] += Σ_{k∈chunk} w_k Σ_{c∈j} λ^mᵀ (∂A/∂σ_c) u^s by one GEMM.
        // At least 6 wavenumbers per chunk: the GEMM inner dimension (nodes × wavenumbers)
        // must not be tiny; 6 fields of n_nodes × n_el doubles ×2 bound the memory.
        let chunk = rayon::current_num_threads().max(6);
        let mut sens: Vec<Array2<f64>> = vec![Array2::<f64>::zeros((n_el, n_el)); self.n_params];
        let mut u_el: Vec<Vec<f64>> = Vec::with_capacity(nk);
        let ks: Vec<usize> = (0..nk).collect();
        for kc in ks.chunks(chunk) {
            let fields: Vec<Vec<f64>> = kc
                .par_iter()
                .map(|&ki| self.solve_k_pair(&sigma, ki))
                .collect::<Result<_, ForwardError>>()?;
            let w2 = 2 * n_el;
            for y in &fields {
                let mut e = Vec::with_capacity(n_el * n_el);
                for &nd in &self.el_nodes {
                    let r = self.prow(nd);
                    e.extend_from_slice(&y[r * w2..r * w2 + n_el]);
                }
                u_el.push(e);
            }
            sens.par_iter_mut().enumerate().for_each(|(j, s_j)| {
                // S_j[m][s] += Σ_k w_k λ_kᵐᵀ E_{k,j} u_kˢ with E_{k,j} the element matrices of the
                // cells of parameter j assembled on their nodes: one GEMM whose inner dimension
                // is (nodes of j) × (wavenumbers of the chunk).
                let cells = &self.param_cells[j];
                let mut nodes: Vec<usize> =
                    cells.iter().flat_map(|&c| self.mesh.cells[c]).collect();
                nodes.sort_unstable();
                nodes.dedup();
                let nl = nodes.len();
                let inner = nl * kc.len();
                if inner == 0 {
                    return;
                }
                // Invariant: every node looked up belongs to a cell of `cells`, so it is in `nodes`.
                let loc = |g: usize| nodes.binary_search(&g).unwrap_or(0);
                let mut fl = vec![0.0; inner * n_el];
                let mut fu = vec![0.0; inner * n_el];
                for (ci, &ki) in kc.iter().enumerate() {
                    let (k2, w) = (self.wn.k_per_m[ki].powi(2), self.wn.weights[ki]);
                    let y = &fields[ci];
                    let base = ci * nl;
                    for (a, &g) in nodes.iter().enumerate() {
                        let r = self.prow(g) * w2;
                        fl[(base + a) * n_el..(base + a + 1) * n_el]
                            .copy_from_slice(&y[r + n_el..r + w2]);
                    }
                    let mut axpy = |row: usize, coef: f64, node: usize| {
                        let dst = &mut fu[(base + row) * n_el..(base + row + 1) * n_el];
                        let r = self.prow(node) * w2;
                        for (d, x) in dst.iter_mut().zip(&y[r..r + n_el]) {
                            *d += coef * x;
                        }
                    };
                    for &c in cells {
                        let t = self.mesh.cells[c];
                        let (area, g) = (self.area[c], &self.grad[c]);
                        for a in 0..3 {
                            let la = loc(t[a]);
                            for b in 0..3 {
                                let stiff = area * (g[a][0] * g[b][0] + g[a][1] * g[b][1]);
                                let mass = if a == b { area / 6.0 } else { area / 12.0 };
                                axpy(la, w * (stiff + k2 * mass), t[b]);
                            }
                        }
                        for &ri in &self.robin_of_cell[c] {
                            let (_, [p, q], len, _, alpha) = &self.robin[ri];
                            let f = w * alpha[ki] * len / 6.0;
                            let (lp, lq) = (loc(*p), loc(*q));
                            axpy(lp, 2.0 * f, *p);
                            axpy(lp, f, *q);
                            axpy(lq, f, *p);
                            axpy(lq, 2.0 * f, *q);
                        }
                    }
                }
                // Invariant: both buffers hold inner × n_el values by construction.
                let fl = ndarray::ArrayView2::from_shape((inner, n_el), &fl)
                    .expect("inner × n_el by construction");
                let fu = ndarray::ArrayView2::from_shape((inner, n_el), &fu)
                    .expect("inner × n_el by construction");
                ndarray::linalg::general_mat_mul(1.0, &fl.t(), &fu, 1.0, s_j);
            });
        }
        let s0 = self.sigma0(&sigma);
        let v = self.electrode_potentials(&u_el, &s0);
        let r = self.combine(&v);
        // Unsymmetrised: dV[s][m]/d log ρ_j = σ_j S_j[m][s] + σ_j E_q(s, m) Θ_{s,j} / σ0_s²
        // (Θ_{s,j}: the angle weight of parameter j around electrode s); then the reciprocal mean.
        let n_d = self.quads.len();
        let sig_p: Vec<f64> = rho_param.iter().map(|r| 1.0 / r).collect();
        // Θ_{s,j} as a dense table (electrode × parameter) so the data loop is O(1) per entry.
        let mut theta_sp = vec![0.0; n_el * self.n_params];
        for (s, v) in self.src_param_weights.iter().enumerate() {
            for &(p, w) in v {
                theta_sp[s * self.n_params + p] += w;
            }
        }
        // One column per parameter, in parallel: the reciprocal mean of the unsymmetrised
        // dV/d log ρ_j of each datum's four electrode pairs, divided by R.
        let np = self.n_params;
        let cols: Vec<Vec<f64>> = (0..np)
            .into_par_iter()
            .map(|j| {
                let sj = &sens[j];
                let dv1 = |s: usize, m: usize| -> f64 {
                    sj[[m, s]] + self.eq_corr[s * n_el + m] * theta_sp[s * np + j] / (s0[s] * s0[s])
                };
                self.quads
                    .iter()
                    .enumerate()
                    .map(|(i, q)| {
                        let mut d = 0.0;
                        for (si, mi, sign) in [(0, 2, 1.0), (0, 3, -1.0), (1, 2, -1.0), (1, 3, 1.0)]
                        {
                            if let (Some(s), Some(m)) = (q[si], q[mi]) {
                                d += sign * 0.5 * (dv1(s, m) + dv1(m, s));
                            }
                        }
                        sig_p[j] * d / r[i]
                    })
                    .collect()
            })
            .collect();
        // Column-major storage of the columns as they come (no strided transpose).
        let flat: Vec<f64> = cols.into_iter().flatten().collect();
        use ndarray::ShapeBuilder;
        // Invariant: np columns of n_d values each.
        let jac = Array2::from_shape_vec((n_d, np).f(), flat).expect("n_d × np by construction");
        if n_d > 0 && jac.iter().all(|v| *v == 0.0) {
            // pyGIMLi's zero-Jacobian failure mode (geophysics.md §1.1): never return it silently.
            return Err(ForwardError::Factorisation(
                "the Jacobian came out identically zero".into(),
            ));
        }
        let rhoa = r.iter().zip(&self.k_geom).map(|(r, k)| r * k).collect();
        Ok((
            Response {
                r_ohm: r,
                rhoa_ohm_m: rhoa,
            },
            jac,
        ))
    }
}

/// Outward unit normal of boundary edge (p, q) of `cell` (pointing away from its third node).
fn outward_normal(mesh: &Mesh, cell: usize, p: usize, q: usize) -> [f64; 2] {
    let (a, b) = (mesh.nodes[p], mesh.nodes[q]);
    let (dx, dz) = (b[0] - a[0], b[1] - a[1]);
    let len = dx.hypot(dz);
    let mut n = [dz / len, -dx / len];
    let third = mesh.cells[cell]
        .iter()
        .copied()
        .find(|&v| v != p && v != q)
        .unwrap_or(p);
    let c = mesh.nodes[third];
    if (c[0] - a[0]) * n[0] + (c[1] - a[1]) * n[1] > 0.0 {
        n = [-n[0], -n[1]];
    }
    n
}

/// Solve L Lᵀ Y = B in place (faer's simplicial Cholesky factor of P A Pᵀ: L lower-triangular
/// CSC with the diagonal first in each column) for B already in the factor's row order with
/// `ncol` columns, each row a contiguous run of `ncol` values: forward then backward
/// substitution, column-oriented (Golub & Van Loan 2013, §3.1).
fn llt_solve_rows_in_place(
    col_ptr: &[usize],
    row_idx: &[usize],
    l: &[f64],
    y: &mut [f64],
    ncol: usize,
) {
    let n = col_ptr.len() - 1;
    for j in 0..n {
        let (p0, p1) = (col_ptr[j], col_ptr[j + 1]);
        let (head, tail) = y.split_at_mut((j + 1) * ncol);
        let yj = &mut head[j * ncol..];
        let d = 1.0 / l[p0];
        for v in yj.iter_mut() {
            *v *= d;
        }
        for p in p0 + 1..p1 {
            let off = (row_idx[p] - j - 1) * ncol;
            let lv = l[p];
            for (a, c) in tail[off..off + ncol].iter_mut().zip(yj.iter()) {
                *a -= lv * c;
            }
        }
    }
    for j in (0..n).rev() {
        let (p0, p1) = (col_ptr[j], col_ptr[j + 1]);
        let (head, tail) = y.split_at_mut((j + 1) * ncol);
        let yj = &mut head[j * ncol..];
        for p in p0 + 1..p1 {
            let off = (row_idx[p] - j - 1) * ncol;
            let lv = l[p];
            for (a, c) in yj.iter_mut().zip(tail[off..off + ncol].iter()) {
                *a -= lv * c;
            }
        }
        let d = 1.0 / l[p0];
        for v in yj.iter_mut() {
            *v *= d;
        }
    }
}

/// y = A x for a symmetric matrix stored as its lower triangle in CSC.
fn sym_matvec(col_ptr: &[usize], row_idx: &[usize], vals: &[f64], x: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; x.len()];
    for c in 0..x.len() {
        for p in col_ptr[c]..col_ptr[c + 1] {
            let r = row_idx[p];
            y[r] += vals[p] * x[c];
            if r != c {
                y[c] += vals[p] * x[r];
            }
        }
    }
    y
}

/// Parameters for a forward mesh refined from a parameter mesh: every parameter-domain cell
/// of `coarse` (marker ≠ background) is one parameter, numbered in cell order; a background
/// cell takes the parameter of the nearest parameter cell (prolongation, as pyGIMLi does for
/// its background region). `parent[c]` is the coarse cell of fine cell c
/// ([`Mesh::refine_h2`]). Returns the parameter of every fine cell and the number of
/// parameters.
pub fn parameter_map(coarse: &Mesh, parent: &[usize]) -> (Vec<usize>, usize) {
    use super::mesh::MARKER_BACKGROUND;
    let cent = coarse.centroids();
    let para: Vec<usize> = (0..coarse.n_cells())
        .filter(|&c| coarse.cell_marker[c] != MARKER_BACKGROUND)
        .collect();
    let mut of_coarse = vec![0usize; coarse.n_cells()];
    for (j, &c) in para.iter().enumerate() {
        of_coarse[c] = j;
    }
    for c in 0..coarse.n_cells() {
        if coarse.cell_marker[c] == MARKER_BACKGROUND {
            let p = cent[c];
            of_coarse[c] = para
                .iter()
                .enumerate()
                .min_by(|a, b| {
                    let da = (cent[*a.1][0] - p[0]).hypot(cent[*a.1][1] - p[1]);
                    let db = (cent[*b.1][0] - p[0]).hypot(cent[*b.1][1] - p[1]);
                    da.total_cmp(&db)
                })
                .map(|(j, _)| j)
                .unwrap_or(0);
        }
    }
    (
        parent.iter().map(|&c| of_coarse[c]).collect(),
        para.len().max(1),
    )
}

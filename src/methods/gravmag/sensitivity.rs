//! The sensitivity (Jacobian) matrix of a tensor mesh: `G_ij` = the datum at station i of
//! cell j with unit density contrast (mGal per kg/m³, `gz` positive down) or unit
//! susceptibility (nT per SI, TMI of induced magnetisation). The problem is linear, so `G`
//! is also the forward operator: `d = G m`.
//!
//! **Node sharing.** Every prism quantity is the alternating corner sum `|||F|||` of one
//! corner function F ([`super::prism::gz_corner`], [`super::prism::tensor_corner`]); on a
//! tensor mesh neighbouring cells share corners, so per station F is evaluated once per
//! *node* and the cell values are the mixed forward differences `Δx Δy Δz F` — 8 × fewer
//! transcendental evaluations than cell by cell (the same identity, exact up to rounding).
//!
//! **Shared differences.** When the stations lie on lines or a grid, many (station, node)
//! pairs share the same coordinate differences (node x − station x, …). F depends only on
//! those differences, so it is tabulated once over the distinct differences of each axis and
//! gathered per station. This is used only when the table is at least twice smaller than the
//! per-station work; the values are the same numbers either way (exact f64 differences are
//! matched, never rounded).

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::GravMagError;
use super::mesh::TensorMesh;
use super::prism::{
    GRAVITATIONAL_CONSTANT, InducingField, SI_TO_MGAL, gz_corner, quad_form, tensor_corner,
};

/// What each datum measures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "component", rename_all = "snake_case")]
pub enum FieldComponent {
    /// Vertical gravity, mGal, positive down; model in kg/m³.
    Gz,
    /// Total-field anomaly of induced magnetisation, nT; model in SI susceptibility.
    Tmi {
        /// The inducing field.
        field: InducingField,
    },
}

impl FieldComponent {
    /// The data unit.
    pub fn data_unit(&self) -> &'static str {
        match self {
            FieldComponent::Gz => "mGal",
            FieldComponent::Tmi { .. } => "nT",
        }
    }

    /// The model unit.
    pub fn model_unit(&self) -> &'static str {
        match self {
            FieldComponent::Gz => "kg/m³",
            FieldComponent::Tmi { .. } => "SI",
        }
    }

    /// The scaled corner function of this component at (u, v, w): gz:
    /// `10⁵ G K(u,v,w)`; TMI: `|F|/(4π) · F̂ᵀ Φ(u,v,w) F̂` (module docs of `prism`).
    pub fn corner(&self) -> impl Fn(f64, f64, f64) -> f64 + Sync + '_ {
        move |u, v, w| match self {
            FieldComponent::Gz => SI_TO_MGAL * GRAVITATIONAL_CONSTANT * gz_corner(u, v, w),
            FieldComponent::Tmi { field } => {
                let t = tensor_corner(u, v, w);
                let f = field.direction();
                let m = [[t[0], t[3], t[4]], [t[3], t[1], t[5]], [t[4], t[5], t[2]]];
                field.intensity_nt / (4.0 * std::f64::consts::PI) * quad_form(&m, f)
            }
        }
    }
}

/// A dense sensitivity matrix, row-major (one row per station).
#[derive(Debug, Clone, PartialEq)]
pub struct Sensitivity {
    /// Rows (stations).
    pub n_data: usize,
    /// Columns (cells).
    pub n_cells: usize,
    /// `values[i * n_cells + j]` = G_ij.
    pub values: Vec<f64>,
    /// Which evaluation strategy was used (for benchmarks and notes).
    pub strategy: &'static str,
}

impl Sensitivity {
    /// `G m`.
    pub fn forward(&self, model: &[f64]) -> Vec<f64> {
        self.values
            .par_chunks_exact(self.n_cells)
            .map(|row| row.iter().zip(model).map(|(g, m)| g * m).sum())
            .collect()
    }
}

/// Build `G` for `stations` (x, y, z up) over `mesh`. Stations must not lie inside a cell.
/// `cancel` is checked between stations; when set the build stops with
/// [`GravMagError::Cancelled`].
pub fn build_sensitivity(
    mesh: &TensorMesh,
    stations: &[[f64; 3]],
    component: &FieldComponent,
    cancel: Option<&AtomicBool>,
) -> Result<Sensitivity, GravMagError> {
    mesh.validate()?;
    if stations.is_empty() {
        return Err(GravMagError::InvalidInput("no stations".into()));
    }
    if let Some(s) = stations.iter().find(|s| !s.iter().all(|v| v.is_finite())) {
        return Err(GravMagError::InvalidInput(format!(
            "station {s:?} has a non-finite coordinate"
        )));
    }
    let m = mesh.n_cells();
    let n = stations.len();
    let bytes = n as f64 * m as f64 * 8.0;
    if bytes > 4.0e9 {
        return Err(GravMagError::InvalidInput(format!(
            "{n} stations × {m} cells needs {:.1} GB for the sensitivity: decimate the stations \
             (block reduction) or coarsen the mesh",
            bytes / 1e9
        )));
    }
    let mut values = vec![0.0; n * m];
    let kernel = component.corner();
    let plan = SharedDifferences::plan(mesh, stations);
    let cancelled = AtomicBool::new(false);
    let is_cancelled = || cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    let strategy = match plan {
        Some(plan) => {
            let table = plan.tabulate(&kernel);
            values.par_chunks_exact_mut(m).enumerate().for_each_init(
                || NodeScratch::new(mesh),
                |scratch, (i, row)| {
                    if cancelled.load(Ordering::Relaxed) || is_cancelled() {
                        cancelled.store(true, Ordering::Relaxed);
                        return;
                    }
                    clear_upper_vector_state();
                    plan.gather(&table, i, &mut scratch.nodes);
                    scratch.differences(mesh, row);
                },
            );
            "node sharing over a table of shared coordinate differences"
        }
        None => {
            values.par_chunks_exact_mut(m).enumerate().for_each_init(
                || NodeScratch::new(mesh),
                |scratch, (i, row)| {
                    if cancelled.load(Ordering::Relaxed) || is_cancelled() {
                        cancelled.store(true, Ordering::Relaxed);
                        return;
                    }
                    scratch.evaluate(mesh, stations[i], &kernel);
                    scratch.differences(mesh, row);
                },
            );
            "node sharing per station"
        }
    };
    if cancelled.load(Ordering::Relaxed) {
        return Err(GravMagError::Cancelled);
    }
    Ok(Sensitivity {
        n_data: n,
        n_cells: m,
        values,
        strategy,
    })
}

pub(crate) use crate::methods::simd::clear_upper_vector_state;

/// Per-thread buffers for one station's node values and their differences.
struct NodeScratch {
    nodes: Vec<f64>,
    dx: Vec<f64>,
    dy: Vec<f64>,
}

impl NodeScratch {
    fn new(mesh: &TensorMesh) -> Self {
        clear_upper_vector_state();
        let (nx, ny, nz) = (mesh.nx(), mesh.ny(), mesh.nz());
        NodeScratch {
            nodes: vec![0.0; (nx + 1) * (ny + 1) * (nz + 1)],
            dx: vec![0.0; nx * (ny + 1) * (nz + 1)],
            dy: vec![0.0; nx * ny * (nz + 1)],
        }
    }

    /// F at every node for one station.
    fn evaluate(&mut self, mesh: &TensorMesh, s: [f64; 3], f: &impl Fn(f64, f64, f64) -> f64) {
        clear_upper_vector_state();
        let mut k = 0;
        for &z in &mesh.nodes_z_m {
            let w = z - s[2];
            for &y in &mesh.nodes_y_m {
                let v = y - s[1];
                for &x in &mesh.nodes_x_m {
                    self.nodes[k] = f(x - s[0], v, w);
                    k += 1;
                }
            }
        }
    }

    /// The cell values `Δx Δy Δz F` (forward differences = the corner sum with the upper
    /// corners counted +) into `row`.
    fn differences(&mut self, mesh: &TensorMesh, row: &mut [f64]) {
        let (nx, ny, nz) = (mesh.nx(), mesh.ny(), mesh.nz());
        let (nnx, nny) = (nx + 1, ny + 1);
        for k in 0..=nz {
            for j in 0..nny {
                let src = &self.nodes[(k * nny + j) * nnx..][..nnx];
                let dst = &mut self.dx[(k * nny + j) * nx..][..nx];
                for i in 0..nx {
                    dst[i] = src[i + 1] - src[i];
                }
            }
        }
        for k in 0..=nz {
            for j in 0..ny {
                let a = (k * nny + j) * nx;
                let b = (k * nny + j + 1) * nx;
                let dst = (k * ny + j) * nx;
                for i in 0..nx {
                    self.dy[dst + i] = self.dx[b + i] - self.dx[a + i];
                }
            }
        }
        let layer = nx * ny;
        for k in 0..nz {
            let (lo, hi) = (k * layer, (k + 1) * layer);
            for c in 0..layer {
                row[lo + c] = self.dy[hi + c] - self.dy[lo + c];
            }
        }
    }
}

/// The distinct coordinate differences of each axis and, per station, where its node
/// differences sit among them.
struct SharedDifferences {
    ux: Vec<f64>,
    uy: Vec<f64>,
    uz: Vec<f64>,
    /// For station i: index into ux of (node_x[a] − x_i) for every node a.
    map_x: Vec<Vec<u32>>,
    map_y: Vec<Vec<u32>>,
    map_z: Vec<Vec<u32>>,
}

impl SharedDifferences {
    /// The table plan, or `None` when it would not save at least half the evaluations.
    fn plan(mesh: &TensorMesh, stations: &[[f64; 3]]) -> Option<Self> {
        let axis = |nodes: &[f64], k: usize| -> (Vec<f64>, Vec<Vec<u32>>) {
            let mut coords: Vec<f64> = stations.iter().map(|s| s[k]).collect();
            coords.sort_by(f64::total_cmp);
            coords.dedup_by(|a, b| a.to_bits() == b.to_bits());
            let mut diffs: Vec<f64> = coords
                .iter()
                .flat_map(|&c| nodes.iter().map(move |&x| x - c))
                .collect();
            diffs.sort_by(f64::total_cmp);
            diffs.dedup_by(|a, b| a.to_bits() == b.to_bits());
            let maps = stations
                .iter()
                .map(|s| {
                    nodes
                        .iter()
                        .map(|&x| {
                            let d = x - s[k];
                            // Invariant: d was inserted into diffs above (same expression).
                            diffs
                                .binary_search_by(|p| p.total_cmp(&d))
                                .map(|i| i as u32)
                                .unwrap_or(0)
                        })
                        .collect()
                })
                .collect();
            (diffs, maps)
        };
        let n_nodes = mesh.nodes_x_m.len() * mesh.nodes_y_m.len() * mesh.nodes_z_m.len();
        let direct = stations.len() as f64 * n_nodes as f64;
        let (ux, map_x) = axis(&mesh.nodes_x_m, 0);
        let (uy, map_y) = axis(&mesh.nodes_y_m, 1);
        let (uz, map_z) = axis(&mesh.nodes_z_m, 2);
        let table = ux.len() as f64 * uy.len() as f64 * uz.len() as f64;
        if table > 0.5 * direct || table > 1.0e8 || ux.len() > u32::MAX as usize {
            return None;
        }
        Some(SharedDifferences {
            ux,
            uy,
            uz,
            map_x,
            map_y,
            map_z,
        })
    }

    /// F over all distinct (u, v, w), x fastest.
    fn tabulate(&self, f: &(impl Fn(f64, f64, f64) -> f64 + Sync)) -> Vec<f64> {
        let (nu, nv) = (self.ux.len(), self.uy.len());
        let mut t = vec![0.0; nu * nv * self.uz.len()];
        t.par_chunks_exact_mut(nu)
            .enumerate()
            .for_each(|(r, line)| {
                let (v, w) = (self.uy[r % nv], self.uz[r / nv]);
                for (o, &u) in line.iter_mut().zip(&self.ux) {
                    *o = f(u, v, w);
                }
            });
        t
    }

    /// Station `i`'s node values from the table.
    fn gather(&self, table: &[f64], i: usize, nodes: &mut [f64]) {
        let (nu, nv) = (self.ux.len(), self.uy.len());
        let (mx, my, mz) = (&self.map_x[i], &self.map_y[i], &self.map_z[i]);
        let mut k = 0;
        for &iz in mz {
            for &iy in my {
                let base = (iz as usize * nv + iy as usize) * nu;
                for &ix in mx {
                    nodes[k] = table[base + ix as usize];
                    k += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::gravmag::prism::{prism_gz_mgal, prism_tmi_nt};

    fn small_mesh() -> TensorMesh {
        TensorMesh::from_widths(
            &[40.0, 25.0, 20.0, 20.0, 20.0, 25.0, 40.0],
            &[40.0, 20.0, 20.0, 20.0, 40.0],
            &[30.0, 15.0, 10.0, 10.0],
            [-95.0, -70.0, -65.0],
        )
        .unwrap()
    }

    fn check(stations: &[[f64; 3]], component: FieldComponent, expect_table: bool) {
        // Every entry equals the closed form of its cell (prism.rs, itself checked against
        // harmonica) to 1e-9 of the row's largest entry (rounding in the node differences).
        let mesh = small_mesh();
        let g = build_sensitivity(&mesh, stations, &component, None).unwrap();
        assert_eq!(g.strategy.contains("table"), expect_table, "{}", g.strategy);
        for (i, &s) in stations.iter().enumerate() {
            let row = &g.values[i * g.n_cells..][..g.n_cells];
            let scale = row.iter().fold(0.0f64, |a, b| a.max(b.abs()));
            for (c, &got) in row.iter().enumerate() {
                let want = match &component {
                    FieldComponent::Gz => prism_gz_mgal(&mesh.prism(c), 1.0, s),
                    FieldComponent::Tmi { field } => prism_tmi_nt(&mesh.prism(c), 1.0, field, s),
                };
                assert!(
                    (got - want).abs() < 1e-9 * scale,
                    "station {i} cell {c}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn gridded_stations_use_the_table_and_match_the_closed_form() {
        let mut st = vec![];
        for j in 0..4 {
            for i in 0..5 {
                st.push([-40.0 + 20.0 * i as f64, -30.0 + 20.0 * j as f64, 2.0]);
            }
        }
        check(&st, FieldComponent::Gz, true);
        let field = InducingField {
            intensity_nt: 50_000.0,
            inclination_deg: 60.0,
            declination_deg: 10.0,
        };
        check(&st, FieldComponent::Tmi { field }, true);
    }

    #[test]
    fn scattered_stations_are_evaluated_per_station() {
        let st: Vec<[f64; 3]> = (0..6)
            .map(|k| {
                [
                    -50.0 + 17.3 * k as f64,
                    11.1 * k as f64 - 30.0,
                    1.0 + 0.7 * k as f64,
                ]
            })
            .collect();
        check(&st, FieldComponent::Gz, false);
    }

    #[test]
    fn forward_of_a_block_equals_the_sum_of_its_prisms() {
        let mesh = small_mesh();
        let st = vec![[0.0, 0.0, 1.0], [33.0, -12.0, 5.0]];
        let g = build_sensitivity(&mesh, &st, &FieldComponent::Gz, None).unwrap();
        let model: Vec<f64> = (0..mesh.n_cells())
            .map(|c| if c % 3 == 0 { 250.0 } else { -40.0 })
            .collect();
        let d = g.forward(&model);
        for (i, &s) in st.iter().enumerate() {
            let want: f64 = (0..mesh.n_cells())
                .map(|c| prism_gz_mgal(&mesh.prism(c), model[c], s))
                .sum();
            assert!((d[i] - want).abs() < 1e-9 * want.abs().max(1e-6));
        }
    }

    #[test]
    fn cancellation_stops_the_build() {
        let flag = AtomicBool::new(true);
        let r = build_sensitivity(
            &small_mesh(),
            &[[0.0, 0.0, 1.0]],
            &FieldComponent::Gz,
            Some(&flag),
        );
        assert_eq!(r.unwrap_err(), GravMagError::Cancelled);
    }
}

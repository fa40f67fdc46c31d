//! The tensor mesh the 3D inversion works on: a core of equal cells under the stations,
//! padding cells growing geometrically to the sides and below, flat top.
//!
//! Cells are ordered x fastest, then y, then z from the **bottom** up (the order of
//! `discretize.TensorMesh`, so SimPEG meshes and models map one to one):
//! `index = ix + nx·(iy + ny·iz)`.

use serde::{Deserialize, Serialize};

use super::GravMagError;
use super::grid::positive;
use super::prism::Prism;

/// A rectilinear (tensor) mesh given by its node coordinates, z up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TensorMesh {
    /// Node x coordinates, ascending, m.
    pub nodes_x_m: Vec<f64>,
    /// Node y coordinates, ascending, m.
    pub nodes_y_m: Vec<f64>,
    /// Node z coordinates, ascending (bottom to top), m.
    pub nodes_z_m: Vec<f64>,
}

impl TensorMesh {
    /// A mesh from cell widths and the origin (the bottom-south-west corner), as
    /// `discretize.TensorMesh([hx, hy, hz], origin)` builds it.
    pub fn from_widths(
        hx: &[f64],
        hy: &[f64],
        hz: &[f64],
        origin_m: [f64; 3],
    ) -> Result<Self, GravMagError> {
        let nodes = |h: &[f64], o: f64| -> Result<Vec<f64>, GravMagError> {
            if h.is_empty() || h.iter().any(|w| !(w.is_finite() && *w > 0.0)) {
                return Err(GravMagError::InvalidInput(
                    "cell widths must be positive and finite".into(),
                ));
            }
            let mut v = Vec::with_capacity(h.len() + 1);
            v.push(o);
            for w in h {
                v.push(v[v.len() - 1] + w);
            }
            Ok(v)
        };
        Ok(TensorMesh {
            nodes_x_m: nodes(hx, origin_m[0])?,
            nodes_y_m: nodes(hy, origin_m[1])?,
            nodes_z_m: nodes(hz, origin_m[2])?,
        })
    }

    /// Cells along x.
    pub fn nx(&self) -> usize {
        self.nodes_x_m.len() - 1
    }
    /// Cells along y.
    pub fn ny(&self) -> usize {
        self.nodes_y_m.len() - 1
    }
    /// Cells along z.
    pub fn nz(&self) -> usize {
        self.nodes_z_m.len() - 1
    }
    /// Number of cells.
    pub fn n_cells(&self) -> usize {
        self.nx() * self.ny() * self.nz()
    }
    /// The cell index of (ix, iy, iz).
    pub fn index(&self, ix: usize, iy: usize, iz: usize) -> usize {
        ix + self.nx() * (iy + self.ny() * iz)
    }
    /// (ix, iy, iz) of a cell index.
    pub fn ijk(&self, c: usize) -> (usize, usize, usize) {
        let (nx, ny) = (self.nx(), self.ny());
        (c % nx, (c / nx) % ny, c / (nx * ny))
    }
    /// Cell widths along x.
    pub fn widths_x(&self) -> Vec<f64> {
        self.nodes_x_m.windows(2).map(|w| w[1] - w[0]).collect()
    }
    /// Cell widths along y.
    pub fn widths_y(&self) -> Vec<f64> {
        self.nodes_y_m.windows(2).map(|w| w[1] - w[0]).collect()
    }
    /// Cell widths along z (bottom up).
    pub fn widths_z(&self) -> Vec<f64> {
        self.nodes_z_m.windows(2).map(|w| w[1] - w[0]).collect()
    }
    /// The prism of cell `c`.
    pub fn prism(&self, c: usize) -> Prism {
        let (i, j, k) = self.ijk(c);
        Prism {
            west_m: self.nodes_x_m[i],
            east_m: self.nodes_x_m[i + 1],
            south_m: self.nodes_y_m[j],
            north_m: self.nodes_y_m[j + 1],
            bottom_m: self.nodes_z_m[k],
            top_m: self.nodes_z_m[k + 1],
        }
    }
    /// The centre of cell `c`, m.
    pub fn centre(&self, c: usize) -> [f64; 3] {
        self.prism(c).centre_m()
    }
    /// The volume of every cell, m³, in cell order.
    pub fn volumes(&self) -> Vec<f64> {
        let (hx, hy, hz) = (self.widths_x(), self.widths_y(), self.widths_z());
        let mut v = Vec::with_capacity(self.n_cells());
        for z in &hz {
            for y in &hy {
                for x in &hx {
                    v.push(x * y * z);
                }
            }
        }
        v
    }
    /// z of the top of the mesh, m.
    pub fn top_m(&self) -> f64 {
        self.nodes_z_m[self.nodes_z_m.len() - 1]
    }

    /// Check the node arrays are strictly increasing and finite.
    pub fn validate(&self) -> Result<(), GravMagError> {
        for (name, n) in [
            ("x", &self.nodes_x_m),
            ("y", &self.nodes_y_m),
            ("z", &self.nodes_z_m),
        ] {
            if n.len() < 2
                || n.windows(2)
                    .any(|w| !positive(w[1] - w[0]) || !w[0].is_finite() || !w[1].is_finite())
            {
                return Err(GravMagError::InvalidInput(format!(
                    "mesh nodes along {name} must be finite and strictly increasing (at least one cell)"
                )));
            }
        }
        Ok(())
    }
}

/// Options for [`design_mesh`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeshOptions {
    /// Horizontal core cell size, m; default: the larger of the station extent / `max_core_cells`
    /// and the mean station spacing.
    pub core_cell_m: Option<f64>,
    /// Vertical core cell size, m; default: half the horizontal one.
    pub core_cell_z_m: Option<f64>,
    /// At most this many core cells along x and along y (22 in the peer studio).
    pub max_core_cells: usize,
    /// Depth of the core below the top, m; default: half the larger station extent.
    pub core_depth_m: Option<f64>,
    /// Padding cells on each side and below.
    pub padding_cells: usize,
    /// Growth factor of successive padding cells.
    pub padding_factor: f64,
    /// z of the top of the mesh, m; default: the lowest station minus 1 m.
    pub top_m: Option<f64>,
}

impl Default for MeshOptions {
    fn default() -> Self {
        MeshOptions {
            core_cell_m: None,
            core_cell_z_m: None,
            max_core_cells: 24,
            core_depth_m: None,
            padding_cells: 4,
            padding_factor: 1.3,
            top_m: None,
        }
    }
}

/// A mesh and how it was chosen.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DesignedMesh {
    /// The mesh.
    pub mesh: TensorMesh,
    /// The horizontal core cell size, m.
    pub core_cell_m: f64,
    /// The vertical core cell size, m.
    pub core_cell_z_m: f64,
    /// Every choice made, in sentences.
    pub notes: Vec<String>,
}

/// A tensor mesh under `stations` (x, y, z up): the core spans the stations' bounding box
/// widened by half a cell on each side, from the top down to the core depth; `padding_cells` cells growing by `padding_factor`
/// are added on the four sides and below (none above: the top is the ground).
pub fn design_mesh(
    stations: &[[f64; 3]],
    options: &MeshOptions,
) -> Result<DesignedMesh, GravMagError> {
    if stations.len() < 3 {
        return Err(GravMagError::InvalidInput(
            "a 3D mesh needs at least 3 stations".into(),
        ));
    }
    if stations.iter().flatten().any(|v| !v.is_finite()) {
        return Err(GravMagError::InvalidInput(
            "station coordinates must be finite".into(),
        ));
    }
    let col = |k: usize| stations.iter().map(|s| s[k]).collect::<Vec<f64>>();
    let (x0, x1) = super::stations::min_max(&col(0));
    let (y0, y1) = super::stations::min_max(&col(1));
    let (z_low, _) = super::stations::min_max(&col(2));
    let (wx, wy) = (x1 - x0, y1 - y0);
    let extent = wx.max(wy);
    if !positive(extent) {
        return Err(GravMagError::InvalidInput(
            "the stations occupy a single point".into(),
        ));
    }
    let mut notes = Vec::new();
    let mean_spacing = if wx > 0.0 && wy > 0.0 {
        (wx * wy / stations.len() as f64).sqrt()
    } else {
        extent / stations.len() as f64
    };
    let h = match options.core_cell_m {
        Some(h) if h > 0.0 => h,
        Some(h) => {
            return Err(GravMagError::InvalidInput(format!(
                "core cell {h} m is not positive"
            )));
        }
        None => {
            let h = (extent / options.max_core_cells.max(1) as f64).max(mean_spacing);
            notes.push(format!(
                "horizontal core cell {h:.1} m: the larger of extent/{} and the mean station spacing {mean_spacing:.1} m",
                options.max_core_cells
            ));
            h
        }
    };
    let hz = options.core_cell_z_m.unwrap_or(h / 2.0);
    if !positive(hz) {
        return Err(GravMagError::InvalidInput(
            "vertical core cell must be positive".into(),
        ));
    }
    let depth = options.core_depth_m.unwrap_or(0.5 * extent).max(hz);
    let top = options.top_m.unwrap_or(z_low - 1.0);
    if stations.iter().any(|s| s[2] < top) {
        return Err(GravMagError::InvalidInput(format!(
            "stations below the mesh top ({top} m): the flat-topped mesh needs every station at or above it"
        )));
    }
    notes.push(format!(
        "flat mesh top at {top:.2} m (topography is not modelled); core to {depth:.1} m depth in {hz:.1} m layers"
    ));
    let pads: Vec<f64> = (1..=options.padding_cells)
        .map(|k| h * options.padding_factor.powi(k as i32))
        .collect();
    let pads_z: Vec<f64> = (1..=options.padding_cells)
        .map(|k| hz * options.padding_factor.powi(k as i32))
        .collect();
    let axis = |lo: f64, hi: f64| -> (Vec<f64>, f64) {
        // The core reaches half a cell beyond the outermost stations.
        let n_core = (((hi - lo) / h + 1.0 - 1e-9).ceil() as usize).max(1);
        let core_w = n_core as f64 * h;
        let start = 0.5 * (lo + hi) - 0.5 * core_w;
        let mut widths: Vec<f64> = pads.iter().rev().copied().collect();
        widths.extend(std::iter::repeat_n(h, n_core));
        widths.extend(pads.iter().copied());
        let origin = start - pads.iter().sum::<f64>();
        (widths, origin)
    };
    let (hxs, ox) = axis(x0, x1);
    let (hys, oy) = axis(y0, y1);
    let nz_core = ((depth / hz).ceil() as usize).max(1);
    let mut hzs: Vec<f64> = pads_z.iter().rev().copied().collect();
    hzs.extend(std::iter::repeat_n(hz, nz_core));
    let oz = top - hzs.iter().sum::<f64>();
    let mesh = TensorMesh::from_widths(&hxs, &hys, &hzs, [ox, oy, oz])?;
    notes.push(format!(
        "{} × {} × {} = {} cells, {} padding cells growing ×{} on each side and below",
        mesh.nx(),
        mesh.ny(),
        mesh.nz(),
        mesh.n_cells(),
        options.padding_cells,
        options.padding_factor
    ));
    Ok(DesignedMesh {
        mesh,
        core_cell_m: h,
        core_cell_z_m: hz,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_mesh_is_rebuilt_from_widths() {
        // ../shared/bench/grav_400_truth.json: 28 × 28 × 26 = 20 384 cells, origin
        // (−360.862, −360.862, −300.431), top at 0.
        let pads = [57.122, 43.94, 33.8, 26.0];
        let mut hx: Vec<f64> = pads.to_vec();
        hx.extend([20.0; 20]);
        hx.extend(pads.iter().rev());
        let mut hz = vec![28.561, 21.97, 16.9, 13.0];
        hz.extend([10.0; 22]);
        let m = TensorMesh::from_widths(&hx, &hx, &hz, [-360.862, -360.862, -300.431]).unwrap();
        assert_eq!((m.nx(), m.ny(), m.nz(), m.n_cells()), (28, 28, 26, 20_384));
        assert!(m.top_m().abs() < 1e-9);
        let c = m.index(14, 14, 25);
        let centre = m.centre(c);
        assert!(
            (centre[0] - 10.0).abs() < 1e-9 && (centre[2] + 5.0).abs() < 1e-9,
            "{centre:?}"
        );
        assert_eq!(m.ijk(c), (14, 14, 25));
        let vol: f64 = m.volumes().iter().sum();
        let box_vol =
            (m.nodes_x_m[28] - m.nodes_x_m[0]).powi(2) * (m.nodes_z_m[26] - m.nodes_z_m[0]);
        assert!((vol / box_vol - 1.0).abs() < 1e-12);
    }

    #[test]
    fn designed_mesh_covers_the_stations() {
        let mut st = vec![];
        for j in 0..20 {
            for i in 0..20 {
                st.push([-190.0 + 20.0 * i as f64, -190.0 + 20.0 * j as f64, 5.0]);
            }
        }
        let d = design_mesh(
            &st,
            &MeshOptions {
                core_cell_m: Some(20.0),
                ..Default::default()
            },
        )
        .unwrap();
        let m = &d.mesh;
        assert!((m.top_m() - 4.0).abs() < 1e-9);
        // Core 20 cells of 20 m centred on the stations (stations at cell centres, as in the
        // SimPEG benchmark mesh), plus 4 padding cells each side.
        assert_eq!(m.nx(), 28);
        assert!((m.nodes_x_m[4] + 200.0).abs() < 1e-9);
        assert!(m.nodes_x_m[4] <= -190.0 && m.nodes_x_m[m.nx() - 4] >= 190.0);
        assert!(design_mesh(&st[..2], &MeshOptions::default()).is_err());
    }
}

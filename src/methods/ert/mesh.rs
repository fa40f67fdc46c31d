//! 2D triangle meshes for ERT: a general container (nodes, triangles, cell markers, boundary
//! edges) and a generator for a survey line with topography, refinement at the electrodes,
//! a parameter domain, a padded boundary far out, and optional interface polylines that the
//! mesh honours (cells above and below get different markers).
//!
//! The generator builds a terrain-following graded grid: vertical lines through every
//! electrode (and `n_between` − 1 lines between neighbours), widths growing geometrically
//! outward to the side boundaries; horizontal levels at depths growing geometrically from
//! the surface to the parameter depth and on to the bottom boundary. Node elevations follow
//! the surface (linear interpolation of electrode and topography points) and relax to a flat
//! bottom below the parameter domain. Each grid quadrilateral is split into two triangles
//! along alternating diagonals. An interface polyline z(x) is honoured by moving, in every
//! column it spans, the nearest grid level onto it; the cells between the surface and the
//! interface are marked [`MARKER_ABOVE`], those under it [`MARKER_BELOW`].

use serde::{Deserialize, Serialize};

/// Marker of padding (background) cells outside the parameter domain.
pub const MARKER_BACKGROUND: i32 = 1;
/// Marker of parameter-domain cells (above an interface, when there is one).
pub const MARKER_ABOVE: i32 = 2;
/// Marker of parameter-domain cells below an interface polyline.
pub const MARKER_BELOW: i32 = 3;

/// Why a mesh could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MeshError {
    /// Fewer than two distinct electrode positions.
    #[error("a line mesh needs at least two distinct electrode positions, got {0}")]
    TooFewElectrodes(usize),
    /// A parameter is out of range.
    #[error("mesh parameter {name} = {value} is out of range ({why})")]
    BadParameter {
        /// Parameter name.
        name: &'static str,
        /// Its value.
        value: f64,
        /// The valid range.
        why: &'static str,
    },
    /// Two electrodes closer than the grid can separate.
    #[error("electrodes at x = {0} m and x = {1} m are too close to be separate nodes")]
    ElectrodesTooClose(f64, f64),
}

/// What kind of boundary an edge lies on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoundaryKind {
    /// The ground surface (no current crosses it: Neumann).
    Surface,
    /// The sides and bottom of the model (mixed/Robin condition).
    Subsurface,
}

/// A boundary edge: its two nodes and its kind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BoundaryEdge {
    /// The edge's nodes.
    pub nodes: [usize; 2],
    /// Surface or subsurface.
    pub kind: BoundaryKind,
    /// The cell the edge belongs to.
    pub cell: usize,
}

/// A 2D triangle mesh in the (x, z) section plane, z up, metres.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mesh {
    /// Node coordinates (x, z), m.
    pub nodes: Vec<[f64; 2]>,
    /// Triangles (node indices, counter-clockwise).
    pub cells: Vec<[usize; 3]>,
    /// Region marker per cell ([`MARKER_BACKGROUND`], [`MARKER_ABOVE`], [`MARKER_BELOW`]).
    pub cell_marker: Vec<i32>,
    /// Edges on the outer boundary.
    pub boundary: Vec<BoundaryEdge>,
    /// The node of each electrode (in the order the electrodes were given).
    pub electrode_nodes: Vec<usize>,
}

/// Settings of [`line_mesh`]. Missing fields take the [`Default`] values; unknown ones are
/// an error that names the valid ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LineMeshParams {
    /// Grid columns per electrode interval (1 = nodes only at electrodes).
    pub n_between: usize,
    /// Extra columns of the parameter domain beyond each end electrode, in electrode spacings.
    pub side_extension: usize,
    /// Thickness of the first level below the surface, as a fraction of the smallest
    /// electrode spacing.
    pub first_layer_fraction: f64,
    /// Growth factor of level thickness inside the parameter domain.
    pub depth_growth: f64,
    /// Depth of the parameter domain, m (≤ 0: 0.4 × the line length).
    pub para_depth_m: f64,
    /// Distance of the side and bottom boundaries from the line, in line lengths.
    pub boundary_factor: f64,
    /// Growth factor of the padding cells.
    pub padding_growth: f64,
}

impl Default for LineMeshParams {
    fn default() -> Self {
        LineMeshParams {
            n_between: 2,
            side_extension: 2,
            first_layer_fraction: 0.25,
            depth_growth: 1.15,
            para_depth_m: -1.0,
            boundary_factor: 8.0,
            padding_growth: 1.6,
        }
    }
}

/// An interface polyline (x, z) that the mesh honours (e.g. a refractor from seismics).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interface {
    /// Points (x, z), m, sorted by x.
    pub points: Vec<[f64; 2]>,
}

/// Linear interpolation of a polyline z(x) (points sorted by x), constant beyond its ends.
pub fn interp(points: &[[f64; 2]], x: f64) -> f64 {
    let Some(first) = points.first() else {
        return 0.0;
    };
    if x <= first[0] {
        return first[1];
    }
    for w in points.windows(2) {
        if x <= w[1][0] {
            let d = w[1][0] - w[0][0];
            return if d > 0.0 {
                w[0][1] + (w[1][1] - w[0][1]) * (x - w[0][0]) / d
            } else {
                w[1][1]
            };
        }
    }
    points.last().map(|p| p[1]).unwrap_or(0.0)
}

/// Widths growing by `growth` from `first` until their sum reaches `total`.
fn padding(first: f64, growth: f64, total: f64) -> Vec<f64> {
    let mut w = Vec::new();
    let mut s = 0.0;
    let mut d = first;
    while s < total && w.len() < 200 {
        d *= growth;
        w.push(d);
        s += d;
    }
    w
}

/// Build a mesh for electrodes at `positions` ((x, z) along the line, m), with extra surface
/// `topography` points, and optional `interfaces`.
pub fn line_mesh(
    positions: &[[f64; 2]],
    topography: &[[f64; 2]],
    params: &LineMeshParams,
    interfaces: &[Interface],
) -> Result<Mesh, MeshError> {
    let check = |name, value: f64, ok: bool, why| {
        if ok && value.is_finite() {
            Ok(())
        } else {
            Err(MeshError::BadParameter { name, value, why })
        }
    };
    check(
        "n_between",
        params.n_between as f64,
        (1..=20).contains(&params.n_between),
        "1..=20",
    )?;
    check(
        "first_layer_fraction",
        params.first_layer_fraction,
        params.first_layer_fraction > 0.0,
        "> 0",
    )?;
    check(
        "depth_growth",
        params.depth_growth,
        (1.0..=3.0).contains(&params.depth_growth),
        "1..=3",
    )?;
    check(
        "padding_growth",
        params.padding_growth,
        (1.05..=4.0).contains(&params.padding_growth),
        "1.05..=4",
    )?;
    check(
        "boundary_factor",
        params.boundary_factor,
        params.boundary_factor >= 1.0,
        ">= 1",
    )?;
    let mut xs: Vec<f64> = positions.iter().map(|p| p[0]).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    if xs.len() < 2 {
        return Err(MeshError::TooFewElectrodes(xs.len()));
    }
    let spacing_min = xs
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    let spacing_max = xs.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    if spacing_min < 1e-6 {
        return Err(MeshError::ElectrodesTooClose(xs[0], xs[1]));
    }
    let length = xs[xs.len() - 1] - xs[0];
    // Surface: electrodes and topography points, sorted.
    let mut surf: Vec<[f64; 2]> = positions
        .iter()
        .copied()
        .chain(topography.iter().copied())
        .collect();
    surf.sort_by(|a, b| a[0].total_cmp(&b[0]));
    // Columns.
    let mut cols: Vec<f64> = Vec::new();
    let nb = params.n_between;
    for w in xs.windows(2) {
        for k in 0..nb {
            cols.push(w[0] + (w[1] - w[0]) * k as f64 / nb as f64);
        }
    }
    cols.push(xs[xs.len() - 1]);
    let dx_end_l = (xs[1] - xs[0]) / nb as f64;
    let dx_end_r = (xs[xs.len() - 1] - xs[xs.len() - 2]) / nb as f64;
    for k in 1..=params.side_extension * nb {
        cols.insert(0, xs[0] - dx_end_l * k as f64);
        cols.push(xs[xs.len() - 1] + dx_end_r * k as f64);
    }
    let para_x = (cols[0], cols[cols.len() - 1]);
    let outer = params.boundary_factor * length.max(spacing_max);
    for w in padding(dx_end_l, params.padding_growth, outer) {
        let x = cols[0] - w;
        cols.insert(0, x);
    }
    for w in padding(dx_end_r, params.padding_growth, outer) {
        let x = cols[cols.len() - 1] + w;
        cols.push(x);
    }
    // Levels (depths below the surface).
    let para_depth = if params.para_depth_m > 0.0 {
        params.para_depth_m
    } else {
        0.4 * length
    };
    let mut depths = vec![0.0];
    let mut dz = params.first_layer_fraction * spacing_min;
    while depths[depths.len() - 1] < para_depth && depths.len() < 500 {
        let d = depths[depths.len() - 1] + dz;
        depths.push(d);
        dz *= params.depth_growth;
    }
    let para_bottom = depths[depths.len() - 1];
    for w in padding(dz / params.padding_growth, params.padding_growth, outer) {
        let d = depths[depths.len() - 1] + w;
        depths.push(d);
    }
    let bottom = depths[depths.len() - 1];
    let z_ref = surf.iter().map(|p| p[1]).sum::<f64>() / surf.len() as f64;
    let nx = cols.len();
    let nz = depths.len();
    // Node positions: terrain-following in the parameter domain, relaxing to flat below.
    let mut z = vec![vec![0.0; nz]; nx];
    for (i, &x) in cols.iter().enumerate() {
        let s = interp(&surf, x);
        for (j, &d) in depths.iter().enumerate() {
            let beta = if d <= para_bottom {
                0.0
            } else {
                ((d - para_bottom) / (bottom - para_bottom)).min(1.0)
            };
            z[i][j] = s * (1.0 - beta) + z_ref * beta - d;
        }
    }
    // Interfaces: move the nearest level of each column onto the polyline, keeping the
    // levels of neighbouring columns at most one apart so the polyline runs along mesh
    // edges (a level, or the diagonal of one quadrilateral).
    let mut iface_level: Vec<Vec<Option<usize>>> = Vec::new();
    for iface in interfaces {
        let mut pts = iface.points.clone();
        pts.sort_by(|a, b| a[0].total_cmp(&b[0]));
        let mut lev: Vec<Option<usize>> = vec![None; nx];
        if let (Some(f), Some(l)) = (pts.first(), pts.last()) {
            let mut prev: Option<usize> = None;
            for i in 0..nx {
                let x = cols[i];
                if x < f[0] || x > l[0] || nz < 3 {
                    prev = None;
                    continue;
                }
                let zi = interp(&pts, x);
                let col = z[i].clone();
                if !(zi < col[0] && zi > col[nz - 1]) {
                    prev = None;
                    continue;
                }
                let mut j = (1..nz - 1)
                    .min_by(|&a, &b| (col[a] - zi).abs().total_cmp(&(col[b] - zi).abs()))
                    .unwrap_or(1);
                if let Some(p) = prev {
                    j = j.clamp(p.saturating_sub(1).max(1), (p + 1).min(nz - 2));
                }
                let lo = col[j + 1] + 0.05 * (col[j] - col[j + 1]);
                let hi = col[j - 1] - 0.05 * (col[j - 1] - col[j]);
                z[i][j] = zi.clamp(lo, hi);
                lev[i] = Some(j);
                prev = Some(j);
            }
        }
        iface_level.push(lev);
    }
    let id = |i: usize, j: usize| i * nz + j;
    let mut nodes = Vec::with_capacity(nx * nz);
    for i in 0..nx {
        for j in 0..nz {
            nodes.push([cols[i], z[i][j]]);
        }
    }
    let mut cells = Vec::with_capacity(2 * (nx - 1) * (nz - 1));
    let mut cell_marker = Vec::with_capacity(cells.capacity());
    let mut boundary = Vec::new();
    for i in 0..nx - 1 {
        for j in 0..nz - 1 {
            // quad corners: (i,j) top-left, (i+1,j) top-right, (i+1,j+1) bottom-right, (i,j+1) bottom-left
            let (tl, tr, br, bl) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            // Diagonal: alternating, except where the first interface crosses this quad.
            let mut even = (i + j) % 2 == 0;
            if let Some(lev) = iface_level.first()
                && let (Some(a), Some(b)) = (lev[i], lev[i + 1])
                && a != b
                && j == a.min(b)
            {
                even = a < b;
            }
            let tris = if even {
                [[tl, bl, br], [tl, br, tr]]
            } else {
                [[tl, bl, tr], [bl, br, tr]]
            };
            for (ti, t) in tris.into_iter().enumerate() {
                let c = cells.len();
                let cx = (cols[i] + cols[i + 1]) / 2.0;
                let inside = cx > para_x.0 && cx < para_x.1 && depths[j + 1] <= para_bottom + 1e-9;
                let mut marker = if inside {
                    MARKER_ABOVE
                } else {
                    MARKER_BACKGROUND
                };
                if inside {
                    for lev in &iface_level {
                        if let (Some(a), Some(b)) = (lev[i], lev[i + 1]) {
                            // Below when the quad is under both levels, or it is the quad the
                            // interface crosses diagonally and this is its lower triangle.
                            let lower_triangle = if even { ti == 0 } else { ti == 1 };
                            if j >= a.max(b) || (j == a.min(b) && a != b && lower_triangle) {
                                marker = MARKER_BELOW;
                            }
                        }
                    }
                }
                cells.push(t);
                cell_marker.push(marker);
                // boundary edges of this triangle
                for k in 0..3 {
                    let (p, q) = (t[k], t[(k + 1) % 3]);
                    let (pi, pj, qi, qj) = (p / nz, p % nz, q / nz, q % nz);
                    let kind = if pj == 0 && qj == 0 {
                        Some(BoundaryKind::Surface)
                    } else if (pj == nz - 1 && qj == nz - 1)
                        || (pi == 0 && qi == 0)
                        || (pi == nx - 1 && qi == nx - 1)
                    {
                        Some(BoundaryKind::Subsurface)
                    } else {
                        None
                    };
                    if let Some(kind) = kind {
                        boundary.push(BoundaryEdge {
                            nodes: [p, q],
                            kind,
                            cell: c,
                        });
                    }
                }
            }
        }
    }
    let electrode_nodes = positions
        .iter()
        .map(|p| {
            let i = cols
                .iter()
                .enumerate()
                .min_by(|a, b| (a.1 - p[0]).abs().total_cmp(&(b.1 - p[0]).abs()))
                .map(|(i, _)| i)
                .unwrap_or(0);
            id(i, 0)
        })
        .collect();
    let mut mesh = Mesh {
        nodes,
        cells,
        cell_marker,
        boundary,
        electrode_nodes,
    };
    mesh.orient_ccw();
    Ok(mesh)
}

impl Mesh {
    /// Signed area of cell `c` (positive when counter-clockwise), m².
    pub fn signed_area(&self, c: usize) -> f64 {
        let [a, b, d] = self.cells[c];
        let (p, q, r) = (self.nodes[a], self.nodes[b], self.nodes[d]);
        0.5 * ((q[0] - p[0]) * (r[1] - p[1]) - (r[0] - p[0]) * (q[1] - p[1]))
    }

    /// Make every triangle counter-clockwise.
    pub fn orient_ccw(&mut self) {
        for c in 0..self.cells.len() {
            if self.signed_area(c) < 0.0 {
                self.cells[c].swap(1, 2);
            }
        }
    }

    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Number of cells.
    pub fn n_cells(&self) -> usize {
        self.cells.len()
    }

    /// Cell centroids (x, z), m.
    pub fn centroids(&self) -> Vec<[f64; 2]> {
        self.cells
            .iter()
            .map(|t| {
                let p = t.map(|i| self.nodes[i]);
                [
                    (p[0][0] + p[1][0] + p[2][0]) / 3.0,
                    (p[0][1] + p[1][1] + p[2][1]) / 3.0,
                ]
            })
            .collect()
    }

    /// Split every triangle into four at its edge midpoints (pyGIMLi's "H2" refinement).
    /// Returns the refined mesh and, per new cell, its parent cell.
    pub fn refine_h2(&self) -> (Mesh, Vec<usize>) {
        use std::collections::HashMap;
        let mut nodes = self.nodes.clone();
        let mut mid: HashMap<(usize, usize), usize> = HashMap::new();
        let mut midpoint = |a: usize, b: usize, nodes: &mut Vec<[f64; 2]>| -> usize {
            let key = (a.min(b), a.max(b));
            *mid.entry(key).or_insert_with(|| {
                let (p, q) = (nodes[a], nodes[b]);
                nodes.push([(p[0] + q[0]) / 2.0, (p[1] + q[1]) / 2.0]);
                nodes.len() - 1
            })
        };
        let mut cells = Vec::with_capacity(4 * self.cells.len());
        let mut marker = Vec::with_capacity(4 * self.cells.len());
        let mut parent = Vec::with_capacity(4 * self.cells.len());
        let mut child_of_edge: HashMap<(usize, usize), usize> = HashMap::new();
        for (c, t) in self.cells.iter().enumerate() {
            let [a, b, d] = *t;
            let (ab, bd, da) = (
                midpoint(a, b, &mut nodes),
                midpoint(b, d, &mut nodes),
                midpoint(d, a, &mut nodes),
            );
            let start = cells.len();
            cells.extend([[a, ab, da], [ab, b, bd], [da, bd, d], [ab, bd, da]]);
            child_of_edge.insert((a, ab), start);
            child_of_edge.insert((ab, b), start + 1);
            child_of_edge.insert((b, bd), start + 1);
            child_of_edge.insert((bd, d), start + 2);
            child_of_edge.insert((d, da), start + 2);
            child_of_edge.insert((da, a), start);
            for _ in 0..4 {
                marker.push(self.cell_marker[c]);
                parent.push(c);
            }
        }
        let mut boundary = Vec::with_capacity(2 * self.boundary.len());
        for e in &self.boundary {
            let [p, q] = e.nodes;
            let m = mid.get(&(p.min(q), p.max(q))).copied().unwrap_or(p);
            for (s, t) in [(p, m), (m, q)] {
                let cell = child_of_edge
                    .get(&(s, t))
                    .or_else(|| child_of_edge.get(&(t, s)))
                    .copied()
                    .unwrap_or(e.cell * 4);
                boundary.push(BoundaryEdge {
                    nodes: [s, t],
                    kind: e.kind,
                    cell,
                });
            }
        }
        let mut m = Mesh {
            nodes,
            cells,
            cell_marker: marker,
            boundary,
            electrode_nodes: self.electrode_nodes.clone(),
        };
        m.orient_ccw();
        (m, parent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(n: usize, dx: f64) -> Vec<[f64; 2]> {
        (0..n).map(|i| [i as f64 * dx, 0.0]).collect()
    }

    #[test]
    fn electrodes_are_surface_nodes_and_cells_tile_the_domain() {
        let e = line(12, 1.0);
        let m = line_mesh(&e, &[], &LineMeshParams::default(), &[]).unwrap();
        for (k, &n) in m.electrode_nodes.iter().enumerate() {
            assert_eq!(m.nodes[n], e[k]);
        }
        // Total area = width × height of the (flat) box: cells tile it without gaps/overlaps.
        let xs: Vec<f64> = m.nodes.iter().map(|p| p[0]).collect();
        let zs: Vec<f64> = m.nodes.iter().map(|p| p[1]).collect();
        let w = xs.iter().cloned().fold(f64::MIN, f64::max)
            - xs.iter().cloned().fold(f64::MAX, f64::min);
        let h = zs.iter().cloned().fold(f64::MIN, f64::max)
            - zs.iter().cloned().fold(f64::MAX, f64::min);
        let area: f64 = (0..m.n_cells()).map(|c| m.signed_area(c)).sum();
        assert!((area / (w * h) - 1.0).abs() < 1e-9, "{area} vs {}", w * h);
        assert!((0..m.n_cells()).all(|c| m.signed_area(c) > 0.0));
        // Boundary: the surface edges span the width, the outer edges width + 2 heights.
        let len = |k: BoundaryKind| -> f64 {
            m.boundary
                .iter()
                .filter(|b| b.kind == k)
                .map(|b| {
                    let (p, q) = (m.nodes[b.nodes[0]], m.nodes[b.nodes[1]]);
                    (p[0] - q[0]).hypot(p[1] - q[1])
                })
                .sum()
        };
        assert!((len(BoundaryKind::Surface) / w - 1.0).abs() < 1e-9);
        assert!((len(BoundaryKind::Subsurface) / (w + 2.0 * h) - 1.0).abs() < 1e-9);
        // The boundary lies at least 8 line lengths out.
        assert!(w > 2.0 * 8.0 * 11.0 && h > 8.0 * 11.0);
    }

    #[test]
    fn h2_refinement_keeps_area_and_boundary() {
        let e = line(6, 2.0);
        let m = line_mesh(&e, &[], &LineMeshParams::default(), &[]).unwrap();
        let (f, parent) = m.refine_h2();
        assert_eq!(f.n_cells(), 4 * m.n_cells());
        for c in 0..m.n_cells() {
            let kids: f64 = (0..f.n_cells())
                .filter(|&k| parent[k] == c)
                .map(|k| f.signed_area(k))
                .sum();
            assert!((kids / m.signed_area(c) - 1.0).abs() < 1e-12);
        }
        assert_eq!(f.boundary.len(), 2 * m.boundary.len());
        for b in &f.boundary {
            assert!(f.cells[b.cell].contains(&b.nodes[0]) && f.cells[b.cell].contains(&b.nodes[1]));
        }
    }

    #[test]
    fn topography_and_interface_are_honoured() {
        let e: Vec<[f64; 2]> = (0..10).map(|i| [i as f64, 0.3 * i as f64]).collect();
        let iface = Interface {
            points: vec![[-5.0, -3.0], [20.0, 1.0]],
        };
        let m = line_mesh(
            &e,
            &[],
            &LineMeshParams::default(),
            std::slice::from_ref(&iface),
        )
        .unwrap();
        for (k, &n) in m.electrode_nodes.iter().enumerate() {
            assert_eq!(m.nodes[n], e[k]);
        }
        // Every cell marked below the interface lies below it, every cell above lies above.
        let cent = m.centroids();
        for (c, p) in cent.iter().enumerate() {
            let zi = interp(&iface.points, p[0]);
            match m.cell_marker[c] {
                MARKER_BELOW => assert!(p[1] < zi + 1e-9, "cell {c} at {p:?} vs {zi}"),
                MARKER_ABOVE => assert!(p[1] > zi - 1e-9, "cell {c} at {p:?} vs {zi}"),
                _ => {}
            }
        }
        assert!(m.cell_marker.contains(&MARKER_BELOW) && m.cell_marker.contains(&MARKER_ABOVE));
    }
}

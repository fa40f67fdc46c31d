//! The parameter grid of the tomography: a terrain-following grid of quadrilateral cells
//! whose columns merge pairwise with depth.
//!
//! **Choice (documented for the lead):** instead of pyGIMLi's unstructured triangles
//! (`createParaMesh`), the model is a structured grid. Base columns are vertical lines at
//! `x_i`; node row `k` lies at depth `d_k` below the surface. Cell row `k` joins `f_k`
//! base columns into one cell (`f_k` = 1, 2, 4, … grows with depth so that cells stay
//! roughly square as rows thicken), which gives fine cells near the surface, where every ray
//! starts and ends, and coarse cells at depth — the same grading pyGIMLi's para-mesh has
//! (triangles of about half the sensor spacing at the surface, growing with depth). Node row
//! `k` sits at `S_k(x) − d_k`, where `S_k` is the surface sampled at the corner columns of
//! cell row `k` and interpolated linearly between them; every cell is therefore a convex
//! quadrilateral with two vertical sides and straight top and bottom edges, which is all the
//! shortest-path forward model needs (a straight segment between two points on a convex
//! cell's boundary stays inside the cell). A merged cell's top edge carries the corner nodes
//! of the finer cells above it as extra boundary nodes. The top surface is the
//! piecewise-linear line through the sensors, so no cell lies above the ground.
//!
//! Defaults follow pyGIMLi's `createParaMesh`: the grid spans the sensors (`paraBoundary =
//! 0`), its depth is 0.4 × the sensor span (`paraDepth = 0`), a column boundary passes
//! through every sensor (a mesh node sits at every sensor) and base columns are at most half
//! the median geophone spacing wide (pyGIMLi puts one node between neighbouring sensors). A
//! shot between two geophones therefore separates the cells on either side of it, which
//! near-offset picks need.
//!
//! Cells are numbered row by row from the top, left to right within a row.

use serde::{Deserialize, Serialize};

use super::data::{TravelTimes, interp_clamped};

/// How to lay out the grid; `None` fields take the data-derived defaults above.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GridOptions {
    /// Widest base column, m (default: half the median geophone spacing, at least span/800).
    /// Gaps between sensors are split further by `columns_per_gap`.
    pub dx_m: Option<f64>,
    /// Depth of the grid below the surface, m (default 0.4 × sensor span).
    pub depth_m: Option<f64>,
    /// Thickness of the top row, m (default: the median base column width).
    pub dz_top_m: Option<f64>,
    /// Factor by which each row is thicker than the one above (default 1.15).
    pub dz_growth: f64,
    /// Largest row thickness, m (default: none beyond the depth).
    pub dz_max_m: Option<f64>,
    /// Explicit node depths below the surface, m (first 0, increasing); overrides the above.
    pub depths_m: Option<Vec<f64>>,
    /// Merge columns pairwise with depth so that cells stay about square (default true).
    pub coarsen_with_depth: bool,
    /// Split every gap between neighbouring sensors into at least this many columns
    /// (default 2: pyGIMLi's para-mesh puts one node between neighbouring sensors).
    pub columns_per_gap: usize,
}

impl Default for GridOptions {
    fn default() -> Self {
        GridOptions {
            dx_m: None,
            depth_m: None,
            dz_top_m: None,
            dz_growth: 1.15,
            dz_max_m: None,
            depths_m: None,
            coarsen_with_depth: true,
            columns_per_gap: 2,
        }
    }
}

/// A terrain-following grid of cells (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grid {
    /// Base column positions along the line, m (increasing).
    pub x_m: Vec<f64>,
    /// Surface elevation at each base column, m.
    pub surface_z_m: Vec<f64>,
    /// Depth below the surface of each node row, m (`nz + 1`, first 0, increasing).
    pub depth_m: Vec<f64>,
    /// Base columns per cell in each cell row (`nz`; 1, 2, 4, …, non-decreasing).
    pub merge: Vec<usize>,
    /// Index of the first cell of each row (`nz + 1`; the last is the cell count).
    pub row_start: Vec<usize>,
    /// How the grid was laid out (defaults used).
    pub notes: Vec<String>,
}

/// Why a grid could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GridError {
    /// The sensors do not span a line.
    #[error("the sensors do not span a line (all at x = {0} m)")]
    NoSpan(f64),
    /// An option is out of range.
    #[error("grid option {name} = {value} is out of range ({why})")]
    BadOption {
        /// Option name.
        name: &'static str,
        /// Its value.
        value: f64,
        /// What is required.
        why: &'static str,
    },
}

impl Grid {
    /// Number of base columns.
    pub fn n_columns(&self) -> usize {
        self.x_m.len() - 1
    }

    /// Number of rows of cells.
    pub fn nz(&self) -> usize {
        self.depth_m.len() - 1
    }

    /// Number of cells.
    pub fn n_cells(&self) -> usize {
        self.row_start.last().copied().unwrap_or(0)
    }

    /// The cells of row `k`.
    pub fn row_cells(&self, k: usize) -> std::ops::Range<usize> {
        self.row_start[k]..self.row_start[k + 1]
    }

    /// The row of a cell.
    pub fn cell_row(&self, cell: usize) -> usize {
        self.row_start.partition_point(|&s| s <= cell) - 1
    }

    /// Whether base column `i` is a cell corner in a row merging `f` columns.
    pub fn is_corner(&self, i: usize, f: usize) -> bool {
        i.is_multiple_of(f) || i == self.n_columns()
    }

    /// First and last base column of a cell.
    pub fn cell_columns(&self, cell: usize) -> (usize, usize) {
        let k = self.cell_row(cell);
        let f = self.merge[k];
        let b = cell - self.row_start[k];
        (b * f, ((b + 1) * f).min(self.n_columns()))
    }

    /// Base columns per cell that fix the shape of node row `k` (that of the cell row below
    /// it; the bottom row takes the last cell row's).
    fn geometry_merge(&self, k: usize) -> usize {
        self.merge[k.min(self.nz() - 1)]
    }

    /// Base columns between nodes of node row `k` (the finer of the two cell rows it bounds).
    pub fn node_merge(&self, k: usize) -> usize {
        self.merge[k.saturating_sub(1).min(self.nz() - 1)]
    }

    /// Surface elevation seen by node row `k` at base column `i`: the surface at the corner
    /// columns of the cell row below, linear in between (module docs).
    fn row_surface(&self, k: usize, i: usize) -> f64 {
        let f = self.geometry_merge(k);
        let n = self.n_columns();
        let a = (i / f) * f;
        if a == i || a >= n {
            return self.surface_z_m[i.min(n)];
        }
        let b = (a + f).min(n);
        let w = (self.x_m[i] - self.x_m[a]) / (self.x_m[b] - self.x_m[a]);
        self.surface_z_m[a] + w * (self.surface_z_m[b] - self.surface_z_m[a])
    }

    /// Position of node row `k` at base column `i`, m.
    pub fn node(&self, k: usize, i: usize) -> (f64, f64) {
        (self.x_m[i], self.row_surface(k, i) - self.depth_m[k])
    }

    /// Corners of a cell: top-left, top-right, bottom-left, bottom-right, m.
    pub fn cell_corners(&self, cell: usize) -> [(f64, f64); 4] {
        let k = self.cell_row(cell);
        let (i0, i1) = self.cell_columns(cell);
        [
            self.node(k, i0),
            self.node(k, i1),
            self.node(k + 1, i0),
            self.node(k + 1, i1),
        ]
    }

    /// Centre of a cell (mean of its four corners), m.
    pub fn cell_center(&self, cell: usize) -> (f64, f64) {
        let c = self.cell_corners(cell);
        (
            0.25 * (c[0].0 + c[1].0 + c[2].0 + c[3].0),
            0.25 * (c[0].1 + c[1].1 + c[2].1 + c[3].1),
        )
    }

    /// Depth of a cell centre below the surface, m.
    pub fn cell_depth(&self, cell: usize) -> f64 {
        let (x, z) = self.cell_center(cell);
        self.surface_at(x) - z
    }

    /// Area of a cell, m²: a trapezoid with vertical sides,
    /// `Δx · (h_left + h_right)/2`.
    pub fn cell_area(&self, cell: usize) -> f64 {
        let c = self.cell_corners(cell);
        (c[1].0 - c[0].0) * 0.5 * ((c[0].1 - c[2].1) + (c[1].1 - c[3].1))
    }

    /// All cell centres, m.
    pub fn cell_centers(&self) -> Vec<(f64, f64)> {
        (0..self.n_cells()).map(|c| self.cell_center(c)).collect()
    }

    /// Surface elevation at `x_m` (linear between base columns, constant beyond).
    pub fn surface_at(&self, x_m: f64) -> f64 {
        let j = self.x_m.partition_point(|&c| c <= x_m);
        if j == 0 {
            return self.surface_z_m[0];
        }
        if j >= self.x_m.len() {
            return self.surface_z_m[self.x_m.len() - 1];
        }
        let (x0, x1) = (self.x_m[j - 1], self.x_m[j]);
        let w = (x_m - x0) / (x1 - x0);
        self.surface_z_m[j - 1] + w * (self.surface_z_m[j] - self.surface_z_m[j - 1])
    }

    /// The cell containing `(x, z)`, if any.
    pub fn cell_at(&self, x_m: f64, z_m: f64) -> Option<usize> {
        let n = self.n_columns();
        if x_m < self.x_m[0] || x_m > self.x_m[n] {
            return None;
        }
        let i = self
            .x_m
            .partition_point(|&c| c <= x_m)
            .saturating_sub(1)
            .min(n - 1);
        let w = (x_m - self.x_m[i]) / (self.x_m[i + 1] - self.x_m[i]);
        let at = |k: usize| {
            let (_, za) = self.node(k, i);
            let (_, zb) = self.node(k, i + 1);
            za + w * (zb - za)
        };
        if z_m > at(0) + 1e-9 || z_m < at(self.nz()) - 1e-9 {
            return None;
        }
        let k = (0..self.nz())
            .find(|&k| z_m >= at(k + 1) - 1e-12)
            .unwrap_or(self.nz() - 1);
        Some(self.row_start[k] + i / self.merge[k])
    }

    /// Pairs of neighbouring cells `(a, b, vertical)`: `vertical` is true when `b` lies
    /// below `a` (the pair shares part of a horizontal edge).
    pub fn neighbour_pairs(&self) -> Vec<(usize, usize, bool)> {
        let mut out = Vec::with_capacity(2 * self.n_cells());
        for k in 0..self.nz() {
            let cells = self.row_cells(k);
            for c in cells.clone() {
                if c + 1 < cells.end {
                    out.push((c, c + 1, false));
                }
                if k + 1 < self.nz() {
                    let (i0, _) = self.cell_columns(c);
                    out.push((c, self.row_start[k + 1] + i0 / self.merge[k + 1], true));
                }
            }
        }
        out
    }

    /// A grid spanning the sensors of `tt` (module docs give the defaults).
    pub fn for_survey(tt: &TravelTimes, opts: &GridOptions) -> Result<Grid, GridError> {
        let mut pts: Vec<(f64, f64)> = tt
            .sensor_x_m
            .iter()
            .copied()
            .zip(tt.sensor_z_m.iter().copied())
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        pts.dedup_by(|a, b| (a.0 - b.0).abs() < 1e-9);
        let (Some(first), Some(last)) = (pts.first().copied(), pts.last().copied()) else {
            return Err(GridError::NoSpan(0.0));
        };
        let span = last.0 - first.0;
        if span.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return Err(GridError::NoSpan(first.0));
        }
        let mut notes = Vec::new();
        let dx = match opts.dx_m {
            Some(d) if d > 0.0 && d.is_finite() => d.max(span / 4000.0),
            Some(d) => {
                return Err(GridError::BadOption {
                    name: "dx_m",
                    value: d,
                    why: "a positive length",
                });
            }
            None => {
                let d =
                    (0.5 * median_geophone_spacing(tt).unwrap_or(span / 25.0)).max(span / 800.0);
                notes.push(format!(
                    "base column width ≤ {d:.3} m (half the median geophone spacing)"
                ));
                d
            }
        };
        let x_m = columns_through_sensors(&pts, dx, opts.columns_per_gap);
        let typical_width = {
            let mut w: Vec<f64> = x_m.windows(2).map(|w| w[1] - w[0]).collect();
            w.sort_by(f64::total_cmp);
            w[w.len() / 2]
        };
        let surface_z_m: Vec<f64> = x_m
            .iter()
            .map(|&x| interp_clamped(&pts, x).unwrap_or(0.0))
            .collect();
        let depth_m = match &opts.depths_m {
            Some(d) => {
                let ok = d.len() >= 2
                    && d[0] == 0.0
                    && d.windows(2).all(|w| w[1] > w[0])
                    && d.iter().all(|v| v.is_finite());
                if !ok {
                    return Err(GridError::BadOption {
                        name: "depths_m",
                        value: d.len() as f64,
                        why: "at least two finite depths, the first 0, increasing",
                    });
                }
                d.clone()
            }
            None => {
                let depth = match opts.depth_m {
                    Some(v) if v > 0.0 && v.is_finite() => v,
                    Some(v) => {
                        return Err(GridError::BadOption {
                            name: "depth_m",
                            value: v,
                            why: "a positive depth",
                        });
                    }
                    None => {
                        let v = 0.4 * span;
                        notes.push(format!(
                            "grid depth {v:.2} m (0.4 × the sensor span, as pyGIMLi)"
                        ));
                        v
                    }
                };
                let dz0 = opts.dz_top_m.unwrap_or(typical_width);
                let growth = opts.dz_growth;
                if dz0 <= 0.0 || !dz0.is_finite() || !(1.0..=3.0).contains(&growth) {
                    return Err(GridError::BadOption {
                        name: "dz_top_m / dz_growth",
                        value: dz0,
                        why: "dz_top_m > 0 and 1 ≤ dz_growth ≤ 3",
                    });
                }
                let dz_max = opts.dz_max_m.unwrap_or(f64::INFINITY).max(dz0);
                graded_depths(depth, dz0, growth, dz_max)
            }
        };
        let nz = depth_m.len() - 1;
        let n = x_m.len() - 1;
        let mut merge = vec![1usize; nz];
        if opts.coarsen_with_depth {
            let typical = typical_width;
            let mut f = 1usize;
            for k in 1..nz {
                let h = depth_m[k + 1] - depth_m[k];
                while 2 * f <= n && (2 * f) as f64 * typical <= h * (1.0 + 1e-9) {
                    f *= 2;
                }
                merge[k] = f;
            }
        }
        let mut grid = Grid {
            x_m,
            surface_z_m,
            depth_m,
            merge,
            row_start: vec![],
            notes,
        };
        grid.fix_overlaps();
        grid.row_start = std::iter::once(0)
            .chain(grid.merge.iter().scan(0usize, |acc, &f| {
                *acc += n.div_ceil(f);
                Some(*acc)
            }))
            .collect();
        Ok(grid)
    }

    /// Undo merging below any row whose nodes would not lie below the row above
    /// (strongly curved topography under a merged row); keeps every cell convex.
    fn fix_overlaps(&mut self) {
        let n = self.n_columns();
        let nz = self.nz();
        for _ in 0..nz {
            let bad = (1..=nz).find(|&k| {
                (0..=n).any(|i| {
                    let (_, up) = self.node(k - 1, i);
                    let (_, lo) = self.node(k, i);
                    lo >= up - 1e-6 * (self.depth_m[k] - self.depth_m[k - 1])
                })
            });
            let Some(k) = bad else { return };
            let (g, g_up) = (k.min(nz - 1), (k - 1).min(nz - 1));
            let f_up = self.merge[g_up];
            if self.merge[g] <= f_up {
                return;
            }
            for m in self.merge.iter_mut().skip(g) {
                *m = (*m).min(f_up);
            }
            self.notes.push(format!(
                "columns not merged below {:.2} m: the topography is too curved for coarser cells",
                self.depth_m[g]
            ));
        }
    }
}

/// Column positions: every sensor x (sensors closer than a tenth of `dx` to the previous
/// column share it), with each gap split into at least `min_parts` equal parts no wider
/// than `dx`.
fn columns_through_sensors(pts: &[(f64, f64)], dx: f64, min_parts: usize) -> Vec<f64> {
    let mut anchors: Vec<f64> = Vec::with_capacity(pts.len());
    for &(x, _) in pts {
        match anchors.last() {
            Some(&last) if x - last < 0.1 * dx => {}
            _ => anchors.push(x),
        }
    }
    if let (Some(&a), Some(&(b, _))) = (anchors.last(), pts.last())
        && b - a > 1e-9
    {
        if anchors.len() > 1 && b - a < 0.1 * dx {
            anchors.pop();
        }
        anchors.push(b);
    }
    // `pts` is not empty (the caller checked), so neither is `anchors`.
    let mut x = vec![anchors[0]];
    for w in anchors.windows(2) {
        let n = (((w[1] - w[0]) / dx - 1e-9).ceil() as usize).max(min_parts.max(1));
        for j in 1..=n {
            x.push(w[0] + (w[1] - w[0]) * j as f64 / n as f64);
        }
    }
    x
}

/// Node depths 0, dz0, dz0 + dz0·g, … (each row `growth` times thicker, at most `dz_max`)
/// down to `depth`; the last row is stretched so the grid ends exactly at `depth`.
pub fn graded_depths(depth: f64, dz0: f64, growth: f64, dz_max: f64) -> Vec<f64> {
    let mut d = vec![0.0];
    let mut h = dz0;
    while d.last().copied().unwrap_or(0.0) + 0.5 * h < depth && d.len() < 2000 {
        let next = d.last().copied().unwrap_or(0.0) + h;
        d.push(next);
        h = (h * growth).min(dz_max);
    }
    if d.len() == 1 {
        d.push(depth);
    } else if let Some(last) = d.last_mut() {
        *last = depth;
    }
    d
}

/// Median spacing of the distinct geophone positions (sorted by x).
fn median_geophone_spacing(tt: &TravelTimes) -> Option<f64> {
    let mut x: Vec<f64> = tt.geophones().iter().map(|&g| tt.sensor_x_m[g]).collect();
    x.sort_by(f64::total_cmp);
    x.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    let mut gaps: Vec<f64> = x.windows(2).map(|w| w[1] - w[0]).collect();
    if gaps.is_empty() {
        return None;
    }
    gaps.sort_by(f64::total_cmp);
    Some(gaps[gaps.len() / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(n: usize, dx: f64) -> TravelTimes {
        TravelTimes {
            sensor_x_m: (0..n).map(|i| i as f64 * dx).collect(),
            sensor_z_m: (0..n).map(|i| 0.1 * i as f64).collect(),
            shot: vec![0; n - 1],
            geophone: (1..n).collect(),
            time_s: vec![0.01; n - 1],
            error_s: None,
            format: "test".into(),
            guessed: false,
            notes: vec![],
        }
    }

    #[test]
    fn defaults_follow_pygimli_para_mesh() {
        let g = Grid::for_survey(&line(48, 2.0), &GridOptions::default()).unwrap();
        assert_eq!(g.n_columns(), 94);
        assert!((g.depth_m.last().unwrap() - 0.4 * 94.0).abs() < 1e-12);
        assert!((g.depth_m[1] - 1.0).abs() < 1e-12);
        // The surface passes through the sensors (every second column).
        assert!((g.surface_z_m[20] - 1.0).abs() < 1e-12);
        // Columns merge with depth, never in the top row, never getting finer.
        assert_eq!(g.merge[0], 1);
        assert!(g.merge.windows(2).all(|w| w[1] >= w[0] && w[1] % w[0] == 0));
        assert!(*g.merge.last().unwrap() >= 4, "{:?}", g.merge);
        // Areas add up to span × depth (the surface is a straight line here).
        let total: f64 = (0..g.n_cells()).map(|c| g.cell_area(c)).sum();
        assert!((total - 94.0 * 37.6).abs() < 1e-9, "{total}");
        // Every cell centre lies in its own cell.
        for c in 0..g.n_cells() {
            let (x, z) = g.cell_center(c);
            assert_eq!(g.cell_at(x, z), Some(c));
        }
    }

    #[test]
    fn curved_topography_keeps_cells_convex() {
        let mut tt = line(30, 1.0);
        for (x, z) in tt.sensor_x_m.iter().zip(tt.sensor_z_m.iter_mut()) {
            *z = 4.0 * (x / 3.0).sin();
        }
        let g = Grid::for_survey(&tt, &GridOptions::default()).unwrap();
        for c in 0..g.n_cells() {
            let [tl, tr, bl, br] = g.cell_corners(c);
            assert!(tl.1 > bl.1 && tr.1 > br.1, "cell {c}");
            assert!(g.cell_area(c) > 0.0);
        }
        // Areas add up to the area between the top and bottom node rows.
        let total: f64 = (0..g.n_cells()).map(|c| g.cell_area(c)).sum();
        let h = |i: usize| g.node(0, i).1 - g.node(g.nz(), i).1;
        let expected: f64 = (0..g.n_columns())
            .map(|i| (g.x_m[i + 1] - g.x_m[i]) * 0.5 * (h(i) + h(i + 1)))
            .sum();
        assert!(
            (total - expected).abs() < 1e-9 * total,
            "{total} vs {expected}"
        );
    }

    #[test]
    fn graded_depths_end_at_the_depth() {
        let d = graded_depths(10.0, 1.0, 1.0, 5.0);
        assert_eq!(d, (0..=10).map(f64::from).collect::<Vec<_>>());
        let d = graded_depths(30.0, 0.5, 1.2, 4.0);
        assert_eq!(*d.last().unwrap(), 30.0);
        assert!(d.windows(2).all(|w| w[1] > w[0]));
    }
}

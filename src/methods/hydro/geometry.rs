//! Where a hydrological model's cells are (issue 26, item 2): a structured grid in the
//! model's own coordinates — from a MODFLOW 6 DIS grid file or a ParFlow binary file — and a
//! geophysical line placed in it by its origin and azimuth.
//!
//! **MODFLOW** (Langevin et al. 2017, MODFLOW 6 "mf6io", DIS and the binary grid file):
//! `XORIGIN, YORIGIN` is the lower-left corner of the grid, `ANGROT` its counter-clockwise
//! rotation about that corner in degrees; columns run along the rotated x axis with widths
//! `DELR`, rows are numbered from the top (the far side from the origin) with widths `DELC`;
//! `TOP` is the top of layer 1 per cell of a layer and `BOTM` the bottom of every layer. A
//! world point `p` is in the grid's frame `q = R(−ANGROT) (p − origin)`; its column is where
//! `q.x` falls in the cumulative `DELR`, its row where `Σ DELC − q.y` falls in the cumulative
//! `DELC`, its layer where `z` falls between a cell's top and bottoms — the convention of
//! flopy's `StructuredGrid.intersect`, checked against it in the tests.
//!
//! **ParFlow** (ParFlow manual, "ParFlow Binary Files (.pfb)"): origin `(X, Y, Z)` the lower
//! corner, unrotated, cell `(i, j, k)` spanning `[X + i·DX, X + (i+1)·DX]` and likewise in y
//! and z, k counted upwards. Here it becomes the same grid with layer 0 the top
//! (`k = NZ − 1 − layer`) and row 0 the far side (`j = NY − 1 − row`).
//!
//! **A line** (`line_origin`, `line_azimuth_deg` in a project): the point at distance `d`
//! along it is `origin + d (sin a, cos a)`, the azimuth `a` clockwise from grid north (+y).

use super::grb::{GrbFile, GridShape};
use super::output::{LayerOrder, OutputRecord};
use super::pfb::PfbFile;

/// Why a grid could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GeometryError {
    /// Not a structured (DIS) grid.
    #[error("{file}: expected a structured (DIS) grid, found {found}")]
    NotStructured {
        /// The grid file.
        file: String,
        /// What it is.
        found: String,
    },
    /// Array lengths that do not fit the grid.
    #[error("{file}: expected {expected}, found {found}")]
    Shape {
        /// The grid file.
        file: String,
        /// What the grid needs.
        expected: String,
        /// What is there.
        found: String,
    },
}

/// A structured grid in the model's coordinates (module docs), in the model's length unit.
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredGrid {
    /// The lower-left corner (x, y).
    pub origin_xy: [f64; 2],
    /// Counter-clockwise rotation about the origin, degrees.
    pub angrot_deg: f64,
    /// Column widths (NCOL).
    pub delr: Vec<f64>,
    /// Row widths, row 0 the far side from the origin (NROW).
    pub delc: Vec<f64>,
    /// Top of the first layer per cell of a layer (NROW × NCOL, row by row).
    pub top: Vec<f64>,
    /// Bottom of every layer per cell (NLAY × NROW × NCOL).
    pub botm: Vec<f64>,
}

/// `(layer, row, column)`, 0-based.
pub type CellIndex = (usize, usize, usize);

/// The index of the interval of the cumulative `widths` holding `t` (`None` outside).
fn interval(widths: &[f64], t: f64) -> Option<usize> {
    // Also refuses NaN.
    if t.is_nan() || t < 0.0 {
        return None;
    }
    let mut edge = 0.0;
    for (i, w) in widths.iter().enumerate() {
        edge += w;
        if t <= edge {
            return Some(i);
        }
    }
    None
}

impl StructuredGrid {
    /// The grid of a MODFLOW 6 DIS grid file.
    pub fn from_grb(g: &GrbFile) -> Result<StructuredGrid, GeometryError> {
        let file = g.file.display().to_string();
        let GridShape::Dis {
            nrow,
            ncol,
            delr,
            delc,
        } = &g.shape
        else {
            return Err(GeometryError::NotStructured {
                file,
                found: format!("a {} grid", g.grid_type.name()),
            });
        };
        let grid = StructuredGrid {
            origin_xy: [g.xorigin, g.yorigin],
            angrot_deg: g.angrot,
            delr: delr.clone(),
            delc: delc.clone(),
            top: g.top.clone(),
            botm: g.botm.clone(),
        };
        let ncpl = nrow * ncol;
        if grid.top.len() != ncpl || grid.botm.is_empty() || !grid.botm.len().is_multiple_of(ncpl) {
            return Err(GeometryError::Shape {
                file,
                expected: format!("TOP of {ncpl} values and BOTM a multiple of {ncpl}"),
                found: format!("{} and {}", grid.top.len(), grid.botm.len()),
            });
        }
        Ok(grid)
    }

    /// The grid of a ParFlow binary file (module docs).
    pub fn from_pfb(p: &PfbFile) -> StructuredGrid {
        let [nx, ny, nz] = p.n;
        let [dx, dy, dz] = p.spacing;
        let top_z = p.origin[2] + nz as f64 * dz;
        StructuredGrid {
            origin_xy: [p.origin[0], p.origin[1]],
            angrot_deg: 0.0,
            delr: vec![dx; nx],
            delc: vec![dy; ny],
            top: vec![top_z; nx * ny],
            botm: (0..nz)
                .flat_map(|l| std::iter::repeat_n(top_z - (l + 1) as f64 * dz, nx * ny))
                .collect(),
        }
    }

    /// Layers.
    pub fn nlay(&self) -> usize {
        self.botm.len() / (self.delr.len() * self.delc.len()).max(1)
    }

    /// A world point in the grid's frame: `R(−angrot) (p − origin)`.
    pub fn to_local(&self, x: f64, y: f64) -> [f64; 2] {
        let (s, c) = self.angrot_deg.to_radians().sin_cos();
        let (dx, dy) = (x - self.origin_xy[0], y - self.origin_xy[1]);
        [c * dx + s * dy, -s * dx + c * dy]
    }

    /// The (row, column) under a world point, `None` outside the grid.
    pub fn row_col(&self, x: f64, y: f64) -> Option<(usize, usize)> {
        let [u, v] = self.to_local(x, y);
        let height: f64 = self.delc.iter().sum();
        Some((interval(&self.delc, height - v)?, interval(&self.delr, u)?))
    }

    /// The cell holding a world point at elevation `z`, `None` outside the grid.
    pub fn locate(&self, x: f64, y: f64, z: f64) -> Option<CellIndex> {
        let (row, col) = self.row_col(x, y)?;
        let ncpl = self.delr.len() * self.delc.len();
        let cell = row * self.delr.len() + col;
        let mut above = *self.top.get(cell)?;
        for layer in 0..self.nlay() {
            let below = *self.botm.get(layer * ncpl + cell)?;
            if z <= above && z >= below {
                return Some((layer, row, col));
            }
            above = below;
        }
        None
    }

    /// The ParFlow array index `(k, j, i)` of a cell of a grid made by [`Self::from_pfb`].
    pub fn pfb_index(&self, (layer, row, col): CellIndex) -> [usize; 3] {
        [
            self.nlay().saturating_sub(1 + layer),
            self.delc.len().saturating_sub(1 + row),
            col,
        ]
    }
}

/// A geophysical line in the model's coordinates (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// Where distance 0 is, (x, y).
    pub origin_xy: [f64; 2],
    /// Clockwise from grid north, degrees.
    pub azimuth_deg: f64,
}

impl Line {
    /// The point at `distance` along the line: `origin + d (sin a, cos a)`.
    pub fn point(&self, distance: f64) -> [f64; 2] {
        let (s, c) = self.azimuth_deg.to_radians().sin_cos();
        [
            self.origin_xy[0] + distance * s,
            self.origin_xy[1] + distance * c,
        ]
    }
}

/// The water table at one point of a line, from a heads record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WaterTablePoint {
    /// Distance along the line.
    pub distance: f64,
    /// The head of the uppermost active layer under the point (model length unit).
    pub head: f64,
    /// Its layer (0 the top).
    pub layer: usize,
    /// Depth of that head below the surface given for the point: `surface − head`.
    pub depth: f64,
}

/// The water table along `line` at `distances` from the heads `record` of a model on `grid`
/// (values in `order`): at each point the head of the uppermost active layer of the cell
/// under it — in an unconfined top layer the water table itself; where the top layers are
/// dry or inactive, the first layer that holds water (MODFLOW writes HDRY or HNOFLO there,
/// masked by the reader) — and its depth below `surface(distance)`. `None` for a point
/// outside the grid or over a column with no active layer.
pub fn water_table_along(
    grid: &StructuredGrid,
    record: &OutputRecord,
    order: LayerOrder,
    line: &Line,
    distances: &[f64],
    surface: &dyn Fn(f64) -> f64,
) -> Vec<Option<WaterTablePoint>> {
    let nlay = record.values.dim().0;
    distances
        .iter()
        .map(|&d| {
            let p = line.point(d);
            let (row, col) = grid.row_col(p[0], p[1])?;
            (0..nlay).find_map(|layer| {
                let idx = match order {
                    LayerOrder::TopFirst => [layer, row, col],
                    LayerOrder::BottomFirst => grid.pfb_index((layer, row, col)),
                };
                let active = *record.active.get(idx)?;
                let head = *record.values.get(idx)?;
                (active && head.is_finite()).then(|| WaterTablePoint {
                    distance: d,
                    head,
                    layer,
                    depth: surface(d) - head,
                })
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 rows × 3 columns × 2 layers: DELR 10, 20, 30; DELC 5, 15; top 50, bottoms 40 and 20.
    fn grid(angrot_deg: f64) -> StructuredGrid {
        StructuredGrid {
            origin_xy: [100.0, 200.0],
            angrot_deg,
            delr: vec![10.0, 20.0, 30.0],
            delc: vec![5.0, 15.0],
            top: vec![50.0; 6],
            botm: [vec![40.0; 6], vec![20.0; 6]].concat(),
        }
    }

    #[test]
    fn cells_are_found_as_flopy_finds_them_rotated_or_not() {
        // Oracle: flopy 3.11 `StructuredGrid(delr, delc, top, botm, xoff=100, yoff=200,
        // angrot=30).intersect(x, y, z)` gave (0, 1, 1) for (110, 215, 45), (1, 1, 1) for the
        // point 25 along and 3 across the rotated axes at z 30, and "outside" for (150, 150).
        let g = grid(30.0);
        assert_eq!(g.locate(110.0, 215.0, 45.0), Some((0, 1, 1)));
        let (s, c) = 30f64.to_radians().sin_cos();
        let p = [100.0 + 25.0 * c - 3.0 * s, 200.0 + 25.0 * s + 3.0 * c];
        assert_eq!(g.locate(p[0], p[1], 30.0), Some((1, 1, 1)));
        assert_eq!(g.locate(150.0, 150.0, 30.0), None);
        // Unrotated: row 0 is the far (top) row, 15–20 above the origin's y.
        let g = grid(0.0);
        assert_eq!(g.locate(105.0, 218.0, 45.0), Some((0, 0, 0)));
        assert_eq!(g.locate(159.0, 201.0, 21.0), Some((1, 1, 2)));
        assert_eq!(g.locate(105.0, 218.0, 10.0), None, "below the last layer");
        assert_eq!(g.locate(99.0, 218.0, 45.0), None, "west of the grid");
        assert_eq!(g.nlay(), 2);
    }

    #[test]
    fn the_water_table_along_a_line_is_the_uppermost_active_head() {
        use ndarray::Array3;
        // The 2 × 3 × 2 grid above, unrotated; heads 46 in the top layer, but its first column
        // dry (masked), where the second layer's 38 is the water table. A line along the
        // bottom row (y 201) eastwards from x 100: distances 5, 25, 45 are columns 0, 1, 2;
        // 70 is past the grid. Surface at 50: depths 12, 4, 4.
        let g = grid(0.0);
        let mut values = Array3::from_elem((2, 2, 3), 46.0);
        let mut active = Array3::from_elem((2, 2, 3), true);
        for r in 0..2 {
            values[[1, r, 0]] = 38.0;
            values[[0, r, 0]] = -1e30;
            active[[0, r, 0]] = false;
        }
        let record = OutputRecord {
            kstp: Some(1),
            kper: Some(1),
            ntrans: None,
            pertim: None,
            totim: Some(1.0),
            output_index: None,
            quantity: "HEAD".into(),
            values: values.clone(),
            active: active.clone(),
        };
        let line = Line {
            origin_xy: [100.0, 201.0],
            azimuth_deg: 90.0,
        };
        let wt = water_table_along(
            &g,
            &record,
            LayerOrder::TopFirst,
            &line,
            &[5.0, 25.0, 45.0, 70.0],
            &|_| 50.0,
        );
        let depth: Vec<Option<(usize, f64)>> =
            wt.iter().map(|p| p.map(|p| (p.layer, p.depth))).collect();
        assert_eq!(
            depth,
            vec![Some((1, 12.0)), Some((0, 4.0)), Some((0, 4.0)), None]
        );
        // A column with no active layer gives no water table.
        let mut dry = record;
        dry.active.fill(false);
        let wt = water_table_along(&g, &dry, LayerOrder::TopFirst, &line, &[5.0], &|_| 50.0);
        assert_eq!(wt, vec![None]);
    }

    #[test]
    fn a_line_runs_along_its_azimuth() {
        let east = Line {
            origin_xy: [10.0, 20.0],
            azimuth_deg: 90.0,
        };
        let p = east.point(5.0);
        assert!(
            (p[0] - 15.0).abs() < 1e-12 && (p[1] - 20.0).abs() < 1e-12,
            "{p:?}"
        );
        let north = Line {
            azimuth_deg: 0.0,
            ..east
        };
        let p = north.point(5.0);
        assert!(
            (p[0] - 10.0).abs() < 1e-12 && (p[1] - 25.0).abs() < 1e-12,
            "{p:?}"
        );
    }
}

//! A hydrological model's state as the geophysics samples it: the water table from pressure
//! head, saturation or heads, and the volumetric water content θ = φ·S at points of a
//! geophysical section (distance along a [`Line`], elevation).
//!
//! Phases: (1) the cell under a point ([`StructuredGrid::locate`]); (2) its values in the
//! array's layer order; (3) the quantity asked. Every function returns `None` outside the
//! grid or in a masked (inactive, dry) cell — never a number the model does not hold.

use ndarray::Array3;

use super::geometry::{CellIndex, Line, StructuredGrid};
use super::output::LayerOrder;

/// A cell array of a model on `grid` with its mask, indexed as `order` says.
#[derive(Debug, Clone, PartialEq)]
pub struct CellArray {
    /// Values (`[layer, row, column]` for [`LayerOrder::TopFirst`], ParFlow's `[k, j, i]`
    /// for [`LayerOrder::BottomFirst`]).
    pub values: Array3<f64>,
    /// Whether each cell holds a value.
    pub active: Array3<bool>,
    /// How the arrays are indexed.
    pub order: LayerOrder,
}

impl CellArray {
    /// The value of `cell` (layer 0 the top), `None` when masked, non-finite or absent.
    pub fn at(&self, grid: &StructuredGrid, cell: CellIndex) -> Option<f64> {
        let idx = match self.order {
            LayerOrder::TopFirst => [cell.0, cell.1, cell.2],
            LayerOrder::BottomFirst => grid.pfb_index(cell),
        };
        let v = *self.values.get(idx)?;
        (*self.active.get(idx)? && v.is_finite()).then_some(v)
    }
}

/// Porosity of the model: one value, or a cell array.
#[derive(Debug, Clone, PartialEq)]
pub enum Porosity {
    /// One porosity everywhere (fraction).
    Uniform(f64),
    /// Per cell.
    Field(CellArray),
}

impl Porosity {
    /// φ of `cell`.
    pub fn at(&self, grid: &StructuredGrid, cell: CellIndex) -> Option<f64> {
        match self {
            Porosity::Uniform(v) => Some(*v),
            Porosity::Field(a) => a.at(grid, cell),
        }
    }
}

/// Elevation of the middle of `cell`: (top + bottom) / 2.
pub fn cell_centre_z(grid: &StructuredGrid, (layer, row, col): CellIndex) -> Option<f64> {
    let ncpl = grid.delr.len() * grid.delc.len();
    let c = row * grid.delr.len() + col;
    let top = if layer == 0 {
        *grid.top.get(c)?
    } else {
        *grid.botm.get((layer - 1) * ncpl + c)?
    };
    let bot = *grid.botm.get(layer * ncpl + c)?;
    Some(0.5 * (top + bot))
}

/// Top elevation of `cell`.
pub fn cell_top_z(grid: &StructuredGrid, (layer, row, col): CellIndex) -> Option<f64> {
    let ncpl = grid.delr.len() * grid.delc.len();
    let c = row * grid.delr.len() + col;
    if layer == 0 {
        grid.top.get(c).copied()
    } else {
        grid.botm.get((layer - 1) * ncpl + c).copied()
    }
}

/// The water-table elevation of column (`row`, `col`) from pressure head ψ (ParFlow's
/// `press`, length unit of the grid): the elevation where ψ(z) = 0, by linear interpolation
/// between the centres of the lowest unsaturated cell (ψ < 0) and the first saturated cell
/// below it (ψ ≥ 0): z = z₂ + (z₁ − z₂)·ψ₂ / (ψ₂ − ψ₁). For a hydrostatic column
/// (ψ = z_wt − z) this is exact. A column saturated to its top gives z = z_top-cell + ψ
/// (hydrostatic above the centre); a column unsaturated throughout gives `None`.
pub fn water_table_from_pressure(
    grid: &StructuredGrid,
    pressure: &CellArray,
    row: usize,
    col: usize,
) -> Option<f64> {
    let mut above: Option<(f64, f64)> = None;
    for layer in 0..grid.nlay() {
        let cell = (layer, row, col);
        let Some(psi) = pressure.at(grid, cell) else {
            continue;
        };
        let z = cell_centre_z(grid, cell)?;
        if psi >= 0.0 {
            return Some(match above {
                Some((z1, psi1)) => z + (z1 - z) * psi / (psi - psi1),
                None => z + psi,
            });
        }
        above = Some((z, psi));
    }
    None
}

/// The water-table elevation of column (`row`, `col`) from saturation: the top of the first
/// cell from the top with S ≥ `saturated` (0.999 for a fully saturated cell). Resolution one
/// cell: the capillary fringe above the water table is saturated too, so this is an upper
/// bound on the elevation by up to the fringe's height.
pub fn water_table_from_saturation(
    grid: &StructuredGrid,
    saturation: &CellArray,
    row: usize,
    col: usize,
    saturated: f64,
) -> Option<f64> {
    (0..grid.nlay()).find_map(|layer| {
        let cell = (layer, row, col);
        let s = saturation.at(grid, cell)?;
        (s >= saturated).then(|| cell_top_z(grid, cell)).flatten()
    })
}

/// Volumetric water content θ = φ·S (m³/m³) of the cell under world point (`x`, `y`) at
/// elevation `z`.
pub fn water_content_at(
    grid: &StructuredGrid,
    saturation: &CellArray,
    porosity: &Porosity,
    x: f64,
    y: f64,
    z: f64,
) -> Option<f64> {
    let cell = grid.locate(x, y, z)?;
    let s = saturation.at(grid, cell)?;
    let phi = porosity.at(grid, cell)?;
    Some(phi * s.clamp(0.0, 1.0))
}

/// The point of `line` at `distance` and the grid column under it.
pub fn column_at(grid: &StructuredGrid, line: &Line, distance: f64) -> Option<(usize, usize)> {
    let p = line.point(distance);
    grid.row_col(p[0], p[1])
}

/// The distances along `line`, every `step`, from `from` to `to`, at which the line is over
/// the grid.
pub fn distances_over_grid(
    grid: &StructuredGrid,
    line: &Line,
    from: f64,
    to: f64,
    step: f64,
) -> Vec<f64> {
    if step.is_nan() || step <= 0.0 || !from.is_finite() || !to.is_finite() || to < from {
        return Vec::new();
    }
    let n = ((to - from) / step).floor() as usize;
    (0..=n.min(100_000))
        .map(|i| from + i as f64 * step)
        .filter(|d| column_at(grid, line, *d).is_some())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ParFlow-like column grid: 4 cells along x of 10 m, 1 row, 10 layers of 1 m from
    /// elevation 90 to 100.
    fn grid() -> StructuredGrid {
        StructuredGrid {
            origin_xy: [0.0, 0.0],
            angrot_deg: 0.0,
            delr: vec![10.0; 4],
            delc: vec![1.0],
            top: vec![100.0; 4],
            botm: (0..10)
                .flat_map(|l| std::iter::repeat_n(99.0 - l as f64, 4))
                .collect(),
        }
    }

    /// A ParFlow array (`[k, j, i]`, k = 0 the bottom) of f(z centre).
    fn pfb_array(f: impl Fn(f64) -> f64) -> CellArray {
        let values = Array3::from_shape_fn((10, 1, 4), |(k, _, _)| f(90.5 + k as f64));
        CellArray {
            active: values.mapv(|_| true),
            values,
            order: LayerOrder::BottomFirst,
        }
    }

    #[test]
    fn a_hydrostatic_pressure_gives_its_water_table_exactly() {
        // ψ = z_wt − z with the water table at 95.3 m, between cell centres 95.5 and 94.5:
        // the interpolation is exact for a linear ψ.
        let g = grid();
        let p = pfb_array(|z| 95.3 - z);
        let z = water_table_from_pressure(&g, &p, 0, 2).expect("a water table");
        assert!((z - 95.3).abs() < 1e-12, "{z}");
        // Saturated to the top: hydrostatic above the top cell's centre.
        let p = pfb_array(|z| 100.7 - z);
        let z = water_table_from_pressure(&g, &p, 0, 0).expect("a water table");
        assert!((z - 100.7).abs() < 1e-12, "{z}");
        // Unsaturated throughout: none.
        let p = pfb_array(|_| -3.0);
        assert_eq!(water_table_from_pressure(&g, &p, 0, 0), None);
    }

    #[test]
    fn saturation_gives_the_top_of_the_first_saturated_cell_and_theta_is_phi_s() {
        let g = grid();
        // Saturated below 96 m (cells 90–96), 0.45 above.
        let s = pfb_array(|z| if z < 96.0 { 1.0 } else { 0.45 });
        assert_eq!(water_table_from_saturation(&g, &s, 0, 1, 0.999), Some(96.0));
        let phi = Porosity::Uniform(0.35);
        let wet = water_content_at(&g, &s, &phi, 15.0, 0.5, 93.2).expect("inside");
        let dry = water_content_at(&g, &s, &phi, 15.0, 0.5, 98.2).expect("inside");
        assert!((wet - 0.35).abs() < 1e-12 && (dry - 0.1575).abs() < 1e-12);
        assert_eq!(
            water_content_at(&g, &s, &phi, 45.0, 0.5, 93.0),
            None,
            "east of the grid"
        );
        assert_eq!(
            water_content_at(&g, &s, &phi, 15.0, 0.5, 89.0),
            None,
            "below it"
        );
        // A masked cell holds no value.
        let mut masked = s.clone();
        masked.active[[3, 0, 1]] = false;
        assert_eq!(water_content_at(&g, &masked, &phi, 15.0, 0.5, 93.2), None);
    }

    #[test]
    fn the_line_is_sampled_only_over_the_grid() {
        let g = grid();
        let line = Line {
            origin_xy: [-5.0, 0.5],
            azimuth_deg: 90.0,
        };
        let d = distances_over_grid(&g, &line, 0.0, 60.0, 10.0);
        assert_eq!(d, vec![10.0, 20.0, 30.0, 40.0]);
        assert_eq!(column_at(&g, &line, 12.0), Some((0, 0)));
        assert!(distances_over_grid(&g, &line, 0.0, 60.0, 0.0).is_empty());
    }
}

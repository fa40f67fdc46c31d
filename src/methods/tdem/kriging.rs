//! Plan-view maps of log10 ρ at chosen depths by ordinary kriging, with the kriging
//! standard deviation (Matheron 1963; the system as in Isaaks & Srivastava 1989, *An
//! Introduction to Applied Geostatistics*, ch. 12):
//!
//! [Γ 1; 1ᵀ 0] [w; μ] = [γ₀; 1], z* = Σ wᵢ zᵢ, σ²_OK = Σ wᵢ γ₀ᵢ + μ,
//!
//! with Γᵢⱼ = γ(|xᵢ − xⱼ|), γ₀ᵢ = γ(|xᵢ − x₀|) and γ a fitted (or, with few points, a default)
//! variogram model.

use super::data::Position;
use super::forward::LayeredEarth;
use super::linalg::{lu, lu_solve};
use ndarray::{Array1, Array2};
use serde::{Deserialize, Serialize};

/// Why a map could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KrigingError {
    /// Too few soundings with a position and a value at the depth.
    #[error("{0} soundings have a position and a resistivity at {1} m: at least 2 are needed")]
    TooFewPoints(usize, f64),
    /// The kriging matrix is singular (e.g. two soundings at the same place).
    #[error("the kriging system is singular (duplicate positions?)")]
    Singular,
    /// Invalid grid or variogram.
    #[error("invalid settings: {0}")]
    Settings(String),
}

/// Variogram model shapes (Isaaks & Srivastava 1989, §16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VariogramModel {
    /// γ = c₀ + c (1.5 h/a − 0.5 (h/a)³) for h < a, c₀ + c beyond.
    Spherical,
    /// γ = c₀ + c (1 − e^{−3h/a}) (practical range a).
    Exponential,
    /// γ = c₀ + c (1 − e^{−3h²/a²}).
    Gaussian,
}

/// A variogram: model, nugget c₀, partial sill c, range a [m].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Variogram {
    /// The shape.
    pub model: VariogramModel,
    /// Nugget c₀.
    pub nugget: f64,
    /// Partial sill c.
    pub sill: f64,
    /// (Practical) range a [m].
    pub range_m: f64,
}

impl Variogram {
    /// γ(h) (the formulas of [`VariogramModel`]; γ(0) = 0 by definition).
    pub fn gamma(&self, h: f64) -> f64 {
        if h <= 0.0 {
            return 0.0;
        }
        let r = h / self.range_m;
        let shape = match self.model {
            VariogramModel::Spherical => {
                if r < 1.0 {
                    1.5 * r - 0.5 * r * r * r
                } else {
                    1.0
                }
            }
            VariogramModel::Exponential => 1.0 - (-3.0 * r).exp(),
            VariogramModel::Gaussian => 1.0 - (-3.0 * r * r).exp(),
        };
        self.nugget + self.sill * shape
    }
}

/// The map grid: cell centres x0 + i·dx, y0 + j·dy.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GridSpec {
    /// Easting of the first column [m].
    pub x0_m: f64,
    /// Northing of the first row [m].
    pub y0_m: f64,
    /// Column spacing [m].
    pub dx_m: f64,
    /// Row spacing [m].
    pub dy_m: f64,
    /// Columns.
    pub nx: usize,
    /// Rows.
    pub ny: usize,
}

impl GridSpec {
    /// A grid over the points' bounding box extended by `margin` (fraction of the extent) with
    /// about `n` cells along the longer side.
    pub fn around(points: &[(f64, f64)], margin: f64, n: usize) -> Result<Self, KrigingError> {
        if points.is_empty() || n < 2 {
            return Err(KrigingError::Settings(
                "no points or fewer than 2 cells".into(),
            ));
        }
        let (mut x0, mut x1, mut y0, mut y1) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        for (x, y) in points {
            x0 = x0.min(*x);
            x1 = x1.max(*x);
            y0 = y0.min(*y);
            y1 = y1.max(*y);
        }
        let ext = (x1 - x0).max(y1 - y0).max(1.0);
        let pad = margin * ext;
        let d = (ext + 2.0 * pad) / (n - 1) as f64;
        let nx = (((x1 - x0) + 2.0 * pad) / d).ceil() as usize + 1;
        let ny = (((y1 - y0) + 2.0 * pad) / d).ceil() as usize + 1;
        Ok(GridSpec {
            x0_m: x0 - pad,
            y0_m: y0 - pad,
            dx_m: d,
            dy_m: d,
            nx,
            ny,
        })
    }
}

/// Fit a variogram of the given shape to the empirical semivariogram of the points (10
/// distance bins up to half the largest distance; weighted least squares with Cressie's
/// (1985) weights Nₕ/γ(h)², grid search over range and nugget fraction, sill from the
/// linear least squares). With fewer than 6 points or 3 populated bins the default is used:
/// sill = sample variance, range = a third of the largest distance, no nugget. Returns the
/// variogram and whether it was fitted (false: the default, a guess).
pub fn fit_variogram(points: &[(f64, f64, f64)], model: VariogramModel) -> (Variogram, bool) {
    let n = points.len();
    let mean = points.iter().map(|p| p.2).sum::<f64>() / n.max(1) as f64;
    let var =
        (points.iter().map(|p| (p.2 - mean).powi(2)).sum::<f64>() / n.max(1) as f64).max(1e-12);
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let h =
                ((points[i].0 - points[j].0).powi(2) + (points[i].1 - points[j].1).powi(2)).sqrt();
            pairs.push((h, 0.5 * (points[i].2 - points[j].2).powi(2)));
        }
    }
    let hmax = pairs.iter().map(|p| p.0).fold(0.0, f64::max).max(1e-9);
    let default = Variogram {
        model,
        nugget: 0.0,
        sill: var,
        range_m: hmax / 3.0,
    };
    if n < 6 {
        return (default, false);
    }
    let nb = 10;
    let width = 0.5 * hmax / nb as f64;
    let mut bins = vec![(0.0, 0.0, 0usize); nb];
    for (h, g) in &pairs {
        let k = (h / width) as usize;
        if k < nb {
            bins[k].0 += h;
            bins[k].1 += g;
            bins[k].2 += 1;
        }
    }
    let emp: Vec<(f64, f64, f64)> = bins
        .iter()
        .filter(|b| b.2 > 0)
        .map(|b| (b.0 / b.2 as f64, b.1 / b.2 as f64, b.2 as f64))
        .collect();
    if emp.len() < 3 {
        return (default, false);
    }
    let mut best = (f64::INFINITY, default);
    for ir in 1..=40 {
        let range = hmax * ir as f64 / 40.0;
        for inug in 0..=8 {
            let nf = inug as f64 / 10.0;
            let unit = Variogram {
                model,
                nugget: nf,
                sill: 1.0 - nf,
                range_m: range,
            };
            // γ = s·unit(h): weighted LS for the scale s.
            let (mut num, mut den) = (0.0, 0.0);
            for (h, g, c) in &emp {
                let u = unit.gamma(*h);
                let w = c / g.max(1e-12).powi(2);
                num += w * u * g;
                den += w * u * u;
            }
            if den <= 0.0 {
                continue;
            }
            let sc = num / den;
            let cost: f64 = emp
                .iter()
                .map(|(h, g, c)| c / g.max(1e-12).powi(2) * (g - sc * unit.gamma(*h)).powi(2))
                .sum();
            if cost < best.0 && sc > 0.0 {
                best = (
                    cost,
                    Variogram {
                        model,
                        nugget: nf * sc,
                        sill: (1.0 - nf) * sc,
                        range_m: range,
                    },
                );
            }
        }
    }
    (best.1, best.0.is_finite())
}

/// Ordinary kriging of `points` (x, y, z) onto `grid`: the estimate and the kriging standard
/// deviation at every node, row-major (rows = y).
pub fn ordinary_kriging(
    points: &[(f64, f64, f64)],
    grid: &GridSpec,
    variogram: &Variogram,
) -> Result<(Vec<f64>, Vec<f64>), KrigingError> {
    let n = points.len();
    if n == 0 {
        return Err(KrigingError::TooFewPoints(0, f64::NAN));
    }
    if !(variogram.range_m > 0.0 && variogram.sill >= 0.0 && variogram.nugget >= 0.0) {
        return Err(KrigingError::Settings(format!(
            "variogram {variogram:?} is not valid"
        )));
    }
    let dist = |a: (f64, f64), b: (f64, f64)| ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt();
    let mut k = Array2::<f64>::zeros((n + 1, n + 1));
    for i in 0..n {
        for j in 0..n {
            k[[i, j]] =
                variogram.gamma(dist((points[i].0, points[i].1), (points[j].0, points[j].1)));
        }
        k[[i, n]] = 1.0;
        k[[n, i]] = 1.0;
    }
    let (f, perm) = lu(&k).ok_or(KrigingError::Singular)?;
    let mut est = Vec::with_capacity(grid.nx * grid.ny);
    let mut sd = Vec::with_capacity(grid.nx * grid.ny);
    for j in 0..grid.ny {
        for i in 0..grid.nx {
            let x0 = (
                grid.x0_m + i as f64 * grid.dx_m,
                grid.y0_m + j as f64 * grid.dy_m,
            );
            let mut b = Array1::<f64>::zeros(n + 1);
            for p in 0..n {
                b[p] = variogram.gamma(dist((points[p].0, points[p].1), x0));
            }
            b[n] = 1.0;
            let w = lu_solve(&f, &perm, &b);
            let z: f64 = (0..n).map(|p| w[p] * points[p].2).sum();
            let var: f64 = (0..n).map(|p| w[p] * b[p]).sum::<f64>() + w[n];
            est.push(z);
            sd.push(var.max(0.0).sqrt());
        }
    }
    Ok((est, sd))
}

/// One plan-view map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanMap {
    /// Depth of the slice [m].
    pub depth_m: f64,
    /// The grid.
    pub grid: GridSpec,
    /// log10 ρ estimate per node, row-major (rows = northing).
    pub log10_rho: Vec<f64>,
    /// Kriging standard deviation of log10 ρ per node.
    pub sigma_log10: Vec<f64>,
    /// The soundings used (x, y, log10 ρ).
    pub points: Vec<(f64, f64, f64)>,
    /// The variogram used.
    pub variogram: Variogram,
    /// Whether the variogram was fitted (false: the default, a guess).
    pub variogram_fitted: bool,
    /// What was left out or assumed.
    pub notes: Vec<String>,
}

/// Settings of [`plan_view_maps`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MapSettings {
    /// Variogram shape.
    pub model: VariogramModel,
    /// Cells along the longer side.
    pub cells: usize,
    /// Margin around the soundings (fraction of the extent).
    pub margin: f64,
    /// Leave out soundings whose DOI is shallower than the slice.
    pub respect_doi: bool,
}

impl Default for MapSettings {
    fn default() -> Self {
        MapSettings {
            model: VariogramModel::Spherical,
            cells: 50,
            margin: 0.1,
            respect_doi: true,
        }
    }
}

/// log10 ρ of the layer containing depth z.
pub fn log10_rho_at(model: &LayeredEarth, depth_m: f64) -> f64 {
    let tops = model.top_depths_m();
    let i = tops.iter().rposition(|t| *t <= depth_m).unwrap_or(0);
    model.rho_ohm_m[i].log10()
}

/// Plan-view maps of log10 ρ at each depth from soundings with positions (easting,
/// northing), their models and DOIs.
pub fn plan_view_maps(
    soundings: &[(Position, LayeredEarth, Option<f64>)],
    depths_m: &[f64],
    settings: &MapSettings,
) -> Result<Vec<PlanMap>, KrigingError> {
    let mut maps = Vec::new();
    for &z in depths_m {
        let mut notes = Vec::new();
        let mut points = Vec::new();
        let (mut no_pos, mut below_doi) = (0, 0);
        for (pos, model, doi) in soundings {
            let (Some(x), Some(y)) = (pos.easting_m, pos.northing_m) else {
                no_pos += 1;
                continue;
            };
            if settings.respect_doi && doi.is_none_or(|d| d < z) {
                below_doi += 1;
                continue;
            }
            points.push((x, y, log10_rho_at(model, z)));
        }
        if no_pos > 0 {
            notes.push(format!(
                "{no_pos} soundings without easting/northing left out"
            ));
        }
        if below_doi > 0 {
            notes.push(format!(
                "{below_doi} soundings whose DOI is shallower than {z} m left out"
            ));
        }
        if points.len() < 2 {
            return Err(KrigingError::TooFewPoints(points.len(), z));
        }
        let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.0, p.1)).collect();
        let grid = GridSpec::around(&xy, settings.margin, settings.cells)?;
        let (variogram, fitted) = fit_variogram(&points, settings.model);
        if !fitted {
            notes.push(format!(
                "{} points are too few to fit a variogram: default {:?} model, sill = variance, range = 1/3 of the largest distance ({:.0} m), no nugget",
                points.len(),
                settings.model,
                variogram.range_m
            ));
        }
        let (est, sd) = ordinary_kriging(&points, &grid, &variogram)?;
        maps.push(PlanMap {
            depth_m: z,
            grid,
            log10_rho: est,
            sigma_log10: sd,
            points,
            variogram,
            variogram_fitted: fitted,
            notes,
        });
    }
    Ok(maps)
}

/// A map's estimate (or, with `sigma`, its kriging standard deviation) as an ESRI ASCII grid
/// (`ncols`, `nrows`, `xllcenter`, `yllcenter`, `cellsize`, `NODATA_value`, rows north first).
pub fn esri_ascii_grid(map: &PlanMap, sigma: bool) -> String {
    let g = &map.grid;
    let values = if sigma {
        &map.sigma_log10
    } else {
        &map.log10_rho
    };
    let mut out = format!(
        "ncols {}\nnrows {}\nxllcenter {}\nyllcenter {}\ncellsize {}\nNODATA_value -9999\n",
        g.nx, g.ny, g.x0_m, g.y0_m, g.dx_m
    );
    for j in (0..g.ny).rev() {
        let row: Vec<String> = (0..g.nx)
            .map(|i| format!("{:.6}", values[j * g.nx + i]))
            .collect();
        out.push_str(&row.join(" "));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vg() -> Variogram {
        Variogram {
            model: VariogramModel::Spherical,
            nugget: 0.0,
            sill: 0.5,
            range_m: 300.0,
        }
    }

    fn one_node(x: f64, y: f64) -> GridSpec {
        GridSpec {
            x0_m: x,
            y0_m: y,
            dx_m: 1.0,
            dy_m: 1.0,
            nx: 1,
            ny: 1,
        }
    }

    #[test]
    fn kriging_is_exact_at_the_data_with_zero_variance() {
        // Without a nugget ordinary kriging interpolates exactly: z* = zᵢ and σ = 0 at a
        // datum (1e-9).
        let pts = [
            (0.0, 0.0, 1.0),
            (100.0, 0.0, 2.0),
            (0.0, 150.0, 1.5),
            (120.0, 130.0, 0.7),
        ];
        for p in &pts {
            let (e, s) = ordinary_kriging(&pts, &one_node(p.0, p.1), &vg()).unwrap();
            assert!((e[0] - p.2).abs() < 1e-9 && s[0] < 1e-6, "{e:?} {s:?}");
        }
    }

    #[test]
    fn single_datum_and_symmetric_pair_closed_forms() {
        // One datum: w = 1, μ = γ(h) ⇒ z* = z₁ and σ² = 2γ(h) (Isaaks & Srivastava eq. 12.14
        // with n = 1). Two data symmetric about x₀: w = ½ each ⇒ z* = mean.
        let v = vg();
        let (e, s) = ordinary_kriging(&[(0.0, 0.0, 1.3)], &one_node(100.0, 0.0), &v).unwrap();
        assert!((e[0] - 1.3).abs() < 1e-12);
        assert!((s[0] * s[0] - 2.0 * v.gamma(100.0)).abs() < 1e-12);
        let (e, _) = ordinary_kriging(
            &[(-50.0, 0.0, 1.0), (50.0, 0.0, 3.0)],
            &one_node(0.0, 7.0),
            &v,
        )
        .unwrap();
        assert!((e[0] - 2.0).abs() < 1e-12);
    }

    #[test]
    fn constant_field_stays_constant_and_sigma_grows_away_from_data() {
        let pts = [(0.0, 0.0, 2.0), (200.0, 0.0, 2.0), (100.0, 170.0, 2.0)];
        let grid = GridSpec::around(&[(0.0, 0.0), (200.0, 170.0)], 0.5, 20).unwrap();
        let (e, _) = ordinary_kriging(&pts, &grid, &vg()).unwrap();
        assert!(e.iter().all(|v| (v - 2.0).abs() < 1e-9));
        // Along the line y = 0 leaving the datum at (200, 0) eastwards σ increases.
        let sig = |x: f64| ordinary_kriging(&pts, &one_node(x, 0.0), &vg()).unwrap().1[0];
        assert!(sig(210.0) < sig(260.0) && sig(260.0) < sig(400.0));
    }

    #[test]
    fn plan_maps_leave_out_soundings_below_their_doi() {
        let m = LayeredEarth::new(vec![30.0, 3.0], vec![20.0]).unwrap();
        let at = |x: f64, y: f64| Position {
            easting_m: Some(x),
            northing_m: Some(y),
            ..Position::default()
        };
        let snd = vec![
            (at(0.0, 0.0), m.clone(), Some(80.0)),
            (at(100.0, 0.0), m.clone(), Some(80.0)),
            (at(0.0, 100.0), m.clone(), Some(15.0)),
        ];
        let maps = plan_view_maps(&snd, &[10.0, 40.0], &MapSettings::default()).unwrap();
        // At 10 m all three count (30 Ω·m everywhere); at 40 m the third (DOI 15 m) is out.
        assert_eq!(maps[0].points.len(), 3);
        assert!(
            maps[0]
                .log10_rho
                .iter()
                .all(|v| (v - 30f64.log10()).abs() < 1e-9)
        );
        assert_eq!(maps[1].points.len(), 2);
        assert!(maps[1].notes.iter().any(|n| n.contains("DOI")));
        assert!(!maps[0].variogram_fitted);
        let asc = esri_ascii_grid(&maps[1], true);
        assert!(asc.starts_with("ncols "));
        assert_eq!(asc.lines().count(), 6 + maps[1].grid.ny);
    }
}

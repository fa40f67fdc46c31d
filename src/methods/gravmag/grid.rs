//! Regular grids for maps: minimum-curvature gridding of scattered stations, bilinear
//! sampling, profiles between two points, and block reduction (decimation) of stations.
//!
//! **The interpolator.** The grid values `f` minimise
//! `Σ_i (B_i f − d_i)² + λ [(1 − T) Σ (f_xx² + 2 f_xy² + f_yy²) + T Σ (f_x² + f_y²)]`:
//! the data are bilinear combinations of the four nodes around each station (`B_i`); the
//! second sum is the discrete thin-plate (total curvature) energy of Briggs (1974,
//! Geophysics 39, 39–48) — the "minimum curvature" surface — and the third the tension
//! term of Smith & Wessel (1990, Geophysics 55, 293–305); derivatives are finite
//! differences in grid units. `λ` (default 1e-4 relative to a unit data weight) is small, so
//! the surface passes within noise of the data; with `T = 0` a surface that is linear in x
//! and y is reproduced exactly. The normal equations are sparse, symmetric, positive
//! definite and solved by a sparse Cholesky factorisation (faer).
//!
//! Grid nodes farther than `max_distance_m` from every station are *masked*: they keep an
//! extrapolated value (needed by the FFT filters) but are reported as unsupported.

use serde::{Deserialize, Serialize};

use super::GravMagError;

/// A regular grid: node (ix, iy) is at (`x0_m + ix·spacing_m`, `y0_m + iy·spacing_m`);
/// values are stored row by row (iy slow, ix fast).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grid2D {
    /// x of the first column of nodes, m.
    pub x0_m: f64,
    /// y of the first row of nodes, m.
    pub y0_m: f64,
    /// Node spacing (the same in x and y), m.
    pub spacing_m: f64,
    /// Nodes along x.
    pub nx: usize,
    /// Nodes along y.
    pub ny: usize,
    /// Values at the nodes, `values[iy * nx + ix]`.
    pub values: Vec<f64>,
    /// Whether each node is within `max_distance_m` of a station.
    pub mask: Vec<bool>,
    /// The unit of the values (mGal, nT), when known.
    pub unit: Option<String>,
    /// How the grid was made, in sentences.
    pub notes: Vec<String>,
}

impl Grid2D {
    /// x of column `ix`, m.
    pub fn x(&self, ix: usize) -> f64 {
        self.x0_m + ix as f64 * self.spacing_m
    }

    /// y of row `iy`, m.
    pub fn y(&self, iy: usize) -> f64 {
        self.y0_m + iy as f64 * self.spacing_m
    }

    /// Whether the value and mask arrays hold `nx × ny` nodes (always true for grids made
    /// here; a grid deserialised from elsewhere may not be).
    pub fn is_consistent(&self) -> bool {
        self.nx >= 2
            && self.ny >= 2
            && self.values.len() == self.nx * self.ny
            && self.mask.len() == self.nx * self.ny
            && self.spacing_m > 0.0
    }

    /// The values as an (ny, nx) array view; `None` for an inconsistent grid.
    pub fn as_array(&self) -> Option<ndarray::ArrayView2<'_, f64>> {
        ndarray::ArrayView2::from_shape((self.ny, self.nx), &self.values).ok()
    }

    /// The values with unsupported nodes set to NaN (for maps).
    pub fn masked_values(&self) -> Vec<f64> {
        self.values
            .iter()
            .zip(&self.mask)
            .map(|(&v, &m)| if m { v } else { f64::NAN })
            .collect()
    }

    /// Bilinear interpolation at (x, y); `None` outside the grid.
    pub fn sample(&self, x: f64, y: f64) -> Option<f64> {
        if !self.is_consistent() {
            return None;
        }
        let (ix, iy, s, t) = self.cell_of(x, y)?;
        let v = |i: usize, j: usize| self.values[j * self.nx + i];
        let (i1, j1) = ((ix + 1).min(self.nx - 1), (iy + 1).min(self.ny - 1));
        Some(
            (1.0 - s) * (1.0 - t) * v(ix, iy)
                + s * (1.0 - t) * v(i1, iy)
                + (1.0 - s) * t * v(ix, j1)
                + s * t * v(i1, j1),
        )
    }

    /// Whether the node nearest to (x, y) is supported by data; false outside the grid.
    pub fn supported_at(&self, x: f64, y: f64) -> bool {
        if !self.is_consistent() {
            return false;
        }
        let fx = (x - self.x0_m) / self.spacing_m;
        let fy = (y - self.y0_m) / self.spacing_m;
        if !(fx > -0.5 && fy > -0.5) {
            return false;
        }
        let (ix, iy) = (fx.round() as usize, fy.round() as usize);
        ix < self.nx && iy < self.ny && self.mask[iy * self.nx + ix]
    }

    /// The cell holding (x, y) and the fractional position in it.
    fn cell_of(&self, x: f64, y: f64) -> Option<(usize, usize, f64, f64)> {
        let fx = (x - self.x0_m) / self.spacing_m;
        let fy = (y - self.y0_m) / self.spacing_m;
        let (mx, my) = ((self.nx - 1) as f64, (self.ny - 1) as f64);
        if !(fx >= 0.0 && fy >= 0.0 && fx <= mx && fy <= my) {
            return None;
        }
        let ix = (fx.floor() as usize).min(self.nx.saturating_sub(2));
        let iy = (fy.floor() as usize).min(self.ny.saturating_sub(2));
        Some((ix, iy, fx - ix as f64, fy - iy as f64))
    }

    /// (min, max) of the supported values.
    pub fn range(&self) -> (f64, f64) {
        super::stations::min_max(&self.masked_values())
    }
}

/// Options for [`grid_min_curvature`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GridOptions {
    /// Node spacing, m; default: the mean station spacing √(area/N) rounded down to 1, 2,
    /// 2.5 or 5 × 10^k.
    pub spacing_m: Option<f64>,
    /// Tension T in [0, 1) (Smith & Wessel 1990); 0.25 is their advice for potential fields.
    pub tension: f64,
    /// λ, the weight of the curvature energy relative to the data misfit.
    pub smoothing: f64,
    /// Nodes farther than this from every station are masked; default 2 × the mean station
    /// spacing.
    pub max_distance_m: Option<f64>,
    /// The grid is coarsened until it has at most this many nodes.
    pub max_nodes: usize,
}

impl Default for GridOptions {
    fn default() -> Self {
        GridOptions {
            spacing_m: None,
            tension: 0.25,
            smoothing: 1e-4,
            max_distance_m: None,
            max_nodes: 90_000,
        }
    }
}

/// `x > 0` (false for NaN).
pub(crate) fn positive(x: f64) -> bool {
    x > 0.0
}

/// The largest of 1, 2, 2.5, 5 × 10^k not above `s`.
fn nice_floor(s: f64) -> f64 {
    let p = 10f64.powf(s.log10().floor());
    let m = s / p;
    let k = if m >= 5.0 {
        5.0
    } else if m >= 2.5 {
        2.5
    } else if m >= 2.0 {
        2.0
    } else {
        1.0
    };
    k * p
}

/// The next nice value above `s` (5 → 10, 2.5 → 5, …).
fn nice_next(s: f64) -> f64 {
    nice_floor(s * 2.0001).max(s * 1.25)
}

/// Grid scattered values `v` at (`x`, `y`) by minimum curvature with tension (module docs).
pub fn grid_min_curvature(
    x: &[f64],
    y: &[f64],
    v: &[f64],
    options: &GridOptions,
) -> Result<Grid2D, GravMagError> {
    let n = v.len();
    if x.len() != n || y.len() != n {
        return Err(GravMagError::InvalidInput(
            "x, y and values differ in length".into(),
        ));
    }
    if n < 3 {
        return Err(GravMagError::InvalidInput(format!(
            "gridding needs at least 3 stations, got {n}"
        )));
    }
    if !(0.0..1.0).contains(&options.tension) || !positive(options.smoothing) {
        return Err(GravMagError::InvalidInput(
            "tension must be in [0, 1) and smoothing > 0".into(),
        ));
    }
    if x.iter().chain(y).chain(v).any(|t| !t.is_finite()) {
        return Err(GravMagError::InvalidInput(
            "coordinates and values must be finite".into(),
        ));
    }
    let (x0, x1) = super::stations::min_max(x);
    let (y0, y1) = super::stations::min_max(y);
    let (wx, wy) = (x1 - x0, y1 - y0);
    if !(wx > 0.0 && wy > 0.0) {
        return Err(GravMagError::InvalidInput(
            "the stations lie on a line: a map needs extent in both x and y (use a profile)".into(),
        ));
    }
    let mean_spacing = (wx * wy / n as f64).sqrt();
    let mut notes = Vec::new();
    let mut spacing = match options.spacing_m {
        Some(s) if s > 0.0 && s.is_finite() => s,
        Some(s) => {
            return Err(GravMagError::InvalidInput(format!(
                "grid spacing {s} m is not positive"
            )));
        }
        None => {
            let s = nice_floor(mean_spacing);
            notes.push(format!(
                "grid spacing {s} m chosen from the mean station spacing {mean_spacing:.1} m"
            ));
            s
        }
    };
    let dims = |s: f64| {
        let gx0 = (x0 / s).floor() * s;
        let gy0 = (y0 / s).floor() * s;
        let nx = ((x1 - gx0) / s).ceil() as usize + 1;
        let ny = ((y1 - gy0) / s).ceil() as usize + 1;
        (gx0, gy0, nx, ny)
    };
    let mut d = dims(spacing);
    while d.2 * d.3 > options.max_nodes.max(16) {
        spacing = nice_next(spacing);
        d = dims(spacing);
        notes.push(format!(
            "spacing raised to {spacing} m to stay within {} nodes",
            options.max_nodes
        ));
    }
    let (gx0, gy0, nx, ny) = d;
    let max_distance = options
        .max_distance_m
        .unwrap_or(2.0 * mean_spacing.max(spacing));
    // Normalise the data so the penalty weight is relative to a unit data variance.
    let mean = v.iter().sum::<f64>() / n as f64;
    let sd = (v.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
    let scale = if sd > 0.0 { sd } else { 1.0 };
    let values = solve_surface(
        x,
        y,
        v,
        mean,
        scale,
        (gx0, gy0, spacing, nx, ny),
        options.tension,
        options.smoothing,
    )?;
    let mask = support_mask(x, y, (gx0, gy0, spacing, nx, ny), max_distance);
    notes.push(format!(
        "minimum-curvature surface (Briggs 1974) with tension {} (Smith & Wessel 1990), \
         smoothing {:e}; {} × {} nodes; nodes farther than {:.1} m from a station are masked",
        options.tension, options.smoothing, nx, ny, max_distance
    ));
    Ok(Grid2D {
        x0_m: gx0,
        y0_m: gy0,
        spacing_m: spacing,
        nx,
        ny,
        values,
        mask,
        unit: None,
        notes,
    })
}

/// Assemble and solve the normal equations of the gridding functional.
#[allow(clippy::too_many_arguments)]
fn solve_surface(
    x: &[f64],
    y: &[f64],
    v: &[f64],
    mean: f64,
    scale: f64,
    (gx0, gy0, s, nx, ny): (f64, f64, f64, usize, usize),
    tension: f64,
    smoothing: f64,
) -> Result<Vec<f64>, GravMagError> {
    use faer::sparse::{SparseColMat, Triplet};
    let nn = nx * ny;
    let id = |i: usize, j: usize| j * nx + i;
    let mut trip: Vec<Triplet<usize, usize, f64>> = Vec::with_capacity(nn * 40 + v.len() * 16);
    let mut rhs = vec![0.0; nn];
    // Adds w · rowᵀ row to the matrix (and w · row · d to the right-hand side).
    let add_row = |trip: &mut Vec<Triplet<usize, usize, f64>>, cols: &[(usize, f64)], w: f64| {
        for &(a, ca) in cols {
            for &(b, cb) in cols {
                trip.push(Triplet::new(a, b, w * ca * cb));
            }
        }
    };
    // Data rows: bilinear weights of the four nodes around each station.
    for k in 0..v.len() {
        let fx = ((x[k] - gx0) / s).clamp(0.0, (nx - 1) as f64);
        let fy = ((y[k] - gy0) / s).clamp(0.0, (ny - 1) as f64);
        let i = (fx.floor() as usize).min(nx - 2);
        let j = (fy.floor() as usize).min(ny - 2);
        let (a, b) = (fx - i as f64, fy - j as f64);
        let cols = [
            (id(i, j), (1.0 - a) * (1.0 - b)),
            (id(i + 1, j), a * (1.0 - b)),
            (id(i, j + 1), (1.0 - a) * b),
            (id(i + 1, j + 1), a * b),
        ];
        let d = (v[k] - mean) / scale;
        for &(c, w) in &cols {
            rhs[c] += w * d;
        }
        add_row(&mut trip, &cols, 1.0);
    }
    let wc = smoothing * (1.0 - tension);
    let wt = smoothing * tension;
    for j in 0..ny {
        for i in 0..nx {
            if i >= 1 && i + 1 < nx {
                add_row(
                    &mut trip,
                    &[(id(i - 1, j), 1.0), (id(i, j), -2.0), (id(i + 1, j), 1.0)],
                    wc,
                );
            }
            if j >= 1 && j + 1 < ny {
                add_row(
                    &mut trip,
                    &[(id(i, j - 1), 1.0), (id(i, j), -2.0), (id(i, j + 1), 1.0)],
                    wc,
                );
            }
            if i + 1 < nx && j + 1 < ny {
                add_row(
                    &mut trip,
                    &[
                        (id(i, j), 1.0),
                        (id(i + 1, j), -1.0),
                        (id(i, j + 1), -1.0),
                        (id(i + 1, j + 1), 1.0),
                    ],
                    2.0 * wc,
                );
            }
            if wt > 0.0 {
                if i + 1 < nx {
                    add_row(&mut trip, &[(id(i, j), -1.0), (id(i + 1, j), 1.0)], wt);
                }
                if j + 1 < ny {
                    add_row(&mut trip, &[(id(i, j), -1.0), (id(i, j + 1), 1.0)], wt);
                }
            }
        }
    }
    let a = SparseColMat::<usize, f64>::try_new_from_triplets(nn, nn, &trip)
        .map_err(|e| GravMagError::Numerical(format!("assembling the gridding system: {e:?}")))?;
    let llt = a.sp_cholesky(faer::Side::Lower).map_err(|e| {
        GravMagError::Numerical(format!("gridding system not positive definite: {e:?}"))
    })?;
    let mut b = faer::Mat::<f64>::from_fn(nn, 1, |i, _| rhs[i]);
    use faer::linalg::solvers::SolveCore;
    llt.solve_in_place_with_conj(faer::Conj::No, b.as_mut());
    super::sensitivity::clear_upper_vector_state();
    let out: Vec<f64> = (0..nn).map(|i| mean + scale * b[(i, 0)]).collect();
    if out.iter().any(|t| !t.is_finite()) {
        return Err(GravMagError::Numerical(
            "the gridded surface is not finite".into(),
        ));
    }
    Ok(out)
}

/// Nodes within `radius` of at least one station.
fn support_mask(
    x: &[f64],
    y: &[f64],
    (gx0, gy0, s, nx, ny): (f64, f64, f64, usize, usize),
    radius: f64,
) -> Vec<bool> {
    let mut mask = vec![false; nx * ny];
    let r_nodes = (radius / s).ceil() as isize;
    for (&px, &py) in x.iter().zip(y) {
        let ci = ((px - gx0) / s).round() as isize;
        let cj = ((py - gy0) / s).round() as isize;
        for j in (cj - r_nodes).max(0)..=(cj + r_nodes).min(ny as isize - 1) {
            for i in (ci - r_nodes).max(0)..=(ci + r_nodes).min(nx as isize - 1) {
                let dx = gx0 + i as f64 * s - px;
                let dy = gy0 + j as f64 * s - py;
                if dx * dx + dy * dy <= radius * radius {
                    mask[j as usize * nx + i as usize] = true;
                }
            }
        }
    }
    mask
}

/// Values sampled along a straight line between two points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// Start (x, y), m.
    pub start_m: (f64, f64),
    /// End (x, y), m.
    pub end_m: (f64, f64),
    /// Distance from the start, m.
    pub distance_m: Vec<f64>,
    /// x of each sample, m.
    pub x_m: Vec<f64>,
    /// y of each sample, m.
    pub y_m: Vec<f64>,
    /// Bilinear value at each sample; NaN outside the grid or where it is unsupported.
    pub value: Vec<f64>,
}

/// Sample `grid` at `n_points` equally spaced points from `start` to `end` (inclusive).
pub fn profile(
    grid: &Grid2D,
    start: (f64, f64),
    end: (f64, f64),
    n_points: usize,
) -> Result<Profile, GravMagError> {
    if n_points < 2 {
        return Err(GravMagError::InvalidInput(
            "a profile needs at least 2 points".into(),
        ));
    }
    let len = ((end.0 - start.0).powi(2) + (end.1 - start.1).powi(2)).sqrt();
    if !positive(len) {
        return Err(GravMagError::InvalidInput(
            "profile start and end coincide".into(),
        ));
    }
    let mut p = Profile {
        start_m: start,
        end_m: end,
        distance_m: Vec::with_capacity(n_points),
        x_m: Vec::with_capacity(n_points),
        y_m: Vec::with_capacity(n_points),
        value: Vec::with_capacity(n_points),
    };
    for k in 0..n_points {
        let t = k as f64 / (n_points - 1) as f64;
        let (x, y) = (
            start.0 + t * (end.0 - start.0),
            start.1 + t * (end.1 - start.1),
        );
        let v = if grid.supported_at(x, y) {
            grid.sample(x, y).unwrap_or(f64::NAN)
        } else {
            f64::NAN
        };
        p.distance_m.push(t * len);
        p.x_m.push(x);
        p.y_m.push(y);
        p.value.push(v);
    }
    Ok(p)
}

/// Stations averaged in square blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockReduced {
    /// Block size, m.
    pub block_m: f64,
    /// Mean x of the stations in each block, m.
    pub x_m: Vec<f64>,
    /// Mean y, m.
    pub y_m: Vec<f64>,
    /// Mean z, m.
    pub z_m: Vec<f64>,
    /// Mean value.
    pub value: Vec<f64>,
    /// Number of stations in each block.
    pub count: Vec<usize>,
}

/// Average stations in square blocks (verde's `BlockReduce` with the mean), growing the block
/// by 10 % until at most `max_points` blocks are occupied. With `max_points ≥ n` the stations
/// are returned unchanged (block size 0).
pub fn block_reduce(
    x: &[f64],
    y: &[f64],
    z: &[f64],
    v: &[f64],
    max_points: usize,
) -> Result<BlockReduced, GravMagError> {
    block_reduce_min(x, y, z, v, max_points, 0.0)
}

/// [`block_reduce`] with blocks of at least `min_block_m` (e.g. the model's cell size, so the
/// data are not rougher than the model can follow).
pub fn block_reduce_min(
    x: &[f64],
    y: &[f64],
    z: &[f64],
    v: &[f64],
    max_points: usize,
    min_block_m: f64,
) -> Result<BlockReduced, GravMagError> {
    let n = v.len();
    if x.len() != n || y.len() != n || z.len() != n || n == 0 || max_points == 0 {
        return Err(GravMagError::InvalidInput(
            "block reduction needs equal, non-empty x, y, z, value and max_points ≥ 1".into(),
        ));
    }
    if n <= max_points && !positive(min_block_m) {
        return Ok(BlockReduced {
            block_m: 0.0,
            x_m: x.to_vec(),
            y_m: y.to_vec(),
            z_m: z.to_vec(),
            value: v.to_vec(),
            count: vec![1; n],
        });
    }
    let (x0, x1) = super::stations::min_max(x);
    let (y0, y1) = super::stations::min_max(y);
    let area = ((x1 - x0) * (y1 - y0)).max(1e-12);
    let mut block = if n <= max_points {
        0.0
    } else {
        (area / max_points as f64).sqrt()
    }
    .max(min_block_m);
    for _ in 0..200 {
        let mut cells: std::collections::BTreeMap<(i64, i64), [f64; 5]> = Default::default();
        for k in 0..n {
            let key = (
                ((x[k] - x0) / block).floor() as i64,
                ((y[k] - y0) / block).floor() as i64,
            );
            let e = cells.entry(key).or_insert([0.0; 5]);
            e[0] += x[k];
            e[1] += y[k];
            e[2] += z[k];
            e[3] += v[k];
            e[4] += 1.0;
        }
        if cells.len() <= max_points {
            let mut out = BlockReduced {
                block_m: block,
                x_m: vec![],
                y_m: vec![],
                z_m: vec![],
                value: vec![],
                count: vec![],
            };
            for s in cells.values() {
                out.x_m.push(s[0] / s[4]);
                out.y_m.push(s[1] / s[4]);
                out.z_m.push(s[2] / s[4]);
                out.value.push(s[3] / s[4]);
                out.count.push(s[4] as usize);
            }
            return Ok(out);
        }
        block *= 1.1;
    }
    Err(GravMagError::Numerical(
        "block reduction did not converge".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scattered(n: usize, f: impl Fn(f64, f64) -> f64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        // A deterministic low-discrepancy (Halton 2, 3) set on [0, 1000]².
        let halton = |mut i: usize, b: usize| {
            let (mut f, mut r) = (1.0, 0.0);
            while i > 0 {
                f /= b as f64;
                r += f * (i % b) as f64;
                i /= b;
            }
            r
        };
        let x: Vec<f64> = (1..=n).map(|i| 1000.0 * halton(i, 2)).collect();
        let y: Vec<f64> = (1..=n).map(|i| 1000.0 * halton(i, 3)).collect();
        let v = x.iter().zip(&y).map(|(&a, &b)| f(a, b)).collect();
        (x, y, v)
    }

    #[test]
    fn a_plane_is_reproduced_exactly() {
        // With T = 0 the thin-plate energy of a plane is 0, so the minimiser is the plane:
        // every node within 1e-8 of 3 + 0.01x − 0.02y.
        let plane = |x: f64, y: f64| 3.0 + 0.01 * x - 0.02 * y;
        let (x, y, v) = scattered(300, plane);
        let g = grid_min_curvature(
            &x,
            &y,
            &v,
            &GridOptions {
                tension: 0.0,
                ..Default::default()
            },
        )
        .unwrap();
        for iy in 0..g.ny {
            for ix in 0..g.nx {
                let want = plane(g.x(ix), g.y(iy));
                assert!((g.values[iy * g.nx + ix] - want).abs() < 1e-8, "{ix},{iy}");
            }
        }
    }

    #[test]
    fn a_smooth_field_is_gridded_to_one_percent() {
        // A Gaussian anomaly (σ = 150 m, amplitude 10) sampled at 2 000 scattered stations:
        // supported nodes within 1 % of the amplitude of the true field (RMS), 3 % at most.
        let f = |x: f64, y: f64| {
            10.0 * (-((x - 480.0).powi(2) + (y - 530.0).powi(2)) / (2.0 * 150.0f64.powi(2))).exp()
        };
        let (x, y, v) = scattered(2000, f);
        let g = grid_min_curvature(&x, &y, &v, &GridOptions::default()).unwrap();
        assert_eq!(g.spacing_m, 20.0, "mean spacing 22.4 m → 20 m");
        let (mut ss, mut worst, mut k) = (0.0, 0.0f64, 0);
        for iy in 0..g.ny {
            for ix in 0..g.nx {
                if g.mask[iy * g.nx + ix] {
                    let e = g.values[iy * g.nx + ix] - f(g.x(ix), g.y(iy));
                    ss += e * e;
                    worst = worst.max(e.abs());
                    k += 1;
                }
            }
        }
        let rms = (ss / k as f64).sqrt();
        assert!(rms < 0.1 && worst < 0.3, "rms {rms}, worst {worst}");
    }

    #[test]
    fn profile_samples_bilinearly_and_masks() {
        let plane = |x: f64, y: f64| 1.0 + 0.5 * x + 0.25 * y;
        let (x, y, v) = scattered(400, plane);
        let g = grid_min_curvature(
            &x,
            &y,
            &v,
            &GridOptions {
                tension: 0.0,
                ..Default::default()
            },
        )
        .unwrap();
        let p = profile(&g, (100.0, 100.0), (900.0, 700.0), 11).unwrap();
        assert!((p.distance_m[10] - 1000.0).abs() < 1e-9);
        for k in 0..11 {
            assert!((p.value[k] - plane(p.x_m[k], p.y_m[k])).abs() < 1e-7);
        }
        let outside = profile(&g, (-500.0, -500.0), (-400.0, -400.0), 3).unwrap();
        assert!(outside.value.iter().all(|v| v.is_nan()));
    }

    #[test]
    fn block_reduction_respects_the_limit_and_the_mean() {
        let (x, y, v) = scattered(3000, |a, b| a + b);
        let z = vec![1.0; 3000];
        let r = block_reduce(&x, &y, &z, &v, 600).unwrap();
        assert!(
            r.value.len() <= 600 && r.value.len() > 300,
            "{}",
            r.value.len()
        );
        assert_eq!(r.count.iter().sum::<usize>(), 3000);
        // The mean of a linear field over a block is the field at the mean position.
        for k in 0..r.value.len() {
            assert!((r.value[k] - (r.x_m[k] + r.y_m[k])).abs() < 1e-9);
        }
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(
            grid_min_curvature(
                &[0.0, 1.0],
                &[0.0, 1.0],
                &[1.0, 2.0],
                &GridOptions::default()
            )
            .is_err()
        );
        let line = [0.0, 1.0, 2.0, 3.0];
        assert!(grid_min_curvature(&line, &[0.0; 4], &line, &GridOptions::default()).is_err());
    }
}

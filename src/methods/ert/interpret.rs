//! What a resistivity model says about the water table and about change between surveys.
//!
//! **Water table.** Below the water table the pores are saturated and the bulk resistivity
//! falls (Archie 1942: `ρ = ρw φ^-m S^-n`, so `ρ` drops by `S^-n` as `S → 1`). Along vertical
//! profiles (one per electrode between the outer electrodes) the model is sampled every
//! `dz` below the surface, only in cells whose coverage is at least `min_coverage` of the
//! largest; the water table is the depth of the strongest downward decrease of `log10 ρ`,
//! the peak of `g_k = (log10 ρ(z_{k+1}) − log10 ρ(z_k)) / dz` around its minimum (where
//! `g ≤ g_min / 2`), placed at the gradient-weighted middle of the peak.
//! A profile gives no depth when the strongest decrease is smaller than `MIN_DROP_LOG10`
//! (a fall of less than 20 % is not a saturated zone). The method's resolution at that
//! depth is the half-width at half-minimum of the gradient peak — a smooth inversion spreads
//! the step over several cells, and that width is how well the model places it — but never
//! less than half the mean height of the two cells the step lies between: a model that is
//! constant per cell puts every step on a cell boundary, so one sharp step says only that
//! the boundary lies within about a cell (the same floor the seismic reading takes from its
//! grid rows). `σ = max(w_half, (h_above + h_below)/4)`.
//!
//! **Change.** Per time step, the cells whose change against the baseline has the sign of
//! the largest change and at least `threshold_percent` in size (and enough coverage) form
//! the changed region; its extent is the x and depth range of its cells; its size the sum of
//! their areas (m² of section).
//!
//! The region's *centroid* is that of the anomaly's half-maximum contour: the covered cells
//! whose change has the peak's sign and at least half its size, weighted by `|Δ| · area`, with
//! the change measured as the log ratio `Δ = ln(ρ_t/ρ_0)` — a percentage is bounded below by
//! −100 % and unbounded above, so a conductor that shrinks leaves +2572 % in the unsaturated
//! top of the space it vacated against tens of % below the water table, and the half-maximum
//! of the percentage holds only that top (3.1 m for a plume centred 6.5 m deep); Archie's law
//! makes `ln ρ` linear in `ln S` and `ln ρw`, so equal factors count the same either way
//! (the full-width-at-half-maximum convention for a smeared peak). A smoothness-regularised
//! inversion spreads a compact body into a long low-amplitude tail, mostly downwards where
//! the resolution falls off and the cells grow; weighting every cell above a fixed small
//! threshold by its area lets that tail pull the centroid down (on the bundled example,
//! 10.2 m for a plume centred 7.5 m deep). Its uncertainty is how much the centroid depends
//! on where the contour is drawn: half the range of the centroids of the 1/4, 1/2 and 3/4
//! maximum contours (`CONTOUR_LEVELS`).

use serde::{Deserialize, Serialize};

use super::inversion::ModelSection;
use super::mesh::interp;
use crate::methods::depth::median;
use crate::methods::depth::{DepthEstimate, DepthProfile, summarise};

pub use crate::methods::depth::MIN_DROP_LOG10;

/// The contour levels (fractions of the peak change) whose centroids give the change
/// centroid's uncertainty; the middle one is the centroid (module docs).
pub const CONTOUR_LEVELS: [f64; 3] = [0.25, 0.5, 0.75];

/// log10 ρ down the vertical at `x` every `dz_m`, `None` where no covered cell is.
fn log_profile(
    section: &ModelSection,
    rho_ohm_m: &[f64],
    covered: &[bool],
    x: f64,
    dz_m: f64,
    max_depth_m: f64,
) -> Vec<Option<f64>> {
    let surface = interp(&section.surface_xz, x);
    let n = (max_depth_m / dz_m).floor() as usize;
    (0..=n)
        .map(|k| {
            let z = surface - (k as f64 + 0.5) * dz_m;
            section
                .param_at(x, z)
                .filter(|&j| covered[j] && rho_ohm_m[j] > 0.0)
                .map(|j| rho_ohm_m[j].log10())
        })
        .collect()
}

/// The depth of the strongest downward decrease on one profile and its half-width (module
/// docs), m.
fn strongest_drop(profile: &[Option<f64>], dz_m: f64) -> Option<(f64, f64)> {
    let grad: Vec<Option<f64>> = profile
        .windows(2)
        .map(|w| Some((w[1]? - w[0]?) / dz_m))
        .collect();
    let (k, g) = grad
        .iter()
        .enumerate()
        .filter_map(|(k, g)| g.map(|g| (k, g)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    // The fall across the peak (where the gradient stays below half its minimum).
    let inside = |i: usize| grad[i].is_some_and(|x| x <= 0.5 * g);
    let mut top = k;
    while top > 0 && inside(top - 1) {
        top -= 1;
    }
    let mut bottom = k;
    while bottom + 1 < grad.len() && inside(bottom + 1) {
        bottom += 1;
    }
    let drop: f64 = (top..=bottom).filter_map(|i| grad[i]).sum::<f64>() * dz_m;
    if g >= 0.0 || -drop < MIN_DROP_LOG10 {
        return None;
    }
    // The gradient-weighted middle of the peak (window i spans samples i and i + 1, whose
    // boundary lies at (i + 1)·dz below the surface).
    let depth = (top..=bottom)
        .filter_map(|i| grad[i].map(|g| g * (i as f64 + 1.0) * dz_m))
        .sum::<f64>()
        / (drop / dz_m);
    let half_width = 0.5 * (bottom - top + 1) as f64 * dz_m;
    Some((depth, half_width))
}

/// The vertical extent of the cell at `(x, z)`, m (0 outside the mesh).
fn cell_height_m(section: &ModelSection, x: f64, z: f64) -> f64 {
    section.param_at(x, z).map_or(0.0, |j| {
        let p = section.param_polygon(j);
        let (lo, hi) = p
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v[1]), b.max(v[1]))
            });
        hi - lo
    })
}

/// Whether each parameter's coverage is at least `min_coverage` of the largest.
pub fn covered_cells(coverage: &[f64], min_coverage: f64) -> Vec<bool> {
    let max = coverage.iter().copied().fold(0.0, f64::max);
    coverage.iter().map(|&c| c >= min_coverage * max).collect()
}

/// The water table from a resistivity model (module docs); `None` when no profile shows a
/// strong enough decrease. `max_depth_m` bounds the search (a quarter of the spread is the
/// usual depth of investigation of a surface line).
pub fn water_table(
    section: &ModelSection,
    rho_ohm_m: &[f64],
    coverage: &[f64],
    min_coverage: f64,
    max_depth_m: f64,
) -> Option<DepthEstimate> {
    let covered = covered_cells(coverage, min_coverage);
    let xs: Vec<f64> = section.electrodes_xz.iter().map(|e| e[0]).collect();
    let dz = 0.25;
    let mut profile = DepthProfile::default();
    let mut widths = Vec::new();
    for &x in xs.iter().skip(1).take(xs.len().saturating_sub(2)) {
        let p = log_profile(section, rho_ohm_m, &covered, x, dz, max_depth_m);
        if let Some((d, w)) = strongest_drop(&p, dz) {
            let z = interp(&section.surface_xz, x) - d;
            profile.push(x, d, z);
            let h =
                cell_height_m(section, x, z + 0.5 * dz) + cell_height_m(section, x, z - 0.5 * dz);
            widths.push(w.max(0.25 * h));
        }
    }
    let resolution = median(&widths)?;
    summarise(
        profile,
        resolution,
        format!(
            "ERT water table: depth of the strongest downward resistivity decrease on vertical profiles under the electrodes, in cells with at least {} % of the largest coverage",
            100.0 * min_coverage
        ),
    )
}

/// Where and how much one time step changed against the baseline (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeRegion {
    /// The step's label.
    pub label: String,
    /// Cells in the region.
    pub n_cells: usize,
    /// −1 for a resistivity decrease, +1 for an increase.
    pub sign: i8,
    /// Centroid along the line, m.
    pub centroid_x_m: f64,
    /// Centroid depth below the surface, m.
    pub centroid_depth_m: f64,
    /// Uncertainty of the centroid along the line (contour-level spread, module docs), m.
    pub centroid_x_sigma_m: f64,
    /// Uncertainty of the centroid depth (contour-level spread, module docs), m.
    pub centroid_depth_sigma_m: f64,
    /// x extent, m.
    pub x_range_m: (f64, f64),
    /// Depth extent, m.
    pub depth_range_m: (f64, f64),
    /// Area of the region, m².
    pub area_m2: f64,
    /// Median change in the region, %.
    pub median_percent: f64,
    /// The largest change (in size, with its sign), %.
    pub max_percent: f64,
}

/// The `|Δ| · area`-weighted centroid `(x, depth)` of the covered cells whose change has
/// the sign `sign` and at least `level · |peak_percent|` in size, m; `None` when none is.
fn contour_centroid(
    section: &ModelSection,
    change_percent: &[f64],
    covered: &[bool],
    sign: f64,
    min_percent: f64,
) -> Option<(f64, f64)> {
    let (mut wsum, mut xw, mut dw) = (0.0, 0.0, 0.0);
    for (j, &change) in change_percent.iter().enumerate() {
        let c = change * sign;
        if covered[j] && c.is_finite() && c >= min_percent {
            let w = c * section.param_area_m2[j];
            wsum += w;
            xw += w * section.param_centroid_m[j][0];
            dw += w * section.param_depth_m(j);
        }
    }
    (wsum > 0.0).then(|| (xw / wsum, dw / wsum))
}

/// The half-maximum centroid and its contour-level uncertainty `(x, depth, σx, σdepth)`
/// (module docs).
fn anomaly_centroid(
    section: &ModelSection,
    change_percent: &[f64],
    covered: &[bool],
    peak_percent: f64,
) -> Option<(f64, f64, f64, f64)> {
    let sign = peak_percent.signum();
    let at = |level: f64| {
        contour_centroid(
            section,
            change_percent,
            covered,
            sign,
            level * peak_percent.abs(),
        )
    };
    let (x, d) = at(CONTOUR_LEVELS[1])?;
    let all: Vec<(f64, f64)> = CONTOUR_LEVELS.iter().filter_map(|&l| at(l)).collect();
    let half_range = |v: Vec<f64>| {
        let (a, b) = min_max(&v);
        0.5 * (b - a)
    };
    Some((
        x,
        d,
        half_range(all.iter().map(|p| p.0).collect()),
        half_range(all.iter().map(|p| p.1).collect()),
    ))
}

/// The smallest and largest of `v` (`(inf, -inf)` when empty).
fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        })
}

/// The changed region of one step (module docs); `None` when no covered cell changed by
/// `threshold_percent` or more.
pub fn change_region(
    section: &ModelSection,
    change_percent: &[f64],
    covered: &[bool],
    threshold_percent: f64,
    label: &str,
) -> Option<ChangeRegion> {
    // The centroid is taken on the log ratio ln(ρ_t/ρ_0) = ln(1 + p/100) (module docs).
    let log_change: Vec<f64> = change_percent
        .iter()
        .map(|p| (1.0 + p / 100.0).max(1e-12).ln())
        .collect();
    let biggest = (0..change_percent.len())
        .filter(|&j| covered[j] && log_change[j].is_finite())
        .max_by(|&a, &b| log_change[a].abs().total_cmp(&log_change[b].abs()))?;
    let max_percent = change_percent[biggest];
    let sign: i8 = if max_percent < 0.0 { -1 } else { 1 };
    let cells: Vec<usize> = (0..change_percent.len())
        .filter(|&j| covered[j] && change_percent[j] * f64::from(sign) >= threshold_percent)
        .collect();
    if cells.is_empty() {
        return None;
    }
    let (cx, cd, sx, sd) = anomaly_centroid(section, &log_change, covered, log_change[biggest])?;
    let xs: Vec<f64> = cells
        .iter()
        .map(|&j| section.param_centroid_m[j][0])
        .collect();
    let ds: Vec<f64> = cells.iter().map(|&j| section.param_depth_m(j)).collect();
    let values: Vec<f64> = cells.iter().map(|&j| change_percent[j]).collect();
    Some(ChangeRegion {
        label: label.to_string(),
        n_cells: cells.len(),
        sign,
        centroid_x_m: cx,
        centroid_depth_m: cd,
        centroid_x_sigma_m: sx,
        centroid_depth_sigma_m: sd,
        x_range_m: min_max(&xs),
        depth_range_m: min_max(&ds),
        area_m2: cells.iter().map(|&j| section.param_area_m2[j]).sum(),
        median_percent: median(&values).unwrap_or(f64::NAN),
        max_percent,
    })
}

/// How a changed region evolved from one step to the next: `growing` / `shrinking` when its
/// area changed by more than `10 %`, `moving` when its centroid moved by more than a
/// quarter of its width, else `steady`.
pub fn evolution(prev: &ChangeRegion, next: &ChangeRegion) -> &'static str {
    let ratio = next.area_m2 / prev.area_m2.max(f64::MIN_POSITIVE);
    let width = (prev.x_range_m.1 - prev.x_range_m.0).max(f64::MIN_POSITIVE);
    if ratio > 1.1 {
        "growing"
    } else if ratio < 1.0 / 1.1 {
        "shrinking"
    } else if (next.centroid_x_m - prev.centroid_x_m).abs() > 0.25 * width {
        "moving"
    } else {
        "steady"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strongest_drop_is_found_with_its_width() {
        let dz = 0.25;
        // log10 ρ: 2.8 down to 2.0 m, a linear fall to 2.1 between 3 and 5 m, then flat.
        let p: Vec<Option<f64>> = (0..40)
            .map(|k| {
                let d = (k as f64 + 0.5) * dz;
                Some(if d < 3.0 {
                    2.8
                } else if d < 5.0 {
                    2.8 - 0.35 * (d - 3.0)
                } else {
                    2.1
                })
            })
            .collect();
        let (d, w) = strongest_drop(&p, dz).unwrap();
        assert!((3.0..=5.0).contains(&d), "{d}");
        // The fall spans 2 m: half-width 1 m (± one sample).
        assert!((w - 1.0).abs() <= dz + 1e-9, "{w}");
        // A rise, or a fall smaller than 20 %, is no water table.
        let rise: Vec<Option<f64>> = (0..20).map(|k| Some(2.0 + 0.01 * k as f64)).collect();
        assert!(strongest_drop(&rise, dz).is_none());
        let small: Vec<Option<f64>> = (0..20)
            .map(|k| Some(if k < 10 { 2.0 } else { 1.95 }))
            .collect();
        assert!(strongest_drop(&small, dz).is_none());
    }

    /// A triangulated section 10 m long, flat surface at z = 0, rows 1 m tall down to 4 m and
    /// 2 m tall below, 500 Ω·m above 4 m and 100 Ω·m below, electrodes every metre. The
    /// step is sharp, so the gradient peak is one 0.25 m sample wide (half-width 0.125 m);
    /// but a model constant per cell says only that the boundary lies within about a cell:
    /// the resolution is (1 + 2)/4 = 0.75 m (module docs), and the depth 4 m ± one sample.
    #[test]
    fn a_sharp_step_on_coarse_cells_is_placed_no_better_than_the_cells() {
        let xs: Vec<f64> = (0..=10).map(f64::from).collect();
        let zs = [0.0, -1.0, -2.0, -3.0, -4.0, -6.0, -8.0, -10.0, -12.0];
        let node = |i: usize, k: usize| k * xs.len() + i;
        let nodes: Vec<[f64; 2]> = zs
            .iter()
            .flat_map(|&z| xs.iter().map(move |&x| [x, z]))
            .collect();
        let mut cells = Vec::new();
        let mut rho = Vec::new();
        for k in 0..zs.len() - 1 {
            for i in 0..xs.len() - 1 {
                let (ll, lr) = (node(i, k + 1), node(i + 1, k + 1));
                let (ul, ur) = (node(i, k), node(i + 1, k));
                cells.push([ll, lr, ur]);
                cells.push([ll, ur, ul]);
                let r = if zs[k] > -4.0 { 500.0 } else { 100.0 };
                rho.extend([r, r]);
            }
        }
        let mut s = graded_section();
        let n = cells.len();
        s.param_cell = (0..n).collect();
        s.param_area_m2 = vec![1.0; n];
        s.param_centroid_m = cells
            .iter()
            .map(|c| {
                let p = c.map(|i| nodes[i]);
                [
                    (p[0][0] + p[1][0] + p[2][0]) / 3.0,
                    (p[0][1] + p[1][1] + p[2][1]) / 3.0,
                ]
            })
            .collect();
        s.mesh.nodes = nodes;
        s.mesh.cells = cells;
        s.electrodes_xz = xs.iter().map(|&x| [x, 0.0]).collect();
        s.surface_xz = vec![[0.0, 0.0], [10.0, 0.0]];
        let e = water_table(&s, &rho, &vec![1.0; n], 0.0, 11.0).expect("a water table");
        assert!((e.depth_m - 4.0).abs() <= 0.25, "{e:?}");
        assert!((e.resolution_m - 0.75).abs() < 1e-9, "{e:?}");
        assert!(e.uncertainty_m >= 0.75, "{e:?}");
    }

    /// Cells of a flat section (surface at z = 0): 1 m columns from x = 0 to 80 m, layers
    /// 0.5 m thick at the top growing by 10 % per layer (as an inversion mesh coarsens with
    /// depth), down to 30 m. Only what the centroid reads is filled in.
    fn graded_section() -> ModelSection {
        let (mut area, mut centre) = (Vec::new(), Vec::new());
        let (mut top, mut h) = (0.0_f64, 0.5_f64);
        while top < 30.0 {
            for i in 0..80 {
                area.push(h);
                centre.push([i as f64 + 0.5, -(top + 0.5 * h)]);
            }
            top += h;
            h *= 1.1;
        }
        ModelSection {
            mesh: super::super::mesh::Mesh {
                nodes: Vec::new(),
                cells: Vec::new(),
                cell_marker: Vec::new(),
                boundary: Vec::new(),
                electrode_nodes: Vec::new(),
            },
            cell_param: Vec::new(),
            param_cell: vec![0; area.len()],
            param_area_m2: area,
            param_centroid_m: centre,
            param_region: Vec::new(),
            neighbours: Vec::new(),
            electrodes_xz: Vec::new(),
            surface_xz: vec![[-10.0, 0.0], [90.0, 0.0]],
            interfaces: Vec::new(),
        }
    }

    /// A compact conductor at x = 40 m, 7.5 m deep (Gaussian, σ 2 m, −80 % at its centre) with
    /// the smeared tail a smooth inversion leaves under it (−15 % from 10 to 25 m deep over
    /// 16 m of line). Every cell above 10 % weighted by its area puts the centroid 5 m too
    /// deep; the half-maximum contour's centroid lies within 0.3 m of the body's centre (the
    /// tolerance: the cells are 0.8–1.1 m tall at that depth).
    #[test]
    fn the_change_centroid_is_the_half_maximum_contours_not_the_tails() {
        let s = graded_section();
        let change: Vec<f64> = (0..s.n_params())
            .map(|j| {
                let (x, d) = (s.param_centroid_m[j][0], s.param_depth_m(j));
                let body = -80.0 * (-((x - 40.0).powi(2) + (d - 7.5).powi(2)) / 8.0).exp();
                let tail = if (10.0..25.0).contains(&d) && (x - 40.0).abs() < 8.0 {
                    -15.0
                } else {
                    0.0
                };
                body.min(tail)
            })
            .collect();
        let covered = vec![true; change.len()];
        let r = change_region(&s, &change, &covered, 10.0, "t1").unwrap();
        assert!((r.centroid_x_m - 40.0).abs() <= 0.3, "{r:?}");
        assert!((r.centroid_depth_m - 7.5).abs() <= 0.3, "{r:?}");
        // The extent is still the whole region above the threshold, tail included.
        assert!(r.depth_range_m.1 > 20.0, "{r:?}");
        // The old estimator on the same cells, to show the test can fail: the area-weighted
        // centroid of everything above 10 % is pulled metres down by the tail.
        let old = contour_centroid(&s, &change, &covered, -1.0, 10.0).unwrap();
        assert!(
            old.1 > 9.5,
            "the tail pulls the threshold centroid down: {old:?}"
        );
        // The contour-level spread is small for a compact body, and stated.
        assert!((0.0..1.0).contains(&r.centroid_depth_sigma_m), "{r:?}");
        // No change at all: no region.
        assert!(change_region(&s, &vec![0.0; change.len()], &covered, 10.0, "t0").is_none());
    }

    /// A vacated conductor: its resistivity rose 27× (+2572 %) in the unsaturated top, 1–3 m
    /// deep, and 10× (+900 %) in its saturated lower part, 8–12 m deep, over the same width.
    /// On the log ratio both are within half the peak (ln 27 = 3.3, ln 10 = 2.3), so the
    /// centroid lies between them; on the percentage the lower part (900 < 2572/2) would drop
    /// out and the centroid would sit in the top (the 2 m water-table truth of the answers
    /// issue).
    #[test]
    fn the_change_centroid_weighs_equal_factors_alike_not_percentages() {
        let s = graded_section();
        let change: Vec<f64> = (0..s.n_params())
            .map(|j| {
                let (x, d) = (s.param_centroid_m[j][0], s.param_depth_m(j));
                if (x - 40.0).abs() > 4.0 {
                    0.0
                } else if (1.0..3.0).contains(&d) {
                    2572.0
                } else if (8.0..12.0).contains(&d) {
                    900.0
                } else {
                    0.0
                }
            })
            .collect();
        let covered = vec![true; change.len()];
        let r = change_region(&s, &change, &covered, 10.0, "t3").unwrap();
        assert!(r.max_percent > 2500.0, "{r:?}");
        assert!(
            (4.0..9.0).contains(&r.centroid_depth_m),
            "between the two parts: {r:?}"
        );
        // The percentage's half-maximum holds the top only.
        let by_percent = contour_centroid(&s, &change, &covered, 1.0, 0.5 * 2572.0).unwrap();
        assert!(by_percent.1 < 3.0, "{by_percent:?}");
    }
}

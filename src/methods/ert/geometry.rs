//! The layout of a survey's electrodes: a line along the surface (what the 2D inversion
//! here models) or something else — a closed ring (a tree-trunk or column cross-section),
//! boreholes, an areal (3D) grid, or electrodes below one another — recognised and named so
//! that a reader's summary says it and a 2D surface inversion refuses with that reason
//! instead of failing inside the mesh.

use super::survey::Electrode;
use serde::Serialize;

/// How the electrodes are laid out.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Layout {
    /// One line of electrodes along the ground surface (elevation a function of distance).
    SurfaceLine,
    /// Electrodes all around a centre (no angular gap above 90°, radii within 20 %).
    ClosedRing {
        /// Mean distance from the centre, m.
        radius_m: f64,
        /// `vertical` (a cross-section in the line's plane) or `horizontal` (in x–y).
        plane: &'static str,
    },
    /// Electrodes stacked at one horizontal position (three or more at distinct depths).
    Boreholes {
        /// Number of such positions.
        n_boreholes: usize,
        /// Electrodes in them.
        n_in_boreholes: usize,
    },
    /// Electrodes spread over an area (the width across the line is above 20 % of its length).
    Areal3d {
        /// Extent along the principal horizontal direction, m.
        length_m: f64,
        /// Extent across it, m.
        width_m: f64,
    },
    /// In one vertical plane but not a surface line: two electrodes at the same distance
    /// along the line at different elevations.
    NotALine {
        /// The first such pair (0-based electrode indices).
        pair: [usize; 2],
    },
}

impl Layout {
    /// Whether the 2D surface-line inversion can model this layout.
    pub fn is_surface_line(&self) -> bool {
        matches!(self, Layout::SurfaceLine)
    }

    /// The layout in words, for the loader's summary.
    pub fn describe(&self) -> String {
        match self {
            Layout::SurfaceLine => "a line along the surface".into(),
            Layout::ClosedRing { radius_m, plane } => format!(
                "a closed ring ({plane}, radius {radius_m:.3} m: electrodes all around a centre, \
                 as on a tree trunk or a column)"
            ),
            Layout::Boreholes {
                n_boreholes,
                n_in_boreholes,
            } => format!(
                "borehole electrodes ({n_in_boreholes} electrodes in {n_boreholes} borehole(s), \
                 stacked at one horizontal position)"
            ),
            Layout::Areal3d { length_m, width_m } => {
                format!("a 3D (areal) layout, {length_m:.2} m × {width_m:.2} m, not one line")
            }
            Layout::NotALine { pair } => format!(
                "not a surface line: electrodes {} and {} lie at the same distance along the \
                 line at different elevations",
                pair[0] + 1,
                pair[1] + 1
            ),
        }
    }

    /// Why a 2D surface-line inversion cannot be run on this layout (`None` when it can).
    pub fn refusal(&self) -> Option<String> {
        (!self.is_surface_line()).then(|| {
            format!(
                "the electrodes form {}; the inversion here is a 2D surface-line inversion (a \
                 half-space under a line of surface electrodes) and cannot model this geometry",
                self.describe()
            )
        })
    }
}

/// Tolerance of "the same position", m: 1e-3 of the survey's extent (at least 1 µm).
fn tolerance_m(e: &[Electrode]) -> f64 {
    let ext = |f: fn(&Electrode) -> f64| {
        let lo = e.iter().map(f).fold(f64::INFINITY, f64::min);
        let hi = e.iter().map(f).fold(f64::NEG_INFINITY, f64::max);
        hi - lo
    };
    let span = ext(|p| p.x_m).max(ext(|p| p.y_m)).max(ext(|p| p.z_m));
    (1e-3 * span).max(1e-6)
}

/// Principal horizontal axes of the electrodes (the eigenvectors of the x–y covariance):
/// each electrode's (along, across) coordinates.
fn horizontal_frame(e: &[Electrode]) -> Vec<[f64; 2]> {
    let n = e.len() as f64;
    let (mx, my) = (
        e.iter().map(|p| p.x_m).sum::<f64>() / n,
        e.iter().map(|p| p.y_m).sum::<f64>() / n,
    );
    let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
    for p in e {
        let (dx, dy) = (p.x_m - mx, p.y_m - my);
        sxx += dx * dx;
        syy += dy * dy;
        sxy += dx * dy;
    }
    // Angle of the major axis of a symmetric 2×2 matrix: ½·atan2(2sxy, sxx − syy).
    let th = 0.5 * (2.0 * sxy).atan2(sxx - syy);
    let (c, s) = (th.cos(), th.sin());
    e.iter()
        .map(|p| {
            let (dx, dy) = (p.x_m - mx, p.y_m - my);
            [dx * c + dy * s, -dx * s + dy * c]
        })
        .collect()
}

fn extent(v: impl Iterator<Item = f64> + Clone) -> f64 {
    let lo = v.clone().fold(f64::INFINITY, f64::min);
    let hi = v.fold(f64::NEG_INFINITY, f64::max);
    hi - lo
}

/// A closed ring in 2D: radii about the centroid within 20 % (coefficient of variation) and
/// no angular gap above 90°. Returns the mean radius.
fn ring_radius(p: &[[f64; 2]]) -> Option<f64> {
    if p.len() < 4 {
        return None;
    }
    let n = p.len() as f64;
    let c = [
        p.iter().map(|q| q[0]).sum::<f64>() / n,
        p.iter().map(|q| q[1]).sum::<f64>() / n,
    ];
    let r: Vec<f64> = p.iter().map(|q| (q[0] - c[0]).hypot(q[1] - c[1])).collect();
    let mean = r.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let sd = (r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    if sd / mean > 0.2 {
        return None;
    }
    let mut ang: Vec<f64> = p.iter().map(|q| (q[1] - c[1]).atan2(q[0] - c[0])).collect();
    ang.sort_by(f64::total_cmp);
    let wrap = ang[0] + std::f64::consts::TAU - ang[ang.len() - 1];
    let max_gap = ang.windows(2).map(|w| w[1] - w[0]).fold(wrap, f64::max);
    (max_gap <= std::f64::consts::FRAC_PI_2).then_some(mean)
}

/// Recognise the layout of `electrodes` (fewer than three electrodes: a surface line).
pub fn classify(electrodes: &[Electrode]) -> Layout {
    let e: Vec<&Electrode> = electrodes
        .iter()
        .filter(|p| p.x_m.is_finite() && p.y_m.is_finite() && p.z_m.is_finite())
        .collect();
    if e.len() < 3 {
        return Layout::SurfaceLine;
    }
    let e: Vec<Electrode> = e.into_iter().cloned().collect();
    let tol = tolerance_m(&e);
    let h = horizontal_frame(&e);
    let length_m = extent(h.iter().map(|q| q[0]));
    let width_m = extent(h.iter().map(|q| q[1]));
    if width_m > tol && width_m > 0.2 * length_m {
        if let Some(radius_m) = ring_radius(&h) {
            return Layout::ClosedRing {
                radius_m,
                plane: "horizontal",
            };
        }
        return Layout::Areal3d { length_m, width_m };
    }
    let sz: Vec<[f64; 2]> = h.iter().zip(&e).map(|(q, p)| [q[0], p.z_m]).collect();
    if let Some(radius_m) = ring_radius(&sz) {
        return Layout::ClosedRing {
            radius_m,
            plane: "vertical",
        };
    }
    let mut order: Vec<usize> = (0..sz.len()).collect();
    order.sort_by(|&a, &b| {
        sz[a][0]
            .total_cmp(&sz[b][0])
            .then(sz[a][1].total_cmp(&sz[b][1]))
    });
    // Runs of electrodes at one distance along the line.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for &i in &order {
        match groups.last_mut() {
            Some(g) if (sz[i][0] - sz[g[0]][0]).abs() <= tol => g.push(i),
            _ => groups.push(vec![i]),
        }
    }
    let stacked = |g: &Vec<usize>| {
        let mut z: Vec<f64> = g.iter().map(|&i| sz[i][1]).collect();
        z.sort_by(f64::total_cmp);
        z.dedup_by(|a, b| (*a - *b).abs() <= tol);
        z.len()
    };
    let holes: Vec<&Vec<usize>> = groups.iter().filter(|g| stacked(g) >= 3).collect();
    if !holes.is_empty() {
        return Layout::Boreholes {
            n_boreholes: holes.len(),
            n_in_boreholes: holes.iter().map(|g| g.len()).sum(),
        };
    }
    if let Some(g) = groups.iter().find(|g| stacked(g) >= 2) {
        let mut pair = [g[0], g[1]];
        pair.sort_unstable();
        return Layout::NotALine { pair };
    }
    Layout::SurfaceLine
}

#[cfg(test)]
mod tests {
    //! Layouts written for each case; the expected radius is the one the points were placed on.
    use super::*;

    fn el(x: f64, y: f64, z: f64) -> Electrode {
        Electrode::at(x, y, z)
    }

    #[test]
    fn a_line_with_topography_is_a_surface_line() {
        let e: Vec<Electrode> = (0..24)
            .map(|i| el(i as f64, 0.0, (i as f64 * 0.3).sin()))
            .collect();
        assert_eq!(classify(&e), Layout::SurfaceLine);
        // Along a diagonal in x–y, too.
        let e: Vec<Electrode> = (0..10).map(|i| el(i as f64, 2.0 * i as f64, 0.0)).collect();
        assert_eq!(classify(&e), Layout::SurfaceLine);
    }

    #[test]
    fn a_tree_trunk_ring_is_recognised_and_refused() {
        // 24 electrodes on a circle of radius 0.232 m in the x–z plane (issue 22's trunk).
        let e: Vec<Electrode> = (0..24)
            .map(|i| {
                let t = i as f64 * std::f64::consts::TAU / 24.0;
                el(0.232 * t.sin(), 0.0, 0.232 * t.cos())
            })
            .collect();
        let l = classify(&e);
        let Layout::ClosedRing { radius_m, plane } = l else {
            panic!("{l:?}");
        };
        assert!((radius_m - 0.232).abs() < 1e-12);
        assert_eq!(plane, "vertical");
        let why = l.refusal().unwrap();
        assert!(
            why.contains("closed ring") && why.contains("2D surface-line"),
            "{why}"
        );
        assert!(!why.contains("mesh node"));
    }

    #[test]
    fn boreholes_grids_and_stacked_pairs() {
        let mut e: Vec<Electrode> = (0..10).map(|i| el(i as f64, 0.0, 0.0)).collect();
        for k in 1..=8 {
            e.push(el(0.0, 0.0, -(k as f64)));
            e.push(el(9.0, 0.0, -(k as f64)));
        }
        assert_eq!(
            classify(&e),
            Layout::Boreholes {
                n_boreholes: 2,
                n_in_boreholes: 18
            }
        );
        let grid: Vec<Electrode> = (0..25)
            .map(|i| el((i % 5) as f64, (i / 5) as f64, 0.0))
            .collect();
        assert!(matches!(classify(&grid), Layout::Areal3d { .. }));
        let mut pair: Vec<Electrode> = (0..5).map(|i| el(i as f64, 0.0, 0.0)).collect();
        pair.push(el(2.0, 0.0, -1.0));
        assert_eq!(classify(&pair), Layout::NotALine { pair: [2, 5] });
        assert!(Layout::SurfaceLine.refusal().is_none());
    }
}

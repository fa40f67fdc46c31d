//! The water table from layered (1D) models of soundings — TDEM and MT — read on the
//! model's interfaces as the ERT section is read on its profiles: the steps
//! `gᵢ = log10 ρᵢ₊₁ − log10 ρᵢ` at the interface depths `zᵢ`; around the most negative
//! `g_k`, the run of neighbouring interfaces with `g ≤ g_k / 2` is one fall (a smooth model
//! spreads a step over several layers); the fall counts when `−Σg ≥ MIN_DROP_LOG10` (20 %),
//! and its depth is the step-weighted mean `Σ gᵢ zᵢ / Σ gᵢ`.
//!
//! A 1D model says something only between two depths: below the shallowest depth its data
//! resolve (the earliest TDEM gate's diffusion depth, the shortest MT period's Niblett–
//! Bostick depth; each method states its own) and above its depth of investigation — and
//! no deeper than the search limit, below which a fall is a conductor (clay, saline water,
//! a deep aquifer), not the water table (the answer settings'
//! `sounding_water_table_max_depth_m`). Only interfaces inside that window are read, and a
//! fall that goes on past the window's edge (the next interface outside continues it) is
//! not read either: a smooth model spreads a deeper conductor's top upwards over tens of
//! metres (the example's at 150 m falls through 45–100 m), and such a fall belongs to
//! something outside the window, not to a step the data place. A sounding gives no depth
//! when no fall lies in its window; the reading says why, so that "TDEM cannot see a water
//! table 4 m deep" is an answer and not a silence.
//!
//! Resolution: half the depth range the fall spans, but never less than a quarter of the
//! two layers' thicknesses at its depth (the ERT reading's floor: a model constant per
//! layer puts every step on a layer boundary), `σ = max(w_half, (h_above + h_below)/4)`;
//! the summary over soundings is [`summarise`]'s.

use super::depth::{DepthEstimate, DepthProfile, MIN_DROP_LOG10, summarise};

/// One sounding's model and the depths its data resolve.
#[derive(Debug, Clone, PartialEq)]
pub struct LayeredSounding {
    /// Its name (for the reasons).
    pub name: String,
    /// Position along the line, m.
    pub x_m: f64,
    /// Ground elevation, m (0 when the file gives none).
    pub surface_z_m: f64,
    /// Layer resistivities top down, Ω·m; the last the half-space.
    pub rho_ohm_m: Vec<f64>,
    /// Thicknesses of all layers but the last, m.
    pub thickness_m: Vec<f64>,
    /// The shallowest depth the data resolve, m.
    pub shallowest_m: f64,
    /// The depth of investigation, m.
    pub doi_m: f64,
}

/// What one sounding's fall is.
enum Fall {
    /// Inside the window: depth and half-width, m.
    Read(f64, f64),
    /// The strongest fall runs past the window's edge; its depth, m.
    AtEdge(f64),
    /// No fall of 20 % in the window.
    None,
}

impl LayeredSounding {
    /// The layer at `depth_m` below the surface (the half-space below the last interface).
    fn layer_at(&self, depth_m: f64) -> usize {
        let mut top = 0.0;
        for (i, h) in self.thickness_m.iter().enumerate() {
            top += h;
            if depth_m < top {
                return i;
            }
        }
        self.thickness_m.len()
    }

    /// The thickness of layer `i` (the half-space: the layer above's, or the window).
    fn thickness(&self, i: usize) -> f64 {
        self.thickness_m
            .get(i)
            .or(self.thickness_m.last())
            .copied()
            .unwrap_or(self.doi_m)
    }

    /// The fall inside the window `[shallowest, doi]` (module docs).
    fn fall(&self) -> Fall {
        let z: Vec<f64> = self
            .thickness_m
            .iter()
            .scan(0.0, |top, h| {
                *top += h;
                Some(*top)
            })
            .collect();
        let g: Vec<f64> = self
            .rho_ohm_m
            .windows(2)
            .map(|w| w[1].log10() - w[0].log10())
            .collect();
        let n = z.len().min(g.len());
        let inside = |i: usize| z[i] >= self.shallowest_m && z[i] <= self.doi_m;
        let Some((k, gk)) = (0..n)
            .filter(|&i| inside(i) && g[i].is_finite())
            .map(|i| (i, g[i]))
            .min_by(|a, b| a.1.total_cmp(&b.1))
        else {
            return Fall::None;
        };
        let falls = |i: usize| g[i] <= 0.5 * gk;
        let (mut top, mut bottom) = (k, k);
        while top > 0 && falls(top - 1) {
            top -= 1;
        }
        while bottom + 1 < n && falls(bottom + 1) {
            bottom += 1;
        }
        let sum: f64 = (top..=bottom).map(|i| g[i]).sum();
        if gk >= 0.0 || -sum < MIN_DROP_LOG10 {
            return Fall::None;
        }
        let depth = (top..=bottom).map(|i| g[i] * z[i]).sum::<f64>() / sum;
        if inside(top) && inside(bottom) {
            Fall::Read(depth, 0.5 * (z[bottom] - z[top]))
        } else {
            Fall::AtEdge(depth)
        }
    }
}

/// The water table from `soundings` (module docs), or why there is none, searched no deeper
/// than `max_depth_m`: `method` names the method in the sentence and the reason.
pub fn water_table(
    soundings: &[LayeredSounding],
    method: &str,
    max_depth_m: f64,
) -> Result<DepthEstimate, String> {
    if soundings.is_empty() {
        return Err(format!("no {method} sounding was inverted"));
    }
    let soundings: Vec<LayeredSounding> = soundings
        .iter()
        .map(|s| LayeredSounding {
            doi_m: s.doi_m.min(max_depth_m),
            ..s.clone()
        })
        .collect();
    let mut profile = DepthProfile::default();
    let mut widths = Vec::new();
    let mut at_edge = Vec::new();
    for s in &soundings {
        match s.fall() {
            Fall::Read(d, w) => {
                let above = s.thickness(s.layer_at(d - 1e-6));
                let below = s.thickness(s.layer_at(d + 1e-6));
                profile.push(s.x_m, d, s.surface_z_m - d);
                widths.push(w.max(0.25 * (above + below)));
            }
            Fall::AtEdge(d) => at_edge.push(format!("{} (centred at {d:.1} m)", s.name)),
            Fall::None => {}
        }
    }
    let edge_note = if at_edge.is_empty() {
        String::new()
    } else {
        format!(
            "; the strongest fall of {} runs past the edge of its window — the top of something deeper (or a step shallower) that the data do not place: not read",
            at_edge.join(", ")
        )
    };
    let windows: Vec<String> = soundings
        .iter()
        .map(|s| {
            format!(
                "{} {:.1}–{:.1} m",
                s.name,
                s.shallowest_m,
                s.doi_m.max(s.shallowest_m)
            )
        })
        .collect();
    let Some(resolution) = super::depth::median(&widths) else {
        return Err(format!(
            "no downward resistivity decrease of 20 % or more between the shallowest depth the data resolve and the depth of investigation (at most {max_depth_m} m, the deepest a water table is looked for) of any {method} sounding ({}){}{edge_note}",
            windows.join(", "),
            if soundings.iter().all(|s| s.shallowest_m >= s.doi_m) {
                " — the data resolve no depth window at all"
            } else {
                ""
            }
        ));
    };
    let n_used = profile.len();
    summarise(
        profile,
        resolution,
        format!(
            "{method} water table: the depth of the strongest downward resistivity fall of each sounding's layered model between the shallowest depth its data resolve and its DOI, at most {max_depth_m} m ({n_used} of {} soundings; windows {}){edge_note}",
            soundings.len(),
            windows.join(", ")
        ),
    )
    .ok_or_else(|| format!("no {method} sounding gave a depth"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sounding(rho: &[f64], h: &[f64], shallowest: f64, doi: f64, x: f64) -> LayeredSounding {
        LayeredSounding {
            name: format!("s{x}"),
            x_m: x,
            surface_z_m: 100.0,
            rho_ohm_m: rho.to_vec(),
            thickness_m: h.to_vec(),
            shallowest_m: shallowest,
            doi_m: doi,
        }
    }

    #[test]
    fn a_sharp_drop_inside_the_window_is_the_water_table_to_a_quarter_of_its_layers() {
        // 0–6 m at 600 Ω·m, 6–10 m at 130 Ω·m, then 2000 Ω·m: the fall at the 6 m
        // interface is read exactly, its σ the floor (6 + 4)/4 = 2.5 m.
        let s: Vec<_> = (0..3)
            .map(|i| {
                sounding(
                    &[600.0, 130.0, 2000.0],
                    &[6.0, 4.0],
                    1.0,
                    40.0,
                    10.0 * i as f64,
                )
            })
            .collect();
        let e = water_table(&s, "TDEM", 100.0).expect("a water table");
        assert!((e.depth_m - 6.0).abs() < 1e-9, "{}", e.depth_m);
        assert!((e.resolution_m - 2.5).abs() < 1e-9, "{}", e.resolution_m);
        assert_eq!(e.spread_m, 0.0);
        assert_eq!(e.profile.z_m, vec![94.0; 3]);
    }

    #[test]
    fn a_drop_above_the_shallowest_resolved_depth_or_below_the_doi_is_not_read() {
        // The same model, but the data resolve only 20–40 m: the 6 m drop is not theirs.
        let shallow = [sounding(
            &[600.0, 130.0, 2000.0],
            &[6.0, 4.0],
            20.0,
            40.0,
            0.0,
        )];
        let why = water_table(&shallow, "TDEM", 100.0).expect_err("not resolved");
        assert!(why.contains("s0 20.0–40.0 m"), "{why}");
        // And a DOI of 5 m ends the window above it.
        let deep = [sounding(
            &[600.0, 130.0, 2000.0],
            &[6.0, 4.0],
            0.0,
            5.0,
            0.0,
        )];
        assert!(water_table(&deep, "MT", 100.0).is_err());
        // A search limit above the drop hides it too (the 6 m drop, searched to 5 m).
        let s = [sounding(
            &[600.0, 130.0, 2000.0],
            &[6.0, 4.0],
            0.0,
            40.0,
            0.0,
        )];
        assert!(water_table(&s, "TDEM", 5.0).is_err());
        assert!(water_table(&s, "TDEM", 7.0).is_ok());
        // A window that is empty says so.
        let none = [sounding(&[600.0, 130.0], &[6.0], 50.0, 40.0, 0.0)];
        let why = water_table(&none, "MT", 100.0).expect_err("no window");
        assert!(why.contains("resolve no depth window"), "{why}");
    }

    #[test]
    fn a_fall_that_runs_past_the_window_is_not_read() {
        // A smooth fall from 300 to 30 Ω·m over 80–120 m (log-linear in 1 m layers), the
        // window ending at 100 m: the fall runs past the edge, so it is not a step the data
        // place; searched to 150 m it is read in the middle of the fall (interfaces 81–120 m:
        // 100.5 m), σ its half-span 19.5 m.
        let mut rho = vec![300.0; 80];
        rho.extend((0..=40).map(|k| 300.0 * 10f64.powf(-(k as f64) / 40.0)));
        rho.extend([30.0; 20]);
        let h = vec![1.0; rho.len() - 1];
        let s = [sounding(&rho, &h, 20.0, 200.0, 0.0)];
        let why = water_table(&s, "TDEM", 100.0).expect_err("at the edge");
        assert!(why.contains("runs past the edge of its window"), "{why}");
        let e = water_table(&s, "TDEM", 150.0).expect("inside");
        assert!((e.depth_m - 100.5).abs() < 1e-9, "{}", e.depth_m);
        assert!((e.resolution_m - 19.5).abs() < 1e-9, "{}", e.resolution_m);
    }

    #[test]
    fn a_rise_or_a_small_fall_is_no_water_table() {
        let rise = [sounding(&[100.0, 600.0], &[6.0], 0.0, 40.0, 0.0)];
        assert!(water_table(&rise, "TDEM", 100.0).is_err());
        let small = [sounding(&[100.0, 85.0], &[6.0], 0.0, 40.0, 0.0)];
        assert!(water_table(&small, "TDEM", 100.0).is_err());
    }
}

//! The hydrological-model figures: the model along the line (water content image with its
//! water table), the measured against the model-predicted ERT data, the model's resistivity
//! on the ERT section, and the comparison (θ difference on the section, water-table depths).
//! A figure that cannot be drawn is recorded on the run and left out ([`draw_figure`]).

use std::path::PathBuf;

use super::compare::ModelComparison;
use super::forward::ForwardComparison;
use super::model::HydroModel;
use crate::catalog::ert::{ErtModel, draw_section};
use crate::catalog::kit::draw_figure;
use crate::catalog::kit::format::num;
use crate::methods::hydro::sample::distances_over_grid;
use crate::report::figures::{Axes, ColourScale, Palette, Series, Style, image, line_plot};
use crate::runtime::RunContext;

/// A figure and its caption.
type Figure = (PathBuf, String);

/// The distances along the line over the model's grid, at half the smallest cell width.
fn line_distances(m: &HydroModel) -> Vec<f64> {
    let g = &m.grid;
    let span: f64 = g.delr.iter().sum::<f64>() + g.delc.iter().sum::<f64>();
    let cell = g
        .delr
        .iter()
        .chain(&g.delc)
        .copied()
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    let step = if cell.is_finite() { cell / 2.0 } else { 1.0 };
    let span = span
        + (g.origin_xy[0] - m.line.origin_xy[0]).abs()
        + (g.origin_xy[1] - m.line.origin_xy[1]).abs();
    distances_over_grid(g, &m.line, -span, span, step)
}

/// The model's elevation range (geophysical datum), m.
fn z_range(m: &HydroModel) -> Option<(f64, f64)> {
    let top = m.grid.top.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let bot = m.grid.botm.iter().copied().fold(f64::INFINITY, f64::min);
    (top.is_finite() && bot.is_finite() && top > bot)
        .then_some((bot - m.elevation_shift_m, top - m.elevation_shift_m))
}

/// `load_model_output`'s figures: θ along the line under the water table, or the water
/// table alone for a model without water content.
pub fn model_figures(ctx: &mut RunContext, m: &HydroModel) -> Vec<Figure> {
    let xs = line_distances(m);
    let (Some(&x0), Some(&x1), Some((z0, z1))) = (xs.first(), xs.last(), z_range(m)) else {
        ctx.note("the geophysical line does not cross the model's grid: no figure of the model along it (check hydro_params.line_origin and line_azimuth_deg)");
        return Vec::new();
    };
    let wt: Vec<(f64, f64)> = xs
        .iter()
        .filter_map(|x| Some((*x, m.water_table_z(*x)?)))
        .collect();
    let wt_series = Series::line(
        "model water table",
        wt.iter().map(|p| p.0).collect(),
        wt.iter().map(|p| p.1).collect(),
    )
    .colour((255, 255, 255))
    .style(Style::Dashed);
    let title = "Hydrological model along the geophysical line";
    let axes = Axes::new(title, "Distance along the line (m)", "Elevation (m)");
    let mut out = Vec::new();
    if m.has_water_content() {
        let rows = 120usize;
        let dz = (z1 - z0) / rows as f64;
        let grid: Vec<Vec<f64>> = (0..rows)
            .map(|r| {
                let z = z1 - (r as f64 + 0.5) * dz;
                xs.iter()
                    .map(|x| m.water_content(*x, z).unwrap_or(f64::NAN))
                    .collect()
            })
            .collect();
        let values: Vec<f64> = grid.iter().flatten().copied().collect();
        let scale = ColourScale::fit(
            &values,
            false,
            "Model water content θ (m³/m³)",
            Palette::Viridis,
        );
        let p = draw_figure(ctx, "hydro_model_water_content", |path| {
            image(path, &axes, &grid, (x0, x1, z0, z1), &scale, &[wt_series])
        });
        if let Some(p) = p {
            out.push((
                p,
                format!(
                    "The model's water content θ = φ·S along the line (m³/m³; φ from {}), its water table dashed ({})",
                    m.porosity_source,
                    m.water_table_source().map_or("none", |s| s.words())
                ),
            ));
        }
    } else if !wt.is_empty() {
        let p = draw_figure(ctx, "hydro_model_water_table", |path| {
            line_plot(path, &axes, &[wt_series.colour((31, 119, 180))])
        });
        if let Some(p) = p {
            out.push((
                p,
                "The model's water-table elevation along the line (the model holds no water content)".into(),
            ));
        }
    }
    out
}

/// Measured against predicted ρa: the model's prediction and the inversion's.
pub fn forward_figure(ctx: &mut RunContext, r: &ForwardComparison) -> Option<Figure> {
    let (lo, hi) = crate::catalog::kit::format::range(
        &r.rhoa_obs_ohm_m
            .iter()
            .chain(&r.rhoa_model_ohm_m)
            .copied()
            .filter(|v| *v > 0.0)
            .collect::<Vec<_>>(),
    );
    let axes = Axes::new(
        "Measured against predicted apparent resistivity",
        "Measured ρa (Ω·m)",
        "Predicted ρa (Ω·m)",
    )
    .log(true, true);
    let series = [
        Series::points(
            &format!("hydrological model (χ² {})", num(r.chi2_model)),
            r.rhoa_obs_ohm_m.clone(),
            r.rhoa_model_ohm_m.clone(),
        )
        .colour((214, 39, 40)),
        Series::points(
            &format!("inversion (χ² {})", num(r.chi2_inversion)),
            r.rhoa_obs_ohm_m.clone(),
            r.rhoa_inversion_ohm_m.clone(),
        )
        .colour((31, 119, 180)),
        Series::line("1:1", vec![lo, hi], vec![lo, hi]).colour((0, 0, 0)),
    ];
    let p = draw_figure(ctx, "hydro_forward_fit", |path| {
        line_plot(path, &axes, &series)
    })?;
    Some((
        p,
        format!(
            "Each quadrupole of {}: measured ρa against the ρa the hydrological model predicts (red) and the inversion's (blue); on the line, a perfect fit",
            r.data
        ),
    ))
}

/// The model's resistivity on the ERT section (central petrophysical parameters).
pub fn forward_section(
    ctx: &mut RunContext,
    ert: &ErtModel,
    r: &ForwardComparison,
) -> Option<Figure> {
    let section = ert.section();
    let scale = ColourScale::fit(
        &r.rho_model_ohm_m,
        true,
        "Resistivity (Ω·m)",
        Palette::SpectralR,
    );
    let title = "Resistivity the hydrological model implies";
    let p = draw_figure(ctx, "hydro_model_resistivity", |path| {
        draw_section(path, title, section, &r.rho_model_ohm_m, &scale, None)
    })?;
    Some((
        p,
        format!(
            "{title}: the model's water content through the run's petrophysical relation at its central parameters, on the inversion's cells ({} from the model, {} outside it keep the inverted value)",
            r.n_cells_from_model, r.n_cells_kept
        ),
    ))
}

/// The comparison's figures: θ difference (model − ERT) on the section's covered cells, and
/// the water-table depths along the line.
pub fn comparison_figures(
    ctx: &mut RunContext,
    ert: &ErtModel,
    c: &ModelComparison,
) -> Vec<Figure> {
    let mut out = Vec::new();
    let section = ert.section();
    if !c.water_content.cell_differences.is_empty() {
        let mut v = vec![f64::NAN; section.n_params()];
        for (j, d) in &c.water_content.cell_differences {
            if let Some(x) = v.get_mut(*j) {
                *x = *d;
            }
        }
        let (label, title) = if c.water_content.through_image {
            (
                "Model-image θ − ERT θ (m³/m³)",
                "Water content: the model's image minus ERT",
            )
        } else {
            ("Model θ − ERT θ (m³/m³)", "Water content: model minus ERT")
        };
        let scale = ColourScale::symmetric(&v, label);
        if let Some(p) = draw_figure(ctx, "hydro_water_content_difference", |path| {
            draw_section(path, title, section, &v, &scale, None)
        }) {
            out.push((
                p,
                format!(
                    "{title} on the {} covered ERT cells inside the model (m³/m³); blank cells were not compared",
                    c.water_content.n_cells
                ),
            ));
        }
    }
    let wt = &c.water_table;
    if !wt.profile.is_empty() {
        let xs: Vec<f64> = wt.profile.iter().map(|p| p.x_m).collect();
        let mut series = vec![
            Series::line(
                "model",
                xs.clone(),
                wt.profile.iter().map(|p| p.depth_m).collect(),
            )
            .colour((31, 119, 180)),
        ];
        let (a, b) = (xs[0], xs[xs.len() - 1]);
        if let Some(d) = wt.answer_depth_m {
            series.push(
                Series::line("geophysical answer", vec![a, b], vec![d, d]).colour((214, 39, 40)),
            );
            if let Some(s) = wt.answer_sigma_m.filter(|s| s.is_finite()) {
                for (name, v) in [("answer + 2σ", d + 2.0 * s), ("answer − 2σ", d - 2.0 * s)] {
                    series.push(
                        Series::line(name, vec![a, b], vec![v, v])
                            .colour((214, 39, 40))
                            .style(Style::Dashed),
                    );
                }
            }
        }
        let axes = Axes::new(
            "Water-table depth: model and geophysics",
            "Distance along the line (m)",
            "Depth below the ground (m)",
        )
        .flipped();
        if let Some(p) = draw_figure(ctx, "hydro_water_table_comparison", |path| {
            line_plot(path, &axes, &series)
        }) {
            out.push((
                p,
                "The model's water-table depth under the electrodes (blue) and the run's geophysical answer with ±2σ (red)".into(),
            ));
        }
    }
    out
}

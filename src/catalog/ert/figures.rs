//! The ERT figures: a pseudosection per survey, the model under the real surface with coverage
//! masking, the change against the baseline, the data fit and the χ² history.

#[allow(unused_imports)]
use super::*;

/// Figures drawn: (path, caption).
pub(super) type Figures = Vec<(PathBuf, String)>;

/// At most this many surveys get a pseudosection and a model figure.
pub(super) const MAX_FIGURES: usize = 6;

/// Apparent resistivities for display, Ω·m: the file's own ρa column when it has one, else
/// |R|·k with flat-ground geometric factors over the positions along the line (the elevations
/// are ignored here; the inversion models the topography).
pub fn display_rhoa(s: &Survey) -> Vec<f64> {
    if let Some(r) = &s.rhoa_ohm_m
        && r.iter().any(|v| v.is_finite())
    {
        return r.iter().map(|v| v.abs()).collect();
    }
    let pos = s.line_positions();
    let x = |e: Option<usize>| {
        e.and_then(|i| pos.get(i))
            .map(|p| p[0])
            .unwrap_or(f64::INFINITY)
    };
    s.resistances_ohm()
        .iter()
        .zip(&s.quadrupoles)
        .map(|(r, q)| (r * qc::geometric_factor_flat(x(q.a), x(q.b), x(q.m), x(q.n))).abs())
        .collect()
}

/// Pseudosection points of a survey: (midpoint of the four electrodes, pseudo-depth
/// 0.19 × spread (Edwards 1977 median depth of investigation, dipole–dipole), ρa).
pub fn pseudosection(s: &Survey) -> Vec<(f64, f64, f64)> {
    let x = s.line_positions();
    let rhoa = display_rhoa(s);
    s.quadrupoles
        .iter()
        .zip(&rhoa)
        .zip(&s.valid)
        .filter(|((_, r), v)| **v && r.is_finite() && **r > 0.0)
        .filter_map(|((q, r), _)| {
            let xs: Vec<f64> = [q.a, q.b, q.m, q.n]
                .iter()
                .flatten()
                .filter_map(|i| x.get(*i).map(|p| p[0]))
                .collect();
            if xs.is_empty() {
                return None;
            }
            let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mid = xs.iter().sum::<f64>() / xs.len() as f64;
            Some((mid, 0.19 * (hi - lo), *r))
        })
        .collect()
}

/// The half width of a pseudosection block: half the smallest electrode spacing (0.5 m when
/// the line has no two distinct positions).
pub fn pseudosection_half_width_m(s: &Survey) -> f64 {
    let spacing = s
        .line_positions()
        .windows(2)
        .map(|w| (w[1][0] - w[0][0]).abs())
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    if spacing.is_finite() {
        spacing / 2.0
    } else {
        0.5
    }
}

pub(super) fn draw_pseudosection(path: &Path, title: &str, s: &Survey) -> anyhow::Result<usize> {
    let pts = pseudosection(s);
    let h = pseudosection_half_width_m(s);
    let cells: Vec<Vec<(f64, f64)>> = pts
        .iter()
        .map(|(x, d, _)| {
            vec![
                (x - h, -d - h / 2.0),
                (x + h, -d - h / 2.0),
                (x + h, -d + h / 2.0),
                (x - h, -d + h / 2.0),
            ]
        })
        .collect();
    let v: Vec<f64> = pts.iter().map(|p| p.2).collect();
    let scale = ColourScale::fit(&v, true, "Apparent resistivity (Ω·m)", Palette::SpectralR);
    let axes = Axes::new(
        title,
        "Midpoint along the line (m)",
        "Pseudo-depth below the line (−m)",
    );
    cell_section(path, &axes, &cells, &v, &scale, None, &[])?;
    Ok(pts.len())
}

/// Alpha per cell from coverage: 1 above `threshold` × max, 0.25 below.
pub fn coverage_alpha(coverage: &[f64], threshold: f64) -> Vec<f64> {
    let max = coverage
        .iter()
        .copied()
        .filter(|c| c.is_finite())
        .fold(0.0, f64::max);
    coverage
        .iter()
        .map(|c| if *c >= threshold * max { 1.0 } else { 0.25 })
        .collect()
}

pub(super) fn polygons(section: &ModelSection) -> Vec<Vec<(f64, f64)>> {
    (0..section.n_params())
        .map(|j| {
            section
                .param_polygon(j)
                .iter()
                .map(|p| (p[0], p[1]))
                .collect()
        })
        .collect()
}

pub(super) fn overlays(section: &ModelSection) -> Vec<Series> {
    let mut o = vec![
        Series::line(
            "surface",
            section.surface_xz.iter().map(|p| p[0]).collect(),
            section.surface_xz.iter().map(|p| p[1]).collect(),
        )
        .colour((0, 0, 0)),
        Series::points(
            "electrodes",
            section.electrodes_xz.iter().map(|p| p[0]).collect(),
            section.electrodes_xz.iter().map(|p| p[1]).collect(),
        )
        .colour((0, 0, 0)),
    ];
    for i in &section.interfaces {
        o.push(
            Series::line(
                "interface",
                i.points.iter().map(|p| p[0]).collect(),
                i.points.iter().map(|p| p[1]).collect(),
            )
            .style(Style::Dashed)
            .colour((255, 255, 255)),
        );
    }
    o
}

/// Draw values on the model section under the real surface.
pub(crate) fn draw_section(
    path: &Path,
    title: &str,
    section: &ModelSection,
    values: &[f64],
    scale: &ColourScale,
    alpha: Option<&[f64]>,
) -> anyhow::Result<()> {
    let axes = Axes::new(title, "Distance along the line (m)", "Elevation (m)");
    cell_section(
        path,
        &axes,
        &polygons(section),
        values,
        scale,
        alpha,
        &overlays(section),
    )?;
    Ok(())
}

/// The figures of a model: sections (masked by coverage), change, data fit, χ² history.
pub(super) fn model_figures(
    ctx: &RunContext,
    model: &ErtModel,
    prefix: &str,
    coverage_threshold: f64,
) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let mut out = Vec::new();
    let section = model.section();
    let alpha = coverage_alpha(model.coverage(), coverage_threshold);
    let steps = model.steps();
    let all: Vec<f64> = steps
        .iter()
        .flat_map(|s| s.rho_ohm_m.iter().copied())
        .collect();
    let scale = ColourScale::fit(&all, true, "Resistivity (Ω·m)", Palette::SpectralR);
    for (i, s) in steps.iter().enumerate().take(MAX_FIGURES) {
        let p = figure_path(ctx, &format!("{prefix}_model_{i}"))?;
        let title = if steps.len() > 1 {
            format!("Resistivity model, {}", s.label)
        } else {
            "Resistivity model".to_string()
        };
        draw_section(&p, &title, section, s.rho_ohm_m, &scale, Some(&alpha))?;
        out.push((
            p,
            format!(
                "{title} (Ω·m, log scale) under the surface; cells with coverage below {coverage_threshold:.0e} of the maximum are faded"
            ),
        ));
        if let Some(ch) = s.change_percent {
            let p = figure_path(ctx, &format!("{prefix}_change_{i}"))?;
            let sc = ColourScale::symmetric(ch, "Change against the baseline (%)");
            let title = format!("Resistivity change, {}", s.label);
            draw_section(&p, &title, section, ch, &sc, Some(&alpha))?;
            out.push((p, format!("{title} (%), faded where coverage is low")));
        }
    }
    // Data fit: predicted against observed apparent resistivity.
    let p = figure_path(ctx, &format!("{prefix}_data_fit"))?;
    let mut series = Vec::new();
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for s in &steps {
        for v in s.rhoa_obs_ohm_m.iter().chain(s.rhoa_pred_ohm_m) {
            if v.is_finite() && *v > 0.0 {
                lo = lo.min(*v);
                hi = hi.max(*v);
            }
        }
        series.push(Series::points(
            &s.label,
            s.rhoa_obs_ohm_m.to_vec(),
            s.rhoa_pred_ohm_m.to_vec(),
        ));
    }
    if lo < hi {
        series.push(Series::line("1:1", vec![lo, hi], vec![lo, hi]).colour((0, 0, 0)));
    }
    line_plot(
        &p,
        &Axes::new(
            "Data fit",
            "Observed apparent resistivity (Ω·m)",
            "Predicted apparent resistivity (Ω·m)",
        )
        .log(true, true),
        &series,
    )?;
    out.push((
        p,
        format!(
            "Predicted against observed apparent resistivity (Ω·m); χ² {:.2}, rrms {:.1} %",
            model.chi2(),
            model.rrms_percent()
        ),
    ));
    // χ² history.
    let h = model.history();
    if !h.is_empty() {
        let p = figure_path(ctx, &format!("{prefix}_chi2_history"))?;
        line_plot(
            &p,
            &Axes::new("χ² history", "Iteration", "χ² (dimensionless)").log(false, true),
            &[
                Series::line(
                    "χ²",
                    h.iter().map(|r| r.iteration as f64).collect(),
                    h.iter().map(|r| r.chi2).collect(),
                )
                .style(Style::LinePoints),
                Series::line(
                    "target",
                    vec![0.0, h.len().saturating_sub(1) as f64],
                    vec![model.params().target_chi2; 2],
                )
                .style(Style::Dashed),
            ],
        )?;
        out.push((
            p,
            format!(
                "χ² per Gauss–Newton iteration (λ {:.3}); the dashed line is the target",
                model.lambda()
            ),
        ));
    }
    Ok(out)
}

/// The water-content figures of each time step (at most [`MAX_FIGURES`]): the mean and its
/// standard deviation over the draws, faded where coverage is low.
pub(super) fn water_figures(
    ctx: &RunContext,
    section: &ModelSection,
    labels: &[String],
    steps: &[WaterContent],
    alpha: &[f64],
) -> anyhow::Result<Figures> {
    let mut figures = Vec::new();
    for (i, (label, wc)) in labels.iter().zip(steps).enumerate().take(MAX_FIGURES) {
        let m = &wc.water_content.mean;
        let title = format!("Water content, {label}");
        let p = figure_path(ctx, &format!("ert_water_content_{i}"))?;
        let sc = ColourScale::fit(
            m,
            false,
            "Mean volumetric water content (m³/m³)",
            Palette::Viridis,
        );
        draw_section(&p, &title, section, m, &sc, Some(alpha))?;
        figures.push((
            p,
            format!(
                "{title}: mean of {} draws (m³/m³), faded where coverage is low",
                wc.n_realizations
            ),
        ));
        let p = figure_path(ctx, &format!("ert_water_content_std_{i}"))?;
        let std = &wc.water_content.std;
        let sc = ColourScale::fit(
            std,
            false,
            "Standard deviation of water content (m³/m³)",
            Palette::Greys,
        );
        let title = format!("Water content uncertainty, {label}");
        draw_section(&p, &title, section, std, &sc, Some(alpha))?;
        figures.push((
            p,
            format!("{title}: standard deviation over the draws (m³/m³)"),
        ));
    }
    Ok(figures)
}

//! The TDEM figures: decays with the fit, normalised residuals, layered models with the DOI (and
//! a section for a line), plan maps with their kriging σ, water content per layer.

#[allow(unused_imports)]
use super::*;

/// At most this many soundings are drawn in one decay or model figure.
pub const MAX_CURVES: usize = 6;

/// The y-axis label of values in `unit`.
pub fn value_label(unit: ResponseUnit) -> String {
    match unit {
        ResponseUnit::VoltPerAmp => "Voltage per current (V/A)".into(),
        ResponseUnit::VoltPerAmpM2 => "dB/dt per current (V/(A·m²))".into(),
        ResponseUnit::VoltPerAmpM4 => "dB/dt per moment (V/(A·m⁴))".into(),
        ResponseUnit::TeslaPerAmp => "B per current (T/A)".into(),
    }
}

/// Indices of at most `max` items of `n`, evenly spread, first and last included.
pub fn spread(n: usize, max: usize) -> Vec<usize> {
    if n <= max {
        return (0..n).collect();
    }
    let mut v: Vec<usize> = (0..max)
        .map(|k| ((k as f64) * (n - 1) as f64 / (max - 1).max(1) as f64).round() as usize)
        .collect();
    v.dedup();
    v
}

pub(super) fn shown_note(shown: usize, n: usize) -> String {
    if shown < n {
        format!(" ({shown} of {n} soundings shown, evenly spread along the file)")
    } else {
        String::new()
    }
}

/// A layered model as a step profile (ρ, depth) down to `bottom_m`.
pub fn step_profile(model: &LayeredEarth, bottom_m: f64) -> (Vec<f64>, Vec<f64>) {
    let tops = model.top_depths_m();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for (i, rho) in model.rho_ohm_m.iter().enumerate() {
        let top = tops[i];
        let bot = tops.get(i + 1).copied().unwrap_or(bottom_m.max(top * 1.05));
        x.extend([*rho, *rho]);
        y.extend([top, bot]);
    }
    (x, y)
}

/// The depth a model figure reaches: 1.3 × the deepest DOI, or the top of the half-space.
pub(super) fn plot_bottom(fits: &[&SoundingFit]) -> f64 {
    let doi = fits.iter().filter_map(|f| f.doi_m).fold(0.0, f64::max);
    let tops = fits
        .iter()
        .filter_map(|f| f.model.top_depths_m().last().copied())
        .fold(0.0, f64::max);
    if doi > 0.0 {
        (1.3 * doi).min(tops.max(doi) * 1.1)
    } else {
        tops * 1.1
    }
    .max(1.0)
}

/// Observed decays (usable gates as points, masked gates as grey crosses).
pub(super) fn draw_data_figure(path: &Path, ds: &TdemDataset) -> anyhow::Result<String> {
    let n = ds.n_soundings();
    let idx = spread(n, MAX_CURVES);
    let mut series = Vec::new();
    let mut mx = (Vec::new(), Vec::new());
    for &i in &idx {
        let s = &ds.file.soundings[i];
        let used = s.used_gates();
        series.push(
            Series::line(
                &s.name,
                used.iter().map(|&g| s.times_s[g]).collect(),
                used.iter().map(|&g| s.values[g]).collect(),
            )
            .style(Style::LinePoints),
        );
        for (g, m) in s.mask.iter().enumerate() {
            if m.is_some() && s.values[g] > 0.0 {
                mx.0.push(s.times_s[g]);
                mx.1.push(s.values[g]);
            }
        }
    }
    if !mx.0.is_empty() {
        series.push(Series::points("masked gates", mx.0, mx.1).colour((150, 150, 150)));
    }
    let unit = ds
        .file
        .soundings
        .first()
        .map(|s| s.unit)
        .unwrap_or(ResponseUnit::VoltPerAmp);
    line_plot(
        path,
        &Axes::new(
            "TDEM decays as read",
            "Time after turn-off (s)",
            &value_label(unit),
        )
        .log(true, true),
        &series,
    )?;
    Ok(format!(
        "Observed decays, {} against time (s), log–log; masked gates (positive ones) in grey{}.",
        unit.label(),
        shown_note(idx.len(), n)
    ))
}

/// Decays with the fit: observed ± σ as points, the model's response as a line.
pub(super) fn draw_fit_figure(path: &Path, fits: &[SoundingFit]) -> anyhow::Result<String> {
    let idx = spread(fits.len(), MAX_CURVES);
    let mut series = Vec::new();
    for (k, &i) in idx.iter().enumerate() {
        let f = &fits[i];
        let c = series_colour(k);
        series.push(
            Series::points(
                &format!("{} observed", f.name),
                f.times_s.clone(),
                f.observed.clone(),
            )
            .errors(f.sigma.clone())
            .colour(c),
        );
        series.push(
            Series::line(
                &format!("{} model (χ² {:.2})", f.name, f.chi2),
                f.times_s.clone(),
                f.predicted.clone(),
            )
            .colour(c),
        );
    }
    let unit = fits
        .first()
        .map(|f| f.unit)
        .unwrap_or(ResponseUnit::VoltPerAmp);
    line_plot(
        path,
        &Axes::new(
            "TDEM decays and the models' fit",
            "Time after turn-off (s)",
            &value_label(unit),
        )
        .log(true, true),
        &series,
    )?;
    Ok(format!(
        "Observed decays ± σ (points, {}) and the smooth models' responses (lines) against time (s){}.",
        unit.label(),
        shown_note(idx.len(), fits.len())
    ))
}

/// Normalised residuals (d − f)/σ against time.
pub(super) fn draw_residual_figure(path: &Path, fits: &[SoundingFit]) -> anyhow::Result<String> {
    let idx = spread(fits.len(), MAX_CURVES);
    let mut series: Vec<Series> = idx
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let f = &fits[i];
            Series::points(&f.name, f.times_s.clone(), f.residuals())
                .style(Style::LinePoints)
                .colour(series_colour(k))
        })
        .collect();
    let (t0, t1) = fits
        .iter()
        .flat_map(|f| f.times_s.iter().copied())
        .fold((f64::INFINITY, 0.0f64), |(a, b), t| (a.min(t), b.max(t)));
    if t0.is_finite() {
        for (v, name) in [(1.0, "±1 σ"), (-1.0, "")] {
            series.push(
                Series::line(name, vec![t0, t1], vec![v, v])
                    .style(Style::Dashed)
                    .colour((120, 120, 120)),
            );
        }
    }
    line_plot(
        path,
        &Axes::new(
            "TDEM normalised residuals",
            "Time after turn-off (s)",
            "Residual (observed − model)/σ",
        )
        .log(true, false),
        &series,
    )?;
    Ok(format!(
        "Normalised residuals (observed − model)/σ (dimensionless) against time (s); dashed lines at ±1{}.",
        shown_note(idx.len(), fits.len())
    ))
}

/// Layered models as step profiles with each sounding's DOI as a dashed line.
pub(super) fn draw_model_figure(path: &Path, fits: &[SoundingFit]) -> anyhow::Result<String> {
    let idx = spread(fits.len(), MAX_CURVES);
    let chosen: Vec<&SoundingFit> = idx.iter().map(|&i| &fits[i]).collect();
    let bottom = plot_bottom(&chosen);
    let (lo, hi) = chosen
        .iter()
        .flat_map(|f| f.model.rho_ohm_m.iter().copied())
        .fold((f64::INFINITY, 0.0f64), |(a, b), r| (a.min(r), b.max(r)));
    let mut series = Vec::new();
    for (k, f) in chosen.iter().enumerate() {
        let c = series_colour(k);
        let (x, y) = step_profile(&f.model, bottom);
        series.push(Series::line(&f.name, x, y).colour(c));
        if let Some(fl) = &f.few_layer {
            let (x, y) = step_profile(fl, bottom);
            series.push(
                Series::line(&format!("{} few-layer", f.name), x, y)
                    .style(Style::Dashed)
                    .colour(c),
            );
        }
        if let Some(d) = f.doi_m {
            series.push(
                Series::line(
                    &format!("{} DOI {d:.0} m", f.name),
                    vec![lo, hi],
                    vec![d, d],
                )
                .style(Style::Dashed)
                .colour(c),
            );
        }
    }
    let mut axes = Axes::new(
        "TDEM layered models with depth of investigation",
        "Resistivity (Ω·m)",
        "Depth (m)",
    )
    .log(true, false)
    .flipped();
    axes.y_range = Some((0.0, bottom));
    line_plot(path, &axes, &series)?;
    Ok(format!(
        "Smooth layered models, resistivity (Ω·m, log scale) against depth (m); dashed horizontal lines mark each sounding's depth of investigation (Christiansen & Auken 2012){}.",
        shown_note(idx.len(), fits.len())
    ))
}

/// A line of models as a section: one column per sounding, cells faded below the DOI.
pub(super) fn draw_section_figure(path: &Path, fits: &[SoundingFit]) -> anyhow::Result<String> {
    let xs: Vec<f64> = fits
        .iter()
        .enumerate()
        .map(|(i, f)| f.position.distance_m.unwrap_or(i as f64))
        .collect();
    let all: Vec<&SoundingFit> = fits.iter().collect();
    let bottom = plot_bottom(&all);
    let (mut cells, mut values, mut alpha) = (Vec::new(), Vec::new(), Vec::new());
    for (i, f) in fits.iter().enumerate() {
        let left = if i == 0 {
            xs[0] - 0.5 * (xs.get(1).map_or(1.0, |x| x - xs[0]))
        } else {
            0.5 * (xs[i - 1] + xs[i])
        };
        let right = if i + 1 == xs.len() {
            xs[i] + 0.5 * (xs[i] - xs.get(i.wrapping_sub(1)).copied().unwrap_or(xs[i] - 1.0))
        } else {
            0.5 * (xs[i] + xs[i + 1])
        };
        let tops = f.model.top_depths_m();
        for (j, rho) in f.model.rho_ohm_m.iter().enumerate() {
            let top = tops[j];
            if top >= bottom {
                break;
            }
            let bot = tops.get(j + 1).copied().unwrap_or(bottom).min(bottom);
            cells.push(vec![
                (left, -top),
                (right, -top),
                (right, -bot),
                (left, -bot),
            ]);
            values.push(*rho);
            alpha.push(if f.doi_m.is_some_and(|d| top < d) {
                1.0
            } else {
                0.35
            });
        }
    }
    let doi_x: Vec<f64> = xs.clone();
    let doi_y: Vec<f64> = fits.iter().map(|f| -f.doi_m.unwrap_or(0.0)).collect();
    let scale = ColourScale::fit(&values, true, "Resistivity (Ω·m)", Palette::SpectralR);
    cell_section(
        path,
        &Axes::new(
            "TDEM line: layered models (faded below the DOI)",
            "Distance along the line (m)",
            "Height relative to the ground surface (m)",
        ),
        &cells,
        &values,
        &scale,
        Some(&alpha),
        &[Series::line("DOI", doi_x, doi_y).style(Style::Dashed)],
    )?;
    Ok(
        "Laterally constrained models as a section: resistivity (Ω·m, log colour scale) against distance (m) and height relative to the ground (m); cells below each sounding's depth of investigation (dashed line) are faded."
            .into(),
    )
}

/// Draw the inversion figures (decays with fit, residuals, models with DOI, and the section
/// of a line) under `prefix`; returns (path, caption) pairs. A figure that cannot be drawn is
/// left out with a note.
pub fn inversion_figures(
    ctx: &RunContext,
    prefix: &str,
    inv: &TdemInversion,
    notes: &mut Vec<String>,
) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    type Draw = fn(&Path, &[SoundingFit]) -> anyhow::Result<String>;
    let mut list: Vec<(&str, Draw)> = vec![
        ("decays_fit", draw_fit_figure),
        ("residuals", draw_residual_figure),
        ("models", draw_model_figure),
    ];
    if inv.survey.line.is_some() && inv.fits.len() > 1 {
        list.push(("section", draw_section_figure));
    }
    for (name, draw) in list {
        let r = figure_path(ctx, &format!("{prefix}_{name}"))
            .map_err(anyhow::Error::from)
            .and_then(|p| draw(&p, &inv.fits).map(|c| (p, c)));
        match r {
            Ok(pc) => out.push(pc),
            Err(e) => notes.push(format!("figure {name} not drawn: {e}")),
        }
    }
    out
}

/// The grid of a map as image rows, north first.
pub(super) fn rows_north_first(values: &[f64], nx: usize, ny: usize) -> Vec<Vec<f64>> {
    (0..ny)
        .rev()
        .map(|j| values[j * nx..(j + 1) * nx].to_vec())
        .collect()
}

/// Water content against depth, one step profile per sounding (mean, and mean ± std dashed).
pub(super) fn draw_water_figure(
    path: &Path,
    wc: &TdemWaterContent,
    fits: &[SoundingFit],
) -> anyhow::Result<String> {
    let idx = spread(fits.len(), MAX_CURVES);
    let chosen: Vec<&SoundingFit> = idx.iter().map(|&i| &fits[i]).collect();
    let bottom = plot_bottom(&chosen);
    let mut series = Vec::new();
    let mut start = 0;
    for (i, f) in fits.iter().enumerate() {
        let n = f.model.rho_ohm_m.len();
        let rows = &wc.rows[start..(start + n).min(wc.rows.len())];
        start += n;
        let Some(k) = idx.iter().position(|&j| j == i) else {
            continue;
        };
        let c = series_colour(k);
        let profile = |v: &dyn Fn(&petro::LayerWaterContent) -> f64| {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            for r in rows {
                let bot = r.depth_bottom_m.unwrap_or(bottom.max(r.depth_top_m * 1.05));
                x.extend([v(r), v(r)]);
                y.extend([r.depth_top_m, bot]);
            }
            (x, y)
        };
        let (x, y) = profile(&|r: &petro::LayerWaterContent| r.water_content_mean);
        series.push(Series::line(&f.name, x, y).colour(c));
        let (x, y) =
            profile(&|r: &petro::LayerWaterContent| r.water_content_mean + r.water_content_std);
        series.push(
            Series::line(&format!("{} mean ± std", f.name), x, y)
                .style(Style::Dashed)
                .colour(c),
        );
        let (x, y) = profile(&|r: &petro::LayerWaterContent| {
            (r.water_content_mean - r.water_content_std).max(0.0)
        });
        series.push(Series::line("", x, y).style(Style::Dashed).colour(c));
        if let Some(d) = f.doi_m {
            series.push(
                Series::line(
                    &format!("{} DOI {d:.0} m", f.name),
                    vec![0.0, 0.5],
                    vec![d, d],
                )
                .style(Style::Points)
                .colour(c),
            );
        }
    }
    let mut axes = Axes::new(
        "TDEM water content per layer",
        "Volumetric water content (m³/m³)",
        "Depth (m)",
    )
    .flipped();
    axes.y_range = Some((0.0, bottom));
    line_plot(path, &axes, &series)?;
    Ok(format!(
        "Volumetric water content (m³/m³) per layer against depth (m): mean (solid) and mean ± one standard deviation (dashed) over the Monte Carlo prior ({}); markers at each sounding's depth of investigation{}.",
        prior_source_word(wc.conversion.prior_source),
        shown_note(idx.len(), fits.len())
    ))
}

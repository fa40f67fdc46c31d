//! The MT figures: apparent resistivity and phase with the fit, and the layered models with
//! their depth of investigation.

#[allow(unused_imports)]
use super::*;

/// At most this many sites share one figure (more would be unreadable).
pub(super) const MAX_SITES_PER_FIGURE: usize = 6;

/// ρa and φ curves with the fit, and the layered models with the DOI.
pub(super) fn inversion_figures(
    ctx: &mut RunContext,
    inv: &MtInversions,
) -> Vec<(PathBuf, String)> {
    let shown: Vec<&MtSiteInversion> = inv.sites.iter().take(MAX_SITES_PER_FIGURE).collect();
    let more = if inv.sites.len() > shown.len() {
        format!(" (first {} of {} sites)", shown.len(), inv.sites.len())
    } else {
        String::new()
    };
    let mut rho_series = Vec::new();
    let mut phase_series = Vec::new();
    let mut model_series = Vec::new();
    let mut depth_max: f64 = 0.0;
    for (k, s) in shown.iter().enumerate() {
        let colour = series_colour(k);
        for (obs, pred) in s.sounding.curves.iter().zip(&s.result.predicted) {
            let name = format!("{} {}", s.site, obs.mode.label());
            let p = &s.sounding.period_s;
            let up: Vec<f64> = obs
                .rhoa_ohm_m
                .iter()
                .zip(&obs.log10_rhoa_std)
                .map(|(r, e)| r * (10f64.powf(*e) - 1.0))
                .collect();
            rho_series.push(
                Series::points(
                    &format!("{name} observed"),
                    p.clone(),
                    obs.rhoa_ohm_m.clone(),
                )
                .colour(colour)
                .errors(up),
            );
            rho_series.push(
                Series::line(&format!("{name} model"), p.clone(), pred.rhoa_ohm_m.clone())
                    .colour(colour),
            );
            phase_series.push(
                Series::points(
                    &format!("{name} observed"),
                    p.clone(),
                    obs.phase_deg.clone(),
                )
                .colour(colour)
                .errors(obs.phase_std_deg.clone()),
            );
            phase_series.push(
                Series::line(&format!("{name} model"), p.clone(), pred.phase_deg.clone())
                    .colour(colour),
            );
        }
        let (x, y) = model_steps(&s.result.model, s.result.doi_m);
        depth_max = depth_max.max(y.last().copied().unwrap_or(0.0));
        let (rmin, rmax) = range_of(x.iter().copied()).unwrap_or((1.0, 10.0));
        model_series.push(Series::line(&s.site, x, y).colour(colour));
        if let Some(d) = s.result.doi_m {
            model_series.push(
                Series::line(
                    &format!("{} DOI {d:.0} m", s.site),
                    vec![rmin, rmax],
                    vec![d, d],
                )
                .colour(colour)
                .style(Style::Dashed),
            );
        }
    }
    let mut figs = Vec::new();
    let rho_axes = Axes::new(
        &format!("MT apparent resistivity: observed and Occam 1D fit{more}"),
        "Period (s)",
        "Apparent resistivity (Ω·m)",
    )
    .log(true, true);
    if let Some(p) = draw_figure(ctx, "mt_apparent_resistivity", |p| {
        line_plot(p, &rho_axes, &rho_series)
    }) {
        figs.push((
            p,
            format!("Apparent resistivity ρa (Ω·m) against period (s): observed with error bars (points) and the Occam 1D model's response (lines){more}."),
        ));
    }
    let phase_axes = Axes::new(
        &format!("MT impedance phase: observed and Occam 1D fit{more}"),
        "Period (s)",
        "Phase (°)",
    )
    .log(true, false);
    if let Some(p) = draw_figure(ctx, "mt_phase", |p| {
        line_plot(p, &phase_axes, &phase_series)
    }) {
        figs.push((
            p,
            format!("Impedance phase (degrees, first quadrant) against period (s): observed with error bars and the model's response{more}."),
        ));
    }
    let mut axes = Axes::new(
        &format!("MT Occam 1D layered models{more}"),
        "Resistivity (Ω·m)",
        "Depth (m)",
    )
    .log(true, false)
    .flipped();
    axes.y_range = Some((0.0, depth_max.max(1.0)));
    if let Some(p) = draw_figure(ctx, "mt_models", |p| line_plot(p, &axes, &model_series)) {
        figs.push((
            p,
            format!("Occam 1D resistivity (Ω·m) against depth (m) per site; dashed: the approximate depth of investigation (Niblett–Bostick depth of the longest period){more}. Below it the model is set by the smoothing, not the data."),
        ));
    }
    figs
}

/// A layered model as a staircase (ρ, depth) down to 1.5 × the DOI (or 1.5 × the top of
/// the half-space when no DOI is known).
pub fn model_steps(model: &mt::LayeredEarth, doi_m: Option<f64>) -> (Vec<f64>, Vec<f64>) {
    let tops = model.depth_top_m();
    let last_top = tops.last().copied().unwrap_or(0.0);
    let bottom = doi_m.map_or(1.5 * last_top.max(1.0), |d| 1.5 * d);
    let mut x = Vec::new();
    let mut y = Vec::new();
    for (i, rho) in model.resistivity_ohm_m.iter().enumerate() {
        let top = tops[i];
        if top >= bottom {
            break;
        }
        let bot = tops.get(i + 1).copied().unwrap_or(bottom).min(bottom);
        x.extend([*rho, *rho]);
        y.extend([top, bot]);
    }
    (x, y)
}

//! The TDEM tools' handlers: each calls [`super::run`], draws its figures, writes its exports
//! and says what it found.

#[allow(unused_imports)]
use super::*;

pub(super) fn load_tdem_data(ctx: &mut RunContext) -> ToolResult {
    let params = params(ctx)?;
    let inputs = TdemInputs::of(ctx)?;
    let path = inputs.data.clone();
    let ds = run::load(&inputs, &params)?;
    if ds.file.format_guessed {
        // A table without a header has its columns guessed from the layout: chosen or
        // proven, never guessed (issue 17).
        let format = match ds.file.format {
            crate::methods::tdem::readers::TdemFormat::Table => "time,response table".to_string(),
            f => format!("{f:?}"),
        };
        let how = super::super::kit::confirm::require_confirmed(ctx, "TDEM", &path, &format)?;
        ctx.note(&how);
    }
    for s in &ds.file.soundings {
        if !s.unit_stated {
            ctx.note(&format!(
                "{}: the unit of sounding {} is not stated in the file; {} assumed — set tdem_params.unit if that is wrong",
                path.display(),
                s.name,
                s.unit.label()
            ));
            break;
        }
    }
    if ds.n_without_system() > 0 {
        ctx.note(&format!(
            "{}: {} sounding(s) have no system (the file does not describe the loop); the inversion needs tdem_params.loop_type and loop_radius_m or loop_side_m",
            path.display(),
            ds.n_without_system()
        ));
    }
    let mut outputs = Outputs::new();
    let mut notes = Vec::new();
    match figure_path(ctx, "tdem_data_decays")
        .map_err(anyhow::Error::from)
        .and_then(|p| draw_data_figure(&p, &ds).map(|c| (p, c)))
    {
        Ok((p, c)) => outputs = outputs.figure(p, &c),
        Err(e) => notes.push(format!("the decay figure was not drawn: {e}")),
    }
    for n in &notes {
        ctx.note(n);
    }
    let mut summary = format!(
        "{}: {}",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        ds.summary()
    );
    if let Some(g) = ds.notes.iter().find(|n| n.starts_with("geometry")) {
        summary.push_str(&format!("; {g}"));
    }
    if ds.n_without_system() > 0 {
        summary.push_str(&format!(
            "; {} sounding(s) lack a system (set tdem_params)",
            ds.n_without_system()
        ));
    }
    summary.push('.');
    let (t0, t1) = ds.time_range_s().unwrap_or((f64::NAN, f64::NAN));
    let line = format!("TDEM data: {}", ds.summary());
    let detail = format!(
        "{}\nformat: {:?}{}\n{}",
        ds.summary(),
        ds.file.format,
        if ds.file.format_guessed {
            " (guessed from the layout)"
        } else {
            ""
        },
        ds.notes.join("\n")
    );
    let mut h = Held::new(ds.clone(), line)
        .detail(detail)
        .report(data_report(&ds))
        .number("n_soundings", ds.n_soundings())
        .number("n_gates", ds.n_gates_total())
        .number("n_masked", ds.n_masked(&[]))
        .number(
            "n_saturated",
            ds.n_masked(&[crate::methods::tdem::data::MaskReason::Saturated]),
        )
        .number("time_min_s", t0)
        .number("time_max_s", t1)
        .number("format_guessed", ds.file.format_guessed);
    if !ds.file.survey_dates.is_empty() {
        h = h.number("survey_dates", ds.file.survey_dates.clone());
    }
    Ok((summary, outputs.put(keys::TDEM_DATA, Arc::new(h))))
}

pub(super) fn invert_tdem(ctx: &mut RunContext) -> ToolResult {
    let params = params(ctx)?;
    let ds = held::<TdemDataset>(ctx, keys::TDEM_DATA)
        .cloned()
        .ok_or_else(|| anyhow!("no TDEM data loaded: run load_tdem_data first"))?;
    let cancel = ctx.cancel_flag();
    let inv = {
        let c: &RunContext = ctx;
        let mut cb = |f: f64, d: &str| c.progress(f, d);
        run::invert(&ds, &params, Some(&mut cb), &cancel)?
    };
    let mut notes = Vec::new();
    let figures = inversion_figures(ctx, "tdem", &inv, &mut notes);
    for n in &notes {
        ctx.note(n);
    }
    for (name, why) in &inv.failed {
        ctx.note(&format!("TDEM sounding {name} was not inverted: {why}"));
    }
    let summary = invert_summary(&inv);
    let score = inv.survey.quality.score;
    let mut out = Outputs::new().put(keys::TDEM_RESULTS, Arc::new(held_inversion(inv, score)));
    for (p, c) in figures {
        out = out.figure(p, &c);
    }
    Ok((summary, out))
}

pub(super) fn evaluate_tdem_inversion(ctx: &mut RunContext) -> ToolResult {
    let ds = held::<TdemDataset>(ctx, keys::TDEM_DATA)
        .cloned()
        .ok_or_else(|| anyhow!("no TDEM data: run load_tdem_data first"))?;
    let inv = held::<TdemInversion>(ctx, keys::TDEM_RESULTS)
        .cloned()
        .ok_or_else(|| anyhow!("no TDEM models: run invert_tdem first"))?;
    let options = evaluation_options(ctx);
    let cancel = ctx.cancel_flag();
    let ev = {
        let c: &RunContext = ctx;
        let mut cb = |f: f64, d: &str| c.progress(f, d);
        run::evaluate(&ds, &inv, &options, Some(&mut cb), &cancel)?
    };
    let mut out = Outputs::new();
    if ev.replaced {
        let mut notes = Vec::new();
        for (p, c) in inversion_figures(ctx, "tdem_kept", &ev.kept, &mut notes) {
            out = out.figure(p, &format!("Kept model after the λ retries: {c}"));
        }
        for n in &notes {
            ctx.note(n);
        }
    }
    let comp = |n: &str| {
        ev.quality
            .component(n)
            .map_or("not judged".to_string(), |s| format!("{s:.0}"))
    };
    let resolved = ev.soundings.iter().filter(|s| s.resolved).count();
    let summary = format!(
        "{}. Components: data fit {}, resolution {}, plausibility {}, residual pattern by gate {}; {} attempt(s), {}; {} of {} sounding(s) resolved below the fourth layer.",
        ev.quality.sentence(),
        comp("data_fit"),
        comp("resolution"),
        comp("plausibility"),
        comp("residual_pattern"),
        ev.attempts.len(),
        if ev.replaced {
            format!(
                "a retry (λ {}) replaced the first model",
                short_num(
                    ev.attempts
                        .iter()
                        .find(|a| a.kept)
                        .map_or(f64::NAN, |a| a.lambda)
                )
            )
        } else {
            "the first model is kept".to_string()
        },
        resolved,
        ev.soundings.len()
    );
    let summary = if ev.diagnoses.is_empty() {
        summary
    } else {
        format!(
            "{summary} Not fitted (χ² above {}): {}.",
            crate::methods::quality::CHI2_ACCEPTABLE.1,
            ev.diagnoses
                .iter()
                .map(|d| format!("{}: {}", d.name, d.conclusion.trim_end_matches('.')))
                .collect::<Vec<_>>()
                .join(" | ")
        )
    };
    let line = format!("TDEM evaluation: {}", ev.quality.sentence());
    let kept_attempt = ev.attempts.iter().find(|a| a.kept).map_or(1, |a| a.attempt);
    let h = Held::new(ev.clone(), line)
        .detail(format!("{summary}\n{}", ev.why_kept))
        .report(evaluation_report(&ev))
        .number("quality_score", ev.quality.score)
        .number("passed", ev.quality.passed)
        .number("chi2", ev.kept.chi2())
        .number("rrms_percent", ev.kept.rrms_percent())
        .number("lambda", ev.kept.lambda())
        .number("iterations", ev.kept.iterations())
        .number("n_data", ev.kept.n_data())
        .number("n_cells", ev.kept.n_cells())
        .number("attempts", ev.attempts.len())
        .number("kept_attempt", kept_attempt)
        .number("n_resolved", resolved)
        .number("n_diagnosed", ev.diagnoses.len());
    Ok((summary, out.put(keys::TDEM_EVALUATION, Arc::new(h))))
}

pub(super) fn map_tdem_plan_view(ctx: &mut RunContext) -> ToolResult {
    let params = params(ctx)?;
    let ev = held::<TdemEvaluation>(ctx, keys::TDEM_EVALUATION)
        .cloned()
        .ok_or_else(|| anyhow!("no evaluated TDEM models: run evaluate_tdem_inversion first"))?;
    let maps = run::maps(&ev.kept, &params)?;
    let mut out = Outputs::new();
    let mut files = Vec::new();
    for m in &maps.maps {
        let g = &m.grid;
        let extent = (
            g.x0_m - 0.5 * g.dx_m,
            g.x0_m + (g.nx as f64 - 0.5) * g.dx_m,
            g.y0_m - 0.5 * g.dy_m,
            g.y0_m + (g.ny as f64 - 0.5) * g.dy_m,
        );
        let pts = Series::points(
            "soundings",
            m.points.iter().map(|p| p.0).collect(),
            m.points.iter().map(|p| p.1).collect(),
        );
        let z = short_num(m.depth_m);
        let rho: Vec<f64> = m.log10_rho.iter().map(|v| 10f64.powf(*v)).collect();
        let p = draw_figure(ctx, &format!("tdem_map_{z}m"), |p| {
            image(
                p,
                &Axes::new(
                    &format!("Resistivity at {z} m depth (ordinary kriging)"),
                    "Easting (m)",
                    "Northing (m)",
                ),
                &rows_north_first(&rho, g.nx, g.ny),
                extent,
                &ColourScale::fit(&rho, true, "Resistivity (Ω·m)", Palette::SpectralR),
                std::slice::from_ref(&pts),
            )
        });
        out = out.figure_if(
            p,
            &format!(
                "Plan view of resistivity (Ω·m, log colour scale) at {z} m depth by ordinary kriging of log10 ρ from {} soundings (triangles); easting and northing in m.",
                m.points.len()
            ),
        );
        let p = draw_figure(ctx, &format!("tdem_map_{z}m_sigma"), |p| {
            image(
                p,
                &Axes::new(
                    &format!("Kriging σ of log10 ρ at {z} m depth"),
                    "Easting (m)",
                    "Northing (m)",
                ),
                &rows_north_first(&m.sigma_log10, g.nx, g.ny),
                extent,
                &ColourScale::fit(
                    &m.sigma_log10,
                    false,
                    "Kriging σ of log10 ρ (decades)",
                    Palette::Viridis,
                ),
                &[pts],
            )
        });
        out = out.figure_if(
            p,
            &format!(
                "Kriging standard deviation of log10 ρ (decades) at {z} m depth; easting and northing in m. A σ of 0.3 is a factor 2 in resistivity."
            ),
        );
        files.extend(map_grids(ctx, m));
    }
    let summary = format!(
        "{} plan-view map(s) of log10 ρ by ordinary kriging at {} m depth, with kriging σ maps; {}.",
        maps.maps.len(),
        maps.depths_m
            .iter()
            .map(|z| short_num(*z))
            .collect::<Vec<_>>()
            .join(", "),
        maps.maps
            .iter()
            .map(|m| format!(
                "{} m from {} soundings, σ {}–{} decades",
                short_num(m.depth_m),
                m.points.len(),
                short_num(m.sigma_log10.iter().copied().fold(f64::INFINITY, f64::min)),
                short_num(m.sigma_log10.iter().copied().fold(0.0, f64::max))
            ))
            .collect::<Vec<_>>()
            .join("; ")
    );
    for n in maps.notes.iter().filter(|n| n.contains("default")) {
        ctx.note(&format!("TDEM maps: {n}"));
    }
    let mut md = String::from(
        "| Depth (m) | Soundings | Variogram | log10 ρ range | Kriging σ range (decades) |\n|---|---|---|---|---|\n",
    );
    for m in &maps.maps {
        let v = &m.variogram;
        let range = |x: &[f64]| {
            let (a, b) = x
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                    (a.min(*v), b.max(*v))
                });
            format!("{} – {}", short_num(a), short_num(b))
        };
        md.push_str(&format!(
            "| {} | {} | {:?}, sill {}, range {} m, nugget {}{} | {} | {} |\n",
            short_num(m.depth_m),
            m.points.len(),
            v.model,
            short_num(v.sill),
            short_num(v.range_m),
            short_num(v.nugget),
            if m.variogram_fitted {
                " (fitted)"
            } else {
                " (default: too few soundings to fit)"
            },
            range(&m.log10_rho),
            range(&m.sigma_log10),
        ));
    }
    md.push_str(&notes("Assumptions and decisions.", &maps.notes));
    let mut h = Held::new(
        maps.clone(),
        format!(
            "TDEM plan maps at {} m",
            maps.depths_m
                .iter()
                .map(|z| short_num(*z))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
    .detail(summary.clone())
    .report(md)
    .number("n_maps", maps.maps.len())
    .number("depths_m", maps.depths_m.clone());
    for f in files {
        h = h.file(f);
    }
    Ok((summary, out.put(keys::PLAN_MAPS, Arc::new(h))))
}

pub(super) fn convert_tdem_water_content(ctx: &mut RunContext) -> ToolResult {
    let inv = held::<TdemEvaluation>(ctx, keys::TDEM_EVALUATION)
        .map(|e| e.kept.clone())
        .or_else(|| held::<TdemInversion>(ctx, keys::TDEM_RESULTS).cloned())
        .ok_or_else(|| anyhow!("no TDEM models: run invert_tdem first"))?;
    let (prior, prior_notes) = water_prior(ctx)?;
    let options = MonteCarloOptions {
        n_realizations: n_realizations(ctx),
        ..MonteCarloOptions::default()
    };
    ctx.progress(0.1, "Monte Carlo over the petrophysical prior");
    let mut wc = run::water_content(&inv, &prior, &options)?;
    wc.notes.extend(prior_notes);
    if wc.conversion.defaults_used {
        ctx.note("TDEM water content uses generic petrophysical defaults for at least one parameter: set petrophysical_params to the site's porosity, cementation and pore-water resistivity");
    }
    let csv_path = water_csv(ctx, &wc);
    let mut caption = String::new();
    let fig = draw_figure(ctx, "tdem_water_content", |p| -> anyhow::Result<()> {
        caption = draw_water_figure(p, &wc, &inv.fits)?;
        Ok(())
    });
    let resolved: Vec<f64> = wc
        .rows
        .iter()
        .zip(&wc.below_doi)
        .filter(|(_, b)| !**b)
        .map(|(r, _)| r.water_content_mean)
        .collect();
    let (lo, hi) = resolved
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    let n_below = wc.below_doi.iter().filter(|b| **b).count();
    let summary = format!(
        "Water content of {} layers in {} sounding{}: {} above the DOI, mean θ {} m³/m³; prior {}, {} realizations; reliability {:?}.",
        wc.rows.len(),
        inv.fits.len(),
        if inv.fits.len() == 1 { "" } else { "s" },
        wc.rows.len() - n_below,
        if resolved.is_empty() {
            "not resolved anywhere".to_string()
        } else {
            format!("{lo:.3}–{hi:.3}")
        },
        prior_source_word(wc.conversion.prior_source),
        wc.conversion.n_realizations,
        wc.conversion.reliability
    );
    let line = format!(
        "TDEM water content: {} layers, prior {}",
        wc.rows.len(),
        prior_source_word(wc.conversion.prior_source)
    );
    let h = Held::new(wc.clone(), line)
        .detail(wc.csv())
        .report(water_report(&wc))
        .number("n_cells", wc.rows.len())
        .number("n_below_doi", n_below)
        .number("n_realizations", wc.conversion.n_realizations)
        .number(
            "prior_source",
            serde_json::to_value(wc.conversion.prior_source).unwrap_or_default(),
        )
        .number("defaults_used", wc.conversion.defaults_used)
        .number(
            "reliability_ratio",
            wc.conversion
                .reliability_ratio
                .map_or(serde_json::Value::Null, serde_json::Value::from),
        );
    let h = match csv_path {
        Some(p) => h.file(p),
        None => h,
    };
    Ok((
        summary,
        Outputs::new()
            .put(keys::WATER_CONTENT, Arc::new(h))
            .figure_if(fig, &caption),
    ))
}

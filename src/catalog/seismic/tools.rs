//! The seismic tools' handlers: each calls [`super::run`], draws its figures, writes its
//! exports and says what it found.

#[allow(unused_imports)]
use super::*;

/// The `pick_first_breaks` tool.
pub fn pick_first_breaks(ctx: &mut RunContext) -> ToolResult {
    let params = pick_params(ctx)?;
    let (mut gathers, files, mut notes) = read_gathers(ctx)?;
    let stations = match ctx.input_path(keys::GEOPHONE_FILE) {
        Some(p) => Some(tables::read_topography(&p)?),
        None => None,
    };
    align_positions(ctx, &mut gathers, stations.as_ref(), &mut notes)?;
    let n = gathers.len();
    let mut shots = Vec::with_capacity(n);
    for (k, g) in gathers.iter().enumerate() {
        if ctx.cancelled() {
            bail!("stopped after {k} of {n} shots");
        }
        ctx.progress(
            k as f64 / n as f64,
            &format!("picking shot {} of {n}", k + 1),
        );
        shots.push(pick_gather(g, &params));
    }
    let n_flagged = reciprocal_check(&mut shots, &params, 0.1);
    let mut tt = picks_to_traveltimes(&shots, true);
    if let Some(st) = &stations {
        crate::methods::seismic::data::apply_topography(&mut tt, st);
    }
    let n_traces: usize = gathers.iter().map(ShotGather::n_traces).sum();
    let n_picked: usize = shots.iter().map(ShotPicks::n_picked).sum();
    let summary = format!(
        "Picked {n_picked} first breaks on {n_traces} traces of {n} shots ({}); {n_flagged} shots flagged by the reciprocity check{}; {}.",
        files.join(", "),
        if n_flagged > 0 { " and left out" } else { "" },
        data_line(&tt)
    );
    let mut out = Outputs::new();
    if tt.n_data() > 0 {
        let fig = draw_figure(ctx, keys::SEISMIC_PICKS, |p| {
            traveltime_figure(p, &tt, None, "Picked first-arrival times per shot")
        });
        out = out.figure_if(
            fig,
            "First-arrival times picked from the raw shots (ms) against receiver position (m)",
        );
    }
    let mut md = format!(
        "### First-break picks\n\n{n_picked} picks on {n_traces} traces of {n} shots from {}. Threshold picks on drift-removed traces, each shot side fitted by the closest non-decreasing curve, strays re-picked by AIC (Maeda 1985), shots checked against their reciprocals.\n\n| shot x (m) | picked | flagged | reciprocal offset (ms) |\n|---|---|---|---|\n",
        files.join(", ")
    );
    for s in &shots {
        md.push_str(&format!(
            "| {:.2} | {} of {} | {} | {} |\n",
            s.source_x_m,
            s.n_picked(),
            s.picks.len(),
            if s.flagged { "yes" } else { "no" },
            s.reciprocal_offset_s
                .map_or(String::new(), |o| format!("{:+.2}", 1e3 * o))
        ));
    }
    for note in notes
        .iter()
        .chain(shots.iter().flat_map(|s| s.notes.iter()))
    {
        md.push_str(&format!("\n- {note}"));
    }
    let value = SeismicPicks {
        gathers,
        shots,
        traveltimes: tt.clone(),
        files,
        notes,
    };
    let held = Held::new(
        value,
        format!("{n_picked} first-break picks from {n} shots"),
    )
    .number("n_data", tt.n_data())
    .number("n_shots", n)
    .number("n_traces", n_traces)
    .number("n_flagged_shots", n_flagged)
    .detail(data_line(&tt))
    .report(md);
    Ok((summary, out.put(keys::SEISMIC_PICKS, Arc::new(held))))
}

/// The `load_seismic_traveltimes` tool.
pub fn load_seismic_traveltimes(ctx: &mut RunContext) -> ToolResult {
    let path = ctx
        .input_path(keys::SEISMIC_FILE)
        .ok_or_else(|| anyhow!("no seismic_file was given"))?;
    let topography = ctx.input_path(keys::TOPOGRAPHY_FILE);
    let (tt, topo) = run::load_traveltimes(&path, topography.as_deref())?;
    if tt.guessed {
        // The layout was guessed (no s/g/t tokens, 0-based numbers): chosen or proven, never
        // guessed (issue 17).
        let how = super::super::kit::confirm::require_confirmed(ctx, "Seismic", &path, &tt.format)?;
        ctx.note(&how);
    }
    let extra = topo.map_or_else(String::new, |(name, n, outside)| {
        format!(
            "; elevations from {name} ({n} stations{})",
            if outside > 0 {
                format!(", {outside} sensors beyond its ends held at the end values")
            } else {
                String::new()
            }
        )
    });
    let (z0, z1) = range(&tt.sensor_z_m);
    let errors = match &tt.error_s {
        Some(e) => {
            let (a, b) = range(e);
            format!("errors {:.2} to {:.2} ms given", 1e3 * a, 1e3 * b)
        }
        None => "no errors in the file (the inversion will assume 3 % and say so)".to_string(),
    };
    let summary = format!(
        "Read {} ({}{}): {}; elevations {z0:.1} to {z1:.1} m; {errors}{extra}.",
        file_name(&path),
        tt.format,
        if tt.guessed { ", format guessed" } else { "" },
        data_line(&tt),
    );
    let fig = draw_figure(ctx, keys::SEISMIC_TRAVELTIMES, |p| {
        traveltime_figure(p, &tt, None, "Observed first-arrival times per shot")
    });
    let mut md = format!(
        "### Seismic travel times\n\n{} from `{}` ({}). Elevations {z0:.1} to {z1:.1} m; {errors}{extra}.\n",
        data_line(&tt),
        file_name(&path),
        tt.format
    );
    for n in &tt.notes {
        md.push_str(&format!("\n- {n}"));
    }
    let line = format!("{} travel times from {}", tt.n_data(), file_name(&path));
    let held = Held::new(tt.clone(), line)
        .number("n_data", tt.n_data())
        .number("n_shots", tt.shots().len())
        .number("n_sensors", tt.n_sensors())
        .detail(data_line(&tt))
        .report(md);
    Ok((
        summary,
        Outputs::new()
            .put(keys::SEISMIC_TRAVELTIMES, Arc::new(held))
            .figure_if(
                fig,
                "Observed first-arrival times (ms) against receiver position (m), one curve per shot",
            ),
    ))
}

/// The `invert_seismic` tool.
pub fn invert_seismic(ctx: &mut RunContext) -> ToolResult {
    let params = inversion_params(ctx)?;
    let (tt, source) = run_traveltimes(ctx).ok_or_else(|| {
        anyhow!("no travel times: load a seismic_file or pick the raw shots first")
    })?;
    let cancel = ctx.cancel_flag();
    let model = {
        let c: &RunContext = ctx;
        let mut progress = |f: f64, s: &str| c.progress(f, s);
        run::invert(&tt, &source, &params, &mut progress, &cancel)?
    };
    let inv = &model.inversion;
    let (v0, v1) = range(&inv.velocity_m_per_s);
    let summary = format!(
        "Inverted {} travel times ({source}) on {} cells: χ² {:.2}, rrms {:.2} % after {} iterations (λ {:.3}, stopped: {:?}); velocities {v0:.0} to {v1:.0} m/s; {} of {} cells covered by rays.{}",
        inv.n_data,
        inv.n_cells,
        inv.chi2,
        inv.rrms_percent,
        inv.iterations,
        inv.lambda,
        inv.stop_reason,
        inv.covered.iter().filter(|&&c| c).count(),
        inv.n_cells,
        inv.notes
            .iter()
            .find(|n| n.contains("no pick errors"))
            .map_or(String::new(), |n| format!(" Note: {n}."))
    );
    let out = model_figures(ctx, &model, Outputs::new());
    Ok((
        summary,
        out.put(keys::SEISMIC_RESULTS, Arc::new(held_model(model))),
    ))
}

/// The `evaluate_seismic_inversion` tool: the rubric, and while the model fails it, the
/// inversion again with λ halved (underfit) or doubled (overfit), at most `max_attempts`
/// in all (the first is the model already made); the best-scoring model is kept.
pub fn evaluate_seismic_inversion(ctx: &mut RunContext) -> ToolResult {
    let model = held::<SeismicModel>(ctx, keys::SEISMIC_RESULTS)
        .cloned()
        .ok_or_else(|| anyhow!("no seismic model to evaluate: run invert_seismic first"))?;
    let (max_attempts, auto_adjust) = retries(ctx);
    let cancel = ctx.cancel_flag();
    let lambda0 = model.inversion.lambda;
    let retried = {
        let c: &RunContext = ctx;
        run::evaluate(
            &model,
            max_attempts,
            auto_adjust,
            &|f, s| c.progress(f, s),
            &cancel,
        )?
    };
    let (inv, ev) = retried.best;
    let replaced = (inv.lambda - lambda0).abs() > 1e-12;
    let mut md = format!(
        "### Seismic model quality\n\n{}\n\n| component | weight | score | note |\n|---|---|---|---|\n",
        retried.why_kept
    );
    for c in &ev.quality.components {
        md.push_str(&format!(
            "| {} | {:.2} | {} | {} |\n",
            c.name,
            c.weight,
            c.score.map_or("not scored".into(), |s| format!("{s:.0}")),
            c.note
        ));
    }
    md.push_str("\n| attempt | λ | χ² | score | kept |\n|---|---|---|---|---|\n");
    for a in &retried.attempts {
        md.push_str(&format!(
            "| {} | {:.3} | {:.2} | {:.0} | {} |\n",
            a.attempt,
            a.lambda,
            a.chi2,
            a.score,
            if a.kept { "yes" } else { "" }
        ));
    }
    md.push_str(&format!(
        "\nSettings: max_attempts {max_attempts}, auto_adjust {auto_adjust}, pass mark {:.0}.\n",
        ev.quality.threshold
    ));
    for n in &ev.notes {
        md.push_str(&format!("\n- {n}"));
    }
    let summary = format!(
        "{}. χ² {:.2}, rrms {:.2} %, {:.0} % of the interpreted zone covered, {} cells at a bound; {} attempt(s), kept λ {:.3}{}.",
        ev.quality.sentence(),
        ev.chi2,
        ev.rrms_percent,
        100.0 * ev.zone_coverage_fraction,
        ev.n_cells_at_bounds,
        retried.attempts.len(),
        inv.lambda,
        if replaced {
            " (a retry replaced the model)"
        } else {
            ""
        }
    );
    let verdict = SeismicVerdict {
        evaluation: ev.clone(),
        attempts: retried.attempts.clone(),
        why_kept: retried.why_kept.clone(),
        lambda: inv.lambda,
    };
    let held_v = Held::new(
        verdict,
        format!("seismic quality {:.0}/100", ev.quality_score),
    )
    .number("quality_score", ev.quality_score)
    .number("passed", ev.quality.passed)
    .number("chi2", ev.chi2)
    .number("rrms_percent", ev.rrms_percent)
    .number("coverage_fraction", ev.coverage_fraction)
    .number("zone_coverage_fraction", ev.zone_coverage_fraction)
    .number("attempts", retried.attempts.len())
    .number("lambda", inv.lambda)
    .report(md);
    let mut out = Outputs::new().put(keys::SEISMIC_EVALUATION, Arc::new(held_v));
    if replaced {
        let m = SeismicModel {
            inversion: inv,
            data: model.data.clone(),
            source: model.source.clone(),
        };
        out = model_figures(ctx, &m, out);
        out = out.put(keys::SEISMIC_RESULTS, Arc::new(held_model(m)));
    }
    Ok((summary, out))
}

/// The `extract_seismic_interfaces` tool.
pub fn extract_seismic_interfaces(ctx: &mut RunContext) -> ToolResult {
    let model = held::<SeismicModel>(ctx, keys::SEISMIC_RESULTS)
        .cloned()
        .ok_or_else(|| anyhow!("no seismic model: run invert_seismic first"))?;
    let (ths, defaulted) = thresholds(ctx)?;
    let sets = extract_interfaces(&model.inversion, &ths);
    let mut lines: Vec<InterfaceLine> = Vec::new();
    let mut tables = Vec::new();
    let mut drawn = Vec::new();
    let mut parts = Vec::new();
    for s in &sets {
        let mut segs: Vec<&Interface> = s.segments.iter().collect();
        segs.sort_by(|a, b| b.length_m().total_cmp(&a.length_m()));
        if !segs.is_empty() {
            tables.extend(interface_table(ctx, s));
        }
        for f in &segs {
            lines.push(InterfaceLine {
                velocity_m_per_s: f.velocity_m_per_s,
                x_m: f.x_m.clone(),
                z_m: f.z_m.clone(),
            });
            drawn.push((*f).clone());
        }
        let len: f64 = s.segments.iter().map(Interface::length_m).sum();
        parts.push(if s.segments.is_empty() {
            format!("none at {:.0} m/s", s.velocity_m_per_s)
        } else {
            let d: Vec<f64> = s
                .segments
                .iter()
                .flat_map(|f| f.depth_m.iter().copied())
                .collect();
            let (d0, d1) = range(&d);
            format!(
                "{} segment(s) at {:.0} m/s over {len:.1} m, {} of {} profiles, depth {d0:.1} to {d1:.1} m",
                s.segments.len(),
                s.velocity_m_per_s,
                s.n_found,
                s.n_profiles
            )
        });
    }
    let fig = draw_figure(ctx, "seismic_interfaces", |p| {
        velocity_figure(p, &model.inversion, &drawn)
    });
    let summary = format!(
        "Interfaces: {}{}.",
        parts.join("; "),
        if defaulted {
            " (threshold 1200 m/s by default: no velocity_threshold given)"
        } else {
            ""
        }
    );
    let mut md = format!(
        "### Seismic interfaces\n\nTraced where the velocity first reaches the threshold along vertical profiles, only in cells with ray coverage{}.\n\n| threshold (m/s) | segments | profiles with a point | profiles crossed only without coverage |\n|---|---|---|---|\n",
        if defaulted {
            "; threshold 1200 m/s is the default (none was given)"
        } else {
            ""
        }
    );
    for s in &sets {
        md.push_str(&format!(
            "| {:.0} | {} | {} of {} | {} |\n",
            s.velocity_m_per_s,
            s.segments.len(),
            s.n_found,
            s.n_profiles,
            s.n_uncovered
        ));
    }
    for n in sets.iter().flat_map(|s| s.notes.iter()) {
        md.push_str(&format!("\n- {n}"));
    }
    let mut held_l = Held::new(
        lines.clone(),
        format!(
            "{} interface segment(s) at {} m/s",
            lines.len(),
            ths.iter()
                .map(|v| format!("{v:.0}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
    .number("n_interfaces", lines.len())
    .number("velocity_thresholds_m_per_s", ths.clone())
    .report(md);
    for t in &tables {
        held_l = held_l.file(t.clone());
    }
    Ok((
        summary,
        Outputs::new()
            .put(keys::SEISMIC_STRUCTURE, Arc::new(held_l))
            .figure_if(
                fig,
                "Seismic P-velocity model (m/s) with the interfaces at the threshold velocities (dashed), elevation against distance (m)",
            ),
    ))
}

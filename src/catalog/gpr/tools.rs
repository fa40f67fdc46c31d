//! The GPR tools' handlers: each calls [`super::run`], draws its figures, writes its exports
//! and says what it found.

#[allow(unused_imports)]
use super::*;

/// Why a folder is not a GPR line (seed 001, `read_gpr_input`): a run processes one line, so
/// the folder is refused naming the radar files it holds.
pub(super) fn folder_refusal(dir: &std::path::Path) -> String {
    use crate::methods::gpr::RADAR_EXTENSIONS;
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.is_file()
                        && p.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                            RADAR_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str())
                        })
                })
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    if names.is_empty() {
        format!(
            "{} is a folder and holds no radar file (.dzt, .dt1, .rd3/.rd7, .sgy); name one radar file as {DATA_ROLE}",
            dir.display()
        )
    } else {
        format!(
            "{} is a folder of {} radar file(s) ({}); a run processes one line, so name one of them as {DATA_ROLE}",
            dir.display(),
            names.len(),
            names.join(", ")
        )
    }
}

/// `load_gpr_line`.
pub(super) fn load_gpr_line(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let path = ctx.input_path(DATA_ROLE).ok_or_else(|| {
        anyhow!(
            "no {DATA_ROLE} input: name the radar file (.dzt, .dt1, .rd3/.rd7, .sgy) in the project"
        )
    })?;
    if path.is_dir() {
        return Err(anyhow!("{}", folder_refusal(&path)));
    }
    ctx.progress(0.1, "reading the radar file");
    let line = read(&path).map_err(|e| anyhow!("{e}"))?;
    let mut view = line.data.clone();
    let blank = line.header_samples.min(view.nrows());
    view.slice_mut(ndarray::s![..blank, ..]).fill(f64::NAN);
    ctx.progress(0.6, "drawing the radargram as recorded");
    let mut clip = 0.0;
    let fig = draw_figure(
        ctx,
        &format!("gpr_{}_recorded", stem(&path)),
        |fig| -> anyhow::Result<()> {
            clip = draw_radargram(
                fig,
                &format!("{} as recorded", file_name(&path)),
                view.view(),
                &line.positions_m,
                line.positions_guessed,
                VerticalAxis {
                    domain: Domain::TwoWayTime,
                    first: -line.time_zero_sample * line.sample_interval_ns,
                    step: line.sample_interval_ns,
                },
                "Amplitude (counts)",
            )
            .map_err(|e| anyhow!("{e}"))?;
            Ok(())
        },
    );
    let sentence = line_sentence(&line);
    let summary = format!("Read {sentence}.");
    let caption = format!(
        "{} as recorded: two-way time (ns, from the header's time zero) down, {} across; grey scale of amplitude in counts clipped at ±{}{}",
        file_name(&path),
        if line.positions_guessed {
            "trace number"
        } else {
            "distance along the line (m)"
        },
        short(clip),
        if blank > 0 {
            format!("; scan-header samples 0–{} left blank", blank - 1)
        } else {
            String::new()
        }
    );
    for n in &line.notes {
        if n.contains("guess") || n.contains("not metres") || n.contains("trace numbers") {
            ctx.note(&format!("{}: {n}", file_name(&path)));
        }
    }
    let length_m = match (line.positions_m.first(), line.positions_m.last()) {
        (Some(a), Some(b)) if !line.positions_guessed => Some(b - a),
        _ => None,
    };
    let mut held = Held::new(line.clone(), sentence)
        .detail(serde_json::to_string_pretty(&line.summary()).unwrap_or_default())
        .report(data_report(&line))
        .number("n_traces", line.n_traces)
        .number("n_samples", line.n_samples)
        .number("n_data", line.n_traces * line.n_samples)
        .number("sample_interval_ns", line.sample_interval_ns)
        .number("time_window_ns", line.time_window_ns);
    if let Some(l) = length_m {
        held = held.number("length_m", l);
    }
    if let Some(e) = line.header_permittivity {
        held = held.number("header_permittivity", e);
    }
    if let Some(d) = survey_date(&line) {
        held = held.number("survey_dates", json!([d]));
    }
    ctx.progress(1.0, "read");
    Ok((
        summary,
        Outputs::new()
            .put(keys::GPR_DATA, Arc::new(held))
            .figure_if(fig, &caption),
    ))
}

/// `process_gpr_line`.
pub(super) fn process_gpr_line(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let line = held::<GprLine>(ctx, keys::GPR_DATA)
        .cloned()
        .ok_or_else(|| anyhow!("no GPR line has been read: run load_gpr_line first"))?;
    let params = params(ctx)?;
    let user = UserVelocity::from_config(&ctx.config).map_err(|e| anyhow!(e))?;
    let topography = match ctx.input_path(TOPOGRAPHY_ROLE) {
        Some(p) => Some(read_topography(&p).map_err(|e| anyhow!("{e}"))?),
        None => None,
    };
    let cancel = ctx.cancel_flag();
    let events = ctx.events.clone();
    let step_no = ctx.steps.len() + 1;
    let mut progress = |f: f64, d: &str| {
        events.emit(&crate::runtime::Event::Progress {
            step: step_no,
            fraction: (0.9 * f).clamp(0.0, 1.0),
            detail: d.to_string(),
        })
    };
    let result = process(
        &line,
        &params,
        &user,
        topography.as_ref(),
        &mut progress,
        &cancel,
    )
    .map_err(|e| anyhow!(e))?;
    for n in &result.notes {
        ctx.note(n);
    }
    let p = &result.processed;
    let st = stem(&line.file);
    // Exports and figures are conveniences (seed 001): what cannot be written is recorded
    // on the run and the processed line stays.
    let files = match write_processed(ctx, &st, p) {
        Ok((npz, recipe)) => vec![npz, recipe],
        Err(e) => {
            let planned = planned_path(ctx, "products", &format!("gpr_{st}_processed.npz"));
            ctx.not_written(&planned, &format!("{e:#}"));
            Vec::new()
        }
    };
    ctx.progress(0.95, "drawing the processed radargram");
    let mut out = Outputs::new();
    match processed_figure(ctx, &line, &result, &st) {
        Ok((fig, caption)) => out = out.figure(fig, &caption),
        Err(e) => {
            let planned = planned_path(ctx, "figures", &format!("gpr_{st}_processed.png"));
            ctx.not_written(&planned, &format!("{e:#}"));
        }
    }
    if let Some(a) = &result.velocity_analysis {
        match draw_semblance(ctx, &st, a) {
            Ok(Some(f)) => out = out.figure(f.0, &f.1),
            Ok(None) => {}
            Err(e) => {
                let planned = planned_path(ctx, "figures", &format!("gpr_{st}_semblance.png"));
                ctx.not_written(&planned, &format!("{e:#}"));
            }
        }
    }
    let axis = p.vertical_axis();
    let (a, b) = (
        axis.first().copied().unwrap_or(0.0),
        axis.last().copied().unwrap_or(0.0),
    );
    let applied = p.recipe.steps.iter().filter(|s| s.applied).count();
    let domain_words = match p.domain {
        Domain::TwoWayTime => format!("stays in two-way time ({} to {} ns)", short(a), short(b)),
        Domain::Depth => format!(
            "is in depth, {} to {} m in rows of {} m",
            short(a),
            short(b),
            short(p.vertical_step)
        ),
        Domain::Elevation => format!(
            "is in elevation, {} down to {} m in rows of {} m",
            short(a),
            short(b),
            short(p.vertical_step)
        ),
    };
    let mut summary = format!(
        "Processed {}: {applied} of {} recorded steps applied ({}); the line {domain_words}. Velocity: {}.",
        file_name(&line.file),
        p.recipe.steps.len(),
        p.recipe
            .steps
            .iter()
            .filter(|s| s.applied)
            .map(|s| s.step.replace('_', " "))
            .collect::<Vec<_>>()
            .join(", "),
        result.velocity_sentence.trim_end_matches('.')
    );
    let _ = write!(summary, " Evaluation: {}.", result.evaluation.sentence());
    if p.domain == Domain::TwoWayTime
        && result.velocity_analysis.is_none()
        && let Some(why) = &p.why_two_way_time
    {
        let _ = write!(
            summary,
            " Why two-way time: {why}; set {VELOCITY_KEY} or {PERMITTIVITY_KEY} to convert it to depth."
        );
    }
    let mut held = Held::new(
        result.clone(),
        format!(
            "processed GPR line {}: {} traces × {} rows, {}",
            file_name(&line.file),
            p.n_traces,
            p.n_samples,
            domain_words
        ),
    )
    .detail(serde_json::to_string_pretty(&p.summary()).unwrap_or_default())
    .report(results_report(&result, &files))
    .number("n_traces", p.n_traces)
    .number("n_samples", p.n_samples)
    .number("steps_applied", applied)
    .number("quality_score", result.evaluation.score)
    .number("passed", result.evaluation.passed)
    .number("vertical_step", p.vertical_step);
    if let Some(v) = &p.velocity {
        held = held.number("velocity_m_per_ns", v.velocity_m_per_ns);
    }
    if let Some(pk) = result
        .velocity_analysis
        .as_ref()
        .and_then(|a| a.pick.as_ref())
    {
        held = held
            .number("semblance_velocity_m_per_ns", pk.velocity_m_per_ns)
            .number("semblance_t0_ns", pk.t0_ns);
    }
    for f in files {
        held = held.file(f);
    }
    ctx.progress(1.0, "written");
    Ok((summary, out.put(keys::GPR_RESULTS, Arc::new(held))))
}

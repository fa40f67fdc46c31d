//! The ERT tools' handlers: each calls [`super::run`], draws its figures, writes its exports
//! and says what it found.

#[allow(unused_imports)]
use super::*;

/// `load_ert_surveys`: read every ERT file (with the electrode table when given).
pub fn load_ert_surveys(ctx: &mut RunContext) -> ToolResult {
    let inputs = ErtInputs::of(ctx)?;
    let run::Loaded { set, unread } = run::load(&inputs, instrument(ctx)?)?;
    for (path, why) in &unread {
        let what = format!("ERT file {}", path.display());
        ctx.left_out(&what, path, why);
    }
    let set = confirm_guessed_formats(ctx, set)?;
    let mut figures = Vec::new();
    let mut lines = Vec::new();
    let mut guessed = Vec::new();
    let mut dates = Vec::new();
    for (i, s) in set.surveys.iter().enumerate() {
        let label = survey_label(s, i);
        let rhoa: Vec<f64> = display_rhoa(s)
            .into_iter()
            .zip(&s.valid)
            .filter(|(r, v)| **v && r.is_finite() && *r > 0.0)
            .map(|(r, _)| r)
            .collect();
        let lo = rhoa.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = rhoa.iter().copied().fold(0.0, f64::max);
        let date = s.survey_time.as_ref().map(|t| t.iso());
        if let Some(d) = &date {
            dates.push(d.clone());
        }
        lines.push(format!(
            "{label}: {} ({}), {} electrodes{}, {} quadrupoles ({} usable), ρa {lo:.3}–{hi:.3} Ω·m{}",
            s.format.name(),
            if s.format_guessed {
                "weak signature, format confirmed by the user"
            } else if instrument(ctx)? == Instrument::Auto {
                "format detected by an unambiguous signature"
            } else {
                "format chosen in the instrument setting"
            },
            s.n_electrodes(),
            layout_words(s),
            s.n_data(),
            rhoa.len(),
            date.as_ref()
                .map_or_else(|| ", date unknown".to_string(), |d| format!(", {d}"))
        ));
        if s.format_guessed {
            guessed.push(label.clone());
        }
        if let Some(q) = &s.time_question {
            ctx.note(&format!("{label}: {q}"));
        }
        if i < MAX_FIGURES && !rhoa.is_empty() {
            let name = format!("ert_pseudosection_{i}");
            let p = match figure_path(ctx, &name) {
                Ok(p) => p,
                Err(e) => {
                    let planned = planned_path(ctx, "figures", &format!("{name}.png"));
                    ctx.not_written(&planned, &e.to_string());
                    continue;
                }
            };
            match draw_pseudosection(&p, &format!("Pseudosection, {label}"), s) {
                Ok(n) => figures.push((
                    p,
                    format!(
                        "Apparent resistivity (Ω·m, log scale) of {label}: {n} data at the midpoint of their electrodes, pseudo-depth 0.19 × spread (m)"
                    ),
                )),
                Err(e) => ctx.note(&format!("no pseudosection of {label}: {e}")),
            }
        }
    }
    let summary = format!(
        "Read {} ERT survey(s): {}.{}{}",
        set.surveys.len(),
        lines.join("; "),
        if guessed.is_empty() {
            String::new()
        } else {
            format!(
                " Format confirmed by the user for {} (their signature alone was weak).",
                guessed.join(", ")
            )
        },
        if set.notes.is_empty() {
            String::new()
        } else {
            format!(" {}.", set.notes.join("; "))
        }
    ) + &if unread.is_empty() {
        String::new()
    } else {
        format!(
            " Left out {} file(s) that could not be read: {}.",
            unread.len(),
            unread
                .iter()
                .map(|(_, w)| w.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        )
    };
    let n_data: usize = set.surveys.iter().map(Survey::n_data).sum();
    let n = set.surveys.len();
    let mut h = Held::new(set, format!("{n} ERT survey(s), {n_data} quadrupoles"))
        .detail(lines.join("\n"))
        .number("n_surveys", n)
        .number("n_data", n_data);
    if !dates.is_empty() {
        h = h.number("survey_dates", dates);
    }
    let mut out = Outputs::new().put(keys::ERT_DATA, Arc::new(h));
    for (p, c) in figures {
        out = out.figure(p, &c);
    }
    Ok((summary, out))
}

/// ", laid out as …" when the electrodes are not a surface line (empty otherwise).
fn layout_words(s: &Survey) -> String {
    let l = s.layout();
    if l.is_surface_line() {
        String::new()
    } else {
        format!(" laid out as {}", l.describe())
    }
}

/// The `instrument` setting that names `format`.
fn instrument_word(format: crate::methods::ert::Format) -> String {
    match serde_json::to_value(format) {
        Ok(serde_json::Value::String(s)) if s == "e4d_srv" => "e4d".into(),
        Ok(serde_json::Value::String(s)) => s,
        _ => format.name().to_string(),
    }
}

/// The format is chosen or proven (seed 001: "the device is chosen, not guessed"): a survey
/// whose format rests on a weak signature is put to the user (studio, step by step, a
/// terminal); when nobody confirms it, it is left out, naming the `instrument` setting that
/// would read it. Only when every survey is left out is it an error.
fn confirm_guessed_formats(ctx: &mut RunContext, set: SurveySet) -> anyhow::Result<SurveySet> {
    if set.surveys.iter().all(|s| !s.format_guessed) {
        return Ok(set);
    }
    let mut kept = Vec::new();
    let mut refused = Vec::new();
    for s in set.surveys {
        if !s.format_guessed {
            kept.push(s);
            continue;
        }
        let file = s
            .source_file
            .clone()
            .unwrap_or_else(|| PathBuf::from("the ERT file"));
        let word = instrument_word(s.format);
        let question = format!(
            "{} looks like {} only by a weak signature. Read it as {}?",
            file.display(),
            s.format.name(),
            s.format.name()
        );
        let same_as = format!("the same as setting \"instrument\": \"{word}\"");
        if super::super::kit::confirm::user_confirms(ctx, &question, s.format.name(), &same_as) {
            kept.push(s);
        } else {
            let why = format!(
                "its format was only guessed ({}, weak signature) and nobody confirmed it; set \"instrument\": \"{word}\" in the project's config to read it as {}",
                s.format.name(),
                s.format.name()
            );
            ctx.left_out(&format!("ERT file {}", file.display()), &file, &why);
            refused.push(why);
        }
    }
    if kept.is_empty() {
        return Err(anyhow!("no ERT file could be used: {}", refused.join("; ")));
    }
    Ok(SurveySet::new(kept))
}

pub(super) fn held_model(model: ErtModel, line: String, files: Vec<PathBuf>) -> Held<ErtModel> {
    let mut h = Held::new(model.clone(), line)
        .number("chi2", model.chi2())
        .number("rrms_percent", model.rrms_percent())
        .number("iterations", model.iterations())
        .number("lambda", model.lambda())
        .number("n_data", model.n_data())
        .number("n_cells", model.section().n_params())
        .number(
            "chi2_history",
            model.history().iter().map(|r| r.chi2).collect::<Vec<_>>(),
        )
        .detail(model_report(&model))
        .report(format!("### ERT inversion\n\n{}", model_report(&model)));
    h = with_steps(h, &model);
    for f in files {
        h = h.file(f);
    }
    h
}

/// The numbers of each survey of a time-lapse model, in step order (baseline first), under
/// the names `result.json` and the merge of a split run read: `step_labels`, `chi2_by_step`,
/// `rrms_percent_by_step`, `iterations_by_step`. A single survey adds nothing.
pub(super) fn with_steps<T>(h: Held<T>, model: &ErtModel) -> Held<T> {
    let ErtModel::TimeLapse(r) = model else {
        return h;
    };
    let col = |f: &dyn Fn(&TimeStep) -> serde_json::Value| {
        r.steps.iter().map(f).collect::<Vec<serde_json::Value>>()
    };
    h.number("step_labels", col(&|s| s.label.clone().into()))
        .number("chi2_by_step", col(&|s| s.chi2.into()))
        .number("rrms_percent_by_step", col(&|s| s.rrms_percent.into()))
        .number("iterations_by_step", col(&|s| s.iterations.into()))
}

/// `invert_ert`: invert the one survey.
pub fn invert_ert(ctx: &mut RunContext) -> ToolResult {
    let set = held::<SurveySet>(ctx, keys::ERT_DATA)
        .ok_or_else(|| anyhow!("no ERT data loaded: run load_ert_surveys first"))?
        .clone();
    let survey = set
        .surveys
        .first()
        .ok_or_else(|| anyhow!("the ERT data hold no survey"))?;
    let params = inversion_params(ctx)?;
    let cancel = ctx.cancel_flag();
    let r = {
        let mut pr = |f: f64, d: &str| ctx.progress(f, d);
        run::invert_one(survey, &params, &[], &mut pr, &cancel)?
    };
    let model = ErtModel::Single(Box::new(r));
    let (files, figs) = export_and_figures(ctx, &model, "ert");
    let ErtModel::Single(r) = &model else {
        unreachable!("constructed as Single above")
    };
    let summary = format!(
        "Inverted {} of {} data on {} cells: χ² {:.3}, rrms {:.2} % after {} iterations ({}), λ {:.3}; resistivity {:.3}–{:.3} Ω·m; {} measurement(s) dropped before inverting.",
        r.n_data,
        r.data.n_read,
        r.n_cells,
        r.chi2,
        r.rrms_percent,
        r.iterations,
        r.stop_reason.words(),
        r.lambda,
        r.rho_ohm_m.iter().copied().fold(f64::INFINITY, f64::min),
        r.rho_ohm_m.iter().copied().fold(0.0, f64::max),
        r.data.dropped.iter().map(|d| d.1).sum::<usize>()
    );
    let line = format!("ERT model: χ² {:.2}, {} cells", r.chi2, r.n_cells);
    let h = held_model(model, line, files);
    let mut out = Outputs::new().put(keys::INVERSION_RESULTS, Arc::new(h));
    for (p, c) in figs {
        out = out.figure(p, &c);
    }
    Ok((summary, out))
}

/// `invert_time_lapse`: invert two or more surveys with the chosen scheme.
pub fn invert_time_lapse_tool(ctx: &mut RunContext) -> ToolResult {
    let set = held::<SurveySet>(ctx, keys::ERT_DATA)
        .ok_or_else(|| anyhow!("no ERT data loaded: run load_ert_surveys first"))?
        .clone();
    if set.surveys.len() < 2 {
        return Err(anyhow!(
            "time-lapse needs two or more surveys; {} loaded (use invert_ert)",
            set.surveys.len()
        ));
    }
    let settings = ErtSettings::read(ctx)?;
    let (method, alpha) = (settings.time_lapse_method, settings.temporal_regularization);
    let cancel = ctx.cancel_flag();
    let r = {
        let mut pr = |f: f64, d: &str| ctx.progress(f, d);
        run::invert_series(&set.surveys, &settings, &mut pr, &cancel)?
    };
    let changes: Vec<String> = r
        .steps
        .iter()
        .skip(1)
        .map(|s| {
            let lo = s
                .change_percent
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min);
            let hi = s
                .change_percent
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max);
            let data = if s.change_within_errors() {
                format!(
                    "the data changed by a median {:.2} % and \"no change\" already fits them \
                     (χ² {:.2}), so this change is not required by the data",
                    s.data_change_median_percent, s.chi2_no_change
                )
            } else {
                format!(
                    "the data changed by a median {:.2} % (χ² of no change {:.2})",
                    s.data_change_median_percent, s.chi2_no_change
                )
            };
            format!(
                "{}: χ² {:.2}, change {lo:.0} to {hi:+.0} %; {data}",
                s.time.as_deref().unwrap_or(&s.label),
                s.chi2
            )
        })
        .collect();
    let summary = format!(
        "Time-lapse ({}) of {} surveys on {} cells: {}; joint χ² {:.3}, λ {:.3}{}; {}.",
        method.name(),
        r.steps.len(),
        r.n_cells,
        changes.join("; "),
        r.chi2,
        r.lambda,
        if method == TimeLapseMethod::Simultaneous {
            format!(", α {alpha}")
        } else {
            String::new()
        },
        r.matching.sentence()
    );
    let dates: Vec<String> = r.steps.iter().filter_map(|s| s.time.clone()).collect();
    let line = format!(
        "ERT time-lapse ({}): {} surveys, χ² {:.2}",
        method.name(),
        r.steps.len(),
        r.chi2
    );
    let n_dropped: usize = r.matching.surveys.iter().map(|s| s.n_dropped).sum();
    let model = ErtModel::TimeLapse(Box::new(r));
    let (files, figs) = export_and_figures(ctx, &model, "ert_timelapse");
    let mut h = held_model(model, line, files)
        .number("n_surveys", set.surveys.len())
        .number("n_dropped_unmatched", n_dropped);
    if !dates.is_empty() {
        h = h.number("survey_dates", dates);
    }
    let mut out = Outputs::new().put(keys::INVERSION_RESULTS, Arc::new(h));
    for (p, c) in figs {
        out = out.figure(p, &c);
    }
    Ok((summary, out))
}

/// `evaluate_inversion`: score the model; retry with λ halved/doubled while it fails.
pub fn evaluate_inversion(ctx: &mut RunContext) -> ToolResult {
    let model = held::<ErtModel>(ctx, keys::INVERSION_RESULTS)
        .ok_or_else(|| anyhow!("no ERT inversion: run invert_ert or invert_time_lapse first"))?
        .clone();
    let set = held::<SurveySet>(ctx, keys::ERT_DATA)
        .ok_or_else(|| anyhow!("no ERT data loaded: run load_ert_surveys first"))?
        .clone();
    let settings = evaluation_settings(ctx);
    let lambda = model.lambda();
    let template = model.clone();
    let ev = {
        let c: &RunContext = ctx;
        if BaselineJudged::applies(&model) {
            let ev = evaluate(BaselineJudged(model), lambda, &settings, |l| {
                rerun(c, &set, &template, l).map(BaselineJudged)
            })
            .map_err(|e| anyhow!("{e}"))?;
            BaselineJudged::whole(ev)
        } else {
            evaluate(model, lambda, &settings, |l| rerun(c, &set, &template, l))
                .map_err(|e| anyhow!("{e}"))?
        }
    };
    let (files, figs) = if ev.replaced {
        export_and_figures(ctx, &ev.kept, "ert_evaluated")
    } else {
        (Vec::new(), Vec::new())
    };
    let q = &ev.quality;
    let comp = |n: &str| {
        q.component(n)
            .map_or_else(|| "–".to_string(), |s| format!("{s:.0}"))
    };
    let attempts: Vec<String> = ev
        .attempts
        .iter()
        .map(|a| {
            format!(
                "λ {:.3} → χ² {:.2} (score {:.0})",
                a.lambda, a.chi2, a.score
            )
        })
        .collect();
    let summary = format!(
        "{}. Components: data fit {}, smoothness {}, plausibility {}, convergence {}, residual pattern {}; {} attempt(s): {}. {}",
        q.sentence(),
        comp("data_fit"),
        comp("smoothness"),
        comp("plausibility"),
        comp("convergence"),
        comp("residual_pattern"),
        ev.attempts.len(),
        attempts.join(", "),
        ev.why_kept
    );
    let line = format!(
        "ERT quality {:.0}/100 ({})",
        q.score,
        if q.passed {
            "passed".to_string()
        } else {
            format!("failed: {}", q.failed_checks().join(", "))
        }
    );
    let md = format!("### ERT quality\n\n{}", quality_report(&ev));
    let h = Held::new(ev.clone(), line);
    let mut h = with_steps(h, &ev.kept)
        .number("quality_score", q.score)
        .number("passed", q.passed)
        .number("chi2", ev.kept.chi2())
        .number("lambda", ev.kept.lambda())
        .number("attempts", ev.attempts.len())
        .number("replaced", ev.replaced)
        .number(
            "survey_quality_basis",
            if BaselineJudged::applies(&ev.kept) {
                "baseline"
            } else {
                "every survey"
            },
        )
        .detail(quality_report(&ev))
        .report(if ev.replaced {
            format!("{md}\n\n#### The kept model\n\n{}", model_report(&ev.kept))
        } else {
            md
        });
    for f in files {
        h = h.file(f);
    }
    let mut out = Outputs::new().put(keys::EVALUATION_RESULTS, Arc::new(h));
    for (p, c) in figs {
        out = out.figure(p, &c);
    }
    Ok((summary, out))
}

/// `convert_water_content`: Archie / Waxman–Smits with Monte Carlo per cell and time step.
pub fn convert_water_content(ctx: &mut RunContext) -> ToolResult {
    let ev = held::<Evaluation<ErtModel>>(ctx, keys::EVALUATION_RESULTS)
        .ok_or_else(|| anyhow!("no evaluated ERT model: run evaluate_inversion first"))?
        .clone();
    let cfg = PetroConfig::from_json(ctx.config.get(keys::PETROPHYSICAL_PARAMS))
        .map_err(|e| anyhow!(e))?;
    for note in cfg.user_params().1 {
        ctx.note(&note);
    }
    let model = &ev.kept;
    let section = model.section();
    let steps = run::water_content(model, &cfg, n_realizations(ctx))?;
    let labels: Vec<String> = model.steps().into_iter().map(|s| s.label).collect();
    let alpha = coverage_alpha(model.coverage(), coverage_threshold(ctx));
    let figures = match water_figures(ctx, section, &labels, &steps, &alpha) {
        Ok(f) => f,
        Err(e) => {
            let p = planned_path(ctx, "figures", "ert_water_content_*.png");
            ctx.not_written(&p, &format!("the water-content figures: {e:#}"));
            Vec::new()
        }
    };
    let first = steps
        .first()
        .ok_or_else(|| anyhow!("the model has no time step"))?;
    let statement = prior_statement(first, &cfg);
    let csv = water_csv(ctx, section, &steps);
    let summary = water_summary(&labels, &steps, &statement);
    let md = water_report(&labels, &steps, &statement);
    let line = format!(
        "ERT water content, {} step(s), prior {:?}",
        steps.len(),
        first.prior_source
    );
    let (reliability_ratio, defaults_used, n_real) = (
        first.reliability_ratio,
        first.defaults_used,
        first.n_realizations,
    );
    let result = ErtWaterContent {
        labels,
        steps,
        section: section.clone(),
        prior_statement: statement,
    };
    let mut h = Held::new(result, line)
        .number("n_realizations", n_real)
        .number("defaults_used", defaults_used)
        .report(md)
        .files(csv);
    if let Some(r) = reliability_ratio {
        h = h.number("reliability_ratio", r);
    }
    let mut out = Outputs::new().put(keys::WATER_CONTENT, Arc::new(h));
    for (p, c) in figures {
        out = out.figure(p, &c);
    }
    Ok((summary, out))
}

/// `derive_structure`: re-invert the first survey with one seismic interface (the one at
/// `velocity_threshold`, or the only one; [`run::interface_coords`]) as a boundary smoothing
/// does not cross.
pub fn derive_structure(ctx: &mut RunContext) -> ToolResult {
    let lines = held::<Vec<InterfaceLine>>(ctx, keys::SEISMIC_STRUCTURE)
        .ok_or_else(|| anyhow!("no seismic structure: the seismic interfaces are needed"))?
        .clone();
    let model = held::<ErtModel>(ctx, keys::INVERSION_RESULTS)
        .ok_or_else(|| anyhow!("no ERT inversion: run invert_ert or invert_time_lapse first"))?
        .clone();
    let set = held::<SurveySet>(ctx, keys::ERT_DATA)
        .ok_or_else(|| anyhow!("no ERT data loaded"))?
        .clone();
    let survey = set
        .surveys
        .first()
        .ok_or_else(|| anyhow!("the ERT data hold no survey"))?;
    let threshold = crate::catalog::seismic::settings::thresholds(ctx)?
        .0
        .first()
        .copied()
        .unwrap_or(crate::methods::seismic::interfaces::DEFAULT_THRESHOLD_M_PER_S);
    let chosen = run::interface_coords(&lines, threshold).ok_or_else(|| {
        anyhow!(
            "the seismic structure holds no interface at {threshold:.0} m/s (it has {}); set velocity_threshold to the one the ERT inversion should honour",
            lines
                .iter()
                .map(|l| format!("{:.0} m/s", l.velocity_m_per_s))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    let lines = vec![chosen.clone()];
    let ifs = interfaces_from(&lines);
    if ifs.is_empty() {
        return Err(anyhow!(
            "the seismic interface at {:.0} m/s has fewer than two points; nothing to constrain the ERT model with",
            chosen.velocity_m_per_s
        ));
    }
    let cancel = ctx.cancel_flag();
    let r = {
        let mut pr = |f: f64, d: &str| ctx.progress(f, d);
        run::invert_one(survey, model.params(), &ifs, &mut pr, &cancel)?
    };
    let velocities: Vec<f64> = lines.iter().map(|l| l.velocity_m_per_s).collect();
    let used = r.interface_used;
    let summary = format!(
        "Re-inverted {} with {} seismic interface(s) ({} m/s) as a boundary: constraint {}; {} smoothness constraints across it left out; χ² {:.3} (without the interface {:.3}), {} cells.",
        survey_label(survey, 0),
        ifs.len(),
        velocities
            .iter()
            .map(|v| format!("{v:.0}"))
            .collect::<Vec<_>>()
            .join(", "),
        if used {
            "used"
        } else {
            "NOT used (the interface does not cross the section)"
        },
        r.n_constraints_cut,
        r.chi2,
        model.chi2(),
        r.n_cells
    );
    let m = ErtModel::Single(Box::new(r.clone()));
    let thr = ctx.config_f64(keys::COVERAGE_THRESHOLD, DEFAULT_COVERAGE_THRESHOLD);
    let figs = model_figures(ctx, &m, "ert_structure", thr)?;
    let line = format!(
        "ERT model with the seismic interface ({}), χ² {:.2}",
        if used {
            "constraint used"
        } else {
            "constraint not used"
        },
        r.chi2
    );
    let md = format!(
        "### ERT with the seismic structure\n\nThe seismic interface(s) at {} m/s were {} as a boundary the smoothness does not cross ({} constraints left out). χ² {:.3} against {:.3} without.\n",
        velocities
            .iter()
            .map(|v| format!("{v:.0}"))
            .collect::<Vec<_>>()
            .join(", "),
        if used { "used" } else { "not used" },
        r.n_constraints_cut,
        r.chi2,
        model.chi2()
    );
    let result = ErtStructure {
        model: r,
        velocities_m_per_s: velocities,
        constraint_used: used,
    };
    let h = Held::new(result, line)
        .number("chi2", m.chi2())
        .number("constraint_used", used)
        .report(md);
    let mut out = Outputs::new().put(keys::STRUCTURE_RESULTS, Arc::new(h));
    for (p, c) in figs {
        out = out.figure(p, &c);
    }
    Ok((summary, out))
}

/// `estimate_ert_doi`: the depth of investigation index of a single-survey ERT model
/// (Oldenburg & Li 1999; [`crate::methods::ert::doi`]): two more inversions with references a
/// factor 10 each side of the start model; cells with R ≤ 0.1 are determined by the data.
pub fn estimate_ert_doi(ctx: &mut RunContext) -> ToolResult {
    let set = held::<SurveySet>(ctx, keys::ERT_DATA)
        .ok_or_else(|| anyhow!("no ERT data loaded: run load_ert_surveys first"))?
        .clone();
    let model = held::<ErtModel>(ctx, keys::INVERSION_RESULTS)
        .ok_or_else(|| anyhow!("no ERT model: run invert_ert first"))?
        .clone();
    let ErtModel::Single(base) = model else {
        anyhow::bail!(
            "the depth of investigation is computed for a single-survey model; this run's model is a time-lapse"
        );
    };
    let survey = set
        .surveys
        .first()
        .ok_or_else(|| anyhow!("the ERT data hold no survey"))?;
    let cancel = ctx.cancel_flag();
    let doi = {
        let mut pr = |f: f64, d: &str| ctx.progress(f, d);
        crate::methods::ert::doi::doi_index(
            survey,
            &base,
            &base.section.interfaces,
            &mut pr,
            &cancel,
        )?
    };
    let [lo, hi] = doi.reference_ohm_m;
    let depth = doi.doi_depth_m.map_or_else(
        || "no cell under the middle of the line is determined".to_string(),
        |d| format!("{d:.1} m"),
    );
    let summary = format!(
        "Depth of investigation {depth}: {:.0} % of the cells under the middle of the line are determined by the data (R ≤ {}; references {lo:.3} and {hi:.1} Ω·m, α_s {}).",
        100.0 * doi.determined_share,
        crate::methods::ert::doi::DOI_CUTOFF,
        doi.alpha_s
    );
    let md = format!(
        "### ERT depth of investigation\n\nThe survey was inverted twice more with homogeneous reference models of {lo:.3} and {hi:.1} Ω·m (Oldenburg & Li 1999). Where both give the same resistivity the data determine it (index R ≤ {}); below the depth of investigation, {depth} under the middle of the line, the model shows the reference more than the data, and an interpretation there is not supported. {:.0} % of the cells under the middle of the line are determined.\n",
        crate::methods::ert::doi::DOI_CUTOFF,
        100.0 * doi.determined_share
    );
    let line = format!("ERT depth of investigation: {depth}");
    let mut h = Held::new(doi.clone(), line)
        .number("determined_share", doi.determined_share)
        .detail(summary.clone())
        .report(md);
    if let Some(d) = doi.doi_depth_m {
        h = h.number("doi_depth_m", d);
    }
    Ok((summary, Outputs::new().put(keys::ERT_DOI, Arc::new(h))))
}

/// `load_studio_inversion` and `take_studio_inversion`: the model finished on the studio's
/// ERT page, from the folder `studio_inversion_dir` names, checked against the data the run
/// loaded and held as the run's inversion; its record's settings are named in the step and
/// the report. Steps already built on an earlier model of the run are let run again on it.
pub fn take_studio_model(ctx: &mut RunContext) -> ToolResult {
    let dir = ctx.input_path(keys::STUDIO_INVERSION_DIR).ok_or_else(|| {
        anyhow!(
            "no {} in the project: the studio names the folder its ERT page's inversion was written to when it starts a run",
            keys::STUDIO_INVERSION_DIR
        )
    })?;
    let set = held::<SurveySet>(ctx, keys::ERT_DATA)
        .ok_or_else(|| anyhow!("no ERT data loaded: run load_ert_surveys first"))?
        .clone();
    let (record, model) = read_handover(&dir)?;
    check_matches(&record, &model, &set.surveys)?;
    let sentence = record.sentence();
    let (files, figs) = export_and_figures(ctx, &model, "ert_page");
    let summary = format!(
        "{sentence}; {} cells, {} data per survey, read from {}.",
        model.section().n_params(),
        model.n_data(),
        dir.display()
    );
    let report = format!(
        "### ERT inversion\n\n{sentence}. The model was made on the studio's ERT page and is not inverted again in this run.\n\n{}",
        model_report(&model)
    );
    let line = format!(
        "ERT model from the studio's ERT page: χ² {:.2}, {} cells",
        model.chi2(),
        model.section().n_params()
    );
    let h = held_model(model, line, files)
        .number("taken_over_from", "ert_page")
        .number("page_finished_utc", record.finished_utc())
        .report(report);
    let downstream =
        crate::catalog::shared_registry().downstream(&[keys::INVERSION_RESULTS.into()]);
    ctx.reopen(&downstream.iter().map(String::as_str).collect::<Vec<_>>());
    let mut out = Outputs::new().put(keys::INVERSION_RESULTS, Arc::new(h));
    for (p, c) in figs {
        out = out.figure(p, &c);
    }
    Ok((summary, out))
}

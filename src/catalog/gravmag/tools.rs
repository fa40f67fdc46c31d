//! The gravity / magnetic tools' handlers: each calls [`super::run`], draws its figures,
//! writes its exports and says what it found.

#[allow(unused_imports)]
use super::*;

/// The answer that stops instead of choosing a kind.
pub(super) const STOP: &str = "stop";

/// The table with what it measures decided: as read when the reader decided it, else the
/// person's answer to the question (with nobody there, or "stop", an error saying how to set
/// `gravmag_kind`); with the basis of the decision in words.
fn resolve_kind(
    ctx: &mut RunContext,
    name: &str,
    table: StationTable,
) -> anyhow::Result<(StationTable, String)> {
    Ok(match &table.kind {
        KindInference::Resolved { .. } => {
            let basis = evidence_words(&table.kind);
            (table, basis)
        }
        KindInference::Ambiguous {
            candidates,
            evidence,
            question,
        } => {
            let mut options: Vec<QuestionOption> = candidates
                    .iter()
                    .map(|k| {
                        let (label, detail) = match k.family {
                            Family::Gravity => (
                                "Gravity (mGal)",
                                "Read the values as gravity in mGal (gz positive down) and invert for density contrast.",
                            ),
                            Family::Magnetic => (
                                "Magnetics (nT)",
                                "Read the values as a total-field magnetic anomaly in nT and invert for susceptibility.",
                            ),
                        };
                        QuestionOption::new(kind_word(k.quantity), label, detail)
                    })
                    .collect();
            options.push(QuestionOption::new(
                STOP,
                "Stop: I will set gravmag_kind",
                "Do not load the table; set gravmag_kind in the project settings and run again.",
            ));
            let found = if evidence.is_empty() {
                "no evidence".to_string()
            } else {
                evidence
                    .iter()
                    .map(|e| format!("\"{}\"", e.keyword))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let answer = ctx.ask(
                &format!("{name}: {question} (found: {found})"),
                &options,
                STOP,
            );
            if answer == STOP {
                bail!(
                    "what {name} measures could not be decided: {question} The studio does not guess; set the project setting {KIND_KEY} to \"gravity\" (mGal) or \"magnetic\" (nT) — or bouguer, free_air, gravity_disturbance, tmi — and run again"
                );
            }
            let kind = parse_kind(&answer).map_err(|e| anyhow!(e))?;
            (
                table.clone().with_kind(kind),
                format!("the user's answer to: {question}"),
            )
        }
    })
}

/// The format word of a station table read without a header (columns by position).
pub const GUESSED_COLUMNS: &str = "x,y,value table";

/// `load_gravmag_data`.
pub fn load_gravmag_data(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let path = ctx
        .input_path(DATA_ROLE)
        .ok_or_else(|| anyhow!("no {DATA_ROLE} input: name the station table in project.json"))?;
    let declared = declared_kind(ctx)?;
    let goal = ctx.goal.clone();
    let table = load(&path, declared, Some(&goal)).map_err(|e| anyhow!("{e}"))?;
    let name = file_name(&path);
    if table.columns_guessed {
        // A table without a header has its columns taken by position: chosen or proven,
        // never guessed (issue 17).
        let how = super::super::kit::confirm::require_confirmed(
            ctx,
            "Gravity/magnetics",
            &path,
            GUESSED_COLUMNS,
        )?;
        ctx.note(&how);
    }
    let (table, basis) = resolve_kind(ctx, &name, table)?;
    // The reader's notes that record a guess or a loss go to the run's warnings; the others
    // (projection used, columns not used) are in the report's table.
    const WARN: &[&str] = &[
        "no header",
        "comment line",
        "longitude and",
        "non-positive",
        "skipped",
        "converted",
    ];
    for n in &table.notes {
        if WARN.iter().any(|w| n.contains(w)) {
            ctx.note(&format!("{name}: {n}"));
        }
    }
    let unit = table.value_unit.clone().unwrap_or_default();
    let kind = table
        .kind
        .kind()
        .ok_or_else(|| anyhow!("internal: the kind of {name} was not resolved"))?;
    let mut summary = format!(
        "{} {} stations of {} ({unit}) in {name}: x {}",
        table.n_stations,
        kind.family.word(),
        kind.quantity.words(),
        range_words(&table.x_m, "m")
    );
    if !table.profile {
        let _ = write!(summary, ", y {}", range_words(&table.y_m, "m"));
    }
    if let Some(z) = &table.z_m {
        let _ = write!(summary, ", z {}", range_words(z, "m"));
    }
    let _ = write!(
        summary,
        "; values {}; kind from {basis}",
        range_words(&table.value, &unit)
    );
    if let Some(p) = &table.projection {
        let _ = write!(summary, "; longitude/latitude projected: {}", p.describe());
    }
    if table.profile {
        summary.push_str(
            "; a two-column profile (x, value): maps and the 3D inversion need x, y stations",
        );
    }
    summary.push('.');
    let mut outputs = Outputs::new();
    if !table.profile {
        let scale = ColourScale::fit(
            &table.value,
            false,
            &format!("{} ({unit})", kind.quantity.words()),
            Palette::Viridis,
        );
        let p = draw_figure(ctx, "gravmag_stations", |p| {
            plot::station_map(
                p,
                &map_axes(&format!("Stations: observed {}", kind.quantity.words())),
                &table.x_m,
                &table.y_m,
                &table.value,
                &scale,
            )
        });
        outputs = outputs.figure_if(
            p,
            &format!(
                "Stations coloured by the observed {} ({unit}).",
                kind.quantity.words()
            ),
        );
    }
    let (vlo, vhi) = range(&table.value);
    let data = GravMagData {
        source_file: path.clone(),
        table,
        kind_basis: basis,
    };
    let report = data_report(&data);
    let detail = format!(
        "{} stations, {}; x {}, y {}; values {}",
        data.table.n_stations,
        data.table.format,
        range_words(&data.table.x_m, "m"),
        range_words(&data.table.y_m, "m"),
        range_words(&data.table.value, &unit)
    );
    let n = data.table.n_stations;
    let held = Held::new(data, summary.clone())
        .detail(detail)
        .report(report)
        .number("n_data", n)
        .number("value_min", vlo)
        .number("value_max", vhi)
        .number("value_unit", unit.as_str());
    Ok((summary, outputs.put(keys::GRAVMAG_DATA, Arc::new(held))))
}

/// `invert_gravmag`.
pub fn invert_gravmag(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let data = held::<GravMagData>(ctx, keys::GRAVMAG_DATA)
        .ok_or_else(|| anyhow!("no station table loaded: run load_gravmag_data first"))?
        .clone();
    let params = params(ctx)?;
    params.validate().map_err(|e| anyhow!(e))?;
    let field_params = field_params(ctx)?;
    let field = field_params.field().map_err(|e| anyhow!(e))?;
    let family = data
        .table
        .family()
        .ok_or_else(|| anyhow!("what the table measures is not decided: set {KIND_KEY}"))?;
    if family == Family::Magnetic && field.is_none() {
        ctx.note(
            "No inducing field was given (magnetic_field): I = 60°, D = 0°, 50 000 nT was assumed. Give the IGRF values of the survey for a real interpretation.",
        );
    }
    if family == Family::Gravity && field.is_some() {
        ctx.note("magnetic_field is set but the data are gravity: it was not used.");
    }
    let cancel = ctx.cancel_flag();
    let result = {
        let c: &RunContext = ctx;
        let mut progress = |f: f64, s: &str| c.progress(f, s);
        invert(&data.table, &params, field, &mut progress, &cancel)
    }
    .map_err(|e| anyhow!("{}: {e}", file_name(&data.source_file)))?;
    for w in &result.inversion.warnings {
        ctx.note(w);
    }
    // Figures and exports are conveniences (seed 001): what cannot be written is recorded on
    // the run and the model stays.
    let figs = match draw_results(ctx, &result) {
        Ok(f) => f,
        Err(e) => {
            let planned = planned_path(ctx, "figures", "gravmag_*.png");
            ctx.not_written(&planned, &format!("the gravity / magnetic maps: {e}"));
            Vec::new()
        }
    };
    let files = match write_products(ctx, &result, &data.table) {
        Ok(f) => f,
        Err(e) => {
            let planned = planned_path(ctx, "products", "gravmag_*");
            ctx.not_written(&planned, &format!("the gravity / magnetic exports: {e}"));
            Vec::new()
        }
    };
    let inv = &result.inversion;
    let unit = family.unit();
    let model: Vec<f64> = inv
        .model
        .iter()
        .map(|v| model_export_value(family, *v))
        .collect();
    let mut summary = format!(
        "Regional: degree-{} trend removed (residual RMS {} {unit}). {} stations inverted on {} × {} × {} = {} cells: χ² {} after {} exact solve(s) (β {:.3e}, search {:?}), {} cells at a bound; {} {}",
        result.regional_residual.trend.degree,
        fmt(result.regional_residual.trend.residual_rms),
        inv.n_data,
        inv.mesh.nx(),
        inv.mesh.ny(),
        inv.mesh.nz(),
        inv.n_cells,
        fmt(inv.chi2),
        inv.iterations,
        inv.lambda,
        inv.beta_search.outcome,
        inv.bound_hits,
        model_label(family).to_lowercase(),
        range_words(&model, "")
    );
    if let Some(c) = inv.anomaly_centroid_m {
        let _ = write!(
            summary,
            "; anomaly centroid at x {} m, y {} m, {} m below the mesh top",
            fmt(c[0]),
            fmt(c[1]),
            fmt(inv.mesh.top_m() - c[2])
        );
    }
    if let Some(m) = inv.excess_mass_kg {
        let _ = write!(summary, "; excess mass {} kg", fmt(m));
    }
    summary.push_str(". The depth comes from the depth weighting, not from the data.");
    let res = GravMagResults {
        params: params.clone(),
        inducing_field: field,
        result,
    };
    let report = results_report(&res);
    let r = &res.result;
    let inv = &r.inversion;
    let detail = format!(
        "χ² {} (history {:?}); rRMS {} %; β {:.3e}; {} data, {} cells; model {}; maps {} × {} nodes at {} m",
        fmt(inv.chi2),
        inv.chi2_history.iter().map(|c| fmt(*c)).collect::<Vec<_>>(),
        fmt(inv.rrms_percent),
        inv.lambda,
        inv.n_data,
        inv.n_cells,
        range_words(&model, ""),
        r.residual_grid.nx,
        r.residual_grid.ny,
        fmt(r.residual_grid.spacing_m)
    );
    // The cells table is the first export; `null` when the exports could not be written.
    let model_csv = files.first().map(|p| p.display().to_string());
    let mut held = Held::new(res.clone(), summary.clone())
        .detail(detail)
        .report(report)
        .number("chi2", inv.chi2)
        .number("chi2_history", json!(inv.chi2_history))
        .number("rrms_percent", inv.rrms_percent)
        .number("iterations", inv.iterations)
        .number("lambda", inv.lambda)
        .number("n_data", inv.n_data)
        .number("n_cells", inv.n_cells)
        .number("bound_hits", inv.bound_hits)
        .number("trend_degree", r.regional_residual.trend.degree);
    if let Some(m) = inv.excess_mass_kg {
        held = held.number("excess_mass_kg", m);
    }
    for f in files {
        held = held.file(f);
    }
    let model_3d = JsonProduct::new(
        format!(
            "the 3D {} model of invert_gravmag ({} cells; see gravmag_results)",
            model_label(family).to_lowercase(),
            inv.n_cells
        ),
        json!({ "cells_csv": model_csv, "n_cells": inv.n_cells }),
    );
    let mut outputs = Outputs::new()
        .put(keys::GRAVMAG_RESULTS, Arc::new(held))
        .put(MODEL_3D, Arc::new(model_3d));
    for (p, c) in figs {
        outputs = outputs.figure(p, &c);
    }
    Ok((summary, outputs))
}

/// `evaluate_gravmag_inversion`.
pub fn evaluate_gravmag(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let res = held::<GravMagResults>(ctx, keys::GRAVMAG_RESULTS)
        .ok_or_else(|| anyhow!("no grav/mag model: run invert_gravmag first"))?
        .clone();
    let inv = &res.result.inversion;
    let evaluation = evaluate_gravmag_inversion(inv, res.result.checks.as_ref());
    for w in &evaluation.warnings {
        ctx.note(w);
    }
    ctx.note(DEPTH_WARNING);
    let verdict = GravMagVerdict {
        evaluation,
        beta_outcome: inv.beta_search.outcome,
        bound_hits: inv.bound_hits,
        n_cells: inv.n_cells,
        chi2: inv.chi2,
    };
    let q = &verdict.evaluation.quality;
    let verdict_words = verdict.evaluation.verdict();
    let summary = format!(
        "{}: χ² {} ({}), β search {:?} in {} exact solve(s), {} of {} cells at a bound. Depth comes from the depth weighting, not from the data.",
        verdict_words,
        fmt(verdict.chi2),
        q.band.map_or("not judged", |b| b.word()),
        verdict.beta_outcome,
        inv.iterations,
        verdict.bound_hits,
        verdict.n_cells
    );
    let report = verdict_report(&verdict, &res);
    let mut outputs = Outputs::new();
    match draw_beta_search(ctx, &res) {
        Ok(Some((p, c))) => outputs = outputs.figure(p, &c),
        Ok(None) => {}
        Err(e) => {
            let planned = planned_path(ctx, "figures", "gravmag_beta_search.png");
            ctx.not_written(&planned, &e.to_string());
        }
    }
    let held = Held::new(verdict.clone(), summary.clone())
        .detail(format!(
            "quality {:.1}; components {}",
            q.score,
            q.components
                .iter()
                .map(|c| format!(
                    "{} {}",
                    c.name,
                    c.score.map_or("-".into(), |s| format!("{s:.0}"))
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .report(report)
        .number("quality_score", q.score)
        .number("passed", q.passed)
        .number("chi2", verdict.chi2)
        .number("bound_hits", verdict.bound_hits)
        .number(
            "beta_outcome",
            serde_json::to_value(verdict.beta_outcome).unwrap_or(Value::Null),
        );
    Ok((
        summary,
        outputs.put(keys::GRAVMAG_EVALUATION, Arc::new(held)),
    ))
}

/// Whether the loaded table can be mapped and inverted (x, y stations, not a profile).
pub(super) fn data_is_mappable(ctx: &RunContext) -> bool {
    held::<GravMagData>(ctx, keys::GRAVMAG_DATA).is_none_or(|d| !d.table.profile)
}

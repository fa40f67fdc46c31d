//! The TDEM report text: the soundings as read, the inversion's settings and fits, the
//! evaluation, the maps and the water content.

#[allow(unused_imports)]
use super::*;
use crate::methods::tdem::diagnosis::FitDiagnosis;

/// The report section of the data.
pub(super) fn data_report(ds: &TdemDataset) -> String {
    let mut md = String::from(
        "| Sounding | Gates | Used | Masked | Time range (s) | Unit | Easting (m) | Northing (m) | Distance (m) |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for s in &ds.file.soundings {
        let masked: Vec<String> = s
            .mask_counts()
            .iter()
            .map(|(k, n)| format!("{n} {}", k.replace('_', " ")))
            .collect();
        let (a, b) = s
            .times_s
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), t| (a.min(*t), b.max(*t)));
        let opt = |v: Option<f64>| v.map(short_num).unwrap_or_default();
        md.push_str(&format!(
            "| {} | {} | {} | {} | {:.3e} – {:.3e} | {}{} | {} | {} | {} |\n",
            s.name,
            s.n_gates(),
            s.used_gates().len(),
            if masked.is_empty() {
                "0".to_string()
            } else {
                masked.join(", ")
            },
            a,
            b,
            s.unit.label(),
            if s.unit_stated { "" } else { " (assumed)" },
            opt(s.position.easting_m),
            opt(s.position.northing_m),
            opt(s.position.distance_m),
        ));
    }
    let mut systems: Vec<String> = ds
        .file
        .soundings
        .iter()
        .filter_map(|s| s.system.as_ref().map(describe_system))
        .collect();
    systems.dedup();
    if !systems.is_empty() {
        md.push_str(&format!("\n**System.** {}\n", systems.join("; ")));
    }
    let notes: Vec<&String> = ds
        .notes
        .iter()
        .chain(&ds.file.notes)
        .chain(ds.file.soundings.iter().flat_map(|s| s.notes.iter()))
        .collect();
    if !notes.is_empty() {
        md.push_str("\n**Assumed or detected while reading.**\n\n");
        let mut seen: Vec<&String> = Vec::new();
        for n in notes {
            if !seen.contains(&n) {
                md.push_str(&format!("- {n}\n"));
                seen.push(n);
            }
        }
    }
    md
}

pub(super) fn settings_report(inv: &TdemInversion) -> String {
    let s = &inv.settings.smooth;
    let lambda = match s.lambda_mode {
        LambdaMode::Occam => format!("Occam search (final λ {})", short_num(inv.lambda())),
        LambdaMode::Fixed { lambda } => format!("fixed λ {}", short_num(lambda)),
    };
    let layers = inv
        .fits
        .first()
        .map(|f| {
            let tops = f.model.top_depths_m();
            format!(
                "{} layers, first {} m thick, half-space below {} m",
                f.model.n_layers(),
                short_num(f.model.thickness_m.first().copied().unwrap_or(f64::NAN)),
                short_num(tops.last().copied().unwrap_or(f64::NAN))
            )
        })
        .unwrap_or_default();
    let mut md = String::from("| Setting | Value |\n|---|---|\n");
    for (k, v) in [
        ("Mode", inv.mode().to_string()),
        ("Layering", layers),
        (
            "Error floor",
            format!("{:.1} % of each value", 100.0 * s.error_floor),
        ),
        ("Target χ²", short_num(s.target_chi2)),
        ("Regularisation", lambda),
        (
            "Resistivity bounds",
            format!(
                "{} – {} Ω·m",
                short_num(s.rho_bounds_ohm_m.0),
                short_num(s.rho_bounds_ohm_m.1)
            ),
        ),
        ("DOI threshold", short_num(s.doi_threshold)),
        (
            "Forward filters",
            if inv.settings.accurate_filters {
                "Key (2012) 201-point".into()
            } else {
                "Key (2012) 101-point".into()
            },
        ),
    ] {
        if !v.is_empty() {
            md.push_str(&format!("| {k} | {v} |\n"));
        }
    }
    if let Some(k) = inv.settings.few_layers {
        md.push_str(&format!(
            "| Few-layer model | {k} layers from each smooth model |\n"
        ));
    }
    md
}

pub(super) fn fits_report(inv: &TdemInversion) -> String {
    let mut md = String::from(
        "| Sounding | χ² | RRMS (%) | Data | DOI (m) | ρ range above the DOI (Ω·m) |\n|---|---|---|---|---|---|\n",
    );
    for f in &inv.fits {
        let tops = f.model.top_depths_m();
        let lim = f.doi_m.unwrap_or(f64::INFINITY);
        let (lo, hi) = f
            .model
            .rho_ohm_m
            .iter()
            .zip(&tops)
            .filter(|(_, t)| **t < lim)
            .fold((f64::INFINITY, 0.0f64), |(a, b), (r, _)| {
                (a.min(*r), b.max(*r))
            });
        md.push_str(&format!(
            "| {} | {:.2} | {:.1} | {} | {} | {} – {} |\n",
            f.name,
            f.chi2,
            f.rrms_percent,
            f.n_data,
            opt_m(f.doi_m),
            short_num(lo),
            short_num(hi)
        ));
    }
    for (name, why) in &inv.failed {
        md.push_str(&format!("| {name} | not inverted: {why} | | | | |\n"));
    }
    md
}

pub(super) fn doi_range(inv: &TdemInversion) -> String {
    let d: Vec<f64> = inv.fits.iter().filter_map(|f| f.doi_m).collect();
    if d.is_empty() {
        return "no sounding reaches the DOI threshold".into();
    }
    let (a, b) = d
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(*v), b.max(*v)));
    if (b - a).abs() < 0.5 {
        format!("DOI {a:.0} m")
    } else {
        format!("DOI {a:.0}–{b:.0} m")
    }
}

/// When the fit is far from the noise level: where the first model changes most sharply and
/// how thick its layers are there, with what to try. Fixed smooth layerings cannot place a
/// sharp boundary between their interfaces, and TEM data at a few per cent resolve one: on
/// the example (a 10 Ω·m conductor under 2000 Ω·m at 150 m) 15 layers fit to χ² 4–30
/// depending only on where the log-spaced interfaces fall, 20–30 layers to χ² ≈ 1.
pub(super) fn coarse_layering_hint(inv: &TdemInversion) -> Option<String> {
    if inv.chi2() <= 2.0 || inv.settings.few_layers.is_some() {
        return None;
    }
    let m = &inv.fits.first()?.model;
    let tops = m.top_depths_m();
    let (i, _) = m
        .rho_ohm_m
        .windows(2)
        .map(|w| (w[1] / w[0]).ln().abs())
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let thick = |j: usize| m.thickness_m.get(j).copied().unwrap_or(f64::INFINITY);
    Some(format!(
        " The data are not fitted at their noise level: the model changes most sharply at {:.0} m, where its layers are {:.0} and {:.0} m thick — too coarse to place a sharp boundary; more layers (n_layers 30 or more) or the few-layer inversion (few_layers) may fit",
        tops.get(i + 1).copied().unwrap_or(0.0),
        thick(i),
        thick(i + 1)
    ))
}

pub(super) fn invert_summary(inv: &TdemInversion) -> String {
    let n = inv.fits.len();
    format!(
        "Inverted {n} sounding{} {}: χ² {:.2} over {} data (RRMS {:.1} %), {} layers each, {}{}.{}",
        if n == 1 { "" } else { "s" },
        if inv.survey.line.is_some() {
            "as a laterally constrained line"
        } else {
            "one by one"
        },
        inv.chi2(),
        inv.n_data(),
        inv.rrms_percent(),
        inv.fits.first().map_or(0, |f| f.model.n_layers()),
        doi_range(inv),
        if inv.failed.is_empty() {
            "; none failed".to_string()
        } else {
            format!("; {} could not be inverted", inv.failed.len())
        },
        coarse_layering_hint(inv).map_or_else(String::new, |h| format!("{h}."))
    )
}

pub(super) fn evaluation_report(ev: &TdemEvaluation) -> String {
    let mut md = format!(
        "**Verdict.** {} (pass: overall ≥ {:.0}, data fit ≥ 60, residual pattern and resolution ≥ 50).\n\n| Component | Weight | Score | Basis |\n|---|---|---|---|\n",
        ev.quality.sentence(),
        ev.quality.threshold
    );
    for c in &ev.quality.components {
        md.push_str(&format!(
            "| {} | {:.2} | {} | {} |\n",
            c.name.replace('_', " "),
            c.weight,
            c.score.map_or("not judged".into(), |s| format!("{s:.0}")),
            c.note
        ));
    }
    md.push_str("\n| Attempt | λ | χ² | Score | Kept |\n|---|---|---|---|---|\n");
    for a in &ev.attempts {
        md.push_str(&format!(
            "| {} | {} | {:.2} | {:.0} | {} |\n",
            a.attempt,
            short_num(a.lambda),
            a.chi2,
            a.score,
            if a.kept { "yes" } else { "" }
        ));
    }
    md.push_str(&format!("\n**Model kept.** {}\n", ev.why_kept));
    md.push_str(
        "\n| Sounding | χ² | Fit | DOI (m) | Resolved below the 4th layer |\n|---|---|---|---|---|\n",
    );
    for s in &ev.soundings {
        md.push_str(&format!(
            "| {} | {:.2} | {} | {} | {} |\n",
            s.name,
            s.chi2,
            s.band.word(),
            opt_m(s.doi_m),
            if s.resolved { "yes" } else { "no" }
        ));
    }
    md.push_str(&diagnosis_report(
        &ev.diagnoses,
        ev.diagnosis_note.as_deref(),
    ));
    md.push_str("\nThe score is a heuristic for deciding whether to retry and where to look; it does not make a layered model unique, and a 1D model assumes the ground does not vary laterally within the loop's footprint.\n");
    md
}

/// "Soundings that do not fit": per diagnosed sounding, the conclusion, where the misfit
/// sits, its worst gates and what each re-inversion gave.
pub(super) fn diagnosis_report(diagnoses: &[FitDiagnosis], note: Option<&str>) -> String {
    if diagnoses.is_empty() {
        return String::new();
    }
    let mut md = String::from("\n**Soundings that do not fit.**\n");
    if let Some(n) = note {
        md.push_str(&format!("\n{n}.\n"));
    }
    for d in diagnoses {
        md.push_str(&format!("\n*{}*: {}\n", d.name, d.conclusion));
        md.push_str("\n| Time window | Gates | From (s) | To (s) | Share of χ² | χ² of its gates |\n|---|---|---|---|---|---|\n");
        for w in &d.windows {
            md.push_str(&format!(
                "| {} | {} | {} | {} | {:.0} % | {:.2} |\n",
                w.window.word(),
                w.n_gates,
                short_num(w.from_s),
                short_num(w.to_s),
                w.share * 100.0,
                w.chi2
            ));
        }
        md.push_str(&format!(
            "\nWorst gates (file gate: time, normalised residual): {}.\n",
            d.worst_gates
                .iter()
                .map(|g| format!("{}: {} s, {:+.1}", g.gate, short_num(g.time_s), g.residual))
                .collect::<Vec<_>>()
                .join("; ")
        ));
        md.push_str(&format!(
            "\n| Re-inverted alone with | χ² | Note |\n|---|---|---|\n| the run's assumptions (baseline) | {} | |\n",
            d.baseline_chi2.map_or("not inverted".into(), |c| format!("{c:.2}"))
        ));
        for t in &d.trials {
            md.push_str(&format!(
                "| {} | {} | {} |\n",
                t.what,
                t.chi2.map_or("not inverted".into(), |c| format!("{c:.2}")),
                t.note.as_deref().unwrap_or("")
            ));
        }
    }
    md
}

pub(super) fn prior_source_word(s: PriorSource) -> &'static str {
    match s {
        PriorSource::User => "given by the user",
        PriorSource::Partial => "partly given by the user, the rest generic defaults",
        PriorSource::Default => "GENERIC DEFAULTS (no petrophysical parameters were given)",
    }
}

pub(super) fn water_report(wc: &TdemWaterContent) -> String {
    let c = &wc.conversion;
    let mut md = format!(
        "**Prior** ({}; {} realizations, seed {}; relation {}):\n\n| Parameter | 5 % | 95 % | From the user |\n|---|---|---|---|\n",
        prior_source_word(c.prior_source),
        c.n_realizations,
        c.seed,
        c.relation_by_region.join(", ")
    );
    for r in &c.prior_ranges {
        md.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            r.parameter.replace('_', " "),
            short_num(r.p5),
            short_num(r.p95),
            if r.from_user { "yes" } else { "no" }
        ));
    }
    let many = wc.rows.iter().any(|r| r.station_index.is_some());
    md.push_str(&format!(
        "\n| {}Top (m) | Bottom (m) | ρ (Ω·m) | θ mean (m³/m³) | θ std | Below DOI |\n|{}---|---|---|---|---|---|\n",
        if many { "Sounding | " } else { "" },
        if many { "---|" } else { "" }
    ));
    for (r, below) in wc.rows.iter().zip(&wc.below_doi) {
        md.push_str(&format!(
            "| {}{:.1} | {} | {} | {:.3} | {:.3} | {} |\n",
            r.station_index.map_or(String::new(), |i| format!("{i} | ")),
            r.depth_top_m,
            r.depth_bottom_m
                .map_or("half-space".into(), |b| format!("{b:.1}")),
            short_num(r.resistivity_ohm_m),
            r.water_content_mean,
            r.water_content_std,
            if *below { "yes" } else { "" }
        ));
    }
    if let Some(ratio) = c.reliability_ratio {
        md.push_str(&format!(
            "\n**Reliability.** Mean σ(θ) over the range of mean θ: {ratio:.2} ({:?}).\n",
            c.reliability
        ));
    }
    md.push_str(&notes("Assumptions and decisions.", &wc.notes));
    md
}

//! The gravity / magnetic report text: the stations as read, the separation and inversion,
//! and the verdict.

#[allow(unused_imports)]
use super::*;

pub(super) fn evidence_words(kind: &KindInference) -> String {
    match kind {
        KindInference::Resolved { evidence, .. } => {
            let parts: Vec<String> = evidence
                .iter()
                .map(|e| {
                    let src = match e.source {
                        EvidenceSource::Header => "the column name",
                        EvidenceSource::FileName => "the file name",
                        EvidenceSource::Request => "the request",
                        EvidenceSource::Declared => "the setting gravmag_kind",
                    };
                    if e.source == EvidenceSource::Declared {
                        src.to_string()
                    } else {
                        format!("\"{}\" in {src}", e.keyword)
                    }
                })
                .collect();
            parts.join(", ")
        }
        KindInference::Ambiguous { .. } => "undecided".into(),
    }
}

pub(super) fn data_report(d: &GravMagData) -> String {
    let t = &d.table;
    let unit = t.value_unit.as_deref().unwrap_or("");
    let mut md = String::new();
    let _ = writeln!(md, "| Station table | |\n|---|---|");
    let _ = writeln!(
        md,
        "| File | `{}` ({}) |",
        cell(&file_name(&d.source_file)),
        cell(&t.format)
    );
    if let Some(k) = t.kind.kind() {
        let _ = writeln!(
            md,
            "| Measured | {} ({unit}), from {} |",
            k.quantity.words(),
            cell(&d.kind_basis)
        );
    }
    let _ = writeln!(
        md,
        "| Stations | {}{} |",
        t.n_stations,
        if t.skipped_rows > 0 {
            format!(" ({} rows without a value skipped)", t.skipped_rows)
        } else {
            String::new()
        }
    );
    let _ = writeln!(md, "| x (east) | {} |", range_words(&t.x_m, "m"));
    if !t.profile {
        let _ = writeln!(md, "| y (north) | {} |", range_words(&t.y_m, "m"));
    }
    if let Some(z) = &t.z_m {
        let _ = writeln!(md, "| Elevation | {} |", range_words(z, "m"));
    }
    let _ = writeln!(md, "| Values | {} |", range_words(&t.value, unit));
    if let Some(p) = &t.projection {
        let _ = writeln!(md, "| Projection | {} |", cell(&p.describe()));
    }
    if t.columns_guessed {
        let roles: Vec<String> = t
            .columns
            .iter()
            .map(|c| format!("{:?}", c.role).to_lowercase())
            .collect();
        let _ = writeln!(
            md,
            "| Columns | assumed: {} (no header) |",
            roles.join(", ")
        );
    }
    if !t.notes.is_empty() {
        md.push('\n');
        for n in &t.notes {
            let _ = writeln!(md, "- {n}");
        }
    }
    md
}

pub(super) fn weighting_words(w: &Weighting) -> String {
    match w {
        Weighting::Depth { exponent, z0_m } => format!(
            "depth weighting (z + z0)^(−{}/2){}",
            fmt(*exponent),
            z0_m.map(|z| format!(", z0 = {} m", fmt(z)))
                .unwrap_or_default()
        ),
        Weighting::Sensitivity => "sensitivity weighting (Li & Oldenburg 2000)".into(),
    }
}

/// The report section of the separation, the maps and the inversion: the settings used, the
/// results, the exact solves and the notes.
pub(super) fn results_report(res: &GravMagResults) -> String {
    let r = &res.result;
    let inv = &r.inversion;
    let mut md = settings_used(res);
    md.push_str(&results_found(res));
    md.push_str(&solves_table(inv));
    let notes: Vec<&String> = r
        .notes
        .iter()
        .chain(&r.mesh.notes)
        .chain(&inv.notes)
        .collect();
    if !notes.is_empty() {
        md.push('\n');
        for n in notes {
            let _ = writeln!(md, "- {n}");
        }
    }
    md
}

/// The table of the settings the separation and the inversion used.
fn settings_used(res: &GravMagResults) -> String {
    let r = &res.result;
    let inv = &r.inversion;
    let family = r.kind.family;
    let unit = family.unit();
    let mut md = String::new();
    let _ = writeln!(md, "**Settings used**\n");
    let _ = writeln!(md, "| Setting | Value |\n|---|---|");
    let _ = writeln!(
        md,
        "| Regional trend | degree {} polynomial, least squares |",
        r.regional_residual.trend.degree
    );
    let _ = writeln!(
        md,
        "| Stations inverted | {} of {} (at most {}{}) |",
        inv.n_data,
        r.regional_residual.residual.len(),
        res.params.max_stations,
        if r.inverted_stations.block_m > 0.0 {
            format!(
                "; block averages in {} m squares",
                fmt(r.inverted_stations.block_m)
            )
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        md,
        "| Map node spacing | {} m (minimum curvature, tension 0.25) |",
        fmt(r.residual_grid.spacing_m)
    );
    let m = &inv.mesh;
    let _ = writeln!(
        md,
        "| Mesh | {} × {} × {} = {} cells; core cells {} m × {} m × {} m |",
        m.nx(),
        m.ny(),
        m.nz(),
        inv.n_cells,
        fmt(r.mesh.core_cell_m),
        fmt(r.mesh.core_cell_m),
        fmt(r.mesh.core_cell_z_m)
    );
    let (slo, shi) = range(&inv.standard_deviation);
    let _ = writeln!(
        md,
        "| Data errors | {} % relative + floor; σ from {} to {} {unit} |",
        fmt(res.params.relative_error * 100.0),
        fmt(slo),
        fmt(shi)
    );
    let _ = writeln!(
        md,
        "| Target χ² | {} ± {}, at most {} exact solves |",
        fmt(inv.beta_search.target_chi2),
        fmt(inv.beta_search.tolerance),
        res.params.max_solves
    );
    let _ = writeln!(md, "| Weighting | {} |", weighting_words(&inv.weighting));
    let _ = writeln!(
        md,
        "| Smoothness | α_s = {}, length scale {} m |",
        fmt(inv.alpha_s),
        fmt(inv.length_scale_m)
    );
    let (blo, bhi) = inv.bounds;
    let _ = writeln!(
        md,
        "| Bounds | {} to {} {} |",
        fmt(model_export_value(family, blo)),
        fmt(model_export_value(family, bhi)),
        match family {
            Family::Gravity => "g/cm³",
            Family::Magnetic => "SI",
        }
    );
    if let Some(f) = &res.inducing_field {
        let _ = writeln!(
            md,
            "| Inducing field | {} nT, I = {}°, D = {}° (given) |",
            fmt(f.intensity_nt),
            fmt(f.inclination_deg),
            fmt(f.declination_deg)
        );
    }
    md
}

/// The table of what the separation and the inversion found.
fn results_found(res: &GravMagResults) -> String {
    let r = &res.result;
    let inv = &r.inversion;
    let family = r.kind.family;
    let unit = family.unit();
    let mut md = String::new();
    let _ = writeln!(md, "\n**Results**\n");
    let _ = writeln!(md, "| Result | Value |\n|---|---|");
    let tr = &r.regional_residual.trend;
    let terms: Vec<String> = tr
        .terms
        .iter()
        .zip(&tr.coefficients)
        .map(|(&(a, b), c)| match (a, b) {
            (0, 0) => format!("{c:.6e}"),
            _ => format!("{c:.6e}·x^{a}·y^{b}"),
        })
        .collect();
    let _ = writeln!(
        md,
        "| Regional polynomial ({unit}, x and y in m) | {} |",
        cell(&terms.join(" + "))
    );
    let _ = writeln!(md, "| Residual RMS | {} {unit} |", fmt(tr.residual_rms));
    let _ = writeln!(md, "| χ² | {} |", fmt(inv.chi2));
    let _ = writeln!(md, "| rRMS | {} % |", fmt(inv.rrms_percent));
    let _ = writeln!(md, "| β (λ) | {:.4e} |", inv.lambda);
    let _ = writeln!(
        md,
        "| β search | {:?}: {} |",
        inv.beta_search.outcome,
        cell(&inv.beta_search.note)
    );
    let _ = writeln!(
        md,
        "| Cells at a bound | {} of {} |",
        inv.bound_hits, inv.n_cells
    );
    let model: Vec<f64> = inv
        .model
        .iter()
        .map(|v| model_export_value(family, *v))
        .collect();
    let _ = writeln!(
        md,
        "| Model range | {} |",
        range_words(
            &model,
            match family {
                Family::Gravity => "g/cm³",
                Family::Magnetic => "SI",
            }
        )
    );
    if let Some(c) = inv.anomaly_centroid_m {
        let _ = writeln!(
            md,
            "| Anomaly centroid | x {} m, y {} m, z {} m ({} m below the mesh top) |",
            fmt(c[0]),
            fmt(c[1]),
            fmt(c[2]),
            fmt(inv.mesh.top_m() - c[2])
        );
    }
    if let (Some(core), Some(total)) = (inv.excess_mass_kg, inv.excess_mass_total_kg) {
        let _ = writeln!(
            md,
            "| Excess mass | {} kg in the core cells ({} kg with the padding) |",
            fmt(core),
            fmt(total)
        );
    }
    md
}

/// The table of the exact solves of the β search.
fn solves_table(inv: &crate::methods::gravmag::inversion::GravMagInversion) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "\n**Exact solves** (each one is the exact minimiser for its β)\n"
    );
    let _ = writeln!(
        md,
        "| Solve | β | χ² before bounds | χ² | φ_m | Cells at a bound | Seconds |\n|---|---|---|---|---|---|---|"
    );
    for s in &inv.iteration_records {
        let _ = writeln!(
            md,
            "| {} | {:.4e} | {} | {} | {} | {} | {} |",
            s.iteration,
            s.lambda,
            s.chi2_unbounded.map_or_else(|| "–".to_string(), fmt),
            fmt(s.chi2),
            fmt(s.phi_m),
            s.bound_hits
                .map_or_else(|| "–".to_string(), |n| n.to_string()),
            fmt(s.seconds)
        );
    }
    md
}

pub(super) fn verdict_report(v: &GravMagVerdict, res: &GravMagResults) -> String {
    let q = &v.evaluation.quality;
    let inv = &res.result.inversion;
    let mut md = String::new();
    let _ = writeln!(md, "| Quality | |\n|---|---|");
    let _ = writeln!(
        md,
        "| Score | {:.0}/100 (pass mark {:.0}): {} |",
        q.score,
        q.threshold,
        if q.passed { "passes" } else { "does not pass" }
    );
    if let Some(b) = q.band {
        let _ = writeln!(md, "| Fit | χ² {}: {} |", fmt(v.chi2), b.word());
    }
    let _ = writeln!(
        md,
        "| β search | {:?} after {} exact solve(s) |",
        v.beta_outcome, inv.iterations
    );
    let _ = writeln!(
        md,
        "| Cells at a bound | {} of {} |",
        v.bound_hits, v.n_cells
    );
    let _ = writeln!(
        md,
        "\n| Component | Weight | Score | Basis |\n|---|---|---|---|"
    );
    for c in &q.components {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            c.name,
            fmt(c.weight),
            c.score
                .map_or("not scored".to_string(), |s| format!("{s:.0}")),
            cell(&c.note)
        );
    }
    let kept = inv.iteration_records.last();
    if let Some(k) = kept {
        let _ = writeln!(
            md,
            "\nModel kept: solve {} (β {:.4e}, χ² {}) — {}",
            k.iteration,
            k.lambda,
            fmt(k.chi2),
            match v.beta_outcome {
                BetaOutcome::Converged =>
                    "the β search reached the target band; each solve is exact for its β, so no other model would fit as well with less structure.",
                BetaOutcome::Fixed => "β was given in the settings, not searched.",
                BetaOutcome::DataWithinNoise =>
                    "even the zero model fits the data within their errors: there is no anomaly the data require.",
                BetaOutcome::NotConverged =>
                    "the search used every solve allowed without reaching the target band; this is the closest model.",
            }
        );
    }
    if !v.evaluation.failed_checks.is_empty() {
        md.push_str("\n**Why it does not pass**\n\n");
        for f in &v.evaluation.failed_checks {
            let _ = writeln!(md, "- {}", cell(f));
        }
    }
    md.push_str("\n**Warnings**\n\n");
    for w in &v.evaluation.warnings {
        let _ = writeln!(md, "- {w}");
    }
    if !v.evaluation.warnings.iter().any(|w| w == DEPTH_WARNING) {
        let _ = writeln!(md, "- {DEPTH_WARNING}");
    }
    md
}

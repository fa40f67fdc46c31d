//! The GPR report text: the line as read and what processing did to it.

#[allow(unused_imports)]
use super::*;

pub(super) fn kind_words(kind: SurveyKind) -> &'static str {
    match kind {
        SurveyKind::CommonOffset => "common-offset profile",
        SurveyKind::Cmp => "CMP gather",
        SurveyKind::Warr => "WARR gather",
        SurveyKind::Unknown => "line of unknown acquisition",
    }
}

/// The report section of a line as read.
pub fn data_report(line: &GprLine) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "| Field | Value |\n|---|---|");
    let mut row = |k: &str, v: String| {
        if !v.is_empty() {
            let _ = writeln!(md, "| {k} | {} |", escape(&v));
        }
    };
    row("File", format!("`{}`", file_name(&line.file)));
    row(
        "Format",
        format!(
            "{}{}",
            line.format.label(),
            if line.format_guessed {
                " (recognised by a weak signature)"
            } else {
                ""
            }
        ),
    );
    row(
        "Traces × samples",
        format!("{} × {}", line.n_traces, line.n_samples),
    );
    if let (Some(a), Some(b)) = (line.positions_m.first(), line.positions_m.last()) {
        row(
            "Positions",
            if line.positions_guessed {
                "trace numbers (no distance calibration in the file)".to_string()
            } else {
                format!(
                    "{} to {} m, {} m between traces",
                    short(*a),
                    short(*b),
                    short((b - a) / (line.n_traces.max(2) - 1) as f64)
                )
            },
        );
    }
    row(
        "Time window",
        format!(
            "{} ns, sampled every {} ns",
            short(line.time_window_ns),
            short(line.sample_interval_ns)
        ),
    );
    row(
        "Antenna",
        match (&line.antenna, line.antenna_frequency_mhz) {
            (Some(a), Some(f)) => format!("{a} ({} MHz nominal)", short(f)),
            (Some(a), None) => format!("{a} (frequency not recognised)"),
            (None, Some(f)) => format!("{} MHz nominal", short(f)),
            (None, None) => String::new(),
        },
    );
    row(
        "Antenna separation",
        line.antenna_separation_m
            .map(|s| format!("{} m", short(s)))
            .unwrap_or_default(),
    );
    row(
        "Header εr",
        line.header_permittivity
            .map(|e| format!("{e} (the operator's instrument setting, not a measurement)"))
            .unwrap_or_default(),
    );
    row(
        "Acquisition",
        format!(
            "{}{}",
            kind_words(line.survey_kind),
            if line.survey_kind_guessed {
                " (assumed: the file does not say)"
            } else {
                ""
            }
        ),
    );
    row("Survey date", survey_date(line).unwrap_or_default());
    row(
        "User marks",
        if line.marks.is_empty() {
            String::new()
        } else {
            line.marks.len().to_string()
        },
    );
    if !line.notes.is_empty() {
        let _ = writeln!(md, "\nWhat the reader noted:\n");
        for n in &line.notes {
            let _ = writeln!(md, "- {n}");
        }
    }
    md
}

/// The report section of a processed line: velocity and its origin, the recipe table, what
/// was left out and why, and the velocity analysis of a gather.
pub fn results_report(r: &GprProcessed, files: &[PathBuf]) -> String {
    let p = &r.processed;
    let mut md = String::new();
    let axis = p.vertical_axis();
    let _ = writeln!(md, "| Field | Value |\n|---|---|");
    let _ = writeln!(md, "| Line | `{}` |", escape(&file_name(&r.source_file)));
    let _ = writeln!(md, "| Velocity | {} |", escape(&r.velocity_sentence));
    if let (Some(a), Some(b)) = (axis.first(), axis.last()) {
        let what = match p.domain {
            Domain::TwoWayTime => "two-way time",
            Domain::Depth => "depth below the antenna",
            Domain::Elevation => "elevation",
        };
        let _ = writeln!(
            md,
            "| Vertical axis | {what}, {} to {} {} in rows of {} {} |",
            short(*a),
            short(*b),
            p.vertical_unit,
            short(p.vertical_step),
            p.vertical_unit
        );
    }
    if let Some(why) = &p.why_two_way_time {
        let _ = writeln!(md, "| Why two-way time | {} |", escape(why));
    }
    let _ = writeln!(md, "| Traces × rows | {} × {} |", p.n_traces, p.n_samples);
    let _ = writeln!(md, "| Evaluation | {} |", escape(&r.evaluation.sentence()));
    for c in &r.evaluation.components {
        let _ = writeln!(
            md,
            "| {} | {}: {} |",
            c.name.replace('_', " "),
            c.score
                .map_or("not scored".to_string(), |s| format!("{s:.0}/100")),
            escape(&c.note)
        );
    }
    let _ = writeln!(
        md,
        "\nProcessing recipe (in order; `recipe.json` holds it for reprocessing):\n"
    );
    let _ = writeln!(
        md,
        "| # | Step | Applied | Chosen by | Parameters | What it did |\n|---|---|---|---|---|---|"
    );
    for (i, s) in p.recipe.steps.iter().enumerate() {
        let params = if s.parameters.is_null() {
            String::new()
        } else {
            format!("`{}`", compact(&s.parameters))
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} |",
            i + 1,
            s.step.replace('_', " "),
            if s.applied { "yes" } else { "no" },
            s.chosen_by,
            escape(&params),
            escape(&s.detail)
        );
    }
    if !r.left_out.is_empty() {
        let _ = writeln!(md, "\nLeft out, and why:\n");
        for l in &r.left_out {
            let _ = writeln!(md, "- **{}**: {}", l.step, l.why);
        }
    }
    if let Some(a) = &r.velocity_analysis {
        let _ = writeln!(md, "\nVelocity analysis (hyperbolic semblance):\n");
        match &a.pick {
            Some(pk) => {
                let _ = writeln!(
                    md,
                    "| RMS velocity (m/ns) | t0 (ns) | Semblance | Reflector depth (m) |\n|---|---|---|---|\n| {:.4} | {:.1} | {:.2} | {:.2} |",
                    pk.velocity_m_per_ns, pk.t0_ns, pk.semblance, pk.depth_m
                );
            }
            None => {
                let _ = writeln!(md, "No coherent hyperbola was found.");
            }
        }
        for n in &a.notes {
            let _ = writeln!(md, "- {n}");
        }
    }
    if !files.is_empty() {
        let _ = writeln!(md, "\nFiles:\n");
        for f in files {
            let _ = writeln!(md, "- `{}`", file_name(f));
        }
    }
    md
}

pub(super) fn line_sentence(line: &GprLine) -> String {
    let name = file_name(&line.file);
    let dt = line.sample_interval_ns;
    let t = line.time_ns();
    let (t0, t1) = (
        t.first().copied().unwrap_or(0.0),
        t.last().copied().unwrap_or(0.0),
    );
    let pos = match (line.positions_m.first(), line.positions_m.last()) {
        (Some(a), Some(b)) if !line.positions_guessed => format!(
            " over {}–{} m ({} m spacing)",
            short(*a),
            short(*b),
            short((b - a) / (line.n_traces.max(2) - 1) as f64)
        ),
        _ => " (positions are trace numbers: no distance calibration)".to_string(),
    };
    let mut s = format!(
        "{name} ({}): {} traces × {} samples{pos}, {}–{} ns two-way time ({} ns sampling)",
        line.format.label(),
        line.n_traces,
        line.n_samples,
        short(t0),
        short(t1),
        short(dt)
    );
    if let Some(f) = line.antenna_frequency_mhz {
        let _ = write!(s, "; {} MHz antenna", short(f));
    }
    if let Some(e) = line.header_permittivity {
        let _ = write!(s, "; header εr {e} (an instrument setting)");
    }
    if !line.marks.is_empty() {
        let _ = write!(s, "; {} user mark(s)", line.marks.len());
    }
    let _ = write!(
        s,
        "; {}{}",
        kind_words(line.survey_kind),
        if line.survey_kind_guessed {
            " (assumed)"
        } else {
            ""
        }
    );
    s
}

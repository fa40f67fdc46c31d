//! The only way to read and process a GPR line: the catalog's tools and the GPR panel both
//! call these functions, with the same settings (the panel's recipe layered over the
//! project's `gpr_params`).

#[allow(unused_imports)]
use super::*;

/// Read the radar line at `path` (any supported format).
pub fn read(path: &Path) -> Result<GprLine, ReadError> {
    gpr::read_line(path)
}

pub(super) fn is_gather(line: &GprLine) -> bool {
    matches!(line.survey_kind, SurveyKind::Cmp | SurveyKind::Warr)
}

/// The survey date a header states, year first (`yyyy-mm-dd`); dates written day- or
/// month-first are not read (they are ambiguous).
pub fn survey_date(line: &GprLine) -> Option<String> {
    ["created", "date"].iter().find_map(|k| {
        line.header
            .get(*k)
            .and_then(Value::as_str)
            .and_then(year_first_date)
            .map(|(y, m, d)| format!("{y:04}-{m:02}-{d:02}"))
    })
}

/// Run the chain on `line` with the velocity rule of the module docs. Progress goes to
/// `progress`; `cancel` is checked between the stages (analysis, processing).
pub fn process(
    line: &GprLine,
    params: &ProcessingParams,
    user: &UserVelocity,
    topography: Option<&Topography>,
    progress: &mut dyn FnMut(f64, &str),
    cancel: &AtomicBool,
) -> Result<GprProcessed, String> {
    let stopped = || "stopped by the user before the line was processed".to_string();
    let mut notes = Vec::new();
    let user_source = match (user.velocity_m_per_ns, user.relative_permittivity) {
        (Some(v), e) => {
            if let Some(e) = e
                && e >= 1.0
                && (velocity_from_permittivity(e) / v - 1.0).abs() > 0.01
            {
                notes.push(format!(
                    "both {VELOCITY_KEY} = {v} m/ns and {PERMITTIVITY_KEY} = {e} (c/√εr = {:.4} m/ns) are set and disagree; the velocity was used",
                    velocity_from_permittivity(e)
                ));
            }
            Some((
                VelocitySource::Request {
                    velocity_m_per_ns: v,
                },
                VelocityOrigin::UserVelocity,
            ))
        }
        (None, Some(e)) => Some((
            VelocitySource::UserPermittivity {
                relative_permittivity: e,
            },
            VelocityOrigin::UserPermittivity,
        )),
        (None, None) => None,
    };
    if cancel.load(Ordering::Relaxed) {
        return Err(stopped());
    }
    let name = file_name(&line.file);
    if is_gather(line) {
        return process_gather(line, params, user_source, notes, progress, cancel);
    }
    let (source, origin) = match user_source {
        Some((s, o)) => (Some(s), o),
        None => match line.header_velocity_source() {
            Some(s) => (Some(s), VelocityOrigin::HeaderPermittivity),
            None => (None, VelocityOrigin::None),
        },
    };
    progress(0.2, "processing the line");
    let processed = process_line(line, params, source.as_ref(), topography)
        .map_err(|e| format!("{name}: {e}"))?;
    let velocity_sentence = match (&processed.velocity, origin) {
        (Some(v), VelocityOrigin::UserVelocity) => format!(
            "{:.4} m/ns from the project setting {VELOCITY_KEY} (a user value)",
            v.velocity_m_per_ns
        ),
        (Some(v), VelocityOrigin::UserPermittivity) => format!(
            "{:.4} m/ns = c/√εr from the project setting {PERMITTIVITY_KEY} = {} (a user value)",
            v.velocity_m_per_ns,
            user.relative_permittivity.unwrap_or(f64::NAN)
        ),
        (Some(v), VelocityOrigin::HeaderPermittivity) => {
            let s = format!(
                "{:.4} m/ns = c/√εr from εr = {} in the file header — the value the operator entered in the instrument, not a measurement; set {VELOCITY_KEY} to give a measured velocity",
                v.velocity_m_per_ns,
                line.header_permittivity.unwrap_or(f64::NAN)
            );
            notes.push(format!("{name}: depths use {s}"));
            s
        }
        _ => processed.why_two_way_time.clone().unwrap_or_else(|| {
            "no velocity was given, so the line stays in two-way time".to_string()
        }),
    };
    progress(1.0, "processed");
    let evaluation = evaluate_line(
        processed.velocity.as_ref().map(|v| &v.source),
        line.data.view(),
        line.header_samples,
        false,
    );
    Ok(GprProcessed {
        source_file: line.file.clone(),
        survey_kind: line.survey_kind,
        left_out: left_out(&processed),
        evaluation,
        processed,
        velocity_origin: origin,
        velocity_sentence,
        velocity_analysis: None,
        notes,
    })
}

/// A CMP/WARR gather: analysed for velocity by semblance, processed in two-way time without
/// migration (a gather is not an image of the ground).
pub(super) fn process_gather(
    line: &GprLine,
    params: &ProcessingParams,
    user_source: Option<(VelocitySource, VelocityOrigin)>,
    mut notes: Vec<String>,
    progress: &mut dyn FnMut(f64, &str),
    cancel: &AtomicBool,
) -> Result<GprProcessed, String> {
    let name = file_name(&line.file);
    let kind = kind_words(line.survey_kind);
    progress(0.1, "semblance velocity analysis of the gather");
    let analysis = analyse_gather(line, &GatherAnalysisParams::default())
        .map_err(|e| format!("{name}: {e}"))?;
    if cancel.load(Ordering::Relaxed) {
        return Err("stopped by the user after the velocity analysis".to_string());
    }
    progress(0.6, "processing the gather in two-way time");
    let gather_params = ProcessingParams {
        migrate: false,
        ..params.clone()
    };
    let mut processed =
        process_line(line, &gather_params, None, None).map_err(|e| format!("{name}: {e}"))?;
    processed.why_two_way_time = Some(format!(
        "{name} is a {kind}: its offsets change from trace to trace, so it is analysed for velocity, not migrated or converted to depth"
    ));
    let (origin, sentence) = match &analysis.pick {
        Some(p) => {
            if let Some((VelocitySource::Request { velocity_m_per_ns }, _)) = &user_source
                && (p.velocity_m_per_ns / velocity_m_per_ns - 1.0).abs() > 0.05
            {
                notes.push(format!(
                    "{name}: the gather's semblance velocity {:.4} m/ns differs from the project's {velocity_m_per_ns} m/ns by more than 5 %",
                    p.velocity_m_per_ns
                ));
            }
            (
                VelocityOrigin::Semblance,
                format!(
                    "{:.4} m/ns from hyperbolic semblance of this {kind} (semblance {:.2} at t0 = {:.1} ns, a reflector at {:.2} m): an RMS velocity above that reflector",
                    p.velocity_m_per_ns, p.semblance, p.t0_ns, p.depth_m
                ),
            )
        }
        None => (
            VelocityOrigin::None,
            format!(
                "the semblance analysis of this {kind} found no coherent hyperbola (an answer, not an error), so no velocity was measured"
            ),
        ),
    };
    notes.extend(analysis.notes.iter().map(|n| format!("{name}: {n}")));
    progress(1.0, "processed");
    let measured = analysis.pick.clone().map(VelocitySource::Semblance);
    let evaluation = evaluate_line(
        measured.as_ref(),
        line.data.view(),
        line.header_samples,
        true,
    );
    Ok(GprProcessed {
        source_file: line.file.clone(),
        survey_kind: line.survey_kind,
        left_out: left_out(&processed),
        evaluation,
        processed,
        velocity_origin: origin,
        velocity_sentence: sentence,
        velocity_analysis: Some(analysis),
        notes,
    })
}

pub(super) fn left_out(p: &ProcessedLine) -> Vec<LeftOut> {
    p.recipe
        .steps
        .iter()
        .filter(|s| !s.applied)
        .map(|s| LeftOut {
            step: s.step.replace('_', " "),
            why: s.detail.clone(),
        })
        .collect()
}

/// The value at the `q` quantile of |a| over the finite samples (`1.0` when there are none
/// or it is zero).
pub(super) fn abs_quantile(values: impl Iterator<Item = f64>, q: f64) -> f64 {
    let mut m: Vec<f64> = values.filter(|v| v.is_finite()).map(f64::abs).collect();
    if m.is_empty() {
        return 1.0;
    }
    let k = ((m.len() - 1) as f64 * q.clamp(0.0, 1.0)) as usize;
    let (_, v, _) = m.select_nth_unstable_by(k, f64::total_cmp);
    if *v > 0.0 { *v } else { 1.0 }
}

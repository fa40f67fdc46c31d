//! The GPR tools: `load_gpr_line` reads the radar line named by the `gpr_file` input and
//! draws it as recorded; `process_gpr_line` runs the processing chain of
//! [`crate::methods::gpr::process`] with the settings `gpr_params`, and writes the processed
//! line (`.npz`), its radargram (PNG) and the recipe (JSON).
//!
//! **A depth needs a velocity somebody gave.** In order: the project setting
//! `gpr_velocity_m_per_ns` or `gpr_permittivity` (a user value), the εr in the file header
//! (the operator's instrument setting — said so, loudly), and for a CMP/WARR gather a
//! hyperbolic-semblance analysis of the gather itself. Without any, the line stays in
//! two-way time and the summary says why. These two keys are not adjustable settings
//! (`runtime::recovery::ADJUSTABLE` leaves them out): no recovery may choose a velocity.
//!
//! The studio's GPR panel calls [`read`] and [`process`] — the same functions the tools call.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::anyhow;
use ndarray::ArrayView2;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::common::{Held, figure_path, held, product_path};
use super::keys;
use crate::methods::gpr::process::{Domain, ProcessedLine, ProcessingParams, process_line};
use crate::methods::gpr::sidefiles::{Topography, read_topography};
use crate::methods::gpr::velocity::{
    GatherAnalysis, GatherAnalysisParams, VelocitySource, analyse_gather,
    velocity_from_permittivity,
};
use crate::methods::gpr::{self, GprLine, SurveyKind};
use crate::methods::io::{ReadError, year_first_date};
use crate::report::figures::{self, Axes, ColourScale, FigureError, Palette, Series};
use crate::runtime::context::compact;
use crate::runtime::{Outputs, Registry, RunContext, Tool};

/// The input role of the radar line.
pub const DATA_ROLE: &str = "gpr_file";
/// The optional input role of a topography table along the line (distance, elevation).
pub const TOPOGRAPHY_ROLE: &str = "gpr_topography_file";
/// The processing settings (`ProcessingParams`).
pub const PARAMS_KEY: &str = "gpr_params";
/// A radar velocity the user gives, m/ns.
pub const VELOCITY_KEY: &str = "gpr_velocity_m_per_ns";
/// A relative permittivity the user gives (v = c/√εr).
pub const PERMITTIVITY_KEY: &str = "gpr_permittivity";

/// The velocity the user gave in the project settings.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct UserVelocity {
    /// `gpr_velocity_m_per_ns`.
    pub velocity_m_per_ns: Option<f64>,
    /// `gpr_permittivity`.
    pub relative_permittivity: Option<f64>,
}

impl UserVelocity {
    /// Read `gpr_velocity_m_per_ns` and `gpr_permittivity`; a key that is present but not a
    /// number is an error that names it and what was found.
    pub fn from_config(config: &Map<String, Value>) -> Result<UserVelocity, String> {
        let number = |key: &str, unit: &str| -> Result<Option<f64>, String> {
            match config.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v.as_f64().map(Some).ok_or_else(|| {
                    format!("the setting {key} must be a number ({unit}); found {v}")
                }),
            }
        };
        Ok(UserVelocity {
            velocity_m_per_ns: number(VELOCITY_KEY, "m/ns")?,
            relative_permittivity: number(PERMITTIVITY_KEY, "a relative permittivity")?,
        })
    }
}

/// Where the velocity of a processed line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VelocityOrigin {
    /// The project setting `gpr_velocity_m_per_ns`.
    UserVelocity,
    /// The project setting `gpr_permittivity`.
    UserPermittivity,
    /// The εr in the file header (an instrument setting).
    HeaderPermittivity,
    /// Hyperbolic semblance of the gather itself.
    Semblance,
    /// No velocity: the line stays in two-way time.
    None,
}

/// A step the chain did not apply, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeftOut {
    /// The step.
    pub step: String,
    /// Why (the recipe's words).
    pub why: String,
}

/// One processed line as the run keeps it (`keys::GPR_RESULTS` holds `Held<GprProcessed>`).
#[derive(Debug, Clone, Serialize)]
pub struct GprProcessed {
    /// The radar file.
    pub source_file: PathBuf,
    /// The acquisition kind the reader gave.
    pub survey_kind: SurveyKind,
    /// The processed line with its axes and recipe.
    pub processed: ProcessedLine,
    /// Where the velocity came from.
    pub velocity_origin: VelocityOrigin,
    /// One sentence: the velocity and its origin, or why there is none.
    pub velocity_sentence: String,
    /// The semblance analysis, for a CMP/WARR gather.
    pub velocity_analysis: Option<GatherAnalysis>,
    /// Steps not applied, with the reason.
    pub left_out: Vec<LeftOut>,
    /// What the user should know (raised as run warnings).
    pub notes: Vec<String>,
}

/// Read the radar line at `path` (any supported format).
pub fn read(path: &Path) -> Result<GprLine, ReadError> {
    gpr::read_line(path)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn kind_words(kind: SurveyKind) -> &'static str {
    match kind {
        SurveyKind::CommonOffset => "common-offset profile",
        SurveyKind::Cmp => "CMP gather",
        SurveyKind::Warr => "WARR gather",
        SurveyKind::Unknown => "line of unknown acquisition",
    }
}

fn is_gather(line: &GprLine) -> bool {
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
    Ok(GprProcessed {
        source_file: line.file.clone(),
        survey_kind: line.survey_kind,
        left_out: left_out(&processed),
        processed,
        velocity_origin: origin,
        velocity_sentence,
        velocity_analysis: None,
        notes,
    })
}

/// A CMP/WARR gather: analysed for velocity by semblance, processed in two-way time without
/// migration (a gather is not an image of the ground).
fn process_gather(
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
    Ok(GprProcessed {
        source_file: line.file.clone(),
        survey_kind: line.survey_kind,
        left_out: left_out(&processed),
        processed,
        velocity_origin: origin,
        velocity_sentence: sentence,
        velocity_analysis: Some(analysis),
        notes,
    })
}

fn left_out(p: &ProcessedLine) -> Vec<LeftOut> {
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
fn abs_quantile(values: impl Iterator<Item = f64>, q: f64) -> f64 {
    let mut m: Vec<f64> = values.filter(|v| v.is_finite()).map(f64::abs).collect();
    if m.is_empty() {
        return 1.0;
    }
    let k = ((m.len() - 1) as f64 * q.clamp(0.0, 1.0)) as usize;
    let (_, v, _) = m.select_nth_unstable_by(k, f64::total_cmp);
    if *v > 0.0 { *v } else { 1.0 }
}

/// What the vertical axis of a radargram is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VerticalAxis {
    /// Two-way time, depth or elevation.
    pub domain: Domain,
    /// The coordinate of row 0 (ns or m).
    pub first: f64,
    /// The step between rows (positive; elevation decreases by it).
    pub step: f64,
}

impl VerticalAxis {
    /// The axis label with its unit.
    pub fn label(&self) -> &'static str {
        match self.domain {
            Domain::TwoWayTime => "Two-way time (ns)",
            Domain::Depth => "Depth (m)",
            Domain::Elevation => "Elevation (m)",
        }
    }
}

/// Draw a radargram (`data`: rows are the vertical axis, columns the traces) with
/// [`figures::image`]: grey scale symmetric about zero, clipped at the 99th percentile of
/// |amplitude| (stated on the colour bar); NaN samples are left blank. Returns the clip.
pub fn draw_radargram(
    path: &Path,
    title: &str,
    data: ArrayView2<f64>,
    positions_m: &[f64],
    positions_are_trace_numbers: bool,
    vertical: VerticalAxis,
    amplitude_label: &str,
) -> Result<f64, FigureError> {
    let (rows, cols) = data.dim();
    let clip = abs_quantile(data.iter().copied(), 0.99);
    let grid: Vec<Vec<f64>> = data.rows().into_iter().map(|r| r.to_vec()).collect();
    let x0 = positions_m.first().copied().unwrap_or(0.0);
    let x1 = positions_m.last().copied().unwrap_or(cols as f64);
    let dx = if cols > 1 {
        (x1 - x0) / (cols - 1) as f64
    } else {
        1.0
    };
    let h = vertical.step.abs().max(f64::MIN_POSITIVE);
    let span = (rows.max(1) - 1) as f64 * h;
    let (y0, y1, flip) = match vertical.domain {
        Domain::Elevation => (
            vertical.first - span - h / 2.0,
            vertical.first + h / 2.0,
            false,
        ),
        _ => (
            vertical.first - h / 2.0,
            vertical.first + span + h / 2.0,
            true,
        ),
    };
    let x_label = if positions_are_trace_numbers {
        "Trace number"
    } else {
        "Distance along the line (m)"
    };
    let mut axes = Axes::new(title, x_label, vertical.label());
    if flip {
        axes = axes.flipped();
    }
    let scale = ColourScale {
        min: -clip,
        max: clip,
        log: false,
        label: format!("{amplitude_label}, clipped at ±{}", short(clip)),
        palette: Palette::Greys,
    };
    let no_overlays: [Series; 0] = [];
    figures::image(
        path,
        &axes,
        &grid,
        (x0 - dx / 2.0, x1 + dx / 2.0, y0, y1),
        &scale,
        &no_overlays,
    )?;
    Ok(clip)
}

/// A number in at most four significant digits.
fn short(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
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

fn line_sentence(line: &GprLine) -> String {
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

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "line".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `load_gpr_line`.
fn load_gpr_line(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let path = ctx.input_path(DATA_ROLE).ok_or_else(|| {
        anyhow!(
            "no {DATA_ROLE} input: name the radar file (.dzt, .dt1, .rd3/.rd7, .sgy) in the project"
        )
    })?;
    ctx.progress(0.1, "reading the radar file");
    let line = read(&path).map_err(|e| anyhow!("{e}"))?;
    let fig = figure_path(ctx, &format!("gpr_{}_recorded", stem(&path)))?;
    let mut view = line.data.clone();
    let blank = line.header_samples.min(view.nrows());
    view.slice_mut(ndarray::s![..blank, ..]).fill(f64::NAN);
    ctx.progress(0.6, "drawing the radargram as recorded");
    let clip = draw_radargram(
        &fig,
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
            .figure(fig, &caption),
    ))
}

fn amplitude_label(p: &ProcessedLine) -> &'static str {
    let applied = |name: &str| p.recipe.steps.iter().any(|s| s.step == name && s.applied);
    if applied("agc_gain") {
        "Amplitude after AGC (dimensionless)"
    } else if applied("tpow_gain") {
        "Amplitude × t^p (counts·ns^p)"
    } else {
        "Amplitude (counts)"
    }
}

/// `process_gpr_line`.
fn process_gpr_line(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let line = held::<GprLine>(ctx, keys::GPR_DATA)
        .cloned()
        .ok_or_else(|| anyhow!("no GPR line has been read: run load_gpr_line first"))?;
    let params: ProcessingParams = ctx.params(PARAMS_KEY).map_err(|e| anyhow!("{e}"))?;
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
    let npz = product_path(ctx, &format!("gpr_{st}_processed.npz"))?;
    p.write_npz(&npz).map_err(|e| anyhow!("{e}"))?;
    let recipe = product_path(ctx, &format!("gpr_{st}_recipe.json"))?;
    p.write_recipe_json(&recipe).map_err(|e| anyhow!("{e}"))?;
    ctx.progress(0.95, "drawing the processed radargram");
    let fig = figure_path(ctx, &format!("gpr_{st}_processed"))?;
    let vertical = VerticalAxis {
        domain: p.domain,
        first: p.vertical_first,
        step: p.vertical_step,
    };
    let clip = draw_radargram(
        &fig,
        &format!("{} processed", file_name(&line.file)),
        p.data.view(),
        &p.positions_m,
        line.positions_guessed,
        vertical,
        amplitude_label(p),
    )
    .map_err(|e| anyhow!("{e}"))?;
    let axis = p.vertical_axis();
    let (a, b) = (
        axis.first().copied().unwrap_or(0.0),
        axis.last().copied().unwrap_or(0.0),
    );
    let caption = format!(
        "{} processed: {} down, {} across; {} clipped at ±{}. Velocity: {}",
        file_name(&line.file),
        vertical.label().to_lowercase(),
        if line.positions_guessed {
            "trace number"
        } else {
            "distance along the line (m)"
        },
        amplitude_label(p),
        short(clip),
        result.velocity_sentence
    );
    let mut out = Outputs::new().figure(fig, &caption);
    if let Some(a) = &result.velocity_analysis
        && let Some(f) = draw_semblance(ctx, &st, a)?
    {
        out = out.figure(f.0, &f.1);
    }
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
    if p.domain == Domain::TwoWayTime
        && result.velocity_analysis.is_none()
        && let Some(why) = &p.why_two_way_time
    {
        let _ = write!(
            summary,
            " Why two-way time: {why}; set {VELOCITY_KEY} or {PERMITTIVITY_KEY} to convert it to depth."
        );
    }
    let files = vec![npz.clone(), recipe.clone()];
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

/// The semblance panel of a gather as an image (velocity across, t0 down) with the pick
/// marked; `None` when the panel is empty.
fn draw_semblance(
    ctx: &RunContext,
    stem: &str,
    a: &GatherAnalysis,
) -> anyhow::Result<Option<(PathBuf, String)>> {
    let s = &a.panel;
    let (nt, nv) = s.semblance.dim();
    if nt < 2 || nv < 2 {
        return Ok(None);
    }
    let path = figure_path(ctx, &format!("gpr_{stem}_semblance"))?;
    let grid: Vec<Vec<f64>> = s.semblance.rows().into_iter().map(|r| r.to_vec()).collect();
    let v = &s.velocities_m_per_ns;
    let t = &s.t0_ns;
    let dv = (v[nv - 1] - v[0]) / (nv - 1) as f64;
    let dt = (t[nt - 1] - t[0]) / (nt - 1) as f64;
    let overlays: Vec<Series> = a
        .pick
        .iter()
        .map(|p| {
            Series::points("pick", vec![p.velocity_m_per_ns], vec![p.t0_ns]).colour((220, 20, 60))
        })
        .collect();
    figures::image(
        &path,
        &Axes::new(
            "Semblance of the gather",
            "Velocity (m/ns)",
            "Zero-offset two-way time t0 (ns)",
        )
        .flipped(),
        &grid,
        (
            v[0] - dv / 2.0,
            v[nv - 1] + dv / 2.0,
            t[0] - dt / 2.0,
            t[nt - 1] + dt / 2.0,
        ),
        &ColourScale {
            min: 0.0,
            max: 1.0,
            log: false,
            label: "Semblance (0–1)".into(),
            palette: Palette::Viridis,
        },
        &overlays,
    )
    .map_err(|e| anyhow!("{e}"))?;
    let caption = match &a.pick {
        Some(p) => format!(
            "Semblance of the gather: velocity (m/ns) across, zero-offset time t0 (ns) down, semblance 0–1; the pick {:.4} m/ns at {:.1} ns is marked",
            p.velocity_m_per_ns, p.t0_ns
        ),
        None => "Semblance of the gather: velocity (m/ns) across, zero-offset time t0 (ns) down, semblance 0–1; no coherent hyperbola was picked".to_string(),
    };
    Ok(Some((path, caption)))
}

/// Register the GPR tools, in dependency order.
pub fn register(reg: &mut Registry) {
    let _ = reg.register(
        Tool::new(
            "load_gpr_line",
            "Read the ground-penetrating radar (GPR) line named by the gpr_file input (GSSI DZT, pulseEKKO DT1+HD, MALA rd3/rd7+rad or SEG-Y): traces, samples, time window, antenna, the header's permittivity setting, marks, survey kind; draws the radargram as recorded.",
            load_gpr_line,
        )
        .produces(&[keys::GPR_DATA])
        .label("Read the GPR line")
        .module("gpr")
        .agent("GPR reader")
        .when(|ctx| ctx.has_input(DATA_ROLE)),
    );
    let _ = reg.register(
        Tool::new(
            "process_gpr_line",
            "Process the GPR line that was read: time zero, dewow, band-pass, optional background removal and gains, Stolt migration and time-to-depth, every step recorded in a recipe (settings: gpr_params). Depth needs a velocity somebody gave: the project setting gpr_velocity_m_per_ns or gpr_permittivity, else the header's permittivity (an instrument setting), else a semblance analysis when the line is a CMP/WARR gather; without any the line stays in two-way time. Writes the processed line (.npz), its radargram and the recipe JSON.",
            process_gpr_line,
        )
        .requires(&[keys::GPR_DATA])
        .produces(&[keys::GPR_RESULTS])
        .label("Process the GPR line")
        .module("gpr")
        .agent("GPR processing"),
    );
}

/// A JSON summary of a gpr data file, or `None` when it is not one.
pub fn read_summary(path: &std::path::Path) -> Option<Result<serde_json::Value, ReadError>> {
    crate::methods::gpr::read_summary(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::gpr::process::Recipe;
    use crate::runtime::step::DecidedBy;
    use crate::runtime::{StepStatus, invoke};

    fn registry() -> Registry {
        let mut reg = Registry::new();
        register(&mut reg);
        reg
    }

    /// A run over `file` (absolute) with `config`, writing into `out`.
    fn context(file: &Path, config: Value, out: &Path) -> RunContext {
        let mut inputs = Map::new();
        inputs.insert(DATA_ROLE.into(), Value::from(file.display().to_string()));
        let config = match config {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        RunContext::new("Process the radar line")
            .with_config(config)
            .with_inputs(&inputs, Path::new("/"))
            .with_output_dir(out)
    }

    fn run(ctx: &mut RunContext, tool: &str) -> StepStatus {
        invoke(ctx, &registry(), tool, "test", DecidedBy::Policy)
    }

    fn last(ctx: &RunContext) -> &crate::runtime::Step {
        ctx.steps.last().unwrap()
    }

    /// The real GSSI line (oracle gpr_readers.json: 512 × 1040, εr 6, 48 ns): the summary
    /// states those numbers, the product holds the line, the raw radargram is drawn.
    #[test]
    fn load_reads_the_real_dzt_and_draws_it_as_recorded() {
        let path = crate::require_data!("gpr/gprpy/GSSI_FILE____032.DZT");
        let out = tempfile::tempdir().unwrap();
        let mut ctx = context(&path, json!({}), out.path());
        assert_eq!(
            run(&mut ctx, "load_gpr_line"),
            StepStatus::Ok,
            "{:?}",
            last(&ctx)
        );
        let s = &last(&ctx).summary;
        assert!(s.contains("1040 traces × 512 samples"), "{s}");
        assert!(
            s.contains("0–47.91 ns two-way time (0.09375 ns sampling)"),
            "{s}"
        );
        assert!(s.contains("header εr 6 (an instrument setting)"), "{s}");
        assert!(s.contains("400 MHz antenna"), "{s}");
        let line = held::<GprLine>(&ctx, keys::GPR_DATA).unwrap();
        assert_eq!((line.n_samples, line.n_traces), (512, 1040));
        let numbers = ctx.product(keys::GPR_DATA).unwrap().key_numbers();
        assert_eq!(numbers["n_data"], json!(512 * 1040));
        assert_eq!(numbers["survey_dates"], json!(["2017-03-21"]));
        let fig = &last(&ctx).figures[0];
        assert!(fig.caption.contains("two-way time (ns"), "{}", fig.caption);
        let img = image::open(&fig.path).unwrap();
        assert!(img.width() > 500 && img.height() > 300);
        let md = ctx
            .product(keys::GPR_DATA)
            .unwrap()
            .report_markdown()
            .unwrap();
        assert!(
            md.contains("| Header εr | 6 (the operator's instrument setting"),
            "{md}"
        );
        assert!(!md.contains("N/A"));
    }

    /// Without a user velocity the DZT header's εr = 6 is used and said to be an instrument
    /// setting: v = c/√6 = 0.12239 m/ns, depth rows v·dt/2 (exact). The .npz, recipe JSON and
    /// radargram are written and read back; the report has the recipe table.
    #[test]
    fn process_uses_the_header_permittivity_and_says_so() {
        let path = crate::require_data!("gpr/gprpy/GSSI_FILE____032.DZT");
        let out = tempfile::tempdir().unwrap();
        let mut ctx = context(&path, json!({}), out.path());
        run(&mut ctx, "load_gpr_line");
        assert_eq!(
            run(&mut ctx, "process_gpr_line"),
            StepStatus::Ok,
            "{:?}",
            last(&ctx)
        );
        let s = last(&ctx).summary.clone();
        assert!(s.contains("from εr = 6 in the file header"), "{s}");
        assert!(s.contains("not a measurement"), "{s}");
        assert!(s.contains("the line is in depth"), "{s}");
        assert!(
            ctx.warnings.iter().any(|w| w.contains("instrument")),
            "{:?}",
            ctx.warnings
        );
        let r = held::<GprProcessed>(&ctx, keys::GPR_RESULTS).unwrap();
        assert_eq!(r.velocity_origin, VelocityOrigin::HeaderPermittivity);
        let v = 0.299_792_458 / 6f64.sqrt();
        let n = ctx.product(keys::GPR_RESULTS).unwrap().key_numbers();
        assert!((n["velocity_m_per_ns"].as_f64().unwrap() - v).abs() < 1e-15);
        assert!((r.processed.vertical_step - v * 0.09375 / 2.0).abs() < 1e-15);
        let files = ctx.product(keys::GPR_RESULTS).unwrap().files();
        assert_eq!(files.len(), 2);
        let npz = std::fs::read(&files[0]).unwrap();
        assert!(npz.windows(11).any(|w| w == b"depth_m.npy"));
        let recipe: Recipe =
            serde_json::from_str(&std::fs::read_to_string(&files[1]).unwrap()).unwrap();
        assert_eq!(recipe.steps.len(), 10);
        assert_eq!(recipe, r.processed.recipe);
        assert!(image::open(&last(&ctx).figures[0].path).is_ok());
        let md = ctx
            .product(keys::GPR_RESULTS)
            .unwrap()
            .report_markdown()
            .unwrap();
        assert!(md.contains("| # | Step | Applied | Chosen by | Parameters | What it did |"));
        assert!(md.contains("Left out, and why"), "{md}");
        assert!(md.contains("background removal"), "{md}");
    }

    /// A user velocity wins over the header; one outside 0.01–0.3 m/ns is refused with the
    /// reason; an unknown processing key and a non-numeric velocity are errors naming them.
    #[test]
    fn user_settings_are_used_or_refused_with_the_reason() {
        let path = crate::require_data!("gpr/gprpy/GSSI_FILE____032.DZT");
        let out = tempfile::tempdir().unwrap();
        let mut ctx = context(&path, json!({ VELOCITY_KEY: 0.1 }), out.path());
        run(&mut ctx, "load_gpr_line");
        assert_eq!(run(&mut ctx, "process_gpr_line"), StepStatus::Ok);
        let s = &last(&ctx).summary;
        assert!(
            s.contains("0.1000 m/ns from the project setting gpr_velocity_m_per_ns (a user value)"),
            "{s}"
        );
        let r = held::<GprProcessed>(&ctx, keys::GPR_RESULTS).unwrap();
        assert!((r.processed.vertical_step - 0.1 * 0.09375 / 2.0).abs() < 1e-15);

        for (config, expect) in [
            (json!({ VELOCITY_KEY: 0.5 }), "speed of light"),
            (
                json!({ VELOCITY_KEY: "fast" }),
                "gpr_velocity_m_per_ns must be a number",
            ),
            (json!({ PERMITTIVITY_KEY: 0.5 }), "below 1"),
            (json!({ PARAMS_KEY: { "dewow": 3 } }), "expected one of"),
        ] {
            let mut ctx = context(&path, config.clone(), out.path());
            run(&mut ctx, "load_gpr_line");
            assert_eq!(
                run(&mut ctx, "process_gpr_line"),
                StepStatus::Failed,
                "{config}"
            );
            let e = &last(&ctx).error;
            assert!(e.contains(expect), "{config}: {e}");
        }
        // gpr_permittivity = 9 → c/3.
        let mut ctx = context(&path, json!({ PERMITTIVITY_KEY: 9.0 }), out.path());
        run(&mut ctx, "load_gpr_line");
        run(&mut ctx, "process_gpr_line");
        let r = held::<GprProcessed>(&ctx, keys::GPR_RESULTS).unwrap();
        assert_eq!(r.velocity_origin, VelocityOrigin::UserPermittivity);
        let v = r.processed.velocity.as_ref().unwrap().velocity_m_per_ns;
        assert!((v - 0.299_792_458 / 3.0).abs() < 1e-15);
    }

    /// The pulseEKKO line has no permittivity in its header: without a user velocity it stays
    /// in two-way time and the summary says why and what to set.
    #[test]
    fn without_a_velocity_the_line_stays_in_time_and_says_why() {
        let path = crate::require_data!("gpr/gprpy/SnS_ComOffs_XLINE00.DT1");
        let out = tempfile::tempdir().unwrap();
        let mut ctx = context(&path, json!({}), out.path());
        assert_eq!(run(&mut ctx, "load_gpr_line"), StepStatus::Ok);
        assert!(last(&ctx).summary.contains("531 traces × 1500 samples"));
        assert_eq!(
            run(&mut ctx, "process_gpr_line"),
            StepStatus::Ok,
            "{:?}",
            last(&ctx)
        );
        let s = &last(&ctx).summary;
        assert!(s.contains("stays in two-way time"), "{s}");
        assert!(s.contains("Why two-way time: no velocity was given"), "{s}");
        assert!(
            s.contains("set gpr_velocity_m_per_ns or gpr_permittivity"),
            "{s}"
        );
        let r = held::<GprProcessed>(&ctx, keys::GPR_RESULTS).unwrap();
        assert_eq!(r.velocity_origin, VelocityOrigin::None);
        assert!(
            r.left_out
                .iter()
                .any(|l| l.step == "migration" && l.why.contains("needs a velocity"))
        );
        let f = &last(&ctx).figures[0];
        assert!(f.caption.contains("two-way time (ns)"), "{}", f.caption);
    }

    /// The WARR gather is analysed by hyperbolic semblance (0.06–0.16 m/ns, the bounds of the
    /// method test on this file), kept in two-way time, and its semblance panel drawn.
    #[test]
    fn a_warr_gather_is_analysed_for_velocity() {
        let path = crate::require_data!("gpr/gprpy/SnS_WARR_XLINE00.DT1");
        let out = tempfile::tempdir().unwrap();
        let mut ctx = context(&path, json!({}), out.path());
        run(&mut ctx, "load_gpr_line");
        assert!(
            last(&ctx).summary.contains("WARR gather (assumed)"),
            "{}",
            last(&ctx).summary
        );
        assert_eq!(
            run(&mut ctx, "process_gpr_line"),
            StepStatus::Ok,
            "{:?}",
            last(&ctx)
        );
        let r = held::<GprProcessed>(&ctx, keys::GPR_RESULTS).unwrap();
        assert_eq!(r.velocity_origin, VelocityOrigin::Semblance);
        let v =
            ctx.product(keys::GPR_RESULTS).unwrap().key_numbers()["semblance_velocity_m_per_ns"]
                .as_f64()
                .unwrap();
        assert!((0.06..=0.16).contains(&v), "{v}");
        assert_eq!(r.processed.domain, Domain::TwoWayTime);
        assert!(
            last(&ctx).summary.contains("hyperbolic semblance"),
            "{}",
            last(&ctx).summary
        );
        assert_eq!(last(&ctx).figures.len(), 2);
        assert!(last(&ctx).figures[1].caption.contains("Semblance"));
    }

    /// The whole run over the example project's radar line alone: the GPR steps come in
    /// dependency order, end ok, and the report carries the recipe; with the project's
    /// velocity and a direct-wave-peak time zero the water table is 4 m deep within one row.
    #[test]
    fn a_run_over_the_example_line_reports_the_recipe() {
        let dir = tempfile::tempdir().unwrap();
        let truth = crate::example::Truth::default();
        let roles = crate::example::gpr::write(&truth, dir.path()).unwrap();
        let mut inputs = Map::new();
        for (role, p) in roles {
            inputs.insert(role, Value::from(p.display().to_string()));
        }
        let config = json!({
            VELOCITY_KEY: truth.gpr_velocity_m_per_ns,
            PARAMS_KEY: { "time_zero": { "set": { "direct_wave_peak": {} } } }
        });
        let out = dir.path().join("run");
        let mut ctx = RunContext::new("Where is the water table?")
            .with_config(config.as_object().unwrap().clone())
            .with_inputs(&inputs, dir.path())
            .with_output_dir(&out);
        let reg = crate::catalog::registry();
        crate::runtime::controller::drive(
            &mut ctx,
            &reg,
            None,
            &crate::runtime::controller::RunOptions::default(),
        );
        let tools: Vec<(&str, StepStatus)> = ctx
            .steps
            .iter()
            .map(|s| (s.tool.as_str(), s.status))
            .collect();
        let gpr: Vec<&(&str, StepStatus)> =
            tools.iter().filter(|(t, _)| t.contains("gpr")).collect();
        assert_eq!(
            gpr,
            vec![
                &("load_gpr_line", StepStatus::Ok),
                &("process_gpr_line", StepStatus::Ok)
            ],
            "{tools:?}"
        );
        assert!(
            tools
                .last()
                .is_some_and(|(t, s)| t.contains("report") && *s == StepStatus::Ok),
            "{tools:?}"
        );
        let r = held::<GprProcessed>(&ctx, keys::GPR_RESULTS).unwrap();
        let p = &r.processed;
        assert_eq!(p.domain, Domain::Depth);
        // The water table: median over traces away from the diffractor of the strongest
        // sample between 3 and 5 m.
        let axis = p.vertical_axis();
        let mut picks: Vec<f64> = (0..p.n_traces)
            .filter(|j| (p.positions_m[*j] - 18.0).abs() > 6.0)
            .map(|j| {
                let col = p.data.column(j);
                let i = (0..p.n_samples)
                    .filter(|i| (3.0..5.0).contains(&axis[*i]))
                    .max_by(|a, b| col[*a].abs().total_cmp(&col[*b].abs()))
                    .unwrap();
                axis[i]
            })
            .collect();
        picks.sort_by(f64::total_cmp);
        let d = picks[picks.len() / 2];
        assert!((d - 4.0).abs() <= p.vertical_step, "{d}");
        let report =
            std::fs::read_to_string(ctx.product(keys::REPORT_FILES).unwrap().files()[0].clone())
                .unwrap();
        assert!(report.contains("Processing recipe"), "{report}");
        assert!(report.contains("project setting gpr_velocity_m_per_ns"));
        assert!(
            report.contains("2024-05-01"),
            "the survey date is collected"
        );
    }
}

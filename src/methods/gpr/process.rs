//! The processing chain and its recipe.
//!
//! Order: blank scan-header samples → time zero → dewow → band-pass → background removal →
//! t^p gain → Stolt migration (needs a velocity) → AGC → time to depth (needs a velocity) →
//! topographic correction (needs a velocity and a topography). Every step is one of the
//! functions in this module's siblings; each records its parameters, who chose them (the
//! caller, a documented default, or the file header) and what it found into the
//! [`Recipe`], so the line can be reprocessed identically and the report can say what was
//! done.
//!
//! **A depth needs a velocity somebody gave** ([`VelocitySource`]); without one the line
//! stays in two-way time, migration and topographic correction are skipped, and
//! [`ProcessedLine::why_two_way_time`] says so. A velocity outside 0.01–0.3 m/ns is refused
//! with an error that gives the reason.

use std::path::Path;
use std::time::Instant;

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::bandpass::{BandpassParams, bandpass};
use super::depth::{time_to_depth_m, topographic_correction};
use super::filters::{BackgroundWindow, agc_gain, dewow, remove_background, tpow_gain};
use super::line::{GprError, GprFormat, GprLine, finite_range};
use super::migration::stolt_migration;
use super::npy::{npy_bytes, npy_bytes_1d, write_file, zip_store};
use super::sidefiles::Topography;
use super::timezero::{TimeZeroParams, apply_time_zero};
use super::velocity::{ResolvedVelocity, VelocitySource, resolve_velocity};

/// A step's setting: the documented default, off, or a value the caller set.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step<T> {
    /// The documented default (recorded in the recipe as `default`).
    #[default]
    Default,
    /// Do not run this step.
    Off,
    /// Run with this value (recorded as `user`).
    Set(T),
}

/// How time zero is placed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeZeroMethod {
    /// Pick the first break ([`super::timezero`]).
    FirstBreak(TimeZeroParams),
    /// The time zero the header states (pulseEKKO `TIMEZERO AT POINT`).
    Header,
    /// A fractional sample index given by the caller.
    Sample(f64),
}

/// Parameters of [`process_line`]: numbers and switches only (the runtime may adjust them
/// as `gpr_params`). The velocity and the topography are not here on purpose: they are
/// arguments of [`process_line`], because a depth needs a velocity somebody gave, not one a
/// settings change chose. Every field defaults to `Default` (see each field for the rule);
/// unknown keys are refused when read from JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProcessingParams {
    /// Default: the header's time zero when it states one, else the first break
    /// (threshold 5 % of each trace's peak, air-wave correction when the separation is known).
    pub time_zero: Step<TimeZeroMethod>,
    /// Default: one period of the nominal antenna frequency in samples (at least 3); 5 % of
    /// the trace when the frequency is unknown.
    pub dewow_window_samples: Step<usize>,
    /// Default: Butterworth order 1 from half to twice the nominal antenna frequency (the
    /// upper corner held below 90 % of Nyquist); off when the frequency is unknown.
    pub bandpass: Step<BandpassParams>,
    /// Default: subtract the whole line's mean trace (removes direct waves and ringing, and
    /// any perfectly flat reflector; set `off` to keep a flat water table untouched).
    pub background: Step<BackgroundWindow>,
    /// Default: off.
    pub tpow_power: Step<f64>,
    /// Default: three periods of the nominal antenna frequency in samples (10 % of the trace
    /// when unknown).
    pub agc_window_samples: Step<usize>,
    /// Migrate when a velocity is given (default true).
    pub migrate: bool,
}

impl Default for ProcessingParams {
    fn default() -> Self {
        ProcessingParams {
            time_zero: Step::Default,
            dewow_window_samples: Step::Default,
            bandpass: Step::Default,
            background: Step::Default,
            tpow_power: Step::Default,
            agc_window_samples: Step::Default,
            migrate: true,
        }
    }
}

/// One recorded step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecipeStep {
    /// Snake-case step name.
    pub step: String,
    /// The function that ran (`methods::gpr::…`).
    pub function: String,
    /// Its parameters.
    pub parameters: serde_json::Value,
    /// `user`, `default` or `header`.
    pub chosen_by: String,
    /// Whether it ran.
    pub applied: bool,
    /// What it found or why it was skipped.
    pub detail: String,
    /// Wall time of the step, s.
    pub seconds: f64,
}

/// Everything done to a line, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recipe {
    /// The input file.
    pub source_file: String,
    /// Its format.
    pub format: GprFormat,
    /// Program and version.
    pub software: String,
    /// The steps in order, skipped ones included.
    pub steps: Vec<RecipeStep>,
    /// The reader's notes about the input.
    pub reader_notes: Vec<String>,
}

/// The vertical axis of a processed line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Domain {
    /// Two-way travel time, ns (downwards).
    TwoWayTime,
    /// Depth below the surface, m (downwards).
    Depth,
    /// Elevation, m (row 0 highest).
    Elevation,
}

/// A processed line with its axes and recipe.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProcessedLine {
    /// Amplitudes `(rows, traces)`. Not serialised (written as `.npy`/`.npz`).
    #[serde(skip)]
    pub data: Array2<f64>,
    /// Rows.
    pub n_samples: usize,
    /// Traces.
    pub n_traces: usize,
    /// The vertical axis.
    pub domain: Domain,
    /// Vertical coordinate of row 0 (ns for time, m for depth/elevation).
    pub vertical_first: f64,
    /// Step between rows (positive down for time and depth; elevation decreases by it).
    pub vertical_step: f64,
    /// `ns` or `m`.
    pub vertical_unit: String,
    /// Trace positions, m.
    pub positions_m: Vec<f64>,
    /// The velocity used, if any.
    pub velocity: Option<ResolvedVelocity>,
    /// Why the line is still in two-way time (None when it is not).
    pub why_two_way_time: Option<String>,
    /// What was done.
    pub recipe: Recipe,
}

impl ProcessedLine {
    /// The vertical coordinate of every row.
    pub fn vertical_axis(&self) -> Vec<f64> {
        let sign = if self.domain == Domain::Elevation {
            -1.0
        } else {
            1.0
        };
        (0..self.n_samples)
            .map(|i| self.vertical_first + sign * i as f64 * self.vertical_step)
            .collect()
    }

    /// Name of the vertical axis array in the `.npz`.
    pub fn vertical_name(&self) -> &'static str {
        match self.domain {
            Domain::TwoWayTime => "time_ns",
            Domain::Depth => "depth_m",
            Domain::Elevation => "elevation_m",
        }
    }

    /// Write `data.npy`, the vertical axis (`time_ns.npy`, `depth_m.npy` or
    /// `elevation_m.npy`) and `positions_m.npy` into one `.npz`.
    pub fn write_npz(&self, path: &Path) -> Result<(), GprError> {
        let members = vec![
            ("data.npy".to_string(), npy_bytes(self.data.view())),
            (
                format!("{}.npy", self.vertical_name()),
                npy_bytes_1d(&self.vertical_axis()),
            ),
            (
                "positions_m.npy".to_string(),
                npy_bytes_1d(&self.positions_m),
            ),
        ];
        let bytes = zip_store(&members).map_err(|m| GprError::Write {
            file: path.to_path_buf(),
            message: m,
        })?;
        write_file(path, &bytes)
    }

    /// Write the recipe as pretty JSON.
    pub fn write_recipe_json(&self, path: &Path) -> Result<(), GprError> {
        let text = serde_json::to_string_pretty(&self.recipe).map_err(|e| GprError::Write {
            file: path.to_path_buf(),
            message: e.to_string(),
        })?;
        write_file(path, text.as_bytes())
    }

    /// A grey-scale radargram, one pixel per sample and trace: amplitudes clipped
    /// symmetrically at the `clip_quantile` quantile of |a| (e.g. 0.99) and mapped to 0–254
    /// (zero at 127); NaN (no data) is white.
    pub fn radargram_image(&self, clip_quantile: f64) -> image::GrayImage {
        let (rows, cols) = self.data.dim();
        let mut mags: Vec<f64> = self
            .data
            .iter()
            .filter(|v| v.is_finite())
            .map(|v| v.abs())
            .collect();
        mags.sort_by(f64::total_cmp);
        let q = clip_quantile.clamp(0.0, 1.0);
        let clip = mags
            .get(((mags.len().saturating_sub(1)) as f64 * q) as usize)
            .copied()
            .filter(|c| *c > 0.0)
            .unwrap_or(1.0);
        image::GrayImage::from_fn(cols as u32, rows as u32, |x, y| {
            let v = self.data[[y as usize, x as usize]];
            let g = if v.is_finite() {
                (127.0 + 127.0 * (v / clip).clamp(-1.0, 1.0)).round() as u8
            } else {
                255
            };
            image::Luma([g])
        })
    }

    /// Write [`ProcessedLine::radargram_image`] as PNG.
    pub fn write_radargram_png(&self, path: &Path, clip_quantile: f64) -> Result<(), GprError> {
        self.radargram_image(clip_quantile)
            .save_with_format(path, image::ImageFormat::Png)
            .map_err(|e| GprError::Write {
                file: path.to_path_buf(),
                message: e.to_string(),
            })
    }

    /// A compact JSON summary (the catalog's product line).
    pub fn summary(&self) -> serde_json::Value {
        let axis = self.vertical_axis();
        let (a0, a1) = finite_range(self.data.iter().copied());
        serde_json::json!({
            "method": "gpr",
            "n_samples": self.n_samples,
            "n_traces": self.n_traces,
            "domain": self.domain,
            "vertical_range": [axis.first(), axis.last()],
            "vertical_unit": self.vertical_unit,
            "position_range_m": [self.positions_m.first(), self.positions_m.last()],
            "velocity_m_per_ns": self.velocity.as_ref().map(|v| v.velocity_m_per_ns),
            "velocity_statement": self.velocity.as_ref().map(|v| v.statement.clone()),
            "why_two_way_time": self.why_two_way_time,
            "amplitude_range": [a0, a1],
            "steps_applied": self.recipe.steps.iter().filter(|s| s.applied).map(|s| s.step.clone()).collect::<Vec<_>>(),
        })
    }
}

struct Recorder {
    steps: Vec<RecipeStep>,
}

impl Recorder {
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        step: &str,
        function: &str,
        parameters: serde_json::Value,
        chosen_by: &str,
        applied: bool,
        detail: impl Into<String>,
        started: Instant,
    ) {
        self.steps.push(RecipeStep {
            step: step.to_string(),
            function: function.to_string(),
            parameters,
            chosen_by: chosen_by.to_string(),
            applied,
            detail: detail.into(),
            seconds: started.elapsed().as_secs_f64(),
        });
    }
}

/// Samples in one period of `f_mhz` at sampling `dt_ns`.
fn period_samples(f_mhz: Option<f64>, dt_ns: f64) -> Option<usize> {
    f_mhz
        .filter(|f| *f > 0.0)
        .map(|f| ((1000.0 / f) / dt_ns).round().max(1.0) as usize)
}

/// Run the chain (module docs) on a line. `velocity`: who gave the velocity (`None` keeps
/// the line in two-way time); `topography`: the surface elevation along the line (used only
/// with a velocity).
pub fn process_line(
    line: &GprLine,
    params: &ProcessingParams,
    velocity: Option<&VelocitySource>,
    topography: Option<&Topography>,
) -> Result<ProcessedLine, GprError> {
    if line.n_samples < 2 || line.n_traces == 0 {
        return Err(GprError::not_applicable(
            "processing",
            format!(
                "the line has {} samples × {} traces: nothing to process",
                line.n_samples, line.n_traces
            ),
        ));
    }
    let dt = line.sample_interval_ns;
    if !(dt > 0.0 && dt.is_finite()) {
        return Err(GprError::not_applicable(
            "processing",
            format!("the sampling interval {dt} ns is not usable"),
        ));
    }
    // Refuse an out-of-range velocity before any work.
    let velocity_by = match velocity {
        Some(VelocitySource::Request { .. }) => "user",
        Some(VelocitySource::HeaderPermittivity { .. }) => "header",
        Some(VelocitySource::Semblance(_)) => "analysis",
        None => "default",
    };
    let velocity = velocity.map(resolve_velocity).transpose()?;
    let mut rec = Recorder { steps: Vec::new() };
    let mut data = line.data.clone();
    let mut tz = line.time_zero_sample;

    // Scan-header samples.
    let t = Instant::now();
    if line.header_samples > 0 {
        let n = line.header_samples.min(data.nrows());
        data.slice_mut(ndarray::s![..n, ..]).fill(0.0);
        rec.push(
            "blank_scan_header_samples",
            "ndarray fill",
            serde_json::json!({ "samples": n }),
            "header",
            true,
            format!(
                "samples 0–{} of every trace hold the scan header, not signal: set to 0",
                n - 1
            ),
            t,
        );
    }

    // Time zero.
    let t = Instant::now();
    let (method, by) = match &params.time_zero {
        Step::Off => (None, "user"),
        Step::Set(m) => (Some(m.clone()), "user"),
        Step::Default if line.time_zero_sample > 0.0 => (Some(TimeZeroMethod::Header), "header"),
        Step::Default => (
            Some(TimeZeroMethod::FirstBreak(TimeZeroParams::default())),
            "default",
        ),
    };
    match method {
        None => rec.push(
            "time_zero",
            "methods::gpr::timezero::apply_time_zero",
            serde_json::Value::Null,
            by,
            false,
            format!("off: time zero stays at sample {tz} as the reader set it"),
            t,
        ),
        Some(TimeZeroMethod::FirstBreak(p)) => {
            let o = apply_time_zero(
                data.view(),
                dt,
                &p,
                line.header_samples,
                line.antenna_separation_m,
            )?;
            data = o.data;
            tz = o.time_zero_sample_out;
            rec.push(
                "time_zero",
                "methods::gpr::timezero::apply_time_zero",
                serde_json::to_value(p).unwrap_or_default(),
                by,
                true,
                format!(
                    "{}; {} samples removed, time zero {:.3} samples into the output",
                    o.notes.join("; "),
                    o.samples_removed,
                    tz
                ),
                t,
            );
        }
        Some(m @ (TimeZeroMethod::Header | TimeZeroMethod::Sample(_))) => {
            let at = match m {
                TimeZeroMethod::Sample(s) => s,
                _ => line.time_zero_sample,
            };
            if !(at.is_finite() && at >= 0.0 && at < data.nrows() as f64) {
                return Err(GprError::invalid(
                    "time zero",
                    "sample",
                    at,
                    "must lie inside the trace",
                ));
            }
            let cut = at.floor() as usize;
            data = data.slice(ndarray::s![cut.., ..]).to_owned();
            tz = at - cut as f64;
            rec.push(
                "time_zero",
                "ndarray slice",
                serde_json::json!({ "time_zero_sample": at }),
                by,
                true,
                format!(
                    "time zero at sample {at} ({}); {cut} samples removed",
                    if by == "header" {
                        "stated in the header"
                    } else {
                        "given"
                    }
                ),
                t,
            );
        }
    }

    // Dewow.
    let t = Instant::now();
    let ns = data.nrows();
    let (dewow_w, by, why) = match params.dewow_window_samples {
        Step::Off => (None, "user", String::new()),
        Step::Set(w) => (Some(w), "user", String::new()),
        Step::Default => match period_samples(line.antenna_frequency_mhz, dt) {
            Some(p) => (
                Some(p.max(3)),
                "default",
                "one period of the nominal antenna frequency".to_string(),
            ),
            None => (
                Some((ns / 20).max(3)),
                "default",
                "antenna frequency unknown: 5 % of the trace".to_string(),
            ),
        },
    };
    if let Some(w) = dewow_w {
        data = dewow(data.view(), w)?;
    }
    rec.push(
        "dewow",
        "methods::gpr::filters::dewow",
        serde_json::json!({ "window_samples": dewow_w }),
        by,
        dewow_w.is_some(),
        match dewow_w {
            Some(w) => format!(
                "running mean over {} samples removed ({:.2} ns){}",
                w.div_ceil(2).saturating_mul(2).saturating_add(1),
                w as f64 * dt,
                if why.is_empty() {
                    String::new()
                } else {
                    format!("; {why}")
                }
            ),
            None => "off".to_string(),
        },
        t,
    );

    // Band-pass.
    let t = Instant::now();
    let nyquist_mhz = 500.0 / dt;
    let (bp, by, why) = match params.bandpass {
        Step::Off => (None, "user", "off".to_string()),
        Step::Set(p) => (Some(p), "user", String::new()),
        Step::Default => match line.antenna_frequency_mhz {
            Some(f) if f > 0.0 => {
                let high = (2.0 * f).min(0.9 * nyquist_mhz);
                let p = BandpassParams {
                    low_mhz: 0.5 * f,
                    high_mhz: high,
                    order: 1,
                };
                (
                    Some(p),
                    "default",
                    format!("half to twice the nominal {f} MHz"),
                )
            }
            _ => (
                None,
                "default",
                "off: antenna frequency unknown, no default band".to_string(),
            ),
        },
    };
    if let Some(p) = &bp {
        data = bandpass(data.view(), dt, p)?;
    }
    rec.push(
        "bandpass",
        "methods::gpr::bandpass::bandpass",
        serde_json::to_value(bp).unwrap_or_default(),
        by,
        bp.is_some(),
        match &bp {
            Some(p) => format!(
                "zero-phase Butterworth {}–{} MHz, order {} per corner (obspy convention){}",
                p.low_mhz,
                p.high_mhz,
                p.order,
                if why.is_empty() {
                    String::new()
                } else {
                    format!("; {why}")
                }
            ),
            None => why,
        },
        t,
    );

    // Background removal.
    let t = Instant::now();
    let (bg, by) = match params.background {
        Step::Off => (None, "user"),
        Step::Set(b) => (Some(b), "user"),
        Step::Default => (Some(BackgroundWindow::WholeLine), "default"),
    };
    if let Some(b) = bg {
        data = remove_background(data.view(), b)?;
    }
    rec.push(
        "background_removal",
        "methods::gpr::filters::remove_background",
        serde_json::to_value(bg).unwrap_or_default(),
        by,
        bg.is_some(),
        match bg {
            Some(BackgroundWindow::WholeLine) => "the line's mean trace subtracted: direct waves and ringing go, and so does any perfectly flat reflector".to_string(),
            Some(BackgroundWindow::Running { traces }) => format!("a running mean trace over {traces} traces subtracted: horizontal events longer than that are attenuated"),
            None => "off".to_string(),
        },
        t,
    );

    // t^p gain.
    let t = Instant::now();
    let time: Vec<f64> = (0..data.nrows()).map(|i| (i as f64 - tz) * dt).collect();
    let (p, by) = match params.tpow_power {
        Step::Set(p) => (Some(p), "user"),
        Step::Off => (None, "user"),
        Step::Default => (None, "default"),
    };
    if let Some(p) = p {
        data = tpow_gain(data.view(), &time, p)?;
    }
    rec.push(
        "tpow_gain",
        "methods::gpr::filters::tpow_gain",
        serde_json::json!({ "power": p }),
        by,
        p.is_some(),
        match p {
            Some(p) => format!("amplitudes × t^{p} (t in ns after time zero)"),
            None => "off".to_string(),
        },
        t,
    );

    // Migration.
    let t = Instant::now();
    let mut why_time: Option<String> = None;
    match (&velocity, params.migrate) {
        (_, false) => rec.push(
            "migration",
            "methods::gpr::migration::stolt_migration",
            serde_json::Value::Null,
            "user",
            false,
            "off",
            t,
        ),
        (None, true) => rec.push(
            "migration",
            "methods::gpr::migration::stolt_migration",
            serde_json::Value::Null,
            "default",
            false,
            "skipped: migration needs a velocity and none was given",
            t,
        ),
        (Some(v), true) => {
            let (dx, uniform) = trace_spacing(&line.positions_m);
            if line.positions_guessed || !(dx.is_finite() && dx > 0.0) {
                rec.push(
                    "migration",
                    "methods::gpr::migration::stolt_migration",
                    serde_json::Value::Null,
                    "default",
                    false,
                    "skipped: the trace positions are not calibrated in metres",
                    t,
                );
            } else {
                data = stolt_migration(data.view(), dt, dx, v.velocity_m_per_ns, tz)?;
                tz = 0.0;
                rec.push(
                    "migration",
                    "methods::gpr::migration::stolt_migration",
                    serde_json::json!({ "velocity_m_per_ns": v.velocity_m_per_ns, "dx_m": dx, "dt_ns": dt }),
                    velocity_by,
                    true,
                    format!(
                        "Stolt f-k migration at a constant {:.4} m/ns, trace spacing {dx:.4} m{}",
                        v.velocity_m_per_ns,
                        if uniform { String::new() } else { " (mean spacing: the positions are not evenly spaced, so lateral positions are approximate)".to_string() }
                    ),
                    t,
                );
            }
        }
    }

    // AGC.
    let t = Instant::now();
    let ns = data.nrows();
    let (agc_w, by, why) = match params.agc_window_samples {
        Step::Off => (None, "user", String::new()),
        Step::Set(w) => (Some(w), "user", String::new()),
        Step::Default => match period_samples(line.antenna_frequency_mhz, dt) {
            Some(p) => (
                Some(p.saturating_mul(3).max(3)),
                "default",
                "three periods of the nominal antenna frequency".to_string(),
            ),
            None => (
                Some((ns / 10).max(3)),
                "default",
                "antenna frequency unknown: 10 % of the trace".to_string(),
            ),
        },
    };
    if let Some(w) = agc_w {
        data = agc_gain(data.view(), w)?;
    }
    rec.push(
        "agc_gain",
        "methods::gpr::filters::agc_gain",
        serde_json::json!({ "window_samples": agc_w }),
        by,
        agc_w.is_some(),
        match agc_w {
            Some(w) => format!("each sample divided by the L2 norm of a {}-sample window{}; relative amplitudes are not preserved", w.div_ceil(2).saturating_mul(2).saturating_add(1), if why.is_empty() { String::new() } else { format!(" ({why})") }),
            None => "off".to_string(),
        },
        t,
    );

    // Time to depth.
    let t = Instant::now();
    let rows = data.nrows();
    let time_first = -tz * dt;
    let (mut domain, mut first, mut step, mut unit) = (Domain::TwoWayTime, time_first, dt, "ns");
    match &velocity {
        None => {
            why_time = Some(
                "no velocity was given (by the request, the header's εr as the instrument setting, or a CMP/WARR analysis), so the line stays in two-way time".to_string(),
            );
            rec.push(
                "time_to_depth",
                "methods::gpr::depth::time_to_depth_m",
                serde_json::Value::Null,
                "default",
                false,
                "skipped: a depth needs a velocity somebody gave",
                t,
            );
        }
        Some(v) => {
            let vel = v.velocity_m_per_ns;
            let depth = time_to_depth_m(&[time_first, time_first + dt], vel);
            domain = Domain::Depth;
            first = depth[0];
            step = depth[1] - depth[0];
            unit = "m";
            rec.push(
                "time_to_depth",
                "methods::gpr::depth::time_to_depth_m",
                serde_json::json!({ "velocity_m_per_ns": vel }),
                velocity_by,
                true,
                format!(
                    "d = v·t/2 with {}; {} rows of {:.4} m{}",
                    v.statement,
                    rows,
                    step,
                    match line.antenna_separation_m {
                        Some(s) if s > 0.0 => format!("; the antenna separation ({s} m) is neglected (exact only for depths well beyond it)"),
                        _ => String::new(),
                    }
                ),
                t,
            );
        }
    }

    // Topography.
    let t = Instant::now();
    match (topography, &velocity) {
        (None, _) => rec.push(
            "topographic_correction",
            "methods::gpr::depth::topographic_correction",
            serde_json::Value::Null,
            "default",
            false,
            "no topography given",
            t,
        ),
        (Some(_), None) => rec.push(
            "topographic_correction",
            "methods::gpr::depth::topographic_correction",
            serde_json::Value::Null,
            "user",
            false,
            "skipped: a topographic correction converts time to elevation, which needs a velocity",
            t,
        ),
        (Some(topo), Some(_)) => {
            let c = topographic_correction(data.view(), first, step, &line.positions_m, topo)?;
            data = c.data;
            domain = Domain::Elevation;
            first = c.elevation_top_m;
            rec.push(
                "topographic_correction",
                "methods::gpr::depth::topographic_correction",
                serde_json::json!({ "topography_file": topo.file.display().to_string(), "n_points": topo.distance_m.len() }),
                "user",
                true,
                c.notes.join("; "),
                t,
            );
        }
    }

    Ok(ProcessedLine {
        n_samples: data.nrows(),
        n_traces: data.ncols(),
        data,
        domain,
        vertical_first: first,
        vertical_step: step,
        vertical_unit: unit.to_string(),
        positions_m: line.positions_m.clone(),
        velocity,
        why_two_way_time: why_time,
        recipe: Recipe {
            source_file: line.file.display().to_string(),
            format: line.format,
            software: format!("hydrogeo-studio {}", env!("CARGO_PKG_VERSION")),
            steps: rec.steps,
            reader_notes: line.notes.clone(),
        },
    })
}

/// Mean trace spacing and whether the spacing is even (every step within 5 % of the mean).
fn trace_spacing(positions: &[f64]) -> (f64, bool) {
    if positions.len() < 2 {
        return (0.0, false);
    }
    let n = positions.len() - 1;
    let dx = (positions[n] - positions[0]) / n as f64;
    let uniform = positions
        .windows(2)
        .all(|w| ((w[1] - w[0]) - dx).abs() <= 0.05 * dx.abs());
    (dx.abs(), uniform)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::gpr::{SurveyKind, ricker};
    use std::path::PathBuf;

    /// A synthetic 400 MHz line: a diffractor at x = 4 m, 1 m deep in 0.1 m/ns ground,
    /// 0.05 m traces, 0.1 ns samples, time zero at sample 30 (a direct wave there).
    fn synthetic() -> GprLine {
        let (ns, ntr, dt, dx) = (400usize, 161usize, 0.1, 0.05);
        let data = Array2::from_shape_fn((ns, ntr), |(i, j)| {
            let t = (i as f64 - 30.0) * dt;
            let x = j as f64 * dx - 4.0;
            let r = (x * x + 1.0f64).sqrt();
            ricker(t, 0.4) + 0.3 * ricker(t - 2.0 * r / 0.1, 0.4)
        });
        GprLine {
            file: PathBuf::from("synthetic.dzt"),
            format: GprFormat::GssiDzt,
            format_guessed: false,
            data,
            n_samples: ns,
            n_traces: ntr,
            sample_interval_ns: dt,
            time_window_ns: ns as f64 * dt,
            time_zero_sample: 0.0,
            positions_m: (0..ntr).map(|j| j as f64 * dx).collect(),
            positions_guessed: false,
            antenna: None,
            antenna_frequency_mhz: Some(400.0),
            antenna_separation_m: None,
            header_permittivity: None,
            header_samples: 0,
            marks: vec![],
            survey_kind: SurveyKind::CommonOffset,
            survey_kind_guessed: true,
            header: serde_json::Value::Null,
            notes: vec![],
        }
    }

    #[test]
    fn params_read_from_json_and_unknown_keys_are_refused() {
        let p: ProcessingParams =
            serde_json::from_str(r#"{"dewow_window_samples": {"set": 10}, "background": "off"}"#)
                .unwrap();
        assert_eq!(p.dewow_window_samples, Step::Set(10));
        assert_eq!(p.background, Step::Off);
        assert_eq!(p.bandpass, Step::Default);
        assert!(p.migrate);
        let e = serde_json::from_str::<ProcessingParams>(r#"{"dewow": 10}"#).unwrap_err();
        assert!(e.to_string().contains("expected one of"), "{e}");
        // A velocity cannot ride in on the adjustable parameters.
        let e = serde_json::from_str::<ProcessingParams>(
            r#"{"velocity": {"kind": "request", "velocity_m_per_ns": 0.1}}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown field `velocity`"), "{e}");
    }

    /// With a velocity the diffractor is migrated to its apex and the axis is depth:
    /// the focus lies at 1 m (±3 depth rows of v·dt/2 = 5 mm: this zero-phase synthetic lacks
    /// the 2-D −45° phase, which moves the focus 2–3 samples late, see the migration tests)
    /// under x = 4 m (±1 trace).
    #[test]
    fn chain_migrates_and_converts_to_depth() {
        let line = synthetic();
        let params = ProcessingParams {
            time_zero: Step::Set(TimeZeroMethod::Sample(30.0)),
            background: Step::Off,
            agc_window_samples: Step::Off,
            bandpass: Step::Off,
            dewow_window_samples: Step::Off,
            ..Default::default()
        };
        let v = VelocitySource::Request {
            velocity_m_per_ns: 0.1,
        };
        let p = process_line(&line, &params, Some(&v), None).unwrap();
        assert_eq!(p.domain, Domain::Depth);
        assert_eq!(p.vertical_first, 0.0);
        assert!((p.vertical_step - 0.005).abs() < 1e-15);
        // Search below the direct wave (deeper than 0.5 m).
        let (mut best, mut at) = (0.0, (0, 0));
        for ((i, j), v) in p.data.indexed_iter() {
            if i > 100 && v.abs() > best {
                best = v.abs();
                at = (i, j);
            }
        }
        let depth = p.vertical_axis()[at.0];
        assert!((depth - 1.0).abs() <= 3.0 * 0.005 + 1e-12, "depth {depth}");
        assert!((at.1 as i64 - 80).abs() <= 1, "trace {}", at.1);
        // Without a velocity: two-way time, no migration, and the reason.
        let p2 = process_line(&line, &params, None, None).unwrap();
        assert_eq!(p2.domain, Domain::TwoWayTime);
        assert!(
            p2.why_two_way_time
                .as_deref()
                .unwrap()
                .contains("no velocity")
        );
        let mig = p2
            .recipe
            .steps
            .iter()
            .find(|s| s.step == "migration")
            .unwrap();
        assert!(!mig.applied && mig.detail.contains("needs a velocity"));
    }

    #[test]
    fn empty_line_is_not_processed() {
        let mut line = synthetic();
        line.data = Array2::zeros((400, 0));
        line.n_traces = 0;
        let e = process_line(&line, &ProcessingParams::default(), None, None).unwrap_err();
        assert!(e.to_string().contains("nothing to process"), "{e}");
    }
}

//! The GPR figures: radargrams (raw and processed, time or depth axis) and the semblance of a
//! common-midpoint gather.

#[allow(unused_imports)]
use super::*;

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
/// [`plot::image`]: grey scale symmetric about zero, clipped at the 99th percentile of
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
    plot::image(
        path,
        &axes,
        &grid,
        (x0 - dx / 2.0, x1 + dx / 2.0, y0, y1),
        &scale,
        &no_overlays,
    )?;
    Ok(clip)
}

pub(super) fn amplitude_label(p: &ProcessedLine) -> &'static str {
    let applied = |name: &str| p.recipe.steps.iter().any(|s| s.step == name && s.applied);
    if applied("agc_gain") {
        "Amplitude after AGC (dimensionless)"
    } else if applied("tpow_gain") {
        "Amplitude × t^p (counts·ns^p)"
    } else {
        "Amplitude (counts)"
    }
}

/// The semblance panel of a gather as an image (velocity across, t0 down) with the pick
/// marked; `None` when the panel is empty.
pub(super) fn draw_semblance(
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
    plot::image(
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

/// The processed radargram (`figures/gpr_<stem>_processed.png`) with its caption: the
/// vertical axis, the amplitude and its clip, and the velocity used.
pub(super) fn processed_figure(
    ctx: &RunContext,
    line: &GprLine,
    result: &GprProcessed,
    st: &str,
) -> anyhow::Result<(PathBuf, String)> {
    let p = &result.processed;
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
    Ok((fig, caption))
}

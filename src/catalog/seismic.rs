//! The seismic refraction tools: first-break picking from raw shots, loading travel-time
//! files, tomography, its evaluation by the shared rubric with λ retries, and interfaces at
//! threshold velocities (handed on as `keys::SEISMIC_STRUCTURE` for the ERT structural
//! constraint). Each tool calls the functions of `methods::seismic`, the same ones the
//! studio's seismic panel calls.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, anyhow, bail};
use serde::{Deserialize, Serialize};

use super::common::{Held, InterfaceLine, figure_path, held, product_path};
use super::keys;
use crate::methods::io::ReadError;
use crate::methods::quality::{Attempt, MAX_ATTEMPTS, retry_lambda};
use crate::methods::seismic::evaluate::{SeismicEvaluation, evaluate};
use crate::methods::seismic::gather::ShotGather;
use crate::methods::seismic::interfaces::{
    DEFAULT_THRESHOLD_M_PER_S, Interface, extract_interfaces,
};
use crate::methods::seismic::inversion::{InversionParams, SeismicInversion, invert};
use crate::methods::seismic::picking::{
    PickParams, ShotPicks, pick_gather, picks_to_traveltimes, reciprocal_check,
};
use crate::methods::seismic::{Topography, TravelTimes, seg2, segy, sgt, tables};
use crate::report::figures::{self, Axes, ColourScale, Palette, Series, Style};
use crate::runtime::{Outputs, QuestionOption, Registry, RunContext, Tool, ToolResult};

/// First-break picks made from raw shot gathers, with the gathers they were made on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SeismicPicks {
    /// The gathers as read (positions aligned as decided).
    pub gathers: Vec<ShotGather>,
    /// One set of picks per gather (the panel's edits change these).
    pub shots: Vec<ShotPicks>,
    /// The usable picks as travel times (flagged shots left out).
    pub traveltimes: TravelTimes,
    /// The files read.
    pub files: Vec<String>,
    /// What was decided or assumed, one sentence each.
    pub notes: Vec<String>,
}

impl SeismicPicks {
    /// Rebuild `traveltimes` from the shots after an edit (flagged shots left out; the
    /// sensor elevations of the previous set are kept by position).
    pub fn rebuild(&mut self) {
        let old = std::mem::replace(
            &mut self.traveltimes,
            picks_to_traveltimes(&self.shots, true),
        );
        for (x, z) in self
            .traveltimes
            .sensor_x_m
            .iter()
            .zip(self.traveltimes.sensor_z_m.iter_mut())
        {
            if let Some(k) = old.sensor_x_m.iter().position(|a| (a - x).abs() < 1e-6) {
                *z = old.sensor_z_m[k];
            }
        }
    }
}

/// A velocity model with the travel times it was inverted from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SeismicModel {
    /// The tomography result.
    pub inversion: SeismicInversion,
    /// The travel times inverted.
    pub data: TravelTimes,
    /// Where the travel times came from ("picks" or the file name).
    pub source: String,
}

/// The evaluation with the λ retries it made.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SeismicVerdict {
    /// The verdict on the model kept.
    pub evaluation: SeismicEvaluation,
    /// Every inversion tried (the first is the model `invert_seismic` made).
    pub attempts: Vec<Attempt>,
    /// Which model was kept and why.
    pub why_kept: String,
    /// λ of the model kept.
    pub lambda: f64,
}

/// `seismic_inversion_params`: the method's settings plus the catalog's start-bound switch.
pub type SeismicInversionParams = InversionParams;

/// Read a travel-time file by its extension and signature: pyGIMLi unified `.sgt` (or a
/// `.dat` with `s g` tokens), PyRefra `picks.dat` beside its `.geo` files, or a CSV/text
/// table `source_x, receiver_x, time[, err]`.
pub fn read_traveltimes(path: &Path) -> Result<TravelTimes, ReadError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let dir = path.parent().unwrap_or(Path::new("."));
    if path.file_name().and_then(|n| n.to_str()) == Some("picks.dat")
        && dir.join("shots.geo").exists()
        && dir.join("receivers.geo").exists()
    {
        return tables::read_pyrefra(path, &dir.join("shots.geo"), &dir.join("receivers.geo"));
    }
    match ext.as_str() {
        "csv" | "txt" | "tsv" => tables::read_traveltime_csv(path),
        _ => sgt::read_sgt(path),
    }
}

fn range(v: &[f64]) -> (f64, f64) {
    v.iter()
        .copied()
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        })
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// The travel-time table as a Markdown paragraph of counts.
fn data_line(tt: &TravelTimes) -> String {
    let (t0, t1) = range(&tt.time_s);
    let (x0, x1) = range(&tt.sensor_x_m);
    format!(
        "{} picks from {} shots on {} sensors, x {x0:.1} to {x1:.1} m, times {:.1} to {:.1} ms",
        tt.n_data(),
        tt.shots().len(),
        tt.n_sensors(),
        1e3 * t0,
        1e3 * t1
    )
}

// ----- figures ------------------------------------------------------------------------

/// Travel-time curves per shot: observed picks as points, modelled times (when given) as
/// lines, against the receiver position.
pub fn traveltime_figure(
    path: &Path,
    tt: &TravelTimes,
    modelled: Option<(&[usize], &[f64])>,
    title: &str,
) -> Result<(), figures::FigureError> {
    let mut series = Vec::new();
    let obs_time: Vec<f64> = tt.time_s.clone();
    let mut mod_time = vec![f64::NAN; tt.n_data()];
    if let Some((idx, resp)) = modelled {
        for (&i, &r) in idx.iter().zip(resp) {
            if i < mod_time.len() {
                mod_time[i] = r;
            }
        }
    }
    for (k, s) in tt.shots().into_iter().enumerate() {
        let mut rows: Vec<usize> = (0..tt.n_data()).filter(|&i| tt.shot[i] == s).collect();
        rows.sort_by(|&a, &b| {
            tt.sensor_x_m[tt.geophone[a]].total_cmp(&tt.sensor_x_m[tt.geophone[b]])
        });
        let x: Vec<f64> = rows
            .iter()
            .map(|&i| tt.sensor_x_m[tt.geophone[i]])
            .collect();
        let y: Vec<f64> = rows.iter().map(|&i| 1e3 * obs_time[i]).collect();
        let first = k == 0;
        series.push(
            Series::points(if first { "observed" } else { "" }, x.clone(), y).colour((40, 40, 40)),
        );
        if modelled.is_some() {
            let (xm, ym): (Vec<f64>, Vec<f64>) = rows
                .iter()
                .zip(&x)
                .filter(|(i, _)| mod_time[**i].is_finite())
                .map(|(&i, &xx)| (xx, 1e3 * mod_time[i]))
                .unzip();
            series.push(
                Series::line(if first { "modelled" } else { "" }, xm, ym)
                    .style(Style::Line)
                    .colour((200, 30, 30)),
            );
        }
    }
    figures::line_plot(
        path,
        &Axes::new(title, "Receiver position x (m)", "First-arrival time (ms)"),
        &series,
    )
}

fn cell_polygons(inv: &SeismicInversion) -> Vec<Vec<(f64, f64)>> {
    (0..inv.grid.n_cells())
        .map(|c| {
            let k = inv.grid.cell_corners(c);
            vec![k[0], k[1], k[3], k[2]]
        })
        .collect()
}

fn surface_series(inv: &SeismicInversion) -> Series {
    Series::line(
        "surface",
        inv.grid.x_m.clone(),
        inv.grid.surface_z_m.clone(),
    )
    .colour((0, 0, 0))
}

/// The velocity model (cells not covered by rays faded) with the interfaces drawn.
pub fn velocity_figure(
    path: &Path,
    inv: &SeismicInversion,
    interfaces: &[Interface],
) -> Result<(), figures::FigureError> {
    let scale = ColourScale::fit(
        &inv.velocity_m_per_s,
        false,
        "P velocity (m/s)",
        Palette::Viridis,
    );
    let alpha: Vec<f64> = inv
        .covered
        .iter()
        .map(|&c| if c { 1.0 } else { 0.25 })
        .collect();
    let mut overlays = vec![surface_series(inv)];
    for f in interfaces {
        overlays.push(
            Series::line(
                &format!("{:.0} m/s", f.velocity_m_per_s),
                f.x_m.clone(),
                f.z_m.clone(),
            )
            .style(Style::Dashed)
            .colour((230, 30, 30)),
        );
    }
    let title = if interfaces.is_empty() {
        "Seismic velocity model (faded: no ray coverage)".to_string()
    } else {
        "Seismic velocity model with interfaces (dashed; faded: no ray coverage)".to_string()
    };
    figures::cell_section(
        path,
        &Axes::new(&title, "Distance x (m)", "Elevation z (m)"),
        &cell_polygons(inv),
        &inv.velocity_m_per_s,
        &scale,
        Some(&alpha),
        &overlays,
    )
}

/// Ray coverage: total ray length per cell (log scale); cells no ray crosses are blank.
pub fn coverage_figure(path: &Path, inv: &SeismicInversion) -> Result<(), figures::FigureError> {
    let values: Vec<f64> = inv
        .coverage_m
        .iter()
        .map(|&c| if c > 0.0 { c } else { f64::NAN })
        .collect();
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let scale = ColourScale::fit(&finite, true, "Ray length in cell (m)", Palette::Greys);
    figures::cell_section(
        path,
        &Axes::new(
            "Seismic ray coverage (blank: no ray)",
            "Distance x (m)",
            "Elevation z (m)",
        ),
        &cell_polygons(inv),
        &values,
        &scale,
        None,
        &[surface_series(inv)],
    )
}

// ----- pick_first_breaks --------------------------------------------------------------

/// Read every raw shot of the run: `segy_file` (one or more field records) or `seg2_files`.
fn read_gathers(ctx: &RunContext) -> anyhow::Result<(Vec<ShotGather>, Vec<String>, Vec<String>)> {
    let mut gathers = Vec::new();
    let mut files = Vec::new();
    let mut notes = Vec::new();
    for p in ctx.input_paths("segy_file") {
        let f = segy::read_segy(&p)?;
        notes.extend(f.notes.iter().map(|n| format!("{}: {n}", name_of(&p))));
        files.push(name_of(&p));
        gathers.extend(f.gathers);
    }
    for p in ctx.input_paths("seg2_files") {
        gathers.push(seg2::read_seg2(&p)?);
        files.push(name_of(&p));
    }
    if gathers.is_empty() {
        bail!(
            "no shot gathers in the raw-shot inputs ({})",
            files.join(", ")
        );
    }
    Ok((gathers, files, notes))
}

/// Give the gathers positions from the station table where the headers lack them, and ask
/// which origin to use when both give positions and they disagree.
fn align_positions(
    ctx: &mut RunContext,
    gathers: &mut [ShotGather],
    stations: Option<&Topography>,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    let Some(st) = stations else {
        if let Some(g) = gathers.iter().find(|g| g.source_x_m.is_none()) {
            bail!(
                "shot record {} has no source position in its headers: give a geophone_file (station, x, elevation) and shot positions in the headers, or a travel-time file instead",
                g.record
            );
        }
        return Ok(());
    };
    let mut choice: Option<String> = ctx.config_str("align_origin").map(str::to_string);
    for g in gathers.iter_mut() {
        match &g.receiver_x_m {
            None => {
                if st.x_m.len() != g.n_traces() {
                    bail!(
                        "shot record {} has {} traces without positions, and the geophone_file lists {} stations: expected one station per trace",
                        g.record,
                        g.n_traces(),
                        st.x_m.len()
                    );
                }
                g.receiver_x_m = Some(st.x_m.clone());
                notes.push(format!(
                    "record {}: receiver positions from the station table (the headers have none)",
                    g.record
                ));
            }
            Some(rx) if rx.len() == st.x_m.len() => {
                let shift = st.x_m[0] - rx[0];
                if shift.abs() > 0.01 {
                    let ans = match &choice {
                        Some(c) => c.clone(),
                        None => {
                            let a = ctx.ask(
                                &format!(
                                    "The station file starts the line at x = {:.2} m, the SEG-Y headers at x = {:.2} m (a shift of {shift:+.2} m). Which origin should the picks use?",
                                    st.x_m[0], rx[0]
                                ),
                                &[
                                    QuestionOption::new(
                                        "stations",
                                        "The station file",
                                        "shift sources and receivers so the first trace is at the station file's first x",
                                    ),
                                    QuestionOption::new(
                                        "headers",
                                        "The trace headers",
                                        "keep the positions written in the SEG-Y headers",
                                    ),
                                ],
                                "stations",
                            );
                            choice = Some(a.clone());
                            a
                        }
                    };
                    if ans == "stations" {
                        g.receiver_x_m = Some(rx.iter().map(|x| x + shift).collect());
                        g.source_x_m = g.source_x_m.map(|s| s + shift);
                        notes.push(format!(
                            "record {}: positions shifted by {shift:+.2} m to the station file's origin",
                            g.record
                        ));
                    } else {
                        notes.push(format!(
                            "record {}: the headers' origin kept (the station file's differs by {shift:+.2} m)",
                            g.record
                        ));
                    }
                }
            }
            Some(_) => {}
        }
        if g.source_x_m.is_none() {
            bail!(
                "shot record {} has no source position in its headers; the studio cannot pick it without one",
                g.record
            );
        }
    }
    Ok(())
}

/// The `pick_first_breaks` tool.
pub fn pick_first_breaks(ctx: &mut RunContext) -> ToolResult {
    let params: PickParams = ctx.params("first_break_params")?;
    let (mut gathers, files, mut notes) = read_gathers(ctx)?;
    let stations = match ctx.input_path("geophone_file") {
        Some(p) => Some(tables::read_topography(&p)?),
        None => None,
    };
    align_positions(ctx, &mut gathers, stations.as_ref(), &mut notes)?;
    let n = gathers.len();
    let mut shots = Vec::with_capacity(n);
    for (k, g) in gathers.iter().enumerate() {
        if ctx.cancelled() {
            bail!("stopped after {k} of {n} shots");
        }
        ctx.progress(
            k as f64 / n as f64,
            &format!("picking shot {} of {n}", k + 1),
        );
        shots.push(pick_gather(g, &params));
    }
    let n_flagged = reciprocal_check(&mut shots, &params, 0.1);
    let mut tt = picks_to_traveltimes(&shots, true);
    if let Some(st) = &stations {
        crate::methods::seismic::data::apply_topography(&mut tt, st);
    }
    let n_traces: usize = gathers.iter().map(ShotGather::n_traces).sum();
    let n_picked: usize = shots.iter().map(ShotPicks::n_picked).sum();
    let summary = format!(
        "Picked {n_picked} first breaks on {n_traces} traces of {n} shots ({}); {n_flagged} shots flagged by the reciprocity check{}; {}.",
        files.join(", "),
        if n_flagged > 0 { " and left out" } else { "" },
        data_line(&tt)
    );
    let fig = figure_path(ctx, "seismic_picks")?;
    let mut out = Outputs::new();
    if tt.n_data() > 0 {
        traveltime_figure(&fig, &tt, None, "Picked first-arrival times per shot")?;
        out = out.figure(
            fig,
            "First-arrival times picked from the raw shots (ms) against receiver position (m)",
        );
    }
    let mut md = format!(
        "### First-break picks\n\n{n_picked} picks on {n_traces} traces of {n} shots from {}. Threshold picks on drift-removed traces, each shot side fitted by the closest non-decreasing curve, strays re-picked by AIC (Maeda 1985), shots checked against their reciprocals.\n\n| shot x (m) | picked | flagged | reciprocal offset (ms) |\n|---|---|---|---|\n",
        files.join(", ")
    );
    for s in &shots {
        md.push_str(&format!(
            "| {:.2} | {} of {} | {} | {} |\n",
            s.source_x_m,
            s.n_picked(),
            s.picks.len(),
            if s.flagged { "yes" } else { "no" },
            s.reciprocal_offset_s
                .map_or(String::new(), |o| format!("{:+.2}", 1e3 * o))
        ));
    }
    for note in notes
        .iter()
        .chain(shots.iter().flat_map(|s| s.notes.iter()))
    {
        md.push_str(&format!("\n- {note}"));
    }
    let value = SeismicPicks {
        gathers,
        shots,
        traveltimes: tt.clone(),
        files,
        notes,
    };
    let held = Held::new(
        value,
        format!("{n_picked} first-break picks from {n} shots"),
    )
    .number("n_data", tt.n_data())
    .number("n_shots", n)
    .number("n_traces", n_traces)
    .number("n_flagged_shots", n_flagged)
    .detail(data_line(&tt))
    .report(md);
    Ok((summary, out.put(keys::SEISMIC_PICKS, Arc::new(held))))
}

// ----- load_seismic_traveltimes -------------------------------------------------------

/// The `load_seismic_traveltimes` tool.
pub fn load_seismic_traveltimes(ctx: &mut RunContext) -> ToolResult {
    let path = ctx
        .input_path("seismic_file")
        .ok_or_else(|| anyhow!("no seismic_file was given"))?;
    let mut tt = read_traveltimes(&path)?;
    let mut extra = String::new();
    if let Some(tp) = ctx.input_path("topography_file") {
        let topo = tables::read_topography(&tp)?;
        let outside = crate::methods::seismic::data::apply_topography(&mut tt, &topo);
        extra = format!(
            "; elevations from {} ({} stations{})",
            name_of(&tp),
            topo.x_m.len(),
            if outside > 0 {
                format!(", {outside} sensors beyond its ends held at the end values")
            } else {
                String::new()
            }
        );
    }
    let (z0, z1) = range(&tt.sensor_z_m);
    let errors = match &tt.error_s {
        Some(e) => {
            let (a, b) = range(e);
            format!("errors {:.2} to {:.2} ms given", 1e3 * a, 1e3 * b)
        }
        None => "no errors in the file (the inversion will assume 3 % and say so)".to_string(),
    };
    let summary = format!(
        "Read {} ({}{}): {}; elevations {z0:.1} to {z1:.1} m; {errors}{extra}.",
        name_of(&path),
        tt.format,
        if tt.guessed { ", format guessed" } else { "" },
        data_line(&tt),
    );
    let fig = figure_path(ctx, "seismic_traveltimes")?;
    traveltime_figure(&fig, &tt, None, "Observed first-arrival times per shot")?;
    let mut md = format!(
        "### Seismic travel times\n\n{} from `{}` ({}). Elevations {z0:.1} to {z1:.1} m; {errors}{extra}.\n",
        data_line(&tt),
        name_of(&path),
        tt.format
    );
    for n in &tt.notes {
        md.push_str(&format!("\n- {n}"));
    }
    let line = format!("{} travel times from {}", tt.n_data(), name_of(&path));
    let held = Held::new(tt.clone(), line)
        .number("n_data", tt.n_data())
        .number("n_shots", tt.shots().len())
        .number("n_sensors", tt.n_sensors())
        .detail(data_line(&tt))
        .report(md);
    Ok((
        summary,
        Outputs::new()
            .put(keys::SEISMIC_TRAVELTIMES, Arc::new(held))
            .figure(
                fig,
                "Observed first-arrival times (ms) against receiver position (m), one curve per shot",
            ),
    ))
}

// ----- invert_seismic -----------------------------------------------------------------

/// The travel times of the run: a file's when one was loaded, else the picks'.
pub fn run_traveltimes(ctx: &RunContext) -> Option<(TravelTimes, String)> {
    if let Some(tt) = held::<TravelTimes>(ctx, keys::SEISMIC_TRAVELTIMES) {
        let src = ctx
            .input_path("seismic_file")
            .map_or("travel-time file".to_string(), |p| name_of(&p));
        return Some((tt.clone(), src));
    }
    held::<SeismicPicks>(ctx, keys::SEISMIC_PICKS).map(|p| (p.traveltimes.clone(), "picks".into()))
}

/// The model's figures: velocity with interfaces, travel-time fit, coverage.
fn model_figures(ctx: &RunContext, m: &SeismicModel, out: Outputs) -> anyhow::Result<Outputs> {
    let inv = &m.inversion;
    let v = figure_path(ctx, "seismic_velocity")?;
    velocity_figure(&v, inv, &[])?;
    let t = figure_path(ctx, "seismic_traveltime_fit")?;
    traveltime_figure(
        &t,
        &m.data,
        Some((&inv.used_picks, &inv.response_s)),
        "Travel times: observed (points) and modelled (lines)",
    )?;
    let c = figure_path(ctx, "seismic_coverage")?;
    coverage_figure(&c, inv)?;
    Ok(out
        .figure(
            v,
            "Seismic P-velocity model (m/s) against distance and elevation (m); cells without ray coverage faded",
        )
        .figure(
            t,
            "Observed and modelled first-arrival times (ms) against receiver position (m)",
        )
        .figure(c, "Ray coverage: total ray length per cell (m)"))
}

/// The report section of a model.
fn model_report(m: &SeismicModel) -> String {
    let inv = &m.inversion;
    let (v0, v1) = range(&inv.velocity_m_per_s);
    let covered = inv.covered.iter().filter(|&&c| c).count();
    let mut md = format!(
        "### Seismic refraction tomography\n\nGauss–Newton inversion of {} first-arrival times (from {}) for log-velocity on {} cells with smoothness (λ {:.3}, z-weight {:.2}); shortest-path forward model with {} secondary nodes per cell edge.\n\n| χ² | rrms (%) | iterations | stop | velocity range (m/s) | covered cells |\n|---|---|---|---|---|---|\n| {:.2} | {:.2} | {} | {:?} | {v0:.0} to {v1:.0} | {covered} of {} |\n\n| iteration | χ² | rrms (%) | φ_m | λ | step | s |\n|---|---|---|---|---|---|---|\n",
        inv.n_data,
        m.source,
        inv.n_cells,
        inv.lambda,
        inv.params.z_weight,
        inv.params.secondary_nodes,
        inv.chi2,
        inv.rrms_percent,
        inv.iterations,
        inv.stop_reason,
        inv.n_cells,
    );
    for r in &inv.history {
        md.push_str(&format!(
            "| {} | {:.3} | {:.2} | {:.3e} | {:.3} | {:.3} | {:.2} |\n",
            r.iteration, r.chi2, r.rrms_percent, r.phi_m, r.lambda, r.step_length, r.seconds
        ));
    }
    for n in &inv.notes {
        md.push_str(&format!("\n- {n}"));
    }
    md
}

/// A model held as the `seismic_results` artifact (key numbers and report section).
pub fn held_model(m: SeismicModel) -> Held<SeismicModel> {
    let inv = &m.inversion;
    let (v0, v1) = range(&inv.velocity_m_per_s);
    let line = format!(
        "seismic velocity model: χ² {:.2}, rrms {:.2} %, {} iterations, {v0:.0}–{v1:.0} m/s",
        inv.chi2, inv.rrms_percent, inv.iterations
    );
    let md = model_report(&m);
    Held::new(m.clone(), line)
        .number("chi2", m.inversion.chi2)
        .number("chi2_history", m.inversion.chi2_history.clone())
        .number("rrms_percent", m.inversion.rrms_percent)
        .number("iterations", m.inversion.iterations)
        .number("lambda", m.inversion.lambda)
        .number("n_data", m.inversion.n_data)
        .number("n_cells", m.inversion.n_cells)
        .number("velocity_min_m_per_s", v0)
        .number("velocity_max_m_per_s", v1)
        .report(md)
}

/// The `invert_seismic` tool.
pub fn invert_seismic(ctx: &mut RunContext) -> ToolResult {
    let params: SeismicInversionParams = ctx.params("seismic_inversion_params")?;
    let (tt, source) = run_traveltimes(ctx).ok_or_else(|| {
        anyhow!("no travel times: load a seismic_file or pick the raw shots first")
    })?;
    let cancel = ctx.cancel_flag();
    let inv = {
        let c: &RunContext = ctx;
        let mut progress = |f: f64, s: &str| c.progress(f, s);
        invert(&tt, &params, &mut progress, &cancel)
            .with_context(|| format!("the seismic inversion of {} picks failed", tt.n_data()))?
    };
    let (v0, v1) = range(&inv.velocity_m_per_s);
    let summary = format!(
        "Inverted {} travel times ({source}) on {} cells: χ² {:.2}, rrms {:.2} % after {} iterations (λ {:.3}, stopped: {:?}); velocities {v0:.0} to {v1:.0} m/s; {} of {} cells covered by rays.{}",
        inv.n_data,
        inv.n_cells,
        inv.chi2,
        inv.rrms_percent,
        inv.iterations,
        inv.lambda,
        inv.stop_reason,
        inv.covered.iter().filter(|&&c| c).count(),
        inv.n_cells,
        inv.notes
            .iter()
            .find(|n| n.contains("no pick errors"))
            .map_or(String::new(), |n| format!(" Note: {n}."))
    );
    let model = SeismicModel {
        inversion: inv,
        data: tt,
        source,
    };
    let out = model_figures(ctx, &model, Outputs::new())?;
    Ok((
        summary,
        out.put(keys::SEISMIC_RESULTS, Arc::new(held_model(model))),
    ))
}

// ----- evaluate_seismic_inversion -----------------------------------------------------

/// The `evaluate_seismic_inversion` tool: the rubric, and while the model fails it, the
/// inversion again with λ halved (underfit) or doubled (overfit), at most `max_attempts`
/// in all (the first is the model already made); the best-scoring model is kept.
pub fn evaluate_seismic_inversion(ctx: &mut RunContext) -> ToolResult {
    let model = held::<SeismicModel>(ctx, keys::SEISMIC_RESULTS)
        .cloned()
        .ok_or_else(|| anyhow!("no seismic model to evaluate: run invert_seismic first"))?;
    let max_attempts = ctx.config_f64("max_attempts", MAX_ATTEMPTS as f64).max(1.0) as usize;
    let auto_adjust = ctx.config_bool("auto_adjust", true);
    let cancel = ctx.cancel_flag();
    let params = model.inversion.params.clone();
    let lambda0 = model.inversion.lambda;
    let mut first = Some(model.inversion.clone());
    let mut attempt = 0usize;
    let retried = {
        let c: &RunContext = ctx;
        retry_lambda(lambda0, max_attempts, auto_adjust, |lambda| {
            attempt += 1;
            let inv = match first.take() {
                Some(inv) => inv,
                None => {
                    c.progress(
                        (attempt - 1) as f64 / max_attempts as f64,
                        &format!("attempt {attempt}: λ {lambda:.3}"),
                    );
                    let p = InversionParams {
                        lambda,
                        ..params.clone()
                    };
                    invert(&model.data, &p, &mut |_, _| {}, &cancel)?
                }
            };
            let ev = evaluate(&inv);
            let (chi2, q) = (inv.chi2, ev.quality.clone());
            Ok::<_, crate::methods::seismic::inversion::InversionError>(((inv, ev), chi2, q))
        })?
    };
    let (inv, ev) = retried.best;
    let replaced = (inv.lambda - lambda0).abs() > 1e-12;
    let mut md = format!(
        "### Seismic model quality\n\n{}\n\n| component | weight | score | note |\n|---|---|---|---|\n",
        retried.why_kept
    );
    for c in &ev.quality.components {
        md.push_str(&format!(
            "| {} | {:.2} | {} | {} |\n",
            c.name,
            c.weight,
            c.score.map_or("not scored".into(), |s| format!("{s:.0}")),
            c.note
        ));
    }
    md.push_str("\n| attempt | λ | χ² | score | kept |\n|---|---|---|---|---|\n");
    for a in &retried.attempts {
        md.push_str(&format!(
            "| {} | {:.3} | {:.2} | {:.0} | {} |\n",
            a.attempt,
            a.lambda,
            a.chi2,
            a.score,
            if a.kept { "yes" } else { "" }
        ));
    }
    md.push_str(&format!(
        "\nSettings: max_attempts {max_attempts}, auto_adjust {auto_adjust}, pass mark {:.0}.\n",
        ev.quality.threshold
    ));
    for n in &ev.notes {
        md.push_str(&format!("\n- {n}"));
    }
    let summary = format!(
        "Quality {:.0}/100 ({}): χ² {:.2}, rrms {:.2} %, {:.0} % of cells covered, {} cells at a bound; {} attempt(s), kept λ {:.3}{}.",
        ev.quality_score,
        if ev.quality.passed {
            "pass"
        } else {
            "below the pass mark"
        },
        ev.chi2,
        ev.rrms_percent,
        100.0 * ev.coverage_fraction,
        ev.n_cells_at_bounds,
        retried.attempts.len(),
        inv.lambda,
        if replaced {
            " (a retry replaced the model)"
        } else {
            ""
        }
    );
    let verdict = SeismicVerdict {
        evaluation: ev.clone(),
        attempts: retried.attempts.clone(),
        why_kept: retried.why_kept.clone(),
        lambda: inv.lambda,
    };
    let held_v = Held::new(
        verdict,
        format!("seismic quality {:.0}/100", ev.quality_score),
    )
    .number("quality_score", ev.quality_score)
    .number("passed", ev.quality.passed)
    .number("chi2", ev.chi2)
    .number("rrms_percent", ev.rrms_percent)
    .number("coverage_fraction", ev.coverage_fraction)
    .number("attempts", retried.attempts.len())
    .number("lambda", inv.lambda)
    .report(md);
    let mut out = Outputs::new().put(keys::SEISMIC_EVALUATION, Arc::new(held_v));
    if replaced {
        let m = SeismicModel {
            inversion: inv,
            data: model.data.clone(),
            source: model.source.clone(),
        };
        out = model_figures(ctx, &m, out)?;
        out = out.put(keys::SEISMIC_RESULTS, Arc::new(held_model(m)));
    }
    Ok((summary, out))
}

// ----- extract_seismic_interfaces -----------------------------------------------------

/// The thresholds asked for: `velocity_thresholds` (a list), else `velocity_threshold`,
/// else 1200 m/s (said so in the second value).
pub fn thresholds(ctx: &RunContext) -> anyhow::Result<(Vec<f64>, bool)> {
    if let Some(v) = ctx
        .config
        .get("velocity_thresholds")
        .filter(|v| !v.is_null())
    {
        let list: Vec<f64> = serde_json::from_value(v.clone())
            .map_err(|e| anyhow!("velocity_thresholds must be a list of velocities in m/s: {e}"))?;
        if list.is_empty() || list.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
            bail!("velocity_thresholds must be positive velocities in m/s, found {list:?}");
        }
        return Ok((list, false));
    }
    if let Some(v) = ctx
        .config
        .get("velocity_threshold")
        .filter(|v| !v.is_null())
    {
        let x = v
            .as_f64()
            .filter(|x| x.is_finite() && *x > 0.0)
            .ok_or_else(|| anyhow!("velocity_threshold must be a velocity in m/s, found {v}"))?;
        return Ok((vec![x], false));
    }
    Ok((vec![DEFAULT_THRESHOLD_M_PER_S], true))
}

/// The `extract_seismic_interfaces` tool.
pub fn extract_seismic_interfaces(ctx: &mut RunContext) -> ToolResult {
    let model = held::<SeismicModel>(ctx, keys::SEISMIC_RESULTS)
        .cloned()
        .ok_or_else(|| anyhow!("no seismic model: run invert_seismic first"))?;
    let (ths, defaulted) = thresholds(ctx)?;
    let sets = extract_interfaces(&model.inversion, &ths);
    let mut lines: Vec<InterfaceLine> = Vec::new();
    let mut tables = Vec::new();
    let mut drawn = Vec::new();
    let mut parts = Vec::new();
    for s in &sets {
        let mut segs: Vec<&Interface> = s.segments.iter().collect();
        segs.sort_by(|a, b| b.length_m().total_cmp(&a.length_m()));
        if !segs.is_empty() {
            let path = product_path(ctx, &format!("interface_{:.0}ms.csv", s.velocity_m_per_s))?;
            let mut text = String::from("segment,x_m,z_m,depth_m\n");
            for (k, f) in s.segments.iter().enumerate() {
                for i in 0..f.x_m.len() {
                    text.push_str(&format!(
                        "{},{:.4},{:.4},{:.4}\n",
                        k + 1,
                        f.x_m[i],
                        f.z_m[i],
                        f.depth_m[i]
                    ));
                }
            }
            std::fs::write(&path, text)
                .with_context(|| format!("could not write {}", path.display()))?;
            tables.push(path);
        }
        for f in &segs {
            lines.push(InterfaceLine {
                velocity_m_per_s: f.velocity_m_per_s,
                x_m: f.x_m.clone(),
                z_m: f.z_m.clone(),
            });
            drawn.push((*f).clone());
        }
        let len: f64 = s.segments.iter().map(Interface::length_m).sum();
        parts.push(if s.segments.is_empty() {
            format!("none at {:.0} m/s", s.velocity_m_per_s)
        } else {
            let d: Vec<f64> = s
                .segments
                .iter()
                .flat_map(|f| f.depth_m.iter().copied())
                .collect();
            let (d0, d1) = range(&d);
            format!(
                "{} segment(s) at {:.0} m/s over {len:.1} m, {} of {} profiles, depth {d0:.1} to {d1:.1} m",
                s.segments.len(),
                s.velocity_m_per_s,
                s.n_found,
                s.n_profiles
            )
        });
    }
    let fig = figure_path(ctx, "seismic_interfaces")?;
    velocity_figure(&fig, &model.inversion, &drawn)?;
    let summary = format!(
        "Interfaces: {}{}.",
        parts.join("; "),
        if defaulted {
            " (threshold 1200 m/s by default: no velocity_threshold given)"
        } else {
            ""
        }
    );
    let mut md = format!(
        "### Seismic interfaces\n\nTraced where the velocity first reaches the threshold along vertical profiles, only in cells with ray coverage{}.\n\n| threshold (m/s) | segments | profiles with a point | profiles crossed only without coverage |\n|---|---|---|---|\n",
        if defaulted {
            "; threshold 1200 m/s is the default (none was given)"
        } else {
            ""
        }
    );
    for s in &sets {
        md.push_str(&format!(
            "| {:.0} | {} | {} of {} | {} |\n",
            s.velocity_m_per_s,
            s.segments.len(),
            s.n_found,
            s.n_profiles,
            s.n_uncovered
        ));
    }
    for n in sets.iter().flat_map(|s| s.notes.iter()) {
        md.push_str(&format!("\n- {n}"));
    }
    let mut held_l = Held::new(
        lines.clone(),
        format!(
            "{} interface segment(s) at {} m/s",
            lines.len(),
            ths.iter()
                .map(|v| format!("{v:.0}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
    .number("n_interfaces", lines.len())
    .number("velocity_thresholds_m_per_s", ths.clone())
    .report(md);
    for t in &tables {
        held_l = held_l.file(t.clone());
    }
    Ok((
        summary,
        Outputs::new()
            .put(keys::SEISMIC_STRUCTURE, Arc::new(held_l))
            .figure(
                fig,
                "Seismic P-velocity model (m/s) with the interfaces at the threshold velocities (dashed), elevation against distance (m)",
            ),
    ))
}

// ----- registration -------------------------------------------------------------------

/// Register the seismic tools, in dependency order.
pub fn register(reg: &mut Registry) {
    let _ = reg.register(
        Tool::new(
            "pick_first_breaks",
            "Pick first-arrival times on raw seismic shot gathers (SEG-Y or SEG-2): threshold picks, a monotone curve per shot side, stray picks re-picked by AIC, shots that disagree with their reciprocals flagged. Only when no travel-time file was given.",
            pick_first_breaks,
        )
        .produces(&[keys::SEISMIC_PICKS])
        .label("Pick first breaks")
        .module("seismic")
        .when(|ctx| {
            (ctx.has_input("segy_file") || ctx.has_input("seg2_files"))
                && !ctx.has_input("seismic_file")
        }),
    );
    let _ = reg.register(
        Tool::new(
            "load_seismic_traveltimes",
            "Read seismic first-arrival travel times (pyGIMLi .sgt or a CSV of source_x, receiver_x, time[, err]) with an optional topography table.",
            load_seismic_traveltimes,
        )
        .produces(&[keys::SEISMIC_TRAVELTIMES])
        .label("Load seismic travel times")
        .module("seismic")
        .when(|ctx| ctx.has_input("seismic_file")),
    );
    let _ = reg.register(
        Tool::new(
            "invert_seismic",
            "Invert first-arrival travel times (from a file or from picks) for a 2D P-velocity model by Gauss–Newton travel-time tomography with smoothness; 3 % error assumed when the data give none.",
            invert_seismic,
        )
        .produces(&[keys::SEISMIC_RESULTS])
        .label("Run seismic tomography")
        .module("seismic")
        .when(|ctx| ctx.has(&[keys::SEISMIC_TRAVELTIMES]) || ctx.has(&[keys::SEISMIC_PICKS])),
    );
    let _ = reg.register(
        Tool::new(
            "evaluate_seismic_inversion",
            "Score the seismic velocity model by the shared quality rubric (data fit, ray coverage, plausibility, convergence) and, when it fails, re-invert with λ halved or doubled (max_attempts, auto_adjust), keeping the best model.",
            evaluate_seismic_inversion,
        )
        .requires(&[keys::SEISMIC_RESULTS])
        .produces(&[keys::SEISMIC_EVALUATION])
        .label("Evaluate the seismic model")
        .module("seismic"),
    );
    let _ = reg.register(
        Tool::new(
            "extract_seismic_interfaces",
            "Trace interfaces in the seismic velocity model at threshold velocities (velocity_threshold or velocity_thresholds, 1200 m/s by default), write them as x,z tables, and hand them on as the structure the ERT inversion can use.",
            extract_seismic_interfaces,
        )
        .requires(&[keys::SEISMIC_RESULTS])
        .produces(&[keys::SEISMIC_STRUCTURE])
        .label("Extract seismic interfaces")
        .module("seismic")
        .when(|ctx| {
            ctx.has(&[keys::SEISMIC_EVALUATION])
                || ctx.attempted("evaluate_seismic_inversion") > 0
                || ctx.skipped("evaluate_seismic_inversion")
        }),
    );
}

/// A JSON summary of a seismic data file, or `None` when it is not one.
pub fn read_summary(path: &std::path::Path) -> Option<Result<serde_json::Value, ReadError>> {
    crate::methods::seismic::read_summary(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value, json};
    use std::path::PathBuf;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("hgx-cat-seismic-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn ctx_with(inputs: Value, config: Value, out: &Path) -> RunContext {
        let inputs: Map<String, Value> = serde_json::from_value(inputs).unwrap();
        let config: Map<String, Value> = serde_json::from_value(config).unwrap();
        RunContext::new("Map the bedrock with seismic refraction")
            .with_config(config)
            .with_inputs(&inputs, Path::new("/"))
            .with_output_dir(out)
    }

    /// Store a handler's outputs in the run as the controller would.
    fn keep(
        ctx: &mut RunContext,
        tool: fn(&mut RunContext) -> ToolResult,
    ) -> (String, Vec<(PathBuf, String)>) {
        let (summary, out) = tool(ctx).unwrap();
        for (k, p, d) in out.products {
            ctx.put(&k, p, d);
        }
        for (f, _) in &out.figures {
            assert!(f.exists(), "figure {} written", f.display());
            assert!(
                std::fs::metadata(f).unwrap().len() > 5_000,
                "{}",
                f.display()
            );
        }
        (summary, out.figures)
    }

    /// pyGIMLi's Königsee settings (oracles/seismic.json `koenigsee_inversion`).
    fn pygimli_koenigsee() -> Value {
        json!({"seismic_inversion_params": {
            "lambda": 20.0, "z_weight": 0.2, "secondary_nodes": 3,
            "start": {"gradient": {"v_top_m_per_s": 500.0, "v_bottom_m_per_s": 5000.0}},
            "bounds": "none"
        }})
    }

    /// The chain on the real Königsee picks (../shared/data/seismic/gimli_koenigsee.sgt):
    /// load reports the oracle's pick count (oracles/seismic.json files.gimli_koenigsee.sgt
    /// n_picks = 714); the inversion through the tool with pyGIMLi's settings meets issue 7's
    /// χ² ≤ 3.5 and rrms ≤ 6 % (pyGIMLi 3.46 / 5.58 %) and says the 3 % error was assumed;
    /// the evaluation stores a quality score and its attempts; the interfaces at 1200 m/s
    /// (the default, said so) are written as x,z tables and handed on as InterfaceLines.
    #[test]
    fn koenigsee_through_the_tools() {
        let oracle = crate::require_oracle!("seismic.json");
        let p = crate::require_data!("seismic/gimli_koenigsee.sgt");
        let out = tmp("koenigsee");
        let mut ctx = ctx_with(
            json!({"seismic_file": p.display().to_string()}),
            pygimli_koenigsee(),
            &out,
        );
        let (s, figs) = keep(&mut ctx, load_seismic_traveltimes);
        let n = oracle["files"]["gimli_koenigsee.sgt"]["n_picks"]
            .as_u64()
            .unwrap();
        assert!(s.contains(&format!("{n} picks")), "{s}");
        assert!(s.contains("no errors in the file"), "{s}");
        assert_eq!(figs.len(), 1);
        let tt = held::<TravelTimes>(&ctx, keys::SEISMIC_TRAVELTIMES).unwrap();
        assert_eq!(tt.n_data() as u64, n);

        let (s, figs) = keep(&mut ctx, invert_seismic);
        eprintln!("{s}");
        assert!(s.contains("3.0 % relative error"), "{s}");
        assert_eq!(figs.len(), 3);
        let nums = ctx.product(keys::SEISMIC_RESULTS).unwrap().key_numbers();
        let chi2 = nums["chi2"].as_f64().unwrap();
        let rrms = nums["rrms_percent"].as_f64().unwrap();
        assert!(chi2 <= 3.5, "χ² {chi2}");
        assert!(rrms <= 6.0, "rrms {rrms}");
        assert_eq!(nums["n_data"].as_u64(), Some(n));
        assert!(
            ctx.product(keys::SEISMIC_RESULTS)
                .unwrap()
                .report_markdown()
                .unwrap()
                .contains("| χ² |")
        );

        // One attempt only (no retries) keeps this test short; the retry path is the
        // shared retry_lambda's, tested in methods::quality.
        ctx.config.insert("max_attempts".into(), json!(1));
        let (s, _) = keep(&mut ctx, evaluate_seismic_inversion);
        eprintln!("{s}");
        let v = held::<SeismicVerdict>(&ctx, keys::SEISMIC_EVALUATION).unwrap();
        assert_eq!(v.attempts.len(), 1);
        assert!(v.attempts[0].kept);
        assert!((v.evaluation.chi2 - chi2).abs() < 1e-12);
        let q = ctx.product(keys::SEISMIC_EVALUATION).unwrap().key_numbers()["quality_score"]
            .as_f64()
            .unwrap();
        assert!((0.0..=100.0).contains(&q));
        assert!(s.contains(&format!("Quality {q:.0}/100")), "{s}");

        let (s, figs) = keep(&mut ctx, extract_seismic_interfaces);
        eprintln!("{s}");
        assert!(s.contains("1200 m/s by default"), "{s}");
        assert_eq!(figs.len(), 1);
        let lines = held::<Vec<InterfaceLine>>(&ctx, keys::SEISMIC_STRUCTURE).unwrap();
        assert!(
            !lines.is_empty(),
            "Königsee has bedrock faster than 1200 m/s under cover"
        );
        for l in lines {
            assert_eq!(l.velocity_m_per_s, 1200.0);
            assert_eq!(l.x_m.len(), l.z_m.len());
            assert!(l.x_m.windows(2).all(|w| w[1] > w[0]));
        }
        let table = out.join("products/interface_1200ms.csv");
        let text = std::fs::read_to_string(&table).unwrap();
        assert!(text.starts_with("segment,x_m,z_m,depth_m\n"));
        let rows = text.lines().count() - 1;
        assert_eq!(rows, lines.iter().map(|l| l.x_m.len()).sum::<usize>());
        let _ = std::fs::remove_dir_all(&out);
    }

    /// Thresholds: a list, a single value, the 1200 m/s default (flagged), and a bad value
    /// refused with what was expected.
    #[test]
    fn thresholds_from_the_settings() {
        let out = tmp("thresholds");
        let c = |cfg: Value| ctx_with(json!({}), cfg, &out);
        assert_eq!(thresholds(&c(json!({}))).unwrap(), (vec![1200.0], true));
        assert_eq!(
            thresholds(&c(json!({"velocity_threshold": 1500}))).unwrap(),
            (vec![1500.0], false)
        );
        assert_eq!(
            thresholds(&c(json!({"velocity_thresholds": [800, 2000]}))).unwrap(),
            (vec![800.0, 2000.0], false)
        );
        let e = thresholds(&c(json!({"velocity_threshold": "fast"}))).unwrap_err();
        assert!(e.to_string().contains("m/s"), "{e}");
    }

    /// An unknown inversion setting is an error that names the field.
    #[test]
    fn unknown_inversion_setting_is_refused() {
        let p = crate::require_data!("seismic/phgx/srtfieldline2.dat");
        let out = tmp("unknown");
        let mut ctx = ctx_with(
            json!({"seismic_file": p.display().to_string()}),
            json!({"seismic_inversion_params": {"lamda": 5}}),
            &out,
        );
        keep(&mut ctx, load_seismic_traveltimes);
        let e = invert_seismic(&mut ctx).unwrap_err().to_string();
        assert!(e.contains("lamda") && e.contains("lambda"), "{e}");
    }

    /// A real raw shot (PyRefra's Rec_00001.seg2, 60 traces at 1 m, 0.25 ms): the picking
    /// tool picks it (at least 50 of 60 traces — `pyrefra_shot_near_offsets_match_manual_picks`
    /// in methods::seismic::picking compares the same picks with Zeyen's manual ones), states
    /// the pre-trigger decision, and hands usable travel times on.
    #[test]
    fn picks_a_real_seg2_shot() {
        let p = crate::require_data!("seismic/pyrefra_example/Rec_00001.seg2");
        let out = tmp("seg2");
        let mut ctx = ctx_with(
            json!({"seg2_files": [p.display().to_string()]}),
            json!({}),
            &out,
        );
        let (s, figs) = keep(&mut ctx, pick_first_breaks);
        eprintln!("{s}");
        assert!(s.contains("on 60 traces of 1 shots"), "{s}");
        assert_eq!(figs.len(), 1);
        let picks = held::<SeismicPicks>(&ctx, keys::SEISMIC_PICKS).unwrap();
        let n = picks.shots[0].n_picked();
        assert!(n >= 50, "{n}");
        assert_eq!(picks.traveltimes.n_data(), n);
        assert!(
            picks.shots[0]
                .notes
                .iter()
                .any(|n| n.contains("pre-trigger")),
            "{:?}",
            picks.shots[0].notes
        );
        let md = ctx
            .product(keys::SEISMIC_PICKS)
            .unwrap()
            .report_markdown()
            .unwrap();
        assert!(md.contains("| shot x (m) |"));
    }

    /// A station file whose origin differs from the SEG-Y headers: with nobody to answer,
    /// the default (the station file) is taken and the note says so; `align_origin:
    /// "headers"` keeps the headers' positions without asking.
    #[test]
    fn origin_disagreement_is_asked() {
        let out = tmp("origin");
        let truth = crate::example::Truth::default();
        let roles = crate::example::seismic::write(&truth, &out).unwrap();
        let stations = out.join("stations.csv");
        let mut text = String::from("station,x,elevation\n");
        for i in 0..48 {
            text.push_str(&format!("{},{},{}\n", i + 1, 100.0 + 2.0 * i as f64, 100.0));
        }
        std::fs::write(&stations, text).unwrap();
        let inputs = json!({
            "segy_file": out.join(&roles[1].1).display().to_string(),
            "geophone_file": stations.display().to_string(),
        });
        let mut ctx = ctx_with(inputs.clone(), json!({}), &out);
        keep(&mut ctx, pick_first_breaks);
        assert_eq!(ctx.questions.len(), 1, "asked once");
        let picks = held::<SeismicPicks>(&ctx, keys::SEISMIC_PICKS).unwrap();
        assert!((picks.shots[0].source_x_m - 148.0).abs() < 1e-6);
        assert!(
            picks
                .notes
                .iter()
                .any(|n| n.contains("shifted by +100.00 m"))
        );
        let mut ctx = ctx_with(inputs, json!({"align_origin": "headers"}), &out);
        keep(&mut ctx, pick_first_breaks);
        assert!(ctx.questions.is_empty());
        let picks = held::<SeismicPicks>(&ctx, keys::SEISMIC_PICKS).unwrap();
        assert!((picks.shots[0].source_x_m - 48.0).abs() < 1e-6);
        let _ = std::fs::remove_dir_all(&out);
    }

    /// The controller over the whole registry with only a seismic travel-time file (the
    /// real srtfieldline2.dat, 357 picks): the seismic steps run in dependency order, each
    /// ends ok, and the raw-shot picker is not offered (no raw shots given).
    #[test]
    fn drive_runs_the_seismic_steps_in_order() {
        use crate::runtime::controller::RunOptions;
        let p = crate::require_data!("seismic/phgx/srtfieldline2.dat");
        let out = tmp("drive");
        let mut ctx = ctx_with(
            json!({"seismic_file": p.display().to_string()}),
            json!({"max_attempts": 1}),
            &out,
        );
        let reg = crate::catalog::registry();
        crate::runtime::controller::drive(&mut ctx, &reg, None, &RunOptions::default());
        let seismic: Vec<(&str, crate::runtime::StepStatus)> = ctx
            .steps
            .iter()
            .filter(|s| reg.get(&s.tool).is_some_and(|t| t.module == "seismic"))
            .map(|s| (s.tool.as_str(), s.status))
            .collect();
        eprintln!("{seismic:?}");
        let names: Vec<&str> = seismic.iter().map(|s| s.0).collect();
        assert_eq!(
            names,
            [
                "load_seismic_traveltimes",
                "invert_seismic",
                "evaluate_seismic_inversion",
                "extract_seismic_interfaces"
            ]
        );
        assert!(
            seismic
                .iter()
                .all(|s| s.1 == crate::runtime::StepStatus::Ok),
            "{seismic:?}"
        );
        let _ = std::fs::remove_dir_all(&out);
    }
}

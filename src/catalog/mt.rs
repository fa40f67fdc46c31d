//! The MT tools: read the sites (`mt_files` or `mt_dir`), invert each with Occam 1D
//! (Constable et al. 1987), judge each inversion with the shared rubric (the dimensionality
//! verdict stated beside the score, unscored), and — when the goal asks for water content and
//! no ERT model exists — convert the layered models to water content per layer.
//!
//! The studio's MT panel calls the same functions ([`read_sites`], [`invert_sites`],
//! [`MtParams`]), so a button and a step behave identically.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::anyhow;
use serde::{Deserialize, Serialize};

use super::common::{Held, figure_path, held, product_path};
use super::{intent, keys};
use crate::methods::io::ReadError;
use crate::methods::mt::{
    self, MtSiteInversion, MtSounding, MtWaterContent, OccamMode, OccamOptions, SoundingOptions,
    TransferFunction,
};
use crate::methods::petro::{PetroConfig, PetroPrior, water_content_by_layer_csv};
use crate::report::figures::{Axes, Series, Style, line_plot};
use crate::runtime::{Outputs, Registry, RunContext, Tool};

/// The `mt_params` setting (every key optional; an unknown key is refused naming the valid
/// ones).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MtParams {
    /// Which curves to invert: `det` (default), `xy`, `yx` or `both`.
    pub mode: OccamMode,
    /// Error floor on |Z|, percent (5 % → 10 % in ρa and 2.9° in phase).
    pub error_floor_percent: f64,
    /// Layers of the automatic log-spaced mesh (including the half-space).
    pub n_layers: usize,
    /// Explicit layer thicknesses, m (top-down; one fewer than the layers). Overrides
    /// `n_layers`.
    pub thickness_m: Option<Vec<f64>>,
    /// Target RMS misfit.
    pub target_rms: f64,
    /// Iteration cap.
    pub max_iterations: usize,
    /// Estimate one static-shift factor per curve.
    pub static_shift: bool,
    /// Uniform start model, Ω·m (default: the geometric mean of the apparent resistivities).
    pub start_resistivity_ohm_m: Option<f64>,
}

impl Default for MtParams {
    fn default() -> Self {
        let s = SoundingOptions::default();
        let o = OccamOptions::default();
        MtParams {
            mode: s.mode,
            error_floor_percent: s.z_error_floor_percent,
            n_layers: o.n_layers,
            thickness_m: None,
            target_rms: o.target_rms,
            max_iterations: o.max_iterations,
            static_shift: o.estimate_static_shift,
            start_resistivity_ohm_m: None,
        }
    }
}

impl MtParams {
    /// The curve options.
    pub fn sounding_options(&self) -> SoundingOptions {
        SoundingOptions {
            mode: self.mode,
            z_error_floor_percent: self.error_floor_percent,
        }
    }

    /// The Occam options.
    pub fn occam_options(&self) -> OccamOptions {
        OccamOptions {
            thickness_m: self.thickness_m.clone(),
            n_layers: self.n_layers,
            target_rms: self.target_rms,
            max_iterations: self.max_iterations,
            start_resistivity_ohm_m: self.start_resistivity_ohm_m,
            estimate_static_shift: self.static_shift,
            ..OccamOptions::default()
        }
    }

    /// The mode's JSON name (`det`, `xy`, `yx`, `both`).
    pub fn mode_name(&self) -> String {
        serde_json::to_value(self.mode)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }
}

/// One site as read: a full transfer function, or ρa/φ curves from a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SiteData {
    /// An impedance (or ρa/φ) transfer function from EDI, EMTF XML, Z-file, J-file or AVG.
    Transfer(Box<TransferFunction>),
    /// A ρa/φ table (Occam 1D layout or the benchmark CSV).
    Table(MtSounding),
}

/// One file read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MtSite {
    /// The file.
    pub path: PathBuf,
    /// Site name (from the file, else the file stem).
    pub site: String,
    /// What was read.
    pub data: SiteData,
}

impl MtSite {
    /// Periods, s.
    pub fn period_s(&self) -> &[f64] {
        match &self.data {
            SiteData::Transfer(tf) => &tf.period_s,
            SiteData::Table(s) => &s.period_s,
        }
    }

    /// Format label and whether it was guessed.
    pub fn format(&self) -> (String, bool) {
        match &self.data {
            SiteData::Transfer(tf) => (tf.format.label().to_string(), tf.format_guessed),
            SiteData::Table(s) => (s.format_label.clone(), s.format_guessed),
        }
    }

    /// The acquisition date, when the file states one.
    pub fn acquired_date(&self) -> Option<&str> {
        match &self.data {
            SiteData::Transfer(tf) => tf.acquired_date.as_deref(),
            SiteData::Table(_) => None,
        }
    }

    /// The reader's notes.
    pub fn notes(&self) -> &[String] {
        match &self.data {
            SiteData::Transfer(tf) => &tf.notes,
            SiteData::Table(s) => &s.notes,
        }
    }
}

/// The sites of a run (`keys::MT_DATA`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MtSites {
    /// Sites read, in file-name order.
    pub sites: Vec<MtSite>,
    /// Files that could not be read: (file, why).
    pub unreadable: Vec<(String, String)>,
}

/// The inversions of a run (`keys::MT_RESULTS`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MtInversions {
    /// The settings actually used.
    pub params: MtParams,
    /// One per site, in the order of [`MtSites::sites`].
    pub sites: Vec<MtSiteInversion>,
    /// Sites that could not be inverted: (site, why).
    pub failed: Vec<(String, String)>,
}

/// Whether `path` is a file one of the MT readers claims (by extension or signature).
fn is_mt_file(path: &Path) -> bool {
    path.is_file() && mt::read_summary(path).is_some()
}

/// Read one file as a site; `None` when no MT reader claims it.
pub fn read_site(path: &Path) -> Option<Result<MtSite, ReadError>> {
    let head = std::fs::read(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b[..b.len().min(4096)]).into_owned())?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let data = if mt::table::looks_like_sounding_table(&head) && !head.trim_start().starts_with('>')
    {
        mt::read_sounding_table(path).map(SiteData::Table)
    } else {
        mt::read_summary(path).is_some().then_some(())?;
        mt::read_transfer_function(path).map(|tf| SiteData::Transfer(Box::new(tf)))
    };
    Some(data.map(|data| {
        let site = match &data {
            SiteData::Transfer(tf) if !tf.site.trim().is_empty() => tf.site.clone(),
            SiteData::Table(s) if !s.site.trim().is_empty() => s.site.clone(),
            _ => stem,
        };
        MtSite {
            path: path.to_path_buf(),
            site,
            data,
        }
    }))
}

/// The files of a folder that an MT reader claims, sorted by name.
pub fn files_in_dir(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| is_mt_file(p))
        .collect();
    out.sort();
    Ok(out)
}

/// Read every file; files no reader could read are listed with the reason, not fatal.
pub fn read_sites(paths: &[PathBuf]) -> MtSites {
    let mut sites = Vec::new();
    let mut unreadable = Vec::new();
    for p in paths {
        match read_site(p) {
            Some(Ok(s)) => sites.push(s),
            Some(Err(e)) => unreadable.push((p.display().to_string(), e.to_string())),
            None => unreadable.push((
                p.display().to_string(),
                "not an MT file: expected EDI, EMTF XML, .zmm/.zrr/.zss, BIRRP .j, Zonge .avg or \
                 a period/rho/phase table"
                    .to_string(),
            )),
        }
    }
    MtSites { sites, unreadable }
}

/// Invert every site with `params` (the same call as the panel's Run). Progress runs over
/// the sites; a cancel stops between iterations and ends with an error.
pub fn invert_sites(
    data: &MtSites,
    params: &MtParams,
    progress: &mut dyn FnMut(f64, &str),
    cancel: &AtomicBool,
) -> Result<MtInversions, String> {
    let n = data.sites.len().max(1) as f64;
    let (sopts, oopts) = (params.sounding_options(), params.occam_options());
    let mut sites = Vec::new();
    let mut failed = Vec::new();
    for (i, site) in data.sites.iter().enumerate() {
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return Err("cancelled".into());
        }
        let name = site.site.clone();
        let mut per = |f: f64, d: &str| progress((i as f64 + f) / n, &format!("{name}: {d}"));
        let r = match &site.data {
            SiteData::Transfer(tf) => {
                mt::invert_site(tf, &sopts, &oopts, Some(&mut per), Some(cancel))
            }
            SiteData::Table(s) => {
                let mut s = s.clone();
                mt::apply_error_floor(&mut s, params.error_floor_percent);
                mt::invert_sounding(s, None, None, &oopts, Some(&mut per), Some(cancel))
            }
        };
        match r {
            Ok(r) => sites.push(r),
            Err(e) => {
                if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                    return Err("cancelled".into());
                }
                failed.push((name, e.to_string()))
            }
        }
    }
    progress(1.0, "done");
    Ok(MtInversions {
        params: params.clone(),
        sites,
        failed,
    })
}

fn sci(x: f64) -> String {
    crate::runtime::product::short_num(x)
}

fn range_of(v: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (a, b) = v
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    a.is_finite().then_some((a, b))
}

// ----- load_mt_sites ----------------------------------------------------------------------

/// The load step.
pub fn load_mt_sites(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let mut paths = ctx.input_paths("mt_files");
    if let Some(dir) = ctx.input_path("mt_dir") {
        let found = files_in_dir(&dir).map_err(|e| {
            anyhow!(
                "could not list the MT folder {}: {e}; check that mt_dir names a folder",
                dir.display()
            )
        })?;
        if found.is_empty() {
            return Err(anyhow!(
                "no MT transfer-function file in {}: expected .edi, .xml (EMTF), .zmm/.zrr/.zss, \
                 .j or .avg files",
                dir.display()
            ));
        }
        paths.extend(found);
    }
    if paths.is_empty() {
        return Err(anyhow!(
            "no MT files given: name them under inputs.mt_files (a list) or inputs.mt_dir (a folder)"
        ));
    }
    let data = read_sites(&paths);
    for (f, why) in &data.unreadable {
        ctx.note(&format!("MT file left out: {f}: {why}"));
    }
    if data.sites.is_empty() {
        let why: Vec<String> = data
            .unreadable
            .iter()
            .map(|(f, e)| format!("{f}: {e}"))
            .collect();
        return Err(anyhow!(
            "none of the {} MT files could be read: {}",
            paths.len(),
            why.join("; ")
        ));
    }
    let summary = sites_summary(&data);
    let mut dates: Vec<String> = data
        .sites
        .iter()
        .filter_map(|s| s.acquired_date().map(str::to_string))
        .collect();
    dates.sort();
    dates.dedup();
    let n_periods: usize = data.sites.iter().map(|s| s.period_s().len()).sum();
    let detail = data
        .sites
        .iter()
        .map(|s| {
            let (f, g) = s.format();
            let p = s.period_s();
            format!(
                "{}: {f}{}, {} periods {}–{} s ({})",
                s.site,
                if g { " (format guessed)" } else { "" },
                p.len(),
                p.first().map_or("-".into(), |v| sci(*v)),
                p.last().map_or("-".into(), |v| sci(*v)),
                s.path.display()
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let held = Held::new(
        data.clone(),
        format!(
            "{} MT sites ({} periods in all)",
            data.sites.len(),
            n_periods
        ),
    )
    .detail(detail)
    .number("n_sites", data.sites.len())
    .number("n_periods", n_periods)
    .number("n_unreadable", data.unreadable.len())
    .number("survey_dates", dates);
    Ok((summary, Outputs::new().put(keys::MT_DATA, Arc::new(held))))
}

/// What was found, in numbers a reader can check.
pub fn sites_summary(data: &MtSites) -> String {
    let mut formats: Vec<(String, usize)> = Vec::new();
    for s in &data.sites {
        let (f, _) = s.format();
        match formats.iter_mut().find(|(k, _)| *k == f) {
            Some((_, n)) => *n += 1,
            None => formats.push((f, 1)),
        }
    }
    let fmt: Vec<String> = formats.iter().map(|(f, n)| format!("{f} ×{n}")).collect();
    let guessed = data.sites.iter().filter(|s| s.format().1).count();
    let counts: Vec<usize> = data.sites.iter().map(|s| s.period_s().len()).collect();
    let (cmin, cmax) = (
        counts.iter().min().copied().unwrap_or(0),
        counts.iter().max().copied().unwrap_or(0),
    );
    let pr = range_of(data.sites.iter().flat_map(|s| s.period_s().iter().copied()));
    let n_tensor = data
        .sites
        .iter()
        .filter(|s| matches!(&s.data, SiteData::Transfer(tf) if tf.z_mv_km_nt.is_some()))
        .count();
    let n_tipper = data
        .sites
        .iter()
        .filter(|s| matches!(&s.data, SiteData::Transfer(tf) if tf.tipper.is_some()))
        .count();
    let signs: Vec<String> = data
        .sites
        .iter()
        .filter_map(|s| match &s.data {
            SiteData::Transfer(tf) => mt::sounding::detect_sign_convention(tf)
                .map(|c| format!("{}: {}", s.site, c.describe())),
            SiteData::Table(_) => None,
        })
        .collect();
    format!(
        "Read {} MT site{} ({}{}): {} periods each{}; {} with an impedance tensor, {} with tipper. {}{}",
        data.sites.len(),
        if data.sites.len() == 1 { "" } else { "s" },
        fmt.join(", "),
        if guessed > 0 {
            format!("; format of {guessed} recognised from content, not extension")
        } else {
            String::new()
        },
        if cmin == cmax {
            cmin.to_string()
        } else {
            format!("{cmin}–{cmax}")
        },
        pr.map(|(a, b)| format!(", {} to {} s", sci(a), sci(b)))
            .unwrap_or_default(),
        n_tensor,
        n_tipper,
        if signs.is_empty() {
            String::new()
        } else {
            format!("Sign convention from the phases: {}. ", signs.join("; "))
        },
        if data.unreadable.is_empty() {
            String::new()
        } else {
            format!(
                "{} file(s) could not be read and were left out: {}.",
                data.unreadable.len(),
                data.unreadable
                    .iter()
                    .map(|(f, e)| format!("{f} ({e})"))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }
    )
}

// ----- invert_mt --------------------------------------------------------------------------

/// The inversion step.
pub fn invert_mt(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let params: MtParams = ctx.params("mt_params").map_err(|e| anyhow!("{e}"))?;
    let data = held::<MtSites>(ctx, keys::MT_DATA)
        .cloned()
        .ok_or_else(|| anyhow!("no MT sites loaded: run load_mt_sites first"))?;
    let cancel = ctx.cancel_flag();
    let inv = {
        let c = &*ctx;
        let mut progress = |f: f64, d: &str| c.progress(f, d);
        invert_sites(&data, &params, &mut progress, &cancel)
            .map_err(|e| anyhow!("MT inversion {e}"))?
    };
    if inv.sites.is_empty() {
        return Err(anyhow!(
            "no MT site could be inverted: {}",
            inv.failed
                .iter()
                .map(|(s, e)| format!("{s}: {e}"))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    let mut out = Outputs::new();
    for (path, caption) in inversion_figures(ctx, &inv)? {
        out = out.figure(path, &caption);
    }
    let rms: Vec<f64> = inv.sites.iter().map(|s| s.result.rms).collect();
    let chi2: Vec<f64> = inv.sites.iter().map(|s| s.result.chi2).collect();
    let lines: Vec<String> = inv
        .sites
        .iter()
        .map(|s| {
            let r = &s.result;
            format!(
                "{}: RMS {:.2} (χ² {:.2}) after {} iterations, μ {}, {} data, {} layers{}{}",
                s.site,
                r.rms,
                r.chi2,
                r.iterations,
                sci(r.lambda),
                r.n_data,
                r.n_cells,
                r.doi_m
                    .map(|d| format!(", DOI ≈ {d:.0} m"))
                    .unwrap_or_default(),
                if r.reached_target {
                    String::new()
                } else {
                    format!(
                        " (target RMS {} NOT reached: {})",
                        params.target_rms, r.stop_reason
                    )
                }
            )
        })
        .collect();
    let summary = format!(
        "Inverted {} MT site{} ({} curves, Occam 1D, {} layers, error floor {} % on |Z|{}): {}.{}",
        inv.sites.len(),
        if inv.sites.len() == 1 { "" } else { "s" },
        params.mode_name(),
        inv.sites[0].result.n_cells,
        params.error_floor_percent,
        if params.static_shift {
            ", static shift estimated"
        } else {
            ""
        },
        lines.join("; "),
        if inv.failed.is_empty() {
            String::new()
        } else {
            format!(
                " Not inverted: {}.",
                inv.failed
                    .iter()
                    .map(|(s, e)| format!("{s} ({e})"))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }
    );
    let max_chi2 = chi2.iter().copied().fold(f64::NAN, f64::max);
    let held = Held::new(
        inv.clone(),
        format!(
            "{} MT layered models (RMS {})",
            inv.sites.len(),
            rms.iter()
                .map(|r| format!("{r:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
    .detail(lines.join("\n"))
    .number("chi2", max_chi2)
    .number("chi2_by_site", chi2)
    .number("rms_by_site", rms)
    .number(
        "iterations",
        inv.sites
            .iter()
            .map(|s| s.result.iterations)
            .max()
            .unwrap_or(0),
    )
    .number(
        "n_data",
        inv.sites.iter().map(|s| s.result.n_data).sum::<usize>(),
    )
    .number("n_cells", inv.sites[0].result.n_cells);
    let held = match write_models_csv(ctx, &inv) {
        Ok(p) => held.file(p),
        Err(e) => {
            ctx.note(&format!("Could not write mt_models.csv: {e}"));
            held
        }
    };
    Ok((summary, out.put(keys::MT_RESULTS, Arc::new(held))))
}

/// `products/mt_models.csv`: one row per site and layer, units in the column names.
fn write_models_csv(ctx: &RunContext, inv: &MtInversions) -> std::io::Result<PathBuf> {
    use std::fmt::Write;
    let path = product_path(ctx, "mt_models.csv")?;
    let mut s = String::from("site,depth_top_m,depth_bottom_m,resistivity_ohm_m,below_doi\n");
    for site in &inv.sites {
        let m = &site.result.model;
        let tops = m.depth_top_m();
        for (i, rho) in m.resistivity_ohm_m.iter().enumerate() {
            let bottom = m
                .thickness_m
                .get(i)
                .map_or("inf".to_string(), |h| format!("{}", tops[i] + h));
            let below = site.result.doi_m.is_some_and(|d| tops[i] > d);
            let _ = writeln!(
                s,
                "{},{},{bottom},{rho},{below}",
                csv_text(&site.site),
                tops[i]
            );
        }
    }
    std::fs::write(&path, s)?;
    Ok(path)
}

fn csv_text(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// At most this many sites share one figure (more would be unreadable).
const MAX_SITES_PER_FIGURE: usize = 6;

/// ρa and φ curves with the fit, and the layered models with the DOI.
fn inversion_figures(
    ctx: &RunContext,
    inv: &MtInversions,
) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let shown: Vec<&MtSiteInversion> = inv.sites.iter().take(MAX_SITES_PER_FIGURE).collect();
    let more = if inv.sites.len() > shown.len() {
        format!(" (first {} of {} sites)", shown.len(), inv.sites.len())
    } else {
        String::new()
    };
    let mut rho_series = Vec::new();
    let mut phase_series = Vec::new();
    let mut model_series = Vec::new();
    let mut depth_max: f64 = 0.0;
    for (k, s) in shown.iter().enumerate() {
        let colour = PALETTE[k % PALETTE.len()];
        for (obs, pred) in s.sounding.curves.iter().zip(&s.result.predicted) {
            let name = format!("{} {}", s.site, obs.mode.label());
            let p = &s.sounding.period_s;
            let up: Vec<f64> = obs
                .rhoa_ohm_m
                .iter()
                .zip(&obs.log10_rhoa_std)
                .map(|(r, e)| r * (10f64.powf(*e) - 1.0))
                .collect();
            rho_series.push(
                Series::points(
                    &format!("{name} observed"),
                    p.clone(),
                    obs.rhoa_ohm_m.clone(),
                )
                .colour(colour)
                .errors(up),
            );
            rho_series.push(
                Series::line(&format!("{name} model"), p.clone(), pred.rhoa_ohm_m.clone())
                    .colour(colour),
            );
            phase_series.push(
                Series::points(
                    &format!("{name} observed"),
                    p.clone(),
                    obs.phase_deg.clone(),
                )
                .colour(colour)
                .errors(obs.phase_std_deg.clone()),
            );
            phase_series.push(
                Series::line(&format!("{name} model"), p.clone(), pred.phase_deg.clone())
                    .colour(colour),
            );
        }
        let (x, y) = model_steps(&s.result.model, s.result.doi_m);
        depth_max = depth_max.max(y.last().copied().unwrap_or(0.0));
        let (rmin, rmax) = range_of(x.iter().copied()).unwrap_or((1.0, 10.0));
        model_series.push(Series::line(&s.site, x, y).colour(colour));
        if let Some(d) = s.result.doi_m {
            model_series.push(
                Series::line(
                    &format!("{} DOI {d:.0} m", s.site),
                    vec![rmin, rmax],
                    vec![d, d],
                )
                .colour(colour)
                .style(Style::Dashed),
            );
        }
    }
    let mut figs = Vec::new();
    let p = figure_path(ctx, "mt_apparent_resistivity")?;
    line_plot(
        &p,
        &Axes::new(
            &format!("MT apparent resistivity: observed and Occam 1D fit{more}"),
            "Period (s)",
            "Apparent resistivity (Ω·m)",
        )
        .log(true, true),
        &rho_series,
    )?;
    figs.push((
        p,
        format!("Apparent resistivity ρa (Ω·m) against period (s): observed with error bars (points) and the Occam 1D model's response (lines){more}."),
    ));
    let p = figure_path(ctx, "mt_phase")?;
    line_plot(
        &p,
        &Axes::new(
            &format!("MT impedance phase: observed and Occam 1D fit{more}"),
            "Period (s)",
            "Phase (°)",
        )
        .log(true, false),
        &phase_series,
    )?;
    figs.push((
        p,
        format!("Impedance phase (degrees, first quadrant) against period (s): observed with error bars and the model's response{more}."),
    ));
    let p = figure_path(ctx, "mt_models")?;
    let mut axes = Axes::new(
        &format!("MT Occam 1D layered models{more}"),
        "Resistivity (Ω·m)",
        "Depth (m)",
    )
    .log(true, false)
    .flipped();
    axes.y_range = Some((0.0, depth_max.max(1.0)));
    line_plot(&p, &axes, &model_series)?;
    figs.push((
        p,
        format!("Occam 1D resistivity (Ω·m) against depth (m) per site; dashed: the approximate depth of investigation (Niblett–Bostick depth of the longest period){more}. Below it the model is set by the smoothing, not the data."),
    ));
    Ok(figs)
}

const PALETTE: [(u8, u8, u8); 6] = [
    (31, 119, 180),
    (214, 39, 40),
    (44, 160, 44),
    (255, 127, 14),
    (148, 103, 189),
    (140, 86, 75),
];

/// A layered model as a staircase (ρ, depth) down to 1.5 × the DOI (or 1.5 × the top of
/// the half-space when no DOI is known).
pub fn model_steps(model: &mt::LayeredEarth, doi_m: Option<f64>) -> (Vec<f64>, Vec<f64>) {
    let tops = model.depth_top_m();
    let last_top = tops.last().copied().unwrap_or(0.0);
    let bottom = doi_m.map_or(1.5 * last_top.max(1.0), |d| 1.5 * d);
    let mut x = Vec::new();
    let mut y = Vec::new();
    for (i, rho) in model.resistivity_ohm_m.iter().enumerate() {
        let top = tops[i];
        if top >= bottom {
            break;
        }
        let bot = tops.get(i + 1).copied().unwrap_or(bottom).min(bottom);
        x.extend([*rho, *rho]);
        y.extend([top, bot]);
    }
    (x, y)
}

// ----- evaluate_mt_inversion --------------------------------------------------------------

/// The evaluations of a run (`keys::MT_EVALUATION`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MtEvaluations {
    /// One per inverted site.
    pub sites: Vec<mt::MtEvaluation>,
    /// Mean score over the sites.
    pub quality_score: f64,
    /// Every site passed.
    pub passed: bool,
    /// Sites where a 1D interpretation is not defensible.
    pub not_one_d: Vec<String>,
}

/// The evaluation step.
pub fn evaluate_mt(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let inv = held::<MtInversions>(ctx, keys::MT_RESULTS)
        .cloned()
        .ok_or_else(|| anyhow!("no MT inversion in this run: run invert_mt first"))?;
    let evals: Vec<mt::MtEvaluation> = inv.sites.iter().map(|s| s.evaluation.clone()).collect();
    if evals.is_empty() {
        return Err(anyhow!("the MT inversion holds no site to evaluate"));
    }
    let score = evals.iter().map(|e| e.quality_score).sum::<f64>() / evals.len() as f64;
    let passed = evals.iter().all(|e| e.quality.passed);
    let not_one_d: Vec<String> = evals
        .iter()
        .filter(|e| {
            e.dimensionality.is_some_and(|d| {
                !d.one_d_defensible() && d != mt::DimensionalityVerdict::NotAssessable
            })
        })
        .map(|e| e.site.clone())
        .collect();
    let flagged: Vec<String> = evals
        .iter()
        .filter(|e| e.static_shift_flagged)
        .map(|e| e.site.clone())
        .collect();
    let summary = format!(
        "{} of {} MT sites pass the quality rubric (mean score {:.0}/100; {}). {}{}",
        evals.iter().filter(|e| e.quality.passed).count(),
        evals.len(),
        score,
        evals
            .iter()
            .map(|e| format!("{} {:.0} at RMS {:.2}", e.site, e.quality_score, e.rms))
            .collect::<Vec<_>>()
            .join(", "),
        if not_one_d.is_empty() {
            "The dimensionality indicators support a 1D interpretation where they could be assessed. ".to_string()
        } else {
            format!(
                "1D is NOT defensible at {} (phase-tensor skew / Swift skew): read those layered models with caution. ",
                not_one_d.join(", ")
            )
        },
        if flagged.is_empty() {
            String::new()
        } else {
            format!(
                "Static shift larger than a factor {} flagged at {}.",
                mt::quality::STATIC_SHIFT_FACTOR,
                flagged.join(", ")
            )
        }
    );
    let report = evaluation_report(&inv, &evals);
    let value = MtEvaluations {
        sites: evals.clone(),
        quality_score: score,
        passed,
        not_one_d,
    };
    let held = Held::new(
        value,
        format!(
            "MT quality: mean score {score:.0}/100, {}",
            if passed {
                "all sites pass"
            } else {
                "not every site passes"
            }
        ),
    )
    .detail(
        evals
            .iter()
            .map(|e| e.summary.clone())
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .number("quality_score", score)
    .number("passed", passed)
    .number(
        "chi2",
        evals.iter().map(|e| e.chi2).fold(f64::NAN, f64::max),
    )
    .report(report);
    Ok((
        summary,
        Outputs::new().put(keys::MT_EVALUATION, Arc::new(held)),
    ))
}

/// The report section: settings used, results per site, the quality table.
pub fn evaluation_report(inv: &MtInversions, evals: &[mt::MtEvaluation]) -> String {
    use std::fmt::Write;
    let p = &inv.params;
    let mut md = String::from("### Magnetotellurics (MT)\n\n");
    let _ = writeln!(
        md,
        "Occam 1D inversion (Constable et al. 1987): the smoothest layered model at the target \
         RMS, reached in a first phase and smoothed at it in a second.\n"
    );
    md.push_str("| Setting | Value |\n|---|---|\n");
    let _ = writeln!(md, "| Curves inverted | {} |", p.mode_name());
    let _ = writeln!(
        md,
        "| Error floor on abs(Z) | {} % |",
        p.error_floor_percent
    );
    match &p.thickness_m {
        Some(t) => {
            let _ = writeln!(md, "| Layers | {} (thicknesses given) |", t.len() + 1);
        }
        None => {
            let _ = writeln!(
                md,
                "| Layers | {} (log-spaced from the skin depths) |",
                p.n_layers
            );
        }
    }
    let _ = writeln!(md, "| Target RMS | {} |", p.target_rms);
    let _ = writeln!(md, "| Iteration cap | {} |", p.max_iterations);
    let _ = writeln!(
        md,
        "| Static shift | {} |",
        if p.static_shift {
            "estimated per curve"
        } else {
            "not estimated"
        }
    );
    md.push_str("\n| Site | Data | Layers | Iterations | RMS | χ² | μ | DOI (m) | Static shift | Score | Passed | Dimensionality |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (s, e) in inv.sites.iter().zip(evals) {
        let r = &s.result;
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {:.2} | {:.2} | {} | {} | {} | {:.0} | {} | {} |",
            s.site,
            r.n_data,
            r.n_cells,
            r.iterations,
            r.rms,
            r.chi2,
            sci(r.lambda),
            r.doi_m.map_or(String::new(), |d| format!("{d:.0}")),
            e.static_shift_factor.map_or(String::new(), |f| format!(
                "×{f:.2}{}",
                if e.static_shift_flagged {
                    " (flagged)"
                } else {
                    ""
                }
            )),
            e.quality_score,
            if e.quality.passed { "yes" } else { "no" },
            e.dimensionality.map_or("", |d| d.word()),
        );
    }
    md.push_str("\nQuality components (shared rubric; dimensionality is stated, not scored):\n\n| Site | Component | Weight | Score | Note |\n|---|---|---|---|---|\n");
    for e in evals {
        for c in &e.quality.components {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                e.site,
                c.name,
                c.weight,
                c.score
                    .map_or("unscored".to_string(), |v| format!("{v:.0}")),
                c.note.replace('|', "/").replace('\n', " ")
            );
        }
    }
    md.push('\n');
    for e in evals {
        let _ = writeln!(md, "- {}", e.summary.replace('\n', " "));
    }
    md
}

// ----- convert_mt_water_content -------------------------------------------------------------

/// The water-content step.
pub fn convert_mt_water_content(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let inv = held::<MtInversions>(ctx, keys::MT_RESULTS)
        .cloned()
        .ok_or_else(|| anyhow!("no MT inversion in this run: run invert_mt first"))?;
    let cfg =
        PetroConfig::from_json(ctx.config.get("petrophysical_params")).map_err(|e| anyhow!(e))?;
    let n_real = ctx
        .config
        .get("n_realizations")
        .and_then(serde_json::Value::as_u64)
        .map(|n| n as usize);
    let (prior, implied) = cfg.prior("MT layers", &PetroPrior::default_regolith("MT layers"));
    let provenance = cfg.provenance(&prior);
    let opts = cfg.monte_carlo(n_real);
    let mut all = Vec::new();
    let mut rows = Vec::new();
    let multi = inv.sites.len() > 1;
    for (i, s) in inv.sites.iter().enumerate() {
        let w = mt::mt_water_content(
            multi.then_some(i),
            &s.result,
            std::slice::from_ref(&prior),
            None,
            &opts,
        )
        .map_err(|e| anyhow!("water content of MT site {}: {e}", s.site))?;
        rows.extend(w.layers.iter().cloned());
        all.push((s.site.clone(), w));
    }
    let csv = product_path(ctx, "water_content_by_layer.csv")?;
    std::fs::write(&csv, water_content_by_layer_csv(&rows))?;
    let first: &MtWaterContent = &all[0].1;
    let summary = format!(
        "Water content per layer for {} MT site{} ({} layers each, {} realizations, seed {}): {}. Prior: {}.{}",
        all.len(),
        if multi { "s" } else { "" },
        first.layers.len(),
        first.water.n_realizations,
        first.water.seed,
        all.iter()
            .map(|(site, w)| {
                let m: Vec<f64> = w
                    .layers
                    .iter()
                    .filter(|l| {
                        inv.sites
                            .iter()
                            .find(|s| &s.site == site)
                            .and_then(|s| s.result.doi_m)
                            .is_none_or(|d| l.depth_top_m <= d)
                    })
                    .map(|l| l.water_content_mean)
                    .collect();
                let (a, b) = range_of(m.into_iter()).unwrap_or((f64::NAN, f64::NAN));
                format!(
                    "{site} θ {a:.2}–{b:.2} m³/m³ above the DOI ({} layers below it)",
                    w.n_layers_below_doi
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
        provenance,
        if implied.is_empty() {
            String::new()
        } else {
            format!(" {}", implied.join(" "))
        }
    );
    let mut md = String::from("### MT water content per layer\n\n");
    md.push_str(&format!("Prior: {provenance}.\n\n"));
    for n in implied.iter().chain(first.notes.iter()) {
        md.push_str(&format!("- {n}\n"));
    }
    md.push_str("\nTable: `water_content_by_layer.csv` (θ in m³/m³ per layer and site).\n");
    let held = Held::new(
        all.clone(),
        format!("MT water content for {} site(s)", all.len()),
    )
    .number("n_sites", all.len())
    .number("n_realizations", first.water.n_realizations)
    .number(
        "prior_source",
        format!("{:?}", first.water.prior_source).to_lowercase(),
    )
    .file(csv)
    .report(md);
    Ok((
        summary,
        Outputs::new().put(keys::WATER_CONTENT, Arc::new(held)),
    ))
}

// ----- registration -----------------------------------------------------------------------

/// Register the MT tools, in dependency order.
pub fn register(reg: &mut Registry) {
    let _ = reg.register(
        Tool::new(
            "load_mt_sites",
            "Read magnetotelluric (MT) transfer-function files (EDI, EMTF XML, .zmm/.zrr/.zss Z-files, BIRRP J-files, Zonge AVG, or period/rho/phase tables) named by the project's mt_files list or found in its mt_dir folder; reports periods, units, sign convention and tipper per site.",
            load_mt_sites,
        )
        .produces(&[keys::MT_DATA])
        .label("Read the MT sites")
        .module("mt")
        .agent("MT")
        .when(|ctx| ctx.has_input("mt_files") || ctx.has_input("mt_dir")),
    );
    let _ = reg.register(
        Tool::new(
            "invert_mt",
            "Invert each MT site for a smooth 1D layered resistivity model with Occam's method (Constable et al. 1987) at the target RMS; settings under mt_params (mode det/xy/yx/both, error_floor_percent, n_layers, static_shift). Draws apparent resistivity and phase with the fit and the layered models with their depth of investigation.",
            invert_mt,
        )
        .requires(&[keys::MT_DATA])
        .produces(&[keys::MT_RESULTS])
        .label("Invert the MT sites (Occam 1D)")
        .module("mt")
        .agent("MT"),
    );
    let _ = reg.register(
        Tool::new(
            "evaluate_mt_inversion",
            "Judge each MT inversion with the shared quality rubric (fit from RMS, static shift, plausibility) and state whether a 1D interpretation is defensible from the phase-tensor skew, Swift skew and strike; writes the MT section of the report.",
            evaluate_mt,
        )
        .requires(&[keys::MT_RESULTS])
        .produces(&[keys::MT_EVALUATION])
        .label("Evaluate the MT inversions")
        .module("mt")
        .agent("MT"),
    );
    let _ = reg.register(
        Tool::new(
            "convert_mt_water_content",
            "Convert the MT layered models to volumetric water content per layer (Archie / Waxman-Smits with Monte Carlo uncertainty, petrophysical_params) and write water_content_by_layer.csv. Only for requests that ask for water content when the run has no ERT model.",
            convert_mt_water_content,
        )
        .requires(&[keys::MT_RESULTS])
        .produces(&[keys::WATER_CONTENT])
        .label("Convert MT resistivity to water content")
        .module("mt")
        .agent("MT")
        .when(|ctx| {
            intent::wants(&ctx.goal, keys::WATER_CONTENT)
                && ctx.product(keys::WATER_CONTENT).is_none()
                && !super::common::ert_model_in_run(ctx)
        })
        .applies(|ctx| !super::common::ert_model_in_run(ctx)),
    );
}

/// A JSON summary of an MT data file, or `None` when it is not one.
pub fn read_summary(path: &std::path::Path) -> Option<Result<serde_json::Value, ReadError>> {
    crate::methods::mt::read_summary(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::step::DecidedBy;
    use crate::runtime::{StepStatus, invoke};
    use serde_json::{Map, Value, json};

    fn registry() -> Registry {
        let mut reg = Registry::new();
        register(&mut reg);
        reg
    }

    fn ctx_with(goal: &str, inputs: Value, project: &Path, out: &Path) -> RunContext {
        let Value::Object(m) = inputs else {
            unreachable!()
        };
        RunContext::new(goal)
            .with_inputs(&m, project)
            .with_output_dir(out)
    }

    fn run(ctx: &mut RunContext, reg: &Registry, name: &str) -> StepStatus {
        invoke(ctx, reg, name, "test", DecidedBy::Policy)
    }

    /// The whole chain on the Cull (1985) table (Constable et al. 1987, Table 5) through the
    /// tools: the load summary states 1 site and 23 periods 0.02–1995 s (the file's first and
    /// last rows); the inversion reaches RMS ≤ 1.0 (issue 8's acceptance number, same as the
    /// methods test) and writes the three figures and `mt_models.csv`; the evaluation stores
    /// `quality_score` and a report section with the settings and the quality table.
    #[test]
    fn cull_table_through_load_invert_evaluate() {
        let path = crate::require_data!("mt/occam_aushield_Cull1985.dat");
        let tmp = tempfile::tempdir().unwrap();
        let project = path.parent().unwrap();
        let mut ctx = ctx_with(
            "Invert the MT sounding",
            json!({"mt_files": [path.file_name().unwrap().to_str().unwrap()]}),
            project,
            tmp.path(),
        );
        ctx.config
            .insert("mt_params".into(), json!({"error_floor_percent": 0.0}));
        let reg = registry();
        assert_eq!(run(&mut ctx, &reg, "load_mt_sites"), StepStatus::Ok);
        let s = &ctx.steps[0].summary;
        assert!(s.starts_with("Read 1 MT site ("), "{s}");
        assert!(s.contains("23 periods each, 0.02 to 1995 s"), "{s}");
        assert_eq!(
            run(&mut ctx, &reg, "invert_mt"),
            StepStatus::Ok,
            "{:?}",
            ctx.steps[1].error
        );
        let inv = held::<MtInversions>(&ctx, keys::MT_RESULTS).unwrap();
        let r = &inv.sites[0].result;
        assert!(r.rms <= 1.0, "RMS {}", r.rms);
        assert!(r.iterations <= 10, "{} iterations", r.iterations);
        assert_eq!(r.n_data, 46);
        assert_eq!(ctx.steps[1].figures.len(), 3);
        for f in &ctx.steps[1].figures {
            assert!(
                std::fs::metadata(&f.path).unwrap().len() > 10_000,
                "{:?}",
                f.path
            );
        }
        let csv = std::fs::read_to_string(tmp.path().join("products/mt_models.csv")).unwrap();
        assert_eq!(csv.lines().count(), 1 + r.n_cells);
        assert!(csv.starts_with("site,depth_top_m,depth_bottom_m,resistivity_ohm_m,below_doi"));
        assert_eq!(run(&mut ctx, &reg, "evaluate_mt_inversion"), StepStatus::Ok);
        let p = ctx.product(keys::MT_EVALUATION).unwrap();
        let q = p.key_numbers()["quality_score"].as_f64().unwrap();
        let ev = held::<MtEvaluations>(&ctx, keys::MT_EVALUATION).unwrap();
        assert_eq!(q, ev.sites[0].quality_score);
        assert!(
            ev.passed,
            "RMS ≤ 1 scores in the top fit band: {:?}",
            ev.sites[0].quality
        );
        let md = p.report_markdown().unwrap();
        assert!(md.contains("| Error floor on abs(Z) | 0 % |"), "{md}");
        assert!(md.contains("| plausibility |"), "{md}");
        // A table carries no tensor: the dimensionality component says so, unscored.
        assert!(
            md.contains("| dimensionality | 0 | unscored | not assessable"),
            "{md}"
        );
    }

    /// Real EDI files from a folder (`mt_dir`): the staged Metronix, Phoenix and SPECTRA EDIs
    /// are found (the other formats in the folder too), read, and their acquisition dates are
    /// the products' `survey_dates`. Then `mt_params` with an unknown key fails the inversion
    /// naming the valid keys.
    #[test]
    fn a_folder_of_real_files_loads_with_dates_and_bad_params_are_named() {
        let dir = crate::require_data!("mt/tf_edi_metronix.edi")
            .parent()
            .unwrap()
            .to_path_buf();
        let tmp = tempfile::tempdir().unwrap();
        let mut ctx = ctx_with(
            "Invert the MT sites",
            json!({"mt_dir": "."}),
            &dir,
            tmp.path(),
        );
        let reg = registry();
        assert_eq!(
            run(&mut ctx, &reg, "load_mt_sites"),
            StepStatus::Ok,
            "{}",
            ctx.steps[0].error
        );
        let data = held::<MtSites>(&ctx, keys::MT_DATA).unwrap();
        let names: Vec<String> = data
            .sites
            .iter()
            .map(|s| s.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        for f in [
            "tf_edi_metronix.edi",
            "tf_edi_phoenix.edi",
            "NMX20.xml",
            "tf_zmm.zmm",
            "tf_jfile.j",
            "occam_aushield_Cull1985.dat",
        ] {
            assert!(names.iter().any(|n| n == f), "{f} not in {names:?}");
        }
        let dates = ctx.product(keys::MT_DATA).unwrap().key_numbers()["survey_dates"].clone();
        // Metronix: ACQDATE=08/17/14 (SEG EDI MM/DD/YY).
        assert!(
            dates.as_array().unwrap().iter().any(|d| d == "2014-08-17"),
            "{dates}"
        );
        let s = &ctx.steps[0].summary;
        assert!(
            s.contains(&format!("Read {} MT sites", data.sites.len())),
            "{s}"
        );
        ctx.config
            .insert("mt_params".into(), json!({"n_layer": 30}));
        assert_eq!(run(&mut ctx, &reg, "invert_mt"), StepStatus::Failed);
        let e = &ctx.steps[1].error;
        assert!(
            e.contains("n_layers") && e.contains("error_floor_percent"),
            "{e}"
        );
    }

    /// Water content only when asked and no ERT model exists; with the example's Archie
    /// setting the prior is the user's, the CSV has one row per site and layer, and the
    /// conductive Cull layers come out saturated (θ = φ).
    #[test]
    fn water_content_gate_and_table() {
        let path = crate::require_data!("mt/occam_aushield_Cull1985.dat");
        let tmp = tempfile::tempdir().unwrap();
        let inputs = json!({"mt_files": [path.display().to_string()]});
        let reg = registry();
        let gate = |ctx: &RunContext| {
            reg.get("convert_mt_water_content")
                .unwrap()
                .when
                .as_ref()
                .unwrap()(ctx)
        };
        let mut with_ert = inputs.clone();
        with_ert["ert_files"] = json!(["a.dat"]);
        assert!(!gate(&ctx_with(
            "what is the water content?",
            with_ert,
            tmp.path(),
            tmp.path()
        )));
        assert!(!gate(&ctx_with(
            "Invert the MT data",
            inputs.clone(),
            tmp.path(),
            tmp.path()
        )));
        let mut ctx = ctx_with("What is the water content?", inputs, tmp.path(), tmp.path());
        assert!(gate(&ctx));
        let mut cfg = Map::new();
        cfg.insert(
            "petrophysical_params".into(),
            json!({"relationship": "archie", "porosity": [0.35, 0.03],
                   "cementation_exponent_m": [1.8, 0.1], "saturation_exponent_n": [2.0, 0.1],
                   "fluid_resistivity_ohm_m": [20.0, 2.0], "source": "core"}),
        );
        cfg.insert("n_realizations".into(), json!(200));
        ctx = ctx.with_config(cfg);
        for t in ["load_mt_sites", "invert_mt", "convert_mt_water_content"] {
            assert_eq!(
                run(&mut ctx, &reg, t),
                StepStatus::Ok,
                "{t}: {:?}",
                ctx.steps.last().map(|s| &s.error)
            );
        }
        let s = &ctx.steps[2].summary;
        assert!(
            s.contains("every parameter given by the user (source given: core)"),
            "{s}"
        );
        assert!(s.contains("200 realizations"), "{s}");
        let csv = std::fs::read_to_string(tmp.path().join("products/water_content_by_layer.csv"))
            .unwrap();
        let inv = held::<MtInversions>(&ctx, keys::MT_RESULTS).unwrap();
        assert_eq!(csv.lines().count(), 1 + inv.sites[0].result.n_cells);
        let w = held::<Vec<(String, MtWaterContent)>>(&ctx, keys::WATER_CONTENT).unwrap();
        let wc = &w[0].1;
        // The Cull data are conductive (ρa 0.7–15 Ω·m): layers far below the brine-saturated
        // sand's ρw·φ^(−m) ≈ 132 Ω·m saturate (S clipped to 1), so θ = φ: the mean over the
        // realizations is the porosity prior's mean 0.35 within 0.01 (its sampling error is
        // 0.03/√200 ≈ 0.002) and nearly every realization is clipped.
        let conductive: Vec<usize> = (0..wc.layers.len())
            .filter(|&i| wc.layers[i].resistivity_ohm_m < 50.0)
            .collect();
        assert!(
            conductive.len() >= 5,
            "{} conductive layers",
            conductive.len()
        );
        for &i in &conductive {
            let l = &wc.layers[i];
            assert!(
                (l.water_content_mean - 0.35).abs() < 0.01,
                "layer {i}: {}",
                l.water_content_mean
            );
            assert!(
                wc.water.clipped_share[i] >= 0.95,
                "layer {i}: {}",
                wc.water.clipped_share[i]
            );
        }
        // Archie is monotone (θ ∝ ρ^(−1/n) below saturation): never more water in a more
        // resistive layer.
        let layers = &wc.layers;
        let lo = layers
            .iter()
            .min_by(|a, b| a.resistivity_ohm_m.total_cmp(&b.resistivity_ohm_m))
            .unwrap();
        let hi = layers
            .iter()
            .max_by(|a, b| a.resistivity_ohm_m.total_cmp(&b.resistivity_ohm_m))
            .unwrap();
        assert!(lo.water_content_mean >= hi.water_content_mean - 1e-12);
        assert!(!gate(&ctx), "made once");
    }

    /// Unreadable input: a folder with no MT file fails with what was expected; a list with
    /// one truncated EDI and one good file reads the good one and names the bad one.
    #[test]
    fn errors_say_what_is_wrong() {
        let good = crate::require_data!("mt/tf_edi_spectra_in.edi");
        let tmp = tempfile::tempdir().unwrap();
        let empty = tmp.path().join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        let reg = registry();
        let mut ctx = ctx_with("x", json!({"mt_dir": "empty"}), tmp.path(), tmp.path());
        assert_eq!(run(&mut ctx, &reg, "load_mt_sites"), StepStatus::Failed);
        assert!(
            ctx.steps[0].error.contains("no MT transfer-function file"),
            "{}",
            ctx.steps[0].error
        );
        let bad = tmp.path().join("bad.edi");
        std::fs::write(&bad, ">HEAD\n DATAID=x\n>=MTSECT\n>FREQ //3\n 1 2\n").unwrap();
        let mut ctx = ctx_with(
            "x",
            json!({"mt_files": [bad.display().to_string(), good.display().to_string()]}),
            tmp.path(),
            tmp.path(),
        );
        assert_eq!(run(&mut ctx, &reg, "load_mt_sites"), StepStatus::Ok);
        let s = &ctx.steps[0].summary;
        assert!(
            s.contains("Read 1 MT site")
                && s.contains("1 file(s) could not be read")
                && s.contains("bad.edi"),
            "{s}"
        );
    }

    /// The MT steps of a whole run over the catalog (no model): the three MT tools in
    /// dependency order, each ok, before the report.
    #[test]
    fn drive_runs_the_mt_steps_in_order() {
        let path = crate::require_data!("mt/tf_edi_spectra_in.edi");
        let tmp = tempfile::tempdir().unwrap();
        let mut ctx = ctx_with(
            "Invert the MT site",
            json!({"mt_files": [path.display().to_string()]}),
            tmp.path(),
            tmp.path(),
        );
        let reg = crate::catalog::registry();
        crate::runtime::drive(&mut ctx, &reg, None, &crate::runtime::RunOptions::default());
        let mt_steps: Vec<(&str, StepStatus)> = ctx
            .steps
            .iter()
            .filter(|s| s.module == "mt")
            .map(|s| (s.tool.as_str(), s.status))
            .collect();
        assert_eq!(
            mt_steps,
            vec![
                ("load_mt_sites", StepStatus::Ok),
                ("invert_mt", StepStatus::Ok),
                ("evaluate_mt_inversion", StepStatus::Ok)
            ],
            "{:?}",
            ctx.steps
                .iter()
                .map(|s| (&s.tool, &s.error))
                .collect::<Vec<_>>()
        );
        let last = ctx.steps.last().unwrap();
        assert_eq!(last.tool, "write_survey_report", "{:?}", last.error);
        assert_eq!(last.status, StepStatus::Ok, "{}", last.error);
        let md = std::fs::read_to_string(tmp.path().join("report.md")).unwrap();
        assert!(
            md.contains("Magnetotellurics (MT)"),
            "report lacks the MT section"
        );
    }
}

//! How the hydrological-model steps read in the report: what was read and how it was placed,
//! the forward's verdict, and the comparison with its table by depth; the comparison's CSV.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::compare::{ModelComparison, Verdict};
use super::forward::ForwardComparison;
use super::model::{HydroModel, file_label};
use crate::catalog::kit::format::num;
use crate::catalog::kit::markdown::cell;
use crate::catalog::kit::{keys, product_path};
use crate::runtime::RunContext;

/// One line: what the model is and how the line sits in it.
pub fn model_line(m: &HydroModel) -> String {
    format!(
        "hydrological model {} ({} columns × {} rows × {} layers), line from ({}, {}) at azimuth {}°, water table from {}",
        m.format,
        m.grid.delr.len(),
        m.grid.delc.len(),
        m.grid.nlay(),
        num(m.line.origin_xy[0]),
        num(m.line.origin_xy[1]),
        num(m.line.azimuth_deg),
        m.water_table_source()
            .map_or("nothing (no pressure, heads or saturation)", |s| s.words())
    )
}

/// The model as read, in the report.
pub fn model_report(m: &HydroModel) -> String {
    let mut s = String::new();
    let files: Vec<String> = m.files.iter().map(|f| file_label(f)).collect();
    let _ = writeln!(s, "| | |\n|---|---|");
    let _ = writeln!(s, "| Files | {} |", cell(&files.join(", ")));
    let _ = writeln!(s, "| Formats | {} |", cell(&m.format));
    let _ = writeln!(
        s,
        "| Grid | {} × {} × {} cells, origin ({}, {}), rotation {}° |",
        m.grid.delr.len(),
        m.grid.delc.len(),
        m.grid.nlay(),
        num(m.grid.origin_xy[0]),
        num(m.grid.origin_xy[1]),
        num(m.grid.angrot_deg)
    );
    let _ = writeln!(
        s,
        "| Geophysical line | from ({}, {}) at azimuth {}°; model elevation = geophysical + {} m |",
        num(m.line.origin_xy[0]),
        num(m.line.origin_xy[1]),
        num(m.line.azimuth_deg),
        num(m.elevation_shift_m)
    );
    if let Some(t) = m.time {
        let _ = writeln!(s, "| Model time | {} (the model's time unit) |", num(t));
    }
    let _ = writeln!(
        s,
        "| Water table | {} |",
        m.water_table_source().map_or("none", |w| w.words())
    );
    let _ = writeln!(s, "| Porosity | {} |", cell(&m.porosity_source));
    let _ = writeln!(
        s,
        "| Masked cells | {} (inactive, dry or without a value; never compared) |",
        m.n_masked
    );
    s
}

/// The forward's verdict, in the report: the sentence, the χ² table, what was noticed.
pub fn forward_report(r: &ForwardComparison) -> String {
    let draws = if r.chi2_draws.is_empty() {
        "—".into()
    } else {
        let (a, b) = crate::catalog::kit::format::range(&r.chi2_draws);
        format!("{} – {}", num(a), num(b))
    };
    let mut s = format!(
        "{}\n\n| | χ² |\n|---|---|\n| Hydrological model (central petrophysics) | {} |\n| Monte Carlo draws (min – max) | {} |\n| Inverted model on the model's forward mesh | {} |\n| Limit | {} |\n| Inversion (its own mesh, the data's errors) | {} |\n\nThe first four add a model error of {} % to each datum's error.\n\n**Verdict:** {} ({} data).\n",
        r.sentence,
        num(r.chi2_model),
        draws,
        num(r.chi2_reference),
        num(r.chi2_limit),
        num(r.chi2_inversion),
        num(100.0 * r.model_error_fraction),
        match r.verdict {
            Verdict::Agree => "the model explains the measured data",
            Verdict::Disagree => "the model does not explain the measured data",
            Verdict::NotCompared => "not judged",
        },
        r.n_data
    );
    for n in &r.notes {
        let _ = writeln!(s, "\n- {n}");
    }
    s
}

/// What the comparison did not cover in this version, for the methods the run has.
fn not_covered(ctx: &RunContext) -> Vec<&'static str> {
    let mut v = Vec::new();
    if ctx.has_input(keys::TDEM_FILE) || ctx.has_input(keys::MT_FILES) {
        v.push("the model's resistivity is not forwarded to TDEM / MT data in this version (their water tables, where they give one, are compared with the model's at their own sites)");
    }
    if [keys::SEISMIC_FILE, keys::SEISMIC_FILES, keys::SEGY_FILE]
        .iter()
        .any(|k| ctx.has_input(k))
    {
        v.push("the model's velocity is not forwarded to seismic travel times in this version");
    }
    v
}

/// The comparison, in the report: the sentence, the water table by method, the table by
/// depth.
pub fn comparison_report(c: &ModelComparison, ctx: &RunContext) -> String {
    let mut s = format!("{}\n\n", c.sentence);
    let wt = &c.water_table;
    if !wt.methods.is_empty() {
        let _ = writeln!(
            s,
            "| Method | Depth (m) | σ (m) | Model there (m) | Model sampled at | Model − method (m) | Verdict |\n|---|---|---|---|---|---|---|"
        );
        for m in &wt.methods {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} |",
                cell(&m.method),
                num(m.depth_m),
                num(m.sigma_m),
                num(m.model_depth_m),
                cell(&m.sampled_at),
                num(m.difference_m),
                m.verdict.word()
            );
        }
        s.push('\n');
    }
    let w = &c.water_content;
    if !w.bands.is_empty() {
        let _ = writeln!(
            s,
            "| Depth (m) | Cells | Model θ | Model image θ | ERT θ | ERT σ(θ) | Judged − ERT | Verdict |\n|---|---|---|---|---|---|---|---|"
        );
        for b in &w.bands {
            let _ = writeln!(
                s,
                "| {}–{} | {} | {} | {} | {} | {} | {} | {} |",
                num(b.depth_top_m),
                num(b.depth_bottom_m),
                b.n_cells,
                num(b.model_theta),
                b.model_image_theta.map_or("—".to_string(), num),
                num(b.ert_theta),
                num(b.ert_sigma),
                num(b.difference),
                b.verdict.word()
            );
        }
        s.push('\n');
    }
    for n in not_covered(ctx) {
        let _ = writeln!(s, "*Not compared:* {n}.\n");
    }
    s
}

/// `products/hydro_comparison_by_depth.csv` (one row per band; units in the header).
pub fn comparison_csv(ctx: &mut RunContext, c: &ModelComparison) -> Vec<PathBuf> {
    if c.water_content.bands.is_empty() {
        return Vec::new();
    }
    let rows: Vec<Vec<f64>> = c
        .water_content
        .bands
        .iter()
        .map(|b| {
            vec![
                b.depth_top_m,
                b.depth_bottom_m,
                b.n_cells as f64,
                b.model_theta,
                b.model_image_theta.unwrap_or(f64::NAN),
                b.ert_theta,
                b.ert_sigma,
                b.difference,
            ]
        })
        .collect();
    let header = [
        "depth_top_m",
        "depth_bottom_m",
        "n_cells",
        "model_theta_m3_per_m3",
        "model_image_theta_m3_per_m3",
        "ert_theta_m3_per_m3",
        "ert_sigma_theta_m3_per_m3",
        "judged_minus_ert_m3_per_m3",
    ];
    let written = product_path(ctx, "hydro_comparison_by_depth.csv").and_then(|p| {
        crate::catalog::kit::write_csv(&p, &header, &rows)?;
        Ok(p)
    });
    match written {
        Ok(p) => vec![p],
        Err(e) => {
            let p =
                crate::catalog::kit::planned_path(ctx, "products", "hydro_comparison_by_depth.csv");
            ctx.not_written(&p, &e.to_string());
            Vec::new()
        }
    }
}

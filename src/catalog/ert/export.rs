//! The ERT exports: the model cells as CSV (units in the column names), VTK for ParaView and
//! the model bundle folder `ert_model/` (`model.json`, `cells.csv`, `model.vtk`) the studio
//! reopens.

#[allow(unused_imports)]
use super::*;

/// Model cells as CSV rows: x_m, z_m, depth_m, area_m2, coverage, then ρ per step (Ω·m)
/// and change per later step (%).
pub fn cells_table(model: &ErtModel) -> (Vec<String>, Vec<Vec<f64>>) {
    let s = model.section();
    let steps = model.steps();
    let mut header: Vec<String> = ["x_m", "z_m", "depth_m", "area_m2", "coverage"]
        .iter()
        .map(|h| h.to_string())
        .collect();
    for (i, st) in steps.iter().enumerate() {
        // Named by the survey's index among those given, so the tables of the parts of a
        // split run (each the baseline and some epochs) merge column by column.
        let t = match model {
            ErtModel::TimeLapse(r) => r.survey_index_of(i),
            ErtModel::Single(_) => i,
        };
        header.push(if steps.len() == 1 {
            "rho_ohm_m".into()
        } else {
            format!("rho_ohm_m_t{t}")
        });
        if st.change_percent.is_some() {
            header.push(format!("change_percent_t{t}"));
        }
    }
    let rows = (0..s.n_params())
        .map(|j| {
            let c = s.param_centroid_m[j];
            let mut row = vec![
                c[0],
                c[1],
                s.param_depth_m(j),
                s.param_area_m2[j],
                model.coverage().get(j).copied().unwrap_or(f64::NAN),
            ];
            for st in &steps {
                row.push(st.rho_ohm_m[j]);
                if let Some(ch) = st.change_percent {
                    row.push(ch[j]);
                }
            }
            row
        })
        .collect();
    (header, rows)
}

/// The model as a legacy-VTK unstructured grid of triangles (y = 0 plane, z up) with cell
/// data: resistivity per step (Ω·m), log10 of it, and coverage.
pub fn vtk_text(model: &ErtModel) -> String {
    let s = model.section();
    let n = s.n_params();
    let mut t = String::new();
    let _ = writeln!(t, "# vtk DataFile Version 3.0");
    let _ = writeln!(t, "HydroGeo Studio ERT model");
    let _ = writeln!(t, "ASCII\nDATASET UNSTRUCTURED_GRID");
    let _ = writeln!(t, "POINTS {} double", 3 * n);
    for j in 0..n {
        for p in s.param_polygon(j) {
            let _ = writeln!(t, "{} 0 {}", p[0], p[1]);
        }
    }
    let _ = writeln!(t, "CELLS {n} {}", 4 * n);
    for j in 0..n {
        let _ = writeln!(t, "3 {} {} {}", 3 * j, 3 * j + 1, 3 * j + 2);
    }
    let _ = writeln!(t, "CELL_TYPES {n}");
    for _ in 0..n {
        let _ = writeln!(t, "5");
    }
    let _ = writeln!(t, "CELL_DATA {n}");
    let mut scalar = |name: &str, v: &mut dyn Iterator<Item = f64>| {
        let _ = writeln!(t, "SCALARS {name} double 1\nLOOKUP_TABLE default");
        for x in v {
            let _ = writeln!(t, "{x}");
        }
    };
    for (i, st) in model.steps().iter().enumerate() {
        scalar(
            &format!("rho_ohm_m_t{i}"),
            &mut st.rho_ohm_m.iter().copied(),
        );
        scalar(
            &format!("log10_rho_t{i}"),
            &mut st.rho_ohm_m.iter().map(|r| r.log10()),
        );
    }
    scalar("coverage", &mut model.coverage().iter().copied());
    t
}

/// Write the model bundle `ert_model/` (model.json, cells.csv, model.vtk); returns its files.
pub fn write_bundle(dir: &Path, model: &ErtModel) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let json = dir.join("model.json");
    std::fs::write(&json, serde_json::to_string(model)?)?;
    let csv = dir.join("cells.csv");
    let (header, rows) = cells_table(model);
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    write_csv(&csv, &h, &rows)?;
    let vtk = dir.join("model.vtk");
    std::fs::write(&vtk, vtk_text(model))?;
    Ok(vec![json, csv, vtk])
}

/// Read a model bundle written by [`write_bundle`].
pub fn read_bundle(dir: &Path) -> anyhow::Result<ErtModel> {
    let p = dir.join("model.json");
    let text = std::fs::read_to_string(&p).map_err(|e| anyhow!("{}: {e}", p.display()))?;
    serde_json::from_str(&text).map_err(|e| anyhow!("{}: {e}", p.display()))
}

/// The model's figures and exports (bundle, cells CSV, VTK). A figure or file that cannot
/// be written is recorded on the run as not written; the model is never lost to it.
pub(super) fn export_and_figures(
    ctx: &mut RunContext,
    model: &ErtModel,
    prefix: &str,
) -> (Vec<PathBuf>, Figures) {
    let thr = ctx.config_f64(keys::COVERAGE_THRESHOLD, DEFAULT_COVERAGE_THRESHOLD);
    let figs = match model_figures(ctx, model, prefix, thr) {
        Ok(f) => f,
        Err(e) => {
            let p = planned_path(ctx, "figures", &format!("{prefix}_model_*.png"));
            ctx.not_written(&p, &format!("the model's figures: {e:#}"));
            Vec::new()
        }
    };
    let mut files = write_product(ctx, "ert_model", |dir| write_bundle(dir, model));
    files.extend(write_product(ctx, &format!("{prefix}_cells.csv"), |p| {
        let (header, rows) = cells_table(model);
        let h: Vec<&str> = header.iter().map(String::as_str).collect();
        write_csv(p, &h, &rows)?;
        Ok(vec![p.to_path_buf()])
    }));
    files.extend(write_product(ctx, &format!("{prefix}_model.vtk"), |p| {
        std::fs::write(p, vtk_text(model))?;
        Ok(vec![p.to_path_buf()])
    }));
    (files, figs)
}

/// `products/ert_water_content_cells.csv`: per cell x, z, depth and, per time step, the mean,
/// standard deviation and P10/P50/P90 of θ (m³/m³).
pub(super) fn water_csv(
    ctx: &mut RunContext,
    section: &ModelSection,
    steps: &[WaterContent],
) -> Vec<PathBuf> {
    let mut header: Vec<String> = vec!["x_m".into(), "z_m".into(), "depth_m".into()];
    for i in 0..steps.len() {
        for k in ["mean", "std", "p10", "p50", "p90"] {
            header.push(format!("theta_{k}_m3_per_m3_t{i}"));
        }
    }
    let rows: Vec<Vec<f64>> = (0..section.n_params())
        .map(|j| {
            let c = section.param_centroid_m[j];
            let mut row = vec![c[0], c[1], section.param_depth_m(j)];
            for wc in steps {
                let w = &wc.water_content;
                row.extend([w.mean[j], w.std[j], w.p10[j], w.p50[j], w.p90[j]]);
            }
            row
        })
        .collect();
    write_product(ctx, "ert_water_content_cells.csv", |csv| {
        let h: Vec<&str> = header.iter().map(String::as_str).collect();
        write_csv(csv, &h, &rows)?;
        Ok(vec![csv.to_path_buf()])
    })
}

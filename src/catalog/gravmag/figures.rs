//! The gravity / magnetic figures: station maps, the regional/residual separation, the
//! predicted and misfit maps, depth slices of the 3D model and the β search.

#[allow(unused_imports)]
use super::*;

/// The first and last index of the cells of the smallest width along an axis (the core; the
/// padding cells are wider).
pub fn core_range(widths: &[f64]) -> (usize, usize) {
    let min = widths.iter().copied().fold(f64::INFINITY, f64::min);
    let is_core = |w: &f64| *w <= min * (1.0 + 1e-6);
    let first = widths.iter().position(is_core).unwrap_or(0);
    let last = widths
        .iter()
        .rposition(is_core)
        .unwrap_or(widths.len().saturating_sub(1));
    (first, last)
}

/// The index of the cell along an axis (`nodes` ascending) holding `v`, clamped to the mesh.
pub fn cell_index(nodes: &[f64], v: f64) -> usize {
    let n_cells = nodes.len().saturating_sub(1).max(1);
    nodes
        .partition_point(|n| *n <= v)
        .saturating_sub(1)
        .min(n_cells - 1)
}

/// The cell holding the anomaly centroid, or the cell of the largest |value|.
pub fn focus_cell(
    mesh: &TensorMesh,
    model: &[f64],
    centroid: Option<[f64; 3]>,
) -> (usize, usize, usize) {
    match centroid {
        Some(c) => (
            cell_index(&mesh.nodes_x_m, c[0]),
            cell_index(&mesh.nodes_y_m, c[1]),
            cell_index(&mesh.nodes_z_m, c[2]),
        ),
        None => {
            let k = model
                .iter()
                .enumerate()
                .fold(
                    (0, f64::MIN),
                    |a, (k, v)| {
                        if v.abs() > a.1 { (k, v.abs()) } else { a }
                    },
                )
                .0;
            mesh.ijk(k)
        }
    }
}

/// Which slice of the model a figure shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slice {
    /// A horizontal slice of layer `iz` (x–y).
    Depth(usize),
    /// A vertical section along x at row `iy` (x–z).
    AlongX(usize),
    /// A vertical section along y at column `ix` (y–z).
    AlongY(usize),
}

/// The core cells of one slice as polygons with their model values (export unit).
pub fn slice_cells(
    mesh: &TensorMesh,
    model: &[f64],
    family: Family,
    slice: Slice,
) -> (Vec<Vec<(f64, f64)>>, Vec<f64>) {
    let (cx, cy, cz) = (
        core_range(&mesh.widths_x()),
        core_range(&mesh.widths_y()),
        core_range(&mesh.widths_z()),
    );
    let (nx, ny, nz) = (
        mesh.nodes_x_m.clone(),
        mesh.nodes_y_m.clone(),
        mesh.nodes_z_m.clone(),
    );
    let rect = |a0: f64, a1: f64, b0: f64, b1: f64| vec![(a0, b0), (a1, b0), (a1, b1), (a0, b1)];
    let mut cells = Vec::new();
    let mut values = Vec::new();
    let value = |i: usize, j: usize, k: usize| {
        model
            .get(mesh.index(i, j, k))
            .map_or(f64::NAN, |v| model_export_value(family, *v))
    };
    match slice {
        Slice::Depth(k) => {
            for j in cy.0..=cy.1 {
                for i in cx.0..=cx.1 {
                    cells.push(rect(nx[i], nx[i + 1], ny[j], ny[j + 1]));
                    values.push(value(i, j, k));
                }
            }
        }
        Slice::AlongX(j) => {
            for k in cz.0..=cz.1 {
                for i in cx.0..=cx.1 {
                    cells.push(rect(nx[i], nx[i + 1], nz[k], nz[k + 1]));
                    values.push(value(i, j, k));
                }
            }
        }
        Slice::AlongY(i) => {
            for k in cz.0..=cz.1 {
                for j in cy.0..=cy.1 {
                    cells.push(rect(ny[j], ny[j + 1], nz[k], nz[k + 1]));
                    values.push(value(i, j, k));
                }
            }
        }
    }
    (cells, values)
}

pub(super) fn map_axes(title: &str) -> Axes {
    Axes::new(title, "Easting x (m)", "Northing y (m)").equal()
}

pub(super) fn draw_grid(
    path: &Path,
    title: &str,
    g: &Grid2D,
    scale: &ColourScale,
    overlays: &[Series],
) -> Result<(), FigureError> {
    plot::image(
        path,
        &map_axes(title),
        &grid_rows(g),
        grid_extent(g),
        scale,
        overlays,
    )
}

/// The maps of a run (observed, regional, residual, predicted, misfit) and three model
/// slices through the anomaly: (path, caption) each.
pub(super) fn draw_results(
    ctx: &RunContext,
    r: &TableInversion,
) -> Result<Vec<(PathBuf, String)>, FigureError> {
    let io = |e: std::io::Error| FigureError::Draw {
        path: "figures/".into(),
        message: e.to_string(),
    };
    let family = r.kind.family;
    let unit = family.unit();
    let what = r.kind.quantity.words();
    let mut out = Vec::new();
    let observed = r.observed_grid.masked_values();
    let p = figure_path(ctx, "gravmag_observed_map").map_err(io)?;
    let scale = ColourScale::fit(
        &observed,
        false,
        &format!("Observed ({unit})"),
        Palette::Viridis,
    );
    draw_grid(
        &p,
        &format!("Observed {what}"),
        &r.observed_grid,
        &scale,
        &[],
    )?;
    out.push((
        p,
        format!("Observed {what} gridded by minimum curvature ({unit})."),
    ));

    let p = figure_path(ctx, "gravmag_regional_map").map_err(io)?;
    let scale = ColourScale::fit(
        &r.regional_grid.masked_values(),
        false,
        &format!("Regional ({unit})"),
        Palette::Viridis,
    );
    draw_grid(&p, "Regional trend", &r.regional_grid, &scale, &[])?;
    out.push((
        p,
        format!(
            "Regional trend: degree-{} polynomial fitted by least squares ({unit}).",
            r.regional_residual.trend.degree
        ),
    ));

    // Residual and predicted share one symmetric scale so they can be compared by eye.
    let residual = r.residual_grid.masked_values();
    let shared = ColourScale::symmetric(&residual, &format!("Residual ({unit})"));
    let p = figure_path(ctx, "gravmag_residual_map").map_err(io)?;
    draw_grid(
        &p,
        "Residual (observed − regional)",
        &r.residual_grid,
        &shared,
        &[],
    )?;
    out.push((
        p,
        format!("Residual anomaly: observed minus regional ({unit})."),
    ));

    let st = &r.inverted_stations;
    let stations = if st.x_m.len() <= 1000 {
        vec![Series::points("stations inverted", st.x_m.clone(), st.y_m.clone()).colour((0, 0, 0))]
    } else {
        Vec::new()
    };
    let p = figure_path(ctx, "gravmag_predicted_map").map_err(io)?;
    let pred_scale = ColourScale {
        label: format!("Predicted ({unit})"),
        ..shared.clone()
    };
    draw_grid(
        &p,
        "Predicted by the 3D model",
        &r.predicted_grid,
        &pred_scale,
        &stations,
    )?;
    out.push((
        p,
        format!("Data predicted by the 3D model at the inverted stations, gridded ({unit}); same colour scale as the residual."),
    ));

    let p = figure_path(ctx, "gravmag_misfit_map").map_err(io)?;
    let scale = ColourScale::symmetric(
        &r.misfit_grid.masked_values(),
        &format!("Observed − predicted ({unit})"),
    );
    draw_grid(
        &p,
        "Misfit (residual − predicted)",
        &r.misfit_grid,
        &scale,
        &stations,
    )?;
    out.push((
        p,
        format!("Misfit: residual minus predicted at the inverted stations, gridded ({unit})."),
    ));

    out.extend(draw_model_slices(ctx, r)?);
    Ok(out)
}

/// Three slices of the 3D model through the anomaly: a depth slice and sections along x
/// and y, (path, caption) each.
fn draw_model_slices(
    ctx: &RunContext,
    r: &TableInversion,
) -> Result<Vec<(PathBuf, String)>, FigureError> {
    let io = |e: std::io::Error| FigureError::Draw {
        path: "figures/".into(),
        message: e.to_string(),
    };
    let family = r.kind.family;
    let mut out = Vec::new();
    let inv = &r.inversion;
    let mesh = &inv.mesh;
    let (i, j, k) = focus_cell(mesh, &inv.model, inv.anomaly_centroid_m);
    let label = model_label(family);
    let scale = ColourScale::symmetric(
        &inv.model
            .iter()
            .map(|v| model_export_value(family, *v))
            .collect::<Vec<_>>(),
        label,
    );
    let top = mesh.top_m();
    let zc = 0.5 * (mesh.nodes_z_m[k] + mesh.nodes_z_m[k + 1]);
    let xc = 0.5 * (mesh.nodes_x_m[i] + mesh.nodes_x_m[i + 1]);
    let yc = 0.5 * (mesh.nodes_y_m[j] + mesh.nodes_y_m[j + 1]);
    let slices = [
        (
            Slice::Depth(k),
            "gravmag_model_depth_slice",
            format!(
                "Model at z = {} m ({} m below the mesh top)",
                fmt(zc),
                fmt(top - zc)
            ),
            "Easting x (m)",
            "Northing y (m)",
        ),
        (
            Slice::AlongX(j),
            "gravmag_model_section_x",
            format!("Model section along x at y = {} m", fmt(yc)),
            "Easting x (m)",
            "Elevation z (m)",
        ),
        (
            Slice::AlongY(i),
            "gravmag_model_section_y",
            format!("Model section along y at x = {} m", fmt(xc)),
            "Northing y (m)",
            "Elevation z (m)",
        ),
    ];
    for (slice, name, title, xl, yl) in slices {
        let (cells, values) = slice_cells(mesh, &inv.model, family, slice);
        let p = figure_path(ctx, name).map_err(io)?;
        plot::cell_section(
            &p,
            &Axes::new(&title, xl, yl),
            &cells,
            &values,
            &scale,
            None,
            &[],
        )?;
        out.push((
            p,
            format!(
                "{title}: {} of the core cells through the anomaly centroid ({label}). Depth in this model comes from the depth weighting, not from the data.",
                label.to_lowercase()
            ),
        ));
    }
    Ok(out)
}

/// The β search's χ² per solve, against the target band.
pub(super) fn draw_beta_search(
    ctx: &RunContext,
    res: &GravMagResults,
) -> Result<Option<(PathBuf, String)>, FigureError> {
    let inv = &res.result.inversion;
    let recs = &inv.iteration_records;
    if recs.is_empty() || recs.iter().any(|r| !(r.lambda > 0.0 && r.chi2 > 0.0)) {
        return Ok(None);
    }
    let p = figure_path(ctx, "gravmag_beta_search").map_err(|e| FigureError::Draw {
        path: "figures/gravmag_beta_search.png".into(),
        message: e.to_string(),
    })?;
    let beta: Vec<f64> = recs.iter().map(|r| r.lambda).collect();
    let (b0, b1) = range(&beta);
    let (b0, b1) = if b1 > b0 {
        (b0 / 2.0, b1 * 2.0)
    } else {
        (b0 / 10.0, b1 * 10.0)
    };
    let t = inv.beta_search.target_chi2;
    let tol = inv.beta_search.tolerance;
    plot::line_plot(
        &p,
        &Axes::new(
            "β search: misfit of each exact solve",
            "β (regularisation weight)",
            "χ²",
        )
        .log(true, true),
        &[
            Series::points("solves", beta, recs.iter().map(|r| r.chi2).collect()),
            Series::line("target", vec![b0, b1], vec![t, t]).colour((40, 140, 40)),
            Series::line("target − tolerance", vec![b0, b1], vec![t - tol, t - tol])
                .style(plot::Style::Dashed)
                .colour((40, 140, 40)),
            Series::line("target + tolerance", vec![b0, b1], vec![t + tol, t + tol])
                .style(plot::Style::Dashed)
                .colour((40, 140, 40)),
        ],
    )?;
    Ok(Some((
        p,
        format!(
            "χ² of each exact solve against β (log–log), with the target {} ± {}.",
            fmt(t),
            fmt(tol)
        ),
    )))
}

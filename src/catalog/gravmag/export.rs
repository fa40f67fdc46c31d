//! The gravity / magnetic exports: grids as ESRI ASCII, the 3D model's cells as CSV.

#[allow(unused_imports)]
use super::*;

/// A grid as rows for [`plot::image`]: row 0 is the northernmost, unsupported nodes NaN.
pub fn grid_rows(g: &Grid2D) -> Vec<Vec<f64>> {
    let v = g.masked_values();
    (0..g.ny)
        .rev()
        .map(|iy| v[iy * g.nx..(iy + 1) * g.nx].to_vec())
        .collect()
}

/// The area a node-registered grid covers: half a spacing beyond the outer nodes.
pub fn grid_extent(g: &Grid2D) -> (f64, f64, f64, f64) {
    let h = 0.5 * g.spacing_m;
    (
        g.x0_m - h,
        g.x(g.nx.saturating_sub(1)) + h,
        g.y0_m - h,
        g.y(g.ny.saturating_sub(1)) + h,
    )
}

/// Write a grid as an ESRI ASCII raster (node-registered: `xllcenter`/`yllcenter`; rows
/// from north to south; unsupported nodes as `NODATA_value`).
pub fn write_esri_ascii(path: &Path, g: &Grid2D) -> std::io::Result<()> {
    const NODATA: f64 = -99_999.0;
    let mut s = String::new();
    let _ = writeln!(s, "ncols {}", g.nx);
    let _ = writeln!(s, "nrows {}", g.ny);
    let _ = writeln!(s, "xllcenter {}", g.x0_m);
    let _ = writeln!(s, "yllcenter {}", g.y0_m);
    let _ = writeln!(s, "cellsize {}", g.spacing_m);
    let _ = writeln!(s, "NODATA_value {NODATA}");
    for row in grid_rows(g) {
        let line: Vec<String> = row
            .iter()
            .map(|v| {
                if v.is_finite() {
                    format!("{v}")
                } else {
                    format!("{NODATA}")
                }
            })
            .collect();
        let _ = writeln!(s, "{}", line.join(" "));
    }
    std::fs::write(path, s)
}

/// Write the products of a run for other programs: the model cells (CSV, units in the
/// column names), the stations with regional and residual, the inverted stations with
/// predicted values, and the five maps as ESRI ASCII grids.
pub(super) fn write_products(
    ctx: &RunContext,
    r: &TableInversion,
    table: &StationTable,
) -> std::io::Result<Vec<PathBuf>> {
    let family = r.kind.family;
    let u = unit_suffix(family);
    let inv = &r.inversion;
    let mesh = &inv.mesh;
    let mut files = Vec::new();

    let p = product_path(ctx, "gravmag_model_cells.csv")?;
    let (wx, wy, wz) = (mesh.widths_x(), mesh.widths_y(), mesh.widths_z());
    let rows: Vec<Vec<f64>> = (0..inv.model.len().min(mesh.n_cells()))
        .map(|c| {
            let (i, j, k) = mesh.ijk(c);
            let centre = mesh.centre(c);
            vec![
                centre[0],
                centre[1],
                centre[2],
                wx[i],
                wy[j],
                wz[k],
                model_export_value(family, inv.model[c]),
            ]
        })
        .collect();
    write_csv(
        &p,
        &[
            "x_m",
            "y_m",
            "z_m",
            "dx_m",
            "dy_m",
            "dz_m",
            model_column(family),
        ],
        &rows,
    )?;
    files.push(p);

    let p = product_path(ctx, "gravmag_stations.csv")?;
    let rr = &r.regional_residual;
    let z = table.z_m.clone();
    let rows: Vec<Vec<f64>> = (0..table.n_stations)
        .map(|k| {
            vec![
                table.x_m[k],
                table.y_m[k],
                z.as_ref().map_or(f64::NAN, |z| z[k]),
                table.value[k],
                rr.regional[k],
                rr.residual[k],
            ]
        })
        .collect();
    let h = [
        "x_m".to_string(),
        "y_m".into(),
        "z_m".into(),
        format!("observed_{u}"),
        format!("regional_{u}"),
        format!("residual_{u}"),
    ];
    write_csv(&p, &h.iter().map(String::as_str).collect::<Vec<_>>(), &rows)?;
    files.push(p);

    let p = product_path(ctx, "gravmag_inverted_stations.csv")?;
    let st = &r.inverted_stations;
    let rows: Vec<Vec<f64>> = (0..st.value.len())
        .map(|k| {
            vec![
                st.x_m[k],
                st.y_m[k],
                st.z_m[k],
                st.value[k],
                inv.predicted.get(k).copied().unwrap_or(f64::NAN),
                inv.standard_deviation.get(k).copied().unwrap_or(f64::NAN),
            ]
        })
        .collect();
    let h = [
        "x_m".to_string(),
        "y_m".into(),
        "z_m".into(),
        format!("residual_{u}"),
        format!("predicted_{u}"),
        format!("std_{u}"),
    ];
    write_csv(&p, &h.iter().map(String::as_str).collect::<Vec<_>>(), &rows)?;
    files.push(p);

    for (name, g) in [
        ("observed", &r.observed_grid),
        ("regional", &r.regional_grid),
        ("residual", &r.residual_grid),
        ("predicted", &r.predicted_grid),
        ("misfit", &r.misfit_grid),
    ] {
        let p = product_path(ctx, &format!("gravmag_{name}_{u}.asc"))?;
        write_esri_ascii(&p, g)?;
        files.push(p);
    }
    Ok(files)
}

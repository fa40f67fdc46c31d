//! The seismic figures: travel-time curves (observed and modelled), the velocity model with
//! its interfaces, and the ray coverage.

#[allow(unused_imports)]
use super::*;

/// Travel-time curves per shot: observed picks as points, modelled times (when given) as
/// lines, against the receiver position.
pub fn traveltime_figure(
    path: &Path,
    tt: &TravelTimes,
    modelled: Option<(&[usize], &[f64])>,
    title: &str,
) -> Result<(), plot::FigureError> {
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
        // One colour per shot, its observed points and its modelled curve alike, so a
        // branch can be followed across the crossings; the legend says which is which.
        let first = k == 0;
        let colour = plot::CYCLE[k % plot::CYCLE.len()];
        series.push(
            Series::points(
                if first {
                    "observed (one colour per shot)"
                } else {
                    ""
                },
                x.clone(),
                y,
            )
            .colour(colour),
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
                    .colour(colour),
            );
        }
    }
    plot::line_plot(
        path,
        &Axes::new(title, "Receiver position x (m)", "First-arrival time (ms)"),
        &series,
    )
}

pub(super) fn cell_polygons(inv: &SeismicInversion) -> Vec<Vec<(f64, f64)>> {
    (0..inv.grid.n_cells())
        .map(|c| {
            let k = inv.grid.cell_corners(c);
            vec![k[0], k[1], k[3], k[2]]
        })
        .collect()
}

pub(super) fn surface_series(inv: &SeismicInversion) -> Series {
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
) -> Result<(), plot::FigureError> {
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
    plot::cell_section(
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
pub fn coverage_figure(path: &Path, inv: &SeismicInversion) -> Result<(), plot::FigureError> {
    let values: Vec<f64> = inv
        .coverage_m
        .iter()
        .map(|&c| if c > 0.0 { c } else { f64::NAN })
        .collect();
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let scale = ColourScale::fit(&finite, true, "Ray length in cell (m)", Palette::Greys);
    plot::cell_section(
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

/// The model's figures: velocity with interfaces, travel-time fit, coverage.
pub(super) fn model_figures(ctx: &mut RunContext, m: &SeismicModel, out: Outputs) -> Outputs {
    let inv = &m.inversion;
    let v = draw_figure(ctx, "seismic_velocity", |p| velocity_figure(p, inv, &[]));
    let t = draw_figure(ctx, "seismic_traveltime_fit", |p| {
        traveltime_figure(
            p,
            &m.data,
            Some((&inv.used_picks, &inv.response_s)),
            "Travel times: observed (points) and modelled (lines)",
        )
    });
    let c = draw_figure(ctx, "seismic_coverage", |p| coverage_figure(p, inv));
    out.figure_if(
        v,
        "Seismic P-velocity model (m/s) against distance and elevation (m); cells without ray coverage faded",
    )
    .figure_if(
        t,
        "Observed and modelled first-arrival times (ms) against receiver position (m)",
    )
    .figure_if(c, "Ray coverage: total ray length per cell (m)")
}

//! The seismic report text: the data, the tomography, the evaluation and the interfaces.

#[allow(unused_imports)]
use super::*;

/// The travel-time table as a Markdown paragraph of counts.
pub(super) fn data_line(tt: &TravelTimes) -> String {
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

/// The report section of a model.
pub(super) fn model_report(m: &SeismicModel) -> String {
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
            r.iteration,
            r.chi2,
            r.rrms_percent.unwrap_or(f64::NAN),
            r.phi_m,
            r.lambda,
            r.step_length,
            r.seconds
        ));
    }
    for n in &inv.notes {
        md.push_str(&format!("\n- {n}"));
    }
    md
}

//! The seismic products: picks made from raw shots, a velocity model with the travel times it
//! was inverted from, and the evaluation with its λ retries.

#[allow(unused_imports)]
use super::*;

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

//! The hydrological-model settings (`config.hydro_params`); an unknown key is an error
//! naming the valid ones.

use serde::{Deserialize, Serialize};

use crate::catalog::kit::keys;
use crate::runtime::RunContext;

/// `hydro_params`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HydroSettings {
    /// Where distance 0 of the geophysical line is, in the model's coordinates (x, y). Unset:
    /// the grid's origin corner, half-way across its rows (a line through the grid's middle).
    pub line_origin: Option<[f64; 2]>,
    /// The line's azimuth, degrees clockwise from the grid's north (90: along +x).
    pub line_azimuth_deg: f64,
    /// Model elevation = geophysical elevation + this shift (m): 0 when both use one datum.
    pub elevation_shift_m: f64,
    /// Porosity when no porosity file is given (otherwise the petrophysical prior's centre).
    pub porosity: Option<f64>,
    /// Saturation above the water table of a heads-only model (MODFLOW computes none); unset,
    /// a heads model gives a water table but no water content.
    pub unsaturated_saturation: Option<f64>,
    /// MODFLOW's HDRY as the model's name file gives it (masked; −1e30 is masked anyway).
    pub hdry: Option<f64>,
    /// MODFLOW's HNOFLO (masked; 1e30 and −999.99 are masked anyway).
    pub hnoflo: Option<f64>,
    /// The record (time) of a multi-record heads file compared, 0-based; unset, the last.
    pub record: Option<usize>,
    /// A cell counts as saturated at S ≥ this (the saturation water table).
    pub saturated_at: f64,
    /// Agreement within this many standard deviations of the difference.
    pub agreement_sigmas: f64,
    /// The model explains the ERT data when its χ² is at most this times the inverted
    /// model's χ² through the same forward (and at most this times 1 when that fits better
    /// than the errors).
    pub chi2_ratio_max: f64,
    /// Relative error of the model's forward, added in quadrature to each datum's error
    /// (ε' = √(ε² + e²)) for the model's χ² and its reference: a flow model discretised in
    /// cells and forwarded through the ERT mesh carries an error the data's errors do not
    /// (on the example, the truth's own ParFlow model at 0.5 m layers misfits its 2 %-noise
    /// data by 4.4 % RMS; the 8 m model by 46 %). 0 judges against the data's errors alone.
    pub model_error_fraction: f64,
    /// Petrophysical draws forwarded besides the central values (each a 2.5D forward).
    pub forward_realizations: usize,
}

impl Default for HydroSettings {
    fn default() -> Self {
        HydroSettings {
            line_origin: None,
            line_azimuth_deg: 90.0,
            elevation_shift_m: 0.0,
            porosity: None,
            unsaturated_saturation: None,
            hdry: None,
            hnoflo: None,
            record: None,
            saturated_at: 0.999,
            agreement_sigmas: 2.0,
            chi2_ratio_max: 2.0,
            model_error_fraction: 0.03,
            forward_realizations: 8,
        }
    }
}

impl HydroSettings {
    /// The project's settings.
    pub fn read(ctx: &RunContext) -> anyhow::Result<Self> {
        let s: HydroSettings = ctx.params(keys::HYDRO_PARAMS)?;
        s.validate()?;
        Ok(s)
    }

    /// Refuse settings no comparison could use, naming the key and the value.
    pub fn validate(&self) -> anyhow::Result<()> {
        let bad = |k: &str, want: &str, v: f64| {
            anyhow::anyhow!("hydro_params.{k}: expected {want}, found {v}")
        };
        if !self.line_azimuth_deg.is_finite() {
            return Err(bad(
                "line_azimuth_deg",
                "a finite angle",
                self.line_azimuth_deg,
            ));
        }
        if !self.elevation_shift_m.is_finite() {
            return Err(bad(
                "elevation_shift_m",
                "a finite shift",
                self.elevation_shift_m,
            ));
        }
        if let Some(p) = self.porosity.filter(|p| !(*p > 0.0 && *p < 1.0)) {
            return Err(bad("porosity", "a fraction between 0 and 1", p));
        }
        if let Some(s) = self
            .unsaturated_saturation
            .filter(|s| !(*s > 0.0 && *s <= 1.0))
        {
            return Err(bad("unsaturated_saturation", "a fraction in (0, 1]", s));
        }
        if !(self.saturated_at > 0.0 && self.saturated_at <= 1.0) {
            return Err(bad(
                "saturated_at",
                "a fraction in (0, 1]",
                self.saturated_at,
            ));
        }
        if self.agreement_sigmas.is_nan() || self.agreement_sigmas <= 0.0 {
            return Err(bad(
                "agreement_sigmas",
                "a positive number",
                self.agreement_sigmas,
            ));
        }
        if self.chi2_ratio_max.is_nan() || self.chi2_ratio_max < 1.0 {
            return Err(bad(
                "chi2_ratio_max",
                "a ratio of 1 or more",
                self.chi2_ratio_max,
            ));
        }
        if !self.model_error_fraction.is_finite() || self.model_error_fraction < 0.0 {
            return Err(bad(
                "model_error_fraction",
                "a fraction of 0 or more",
                self.model_error_fraction,
            ));
        }
        Ok(())
    }
}

//! The MT settings of a project (`mt_params`, every key optional). A panel's edits are
//! layered over these, never instead of them.

#[allow(unused_imports)]
use super::*;

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

/// The MT settings of a run or a project (`mt_params`), an unknown key named.
pub fn params(ctx: &RunContext) -> anyhow::Result<MtParams> {
    ctx.params(keys::MT_PARAMS).map_err(|e| anyhow!("{e}"))
}

//! The record of one inversion iteration, the same for every method: the numbers every
//! iterative inversion has, and the few only some have (absent where they do not apply).

use serde::{Deserialize, Serialize};

/// One iteration (or one exact solve) as recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IterationRecord {
    /// The iteration (0 = the start model, where a method records one).
    pub iteration: usize,
    /// χ² after the iteration.
    pub chi2: f64,
    /// Model roughness φ_m after the iteration.
    pub phi_m: f64,
    /// λ (β, μ, the damping) used.
    pub lambda: f64,
    /// Line-search step length τ (1 = the full step; 0 for the start model).
    pub step_length: f64,
    /// Seconds the iteration took (or since the start, as the method records it).
    pub seconds: f64,
    /// Relative rms misfit, percent, where the method computes it per iteration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rrms_percent: Option<f64>,
    /// χ² before the model was projected onto its bounds (bounded exact solves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chi2_unbounded: Option<f64>,
    /// Cells clipped at a bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_hits: Option<usize>,
    /// Marquardt damping of the step (relative to the median data-term diagonal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping: Option<f64>,
    /// Inner (CGLS) iterations of the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgls_iterations: Option<usize>,
}

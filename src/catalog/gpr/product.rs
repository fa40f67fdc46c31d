//! The GPR products: the processed line with the velocity it was converted with and what was
//! left out.

#[allow(unused_imports)]
use super::*;

/// Where the velocity of a processed line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VelocityOrigin {
    /// The project setting `gpr_velocity_m_per_ns`.
    UserVelocity,
    /// The project setting `gpr_permittivity`.
    UserPermittivity,
    /// The εr in the file header (an instrument setting).
    HeaderPermittivity,
    /// Hyperbolic semblance of the gather itself.
    Semblance,
    /// No velocity: the line stays in two-way time.
    None,
}

/// A step the chain did not apply, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeftOut {
    /// The step.
    pub step: String,
    /// Why (the recipe's words).
    pub why: String,
}

/// One processed line as the run keeps it (`keys::GPR_RESULTS` holds `Held<GprProcessed>`).
#[derive(Debug, Clone, Serialize)]
pub struct GprProcessed {
    /// The radar file.
    pub source_file: PathBuf,
    /// The acquisition kind the reader gave.
    pub survey_kind: SurveyKind,
    /// The processed line with its axes and recipe.
    pub processed: ProcessedLine,
    /// Where the velocity came from.
    pub velocity_origin: VelocityOrigin,
    /// One sentence: the velocity and its origin, or why there is none.
    pub velocity_sentence: String,
    /// The semblance analysis, for a CMP/WARR gather.
    pub velocity_analysis: Option<GatherAnalysis>,
    /// The verdict: velocity provenance and lateral coherence
    /// ([`crate::methods::gpr::evaluation`]).
    pub evaluation: crate::methods::quality::Quality,
    /// Steps not applied, with the reason.
    pub left_out: Vec<LeftOut>,
    /// What the user should know (raised as run warnings).
    pub notes: Vec<String>,
}

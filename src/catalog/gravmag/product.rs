//! The gravity / magnetic products: the stations as read, the separation, maps and 3D model,
//! and the verdict on them.

#[allow(unused_imports)]
use super::*;

/// The artifact a request for "a 3D model" is answered by (`catalog::intent`); made by
/// `invert_gravmag` beside [`keys::GRAVMAG_RESULTS`].
pub const MODEL_3D: &str = keys::MODEL_3D;

/// The station table as the run holds it (`keys::GRAVMAG_DATA` holds `Held<GravMagData>`).
#[derive(Debug, Clone, Serialize)]
pub struct GravMagData {
    /// The file read.
    pub source_file: PathBuf,
    /// The table (kind resolved).
    pub table: StationTable,
    /// What the kind rests on, in words.
    pub kind_basis: String,
}

/// The maps and the model as the run holds them (`keys::GRAVMAG_RESULTS` holds
/// `Held<GravMagResults>`).
#[derive(Debug, Clone, Serialize)]
pub struct GravMagResults {
    /// The settings used.
    pub params: GravMagParams,
    /// The inducing field given (`None`: not given; the assumed one is in the notes).
    pub inducing_field: Option<InducingField>,
    /// Everything the chain computed.
    pub result: TableInversion,
}

/// The verdict as the run holds it (`keys::GRAVMAG_EVALUATION` holds
/// `Held<GravMagVerdict>`).
#[derive(Debug, Clone, Serialize)]
pub struct GravMagVerdict {
    /// The rubric's verdict.
    pub evaluation: GravMagEvaluation,
    /// How the β search ended.
    pub beta_outcome: BetaOutcome,
    /// Cells at a bound.
    pub bound_hits: usize,
    /// Cells in the model.
    pub n_cells: usize,
    /// Final χ².
    pub chi2: f64,
}

/// The model value in the unit of the exports: density contrast in g/cm³ (from kg/m³) or
/// susceptibility in SI.
pub(super) fn model_export_value(family: Family, v: f64) -> f64 {
    match family {
        Family::Gravity => v / 1000.0,
        Family::Magnetic => v,
    }
}

pub(super) fn model_label(family: Family) -> &'static str {
    match family {
        Family::Gravity => "Density contrast (g/cm³)",
        Family::Magnetic => "Susceptibility (SI)",
    }
}

pub(super) fn model_column(family: Family) -> &'static str {
    match family {
        Family::Gravity => "density_contrast_g_per_cc",
        Family::Magnetic => "susceptibility_SI",
    }
}

pub(super) fn unit_suffix(family: Family) -> &'static str {
    match family {
        Family::Gravity => "mgal",
        Family::Magnetic => "nt",
    }
}

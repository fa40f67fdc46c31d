//! Artifact keys, in one place, so that the tool that makes a product and the tools, panels
//! and report that read it agree on its name.

/// ERT surveys as read (`SurveySet`).
pub const ERT_DATA: &str = "ert_data";
/// The ERT inversion (single survey or time-lapse).
pub const INVERSION_RESULTS: &str = "inversion_results";
/// The ERT inversion's quality evaluation (may replace the model with a better retry).
pub const EVALUATION_RESULTS: &str = "evaluation_results";
/// Water content from any method.
pub const WATER_CONTENT: &str = "water_content";
/// First-break picks made from raw gathers.
pub const SEISMIC_PICKS: &str = "seismic_picks";
/// Travel times read from a file.
pub const SEISMIC_TRAVELTIMES: &str = "seismic_traveltimes";
/// The seismic velocity model.
pub const SEISMIC_RESULTS: &str = "seismic_results";
/// The seismic model's quality evaluation.
pub const SEISMIC_EVALUATION: &str = "seismic_evaluation";
/// Interfaces traced at threshold velocities.
pub const SEISMIC_STRUCTURE: &str = "seismic_structure";
/// The ERT model re-inverted with a seismic interface as a boundary.
pub const STRUCTURE_RESULTS: &str = "structure_results";
/// TDEM soundings as read.
pub const TDEM_DATA: &str = "tdem_data";
/// TDEM layered models.
pub const TDEM_RESULTS: &str = "tdem_results";
/// TDEM quality evaluation.
pub const TDEM_EVALUATION: &str = "tdem_evaluation";
/// Kriged plan-view maps.
pub const PLAN_MAPS: &str = "plan_maps";
/// MT sites as read.
pub const MT_DATA: &str = "mt_data";
/// MT layered models.
pub const MT_RESULTS: &str = "mt_results";
/// MT quality evaluation.
pub const MT_EVALUATION: &str = "mt_evaluation";
/// Gravity / magnetic stations as read.
pub const GRAVMAG_DATA: &str = "gravmag_data";
/// Regional/residual separation, maps and the 3D model.
pub const GRAVMAG_RESULTS: &str = "gravmag_results";
/// Gravity / magnetic quality evaluation.
pub const GRAVMAG_EVALUATION: &str = "gravmag_evaluation";
/// A GPR line as read.
pub const GPR_DATA: &str = "gpr_data";
/// The processed GPR line.
pub const GPR_RESULTS: &str = "gpr_results";
/// What was combined across methods, and what was not.
pub const FUSION_RESULTS: &str = "fusion_results";
/// The report files (the finish artifact).
pub const REPORT_FILES: &str = "report_files";

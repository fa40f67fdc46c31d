//! Every name the catalog shares with the run, in one place: the artifacts a tool makes and
//! the tools, panels and report read; the input roles of a project (the files the user chose);
//! and the settings keys of its `config`. Each string is written here once.

// ----- artifacts ----------------------------------------------------------------------------

/// ERT surveys as read (`SurveySet`).
pub const ERT_DATA: &str = "ert_data";
/// The ERT inversion (single survey or time-lapse).
pub const INVERSION_RESULTS: &str = "inversion_results";
/// The ERT model's depth of investigation index (`Held<DoiIndex>`).
pub const ERT_DOI: &str = "ert_doi";
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
/// The artifact a request for "a 3D model" is answered by (`catalog::intent`); made by
/// `invert_gravmag` beside [`GRAVMAG_RESULTS`].
pub const MODEL_3D: &str = "model_3d";
/// A GPR line as read.
pub const GPR_DATA: &str = "gpr_data";
/// The processed GPR line.
pub const GPR_RESULTS: &str = "gpr_results";
/// What was combined across methods, and what was not.
pub const FUSION_RESULTS: &str = "fusion_results";
/// The report files (the finish artifact).
pub const REPORT_FILES: &str = "report_files";
/// A hydrological model's output as read, placed under the geophysical line.
pub const MODEL_OUTPUT: &str = "model_output";
/// The ERT data a hydrological model predicts, and their misfit against the measured.
pub const MODEL_FORWARD: &str = "model_forward";
/// A hydrological model compared with the geophysical answers.
pub const MODEL_COMPARISON: &str = "model_comparison";

// ----- input roles (the user's files; never changed during a run) ---------------------------

/// ERT data files, a list (a time-lapse series in time order).
pub const ERT_FILES: &str = "ert_files";
/// One ERT data file.
pub const ERT_FILE: &str = "ert_file";
/// The electrode table (number, x, elevation).
pub const ELECTRODE_FILE: &str = "electrode_file";
/// A topography table (x, elevation).
pub const TOPOGRAPHY_FILE: &str = "topography_file";
/// A travel-time file.
pub const SEISMIC_FILE: &str = "seismic_file";
/// Travel-time files, a list.
pub const SEISMIC_FILES: &str = "seismic_files";
/// Raw shots as SEG-Y.
pub const SEGY_FILE: &str = "segy_file";
/// Raw shots as SEG-2, a list.
pub const SEG2_FILES: &str = "seg2_files";
/// The geophone station table (station, x, elevation).
pub const GEOPHONE_FILE: &str = "geophone_file";
/// The TDEM sounding file.
pub const TDEM_FILE: &str = "tdem_file";
/// The TDEM geometry table.
pub const TDEM_GEOMETRY_FILE: &str = "tdem_geometry_file";
/// MT transfer-function files, a list.
pub const MT_FILES: &str = "mt_files";
/// A folder of MT files.
pub const MT_DIR: &str = "mt_dir";
/// The gravity / magnetic station table.
pub const GRAVMAG_FILE: &str = "gravmag_file";
/// The GPR line.
pub const GPR_FILE: &str = "gpr_file";
/// Elevations along the GPR line.
pub const GPR_TOPOGRAPHY_FILE: &str = "gpr_topography_file";
/// A hydrological model's output files (ParFlow `.pfb` saturation / pressure / porosity,
/// MODFLOW heads).
pub const MODEL_OUTPUT_FILES: &str = "model_output_files";
/// The MODFLOW 6 binary grid file of a heads file.
pub const MODEL_GRID_FILE: &str = "model_grid_file";
/// The folder the studio wrote its ERT page's finished inversion to (the model bundle and
/// `handover.json`, `catalog::ert::handover`) when it started the run; the run takes that
/// model over instead of inverting again. A `config` key of the project that, ending in
/// `_dir`, is kept as an input role: nothing mid-run may point it elsewhere.
pub const STUDIO_INVERSION_DIR: &str = "studio_inversion_dir";

// ----- settings (keys of the project's `config`) ---------------------------------------------

/// The hydrological-model settings (`catalog::hydro::HydroSettings`).
pub const HYDRO_PARAMS: &str = "hydro_params";

/// Compute the ERT model's depth of investigation index (`true`; two more inversions).
pub const DEPTH_OF_INVESTIGATION: &str = "depth_of_investigation";
/// The ERT instrument format (`auto` by default).
pub const INSTRUMENT: &str = "instrument";
/// Formats confirmed for files read by a weak signature only: `{"<file name>": "<format>"}`
/// ([`super::confirm`]).
pub const FORMATS: &str = "formats";
/// The ERT inversion's settings (`InversionParams`).
pub const INVERSION_PARAMS: &str = "inversion_params";
/// The time-lapse scheme.
pub const TIME_LAPSE_METHOD: &str = "time_lapse_method";
/// The time-lapse scheme's temporal regularisation α.
pub const TEMPORAL_REGULARIZATION: &str = "temporal_regularization";
/// The later ERT surveys a difference, ratio or independent time-lapse inverts against the
/// baseline: 0-based survey indices (default every one; a part of a split run holds its
/// epochs this way).
pub const TIME_LAPSE_EPOCHS: &str = "time_lapse_epochs";
/// The fraction of the largest coverage below which ERT cells are faded.
pub const COVERAGE_THRESHOLD: &str = "coverage_threshold";
/// The quality rubric's pass mark.
pub const QUALITY_THRESHOLD: &str = "quality_threshold";
/// Inversions an evaluation may make in all.
pub const MAX_ATTEMPTS: &str = "max_attempts";
/// Whether an evaluation retries with another λ.
pub const AUTO_ADJUST: &str = "auto_adjust";
/// Petrophysical parameters for water content.
pub const PETROPHYSICAL_PARAMS: &str = "petrophysical_params";
/// Monte Carlo draws of the water-content conversion.
pub const N_REALIZATIONS: &str = "n_realizations";
/// First-break picking settings.
pub const FIRST_BREAK_PARAMS: &str = "first_break_params";
/// Which origin raw-shot positions use when the station table and the headers differ.
pub const ALIGN_ORIGIN: &str = "align_origin";
/// The seismic tomography's settings.
pub const SEISMIC_INVERSION_PARAMS: &str = "seismic_inversion_params";
/// One threshold velocity for interfaces (m/s).
pub const VELOCITY_THRESHOLD: &str = "velocity_threshold";
/// Threshold velocities for interfaces (m/s), a list.
pub const VELOCITY_THRESHOLDS: &str = "velocity_thresholds";
/// The TDEM system and inversion settings.
pub const TDEM_PARAMS: &str = "tdem_params";
/// The MT inversion settings.
pub const MT_PARAMS: &str = "mt_params";
/// The gravity / magnetic settings.
pub const GRAVMAG_PARAMS: &str = "gravmag_params";
/// What the gravity / magnetic table measures.
pub const GRAVMAG_KIND: &str = "gravmag_kind";
/// The inducing magnetic field.
pub const MAGNETIC_FIELD: &str = "magnetic_field";
/// The GPR processing settings.
pub const GPR_PARAMS: &str = "gpr_params";
/// A GPR velocity somebody gave (m/ns); never changed by a recovery.
pub const GPR_VELOCITY: &str = "gpr_velocity_m_per_ns";
/// A GPR relative permittivity somebody gave; never changed by a recovery.
pub const GPR_PERMITTIVITY: &str = "gpr_permittivity";
/// The site's name, for the report.
pub const SITE: &str = "site";

// ----- answers (catalog::answers) ------------------------------------------------------------

/// The water-table answer (`Held<Answer>`).
pub const ANSWER_WATER_TABLE: &str = "answer_water_table";
/// The bedrock / interface depth answer.
pub const ANSWER_BEDROCK: &str = "answer_bedrock";
/// The change-over-time answer.
pub const ANSWER_CHANGE: &str = "answer_change";
/// The water-content answer.
pub const ANSWER_WATER_CONTENT: &str = "answer_water_content";
/// Every answer to the goal's questions (`Held<Answers>`; `result.json`'s `"answers"`).
pub const ANSWERS: &str = "answers";
/// The interpretation settings (`AnswerSettings`).
pub const ANSWERS_PARAMS: &str = "answers_params";

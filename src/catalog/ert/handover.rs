//! The hand-over of the studio's ERT page to a run (seed 001: `take_studio_inversion`,
//! `load_studio_inversion`, `STUDIO_INVERSION_KEY`): a folder holding the page's finished
//! model as the model bundle (`ert_model/`, [`write_bundle`]) and `handover.json`, the record
//! of how the page made it — its settings (λ, scheme, instrument, the inversion's settings),
//! what the inversion reached (iterations, χ², rrms), when it finished, and the data it
//! inverted (surveys, quadrupoles, electrodes), so a run can refuse a model of other data.
//!
//! The studio writes the folder when it starts a run from a project whose ERT page holds a
//! finished model, and names it in the run's `studio_inversion_dir`; the run's take-over
//! tools read it here.

#[allow(unused_imports)]
use super::*;

/// The record's file name inside the hand-over folder.
pub const HANDOVER_FILE: &str = "handover.json";

/// The model bundle's folder inside the hand-over folder (the run folder's `products/`
/// name, so both open the same way).
pub const HANDOVER_MODEL_DIR: &str = "ert_model";

/// The version of `handover.json` this build writes and reads.
pub const HANDOVER_VERSION: u32 = 1;

/// Why a hand-over could not be written, read or used.
#[derive(Debug, thiserror::Error)]
pub enum HandoverError {
    /// `handover.json` is not there.
    #[error(
        "{}: no hand-over record (the studio writes handover.json beside the model bundle when it hands its ERT page's inversion to a run): {message}",
        path.display()
    )]
    Missing {
        /// The file looked for.
        path: PathBuf,
        /// The system's word for it.
        message: String,
    },
    /// `handover.json` is there but is not a record this build reads.
    #[error("{}: not a readable hand-over record: {message}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The model bundle beside the record is missing or unreadable.
    #[error("{}: the ERT page's model could not be read: {message}", path.display())]
    Bundle {
        /// The bundle folder.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A file of the hand-over could not be written.
    #[error("{}: the hand-over could not be written: {message}", path.display())]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        message: String,
    },
    /// The model is of other data than the run loaded.
    #[error(
        "the ERT page's model does not match the data this run loaded: {}",
        differences.join("; ")
    )]
    Mismatch {
        /// Each difference, naming the survey and both counts.
        differences: Vec<String>,
    },
}

/// One survey the page inverted, as the match against a run's data needs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandoverSurvey {
    /// The survey's file name (or "survey i").
    pub label: String,
    /// Quadrupoles read.
    pub n_quadrupoles: usize,
    /// Electrodes read.
    pub n_electrodes: usize,
}

impl HandoverSurvey {
    /// The counts of survey `i`.
    pub fn of(survey: &Survey, i: usize) -> Self {
        HandoverSurvey {
            label: survey_label(survey, i),
            n_quadrupoles: survey.n_data(),
            n_electrodes: survey.n_electrodes(),
        }
    }
}

/// `handover.json`: how the ERT page made the model beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Handover {
    /// [`HANDOVER_VERSION`].
    pub version: u32,
    /// When the page's inversion finished, seconds since 1970 (UTC).
    pub finished_unix_s: i64,
    /// The instrument format the page read the files as.
    pub instrument: Instrument,
    /// The page's inversion settings (the project's with the page's edits on top).
    pub inversion_params: InversionParams,
    /// The page's time-lapse scheme (used when two or more surveys were inverted).
    pub time_lapse_method: TimeLapseMethod,
    /// The page's temporal regularisation α (simultaneous scheme).
    pub temporal_regularization: f64,
    /// The later surveys inverted against the baseline (`None`: every one).
    pub time_lapse_epochs: Option<Vec<usize>>,
    /// The page's coverage mask threshold.
    pub coverage_threshold: f64,
    /// λ of the model (the setting's, or the one an automatic λ search chose).
    pub lambda: f64,
    /// Gauss–Newton iterations done.
    pub iterations: usize,
    /// Final χ².
    pub chi2: f64,
    /// Relative rms misfit, percent.
    pub rrms_percent: f64,
    /// The surveys inverted, in order.
    pub surveys: Vec<HandoverSurvey>,
}

impl Handover {
    /// The record of `model`, made by the page with `settings` from `surveys`, finished at
    /// `finished_unix_s`.
    pub fn of_page(
        model: &ErtModel,
        settings: &ErtSettings,
        surveys: &[Survey],
        finished_unix_s: i64,
    ) -> Self {
        Handover {
            version: HANDOVER_VERSION,
            finished_unix_s,
            instrument: settings.instrument,
            inversion_params: settings.inversion.clone(),
            time_lapse_method: settings.time_lapse_method,
            temporal_regularization: settings.temporal_regularization,
            time_lapse_epochs: settings.epochs.clone(),
            coverage_threshold: settings.coverage_threshold,
            lambda: model.lambda(),
            iterations: model.iterations(),
            chi2: model.chi2(),
            rrms_percent: model.rrms_percent(),
            surveys: surveys
                .iter()
                .enumerate()
                .map(|(i, s)| HandoverSurvey::of(s, i))
                .collect(),
        }
    }

    /// When the page's inversion finished, as `2026-11-30 06:22:22 UTC`.
    pub fn finished_utc(&self) -> String {
        crate::runtime::run_folder::utc_stamp(self.finished_unix_s)
    }

    /// The scheme in words: "single survey", or the time-lapse scheme (with α when
    /// simultaneous).
    pub fn scheme_words(&self) -> String {
        match (self.surveys.len(), self.time_lapse_method) {
            (0 | 1, _) => "single survey".into(),
            (n, TimeLapseMethod::Simultaneous) => format!(
                "simultaneous time-lapse of {n} surveys (α {})",
                self.temporal_regularization
            ),
            (n, m) => format!("{} time-lapse of {n} surveys", m.name()),
        }
    }

    /// The instrument setting's word (`auto`, `unified`, …).
    pub fn instrument_word(&self) -> String {
        match serde_json::to_value(self.instrument) {
            Ok(serde_json::Value::String(s)) => s,
            _ => format!("{:?}", self.instrument),
        }
    }

    /// The sentence the step and the report carry: "ERT page inversion taken over: λ 20,
    /// scheme …, instrument …, 5 iterations (at most 20), χ² 1.23, rrms 3.4 %, finished …".
    pub fn sentence(&self) -> String {
        format!(
            "ERT page inversion taken over: λ {}, scheme {}, instrument {}, {} iterations (at most {}), χ² {:.2}, rrms {:.2} %, finished {}",
            self.lambda,
            self.scheme_words(),
            self.instrument_word(),
            self.iterations,
            self.inversion_params.max_iterations,
            self.chi2,
            self.rrms_percent,
            self.finished_utc()
        )
    }
}

/// Write the hand-over folder `dir`: the model bundle `ert_model/` and `handover.json`.
/// Returns the files written.
pub fn write_handover(
    dir: &Path,
    record: &Handover,
    model: &ErtModel,
) -> Result<Vec<PathBuf>, HandoverError> {
    let bundle = dir.join(HANDOVER_MODEL_DIR);
    let mut files = write_bundle(&bundle, model).map_err(|e| HandoverError::Write {
        path: bundle.clone(),
        message: format!("{e:#}"),
    })?;
    let path = dir.join(HANDOVER_FILE);
    let write_error = |message: String| HandoverError::Write {
        path: path.clone(),
        message,
    };
    let text = serde_json::to_string_pretty(record).map_err(|e| write_error(e.to_string()))?;
    std::fs::write(&path, text).map_err(|e| write_error(e.to_string()))?;
    files.push(path);
    Ok(files)
}

/// Read `handover.json` from the hand-over folder `dir`.
pub fn read_handover_record(dir: &Path) -> Result<Handover, HandoverError> {
    let path = dir.join(HANDOVER_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| HandoverError::Missing {
        path: path.clone(),
        message: e.to_string(),
    })?;
    let corrupt = |message: String| HandoverError::Corrupt {
        path: path.clone(),
        message,
    };
    let record: Handover = serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
    if record.version != HANDOVER_VERSION {
        return Err(corrupt(format!(
            "version {} (this build reads version {HANDOVER_VERSION})",
            record.version
        )));
    }
    Ok(record)
}

/// Read the hand-over folder `dir`: its record and the model beside it.
pub fn read_handover(dir: &Path) -> Result<(Handover, ErtModel), HandoverError> {
    let record = read_handover_record(dir)?;
    let bundle = dir.join(HANDOVER_MODEL_DIR);
    let model = read_bundle(&bundle).map_err(|e| HandoverError::Bundle {
        path: bundle.clone(),
        message: format!("{e:#}"),
    })?;
    Ok((record, model))
}

/// Whether the page's model (`record`, `model`) is of the data the run loaded: as many
/// surveys, each with as many quadrupoles and electrodes, and a model of one survey only for
/// one survey. Every difference is named.
pub fn check_matches(
    record: &Handover,
    model: &ErtModel,
    loaded: &[Survey],
) -> Result<(), HandoverError> {
    let mut differences = Vec::new();
    if record.surveys.len() != loaded.len() {
        differences.push(format!(
            "the page inverted {} survey(s), this run loaded {}",
            record.surveys.len(),
            loaded.len()
        ));
    }
    if matches!(model, ErtModel::Single(_)) && loaded.len() != 1 {
        differences.push(format!(
            "the page's model is of one survey, this run loaded {}",
            loaded.len()
        ));
    }
    for (i, (page, run)) in record.surveys.iter().zip(loaded).enumerate() {
        differences.extend(survey_differences(page, &HandoverSurvey::of(run, i)));
    }
    if differences.is_empty() {
        Ok(())
    } else {
        Err(HandoverError::Mismatch { differences })
    }
}

/// How survey `run` differs from the page's `page` (quadrupoles, electrodes).
fn survey_differences(page: &HandoverSurvey, run: &HandoverSurvey) -> Vec<String> {
    let mut out = Vec::new();
    let mut differ = |what: &str, a: usize, b: usize| {
        if a != b {
            out.push(format!(
                "{}: {a} {what} on the page ({}), {b} in this run",
                run.label, page.label
            ));
        }
    };
    differ("quadrupoles", page.n_quadrupoles, run.n_quadrupoles);
    differ("electrodes", page.n_electrodes, run.n_electrodes);
    out
}

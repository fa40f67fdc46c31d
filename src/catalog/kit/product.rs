//! The typed product wrapper: a method's result held as a run artifact, and typed access to it
//! by key.

use std::any::Any;
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::fit::FitSummary;
use crate::runtime::{Product, RunContext};

/// A method's result held as a run artifact: the value itself, the line the transcript shows,
/// its key numbers for `result.json`, the files written for it, and how it reads in a report.
#[derive(Debug, Clone)]
pub struct Held<T> {
    /// The method's own result type.
    pub value: T,
    /// One line for the transcript.
    pub line: String,
    /// A few lines of numbers for a read-only look (defaults to `line`).
    pub detail: String,
    /// Key numbers (`chi2`, `rrms_percent`, `iterations`, `lambda`, `quality_score`, `n_data`,
    /// `n_cells`, …).
    pub numbers: Map<String, Value>,
    /// Files written for it in the run folder.
    pub files: Vec<PathBuf>,
    /// How it reads in the report (Markdown), when the step summary is not enough.
    pub report: Option<String>,
    /// A top-level field of `result.json` it contributes (name, value), e.g. the answers.
    pub result_field: Option<(String, Value)>,
}

impl<T> Held<T> {
    /// Hold `value`, described by `line`.
    pub fn new(value: T, line: impl Into<String>) -> Self {
        Held {
            value,
            line: line.into(),
            detail: String::new(),
            numbers: Map::new(),
            files: Vec::new(),
            report: None,
            result_field: None,
        }
    }

    /// Builder: a key number.
    pub fn number(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.numbers.insert(key.to_string(), value.into());
        self
    }

    /// Builder: the key numbers of a fit, under the names `result.json` uses everywhere.
    pub fn fit(mut self, fit: &FitSummary) -> Self {
        for (k, v) in fit.numbers() {
            self.numbers.insert(k, v);
        }
        self
    }

    /// Builder: the inspect text.
    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = detail.into();
        self
    }

    /// Builder: its report section (Markdown).
    pub fn report(mut self, markdown: impl Into<String>) -> Self {
        self.report = Some(markdown.into());
        self
    }

    /// Builder: a top-level field of `result.json` (`"answers"`).
    pub fn result_field(mut self, name: &str, value: Value) -> Self {
        self.result_field = Some((name.to_string(), value));
        self
    }

    /// Builder: a file written for it.
    pub fn file(mut self, path: PathBuf) -> Self {
        self.files.push(path);
        self
    }

    /// Builder: files written for it.
    pub fn files(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        self.files.extend(paths);
        self
    }
}

impl<T: std::fmt::Debug + Send + Sync + 'static> Product for Held<T> {
    fn describe(&self) -> String {
        self.line.clone()
    }

    fn inspect(&self) -> String {
        if self.detail.is_empty() {
            self.line.clone()
        } else {
            self.detail.clone()
        }
    }

    fn key_numbers(&self) -> Map<String, Value> {
        self.numbers.clone()
    }

    fn files(&self) -> Vec<PathBuf> {
        self.files.clone()
    }

    fn report_markdown(&self) -> Option<String> {
        self.report.clone()
    }

    fn result_field(&self) -> Option<(String, Value)> {
        self.result_field.clone()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The typed value held under `key`.
pub fn held<'a, T: std::fmt::Debug + Send + Sync + 'static>(
    ctx: &'a RunContext,
    key: &str,
) -> Option<&'a T> {
    ctx.get::<Held<T>>(key).map(|h| &h.value)
}

/// The typed value held under `key`, or an error saying what is missing and what makes it
/// (`missing` reads "no ERT data loaded: run load_ert_surveys first").
pub fn require<'a, T: std::fmt::Debug + Send + Sync + 'static>(
    ctx: &'a RunContext,
    key: &str,
    missing: &str,
) -> anyhow::Result<&'a T> {
    held::<T>(ctx, key).ok_or_else(|| anyhow::anyhow!("{missing}"))
}

/// The typed value inside a product (a studio shelf holds the same products a run does).
pub fn value_of<T: std::fmt::Debug + Send + Sync + 'static>(p: &dyn Product) -> Option<&T> {
    p.as_any().downcast_ref::<Held<T>>().map(|h| &h.value)
}

/// A layer interface traced through a seismic velocity model at a threshold velocity, as the
/// seismic tools hand it to the ERT inversion (`keys::SEISMIC_STRUCTURE` holds
/// `Held<Vec<InterfaceLine>>`): a polyline in the section's coordinates, x along the line and
/// z the elevation (m, positive up).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InterfaceLine {
    /// The threshold velocity the interface was traced at (m/s).
    pub velocity_m_per_s: f64,
    /// Positions along the line (m), increasing.
    pub x_m: Vec<f64>,
    /// Elevations of the interface (m).
    pub z_m: Vec<f64>,
}

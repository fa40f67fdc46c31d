//! What every catalog file shares: a generic product wrapper for method results, and where a
//! step writes its figures and tables.

use std::any::Any;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

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
        }
    }

    /// Builder: a key number.
    pub fn number(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.numbers.insert(key.to_string(), value.into());
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

    /// Builder: a file written for it.
    pub fn file(mut self, path: PathBuf) -> Self {
        self.files.push(path);
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

/// The folder a run writes into (`products/<sub>` or `figures`), created; a temporary folder
/// under the system's when the run has no folder (tests).
pub fn run_subdir(ctx: &RunContext, sub: &str) -> std::io::Result<PathBuf> {
    let base = match &ctx.output_dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join("hydrogeo-studio-scratch"),
    };
    let dir = base.join(sub);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// `figures/<name>.png` in the run folder.
pub fn figure_path(ctx: &RunContext, name: &str) -> std::io::Result<PathBuf> {
    Ok(run_subdir(ctx, "figures")?.join(format!("{name}.png")))
}

/// `products/<name>` in the run folder.
pub fn product_path(ctx: &RunContext, name: &str) -> std::io::Result<PathBuf> {
    Ok(run_subdir(ctx, "products")?.join(name))
}

/// Write rows of numbers as CSV with a header (units in the column names).
pub fn write_csv(path: &Path, header: &[&str], rows: &[Vec<f64>]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(f, "{}", header.join(","))?;
    for row in rows {
        let line: Vec<String> = row.iter().map(|v| format!("{v}")).collect();
        writeln!(f, "{}", line.join(","))?;
    }
    f.flush()
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

/// Whether the run has, or will have, an ERT model: then ERT's conversion is the run's water
/// content, and the layered methods (TDEM, MT) do not make their own.
pub fn ert_model_in_run(ctx: &RunContext) -> bool {
    ctx.product(super::keys::INVERSION_RESULTS).is_some()
        || ctx.projected(super::keys::INVERSION_RESULTS)
        || ctx.has_input("ert_files")
        || ctx.has_input("ert_file")
}

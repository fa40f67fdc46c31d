//! Artifacts: the data a run holds (surveys, meshes, models), behind a trait that lets each
//! one describe itself in a line and summarise its numbers, so that nothing else — not the
//! model, not the transcript — ever needs to see an array.

use std::any::Any;
use std::fmt::Debug;
use std::path::PathBuf;
use std::sync::Arc;

/// Anything a step can leave for later steps.
///
/// `describe` is what the model reads about the artifact (one line); `inspect` is the
/// read-only look at its numbers (shapes, ranges, key scalars; a few lines);
/// `key_numbers` feeds `result.json` with the names DESIGN.md fixes (`chi2`, `rrms_percent`,
/// `iterations`, `lambda`, `quality_score`, `n_data`, `n_cells`, …).
pub trait Product: Any + Send + Sync + Debug {
    /// One line for the transcript: what this is, in numbers a reader can check.
    fn describe(&self) -> String;

    /// A few lines of the numbers it holds, for a read-only look. Defaults to `describe`.
    fn inspect(&self) -> String {
        self.describe()
    }

    /// Key numbers for `result.json`, by the standard names. Empty by default.
    fn key_numbers(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }

    /// Files this product was written to (in the run folder), for the report's appendix.
    fn files(&self) -> Vec<PathBuf> {
        Vec::new()
    }

    /// How this product reads in a report (Markdown: settings used, results, quality table),
    /// or `None` when the step summaries say enough.
    fn report_markdown(&self) -> Option<String> {
        None
    }

    /// A top-level field of `result.json` this product contributes (name, value), beside
    /// `products`; `None` by default.
    fn result_field(&self) -> Option<(String, serde_json::Value)> {
        None
    }

    /// For typed access ([`crate::runtime::RunContext::get`]).
    fn as_any(&self) -> &dyn Any;
}

/// A shared, immutable artifact.
pub type SharedProduct = Arc<dyn Product>;

/// A product made of a summary line and a JSON value: enough for tests, for bookkeeping
/// artifacts (report paths, a list of files) and for anything whose numbers are small.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonProduct {
    /// The one-line description.
    pub line: String,
    /// The content.
    pub value: serde_json::Value,
}

impl JsonProduct {
    /// A product described by `line` holding `value`.
    pub fn new(line: impl Into<String>, value: serde_json::Value) -> Self {
        JsonProduct {
            line: line.into(),
            value,
        }
    }
}

impl Product for JsonProduct {
    fn describe(&self) -> String {
        self.line.clone()
    }

    fn inspect(&self) -> String {
        describe_json(&self.value, 1600)
    }

    fn key_numbers(&self) -> serde_json::Map<String, serde_json::Value> {
        match &self.value {
            serde_json::Value::Object(map) => map
                .iter()
                .filter(|(_, v)| v.is_number())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            _ => serde_json::Map::new(),
        }
    }

    fn files(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        collect_paths(&self.value, &mut out);
        out
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn collect_paths(v: &serde_json::Value, out: &mut Vec<PathBuf>) {
    match v {
        serde_json::Value::String(s) if s.contains('/') && std::path::Path::new(s).is_file() => {
            out.push(PathBuf::from(s))
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_paths(x, out)),
        serde_json::Value::Object(m) => m.values().for_each(|x| collect_paths(x, out)),
        _ => {}
    }
}

/// A JSON value in a few lines: scalars as they are, arrays by length and range.
pub fn describe_json(value: &serde_json::Value, budget: usize) -> String {
    use serde_json::Value;
    let text = match value {
        Value::Array(items) => {
            let nums: Vec<f64> = items.iter().filter_map(Value::as_f64).collect();
            if !nums.is_empty() && nums.len() == items.len() {
                describe_numbers(&nums)
            } else {
                format!("list of {}", items.len())
            }
        }
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| match v {
                    Value::Array(_) | Value::Object(_) => {
                        format!("{k}: {}", describe_json(v, budget / 4))
                    }
                    other => format!("{k}: {other}"),
                })
                .collect();
            format!("{{{}}}", parts.join("; "))
        }
        other => other.to_string(),
    };
    if text.chars().count() > budget {
        let mut t: String = text.chars().take(budget).collect();
        t.push('…');
        t
    } else {
        text
    }
}

/// `n` values: how many are finite, and their min, median and max.
pub fn describe_numbers(values: &[f64]) -> String {
    let mut finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() {
        return format!("{} values, none finite", values.len());
    }
    finite.sort_by(f64::total_cmp);
    let median = finite[finite.len() / 2];
    format!(
        "{} values ({} finite): min {}, median {}, max {}",
        values.len(),
        finite.len(),
        short_num(finite[0]),
        short_num(median),
        short_num(finite[finite.len() - 1])
    )
}

/// A number in at most 4 significant digits, for people.
pub fn short_num(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if !v.is_finite() {
        return format!("{v}");
    }
    let mag = v.abs().log10();
    if (-3.0..6.0).contains(&mag) {
        let decimals = (3.0 - mag.floor()).clamp(0.0, 6.0) as usize;
        let s = format!("{v:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        let s = format!("{v:.3e}");
        match s.split_once('e') {
            Some((m, e)) if m.contains('.') => {
                format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
            }
            _ => s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_summarised_not_listed() {
        assert_eq!(
            describe_numbers(&[1.0, 2.0, 3.0, f64::NAN]),
            "4 values (3 finite): min 1, median 2, max 3"
        );
        assert_eq!(short_num(1234.5678), "1235");
        assert_eq!(short_num(0.012345), "0.01235");
        assert_eq!(short_num(1.5e9), "1.5e9");
        assert_eq!(short_num(1e-4), "1e-4");
        assert_eq!(short_num(-0.0), "0");
    }

    #[test]
    fn json_product_key_numbers_are_its_numeric_fields() {
        let p = JsonProduct::new("x", serde_json::json!({"chi2": 1.2, "name": "a"}));
        assert_eq!(p.key_numbers().len(), 1);
        assert_eq!(p.inspect(), "{chi2: 1.2; name: \"a\"}");
    }
}

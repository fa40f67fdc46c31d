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

/// A JSON value in a few lines (seed 001, `describe_value`): a numeric array by its shape and
/// range (`array (2, 2): 3 finite, min 1, median 2, max 3`; `null` counts as not finite), an
/// object as `{key: value; …}` with strings unquoted, other lists by length; cut at `budget`
/// characters.
pub fn describe_json(value: &serde_json::Value, budget: usize) -> String {
    use serde_json::Value;
    let text = match value {
        Value::Array(items) => match numeric_array(value) {
            Some((shape, values)) => describe_array(&shape, &values),
            None => format!("list of {}", items.len()),
        },
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| match v {
                    Value::Array(_) | Value::Object(_) => {
                        format!("{k}: {}", describe_json(v, budget / 4))
                    }
                    Value::String(s) => format!("{k}: {s}"),
                    other => format!("{k}: {other}"),
                })
                .collect();
            format!("{{{}}}", parts.join("; "))
        }
        Value::String(s) => s.clone(),
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

/// The shape and the values (row-major; `null` as NaN) of a rectangular array of numbers, or
/// `None` when `value` is not one.
fn numeric_array(value: &serde_json::Value) -> Option<(Vec<usize>, Vec<f64>)> {
    use serde_json::Value;
    let Value::Array(items) = value else {
        return None;
    };
    if items.iter().all(|v| v.is_number() || v.is_null()) {
        let values = items
            .iter()
            .map(|v| v.as_f64().unwrap_or(f64::NAN))
            .collect();
        return Some((vec![items.len()], values));
    }
    let mut inner_shape: Option<Vec<usize>> = None;
    let mut values = Vec::new();
    for item in items {
        let (shape, v) = numeric_array(item)?;
        if inner_shape.get_or_insert_with(|| shape.clone()) != &shape {
            return None;
        }
        values.extend(v);
    }
    let mut shape = vec![items.len()];
    shape.extend(inner_shape.unwrap_or_default());
    Some((shape, values))
}

/// `array (2, 2): 3 finite, min 1, median 2, max 3` (the shape as numpy prints it).
fn describe_array(shape: &[usize], values: &[f64]) -> String {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let shape = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() {
        return format!("array {shape}: none finite");
    }
    finite.sort_by(f64::total_cmp);
    let n = finite.len();
    let median = if n % 2 == 1 {
        finite[n / 2]
    } else {
        0.5 * (finite[n / 2 - 1] + finite[n / 2])
    };
    format!(
        "array {shape}: {n} finite, min {}, median {}, max {}",
        short_num(finite[0]),
        short_num(median),
        short_num(finite[n - 1])
    )
}

/// `n` values: how many are finite, and their min, median and max.
pub fn describe_numbers(values: &[f64]) -> String {
    describe_array(&[values.len()], values)
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
            "array (4,): 3 finite, min 1, median 2, max 3"
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
        assert_eq!(p.inspect(), "{chi2: 1.2; name: a}");
    }

    #[test]
    fn a_value_is_described_by_shape_and_range_and_strings_are_not_quoted() {
        // Seed 001, describe_value examples (NaN is JSON null here).
        assert_eq!(
            describe_json(&serde_json::json!([[1.0, 2.0], [3.0, null]]), 1600),
            "array (2, 2): 3 finite, min 1, median 2, max 3"
        );
        assert_eq!(
            describe_json(&serde_json::json!({"chi2": 1.5, "status": "success"}), 1600),
            "{chi2: 1.5; status: success}"
        );
        // A ragged list is not an array; an even count's median is the middle pair's mean.
        assert_eq!(
            describe_json(&serde_json::json!([[1.0], [2.0, 3.0]]), 1600),
            "list of 2"
        );
        assert_eq!(
            describe_json(&serde_json::json!([1, 2, 3, 10]), 1600),
            "array (4,): 4 finite, min 1, median 2.5, max 10"
        );
        assert_eq!(
            describe_json(&serde_json::json!([null]), 1600),
            "array (1,): none finite"
        );
    }
}

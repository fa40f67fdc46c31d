//! What a model call costs, from a small price table the user can edit: US dollars per
//! million tokens in and out, matched on the model name's longest known prefix. Local models
//! and unknown names cost nothing (and the report says the cost is an estimate).
//!
//! The table is JSON, `{"gpt-4o-mini": [0.15, 0.6], …}`, read from the file `HGX_PRICES`
//! names; the built-in table is used otherwise.

use std::collections::BTreeMap;

/// Prices in US dollars per million tokens, `(input, output)`, by model-name prefix.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Prices {
    /// Prefix → (in, out).
    pub table: BTreeMap<String, (f64, f64)>,
}

/// The built-in table (list prices at the time of writing; edit via `HGX_PRICES`).
const BUILT_IN: &[(&str, f64, f64)] = &[
    ("gpt-4o-mini", 0.15, 0.60),
    ("gpt-4o", 2.50, 10.00),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1", 2.00, 8.00),
    ("o4-mini", 1.10, 4.40),
    ("claude-3-5-haiku", 0.80, 4.00),
    ("claude-3-5-sonnet", 3.00, 15.00),
    ("claude-3-7-sonnet", 3.00, 15.00),
    ("claude-sonnet-4", 3.00, 15.00),
    ("claude-opus-4", 15.00, 75.00),
    ("deepseek-chat", 0.27, 1.10),
    ("deepseek/deepseek-chat", 0.27, 1.10),
];

impl Prices {
    /// The built-in table.
    pub fn built_in() -> Prices {
        Prices {
            table: BUILT_IN
                .iter()
                .map(|(k, a, b)| (k.to_string(), (*a, *b)))
                .collect(),
        }
    }

    /// Parse a JSON table.
    pub fn parse(text: &str) -> Result<Prices, String> {
        let v: BTreeMap<String, (f64, f64)> = serde_json::from_str(text).map_err(|e| {
            format!("expected {{\"model\": [in, out], …}} in US$ per million tokens: {e}")
        })?;
        Ok(Prices { table: v })
    }

    /// `HGX_PRICES`' table if it is set and readable, else the built-in one.
    pub fn load_default() -> Prices {
        std::env::var("HGX_PRICES")
            .ok()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| Prices::parse(&t).ok())
            .unwrap_or_else(Prices::built_in)
    }

    /// The price of `model` (longest matching prefix), if known.
    pub fn of(&self, model: &str) -> Option<(f64, f64)> {
        self.table
            .iter()
            .filter(|(k, _)| model.starts_with(k.as_str()))
            .max_by_key(|(k, _)| k.len())
            .map(|(_, v)| *v)
    }

    /// Estimated US dollars for a call.
    pub fn cost(&self, model: &str, tokens_in: u64, tokens_out: u64) -> f64 {
        self.of(model).map_or(0.0, |(a, b)| {
            (tokens_in as f64 * a + tokens_out as f64 * b) / 1e6
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins_and_unknown_is_free() {
        let p = Prices::built_in();
        assert_eq!(p.of("gpt-4o-mini-2024-07-18"), Some((0.15, 0.60)));
        assert_eq!(p.of("gpt-4o-2024-08-06"), Some((2.5, 10.0)));
        assert!((p.cost("gpt-4o", 1_000_000, 100_000) - 3.5).abs() < 1e-12);
        assert_eq!(p.cost("llama3.1:8b", 1000, 1000), 0.0);
        assert_eq!(
            Prices::parse("{\"m\": [1, 2]}").unwrap().of("m-x"),
            Some((1.0, 2.0))
        );
        assert!(Prices::parse("[1]").is_err());
    }
}

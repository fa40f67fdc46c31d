//! One fit summary for every inversion: the key numbers `result.json` names the same way
//! wherever they apply (`chi2`, `chi2_history`, `rrms_percent`, `iterations`, `lambda`,
//! `quality_score`, `n_data`, `n_cells`).

use serde_json::{Map, Value};

/// The key numbers of an inversion (or of the model an evaluation kept).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FitSummary {
    /// Final χ² (dimensionless, 1 at the noise level).
    pub chi2: Option<f64>,
    /// χ² per iteration.
    pub chi2_history: Option<Vec<f64>>,
    /// Relative rms misfit, percent.
    pub rrms_percent: Option<f64>,
    /// Iterations made.
    pub iterations: Option<usize>,
    /// Regularisation strength λ used.
    pub lambda: Option<f64>,
    /// The quality rubric's score, 0–100.
    pub quality_score: Option<f64>,
    /// Data inverted.
    pub n_data: Option<usize>,
    /// Model cells (or layers × soundings).
    pub n_cells: Option<usize>,
}

impl FitSummary {
    /// A fit with χ², rrms, iterations and λ.
    pub fn new(chi2: f64, rrms_percent: f64, iterations: usize, lambda: f64) -> Self {
        FitSummary {
            chi2: Some(chi2),
            rrms_percent: Some(rrms_percent),
            iterations: Some(iterations),
            lambda: Some(lambda),
            ..Default::default()
        }
    }

    /// Builder: the χ² of each iteration.
    pub fn history(mut self, chi2: Vec<f64>) -> Self {
        self.chi2_history = Some(chi2);
        self
    }

    /// Builder: how many data and cells.
    pub fn size(mut self, n_data: usize, n_cells: usize) -> Self {
        self.n_data = Some(n_data);
        self.n_cells = Some(n_cells);
        self
    }

    /// Builder: the quality score.
    pub fn quality(mut self, score: f64) -> Self {
        self.quality_score = Some(score);
        self
    }

    /// The numbers that are known, under their `result.json` names, in the order above.
    pub fn numbers(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                m.insert(k.to_string(), v);
            }
        };
        put("chi2", self.chi2.map(Value::from));
        put("chi2_history", self.chi2_history.clone().map(Value::from));
        put("rrms_percent", self.rrms_percent.map(Value::from));
        put("iterations", self.iterations.map(Value::from));
        put("lambda", self.lambda.map(Value::from));
        put("quality_score", self.quality_score.map(Value::from));
        put("n_data", self.n_data.map(Value::from));
        put("n_cells", self.n_cells.map(Value::from));
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_known_numbers_are_written_under_the_shared_names() {
        let f = FitSummary::new(1.2, 3.4, 5, 20.0).size(100, 40);
        let m = f.numbers();
        assert_eq!(m["chi2"], 1.2);
        assert_eq!(m["iterations"], 5);
        assert_eq!(m["n_cells"], 40);
        assert!(!m.contains_key("quality_score"));
        assert_eq!(m.len(), 6);
    }
}

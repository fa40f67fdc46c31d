//! The large example of issue 25 (`make-example --monitoring EPOCHS --soundings M`): the
//! bundled example's truth measured as a monitoring campaign and a dense TDEM line — work
//! that outgrows one desk and splits into independent parts.
//!
//! * ERT: `EPOCHS` daily dipole–dipole surveys from 2024-05-01 (`ert/<date>.dat`), the plume's
//!   radius growing linearly from its first to its last radius of the truth (2.5 → 5.5 m),
//!   each computed and noised as the bundled example's surveys ([`super::ert`]: the 2.5D
//!   forward on a finer mesh, 2 % seeded noise, seed 2024 + survey number). Inverted by the
//!   difference scheme (`time_lapse_method`), each epoch against the first survey.
//! * TDEM: `M` central-loop soundings evenly along the line from 1 m to 93 m
//!   (`tdem/soundings.csv`, `tdem/geometry.csv`, [`super::tdem`]: the same loop, gates and 3 %
//!   seeded noise), inverted one by one (`tdem_params.lateral_constraints = false`: a line
//!   this dense would be laterally constrained by default, which couples every sounding).
//!
//! The goal asks no question: a split run does not answer the goal's questions (they combine
//! methods), and this project exists to be split.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Truth, ert, tdem};
use crate::methods::ert::readers::unified;

/// The goal of the large example.
pub const GOAL: &str =
    "Invert every monitoring epoch against the first survey, and every TDEM sounding of the line";

/// The first day of the campaign.
const START: (i64, u32, u32) = (2024, 5, 1);

/// Days since 1970-01-01 of a civil date (Hinnant, "chrono-Compatible Low-Level Date
/// Algorithms", `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count since 1970-01-01 (Hinnant, `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The date of epoch `t` (day `t` of the campaign), year-first.
pub fn epoch_date(t: usize) -> String {
    let (y, m, d) = civil_from_days(days_from_civil(START.0, START.1, START.2) + t as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The plume radius (m) of each of `epochs` surveys: linear from the truth's first radius to
/// its last.
pub fn radii_m(truth: &Truth, epochs: usize) -> Vec<f64> {
    let (a, b) = (truth.plume.radius_m[0], truth.plume.radius_m[3]);
    (0..epochs)
        .map(|t| a + (b - a) * t as f64 / (epochs.saturating_sub(1)).max(1) as f64)
        .collect()
}

/// The positions (m) of `n` soundings evenly from 1 m to 93 m.
pub fn positions_m(n: usize) -> Vec<f64> {
    (0..n)
        .map(|k| 1.0 + 92.0 * k as f64 / (n.saturating_sub(1)).max(1) as f64)
        .collect()
}

/// Write the large example into `dir` (module docs): `epochs` ≥ 2 ERT surveys and
/// `soundings` ≥ 1 TDEM soundings. Returns the project file.
pub fn write(
    truth: &Truth,
    dir: &Path,
    epochs: usize,
    soundings: usize,
) -> Result<PathBuf, String> {
    if epochs < 2 || soundings < 1 {
        return Err(format!(
            "--monitoring needs 2 or more epochs and --soundings 1 or more soundings, found {epochs} and {soundings}"
        ));
    }
    std::fs::create_dir_all(dir.join("ert")).map_err(|e| format!("{}: {e}", dir.display()))?;
    let clean = ert::clean_responses(truth, &radii_m(truth, epochs))?;
    let mut files = Vec::new();
    for (t, c) in clean.iter().enumerate() {
        let rel = format!("ert/{}.dat", epoch_date(t));
        unified::write(&ert::survey(truth, c, t), &dir.join(&rel)).map_err(|e| e.to_string())?;
        files.push(Value::from(rel));
    }
    let roles = tdem::write_at(truth, dir, &positions_m(soundings))?;
    let mut inputs = serde_json::Map::new();
    inputs.insert("ert_files".into(), Value::Array(files));
    for (role, path) in roles {
        inputs.insert(role, Value::from(path.display().to_string()));
    }
    let mut tdem_params: Value =
        serde_json::from_str(tdem::TDEM_PARAMS).map_err(|e| format!("tdem::TDEM_PARAMS: {e}"))?;
    tdem_params["lateral_constraints"] = Value::Bool(false);
    let project = json!({
        "goal": GOAL,
        "inputs": inputs,
        "config": {
            "site": format!("{} — monitoring campaign ({epochs} epochs, {soundings} soundings)", truth.site),
            "time_lapse_method": "difference",
            "tdem_params": tdem_params,
        }
    });
    super::write_truth_and_project(dir, truth, &project)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_radii_and_positions_are_what_the_docs_say() {
        assert_eq!(epoch_date(0), "2024-05-01");
        assert_eq!(epoch_date(31), "2024-06-01");
        // 1 May 2024 + 304 days: 1 March 2025 (February 2025 has 28 days).
        assert_eq!(epoch_date(304), "2025-03-01");
        assert_eq!(epoch_date(303), "2025-02-28");
        let r = radii_m(&Truth::default(), 4);
        assert_eq!(r, vec![2.5, 3.5, 4.5, 5.5]);
        let p = positions_m(5);
        assert_eq!(p, vec![1.0, 24.0, 47.0, 70.0, 93.0]);
        assert!(write(&Truth::default(), Path::new("/nonexistent"), 1, 5).is_err());
    }
}

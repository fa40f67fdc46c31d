//! Gravity and magnetics: station tables, regional/residual separation, gridding, prism
//! forward models, and the 3D linear inversion.
//!
//! Conventions throughout: x east, y north, z **up**, metres; gravity in mGal with `gz`
//! **positive down** (a dense body gives a positive anomaly); magnetics in nT as the
//! total-field anomaly projected on the inducing field; density contrast in kg/m³,
//! susceptibility in SI.

pub mod checks;
pub mod evaluation;
pub mod grid;
pub mod inversion;
pub mod joint_trend;
pub mod kind;
pub mod mesh;
pub mod noise;
pub mod pipeline;
pub mod prism;
pub mod projection;
pub mod sensitivity;
pub mod spectral;
pub mod stations;
pub mod trend;

/// The progress callback of long computations: `(fraction 0–1, what is being done)`.
pub type Progress<'a> = dyn FnMut(f64, &str) + 'a;

/// Why a gravity/magnetics computation could not be done.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GravMagError {
    /// The input does not allow the computation (too few points, bad parameter, …).
    #[error("{0}")]
    InvalidInput(String),
    /// A linear-algebra step failed (singular system, failed decomposition).
    #[error("numerical failure: {0}")]
    Numerical(String),
    /// The user cancelled a long computation.
    #[error("cancelled by the user")]
    Cancelled,
    /// What the data measure could not be inferred: the user must say (the question).
    #[error("the field kind is ambiguous: {0}")]
    AmbiguousKind(String),
}

/// File extensions a station table may have (after removing a trailing `.xz`).
const TABLE_EXTENSIONS: &[&str] = &[
    "csv", "txt", "dat", "xyz", "ast", "tsv", "asc", "grav", "mag",
];

/// The JSON summary of a gravity/magnetics station table, for `hydrogeo-studio read <file>`.
///
/// `None` when the file is clearly not a station table: another extension, or it does not
/// parse as one and neither its name nor its first lines mention gravity or magnetics.
/// `Some(Err)` when it names gravity/magnetics but cannot be read; `Some(Ok)` with the
/// summary (format, whether the columns were guessed, counts, ranges, unit, the kind or the
/// question to ask about it, notes) otherwise.
pub fn read_summary(
    path: &std::path::Path,
) -> Option<Result<serde_json::Value, crate::methods::io::ReadError>> {
    let name = path.file_name()?.to_string_lossy().to_lowercase();
    let stem = name.strip_suffix(".xz").unwrap_or(&name);
    let ext = std::path::Path::new(stem)
        .extension()?
        .to_string_lossy()
        .to_string();
    if !TABLE_EXTENSIONS.contains(&ext.as_str()) {
        return None;
    }
    let options = stations::ReadOptions::default();
    match stations::read_station_table(path, &options) {
        Ok(table) => {
            let has_coordinate_names = table.columns.iter().any(|c| {
                c.name.is_some()
                    && matches!(
                        c.role,
                        stations::ColumnRole::X
                            | stations::ColumnRole::Y
                            | stations::ColumnRole::Lon
                            | stations::ColumnRole::Lat
                    )
            });
            let kind_evidence = match &table.kind {
                kind::KindInference::Resolved { .. } => true,
                kind::KindInference::Ambiguous { evidence, .. } => !evidence.is_empty(),
            };
            // A header-less numeric table is only claimed with some sign of gravity/magnetics.
            (has_coordinate_names || kind_evidence).then(|| Ok(table.summary()))
        }
        Err(e) => {
            // Claim the failure only for a file that names gravity/magnetics and looks like a
            // table (most of its first lines hold two or more numbers), not for prose.
            let head = stations::read_maybe_xz(path)
                .map(|(b, _)| String::from_utf8_lossy(&b[..b.len().min(4000)]).into_owned())
                .unwrap_or_default();
            let lines: Vec<&str> = head
                .lines()
                .filter(|l| !l.trim().is_empty())
                .take(20)
                .collect();
            let numeric_lines = lines
                .iter()
                .filter(|l| {
                    crate::methods::io::fields(l)
                        .iter()
                        .filter(|t| crate::methods::io::parse_f64(t).is_some())
                        .count()
                        >= 2
                })
                .count();
            let tabular = !lines.is_empty() && 2 * numeric_lines >= lines.len();
            let named = !kind::find_evidence(&name, kind::EvidenceSource::FileName).is_empty();
            (named && tabular).then_some(Err(e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field_data;

    fn summary(rel: &str) -> Option<Result<serde_json::Value, crate::methods::io::ReadError>> {
        let p = field_data::data(rel)?;
        read_summary(&p)
    }

    #[test]
    fn summaries_of_the_real_station_files() {
        // Bushveld: 3 877 stations (acknowledgement.txt), header x_m,y_m,gravity_disturbance_mGal.
        let Some(s) = summary("gravmag/phgx/bushveld_gravity_disturbance.csv") else {
            return;
        };
        let s = s.unwrap();
        assert_eq!(s["n_stations"], 3877);
        assert_eq!(s["kind"]["status"], "resolved");
        assert_eq!(s["kind"]["kind"]["quantity"], "gravity_disturbance");
        assert_eq!(s["value_unit"], "mGal");
        assert_eq!(s["columns_guessed"], false);
        // Britain subset: about 3 451 stations of TMI in nT.
        let s = summary("gravmag/phgx/britain_aeromagnetic_anomaly.csv")
            .unwrap()
            .unwrap();
        assert_eq!(s["n_stations"], 3451);
        assert_eq!(s["kind"]["kind"]["family"], "magnetic");
        // South Africa: header-less; the kind comes from the file name, the columns are the
        // documented guess, and the note warns that columns 1–2 look geographic.
        let s = summary("gravmag/harmonica_south-africa-gravity.ast.xz")
            .unwrap()
            .unwrap();
        assert_eq!(s["n_stations"], 14_559);
        assert_eq!(s["columns_guessed"], true);
        assert_eq!(s["kind"]["kind"]["family"], "gravity");
        assert!(s["format"].as_str().unwrap().contains("xz"));
        let notes = s["notes"].to_string();
        assert!(notes.contains("longitude and latitude"), "{notes}");
        // Hartousov: "# x g" profile.
        let s = summary("gravmag/gimli_hartousov_profile.txt")
            .unwrap()
            .unwrap();
        assert_eq!(s["profile"], true);
        assert_eq!(s["kind"]["kind"]["family"], "gravity");
    }

    #[test]
    fn other_methods_files_are_not_claimed() {
        for rel in [
            "ert/gimli/gallery.dat",
            "seismic/gimli_koenigsee.sgt",
            "tdem/TEMfastLangeoog.tem",
            "gpr/gprpy/GSSI_FILE____032.DZT",
        ] {
            let Some(p) = field_data::data(rel) else {
                return;
            };
            assert!(read_summary(&p).is_none(), "{rel} claimed");
        }
    }

    #[test]
    fn no_shared_data_file_makes_read_summary_panic() {
        // Walk every staged file; the claim list is printed for review.
        let root = field_data::shared_root().join("data");
        if !root.exists() {
            return;
        }
        let mut stack = vec![root];
        let mut claimed = Vec::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = entry.path();
                if p.is_dir() {
                    stack.push(p);
                } else if let Some(r) = read_summary(&p) {
                    claimed.push((p.display().to_string(), r.is_ok()));
                }
            }
        }
        eprintln!("claimed: {claimed:#?}");
        assert!(claimed.iter().any(|(p, ok)| p.contains("bushveld") && *ok));
    }
}

//! Time-domain electromagnetics: sounding files, the 1D layered-earth forward model
//! (Hankel and sine/cosine digital filters), Occam and few-layer inversions.
//!
//! * [`readers`]: `time, response` / `time, snd1, …` tables with a geometry table, TEM-FAST
//!   `.tem`, USF `.usf`; saturated, ramp-affected and noise-floor gates are masked and
//!   counted ([`data`]).
//! * [`forward`]: central, offset and coincident loops over a layered earth, step-off or
//!   ramped turn-off, B and dB/dt, with the analytic Jacobian; [`analytic`] holds the
//!   half-space closed forms and the late-time apparent resistivity.
//! * [`invert`]: smooth many-layer Occam and few-layer Marquardt inversions of one sounding,
//!   DOI; [`line`]: laterally constrained line inversion; [`survey`]: a whole file in one
//!   call; [`quality`]: the verdict by the shared rubric; [`kriging`]: plan-view maps of
//!   log10 ρ at chosen depths with the kriging σ.
//! * [`params`]: the project's `tdem_params` (system, inversion, maps); [`pipeline`]: the
//!   steps the catalog tools and the studio panel both call (load, invert, evaluate, map).

pub mod analytic;
pub mod data;
pub mod diagnosis;
pub mod filters;
pub mod forward;
pub mod interpret;
pub mod invert;
pub mod kriging;
pub mod linalg;
pub mod line;
pub mod params;
pub mod pipeline;
pub mod quality;
pub mod readers;
pub mod special;
pub mod survey;

use crate::methods::io::{ReadError, read_text};
use std::path::Path;

/// The JSON summary of a TDEM file for `hydrogeo-studio read <file>`: `None` when the file
/// is clearly not a TDEM format (by extension, or for tables by the header: the first column
/// must be a time, or the table must be a sounding geometry table).
pub fn read_summary(path: &Path) -> Option<Result<serde_json::Value, ReadError>> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let options = readers::ReadOptions::default();
    match ext.as_str() {
        "tem" => Some(readers::read_temfast(path, &options).map(|f| readers::summarize(path, &f))),
        "usf" => Some(readers::read_usf(path, &options).map(|f| readers::summarize(path, &f))),
        "csv" | "txt" | "dat" | "tsv" => {
            let text = read_text(path).ok()?;
            let header = text
                .lines()
                .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))?
                .to_ascii_lowercase();
            let first = header
                .split([',', ';', '\t', ' '])
                .find(|s| !s.trim().is_empty())?
                .trim()
                .to_string();
            let n_fields = header
                .split([',', ';', '\t', ' '])
                .filter(|s| !s.trim().is_empty())
                .count();
            if first.starts_with("time") && n_fields >= 2 {
                Some(readers::read_table(path, &options).map(|f| readers::summarize(path, &f)))
            } else if first.starts_with("sounding")
                && ["easting", "northing", "dist", "alt"]
                    .iter()
                    .any(|k| header.contains(k))
            {
                Some(readers::read_geometry(path).map(|rows| {
                    serde_json::json!({
                        "method": "tdem",
                        "file": path.display().to_string(),
                        "format": "geometry_table",
                        "format_guessed": false,
                        "n_soundings": rows.len(),
                        "rows": rows,
                    })
                }))
            } else {
                None
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_summary_recognises_tdem_files_and_declines_others() {
        let tem = crate::require_data!("tdem/TEMfastLangeoog.tem");
        let v = read_summary(&tem).unwrap().unwrap();
        assert_eq!(v["format"], "tem_fast");
        assert_eq!(v["n_gates_total"], 44);
        assert_eq!(v["soundings"][0]["n_used"], 34);
        let sky = crate::require_data!("tdem/phgx/skytem_bhmar_tdem.csv");
        let v = read_summary(&sky).unwrap().unwrap();
        assert_eq!(v["n_soundings"], 5);
        let geo = crate::require_data!("tdem/phgx/skytem_bhmar_geometry.csv");
        assert_eq!(
            read_summary(&geo).unwrap().unwrap()["format"],
            "geometry_table"
        );
        // Not TDEM: a gravity table and an ERT file.
        if let Some(g) = crate::field_data::bench("grav_400.csv") {
            assert!(read_summary(&g).is_none());
        }
        if let Some(e) = crate::field_data::bench("ert_dd48.dat") {
            assert!(read_summary(&e).is_none());
        }
    }
}

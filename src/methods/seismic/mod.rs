//! Seismic refraction: travel-time files and raw gathers (SEG-2, SEG-Y), first-break
//! picking, shortest-path forward modelling, travel-time tomography, interfaces and the
//! structural constraint handed to ERT.
//!
//! The chain, and the function each step calls:
//!
//! | step | function |
//! |---|---|
//! | read picks | [`sgt::read_sgt`], [`tables::read_traveltime_csv`], [`tables::read_pyrefra`] |
//! | read geometry | [`tables::read_topography`], [`data::apply_topography`] |
//! | read raw shots | [`seg2::read_seg2`], [`segy::read_segy`] |
//! | pick first breaks | [`picking::pick_gather`], [`picking::reciprocal_check`], [`picking::picks_to_traveltimes`] |
//! | forward model | [`grid::Grid::for_survey`], [`forward::RayGraph::new`], [`forward::forward`] |
//! | invert | [`inversion::invert`], or [`evaluate::invert_with_retries`] with the λ retries |
//! | judge | [`evaluate::evaluate`] (the shared rubric of `methods::quality`) |
//! | interfaces | [`interfaces::extract_interfaces`], [`interfaces::derive_structure`] |
//! | `read <file>` | [`read_summary`] |

pub mod data;
pub mod evaluate;
pub mod forward;
pub mod gather;
pub mod grid;
pub mod interfaces;
pub mod interpret;
pub mod inversion;
pub mod picking;
pub mod seg2;
pub mod segy;
pub mod sgt;
pub mod tables;

pub use data::{Topography, TravelTimes};

use std::path::Path;

use crate::methods::io::{ReadError, read_bytes};

/// Whether the text's comment lines carry a pyGIMLi data header with the shot and geophone
/// tokens `s` and `g` (ERT files carry `a b m n` instead).
fn looks_like_unified_traveltimes(text: &str) -> bool {
    text.lines()
        .filter(|l| l.trim_start().starts_with('#'))
        .any(|l| {
            let toks: Vec<String> = l
                .trim_start()
                .trim_start_matches('#')
                .split_whitespace()
                .map(str::to_ascii_lowercase)
                .collect();
            toks.iter().any(|t| t == "s") && toks.iter().any(|t| t == "g")
        })
}

/// The first non-empty, non-comment line, lower-cased.
fn header_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Add the format fields every summary carries.
fn tag(mut v: serde_json::Value, format: &str, guessed: bool, how: &str) -> serde_json::Value {
    if let Some(o) = v.as_object_mut() {
        o.insert("method".into(), "seismic refraction".into());
        o.insert("format".into(), format.into());
        o.insert("format_guessed".into(), guessed.into());
        o.insert("format_detected_by".into(), how.into());
    }
    v
}

/// The JSON summary of a seismic file for `hydrogeo-studio read <file>`: `None` when the
/// file is clearly not one of this method's formats (by extension and signature),
/// otherwise the format (and whether that was a guess), counts, ranges and units.
pub fn read_summary(path: &Path) -> Option<Result<serde_json::Value, ReadError>> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let ours_by_ext = matches!(ext.as_str(), "sgt" | "seg2" | "sg2" | "sgy" | "segy");
    let bytes = match read_bytes(path) {
        Ok(b) => b,
        Err(e) => return ours_by_ext.then_some(Err(e)),
    };
    let gather_json = |g: &gather::ShotGather| {
        let mut v = g.summary();
        if let Some(o) = v.as_object_mut() {
            o.insert("notes".into(), serde_json::json!(g.notes));
        }
        v
    };
    // Binary signatures first.
    if seg2::is_seg2(&bytes) {
        let how = if matches!(ext.as_str(), "seg2" | "sg2" | "dat") {
            "extension and the SEG-2 block id"
        } else {
            "the SEG-2 block id (0x3A55)"
        };
        return Some(seg2::parse_seg2(path, &bytes).map(|g| {
            tag(
                serde_json::json!({"kind": "raw shot gather", "gathers": [gather_json(&g)]}),
                "SEG-2",
                false,
                how,
            )
        }));
    }
    if matches!(ext.as_str(), "sgy" | "segy") || segy::is_segy(&bytes) {
        let by_ext = matches!(ext.as_str(), "sgy" | "segy");
        return Some(segy::parse_segy(path, &bytes).map(|f| {
            let mut notes = f.notes.clone();
            if !by_ext {
                notes.push(
                    "SEG-Y recognised by a plausible binary header only (a weak signature)".into(),
                );
            }
            tag(
                serde_json::json!({
                    "kind": "raw shot gathers",
                    "revision": f.revision,
                    "big_endian": f.big_endian,
                    "n_gathers": f.gathers.len(),
                    "n_traces": f.gathers.iter().map(gather::ShotGather::n_traces).sum::<usize>(),
                    "gathers": f.gathers.iter().map(gather_json).collect::<Vec<_>>(),
                    "notes": notes,
                }),
                &format!("SEG-Y rev {}", f.revision),
                f.guessed || !by_ext,
                if by_ext {
                    "extension"
                } else {
                    "binary header (weak signature)"
                },
            )
        }));
    }
    let text = String::from_utf8_lossy(&bytes);
    // PyRefra picks: picks.dat beside shots.geo and receivers.geo.
    if path.file_name().and_then(|n| n.to_str()) == Some("picks.dat")
        && let Some(dir) = path.parent()
        && dir.join("shots.geo").exists()
        && dir.join("receivers.geo").exists()
    {
        return Some(
            tables::read_pyrefra(path, &dir.join("shots.geo"), &dir.join("receivers.geo")).map(
                |tt| {
                    tag(
                        tt.summary(),
                        "PyRefra picks",
                        false,
                        "file name and its .geo files",
                    )
                },
            ),
        );
    }
    if ext == "sgt" || (ext == "dat" && looks_like_unified_traveltimes(&text)) {
        let how = if ext == "sgt" {
            "extension"
        } else {
            "the s/g tokens of its data header"
        };
        return Some(sgt::parse_sgt(path, &text).map(|tt| {
            let g = tt.guessed;
            tag(tt.summary(), "pyGIMLi unified travel times", g, how)
        }));
    }
    if matches!(ext.as_str(), "csv" | "txt" | "tsv") {
        let h = header_line(&text);
        let has = |words: &[&str]| words.iter().any(|w| h.contains(w));
        if has(&["source", "shot", "sx"])
            && has(&["receiver", "geophone", "gx", "rx"])
            && has(&["time", "tt", "pick"])
        {
            return Some(
                tables::parse_traveltime_csv(path, &text)
                    .map(|tt| tag(tt.summary(), "travel-time table", false, "its header")),
            );
        }
        if h.starts_with("station") && has(&["elevation", "elev"]) {
            return Some(tables::parse_topography(path, &text).map(|t| {
                tag(
                    serde_json::json!({
                        "kind": "geophone / topography table",
                        "n_stations": t.x_m.len(),
                        "x_range_m": [t.x_m.iter().copied().fold(f64::INFINITY, f64::min), t.x_m.iter().copied().fold(f64::NEG_INFINITY, f64::max)],
                        "elevation_range_m": [t.z_m.iter().copied().fold(f64::INFINITY, f64::min), t.z_m.iter().copied().fold(f64::NEG_INFINITY, f64::max)],
                        "units": {"x": "m", "z": "m"},
                        "notes": t.notes,
                    }),
                    "station table",
                    false,
                    "its header",
                )
            }));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every staged seismic file is recognised with the counts the oracle gives; ERT and
    /// other methods' files are not claimed.
    #[test]
    fn read_summary_recognises_the_staged_files() {
        let oracle = crate::require_oracle!("seismic.json");
        let k = crate::require_data!("seismic/gimli_koenigsee.sgt");
        let v = read_summary(&k).unwrap().unwrap();
        assert_eq!(
            v["n_data"],
            oracle["files"]["gimli_koenigsee.sgt"]["n_picks"]
        );
        assert_eq!(v["format_guessed"], false);
        let s = crate::require_data!("seismic/phgx/srtfieldline2.dat");
        let v = read_summary(&s).unwrap().unwrap();
        assert_eq!(v["n_data"], 357);
        assert_eq!(v["format_detected_by"], "the s/g tokens of its data header");
        let r = crate::require_data!("seismic/pyrefra_example/Rec_00001.seg2");
        let v = read_summary(&r).unwrap().unwrap();
        assert_eq!(v["gathers"][0]["n_traces"], 60);
        assert_eq!(v["gathers"][0]["n_samples"], 4096);
        assert_eq!(v["gathers"][0]["sample_interval_s"], 0.00025);
        let l = crate::require_data!("seismic/phgx/location.txt");
        assert_eq!(read_summary(&l).unwrap().unwrap()["n_stations"], 24);
        let p = crate::require_data!("seismic/pyrefra_example/picks.dat");
        assert_eq!(
            read_summary(&p).unwrap().unwrap()["format"],
            "PyRefra picks"
        );
        // Not ours: an ERT unified file and a GPR file.
        let e = crate::require_data!("ert/gimli/gallery.dat");
        assert!(read_summary(&e).is_none());
        let g = crate::require_data!("gpr/gprpy/GSSI_FILE____032.DZT");
        assert!(read_summary(&g).is_none());
    }

    #[test]
    fn unreadable_files_of_our_extensions_are_errors() {
        let r = read_summary(Path::new("/nonexistent/line.sgt")).unwrap();
        assert!(matches!(r, Err(ReadError::Io { .. })));
        assert!(read_summary(Path::new("/nonexistent/x.dzt")).is_none());
    }
}
#[cfg(test)]
mod claim_scan {
    /// Over every staged file of every method: the seismic summaries claim exactly the
    /// seismic data files (not the READMEs, the PyRefra config or .geo tables), and no file of
    /// another method — the SEG-Y signature is weak, so this guards against false claims.
    #[test]
    fn claims_exactly_the_seismic_files() {
        fn walk(d: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            let Ok(rd) = std::fs::read_dir(d) else { return };
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out)
                } else {
                    out.push(p)
                }
            }
        }
        let root = crate::require_data!("seismic")
            .parent()
            .map(|p| p.to_path_buf())
            .unwrap();
        let mut files = vec![];
        walk(&root, &mut files);
        let mut claimed = 0;
        for f in &files {
            let rel = f.strip_prefix(&root).unwrap().to_string_lossy().to_string();
            let is_seismic_data = rel.starts_with("seismic/")
                && !rel.ends_with("README.txt")
                && !rel.ends_with("README.md")
                && !rel.ends_with(".geo")
                && !rel.ends_with(".config");
            match super::read_summary(f) {
                Some(r) => {
                    assert!(is_seismic_data, "claimed {rel}");
                    assert!(r.is_ok(), "{rel}: {:?}", r.err());
                    claimed += 1;
                }
                None => assert!(!is_seismic_data, "not recognised: {rel}"),
            }
        }
        assert!(claimed >= 7, "{claimed}");
    }
}

//! Ground-penetrating radar: GSSI DZT, pulseEKKO DT1/HD, MALA rd3/rd7 and SEG-Y readers,
//! GPS/topography side files, and the processing chain (time zero, dewow, band-pass,
//! background removal, t^p and AGC gains, Stolt migration, time to depth, topographic
//! correction) with its recipe, velocity analysis by hyperbolic semblance, and `.npy`/`.npz`
//! output.
//!
//! Entry points for the catalog and the studio:
//!
//! * [`read_line`] — any supported radar file → [`GprLine`];
//! * [`read_summary`] — the CLI's `read <file>` answer;
//! * [`process::process_line`]`(line, params, velocity, topography)` with
//!   [`process::ProcessingParams`] (numbers and switches: the runtime's `gpr_params`), an
//!   explicit `Option<&VelocitySource>` (never part of the adjustable parameters) and an
//!   optional [`sidefiles::Topography`] → [`process::ProcessedLine`] (`write_npz`,
//!   `write_recipe_json`, `write_radargram_png`, `summary`);
//! * [`velocity::analyse_gather`] for a CMP/WARR line → a [`velocity::VelocityPick`] to pass
//!   back as [`velocity::VelocitySource::Semblance`];
//! * [`sidefiles::read_topography`] / [`sidefiles::read_gps`] for side files;
//! * [`dzt::write_dzt`] and [`synthetic::ZeroOffsetModel`] for synthetic lines (the example).

use std::path::Path;

pub mod bandpass;
pub mod depth;
pub mod dt1;
pub mod dzt;
pub mod evaluation;
pub mod filters;
pub mod interpret;
pub mod line;
pub mod mala;
pub mod migration;
pub mod npy;
pub mod process;
pub mod segy;
pub mod sidefiles;
pub mod synthetic;
pub mod timezero;
pub mod velocity;

pub use line::{GprError, GprFormat, GprLine, SPEED_OF_LIGHT_M_PER_NS, SurveyKind};

use crate::methods::io::ReadError;

/// Ricker wavelet (the negative normalised second derivative of a Gaussian) of peak
/// frequency `f_ghz` at time `t_ns`: `r(t) = (1 − 2π²f²t²)·exp(−π²f²t²)` (Ricker 1953),
/// 1 at t = 0. Used for synthetic sections.
pub fn ricker(t_ns: f64, f_ghz: f64) -> f64 {
    let a = (std::f64::consts::PI * f_ghz * t_ns).powi(2);
    (1.0 - 2.0 * a) * (-a).exp()
}

/// What a path is, judged by its extension (and, for side files, its neighbours).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GprFileKind {
    /// `.dzt`
    Dzt,
    /// `.dt1` or `.hd`
    PulseEkko,
    /// `.rd3`, `.rd7` or `.rad`
    Mala,
    /// `.sgy`, `.segy`
    SegY,
    /// `.dzg`, `.gps`, `.nmea`, `.cor`
    Gps,
    /// `.txt`, `.xyz`, `.csv` beside a radar file of the same name stem
    Topography,
}

fn ext_lower(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// True when the directory of `path` holds a radar data file whose stem equals `path`'s stem
/// or shares its prefix up to the last `_` (`SnS_ComOffs_GPS.xyz` ↔ `SnS_ComOffs_XLINE00.DT1`).
fn beside_radar_file(path: &Path) -> bool {
    let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().to_string()) else {
        return false;
    };
    let prefix = stem.rsplit_once('_').map(|(p, _)| p.to_string());
    let Some(dir) = path.parent() else {
        return false;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let p = e.path();
        let radar = RADAR_EXTENSIONS.contains(&ext_lower(&p).as_str());
        let other = p
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        radar
            && (other == stem
                || prefix
                    .as_deref()
                    .is_some_and(|pre| other.starts_with(&format!("{pre}_"))))
    })
}

/// The extensions of the radar data files themselves (not their headers or side files).
pub const RADAR_EXTENSIONS: &[&str] = &["dzt", "dt1", "rd3", "rd7", "sgy", "segy"];

/// Classify a path; `None` when it is clearly not a GPR file.
pub fn file_kind(path: &Path) -> Option<GprFileKind> {
    match ext_lower(path).as_str() {
        "dzt" => Some(GprFileKind::Dzt),
        "dt1" | "hd" => Some(GprFileKind::PulseEkko),
        "rd3" | "rd7" | "rad" => Some(GprFileKind::Mala),
        "sgy" | "segy" => Some(GprFileKind::SegY),
        "dzg" | "gps" | "nmea" | "cor" => Some(GprFileKind::Gps),
        "txt" | "xyz" | "csv" if beside_radar_file(path) => Some(GprFileKind::Topography),
        _ => None,
    }
}

/// Read any supported radar data file (by extension). SEG-Y is read with default options.
pub fn read_line(path: &Path) -> Result<GprLine, ReadError> {
    match file_kind(path) {
        Some(GprFileKind::Dzt) => dzt::read_dzt(path),
        Some(GprFileKind::PulseEkko) => dt1::read_dt1(path),
        Some(GprFileKind::Mala) => mala::read_mala(path),
        Some(GprFileKind::SegY) => segy::read_segy(path, segy::SegyOptions::default()),
        _ => Err(ReadError::format(
            path,
            "not a radar data file: expected .dzt, .dt1/.hd, .rd3/.rd7/.rad, .sgy/.segy",
        )),
    }
}

/// The CLI's `read <file>`: `None` when the file is clearly not a GPR format (by
/// extension; `.txt`/`.xyz`/`.csv` only beside a radar file), otherwise the JSON summary of
/// the line or side file (format, whether that was a guess, counts, ranges, units, notes).
pub fn read_summary(path: &Path) -> Option<Result<serde_json::Value, ReadError>> {
    let kind = file_kind(path)?;
    Some(match kind {
        GprFileKind::Gps => sidefiles::read_gps(path).map(|t| t.summary()),
        GprFileKind::Topography => sidefiles::read_topography(path).map(|t| {
            let mut s = t.summary();
            s["format_guessed"] = serde_json::Value::Bool(true);
            s["why"] = serde_json::Value::String(
                "a plain table beside a radar file of the same name, read as topography".into(),
            );
            s
        }),
        _ => read_line(path).map(|l| l.summary()),
    })
}

#[cfg(test)]
mod field_tests;

#[cfg(test)]
mod fuzz_tests;

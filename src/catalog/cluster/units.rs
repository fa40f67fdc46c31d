//! The independent units of each method of a project, or why a method's work stays whole:
//! ERT epochs of a difference, ratio or independent time-lapse (after the baseline, which
//! every part holding epochs inverts again, to the same numbers), TDEM soundings inverted one
//! by one, MT sites.

use serde_json::Value;

use super::{ERT_EPOCH, MT, SplitError, TDEM_SOUNDING, Unit, Whole, paths_of, stem};
use crate::catalog::kit::keys;
use crate::methods::ert::timelapse::TimeLapseMethod;
use crate::methods::tdem::params::TdemParams;
use crate::methods::tdem::pipeline::{lateral_decision, load_dataset};
use crate::runtime::Project;

/// What a method contributes to a plan: its units (empty when kept whole), the input roles
/// they take out of the rest, and what is said about it.
#[derive(Debug, Default)]
pub(super) struct MethodSplit {
    /// The units, in project order.
    pub units: Vec<Unit>,
    /// Input roles the units hold (not in the rest of the project).
    pub roles: Vec<&'static str>,
    /// Work kept whole, or shared, with the reason.
    pub whole: Vec<Whole>,
}

fn whole(method: &str, kind: &str, why: impl Into<String>) -> Whole {
    Whole {
        method: method.into(),
        kind: kind.into(),
        why: why.into(),
    }
}

fn has(project: &Project, role: &str) -> bool {
    project.inputs.get(role).is_some_and(|v| !v.is_null())
}

/// MT sites of `mt_files`, one unit each; a folder (`mt_dir`) stays whole.
pub(super) fn mt_sites(project: &Project) -> Result<MethodSplit, SplitError> {
    let mut out = MethodSplit::default();
    if has(project, keys::MT_DIR) && !has(project, keys::MT_FILES) {
        out.whole.push(whole(
            "MT",
            "not_split",
            "the sites are named by a folder (mt_dir); list them in mt_files to split them by site",
        ));
        return Ok(out);
    }
    for (i, s) in paths_of(project, keys::MT_FILES)?.into_iter().enumerate() {
        out.units.push(Unit {
            method: MT.into(),
            name: stem(&s),
            inputs: vec![s],
            index: Some(i),
        });
    }
    if !out.units.is_empty() {
        out.roles.push(keys::MT_FILES);
    }
    Ok(out)
}

/// ERT epochs: one unit per later survey of a difference, ratio or independent time-lapse of
/// `ert_files`; a simultaneous scheme, outlier rejection (which removes a datum from every
/// survey) or a single survey stay whole.
pub(super) fn ert_epochs(project: &Project) -> Result<MethodSplit, SplitError> {
    let mut out = MethodSplit::default();
    if !(has(project, keys::ERT_FILES) || has(project, keys::ERT_FILE) || has(project, "ert_dir")) {
        return Ok(out);
    }
    let files = paths_of(project, keys::ERT_FILES)?;
    let scheme_text = project
        .config
        .get(keys::TIME_LAPSE_METHOD)
        .and_then(Value::as_str)
        .unwrap_or("simultaneous");
    let scheme = TimeLapseMethod::parse(scheme_text).ok();
    let outlier = project
        .config
        .get(keys::INVERSION_PARAMS)
        .and_then(|p| p.get("outlier_threshold"))
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let kept = |kind: &str, why: String| MethodSplit {
        whole: vec![whole("ERT", kind, why)],
        ..MethodSplit::default()
    };
    if has(project, keys::ERT_FILE) || has(project, "ert_dir") || files.len() < 2 {
        return Ok(kept(
            "not_split",
            "one survey, or surveys not listed one by one in ert_files: one part".into(),
        ));
    }
    match scheme {
        None => return Ok(kept(
            "not_split",
            format!("time_lapse_method '{scheme_text}' is not a scheme this studio knows: one part (the run says why)"),
        )),
        Some(TimeLapseMethod::Simultaneous) => return Ok(kept(
            "coupled",
            "a simultaneous (4D) time-lapse inverts every epoch together, with temporal regularisation between them: one part".into(),
        )),
        Some(_) if outlier > 0.0 => return Ok(kept(
            "coupled",
            format!("outlier rejection (inversion_params.outlier_threshold {outlier}) inverts every survey once and removes a datum an outlier in any survey from all of them: one part"),
        )),
        Some(_) => {}
    }
    let asked: Option<Vec<usize>> = project
        .config
        .get(keys::TIME_LAPSE_EPOCHS)
        .and_then(|v| serde_json::from_value(v.clone()).ok());
    let epochs: Vec<usize> = asked.unwrap_or_else(|| (1..files.len()).collect());
    for t in epochs.into_iter().filter(|&t| t >= 1 && t < files.len()) {
        out.units.push(Unit {
            method: ERT_EPOCH.into(),
            name: stem(&files[t]),
            inputs: vec![files[t].clone()],
            index: Some(t),
        });
    }
    out.roles = vec![keys::ERT_FILES, keys::ELECTRODE_FILE];
    out.whole.push(whole(
        "ERT",
        "shared",
        format!(
            "every part holding epochs reads all {} surveys (they are matched on the quadrupoles all of them measured) and inverts the baseline {} again, to the same numbers; λ is chosen on the baseline, so each epoch's model is the one-machine run's",
            files.len(),
            stem(&files[0])
        ),
    ));
    if has(project, keys::SEISMIC_FILE) || has(project, keys::SEGY_FILE) {
        out.whole.push(whole(
            "ERT",
            "not_split",
            "the structure-constrained re-inversion (derive_structure) needs the seismic interface and the ERT model in one run: a split run does not make it",
        ));
    }
    Ok(out)
}

/// TDEM soundings: one unit per sounding when they are inverted one by one with Occam's λ
/// search (or without λ retries); a laterally constrained line, a fixed λ the evaluation
/// retries on every sounding together, or a file that does not read stay whole.
pub(super) fn tdem_soundings(project: &Project) -> Result<MethodSplit, SplitError> {
    let mut out = MethodSplit::default();
    let Some(data) = paths_of(project, keys::TDEM_FILE)?.into_iter().next() else {
        return Ok(out);
    };
    let kept = |kind: &str, why: String| MethodSplit {
        whole: vec![whole("TDEM", kind, why)],
        ..MethodSplit::default()
    };
    let params: TdemParams = match project.config.get(keys::TDEM_PARAMS) {
        None | Some(Value::Null) => TdemParams::default(),
        Some(v) => match serde_json::from_value(v.clone()) {
            Ok(p) => p,
            Err(e) => {
                return Ok(kept(
                    "not_split",
                    format!("tdem_params does not read ({e}): one part (the run says why)"),
                ));
            }
        },
    };
    let retries = project
        .config
        .get(keys::AUTO_ADJUST)
        .and_then(Value::as_bool)
        .unwrap_or(true);
    if params.lambda.is_some() && retries {
        return Ok(kept(
            "not_split",
            "a fixed λ (tdem_params.lambda) is retried by the evaluation on every sounding together: one part (Occam's λ search, or auto_adjust false, lets the soundings split)".into(),
        ));
    }
    let geometry = paths_of(project, keys::TDEM_GEOMETRY_FILE)?
        .into_iter()
        .next()
        .map(|g| project.dir.join(g));
    let every = TdemParams {
        soundings: None,
        ..params.clone()
    };
    let ds = match load_dataset(&project.dir.join(&data), geometry.as_deref(), &every) {
        Ok(ds) => ds,
        Err(e) => {
            return Ok(kept(
                "not_split",
                format!(
                    "the soundings could not be read to split them ({e}): one part (the run says why)"
                ),
            ));
        }
    };
    match lateral_decision(&ds, &params) {
        Ok((None, _)) => {}
        Ok((Some(_), why)) => {
            return Ok(kept(
                "coupled",
                format!(
                    "{why}: a laterally constrained inversion solves every sounding of the line together: one part"
                ),
            ));
        }
        Err(e) => {
            return Ok(kept(
                "not_split",
                format!("{e}: one part (the run says why)"),
            ));
        }
    }
    let n = ds.file.soundings.len();
    let chosen: Vec<usize> = params.soundings.clone().unwrap_or_else(|| (0..n).collect());
    for k in chosen.into_iter().filter(|&k| k < n) {
        out.units.push(Unit {
            method: TDEM_SOUNDING.into(),
            name: ds.file.soundings[k].name.clone(),
            inputs: vec![data.clone()],
            index: Some(k),
        });
    }
    out.roles = vec![keys::TDEM_FILE, keys::TDEM_GEOMETRY_FILE];
    out.whole.push(whole(
        "TDEM",
        "not_split",
        "the plan-view maps krige every sounding together: a split run does not make them",
    ));
    Ok(out)
}

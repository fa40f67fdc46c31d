//! One call per site for the catalog and the studio panel: the curves fitted, the
//! dimensionality, the xy/yx static-shift indicator, the Occam result and its evaluation —
//! the same functions a person reaches from the MT panel.

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use super::MtError;
use super::dimensionality::{Dimensionality, dimensionality};
use super::occam::{OccamOptions, OccamResult, Progress, invert_occam};
use super::quality::{MtEvaluation, evaluate_mt_inversion};
use super::sounding::{
    MtSounding, OccamMode, SoundingOptions, StaticShiftIndicator, sounding_from_tf,
    static_shift_indicator,
};
use super::tf::TransferFunction;

/// The inversion of one site with everything needed to report it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MtSiteInversion {
    /// Site name.
    pub site: String,
    /// The curves that were fitted.
    pub sounding: MtSounding,
    /// Dimensionality (None for ρa/φ tables, which carry no tensor).
    pub dimensionality: Option<Dimensionality>,
    /// xy/yx comparison at the shortest periods (None without both modes).
    pub static_shift_indicator: Option<StaticShiftIndicator>,
    /// The Occam result.
    pub result: OccamResult,
    /// The verdict.
    pub evaluation: MtEvaluation,
}

/// Invert one transfer function: curves of `sounding_opts.mode`, dimensionality and the
/// static-shift indicator from the full tensor, Occam with `occam_opts`, then the evaluation.
pub fn invert_site(
    tf: &TransferFunction,
    sounding_opts: &SoundingOptions,
    occam_opts: &OccamOptions,
    progress: Option<&mut Progress<'_>>,
    cancel: Option<&AtomicBool>,
) -> Result<MtSiteInversion, MtError> {
    let sounding = sounding_from_tf(tf, sounding_opts)?;
    let dims = dimensionality(tf);
    let both = sounding_from_tf(
        tf,
        &SoundingOptions {
            mode: OccamMode::Both,
            ..*sounding_opts
        },
    )?;
    let indicator = static_shift_indicator(&both);
    invert_sounding(
        sounding,
        Some(dims),
        indicator,
        occam_opts,
        progress,
        cancel,
    )
}

/// Invert curves that are already apparent resistivity and phase (a table, or curves built
/// by [`sounding_from_tf`]), with whatever dimensionality and indicator are known.
pub fn invert_sounding(
    sounding: MtSounding,
    dims: Option<Dimensionality>,
    indicator: Option<StaticShiftIndicator>,
    occam_opts: &OccamOptions,
    progress: Option<&mut Progress<'_>>,
    cancel: Option<&AtomicBool>,
) -> Result<MtSiteInversion, MtError> {
    let mut result: OccamResult = invert_occam(&sounding, occam_opts, progress, cancel)?;
    let evaluation = evaluate_mt_inversion(&sounding, &result, indicator.as_ref(), dims.as_ref());
    // The depth of investigation everyone reads (figures, tables, water content) is the
    // evaluation's: the Bostick depth of the longest period fitted, not of the longest period.
    result.doi_m = evaluation.doi_m;
    Ok(MtSiteInversion {
        site: sounding.site.clone(),
        sounding,
        dimensionality: dims,
        static_shift_indicator: indicator,
        result,
        evaluation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::require_data;

    /// The whole chain on a real file serialises to JSON with the project's key names.
    #[test]
    fn a_real_site_inverts_and_serialises_with_the_key_names() {
        let path = require_data!("mt/tf_edi_spectra_in.edi");
        let tf = crate::methods::mt::read_transfer_function(&path).unwrap();
        let out = invert_site(
            &tf,
            &SoundingOptions::default(),
            &OccamOptions::default(),
            None,
            None,
        )
        .unwrap();
        let json = serde_json::to_value(&out).unwrap();
        for key in [
            "chi2",
            "chi2_history",
            "iterations",
            "lambda",
            "n_data",
            "n_cells",
        ] {
            assert!(json["result"].get(key).is_some(), "result.{key} missing");
        }
        assert!(json["evaluation"].get("quality_score").is_some());
        assert!(out.static_shift_indicator.is_some());
        assert!(out.dimensionality.is_some());
        assert!(out.evaluation.summary.contains("SAGE_2005_og"));
        // The whole result survives a JSON round trip (masked values as null).
        let text = serde_json::to_string(&out).unwrap();
        let back: MtSiteInversion = serde_json::from_str(&text).unwrap();
        assert_eq!(back.result.chi2, out.result.chi2);
        assert_eq!(back.sounding.period_s, out.sounding.period_s);
    }
}

//! The TDEM products as the run holds them: the models with their key numbers (the dataset,
//! the models, the evaluation, the maps and the water content are `methods::tdem::pipeline`'s
//! own types).

#[allow(unused_imports)]
use super::*;

pub(super) fn held_inversion(inv: TdemInversion, quality_score: f64) -> Held<TdemInversion> {
    let line = format!(
        "TDEM models: {} sounding(s) {}, χ² {:.2}, {}",
        inv.fits.len(),
        inv.mode(),
        inv.chi2(),
        doi_range(&inv)
    );
    let report = format!(
        "{}\n{}{}{}",
        settings_report(&inv),
        fits_report(&inv),
        coarse_layering_hint(&inv).map_or_else(String::new, |h| format!("\n**Fit.**{h}.\n")),
        notes("Assumptions and decisions.", &inv.notes)
    );
    let detail = format!(
        "{}\n{}",
        invert_summary(&inv),
        inv.fits
            .iter()
            .map(|f| format!(
                "{}: χ² {:.3}, RRMS {:.2} %, DOI {} m, ρ {} Ω·m",
                f.name,
                f.chi2,
                f.rrms_percent,
                opt_m(f.doi_m),
                f.model
                    .rho_ohm_m
                    .iter()
                    .map(|r| short_num(*r))
                    .collect::<Vec<_>>()
                    .join(" ")
            ))
            .collect::<Vec<_>>()
            .join("\n")
    );
    Held::new(inv.clone(), line)
        .detail(detail)
        .report(report)
        .number("chi2", inv.chi2())
        .number("rrms_percent", inv.rrms_percent())
        .number("iterations", inv.iterations())
        .number("lambda", inv.lambda())
        .number("n_data", inv.n_data())
        .number("n_cells", inv.n_cells())
        .number("n_soundings", inv.fits.len())
        .number("n_failed", inv.failed.len())
        .number("chi2_history", inv.chi2_history())
        .number(
            "sounding_names",
            inv.fits.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
        )
        .number(
            "chi2_per_sounding",
            inv.fits.iter().map(|f| f.chi2).collect::<Vec<_>>(),
        )
        .number(
            "rrms_percent_per_sounding",
            inv.fits.iter().map(|f| f.rrms_percent).collect::<Vec<_>>(),
        )
        .number(
            "doi_m",
            inv.fits
                .iter()
                .map(|f| {
                    f.doi_m
                        .map_or(serde_json::Value::Null, serde_json::Value::from)
                })
                .collect::<Vec<_>>(),
        )
        .number("quality_score", quality_score)
}

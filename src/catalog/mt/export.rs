//! The MT exports: the layered models as CSV.

#[allow(unused_imports)]
use super::*;

/// `products/mt_models.csv`: one row per site and layer, units in the column names (`None`,
/// recorded on the run, when it cannot be written).
pub(super) fn write_models_csv(ctx: &mut RunContext, inv: &MtInversions) -> Option<PathBuf> {
    write_product(ctx, "mt_models.csv", |path| {
        std::fs::write(path, models_csv(inv))?;
        Ok(vec![path.to_path_buf()])
    })
    .pop()
}

/// The models table's text.
fn models_csv(inv: &MtInversions) -> String {
    use std::fmt::Write;
    let mut s = String::from("site,depth_top_m,depth_bottom_m,resistivity_ohm_m,below_doi\n");
    for site in &inv.sites {
        let m = &site.result.model;
        let tops = m.depth_top_m();
        for (i, rho) in m.resistivity_ohm_m.iter().enumerate() {
            let bottom = m
                .thickness_m
                .get(i)
                .map_or("inf".to_string(), |h| format!("{}", tops[i] + h));
            let below = site.result.doi_m.is_some_and(|d| tops[i] > d);
            let _ = writeln!(
                s,
                "{},{},{bottom},{rho},{below}",
                csv_text(&site.site),
                tops[i]
            );
        }
    }
    s
}

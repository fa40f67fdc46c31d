//! The TDEM exports: the plan maps as ESRI ASCII grids and the water content per layer as CSV.

#[allow(unused_imports)]
use super::*;

/// `products/tdem_map_<z>m_log10_rho.asc` and its kriging σ beside it, as ESRI ASCII grids.
/// A file that cannot be written is recorded on the run; the files written are returned.
pub fn map_grids(ctx: &mut RunContext, m: &PlanMap) -> Vec<PathBuf> {
    let z = short_num(m.depth_m);
    let mut files = Vec::new();
    for (sigma, suffix) in [(false, ""), (true, "_sigma")] {
        let name = format!("tdem_map_{z}m_log10_rho{suffix}.asc");
        files.extend(write_product(ctx, &name, |f| {
            std::fs::write(f, esri_ascii_grid(m, sigma))
                .with_context(|| format!("writing {}", f.display()))?;
            Ok(vec![f.to_path_buf()])
        }));
    }
    files
}

/// `products/water_content_by_layer.csv`: the water content of every layer (`None`, recorded
/// on the run, when it cannot be written).
pub fn water_csv(ctx: &mut RunContext, wc: &TdemWaterContent) -> Option<PathBuf> {
    write_product(ctx, "water_content_by_layer.csv", |path| {
        std::fs::write(path, wc.csv()).with_context(|| format!("writing {}", path.display()))?;
        Ok(vec![path.to_path_buf()])
    })
    .pop()
}

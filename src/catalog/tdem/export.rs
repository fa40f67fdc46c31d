//! The TDEM exports: the plan maps as ESRI ASCII grids and the water content per layer as CSV.

#[allow(unused_imports)]
use super::*;

/// `products/tdem_map_<z>m_log10_rho.asc` and its kriging σ beside it, as ESRI ASCII grids.
pub fn map_grids(ctx: &RunContext, m: &PlanMap) -> anyhow::Result<Vec<PathBuf>> {
    let z = short_num(m.depth_m);
    let mut files = Vec::new();
    for (sigma, suffix) in [(false, ""), (true, "_sigma")] {
        let f = product_path(ctx, &format!("tdem_map_{z}m_log10_rho{suffix}.asc"))?;
        std::fs::write(&f, esri_ascii_grid(m, sigma))
            .with_context(|| format!("writing {}", f.display()))?;
        files.push(f);
    }
    Ok(files)
}

/// `products/water_content_by_layer.csv`: the water content of every layer.
pub fn water_csv(ctx: &RunContext, wc: &TdemWaterContent) -> anyhow::Result<PathBuf> {
    let path = product_path(ctx, "water_content_by_layer.csv")?;
    std::fs::write(&path, wc.csv()).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

//! The seismic exports: each interface as an x, z, depth table.

#[allow(unused_imports)]
use super::*;

/// `products/interface_<v>ms.csv`: every segment of the interfaces traced at one threshold
/// velocity, as segment number, x (m), z (m) and depth below the surface (m).
pub fn interface_table(ctx: &RunContext, set: &InterfaceSet) -> anyhow::Result<PathBuf> {
    let path = product_path(ctx, &format!("interface_{:.0}ms.csv", set.velocity_m_per_s))?;
    let mut text = String::from("segment,x_m,z_m,depth_m\n");
    for (k, f) in set.segments.iter().enumerate() {
        for i in 0..f.x_m.len() {
            text.push_str(&format!(
                "{},{:.4},{:.4},{:.4}\n",
                k + 1,
                f.x_m[i],
                f.z_m[i],
                f.depth_m[i]
            ));
        }
    }
    std::fs::write(&path, text).with_context(|| format!("could not write {}", path.display()))?;
    Ok(path)
}

//! The seismic exports: each interface as an x, z, depth table.

#[allow(unused_imports)]
use super::*;

/// `products/interface_<v>ms.csv`: every segment of the interfaces traced at one threshold
/// velocity, as segment number, x (m), z (m) and depth below the surface (m). A file that
/// cannot be written is recorded on the run and `None` returned (the interfaces stay).
pub fn interface_table(ctx: &mut RunContext, set: &InterfaceSet) -> Option<PathBuf> {
    let name = format!("interface_{:.0}ms.csv", set.velocity_m_per_s);
    write_product(ctx, &name, |path| {
        std::fs::write(path, interface_text(set))
            .with_context(|| format!("could not write {}", path.display()))?;
        Ok(vec![path.to_path_buf()])
    })
    .pop()
}

/// The interface table's text.
fn interface_text(set: &InterfaceSet) -> String {
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
    text
}

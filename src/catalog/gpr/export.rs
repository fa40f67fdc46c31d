//! The GPR exports: the processed line's files are named after the input's stem.

#[allow(unused_imports)]
use super::*;

pub(super) fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "line".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The processed line as `products/gpr_<stem>_processed.npz` and its recipe as
/// `products/gpr_<stem>_recipe.json`.
pub(super) fn write_processed(
    ctx: &RunContext,
    st: &str,
    p: &ProcessedLine,
) -> anyhow::Result<(PathBuf, PathBuf)> {
    let npz = product_path(ctx, &format!("gpr_{st}_processed.npz"))?;
    p.write_npz(&npz).map_err(|e| anyhow!("{e}"))?;
    let recipe = product_path(ctx, &format!("gpr_{st}_recipe.json"))?;
    p.write_recipe_json(&recipe).map_err(|e| anyhow!("{e}"))?;
    Ok((npz, recipe))
}

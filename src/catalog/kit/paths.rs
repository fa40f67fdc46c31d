//! Where a step writes: `figures/` and `products/` in the run folder.

use std::path::{Path, PathBuf};

use crate::runtime::RunContext;

/// The folder a run writes into (`products/<sub>` or `figures`), created; a temporary folder
/// under the system's when the run has no folder (tests).
pub fn run_subdir(ctx: &RunContext, sub: &str) -> std::io::Result<PathBuf> {
    let base = match &ctx.output_dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join("hydrogeo-studio-scratch"),
    };
    let dir = base.join(sub);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// `figures/<name>.png` in the run folder.
pub fn figure_path(ctx: &RunContext, name: &str) -> std::io::Result<PathBuf> {
    Ok(run_subdir(ctx, "figures")?.join(format!("{name}.png")))
}

/// `products/<name>` in the run folder.
pub fn product_path(ctx: &RunContext, name: &str) -> std::io::Result<PathBuf> {
    Ok(run_subdir(ctx, "products")?.join(name))
}

/// Write `products/<name>` through `write` (which returns the files it wrote). Output is a
/// convenience: a failure is recorded on the run ([`RunContext::not_written`]) with the file
/// and the cause, and the step goes on with its product; the files written are returned.
pub fn write_product(
    ctx: &mut RunContext,
    name: &str,
    write: impl FnOnce(&Path) -> anyhow::Result<Vec<PathBuf>>,
) -> Vec<PathBuf> {
    write_output(ctx, "products", name, write).unwrap_or_default()
}

/// Draw `figures/<name>.png` through `draw`. A figure is a convenience like any output
/// (seed 001: a run must not fail because a file could not be written): a failure is recorded
/// on the run ([`RunContext::not_written`]) with the file and the cause, and `None` is returned
/// so the step goes on without it.
pub fn draw_figure<E: std::fmt::Display>(
    ctx: &mut RunContext,
    name: &str,
    draw: impl FnOnce(&Path) -> Result<(), E>,
) -> Option<PathBuf> {
    let file = format!("{name}.png");
    write_output(ctx, "figures", &file, |p| draw(p).map(|()| p.to_path_buf()))
}

/// `<run folder>/<sub>/<file>` written by `write`; what cannot be written (the folder or the
/// file) is recorded on the run and `None` returned.
fn write_output<T, E: std::fmt::Display>(
    ctx: &mut RunContext,
    sub: &str,
    file: &str,
    write: impl FnOnce(&Path) -> Result<T, E>,
) -> Option<T> {
    let path = match run_subdir(ctx, sub) {
        Ok(d) => d.join(file),
        Err(e) => {
            let planned = planned_path(ctx, sub, file);
            ctx.not_written(&planned, &format!("the {sub} folder cannot be used: {e}"));
            return None;
        }
    };
    match write(&path) {
        Ok(v) => Some(v),
        Err(e) => {
            ctx.not_written(&path, &format!("{e:#}"));
            None
        }
    }
}

/// `<run folder>/<sub>/<name>` without creating anything (for naming a file not written).
pub fn planned_path(ctx: &RunContext, sub: &str, name: &str) -> PathBuf {
    ctx.output_dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("hydrogeo-studio-scratch"))
        .join(sub)
        .join(name)
}

/// Write rows of numbers as CSV with a header (units in the column names).
pub fn write_csv(path: &Path, header: &[&str], rows: &[Vec<f64>]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(f, "{}", header.join(","))?;
    for row in rows {
        let line: Vec<String> = row.iter().map(|v| format!("{v}")).collect();
        writeln!(f, "{}", line.join(","))?;
    }
    f.flush()
}

/// The file name of `path` for a sentence (the whole path when it has none).
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

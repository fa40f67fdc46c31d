//! The only way to read and invert MT sites: the catalog's tools and the MT panel both call
//! these functions, with the same settings (the panel's edits layered over the project's
//! `mt_params`).

#[allow(unused_imports)]
use super::*;

/// Whether `path` is a file one of the MT readers claims (by extension or signature).
pub(super) fn is_mt_file(path: &Path) -> bool {
    path.is_file() && mt::read_summary(path).is_some()
}

/// Read one file as a site; `None` when no MT reader claims it.
pub fn read_site(path: &Path) -> Option<Result<MtSite, ReadError>> {
    let head = std::fs::read(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b[..b.len().min(4096)]).into_owned())?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let data = if mt::table::looks_like_sounding_table(&head) && !head.trim_start().starts_with('>')
    {
        mt::read_sounding_table(path).map(SiteData::Table)
    } else {
        mt::read_summary(path).is_some().then_some(())?;
        mt::read_transfer_function(path).map(|tf| SiteData::Transfer(Box::new(tf)))
    };
    Some(data.map(|data| {
        let site = match &data {
            SiteData::Transfer(tf) if !tf.site.trim().is_empty() => tf.site.clone(),
            SiteData::Table(s) if !s.site.trim().is_empty() => s.site.clone(),
            _ => stem,
        };
        MtSite {
            path: path.to_path_buf(),
            site,
            data,
        }
    }))
}

/// The files of a folder that an MT reader claims, sorted by name.
pub fn files_in_dir(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| is_mt_file(p))
        .collect();
    out.sort();
    Ok(out)
}

/// Read every file; files no reader could read are listed with the reason, not fatal.
pub fn read_sites(paths: &[PathBuf]) -> MtSites {
    let mut sites = Vec::new();
    let mut unreadable = Vec::new();
    for p in paths {
        match read_site(p) {
            Some(Ok(s)) => sites.push(s),
            Some(Err(e)) => unreadable.push((p.display().to_string(), e.to_string())),
            None => unreadable.push((
                p.display().to_string(),
                "not an MT file: expected EDI, EMTF XML, .zmm/.zrr/.zss, BIRRP .j, Zonge .avg or \
                 a period/rho/phase table"
                    .to_string(),
            )),
        }
    }
    MtSites { sites, unreadable }
}

/// Invert every site with `params` (the same call as the panel's Run). Progress runs over
/// the sites; a cancel stops between iterations and ends with an error.
pub fn invert_sites(
    data: &MtSites,
    params: &MtParams,
    progress: &mut dyn FnMut(f64, &str),
    cancel: &AtomicBool,
) -> Result<MtInversions, String> {
    let n = data.sites.len().max(1) as f64;
    let (sopts, oopts) = (params.sounding_options(), params.occam_options());
    let mut sites = Vec::new();
    let mut failed = Vec::new();
    for (i, site) in data.sites.iter().enumerate() {
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return Err("cancelled".into());
        }
        let name = site.site.clone();
        let mut per = |f: f64, d: &str| progress((i as f64 + f) / n, &format!("{name}: {d}"));
        let r = match &site.data {
            SiteData::Transfer(tf) => {
                mt::invert_site(tf, &sopts, &oopts, Some(&mut per), Some(cancel))
            }
            SiteData::Table(s) => {
                let mut s = s.clone();
                mt::apply_error_floor(&mut s, params.error_floor_percent);
                mt::invert_sounding(s, None, None, &oopts, Some(&mut per), Some(cancel))
            }
        };
        match r {
            Ok(r) => sites.push(r),
            Err(e) => {
                if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                    return Err("cancelled".into());
                }
                failed.push((name, e.to_string()))
            }
        }
    }
    progress(1.0, "done");
    Ok(MtInversions {
        params: params.clone(),
        sites,
        failed,
    })
}

/// The MT files of a run or a project: `mt_files`, and the MT files found in `mt_dir`; an
/// error when there are none or the folder cannot be listed.
pub fn site_files(ctx: &RunContext) -> anyhow::Result<Vec<PathBuf>> {
    let mut paths = ctx.input_paths(keys::MT_FILES);
    if let Some(dir) = ctx.input_path(keys::MT_DIR) {
        let found = files_in_dir(&dir).map_err(|e| {
            anyhow!(
                "could not list the MT folder {}: {e}; check that mt_dir names a folder",
                dir.display()
            )
        })?;
        if found.is_empty() {
            return Err(anyhow!(
                "no MT transfer-function file in {}: expected .edi, .xml (EMTF), .zmm/.zrr/.zss, \
                 .j or .avg files",
                dir.display()
            ));
        }
        paths.extend(found);
    }
    if paths.is_empty() {
        return Err(anyhow!(
            "no MT files given: name them under inputs.mt_files (a list) or inputs.mt_dir (a folder)"
        ));
    }
    Ok(paths)
}

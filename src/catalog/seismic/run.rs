//! The only way to load, pick, invert and evaluate seismic data: the catalog's tools and the
//! seismic panel both call these functions, with the same settings (the panel's edits
//! layered over the project's), so a step in a run and the panel's Run make the same model.

#[allow(unused_imports)]
use super::*;
use std::sync::atomic::AtomicBool;

/// Progress of a long computation: (fraction 0–1, what it is doing).
pub type Progress<'a> = &'a mut dyn FnMut(f64, &str);

/// Read a travel-time file by its extension and signature: pyGIMLi unified `.sgt` (or a
/// `.dat` with `s g` tokens), PyRefra `picks.dat` beside its `.geo` files, or a CSV/text
/// table `source_x, receiver_x, time[, err]`.
pub fn read_traveltimes(path: &Path) -> Result<TravelTimes, ReadError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let dir = path.parent().unwrap_or(Path::new("."));
    if path.file_name().and_then(|n| n.to_str()) == Some("picks.dat")
        && dir.join("shots.geo").exists()
        && dir.join("receivers.geo").exists()
    {
        return tables::read_pyrefra(path, &dir.join("shots.geo"), &dir.join("receivers.geo"));
    }
    match ext.as_str() {
        "csv" | "txt" | "tsv" => tables::read_traveltime_csv(path),
        _ => sgt::read_sgt(path),
    }
}

/// Read every raw shot of the run: `segy_file` (one or more field records) or `seg2_files`.
pub(super) fn read_gathers(
    ctx: &mut RunContext,
) -> anyhow::Result<(Vec<ShotGather>, Vec<String>, Vec<String>)> {
    let mut gathers = Vec::new();
    let mut files = Vec::new();
    let mut notes = Vec::new();
    for p in ctx.input_paths(keys::SEGY_FILE) {
        let f = segy::read_segy(&p)?;
        let by_ext = p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("sgy") || e.eq_ignore_ascii_case("segy"));
        if !by_ext {
            // Without its extension, SEG-Y is recognised by a plausible binary header only
            // (a weak signature): chosen or proven, never guessed (issue 17).
            let format = format!("SEG-Y rev {}", f.revision);
            notes.push(super::super::kit::confirm::require_confirmed(
                ctx, "Seismic", &p, &format,
            )?);
        }
        notes.extend(f.notes.iter().map(|n| format!("{}: {n}", file_name(&p))));
        files.push(file_name(&p));
        gathers.extend(f.gathers);
    }
    for p in ctx.input_paths(keys::SEG2_FILES) {
        gathers.push(seg2::read_seg2(&p)?);
        files.push(file_name(&p));
    }
    if gathers.is_empty() {
        bail!(
            "no shot gathers in the raw-shot inputs ({})",
            files.join(", ")
        );
    }
    Ok((gathers, files, notes))
}

/// Give the gathers positions from the station table where the headers lack them, and ask
/// which origin to use when both give positions and they disagree.
pub(super) fn align_positions(
    ctx: &mut RunContext,
    gathers: &mut [ShotGather],
    stations: Option<&Topography>,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    let Some(st) = stations else {
        if let Some(g) = gathers.iter().find(|g| g.source_x_m.is_none()) {
            bail!(
                "shot record {} has no source position in its headers: give a geophone_file (station, x, elevation) and shot positions in the headers, or a travel-time file instead",
                g.record
            );
        }
        return Ok(());
    };
    let mut choice: Option<String> = ctx.config_str(keys::ALIGN_ORIGIN).map(str::to_string);
    for g in gathers.iter_mut() {
        match &g.receiver_x_m {
            None => {
                if st.x_m.len() != g.n_traces() {
                    bail!(
                        "shot record {} has {} traces without positions, and the geophone_file lists {} stations: expected one station per trace",
                        g.record,
                        g.n_traces(),
                        st.x_m.len()
                    );
                }
                g.receiver_x_m = Some(st.x_m.clone());
                notes.push(format!(
                    "record {}: receiver positions from the station table (the headers have none)",
                    g.record
                ));
            }
            Some(rx) if rx.len() == st.x_m.len() => {
                let shift = st.x_m[0] - rx[0];
                if shift.abs() > 0.01 {
                    let ans = match &choice {
                        Some(c) => c.clone(),
                        None => {
                            let a = ctx.ask(
                                &format!(
                                    "The station file starts the line at x = {:.2} m, the SEG-Y headers at x = {:.2} m (a shift of {shift:+.2} m). Which origin should the picks use?",
                                    st.x_m[0], rx[0]
                                ),
                                &[
                                    QuestionOption::new(
                                        "stations",
                                        "The station file",
                                        "shift sources and receivers so the first trace is at the station file's first x",
                                    ),
                                    QuestionOption::new(
                                        "headers",
                                        "The trace headers",
                                        "keep the positions written in the SEG-Y headers",
                                    ),
                                ],
                                "stations",
                            );
                            choice = Some(a.clone());
                            a
                        }
                    };
                    if ans == "stations" {
                        g.receiver_x_m = Some(rx.iter().map(|x| x + shift).collect());
                        g.source_x_m = g.source_x_m.map(|s| s + shift);
                        notes.push(format!(
                            "record {}: positions shifted by {shift:+.2} m to the station file's origin",
                            g.record
                        ));
                    } else {
                        notes.push(format!(
                            "record {}: the headers' origin kept (the station file's differs by {shift:+.2} m)",
                            g.record
                        ));
                    }
                }
            }
            Some(_) => {}
        }
        if g.source_x_m.is_none() {
            bail!(
                "shot record {} has no source position in its headers; the studio cannot pick it without one",
                g.record
            );
        }
    }
    Ok(())
}

/// The travel times of the run: a file's when one was loaded, else the picks'.
pub fn run_traveltimes(ctx: &RunContext) -> Option<(TravelTimes, String)> {
    if let Some(tt) = held::<TravelTimes>(ctx, keys::SEISMIC_TRAVELTIMES) {
        let src = ctx
            .input_path(keys::SEISMIC_FILE)
            .map_or("travel-time file".to_string(), |p| file_name(&p));
        return Some((tt.clone(), src));
    }
    held::<SeismicPicks>(ctx, keys::SEISMIC_PICKS).map(|p| (p.traveltimes.clone(), "picks".into()))
}

/// What a topography table did: (its file name, stations, sensors held at the ends).
pub type TopographyNote = (String, usize, usize);

/// Read a travel-time file, with the elevations of a topography table when given; returns the
/// travel times and, for the summary, (table file name, stations, sensors held at the ends).
pub fn load_traveltimes(
    path: &Path,
    topography: Option<&Path>,
) -> anyhow::Result<(TravelTimes, Option<TopographyNote>)> {
    let mut tt = read_traveltimes(path)?;
    let mut topo_note = None;
    if let Some(tp) = topography {
        let topo = tables::read_topography(tp)?;
        let outside = crate::methods::seismic::data::apply_topography(&mut tt, &topo);
        topo_note = Some((file_name(tp), topo.x_m.len(), outside));
    }
    Ok((tt, topo_note))
}

/// Invert travel times for a velocity model (`source` says where they came from).
pub fn invert(
    tt: &TravelTimes,
    source: &str,
    params: &SeismicInversionParams,
    progress: Progress,
    cancel: &AtomicBool,
) -> anyhow::Result<SeismicModel> {
    let inv = invert_tomography(tt, params, progress, cancel)
        .with_context(|| format!("the seismic inversion of {} picks failed", tt.n_data()))?;
    Ok(SeismicModel {
        inversion: inv,
        data: tt.clone(),
        source: source.to_string(),
    })
}

/// The rubric on `model`, and while it fails, the inversion again with λ halved (underfit) or
/// doubled (overfit), at most `max_attempts` in all (the first is `model` itself); the
/// best-scoring (inversion, evaluation) is kept.
pub fn evaluate(
    model: &SeismicModel,
    max_attempts: usize,
    auto_adjust: bool,
    progress: &dyn Fn(f64, &str),
    cancel: &AtomicBool,
) -> anyhow::Result<Retried<(SeismicInversion, SeismicEvaluation)>> {
    let params = model.inversion.params.clone();
    let mut first = Some(model.inversion.clone());
    let mut attempt = 0usize;
    Ok(retry_lambda(
        model.inversion.lambda,
        max_attempts,
        auto_adjust,
        |lambda| {
            attempt += 1;
            let inv = match first.take() {
                Some(inv) => inv,
                None => {
                    progress(
                        (attempt - 1) as f64 / max_attempts as f64,
                        &format!("attempt {attempt}: λ {lambda:.3}"),
                    );
                    let p = InversionParams {
                        lambda,
                        ..params.clone()
                    };
                    invert_tomography(&model.data, &p, &mut |_, _| {}, cancel)?
                }
            };
            let ev = evaluate_model(&inv, &model.data);
            let (chi2, q) = (inv.chi2, ev.quality.clone());
            Ok::<_, crate::methods::seismic::inversion::InversionError>(((inv, ev), chi2, q))
        },
    )?)
}

//! The only way to load and invert a station table: the catalog's tools and the Grav/Mag
//! panel both call these functions, with the same settings (the panel's edits layered over
//! the project's).

#[allow(unused_imports)]
use super::*;

/// Read the station table at `path`. The kind is `declared` when given; otherwise it comes
/// from the column names and the file name, and only when those say nothing from `request`
/// (a request that mentions both methods must not contradict a clear header).
pub fn load(
    path: &Path,
    declared: Option<FieldKind>,
    request: Option<&str>,
) -> Result<StationTable, ReadError> {
    let first = read_station_table(
        path,
        &ReadOptions {
            kind: declared,
            ..ReadOptions::default()
        },
    )?;
    match (&first.kind, request) {
        (KindInference::Ambiguous { evidence, .. }, Some(r)) if evidence.is_empty() => {
            read_station_table(
                path,
                &ReadOptions {
                    request: Some(r.to_string()),
                    ..ReadOptions::default()
                },
            )
        }
        _ => Ok(first),
    }
}

/// Run the chain on `table` (kind resolved): trend, maps, mesh, inversion, predicted and
/// misfit maps, evaluation. `progress` gets (fraction, detail); `cancel` is checked between
/// the solves.
pub fn invert(
    table: &StationTable,
    params: &GravMagParams,
    field: Option<InducingField>,
    progress: &mut dyn FnMut(f64, &str),
    cancel: &AtomicBool,
) -> Result<TableInversion, String> {
    params.validate()?;
    let family = table.family().ok_or_else(|| {
        "what the table measures is not decided (gravity or magnetics): set gravmag_kind"
            .to_string()
    })?;
    let options = params.options(family, field);
    invert_table(table, &options, Some(progress), Some(cancel)).map_err(|e| match e {
        GravMagError::Cancelled => "stopped by the user before the inversion finished".into(),
        GravMagError::AmbiguousKind(q) => format!("{q} Set {KIND_KEY} and run again."),
        other => other.to_string(),
    })
}

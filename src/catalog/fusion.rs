//! Combining methods — and saying exactly what was combined and what was not — and adopting the
//! files a request names when the project's inputs leave them out.

use std::sync::Arc;

use serde_json::{Value, json};

use super::kit::keys;
use super::kit::methods::{METHODS, MethodInfo, by_id};
use super::kit::register_all;
use crate::runtime::tool::RegistryError;
use crate::runtime::{JsonProduct, Outputs, Project, Registry, RunContext, Tool};

/// The methods this run actually produced a result for (read from the artifacts, not from the
/// configuration: the configured list is what the user hoped for).
pub fn available_methods(ctx: &RunContext) -> Vec<&'static str> {
    with_results(ctx).map(|m| m.prose).collect()
}

/// The methods with a result in this run, in `METHODS` order.
fn with_results(ctx: &RunContext) -> impl Iterator<Item = &'static MethodInfo> + '_ {
    METHODS.iter().filter(|m| ctx.product(m.result).is_some())
}

/// How methods can be combined, richest first (seed 001, `fusion_pattern`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FusionPattern {
    /// Seismic structure constrains the ERT inversion and petrophysics turns it into water.
    FullIntegration,
    /// Seismic structure constrains the ERT inversion.
    StructureConstraint,
    /// ERT resistivity turned into water content by a petrophysical relation.
    PetrophysicsIntegration,
}

impl FusionPattern {
    /// The pattern's name as the seed spells it.
    pub fn name(self) -> &'static str {
        match self {
            FusionPattern::FullIntegration => "full_integration",
            FusionPattern::StructureConstraint => "structure_constraint",
            FusionPattern::PetrophysicsIntegration => "petrophysics_integration",
        }
    }
}

/// The richest fusion pattern `methods` (ids with a result: `seismic`, `ert`,
/// `petrophysics`, …) can satisfy, or `None` when no pattern's requirements are met.
pub fn fusion_pattern(methods: &[&str]) -> Option<FusionPattern> {
    let has = |m: &str| methods.contains(&m);
    match (has("seismic"), has("ert"), has("petrophysics")) {
        (true, true, true) => Some(FusionPattern::FullIntegration),
        (true, true, false) => Some(FusionPattern::StructureConstraint),
        (_, true, true) => Some(FusionPattern::PetrophysicsIntegration),
        _ => None,
    }
}

/// The method ids with a result in this run, plus `petrophysics` when a water-content
/// conversion ran — what [`fusion_pattern`] reads.
pub fn fusion_inputs(ctx: &RunContext) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = with_results(ctx).map(|m| m.id).collect();
    if ctx.product(keys::WATER_CONTENT).is_some() {
        out.push("petrophysics");
    }
    out
}

/// What this run combined across methods, and what it did not: one clause each. A method with
/// a result that no clause mentions is said to have been interpreted on its own.
pub fn fusion_account(ctx: &RunContext) -> (Vec<String>, Vec<String>) {
    let mut combined = Vec::new();
    let mut not = Vec::new();
    let mut mentioned: Vec<&str> = Vec::new();
    let has = |k: &str| ctx.product(k).is_some();
    if has(keys::SEISMIC_RESULTS) && has(keys::INVERSION_RESULTS) {
        mentioned.extend(["seismic", "ert"]);
        if has(keys::STRUCTURE_RESULTS) {
            combined.push("the seismic velocity interface constrained the ERT inversion as a boundary smoothing does not cross".to_string());
        } else {
            not.push("the seismic model did not constrain the ERT inversion (no structural constraint was derived)".to_string());
        }
    }
    let water: Vec<(&str, &str)> = [
        ("convert_water_content", "ert", "ERT"),
        ("convert_tdem_water_content", "tdem", "TDEM"),
        ("convert_mt_water_content", "mt", "MT"),
    ]
    .iter()
    .filter(|(t, _, _)| ctx.ran(t))
    .map(|(_, id, n)| (*id, *n))
    .collect();
    if water.len() > 1 {
        mentioned.extend(water.iter().map(|(id, _)| *id));
        not.push(format!(
            "water content from {} is reported side by side, not merged into one estimate",
            water
                .iter()
                .map(|(_, n)| *n)
                .collect::<Vec<_>>()
                .join(" and ")
        ));
    }
    let alone: Vec<&str> = with_results(ctx)
        .filter(|m| !mentioned.contains(&m.id))
        .map(|m| m.prose)
        .collect();
    if available_methods(ctx).len() > 1 && !alone.is_empty() {
        not.push(format!(
            "{} {} interpreted on its own: no other method's result was combined with it",
            alone.join(", "),
            if alone.len() == 1 { "was" } else { "were each" }
        ));
    }
    (combined, not)
}

/// The fuse step: what was combined and what was not, in numbers of methods.
pub fn fuse_methods(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let methods = available_methods(ctx);
    let (combined, not) = fusion_account(ctx);
    let summary = format!(
        "{} methods produced results ({}). Combined: {}. Not combined: {}.",
        methods.len(),
        methods.join(", "),
        if combined.is_empty() {
            "nothing".to_string()
        } else {
            combined.join("; ")
        },
        if not.is_empty() {
            "nothing".to_string()
        } else {
            not.join("; ")
        }
    );
    let pattern = fusion_pattern(&fusion_inputs(ctx));
    let summary = format!(
        "{summary} Fusion pattern: {}.",
        pattern.map_or(
            "none (no pattern's methods are all present)",
            FusionPattern::name
        )
    );
    let product = JsonProduct::new(
        format!("fusion of {} methods", methods.len()),
        json!({"methods": methods, "fusion_pattern": pattern.map(FusionPattern::name), "combined": combined, "not_combined": not}),
    );
    Ok((
        summary,
        Outputs::new().put(keys::FUSION_RESULTS, Arc::new(product)),
    ))
}

/// Register the fuse step (after every method, before the report).
pub fn register(reg: &mut Registry) -> Result<(), RegistryError> {
    register_all(
        reg,
        [
            Tool::new(
                "fuse_methods",
                "Combine two or more methods' results into one interpretation, and state what was actually combined and what was not. Only useful when more than one method has produced a result.",
                fuse_methods,
            )
            .produces(&[keys::FUSION_RESULTS])
            .label("Combine the methods")
            .module("fusion")
            .when(|ctx| available_methods(ctx).len() >= 2 && !super::reporting::method_steps_pending(ctx)),
        ],
    )
}

/// File names in a request's text (tokens with a data-file extension).
pub fn files_named(text: &str) -> Vec<String> {
    const EXTS: &[&str] = &[
        "dat", "ohm", "shm", "stg", "bin", "srv", "csv", "sgt", "sg2", "seg2", "sgy", "segy",
        "tem", "usf", "edi", "xml", "zmm", "zss", "zrr", "j", "avg", "dzt", "dt1", "rd3", "rd7",
        "txt", "data",
    ];
    text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '"' | '\'' | '`'))
        .map(|t| t.trim_end_matches(['.', ':', '?', '!']))
        .filter(|t| {
            t.rsplit_once('.').is_some_and(|(stem, ext)| {
                !stem.is_empty() && EXTS.contains(&ext.to_lowercase().as_str())
            })
        })
        .map(str::to_string)
        .collect()
}

/// The project with the files its goal names and its inputs leave out, each under the role its
/// reader recognises; a note per file taken or left. Nothing the project already names is
/// replaced.
pub fn adopt_request_inputs(mut project: Project) -> (Project, Vec<String>) {
    let mut notes = Vec::new();
    let ctx = project.context();
    let named: Vec<std::path::PathBuf> = ctx
        .input_roles()
        .keys()
        .flat_map(|k| ctx.input_paths(k))
        .map(|p| p.canonicalize().unwrap_or(p))
        .collect();
    for f in files_named(&project.goal) {
        let path = project.dir.join(&f);
        if !path.exists() {
            notes.push(format!(
                "The request names {f}, which is not in the project folder; it was not used."
            ));
            continue;
        }
        if named.contains(&path.canonicalize().unwrap_or(path.clone())) {
            continue;
        }
        let method = super::read_summary(&path)
            .ok()
            .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_string));
        let Some(role) = method.as_deref().and_then(by_id).map(|m| m.main_role) else {
            notes.push(format!(
                "The request names {f}, but no reader recognises it; it was not used."
            ));
            continue;
        };
        if project.inputs.contains_key(role) && !role.ends_with("_files") {
            notes.push(format!(
                "The request names {f}, but the project already gives a {role}; the project's file was kept."
            ));
            continue;
        }
        let entry = project.inputs.entry(role.to_string()).or_insert_with(|| {
            if role.ends_with("_files") {
                Value::Array(Vec::new())
            } else {
                Value::Null
            }
        });
        match entry {
            Value::Array(a) => a.push(Value::from(f.clone())),
            other => *other = Value::from(f.clone()),
        }
        notes.push(format!(
            "The project's inputs do not name {f}, so the run uses it as {role}, as the request names it."
        ));
    }
    (project, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_read_from_the_request() {
        assert_eq!(
            files_named("Invert line1.dat and site01.edi, then compare with gravity.csv."),
            vec!["line1.dat", "site01.edi", "gravity.csv"]
        );
        assert!(files_named("Where is the water table?").is_empty());
    }

    #[test]
    fn nothing_combined_is_said_when_seismic_did_not_constrain_ert() {
        let mut ctx = RunContext::new("x");
        ctx.put_value(keys::SEISMIC_RESULTS, JsonProduct::new("s", Value::Null));
        ctx.put_value(keys::INVERSION_RESULTS, JsonProduct::new("e", Value::Null));
        let (combined, not) = fusion_account(&ctx);
        assert!(combined.is_empty());
        assert_eq!(
            not[0],
            "the seismic model did not constrain the ERT inversion (no structural constraint was derived)"
        );
        // Seed 001's example: exactly one clause, no second "no joint inversion".
        assert_eq!(not.len(), 1);
        // A third method that nothing combined is said to stand alone.
        ctx.put_value(keys::TDEM_RESULTS, JsonProduct::new("t", Value::Null));
        let (_, not) = fusion_account(&ctx);
        assert_eq!(
            not[1],
            "TDEM was interpreted on its own: no other method's result was combined with it"
        );
    }

    #[test]
    fn the_richest_fusion_pattern_is_named() {
        // Seed 001, fusion_pattern examples.
        assert_eq!(
            fusion_pattern(&["seismic", "ert", "petrophysics"]),
            Some(FusionPattern::FullIntegration)
        );
        assert_eq!(
            fusion_pattern(&["seismic", "ert"]),
            Some(FusionPattern::StructureConstraint)
        );
        assert_eq!(
            fusion_pattern(&["ert", "petrophysics"]),
            Some(FusionPattern::PetrophysicsIntegration)
        );
        assert_eq!(fusion_pattern(&["ert"]), None);
        assert_eq!(FusionPattern::FullIntegration.name(), "full_integration");
        // Read from a run: ERT and its water content.
        let mut ctx = RunContext::new("x");
        ctx.put_value(keys::INVERSION_RESULTS, JsonProduct::new("e", Value::Null));
        ctx.put_value(keys::WATER_CONTENT, JsonProduct::new("w", Value::Null));
        assert_eq!(
            fusion_pattern(&fusion_inputs(&ctx)),
            Some(FusionPattern::PetrophysicsIntegration)
        );
    }

    #[test]
    fn a_named_file_that_is_missing_is_noted_not_used() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Project::parse(
            r#"{"goal": "Invert nothere.dat please"}"#,
            &tmp.path().join("project.json"),
        )
        .unwrap();
        let (p, notes) = adopt_request_inputs(p);
        assert!(p.inputs.is_empty());
        assert_eq!(
            notes,
            vec![
                "The request names nothere.dat, which is not in the project folder; it was not used."
            ]
        );
    }
}

//! The tools: each wraps method functions as a runtime tool, one folder per method with one
//! anatomy (`mod` registers the tools, `settings` reads the project's settings into one typed
//! struct, `run` is the only load/invert/evaluate path, `figures`, `report`, `export`),
//! registered in dependency order — which is also the order a run without a model follows.
//! [`kit`] holds what all six share.
//!
//! A module panel in the studio and a catalog tool call the *same* `run` functions with the
//! same settings (the panel's edits layered over the project's), so the step the controller
//! runs and the button a person presses behave identically.

pub mod answers;
pub mod cluster;
pub mod ert;
pub mod fusion;
pub mod gpr;
pub mod gravmag;
pub mod hydro;
pub mod intent;
pub mod kit;
pub mod mt;
pub mod new_project;
pub mod reporting;
pub mod seismic;
pub mod tdem;

use crate::runtime::tool::RegistryError;
use crate::runtime::{Registry, RunContext};

/// Every tool, in dependency order.
pub fn registry() -> Registry {
    shared_registry().clone()
}

/// The registry, built once (gates that look at the whole registry use this one).
pub fn shared_registry() -> &'static Registry {
    static REG: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    REG.get_or_init(build_registry)
}

/// One part's registration of its tools.
type Register = fn(&mut Registry) -> Result<(), RegistryError>;

/// Each part's registration, in dependency order.
const PARTS: &[Register] = &[
    ert::register,
    seismic::register,
    tdem::register,
    mt::register,
    gravmag::register,
    gpr::register,
    hydro::register,
    fusion::register,
    answers::register,
    reporting::register,
];

fn build_registry() -> Registry {
    let mut reg = Registry::new();
    for part in PARTS {
        // A refusal (two tools of one name) leaves the first in place; the test
        // `every_tool_registers_once` fails on it, so a release never has one.
        let _ = part(&mut reg);
    }
    reg
}

/// Why the run is incomplete in terms only the catalog knows: each product the goal asked
/// for and the run did not make, with the reason the user can act on.
/// A question of the goal that the run could not answer is a shortfall too (issue 17: a run
/// whose goal was not served is not a success, whatever steps ran).
pub fn assess(ctx: &RunContext) -> Vec<String> {
    let mut out: Vec<String> = shortfall_reasons(ctx)
        .into_iter()
        .map(|(what, why)| {
            format!("The request asked for {what}, and the run did not produce it: {why}")
        })
        .collect();
    if let Some(a) = kit::held::<answers::Answers>(ctx, kit::keys::ANSWERS) {
        for q in a
            .answers
            .iter()
            .filter(|q| q.status == answers::Status::NotAnswered)
        {
            out.push(format!(
                "The question \"{}\" was not answered: {}",
                q.question,
                q.reason.as_deref().unwrap_or("no reason was recorded")
            ));
        }
    }
    out
}

/// The artifacts the goal asked for (a step they need is never left out in flexible mode).
pub fn protected(ctx: &RunContext) -> Vec<String> {
    intent::requested(&ctx.goal)
        .iter()
        .map(|r| r.key.to_string())
        .collect()
}

/// The run specification the CLI, the studio and the end-to-end tests share for a project:
/// files named in the request with no configuration adopted (with a note each), the
/// catalog's assessment of what the goal asked for, and the products a flexible run must
/// not drop, and a step limit that lets every tool run. Callers add mode, listeners and
/// interaction.
pub fn run_spec(project: crate::runtime::Project) -> crate::runtime::session::RunSpec {
    let (project, notes) = fusion::adopt_request_inputs(project);
    let mut spec = crate::runtime::session::RunSpec::new(project);
    spec.notes = notes;
    spec.assess = Some(std::sync::Arc::new(assess));
    spec.protected = Some(std::sync::Arc::new(protected));
    spec.finalize = Some(std::sync::Arc::new(reporting::finalize));
    // Every tool once plus one recovery or retry each: a six-method project needs more than
    // the runtime's generic default, and running out of steps is reported as incomplete.
    spec.max_steps = spec.max_steps.max(2 * shared_registry().len());
    spec
}

/// `(product name, why it is missing)` for each requested product that does not exist.
pub fn shortfall_reasons(ctx: &RunContext) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for r in intent::requested(&ctx.goal) {
        if ctx.product(r.key).is_some() {
            continue;
        }
        let registry_has = |name: &str| shared_registry().get(name).is_some();
        let attempted: Vec<&crate::runtime::Step> = ctx
            .steps
            .iter()
            .filter(|s| r.producers.contains(&s.tool.as_str()))
            .collect();
        let why = if let Some(s) = attempted.iter().rev().find(|s| !s.error.is_empty()) {
            format!("{} did not succeed ({})", s.label_or_tool(), s.error)
        } else if !r.producers.iter().any(|p| registry_has(p)) {
            r.no_tool.to_string()
        } else if let Some(failed) = {
            let upstream = upstream_tools(r.producers);
            ctx.steps.iter().rev().find(|s| {
                s.status == crate::runtime::StepStatus::Failed && upstream.contains(&s.tool)
            })
        } {
            format!(
                "{}: {} failed ({})",
                r.made_from,
                failed.label_or_tool(),
                failed.error
            )
        } else {
            "the inputs it is made from were not given or not produced".to_string()
        };
        out.push((r.name.to_string(), why));
    }
    out
}

/// The tools a product's `producers` depend on, transitively (themselves included): only a
/// failure among these can be why the product is missing.
fn upstream_tools(producers: &[&str]) -> Vec<String> {
    let reg = shared_registry();
    let mut out: Vec<String> = producers.iter().map(|p| p.to_string()).collect();
    let mut i = 0;
    while i < out.len() {
        let needs = reg
            .get(&out[i])
            .map(|t| t.requires.clone())
            .unwrap_or_default();
        for key in needs {
            for t in reg.tools().iter().filter(|t| t.produces.contains(&key)) {
                if !out.contains(&t.name) {
                    out.push(t.name.clone());
                }
            }
        }
        i += 1;
    }
    out
}

/// A JSON summary of any data file a reader understands (counts, ranges, units), for
/// `hydrogeo-studio read <file>`. Each method is asked in turn; the first that recognises the
/// file answers.
pub fn read_summary(path: &std::path::Path) -> anyhow::Result<serde_json::Value> {
    recognise(path)?.ok_or_else(|| {
        anyhow::anyhow!(
            "{}: no reader recognised this file (by its extension and first bytes)",
            path.display()
        )
    })
}

/// [`read_summary`], with "no reader recognised it" as `Ok(None)` — an answer, apart from a
/// file that could not be looked at or that a reader recognised and found broken (errors).
pub fn recognise(path: &std::path::Path) -> anyhow::Result<Option<serde_json::Value>> {
    // Type and size first: a reader sniffing the first bytes of a FIFO would wait for ever.
    crate::methods::io::regular_file(path)?;
    type Reader =
        fn(&std::path::Path) -> Option<Result<serde_json::Value, crate::methods::io::ReadError>>;
    use kit::methods::{ERT, GPR, GRAVMAG, MT, SEISMIC, TDEM};
    let readers: &[(&str, Reader)] = &[
        (ERT.id, ert::read_summary),
        (SEISMIC.id, seismic::read_summary),
        (TDEM.id, tdem::read_summary),
        (MT.id, mt::read_summary),
        (GRAVMAG.id, gravmag::read_summary),
        (GPR.id, gpr::read_summary),
        // Hydrological-model output (issue 26): asked last, so a file another method reads
        // is never taken for a model file; not yet a method of METHODS (no tools, no panel).
        ("hydro", crate::methods::hydro::read_summary),
    ];
    for (method, reader) in readers {
        if let Some(result) = reader(path) {
            let mut v = result?;
            if let Some(obj) = v.as_object_mut() {
                obj.insert("method".into(), serde_json::Value::from(*method));
            }
            return Ok(Some(v));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_registers_once() {
        let mut reg = Registry::new();
        for part in PARTS {
            assert_eq!(part(&mut reg), Ok(()));
        }
        assert_eq!(reg.len(), shared_registry().len());
        // Each tool declares what a recovery may change; never an input role.
        let rules = reg.recovery_rules();
        assert!(rules.allows(kit::keys::INVERSION_PARAMS));
        assert!(!rules.allows(kit::keys::GPR_VELOCITY));
        assert!(rules.table(kit::keys::ELECTRODE_FILE).is_some());
        assert!(rules.settings.iter().all(|k| !k.ends_with("_file")));
    }

    #[test]
    fn a_missing_product_is_blamed_only_on_a_failure_upstream_of_it() {
        // Issue 17: "water content not delivered" was blamed on an unrelated GPR failure.
        let mut ctx = RunContext::new("What is the water content?");
        ctx.begin("process_gpr_line", "").label = "Process GPR".into();
        ctx.finish(
            "",
            crate::runtime::StepStatus::Failed,
            "GPR file unreadable",
        );
        let why = shortfall_reasons(&ctx)
            .into_iter()
            .find(|(what, _)| what.contains("water content"))
            .map(|(_, why)| why)
            .unwrap_or_default();
        assert!(!why.contains("GPR"), "{why}");
        // A failure upstream (loading the ERT data) is named.
        ctx.begin("load_ert_surveys", "").label = "Load ERT surveys".into();
        ctx.finish(
            "",
            crate::runtime::StepStatus::Failed,
            "ert/a.dat, line 7: expected 4 numbers",
        );
        let why = shortfall_reasons(&ctx)
            .into_iter()
            .find(|(what, _)| what.contains("water content"))
            .map(|(_, why)| why)
            .unwrap_or_default();
        assert!(why.contains("line 7"), "{why}");
    }

    #[test]
    fn a_shortfall_says_what_was_missing_to_make_it() {
        // Seed 001, shortfall_reasons example (our TDEM tool's name).
        let mut ctx = RunContext::new("estimate the water content");
        ctx.begin("invert_tdem", "").label = "Run TDEM inversion".into();
        ctx.finish("", crate::runtime::StepStatus::Failed, "no time column");
        let why: std::collections::BTreeMap<String, String> =
            shortfall_reasons(&ctx).into_iter().collect();
        assert_eq!(
            why["water content"],
            "no resistivity model was recovered to convert: Run TDEM inversion failed (no time column)"
        );
        // Seed 001, fetch_climate: refused with its reason, a rainfall goal says so.
        let ctx = RunContext::new("How did last month's rainfall change the water table?");
        let why: std::collections::BTreeMap<String, String> =
            shortfall_reasons(&ctx).into_iter().collect();
        assert!(
            why["climate data"].contains("a network source of climate data and none is configured"),
            "{why:?}"
        );
    }

    #[test]
    fn a_requested_product_nobody_makes_is_named_with_its_reason() {
        let ctx = RunContext::new("Estimate the soil moisture and give me a 3D model");
        let reasons = assess(&ctx);
        assert!(
            reasons.iter().any(|r| r.contains("water content")),
            "{reasons:?}"
        );
    }
}

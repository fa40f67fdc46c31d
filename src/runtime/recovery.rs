//! What the loop does about a step that failed: the model diagnoses, the runtime decides.
//!
//! * **Diagnosis** is the model's: reading an error message and saying what it means.
//! * **The decision** is bounded here: the only recovery performed on its own is re-running
//!   the same tool with different *settings* from the run's allow-list (the settings the
//!   tools declare, [`RunContext::recovery`]), merged one level deep, and only when the merged
//!   value differs. Never a path, never code.
//! * At most [`MAX_RECOVERIES`] per tool per run; the retry is an ordinary recorded step.
//! * No model → no diagnosis: the step stays failed.

use serde_json::{Map, Value};

use super::context::{RunContext, compact};
use super::decide::{Decide, Diagnosis, DiagnosisRequest, ModelEvent};

/// How many times one tool may be recovered within a run.
pub const MAX_RECOVERIES: usize = 1;
/// The longest script purpose a diagnosis may give (seed 000: 600 characters).
pub const MAX_PURPOSE_CHARS: usize = 600;

/// Apply `change` to `current`, merging one level of object: `{"lambda": 5}` into
/// `{"lambda": 15, "max_iterations": 10}` changes only lambda.
pub fn merge(current: Option<&Value>, change: &Value) -> Value {
    match (current, change) {
        (Some(Value::Object(cur)), Value::Object(ch)) => {
            let mut merged = cur.clone();
            for (k, v) in ch {
                merged.insert(k.clone(), v.clone());
            }
            Value::Object(merged)
        }
        _ => change.clone(),
    }
}

/// The adjustable part of the configuration.
pub fn settings_for(ctx: &RunContext) -> Map<String, Value> {
    ctx.recovery
        .settings
        .iter()
        .filter_map(|k| ctx.config.get(k).map(|v| (k.clone(), v.clone())))
        .collect()
}

/// Keep only the changes that are allowed and would make a difference.
pub fn allowed_changes(ctx: &RunContext, changes: &Map<String, Value>) -> Map<String, Value> {
    changes
        .iter()
        .filter(|(k, v)| {
            ctx.recovery.allows(k)
                && merge(ctx.config.get(k.as_str()), v)
                    != ctx.config.get(k.as_str()).cloned().unwrap_or(Value::Null)
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Put allowed changes into the configuration; returns `"key: old -> new"` per change.
/// Keys off the allow-list are refused and reported in the second list.
pub fn apply_changes(
    ctx: &mut RunContext,
    changes: &Map<String, Value>,
    by: &str,
    why: &str,
) -> (Vec<String>, Vec<String>) {
    let mut applied = Vec::new();
    let mut refused = Vec::new();
    for (key, value) in changes {
        if !ctx.recovery.allows(key) {
            refused.push(if super::context::is_input_role(key) {
                format!("{key} names an input file the user chose, and files are never changed during a run")
            } else {
                format!("{key} is not a setting a run may change")
            });
            continue;
        }
        let merged = merge(ctx.config.get(key), value);
        match ctx.change_setting(key, merged, by, why) {
            Ok(line) => applied.push(line),
            Err(e) => refused.push(e),
        }
    }
    (applied, refused)
}

/// The diagnosis after filtering: `action` is `retry` only when a diagnosis asked for it and
/// named at least one allowed setting that would differ; otherwise `give_up`, so a model that
/// answers "retry" with nothing to change cannot loop the run.
pub fn diagnose(
    ctx: &RunContext,
    tool: &str,
    purpose: &str,
    error: &str,
    notes: &[String],
    decider: &mut dyn Decide,
    on_event: &mut dyn FnMut(ModelEvent),
) -> Diagnosis {
    // Only files that exist, a list spelled out as key[i], and what the steps wrote (seed
    // 000, `input_paths`): the model is shown what a script could actually read.
    let inputs: Map<String, Value> = super::offers::input_files(ctx)
        .into_iter()
        .map(|(k, p)| (k, Value::from(p.display().to_string())))
        .collect();
    let request = DiagnosisRequest {
        transcript: ctx.transcript(12),
        tool: tool.to_string(),
        purpose: purpose.to_string(),
        error: error.chars().take(800).collect(),
        settings: settings_for(ctx),
        adaptable: ctx
            .recovery
            .tables
            .iter()
            .filter(|t| ctx.has_input(&t.role))
            .map(|t| t.role.clone())
            .collect(),
        inputs,
        notes: notes.to_vec(),
    };
    let give_up = Diagnosis {
        action: "give_up".into(),
        ..Default::default()
    };
    let Some(Ok(mut d)) = decider.diagnose(&request, on_event) else {
        return give_up;
    };
    d.changes = allowed_changes(ctx, &d.changes);
    let adaptable = ctx.recovery.table(&d.file_key).is_some() && ctx.has_input(&d.file_key);
    d.action = match d.action.as_str() {
        "adapt" if adaptable => "adapt",
        "retry" if !d.changes.is_empty() => "retry",
        "script" if !d.purpose.trim().is_empty() => "script",
        _ => "give_up",
    }
    .to_string();
    if d.action != "adapt" {
        d.file_key.clear();
    }
    // Only an input the run actually has can be stood in for, and never one of a list.
    if d.action != "script" || !ctx.has_input(&d.replaces) || d.replaces.contains('[') {
        d.replaces.clear();
    }
    if d.action != "script" {
        d.purpose.clear();
    }
    d.purpose = d.purpose.chars().take(MAX_PURPOSE_CHARS).collect();
    d.cause = d.cause.chars().take(300).collect();
    d.why = d.why.chars().take(300).collect();
    d
}

/// The sentence a recovery leaves in the warnings.
pub fn recovery_note(
    label: &str,
    error: &str,
    cause: &str,
    applied: &[String],
    worked: bool,
) -> String {
    format!(
        "{label} failed ({error}). Diagnosis: {}. Retried with {}, {}.",
        cause.trim_end_matches('.'),
        applied.join("; "),
        if worked {
            "which worked"
        } else {
            "which did not help either"
        }
    )
}

/// `value` for a transcript line.
pub fn show(value: &Value) -> String {
    compact(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::decide::ScriptedDecider;
    use serde_json::json;

    /// A run whose tools declare `fit_params` and `pass_mark` adjustable, with an input role.
    fn ctx() -> RunContext {
        let cfg = json!({"fit_params": {"lambda": 15, "max_iterations": 10}, "data_file": "a.dat"});
        let mut ctx = RunContext::new("goal").with_config(cfg.as_object().cloned().unwrap());
        ctx.recovery.settings = vec!["fit_params".into(), "pass_mark".into()];
        ctx
    }

    #[test]
    fn merge_is_one_level_deep() {
        // Seed 000, _merge examples.
        assert_eq!(
            merge(
                Some(&json!({"lambda": 15, "max_iterations": 10})),
                &json!({"lambda": 5})
            ),
            json!({"lambda": 5, "max_iterations": 10})
        );
        assert_eq!(merge(Some(&json!(15.0)), &json!(5.0)), json!(5.0));
    }

    #[test]
    fn only_allowed_and_effective_changes_survive() {
        let c = ctx();
        let changes = json!({
            "fit_params": {"lambda": 15},
            "data_file": "/etc/passwd",
            "pass_mark": 60,
            "unknown": 1
        });
        let kept = allowed_changes(&c, changes.as_object().unwrap());
        assert_eq!(kept.keys().collect::<Vec<_>>(), vec!["pass_mark"]);
    }

    #[test]
    fn retry_without_an_effective_change_is_give_up() {
        let c = ctx();
        let mut d = ScriptedDecider::default();
        d.diagnoses.push_back(Ok(Diagnosis {
            cause: "too smooth".into(),
            action: "retry".into(),
            changes: json!({"fit_params": {"lambda": 15}})
                .as_object()
                .cloned()
                .unwrap(),
            ..Default::default()
        }));
        let plan = diagnose(&c, "invert", "", "diverged", &[], &mut d, &mut |_| {});
        assert_eq!(plan.action, "give_up");
    }

    #[test]
    fn apply_changes_reports_old_and_new_and_refuses_paths() {
        // Seed 000, apply_changes example (our JSON rendering).
        let mut c = ctx();
        let (applied, refused) = apply_changes(
            &mut c,
            json!({"fit_params": {"lambda": 5}, "data_file": "b.dat"})
                .as_object()
                .unwrap(),
            "recovery",
            "less smoothing",
        );
        assert_eq!(
            applied,
            vec!["fit_params: {\"lambda\":15,\"max_iterations\":10} -> {\"lambda\":5,\"max_iterations\":10}".to_string()]
        );
        assert_eq!(refused.len(), 1);
        assert!(refused[0].contains("input file"));
        assert_eq!(c.setting_changes[0].by, "recovery");
    }
}

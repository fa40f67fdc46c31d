//! Property tests of the loop: for random registries and random model answers, the loop
//! terminates within its bound and never runs a tool whose requirements are unmet.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use serde_json::Value;

use super::context::RunContext;
use super::controller::{RunOptions, run_controller};
use super::decide::{DecideError, Decision, ScriptedDecider};
use super::product::JsonProduct;
use super::step::StepStatus;
use super::tool::{Outputs, Registry, Tool};

const KEYS: [&str; 6] = ["a", "b", "c", "d", "e", "report_files"];

#[derive(Debug, Clone)]
struct Spec {
    requires: Vec<usize>,
    produces: Vec<usize>,
    fails: bool,
    repeatable: bool,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        proptest::collection::vec(0..KEYS.len(), 0..3),
        proptest::collection::vec(0..KEYS.len(), 0..3),
        any::<bool>(),
        proptest::bool::weighted(0.2),
    )
        .prop_map(|(requires, produces, fails, repeatable)| Spec {
            requires,
            produces,
            fails,
            repeatable,
        })
}

fn answer(n_tools: usize) -> impl Strategy<Value = Result<Decision, DecideError>> {
    prop_oneof![
        (0..n_tools + 2).prop_map(|i| Ok(Decision::tool(&format!("t{i}"), "chosen"))),
        Just(Ok(Decision::done("finished"))),
        Just(Err(DecideError::Unusable("prose".into()))),
        Just(Err(DecideError::Unreachable("refused".into()))),
    ]
}

fn build(specs: &[Spec], violations: Arc<AtomicUsize>, ran: Arc<Mutex<Vec<String>>>) -> Registry {
    let mut reg = Registry::new();
    for (i, s) in specs.iter().enumerate() {
        let requires: Vec<&str> = s.requires.iter().map(|k| KEYS[*k]).collect();
        let produces: Vec<&str> = s.produces.iter().map(|k| KEYS[*k]).collect();
        let (req, prod, fails) = (
            requires.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            produces.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            s.fails,
        );
        let v = violations.clone();
        let r = ran.clone();
        let name = format!("t{i}");
        let n2 = name.clone();
        let tool = Tool::new(&name, "random tool", move |ctx: &mut RunContext| {
            let refs: Vec<&str> = req.iter().map(String::as_str).collect();
            if !ctx.has(&refs) {
                v.fetch_add(1, Ordering::SeqCst);
            }
            r.lock().unwrap().push(n2.clone());
            if fails {
                anyhow::bail!("random failure");
            }
            let mut out = Outputs::new();
            for p in &prod {
                out = out.with(p, JsonProduct::new(p, Value::Null));
            }
            Ok(("ran".into(), out))
        })
        .requires(&requires)
        .produces(&produces)
        .repeatable(s.repeatable);
        reg.register(tool).unwrap();
    }
    reg
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_loop_terminates_and_respects_requirements(
        specs in proptest::collection::vec(spec(), 1..10),
        answers in proptest::collection::vec(answer(10), 0..40),
        use_model in any::<bool>(),
        max_steps in 1usize..30,
    ) {
        let violations = Arc::new(AtomicUsize::new(0));
        let ran = Arc::new(Mutex::new(Vec::new()));
        let reg = build(&specs, violations.clone(), ran.clone());
        let mut ctx = RunContext::new("random");
        let mut decider = ScriptedDecider::new(answers);
        let opts = RunOptions { max_steps, ..Default::default() };
        let ended = if use_model {
            run_controller(&mut ctx, &reg, Some(&mut decider), &opts)
        } else {
            run_controller(&mut ctx, &reg, None, &opts)
        };
        // Terminated (we are here), within the bound: recovery retries are extra steps, at
        // most one per tool.
        prop_assert!(ctx.steps.len() <= max_steps + specs.len());
        prop_assert_eq!(ctx.ended, Some(ended));
        prop_assert_eq!(violations.load(Ordering::SeqCst), 0);
        // Every step that ran (ok or failed) was a registered, offered tool.
        for s in &ctx.steps {
            if matches!(s.status, StepStatus::Ok | StepStatus::Failed) {
                prop_assert!(reg.get(&s.tool).is_some());
            }
        }
        prop_assert_eq!(
            ran.lock().unwrap().len(),
            ctx.steps.iter().filter(|s| matches!(s.status, StepStatus::Ok | StepStatus::Failed)).count()
        );
    }
}

mod safety {
    use std::sync::Arc;

    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use crate::runtime::context::RunContext;
    use crate::runtime::controller::{RunOptions, run_controller};
    use crate::runtime::decide::{CodeProposal, DecideError, Decision, Diagnosis, ScriptedDecider};
    use crate::runtime::events::AnsweredBy;
    use crate::runtime::interaction::{ScriptAnswer, Scripted};
    use crate::runtime::steering::Steering;
    use crate::runtime::tool::{Outputs, Registry, Tool};

    /// Settings the tools declare adjustable (`fit_params`, `pass_mark`), one they do not
    /// (`velocity`), input roles (one a reader may stand in for) and other names.
    const KEYS: [&str; 7] = [
        "fit_params",
        "data_file",
        "station_file",
        "velocity",
        "pass_mark",
        "output_dir",
        "data_dir",
    ];

    fn settings() -> impl Strategy<Value = Map<String, Value>> {
        proptest::collection::vec((0..KEYS.len(), 0i64..50), 0..3).prop_map(|v| {
            v.into_iter()
                .map(|(k, n)| (KEYS[k].to_string(), json!({"lambda": n})))
                .collect()
        })
    }

    fn decision() -> impl Strategy<Value = Result<Decision, DecideError>> {
        (0..4usize, settings(), any::<bool>()).prop_map(|(t, settings, done)| {
            let mut d = if done {
                Decision::done("finish")
            } else {
                Decision::tool(&format!("t{t}"), "why")
            };
            d.settings = settings;
            Ok(d)
        })
    }

    fn diagnosis() -> impl Strategy<Value = Result<Diagnosis, DecideError>> {
        (0..4usize, settings(), 0..KEYS.len(), 0..KEYS.len()).prop_map(|(a, changes, f, r)| {
            Ok(Diagnosis {
                cause: "c".into(),
                action: ["retry", "adapt", "script", "give_up"][a].into(),
                changes,
                file_key: KEYS[f].into(),
                replaces: KEYS[r].into(),
                purpose: "do it".into(),
                why: "w".into(),
            })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Whatever the model answers, only allow-listed settings change, input roles never
        /// change, and no code runs without a recorded yes from a person.
        #[test]
        fn no_model_answer_escapes_the_allow_list_or_runs_code_unapproved(
            decisions in proptest::collection::vec(decision(), 0..12),
            diagnoses in proptest::collection::vec(diagnosis(), 0..6),
            approve in proptest::collection::vec(proptest::option::of(any::<bool>()), 0..6),
            notes in proptest::collection::vec("[a-z ]{0,12}", 0..3),
        ) {
            let tmp = tempfile::tempdir().unwrap();
            std::fs::write(tmp.path().join("e.txt"), "bad table\n").unwrap();
            let mut reg = Registry::new();
            for i in 0..4 {
                let name = format!("t{i}");
                let out = format!("p{i}");
                let fails = i % 2 == 0;
                reg.register(
                    Tool::new(&name, "random", move |_: &mut RunContext| {
                        if fails { anyhow::bail!("cannot read the table") }
                        Ok(("ok".into(), Outputs::new().with(&out, crate::runtime::JsonProduct::new("x", Value::Null))))
                    })
                    .produces(&[format!("p{i}").as_str()])
                    .adjusts(&["fit_params", "pass_mark"])
                    .adapts("station_file", 3, "3 columns: number, x (m), elevation (m)"),
                ).unwrap();
            }
            let answers = Arc::new(std::sync::Mutex::new(approve));
            let a2 = answers.clone();
            let inputs = json!({"station_file": "e.txt", "data_file": "e.txt"});
            let out = tmp.path().join("run");
            std::fs::create_dir_all(&out).unwrap();
            let cfg = json!({"fit_params": {"lambda": 20}, "pass_mark": 70, "velocity": 0.1});
            let mut ctx = RunContext::new("goal")
                .with_inputs(inputs.as_object().unwrap(), tmp.path())
                .with_config(cfg.as_object().cloned().unwrap())
                .with_output_dir(&out)
                .with_interaction(Arc::new(Scripted {
                    review: Box::new(move |_| a2.lock().unwrap().pop().flatten().map(|run| ScriptAnswer { run, edited_source: None })),
                    ..Default::default()
                }));
            let roles_before = ctx.input_roles().clone();
            let mut d = ScriptedDecider::new(decisions);
            d.diagnoses = diagnoses.into();
            for _ in 0..6 {
                d.code.push_back(Ok(CodeProposal { purpose: "p".into(), code: "def main(inputs, out):\n    return {}\n".into() }));
            }
            let steer = Steering::new();
            for n in notes { steer.say(&n); }
            run_controller(&mut ctx, &reg, Some(&mut d), &RunOptions { max_steps: 12, steering: Some(steer), ..Default::default() });
            for c in &ctx.setting_changes {
                prop_assert!(reg.recovery_rules().allows(&c.key), "changed {}", c.key);
            }
            prop_assert_eq!(ctx.input_roles(), &roles_before);
            for s in ctx.substitutions().values() {
                prop_assert!(s.path.starts_with(out.canonicalize().unwrap()) || s.path.starts_with(&out));
            }
            for r in &ctx.scripts {
                if matches!(r.status.as_str(), "ok" | "failed" | "timed_out") {
                    prop_assert_eq!(r.decision.as_str(), "run");
                    prop_assert_eq!(r.by, AnsweredBy::User);
                }
            }
            let ran = ctx.steps.iter().filter(|s| s.tool == "temporary_script").count();
            let yes = ctx.scripts.iter().filter(|r| r.decision == "run" && r.by == AnsweredBy::User).count();
            prop_assert!(ran <= yes, "{ran} scripts ran with {yes} approvals");
        }
    }
}

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

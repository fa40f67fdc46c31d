// Not yet compiled: belongs at the end of tests/studio_ui.rs (uses its helpers).

/// Issue 20: the chat answers "what is the water table depth?" from the run's answers — the
/// scripted model calls `get_answers`, the person approves, and the tool's result carries
/// the number, the methods and the figure (an answer put on the shelf as a run would).
#[test]
fn the_chat_reads_the_water_table_from_the_answers() {
    use hydrogeo_studio::catalog::answers::{Answer, Answers, Evidence, Question, QuestionKind};
    use hydrogeo_studio::catalog::kit::{Held, keys};
    use hydrogeo_studio::llm::harness::{ChatMessage, ChatModel, Role, ToolCall};
    let seen: Arc<Mutex<String>> = Arc::default();
    struct Model(usize, Arc<Mutex<String>>);
    impl ChatModel for Model {
        fn complete(
            &mut self,
            _s: &str,
            msgs: &[ChatMessage],
            _t: &[Value],
        ) -> Result<ChatMessage, String> {
            self.0 += 1;
            Ok(if self.0 == 1 {
                ChatMessage::assistant(
                    "Let me read the answers.",
                    vec![ToolCall {
                        id: "c1".into(),
                        name: "get_answers".into(),
                        arguments: serde_json::json!({}),
                    }],
                )
            } else {
                let last = msgs.iter().rev().find(|m| m.role == Role::Tool).unwrap();
                *self.1.lock().unwrap() = last.content.clone();
                ChatMessage::assistant("The water table lies at 4.1 ± 0.2 m.", vec![])
            })
        }
    }
    let q = Question {
        kind: QuestionKind::WaterTableDepth,
        words: "Where is the water table".into(),
        at_depth_m: None,
    };
    let ev = |m: &str, v: f64, s: f64| Evidence {
        method: m.into(),
        value: v,
        uncertainty: s,
        how: "test".into(),
        product: "p".into(),
        file: None,
    };
    let answer = Answer::depth(
        &q,
        "water table",
        vec![ev("ERT", 4.0, 0.3), ev("GPR", 4.2, 0.3)],
        Value::Null,
    );
    let held = Held::new(
        Answers {
            answers: vec![answer],
            answerable: vec![],
        },
        "1 of 1 question(s) answered",
    )
    .file(PathBuf::from("figures/answers_evidence.png"));
    let model_seen = seen.clone();
    let dir = tempfile::tempdir().unwrap();
    let app = StudioApp::new(StudioConfig {
        project: dir.path().to_path_buf(),
        registry: Arc::new(Registry::new()),
        decider: no_model(),
        picker: Arc::new(NoPicker),
        runs_dir: None,
        exit_after_first_frame: false,
        unattended: Default::default(),
        settings: None,
        chat_model: Some(Arc::new(move || {
            Some(Box::new(Model(0, model_seen.clone())) as Box<dyn ChatModel>)
        })),
    });
    let mut h = harness(app);
    h.state().shared.shelf.put(keys::ANSWERS, Arc::new(held));
    h.get_by_label("Chat").click();
    for _ in 0..3 {
        h.step();
    }
    h.state_mut().chat.input = "What is the water table depth?".into();
    h.get_by_label("Send").click();
    step_until(&mut h, 20, "the get_answers call", |a| {
        a.chat.pending.is_some()
    });
    h.get_by_label("Approve").click();
    step_until(&mut h, 20, "the end of the turn", |a| !a.chat.working());
    let result = seen.lock().unwrap().clone();
    let v: Value = serde_json::from_str(&result).expect("the tool's result is the answers' JSON");
    let a = &v["answers"][0];
    assert_eq!(a["kind"], "water_table_depth");
    // Inverse-variance of 4.0 and 4.2 at equal σ 0.3: 4.1 ± 0.212.
    assert!((a["value"].as_f64().unwrap() - 4.1).abs() < 1e-9, "{a}");
    assert_eq!(a["agreement"], "agree");
    assert_eq!(a["evidence"].as_array().unwrap().len(), 2);
    assert_eq!(v["files"][0], "figures/answers_evidence.png");
    h.get_by_label_contains("4.1 ± 0.2 m");
}

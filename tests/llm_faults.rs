//! Every way a model can fail, against a real local HTTP server (tiny_http on 127.0.0.1, real
//! sockets, real SSE): each ends with a usable decision or the dependency-order fallback, and a
//! note in the transcript that says what happened.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hydrogeo_studio::llm::{Client, ModelDecider, Provider, Settings};
use hydrogeo_studio::runtime::decide::{Decide, DecideError, DecisionRequest, ModelEvent};
use hydrogeo_studio::runtime::events::{Event, collect};
use hydrogeo_studio::runtime::{
    Outputs, Registry, RunContext, RunOptions, Steering, StepStatus, Tool, run_controller,
};
use serde_json::Value;

/// What the mock answers to one request.
#[derive(Clone)]
enum Answer {
    /// Status, extra headers, body.
    Plain(u16, Vec<(String, String)>, String),
    /// An SSE stream of these chunks, `gap` apart; `stall` after chunk `n` for that long; the
    /// stream ends after the last chunk (no `[DONE]` unless given).
    Stream {
        chunks: Vec<String>,
        gap: Duration,
        stall_after: Option<(usize, Duration)>,
    },
    /// Wait before answering at all.
    Delay(Duration, Box<Answer>),
}

/// A mock model server answering requests from a script, recording each request body.
struct Mock {
    url: String,
    bodies: Arc<Mutex<Vec<Value>>>,
}

fn respond(req: tiny_http::Request, answer: Answer) {
    match answer {
        Answer::Plain(status, headers, body) => {
            let mut r = tiny_http::Response::from_string(body).with_status_code(status);
            for (k, v) in headers {
                if let Ok(h) = tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()) {
                    r.add_header(h);
                }
            }
            let _ = req.respond(r);
        }
        Answer::Stream {
            chunks,
            gap,
            stall_after,
        } => {
            // Written by hand on the raw connection (chunked encoding, flushed per chunk), so
            // that a pause on the server is a pause on the wire.
            use std::io::Write;
            let mut w = req.into_writer();
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
            if w.write_all(head.as_bytes())
                .and_then(|_| w.flush())
                .is_err()
            {
                return;
            }
            for (i, c) in chunks.iter().enumerate() {
                if i > 0 {
                    std::thread::sleep(gap);
                }
                if let Some((n, d)) = stall_after
                    && i == n
                {
                    std::thread::sleep(d);
                }
                let frame = format!("{:x}\r\n{c}\r\n", c.len());
                if w.write_all(frame.as_bytes())
                    .and_then(|_| w.flush())
                    .is_err()
                {
                    return;
                }
            }
            let _ = w.write_all(b"0\r\n\r\n").and_then(|_| w.flush());
        }
        Answer::Delay(d, inner) => {
            std::thread::sleep(d);
            respond(req, *inner);
        }
    }
}

impl Mock {
    fn start(script: Vec<Answer>) -> Mock {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", server.server_addr().to_ip().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let b2 = bodies.clone();
        std::thread::spawn(move || {
            let mut script = script.into_iter();
            for mut req in server.incoming_requests() {
                let mut text = String::new();
                let _ = req.as_reader().read_to_string(&mut text);
                b2.lock()
                    .unwrap()
                    .push(serde_json::from_str(&text).unwrap_or(Value::Null));
                let answer = script.next().unwrap_or_else(|| {
                    Answer::Plain(500, vec![], "the script has no more answers".into())
                });
                std::thread::spawn(move || respond(req, answer));
            }
        });
        Mock { url, bodies }
    }

    fn requests(&self) -> usize {
        self.bodies.lock().unwrap().len()
    }
}

/// An OpenAI-style SSE stream of `text`, in pieces of `piece` characters, with usage and DONE.
fn sse(text: &str, piece: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<String> = chars
        .chunks(piece.max(1))
        .map(|c| {
            let s: String = c.iter().collect();
            format!(
                "data: {}\n\n",
                serde_json::json!({"choices": [{"delta": {"content": s}}]})
            )
        })
        .collect();
    out.insert(0, ": keep-alive\n\n".into());
    out.push(format!(
        "data: {}\n\n",
        serde_json::json!({"choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 20}})
    ));
    out.push("data: [DONE]\n\n".into());
    out
}

fn stream(text: &str) -> Answer {
    Answer::Stream {
        chunks: sse(text, 7),
        gap: Duration::from_millis(5),
        stall_after: None,
    }
}

fn settings(url: &str) -> Settings {
    let mut s = Settings::new(Provider::OpenAi);
    s.base_url = url.to_string();
    s.model = "test-model".into();
    s.key = hydrogeo_studio::llm::ApiKey::new("sk-test-SECRET-1234567890");
    s.read_timeout = Duration::from_millis(1500);
    s.connect_timeout = Duration::from_millis(500);
    s
}

fn decider(url: &str) -> ModelDecider {
    ModelDecider::new(Client::new(settings(url)).unwrap())
}

fn request() -> DecisionRequest {
    DecisionRequest {
        transcript: "Goal: x\n".into(),
        menu: "- a: A.\n- b: B.".into(),
        menu_names: vec!["a".into(), "b".into()],
        done_allowed: false,
        finish: "report_files".into(),
        notes: vec![],
        adjustable: Default::default(),
        toolbox: None,
    }
}

/// A registry where the first choice is a real choice (two tools), then a report.
/// Tools a, b and c, each making one artifact.
fn tools_abc() -> Registry {
    let mut reg = Registry::new();
    let make = |key: &'static str| {
        move |_: &mut RunContext| -> hydrogeo_studio::runtime::ToolResult {
            Ok((
                format!("made {key}"),
                Outputs::new().with(
                    key,
                    hydrogeo_studio::runtime::JsonProduct::new(key, Value::Null),
                ),
            ))
        }
    };
    // Tool a reads `inversion_params`, so a note or a model may change it mid-run (each tool
    // declares what may change; the runtime knows no key by name).
    reg.register(
        Tool::new("a", "First.", make("x"))
            .produces(&["x"])
            .adjusts(&["inversion_params"]),
    )
    .unwrap();
    reg.register(Tool::new("b", "Second.", make("y")).produces(&["y"]))
        .unwrap();
    reg.register(Tool::new("c", "Third.", make("z")).produces(&["z"]))
        .unwrap();
    reg
}

/// Tools a, b, c and a report that needs x and y.
fn registry() -> Registry {
    let mut reg = tools_abc();
    reg.register(
        Tool::new("report", "Report.", |_: &mut RunContext| {
            Ok((
                "wrote".into(),
                Outputs::new().with(
                    "report_files",
                    hydrogeo_studio::runtime::JsonProduct::new("report_files", Value::Null),
                ),
            ))
        })
        .requires(&["x", "y"])
        .produces(&["report_files"]),
    )
    .unwrap();
    reg
}

/// Run the loop with the decider at `url`; return the context.
fn run_with(url: &str) -> RunContext {
    let mut d = decider(url);
    let mut ctx = RunContext::new("goal");
    run_controller(&mut ctx, &registry(), Some(&mut d), &RunOptions::default());
    ctx
}

fn fell_back_with_note(ctx: &RunContext, words: &str) {
    assert_eq!(
        ctx.steps[0].tool, "a",
        "dependency order takes the first tool"
    );
    assert_eq!(ctx.steps[0].reason, "next available step");
    assert!(
        ctx.warnings
            .iter()
            .any(|w| w.contains("fell back") && w.contains(words)),
        "no note containing {words:?}: {:?}",
        ctx.warnings
    );
    assert!(ctx.has(&["report_files"]), "the run still completed");
}

#[test]
fn connection_refused_falls_back_with_a_note() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let ctx = run_with(&format!("http://127.0.0.1:{port}/v1"));
    fell_back_with_note(&ctx, "cannot connect");
}

#[test]
fn a_timeout_before_the_first_byte_falls_back() {
    let m = Mock::start(vec![Answer::Delay(
        Duration::from_secs(4),
        Box::new(stream("{\"why\":\"late\",\"tool\":\"b\"}")),
    )]);
    let t0 = Instant::now();
    let mut d = decider(&m.url);
    let r = d.decide(&request(), &mut |_| {});
    assert!(
        matches!(&r, Err(DecideError::Unreachable(m)) if m.contains("no answer")),
        "{r:?}"
    );
    assert!(
        t0.elapsed() < Duration::from_secs(4),
        "it did not wait for the late answer"
    );
}

#[test]
fn a_stream_that_stalls_mid_answer_is_reported_as_stalled() {
    let m = Mock::start(vec![Answer::Stream {
        chunks: sse("{\"why\": \"the data are loaded so\", \"tool\": \"b\"}", 6),
        gap: Duration::from_millis(5),
        stall_after: Some((3, Duration::from_secs(4))),
    }]);
    let mut thoughts = Vec::new();
    let mut d = decider(&m.url);
    let r = d.decide(&request(), &mut |e| {
        if let ModelEvent::Thought(t) = e {
            thoughts.push(t)
        }
    });
    assert!(
        matches!(&r, Err(DecideError::Unreachable(m)) if m.contains("stalled")),
        "{r:?}"
    );
    assert!(
        !thoughts.is_empty(),
        "the reasoning that did arrive was shown"
    );
}

#[test]
fn a_stream_cut_mid_json_falls_back() {
    let mut chunks = sse("{\"why\": \"half an ans", 5);
    chunks.truncate(chunks.len() - 2); // no usage, no [DONE]: the connection just ends
    let m = Mock::start(vec![Answer::Stream {
        chunks,
        gap: Duration::from_millis(2),
        stall_after: None,
    }]);
    let ctx = run_with(&m.url);
    fell_back_with_note(&ctx, "no complete JSON object");
}

#[test]
fn a_429_with_retry_after_then_success_uses_the_answer() {
    let m = Mock::start(vec![
        Answer::Plain(
            429,
            vec![("Retry-After".into(), "1".into())],
            "{\"error\":{\"message\":\"slow down\"}}".into(),
        ),
        stream("{\"why\": \"b first\", \"tool\": \"b\"}"),
    ]);
    let t0 = Instant::now();
    let mut d = decider(&m.url);
    let mut notes = Vec::new();
    let r = d.decide(&request(), &mut |e| {
        if let ModelEvent::Note(n) = e {
            notes.push(n)
        }
    });
    assert_eq!(
        r.unwrap().choice,
        hydrogeo_studio::runtime::Choice::Tool("b".into())
    );
    assert!(
        t0.elapsed() >= Duration::from_millis(950),
        "Retry-After was honoured"
    );
    assert_eq!(m.requests(), 2);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("429") && n.contains("retried after 1 s")),
        "{notes:?}"
    );
}

#[test]
fn server_errors_twice_then_success_back_off_one_then_two_seconds() {
    let m = Mock::start(vec![
        Answer::Plain(500, vec![], "oops".into()),
        Answer::Plain(503, vec![], "busy".into()),
        stream("{\"why\": \"b now\", \"tool\": \"b\"}"),
    ]);
    let t0 = Instant::now();
    let mut d = decider(&m.url);
    let mut notes = Vec::new();
    let r = d.decide(&request(), &mut |e| {
        if let ModelEvent::Note(n) = e {
            notes.push(n)
        }
    });
    assert!(r.is_ok(), "{r:?}");
    let waited = t0.elapsed();
    assert!(
        waited >= Duration::from_millis(2900) && waited < Duration::from_secs(6),
        "backoff 1 s + 2 s, took {waited:?}"
    );
    assert_eq!(m.requests(), 3);
    assert!(
        notes[0].contains("retried after 1 s") && notes[1].contains("retried after 2 s"),
        "{notes:?}"
    );
}

#[test]
fn unauthorised_is_not_retried_and_names_the_variable() {
    let m = Mock::start(vec![Answer::Plain(
        401,
        vec![],
        "{\"error\":\"bad key\"}".into(),
    )]);
    let ctx = run_with(&m.url);
    assert_eq!(
        m.requests(),
        1,
        "a 401 is never retried, and the model is not asked again this run"
    );
    fell_back_with_note(&ctx, "OPENAI_API_KEY");
    assert!(
        ctx.warnings
            .iter()
            .any(|w| w.contains("not asked again this run"))
    );
}

#[test]
fn prose_fences_two_objects_unknown_tools_early_done_and_empty_replies() {
    let m = Mock::start(vec![
        stream("I would run b next, it seems wise."), // prose → fallback: a
        stream("```json\n{\"why\": \"second needed\", \"tool\": \"b\"}\n```"), // fenced → b
        stream("{\"why\": \"looks finished\", \"done\": true}"), // early done → policy: c
    ]);
    let mut d = decider(&m.url);
    let mut ctx = RunContext::new("goal");
    run_controller(&mut ctx, &registry(), Some(&mut d), &RunOptions::default());
    let tools: Vec<&str> = ctx.steps.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(tools, vec!["a", "b", "c", "report"]);
    assert_eq!(ctx.steps[0].reason, "next available step");
    assert!(
        ctx.warnings
            .iter()
            .any(|w| w.contains("no complete JSON object"))
    );
    assert_eq!(ctx.steps[1].reason, "second needed");
    assert!(
        ctx.steps[2]
            .reason
            .contains("answered 'done' before a report")
    );
    assert_eq!(ctx.steps[3].reason, "only one action was available: report");

    let m = Mock::start(vec![
        stream("{\"why\": \"one\", \"tool\": \"zzz\"}\n{\"why\": \"two\", \"tool\": \"b\"}"), // unknown tool, 2 objects
        stream(""), // empty → fallback a
        stream("{\"why\": \"b next\", \"tool\": \"b\"}"),
        stream("{\"why\": \"c next\", \"tool\": \"c\"}"),
    ]);
    let mut d = decider(&m.url);
    let mut ctx = RunContext::new("goal");
    run_controller(&mut ctx, &registry(), Some(&mut d), &RunOptions::default());
    let s: Vec<(&str, StepStatus)> = ctx
        .steps
        .iter()
        .map(|s| (s.tool.as_str(), s.status))
        .collect();
    assert_eq!(
        s,
        vec![
            ("zzz", StepStatus::Skipped),
            ("a", StepStatus::Ok),
            ("b", StepStatus::Ok),
            ("c", StepStatus::Ok),
            ("report", StepStatus::Ok)
        ]
    );
    assert!(ctx.steps[0].error.starts_with("No tool named 'zzz'"));
    assert!(
        ctx.warnings
            .iter()
            .any(|w| w.contains("2 JSON objects; the first was used"))
    );
    assert!(
        ctx.warnings
            .iter()
            .any(|w| w.contains("the reply was empty"))
    );
}

/// A scripted end-to-end run through the mock server: the model chooses tools and streams its
/// reasons, a note changes an allowed setting, another asks for a file change and is refused;
/// the API key appears nowhere in the run folder.
#[test]
fn end_to_end_with_notes_and_no_key_anywhere() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.dat"), "1\n").unwrap();
    std::fs::write(
        tmp.path().join("project.json"),
        r#"{"goal": "test goal", "inputs": {"data_file": "a.dat"}, "config": {"inversion_params": {"lambda": 20}}}"#,
    )
    .unwrap();
    let project = hydrogeo_studio::runtime::Project::load(tmp.path()).unwrap();
    let steer = Steering::new();
    steer.say("please use lambda 5");
    steer.say("and read b.dat instead of a.dat");
    let m = Mock::start(vec![
        stream(
            "{\"why\": \"following the note, a first\", \"tool\": \"a\", \"settings\": {\"inversion_params\": {\"lambda\": 5}, \"data_file\": \"b.dat\"}}",
        ),
        stream("{\"why\": \"b is what remains before the report\", \"tool\": \"b\"}"),
        stream("{\"why\": \"c completes the data\", \"tool\": \"c\"}"),
        stream("{\"why\": \"the report exists\", \"done\": true}"),
    ]);
    let mut reg = tools_abc();
    reg.register(
        Tool::new("report", "Report.", |ctx| {
            let dir = ctx.output_dir.clone().unwrap();
            std::fs::write(dir.join("report.md"), format!("settings: {:?}", ctx.config))?;
            Ok((
                "wrote".into(),
                Outputs::new().with(
                    "report_files",
                    hydrogeo_studio::runtime::JsonProduct::new("r", Value::Null),
                ),
            ))
        })
        .requires(&["x", "y"])
        .produces(&["report_files"]),
    )
    .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut spec = hydrogeo_studio::runtime::session::RunSpec::new(project);
    spec.steering = steer;
    spec.listeners.push(collect(seen.clone()));
    let mut d = decider(&m.url);
    let out = hydrogeo_studio::runtime::session::run(spec, &reg, Some(&mut d)).unwrap();
    let ctx = &out.context;
    let tools: Vec<&str> = ctx.steps.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(tools, vec!["a", "b", "c", "report"]);
    assert_eq!(ctx.config["inversion_params"]["lambda"], 5);
    assert_eq!(
        ctx.input_roles()["data_file"][0],
        std::path::PathBuf::from("a.dat")
    );
    assert!(
        ctx.warnings
            .iter()
            .any(|w| w.contains("data_file names an input file")),
        "{:?}",
        ctx.warnings
    );
    assert!(ctx.transcript(40).contains("data_file names an input file"));
    // Reasoning streamed as it arrived.
    let thoughts: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::Thought { text } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert!(thoughts.iter().any(|t| t.starts_with("following the note")));
    assert_eq!(ctx.usage.calls, 3);
    assert_eq!(
        ctx.usage.tokens_in, 360,
        "the server's usage numbers were read"
    );
    // The key is nowhere in the run folder.
    for entry in walk(&out.dir) {
        let text = String::from_utf8_lossy(&std::fs::read(&entry).unwrap()).into_owned();
        assert!(
            !text.contains("SECRET"),
            "{} holds the API key",
            entry.display()
        );
    }
    // And the key reached the server only in the header, never in a body.
    for b in m.bodies.lock().unwrap().iter() {
        assert!(!b.to_string().contains("SECRET"));
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Issue 19: a `Retry-After` of 1e300 seconds is bounded by the backoff cap before any
/// `Duration` is built (it used to panic in `Duration::from_secs_f64` and kill the run's loop).
#[test]
fn a_huge_retry_after_is_capped_not_a_panic() {
    let m = Mock::start(vec![
        Answer::Plain(
            429,
            vec![("Retry-After".into(), "1e300".into())],
            "{}".into(),
        ),
        stream("{\"why\": \"b first\", \"tool\": \"b\"}"),
    ]);
    let mut s = settings(&m.url);
    s.backoff_cap = Duration::from_millis(200);
    let mut d = ModelDecider::new(Client::new(s).unwrap());
    let r = d.decide(&request(), &mut |_| {});
    assert_eq!(
        r.unwrap().choice,
        hydrogeo_studio::runtime::Choice::Tool("b".into())
    );
    assert_eq!(m.requests(), 2);
}

/// Issue 19: an endpoint that echoes the key in an error body, and a model that repeats it
/// in its answer (streamed in pieces that split the key): the key reaches neither the error
/// text nor the reply.
#[test]
fn the_key_is_removed_from_error_bodies_and_from_the_model_text() {
    let key = "sk-test-SECRET-1234567890";
    let m = Mock::start(vec![
        Answer::Plain(
            400,
            vec![],
            format!("{{\"error\":{{\"message\":\"bad key {key} for model\"}}}}"),
        ),
        Answer::Stream {
            chunks: sse(&format!("my key is {key}, twice: {key}."), 5),
            gap: Duration::from_millis(1),
            stall_after: None,
        },
    ]);
    let client = Client::new(settings(&m.url)).unwrap();
    let messages = [hydrogeo_studio::llm::Message::user("hi")];
    let err = client
        .complete("system", &messages, None, &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(!err.contains("SECRET"), "{err}");
    assert!(err.contains("[API key removed]"), "{err}");
    let mut seen = Vec::new();
    let reply = client
        .complete("system", &messages, None, &mut |t| seen.push(t.to_string()))
        .unwrap();
    assert_eq!(
        reply.text,
        "my key is [API key removed], twice: [API key removed]."
    );
    assert!(seen.iter().all(|t| !t.contains("SECRET")), "{seen:?}");
}

/// Issue 19: a server that drips one chunk every 400 ms, each inside the 1.5 s read timeout,
/// is cut off at the overall deadline (4 read timeouts = 6 s) instead of holding the request
/// for as long as it likes (here the drip would last 40 s).
#[test]
fn a_drip_fed_answer_is_cut_off_at_the_overall_deadline() {
    let text = "x".repeat(100);
    let m = Mock::start(vec![Answer::Stream {
        chunks: sse(&text, 1),
        gap: Duration::from_millis(400),
        stall_after: None,
    }]);
    let mut s = settings(&m.url);
    s.max_attempts = 1;
    let client = Client::new(s).unwrap();
    let messages = [hydrogeo_studio::llm::Message::user("hi")];
    let err = client
        .complete("system", &messages, None, &mut |_| {})
        .unwrap_err();
    assert!(
        matches!(err, hydrogeo_studio::llm::LlmError::Stalled { seconds, .. } if (seconds - 6.0).abs() < 1e-9),
        "{err}"
    );
}

//! The seed-002 cases and the seed-004 rules, reproduced with scripted models over the real
//! loop.

use std::sync::{Arc, Mutex};

use super::*;

/// A model that answers from a function of the request it gets; it counts its calls and keeps
/// every request.
/// Answers a request.
type Answer = Box<dyn FnMut(&[ChatMessage]) -> ChatMessage + Send>;

struct Scripted {
    answer: Answer,
    calls: Arc<Mutex<Vec<Vec<ChatMessage>>>>,
}

impl ChatModel for Scripted {
    fn complete(
        &mut self,
        _system: &str,
        messages: &[ChatMessage],
        _tools: &[Value],
    ) -> Result<ChatMessage, String> {
        self.calls.lock().unwrap().push(messages.to_vec());
        Ok((self.answer)(messages))
    }
}

fn scripted(
    answer: impl FnMut(&[ChatMessage]) -> ChatMessage + Send + 'static,
) -> (Scripted, Arc<Mutex<Vec<Vec<ChatMessage>>>>) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    (
        Scripted {
            answer: Box::new(answer),
            calls: calls.clone(),
        },
        calls,
    )
}

fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args,
    }
}

/// A shell over a tiny workspace: `pytest` fails while cart.py has the bug; output ends with
/// the status line, as an ordinary result (the command ran; what it ran failed).
struct Workspace {
    cart: String,
    ran: Vec<String>,
}

fn bash_tool(ws: Arc<Mutex<Workspace>>) -> ChatTool {
    ChatTool {
        name: "bash".into(),
        description: "Run a shell command.".into(),
        parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
        execute: Box::new(move |args| {
            let mut w = ws.lock().unwrap();
            let cmd = args["command"].as_str().unwrap_or("").to_string();
            w.ran.push(cmd);
            let (out, code) = if w.cart.contains("- 1") {
                ("F\nE   assert 5 == 6\n1 failed, 2991 passed".to_string(), 1)
            } else {
                ("2992 passed".to_string(), 0)
            };
            ToolOutcome::Ok(format!("{out}\nCommand exited with code {code}"))
        }),
    }
}

fn write_tool(ws: Arc<Mutex<Workspace>>) -> ChatTool {
    ChatTool {
        name: "write".into(),
        description: "Write a file.".into(),
        parameters: json!({"type": "object"}),
        execute: Box::new(move |args| {
            ws.lock().unwrap().cart = args["content"].as_str().unwrap_or("").to_string();
            ToolOutcome::Ok("written".into())
        }),
    }
}

#[test]
fn the_turn_limit_leaves_no_call_without_a_result() {
    // Seed 002, "Transcript doctor II": max_turns=2, a model that always asks for the tests.
    let ws = Arc::new(Mutex::new(Workspace {
        cart: "return sum(xs) - 1".into(),
        ran: vec![],
    }));
    let mut n = 0;
    let (mut model, calls) = scripted(move |_| {
        n += 1;
        ChatMessage::assistant(
            "Running the tests.",
            vec![call(&format!("c{n}"), "bash", json!({"command": "pytest"}))],
        )
    });
    let mut messages = Vec::new();
    let mut tools = vec![bash_tool(ws.clone())];
    run_agent(
        &mut model,
        "You are a careful debugger.",
        &mut messages,
        &mut tools,
        "The tests are failing. Have a look.",
        RunLimits {
            max_turns: Some(2),
            ..Default::default()
        },
        &mut |_| {},
    );
    assert_eq!(calls.lock().unwrap().len(), 2, "two model calls");
    assert_eq!(
        ws.lock().unwrap().ran,
        vec!["pytest", "pytest"],
        "both calls reached the shell"
    );
    assert_eq!(shape(&messages), "U A[c1] R(c1) A[c2] R(c2) A(error)");
    let view = context_for_model(&messages);
    assert_eq!(shape(&view), "U A[c1] R(c1) A[c2] R(c2)");
    let c2 = view
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some("c2"))
        .unwrap();
    assert_eq!(
        c2.content.lines().last(),
        Some("Command exited with code 1")
    );
    assert_eq!(
        messages.last().unwrap().content,
        "Agent stopped after max_turns=2"
    );
}

#[test]
fn a_failing_command_is_an_ordinary_result_and_the_model_fixes_it() {
    // Seed 002: the failing pytest comes back with its status line, not as a tool error, so
    // the model reads the assertion and fixes the bug in four calls.
    let ws = Arc::new(Mutex::new(Workspace {
        cart: "def total(xs):\n    return sum(xs) - 1\n".into(),
        ran: vec![],
    }));
    let (mut model, calls) = scripted(|msgs| {
        let last = msgs.iter().rev().find(|m| m.role == Role::Tool);
        match last {
            None => ChatMessage::assistant(
                "Let me run the tests.",
                vec![call("c1", "bash", json!({"command": "pytest"}))],
            ),
            Some(r) if r.is_error => {
                ChatMessage::assistant("I cannot run the tests: the bash tool is broken.", vec![])
            }
            Some(r) if r.content.contains("assert 5 == 6") => ChatMessage::assistant(
                "total() is off by one.",
                vec![call(
                    "c2",
                    "write",
                    json!({"path": "cart.py", "content": "def total(xs):\n    return sum(xs)\n"}),
                )],
            ),
            Some(r) if r.content.contains("2992 passed") => ChatMessage::assistant(
                "Fixed: total() dropped one item. The suite is green.",
                vec![],
            ),
            Some(_) => {
                ChatMessage::assistant("", vec![call("c3", "bash", json!({"command": "pytest"}))])
            }
        }
    });
    let mut messages = Vec::new();
    let mut tools = vec![bash_tool(ws.clone()), write_tool(ws.clone())];
    run_agent(
        &mut model,
        "s",
        &mut messages,
        &mut tools,
        "The test suite is red. Find out why and fix it.",
        RunLimits::default(),
        &mut |_| {},
    );
    assert_eq!(calls.lock().unwrap().len(), 4);
    assert_eq!(shape(&messages), "U A[c1] R(c1) A[c2] R(c2) A[c3] R(c3) A");
    assert!(
        !messages[2].is_error,
        "the failing command is not a tool error"
    );
    assert!(messages[2].content.contains("assert 5 == 6"));
    assert_eq!(
        messages[2].content.lines().last(),
        Some("Command exited with code 1")
    );
    assert!(ws.lock().unwrap().cart.contains("return sum(xs)\n"));
    assert_eq!(
        messages.last().unwrap().content,
        "Fixed: total() dropped one item. The suite is green."
    );
}

#[test]
fn an_interrupted_call_is_repaired_as_an_error_never_as_success() {
    // Seed 002: the chat was closed while bash was starting; nothing ran. Later the user asks
    // whether it went through: the model must be told no result was recorded.
    let ran = Arc::new(Mutex::new(Vec::<String>::new()));
    let closed = Arc::new(Mutex::new(true));
    let (r2, c2) = (ran.clone(), closed.clone());
    let migrate = ChatTool {
        name: "bash".into(),
        description: "Run a command.".into(),
        parameters: json!({}),
        execute: Box::new(move |args| {
            if *c2.lock().unwrap() {
                return ToolOutcome::Abandoned;
            }
            r2.lock()
                .unwrap()
                .push(args["command"].as_str().unwrap_or("").to_string());
            ToolOutcome::Ok("applying 3 migrations... done\nCommand exited with code 0".into())
        }),
    };
    let (model, calls) = scripted(|msgs| {
        let last = msgs.iter().rev().find(|m| m.role == Role::Tool);
        match last {
            None => ChatMessage::assistant(
                "Applying the migration.",
                vec![call("c1", "bash", json!({"command": "./migrate.sh"}))],
            ),
            Some(r) if r.is_error || r.content.contains("no result was recorded") => {
                ChatMessage::assistant(
                    "I cannot confirm it: that call was interrupted and no result was recorded. Check the database before running it again.",
                    vec![],
                )
            }
            Some(_) => ChatMessage::assistant("Yes. The migration has been applied.", vec![]),
        }
    });
    let mut h = Harness::new(
        Box::new(model),
        "You are a careful release engineer.",
        vec![migrate],
        &[],
    );
    h.prompt("Apply the pending database migration.", &mut |_| {});
    *closed.lock().unwrap() = false;
    h.prompt("Did the migration go through?", &mut |_| {});
    assert!(ran.lock().unwrap().is_empty(), "nothing reached the shell");
    assert_eq!(shape(&h.messages), "U A[c1] U A");
    let view = context_for_model(&h.messages);
    assert_eq!(shape(&view), "U A[c1] R(c1) U A");
    let made_up = view
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some("c1"))
        .unwrap();
    assert_eq!(made_up.content, INTERRUPTED);
    assert!(made_up.is_error);
    assert!(
        h.messages
            .last()
            .unwrap()
            .content
            .starts_with("I cannot confirm it")
    );
    // The second request the model got carried the repaired result.
    assert_eq!(shape(&calls.lock().unwrap()[1]), "U A[c1] R(c1) U");
}

#[test]
fn a_conversation_from_a_shared_opening_does_not_leak_another_conversations_messages() {
    // Seed 002: two customers' conversations start from the app's opening.
    let opening = vec![
        ChatMessage::user("House style: spaces, not tabs. Never edit anything under vendor/."),
        ChatMessage::assistant("Understood.", vec![]),
    ];
    let conversation = |port: u16| {
        let reads = Arc::new(Mutex::new(Vec::new()));
        let r2 = reads.clone();
        let read = ChatTool {
            name: "read".into(),
            description: "Read a file.".into(),
            parameters: json!({}),
            execute: Box::new(move |args| {
                r2.lock()
                    .unwrap()
                    .push(args["path"].as_str().unwrap_or("").to_string());
                ToolOutcome::Ok(format!("PORT = {port}\n"))
            }),
        };
        let (model, calls) = scripted(|msgs| {
            let text: String = msgs
                .iter()
                .map(|m| m.content.clone())
                .collect::<Vec<_>>()
                .join("\n");
            match text.find("PORT = ") {
                Some(i) => ChatMessage::assistant(
                    &format!(
                        "The port is {}.",
                        text[i + 7..].split_whitespace().next().unwrap_or("")
                    ),
                    vec![],
                ),
                None => ChatMessage::assistant(
                    "",
                    vec![call("c1", "read", json!({"path": "config.py"}))],
                ),
            }
        });
        (read, model, calls, reads)
    };
    let (read_a, model_a, _, _) = conversation(9090);
    let mut a = Harness::new(Box::new(model_a), "s", vec![read_a], &opening);
    a.prompt("What port do we listen on?", &mut |_| {});
    assert_eq!(shape(&a.messages), "U A U A[c1] R(c1) A");
    let (read_b, model_b, calls_b, reads_b) = conversation(5432);
    let mut b = Harness::new(Box::new(model_b), "s", vec![read_b], &opening);
    assert_eq!(shape(&b.messages), "U A", "B starts from the opening only");
    b.prompt("What port do we listen on?", &mut |_| {});
    assert_eq!(
        calls_b.lock().unwrap()[0].len(),
        3,
        "B's first request carried 3 messages"
    );
    assert_eq!(*reads_b.lock().unwrap(), vec!["config.py".to_string()]);
    assert_eq!(b.messages.last().unwrap().content, "The port is 5432.");
    assert_eq!(
        shape(&a.messages),
        "U A U A[c1] R(c1) A",
        "A's record is untouched"
    );
    assert_eq!(opening.len(), 2, "the app's opening is never mutated");
}

#[test]
fn steering_is_read_before_the_next_request_and_follow_ups_after_the_turn() {
    let (mut model, calls) = scripted(|msgs| {
        let users = msgs.iter().filter(|m| m.role == Role::User).count();
        if users == 1 {
            ChatMessage::assistant("", vec![call("c1", "noop", json!({}))])
        } else {
            ChatMessage::assistant("ok", vec![])
        }
    });
    let noop = ChatTool {
        name: "noop".into(),
        description: "".into(),
        parameters: json!({}),
        execute: Box::new(|_| ToolOutcome::Ok("did nothing".into())),
    };
    let mut steer = vec![vec!["use lambda 5".to_string()], vec![]];
    let mut follow = vec![vec![], vec!["and then the report".to_string()]];
    let mut sf = || steer.pop().unwrap_or_default();
    let mut ff = || follow.pop().unwrap_or_default();
    let mut messages = Vec::new();
    let mut tools = vec![noop];
    run_agent(
        &mut model,
        "s",
        &mut messages,
        &mut tools,
        "invert",
        RunLimits {
            steering: Some(&mut sf),
            follow_ups: Some(&mut ff),
            ..Default::default()
        },
        &mut |_| {},
    );
    // prompt, (call), steering note before the 2nd request, answer, follow-up, answer.
    assert_eq!(shape(&messages), "U A[c1] R(c1) U A U A");
    assert_eq!(messages[3].content, "use lambda 5");
    assert_eq!(messages[5].content, "and then the report");
    assert_eq!(calls.lock().unwrap().len(), 3);
}

/// A tool that finds data files of a kind in a fixed list, following the absence rules.
fn finder(files: Vec<&'static str>) -> ChatTool {
    ChatTool {
        name: "find_files".into(),
        description: "Find the data files of one method among the project's files.".into(),
        parameters: json!({}),
        execute: Box::new(move |args| {
            let Some(ext) = args["extension"].as_str() else {
                return ToolOutcome::Error(
                    "find_files needs \"extension\"; it could not look.".into(),
                );
            };
            let hits: Vec<&str> = files.iter().copied().filter(|f| f.ends_with(ext)).collect();
            if hits.is_empty() {
                ToolOutcome::absent(
                    Absence::new(
                        "data files with the requested extension",
                        [format!("the project's {} files", files.len())],
                    )
                    .map(|a| {
                        a.not_checked(["files outside the project folder".to_string()])
                            .try_instead("list the project's inputs to see what it holds")
                    }),
                )
            } else {
                ToolOutcome::Ok(hits.join("\n"))
            }
        }),
    }
}

#[test]
fn absence_and_error_never_share_a_shape_and_the_note_is_fixed() {
    // Seed 004: an absence ran and says what it covered; an error could not look.
    let mut tools = vec![finder(vec!["a.dat", "b.sgt"])];
    let c = call("c1", "find_files", json!({"extension": ".edi"}));
    let absent = result_message(&c, run_tool(&mut tools, &c)).unwrap();
    let v: Value = serde_json::from_str(&absent.content).unwrap();
    assert!(!absent.is_error);
    assert_eq!(v["outcome"], "nothing_found");
    assert_eq!(v["retry_returns_the_same"], true);
    assert!(v["checked"].as_array().is_some_and(|a| !a.is_empty()));
    let e = call("c2", "find_files", json!({}));
    let error = result_message(&e, run_tool(&mut tools, &e)).unwrap();
    assert!(error.is_error);
    assert!(
        serde_json::from_str::<Value>(&error.content).is_err(),
        "an error carries no coverage"
    );
    // The note is identical whatever the arguments.
    let c3 = call("c3", "find_files", json!({"extension": ".zzz"}));
    let other = result_message(&c3, run_tool(&mut tools, &c3)).unwrap();
    let w: Value = serde_json::from_str(&other.content).unwrap();
    assert_eq!(v["note"], w["note"]);
    assert_eq!(v["note"], ABSENCE_NOTE);
}

#[test]
fn an_invented_identifier_does_not_appear_in_the_absence() {
    let mut tools = vec![finder(vec!["a.dat"])];
    let c = call(
        "c1",
        "find_files",
        json!({"extension": ".site-XJ-7749-invented"}),
    );
    let r = result_message(&c, run_tool(&mut tools, &c)).unwrap();
    assert!(!r.content.contains("XJ-7749"), "{}", r.content);
}

#[test]
fn an_absence_cannot_be_made_without_what_or_a_checked_source() {
    // Seed 004, `absent()`: "`what` must say what was looked for" and "`checked` must name
    // at least one source"; the fields are private, so `Absence::new` is the only way in.
    assert_eq!(
        Absence::new("  ", ["the project's files".to_string()]),
        Err(AbsenceError::NoWhat)
    );
    assert_eq!(
        Absence::new("EDI files", Vec::<String>::new()),
        Err(AbsenceError::NothingChecked("EDI files".into()))
    );
    // Blank entries are no coverage either.
    assert_eq!(
        Absence::new("EDI files", [" ".to_string(), String::new()]),
        Err(AbsenceError::NothingChecked("EDI files".into()))
    );
    // A refused absence becomes an error outcome (the tool could not say what it covered).
    let refused = ToolOutcome::absent(Absence::new("", ["x".to_string()]));
    assert!(matches!(refused, ToolOutcome::Error(ref e) if e.contains("what was looked for")));
    // A typed tool suggestion needs a name.
    let a = Absence::new("EDI files", ["the project folder".to_string()]).unwrap();
    assert_eq!(
        a.clone().try_instead_tool(" ", None),
        Err(AbsenceError::UnnamedTool("EDI files".into()))
    );
}

#[test]
fn an_absence_carries_cannot_cover_and_a_typed_tool_under_its_own_key() {
    // Seed 004: `cannot_cover` beside `not_checked`; `try_instead` stays a sentence and the
    // tool is data under `try_instead_tool`, `{tool, why?}`.
    let a = Absence::new(
        "  FLOGI entries on fc1/3 ",
        [
            "switch A".to_string(),
            "switch A".to_string(),
            "switch B".to_string(),
        ],
    )
    .unwrap()
    .not_checked(["switch C".to_string()])
    .cannot_cover(["ports that were down".to_string()])
    .try_instead("  list the inventory first ")
    .try_instead_tool("cluster_inventory", Some(" it lists the collected names "))
    .unwrap();
    let v = a.to_json();
    assert_eq!(v["looked_for"], "FLOGI entries on fc1/3");
    assert_eq!(v["checked"], json!(["switch A", "switch B"]));
    assert_eq!(v["not_checked"], json!(["switch C"]));
    assert_eq!(v["cannot_cover"], json!(["ports that were down"]));
    assert_eq!(v["try_instead"], "list the inventory first");
    assert_eq!(
        v["try_instead_tool"],
        json!({"tool": "cluster_inventory", "why": "it lists the collected names"})
    );
    assert_eq!(v["note"], ABSENCE_NOTE);
    assert!(ABSENCE_NOTE.contains("cannot_cover"));
    // Without a why, the key is left out; an empty sentence is no suggestion.
    let b = Absence::new("x", ["y".to_string()])
        .unwrap()
        .try_instead(" ")
        .try_instead_tool("t", Some(""))
        .unwrap()
        .to_json();
    assert_eq!(b["try_instead_tool"], json!({"tool": "t"}));
    assert!(b.get("try_instead").is_none());
    assert!(b.get("cannot_cover").is_none());
    assert_eq!(
        a.sentence(),
        "Nothing found: FLOGI entries on fc1/3. Checked: switch A; switch B. Not checked: switch C. Cannot cover: ports that were down. Try instead: list the inventory first. Tool to try: cluster_inventory (it lists the collected names)."
    );
}

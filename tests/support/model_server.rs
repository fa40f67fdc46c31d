//! A scenario model server for tests: a loopback tiny_http server that answers the real `llm`
//! client's OpenAI-compatible `POST /v1/chat/completions` requests from a script of turns, and
//! records every request body it received so a test can assert on the prompts.
//!
//! Each turn may say which request it answers (`Turn::on("needle", …)`: the first unused turn
//! whose needle occurs in the request's last user message, or that has no needle). A request
//! no turn answers gets a 400 (not retried by the client) and is listed by
//! [`ModelServer::unanswered`], so a scenario that went another way than the test expected
//! says so instead of hanging.
//!
//! Streaming requests (`"stream": true`) are answered with real SSE frames written on the raw
//! connection, chunked, flushed per frame: optional `reasoning_content` deltas first (what
//! reasoning models send; the client must ignore them), then the content in pieces, a usage
//! frame and `[DONE]`. Non-streaming requests (the chat harness's tool calls) get one JSON
//! completion.

#![allow(dead_code)]

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hydrogeo_studio::llm::{ApiKey, Client, ModelDecider, Provider, Settings};
use serde_json::{Value, json};

/// What the server sends back for one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Text (streamed as SSE when the request streams, else one JSON completion).
    Text(String),
    /// Reasoning tokens first (`reasoning_content` deltas), then the text.
    Reasoned {
        /// The model's thinking, never part of the answer.
        reasoning: String,
        /// The answer.
        text: String,
    },
    /// Assistant tool calls: `(name, arguments)` (the chat harness).
    ToolCalls(Vec<(String, Value)>),
    /// An HTTP error status with a body.
    Status(u16, String),
}

/// One scripted answer, and which request it is for.
#[derive(Debug, Clone)]
pub struct Turn {
    /// Text that must occur in the request's last user message (`None`: any request).
    pub when: Option<String>,
    /// The answer.
    pub reply: Reply,
}

impl Turn {
    /// Answer the next request, whatever it asks.
    pub fn any(reply: Reply) -> Turn {
        Turn { when: None, reply }
    }

    /// Answer the next request whose last user message contains `needle`.
    pub fn on(needle: &str, reply: Reply) -> Turn {
        Turn {
            when: Some(needle.to_string()),
            reply,
        }
    }

    /// A decision prompt answered with `{"why", "tool"}`.
    pub fn choose(tool: &str, why: &str) -> Turn {
        Turn::on(
            DECISION,
            Reply::Text(json!({"why": why, "tool": tool}).to_string()),
        )
    }

    /// A decision prompt answered with this JSON object.
    pub fn decide(answer: Value) -> Turn {
        Turn::on(DECISION, Reply::Text(answer.to_string()))
    }

    /// A diagnosis prompt answered with this JSON object.
    pub fn diagnose(answer: Value) -> Turn {
        Turn::on(DIAGNOSIS, Reply::Text(answer.to_string()))
    }

    /// A code prompt answered with `{"purpose", "code"}`.
    pub fn code(purpose: &str, code: &str) -> Turn {
        Turn::on(
            CODE,
            Reply::Text(json!({"purpose": purpose, "code": code}).to_string()),
        )
    }
}

/// Words every decision prompt holds (`llm::prompts::decision`).
pub const DECISION: &str = "Steps that can run now";
/// Words every diagnosis prompt holds (`llm::prompts::diagnosis`).
pub const DIAGNOSIS: &str = "Say what went wrong and what, if anything, to do.";
/// Words every code prompt holds (`llm::prompts::code`).
pub const CODE: &str = "A scientist will read the code before deciding whether it runs.";

/// The running server.
pub struct ModelServer {
    /// `http://127.0.0.1:<port>/v1`.
    pub url: String,
    received: Arc<Mutex<Vec<Value>>>,
    unanswered: Arc<Mutex<Vec<String>>>,
}

/// The last user message of a request body (OpenAI or Anthropic shape).
pub fn last_user(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default()
}

impl ModelServer {
    /// Listen on a free loopback port and answer from `turns`.
    pub fn start(turns: Vec<Turn>) -> ModelServer {
        let server = tiny_http::Server::http("127.0.0.1:0").expect("a loopback port");
        let addr = server.server_addr().to_ip().expect("an IP address");
        let url = format!("http://{addr}/v1");
        let received = Arc::new(Mutex::new(Vec::new()));
        let unanswered = Arc::new(Mutex::new(Vec::new()));
        let (rec, una) = (received.clone(), unanswered.clone());
        std::thread::spawn(move || {
            let mut turns: Vec<Option<Turn>> = turns.into_iter().map(Some).collect();
            for mut req in server.incoming_requests() {
                let mut text = String::new();
                let _ = req.as_reader().read_to_string(&mut text);
                let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let prompt = last_user(&body);
                rec.lock().unwrap().push(body.clone());
                let slot = turns.iter_mut().find(|t| {
                    t.as_ref()
                        .is_some_and(|t| t.when.as_ref().is_none_or(|w| prompt.contains(w)))
                });
                let reply = match slot.and_then(Option::take) {
                    Some(t) => t.reply,
                    None => {
                        una.lock().unwrap().push(prompt.chars().take(160).collect());
                        Reply::Status(400, "the scenario has no turn for this request".into())
                    }
                };
                let stream = body["stream"].as_bool().unwrap_or(false);
                std::thread::spawn(move || respond(req, reply, stream));
            }
        });
        ModelServer {
            url,
            received,
            unanswered,
        }
    }

    /// Client settings for this server: OpenAI-compatible, streaming, one attempt (a scripted
    /// error is not retried), short timeouts, a key the tests can look for.
    pub fn settings(&self) -> Settings {
        let mut s = Settings::new(Provider::OpenAi);
        s.base_url = self.url.clone();
        s.model = "scenario-model".into();
        s.key = ApiKey::new("sk-scenario-SECRET-0123456789");
        s.read_timeout = Duration::from_secs(5);
        s.connect_timeout = Duration::from_secs(1);
        s.max_attempts = 1;
        s
    }

    /// The real decider over the real client, speaking to this server.
    pub fn decider(&self) -> ModelDecider {
        ModelDecider::new(Client::new(self.settings()).expect("a client"))
    }

    /// Every request body received, in order.
    pub fn bodies(&self) -> Vec<Value> {
        self.received.lock().unwrap().clone()
    }

    /// The last user message of every request, in order.
    pub fn prompts(&self) -> Vec<String> {
        self.bodies().iter().map(last_user).collect()
    }

    /// The prompts holding `needle`.
    pub fn prompts_with(&self, needle: &str) -> Vec<String> {
        self.prompts()
            .into_iter()
            .filter(|p| p.contains(needle))
            .collect()
    }

    /// The start of every request no turn answered.
    pub fn unanswered(&self) -> Vec<String> {
        self.unanswered.lock().unwrap().clone()
    }
}

fn respond(req: tiny_http::Request, reply: Reply, stream: bool) {
    match reply {
        Reply::Status(code, body) => {
            let _ = req.respond(tiny_http::Response::from_string(body).with_status_code(code));
        }
        Reply::ToolCalls(calls) => {
            let calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, (name, args))| {
                    json!({"id": format!("call_{i}"), "type": "function",
                           "function": {"name": name, "arguments": args.to_string()}})
                })
                .collect();
            let msg = json!({"role": "assistant", "content": null, "tool_calls": calls});
            let _ = req.respond(json_response(&completion(msg)));
        }
        Reply::Text(text) if !stream => {
            let msg = json!({"role": "assistant", "content": text});
            let _ = req.respond(json_response(&completion(msg)));
        }
        Reply::Reasoned { text, .. } if !stream => {
            let msg = json!({"role": "assistant", "content": text});
            let _ = req.respond(json_response(&completion(msg)));
        }
        Reply::Text(text) => write_sse(req, &frames("", &text)),
        Reply::Reasoned { reasoning, text } => write_sse(req, &frames(&reasoning, &text)),
    }
}

fn completion(message: Value) -> Value {
    json!({"id": "scenario", "object": "chat.completion",
           "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
           "usage": {"prompt_tokens": 100, "completion_tokens": 20}})
}

fn json_response(v: &Value) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let mut r = tiny_http::Response::from_string(v.to_string());
    if let Ok(h) = tiny_http::Header::from_bytes(&b"Content-Type"[..], &b"application/json"[..]) {
        r.add_header(h);
    }
    r
}

/// SSE frames: reasoning deltas, content deltas of 9 characters, usage, `[DONE]`.
fn frames(reasoning: &str, text: &str) -> Vec<String> {
    let piece = |s: &str, field: &str| -> Vec<String> {
        let chars: Vec<char> = s.chars().collect();
        chars
            .chunks(9)
            .map(|c| {
                let part: String = c.iter().collect();
                format!(
                    "data: {}\n\n",
                    json!({"choices": [{"index": 0, "delta": {field: part}}]})
                )
            })
            .collect()
    };
    let mut out = vec![": scenario stream\n\n".to_string()];
    out.extend(piece(reasoning, "reasoning_content"));
    out.extend(piece(text, "content"));
    out.push(format!(
        "data: {}\n\n",
        json!({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 20}})
    ));
    out.push("data: [DONE]\n\n".into());
    out
}

/// Write the frames on the raw connection, chunked and flushed one by one.
fn write_sse(req: tiny_http::Request, frames: &[String]) {
    let mut w = req.into_writer();
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    if w.write_all(head.as_bytes())
        .and_then(|_| w.flush())
        .is_err()
    {
        return;
    }
    for f in frames {
        let chunk = format!("{:x}\r\n{f}\r\n", f.len());
        if w.write_all(chunk.as_bytes())
            .and_then(|_| w.flush())
            .is_err()
        {
            return;
        }
    }
    let _ = w.write_all(b"0\r\n\r\n").and_then(|_| w.flush());
}

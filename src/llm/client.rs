//! One request to a model, over blocking HTTP (the caller is a worker thread, never the UI
//! thread): streamed when possible, retried with backoff only for transient failures (rate
//! limits, server errors), with every other failure returned as a typed error that says what
//! to do about it.

use std::io::BufReader;
use std::time::Duration;

use serde_json::{Value, json};

use super::pricing::Prices;
use super::settings::{Provider, Settings};
use super::sse::read_events;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The person (or the program speaking for them).
    User,
    /// The model.
    Assistant,
}

/// One message of a conversation (the system prompt is passed separately).
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Who.
    pub role: Role,
    /// What.
    pub content: String,
}

impl Message {
    /// A user message.
    pub fn user(text: &str) -> Message {
        Message {
            role: Role::User,
            content: text.to_string(),
        }
    }
}

/// A model's answer and what it cost.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reply {
    /// The text.
    pub text: String,
    /// Tokens sent (as the server counted them; estimated when it did not say).
    pub tokens_in: u64,
    /// Tokens received.
    pub tokens_out: u64,
    /// Estimated US dollars.
    pub cost_usd: f64,
    /// What happened on the way (retries, a server that refused streaming options).
    pub notes: Vec<String>,
}

/// Why there is no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// Nothing listens at the address, or it could not be resolved.
    #[error("cannot connect to {url}: {message}")]
    Unreachable {
        /// The endpoint.
        url: String,
        /// The system's message.
        message: String,
    },
    /// No answer started within the read timeout.
    #[error("no answer from {url} within {seconds:.0} s")]
    Timeout {
        /// The endpoint.
        url: String,
        /// The timeout.
        seconds: f64,
    },
    /// The answer started and then stopped arriving.
    #[error("the answer stalled after {received} characters (nothing more within {seconds:.0} s)")]
    Stalled {
        /// Characters received before the stall.
        received: usize,
        /// The timeout.
        seconds: f64,
    },
    /// The key was refused.
    #[error(
        "the endpoint refused the API key (HTTP {status}); set {key_env} to a valid key (or name the variable that holds it in HGX_API_KEY_ENV)"
    )]
    Auth {
        /// 401 or 403.
        status: u16,
        /// The variable the key is read from.
        key_env: String,
    },
    /// Rate limited, and still so after the retries.
    #[error("rate limited (HTTP 429) after {attempts} attempts")]
    RateLimited {
        /// Attempts made.
        attempts: u32,
    },
    /// A server error, still so after the retries.
    #[error("server error HTTP {status} after {attempts} attempts: {body}")]
    Server {
        /// The status.
        status: u16,
        /// Attempts made.
        attempts: u32,
        /// The start of the body.
        body: String,
    },
    /// The request was refused as malformed (wrong model name, …).
    #[error("the endpoint refused the request (HTTP {status}): {body}")]
    Refused {
        /// The status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The body could not be read as the protocol says.
    #[error("unreadable answer: {0}")]
    Protocol(String),
}

impl LlmError {
    fn transient(&self) -> bool {
        matches!(self, LlmError::RateLimited { .. } | LlmError::Server { .. })
    }
}

/// An HTTP client for one model configuration.
#[derive(Debug, Clone)]
pub struct Client {
    settings: Settings,
    http: reqwest::blocking::Client,
    prices: Prices,
}

/// A failed attempt and how long the server asked us to wait.
struct Attempt {
    error: LlmError,
    retry_after: Option<Duration>,
}

/// The most characters of one answer that are read; a server that streams more (a runaway
/// or hostile model) is stopped there, so neither memory nor the journal grows without bound.
pub const MAX_REPLY_CHARS: usize = 400_000;

/// How many read timeouts one request may take in all: a server that drips one chunk just
/// inside each read timeout is still cut off at this multiple.
pub const DEADLINE_READ_TIMEOUTS: u32 = 4;

/// A server's `Retry-After` (seconds) as a wait no longer than `cap`; anything unparsable,
/// negative, non-finite or huge (1e300) is bounded here, before any `Duration` is built.
fn retry_after(headers: &reqwest::header::HeaderMap, cap: Duration) -> Option<Duration> {
    let seconds = headers
        .get("retry-after")?
        .to_str()
        .ok()?
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)?;
    Some(Duration::from_secs_f64(seconds.min(cap.as_secs_f64())))
}

impl Client {
    /// The start of an error body or message, with the key removed.
    fn short(&self, body: &str) -> String {
        self.settings.key.redact(body).chars().take(300).collect()
    }

    /// A client for `settings` (with the default price table, or `HGX_PRICES`).
    pub fn new(settings: Settings) -> Result<Client, LlmError> {
        let http = reqwest::blocking::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .timeout(settings.read_timeout)
            .build()
            .map_err(|e| LlmError::Protocol(format!("cannot build the HTTP client: {e}")))?;
        Ok(Client {
            settings,
            http,
            prices: Prices::load_default(),
        })
    }

    /// Builder: a price table.
    pub fn with_prices(mut self, prices: Prices) -> Client {
        self.prices = prices;
        self
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Ask for a reply to `messages` under `system`. `on_text` receives the text so far while
    /// it streams. Transient failures are retried with backoff 1, 2, 4 s (capped; a server's
    /// Retry-After is honoured up to the cap).
    pub fn complete(
        &self,
        system: &str,
        messages: &[Message],
        max_tokens: Option<u32>,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Reply, LlmError> {
        let mut notes = Vec::new();
        let mut stream_options = true;
        let mut attempt = 1;
        loop {
            match self.once(system, messages, max_tokens, stream_options, on_text) {
                Ok(mut reply) => {
                    reply.cost_usd =
                        self.prices
                            .cost(&self.settings.model, reply.tokens_in, reply.tokens_out);
                    notes.append(&mut reply.notes);
                    reply.notes = notes;
                    return Ok(reply);
                }
                Err(Attempt {
                    error: LlmError::Refused { status: 400, body },
                    ..
                }) if stream_options && body.contains("stream_options") => {
                    stream_options = false;
                    notes.push("The server does not accept streaming usage options; asked again without them.".into());
                }
                Err(a) if a.error.transient() && attempt < self.settings.max_attempts => {
                    let backoff = self.settings.backoff_base * 2u32.pow(attempt - 1);
                    let wait = a
                        .retry_after
                        .unwrap_or(backoff)
                        .min(self.settings.backoff_cap);
                    notes.push(format!(
                        "The model endpoint answered {} on attempt {attempt}; retried after {:.0} s.",
                        a.error,
                        wait.as_secs_f64()
                    ));
                    std::thread::sleep(wait);
                    attempt += 1;
                }
                Err(a) => {
                    return Err(match a.error {
                        LlmError::RateLimited { .. } => LlmError::RateLimited { attempts: attempt },
                        LlmError::Server { status, body, .. } => LlmError::Server {
                            status,
                            attempts: attempt,
                            body,
                        },
                        other => other,
                    });
                }
            }
        }
    }

    fn url(&self) -> String {
        let base = self.settings.base_url.trim_end_matches('/');
        match self.settings.provider {
            Provider::OpenAi => format!("{base}/chat/completions"),
            Provider::Anthropic => {
                if base.ends_with("/v1") {
                    format!("{base}/messages")
                } else {
                    format!("{base}/v1/messages")
                }
            }
        }
    }

    fn body(
        &self,
        system: &str,
        messages: &[Message],
        max_tokens: Option<u32>,
        stream_options: bool,
    ) -> Value {
        let msgs: Vec<Value> = messages
            .iter()
            .map(|m| {
                json!({"role": match m.role { Role::User => "user", Role::Assistant => "assistant" }, "content": m.content})
            })
            .collect();
        let stream = self.settings.stream;
        match self.settings.provider {
            Provider::OpenAi => {
                let mut all = vec![json!({"role": "system", "content": system})];
                all.extend(msgs);
                let mut b = json!({"model": self.settings.model, "messages": all, "temperature": 0, "stream": stream});
                if let Some(n) = max_tokens {
                    b["max_tokens"] = json!(n);
                }
                if stream && stream_options {
                    b["stream_options"] = json!({"include_usage": true});
                }
                b
            }
            Provider::Anthropic => json!({
                "model": self.settings.model,
                "system": system,
                "messages": msgs,
                "max_tokens": max_tokens.unwrap_or(4096),
                "temperature": 0,
                "stream": stream,
            }),
        }
    }

    fn once(
        &self,
        system: &str,
        messages: &[Message],
        max_tokens: Option<u32>,
        stream_options: bool,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Reply, Attempt> {
        let url = self.url();
        let fail = |error: LlmError| Attempt {
            error,
            retry_after: None,
        };
        let mut req =
            self.http
                .post(&url)
                .json(&self.body(system, messages, max_tokens, stream_options));
        req = match self.settings.provider {
            Provider::OpenAi if !self.settings.key.is_empty() => {
                req.bearer_auth(self.settings.key.expose())
            }
            Provider::OpenAi => req,
            Provider::Anthropic => req
                .header("x-api-key", self.settings.key.expose())
                .header("anthropic-version", "2023-06-01"),
        };
        let seconds = self.settings.read_timeout.as_secs_f64();
        let started = std::time::Instant::now();
        let resp = req.send().map_err(|e| {
            fail(if e.is_timeout() {
                LlmError::Timeout {
                    url: url.clone(),
                    seconds,
                }
            } else if e.is_connect() {
                LlmError::Unreachable {
                    url: url.clone(),
                    message: root_cause(&e),
                }
            } else {
                LlmError::Protocol(root_cause(&e))
            })
        })?;
        let status = resp.status().as_u16();
        if status != 200 {
            let retry_after = retry_after(resp.headers(), self.settings.backoff_cap);
            let body = self.short(&resp.text().unwrap_or_default());
            let error = match status {
                401 | 403 => LlmError::Auth {
                    status,
                    key_env: self.settings.key_env.clone(),
                },
                429 => LlmError::RateLimited { attempts: 1 },
                500 | 502 | 503 | 504 | 529 => LlmError::Server {
                    status,
                    attempts: 1,
                    body,
                },
                _ => LlmError::Refused { status, body },
            };
            return Err(Attempt { error, retry_after });
        }
        let tokens_in_estimate =
            (system.len() + messages.iter().map(|m| m.content.len()).sum::<usize>()) as u64 / 4;
        if !self.settings.stream {
            let v: Value = resp
                .json()
                .map_err(|e| fail(LlmError::Protocol(e.to_string())))?;
            let (text, tin, tout) = match self.settings.provider {
                Provider::OpenAi => (
                    v["choices"][0]["message"]["content"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                    v["usage"]["prompt_tokens"].as_u64(),
                    v["usage"]["completion_tokens"].as_u64(),
                ),
                Provider::Anthropic => (
                    v["content"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|c| c["text"].as_str())
                                .collect::<String>()
                        })
                        .unwrap_or_default(),
                    v["usage"]["input_tokens"].as_u64(),
                    v["usage"]["output_tokens"].as_u64(),
                ),
            };
            let text: String = self
                .settings
                .key
                .redact(&text)
                .chars()
                .take(MAX_REPLY_CHARS)
                .collect();
            on_text(&text);
            let tout = tout.unwrap_or(text.len() as u64 / 4);
            return Ok(Reply {
                text,
                tokens_in: tin.unwrap_or(tokens_in_estimate),
                tokens_out: tout,
                ..Default::default()
            });
        }
        let mut text = String::new();
        let mut tin: Option<u64> = None;
        let mut tout: Option<u64> = None;
        let mut stream_error: Option<LlmError> = None;
        let provider = self.settings.provider;
        let key = &self.settings.key;
        let deadline_s = seconds * f64::from(DEADLINE_READ_TIMEOUTS);
        let deadline = started + self.settings.read_timeout * DEADLINE_READ_TIMEOUTS;
        let body = Deadline {
            inner: resp,
            deadline,
        };
        let read = read_events(BufReader::new(body), |ev| {
            if ev.is_done() {
                return false;
            }
            if text.len() > MAX_REPLY_CHARS {
                stream_error = Some(LlmError::Protocol(format!(
                    "the answer passed {MAX_REPLY_CHARS} characters; reading stopped there"
                )));
                return false;
            }
            let Ok(v) = serde_json::from_str::<Value>(&ev.data) else {
                return true;
            };
            match provider {
                Provider::OpenAi => {
                    if let Some(delta) = v["choices"][0]["delta"]["content"].as_str()
                        && !delta.is_empty()
                    {
                        key.push_redacted(&mut text, delta);
                        on_text(&text[..key.shown_len(&text)]);
                    }
                    if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
                        tin = u["prompt_tokens"].as_u64().or(tin);
                        tout = u["completion_tokens"].as_u64().or(tout);
                    }
                    if let Some(msg) = v["error"]["message"].as_str() {
                        stream_error = Some(LlmError::Server {
                            status: 500,
                            attempts: 1,
                            body: self.short(msg),
                        });
                        return false;
                    }
                }
                Provider::Anthropic => match v["type"].as_str() {
                    Some("message_start") => tin = v["message"]["usage"]["input_tokens"].as_u64(),
                    Some("content_block_delta") => {
                        if let Some(delta) = v["delta"]["text"].as_str() {
                            key.push_redacted(&mut text, delta);
                            on_text(&text[..key.shown_len(&text)]);
                        }
                    }
                    Some("message_delta") => tout = v["usage"]["output_tokens"].as_u64().or(tout),
                    Some("message_stop") => return false,
                    Some("error") => {
                        let kind = v["error"]["type"].as_str().unwrap_or("");
                        let msg = self.short(v["error"]["message"].as_str().unwrap_or("error"));
                        stream_error = Some(if kind == "overloaded_error" {
                            LlmError::Server {
                                status: 529,
                                attempts: 1,
                                body: msg,
                            }
                        } else {
                            LlmError::Refused {
                                status: 400,
                                body: msg,
                            }
                        });
                        return false;
                    }
                    _ => {}
                },
            }
            true
        });
        if let Some(e) = stream_error {
            return Err(fail(e));
        }
        if let Err(e) = read {
            if std::time::Instant::now() >= deadline {
                return Err(fail(LlmError::Stalled {
                    received: text.chars().count(),
                    seconds: deadline_s,
                }));
            }
            let msg = e.to_string();
            let timed_out = msg.contains("timed out")
                || msg.contains("decoding")
                || e.kind() == std::io::ErrorKind::TimedOut;
            return Err(fail(if text.is_empty() && timed_out {
                LlmError::Timeout { url, seconds }
            } else if timed_out {
                LlmError::Stalled {
                    received: text.chars().count(),
                    seconds,
                }
            } else {
                LlmError::Protocol(format!(
                    "the stream broke after {} characters: {msg}",
                    text.chars().count()
                ))
            }));
        }
        let tout = tout.unwrap_or(text.len() as u64 / 4);
        Ok(Reply {
            text,
            tokens_in: tin.unwrap_or(tokens_in_estimate),
            tokens_out: tout,
            ..Default::default()
        })
    }
}

impl Client {
    /// Post a JSON body (not streamed) and return the JSON answer, retrying transient failures
    /// as [`Client::complete`] does.
    pub fn post_json(&self, body: &Value) -> Result<Value, LlmError> {
        let url = self.url();
        let mut attempt = 1;
        loop {
            let mut req = self.http.post(&url).json(body);
            req = match self.settings.provider {
                Provider::OpenAi if !self.settings.key.is_empty() => {
                    req.bearer_auth(self.settings.key.expose())
                }
                Provider::OpenAi => req,
                Provider::Anthropic => req
                    .header("x-api-key", self.settings.key.expose())
                    .header("anthropic-version", "2023-06-01"),
            };
            let seconds = self.settings.read_timeout.as_secs_f64();
            let resp = req.send().map_err(|e| {
                if e.is_timeout() {
                    LlmError::Timeout {
                        url: url.clone(),
                        seconds,
                    }
                } else if e.is_connect() {
                    LlmError::Unreachable {
                        url: url.clone(),
                        message: root_cause(&e),
                    }
                } else {
                    LlmError::Protocol(root_cause(&e))
                }
            })?;
            let status = resp.status().as_u16();
            if status == 200 {
                let text = resp.text().map_err(|e| LlmError::Protocol(e.to_string()))?;
                return serde_json::from_str::<Value>(&self.settings.key.redact(&text))
                    .map_err(|e| LlmError::Protocol(e.to_string()));
            }
            let retry_after = retry_after(resp.headers(), self.settings.backoff_cap);
            let text = self.short(&resp.text().unwrap_or_default());
            let error = match status {
                401 | 403 => LlmError::Auth {
                    status,
                    key_env: self.settings.key_env.clone(),
                },
                429 => LlmError::RateLimited { attempts: attempt },
                500 | 502 | 503 | 504 | 529 => LlmError::Server {
                    status,
                    attempts: attempt,
                    body: text,
                },
                _ => LlmError::Refused { status, body: text },
            };
            if error.transient() && attempt < self.settings.max_attempts {
                let wait = retry_after
                    .unwrap_or(self.settings.backoff_base * 2u32.pow(attempt - 1))
                    .min(self.settings.backoff_cap);
                std::thread::sleep(wait);
                attempt += 1;
                continue;
            }
            return Err(error);
        }
    }

    /// The price of a call to this model.
    pub fn cost(&self, tokens_in: u64, tokens_out: u64) -> f64 {
        self.prices
            .cost(&self.settings.model, tokens_in, tokens_out)
    }
}

/// A body reader that fails with `TimedOut` once the request's overall deadline has passed,
/// however the bytes trickle in.
struct Deadline<R> {
    inner: R,
    deadline: std::time::Instant,
}

impl<R: std::io::Read> std::io::Read for Deadline<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if std::time::Instant::now() >= self.deadline {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the request's overall deadline passed",
            ));
        }
        self.inner.read(buf)
    }
}

/// The innermost cause of an error, which is where the useful words are.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur: &dyn std::error::Error = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

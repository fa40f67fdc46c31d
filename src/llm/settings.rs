//! Which model a run talks to, and with which key — from the environment (CLI and studio
//! alike) or the settings dialog. The key itself is held only here, in memory: it is never
//! serialised, never logged, never written to a run folder, and never passed to a script.

use std::time::Duration;

/// The two wire protocols spoken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// OpenAI chat completions and every server that speaks it (Ollama, vLLM, llama.cpp
    /// server, LM Studio, OpenRouter, DeepSeek).
    OpenAi,
    /// The Anthropic Messages API.
    Anthropic,
}

impl Provider {
    /// `openai` or `anthropic`.
    pub fn word(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
        }
    }

    /// Parse `openai` / `anthropic` (and a few spellings users write).
    pub fn parse(text: &str) -> Option<Provider> {
        match text.trim().to_lowercase().as_str() {
            "openai" | "openai-compatible" | "ollama" | "vllm" | "llamacpp" | "llama.cpp"
            | "lmstudio" | "openrouter" | "deepseek" => Some(Provider::OpenAi),
            "anthropic" | "claude" => Some(Provider::Anthropic),
            _ => None,
        }
    }

    /// The official endpoint.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::OpenAi => "https://api.openai.com/v1",
            Provider::Anthropic => "https://api.anthropic.com",
        }
    }

    /// The variable that usually holds the key.
    pub fn default_key_env(self) -> &'static str {
        match self {
            Provider::OpenAi => "OPENAI_API_KEY",
            Provider::Anthropic => "ANTHROPIC_API_KEY",
        }
    }

    /// A model to use when none is named.
    pub fn default_model(self) -> &'static str {
        match self {
            Provider::OpenAi => "gpt-4o-mini",
            Provider::Anthropic => "claude-3-5-haiku-latest",
        }
    }
}

/// An API key. Its `Debug` never shows it, and it cannot be serialised.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct ApiKey(String);

/// What stands where a key was removed from text.
pub const REDACTED: &str = "[API key removed]";

/// The longest read timeout accepted from `HGX_TIMEOUT_S` (an hour).
pub const MAX_TIMEOUT_S: f64 = 3600.0;

impl ApiKey {
    /// Wrap a key (trimmed).
    pub fn new(key: &str) -> ApiKey {
        ApiKey(key.trim().to_string())
    }

    /// The key, for the one header that needs it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by [`REDACTED`]: an endpoint that
    /// echoes the key in an error body, or a model that repeats it, must not put it into a
    /// report, a journal, the terminal or a later prompt. Keys shorter than 8 characters are
    /// not searched for (they would match ordinary words; no provider issues such keys).
    pub fn redact(&self, text: &str) -> String {
        if self.0.len() < 8 || !text.contains(self.0.as_str()) {
            return text.to_string();
        }
        text.replace(self.0.as_str(), REDACTED)
    }

    /// How much of a streamed `text` (already redacted) may be shown now: all of it, except a
    /// tail that could be the start of the key still arriving — so not even a prefix of the
    /// key reaches the screen or the journal's thought events.
    pub fn shown_len(&self, text: &str) -> usize {
        if self.0.len() < 8 {
            return text.len();
        }
        (1..self.0.len())
            .rev()
            .find(|&k| self.0.is_char_boundary(k) && text.ends_with(&self.0[..k]))
            .map_or(text.len(), |k| text.len() - k)
    }

    /// Append `delta` to `text` (which is already redacted), redacting a key that ends in the
    /// new part; only the tail where such a key can lie is searched, so a long stream stays
    /// linear.
    pub fn push_redacted(&self, text: &mut String, delta: &str) {
        let tail_from = text.len().saturating_sub(self.0.len());
        text.push_str(delta);
        if self.0.len() < 8 {
            return;
        }
        let tail_from = (0..=tail_from)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        if text[tail_from..].contains(self.0.as_str()) {
            *text = text.replace(self.0.as_str(), REDACTED);
        }
    }

    /// Whether there is one.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            f.write_str("ApiKey(none)")
        } else {
            f.write_str("ApiKey(hidden)")
        }
    }
}

/// Where the key came from (said in `models` and the settings dialog, never the key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// The named environment variable.
    Env(String),
    /// Typed into the settings dialog for this session.
    Typed,
    /// No key.
    None,
}

/// Model settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The wire protocol.
    pub provider: Provider,
    /// The endpoint (`…/v1` for OpenAI-compatible servers).
    pub base_url: String,
    /// The model name.
    pub model: String,
    /// The variable the key is read from.
    pub key_env: String,
    /// The key (held in memory only).
    pub key: ApiKey,
    /// Where the key came from.
    pub key_source: KeySource,
    /// The longest wait for the next bytes of an answer (time to first token included).
    pub read_timeout: Duration,
    /// The longest wait to connect.
    pub connect_timeout: Duration,
    /// Backoff before the first retry of a transient failure; doubles, capped.
    pub backoff_base: Duration,
    /// The longest single backoff (also caps a server's Retry-After).
    pub backoff_cap: Duration,
    /// Attempts in all for a transient failure (1 + retries).
    pub max_attempts: u32,
    /// Whether to stream (reasoning shown as it arrives).
    pub stream: bool,
    /// Configuration values that were refused (an unknown provider, a timeout out of range);
    /// while any is here no model is used and [`Settings::why_no_model`] says why.
    pub problems: Vec<String>,
}

/// Whether `url` points at this machine (a local server needs no key).
pub fn is_local(url: &str) -> bool {
    let rest = url.split("://").nth(1).unwrap_or(url);
    let host = rest.split(['/', ':']).next().unwrap_or("");
    matches!(
        host,
        "localhost" | "127.0.0.1" | "::1" | "[::1]" | "0.0.0.0"
    )
}

impl Settings {
    /// Settings for a provider with its defaults and no key.
    pub fn new(provider: Provider) -> Settings {
        Settings {
            provider,
            base_url: provider.default_base_url().to_string(),
            model: provider.default_model().to_string(),
            key_env: provider.default_key_env().to_string(),
            key: ApiKey::default(),
            key_source: KeySource::None,
            read_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            backoff_base: Duration::from_secs(1),
            backoff_cap: Duration::from_secs(8),
            max_attempts: 4,
            stream: true,
            problems: Vec::new(),
        }
    }

    /// From `HGX_PROVIDER` (openai | anthropic), `HGX_BASE_URL`, `HGX_MODEL`,
    /// `HGX_API_KEY_ENV` (the name of the variable that holds the key), `HGX_TIMEOUT_S`.
    /// Without `HGX_PROVIDER`: Anthropic when only `ANTHROPIC_API_KEY` is set, else OpenAI.
    pub fn from_env() -> Settings {
        Settings::from_lookup(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
    }

    /// As [`Settings::from_env`], reading variables through `get` (tests pass a map).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Settings {
        let mut problems = Vec::new();
        let named = get("HGX_PROVIDER").and_then(|p| match Provider::parse(&p) {
            Some(provider) => Some(provider),
            None => {
                problems.push(format!(
                    "HGX_PROVIDER is {:?}; expected openai or anthropic",
                    p.trim()
                ));
                None
            }
        });
        let provider = named.unwrap_or_else(|| {
            if get("OPENAI_API_KEY").is_none() && get("ANTHROPIC_API_KEY").is_some() {
                Provider::Anthropic
            } else {
                Provider::OpenAi
            }
        });
        let mut s = Settings::new(provider);
        s.problems = problems;
        if let Some(url) = get("HGX_BASE_URL") {
            s.base_url = url.trim().trim_end_matches('/').to_string();
        }
        if let Some(m) = get("HGX_MODEL") {
            s.model = m.trim().to_string();
        }
        if let Some(var) = get("HGX_API_KEY_ENV") {
            s.key_env = var.trim().to_string();
        }
        if let Some(t) = get("HGX_TIMEOUT_S") {
            match t.trim().parse::<f64>() {
                Ok(seconds) if seconds > 0.0 && seconds <= MAX_TIMEOUT_S => {
                    s.read_timeout = Duration::from_secs_f64(seconds);
                }
                _ => s.problems.push(format!(
                    "HGX_TIMEOUT_S is {:?}; expected a number of seconds above 0 and at most {MAX_TIMEOUT_S}",
                    t.trim()
                )),
            }
        }
        if let Some(k) = get(&s.key_env) {
            s.key = ApiKey::new(&k);
            s.key_source = KeySource::Env(s.key_env.clone());
        }
        s
    }

    /// Use a key typed into the settings dialog (kept in memory only).
    pub fn with_typed_key(mut self, key: &str) -> Settings {
        self.key = ApiKey::new(key);
        self.key_source = if self.key.is_empty() {
            KeySource::None
        } else {
            KeySource::Typed
        };
        self
    }

    /// Why no model will be used, or `None` when one will: no key and not a local server.
    pub fn why_no_model(&self) -> Option<String> {
        if !self.problems.is_empty() {
            return Some(self.problems.join("; "));
        }
        if self.model.trim().is_empty() {
            return Some("no model name is set (HGX_MODEL)".into());
        }
        if self.key.is_empty() && !is_local(&self.base_url) {
            return Some(format!(
                "no API key: set {} (or name another variable in HGX_API_KEY_ENV), or point HGX_BASE_URL at a local server such as Ollama (http://localhost:11434/v1)",
                self.key_env
            ));
        }
        None
    }

    /// `openai · gpt-4o-mini` — for the status bar, the timeline and the report.
    pub fn label(&self) -> String {
        format!("{} · {}", self.provider.word(), self.model)
    }

    /// What is configured, in lines (never the key).
    pub fn describe_configuration(&self) -> String {
        let key = match &self.key_source {
            KeySource::Env(v) => format!("from ${v}"),
            KeySource::Typed => "typed for this session".into(),
            KeySource::None if is_local(&self.base_url) => {
                "none (a local server needs none)".into()
            }
            KeySource::None => format!("none (${} is not set)", self.key_env),
        };
        format!(
            "provider: {}\nbase URL: {}\nmodel:    {}\nkey:      {key}",
            self.provider.word(),
            self.base_url,
            self.model
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn environment_settings_and_the_named_key_variable() {
        let s = Settings::from_lookup(env(&[
            ("HGX_PROVIDER", "openai"),
            ("HGX_BASE_URL", "https://openrouter.ai/api/v1/"),
            ("HGX_MODEL", "deepseek/deepseek-chat"),
            ("HGX_API_KEY_ENV", "OPENROUTER_KEY"),
            ("OPENROUTER_KEY", "sk-secret"),
        ]));
        assert_eq!(s.base_url, "https://openrouter.ai/api/v1");
        assert_eq!(s.key.expose(), "sk-secret");
        assert_eq!(s.key_source, KeySource::Env("OPENROUTER_KEY".into()));
        assert!(s.why_no_model().is_none());
        assert!(!format!("{s:?}").contains("sk-secret"));
        assert!(!s.describe_configuration().contains("sk-secret"));
    }

    /// Issue 19: `HGX_TIMEOUT_S=inf` used to panic at start and `HGX_PROVIDER=bogus` was
    /// silently OpenAI; both are now refused, named, and no model is used.
    #[test]
    fn an_unknown_provider_or_an_unbounded_timeout_is_refused_by_name() {
        let key = ("OPENAI_API_KEY", "sk-secret-0123456789");
        for (var, value) in [
            ("HGX_TIMEOUT_S", "inf"),
            ("HGX_TIMEOUT_S", "1e300"),
            ("HGX_TIMEOUT_S", "-3"),
            ("HGX_TIMEOUT_S", "NaN"),
            ("HGX_PROVIDER", "bogus"),
        ] {
            let s = Settings::from_lookup(env(&[(var, value), key]));
            let why = s.why_no_model().unwrap_or_default();
            assert!(
                why.contains(var) && why.contains(value),
                "{var}={value}: {why}"
            );
        }
        let fine = Settings::from_lookup(env(&[("HGX_TIMEOUT_S", "90"), key]));
        assert_eq!(fine.read_timeout, Duration::from_secs(90));
        assert!(fine.why_no_model().is_none());
    }

    #[test]
    fn redaction_finds_a_key_split_across_stream_pieces() {
        let key = ApiKey::new("sk-abcdefgh-123");
        let mut text = String::new();
        for piece in [
            "é my ",
            "sk-abc",
            "defgh",
            "-123 ",
            "and ",
            "sk-abcdefgh-123",
        ] {
            key.push_redacted(&mut text, piece);
        }
        assert_eq!(text, format!("é my {REDACTED} and {REDACTED}"));
        let partial = "é my sk-abcde";
        assert_eq!(&partial[..key.shown_len(partial)], "é my ");
        assert_eq!(key.shown_len("sk-abx"), "sk-abx".len());
        assert_eq!(key.redact("no key here"), "no key here");
        assert_eq!(ApiKey::new("short").redact("short"), "short");
    }

    #[test]
    fn no_key_and_no_local_server_is_no_model_with_the_variable_named() {
        let s = Settings::from_lookup(env(&[]));
        assert!(s.why_no_model().unwrap().contains("OPENAI_API_KEY"));
        let local = Settings::from_lookup(env(&[
            ("HGX_BASE_URL", "http://localhost:11434/v1"),
            ("HGX_MODEL", "llama3.1"),
        ]));
        assert!(local.why_no_model().is_none());
        let a = Settings::from_lookup(env(&[("ANTHROPIC_API_KEY", "k")]));
        assert_eq!(a.provider, Provider::Anthropic);
    }
}

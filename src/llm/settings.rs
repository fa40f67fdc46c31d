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

impl ApiKey {
    /// Wrap a key (trimmed).
    pub fn new(key: &str) -> ApiKey {
        ApiKey(key.trim().to_string())
    }

    /// The key, for the one header that needs it.
    pub fn expose(&self) -> &str {
        &self.0
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
        let provider = get("HGX_PROVIDER")
            .and_then(|p| Provider::parse(&p))
            .unwrap_or_else(|| {
                if get("OPENAI_API_KEY").is_none() && get("ANTHROPIC_API_KEY").is_some() {
                    Provider::Anthropic
                } else {
                    Provider::OpenAi
                }
            });
        let mut s = Settings::new(provider);
        if let Some(url) = get("HGX_BASE_URL") {
            s.base_url = url.trim().trim_end_matches('/').to_string();
        }
        if let Some(m) = get("HGX_MODEL") {
            s.model = m.trim().to_string();
        }
        if let Some(var) = get("HGX_API_KEY_ENV") {
            s.key_env = var.trim().to_string();
        }
        if let Some(t) = get("HGX_TIMEOUT_S").and_then(|t| t.trim().parse::<f64>().ok())
            && t > 0.0
        {
            s.read_timeout = Duration::from_secs_f64(t);
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

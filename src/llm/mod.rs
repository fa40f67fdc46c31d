//! Model access over HTTP (reqwest, blocking — always on a worker thread): OpenAI-compatible
//! chat completions (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio, OpenRouter, DeepSeek)
//! and the Anthropic Messages API; streaming with proper SSE parsing; retries for transient
//! failures only; usage and cost; JSON extraction; the prompts; the controller's decider.
//! Knows nothing of egui or of geophysics.

pub mod chat_model;
pub mod client;
pub mod decider;
pub mod harness;
pub mod json;
pub mod pricing;
pub mod prompts;
pub mod settings;
pub mod sse;

pub use client::{Client, LlmError, Message, Reply};
pub use decider::ModelDecider;
pub use settings::{ApiKey, KeySource, Provider, Settings};

impl Settings {
    /// A decider for these settings, or `None` when no model can be used
    /// ([`Settings::why_no_model`] says why).
    pub fn decider(&self) -> Option<Box<ModelDecider>> {
        if self.why_no_model().is_some() {
            return None;
        }
        Client::new(self.clone())
            .ok()
            .map(|c| Box::new(ModelDecider::new(c)))
    }

    /// Send a one-word request and return the answer, so a user can see whether and why the
    /// model is not used.
    pub fn check(&self) -> Result<String, String> {
        if let Some(why) = self.why_no_model() {
            return Err(why);
        }
        let mut s = self.clone();
        s.max_attempts = 1;
        let client = Client::new(s).map_err(|e| e.to_string())?;
        client
            .complete(
                prompts::CONTROLLER_SYSTEM,
                &[Message::user(prompts::PING)],
                Some(5),
                &mut |_| {},
            )
            .map(|r| {
                format!(
                    "\"{}\" ({} tokens in, {} out)",
                    r.text.trim(),
                    r.tokens_in,
                    r.tokens_out
                )
            })
            .map_err(|e| e.to_string())
    }
}

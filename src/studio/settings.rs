//! The settings window: provider, base URL, model, which environment variable holds the key
//! (or a key typed for this session only), flexible mode, approve each step, bring each module
//! to the front. Persisted with eframe's storage — everything except the key.

use serde::{Deserialize, Serialize};

use crate::llm::{Provider, Settings};

/// What is persisted (never the key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StudioSettings {
    /// `openai` or `anthropic`.
    pub provider: String,
    /// Endpoint.
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// The variable holding the key.
    pub key_env: String,
    /// Let the model propose off-route steps (with the user's agreement).
    pub flexible: bool,
    /// Ask before every step (the same as Step by step).
    pub approve_each_step: bool,
    /// Show each step's module while it runs.
    pub bring_to_front: bool,
}

impl Default for StudioSettings {
    fn default() -> Self {
        let env = Settings::from_env();
        StudioSettings {
            provider: env.provider.word().into(),
            base_url: env.base_url,
            model: env.model,
            key_env: env.key_env,
            flexible: false,
            approve_each_step: false,
            bring_to_front: false,
        }
    }
}

/// The eframe storage key.
pub const STORAGE_KEY: &str = "hydrogeo_studio_settings";

impl StudioSettings {
    /// The model settings these describe, with `typed_key` (memory only) taking precedence
    /// over the environment variable.
    pub fn model_settings(&self, typed_key: &str) -> Settings {
        let provider = Provider::parse(&self.provider).unwrap_or(Provider::OpenAi);
        let lookup = |k: &str| -> Option<String> {
            match k {
                "HGX_PROVIDER" => Some(provider.word().to_string()),
                "HGX_BASE_URL" => Some(self.base_url.clone()),
                "HGX_MODEL" => Some(self.model.clone()),
                "HGX_API_KEY_ENV" => Some(self.key_env.clone()),
                other => std::env::var(other).ok().filter(|v| !v.trim().is_empty()),
            }
        };
        let s = Settings::from_lookup(lookup);
        if typed_key.trim().is_empty() {
            s
        } else {
            s.with_typed_key(typed_key)
        }
    }
}

/// The settings window's state: the persisted settings and the session-only key.
#[derive(Debug, Default)]
pub struct SettingsWindow {
    /// Whether it is open.
    pub open: bool,
    /// A key typed for this session (memory only; never persisted, never logged).
    pub typed_key: String,
    /// The result of the last "Test connection" press.
    pub check: Option<String>,
    /// A connection test going on (its answer arrives here).
    checking: Option<crossbeam_channel::Receiver<String>>,
}

impl SettingsWindow {
    /// Draw the window (when open).
    pub fn ui(&mut self, ctx: &egui::Context, s: &mut StudioSettings) {
        let mut open = self.open;
        egui::Window::new("Settings").open(&mut open).resizable(false).show(ctx, |ui| {
            egui::Grid::new("settings_grid").num_columns(2).show(ui, |ui| {
                let l = ui.label("Provider");
                egui::ComboBox::from_id_salt("provider_combo")
                    .selected_text(s.provider.clone())
                    .show_ui(ui, |ui| {
                        ui.selectable_value(&mut s.provider, "openai".to_string(), "openai (and compatible servers)");
                        ui.selectable_value(&mut s.provider, "anthropic".to_string(), "anthropic");
                    })
                    .response
                    .labelled_by(l.id);
                ui.end_row();
                let l = ui.label("Base URL");
                ui.text_edit_singleline(&mut s.base_url)
                    .labelled_by(l.id)
                    .on_hover_text("https://api.openai.com/v1, http://localhost:11434/v1 (Ollama), a vLLM / llama.cpp / LM Studio server, OpenRouter, DeepSeek…");
                ui.end_row();
                let l = ui.label("Model");
                ui.text_edit_singleline(&mut s.model).labelled_by(l.id);
                ui.end_row();
                let l = ui.label("Key variable");
                ui.text_edit_singleline(&mut s.key_env)
                    .labelled_by(l.id)
                    .on_hover_text("The environment variable that holds the API key. A local server needs none.");
                ui.end_row();
                let l = ui.label("Key for this session");
                ui.add(egui::TextEdit::singleline(&mut self.typed_key).password(true))
                    .labelled_by(l.id)
                    .on_hover_text("Kept in memory only: never saved, never written to a run folder.");
                ui.end_row();
            });
            ui.checkbox(&mut s.flexible, "Flexible mode (the model may propose steps off the route; you approve each)");
            ui.checkbox(&mut s.approve_each_step, "Approve each step");
            ui.checkbox(&mut s.bring_to_front, "Bring each module to the front as it runs");
            let ms = s.model_settings(&self.typed_key);
            ui.separator();
            ui.monospace(ms.describe_configuration());
            if let Some(why) = ms.why_no_model() {
                ui.colored_label(egui::Color32::from_rgb(200, 140, 0), format!("No model will be used: {why}."));
            }
            self.test_connection_ui(ui, &ms);
        });
        self.open = open;
    }

    /// The "Test connection" button: the same check as `hydrogeo-studio models` (one short
    /// request to the endpoint), made off the UI thread; its answer is shown below it.
    fn test_connection_ui(&mut self, ui: &mut egui::Ui, ms: &crate::llm::Settings) {
        if let Some(rx) = &self.checking
            && let Ok(answer) = rx.try_recv()
        {
            self.check = Some(answer);
            self.checking = None;
        }
        ui.horizontal(|ui| {
            let busy = self.checking.is_some();
            if ui
                .add_enabled(!busy, egui::Button::new("Test connection"))
                .on_hover_text("Send one short request to the endpoint with these settings, as `hydrogeo-studio models` does.")
                .clicked()
            {
                let (tx, rx) = crossbeam_channel::bounded(1);
                let (ms, wake) = (ms.clone(), ui.ctx().clone());
                std::thread::spawn(move || {
                    let answer = match ms.check() {
                        Ok(a) => format!("The endpoint answered: {a}"),
                        Err(why) => format!("No model will be used: {why}"),
                    };
                    let _ = tx.send(crate::runtime::untrusted::visible(&answer));
                    wake.request_repaint();
                });
                self.checking = Some(rx);
                self.check = None;
            }
            if busy {
                ui.spinner();
                ui.label("Testing the connection…");
            }
        });
        if let Some(c) = &self.check {
            ui.label(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_persisted_settings_never_hold_a_key() {
        let s = StudioSettings {
            provider: "openai".into(),
            base_url: "http://localhost:11434/v1".into(),
            model: "llama3.1".into(),
            key_env: "OPENAI_API_KEY".into(),
            ..Default::default()
        };
        let ms = s.model_settings("sk-typed-secret");
        assert_eq!(ms.key.expose(), "sk-typed-secret");
        let json = serde_json::to_string(&s).unwrap();
        assert!(!json.contains("sk-typed-secret"));
    }
}

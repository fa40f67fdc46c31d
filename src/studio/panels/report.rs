//! The report panel: the run's status and reasons, the report's text, and a button to open the
//! self-contained HTML in a browser.

use serde_json::{Value, json};

use super::{Panel, Shared};

/// The report panel.
#[derive(Debug, Default)]
pub struct ReportPanel {
    cached: Option<(std::path::PathBuf, String)>,
}

impl ReportPanel {
    fn report_path(shared: &Shared) -> Option<std::path::PathBuf> {
        let dir = shared.run_dir.as_ref()?;
        let p = dir.join("report.md");
        p.exists().then_some(p)
    }
}

impl Panel for ReportPanel {
    fn key(&self) -> &'static str {
        "report"
    }

    fn title(&self) -> &'static str {
        "Report"
    }

    fn ui(&mut self, ui: &mut egui::Ui, shared: &mut Shared) {
        ui.heading("Report");
        if let Some(f) = &shared.timeline.finish {
            ui.label(format!("Run {} ({})", f.status, f.ended));
            for r in &f.reasons {
                ui.label(format!("• {r}"));
            }
        }
        let Some(path) = Self::report_path(shared) else {
            ui.label("No report yet. A run writes one as its last step: press Auto to report or Step by step.");
            return;
        };
        let html = path.with_extension("html");
        ui.horizontal(|ui| {
            ui.monospace(path.display().to_string());
            if html.exists() && ui.button("Open the HTML report").clicked() {
                ui.ctx()
                    .open_url(egui::OpenUrl::new_tab(format!("file://{}", html.display())));
            }
        });
        if self.cached.as_ref().is_none_or(|(p, _)| *p != path) {
            self.cached = std::fs::read_to_string(&path)
                .ok()
                .map(|t| (path.clone(), t));
        }
        if let Some((_, text)) = &self.cached {
            egui::ScrollArea::vertical()
                .id_salt("report_text")
                .show(ui, |ui| {
                    ui.label(text.as_str());
                });
        }
    }

    fn describe(&self, shared: &Shared) -> Value {
        json!({
            "module": "report",
            "state": {
                "report": Self::report_path(shared).map(|p| p.display().to_string()),
                "status": shared.timeline.finish.as_ref().map(|f| f.status.clone()),
            },
            "actions": [{"name": "read_report", "args": {}, "desc": "The report's Markdown text."}],
        })
    }

    fn apply(
        &mut self,
        action: &str,
        _args: &Value,
        shared: &mut Shared,
        _window: &egui::Context,
    ) -> Result<Value, String> {
        match action {
            "read_report" => {
                let path = Self::report_path(shared)
                    .ok_or("no report has been written in this session")?;
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                Ok(json!({"path": path.display().to_string(), "markdown": text}))
            }
            other => Err(format!(
                "no action '{other}' on the report panel; its actions are: read_report"
            )),
        }
    }
}

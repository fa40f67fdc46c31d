//! The report panel: the run's status and reasons, the report drawn as a document (headings,
//! tables, figures; its Markdown source on request), and a button to open the
//! self-contained HTML in a browser.

use serde_json::{Value, json};

use super::{Panel, Shared};

/// The report panel.
#[derive(Debug, Default)]
pub struct ReportPanel {
    /// The report's text, with the path and modification time it was read at: the run's end
    /// rewrites the report written by its step with the final status, so a changed file is
    /// read again.
    cached: Option<(std::path::PathBuf, Option<std::time::SystemTime>, String)>,
    /// The report's figures as textures.
    images: crate::studio::images::ImageCache,
    /// Show the Markdown source instead of the rendered document.
    source: bool,
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
        let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
        if self
            .cached
            .as_ref()
            .is_none_or(|(p, m, _)| *p != path || *m != modified)
        {
            self.cached = std::fs::read_to_string(&path)
                .ok()
                .map(|t| (path.clone(), modified, t));
        }
        ui.checkbox(&mut self.source, "Show the Markdown source");
        if let Some((_, _, text)) = &self.cached {
            let base = path
                .parent()
                .map(std::path::Path::to_path_buf)
                .unwrap_or_default();
            let (source, images) = (self.source, &mut self.images);
            egui::ScrollArea::vertical()
                .id_salt("report_text")
                .auto_shrink([false, false])
                .show(ui, |ui| {
                    if source {
                        ui.label(egui::RichText::new(text.as_str()).monospace());
                    } else {
                        crate::studio::markdown::markdown_ui(ui, text, &base, images);
                    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;

    #[test]
    fn the_report_is_drawn_as_a_document_not_as_markdown() {
        // Issue 24, item 5: headings, tables and emphasis are drawn, not shown as `##` and
        // `|`; the source is one tick away.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("report.md"),
            "# Survey report\n\n## Answers\n\nThe water table lies at **4.1 m** below ground.\n\n| Item | Value |\n|---|---|\n| Run status | success |\n\n- first finding\n- second finding\n\n![Water table along the line](figures/missing.png)\n",
        )
        .unwrap();
        let shared = Shared {
            run_dir: Some(dir.path().to_path_buf()),
            ..Shared::default()
        };
        let mut h = Harness::builder()
            .with_size(egui::vec2(900.0, 800.0))
            .with_context_setup(crate::studio::setup_fonts)
            .build_ui_state(
                |ui, s: &mut (ReportPanel, Shared)| s.0.ui(ui, &mut s.1),
                (ReportPanel::default(), shared),
            );
        h.run();
        h.get_by_label("Answers");
        h.get_by_label("Run status");
        h.get_by_label("success");
        h.get_by_label("• first finding");
        h.get_by_label("The water table lies at 4.1 m below ground.");
        h.get_by_label("[figure: Water table along the line]");
        assert!(h.query_by_label_contains("## Answers").is_none());
        assert!(h.query_by_label_contains("| Run status").is_none());
        h.get_by_label("Show the Markdown source").click();
        h.run();
        h.get_by_label_contains("## Answers");
    }
}

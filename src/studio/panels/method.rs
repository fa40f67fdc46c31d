//! What every method panel shares: the method's inputs in the project, the products the run
//! made for it (each described, its numbers inspectable), and the figures its steps drew. A
//! panel with nothing loaded says what to do.

use serde_json::{Value, json};

use super::Shared;
use crate::studio::images::ImageCache;

/// The static description of one method's panel: its row of the catalog's `METHODS`.
pub use crate::catalog::kit::MethodInfo as MethodSpec;

/// The shared part of a method panel.
#[derive(Debug, Default)]
pub struct MethodView {
    images: ImageCache,
    selected: Option<String>,
}

impl MethodView {
    /// The inputs this method has in the project: (role, path, exists).
    pub fn inputs(spec: &MethodSpec, shared: &Shared) -> Vec<(String, String, bool)> {
        let Some(p) = &shared.project else {
            return Vec::new();
        };
        let ctx = p.context();
        spec.roles
            .iter()
            .flat_map(|r| {
                ctx.input_paths(r)
                    .into_iter()
                    .map(|path| (r.to_string(), path.display().to_string(), path.exists()))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Draw the inputs, products and figures.
    pub fn ui(&mut self, ui: &mut egui::Ui, spec: &MethodSpec, shared: &mut Shared) {
        ui.heading(spec.title);
        let inputs = Self::inputs(spec, shared);
        if inputs.is_empty() {
            ui.label(format!(
                "No {} data in this project. Add files with File → Add data files…, or name them in project.json under inputs ({}). Readable formats: {}.",
                spec.title,
                spec.roles.join(", "),
                spec.formats
            ));
        } else {
            ui.label("Data:");
            for (role, path, exists) in &inputs {
                if *exists {
                    ui.monospace(format!("{role}: {path}"));
                } else {
                    ui.colored_label(
                        egui::Color32::from_rgb(190, 60, 40),
                        format!("{role}: {path} (missing)"),
                    );
                }
            }
        }
        ui.separator();
        let present: Vec<String> = spec
            .products
            .iter()
            .filter(|k| shared.shelf.get(k).is_some())
            .map(|k| k.to_string())
            .collect();
        if present.is_empty() && !inputs.is_empty() {
            ui.label(
                "Nothing computed yet: press Auto to report or Step by step, or ask in the chat.",
            );
        }
        for key in &present {
            if let Some(p) = shared.shelf.get(key) {
                let open = self.selected.as_deref() == Some(key.as_str());
                if ui
                    .selectable_label(open, format!("{key}: {}", p.describe()))
                    .clicked()
                {
                    self.selected = if open { None } else { Some(key.clone()) };
                }
                if open {
                    ui.monospace(p.inspect());
                }
            }
        }
        let figures: Vec<(std::path::PathBuf, String)> = shared
            .timeline
            .cards
            .iter()
            .filter(|c| c.module == spec.panel)
            .flat_map(|c| {
                c.figures
                    .iter()
                    .map(|f| (f.path.clone(), f.caption.clone()))
            })
            .collect();
        if !figures.is_empty() {
            ui.separator();
            egui::ScrollArea::vertical()
                .id_salt(("figures", spec.panel))
                .show(ui, |ui| {
                    let w = ui.available_width().min(900.0);
                    for (path, caption) in figures {
                        self.images
                            .show(ui, &path, &caption, egui::vec2(w, w * 0.6));
                        ui.small(caption);
                    }
                });
        }
    }

    /// The panel's state for the chat.
    pub fn describe(spec: &MethodSpec, shared: &Shared) -> Value {
        let inputs: Vec<Value> = Self::inputs(spec, shared)
            .into_iter()
            .map(|(r, p, e)| json!({"role": r, "path": p, "exists": e}))
            .collect();
        let products: Vec<Value> = spec
            .products
            .iter()
            .filter_map(|k| {
                shared
                    .shelf
                    .get(k)
                    .map(|p| json!({"key": k, "description": p.describe()}))
            })
            .collect();
        json!({
            "module": spec.panel,
            "title": spec.title,
            "inputs": inputs,
            "products": products,
            "actions": [
                {"name": "inspect_product", "args": {"key": "one of the product keys"}, "desc": "The numbers a product holds (read-only)."}
            ],
        })
    }

    /// Carry out a shared action.
    pub fn apply(
        spec: &MethodSpec,
        action: &str,
        args: &Value,
        shared: &mut Shared,
    ) -> Result<Value, String> {
        match action {
            "inspect_product" => {
                let key = args
                    .get("key")
                    .and_then(Value::as_str)
                    .ok_or("inspect_product needs \"key\"")?;
                if !spec.products.contains(&key) {
                    return Err(format!(
                        "{key} is not a product of this module; its products are {}",
                        spec.products.join(", ")
                    ));
                }
                match shared.shelf.get(key) {
                    Some(p) => Ok(json!({"key": key, "inspect": p.inspect()})),
                    None => crate::llm::harness::Absence::new(
                        "the product named in the request, in the current run",
                        ["the products of the current run".to_string()],
                    )
                    .map(|a| {
                        a.not_checked(["products of earlier runs".to_string()])
                            .try_instead("run the step that makes it, then look again")
                            .to_json()
                    })
                    .map_err(|e| e.to_string()),
                }
            }
            other => Err(format!(
                "no action '{other}' on the {} panel; its actions are: inspect_product",
                spec.title
            )),
        }
    }
}

//! The Ground-penetrating radar (GPR) panel.

use serde_json::Value;

use super::method::{MethodSpec, MethodView};
use super::{Panel, Shared};

/// What this panel shows.
pub const SPEC: MethodSpec = MethodSpec {
    key: "gpr",
    title: "Ground-penetrating radar (GPR)",
    rail: "GPR",
    roles: &["gpr_file"],
    products: &["gpr_data", "gpr_results"],
    formats: "GSSI DZT, pulseEKKO DT1+HD, MALA rd3/rd7+rad, SEG-Y",
};

/// The Ground-penetrating radar (GPR) panel.
#[derive(Debug, Default)]
pub struct GprPanel {
    view: MethodView,
}

impl Panel for GprPanel {
    fn key(&self) -> &'static str {
        SPEC.key
    }

    fn title(&self) -> &'static str {
        SPEC.title
    }

    fn rail_label(&self) -> &'static str {
        SPEC.rail
    }

    fn ui(&mut self, ui: &mut egui::Ui, shared: &mut Shared) {
        self.view.ui(ui, &SPEC, shared);
    }

    fn describe(&self, shared: &Shared) -> Value {
        MethodView::describe(&SPEC, shared)
    }

    fn apply(&mut self, action: &str, args: &Value, shared: &mut Shared) -> Result<Value, String> {
        MethodView::apply(&SPEC, action, args, shared)
    }
}

//! The Magnetotellurics (MT) panel.

use serde_json::Value;

use super::method::{MethodSpec, MethodView};
use super::{Panel, Shared};

/// What this panel shows.
pub const SPEC: MethodSpec = MethodSpec {
    key: "mt",
    title: "Magnetotellurics (MT)",
    rail: "MT",
    roles: &["mt_files", "mt_dir"],
    products: &["mt_data", "mt_results", "mt_evaluation", "water_content"],
    formats: "EDI, EMTF XML, Z-files (.zmm/.zss/.zrr), BIRRP J-files, Zonge AVG",
};

/// The Magnetotellurics (MT) panel.
#[derive(Debug, Default)]
pub struct MtPanel {
    view: MethodView,
}

impl Panel for MtPanel {
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

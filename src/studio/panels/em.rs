//! The Time-domain EM (TDEM) panel.

use serde_json::Value;

use super::method::{MethodSpec, MethodView};
use super::{Panel, Shared};

/// What this panel shows.
pub const SPEC: MethodSpec = MethodSpec {
    key: "em",
    title: "Time-domain EM (TDEM)",
    rail: "EM",
    roles: &["tdem_file", "tdem_geometry_file"],
    products: &[
        "tdem_data",
        "tdem_results",
        "tdem_evaluation",
        "plan_maps",
        "water_content",
    ],
    formats: "time,response CSV, time,snd1,snd2,… with a geometry table, TEM-FAST (.tem), Universal Sounding Format (.usf)",
};

/// The Time-domain EM (TDEM) panel.
#[derive(Debug, Default)]
pub struct EmPanel {
    view: MethodView,
}

impl Panel for EmPanel {
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

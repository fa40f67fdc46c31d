//! The Gravity and magnetics panel.

use serde_json::Value;

use super::method::{MethodSpec, MethodView};
use super::{Panel, Shared};

/// What this panel shows.
pub const SPEC: MethodSpec = MethodSpec {
    key: "gravmag",
    title: "Gravity and magnetics",
    rail: "Grav/Mag",
    roles: &["gravmag_file"],
    products: &["gravmag_data", "gravmag_results", "gravmag_evaluation"],
    formats: "station tables x,y,value[,z] (CSV/TXT), lat/lon tables",
};

/// The Gravity and magnetics panel.
#[derive(Debug, Default)]
pub struct GravMagPanel {
    view: MethodView,
}

impl Panel for GravMagPanel {
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

//! The Seismic refraction panel.

use serde_json::Value;

use super::method::{MethodSpec, MethodView};
use super::{Panel, Shared};

/// What this panel shows.
pub const SPEC: MethodSpec = MethodSpec {
    key: "seismic",
    title: "Seismic refraction",
    rail: "Seismic",
    roles: &[
        "seismic_file",
        "seismic_files",
        "segy_file",
        "seg2_files",
        "geophone_file",
        "topography_file",
    ],
    products: &[
        "seismic_picks",
        "seismic_traveltimes",
        "seismic_results",
        "seismic_evaluation",
        "seismic_structure",
    ],
    formats: "pyGIMLi travel times (.sgt), CSV source_x,receiver_x,time, SEG-2 and SEG-Y shot gathers",
};

/// The Seismic refraction panel.
#[derive(Debug, Default)]
pub struct SeismicPanel {
    view: MethodView,
}

impl Panel for SeismicPanel {
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

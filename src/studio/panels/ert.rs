//! The Electrical resistivity (ERT) panel.

use serde_json::Value;

use super::method::{MethodSpec, MethodView};
use super::{Panel, Shared};

/// What this panel shows.
pub const SPEC: MethodSpec = MethodSpec {
    key: "ert",
    title: "Electrical resistivity (ERT)",
    rail: "ERT",
    roles: &["ert_files", "ert_file", "electrode_file", "topography_file"],
    products: &[
        "ert_data",
        "inversion_results",
        "evaluation_results",
        "water_content",
        "structure_results",
    ],
    formats: "pyGIMLi/BERT unified (.dat/.ohm/.shm), E4D, Syscal (.csv/.bin), ABEM/Lund, Res2DInv, MPT DAS-1, AGI SuperSting (.stg), CSV a,b,m,n,R",
};

/// The Electrical resistivity (ERT) panel.
#[derive(Debug, Default)]
pub struct ErtPanel {
    view: MethodView,
}

impl Panel for ErtPanel {
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

//! Handing the ERT page's finished inversion to a run: when a run starts from a project whose
//! ERT page holds a finished model, the studio writes the model and the record of how the
//! page made it to a folder of its own under the runs folder, and names that folder in the
//! run's `studio_inversion_dir`; the run then takes the model over
//! (`load_studio_inversion`) instead of inverting again.

use std::path::{Path, PathBuf};

use super::StudioApp;
use crate::catalog::ert::{HandoverError, write_handover};
use crate::catalog::kit::keys;
use crate::runtime::session::RunSpec;
use crate::studio::panels::ert::ErtPanel;

/// The folder under the runs folder that holds the hand-over folders.
pub const HANDOVER_PARENT: &str = "studio_handover";

impl StudioApp {
    /// Write the ERT page's finished inversion for the run of `spec` and name it in the run's
    /// `studio_inversion_dir`. Nothing to hand over, or a folder that cannot be written, leaves
    /// the run to invert by itself (the latter said in the status line).
    pub(super) fn hand_over_ert_page(&mut self, spec: &mut RunSpec) {
        let Some(page) = self
            .panels
            .iter_mut()
            .find_map(|p| (p.as_mut() as &mut dyn std::any::Any).downcast_mut::<ErtPanel>())
        else {
            return;
        };
        let Some((record, model)) = page.finished_inversion() else {
            return;
        };
        let written = fresh_folder(&spec.runs_dir.join(HANDOVER_PARENT))
            .and_then(|dir| write_handover(&dir, record, model).map(|_| dir));
        match written {
            Ok(dir) => {
                spec.project.inputs.insert(
                    keys::STUDIO_INVERSION_DIR.into(),
                    dir.display().to_string().into(),
                );
                self.shared.messages.push(format!(
                    "The ERT page's inversion (χ² {:.2}, λ {}) is handed to the run from {}: the run takes it over instead of inverting again.",
                    record.chi2,
                    record.lambda,
                    dir.display()
                ));
            }
            Err(e) => self.shared.messages.push(format!(
                "The ERT page's inversion could not be handed to the run, which inverts by itself: {e}"
            )),
        }
    }
}

/// A new folder under `base`, named by the time (`ert_page_2026-11-30_062222`, then `_2`, …).
fn fresh_folder(base: &Path) -> Result<PathBuf, HandoverError> {
    let failed = |path: &Path, e: std::io::Error| HandoverError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(base).map_err(|e| failed(base, e))?;
    let (y, mo, d, h, mi, s) =
        crate::runtime::run_folder::utc_parts(crate::runtime::run_folder::now_unix());
    let stem = format!("ert_page_{y:04}-{mo:02}-{d:02}_{h:02}{mi:02}{s:02}");
    let mut n = 1;
    loop {
        let dir = base.join(if n == 1 {
            stem.clone()
        } else {
            format!("{stem}_{n}")
        });
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
            Err(e) => return Err(failed(&dir, e)),
        }
    }
}

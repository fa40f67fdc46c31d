//! The bundled example project's documented truth: a small catchment with a water table, a
//! bedrock interface and a conductive plume that grows over four months. Each method's data
//! in `assets/example` are computed from this truth with the project's own forward models plus
//! stated noise (by `cargo run --bin make-example`), on meshes other than the ones the
//! inversions use — so the example exercises the whole chain, and anyone can compare what the
//! studio recovers with what was put in.
//!
//! Coordinates: a survey line along x (m) from 0 to 96 m; elevation z (m above datum) with a
//! gentle slope; depth is measured down from the surface. For the map methods (gravity) the
//! line runs along y = 0 of a local grid.

pub mod ert;
pub mod gpr;
pub mod gravmag;
pub mod hydro;
pub mod monitoring;
pub mod mt;
pub mod seismic;
pub mod tdem;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// Survey dates of the four ERT surveys (year-first, as the file names carry them).
pub const SURVEY_DATES: [&str; 4] = ["2024-05-01", "2024-06-01", "2024-07-01", "2024-08-01"];

/// The truth behind the example data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Truth {
    /// Site name.
    pub site: String,
    /// Line start and end along x (m).
    pub line_m: (f64, f64),
    /// Surface elevation at x = 0 (m) and its slope (m per m, negative falls with x).
    pub surface: (f64, f64),
    /// Depth of the water table below the surface (m).
    pub water_table_depth_m: f64,
    /// Depth of the bedrock interface at x = 48 m (m) and its dip (m per m).
    pub bedrock: (f64, f64),
    /// Resistivity above the water table, saturated sand, bedrock (Ω·m).
    pub rho_ohm_m: (f64, f64, f64),
    /// P-wave velocity above the water table, saturated sand, bedrock (m/s).
    pub velocity_m_per_s: (f64, f64, f64),
    /// Plume centre (x m, depth m), resistivity (Ω·m) and radius per survey (m).
    pub plume: Plume,
    /// Petrophysics of the sand (Archie): porosity, cementation m, saturation n, pore-water
    /// resistivity (Ω·m).
    pub archie: (f64, f64, f64, f64),
    /// A deep conductor seen only by MT and TDEM: its depth to top (m), thickness (m) and
    /// resistivity (Ω·m), over a resistive basement (Ω·m).
    pub deep: (f64, f64, f64, f64),
    /// A dense body for gravity: centre (x, y, depth to centre, m), size (m), density
    /// contrast (g/cm³).
    pub dense_body: ([f64; 3], [f64; 3], f64),
    /// Radar velocity in the unsaturated sand (m/ns).
    pub gpr_velocity_m_per_ns: f64,
}

/// The conductive plume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plume {
    /// Centre along the line (m).
    pub x_m: f64,
    /// Centre depth below the surface (m).
    pub depth_m: f64,
    /// Resistivity inside (Ω·m).
    pub rho_ohm_m: f64,
    /// Radius at each survey date (m).
    pub radius_m: [f64; 4],
}

/// Archie's law with a = 1: ρ = ρw · φ^(−m) · S^(−n) (Archie 1942).
pub fn archie_rho(phi: f64, m: f64, n: f64, rho_w: f64, saturation: f64) -> f64 {
    rho_w * phi.powf(-m) * saturation.powf(-n)
}

/// Saturation of the sand above the water table in the example.
pub const UNSATURATED_SATURATION: f64 = 0.45;
/// Pore-water resistivity inside the plume (Ω·m).
pub const PLUME_PORE_WATER_OHM_M: f64 = 2.0;

impl Default for Truth {
    fn default() -> Self {
        let (phi, m, n, rw) = (0.35, 1.8, 2.0, 20.0);
        Truth {
            site: "Example catchment (synthetic)".into(),
            line_m: (0.0, 94.0),
            surface: (102.0, -0.02),
            water_table_depth_m: 4.0,
            bedrock: (12.0, 0.05),
            // Unsaturated and saturated sand from Archie's law; granite bedrock.
            rho_ohm_m: (
                archie_rho(phi, m, n, rw, UNSATURATED_SATURATION),
                archie_rho(phi, m, n, rw, 1.0),
                2000.0,
            ),
            velocity_m_per_s: (450.0, 1600.0, 3500.0),
            plume: Plume {
                x_m: 40.0,
                // Buried at every survey (top 5.0 → 2.0 m): a body that reached the electrodes
                // would test the meshes' representation of a contact at an electrode, not the
                // time-lapse inversion.
                depth_m: 7.5,
                // Saturated sand with saline pore water.
                rho_ohm_m: archie_rho(phi, m, n, PLUME_PORE_WATER_OHM_M, 1.0),
                radius_m: [2.5, 3.5, 4.5, 5.5],
            },
            archie: (phi, m, n, rw),
            deep: (150.0, 100.0, 10.0, 1000.0),
            dense_body: ([60.0, 0.0, 40.0], [30.0, 30.0, 20.0], 0.3),
            gpr_velocity_m_per_ns: 0.12,
        }
    }
}

impl Truth {
    /// Surface elevation at `x_m` (m).
    pub fn surface_z(&self, x_m: f64) -> f64 {
        self.surface.0 + self.surface.1 * x_m
    }

    /// Bedrock depth below the surface at `x_m` (m).
    pub fn bedrock_depth(&self, x_m: f64) -> f64 {
        self.bedrock.0 + self.bedrock.1 * (x_m - 48.0)
    }

    /// Resistivity (Ω·m) at `x_m` and `depth_m` below the surface, at survey `t` (0–3).
    pub fn rho(&self, x_m: f64, depth_m: f64, t: usize) -> f64 {
        self.rho_with_plume(x_m, depth_m, self.plume.radius_m[t.min(3)])
    }

    /// Resistivity (Ω·m) at `x_m` and `depth_m` below the surface with the plume at radius
    /// `r` (m): the plume's resistivity inside the circle above the bedrock, else the layers.
    pub fn rho_with_plume(&self, x_m: f64, depth_m: f64, r: f64) -> f64 {
        let p = &self.plume;
        if ((x_m - p.x_m).powi(2) + (depth_m - p.depth_m).powi(2)).sqrt() <= r
            && depth_m < self.bedrock_depth(x_m)
        {
            return p.rho_ohm_m;
        }
        self.layer_value(x_m, depth_m, self.rho_ohm_m)
    }

    /// P-wave velocity (m/s) at `x_m`, `depth_m`.
    pub fn velocity(&self, x_m: f64, depth_m: f64) -> f64 {
        self.layer_value(x_m, depth_m, self.velocity_m_per_s)
    }

    fn layer_value(&self, x_m: f64, depth_m: f64, v: (f64, f64, f64)) -> f64 {
        if depth_m < self.water_table_depth_m {
            v.0
        } else if depth_m < self.bedrock_depth(x_m) {
            v.1
        } else {
            v.2
        }
    }

    /// The 1D layered resistivity under `x_m` for the sounding methods: (thicknesses of the
    /// upper layers (m), resistivities (Ω·m), the last layer a half-space), including the deep
    /// conductor and basement.
    pub fn layers_1d(&self, x_m: f64) -> (Vec<f64>, Vec<f64>) {
        let wt = self.water_table_depth_m;
        let br = self.bedrock_depth(x_m);
        let (top, thick, rho_c, rho_b) = self.deep;
        let h = vec![wt, br - wt, top - br, thick];
        let rho = vec![
            self.rho_ohm_m.0,
            self.rho_ohm_m.1,
            self.rho_ohm_m.2,
            rho_c,
            rho_b,
        ];
        (h, rho)
    }

    /// Volumetric water content (m³/m³) implied by Archie's law for a resistivity in the sand:
    /// S = (a·ρw / (φ^m·ρ))^(1/n) with a = 1, θ = φ·S (Archie 1942).
    pub fn water_content(&self, rho_ohm_m: f64) -> f64 {
        let (phi, m, n, rw) = self.archie;
        let s = (rw / (phi.powf(m) * rho_ohm_m)).powf(1.0 / n).min(1.0);
        phi * s
    }
}

/// Writes one method's example data into a project folder; returns (input role, path
/// relative to the folder) pairs for `project.json`.
pub type Writer = fn(&Truth, &Path) -> Result<Vec<(String, PathBuf)>, String>;

/// Every method's example writer (each method adds its own).
pub fn writers() -> Vec<(&'static str, Writer)> {
    vec![
        ("ert", ert::write as Writer),
        ("seismic", seismic::write as Writer),
        ("tdem", tdem::write as Writer),
        ("mt", mt::write as Writer),
        ("gravmag", gravmag::write as Writer),
        ("gpr", gpr::write as Writer),
    ]
}

/// The goal of the example project.
pub const GOAL: &str =
    "Where is the water table, how did the plume change, and what is the water content?";

/// Write the whole example project into `dir`: every method's data, `truth.json`, and a
/// `project.json` naming the data by role with the goal. Returns the project file.
pub fn write_project(dir: &Path) -> Result<PathBuf, String> {
    write_project_from(&Truth::default(), dir)
}

/// Read a truth of `truth.json`'s schema (every field as [`Truth`] names it); an error names
/// the file and what was wrong (serde's line and column).
pub fn read_truth(path: &Path) -> Result<Truth, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: line {}, column {}: expected a truth of the schema of assets/example/truth.json ({e})",
            path.display(),
            e.line(),
            e.column()
        )
    })
}

/// [`write_project`] from any truth: the same writers, the same goal and settings, the
/// truth's own numbers.
pub fn write_project_from(truth: &Truth, dir: &Path) -> Result<PathBuf, String> {
    let truth = truth.clone();
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut inputs = Map::new();
    for (method, write) in writers() {
        for (role, path) in write(&truth, dir).map_err(|e| format!("{method}: {e}"))? {
            let rel = Value::from(path.display().to_string());
            if role.ends_with("_files") {
                let entry = inputs
                    .entry(role)
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(a) = entry {
                    a.push(rel);
                }
            } else {
                inputs.insert(role, rel);
            }
        }
    }
    let (phi, m, n, rw) = truth.archie;
    let project = json!({
        "goal": GOAL,
        "inputs": inputs,
        "config": {
            "site": truth.site,
            "petrophysical_params": {
                "relationship": "archie",
                "porosity": [phi, 0.03],
                "cementation_exponent_m": [m, 0.1],
                "saturation_exponent_n": [n, 0.1],
                "fluid_resistivity_ohm_m": [rw, 2.0],
                "source": "laboratory measurements on core from the site (synthetic example)"
            },
            "gpr_velocity_m_per_ns": truth.gpr_velocity_m_per_ns,
            // The TDEM system: the soundings CSV carries no loop description.
            "tdem_params": serde_json::from_str::<Value>(tdem::TDEM_PARAMS)
                .map_err(|e| format!("tdem::TDEM_PARAMS: {e}"))?
        }
    });
    write_truth_and_project(dir, &truth, &project)
}

/// Write `truth.json` and `project.json` into `dir`; returns the project file.
pub fn write_truth_and_project(
    dir: &Path,
    truth: &Truth,
    project: &Value,
) -> Result<PathBuf, String> {
    std::fs::write(
        dir.join("truth.json"),
        serde_json::to_string_pretty(truth).map_err(|e| e.to_string())?,
    )
    .map_err(|e| format!("truth.json: {e}"))?;
    let file = dir.join("project.json");
    std::fs::write(
        &file,
        serde_json::to_string_pretty(project).map_err(|e| e.to_string())?,
    )
    .map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_truth_is_what_the_documentation_says() {
        let t = Truth::default();
        let sat = 20.0 * 0.35f64.powf(-1.8);
        assert!(
            (t.rho(10.0, 6.0, 0) - sat).abs() < 1e-9,
            "saturated sand {sat:.1} Ω·m"
        );
        assert!((t.rho(10.0, 2.0, 0) - sat / 0.45f64.powi(2)).abs() < 1e-9);
        assert_eq!(t.rho(10.0, 20.0, 0), 2000.0);
        assert!(
            (t.rho(40.0, 6.0, 0) - sat / 10.0).abs() < 1e-9,
            "the plume's pore water is 10× saltier"
        );
        assert!(
            (t.rho(44.5, 7.5, 0) - sat).abs() < 1e-9,
            "outside the plume at the first survey"
        );
        assert!(
            t.rho(44.5, 7.5, 3) < sat / 5.0,
            "inside the grown plume at the last"
        );
        // Archie's law inverted gives back the water content: θ = φ·S.
        assert!((t.water_content(sat) - 0.35).abs() < 1e-12);
        assert!((t.water_content(t.rho(10.0, 2.0, 0)) - 0.35 * 0.45).abs() < 1e-12);
    }
}

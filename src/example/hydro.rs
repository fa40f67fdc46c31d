//! A synthetic ParFlow output of the example's hydrology, written from a [`Truth`]: pressure
//! head, saturation and porosity `.pfb` files on a 2-D slab under the line (x −40–136 m by
//! 2 m, reaching 40 m beyond the line's ends as a flow model's domain does, one 10 m row
//! across y = 0, z 40–104 m by 0.5 m), each split into 2 × 1 × 2 subgrids as a
//! four-process ParFlow run writes them.
//!
//! The state is hydrostatic about the truth's water table: ψ = z_wt(x) − z (m, the grid's
//! length unit), S = 1 below the water table and [`UNSATURATED_SATURATION`] above; φ is the
//! truth's sand porosity above the bedrock and, below it, the porosity that gives the
//! bedrock's resistivity by the truth's Archie law with S = 1: φ = (a·ρw/ρ)^(1/m).
//!
//! Not part of [`super::writers`]: the bundled example is a survey without a flow model; the
//! hydrological-model tests and `make-example --with-model` add it ([`write`]).

use std::path::{Path, PathBuf};

use ndarray::Array3;

use super::{Truth, UNSATURATED_SATURATION};
use crate::methods::hydro::pfb::encode_pfb;

/// The grid: (origin x, y, z), spacing (dx, dy, dz), cells (nx, ny, nz).
const ORIGIN: [f64; 3] = [-40.0, -5.0, 40.0];
const SPACING: [f64; 3] = [2.0, 10.0, 0.5];
const CELLS: [usize; 3] = [88, 1, 128];

/// The files, relative to the project folder: (input role's file name, quantity).
pub const FILES: [&str; 3] = [
    "hydro/example.out.press.00000.pfb",
    "hydro/example.out.satur.00000.pfb",
    "hydro/example.out.porosity.pfb",
];

/// The three fields `[k, j, i]` (z index 0 the bottom): pressure head, saturation, porosity.
pub fn fields(truth: &Truth) -> [Array3<f64>; 3] {
    let [nx, ny, nz] = CELLS;
    let (phi, m, _, rw) = truth.archie;
    let phi_rock = (rw / truth.rho_ohm_m.2).powf(1.0 / m).min(phi);
    let shape = (nz, ny, nx);
    let (mut press, mut satur, mut poros) = (
        Array3::zeros(shape),
        Array3::zeros(shape),
        Array3::zeros(shape),
    );
    for k in 0..nz {
        let z = ORIGIN[2] + (k as f64 + 0.5) * SPACING[2];
        for i in 0..nx {
            let x = ORIGIN[0] + (i as f64 + 0.5) * SPACING[0];
            let surface = truth.surface_z(x);
            let z_wt = surface - truth.water_table_depth_m;
            let depth = surface - z;
            for j in 0..ny {
                press[[k, j, i]] = z_wt - z;
                satur[[k, j, i]] = if z < z_wt {
                    1.0
                } else {
                    UNSATURATED_SATURATION
                };
                poros[[k, j, i]] = if depth >= truth.bedrock_depth(x) {
                    phi_rock
                } else {
                    phi
                };
            }
        }
    }
    [press, satur, poros]
}

/// Write the three files into `dir`; returns their paths relative to `dir`.
pub fn write(truth: &Truth, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let folder = dir.join("hydro");
    std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    let mut out = Vec::new();
    for (name, values) in FILES.iter().zip(fields(truth)) {
        let bytes = encode_pfb(ORIGIN, SPACING, &values, [2, 1, 2]);
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        out.push(PathBuf::from(name));
    }
    Ok(out)
}

/// The project entries that name the files (`inputs.model_output_files`) and place the line
/// (`config.hydro_params`: distance 0 at x = 0, along +x).
pub fn project_entries(files: &[PathBuf]) -> (serde_json::Value, serde_json::Value) {
    (
        serde_json::Value::from(
            files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>(),
        ),
        serde_json::json!({ "line_origin": [0.0, 0.0], "line_azimuth_deg": 90.0 }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::hydro::{MaskOptions, read_model_output};

    #[test]
    fn the_files_read_back_with_the_truths_water_table() {
        let dir = tempfile::tempdir().expect("dir");
        let truth = Truth::default();
        let files = write(&truth, dir.path()).expect("written");
        let press = read_model_output(&dir.path().join(&files[0]), &MaskOptions::default())
            .expect("pressure");
        assert_eq!(press.records[0].quantity, "press");
        assert_eq!((press.ncol, press.nrow, press.nlay), (88, 1, 128));
        // Column i = 30 (x = 21 m): surface 101.58 m, water table 97.58 m; the cell at
        // k = 115 (z = 97.75 m) is 0.17 m above it.
        let v = press.records[0].values[[115, 0, 30]];
        assert!((v - (97.58 - 97.75)).abs() < 1e-9, "{v}");
        let poros = read_model_output(&dir.path().join(&files[2]), &MaskOptions::default())
            .expect("porosity");
        // The bedrock's porosity gives 2000 Ω·m by Archie with S = 1: 20·φ^−1.8.
        let rock = poros.records[0].values[[0, 0, 30]];
        assert!((20.0 * rock.powf(-1.8) - 2000.0).abs() < 1e-6, "{rock}");
    }
}

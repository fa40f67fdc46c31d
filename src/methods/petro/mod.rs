//! Petrophysics: resistivity to water content (Archie, Waxman–Smits) with Monte Carlo
//! uncertainty, shared by ERT (per cell or per marker region), TDEM and MT (per layer).
//!
//! * [`relations`]: Archie (1942) and Waxman & Smits (1968) forward and inverse, Juhász (1981)
//!   B, Qv from CEC.
//! * [`monte_carlo`]: [`water_content`] — mean, std and P10/P50/P90 per cell over seeded,
//!   bit-reproducible draws; the prior stated as the 5–95 % range of the draws and classified
//!   user / partial / default; the reliability ratio and its verdict; defaults said loudly.
//! * [`rng`]: the project's own xoshiro256** / SplitMix64 / Box–Muller generator, so that
//!   seeded results do not depend on a crate's version.
//! * [`config`]: the `petrophysical_params` setting as users write it → [`PetroPrior`] with
//!   exact provenance ([`PetroConfig`]).
//! * [`water_content_by_layer_csv`]: the `water_content_by_layer.csv` table of a layered model.
//!
//! How callers use it:
//! ```ignore
//! use hydrogeo_studio::methods::petro::*;
//! // ERT: one resistivity per cell, a marker region per cell, one prior per region.
//! let input = WaterContentInput { resistivity_ohm_m: &rho_cells, resistivity_sigma_ln: None,
//!                                 region_of_cell: Some(&marker_index) };
//! let wc = water_content(&input, &[PetroPrior::default_regolith("regolith"),
//!                                  PetroPrior::default_bedrock("bedrock")],
//!                        &MonteCarloOptions::default())?;
//! // TDEM / MT: one resistivity per layer, every layer in region 0 (or one region per layer).
//! ```

pub mod config;
pub mod interpret;
pub mod monte_carlo;
pub mod relations;
pub mod rng;

pub use config::{ParamSpec, PetroConfig, Relationship};
pub use monte_carlo::{
    CellStatistics, DEFAULT_REALIZATIONS, DEFAULT_SEED, Distribution, MIN_REALIZATIONS,
    MonteCarloOptions, Param, ParamRange, PetroPrior, PriorSource, Reliability, UserPetroParams,
    WaterContent, WaterContentInput, percentile_sorted, reliability_of, water_content,
};
pub use relations::{
    Archie, SaturationSolve, WaxmanSmits, archie_resistivity_ohm_m, archie_saturation,
    archie_water_content, formation_factor, juhasz_b, qv_meq_per_cm3,
    waxman_smits_conductivity_s_per_m, waxman_smits_saturation,
};

/// Why a conversion could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PetroError {
    /// A parameter outside its physical range.
    #[error("{name} must be {expected}, got {value}")]
    InvalidParameter {
        /// The parameter.
        name: String,
        /// What is allowed.
        expected: String,
        /// What was given.
        value: f64,
    },
    /// The input as a whole is unusable (empty, mismatched lengths, unknown region).
    #[error("{0}")]
    InvalidInput(String),
    /// An iterative solve did not converge.
    #[error("{what} did not converge ({detail})")]
    NoConvergence {
        /// What was being solved.
        what: String,
        /// The inputs, for the user to check.
        detail: String,
    },
}

/// One row of `water_content_by_layer.csv`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LayerWaterContent {
    /// Sounding / site index for a line of soundings; `None` for a single one.
    pub station_index: Option<usize>,
    /// Depth of the layer top, m.
    pub depth_top_m: f64,
    /// Depth of the layer bottom, m; `None` for the half-space (written `inf` in the CSV).
    pub depth_bottom_m: Option<f64>,
    /// The layer's resistivity, Ω·m.
    pub resistivity_ohm_m: f64,
    /// Mean water content, m³/m³.
    pub water_content_mean: f64,
    /// Its standard deviation.
    pub water_content_std: f64,
    /// 10th percentile.
    pub water_content_p10: f64,
    /// Median.
    pub water_content_p50: f64,
    /// 90th percentile.
    pub water_content_p90: f64,
}

/// Rows for a layered model: layer tops from the thicknesses (the last layer is the
/// half-space), water content from `wc` (one cell per layer, in the same order).
pub fn layer_rows(
    station_index: Option<usize>,
    thickness_m: &[f64],
    resistivity_ohm_m: &[f64],
    wc: &WaterContent,
) -> Vec<LayerWaterContent> {
    let mut top = 0.0;
    resistivity_ohm_m
        .iter()
        .enumerate()
        .map(|(i, &rho)| {
            let bottom = thickness_m.get(i).map(|h| top + h);
            let row = LayerWaterContent {
                station_index,
                depth_top_m: top,
                depth_bottom_m: bottom,
                resistivity_ohm_m: rho,
                water_content_mean: wc.water_content.mean.get(i).copied().unwrap_or(f64::NAN),
                water_content_std: wc.water_content.std.get(i).copied().unwrap_or(f64::NAN),
                water_content_p10: wc.water_content.p10.get(i).copied().unwrap_or(f64::NAN),
                water_content_p50: wc.water_content.p50.get(i).copied().unwrap_or(f64::NAN),
                water_content_p90: wc.water_content.p90.get(i).copied().unwrap_or(f64::NAN),
            };
            top = bottom.unwrap_or(f64::INFINITY);
            row
        })
        .collect()
}

/// `water_content_by_layer.csv` (peer-studio §3.3 columns, then the percentiles):
/// `[station_index,]depth_top_m,depth_bottom_m,resistivity_ohm_m,water_content_mean,
/// water_content_std,water_content_p10,water_content_p50,water_content_p90`. The station
/// column is written when any row has a station index; the half-space bottom is `inf`.
pub fn water_content_by_layer_csv(rows: &[LayerWaterContent]) -> String {
    let with_station = rows.iter().any(|r| r.station_index.is_some());
    let mut out = String::new();
    if with_station {
        out.push_str("station_index,");
    }
    out.push_str(
        "depth_top_m,depth_bottom_m,resistivity_ohm_m,water_content_mean,water_content_std,\
         water_content_p10,water_content_p50,water_content_p90\n",
    );
    for r in rows {
        if with_station {
            match r.station_index {
                Some(i) => out.push_str(&format!("{i},")),
                None => out.push(','),
            }
        }
        let f = |x: f64| {
            if x.is_infinite() {
                "inf".to_string()
            } else {
                format!("{x}")
            }
        };
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{}\n",
            f(r.depth_top_m),
            f(r.depth_bottom_m.unwrap_or(f64::INFINITY)),
            f(r.resistivity_ohm_m),
            f(r.water_content_mean),
            f(r.water_content_std),
            f(r.water_content_p10),
            f(r.water_content_p50),
            f(r.water_content_p90)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layered_csv_has_the_peer_columns_and_an_infinite_half_space() {
        let rho = [600.0, 100.0, 2000.0];
        let input = WaterContentInput {
            resistivity_ohm_m: &rho,
            resistivity_sigma_ln: None,
            region_of_cell: None,
        };
        let wc = water_content(
            &input,
            &[PetroPrior::default_regolith("sediment")],
            &MonteCarloOptions::default(),
        )
        .unwrap();
        let rows = layer_rows(Some(4), &[10.0, 25.0], &rho, &wc);
        assert_eq!(rows[1].depth_top_m, 10.0);
        assert_eq!(rows[1].depth_bottom_m, Some(35.0));
        assert_eq!(rows[2].depth_bottom_m, None);
        let csv = water_content_by_layer_csv(&rows);
        let mut lines = csv.lines();
        assert_eq!(
            lines.next().unwrap(),
            "station_index,depth_top_m,depth_bottom_m,resistivity_ohm_m,water_content_mean,\
             water_content_std,water_content_p10,water_content_p50,water_content_p90"
        );
        let last = lines.nth(2).unwrap();
        assert!(last.starts_with("4,35,inf,2000,"), "{last}");
        // The 100 Ω·m layer holds more water than the 600 Ω·m one with the same parameters.
        assert!(rows[1].water_content_mean > rows[0].water_content_mean);
    }
}

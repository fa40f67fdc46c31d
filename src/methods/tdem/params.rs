//! The `tdem_params` settings of a project: the system when a file does not describe it
//! (loop geometry, receiver, waveform, unit), the inversion (error floor, layering, λ,
//! lateral constraints) and the plan-view maps (depths, grid, variogram). Every key is
//! optional; what a default stands in for is said in the notes of the step that uses it.
//!
//! The struct refuses unknown keys (`deny_unknown_fields`), so a misspelt setting is an error
//! that names the valid ones instead of a silently ignored value.

use super::data::ResponseUnit;
use super::forward::{LoopShape, Receiver, TemSystem, Waveform};
use super::invert::{LambdaMode, SmoothSettings};
use super::kriging::{MapSettings, VariogramModel};
use super::readers::ReadOptions;
use super::survey::SurveySettings;
use serde::{Deserialize, Serialize};

/// How the receiver sits relative to the transmitter loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopType {
    /// A small receiver coil at the loop centre (in-loop sounding).
    Central,
    /// The transmitter loop (or an identical loop on it) receives.
    Coincident,
    /// A small receiver coil at a horizontal offset from the loop centre.
    Offset,
}

/// The transmitter current's turn-off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaveformKind {
    /// Ideal step-off.
    StepOff,
    /// Linear ramp of `ramp_s` ending at t = 0.
    LinearRamp,
    /// Piecewise-linear turn-off given by `waveform_time_s` and `waveform_current`.
    PiecewiseLinear,
}

/// The `tdem_params` object. Units are in the names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TdemParams {
    // ----- the system (used for soundings whose file does not describe one) -------------
    /// Central, coincident or offset receiver (default: central, or offset when
    /// `tx_rx_offset_m` is given).
    pub loop_type: Option<LoopType>,
    /// Radius of a circular transmitter loop [m].
    pub loop_radius_m: Option<f64>,
    /// Side of a square transmitter loop [m].
    pub loop_side_m: Option<f64>,
    /// Transmitter turns (default 1).
    pub tx_turns: Option<f64>,
    /// Transmitter current [A] (default 1; data are per ampere).
    pub current_a: Option<f64>,
    /// Effective area of one receiver-coil turn [m²] (default 1; matters for V/A data).
    pub rx_area_m2: Option<f64>,
    /// Receiver turns (default 1; for a coincident loop the transmitter's).
    pub rx_turns: Option<f64>,
    /// Horizontal Tx–Rx offset of an offset receiver [m].
    pub tx_rx_offset_m: Option<f64>,
    /// Transmitter height above ground [m] (default 0).
    pub height_m: Option<f64>,
    /// Receiver height above ground [m] (default: the transmitter's).
    pub rx_height_m: Option<f64>,
    /// Turn-off (default step-off, or a linear ramp when `ramp_s` is given).
    pub waveform: Option<WaveformKind>,
    /// Linear ramp duration [s].
    pub ramp_s: Option<f64>,
    /// Corner times of a piecewise-linear turn-off on the gate clock [s].
    pub waveform_time_s: Option<Vec<f64>>,
    /// Normalised current at those corners (1 … 0).
    pub waveform_current: Option<Vec<f64>>,
    /// Use this system for every sounding, even those whose file describes one.
    pub override_file_system: bool,
    /// Unit of table values when the header does not state it: `V/A`, `V/(A·m²)`,
    /// `V/(A·m⁴)` or `T/A` (also `v_per_a`, `v_per_a_m2`, `v_per_a_m4`, `t_per_a`).
    pub unit: Option<String>,

    // ----- the inversion ------------------------------------------------------------------
    /// Relative error floor (default 0.03).
    pub error_floor: Option<f64>,
    /// Layers of the smooth model including the half-space (default 30).
    pub n_layers: Option<usize>,
    /// Thickness of the first layer [m] (default from the earliest gate).
    pub first_thickness_m: Option<f64>,
    /// Depth of the top of the half-space [m] (default from the latest gate).
    pub bottom_depth_m: Option<f64>,
    /// Also fit a few-layer model with this many layers (started from the smooth one).
    pub few_layers: Option<usize>,
    /// A fixed λ instead of Occam's search (the evaluation may then retry λ ×½ or ×2).
    pub lambda: Option<f64>,
    /// Iteration cap (default 20).
    pub max_iterations: Option<usize>,
    /// Target χ² (default 1).
    pub target_chi2: Option<f64>,
    /// Lower resistivity bound [Ω·m] (default 0.1).
    pub rho_min_ohm_m: Option<f64>,
    /// Upper resistivity bound [Ω·m] (default 1e5).
    pub rho_max_ohm_m: Option<f64>,
    /// Christiansen–Auken DOI threshold (default 0.8).
    pub doi_threshold: Option<f64>,
    /// Invert a line with lateral constraints (default: decided from the spacing).
    pub lateral_constraints: Option<bool>,
    /// κ, the lateral constraint relative to the vertical one (default 1).
    pub lateral_factor: Option<f64>,
    /// The 201-point filters instead of the faster 101-point set.
    pub accurate_filters: bool,
    /// Invert only these soundings: 0-based indices in the file's order (default: every one).
    /// A part of a split run (`run --part`) holds its soundings this way; the numbers of a
    /// sounding inverted one by one do not depend on which others are inverted with it.
    pub soundings: Option<Vec<usize>>,

    // ----- plan-view maps -----------------------------------------------------------------
    /// Depths of the map slices [m] (default: ¼, ½ and ¾ of the median DOI).
    pub map_depths_m: Option<Vec<f64>>,
    /// Grid cells along the longer side (default 50).
    pub map_cells: Option<usize>,
    /// Variogram shape (default spherical).
    pub variogram: Option<VariogramModel>,
}

/// An invalid setting.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("tdem_params.{key}: {message}")]
pub struct ParamsError {
    /// The key.
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

fn bad(key: &str, message: impl Into<String>) -> ParamsError {
    ParamsError {
        key: key.to_string(),
        message: message.into(),
    }
}

fn positive(key: &str, v: Option<f64>) -> Result<Option<f64>, ParamsError> {
    match v {
        Some(x) if !(x.is_finite() && x > 0.0) => {
            Err(bad(key, format!("must be a positive number, found {x}")))
        }
        _ => Ok(v),
    }
}

fn non_negative(key: &str, v: Option<f64>) -> Result<Option<f64>, ParamsError> {
    match v {
        Some(x) if !(x.is_finite() && x >= 0.0) => {
            Err(bad(key, format!("must be 0 or more, found {x}")))
        }
        _ => Ok(v),
    }
}

/// A response unit written by a person: `V/A`, `V/(A·m²)`, `V/Am2`, `v_per_a_m2`, `T/s`,
/// `V/(A·m⁴)`, `T/A`, … (case, spaces, brackets and `·`/`*`/`^` ignored).
pub fn parse_unit(text: &str) -> Option<ResponseUnit> {
    let t: String = text
        .to_ascii_lowercase()
        .replace("_per_", "/")
        .replace('²', "2")
        .replace('⁴', "4")
        .chars()
        .filter(|c| !matches!(c, ' ' | '(' | ')' | '·' | '*' | '^' | '_' | '.'))
        .collect();
    match t.as_str() {
        "v/a" | "va" => Some(ResponseUnit::VoltPerAmp),
        "v/am2" | "v/a/m2" | "vam2" | "t/s" | "t/sa" | "t/s/a" => Some(ResponseUnit::VoltPerAmpM2),
        "v/am4" | "v/a/m4" | "vam4" => Some(ResponseUnit::VoltPerAmpM4),
        "t/a" | "ta" => Some(ResponseUnit::TeslaPerAmp),
        _ => None,
    }
}

impl TdemParams {
    /// Whether any system key is set.
    pub fn has_system(&self) -> bool {
        self.loop_radius_m.is_some() || self.loop_side_m.is_some() || self.loop_type.is_some()
    }

    /// The system these settings describe (`None` when no loop is given), with notes on the
    /// defaults that filled the gaps.
    pub fn system(&self) -> Result<Option<(TemSystem, Vec<String>)>, ParamsError> {
        if !self.has_system() {
            return Ok(None);
        }
        let mut notes = Vec::new();
        let radius = positive("loop_radius_m", self.loop_radius_m)?;
        let side = positive("loop_side_m", self.loop_side_m)?;
        let transmitter = match (radius, side) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "loop_side_m",
                    "give loop_radius_m (circle) or loop_side_m (square), not both",
                ));
            }
            (Some(r), None) => LoopShape::Circle { radius_m: r },
            (None, Some(s)) => LoopShape::Square { side_m: s },
            (None, None) => {
                return Err(bad(
                    "loop_radius_m",
                    "a loop type was given without its size: set loop_radius_m or loop_side_m",
                ));
            }
        };
        let tx_turns = positive("tx_turns", self.tx_turns)?.unwrap_or(1.0);
        let current_a = positive("current_a", self.current_a)?.unwrap_or(1.0);
        let rx_area = positive("rx_area_m2", self.rx_area_m2)?;
        let rx_turns = positive("rx_turns", self.rx_turns)?;
        let offset = positive("tx_rx_offset_m", self.tx_rx_offset_m)?;
        let loop_type = match (self.loop_type, offset) {
            (Some(t), _) => t,
            (None, Some(_)) => LoopType::Offset,
            (None, None) => {
                notes.push(
                    "tdem_params.loop_type not given: a central-loop receiver assumed".into(),
                );
                LoopType::Central
            }
        };
        let receiver = match loop_type {
            LoopType::Central => Receiver::Central {
                area_m2: rx_area.unwrap_or(1.0),
                turns: rx_turns.unwrap_or(1.0),
            },
            LoopType::Coincident => Receiver::Coincident {
                turns: rx_turns.unwrap_or(tx_turns),
            },
            LoopType::Offset => Receiver::Offset {
                offset_m: offset.ok_or_else(|| {
                    bad("tx_rx_offset_m", "an offset receiver needs its offset in m")
                })?,
                area_m2: rx_area.unwrap_or(1.0),
                turns: rx_turns.unwrap_or(1.0),
            },
        };
        if rx_area.is_none() && loop_type != LoopType::Coincident {
            let unit = self.unit.as_deref().and_then(parse_unit);
            if unit.is_none() || unit == Some(ResponseUnit::VoltPerAmp) {
                notes.push(
                    "tdem_params.rx_area_m2 not given: a receiver coil of 1 m² (one turn) assumed; it scales data in V/A"
                        .into(),
                );
            }
        }
        let tx_height_m = non_negative("height_m", self.height_m)?.unwrap_or(0.0);
        let rx_height_m = non_negative("rx_height_m", self.rx_height_m)?.unwrap_or(tx_height_m);
        let ramp = non_negative("ramp_s", self.ramp_s)?;
        let kind = self.waveform.unwrap_or(if ramp.is_some_and(|r| r > 0.0) {
            WaveformKind::LinearRamp
        } else {
            WaveformKind::StepOff
        });
        let waveform = match kind {
            WaveformKind::StepOff => Waveform::StepOff,
            WaveformKind::LinearRamp => Waveform::LinearRamp {
                ramp_s: ramp
                    .ok_or_else(|| bad("ramp_s", "a linear ramp needs its duration in s"))?,
            },
            WaveformKind::PiecewiseLinear => {
                match (&self.waveform_time_s, &self.waveform_current) {
                    (Some(t), Some(c)) if t.len() == c.len() && t.len() >= 2 => {
                        Waveform::PiecewiseLinear {
                            time_s: t.clone(),
                            current: c.clone(),
                        }
                    }
                    _ => {
                        return Err(bad(
                            "waveform_time_s",
                            "a piecewise-linear turn-off needs waveform_time_s and waveform_current of equal length (at least 2 points)",
                        ));
                    }
                }
            }
        };
        Ok(Some((
            TemSystem {
                transmitter,
                tx_turns,
                current_a,
                receiver,
                tx_height_m,
                rx_height_m,
                waveform,
            },
            notes,
        )))
    }

    /// Reader options: the table unit, when given.
    pub fn read_options(&self) -> Result<ReadOptions, ParamsError> {
        let unit = match &self.unit {
            None => None,
            Some(u) => Some(parse_unit(u).ok_or_else(|| {
                bad(
                    "unit",
                    format!(
                        "'{u}' is not a unit this reader knows: use V/A, V/(A·m²), V/(A·m⁴) or T/A"
                    ),
                )
            })?),
        };
        Ok(ReadOptions {
            unit,
            ..ReadOptions::default()
        })
    }

    /// The inversion settings (the lateral factor is decided by the caller, see
    /// [`TdemParams::lateral`]), with notes on the defaults used.
    pub fn survey_settings(&self) -> Result<(SurveySettings, Vec<String>), ParamsError> {
        let mut notes = Vec::new();
        let d = SmoothSettings::default();
        let floor = positive("error_floor", self.error_floor)?;
        if floor.is_none() {
            notes.push(format!(
                "error floor {:.0} % of each value (default; tdem_params.error_floor)",
                100.0 * d.error_floor
            ));
        }
        if let Some(f) = floor
            && f >= 1.0
        {
            return Err(bad(
                "error_floor",
                format!("is a fraction of each value (0.03 = 3 %), found {f}"),
            ));
        }
        let n_layers = self.n_layers.unwrap_or(d.n_layers);
        if !(2..=200).contains(&n_layers) {
            return Err(bad(
                "n_layers",
                format!("must be 2 to 200, found {n_layers}"),
            ));
        }
        if let Some(k) = self.few_layers
            && !(1..=10).contains(&k)
        {
            return Err(bad("few_layers", format!("must be 1 to 10, found {k}")));
        }
        let lambda_mode = match positive("lambda", self.lambda)? {
            Some(lambda) => LambdaMode::Fixed { lambda },
            None => LambdaMode::Occam,
        };
        let rho_lo = positive("rho_min_ohm_m", self.rho_min_ohm_m)?.unwrap_or(d.rho_bounds_ohm_m.0);
        let rho_hi = positive("rho_max_ohm_m", self.rho_max_ohm_m)?.unwrap_or(d.rho_bounds_ohm_m.1);
        if rho_lo >= rho_hi {
            return Err(bad(
                "rho_max_ohm_m",
                format!("must exceed rho_min_ohm_m ({rho_lo} ≥ {rho_hi})"),
            ));
        }
        let first = positive("first_thickness_m", self.first_thickness_m)?;
        let bottom = positive("bottom_depth_m", self.bottom_depth_m)?;
        if let (Some(f), Some(b)) = (first, bottom)
            && f >= b
        {
            return Err(bad(
                "bottom_depth_m",
                format!("must exceed first_thickness_m ({b} ≤ {f})"),
            ));
        }
        let smooth = SmoothSettings {
            n_layers,
            first_thickness_m: first,
            bottom_depth_m: bottom,
            error_floor: floor.unwrap_or(d.error_floor),
            target_chi2: positive("target_chi2", self.target_chi2)?.unwrap_or(d.target_chi2),
            max_iterations: self.max_iterations.unwrap_or(d.max_iterations).max(1),
            lambda_mode,
            rho_bounds_ohm_m: (rho_lo, rho_hi),
            doi_threshold: positive("doi_threshold", self.doi_threshold)?
                .unwrap_or(d.doi_threshold),
            ..d
        };
        Ok((
            SurveySettings {
                smooth,
                few_layers: self.few_layers,
                lateral_factor: None,
                system: None,
                accurate_filters: self.accurate_filters,
            },
            notes,
        ))
    }

    /// Whether to constrain a line laterally, and κ: the setting when given, otherwise yes
    /// when at least 3 soundings have along-line distances and their median spacing is
    /// below `max_spacing_m` (soundings farther apart than the depth they see share no
    /// ground). Returns (κ or `None`, the reason).
    pub fn lateral(
        &self,
        distances_m: &[Option<f64>],
        max_spacing_m: f64,
    ) -> Result<(Option<f64>, String), ParamsError> {
        let kappa = positive("lateral_factor", self.lateral_factor)?.unwrap_or(1.0);
        let known: Vec<f64> = distances_m.iter().flatten().copied().collect();
        match self.lateral_constraints {
            Some(true) if distances_m.len() >= 2 => Ok((
                Some(kappa),
                format!(
                    "laterally constrained line inversion (κ = {kappa}, tdem_params.lateral_constraints)"
                ),
            )),
            Some(true) => Ok((
                None,
                "lateral constraints asked for, but the file has a single sounding".into(),
            )),
            Some(false) => Ok((
                None,
                "soundings inverted one by one (tdem_params.lateral_constraints = false)".into(),
            )),
            None => {
                if distances_m.len() < 3 || known.len() < distances_m.len() {
                    return Ok((
                        None,
                        if distances_m.len() < 3 {
                            format!("{} sounding(s): inverted one by one", distances_m.len())
                        } else {
                            "soundings inverted one by one: not every sounding has an along-line distance".into()
                        },
                    ));
                }
                let mut spacing: Vec<f64> = known.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
                spacing.sort_by(f64::total_cmp);
                let median = spacing[spacing.len() / 2];
                if median <= max_spacing_m {
                    Ok((
                        Some(kappa),
                        format!(
                            "laterally constrained line inversion (κ = {kappa}): the median spacing {median:.0} m is within the {max_spacing_m:.0} m the soundings see (default; tdem_params.lateral_constraints)"
                        ),
                    ))
                } else {
                    Ok((
                        None,
                        format!(
                            "soundings inverted one by one: the median spacing {median:.0} m exceeds the {max_spacing_m:.0} m they see, so neighbours share no ground (default; tdem_params.lateral_constraints)"
                        ),
                    ))
                }
            }
        }
    }

    /// Map settings.
    pub fn map_settings(&self) -> Result<MapSettings, ParamsError> {
        let d = MapSettings::default();
        let cells = self.map_cells.unwrap_or(d.cells);
        if !(4..=400).contains(&cells) {
            return Err(bad("map_cells", format!("must be 4 to 400, found {cells}")));
        }
        Ok(MapSettings {
            model: self.variogram.unwrap_or(d.model),
            cells,
            ..d
        })
    }

    /// The map depths when given (each positive).
    pub fn map_depths(&self) -> Result<Option<Vec<f64>>, ParamsError> {
        match &self.map_depths_m {
            None => Ok(None),
            Some(v) if v.is_empty() => Err(bad(
                "map_depths_m",
                "is empty: give at least one depth in m",
            )),
            Some(v) => {
                for z in v {
                    positive("map_depths_m", Some(*z))?;
                }
                Ok(Some(v.clone()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_central_loop_is_built_from_radius_with_stated_defaults() {
        let p: TdemParams = serde_json::from_value(serde_json::json!({
            "loop_radius_m": 20.0, "unit": "V/(A·m²)"
        }))
        .unwrap();
        let (sys, notes) = p.system().unwrap().unwrap();
        assert_eq!(sys, TemSystem::central_loop(20.0));
        assert!(
            notes.iter().any(|n| n.contains("central-loop")),
            "{notes:?}"
        );
        // dB/dt data do not depend on the coil area: no note about it.
        assert!(!notes.iter().any(|n| n.contains("rx_area_m2")));
        assert_eq!(
            p.read_options().unwrap().unit,
            Some(ResponseUnit::VoltPerAmpM2)
        );
    }

    #[test]
    fn coincident_offset_and_ramps_are_read() {
        let p: TdemParams = serde_json::from_value(serde_json::json!({
            "loop_type": "coincident", "loop_side_m": 50.0, "tx_turns": 2.0, "ramp_s": 5e-6
        }))
        .unwrap();
        let (sys, _) = p.system().unwrap().unwrap();
        assert_eq!(sys.transmitter, LoopShape::Square { side_m: 50.0 });
        assert_eq!(sys.receiver, Receiver::Coincident { turns: 2.0 });
        assert_eq!(sys.waveform, Waveform::LinearRamp { ramp_s: 5e-6 });
        let p: TdemParams = serde_json::from_value(serde_json::json!({
            "loop_radius_m": 10.0, "tx_rx_offset_m": 30.0, "height_m": 30.0
        }))
        .unwrap();
        let (sys, _) = p.system().unwrap().unwrap();
        assert!(matches!(sys.receiver, Receiver::Offset { offset_m, .. } if offset_m == 30.0));
        assert_eq!(sys.rx_height_m, 30.0);
    }

    #[test]
    fn unknown_keys_and_bad_values_are_errors_naming_the_key() {
        let e = serde_json::from_value::<TdemParams>(serde_json::json!({"loop_radius": 20}))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("loop_radius") && e.contains("loop_radius_m"),
            "{e}"
        );
        let p = TdemParams {
            loop_radius_m: Some(-3.0),
            ..TdemParams::default()
        };
        assert_eq!(p.system().unwrap_err().key, "loop_radius_m");
        let p = TdemParams {
            unit: Some("furlongs".into()),
            ..TdemParams::default()
        };
        assert!(
            p.read_options()
                .unwrap_err()
                .to_string()
                .contains("furlongs")
        );
        let p = TdemParams {
            error_floor: Some(3.0),
            ..TdemParams::default()
        };
        assert_eq!(p.survey_settings().unwrap_err().key, "error_floor");
        assert!(TdemParams::default().system().unwrap().is_none());
    }

    #[test]
    fn units_are_parsed_in_the_usual_spellings() {
        for (s, u) in [
            ("V/A", ResponseUnit::VoltPerAmp),
            ("v_per_a_m2", ResponseUnit::VoltPerAmpM2),
            ("V/(A m^2)", ResponseUnit::VoltPerAmpM2),
            ("T/s", ResponseUnit::VoltPerAmpM2),
            ("V/(A·m⁴)", ResponseUnit::VoltPerAmpM4),
            ("T/A", ResponseUnit::TeslaPerAmp),
        ] {
            assert_eq!(parse_unit(s), Some(u), "{s}");
        }
        assert_eq!(parse_unit("ohm"), None);
    }

    #[test]
    fn lateral_constraints_follow_the_spacing_unless_set() {
        let p = TdemParams::default();
        let d = [Some(10.0), Some(30.0), Some(50.0)];
        let (k, why) = p.lateral(&d, 100.0).unwrap();
        assert_eq!(k, Some(1.0), "{why}");
        // SkyTEM BHMAR: 12 km spacing, a few hundred metres of depth: one by one.
        let far = [Some(0.0), Some(12000.0), Some(24000.0)];
        assert_eq!(p.lateral(&far, 400.0).unwrap().0, None);
        let forced = TdemParams {
            lateral_constraints: Some(true),
            lateral_factor: Some(0.1),
            ..p
        };
        assert_eq!(forced.lateral(&far, 400.0).unwrap().0, Some(0.1));
    }
}

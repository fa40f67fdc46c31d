//! TDEM soundings as read from files: gate times, values with their unit, errors, the
//! system that recorded them (when the file says), which gates are usable and why the
//! others are not.

use super::analytic;
use super::forward::{Quantity, Receiver, TemSystem};
use serde::{Deserialize, Serialize};

/// The unit of a sounding's values. Every unit is per ampere of transmitter current.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseUnit {
    /// Receiver voltage over current, V/A (TEM-FAST E/I, USF `V/AMP`).
    VoltPerAmp,
    /// dB/dt per ampere, V/(A·m²) = T/(s·A): the voltage divided by the receiver's
    /// effective area (SimPEG's dB/dt for 1 A, USF `V/AM2`).
    VoltPerAmpM2,
    /// dB/dt per unit transmitter moment, V/(A·m⁴): divided by the receiver's effective area
    /// and the transmitter's effective area (airborne systems, e.g. SkyTEM exports).
    VoltPerAmpM4,
    /// The step-off field B per ampere, T/A.
    TeslaPerAmp,
}

impl ResponseUnit {
    /// The unit as written in a table header.
    pub fn label(self) -> &'static str {
        match self {
            ResponseUnit::VoltPerAmp => "V/A",
            ResponseUnit::VoltPerAmpM2 => "V/(A·m²)",
            ResponseUnit::VoltPerAmpM4 => "V/(A·m⁴)",
            ResponseUnit::TeslaPerAmp => "T/A",
        }
    }

    /// The quantity the unit belongs to.
    pub fn quantity(self) -> Quantity {
        match self {
            ResponseUnit::TeslaPerAmp => Quantity::B,
            _ => Quantity::DbDt,
        }
    }

    /// The factor that turns the forward model's natural output (see
    /// [`Quantity`]: per ampere, one transmitter turn, a point receiver of unit area or the
    /// flux through a coincident loop) into this unit for `system`.
    pub fn scale_from_model(self, system: &TemSystem) -> f64 {
        let n_tx = system.tx_turns;
        let a_tx = system.transmitter.area_m2();
        match system.receiver {
            Receiver::Central { area_m2, turns } | Receiver::Offset { area_m2, turns, .. } => {
                match self {
                    ResponseUnit::VoltPerAmp => n_tx * area_m2 * turns,
                    ResponseUnit::VoltPerAmpM2 | ResponseUnit::TeslaPerAmp => n_tx,
                    ResponseUnit::VoltPerAmpM4 => 1.0 / a_tx,
                }
            }
            // The model gives the flux (or voltage) of one turn through the loop area A.
            Receiver::Coincident { turns } => match self {
                ResponseUnit::VoltPerAmp => n_tx * turns,
                ResponseUnit::VoltPerAmpM2 | ResponseUnit::TeslaPerAmp => n_tx / a_tx,
                ResponseUnit::VoltPerAmpM4 => 1.0 / (a_tx * a_tx),
            },
        }
    }
}

/// Why a gate is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaskReason {
    /// Zero, negative or not a number: below the noise or a sign change.
    NonPositive,
    /// Part of a run of identical early values: the receiver was saturated.
    Saturated,
    /// Early gates that rise instead of decay (transmitter ramp or receiver recovery).
    RisingEarlyGate,
    /// Late gates below the noise floor (relative error above the limit, after the first
    /// non-positive value, or a flattened tail).
    NoiseFloor,
    /// The gate lies inside the transmitter turn-off.
    InsideRamp,
    /// Left out by the user.
    UserExcluded,
}

impl MaskReason {
    /// Snake-case key for summaries.
    pub fn key(self) -> &'static str {
        match self {
            MaskReason::NonPositive => "non_positive",
            MaskReason::Saturated => "saturated",
            MaskReason::RisingEarlyGate => "rising_early_gate",
            MaskReason::NoiseFloor => "noise_floor",
            MaskReason::InsideRamp => "inside_ramp",
            MaskReason::UserExcluded => "user_excluded",
        }
    }
}

/// Where a sounding was taken.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Position {
    /// Easting [m] (projected coordinates as given).
    pub easting_m: Option<f64>,
    /// Northing [m].
    pub northing_m: Option<f64>,
    /// Ground elevation [m].
    pub elevation_m: Option<f64>,
    /// Distance along the line [m].
    pub distance_m: Option<f64>,
    /// Sensor altitude above ground [m] (airborne).
    pub altitude_m: Option<f64>,
}

/// One TDEM sounding (one decay curve).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sounding {
    /// Name or number as the file gives it.
    pub name: String,
    /// Gate centre times [s].
    pub times_s: Vec<f64>,
    /// Values in `unit` (positive decay convention).
    pub values: Vec<f64>,
    /// Standard deviations in `unit`, when the file gives them.
    pub errors: Option<Vec<f64>>,
    /// Unit of `values` and `errors`.
    pub unit: ResponseUnit,
    /// Whether the unit was stated by the file (false: assumed, see `notes`).
    pub unit_stated: bool,
    /// The instrument's own apparent-resistivity column [Ω·m], when the file has one.
    pub instrument_rhoa_ohm_m: Option<Vec<f64>>,
    /// Position, when known.
    pub position: Position,
    /// The system as the file describes it (loop sizes, turns, current, ramp), if it does.
    pub system: Option<TemSystem>,
    /// Per gate: `None` when usable, otherwise why not.
    pub mask: Vec<Option<MaskReason>>,
    /// Number of stacked transients behind each value, when the file says (TEM-FAST
    /// `Stacks`); the diagnosis of a sounding that does not fit uses it.
    #[serde(default)]
    pub stacks: Option<u32>,
    /// What was assumed or detected while reading.
    pub notes: Vec<String>,
}

impl Sounding {
    /// Number of gates.
    pub fn n_gates(&self) -> usize {
        self.times_s.len()
    }

    /// Indices of the usable gates.
    pub fn used_gates(&self) -> Vec<usize> {
        (0..self.n_gates())
            .filter(|&i| self.mask[i].is_none())
            .collect()
    }

    /// How many gates each reason masks, as (key, count), in a fixed order.
    pub fn mask_counts(&self) -> Vec<(&'static str, usize)> {
        let reasons = [
            MaskReason::NonPositive,
            MaskReason::Saturated,
            MaskReason::RisingEarlyGate,
            MaskReason::NoiseFloor,
            MaskReason::InsideRamp,
            MaskReason::UserExcluded,
        ];
        reasons
            .iter()
            .map(|r| {
                (
                    r.key(),
                    self.mask.iter().filter(|m| **m == Some(*r)).count(),
                )
            })
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// Standard deviations with a relative floor: σᵢ = max(errᵢ, floor·|vᵢ|); without file
    /// errors, floor·|vᵢ|.
    pub fn errors_with_floor(&self, floor: f64) -> Vec<f64> {
        self.values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let e = self
                    .errors
                    .as_ref()
                    .and_then(|e| e.get(i).copied())
                    .unwrap_or(0.0);
                e.abs().max(floor * v.abs())
            })
            .collect()
    }

    /// Late-time apparent resistivity of every gate for `system` (`None` where undefined or
    /// for a B-field unit the voltage formula does not apply to); see
    /// [`analytic::late_time_rhoa_from_voltage`].
    pub fn late_time_rhoa(&self, system: &TemSystem) -> Vec<Option<f64>> {
        let a_tx = system.tx_moment_per_a();
        let a_rx = system.rx_effective_area_m2();
        self.times_s
            .iter()
            .zip(&self.values)
            .map(|(&t, &v)| {
                // Convert to V/A for the voltage formula.
                let v_per_a = match self.unit {
                    ResponseUnit::VoltPerAmp => v,
                    ResponseUnit::VoltPerAmpM2 => v * a_rx,
                    ResponseUnit::VoltPerAmpM4 => v * a_rx * a_tx,
                    ResponseUnit::TeslaPerAmp => {
                        return analytic::late_time_rhoa_from_b(t, v, a_tx);
                    }
                };
                analytic::late_time_rhoa_from_voltage(t, v_per_a, a_tx, a_rx)
            })
            .collect()
    }

    /// Recompute the automatic mask (keeping user exclusions) with [`detect_bad_gates`].
    pub fn remask(&mut self, limits: &MaskLimits) {
        let end_off = self
            .system
            .as_ref()
            .map(|s| s.waveform.end_of_turn_off_s())
            .unwrap_or(0.0);
        let auto = detect_bad_gates(
            &self.times_s,
            &self.values,
            self.errors.as_deref(),
            end_off,
            limits,
        );
        for (m, a) in self.mask.iter_mut().zip(auto) {
            if *m != Some(MaskReason::UserExcluded) {
                *m = a;
            }
        }
    }
}

/// Thresholds of the automatic gate mask.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MaskLimits {
    /// Largest relative error (err/|value|) a usable gate may have.
    pub max_relative_error: f64,
    /// Minimum length of a run of identical early values counted as saturation.
    pub min_saturated_run: usize,
    /// Relative tolerance for "identical" values.
    pub saturation_tolerance: f64,
}

impl Default for MaskLimits {
    fn default() -> Self {
        MaskLimits {
            max_relative_error: 0.25,
            min_saturated_run: 3,
            saturation_tolerance: 1e-6,
        }
    }
}

/// The automatic gate mask, in this order:
/// 1. gates inside the turn-off (t ≤ `end_of_turn_off_s`) → [`MaskReason::InsideRamp`];
/// 2. non-finite or ≤ 0 values → [`MaskReason::NonPositive`];
/// 3. a run of at least `min_saturated_run` identical values at the start (after masked
///    gates) → [`MaskReason::Saturated`];
/// 4. early gates before the largest value of the first third of the usable gates, when the
///    curve rises to it → [`MaskReason::RisingEarlyGate`];
/// 5. every gate after the first non-positive value that follows the decay's start, and
///    gates with err/|v| above `max_relative_error` → [`MaskReason::NoiseFloor`].
pub fn detect_bad_gates(
    times_s: &[f64],
    values: &[f64],
    errors: Option<&[f64]>,
    end_of_turn_off_s: f64,
    limits: &MaskLimits,
) -> Vec<Option<MaskReason>> {
    let n = values.len();
    let mut mask: Vec<Option<MaskReason>> = vec![None; n];
    for i in 0..n {
        if times_s
            .get(i)
            .is_none_or(|t| !(t.is_finite() && *t > end_of_turn_off_s))
        {
            mask[i] = Some(MaskReason::InsideRamp);
        } else if !(values[i].is_finite() && values[i] > 0.0) {
            mask[i] = Some(MaskReason::NonPositive);
        }
    }
    // 3. Saturation: identical values at the start of the usable gates.
    if let Some(first) = (0..n).find(|&i| mask[i].is_none()) {
        let v0 = values[first];
        let run_end = (first..n)
            .take_while(|&i| {
                mask[i].is_none() && ((values[i] - v0) / v0).abs() <= limits.saturation_tolerance
            })
            .last()
            .unwrap_or(first);
        if run_end + 1 - first >= limits.min_saturated_run {
            for m in mask.iter_mut().take(run_end + 1).skip(first) {
                *m = Some(MaskReason::Saturated);
            }
        }
    }
    // 4. Rising early gates: mask everything before the maximum of the first third.
    let usable: Vec<usize> = (0..n).filter(|&i| mask[i].is_none()).collect();
    if usable.len() >= 3 {
        let third = &usable[..usable.len().div_ceil(3)];
        let peak =
            third.iter().copied().fold(
                third[0],
                |best, i| if values[i] > values[best] { i } else { best },
            );
        for &i in usable.iter().take_while(|&&i| i < peak) {
            mask[i] = Some(MaskReason::RisingEarlyGate);
        }
    }
    // 5. Noise floor: after the first non-positive value past the first usable gate.
    if let Some(first_ok) = (0..n).find(|&i| mask[i].is_none())
        && let Some(first_bad) = (first_ok..n).find(|&i| mask[i] == Some(MaskReason::NonPositive))
    {
        for m in mask.iter_mut().skip(first_bad + 1) {
            if m.is_none() {
                *m = Some(MaskReason::NoiseFloor);
            }
        }
    }
    if let Some(err) = errors {
        for i in 0..n {
            if mask[i].is_none()
                && let Some(e) = err.get(i)
                && (e.is_nan() || e.abs() > limits.max_relative_error * values[i].abs())
            {
                mask[i] = Some(MaskReason::NoiseFloor);
            }
        }
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturated_rising_and_noise_gates_are_masked() {
        // A decay with 4 identical (saturated) early values, one rising gate, a noisy gate
        // (err 50 %) and a negative gate followed by two positive ones.
        let t: Vec<f64> = (1..=14).map(|i| i as f64 * 1e-5).collect();
        let v = vec![
            2.0, 2.0, 2.0, 2.0, 0.5, 0.9, 0.6, 0.4, 0.3, 0.2, 0.1, -0.01, 0.02, 0.01,
        ];
        let mut e: Vec<f64> = v.iter().map(|x: &f64| 0.01 * x.abs()).collect();
        e[10] = 0.05;
        let m = detect_bad_gates(&t, &v, Some(&e), 0.0, &MaskLimits::default());
        use MaskReason::*;
        assert_eq!(&m[..4], &[Some(Saturated); 4]);
        assert_eq!(m[4], Some(RisingEarlyGate));
        assert_eq!(&m[5..10], &[None; 5]);
        assert_eq!(m[10], Some(NoiseFloor));
        assert_eq!(m[11], Some(NonPositive));
        assert_eq!(&m[12..], &[Some(NoiseFloor); 2]);
    }

    #[test]
    fn gates_inside_the_ramp_are_masked() {
        let t = [1e-6, 5e-6, 2e-5];
        let m = detect_bad_gates(&t, &[3.0, 2.0, 1.0], None, 1e-5, &MaskLimits::default());
        assert_eq!(
            m,
            vec![
                Some(MaskReason::InsideRamp),
                Some(MaskReason::InsideRamp),
                None
            ]
        );
    }
}

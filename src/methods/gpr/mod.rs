//! Ground-penetrating radar: GSSI DZT, pulseEKKO DT1/HD, MALA rd3/rd7, SEG-Y readers and the
//! processing chain (time zero, dewow, background removal, filters, gains, migration).

pub mod bandpass;
mod bin;
pub mod dt1;
pub mod dzt;
pub mod filters;
pub mod line;
pub mod migration;
pub mod timezero;
pub mod velocity;

pub use line::{GprError, GprFormat, GprLine, SPEED_OF_LIGHT_M_PER_NS, SurveyKind};

/// Ricker wavelet (the negative normalised second derivative of a Gaussian) of peak
/// frequency `f_ghz` at time `t_ns`: `r(t) = (1 − 2π²f²t²)·exp(−π²f²t²)` (Ricker 1953),
/// 1 at t = 0. Used for synthetic sections.
pub fn ricker(t_ns: f64, f_ghz: f64) -> f64 {
    let a = (std::f64::consts::PI * f_ghz * t_ns).powi(2);
    (1.0 - 2.0 * a) * (-a).exp()
}

#[cfg(test)]
mod field_tests;

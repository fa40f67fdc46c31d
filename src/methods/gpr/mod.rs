//! Ground-penetrating radar: GSSI DZT, pulseEKKO DT1/HD, MALA rd3/rd7, SEG-Y readers and the
//! processing chain (time zero, dewow, background removal, filters, gains, migration).

pub mod bandpass;
mod bin;
pub mod dt1;
pub mod dzt;
pub mod filters;
pub mod line;

pub use line::{GprError, GprFormat, GprLine, SPEED_OF_LIGHT_M_PER_NS, SurveyKind};

#[cfg(test)]
mod field_tests;

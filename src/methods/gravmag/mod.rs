//! Gravity and magnetics: station tables, regional/residual separation, gridding, prism
//! forward models, and the 3D linear inversion.
//!
//! Conventions throughout: x east, y north, z **up**, metres; gravity in mGal with `gz`
//! **positive down** (a dense body gives a positive anomaly); magnetics in nT as the
//! total-field anomaly projected on the inducing field; density contrast in kg/m³,
//! susceptibility in SI.

pub mod kind;
pub mod prism;
pub mod projection;
pub mod stations;
pub mod trend;

/// Why a gravity/magnetics computation could not be done.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GravMagError {
    /// The input does not allow the computation (too few points, bad parameter, …).
    #[error("{0}")]
    InvalidInput(String),
    /// A linear-algebra step failed (singular system, failed decomposition).
    #[error("numerical failure: {0}")]
    Numerical(String),
    /// The user cancelled a long computation.
    #[error("cancelled by the user")]
    Cancelled,
}

//! The science, one folder per method: readers and writers, forward models, inversions,
//! quality. Pure functions over ndarray arrays; nothing here knows about the runtime, the
//! model or the window.

pub mod depth;
pub mod ert;
pub mod gpr;
pub mod gravmag;
pub mod hydro;
pub mod io;
pub mod mt;
pub mod oscillation;
pub mod petro;
pub mod quality;
pub mod residuals;
pub mod seismic;
pub mod shared;
pub mod simd;
pub mod sounding_depth;
pub mod tdem;
pub mod truncated;

//! Time-domain electromagnetics: sounding files, the 1D layered-earth forward model
//! (Hankel and sine/cosine digital filters), Occam and few-layer inversions.

pub mod analytic;
pub mod filters;
pub mod forward;
pub mod special;

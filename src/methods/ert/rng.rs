//! The seeded generator of the ERT examples and tests: [`crate::methods::shared::rng`]'s
//! (one implementation for every method).

pub use crate::methods::shared::rng::*;

//! What several methods need and each once: checked binary field reads, SEG-Y's IBM floats,
//! sample formats and textual headers, a seeded
//! random number generator, medians, the lookup of a table's columns by name, and the record
//! of one inversion iteration.

pub(crate) mod bytes;
pub mod columns;
pub mod iteration;
pub mod rng;
pub mod segy;
pub mod stats;

pub use iteration::IterationRecord;
pub use rng::SplitMix64;

//! HydroGeo Studio: hydrogeophysical field data to an honest written report.
//!
//! Layers (one-way dependencies, see DESIGN.md): `studio → catalog → {methods, runtime,
//! report, llm}`; `runtime` and `methods` depend on nothing of ours.

pub mod catalog;
pub mod example;
/// The one way tests find `../shared` (test support, not the product's API: the file lives
/// with the integration tests' support, and integration tests and benches include it the
/// same way).
#[cfg(test)]
#[path = "../tests/support/field_data.rs"]
pub mod field_data;
pub mod llm;
pub mod methods;
pub mod report;
pub mod runtime;
pub mod studio;

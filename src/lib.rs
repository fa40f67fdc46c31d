//! HydroGeo Studio: hydrogeophysical field data to an honest written report.
//!
//! Layers (one-way dependencies, see DESIGN.md): `studio → catalog → {methods, runtime,
//! report, llm}`; `runtime` and `methods` depend on nothing of ours.

pub mod catalog;
pub mod example;
pub mod field_data;
pub mod llm;
pub mod methods;
pub mod report;
pub mod runtime;
pub mod studio;

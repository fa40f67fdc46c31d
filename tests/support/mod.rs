//! Shared helpers for the integration tests.

pub mod answers;
pub mod cli;
pub mod model_server;
pub mod scenario;

//! The tools: each wraps method functions as a runtime tool, one file per method,
//! registered in dependency order (which is also the order a run without a model follows).

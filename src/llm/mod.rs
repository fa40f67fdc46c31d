//! llm

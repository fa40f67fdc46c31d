//! What a run may change on its own, as the tools declare it: the settings a recovery (or a
//! note, or a proposal) may change, and the coordinate tables a generated reader may be
//! written for. The runtime names none of them; each tool declares its own
//! ([`super::Tool::adjusts`], [`super::Tool::adapts`]) and the registry gathers them.

/// A table input a generated reader may be written for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRole {
    /// The input role (a key ending in `_file`).
    pub role: String,
    /// The columns the rewritten table must have.
    pub columns: usize,
    /// What the columns hold, for the model writing the reader ("3 columns: …").
    pub meaning: String,
}

/// The allow-lists of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryRules {
    /// Configuration keys that may change mid-run: each a number or a switch between
    /// behaviours already implemented. Never an input role.
    pub settings: Vec<String>,
    /// Coordinate tables a generated reader may stand in for.
    pub tables: Vec<TableRole>,
}

impl RecoveryRules {
    /// Whether `key` may be changed mid-run.
    pub fn allows(&self, key: &str) -> bool {
        self.settings.iter().any(|k| k == key)
    }

    /// The table role `role`, when a reader may be written for it.
    pub fn table(&self, role: &str) -> Option<&TableRole> {
        self.tables.iter().find(|t| t.role == role)
    }
}

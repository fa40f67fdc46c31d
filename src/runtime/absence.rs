//! "Looked and found nothing" as a value of its own (seed 004): what was looked for, the ground
//! searched, the ground not searched and the ground no question to the tool could reach, a
//! suggestion (a sentence, and another tool as data) — and a fixed note that a retry returns
//! the same. A tool that could not look returns an error; the two never share a shape.

use serde::Serialize;
use serde_json::{Value, json};

/// The fixed note every absence carries. Never interpolated: nothing of the caller's is in it.
pub const ABSENCE_NOTE: &str = "The search ran and matched nothing. This is an answer, not an error: nothing failed, nothing was substituted for what was asked, and calling this tool again with the same arguments returns this same result. `checked` is the ground this answer covers; anything under `not_checked` or `cannot_cover` is ground it does not cover, and reaching that needs a different question, not a retry.";

/// "Looked and found nothing", with the ground covered (seed 004, `absent`).
///
/// The fields are private: the only way to make one is [`Absence::new`], which refuses an
/// absence that cannot say what it looked for or names no ground it searched — such a value
/// would be a null with extra steps, and a reader could not tell "I looked and there is
/// nothing" from "I could not look". A tool that could not look returns an error instead.
///
/// Built any other way, it does not compile:
///
/// ```compile_fail,E0451
/// use hydrogeo_studio::runtime::absence::Absence;
/// let nothing = Absence {
///     looked_for: String::new(),
///     checked: vec![],
///     not_checked: vec![],
///     cannot_cover: vec![],
///     try_instead: None,
///     try_instead_tool: None,
/// };
/// ```
///
/// ```
/// use hydrogeo_studio::runtime::absence::Absence;
/// assert!(Absence::new("", ["the project folder".to_string()]).is_err());
/// assert!(Absence::new("EDI files", Vec::<String>::new()).is_err());
/// ```
///
/// It is serialised but never deserialised: reading one from JSON would go round `new`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Absence {
    /// What kind of thing was looked for — in the tool's words, never the caller's.
    looked_for: String,
    /// The ground that was searched (never empty).
    checked: Vec<String>,
    /// Ground this search left out that another question could reach.
    not_checked: Vec<String>,
    /// Ground no question to this tool can reach (what it has no way to see).
    cannot_cover: Vec<String>,
    /// A sentence suggesting another question or tool, for the model.
    try_instead: Option<String>,
    /// The other tool to try, as data (never parsed out of the sentence).
    try_instead_tool: Option<TryInsteadTool>,
}

/// The other tool an absence suggests: its registered name and, optionally, why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TryInsteadTool {
    /// The tool's name, as registered (recorded as given, never looked up).
    pub tool: String,
    /// Why that tool, when said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// Why an absence could not be made: the tool could not say what it did not find.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AbsenceError {
    /// `what` was empty.
    #[error(
        "an absence must say what was looked for; one that cannot name what it did not find is indistinguishable from a tool that returned nothing by accident"
    )]
    NoWhat,
    /// `checked` named nothing.
    #[error(
        "'{0}': an absence must name at least one source that was searched; with no coverage it cannot be told from a tool that could not look, which is an error"
    )]
    NothingChecked(String),
    /// The typed tool suggestion had no name.
    #[error("'{0}': a tool to try instead must be named")]
    UnnamedTool(String),
}

/// The trimmed, non-empty entries of a coverage list, in order, without repeats.
fn coverage(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let item = item.trim().to_string();
        if !item.is_empty() && !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

impl Absence {
    /// An absence of `what`, having searched `checked`; refused without either.
    pub fn new(
        what: impl Into<String>,
        checked: impl IntoIterator<Item = String>,
    ) -> Result<Absence, AbsenceError> {
        let what = what.into().trim().to_string();
        if what.is_empty() {
            return Err(AbsenceError::NoWhat);
        }
        let checked = coverage(checked);
        if checked.is_empty() {
            return Err(AbsenceError::NothingChecked(what));
        }
        Ok(Absence {
            looked_for: what,
            checked,
            not_checked: Vec::new(),
            cannot_cover: Vec::new(),
            try_instead: None,
            try_instead_tool: None,
        })
    }

    /// With ground the search left out.
    pub fn not_checked(mut self, items: impl IntoIterator<Item = String>) -> Self {
        self.not_checked = coverage(items);
        self
    }

    /// With ground this tool cannot reach at all.
    pub fn cannot_cover(mut self, items: impl IntoIterator<Item = String>) -> Self {
        self.cannot_cover = coverage(items);
        self
    }

    /// With a sentence for the model (one that trims to nothing is no suggestion).
    pub fn try_instead(mut self, sentence: impl Into<String>) -> Self {
        let s = sentence.into().trim().to_string();
        self.try_instead = (!s.is_empty()).then_some(s);
        self
    }

    /// With another tool to try, by its registered name, and why.
    pub fn try_instead_tool(
        mut self,
        tool: impl Into<String>,
        why: Option<&str>,
    ) -> Result<Self, AbsenceError> {
        let tool = tool.into().trim().to_string();
        if tool.is_empty() {
            return Err(AbsenceError::UnnamedTool(self.looked_for));
        }
        let why = why
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .map(str::to_string);
        self.try_instead_tool = Some(TryInsteadTool { tool, why });
        Ok(self)
    }

    /// What was looked for.
    pub fn looked_for(&self) -> &str {
        &self.looked_for
    }

    /// The ground searched.
    pub fn checked(&self) -> &[String] {
        &self.checked
    }

    /// The tool suggested, if any.
    pub fn suggested_tool(&self) -> Option<&TryInsteadTool> {
        self.try_instead_tool.as_ref()
    }

    /// The JSON an absence is returned as.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "outcome": "nothing_found",
            "looked_for": self.looked_for,
            "checked": self.checked,
            "retry_returns_the_same": true,
            "note": ABSENCE_NOTE,
        });
        if !self.not_checked.is_empty() {
            v["not_checked"] = json!(self.not_checked);
        }
        if !self.cannot_cover.is_empty() {
            v["cannot_cover"] = json!(self.cannot_cover);
        }
        if let Some(t) = &self.try_instead {
            v["try_instead"] = json!(t);
        }
        if let Some(t) = &self.try_instead_tool {
            v["try_instead_tool"] = json!(t);
        }
        v
    }

    /// The absence as one plain sentence, for a record read by people (a step's line).
    pub fn sentence(&self) -> String {
        let mut s = format!(
            "Nothing found: {}. Checked: {}.",
            self.looked_for.trim_end_matches('.'),
            self.checked.join("; ")
        );
        if !self.not_checked.is_empty() {
            s.push_str(&format!(" Not checked: {}.", self.not_checked.join("; ")));
        }
        if !self.cannot_cover.is_empty() {
            s.push_str(&format!(" Cannot cover: {}.", self.cannot_cover.join("; ")));
        }
        if let Some(t) = &self.try_instead {
            s.push_str(&format!(" Try instead: {}.", t.trim_end_matches('.')));
        }
        if let Some(t) = &self.try_instead_tool {
            s.push_str(&format!(" Tool to try: {}", t.tool));
            if let Some(w) = &t.why {
                s.push_str(&format!(" ({w})"));
            }
            s.push('.');
        }
        s
    }
}

//! The questions a goal asks, read from the user's words into a typed list.
//!
//! A goal is split into clauses (at `?`, `;`, newlines and the conjunctions "and", "und",
//! "et" that join questions); each clause is matched against the phrases of each kind below,
//! English first, with a few German and French words. A clause may ask more than one thing
//! ("water table and bedrock depth"); each kind is asked once per goal, with the first clause
//! that asks it as the user's words. Nothing recognised is an empty list, not an error: the
//! report then says which kinds it can answer ([`answerable_kinds`]).

use serde::{Deserialize, Serialize};

/// What a question asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionKind {
    /// Depth of the water table (groundwater level) below ground, m.
    WaterTableDepth,
    /// Depth to bedrock or to an interface along the line, m.
    BedrockDepth,
    /// Where and how much a property changed between surveys (time-lapse).
    Change,
    /// Water content or saturation at depth or per layer, m³/m³.
    WaterContent,
    /// A spatial distribution / map of a property.
    Map,
    /// Whether something (a body, a conductor, a plume) is present under a place.
    Presence,
}

impl QuestionKind {
    /// Every kind, in the order the report lists them.
    pub const ALL: [QuestionKind; 6] = [
        QuestionKind::WaterTableDepth,
        QuestionKind::BedrockDepth,
        QuestionKind::Change,
        QuestionKind::WaterContent,
        QuestionKind::Map,
        QuestionKind::Presence,
    ];

    /// The word `result.json` uses (`water_table_depth`, `bedrock_depth`, …).
    pub fn word(self) -> &'static str {
        match self {
            QuestionKind::WaterTableDepth => "water_table_depth",
            QuestionKind::BedrockDepth => "bedrock_depth",
            QuestionKind::Change => "change",
            QuestionKind::WaterContent => "water_content",
            QuestionKind::Map => "map",
            QuestionKind::Presence => "presence",
        }
    }

    /// How the report names it, with an example of how a user may ask it.
    pub fn described(self) -> &'static str {
        match self {
            QuestionKind::WaterTableDepth => {
                "the depth of the water table (\"Where is the water table?\")"
            }
            QuestionKind::BedrockDepth => {
                "the depth to bedrock or an interface along the line (\"How deep is the bedrock?\")"
            }
            QuestionKind::Change => {
                "where and how much the ground changed between surveys (\"How did the plume change?\")"
            }
            QuestionKind::WaterContent => {
                "the water content at depth or per layer (\"What is the water content?\")"
            }
            QuestionKind::Map => "a plan-view map of a property (\"Map the resistivity\")",
            QuestionKind::Presence => {
                "whether something lies under a place (\"Is there a conductor under the road?\")"
            }
        }
    }

    /// The phrases (lower case) that ask for this kind.
    fn phrases(self) -> &'static [&'static str] {
        match self {
            QuestionKind::WaterTableDepth => &[
                "water table",
                "water-table",
                "watertable",
                "groundwater level",
                "groundwater table",
                "ground water level",
                "depth to water",
                "depth to groundwater",
                "phreatic",
                "grundwasserspiegel",
                "grundwasserstand",
                "grundwasseroberfläche",
                "nappe phréatique",
                "nappe phreatique",
                "niveau de la nappe",
                "niveau piézométrique",
            ],
            QuestionKind::BedrockDepth => &[
                "bedrock",
                "bed rock",
                "depth to rock",
                "basement",
                "depth of the interface",
                "depth to the interface",
                "interface depth",
                "how deep is the rock",
                "felsoberkante",
                "grundgebirge",
                "festgestein",
                "substratum",
                "socle",
                "roche mère",
            ],
            QuestionKind::Change => &[
                "change",
                "changed",
                "time-lapse",
                "time lapse",
                "timelapse",
                "evolve",
                "evolution",
                "grow",
                "shrink",
                "between surveys",
                "over time",
                "veränder",
                "änderung",
                "changement",
                "évolu",
            ],
            QuestionKind::WaterContent => &[
                "water content",
                "water-content",
                "moisture",
                "saturation",
                "soil water",
                "wassergehalt",
                "bodenfeuchte",
                "sättigung",
                "teneur en eau",
                "humidité",
            ],
            QuestionKind::Map => &[
                "map of",
                "maps of",
                "map the",
                "plan view",
                "plan-view",
                "spatial distribution",
                "spatial map",
                "karte",
                "carte",
            ],
            QuestionKind::Presence => &[
                "is there",
                "are there",
                "any sign of",
                "gibt es",
                "y a-t-il",
                "existe-t-il",
            ],
        }
    }
}

/// One question a goal asks: its kind and the user's words for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// What it asks for.
    pub kind: QuestionKind,
    /// The clause of the goal that asks it, as the user wrote it.
    pub words: String,
    /// A depth the question names ("at 5 m"), m.
    pub at_depth_m: Option<f64>,
}

/// The clauses of a goal: split at question marks, semicolons, newlines, and the words
/// that join two questions.
fn clauses(goal: &str) -> Vec<String> {
    let mut out = Vec::new();
    // A full stop ends a clause only before a space or at the end ("2.5 m" stays whole).
    let goal = goal.replace(". ", "\n");
    for part in goal.trim_end_matches('.').split(['?', ';', '\n']) {
        let mut rest = part.trim();
        loop {
            let lower = rest.to_lowercase();
            let cut = [", and ", " and ", ", und ", " und ", ", et ", " et "]
                .iter()
                .filter_map(|j| lower.find(j).map(|i| (i, j.len())))
                .min();
            match cut {
                // Byte offsets of the lower-cased text match the original only when
                // lower-casing kept every byte length; otherwise keep the clause whole.
                Some((i, n)) if lower.len() == rest.len() => {
                    out.push(rest[..i].trim().to_string());
                    rest = rest[i + n..].trim();
                }
                _ => {
                    out.push(rest.trim().to_string());
                    break;
                }
            }
        }
    }
    out.into_iter()
        .flat_map(|c| split_at_question_words(&c))
        .map(|c| c.trim_matches([',', ' ']).to_string())
        .filter(|c| !c.is_empty())
        .collect()
}

/// Words that start a new question after a comma.
const QUESTION_WORDS: &[&str] = &[
    "how", "what", "where", "when", "which", "is", "are", "does", "did", "wie", "was", "wo",
    "gibt", "comment", "où", "quel", "quelle", "est-ce",
];

/// A clause split at each comma followed by a question word ("…, how did …").
fn split_at_question_words(clause: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for (i, part) in clause.split(',').enumerate() {
        let first = part.split_whitespace().next().unwrap_or("").to_lowercase();
        if i > 0 && QUESTION_WORDS.contains(&first.as_str()) {
            out.push(part.to_string());
        } else if let Some(last) = out.last_mut() {
            if i > 0 {
                last.push(',');
            }
            last.push_str(part);
        }
    }
    out
}

/// A depth named in a clause ("at 5 m", "at 2.5 m depth", "in 3m"), m.
fn depth_named(clause: &str) -> Option<f64> {
    let words: Vec<String> = clause
        .split_whitespace()
        .map(|w| w.trim_end_matches([',', '?', '!']).to_lowercase())
        .collect();
    (0..words.len().saturating_sub(1)).find_map(|i| {
        let prep = matches!(words[i].as_str(), "at" | "in" | "bei" | "à" | "a");
        let w = &words[i + 1];
        let unit = w.ends_with('m') || words.get(i + 2).is_some_and(|u| u == "m");
        let value = w
            .trim_end_matches('m')
            .replace(',', ".")
            .parse::<f64>()
            .ok();
        if prep && unit { value } else { None }
    })
}

/// The questions `goal` asks, one per kind, in the order the goal asks them.
pub fn questions(goal: &str) -> Vec<Question> {
    let mut out: Vec<Question> = Vec::new();
    for clause in clauses(goal) {
        let lower = clause.to_lowercase();
        for kind in QuestionKind::ALL {
            if out.iter().any(|q| q.kind == kind) {
                continue;
            }
            if kind.phrases().iter().any(|p| lower.contains(p)) {
                out.push(Question {
                    kind,
                    words: clause.clone(),
                    at_depth_m: depth_named(&clause),
                });
            }
        }
    }
    out
}

/// The kinds of question this version can answer, in words, for a goal that asked none.
pub fn answerable_kinds() -> Vec<&'static str> {
    QuestionKind::ALL.iter().map(|k| k.described()).collect()
}

#[cfg(test)]
mod tests {
    use super::QuestionKind::*;
    use super::*;

    fn kinds(goal: &str) -> Vec<QuestionKind> {
        questions(goal).iter().map(|q| q.kind).collect()
    }

    #[test]
    fn the_example_goal_asks_three_questions_in_its_own_words() {
        let q = questions(
            "Where is the water table, how did the plume change, and what is the water content?",
        );
        assert_eq!(
            q.iter().map(|q| q.kind).collect::<Vec<_>>(),
            vec![WaterTableDepth, Change, WaterContent]
        );
        assert_eq!(q[0].words, "Where is the water table");
        assert_eq!(q[1].words, "how did the plume change");
        assert_eq!(q[2].words, "what is the water content");
    }

    #[test]
    fn several_phrasings_and_languages_are_read() {
        assert_eq!(kinds("How deep is the bedrock?"), vec![BedrockDepth]);
        assert_eq!(
            kinds("depth to groundwater along the line"),
            vec![WaterTableDepth]
        );
        assert_eq!(
            kinds("Wo liegt der Grundwasserspiegel?"),
            vec![WaterTableDepth]
        );
        assert_eq!(
            kinds("Quelle est la profondeur de la nappe phréatique ?"),
            vec![WaterTableDepth]
        );
        assert_eq!(kinds("Wie hat sich die Fahne verändert?"), vec![Change]);
        assert_eq!(kinds("Teneur en eau du sol"), vec![WaterContent]);
        assert_eq!(kinds("Give me a map of the resistivity"), vec![Map]);
        assert_eq!(
            kinds("Is there a conductor under the road?"),
            vec![Presence]
        );
        assert_eq!(
            kinds("Water table and bedrock depth; how did saturation evolve over time?"),
            vec![WaterTableDepth, BedrockDepth, Change, WaterContent]
        );
    }

    #[test]
    fn a_depth_in_the_question_is_kept() {
        let q = questions("What is the water content at 5 m?");
        assert_eq!(q[0].kind, WaterContent);
        assert_eq!(q[0].at_depth_m, Some(5.0));
        assert_eq!(
            questions("water content at 2.5m depth")[0].at_depth_m,
            Some(2.5)
        );
        assert_eq!(questions("What is the water content?")[0].at_depth_m, None);
    }

    #[test]
    fn a_goal_with_no_question_asks_nothing_and_the_kinds_are_listed() {
        assert!(questions("Process these files").is_empty());
        assert!(questions("").is_empty());
        let k = answerable_kinds();
        assert_eq!(k.len(), QuestionKind::ALL.len());
        assert!(k[0].contains("water table"));
    }
}

//! What a station table measures — gravity (mGal) or magnetics (nT), and which quantity —
//! inferred from the column header, the file name and the user's request, never from the
//! numbers alone. When the evidence is missing or contradicts itself the answer is
//! [`KindInference::Ambiguous`], with the candidates and the evidence, so that the caller
//! asks the user instead of guessing.

use serde::{Deserialize, Serialize};

/// Gravity or magnetics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Gravity, values in mGal, gz positive down.
    Gravity,
    /// Magnetics, values in nT.
    Magnetic,
}

impl Family {
    /// The unit the studio works in for this family.
    pub fn unit(self) -> &'static str {
        match self {
            Family::Gravity => "mGal",
            Family::Magnetic => "nT",
        }
    }

    /// A lower-case word for sentences.
    pub fn word(self) -> &'static str {
        match self {
            Family::Gravity => "gravity",
            Family::Magnetic => "magnetic",
        }
    }
}

/// The quantity within a family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantity {
    /// Complete or simple Bouguer anomaly.
    BouguerAnomaly,
    /// Free-air anomaly.
    FreeAirAnomaly,
    /// Gravity disturbance (observed minus normal gravity at the station).
    GravityDisturbance,
    /// Observed (absolute) gravity: needs normal-gravity reduction before interpretation.
    ObservedGravity,
    /// A gravity quantity whose reduction is not stated.
    GravityUnspecified,
    /// Total-field magnetic anomaly (TMI anomaly), ground or airborne.
    TotalFieldAnomaly,
    /// A magnetic quantity whose type is not stated.
    MagneticUnspecified,
}

impl Quantity {
    /// The family the quantity belongs to.
    pub fn family(self) -> Family {
        match self {
            Quantity::TotalFieldAnomaly | Quantity::MagneticUnspecified => Family::Magnetic,
            _ => Family::Gravity,
        }
    }

    /// Words for a sentence.
    pub fn words(self) -> &'static str {
        match self {
            Quantity::BouguerAnomaly => "Bouguer anomaly",
            Quantity::FreeAirAnomaly => "free-air anomaly",
            Quantity::GravityDisturbance => "gravity disturbance",
            Quantity::ObservedGravity => "observed gravity",
            Quantity::GravityUnspecified => "gravity (reduction not stated)",
            Quantity::TotalFieldAnomaly => "total-field magnetic anomaly",
            Quantity::MagneticUnspecified => "magnetic field (type not stated)",
        }
    }

    /// The unspecified quantity of a family.
    pub fn unspecified(family: Family) -> Quantity {
        match family {
            Family::Gravity => Quantity::GravityUnspecified,
            Family::Magnetic => Quantity::MagneticUnspecified,
        }
    }
}

/// Where a piece of evidence was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceSource {
    /// The name of the value column.
    Header,
    /// The file name.
    FileName,
    /// The user's request (free text).
    Request,
    /// The kind the user (or the catalog, on the user's behalf) declared.
    Declared,
}

/// One keyword that points at a family (and perhaps a quantity).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Where it was found.
    pub source: EvidenceSource,
    /// The text it was found in.
    pub text: String,
    /// The keyword that matched.
    pub keyword: String,
    /// The family it points to.
    pub family: Family,
    /// The quantity, when the keyword names one.
    pub quantity: Option<Quantity>,
}

/// A resolved kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldKind {
    /// Gravity or magnetics.
    pub family: Family,
    /// The quantity.
    pub quantity: Quantity,
}

impl FieldKind {
    /// The kind of `quantity`.
    pub fn of(quantity: Quantity) -> Self {
        FieldKind {
            family: quantity.family(),
            quantity,
        }
    }
}

/// The outcome of kind inference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum KindInference {
    /// All evidence points to one family.
    Resolved {
        /// The kind.
        kind: FieldKind,
        /// What it rests on.
        evidence: Vec<Evidence>,
    },
    /// No evidence, or evidence for both families: the user must be asked.
    Ambiguous {
        /// The kinds it could be.
        candidates: Vec<FieldKind>,
        /// What was found (possibly nothing).
        evidence: Vec<Evidence>,
        /// The question to put to the user.
        question: String,
    },
}

impl KindInference {
    /// The resolved kind, if any.
    pub fn kind(&self) -> Option<FieldKind> {
        match self {
            KindInference::Resolved { kind, .. } => Some(*kind),
            KindInference::Ambiguous { .. } => None,
        }
    }
}

/// Keywords matched against whole tokens (text split on anything but letters and digits,
/// lower case). Sources: the peer studio's list (`mgal|grav|bouguer|free-air|disturbance`
/// vs `nT|magnet|tmi|aeromag`) plus common column names.
const TOKEN_KEYWORDS: &[(&str, Family, Option<Quantity>)] = &[
    ("mgal", Family::Gravity, None),
    ("ugal", Family::Gravity, None),
    ("microgal", Family::Gravity, None),
    ("gravity", Family::Gravity, None),
    ("grav", Family::Gravity, None),
    ("gravimetry", Family::Gravity, None),
    ("bouguer", Family::Gravity, Some(Quantity::BouguerAnomaly)),
    ("cba", Family::Gravity, Some(Quantity::BouguerAnomaly)),
    ("sba", Family::Gravity, Some(Quantity::BouguerAnomaly)),
    ("faa", Family::Gravity, Some(Quantity::FreeAirAnomaly)),
    ("freeair", Family::Gravity, Some(Quantity::FreeAirAnomaly)),
    (
        "disturbance",
        Family::Gravity,
        Some(Quantity::GravityDisturbance),
    ),
    ("gz", Family::Gravity, None),
    ("nt", Family::Magnetic, None),
    ("nanotesla", Family::Magnetic, None),
    ("magnetic", Family::Magnetic, None),
    ("magnetics", Family::Magnetic, None),
    ("mag", Family::Magnetic, None),
    ("tmi", Family::Magnetic, Some(Quantity::TotalFieldAnomaly)),
    (
        "aeromag",
        Family::Magnetic,
        Some(Quantity::TotalFieldAnomaly),
    ),
    (
        "aeromagnetic",
        Family::Magnetic,
        Some(Quantity::TotalFieldAnomaly),
    ),
    ("magnetometer", Family::Magnetic, None),
];

/// Keywords matched as substrings of the lower-cased text (phrases and CJK terms that have
/// no token boundaries).
const PHRASE_KEYWORDS: &[(&str, Family, Option<Quantity>)] = &[
    ("free-air", Family::Gravity, Some(Quantity::FreeAirAnomaly)),
    ("free_air", Family::Gravity, Some(Quantity::FreeAirAnomaly)),
    ("free air", Family::Gravity, Some(Quantity::FreeAirAnomaly)),
    (
        "total_field_anomaly",
        Family::Magnetic,
        Some(Quantity::TotalFieldAnomaly),
    ),
    (
        "total field anomaly",
        Family::Magnetic,
        Some(Quantity::TotalFieldAnomaly),
    ),
    (
        "total-field anomaly",
        Family::Magnetic,
        Some(Quantity::TotalFieldAnomaly),
    ),
    ("magnet", Family::Magnetic, None),
    ("重力", Family::Gravity, None),
    ("布格", Family::Gravity, Some(Quantity::BouguerAnomaly)),
    ("自由空气", Family::Gravity, Some(Quantity::FreeAirAnomaly)),
    ("航磁", Family::Magnetic, Some(Quantity::TotalFieldAnomaly)),
    ("磁", Family::Magnetic, None),
];

/// Tokens that name gravity only in a column header (`g` alone would be too loose in a file
/// name or a sentence).
const HEADER_ONLY_KEYWORDS: &[(&str, Family, Option<Quantity>)] = &[
    ("g", Family::Gravity, None),
    ("dg", Family::Gravity, None),
    ("gobs", Family::Gravity, Some(Quantity::ObservedGravity)),
];

/// Every keyword of either family found in `text`.
pub fn find_evidence(text: &str, source: EvidenceSource) -> Vec<Evidence> {
    let lower = text.to_lowercase();
    let tokens: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .collect();
    let mut out: Vec<Evidence> = Vec::new();
    let push =
        |out: &mut Vec<Evidence>, keyword: &str, family: Family, quantity: Option<Quantity>| {
            if !out.iter().any(|e| e.keyword == keyword) {
                out.push(Evidence {
                    source,
                    text: text.to_string(),
                    keyword: keyword.to_string(),
                    family,
                    quantity,
                });
            }
        };
    let header_only: &[_] = if source == EvidenceSource::Header {
        HEADER_ONLY_KEYWORDS
    } else {
        &[]
    };
    for &(kw, fam, q) in TOKEN_KEYWORDS.iter().chain(header_only) {
        if tokens.contains(&kw) {
            push(&mut out, kw, fam, q);
        }
    }
    for &(kw, fam, q) in PHRASE_KEYWORDS {
        if lower.contains(kw) {
            push(&mut out, kw, fam, q);
        }
    }
    // "observed gravity" / "absolute gravity" name a quantity only together with gravity.
    if out.iter().any(|e| e.family == Family::Gravity)
        && (tokens.contains(&"observed") || tokens.contains(&"absolute"))
    {
        push(
            &mut out,
            "observed",
            Family::Gravity,
            Some(Quantity::ObservedGravity),
        );
    }
    out
}

/// Decide the kind from the evidence. A declared kind wins outright; otherwise every piece of
/// evidence must point to one family (else ambiguous), and the quantity is the one named
/// (unspecified when none or several are named).
pub fn infer_kind(
    declared: Option<FieldKind>,
    header: Option<&str>,
    file_name: Option<&str>,
    request: Option<&str>,
) -> KindInference {
    if let Some(kind) = declared {
        return KindInference::Resolved {
            kind,
            evidence: vec![Evidence {
                source: EvidenceSource::Declared,
                text: format!("{:?}", kind.quantity),
                keyword: kind.family.word().to_string(),
                family: kind.family,
                quantity: Some(kind.quantity),
            }],
        };
    }
    let mut evidence = Vec::new();
    if let Some(h) = header {
        evidence.extend(find_evidence(h, EvidenceSource::Header));
    }
    if let Some(f) = file_name {
        evidence.extend(find_evidence(f, EvidenceSource::FileName));
    }
    if let Some(r) = request {
        evidence.extend(find_evidence(r, EvidenceSource::Request));
    }
    let families: Vec<Family> = [Family::Gravity, Family::Magnetic]
        .into_iter()
        .filter(|f| evidence.iter().any(|e| e.family == *f))
        .collect();
    let all = vec![
        FieldKind::of(Quantity::GravityUnspecified),
        FieldKind::of(Quantity::MagneticUnspecified),
    ];
    match families.as_slice() {
        [family] => {
            let mut quantities: Vec<Quantity> =
                evidence.iter().filter_map(|e| e.quantity).collect();
            quantities.sort_by_key(|q| *q as u8);
            quantities.dedup();
            let quantity = match quantities.as_slice() {
                [q] => *q,
                _ => Quantity::unspecified(*family),
            };
            KindInference::Resolved {
                kind: FieldKind {
                    family: *family,
                    quantity,
                },
                evidence,
            }
        }
        [] => KindInference::Ambiguous {
            candidates: all,
            evidence,
            question: format!(
                "Nothing in the column names{}{} says what was measured. Are these gravity \
                 values (mGal) or magnetic values (nT)?",
                if file_name.is_some() {
                    ", the file name"
                } else {
                    ""
                },
                if request.is_some() {
                    " or the request"
                } else {
                    ""
                },
            ),
        },
        _ => {
            let list = |f: Family| {
                evidence
                    .iter()
                    .filter(|e| e.family == f)
                    .map(|e| format!("\"{}\" in the {}", e.keyword, source_words(e.source)))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            KindInference::Ambiguous {
                candidates: all,
                question: format!(
                    "The evidence contradicts itself: gravity ({}) and magnetics ({}). Which is it?",
                    list(Family::Gravity),
                    list(Family::Magnetic)
                ),
                evidence,
            }
        }
    }
}

fn source_words(s: EvidenceSource) -> &'static str {
    match s {
        EvidenceSource::Header => "column name",
        EvidenceSource::FileName => "file name",
        EvidenceSource::Request => "request",
        EvidenceSource::Declared => "declaration",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(k: &KindInference) -> FieldKind {
        k.kind()
            .unwrap_or_else(|| panic!("expected resolved, got {k:?}"))
    }

    #[test]
    fn headers_name_the_quantity() {
        let k = infer_kind(None, Some("gravity_disturbance_mGal"), None, None);
        assert_eq!(resolved(&k), FieldKind::of(Quantity::GravityDisturbance));
        let k = infer_kind(None, Some("total_field_anomaly_nt"), None, None);
        assert_eq!(resolved(&k), FieldKind::of(Quantity::TotalFieldAnomaly));
        let k = infer_kind(None, Some("Bouguer anomaly (mGal)"), None, None);
        assert_eq!(resolved(&k), FieldKind::of(Quantity::BouguerAnomaly));
        let k = infer_kind(None, Some("FAA"), None, None);
        assert_eq!(resolved(&k), FieldKind::of(Quantity::FreeAirAnomaly));
        let k = infer_kind(None, Some("布格重力异常"), None, None);
        assert_eq!(resolved(&k), FieldKind::of(Quantity::BouguerAnomaly));
        let k = infer_kind(None, Some("g"), None, None);
        assert_eq!(resolved(&k).family, Family::Gravity);
    }

    #[test]
    fn file_name_and_request_count() {
        let k = infer_kind(
            None,
            None,
            Some("harmonica_south-africa-gravity.ast.xz"),
            None,
        );
        assert_eq!(resolved(&k), FieldKind::of(Quantity::GravityUnspecified));
        let k = infer_kind(
            None,
            Some("value"),
            Some("line3.csv"),
            Some("invert this aeromag grid"),
        );
        assert_eq!(resolved(&k), FieldKind::of(Quantity::TotalFieldAnomaly));
        // "g" in a file name is not evidence.
        let k = infer_kind(None, None, Some("line_g.csv"), None);
        assert!(k.kind().is_none());
    }

    #[test]
    fn no_evidence_asks_instead_of_guessing() {
        let k = infer_kind(None, Some("value"), Some("stations.csv"), None);
        match k {
            KindInference::Ambiguous {
                candidates,
                evidence,
                question,
            } => {
                assert_eq!(candidates.len(), 2);
                assert!(evidence.is_empty());
                assert!(question.contains("mGal") && question.contains("nT"));
            }
            other => panic!("expected ambiguous, got {other:?}"),
        }
    }

    #[test]
    fn contradictions_ask_and_list_the_evidence() {
        let k = infer_kind(None, Some("anomaly_mGal"), Some("tmi_line.csv"), None);
        match k {
            KindInference::Ambiguous {
                evidence, question, ..
            } => {
                assert_eq!(evidence.len(), 2);
                assert!(
                    question.contains("mgal") && question.contains("tmi"),
                    "{question}"
                );
            }
            other => panic!("expected ambiguous, got {other:?}"),
        }
    }

    #[test]
    fn declared_kind_wins() {
        let k = infer_kind(
            Some(FieldKind::of(Quantity::TotalFieldAnomaly)),
            Some("mGal"),
            None,
            None,
        );
        assert_eq!(resolved(&k).family, Family::Magnetic);
    }

    #[test]
    fn substrings_of_unrelated_words_are_not_evidence() {
        // "point" contains "nt", "image" contains "mag", "magnitude" is not magnetics.
        for text in ["point_id", "image", "station", "magnitude"] {
            let e = find_evidence(text, EvidenceSource::Header);
            assert!(e.is_empty(), "{text}: {e:?}");
        }
    }
}

//! The model as the controller's decider: renders the prompts, streams the reply (showing the
//! `why` as it arrives), reads the JSON, and reports usage — or says exactly why there is no
//! usable decision, so the run can fall back to dependency order with a note.

use serde_json::{Map, Value};

use super::client::{Client, LlmError, Message};
use super::json::{first_object, partial_string_field};
use super::prompts;
use crate::runtime::decide::{
    Choice, CodeProposal, CodeRequest, Decide, DecideError, Decision, DecisionRequest, Diagnosis,
    DiagnosisRequest, ModelEvent,
};

/// Tokens a code reply may take: a reader or a script under 6,000 characters is about 1,500
/// tokens, with room for the purpose and the JSON quoting.
const CODE_MAX_TOKENS: u32 = 2500;

/// A model behind an HTTP client, deciding steps.
#[derive(Debug)]
pub struct ModelDecider {
    client: Client,
    /// Set when the endpoint refused the key, or timed out twice running: the rest of the run
    /// does not ask again (and the run says why, once).
    disabled: Option<String>,
    slow_failures: u32,
}

impl ModelDecider {
    /// A decider speaking through `client`.
    pub fn new(client: Client) -> Self {
        ModelDecider {
            client,
            disabled: None,
            slow_failures: 0,
        }
    }

    /// Why this decider stopped asking the model, if it did.
    pub fn disabled(&self) -> Option<&str> {
        self.disabled.as_deref()
    }

    fn ask(
        &mut self,
        prompt: &str,
        max_tokens: Option<u32>,
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Result<String, DecideError> {
        if let Some(why) = &self.disabled {
            return Err(DecideError::Unreachable(format!(
                "not asked again this run: {why}"
            )));
        }
        let mut on_text = |so_far: &str| {
            if let Some(why) = partial_string_field(so_far, "why")
                && !why.is_empty()
            {
                on_event(ModelEvent::Thought(why));
            }
        };
        let result = self.client.complete(
            prompts::CONTROLLER_SYSTEM,
            &[Message::user(prompt)],
            max_tokens,
            &mut on_text,
        );
        match result {
            Ok(reply) => {
                self.slow_failures = 0;
                for n in &reply.notes {
                    on_event(ModelEvent::Note(n.clone()));
                }
                on_event(ModelEvent::Usage {
                    tokens_in: reply.tokens_in,
                    tokens_out: reply.tokens_out,
                    cost_usd: reply.cost_usd,
                });
                Ok(reply.text)
            }
            Err(e) => {
                match &e {
                    LlmError::Auth { .. } => self.disabled = Some(e.to_string()),
                    LlmError::Timeout { .. } | LlmError::Stalled { .. } => {
                        self.slow_failures += 1;
                        if self.slow_failures >= 2 {
                            self.disabled = Some(format!("{e} (twice in a row)"));
                        }
                    }
                    _ => {}
                }
                Err(to_decide_error(e))
            }
        }
    }
}

fn to_decide_error(e: LlmError) -> DecideError {
    match e {
        LlmError::Protocol(m) => DecideError::Unusable(m),
        other => DecideError::Unreachable(other.to_string()),
    }
}

/// The start of a reply, for a note.
fn excerpt(text: &str) -> String {
    let t: String = text.trim().chars().take(80).collect();
    if text.trim().chars().count() > 80 {
        format!("{t}…")
    } else {
        t
    }
}

/// Read a decision out of a reply. `note` receives remarks (two objects, …).
pub fn parse_decision(text: &str, note: &mut dyn FnMut(String)) -> Result<Decision, DecideError> {
    if text.trim().is_empty() {
        return Err(DecideError::Unusable("the reply was empty".into()));
    }
    let Some((obj, n)) = first_object(text) else {
        return Err(DecideError::Unusable(format!(
            "the reply held no complete JSON object (it began: \"{}\")",
            excerpt(text)
        )));
    };
    if n > 1 {
        note(format!(
            "The model's reply held {n} JSON objects; the first was used."
        ));
    }
    let why = obj
        .get("why")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let settings: Map<String, Value> = obj
        .get("settings")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let done = obj
        .get("done")
        .is_some_and(|d| d.as_bool() == Some(true) || d.as_str() == Some("true"));
    let tool = obj
        .get("tool")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or("");
    let inspect = obj
        .get("inspect")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or("");
    let proposal = obj
        .get("propose")
        .cloned()
        .map(serde_json::from_value::<crate::runtime::decide::Proposal>);
    let choice = if !tool.is_empty() {
        Choice::Tool(tool.to_string())
    } else if !inspect.is_empty() {
        Choice::Inspect(inspect.to_string())
    } else if let Some(p) = proposal {
        Choice::Propose(
            p.map_err(|e| DecideError::Unusable(format!("the proposal could not be read: {e}")))?,
        )
    } else if done {
        Choice::Done
    } else {
        return Err(DecideError::Unusable(
            "the JSON named no step and did not finish".into(),
        ));
    };
    let then = obj
        .get("then")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
                .take(MAX_PLANNED_STEPS)
                .collect()
        })
        .unwrap_or_default();
    Ok(Decision {
        why,
        choice,
        settings,
        then,
    })
}

/// The most steps a model's `then` may name; the rest are dropped (it is asked again then).
pub const MAX_PLANNED_STEPS: usize = 8;

/// Read a diagnosis out of a reply.
pub fn parse_diagnosis(text: &str) -> Result<Diagnosis, DecideError> {
    let (obj, _) = first_object(text)
        .ok_or_else(|| DecideError::Unusable("no JSON object in the diagnosis".into()))?;
    let s = |k: &str| obj.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    Ok(Diagnosis {
        cause: s("cause"),
        action: s("action"),
        changes: obj
            .get("changes")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        file_key: s("file_key"),
        replaces: s("replaces"),
        purpose: s("purpose"),
        why: s("why"),
    })
}

/// Read `{"purpose", "code"}` out of a reply; a bare fenced code block is accepted as code.
pub fn parse_code(text: &str) -> Result<CodeProposal, DecideError> {
    if let Some((obj, _)) = first_object(text)
        && let Some(code) = obj.get("code").and_then(Value::as_str)
    {
        return Ok(CodeProposal {
            purpose: obj
                .get("purpose")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            code: code.to_string(),
        });
    }
    let fenced = text.split("```").nth(1).map(|b| {
        b.strip_prefix("python")
            .unwrap_or(b)
            .trim_start_matches('\n')
            .to_string()
    });
    match fenced {
        Some(code) if code.contains("def ") => Ok(CodeProposal {
            purpose: String::new(),
            code,
        }),
        _ => Err(DecideError::Unusable("the reply held no code".into())),
    }
}

impl Decide for ModelDecider {
    fn describe(&self) -> String {
        self.client.settings().label()
    }

    fn decide(
        &mut self,
        request: &DecisionRequest,
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Result<Decision, DecideError> {
        let text = self.ask(&prompts::decision(request), Some(400), on_event)?;
        let mut notes = Vec::new();
        let d = parse_decision(&text, &mut |n| notes.push(n));
        for n in notes {
            on_event(ModelEvent::Note(n));
        }
        d
    }

    fn diagnose(
        &mut self,
        request: &DiagnosisRequest,
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Option<Result<Diagnosis, DecideError>> {
        Some(
            self.ask(&prompts::diagnosis(request), Some(600), on_event)
                .and_then(|t| parse_diagnosis(&t)),
        )
    }

    /// Code through [`prompts::code`]; the runtime checks it (forbidden names, the one
    /// function) before anyone sees it as runnable.
    fn write_code(
        &mut self,
        request: &CodeRequest,
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Option<Result<CodeProposal, DecideError>> {
        Some(
            self.ask(&prompts::code(request), Some(CODE_MAX_TOKENS), on_event)
                .and_then(|t| parse_code(&t)),
        )
    }

    fn complete(
        &mut self,
        prompt: &str,
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Option<Result<String, DecideError>> {
        Some(self.ask(prompt, None, on_event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (Result<Decision, DecideError>, Vec<String>) {
        let mut notes = Vec::new();
        let r = parse_decision(text, &mut |n| notes.push(n));
        (r, notes)
    }

    #[test]
    fn code_comes_as_json_or_a_fenced_block() {
        let p = parse_code(
            "{\"purpose\": \"Reads it.\", \"code\": \"def adapt(text):\\n    return []\"}",
        )
        .unwrap();
        assert_eq!(p.code, "def adapt(text):\n    return []");
        let p = parse_code("Here:\n```python\ndef main(inputs, out):\n    return {}\n```").unwrap();
        assert_eq!(p.code, "def main(inputs, out):\n    return {}\n");
        assert!(parse_code("sorry").is_err());
    }

    #[test]
    fn the_answers_models_actually_give() {
        let (r, _) = parse("I think we should invert next.");
        assert!(
            matches!(r, Err(DecideError::Unusable(m)) if m.contains("no complete JSON object"))
        );
        let (r, _) = parse("```json\n{\"why\": \"data loaded\", \"tool\": \"invert_ert\"}\n```");
        assert_eq!(r.unwrap(), Decision::tool("invert_ert", "data loaded"));
        let (r, notes) =
            parse("{\"why\": \"a\", \"tool\": \"x\"}\n{\"why\": \"b\", \"tool\": \"y\"}");
        assert_eq!(r.unwrap().choice, Choice::Tool("x".into()));
        assert_eq!(notes.len(), 1);
        let (r, _) = parse("{\"why\": \"all done\", \"done\": true}");
        assert_eq!(r.unwrap().choice, Choice::Done);
        let (r, _) = parse("");
        assert!(matches!(r, Err(DecideError::Unusable(m)) if m == "the reply was empty"));
        let (r, _) = parse("{\"why\": \"cut mid");
        assert!(r.is_err());
        let (r, _) = parse(
            "{\"why\": \"x\", \"tool\": \"invert\", \"settings\": {\"inversion_params\": {\"lambda\": 5}}}",
        );
        assert_eq!(r.unwrap().settings["inversion_params"]["lambda"], 5);
    }

    #[test]
    fn a_plan_comes_as_then_and_is_bounded() {
        let (r, _) = parse(
            "{\"why\": \"w\", \"tool\": \"load\", \"then\": [\"invert\", 3, \" report \", \"\"]}",
        );
        assert_eq!(
            r.unwrap().then,
            ["invert", "report"],
            "non-strings and blanks dropped"
        );
        let long: Vec<String> = (0..20).map(|i| format!("\"t{i}\"")).collect();
        let (r, _) = parse(&format!(
            "{{\"why\": \"w\", \"tool\": \"a\", \"then\": [{}]}}",
            long.join(",")
        ));
        assert_eq!(r.unwrap().then.len(), MAX_PLANNED_STEPS);
        let (r, _) = parse("{\"why\": \"w\", \"tool\": \"a\"}");
        assert!(r.unwrap().then.is_empty());
    }
}

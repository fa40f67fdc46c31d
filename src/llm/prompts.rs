//! Every prompt the studio sends, each in one place, in our own words, rendered from the
//! runtime's requests (never from raw arrays: the model reads the transcript, not the data).

use crate::runtime::decide::{CodeKind, CodeRequest, DecisionRequest, DiagnosisRequest};

/// The system message of every controller call.
pub const CONTROLLER_SYSTEM: &str = "You plan the processing of hydrogeophysical field data for a scientist. You choose one step at a time from a menu, you never invent steps, and you answer only with the JSON object you are asked for.";

/// The decision prompt: the run so far, the menu, the rules, the answer format.
pub fn decision(req: &DecisionRequest) -> String {
    let done = if req.done_allowed {
        format!(
            "The report ({}) exists, so you may finish with {{\"why\": \"…\", \"done\": true}} once nothing on the menu would add to what the goal asks for.",
            req.finish
        )
    } else {
        format!(
            "The report ({}) does not exist yet, so finishing is not an option: choose a step.",
            req.finish
        )
    };
    let mut p = format!(
        "The run so far:\n{transcript}\n\
Steps that can run now (choose one by its exact name):\n{menu}\n\n\
Rules:\n\
- Choose only a step from this list. A name that is not on it is refused and recorded as a mistake.\n\
- Produce what the goal asks for before anything else; the report is written last.\n\
- Do not choose a step that failed again unless something it depends on has changed.\n\
- Prefer finishing the goal over exploring: every step costs the scientist time.\n\
- {done}\n\n\
Answer with one JSON object and nothing else, with \"why\" first (it is shown to the scientist while you write):\n\
{{\"why\": \"<one sentence: why this step now>\", \"tool\": \"<a name from the list>\"}}",
        transcript = req.transcript.trim_end(),
        menu = req.menu,
    );
    if let Some(tb) = &req.toolbox {
        p.push_str(&format!(
            "\n\nBesides a step from the list you may (flexible mode):\n{tb}\nUse these only when the evidence in the run calls for it; the route is the default.\n\
When you already know the steps after this one, add \"then\": [\"<name>\", ...] in the order you mean to run them: they run without asking you again while each is on the menu and the step before it succeeded. Leave \"then\" out when you want to see a result before choosing."
        ));
    }
    if !req.notes.is_empty() {
        p.push_str(&steering(req));
    }
    p
}

/// The addendum when the user has just said something.
pub fn steering(req: &DecisionRequest) -> String {
    let notes: Vec<String> = req.notes.iter().map(|n| format!("- {n}")).collect();
    let settings = serde_json::to_string_pretty(&req.adjustable).unwrap_or_else(|_| "{}".into());
    format!(
        "\n\nThe scientist has just told the run:\n{}\n\
Follow it where you can. If it asks for different settings, add \"settings\" to your JSON with only the keys that change, using these current values as the template:\n{settings}\n\
Input files cannot be changed during a run, and nothing outside these settings can be. If the note asks for something no step or setting can do, say so plainly in \"why\" and carry on with the best next step.",
        notes.join("\n")
    )
}

/// How much of the settings the recovery prompt shows (seed 000).
pub const MAX_DIAGNOSIS_SETTINGS_CHARS: usize = 2000;
/// How much of the input list the recovery prompt shows (seed 000).
pub const MAX_DIAGNOSIS_INPUTS_CHARS: usize = 1500;

/// The recovery prompt: a failed step, what may change, the answer format.
pub fn diagnosis(req: &DiagnosisRequest) -> String {
    // Bounded as seed 000's recovery prompt bounds them: settings 2000, inputs 1500 characters.
    let cap = |s: String, n: usize| s.chars().take(n).collect::<String>();
    let settings = cap(
        serde_json::to_string_pretty(&req.settings).unwrap_or_else(|_| "{}".into()),
        MAX_DIAGNOSIS_SETTINGS_CHARS,
    );
    let inputs = if req.inputs.is_empty() {
        "(none)".to_string()
    } else {
        cap(
            serde_json::to_string_pretty(&req.inputs).unwrap_or_else(|_| "{}".into()),
            MAX_DIAGNOSIS_INPUTS_CHARS,
        )
    };
    let adaptable = if req.adaptable.is_empty() {
        "(none)".to_string()
    } else {
        req.adaptable.join(", ")
    };
    format!(
        "A step of a hydrogeophysical run failed. Say what went wrong and what, if anything, to do.\n\n\
The run so far:\n{transcript}\n\
The step that failed: {tool}\nWhat it does: {purpose}\nIts error: {error}\n\n\
Settings it ran with (only these may change):\n{settings}\n\n\
Coordinate tables a small reader could be written for, if one of them is what could not be read: {adaptable}\n\
The run's input files by role: {inputs}\n\n\
Answer with one JSON object and nothing else:\n\
{{\"cause\": \"<one sentence>\", \"action\": \"retry\" | \"adapt\" | \"script\" | \"give_up\", \"changes\": {{\"<setting>\": <new value>}}, \"file_key\": \"<for adapt>\", \"replaces\": \"<for script: the input role the script's output stands in for, or null>\", \"purpose\": \"<for script: what it does, two sentences>\", \"why\": \"<one sentence>\"}}\n\n\
Rules:\n\
- \"retry\" only when a different value of a listed setting could plausibly fix it; running it again unchanged is never useful. Change one or two values, keep their types.\n\
- \"adapt\" only when one of the coordinate tables above holds the right numbers in a layout the reader does not handle; a person reads the reader before it runs.\n\
- \"script\" when a short script could get past the cause and no setting can; a person reads it before it runs, and the user's files are never changed.\n\
- \"give_up\" when the data are missing or wrong, or a method is not implemented. That is a normal answer; state the cause plainly so the report can say it.{notes}",
        transcript = req.transcript.trim_end(),
        tool = req.tool,
        purpose = req.purpose,
        error = req.error,
        notes = diagnosis_notes(&req.notes),
    )
}

/// What the scientist said while the step ran, for the diagnosis: a retry is the next step
/// that uses the settings a note may change.
fn diagnosis_notes(notes: &[String]) -> String {
    if notes.is_empty() {
        return String::new();
    }
    let lines: Vec<String> = notes.iter().map(|n| format!("- {n}")).collect();
    format!(
        "\n\nWhile the step ran, the scientist told the run:\n{}\nFollow it in your changes where the listed settings allow; if it cannot be followed, say so in \"why\".",
        lines.join("\n")
    )
}

/// Added to the reader prompt when a reader the user approved ran and failed (seed 001,
/// `adapters.ADAPTER_RETRY`, word for word).
pub const ADAPTER_RETRY: &str = "\n\nA reader you wrote for this file was approved and run, and it failed with:\n{failure}\nThat reader was:\n{previous}\nFix the cause the error shows.";

/// The prompt for code: a script to get a failed step past its cause, a script for a task no
/// step does, or a reader for a coordinate table.
pub fn code(req: &CodeRequest) -> String {
    let what = match req.kind {
        CodeKind::Script => format!(
            "A step of a hydrogeophysical run failed, and a short temporary Python script is to get the run past it.\n\nThe step: {}\nIts error: {}\nWhat the script is to do: {}",
            req.tool, req.error, req.task
        ),
        CodeKind::Task => format!(
            "A hydrogeophysical run needs a short temporary Python script for something none of its steps does.\n\nThe run so far:\n{}\nWhat the script is to do: {}",
            req.transcript.trim_end(),
            req.task
        ),
        CodeKind::Reader => format!(
            "A coordinate table could not be read ({}). Write a reader for its layout.\n\n{}\nThe table must come out as {}.\nThe first lines of the file:\n{}",
            req.error, req.task, req.columns, req.samples
        ),
    };
    let inputs = if req.kind == CodeKind::Reader {
        String::new()
    } else {
        format!(
            "\n\nThe files the script receives in `inputs` (key -> path), with their first lines:\n{}",
            req.samples
        )
    };
    let previous = match &req.previous {
        Some((code, failure)) if req.previous_ran && req.kind == CodeKind::Reader => ADAPTER_RETRY
            .replace("{failure}", failure)
            .replace("{previous}", code),
        Some((code, failure)) => format!(
            "\n\nYour previous version was:\n{code}\nIt failed:\n{failure}\nFix the cause the error shows; do not hide it with a bare except or a made-up value."
        ),
        None => String::new(),
    };
    format!(
        "{what}{inputs}\n\nRules: {}{previous}\n\nA scientist will read the code before deciding whether it runs. Answer with one JSON object and nothing else:\n{{\"purpose\": \"<two sentences: what it does and why that helps>\", \"code\": \"<the whole source>\"}}",
        req.contract
    )
}

/// The one-token check `hydrogeo-studio models` sends.
pub const PING: &str = "Answer with the single word: ready";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{Outputs, Registry, RunContext, Tool, recovery};

    fn request_from_a_real_run(notes: Vec<String>) -> DecisionRequest {
        let mut reg = Registry::new();
        reg.register(Tool::new(
            "invert_ert",
            "Recover a resistivity model from one ERT survey.",
            |_| Ok((String::new(), Outputs::new())),
        ))
        .unwrap();
        reg.register(Tool::new(
            "invert_seismic",
            "Invert first-arrival travel times.",
            |_| Ok((String::new(), Outputs::new())),
        ))
        .unwrap();
        let cfg = serde_json::json!({"inversion_params": {"lambda": 20}});
        let mut ctx = RunContext::new("Where is the water table?")
            .with_config(cfg.as_object().cloned().unwrap());
        ctx.recovery.settings = vec!["inversion_params".into()];
        ctx.begin("load_ert_surveys", "it is first");
        ctx.finish(
            "1 survey, 116 measurements",
            crate::runtime::StepStatus::Ok,
            "",
        );
        DecisionRequest {
            transcript: ctx.transcript(40),
            menu: reg.menu(&ctx),
            menu_names: vec!["invert_ert".into(), "invert_seismic".into()],
            done_allowed: false,
            finish: "report_files".into(),
            notes,
            adjustable: recovery::settings_for(&ctx),
            toolbox: None,
        }
    }

    #[test]
    fn the_decision_prompt_renders_from_a_real_run() {
        let p = decision(&request_from_a_real_run(vec![]));
        assert!(p.starts_with("The run so far:\nGoal: Where is the water table?\n"));
        assert!(p.contains("- invert_ert: Recover a resistivity model from one ERT survey. (needs: nothing; gives: a side effect)"));
        assert!(p.contains(
            "[done] load_ert_surveys (chosen because: it is first) -> 1 survey, 116 measurements"
        ));
        assert!(p.contains("finishing is not an option"));
        assert!(p.ends_with(
            "{\"why\": \"<one sentence: why this step now>\", \"tool\": \"<a name from the list>\"}"
        ));
        assert!(!p.contains("The scientist has just told"));
    }

    #[test]
    fn the_steering_addendum_carries_notes_and_the_settings_template() {
        let p = decision(&request_from_a_real_run(vec!["use lambda 5".into()]));
        assert!(p.contains("The scientist has just told the run:\n- use lambda 5\n"));
        assert!(p.contains("\"lambda\": 20"));
        assert!(p.contains("Input files cannot be changed"));
    }

    #[test]
    fn the_diagnosis_prompt_lists_only_adjustable_settings() {
        let req = DiagnosisRequest {
            transcript: "Goal: x\n".into(),
            tool: "invert_ert".into(),
            purpose: "Invert.".into(),
            error: "diverged".into(),
            settings: serde_json::json!({"inversion_params": {"lambda": 20}})
                .as_object()
                .cloned()
                .unwrap(),
            adaptable: vec!["electrode_file".into()],
            inputs: serde_json::Map::new(),
            notes: Vec::new(),
        };
        let p = diagnosis(&req);
        assert!(p.contains("The run's input files by role: (none)"));
        assert!(p.contains("Its error: diverged"));
        assert!(p.contains(
            "could be written for, if one of them is what could not be read: electrode_file"
        ));
    }

    #[test]
    fn the_diagnosis_prompt_bounds_settings_and_inputs_as_the_seed_does() {
        // Seed 000, diagnose: settings [:2000], inputs [:1500].
        let long = "x".repeat(5000);
        let req = DiagnosisRequest {
            transcript: String::new(),
            tool: "t".into(),
            purpose: "p".into(),
            error: "e".into(),
            settings: serde_json::json!({"inversion_params": {"note": long}})
                .as_object()
                .cloned()
                .unwrap(),
            adaptable: vec![],
            inputs: serde_json::json!({"data_file": "y".repeat(5000)})
                .as_object()
                .cloned()
                .unwrap(),
            notes: Vec::new(),
        };
        let p = diagnosis(&req);
        let run_of = |c: char| p.split(|x| x != c).map(str::len).max().unwrap_or(0);
        let (xs, ys) = (run_of('x'), run_of('y'));
        assert!(xs < MAX_DIAGNOSIS_SETTINGS_CHARS && xs > 1900, "{xs}");
        assert!(ys < MAX_DIAGNOSIS_INPUTS_CHARS && ys > 1400, "{ys}");
    }
}

//! The format is chosen or proven (issue 17, item 5; seed 001: "the device is chosen, not
//! guessed"). A reader that recognised a file only by a weak signature says so
//! (`format_guessed`); before a method uses such a file, it is confirmed — by the project's
//! `formats` setting (`{"<file name>": "<format>"}`), or by the person (studio, step by step,
//! a terminal). When nobody confirms it, it is not used, and the refusal names the setting
//! that would read it. ERT has its own device setting (`instrument`, ERT's tools).

use std::path::Path;

use crate::runtime::{QuestionOption, RunContext};

use super::keys;

/// Whether `file`, read as `format` by a weak signature only, may be used: `Ok` with how it
/// was confirmed, or `Err` with why not (to name in the step's error or Not delivered).
pub fn confirm_guessed_format(
    ctx: &mut RunContext,
    method: &str,
    file: &Path,
    format: &str,
) -> Result<String, String> {
    let name = super::paths::file_name(file);
    if confirmed_by_setting(ctx, &name, format) {
        return Ok(format!(
            "{name} read as {format}, as the project's \"{}\" setting says",
            keys::FORMATS
        ));
    }
    let question = format!(
        "{method}: {name} looks like {format} only by a weak signature. Read it as {format}?"
    );
    let same_as = format!(
        "the same as setting \"{}\": {{\"{name}\": \"{format}\"}}",
        keys::FORMATS
    );
    if user_confirms(ctx, &question, format, &same_as) {
        return Ok(format!("{name} read as {format}, as the user confirmed"));
    }
    Err(format!(
        "its format was only guessed ({format}, weak signature) and nobody confirmed it; set \"{}\": {{\"{name}\": \"{format}\"}} in the project's config to read it as {format}",
        keys::FORMATS
    ))
}

/// [`confirm_guessed_format`] for a step that cannot go on without the file: how it was
/// confirmed (a note for the run), or an error naming the file and why it was not used.
pub fn require_confirmed(
    ctx: &mut RunContext,
    method: &str,
    file: &Path,
    format: &str,
) -> anyhow::Result<String> {
    confirm_guessed_format(ctx, method, file, format)
        .map_err(|why| anyhow::anyhow!("{}: {why}", file.display()))
}

/// Put "read it as `format`, or leave it out?" to the person (`same_as` names the setting
/// that does the same); `true` only when a person answered "read" — nobody's silence is no
/// confirmation.
pub fn user_confirms(ctx: &mut RunContext, question: &str, format: &str, same_as: &str) -> bool {
    let options = [
        QuestionOption::new("read", &format!("Read it as {format}"), same_as),
        QuestionOption::new(
            "leave_out",
            "Leave it out",
            "the run goes on without this file",
        ),
    ];
    let answer = ctx.ask(question, &options, "leave_out");
    answer == "read" && ctx.questions.last().is_some_and(|q| q.by.is_user())
}

/// Whether the project's `formats` setting names `format` for the file `name` (the file
/// name, compared without regard to ASCII case, as is the format).
fn confirmed_by_setting(ctx: &RunContext, name: &str, format: &str) -> bool {
    ctx.config
        .get(keys::FORMATS)
        .and_then(serde_json::Value::as_object)
        .is_some_and(|m| {
            m.iter().any(|(k, v)| {
                k.eq_ignore_ascii_case(name)
                    && v.as_str().is_some_and(|f| f.eq_ignore_ascii_case(format))
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(config: serde_json::Value) -> RunContext {
        let mut c = RunContext::new("test");
        if let serde_json::Value::Object(m) = config {
            c.config = m;
        }
        c
    }

    #[test]
    fn nobody_to_ask_refuses_and_names_the_setting() {
        let mut c = ctx(serde_json::json!({}));
        let e = confirm_guessed_format(&mut c, "Seismic", Path::new("/p/line.dat"), "SEG-Y rev 1")
            .unwrap_err();
        assert!(
            e.contains("\"formats\": {\"line.dat\": \"SEG-Y rev 1\"}"),
            "{e}"
        );
        assert_eq!(
            c.questions.len(),
            1,
            "the question was put (and went unanswered)"
        );
        assert!(!c.questions[0].by.is_user());
    }

    #[test]
    fn the_formats_setting_confirms_without_asking() {
        let mut c = ctx(serde_json::json!({"formats": {"LINE.DAT": "seg-y rev 1"}}));
        let ok = confirm_guessed_format(&mut c, "Seismic", Path::new("/p/line.dat"), "SEG-Y rev 1")
            .unwrap();
        assert!(ok.contains("setting"), "{ok}");
        assert!(c.questions.is_empty());
        // Another format for the file is no confirmation.
        let mut c = ctx(serde_json::json!({"formats": {"line.dat": "SEG-2"}}));
        assert!(
            confirm_guessed_format(&mut c, "Seismic", Path::new("line.dat"), "SEG-Y rev 1")
                .is_err()
        );
    }
}

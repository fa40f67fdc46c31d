//! Text for Markdown and CSV: one escape each.

/// Text safe inside a Markdown table cell (pipes escaped, one line). The report writer's own
/// function, so a cell reads the same in every section.
pub use crate::report::cell;

/// A CSV field: quoted (with doubled quotes) when it holds a comma, a quote or a newline.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A bulleted list of notes under a bold heading, or nothing when there are none.
pub fn notes(heading: &str, notes: &[String]) -> String {
    if notes.is_empty() {
        return String::new();
    }
    let mut md = format!("\n**{heading}**\n\n");
    for n in notes {
        md.push_str(&format!("- {n}\n"));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_and_fields_are_escaped() {
        assert_eq!(cell("a|b\nc"), "a\\|b c");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(notes("N.", &[]), "");
        assert_eq!(notes("N.", &["a".into()]), "\n**N.**\n\n- a\n");
    }
}

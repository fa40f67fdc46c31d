//! Text from outside the program — a data file's bytes, a model's words, a server's error
//! body — made safe to show: control characters become visible escapes, so a file cannot
//! clear the terminal (ESC[2J), set its title (OSC), ring the bell or hide a NUL in a report.

/// `text` with every control character except newline and tab written as `\xNN` (C0, DEL)
/// or `\u{NN}` (C1), so it can be printed or written into a report as it is.
pub fn visible(text: &str) -> String {
    if !text.chars().any(needs_escape) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !needs_escape(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02X}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:X}}}", c as u32));
        }
    }
    out
}

fn needs_escape(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_sequences_are_shown_not_obeyed() {
        assert_eq!(visible("plain\tline\n"), "plain\tline\n");
        assert_eq!(visible("\u{1b}[2Jgone"), "\\x1B[2Jgone");
        assert_eq!(
            visible("\u{1b}]0;title\u{7}\0\r\u{7f}\u{9b}"),
            "\\x1B]0;title\\x07\\x00\\x0D\\x7F\\u{9B}"
        );
        assert_eq!(visible("ρa Ω·m"), "ρa Ω·m");
    }
}

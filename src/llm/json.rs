//! Reading JSON out of what models actually write: prose around it, code fences, two objects
//! where one was asked for, a reply cut mid-object — and the `why` field while it is still
//! arriving, so reasoning can be shown as it streams.

use serde_json::{Map, Value};

/// Every complete top-level JSON object in `text`, in order (strings and escapes respected,
/// so a brace inside a string does not count).
pub fn objects(text: &str) -> Vec<Map<String, Value>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'{' {
            i += 1;
            continue;
        }
        match balanced_end(&bytes[i..]) {
            Some(len) => {
                if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(&text[i..i + len]) {
                    out.push(m);
                    i += len;
                } else {
                    i += 1;
                }
            }
            None => break,
        }
    }
    out
}

/// The length of the balanced `{…}` starting at `b[0]`, or `None` when it never closes.
fn balanced_end(b: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for (k, &c) in b.iter().enumerate() {
        if in_str {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_str = false;
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The first JSON object in `text`, and how many there were.
pub fn first_object(text: &str) -> Option<(Map<String, Value>, usize)> {
    let all = objects(text);
    let n = all.len();
    all.into_iter().next().map(|m| (m, n))
}

/// The value of the string field `field` so far, from JSON that may be incomplete (a stream):
/// escapes are decoded; an escape cut at the end is dropped.
pub fn partial_string_field(text: &str, field: &str) -> Option<String> {
    let key = format!("\"{field}\"");
    let at = text.find(&key)? + key.len();
    let rest = text[at..].trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => {}
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('/') => out.push('/'),
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    if hex.len() < 4 {
                        return Some(out);
                    }
                    if let Some(ch) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                        out.push(ch);
                    }
                }
                Some(other) => out.push(other),
                None => return Some(out),
            },
            other => out.push(other),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_fences_and_two_objects() {
        let text = "Sure! Here is my answer:\n```json\n{\"why\": \"the data {are} loaded\", \"tool\": \"invert_ert\"}\n```\nAlso {\"tool\": \"x\"}";
        let (m, n) = first_object(text).unwrap();
        assert_eq!(m["tool"], "invert_ert");
        assert_eq!(n, 2);
        assert!(first_object("no json here").is_none());
        assert!(first_object("{\"why\": \"cut mid").is_none());
    }

    #[test]
    fn the_why_field_while_it_streams() {
        assert_eq!(
            partial_string_field("{\"why\": \"the da", "why").as_deref(),
            Some("the da")
        );
        assert_eq!(
            partial_string_field("{\"why\":\"a \\\"b\\\" c\\n", "why").as_deref(),
            Some("a \"b\" c\n")
        );
        assert_eq!(
            partial_string_field("{\"why\": \"x\\u00", "why").as_deref(),
            Some("x")
        );
        assert_eq!(
            partial_string_field("{\"why\": \"done\", \"tool\"", "why").as_deref(),
            Some("done")
        );
        assert_eq!(partial_string_field("{\"tool\": \"a\"", "why"), None);
    }
}

//! Server-sent events, parsed as the specification says: an event is the lines up to a blank
//! line; `data:` lines are joined with newlines; lines starting with `:` are comments;
//! `event:` names the event; a single space after the colon is dropped; `\r\n` and `\n` both
//! end a line. OpenAI-style streams end with `data: [DONE]`.

use std::io::BufRead;

/// One event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field (empty when absent).
    pub event: String,
    /// The `data:` lines joined by `\n`.
    pub data: String,
}

impl SseEvent {
    /// The OpenAI end-of-stream marker.
    pub fn is_done(&self) -> bool {
        self.data.trim() == "[DONE]"
    }
}

/// Accumulates lines into events.
#[derive(Debug, Default)]
pub struct SseParser {
    event: String,
    data: Vec<String>,
    has_data: bool,
}

impl SseParser {
    /// A parser with nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed one line (without its line ending); returns an event when the line completes one.
    pub fn line(&mut self, line: &str) -> Option<SseEvent> {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                self.data.push(value.to_string());
                self.has_data = true;
            }
            "event" => self.event = value.to_string(),
            _ => {}
        }
        None
    }

    /// The event pending at the end of the stream, if a final blank line never came.
    pub fn finish(&mut self) -> Option<SseEvent> {
        self.dispatch()
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        if !self.has_data {
            self.event.clear();
            return None;
        }
        let e = SseEvent {
            event: std::mem::take(&mut self.event),
            data: std::mem::take(&mut self.data).join("\n"),
        };
        self.has_data = false;
        Some(e)
    }
}

/// Read events from `reader`, calling `on_event` for each until it returns `false` or the
/// stream ends. Returns whether the stream ended cleanly (as opposed to an I/O error, which is
/// returned).
pub fn read_events(
    reader: impl BufRead,
    mut on_event: impl FnMut(SseEvent) -> bool,
) -> std::io::Result<()> {
    let mut parser = SseParser::new();
    for line in reader.lines() {
        let line = line?;
        if let Some(e) = parser.line(&line)
            && !on_event(e)
        {
            return Ok(());
        }
    }
    if let Some(e) = parser.finish() {
        on_event(e);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<SseEvent> {
        let mut out = Vec::new();
        read_events(text.as_bytes(), |e| {
            out.push(e);
            true
        })
        .unwrap();
        out
    }

    #[test]
    fn multi_line_data_comments_names_and_done() {
        let text = ": keep-alive\n\nevent: message\ndata: {\"a\":\ndata: 1}\n\ndata:[DONE]\r\n\r\n";
        let ev = all(text);
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].event, "message");
        assert_eq!(ev[0].data, "{\"a\":\n1}");
        assert!(ev[1].is_done());
    }

    #[test]
    fn a_final_event_without_a_blank_line_is_kept() {
        let ev = all("data: x");
        assert_eq!(
            ev,
            vec![SseEvent {
                event: String::new(),
                data: "x".into()
            }]
        );
    }
}

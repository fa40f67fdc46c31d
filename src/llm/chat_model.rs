//! The chat's model over the providers' tool-calling APIs (OpenAI-compatible `tools` /
//! `tool_calls`; Anthropic `tools` / `tool_use` blocks). Not streamed: a chat turn shows its
//! text when it is complete.

use serde_json::{Value, json};

use super::client::Client;
use super::harness::{ChatMessage, ChatModel, Role, ToolCall};
use super::settings::Provider;

/// A chat model behind a client.
#[derive(Debug)]
pub struct ProviderChat {
    client: Client,
    /// Tokens and cost so far: (in, out, US$).
    pub usage: (u64, u64, f64),
}

impl ProviderChat {
    /// A chat model speaking through `client`.
    pub fn new(client: Client) -> Self {
        ProviderChat {
            client,
            usage: (0, 0, 0.0),
        }
    }
}

/// The request body for OpenAI-compatible chat completions with tools.
pub fn openai_body(model: &str, system: &str, messages: &[ChatMessage], tools: &[Value]) -> Value {
    let mut msgs = vec![json!({"role": "system", "content": system})];
    for m in messages {
        msgs.push(match m.role {
            Role::User => json!({"role": "user", "content": m.content}),
            Role::Assistant => {
                let mut a = json!({"role": "assistant", "content": if m.content.is_empty() { Value::Null } else { Value::from(m.content.clone()) }});
                if !m.tool_calls.is_empty() {
                    a["tool_calls"] = Value::Array(
                        m.tool_calls
                            .iter()
                            .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments.to_string()}}))
                            .collect(),
                    );
                }
                a
            }
            Role::Tool => json!({"role": "tool", "tool_call_id": m.tool_call_id, "content": if m.is_error { format!("ERROR: {}", m.content) } else { m.content.clone() }}),
        });
    }
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| json!({"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t["parameters"]}}))
        .collect();
    let mut b = json!({"model": model, "messages": msgs, "temperature": 0.2});
    if !tools.is_empty() {
        b["tools"] = Value::Array(tools);
    }
    b
}

/// The request body for Anthropic Messages with tools: tool results travel in user messages,
/// consecutive ones merged so roles alternate.
pub fn anthropic_body(
    model: &str,
    system: &str,
    messages: &[ChatMessage],
    tools: &[Value],
) -> Value {
    let mut out: Vec<Value> = Vec::new();
    let mut push = |role: &str, block: Value| {
        if let Some(last) = out.last_mut()
            && last["role"] == role
            && let Some(arr) = last["content"].as_array_mut()
        {
            arr.push(block);
            return;
        }
        out.push(json!({"role": role, "content": [block]}));
    };
    for m in messages {
        match m.role {
            Role::User => push("user", json!({"type": "text", "text": m.content})),
            Role::Tool => push(
                "user",
                json!({"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content, "is_error": m.is_error}),
            ),
            Role::Assistant => {
                if !m.content.is_empty() {
                    push("assistant", json!({"type": "text", "text": m.content}));
                }
                for c in &m.tool_calls {
                    push(
                        "assistant",
                        json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}),
                    );
                }
            }
        }
    }
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}))
        .collect();
    json!({"model": model, "system": system, "messages": out, "tools": tools, "max_tokens": 4096, "temperature": 0.2})
}

/// The assistant message and usage in a provider's answer.
pub fn parse_reply(provider: Provider, v: &Value) -> Result<(ChatMessage, u64, u64), String> {
    match provider {
        Provider::OpenAi => {
            let m = &v["choices"][0]["message"];
            if m.is_null() {
                return Err(format!(
                    "the answer held no message: {}",
                    v.to_string().chars().take(200).collect::<String>()
                ));
            }
            let calls = m["tool_calls"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|c| ToolCall {
                            id: c["id"].as_str().unwrap_or("").to_string(),
                            name: c["function"]["name"].as_str().unwrap_or("").to_string(),
                            arguments: c["function"]["arguments"]
                                .as_str()
                                .and_then(|s| serde_json::from_str(s).ok())
                                .unwrap_or(Value::Null),
                        })
                        .collect()
                })
                .unwrap_or_default();
            Ok((
                ChatMessage::assistant(m["content"].as_str().unwrap_or(""), calls),
                v["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
                v["usage"]["completion_tokens"].as_u64().unwrap_or(0),
            ))
        }
        Provider::Anthropic => {
            let blocks = v["content"]
                .as_array()
                .ok_or("the answer held no content")?;
            let text: String = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
            let calls = blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| ToolCall {
                    id: b["id"].as_str().unwrap_or("").to_string(),
                    name: b["name"].as_str().unwrap_or("").to_string(),
                    arguments: b["input"].clone(),
                })
                .collect();
            Ok((
                ChatMessage::assistant(&text, calls),
                v["usage"]["input_tokens"].as_u64().unwrap_or(0),
                v["usage"]["output_tokens"].as_u64().unwrap_or(0),
            ))
        }
    }
}

impl ChatModel for ProviderChat {
    fn complete(
        &mut self,
        system: &str,
        messages: &[ChatMessage],
        tools: &[Value],
    ) -> Result<ChatMessage, String> {
        let s = self.client.settings();
        let body = match s.provider {
            Provider::OpenAi => openai_body(&s.model, system, messages, tools),
            Provider::Anthropic => anthropic_body(&s.model, system, messages, tools),
        };
        let provider = s.provider;
        let v = self.client.post_json(&body).map_err(|e| e.to_string())?;
        let (msg, tin, tout) = parse_reply(provider, &v)?;
        self.usage.0 += tin;
        self.usage.1 += tout;
        self.usage.2 += self.client.cost(tin, tout);
        Ok(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_calls_round_trip_through_both_wire_formats() {
        let msgs = vec![
            ChatMessage::user("invert"),
            ChatMessage::assistant(
                "",
                vec![ToolCall {
                    id: "c1".into(),
                    name: "apply_action".into(),
                    arguments: json!({"module": "ert"}),
                }],
            ),
            ChatMessage::result("c1", "started", false),
            ChatMessage::result("c2", "declined", false),
        ];
        let tools = vec![
            json!({"name": "apply_action", "description": "d", "parameters": {"type": "object"}}),
        ];
        let o = openai_body("m", "sys", &msgs, &tools);
        assert_eq!(
            o["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"module\":\"ert\"}"
        );
        assert_eq!(o["messages"][3]["role"], "tool");
        let a = anthropic_body("m", "sys", &msgs, &tools);
        assert_eq!(
            a["messages"].as_array().unwrap().len(),
            3,
            "the two results merge into one user turn"
        );
        assert_eq!(a["messages"][2]["content"][1]["tool_use_id"], "c2");
        let reply = json!({"choices": [{"message": {"content": null, "tool_calls": [{"id": "x", "type": "function", "function": {"name": "list_modules", "arguments": "{}"}}]}}], "usage": {"prompt_tokens": 10, "completion_tokens": 2}});
        let (m, tin, _) = parse_reply(Provider::OpenAi, &reply).unwrap();
        assert_eq!(m.tool_calls[0].name, "list_modules");
        assert_eq!(tin, 10);
        let reply = json!({"content": [{"type": "text", "text": "Let me look."}, {"type": "tool_use", "id": "t", "name": "read_state", "input": {}}], "usage": {"input_tokens": 5, "output_tokens": 3}});
        let (m, _, tout) = parse_reply(Provider::Anthropic, &reply).unwrap();
        assert_eq!(
            (m.content.as_str(), m.tool_calls.len(), tout),
            ("Let me look.", 1, 3)
        );
    }
}

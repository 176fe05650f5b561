//! The chat-completions wire format: our [`ChatRequest`] as a request body,
//! and a response body back into a [`ChatResponse`].
//!
//! The parser reads the body as an untyped JSON value on purpose: servers
//! that call themselves OpenAI-compatible differ (content as a string, null
//! or an array of parts; arguments as a string or an object; the legacy
//! `function_call`; missing `usage`). Anything that still carries a message
//! is accepted and passed on as it is, so that the engine, not the
//! transport, decides what a contract violation means for the node. Only a
//! body without a message (no choices, not JSON) is a protocol error.

use super::OpenAiConfig;
use crate::config::RESERVED_BODY_FIELDS;
use crate::model::{
    ChatRequest, ChatResponse, FinishReason, Message, ModelError, ModelErrorKind, ToolCall,
    ToolChoice, Usage,
};
use serde_json::{Map, Value, json};

/// The JSON body for `POST {base}/chat/completions`. `temperature` and
/// the token limit are sent only when configured; `extra_body` is merged
/// last, except over the conversation fields (config validation refuses
/// those, and this keeps them even if a caller did not validate).
pub fn request_body(cfg: &OpenAiConfig, request: &ChatRequest) -> Value {
    let messages: Vec<Value> = request.messages.iter().map(message_json).collect();
    let mut body = Map::new();
    body.insert("model".into(), json!(cfg.model));
    body.insert("messages".into(), Value::Array(messages));
    if let Some(t) = cfg.temperature {
        body.insert("temperature".into(), json!(t));
    }
    body.insert("stream".into(), json!(cfg.streaming));
    if cfg.streaming && cfg.stream_usage {
        // Without it, a stream carries no token counts.
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if let Some(m) = cfg.max_tokens {
        body.insert(cfg.max_tokens_field.as_str().into(), json!(m));
    }
    for (k, v) in &cfg.extra_body {
        if !RESERVED_BODY_FIELDS.contains(&k.as_str()) {
            body.insert(k.clone(), v.clone());
        }
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": schema_or_empty(&t.parameters),
                    }
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let choice = match request.tool_choice {
            ToolChoice::Auto => "auto",
            ToolChoice::None => "none",
        };
        body.insert("tool_choice".into(), json!(choice));
    }
    Value::Object(body)
}

/// A function's `parameters` must be a JSON-schema object; a tool without
/// arguments still needs `{"type": "object"}` for strict servers.
fn schema_or_empty(schema: &Value) -> Value {
    match schema {
        Value::Object(m) if !m.is_empty() => schema.clone(),
        _ => json!({"type": "object", "properties": {}}),
    }
}

fn message_json(m: &Message) -> Value {
    match m {
        Message::System { content } => json!({"role": "system", "content": content}),
        Message::User { content } => json!({"role": "user", "content": content}),
        Message::Assistant {
            content,
            tool_calls,
        } => {
            let mut o = Map::new();
            o.insert("role".into(), json!("assistant"));
            o.insert(
                "content".into(),
                content.as_ref().map_or(Value::Null, |c| json!(c)),
            );
            // An empty `tool_calls` array is rejected by some servers.
            if !tool_calls.is_empty() {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|c| {
                        json!({
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": c.arguments},
                        })
                    })
                    .collect();
                o.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(o)
        }
        Message::Tool {
            tool_call_id,
            content,
        } => json!({"role": "tool", "tool_call_id": tool_call_id, "content": content}),
    }
}

fn protocol(message: impl Into<String>) -> ModelError {
    ModelError::new(ModelErrorKind::Protocol, message)
}

/// Parses a 2xx response body.
pub fn parse_response(body: &[u8]) -> Result<ChatResponse, ModelError> {
    // A server that streams although `stream: false` was asked for.
    if super::stream::looks_like_sse(body) {
        return parse_value(super::stream::assemble(body)?);
    }
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        protocol(format!(
            "response body is not JSON ({e}); it starts with {:?}",
            super::errors::snippet(body, 80)
        ))
    })?;
    parse_value(value)
}

pub(super) fn parse_value(value: Value) -> Result<ChatResponse, ModelError> {
    let Value::Object(root) = value else {
        return Err(protocol("response body is not a JSON object"));
    };
    // Some gateways answer 200 with an error object instead of a status.
    if let Some(err) = root.get("error").filter(|e| !e.is_null())
        && root.get("choices").is_none()
    {
        return Err(protocol(format!(
            "provider returned an error object: {}",
            super::errors::error_text(err)
        )));
    }
    let choice = match root.get("choices") {
        Some(Value::Array(choices)) => match choices.first() {
            Some(Value::Object(c)) => c,
            Some(_) => return Err(protocol("choices[0] is not an object")),
            None => return Err(protocol("the response has an empty choice list")),
        },
        Some(_) => return Err(protocol("`choices` is not an array")),
        None => return Err(protocol("the response has no `choices`")),
    };
    let message = match choice.get("message") {
        Some(Value::Object(m)) => m,
        _ => return Err(protocol("choices[0] has no message object")),
    };
    // A number or an object where the text should be is a broken answer:
    // read as "no content" it would surface as an empty model output.
    if let Some(v) = message
        .get("content")
        .filter(|v| matches!(v, Value::Bool(_) | Value::Number(_) | Value::Object(_)))
    {
        return Err(protocol(format!(
            "choices[0].message.content is {}, not text",
            crate::text::json_kind(v)
        )));
    }
    let content = parse_content(message.get("content"));
    // DeepSeek, vLLM and DashScope name it `reasoning_content`; OpenRouter
    // and some Ollama builds `reasoning`.
    let reasoning = ["reasoning_content", "reasoning"]
        .iter()
        .find_map(|k| parse_content(message.get(*k)))
        .filter(|r| !r.trim().is_empty());
    let mut tool_calls = parse_tool_calls(message.get("tool_calls"));
    if tool_calls.is_empty()
        && let Some(Value::Object(f)) = message.get("function_call")
    {
        tool_calls.extend(function_call(f, 0));
    }
    let finish_reason = match choice.get("finish_reason").and_then(Value::as_str) {
        Some("stop") | Some("eos") => FinishReason::Stop,
        Some("tool_calls") | Some("function_call") => FinishReason::ToolCalls,
        Some("length") => FinishReason::Length,
        Some(_) => FinishReason::Other,
        None if !tool_calls.is_empty() => FinishReason::ToolCalls,
        None => FinishReason::Stop,
    };
    let mut notes = vec![];
    // A refusal is neither content nor a tool call; keep the reason visible.
    if let Some(r) = message.get("refusal").and_then(Value::as_str)
        && content.is_none()
        && tool_calls.is_empty()
    {
        notes.push(format!("model refused: {}", crate::text::clean(r, 200)));
    }
    Ok(ChatResponse {
        content,
        tool_calls,
        finish_reason,
        usage: parse_usage(root.get("usage")),
        reasoning,
        served_by: None,
        notes,
    })
}

fn parse_content(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) => Some(s.clone()),
        // Content parts: [{"type": "text", "text": "..."}, ...].
        Some(Value::Array(parts)) => {
            let text: Vec<&str> = parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(o) => o.get("text").and_then(Value::as_str),
                    _ => None,
                })
                .collect();
            if text.is_empty() {
                None
            } else {
                Some(text.concat())
            }
        }
        _ => None,
    }
}

fn parse_tool_calls(v: Option<&Value>) -> Vec<ToolCall> {
    let Some(Value::Array(calls)) = v else {
        return vec![];
    };
    calls
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let c = c.as_object()?;
            let f = c.get("function")?.as_object()?;
            let mut call = function_call(f, i)?;
            if let Some(id) = c
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                call.id = id.to_string();
            }
            Some(call)
        })
        .collect()
}

/// A `{name, arguments}` object. Arguments stay raw text, even when they are
/// not valid JSON: the Executor decides what a broken call means.
fn function_call(f: &Map<String, Value>, index: usize) -> Option<ToolCall> {
    let name = f
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let arguments = match f.get("arguments") {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        // Some servers (older Ollama builds) send an object.
        Some(other) => other.to_string(),
    };
    Some(ToolCall {
        id: format!("call_{index}"),
        name,
        arguments,
    })
}

/// `usage` with its optional details: reasoning tokens
/// (`completion_tokens_details.reasoning_tokens`) and cached prompt tokens
/// (`prompt_tokens_details.cached_tokens`, DeepSeek's
/// `prompt_cache_hit_tokens`). Absent figures stay None, never 0.
fn parse_usage(v: Option<&Value>) -> Usage {
    let at = |path: &[&str]| {
        let mut cur = v?;
        for k in path {
            cur = cur.get(*k)?;
        }
        cur.as_u64()
    };
    Usage {
        prompt_tokens: at(&["prompt_tokens"]).unwrap_or(0),
        completion_tokens: at(&["completion_tokens"]).unwrap_or(0),
        reasoning_tokens: at(&["completion_tokens_details", "reasoning_tokens"]),
        cached_tokens: at(&["prompt_tokens_details", "cached_tokens"])
            .or_else(|| at(&["prompt_cache_hit_tokens"])),
        cost_usd: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::dto::ExecutorInput;
    use crate::vocab::tool::ToolSpec;

    fn request(tools: bool) -> ChatRequest {
        ChatRequest {
            attempt: 1,
            input: ExecutorInput::default().into(),
            messages: vec![
                Message::System {
                    content: "s".into(),
                },
                Message::User {
                    content: "u".into(),
                },
                Message::Assistant {
                    content: None,
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "query_logs".into(),
                        arguments: "{\"service\":\"a\"}".into(),
                    }],
                },
                Message::Tool {
                    tool_call_id: "c1".into(),
                    content: "{}".into(),
                },
            ],
            tool_choice: ToolChoice::Auto,
            tools: if tools {
                vec![std::sync::Arc::new(ToolSpec {
                    name: "query_logs".into(),
                    description: "logs".into(),
                    evidence_arrays: vec![],
                    parameters: json!({"type": "object", "properties": {"service": {"type": "string"}}}),
                })]
            } else {
                vec![]
            },
            script: Default::default(),
        }
    }

    #[test]
    fn body_maps_messages_and_tools() {
        let mut cfg = OpenAiConfig::new("http://localhost/v1", "m");
        cfg.max_tokens = Some(100);
        let b = request_body(&cfg, &request(true));
        assert_eq!(
            b["messages"][2]["tool_calls"][0]["function"]["name"],
            "query_logs"
        );
        assert_eq!(b["messages"][2]["content"], Value::Null);
        assert_eq!(b["messages"][3]["tool_call_id"], "c1");
        assert_eq!(b["tools"][0]["type"], "function");
        assert_eq!(b["tool_choice"], "auto");
        assert_eq!(b["max_tokens"], 100);
        // Temperature is not sent unless set.
        assert!(b.get("temperature").is_none());
        let b = request_body(
            &OpenAiConfig::new("http://localhost/v1", "m"),
            &request(false),
        );
        assert!(b.get("tools").is_none() && b.get("tool_choice").is_none());
        assert!(b.get("max_tokens").is_none());
    }

    #[test]
    fn body_options_temperature_token_field_extra_body_and_forced_turn() {
        let mut cfg = OpenAiConfig::new("http://localhost/v1", "o3-mini");
        cfg.temperature = Some(0.2);
        cfg.max_tokens = Some(64);
        cfg.max_tokens_field = crate::config::MaxTokensField::MaxCompletionTokens;
        cfg.extra_body
            .insert("enable_thinking".into(), json!(false));
        cfg.extra_body.insert("messages".into(), json!([]));
        let mut req = request(true);
        req.tool_choice = ToolChoice::None;
        let b = request_body(&cfg, &req);
        assert_eq!(b["temperature"], 0.2);
        assert_eq!(b["max_completion_tokens"], 64);
        assert!(b.get("max_tokens").is_none());
        assert_eq!(b["enable_thinking"], false);
        // The conversation cannot be replaced through extra_body.
        assert_eq!(b["messages"].as_array().map(Vec::len), Some(4));
        // The forced last turn keeps the tools and says "none".
        assert_eq!(b["tools"][0]["function"]["name"], "query_logs");
        assert_eq!(b["tool_choice"], "none");
    }

    #[test]
    fn usage_details_are_read_when_reported() {
        let r = parse_response(
            br#"{"choices":[{"message":{"content":"{}"}}],"usage":{"prompt_tokens":100,"completion_tokens":40,
               "prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":32}}}"#,
        )
        .unwrap();
        assert_eq!(
            (r.usage.prompt_tokens, r.usage.completion_tokens),
            (100, 40)
        );
        assert_eq!(r.usage.reasoning_tokens, Some(32));
        assert_eq!(r.usage.cached_tokens, Some(64));
        let r = parse_response(
            br#"{"choices":[{"message":{"content":"{}"}}],"usage":{"prompt_tokens":1,"completion_tokens":2,"prompt_cache_hit_tokens":1}}"#,
        )
        .unwrap();
        assert_eq!(r.usage.cached_tokens, Some(1));
        assert_eq!(r.usage.reasoning_tokens, None);
    }

    #[test]
    fn reasoning_fields_are_kept_apart_from_content() {
        let r = parse_response(
            br#"{"choices":[{"message":{"content":"{}","reasoning_content":"thinking..."}}]}"#,
        )
        .unwrap();
        assert_eq!(r.reasoning.as_deref(), Some("thinking..."));
        assert_eq!(r.content.as_deref(), Some("{}"));
        let r = parse_response(br#"{"choices":[{"message":{"content":"{}","reasoning":"r"}}]}"#)
            .unwrap();
        assert_eq!(r.reasoning.as_deref(), Some("r"));
    }

    #[test]
    fn parses_content_parts_legacy_calls_and_object_arguments() {
        let r = parse_response(
            br#"{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"finish_reason":"stop"}]}"#,
        )
        .unwrap();
        assert_eq!(r.content.as_deref(), Some("ab"));
        assert_eq!(r.usage, Usage::default());
        let r = parse_response(
            br#"{"choices":[{"message":{"content":null,"function_call":{"name":"f","arguments":"{}"}},"finish_reason":"function_call"}]}"#,
        )
        .unwrap();
        assert_eq!(r.finish_reason, FinishReason::ToolCalls);
        assert_eq!(r.tool_calls[0].name, "f");
        let r = parse_response(
            br#"{"choices":[{"message":{"tool_calls":[{"function":{"name":"g","arguments":{"a":1}}}]}}]}"#,
        )
        .unwrap();
        assert_eq!(r.tool_calls[0].arguments, r#"{"a":1}"#);
        assert_eq!(r.tool_calls[0].id, "call_0");
        assert_eq!(r.finish_reason, FinishReason::ToolCalls);
    }

    #[test]
    fn odd_bodies_are_protocol_errors_not_panics() {
        for bad in [
            &b"[]"[..],
            b"null",
            b"{}",
            b"{\"choices\": {}}",
            b"{\"choices\": [1]}",
            b"{\"choices\": [{}]}",
            b"{\"error\": {\"message\": \"overloaded\"}}",
            b"\xff\xfe",
        ] {
            let e = parse_response(bad).unwrap_err();
            assert_eq!(e.kind, ModelErrorKind::Protocol, "{bad:?}");
        }
    }

    #[test]
    fn content_of_the_wrong_type_is_a_protocol_error_that_says_so() {
        for (bad, kind) in [
            (
                &br#"{"choices":[{"message":{"content":42}}]}"#[..],
                "a number",
            ),
            (
                br#"{"choices":[{"message":{"content":{"text":"x"}}}]}"#,
                "an object",
            ),
            (
                br#"{"choices":[{"message":{"content":true}}]}"#,
                "a boolean",
            ),
        ] {
            let e = parse_response(bad).unwrap_err();
            assert_eq!(e.kind, ModelErrorKind::Protocol);
            assert_eq!(
                e.message,
                format!("choices[0].message.content is {kind}, not text")
            );
        }
        // null (a tool-call turn) and content parts stay valid.
        assert!(parse_response(br#"{"choices":[{"message":{"content":null}}]}"#).is_ok());
    }
}

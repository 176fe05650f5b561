//! Server-sent events from a server that streams although the request said
//! `stream: false`: the chunks are assembled into the one-shot response
//! shape, so the rest of the provider sees a normal completion.
//!
//! Deltas follow the documented `chat.completion.chunk` format: `content`
//! pieces are concatenated; `tool_calls` pieces are merged by `index` (the
//! first piece carries `id` and `function.name`, later ones append to
//! `function.arguments`); the last chunk may carry `finish_reason` and
//! `usage`.

use crate::model::{ModelError, ModelErrorKind};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

pub fn looks_like_sse(body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&body[..body.len().min(64)]);
    let t = text.trim_start();
    t.starts_with("data:") || t.starts_with("event:") || t.starts_with(": ")
}

#[derive(Default)]
struct Call {
    id: String,
    name: String,
    arguments: String,
}

pub fn assemble(body: &[u8]) -> Result<Value, ModelError> {
    let text = String::from_utf8_lossy(body);
    let mut content: Option<String> = None;
    let mut reasoning = String::new();
    let mut calls: BTreeMap<u64, Call> = BTreeMap::new();
    let mut finish = Value::Null;
    let mut usage = Value::Null;
    let mut chunks = 0usize;
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data:").map(str::trim) else {
            continue;
        };
        if data == "[DONE]" {
            break;
        }
        let Ok(chunk) = serde_json::from_str::<Value>(data) else {
            return Err(ModelError::new(
                ModelErrorKind::Protocol,
                format!(
                    "a streamed chunk is not JSON: {:?}",
                    crate::text::clean(data, 80)
                ),
            ));
        };
        chunks += 1;
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            usage = u.clone();
        }
        let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) else {
            continue;
        };
        if let Some(f) = choice.get("finish_reason").filter(|f| !f.is_null()) {
            finish = f.clone();
        }
        let Some(delta) = choice.get("delta").and_then(Value::as_object) else {
            continue;
        };
        if let Some(piece) = delta.get("content").and_then(Value::as_str) {
            content.get_or_insert_with(String::new).push_str(piece);
        }
        for key in ["reasoning_content", "reasoning"] {
            if let Some(piece) = delta.get(key).and_then(Value::as_str) {
                reasoning.push_str(piece);
            }
        }
        for (pos, c) in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let index = c.get("index").and_then(Value::as_u64).unwrap_or(pos as u64);
            let call = calls.entry(index).or_default();
            if let Some(id) = c.get("id").and_then(Value::as_str) {
                call.id = id.to_string();
            }
            if let Some(f) = c.get("function") {
                if let Some(n) = f.get("name").and_then(Value::as_str) {
                    call.name.push_str(n);
                }
                if let Some(a) = f.get("arguments").and_then(Value::as_str) {
                    call.arguments.push_str(a);
                }
            }
        }
    }
    if chunks == 0 {
        return Err(ModelError::new(
            ModelErrorKind::Protocol,
            "the streamed response has no data chunks",
        ));
    }
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    message.insert("content".into(), content.map_or(Value::Null, Value::String));
    if !reasoning.is_empty() {
        message.insert("reasoning_content".into(), Value::String(reasoning));
    }
    if !calls.is_empty() {
        let calls: Vec<Value> = calls
            .into_values()
            .map(|c| {
                json!({"id": c.id, "type": "function",
                       "function": {"name": c.name, "arguments": c.arguments}})
            })
            .collect();
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    Ok(json!({
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FinishReason;
    use crate::model::openai::parse_response;

    #[test]
    fn streamed_tool_calls_and_content_are_assembled() {
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Let me \"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"check.\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_9\",\"type\":\"function\",\"function\":{\"name\":\"query_metrics\",\"arguments\":\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"service\\\":\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"payment-service\\\"}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3}}\n\n",
            "data: [DONE]\n\n"
        );
        let r = parse_response(body.as_bytes()).unwrap();
        assert_eq!(r.content.as_deref(), Some("Let me check."));
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(r.tool_calls[0].id, "call_9");
        assert_eq!(
            r.tool_calls[0].arguments,
            "{\"service\":\"payment-service\"}"
        );
        assert_eq!(r.finish_reason, FinishReason::ToolCalls);
        assert_eq!(r.usage.total(), 10);
    }

    #[test]
    fn broken_streams_are_protocol_errors() {
        for bad in [
            "data: {not json\n\n",
            "data: [DONE]\n\n",
            ": keep-alive\n\n",
        ] {
            let e = parse_response(bad.as_bytes()).unwrap_err();
            assert_eq!(e.kind, ModelErrorKind::Protocol, "{bad}");
        }
    }
}

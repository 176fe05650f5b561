//! Streamed completions (`stream: true`, Server-Sent Events of
//! `chat.completion.chunk`s) assembled into the one-shot response shape,
//! so the rest of the provider sees a normal completion. The same code
//! reads a server that streams although the request said `stream: false`.
//!
//! Deltas follow the documented chunk format: `content` and
//! `reasoning_content` pieces are concatenated; `tool_calls` pieces are
//! merged by `index` (the first piece carries `id` and `function.name`,
//! later ones append to `function.arguments`); a chunk may carry
//! `finish_reason`, and with `stream_options.include_usage` a last chunk
//! with empty `choices` carries `usage`; `data: [DONE]` ends the stream.
//!
//! A stream is complete when `[DONE]` came, or at least a `finish_reason`
//! (some servers close without `[DONE]`). A stream that stops before
//! either was cut: that is a transport failure (retryable), never a
//! partial answer, however much JSON it already carried.

use crate::model::{DeltaPart, ModelError, ModelErrorKind};
use crate::text::sse::SseParser;
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

/// A streamed completion being read: fed SSE bytes as they arrive, it
/// reports each piece of text and ends as a one-shot response body.
#[derive(Default)]
pub struct Assembler {
    sse: SseParser,
    content: Option<String>,
    reasoning: String,
    calls: BTreeMap<u64, Call>,
    finish: Value,
    usage: Value,
    chunks: usize,
    done: bool,
}

/// The failure of a stream that stopped before its end.
pub fn cut(message: impl Into<String>) -> ModelError {
    ModelError::new(ModelErrorKind::Connection, message)
}

impl Assembler {
    /// Reads `bytes` (cut anywhere), reporting each text piece to
    /// `deltas`. Bytes after `[DONE]` are ignored.
    pub fn feed(
        &mut self,
        bytes: &[u8],
        deltas: &mut dyn FnMut(DeltaPart, &str),
    ) -> Result<(), ModelError> {
        if self.done {
            return Ok(());
        }
        for frame in self.sse.feed(bytes) {
            self.frame(&frame.data, deltas)?;
            if self.done {
                break;
            }
        }
        Ok(())
    }

    /// The response body, once the bytes have ended: a stream without
    /// `[DONE]` or a `finish_reason` was cut.
    pub fn finish(mut self, deltas: &mut dyn FnMut(DeltaPart, &str)) -> Result<Value, ModelError> {
        if !self.done
            && let Some(last) = self.sse.finish()
        {
            self.frame(&last.data, deltas)?;
        }
        if self.chunks == 0 && !self.done {
            return Err(cut("the stream ended before its first chunk"));
        }
        if self.chunks == 0 {
            return Err(ModelError::new(
                ModelErrorKind::Protocol,
                "the streamed response has no data chunks",
            ));
        }
        if !self.done && self.finish.is_null() {
            return Err(cut(format!(
                "the stream was cut after {} chunk(s), before a finish_reason or [DONE]; \
                 the partial answer is not used",
                self.chunks
            )));
        }
        Ok(self.body())
    }

    /// One `data:` payload.
    fn frame(
        &mut self,
        data: &str,
        deltas: &mut dyn FnMut(DeltaPart, &str),
    ) -> Result<(), ModelError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
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
        // OpenAI and vLLM report a failure after the stream began as a
        // chunk holding only `error`.
        if let Some(err) = chunk.get("error").filter(|e| !e.is_null())
            && chunk.get("choices").is_none()
        {
            return Err(ModelError::new(
                ModelErrorKind::ServerError,
                format!(
                    "the server reported an error mid-stream: {}",
                    super::errors::error_text(err)
                ),
            ));
        }
        self.chunks += 1;
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = u.clone();
        }
        let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) else {
            return Ok(());
        };
        if let Some(f) = choice.get("finish_reason").filter(|f| !f.is_null()) {
            self.finish = f.clone();
        }
        let Some(delta) = choice.get("delta").and_then(Value::as_object) else {
            return Ok(());
        };
        if let Some(piece) = delta.get("content").and_then(Value::as_str) {
            self.content.get_or_insert_with(String::new).push_str(piece);
            if !piece.is_empty() {
                deltas(DeltaPart::Content, piece);
            }
        }
        for key in ["reasoning_content", "reasoning"] {
            if let Some(piece) = delta.get(key).and_then(Value::as_str) {
                self.reasoning.push_str(piece);
                if !piece.is_empty() {
                    deltas(DeltaPart::Reasoning, piece);
                }
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
            let call = self.calls.entry(index).or_default();
            if let Some(id) = c.get("id").and_then(Value::as_str) {
                call.id = id.to_string();
            }
            if let Some(f) = c.get("function") {
                if let Some(n) = f.get("name").and_then(Value::as_str) {
                    call.name.push_str(n);
                    if !n.is_empty() {
                        deltas(DeltaPart::ToolCall, n);
                    }
                }
                if let Some(a) = f.get("arguments").and_then(Value::as_str) {
                    call.arguments.push_str(a);
                    if !a.is_empty() {
                        deltas(DeltaPart::ToolArguments, a);
                    }
                }
            }
        }
        Ok(())
    }

    fn body(self) -> Value {
        let mut message = Map::new();
        message.insert("role".into(), json!("assistant"));
        message.insert(
            "content".into(),
            self.content.map_or(Value::Null, Value::String),
        );
        if !self.reasoning.is_empty() {
            message.insert("reasoning_content".into(), Value::String(self.reasoning));
        }
        if !self.calls.is_empty() {
            let calls: Vec<Value> = self
                .calls
                .into_values()
                .map(|c| {
                    json!({"id": c.id, "type": "function",
                           "function": {"name": c.name, "arguments": c.arguments}})
                })
                .collect();
            message.insert("tool_calls".into(), Value::Array(calls));
        }
        json!({
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish}],
            "usage": self.usage,
        })
    }
}

/// A whole streamed body at once.
pub fn assemble(body: &[u8]) -> Result<Value, ModelError> {
    let mut a = Assembler::default();
    let mut ignore = |_: DeltaPart, _: &str| {};
    a.feed(body, &mut ignore)?;
    a.finish(&mut ignore)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FinishReason;
    use crate::model::openai::parse_response;

    const TOOL_STREAM: &str = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Let me \"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"alerts first\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"check.\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_9\",\"type\":\"function\",\"function\":{\"name\":\"query_metrics\",\"arguments\":\"\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_10\",\"type\":\"function\",\"function\":{\"name\":\"query_logs\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"service\\\":\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"payment-service\\\"}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3,\"completion_tokens_details\":{\"reasoning_tokens\":2}}}\n\n",
        "data: [DONE]\n\n"
    );

    #[test]
    fn streamed_tool_calls_reasoning_and_usage_are_assembled() {
        let r = parse_response(TOOL_STREAM.as_bytes()).unwrap();
        assert_eq!(r.content.as_deref(), Some("Let me check."));
        assert_eq!(r.reasoning.as_deref(), Some("alerts first"));
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(r.tool_calls[0].id, "call_9");
        assert_eq!(
            r.tool_calls[0].arguments,
            "{\"service\":\"payment-service\"}"
        );
        assert_eq!(r.tool_calls[1].name, "query_logs");
        assert_eq!(r.finish_reason, FinishReason::ToolCalls);
        assert_eq!(r.usage.total(), 10);
        assert_eq!(r.usage.reasoning_tokens, Some(2));
    }

    #[test]
    fn bytes_cut_anywhere_give_the_same_answer_and_the_same_pieces() {
        let whole = assemble(TOOL_STREAM.as_bytes()).unwrap();
        let bytes = TOOL_STREAM.as_bytes();
        for cut in (1..bytes.len()).step_by(7) {
            let mut a = Assembler::default();
            let mut text = String::new();
            let mut sink = |part: DeltaPart, piece: &str| {
                if part == DeltaPart::Content {
                    text.push_str(piece)
                }
            };
            a.feed(&bytes[..cut], &mut sink).unwrap();
            a.feed(&bytes[cut..], &mut sink).unwrap();
            assert_eq!(a.finish(&mut sink).unwrap(), whole, "cut at {cut}");
            assert_eq!(text, "Let me check.");
        }
    }

    #[test]
    fn a_stream_cut_before_its_end_is_a_retryable_failure_never_a_partial_answer() {
        let full = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"verdict\\\": \"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\\"PASS\\\"}\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n"
        );
        assert!(parse_response(full.as_bytes()).is_ok());
        // Every prefix that ends before the finish_reason chunk is whole.
        let finish_at = full
            .find("data: {\"choices\":[{\"index\":0,\"delta\":{},")
            .unwrap();
        for end in 1..finish_at {
            let e = parse_response(&full.as_bytes()[..end]);
            if let Err(e) = e {
                assert!(e.is_retryable(), "cut at {end}: {e}");
            } else {
                panic!("a stream cut at {end} was accepted");
            }
        }
        // Cut at the first chunk boundary: the JSON so far is valid, still
        // not an answer.
        let first = full.find("\n\n").unwrap() + 2;
        let e = parse_response(&full.as_bytes()[..first + full[first..].find("\n\n").unwrap() + 2])
            .unwrap_err();
        assert_eq!(e.kind, ModelErrorKind::Connection, "{e}");
        assert!(e.message.contains("cut after 2 chunk(s)"), "{e}");
        // A finish_reason without [DONE] (servers that just close) is whole.
        let r = parse_response(&full.as_bytes()[..full.find("data: [DONE]").unwrap()]).unwrap();
        assert_eq!(r.content.as_deref(), Some("{\"verdict\": \"PASS\"}"));
    }

    #[test]
    fn broken_streams_are_errors() {
        for bad in [
            "data: {not json\n\n",
            "data: [DONE]\n\n",
            ": keep-alive\n\n",
            "data: {\"error\":{\"message\":\"overloaded\",\"code\":\"server_error\"}}\n\n",
            "data: [1, 2]\n\n",
            "data: {\"choices\": \"x\"}\n\n",
        ] {
            let e = parse_response(bad.as_bytes()).unwrap_err();
            assert!(e.is_retryable(), "{bad}: {e}");
        }
        let e = parse_response(
            b"data: {\"error\":{\"message\":\"overloaded\",\"code\":\"server_error\"}}\n\n",
        )
        .unwrap_err();
        assert!(e.message.contains("overloaded"), "{e}");
    }

    #[test]
    fn bytes_after_done_are_ignored() {
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{}\"},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n",
            "data: {garbage\n\n"
        );
        assert_eq!(
            parse_response(body.as_bytes()).unwrap().content.as_deref(),
            Some("{}")
        );
    }
}

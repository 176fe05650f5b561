//! The Prometheus HTTP API's answers: the `data` of a
//! `{"status": "success"}` envelope, or a [`ToolError`] that says plainly
//! what went wrong (the Executor reads it as the failed result). The
//! request itself goes through the tools' one HTTP client
//! ([`crate::tools::http`]).

use crate::text::clean;
use crate::tools::ToolError;
use crate::tools::http::{RawAnswer, status_hint};
use chrono::{DateTime, Utc};
use serde_json::Value;

/// A successful answer: the envelope's `data`, and the server's clock (the
/// `Date` header) so that "active for" is measured on Prometheus' time.
pub struct Answer {
    pub data: Value,
    pub server_time: Option<DateTime<Utc>>,
    /// The envelope's `warnings`: Thanos, Cortex, Mimir and Prometheus
    /// itself answer "success" with data from only some of their stores
    /// and say so here. Such an answer is partial, never whole.
    pub warnings: Vec<String>,
}

/// The `warnings` of a Prometheus envelope, one line each, at most a few.
fn envelope_warnings(json: &Value) -> Vec<String> {
    const MAX: usize = 3;
    let Some(list) = json.get("warnings").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut out: Vec<String> = list
        .iter()
        .take(MAX)
        .map(|w| match w {
            Value::String(s) => clean(s, 200),
            other => clean(&other.to_string(), 200),
        })
        .filter(|w| !w.is_empty())
        .collect();
    if list.len() > MAX {
        out.push(format!("and {} more", list.len() - MAX));
    }
    out
}

/// The answer to GET `path` (with `promql` as its `query=`, if any) read
/// as a Prometheus envelope.
pub fn read(path: &str, promql: Option<&str>, raw: RawAnswer) -> Result<Answer, ToolError> {
    let RawAnswer {
        status,
        server_time,
        body,
    } = raw;
    let json: Option<Value> = serde_json::from_slice(&body).ok();
    let envelope_error = json.as_ref().and_then(|v| {
        let kind = v.get("errorType").and_then(Value::as_str)?;
        let msg = v.get("error").and_then(Value::as_str).unwrap_or("");
        Some((kind.to_string(), clean(msg, 300)))
    });
    if !(200..300).contains(&status) {
        let hint = status_hint(status);
        let message = match (status, envelope_error, promql) {
            (400, Some((kind, msg)), Some(q)) => format!(
                "Prometheus rejected the PromQL query {:?} (HTTP 400, {kind}): {msg}",
                clean(q, 300)
            ),
            (_, Some((kind, msg)), _) => {
                format!("HTTP {status}{hint} (Prometheus {path}, {kind}): {msg}")
            }
            (_, None, _) => {
                let text = clean(&String::from_utf8_lossy(&body), 200);
                let sep = if text.is_empty() { "" } else { ": " };
                format!("HTTP {status}{hint} (Prometheus {path}){sep}{text}")
            }
        };
        return Err(ToolError::Status { status, message });
    }
    let Some(json) = json else {
        return Err(ToolError::BadResponse(format!(
            "Prometheus {path} answered HTTP {status} with a body that is not JSON: {}",
            clean(&String::from_utf8_lossy(&body), 120)
        )));
    };
    if json.get("status").and_then(Value::as_str) != Some("success") {
        let detail = envelope_error
            .map(|(k, m)| format!("{k}: {m}"))
            .unwrap_or_else(|| "no status \"success\" in the answer".into());
        return Err(ToolError::BadResponse(format!(
            "Prometheus {path} failed: {detail}"
        )));
    }
    Ok(Answer {
        data: json.get("data").cloned().unwrap_or(Value::Null),
        server_time,
        warnings: envelope_warnings(&json),
    })
}

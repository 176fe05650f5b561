//! The Prometheus HTTP API as this tool uses it: GET a path, get the `data`
//! of a `{"status": "success"}` envelope, or a [`ToolError`] that says
//! plainly what went wrong (the Executor reads it as the failed result).

use crate::text::clean;
use crate::tools::ToolError;
use crate::tools::http::transport_error;
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::time::Duration;

const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

pub struct Client {
    http: reqwest::Client,
    base: String,
    /// The base URL with any password masked, for messages.
    shown: String,
    timeout: Duration,
}

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

impl Client {
    pub fn new(base_url: &str, timeout: Duration) -> Result<Client, ToolError> {
        let shown = crate::text::mask_url(base_url.trim());
        let base = base_url.trim().trim_end_matches('/').to_string();
        let ok = reqwest::Url::parse(&base)
            .map(|u| matches!(u.scheme(), "http" | "https"))
            .unwrap_or(false);
        if !ok {
            return Err(ToolError::Unavailable(format!(
                "the Prometheus URL {shown:?} is not an http(s) URL"
            )));
        }
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(5)))
            .build()
            .map_err(|e| ToolError::Unavailable(format!("cannot build the HTTP client: {e}")))?;
        Ok(Client {
            http,
            base,
            shown,
            timeout,
        })
    }

    pub fn shown_url(&self) -> &str {
        &self.shown
    }

    /// GET `{base}{path}` with optional `query=` (PromQL) and further
    /// parameters, URL-encoded.
    pub async fn get(
        &self,
        path: &str,
        promql: Option<&str>,
        params: &[(&str, String)],
    ) -> Result<Answer, ToolError> {
        let mut url = reqwest::Url::parse(&format!("{}{path}", self.base))
            .map_err(|e| ToolError::Unavailable(format!("bad Prometheus URL: {e}")))?;
        if let Some(q) = promql {
            url.query_pairs_mut().append_pair("query", q);
        }
        for (k, v) in params {
            url.query_pairs_mut().append_pair(k, v);
        }
        let transport =
            |e: reqwest::Error| transport_error("Prometheus", &self.shown, self.timeout, &e);
        let mut resp = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(transport)?;
        let status = resp.status().as_u16();
        let server_time = resp
            .headers()
            .get(reqwest::header::DATE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| DateTime::parse_from_rfc2822(v).ok())
            .map(|t| t.with_timezone(&Utc));
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(transport)? {
            if body.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(ToolError::BadResponse(format!(
                    "Prometheus {path} answered more than {} MiB; not read",
                    MAX_BODY_BYTES >> 20
                )));
            }
            body.extend_from_slice(&chunk);
        }
        let json: Option<Value> = serde_json::from_slice(&body).ok();
        let envelope_error = json.as_ref().and_then(|v| {
            let kind = v.get("errorType").and_then(Value::as_str)?;
            let msg = v.get("error").and_then(Value::as_str).unwrap_or("");
            Some((kind.to_string(), clean(msg, 300)))
        });
        if !(200..300).contains(&status) {
            let hint = match status {
                401 => ": check the credentials",
                403 => ": the credentials may not read this",
                429 => ": rate limited",
                _ => "",
            };
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
}

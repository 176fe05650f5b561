//! The one HTTP client of the tools: an HTTP JSON API as a backend uses
//! it (Loki, Elasticsearch / OpenSearch, Prometheus): GET or POST,
//! credentials from config, a bounded body, and every failure a
//! [`ToolError`] that says plainly what went wrong. A backend whose API
//! wraps its answers in an envelope (Prometheus) reads the [`RawAnswer`]
//! and words its own errors with the same [`status_hint`]s.
//!
//! Credentials (a bearer token, basic user and password) live in
//! [`Auth`] and go only into request headers: never into a message, the
//! shown URL or `Debug`. Server bodies are untrusted and shown cleaned and
//! cut (`crate::text::clean`).

use crate::text::{clean, mask_url, root_cause};
use crate::tools::ToolError;
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::time::Duration;

const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// How requests authenticate.
#[derive(Clone, Default, PartialEq, Eq)]
pub enum Auth {
    #[default]
    None,
    Bearer(String),
    Basic {
        user: String,
        password: String,
    },
    /// `Authorization: ApiKey …` (Elasticsearch API keys).
    ApiKey(String),
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Auth::None => "none",
            Auth::Bearer(_) => "bearer ***",
            Auth::Basic { .. } => "basic ***",
            Auth::ApiKey(_) => "api key ***",
        })
    }
}

/// An answer as it came: its status, the server's clock (the `Date`
/// header), and its body, read whole up to the cap.
pub struct RawAnswer {
    pub status: u16,
    pub server_time: Option<DateTime<Utc>>,
    pub body: Vec<u8>,
}

/// What a failing status most likely means, as a suffix to "HTTP {status}".
pub fn status_hint(status: u16) -> &'static str {
    match status {
        401 => ": check the credentials",
        403 => ": the credentials may not read this",
        429 => ": rate limited",
        _ => "",
    }
}

pub struct HttpSource {
    http: reqwest::Client,
    /// What the messages call it: `Loki`, `Elasticsearch`.
    name: &'static str,
    base: String,
    shown: String,
    timeout: Duration,
    auth: Auth,
    headers: Vec<(String, String)>,
}

impl std::fmt::Debug for HttpSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSource")
            .field("name", &self.name)
            .field("url", &self.shown)
            .field("auth", &self.auth)
            .finish()
    }
}

impl HttpSource {
    pub fn new(
        name: &'static str,
        base_url: &str,
        timeout: Duration,
        auth: Auth,
        headers: Vec<(String, String)>,
    ) -> Result<HttpSource, String> {
        let shown = mask_url(base_url.trim());
        let base = base_url.trim().trim_end_matches('/').to_string();
        let ok = reqwest::Url::parse(&base)
            .map(|u| matches!(u.scheme(), "http" | "https"))
            .unwrap_or(false);
        if !ok {
            return Err(format!("the {name} URL {shown:?} is not an http(s) URL"));
        }
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(5)))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(HttpSource {
            http,
            name,
            base,
            shown,
            timeout,
            auth,
            headers,
        })
    }

    pub fn shown_url(&self) -> &str {
        &self.shown
    }

    /// GET `{base}{path}?query`, the answer as JSON.
    pub async fn get(&self, path: &str, query: &[(&str, String)]) -> Result<Value, ToolError> {
        let answer = self.get_raw(path, query).await?;
        self.json(path, answer)
    }

    /// GET `{base}{path}?query`, the answer as it came, whatever its
    /// status: for an API whose error bodies need its own reading.
    pub async fn get_raw(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<RawAnswer, ToolError> {
        let mut url = self.url(path)?;
        for (k, v) in query {
            url.query_pairs_mut().append_pair(k, v);
        }
        self.send(path, self.http.get(url)).await
    }

    /// POST `{base}{path}` with a JSON body, the answer as JSON.
    pub async fn post(&self, path: &str, body: &Value) -> Result<Value, ToolError> {
        let url = self.url(path)?;
        let answer = self.send(path, self.http.post(url).json(body)).await?;
        self.json(path, answer)
    }

    fn url(&self, path: &str) -> Result<reqwest::Url, ToolError> {
        reqwest::Url::parse(&format!("{}{path}", self.base))
            .map_err(|e| ToolError::Unavailable(format!("bad {} URL: {e}", self.name)))
    }

    async fn send(&self, path: &str, req: reqwest::RequestBuilder) -> Result<RawAnswer, ToolError> {
        let mut req = req.header(reqwest::header::ACCEPT, "application/json");
        req = match &self.auth {
            Auth::None => req,
            Auth::Bearer(t) => req.bearer_auth(t),
            Auth::Basic { user, password } => req.basic_auth(user, Some(password)),
            Auth::ApiKey(k) => req.header(reqwest::header::AUTHORIZATION, format!("ApiKey {k}")),
        };
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let transport =
            |e: reqwest::Error| transport_error(self.name, &self.shown, self.timeout, &e);
        let mut resp = req.send().await.map_err(transport)?;
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
                    "{} {path} answered more than {} MiB; not read",
                    self.name,
                    MAX_BODY_BYTES >> 20
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(RawAnswer {
            status,
            server_time,
            body,
        })
    }

    /// The answer's JSON, or the error a failing status or a body that is
    /// not JSON means.
    fn json(&self, path: &str, answer: RawAnswer) -> Result<Value, ToolError> {
        let RawAnswer { status, body, .. } = answer;
        let json: Option<Value> = serde_json::from_slice(&body).ok();
        if !(200..300).contains(&status) {
            let hint = status_hint(status);
            let detail = json
                .as_ref()
                .and_then(error_text)
                .unwrap_or_else(|| clean(&String::from_utf8_lossy(&body), 300));
            let sep = if detail.is_empty() { "" } else { ": " };
            return Err(ToolError::Status {
                status,
                message: format!("HTTP {status}{hint} ({} {path}){sep}{detail}", self.name),
            });
        }
        json.ok_or_else(|| {
            ToolError::BadResponse(format!(
                "{} {path} answered HTTP {status} with a body that is not JSON: {}",
                self.name,
                clean(&String::from_utf8_lossy(&body), 120)
            ))
        })
    }
}

/// A request to `name` at `shown_url` (already masked) that got no whole
/// answer, in words: a timeout (after `timeout`), a refused or failed
/// connection, or an answer that broke off. Every HTTP tool words its
/// transport failures here.
pub fn transport_error(
    name: &str,
    shown_url: &str,
    timeout: Duration,
    e: &reqwest::Error,
) -> ToolError {
    if e.is_timeout() {
        return ToolError::Timeout(u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX));
    }
    let cause = root_cause(e);
    if e.is_connect() && cause.to_ascii_lowercase().contains("refused") {
        ToolError::Unavailable(format!("connection refused to {shown_url}"))
    } else if e.is_connect() {
        ToolError::Unavailable(format!("cannot connect to {name} at {shown_url}: {cause}"))
    } else if e.is_body() || e.is_decode() {
        // The answer started and broke off: a truncated body.
        ToolError::BadResponse(format!(
            "{name} at {shown_url} broke off its answer: {cause}"
        ))
    } else {
        ToolError::Unavailable(format!(
            "connection to {name} at {shown_url} failed: {cause}"
        ))
    }
}

/// The message of a JSON error body: Elasticsearch's `error.reason` (with
/// its type) or `error` string, Loki's and others' `error` or `message`.
fn error_text(v: &Value) -> Option<String> {
    let e = v.get("error");
    if let Some(reason) = e.and_then(|e| e.get("reason")).and_then(Value::as_str) {
        let kind = e.and_then(|e| e.get("type")).and_then(Value::as_str);
        let cause = e
            .and_then(|e| e.get("root_cause"))
            .and_then(|r| r.get(0))
            .and_then(|r| r.get("reason"))
            .and_then(Value::as_str)
            .filter(|c| *c != reason);
        let mut s = match kind {
            Some(k) => format!("{k}: {reason}"),
            None => reason.to_string(),
        };
        if let Some(c) = cause {
            s.push_str(&format!(" ({c})"));
        }
        return Some(clean(&s, 300));
    }
    e.and_then(Value::as_str)
        .or_else(|| v.get("message").and_then(Value::as_str))
        .map(|s| clean(s, 300))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn error_bodies_of_each_api_are_read() {
        let es = json!({"error": {"root_cause": [{"type": "index_not_found_exception", "reason": "no such index [logs-x]"}],
            "type": "index_not_found_exception", "reason": "no such index [logs-x]"}, "status": 404});
        assert_eq!(
            error_text(&es).unwrap(),
            "index_not_found_exception: no such index [logs-x]"
        );
        assert_eq!(
            error_text(&json!({"status": "error", "error": "bad\u{1b}[2J"})).unwrap(),
            "bad"
        );
        assert_eq!(error_text(&json!({"message": "m"})).unwrap(), "m");
        assert!(error_text(&json!({"x": 1})).is_none());
    }

    #[test]
    fn credentials_never_show() {
        let s = HttpSource::new(
            "Loki",
            "http://user:hunter2@loki:3100/",
            Duration::from_secs(1),
            Auth::Bearer("tok-secret".into()),
            vec![],
        )
        .unwrap();
        let shown = format!("{s:?} {}", s.shown_url());
        assert!(
            !shown.contains("hunter2") && !shown.contains("tok-secret"),
            "{shown}"
        );
        assert!(
            HttpSource::new(
                "Loki",
                "loki:3100",
                Duration::from_secs(1),
                Auth::None,
                vec![]
            )
            .is_err()
        );
    }
}

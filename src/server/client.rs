//! The API from the other side: what `diagraph --server URL` uses to list
//! a server's runs, start one, and follow a run's events over SSE,
//! resuming with `Last-Event-ID` when the connection drops.

use crate::text::{clean, error_line, mask_url};
use crate::vocab::events::{EngineEvent, ModelDelta};
use crate::vocab::run::{RunStatus, RunSummary};
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::mpsc;

const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Reconnections of one event stream before giving up.
const MAX_RECONNECTS: u32 = 5;
const RECONNECT_DELAY: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClientError {
    #[error("{0} is not an http(s) URL")]
    BadUrl(String),
    #[error("cannot reach {url}: {message}")]
    Unreachable { url: String, message: String },
    #[error("{url} answered HTTP {status}: {message}")]
    Status {
        url: String,
        status: u16,
        message: String,
    },
    #[error("{url} sent an answer diagraph cannot read: {message}")]
    BadAnswer { url: String, message: String },
    #[error("the event stream of run {run_id} failed: {message}")]
    Stream { run_id: i64, message: String },
}

/// A run the server accepted.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Started {
    pub run_id: i64,
    pub session_id: String,
}

/// A client of one `diagraph serve`.
#[derive(Debug, Clone)]
pub struct ServerClient {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
}

impl ServerClient {
    /// `base` is the server's URL, e.g. `http://127.0.0.1:8080`.
    pub fn new(base: &str, token: Option<String>) -> Result<ServerClient, ClientError> {
        let base = base.trim().trim_end_matches('/');
        if !crate::config::is_http_url(base) {
            return Err(ClientError::BadUrl(mask_url(base)));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| ClientError::Unreachable {
                url: mask_url(base),
                message: error_line(&e),
            })?;
        Ok(ServerClient {
            base: base.to_string(),
            token: token.filter(|t| !t.trim().is_empty()),
            http,
        })
    }

    /// The server's URL, credentials masked.
    pub fn describe(&self) -> String {
        mask_url(&self.base)
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let r = self.http.request(method, self.url(path));
        match &self.token {
            Some(t) => r.bearer_auth(t),
            None => r,
        }
    }

    async fn send(&self, req: reqwest::RequestBuilder, path: &str) -> Result<Value, ClientError> {
        let url = mask_url(&self.url(path));
        let response =
            req.timeout(REQUEST_TIMEOUT)
                .send()
                .await
                .map_err(|e| ClientError::Unreachable {
                    url: url.clone(),
                    message: crate::text::root_cause(&e),
                })?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| ClientError::Unreachable {
                url: url.clone(),
                message: crate::text::root_cause(&e),
            })?;
        if !status.is_success() {
            return Err(status_error(url, status.as_u16(), &body));
        }
        serde_json::from_slice(&body).map_err(|e| ClientError::BadAnswer {
            url,
            message: error_line(&e),
        })
    }

    fn decode<T: for<'de> Deserialize<'de>>(&self, path: &str, v: Value) -> Result<T, ClientError> {
        serde_json::from_value(v).map_err(|e| ClientError::BadAnswer {
            url: mask_url(&self.url(path)),
            message: error_line(&e),
        })
    }

    /// The newest runs (at most `limit`), newest first.
    pub async fn runs(&self, limit: usize) -> Result<Vec<RunSummary>, ClientError> {
        #[derive(Deserialize)]
        struct Page {
            runs: Vec<RunSummary>,
        }
        let path = format!("/api/runs?limit={limit}");
        let v = self
            .send(self.request(reqwest::Method::GET, &path), &path)
            .await?;
        Ok(self.decode::<Page>(&path, v)?.runs)
    }

    /// Starts a run and returns as soon as the server has created it.
    pub async fn start(
        &self,
        question: &str,
        session_id: Option<&str>,
    ) -> Result<Started, ClientError> {
        let path = "/api/chat";
        let mut body = json!({ "question": question, "wait": false });
        if let Some(s) = session_id {
            body["session_id"] = json!(s);
        }
        let v = self
            .send(self.request(reqwest::Method::POST, path).json(&body), path)
            .await?;
        self.decode(path, v)
    }

    /// The run's Run Trace projection (`GET /api/runs/{id}/trace`).
    pub async fn trace(
        &self,
        run_id: i64,
    ) -> Result<crate::vocab::run_trace::RunTrace, ClientError> {
        let path = format!("/api/runs/{run_id}/trace");
        let v = self
            .send(self.request(reqwest::Method::GET, &path), &path)
            .await?;
        self.decode(&path, v)
    }

    /// Asks the server to cancel the run; returns its answer.
    pub async fn cancel(&self, run_id: i64) -> Result<Value, ClientError> {
        let path = format!("/api/runs/{run_id}/cancel");
        self.send(self.request(reqwest::Method::POST, &path), &path)
            .await
    }

    /// Follows the run's events after `after` until the stream ends,
    /// sending each one to `events`; a dropped connection resumes where it
    /// stopped. Returns how the run ended (RUNNING when the server stopped
    /// streaming first, or when `events` was closed).
    pub async fn follow(
        &self,
        run_id: i64,
        after: u32,
        events: &mpsc::Sender<EngineEvent>,
    ) -> Result<RunStatus, ClientError> {
        self.follow_live(run_id, after, events, None).await
    }

    /// [`ServerClient::follow`], also sending the pieces of streamed
    /// model answers (`delta` events) to `deltas`.
    pub async fn follow_live(
        &self,
        run_id: i64,
        mut after: u32,
        events: &mpsc::Sender<EngineEvent>,
        deltas: Option<&mpsc::Sender<ModelDelta>>,
    ) -> Result<RunStatus, ClientError> {
        let path = format!("/api/runs/{run_id}/events");
        let url = mask_url(&self.url(&path));
        let mut failures = 0;
        loop {
            let mut req = self
                .request(reqwest::Method::GET, &path)
                .header(reqwest::header::ACCEPT, "text/event-stream");
            if after > 0 {
                req = req.header("Last-Event-ID", after.to_string());
            }
            let broke = match req.send().await {
                Ok(r) if r.status().is_success() => {
                    let mut response = r;
                    let mut parser = SseParser::default();
                    let mut message = String::from("the connection closed");
                    loop {
                        let chunk = match response.chunk().await {
                            Ok(Some(chunk)) => chunk,
                            Ok(None) => break,
                            Err(e) => {
                                message = crate::text::root_cause(&e);
                                break;
                            }
                        };
                        for frame in parser.feed(&chunk) {
                            match frame.event.as_deref() {
                                Some("end") => return Ok(end_status(&frame.data)),
                                Some("error") => {
                                    return Err(ClientError::Stream {
                                        run_id,
                                        message: error_text(frame.data.as_bytes()),
                                    });
                                }
                                None | Some("message") => {
                                    let event: EngineEvent = serde_json::from_str(&frame.data)
                                        .map_err(|e| ClientError::Stream {
                                            run_id,
                                            message: format!(
                                                "unreadable event: {}",
                                                error_line(&e)
                                            ),
                                        })?;
                                    after = event.seq.max(after);
                                    // Progress resets the retry budget.
                                    failures = 0;
                                    if events.send(event).await.is_err() {
                                        return Ok(RunStatus::Running);
                                    }
                                }
                                Some("delta") => {
                                    // Display only: an unreadable piece is
                                    // skipped, never an error of the run.
                                    if let (Some(tx), Ok(d)) =
                                        (deltas, serde_json::from_str::<ModelDelta>(&frame.data))
                                        && tx.send(d).await.is_err()
                                    {
                                        return Ok(RunStatus::Running);
                                    }
                                }
                                Some(_) => {}
                            }
                        }
                    }
                    message
                }
                Ok(r) => {
                    let status = r.status().as_u16();
                    let body = r.bytes().await.unwrap_or_default();
                    return Err(status_error(url, status, &body));
                }
                Err(e) => crate::text::root_cause(&e),
            };
            failures += 1;
            if failures > MAX_RECONNECTS {
                return Err(ClientError::Stream {
                    run_id,
                    message: broke,
                });
            }
            tokio::time::sleep(RECONNECT_DELAY).await;
        }
    }

    /// Every event of the run (waits for a running run to end).
    pub async fn events(&self, run_id: i64) -> Result<Vec<EngineEvent>, ClientError> {
        let (tx, mut rx) = mpsc::channel(64);
        let collect = async {
            let mut all = Vec::new();
            while let Some(e) = rx.recv().await {
                all.push(e);
            }
            all
        };
        let follow = async move { self.follow(run_id, 0, &tx).await };
        let (followed, all) = tokio::join!(follow, collect);
        followed?;
        Ok(all)
    }
}

fn end_status(data: &str) -> RunStatus {
    serde_json::from_str::<Value>(data)
        .ok()
        .and_then(|v| v.get("status")?.as_str().and_then(RunStatus::parse))
        .unwrap_or(RunStatus::Running)
}

/// The server's `{"error": ...}` message, or the start of the body.
fn error_text(body: &[u8]) -> String {
    let text = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("error")?.as_str().map(str::to_string))
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    clean(&text, 300)
}

fn status_error(url: String, status: u16, body: &[u8]) -> ClientError {
    ClientError::Status {
        url,
        status,
        message: error_text(body),
    }
}

pub use crate::text::sse::{SseFrame, SseParser};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_urls_are_refused() {
        assert!(ServerClient::new("localhost:8080", None).is_err());
        assert!(ServerClient::new("http://127.0.0.1:8080/", None).is_ok());
    }
}

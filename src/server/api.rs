//! The HTTP API: routes, request parsing, error bodies and the token check.
//!
//! Every error is JSON, `{"error": "..."}`, with a status that says whose
//! fault it was: 400 bad input, 401 no or wrong token, 404 unknown run,
//! 409 a run in the wrong state, 413 a body over the limit, 429 the
//! concurrent-run limit, 503 the database or a shutdown.

use super::events::{self, StreamItem};
use super::live::{LiveRuns, RunResult, StartError};
use super::mcp;
use crate::engine::case::case_from_evaluation;
use crate::store::{RunQuery, Store, StoreError};
use crate::text::error_line;
use crate::vocab::run::RunStatus;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::json;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Runs listed per page unless the request asks for fewer or more.
pub const DEFAULT_PAGE: usize = 20;
/// The largest page `GET /api/runs` serves.
pub const MAX_PAGE: usize = 500;
/// How long `POST /api/runs/{id}/cancel` waits for the run to end before
/// answering that it is still ending.
const CANCEL_WAIT: Duration = Duration::from_secs(5);
/// The longest accepted session id (the column's width).
const MAX_SESSION_ID: usize = 128;

/// What the handlers share.
pub struct ApiState {
    pub store: Arc<Store>,
    pub live: Arc<LiveRuns>,
    /// Required as `Authorization: Bearer <token>` on every `/api` route.
    pub token: Option<String>,
    /// Ends event streams and long waits at shutdown.
    pub shutdown: CancellationToken,
}

/// The application: every route, the token check and the body limit.
pub fn router(state: Arc<ApiState>, max_body_bytes: usize) -> Router {
    let api = Router::new()
        .route("/api/chat", post(chat))
        .route("/api/runs", get(list_runs))
        .route("/api/runs/{id}/trace", get(trace))
        .route("/api/runs/{id}/events", get(run_events))
        .route("/api/runs/{id}/cancel", post(cancel))
        .route("/api/runs/{id}/feedback", post(feedback))
        .route_service(mcp::http::PATH, mcp::http::service(&state))
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token));
    Router::new()
        .route("/healthz", get(healthz))
        .merge(api)
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .with_state(state)
}

// ---- errors --------------------------------------------------------------

/// An error answer: a status and one line of text.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(json!({ "error": self.message }))).into_response();
        if self.status == StatusCode::TOO_MANY_REQUESTS {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        let status = match e {
            StoreError::UnknownRun(_) => StatusCode::NOT_FOUND,
            // The run started between the handler's check and the write.
            StoreError::FeedbackWhileRunning(_) => StatusCode::CONFLICT,
            _ => StatusCode::SERVICE_UNAVAILABLE,
        };
        ApiError::new(status, error_line(&e))
    }
}

impl From<StartError> for ApiError {
    fn from(e: StartError) -> ApiError {
        let status = match e {
            StartError::Busy { .. } => StatusCode::TOO_MANY_REQUESTS,
            StartError::ShuttingDown | StartError::Engine(_) => StatusCode::SERVICE_UNAVAILABLE,
        };
        ApiError::new(status, error_line(&e))
    }
}

/// A body the limit refused is 413; any other read failure is 400.
fn body_error(rejection: BytesRejection) -> ApiError {
    let status = rejection.status();
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return ApiError::new(status, "request body too large");
    }
    ApiError::bad_request(format!(
        "could not read the request body: {}",
        rejection.body_text()
    ))
}

/// Parses a JSON body into `T`, with serde's message (what was wrong, at
/// which line and column) in the 400.
fn json_body<T: for<'de> Deserialize<'de>>(
    body: Result<Bytes, BytesRejection>,
) -> Result<T, ApiError> {
    let body = body.map_err(body_error)?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request(
            "the request body is empty; send a JSON object",
        ));
    }
    serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {}", error_line(&e))))
}

fn run_id(text: &str) -> Result<i64, ApiError> {
    text.parse::<i64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "invalid run id {:?}: expected a positive number",
                crate::text::clean(text, 40)
            ))
        })
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no such endpoint")
}

// ---- the token -----------------------------------------------------------

async fn require_token(
    State(state): State<Arc<ApiState>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(expected) = &state.token else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        });
    match given {
        Some(token) if same_secret(token.as_bytes(), expected.as_bytes()) => {
            next.run(request).await
        }
        Some(_) => ApiError::new(StatusCode::UNAUTHORIZED, "wrong API token").into_response(),
        None => ApiError::new(
            StatusCode::UNAUTHORIZED,
            "this server needs an API token: send Authorization: Bearer <DIAGRAPH_API_TOKEN>",
        )
        .into_response(),
    }
}

/// Compares in time that depends on the lengths only, not on where the
/// first difference is.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

// ---- handlers ------------------------------------------------------------

async fn healthz(State(state): State<Arc<ApiState>>) -> Response {
    match state.store.running_count().await {
        Ok(_) => Json(json!({
            "status": "ok",
            "version": env!("CARGO_PKG_VERSION"),
            "runs_in_progress": state.live.count(),
            "max_concurrent_runs": state.live.limit(),
        }))
        .into_response(),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({ "status": "unavailable", "error": error_line(&e) })),
        )
            .into_response(),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChatBody {
    question: String,
    #[serde(default)]
    session_id: Option<String>,
    /// false: answer at once with the run id (202); true (the default):
    /// answer with the finished run.
    #[serde(default)]
    wait: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct ChatParams {
    wait: Option<bool>,
}

async fn chat(
    State(state): State<Arc<ApiState>>,
    params: Result<Query<ChatParams>, axum::extract::rejection::QueryRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let params =
        params.map_err(|e| ApiError::bad_request(format!("invalid query: {}", e.body_text())))?;
    let body: ChatBody = json_body(body)?;
    let question = body.question.trim().to_string();
    if question.is_empty() {
        return Err(ApiError::bad_request("question is empty"));
    }
    if let Some(s) = &body.session_id
        && (s.trim().is_empty() || s.chars().count() > MAX_SESSION_ID)
    {
        return Err(ApiError::bad_request(format!(
            "session_id must be 1 to {MAX_SESSION_ID} characters"
        )));
    }
    let wait = body.wait.or(params.wait).unwrap_or(true);
    let run = state.live.start(question, body.session_id).await?;
    if !wait {
        let id = run.run_id;
        let mut response = (
            StatusCode::ACCEPTED,
            Json(json!({
                "run_id": id,
                "session_id": run.session_id,
                "status": RunStatus::Running.as_str(),
                "events": format!("/api/runs/{id}/events"),
                "trace": format!("/api/runs/{id}/trace"),
            })),
        )
            .into_response();
        if let Ok(location) = HeaderValue::from_str(&format!("/api/runs/{id}/trace")) {
            response.headers_mut().insert(header::LOCATION, location);
        }
        return Ok(response);
    }
    match run.wait().await {
        RunResult::Ended { json, .. } => Ok(Json(json).into_response()),
        RunResult::Error(message) => Ok((
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({ "error": message, "run_id": run.run_id })),
        )
            .into_response()),
    }
}

#[derive(Debug, Deserialize)]
struct ListParams {
    limit: Option<usize>,
    before: Option<i64>,
    status: Option<String>,
    session_id: Option<String>,
    /// A substring of the run's id, status, verdict, session or question.
    text: Option<String>,
}

async fn list_runs(
    State(state): State<Arc<ApiState>>,
    params: Result<Query<ListParams>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(p) =
        params.map_err(|e| ApiError::bad_request(format!("invalid query: {}", e.body_text())))?;
    let limit = p.limit.unwrap_or(DEFAULT_PAGE);
    if limit == 0 || limit > MAX_PAGE {
        return Err(ApiError::bad_request(format!(
            "limit must be 1 to {MAX_PAGE}"
        )));
    }
    let status = match p.status.as_deref() {
        None => None,
        Some(s) => Some(
            RunStatus::parse(&s.trim().to_ascii_uppercase()).ok_or_else(|| {
                ApiError::bad_request(format!(
                    "unknown status {:?}: one of RUNNING, SUCCESS, FAILED, CANCELLED",
                    crate::text::clean(s, 40)
                ))
            })?,
        ),
    };
    let query = RunQuery {
        limit,
        before: p.before,
        status,
        session_id: p.session_id.filter(|s| !s.is_empty()),
        text: p.text.filter(|t| !t.is_empty()),
    };
    let runs = state.store.query_runs(&query).await?;
    // A full page may have a next one; its cursor is the last id here.
    let next_before = (runs.len() == limit)
        .then(|| runs.last().map(|r| r.run_id))
        .flatten();
    Ok(Json(json!({ "runs": runs, "next_before": next_before })).into_response())
}

async fn trace(
    State(state): State<Arc<ApiState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let run_id = run_id(&id)?;
    let trace = state.store.run_trace(run_id).await?;
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        trace.to_json_text(),
    )
        .into_response())
}

#[derive(Debug, Deserialize)]
struct EventsParams {
    /// Start after this event index (as `Last-Event-ID` does).
    after: Option<u32>,
}

async fn run_events(
    State(state): State<Arc<ApiState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    params: Result<Query<EventsParams>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let run_id = run_id(&id)?;
    let Query(params) =
        params.map_err(|e| ApiError::bad_request(format!("invalid query: {}", e.body_text())))?;
    let header_after = match headers.get("last-event-id") {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|s| s.trim().parse::<u32>().ok())
                .ok_or_else(|| {
                    ApiError::bad_request("Last-Event-ID must be an event index (a number)")
                })?,
        ),
    };
    let after = header_after.or(params.after).unwrap_or(0);
    let items = match state.live.get(run_id) {
        Some(live) => events::live(live, after).map(Ok).boxed(),
        None => {
            // Unknown runs are a 404 before the stream starts.
            state.store.run_summary(run_id).await?;
            let stop = state.shutdown.clone();
            events::stored(state.store.clone(), run_id, after, stop).boxed()
        }
    };
    Ok(sse(items).into_response())
}

/// The stream as Server-Sent Events: each engine event with its index as
/// the id and its JSON as the data, then one `end` event; a store error
/// is an `error` event. While a model streams its answer, `delta` events
/// (no id) carry its pieces. Every stream ends by itself: a live run ends
/// (shutdown cancels it), and a tail stops at shutdown.
fn sse(
    items: impl Stream<Item = Result<StreamItem, StoreError>> + Send + 'static,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let events = items.map(|item| {
        Ok::<_, Infallible>(match item {
            Ok(StreamItem::Event(e)) => Event::default()
                .id(e.seq.to_string())
                .data(serde_json::to_string(&*e).unwrap_or_default()),
            // No id: a piece of streamed text is not a resumable position.
            Ok(StreamItem::Delta(d)) => Event::default()
                .event("delta")
                .data(serde_json::to_string(&*d).unwrap_or_default()),
            Ok(StreamItem::End(status)) => Event::default()
                .event("end")
                .data(json!({ "status": status.as_str() }).to_string()),
            Err(e) => Event::default()
                .event("error")
                .data(json!({ "error": error_line(&e) }).to_string()),
        })
    });
    Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

async fn cancel(
    State(state): State<Arc<ApiState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let run_id = run_id(&id)?;
    if let Some(live) = state.live.get(run_id) {
        live.cancel();
        let ended = tokio::time::timeout(CANCEL_WAIT, live.wait()).await;
        return Ok(match ended {
            Ok(RunResult::Ended { json, .. }) => Json(json).into_response(),
            Ok(RunResult::Error(message)) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                Json(json!({ "error": message, "run_id": run_id })),
            )
                .into_response(),
            Err(_) => (
                StatusCode::ACCEPTED,
                Json(
                    json!({ "run_id": run_id, "status": RunStatus::Running.as_str(),
                    "message": "cancel requested; the run stops at its next step" }),
                ),
            )
                .into_response(),
        });
    }
    let summary = state.store.run_summary(run_id).await?;
    Err(match summary.status {
        RunStatus::Running => ApiError::new(
            StatusCode::CONFLICT,
            format!("run {run_id} is running in another diagraph process; cancel it there"),
        ),
        ended => ApiError::new(
            StatusCode::CONFLICT,
            format!("run {run_id} already ended ({ended})"),
        ),
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FeedbackBody {
    /// `useful` or `not_useful`.
    feedback: String,
}

async fn feedback(
    State(state): State<Arc<ApiState>>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let run_id = run_id(&id)?;
    let body: FeedbackBody = json_body(body)?;
    let useful = match body.feedback.trim() {
        "useful" => true,
        "not_useful" | "not-useful" => false,
        other => {
            return Err(ApiError::bad_request(format!(
                "feedback must be \"useful\" or \"not_useful\", not {:?}",
                crate::text::clean(other, 40)
            )));
        }
    };
    let summary = state.store.run_summary(run_id).await?;
    if summary.status == RunStatus::Running {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("run {run_id} is still running; give feedback once it finished"),
        ));
    }
    let case_id = state
        .store
        .record_feedback(run_id, useful, case_from_evaluation)
        .await?;
    Ok(Json(json!({
        "run_id": run_id,
        "feedback": if useful { "useful" } else { "not_useful" },
        "case_id": case_id,
    }))
    .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_equal_only_when_equal() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"abcd"));
        assert!(same_secret(b"", b""));
    }

    #[test]
    fn run_ids_are_positive_numbers() {
        assert_eq!(run_id("12").unwrap(), 12);
        for bad in ["0", "-3", "x", "", "9999999999999999999999"] {
            assert_eq!(run_id(bad).unwrap_err().status, StatusCode::BAD_REQUEST);
        }
    }
}

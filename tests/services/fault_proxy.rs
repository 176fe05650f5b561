//! A small proxy in front of aimock for the request quirks of real servers
//! that the mock cannot imitate, because they reject requests by what the
//! request carries: OpenAI's reasoning models refuse any `temperature`;
//! DashScope's qwen3 models refuse non-streaming calls unless
//! `enable_thinking` is false, and some models only stream. A request that
//! passes every quirk is forwarded to aimock unchanged and its answer
//! relayed (status, content type, Retry-After and the body).

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone)]
pub enum Quirk {
    /// 400 when the body has `temperature` (OpenAI o-series, gpt-5).
    RejectTemperature,
    /// 400 unless `stream` is true or the field has this value (DashScope
    /// qwen3: `enable_thinking` must be false for non-streaming calls).
    RequireUnlessStreaming(&'static str, Value),
}

impl Quirk {
    /// The rejection a real server sends for this quirk, if the body
    /// triggers it.
    fn rejects(&self, body: &Value) -> Option<Value> {
        let streaming = body["stream"] == json!(true);
        match self {
            Quirk::RejectTemperature if body.get("temperature").is_some() => {
                Some(json!({"error": {
                "message": "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.",
                "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}}))
            }
            Quirk::RequireUnlessStreaming(field, value)
                if !streaming && body.get(*field) != Some(value) =>
            {
                Some(json!({"error": {
                    "message": format!("parameter.{field} must be set to {value} for non-streaming calls"),
                    "type": "invalid_request_error", "code": "invalid_parameter_error"}}))
            }
            _ => None,
        }
    }
}

#[derive(Clone)]
struct Proxy {
    upstream: String,
    quirks: Arc<Vec<Quirk>>,
    received: Arc<Mutex<Vec<Value>>>,
    client: reqwest::Client,
}

pub struct FaultProxy {
    pub base_url: String,
    received: Arc<Mutex<Vec<Value>>>,
    _task: tokio::task::JoinHandle<()>,
}

impl FaultProxy {
    /// Starts the proxy in front of `upstream` (an OpenAI base URL, `…/v1`).
    pub async fn start(upstream: &str, quirks: Vec<Quirk>) -> FaultProxy {
        let received = Arc::new(Mutex::new(Vec::new()));
        let state = Proxy {
            upstream: upstream.trim_end_matches('/').to_string(),
            quirks: Arc::new(quirks),
            received: received.clone(),
            client: reqwest::Client::new(),
        };
        let app = Router::new()
            .route("/v1/chat/completions", post(handle))
            .with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FaultProxy {
            base_url: format!("http://{addr}/v1"),
            received,
            _task: task,
        }
    }

    /// Every request body that reached the proxy, rejected ones included.
    pub fn received(&self) -> Vec<Value> {
        self.received.lock().unwrap().clone()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self._task.abort();
    }
}

async fn handle(State(p): State<Proxy>, body: Bytes) -> Response {
    let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    p.received.lock().unwrap().push(value.clone());
    if let Some(error) = p.quirks.iter().find_map(|q| q.rejects(&value)) {
        return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
    }
    let upstream = match p
        .client
        .post(format!("{}/chat/completions", p.upstream))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
    {
        Ok(r) => r,
        Err(e) => return (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
    };
    let status = StatusCode::from_u16(upstream.status().as_u16()).unwrap();
    let mut headers = HeaderMap::new();
    for name in ["content-type", "retry-after"] {
        if let Some(v) = upstream.headers().get(name) {
            headers.insert(name, v.clone());
        }
    }
    let bytes = upstream.bytes().await.unwrap_or_default();
    (status, headers, bytes).into_response()
}

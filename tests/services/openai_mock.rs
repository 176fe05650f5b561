//! An in-process chat-completions server for provider tests: it answers
//! from a script of canned replies, in order, and records every request it
//! received (body and Authorization header) for assertions.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
    pub delay: Duration,
}

impl Reply {
    pub fn json(status: u16, body: Value) -> Reply {
        Reply {
            status,
            headers: vec![("content-type", "application/json".into())],
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }

    pub fn raw(status: u16, body: &str) -> Reply {
        Reply {
            status,
            headers: vec![("content-type", "text/html".into())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    pub fn header(mut self, name: &'static str, value: &str) -> Reply {
        self.headers.push((name, value.into()));
        self
    }

    pub fn delayed(mut self, d: Duration) -> Reply {
        self.delay = d;
        self
    }

    /// A normal completion with one choice.
    pub fn message(message: Value, finish_reason: &str) -> Reply {
        Reply::json(
            200,
            json!({
                "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "mock",
                "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
                "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
            }),
        )
    }

    pub fn text(content: &str) -> Reply {
        Reply::message(json!({"role": "assistant", "content": content}), "stop")
    }

    pub fn error(status: u16, message: &str, code: &str) -> Reply {
        Reply::json(
            status,
            json!({"error": {"message": message, "type": "invalid_request_error", "code": code}}),
        )
    }
}

#[derive(Clone, Debug)]
pub struct Received {
    pub body: Value,
    pub authorization: Option<String>,
}

/// Answers a request body when the script is used up (a fake LLM).
pub type Responder = Arc<dyn Fn(&Value) -> Reply + Send + Sync>;

#[derive(Default)]
struct Inner {
    script: VecDeque<Reply>,
    responder: Option<Responder>,
    received: Vec<Received>,
}

#[derive(Clone)]
pub struct MockServer {
    inner: Arc<Mutex<Inner>>,
    pub base_url: String,
}

impl MockServer {
    pub async fn start(script: Vec<Reply>) -> MockServer {
        Self::start_full(script, None).await
    }

    /// Scripted replies first, then `responder` for every further request.
    pub async fn start_with(script: Vec<Reply>, responder: Responder) -> MockServer {
        Self::start_full(script, Some(responder)).await
    }

    async fn start_full(script: Vec<Reply>, responder: Option<Responder>) -> MockServer {
        let inner = Arc::new(Mutex::new(Inner {
            script: script.into(),
            responder,
            received: vec![],
        }));
        let app = Router::new()
            .route("/v1/chat/completions", post(handle))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockServer {
            inner,
            base_url: format!("http://{addr}/v1"),
        }
    }

    pub fn received(&self) -> Vec<Received> {
        self.inner.lock().unwrap().received.clone()
    }
}

async fn handle(
    State(inner): State<Arc<Mutex<Inner>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let reply = {
        let mut inner = inner.lock().unwrap();
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        inner.received.push(Received {
            body: body.clone(),
            authorization: headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(String::from),
        });
        match inner.script.pop_front() {
            Some(r) => Some(r),
            None => inner.responder.as_ref().map(|f| f(&body)),
        }
    };
    let Some(reply) = reply else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "script exhausted").into_response();
    };
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let mut out = HeaderMap::new();
    for (k, v) in &reply.headers {
        out.insert(*k, HeaderValue::from_str(v).unwrap());
    }
    (StatusCode::from_u16(reply.status).unwrap(), out, reply.body).into_response()
}

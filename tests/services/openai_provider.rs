//! The OpenAI-compatible provider against an in-process chat-completions
//! server: a tool-calling conversation, every error class, every malformed
//! response the issue lists, and timeouts.
//!
//! Real time is used (kept to fractions of a second): reqwest does real
//! socket I/O, and paused tokio time would auto-advance past the timeouts
//! while the runtime waits on the socket.

use crate::helpers::free_port;
use crate::openai_mock::{MockServer, Reply};
use diagraph::model::openai::{ApiKey, OpenAiConfig, OpenAiModel};
use diagraph::model::{ChatModel, ChatRequest, FinishReason, Message, ModelErrorKind, ToolCall};
use diagraph::vocab::dto::ExecutorInput;
use diagraph::vocab::tool::ToolSpec;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

const KEY: &str = "sk-test-0123456789abcdef";

fn config(base_url: &str) -> OpenAiConfig {
    OpenAiConfig {
        api_key: Some(ApiKey::new(KEY)),
        timeout: Duration::from_secs(5),
        rate_limit_backoff: Duration::from_millis(20),
        ..OpenAiConfig::new(base_url, "mock-model")
    }
}

fn model(base_url: &str) -> OpenAiModel {
    OpenAiModel::new(config(base_url)).unwrap()
}

fn metrics_spec() -> ToolSpec {
    ToolSpec {
        name: "query_metrics".into(),
        description: "Active alerts".into(),
        evidence_arrays: vec![],
        parameters: json!({"type": "object", "properties": {
            "service": {"type": "string"}, "alertname": {"type": "string"}}}),
    }
}

fn executor_request(messages: Vec<Message>) -> ChatRequest {
    ChatRequest {
        attempt: 1,
        input: ExecutorInput {
            question: "why is payment-service slow?".into(),
            ..Default::default()
        }
        .into(),
        messages,
        tools: vec![Arc::new(metrics_spec())],
        tool_choice: Default::default(),
        script: Default::default(),
    }
}

fn first_messages() -> Vec<Message> {
    vec![
        Message::System {
            content: "You are the Executor.".into(),
        },
        Message::User {
            content: "{\"question\": \"why is payment-service slow?\"}".into(),
        },
    ]
}

async fn chat_err(reply: Vec<Reply>) -> (diagraph::model::ModelError, MockServer) {
    let server = MockServer::start(reply).await;
    let err = model(&server.base_url)
        .chat(&executor_request(first_messages()))
        .await
        .unwrap_err();
    (err, server)
}

#[tokio::test]
async fn tool_calling_conversation_round_trips() {
    let evidence = json!({
        "answer_version": "executor_evidence_v2",
        "claims": [{"claim_id": "claim-1", "claim_type": "observation",
            "claim_text": "HighCPUUsage is firing on payment-service", "support_level": "direct",
            "evidence_bindings": [{"tool_name": "query_metrics", "source_invocation_id": 1,
                "raw_path": "$.alerts[0]", "evidence_excerpt": "alertname=HighCPUUsage state=firing"}]}],
        "hypotheses": [], "recommended_actions": [], "missing_info": []
    })
    .to_string();
    let server = MockServer::start(vec![
        Reply::message(
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": "call_abc", "type": "function",
                "function": {"name": "query_metrics", "arguments": "{\"service\":\"payment-service\"}"}}]}),
            "tool_calls",
        ),
        Reply::text(&evidence),
    ])
    .await;
    let m = model(&server.base_url);
    assert_eq!(m.name(), "openai:mock-model");

    let first = m.chat(&executor_request(first_messages())).await.unwrap();
    assert_eq!(first.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        first.tool_calls,
        vec![ToolCall {
            id: "call_abc".into(),
            name: "query_metrics".into(),
            arguments: "{\"service\":\"payment-service\"}".into(),
        }]
    );
    assert_eq!(first.usage.prompt_tokens, 120);
    assert_eq!(first.usage.completion_tokens, 30);

    let mut messages = first_messages();
    messages.push(Message::Assistant {
        content: None,
        tool_calls: first.tool_calls.clone(),
    });
    messages.push(Message::Tool {
        tool_call_id: "call_abc".into(),
        content:
            json!({"invocation_id": 1, "tool": "query_metrics", "evidence_status": "supported"})
                .to_string(),
    });
    let second = m.chat(&executor_request(messages)).await.unwrap();
    assert_eq!(second.finish_reason, FinishReason::Stop);
    assert_eq!(second.content.as_deref(), Some(evidence.as_str()));
    assert!(second.tool_calls.is_empty());

    let got = server.received();
    assert_eq!(got.len(), 2);
    let auth = format!("Bearer {KEY}");
    assert!(
        got.iter()
            .all(|r| r.authorization.as_deref() == Some(auth.as_str()))
    );
    let b0 = &got[0].body;
    assert_eq!(b0["model"], "mock-model");
    // Not sent unless configured: reasoning models reject any value.
    assert!(b0.get("temperature").is_none());
    assert_eq!(b0["tool_choice"], "auto");
    assert_eq!(b0["tools"][0]["type"], "function");
    assert_eq!(b0["tools"][0]["function"]["name"], "query_metrics");
    assert_eq!(
        b0["tools"][0]["function"]["parameters"]["properties"]["service"]["type"],
        "string"
    );
    assert_eq!(b0["messages"][0]["role"], "system");
    let b1 = &got[1].body;
    assert_eq!(b1["messages"][2]["role"], "assistant");
    assert_eq!(b1["messages"][2]["tool_calls"][0]["id"], "call_abc");
    assert_eq!(b1["messages"][2]["tool_calls"][0]["type"], "function");
    assert_eq!(
        b1["messages"][2]["tool_calls"][0]["function"]["arguments"],
        "{\"service\":\"payment-service\"}"
    );
    assert_eq!(b1["messages"][3]["role"], "tool");
    assert_eq!(b1["messages"][3]["tool_call_id"], "call_abc");
}

#[tokio::test]
async fn requests_without_tools_send_no_tool_fields() {
    let server = MockServer::start(vec![Reply::text("{}")]).await;
    let mut req = executor_request(first_messages());
    req.tools.clear();
    model(&server.base_url).chat(&req).await.unwrap();
    let body = &server.received()[0].body;
    assert!(body.get("tools").is_none());
    assert!(body.get("tool_choice").is_none());
}

#[tokio::test]
async fn one_429_backs_off_once_and_reports_it() {
    let server = MockServer::start(vec![
        Reply::error(429, "Rate limit reached", "rate_limit_exceeded")
            .header("retry-after", "0.05"),
        Reply::text("ok"),
    ])
    .await;
    let r = model(&server.base_url)
        .chat(&executor_request(first_messages()))
        .await
        .unwrap();
    assert_eq!(r.content.as_deref(), Some("ok"));
    assert_eq!(server.received().len(), 2);
    assert!(
        r.notes.iter().any(|n| n.contains("429 back-off 50 ms")),
        "{:?}",
        r.notes
    );
}

#[tokio::test]
async fn retry_after_is_capped() {
    let server = MockServer::start(vec![
        Reply::error(429, "slow down", "rate_limit_exceeded").header("retry-after", "30"),
        Reply::text("ok"),
    ])
    .await;
    let cfg = OpenAiConfig {
        max_rate_limit_backoff: Duration::from_millis(100),
        ..config(&server.base_url)
    };
    let started = Instant::now();
    let r = OpenAiModel::new(cfg)
        .unwrap()
        .chat(&executor_request(first_messages()))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(
        r.notes.iter().any(|n| n.contains("100 ms")),
        "{:?}",
        r.notes
    );
}

#[tokio::test]
async fn two_429s_are_rate_limited_and_retryable() {
    let (err, server) = chat_err(vec![
        Reply::error(429, "Rate limit reached", "rate_limit_exceeded"),
        Reply::error(429, "Rate limit reached", "rate_limit_exceeded"),
        Reply::text("never reached"),
    ])
    .await;
    assert_eq!(err.kind, ModelErrorKind::RateLimited);
    assert!(err.is_retryable());
    assert_eq!(
        server.received().len(),
        2,
        "exactly one retry, no hidden loop"
    );
}

#[tokio::test]
async fn server_errors_are_retryable() {
    for status in [500, 502, 503] {
        let (err, server) = chat_err(vec![Reply::error(
            status,
            "upstream failed",
            "server_error",
        )])
        .await;
        assert_eq!(err.kind, ModelErrorKind::ServerError, "{status}");
        assert!(err.is_retryable());
        assert!(err.message.contains(&status.to_string()), "{}", err.message);
        assert_eq!(
            server.received().len(),
            1,
            "no retry inside the provider on {status}"
        );
    }
}

#[tokio::test]
async fn auth_errors_are_not_retryable_and_never_show_the_key() {
    for status in [401, 403] {
        let echo = format!("Incorrect API key provided: {KEY}");
        let (err, _) = chat_err(vec![Reply::error(status, &echo, "invalid_api_key")]).await;
        assert_eq!(err.kind, ModelErrorKind::Unauthorized);
        assert!(!err.is_retryable());
        assert!(!err.message.contains(KEY), "{}", err.message);
        assert!(!format!("{err:?} {err}").contains(KEY));
        assert!(err.message.contains("invalid_api_key"), "{}", err.message);
    }
}

#[tokio::test]
async fn request_errors_are_not_retryable() {
    for status in [400, 404, 422] {
        let (err, _) = chat_err(vec![Reply::error(
            status,
            "The model does not exist",
            "model_not_found",
        )])
        .await;
        assert_eq!(err.kind, ModelErrorKind::BadRequest, "{status}");
        assert!(!err.is_retryable());
        assert!(
            err.message.contains("The model does not exist"),
            "{}",
            err.message
        );
    }
}

#[tokio::test]
async fn connection_refused_is_a_retryable_connection_error() {
    let port = free_port();
    let started = Instant::now();
    let err = model(&format!("http://127.0.0.1:{port}/v1"))
        .chat(&executor_request(first_messages()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Connection, "{err}");
    assert!(err.is_retryable());
    assert!(err.message.contains(&port.to_string()), "{}", err.message);
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_slow_response_times_out_within_the_budget() {
    let server = MockServer::start(vec![Reply::text("late").delayed(Duration::from_secs(3))]).await;
    let cfg = OpenAiConfig {
        timeout: Duration::from_millis(200),
        ..config(&server.base_url)
    };
    let started = Instant::now();
    let err = OpenAiModel::new(cfg)
        .unwrap()
        .chat(&executor_request(first_messages()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Timeout, "{err}");
    assert!(err.is_retryable());
    assert!(started.elapsed() < Duration::from_millis(1500));
    assert!(err.message.contains("200 ms"), "{}", err.message);
}

#[tokio::test]
async fn a_429_back_off_never_exceeds_the_timeout() {
    // Retry-After asks for 2 s but the whole call has 300 ms: give up now.
    let server = MockServer::start(vec![
        Reply::error(429, "busy", "rate_limit_exceeded").header("retry-after", "2"),
        Reply::text("ok"),
    ])
    .await;
    let cfg = OpenAiConfig {
        timeout: Duration::from_millis(300),
        ..config(&server.base_url)
    };
    let started = Instant::now();
    let err = OpenAiModel::new(cfg)
        .unwrap()
        .chat(&executor_request(first_messages()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::RateLimited);
    assert!(started.elapsed() < Duration::from_millis(300));
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn content_and_tool_calls_together_are_both_kept() {
    let server = MockServer::start(vec![Reply::message(
        json!({"role": "assistant", "content": "Let me check the alerts.", "tool_calls": [{
            "id": "c1", "type": "function",
            "function": {"name": "query_metrics", "arguments": "{}"}}]}),
        "tool_calls",
    )])
    .await;
    let r = model(&server.base_url)
        .chat(&executor_request(first_messages()))
        .await
        .unwrap();
    assert_eq!(r.content.as_deref(), Some("Let me check the alerts."));
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.finish_reason, FinishReason::ToolCalls);
}

#[tokio::test]
async fn invalid_json_arguments_are_kept_raw() {
    let raw = "{\"service\": \"payment-service\"";
    let server = MockServer::start(vec![Reply::message(
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "c1", "type": "function", "function": {"name": "query_metrics", "arguments": raw}}]}),
        "tool_calls",
    )])
    .await;
    let r = model(&server.base_url)
        .chat(&executor_request(first_messages()))
        .await
        .unwrap();
    assert_eq!(r.tool_calls[0].arguments, raw);
    assert!(serde_json::from_str::<Value>(&r.tool_calls[0].arguments).is_err());
}

#[tokio::test]
async fn an_empty_choice_list_is_a_protocol_error() {
    let (err, _) = chat_err(vec![Reply::json(
        200,
        json!({"id": "x", "object": "chat.completion", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 0}}),
    )])
    .await;
    assert_eq!(err.kind, ModelErrorKind::Protocol);
    assert!(err.is_retryable());
    assert!(err.message.contains("empty choice list"), "{}", err.message);
}

#[tokio::test]
async fn finish_reason_length_is_reported() {
    let server = MockServer::start(vec![Reply::message(
        json!({"role": "assistant", "content": "{\"answer_version\": \"executor_ev"}),
        "length",
    )])
    .await;
    let r = model(&server.base_url)
        .chat(&executor_request(first_messages()))
        .await
        .unwrap();
    assert_eq!(r.finish_reason, FinishReason::Length);
    assert_eq!(
        r.content.as_deref(),
        Some("{\"answer_version\": \"executor_ev")
    );
}

#[tokio::test]
async fn a_non_json_body_is_a_protocol_error() {
    let (err, _) = chat_err(vec![Reply::raw(200, "<html>\u{1b}[31mBad gateway</html>")]).await;
    assert_eq!(err.kind, ModelErrorKind::Protocol);
    assert!(err.message.contains("not JSON"), "{}", err.message);
    assert!(!err.message.contains('\u{1b}'));
}

#[tokio::test]
async fn an_html_error_page_keeps_its_status_class() {
    let (err, _) = chat_err(vec![Reply::raw(502, "<html>Bad gateway</html>")]).await;
    assert_eq!(err.kind, ModelErrorKind::ServerError);
    assert!(err.message.contains("Bad gateway"), "{}", err.message);
}

#[tokio::test]
async fn missing_usage_counts_as_zero() {
    let server = MockServer::start(vec![Reply::json(
        200,
        json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}),
    )])
    .await;
    let r = model(&server.base_url)
        .chat(&executor_request(first_messages()))
        .await
        .unwrap();
    assert_eq!(r.usage.total(), 0);
    assert_eq!(r.content.as_deref(), Some("hi"));
}

#[test]
fn construction_checks_config_and_hides_the_key() {
    let remote = OpenAiConfig::new("https://api.example.com/v1", "m");
    let err = OpenAiModel::new(remote.clone()).unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Config);
    assert!(!err.is_retryable());
    assert!(
        err.message.contains("DIAGRAPH_OPENAI_API_KEY"),
        "{}",
        err.message
    );

    // Keyless: a local endpoint, or an explicitly empty key variable.
    assert!(OpenAiModel::new(OpenAiConfig::new("http://localhost:11434/v1", "llama3")).is_ok());
    assert!(OpenAiModel::new(OpenAiConfig::new("http://127.0.0.1:8000/v1", "qwen")).is_ok());
    let keyless = OpenAiConfig {
        api_key_env: String::new(),
        ..remote.clone()
    };
    assert!(OpenAiModel::new(keyless).is_ok());

    for (url, model) in [
        ("ftp://x/v1", "m"),
        ("not a url", "m"),
        ("http://localhost/v1", " "),
    ] {
        let e = OpenAiModel::new(OpenAiConfig::new(url, model)).unwrap_err();
        assert_eq!(e.kind, ModelErrorKind::Config, "{url} {model}");
    }

    let with_key = OpenAiConfig {
        api_key: Some(ApiKey::new(KEY)),
        ..remote
    };
    assert!(!format!("{with_key:?}").contains(KEY));
    let m = OpenAiModel::new(with_key).unwrap();
    assert!(!format!("{m:?}").contains(KEY));
}

/// A raw TCP server that reads the request, then runs `fault`.
async fn faulty_server<F, Fut>(fault: F) -> String
where
    F: Fn(tokio::net::TcpStream) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = vec![0u8; 65536];
            let _ = sock.read(&mut buf).await;
            fault(sock).await;
        }
    });
    format!("http://{addr}/v1")
}

#[tokio::test]
async fn a_connection_closed_without_an_answer_is_retryable() {
    let url = faulty_server(|sock| async move { drop(sock) }).await;
    let err = model(&url)
        .chat(&executor_request(first_messages()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Connection, "{err}");
    assert!(err.is_retryable());
}

#[tokio::test]
async fn a_body_that_stalls_mid_way_times_out() {
    use tokio::io::AsyncWriteExt;
    let url = faulty_server(|mut sock| async move {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{\"choices\": [";
        let _ = sock.write_all(head.as_bytes()).await;
        tokio::time::sleep(Duration::from_secs(5)).await;
    })
    .await;
    let cfg = OpenAiConfig {
        timeout: Duration::from_millis(300),
        ..config(&url)
    };
    let started = Instant::now();
    let err = OpenAiModel::new(cfg)
        .unwrap()
        .chat(&executor_request(first_messages()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Timeout, "{err}");
    assert!(started.elapsed() < Duration::from_millis(1500));
}

#[tokio::test]
async fn a_truncated_body_is_retryable() {
    use tokio::io::AsyncWriteExt;
    let url = faulty_server(|mut sock| async move {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{\"choices\": [";
        let _ = sock.write_all(head.as_bytes()).await;
    })
    .await;
    let err = model(&url)
        .chat(&executor_request(first_messages()))
        .await
        .unwrap_err();
    assert!(err.is_retryable(), "{err}");
}

#[tokio::test]
async fn retry_after_ms_is_preferred() {
    let server = MockServer::start(vec![
        Reply::error(429, "busy", "rate_limit_exceeded")
            .header("retry-after-ms", "30")
            .header("retry-after", "1"),
        Reply::text("ok"),
    ])
    .await;
    let r = model(&server.base_url)
        .chat(&executor_request(first_messages()))
        .await
        .unwrap();
    assert!(
        r.notes.iter().any(|n| n.contains("back-off 30 ms")),
        "{:?}",
        r.notes
    );
}

#[tokio::test]
async fn a_refusal_is_reported_not_hidden() {
    let server = MockServer::start(vec![Reply::message(
        json!({"role": "assistant", "content": null, "refusal": "I can't help with that."}),
        "stop",
    )])
    .await;
    let r = model(&server.base_url)
        .chat(&executor_request(first_messages()))
        .await
        .unwrap();
    assert_eq!(r.content, None);
    assert!(r.tool_calls.is_empty());
    assert!(
        r.notes.iter().any(|n| n.contains("refused")),
        "{:?}",
        r.notes
    );
}

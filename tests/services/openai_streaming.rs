//! Streamed completions (`streaming = true`): against aimock, which
//! streams documented `chat.completion.chunk`s (text, reasoning, tool
//! calls, the `include_usage` usage chunk) and cuts streams on request;
//! and against a tiny local server for the streams aimock never sends
//! (ended cleanly without `[DONE]`, a chunk that is not JSON, an error
//! chunk mid-stream).

use crate::aimock::Aimock;
use crate::llm_quirks::{NO_CLAIMS, PLAN, ask, chat_once, config, engine_on, qwen3_behind_proxy};
use diagraph::model::openai::{OpenAiConfig, OpenAiModel};
use diagraph::model::{ChatModel, ChatResponse, DeltaPart, ModelError, ModelErrorKind};
use diagraph::vocab::events::ModelDelta;
use serde_json::json;
use std::sync::Mutex;

fn streaming(base_url: &str, model: &str) -> OpenAiConfig {
    OpenAiConfig {
        streaming: true,
        ..config(base_url, model)
    }
}

/// The pieces a streamed call reported, in order.
#[derive(Default)]
struct Pieces(Mutex<Vec<(DeltaPart, String)>>);

impl Pieces {
    fn sink(&self) -> impl Fn(DeltaPart, &str) + Send + Sync + '_ {
        |part, text| self.0.lock().unwrap().push((part, text.to_string()))
    }

    /// A streamed call of `model` with the request [`ask`] makes of
    /// `user`, its pieces kept here.
    async fn stream(&self, model: &OpenAiModel, user: &str) -> Result<ChatResponse, ModelError> {
        model.chat_streaming(&ask(user), &self.sink()).await
    }

    fn of(&self, part: DeltaPart) -> Vec<String> {
        let pieces = self.0.lock().unwrap();
        pieces
            .iter()
            .filter(|(p, _)| *p == part)
            .map(|(_, t)| t.clone())
            .collect()
    }
}

const ANSWER: &str = r#"{"verdict": "PASS", "facts_checked": [], "rationale": "streamed"}"#;

#[tokio::test]
async fn a_streamed_answer_arrives_in_pieces_with_reasoning_and_usage_from_the_last_chunk() {
    let Some(mock) = Aimock::start(
        "a_streamed_answer_arrives_in_pieces_with_reasoning_and_usage_from_the_last_chunk",
        json!([{"match": {"userMessage": "stream"}, "chunkSize": 8,
                "response": {"content": ANSWER, "reasoning": "Check the facts first."}}]),
    ) else {
        return;
    };
    let model = OpenAiModel::new(streaming(&mock.base_url(), "deepseek-reasoner")).unwrap();
    let pieces = Pieces::default();
    let r = pieces.stream(&model, "stream").await.unwrap();
    assert_eq!(r.content.as_deref(), Some(ANSWER));
    assert_eq!(r.reasoning.as_deref(), Some("Check the facts first."));
    // The text arrived in pieces, in order, and they add up to the answer.
    let content = pieces.of(DeltaPart::Content);
    assert!(content.len() >= ANSWER.len() / 8, "{content:?}");
    assert_eq!(content.concat(), ANSWER);
    assert_eq!(
        pieces.of(DeltaPart::Reasoning).concat(),
        "Check the facts first."
    );
    // Usage came from the final chunk, which only a request with
    // stream_options.include_usage gets.
    assert!(
        r.usage.prompt_tokens > 0 && r.usage.completion_tokens > 0,
        "{:?}",
        r.usage
    );
    let sent = mock.received().await;
    assert_eq!(sent[0]["stream"], json!(true));
    assert_eq!(sent[0]["stream_options"], json!({"include_usage": true}));

    // Without a sink the same call still streams and assembles.
    let r = model.chat(&ask("stream")).await.unwrap();
    assert_eq!(r.content.as_deref(), Some(ANSWER));
}

#[tokio::test]
async fn streamed_tool_calls_are_assembled_by_index() {
    let Some(mock) = Aimock::start(
        "streamed_tool_calls_are_assembled_by_index",
        json!([{"match": {"userMessage": "tools"}, "chunkSize": 4,
                "response": {"toolCalls": [
                    {"name": "query_metrics", "arguments": {"service": "payment-service"}},
                    {"name": "query_logs", "arguments": {"service": "payment-service", "level": "ERROR"}}]}}]),
    ) else {
        return;
    };
    let model = OpenAiModel::new(streaming(&mock.base_url(), "gpt-4o-mini")).unwrap();
    let pieces = Pieces::default();
    let r = pieces.stream(&model, "tools").await.unwrap();
    let calls: Vec<(String, serde_json::Value)> = r
        .tool_calls
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                serde_json::from_str(&c.arguments).expect("whole JSON arguments"),
            )
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            (
                "query_metrics".to_string(),
                json!({"service": "payment-service"})
            ),
            (
                "query_logs".to_string(),
                json!({"service": "payment-service", "level": "ERROR"})
            ),
        ]
    );
    assert!(r.tool_calls.iter().all(|c| !c.id.is_empty()));
    assert_eq!(
        pieces.of(DeltaPart::ToolCall),
        ["query_metrics", "query_logs"]
    );
    assert!(pieces.of(DeltaPart::ToolArguments).len() > 4);
}

#[tokio::test]
async fn a_stream_cut_mid_way_is_a_retryable_failure_not_a_partial_answer() {
    let Some(mock) = Aimock::start(
        "a_stream_cut_mid_way_is_a_retryable_failure_not_a_partial_answer",
        json!([{"match": {"userMessage": "cut"}, "chunkSize": 6, "truncateAfterChunks": 4, "latency": 30,
                "response": {"content": ANSWER}}]),
    ) else {
        return;
    };
    let model = OpenAiModel::new(streaming(&mock.base_url(), "gpt-4o-mini")).unwrap();
    let pieces = Pieces::default();
    let e = pieces.stream(&model, "cut").await.unwrap_err();
    assert!(e.is_retryable(), "{e}");
    assert_eq!(e.kind, ModelErrorKind::Connection, "{e}");
    assert!(e.message.contains("not used"), "{e}");
    // Some text had already arrived live; it is not the answer.
    assert!(!pieces.of(DeltaPart::Content).is_empty());
}

#[tokio::test]
async fn a_server_that_serves_only_streams_answers_when_streaming_is_on() {
    // DashScope's qwen3 with thinking on: non-streaming calls are refused.
    let Some((_mock, proxy)) =
        qwen3_behind_proxy("a_server_that_serves_only_streams_answers_when_streaming_is_on").await
    else {
        return;
    };
    let mut off = streaming(&proxy.base_url, "qwen3-235b-a22b");
    off.streaming = false;
    let e = chat_once(off, "qwen3").await.unwrap_err();
    assert_eq!(e.kind, ModelErrorKind::BadRequest, "{e}");
    let r = chat_once(streaming(&proxy.base_url, "qwen3-235b-a22b"), "qwen3")
        .await
        .unwrap();
    assert_eq!(r.content.as_deref(), Some("{\"ok\": true}"));
    assert_eq!(proxy.received()[1]["stream"], json!(true));
}

/// A server that answers every chat request with these SSE bytes.
async fn raw_stream(body: &'static str) -> (String, tokio::task::JoinHandle<()>) {
    use axum::routing::post;
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move || async move { ([("content-type", "text/event-stream")], body) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/v1"), task)
}

#[tokio::test]
async fn malformed_and_unfinished_streams_are_classified_errors() {
    let cases: [(&str, &'static str, &str); 4] = [
        (
            "closed cleanly before finish_reason and [DONE]",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"verdict\\\":\"}}]}\n\n",
            "cut after 1 chunk",
        ),
        (
            "a chunk that is not JSON",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{}\"}}]}\n\ndata: {\"choi\n\n",
            "not JSON",
        ),
        (
            "an error chunk mid-stream",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\"}}]}\n\ndata: {\"error\":{\"message\":\"The server had an error while processing your request\",\"type\":\"server_error\"}}\n\n",
            "error while processing",
        ),
        (
            "no chunk at all",
            ": keep-alive\n\n",
            "before its first chunk",
        ),
    ];
    for (what, body, says) in cases {
        let (url, task) = raw_stream(body).await;
        let e = chat_once(streaming(&url, "m"), "x").await.unwrap_err();
        assert!(e.is_retryable(), "{what}: {e}");
        assert!(e.message.contains(says), "{what}: {e}");
        task.abort();
    }
    // A finish_reason without [DONE] is a whole answer.
    let (url, task) = raw_stream(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{}\"},\"finish_reason\":\"stop\"}]}\n",
    )
    .await;
    let r = chat_once(streaming(&url, "m"), "x").await.unwrap();
    assert_eq!(r.content.as_deref(), Some("{}"));
    task.abort();
}

fn executor_fixtures() -> Vec<serde_json::Value> {
    vec![
        json!({"match": {"systemMessage": "# Role: Executor", "hasToolResult": false},
               "response": {"toolCalls": [
                   {"name": "query_metrics", "arguments": {"service": "payment-service"}}]}}),
        json!({"match": {"systemMessage": "# Role: Executor", "hasToolResult": true},
               "chunkSize": 16, "response": {"content": NO_CLAIMS}}),
    ]
}

#[tokio::test]
async fn a_run_streams_its_answers_live_and_retries_a_cut_stream_without_using_it() {
    // The Planner's first stream is cut after a few chunks, its second is
    // whole: the cut one must not become the plan.
    let mut fixtures = vec![
        json!({"match": {"systemMessage": "# Role: Planner", "sequenceIndex": 0},
               "chunkSize": 12, "truncateAfterChunks": 5, "latency": 20,
               "response": {"content": PLAN}}),
        json!({"match": {"systemMessage": "# Role: Planner"}, "chunkSize": 12,
               "response": {"content": PLAN, "reasoning": "Alerts first, then logs."}}),
    ];
    fixtures.extend(executor_fixtures());
    let Some(mock) = Aimock::start(
        "a_run_streams_its_answers_live_and_retries_a_cut_stream_without_using_it",
        serde_json::Value::Array(fixtures),
    ) else {
        return;
    };
    let (engine, recorder) = engine_on(streaming(&mock.base_url(), "deepseek-reasoner"));
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let mut request =
        diagraph::engine::RunRequest::new("Is HighCPUUsage firing on payment-service?");
    request.deltas = Some(tx);
    let outcome = engine.run(request).await.unwrap();
    let reasons: Vec<String> = outcome
        .end
        .trace
        .transitions
        .iter()
        .map(|t| format!("{}->{}:{}", t.from, t.to, t.reason_code))
        .collect();
    assert!(
        reasons.contains(&"planner->planner:planner_technical_retry".to_string()),
        "{reasons:?}"
    );
    assert!(
        reasons.contains(&"planner->executor:completed".to_string()),
        "{reasons:?}"
    );
    let steps = recorder.snapshot().steps;
    let first = &steps[0];
    assert_eq!(first.agent_name, "planner");
    assert!(
        first
            .error
            .as_deref()
            .is_some_and(|e| e.contains("not used")),
        "{first:?}"
    );
    assert!(first.model_output.is_empty(), "a cut stream left no output");

    // The live pieces: per step, in order, adding up to what each step
    // recorded.
    let mut pieces = Vec::new();
    while let Ok(d) = rx.try_recv() {
        pieces.push(d);
    }
    let text_of = |step: u32, part: DeltaPart| -> String {
        pieces
            .iter()
            .filter(|d| d.step_index == step && d.part == part)
            .map(|d| d.text.as_str())
            .collect()
    };
    assert!(
        !text_of(1, DeltaPart::Content).is_empty(),
        "the cut stream was shown live"
    );
    assert_eq!(text_of(2, DeltaPart::Content), steps[1].model_output);
    assert_eq!(text_of(2, DeltaPart::Reasoning), "Alerts first, then logs.");
    assert!(pieces.iter().all(|d| d.run_id == outcome.run_id));
    let executor_steps: Vec<u32> = pieces
        .iter()
        .filter(|d| d.role == diagraph::vocab::agent::AgentRole::Executor)
        .map(|d| d.step_index)
        .collect();
    assert!(
        executor_steps.contains(&3) && executor_steps.contains(&4),
        "the tool call and the answer both streamed: {executor_steps:?}"
    );
    assert_eq!(text_of(4, DeltaPart::Content), NO_CLAIMS);
    // Usage of streamed calls came from their final chunks.
    assert!(steps[1].usage.prompt_tokens > 0, "{:?}", steps[1].usage);
}

#[tokio::test]
async fn a_rejected_answer_and_why_are_kept_on_its_step() {
    let mut fixtures = vec![
        json!({"match": {"systemMessage": "# Role: Planner", "sequenceIndex": 0},
               "response": {"content": "I would first look at the alerts, then the logs."}}),
        json!({"match": {"systemMessage": "# Role: Planner"}, "response": {"content": PLAN}}),
    ];
    fixtures.extend(executor_fixtures());
    let Some(mock) = Aimock::start(
        "a_rejected_answer_and_why_are_kept_on_its_step",
        serde_json::Value::Array(fixtures),
    ) else {
        return;
    };
    let mut cfg = streaming(&mock.base_url(), "gpt-4o-mini");
    cfg.streaming = false;
    let (engine, recorder) = engine_on(cfg);
    engine
        .run(diagraph::engine::RunRequest::new(
            "why is payment-service slow?",
        ))
        .await
        .unwrap();
    let steps = recorder.snapshot().steps;
    assert_eq!(
        steps[0].model_output,
        "I would first look at the alerts, then the logs."
    );
    let why = steps[0].parse_error.as_deref().unwrap_or_default();
    assert!(why.contains("JSON"), "{why}");
    // The accepted answers carry none, the Executor's tool-call turn
    // included.
    assert!(
        steps[1..].iter().all(|s| s.parse_error.is_none()),
        "{steps:?}"
    );
}

#[tokio::test]
async fn serve_streams_the_pieces_as_delta_events_and_a_following_client_gets_them() {
    use crate::server_support::{SseStream, TestServer, start_run};
    use diagraph::server::ServeOptions;
    use diagraph::server::client::ServerClient;
    // Slow chunks, so the run is still streaming when the followers join.
    let mut fixtures = vec![json!({"match": {"systemMessage": "# Role: Planner"},
        "chunkSize": 8, "latency": 15, "response": {"content": PLAN}})];
    fixtures.extend(executor_fixtures());
    let Some(mock) = Aimock::start(
        "serve_streams_the_pieces_as_delta_events_and_a_following_client_gets_them",
        serde_json::Value::Array(fixtures),
    ) else {
        return;
    };
    let model =
        std::sync::Arc::new(OpenAiModel::new(streaming(&mock.base_url(), "gpt-4o-mini")).unwrap());
    let server = TestServer::start_with(ServeOptions::default(), model).await;
    let run_id = start_run(&server, "why is payment-service slow?").await;
    let client = ServerClient::new(&server.url, None).unwrap();
    let (events_tx, mut events_rx) = tokio::sync::mpsc::channel(1024);
    let (deltas_tx, mut deltas_rx) = tokio::sync::mpsc::channel(4096);
    let follow = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .follow_live(run_id, 0, &events_tx, Some(&deltas_tx))
                .await
        })
    };
    let mut sse = SseStream::open(&server.at(&format!("/api/runs/{run_id}/events")), None).await;
    let frames = sse.rest().await;
    follow.await.unwrap().unwrap();

    let deltas: Vec<&diagraph::server::client::SseFrame> = frames
        .iter()
        .filter(|f| f.event.as_deref() == Some("delta"))
        .collect();
    assert!(!deltas.is_empty(), "{frames:?}");
    // Pieces are not positions: no id, so a resumed stream never skips
    // events because of them.
    assert!(deltas.iter().all(|f| f.id.is_none()));
    let events = crate::server_support::engine_events(&frames);
    assert!(
        events
            .iter()
            .enumerate()
            .all(|(i, e)| e.seq as usize == i + 1)
    );

    // Each call whose pieces came is whole: they add up to its recorded
    // output. The client following the server got the same.
    let trace = server.store.run_trace(run_id).await.unwrap();
    let pieces: Vec<ModelDelta> = deltas
        .iter()
        .map(|f| serde_json::from_str(&f.data).unwrap())
        .collect();
    let mut followed = Vec::new();
    while let Ok(d) = deltas_rx.try_recv() {
        followed.push(d);
    }
    while events_rx.try_recv().is_ok() {}
    for got in [&pieces, &followed] {
        let planner: String = got
            .iter()
            .filter(|d| d.step_index == 1 && d.part == DeltaPart::Content)
            .map(|d| d.text.as_str())
            .collect();
        assert_eq!(planner, trace.steps[0].model_output);
    }
}

#[tokio::test]
async fn a_fallback_model_s_stream_follows_a_marker_after_the_failed_one() {
    use diagraph::model::routed::{Named, RoutedModel};
    use std::sync::Arc;
    let Some(mock) = Aimock::start(
        "a_fallback_model_s_stream_follows_a_marker_after_the_failed_one",
        json!([
            {"match": {"model": "primary"}, "chunkSize": 4, "latency": 10, "truncateAfterChunks": 3,
             "response": {"content": ANSWER}},
            {"match": {"model": "backup"}, "chunkSize": 8, "response": {"content": ANSWER}},
        ]),
    ) else {
        return;
    };
    let model = |name: &str| -> Arc<dyn ChatModel> {
        Arc::new(OpenAiModel::new(streaming(&mock.base_url(), name)).unwrap())
    };
    let routed = RoutedModel::new(model("primary")).with_fallbacks(
        diagraph::vocab::agent::AgentRole::Executor,
        vec![Named {
            name: "backup".into(),
            model: model("backup"),
        }],
    );
    let pieces = Pieces::default();
    let r = routed
        .chat_streaming(&ask("x"), &pieces.sink())
        .await
        .unwrap();
    assert_eq!(r.served_by.as_deref(), Some("backup"));
    let shown = pieces.of(DeltaPart::Content).concat();
    let marker = "[connection; the fallback model backup answers]";
    let at = shown.find(marker).unwrap_or_else(|| panic!("{shown}"));
    // Before it, the part of the primary's answer that arrived; after it,
    // the whole answer of the fallback.
    assert!(
        ANSWER.starts_with(&shown[..at].trim_end().to_string()),
        "{shown}"
    );
    assert_eq!(shown[at + marker.len()..].trim_start(), ANSWER);
}

#[tokio::test]
async fn a_long_rejected_answer_is_kept_whole_on_its_step() {
    // 20 KiB of prose: rejected, and stored as it was, not cut at a
    // prefix that would look like a truncated answer.
    let prose = "The alerts of payment-service should be checked first. ".repeat(370);
    let mut fixtures = vec![
        json!({"match": {"systemMessage": "# Role: Planner", "sequenceIndex": 0},
               "response": {"content": prose}}),
        json!({"match": {"systemMessage": "# Role: Planner"}, "response": {"content": PLAN}}),
    ];
    fixtures.extend(executor_fixtures());
    let Some(mock) = Aimock::start(
        "a_long_rejected_answer_is_kept_whole_on_its_step",
        serde_json::Value::Array(fixtures),
    ) else {
        return;
    };
    let (engine, recorder) = engine_on(streaming(&mock.base_url(), "gpt-4o-mini"));
    engine
        .run(diagraph::engine::RunRequest::new(
            "why is payment-service slow?",
        ))
        .await
        .unwrap();
    let steps = recorder.snapshot().steps;
    assert!(prose.len() > 20_000);
    assert_eq!(steps[0].model_output, prose);
    assert!(steps[0].parse_error.is_some());
}

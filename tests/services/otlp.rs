//! OpenTelemetry export against a real OTLP/HTTP receiver started by the
//! test (an axum server decoding the official protobuf definitions; no
//! OpenTelemetry Collector is installable from this project's package
//! registries): the span tree of a run and its GenAI and diagraph
//! attributes, the file export carrying the same spans, a dead collector
//! costing one warning and no run, and the binary exporting at exit.

use crate::fake_llm::{fake_llm, openai};
use crate::helpers::diagraph_bin;
use crate::helpers::free_port;
use crate::openai_mock::MockServer;
use crate::server_support::{Receiver, TestServer, http, json_of, shop_engine_with};
use diagraph::engine::RunRequest;
use diagraph::server::ServeOptions;
use diagraph::server::otlp::export::Warn;
use diagraph::server::otlp::{ExportingRecorder, OtlpExporter, stored_run_request};
use diagraph::store::Store;
use diagraph::vocab::record::Recorder;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Av;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn attr<'a>(span: &'a Span, key: &str) -> Option<&'a Av> {
    span.attributes
        .iter()
        .find(|a| a.key == key)
        .and_then(|a| a.value.as_ref()?.value.as_ref())
}

fn text(span: &Span, key: &str) -> String {
    match attr(span, key) {
        Some(Av::StringValue(s)) => s.clone(),
        other => panic!("{}: {key} is {other:?}", span.name),
    }
}

fn int(span: &Span, key: &str) -> i64 {
    match attr(span, key) {
        Some(Av::IntValue(i)) => *i,
        other => panic!("{}: {key} is {other:?}", span.name),
    }
}

/// A warning sink that counts.
fn counting() -> (Warn, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    (
        Arc::new(move |m: &str| sink.lock().unwrap().push(m.to_string())),
        seen,
    )
}

/// A server whose runs go to `endpoint`, with the fake LLM over the
/// OpenAI protocol (so model calls carry a provider, a model and tokens).
async fn exporting_server(
    endpoint: &str,
    llm: &MockServer,
    warn: Warn,
) -> (TestServer, Arc<OtlpExporter>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite:{}", dir.path().join("d.db").display());
    let store = Arc::new(Store::connect(&db_url).await.unwrap());
    let exporter = OtlpExporter::start(endpoint, vec![], store.clone(), warn).unwrap();
    let recorder: Arc<dyn Recorder> =
        Arc::new(ExportingRecorder::new(store.clone(), exporter.clone()));
    let model = Arc::new(openai(&llm.base_url, Duration::from_secs(5)));
    let engine = shop_engine_with(store.clone(), recorder, model).await;
    let server = TestServer::with_engine(&db_url, store, engine, ServeOptions::default()).await;
    (server, exporter, dir)
}

async fn ask(server: &TestServer, question: &str) -> serde_json::Value {
    let (status, v) = json_of(
        http()
            .post(server.at("/api/chat"))
            .json(&json!({ "question": question }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    v
}

fn by_id(spans: &[Span]) -> BTreeMap<Vec<u8>, &Span> {
    spans.iter().map(|s| (s.span_id.clone(), s)).collect()
}

#[tokio::test]
async fn a_run_is_exported_as_a_genai_span_tree() {
    let receiver = Receiver::start().await;
    let llm = MockServer::start_with(vec![], fake_llm("payment-service")).await;
    let (warn, warnings) = counting();
    let (server, exporter, _dir) = exporting_server(&receiver.url, &llm, warn).await;
    let answer = ask(&server, "Is HighCPUUsage firing on payment-service?").await;
    let run_id = answer["run_id"].as_i64().unwrap();
    assert_eq!(answer["effective_verdict"], "PASS", "{answer}");

    let spans = receiver
        .received
        .wait_until(|s| s.iter().any(|s| s.parent_span_id.is_empty()))
        .await;
    let trace = server.store.run_trace(run_id).await.unwrap();

    // One trace, one root, every parent present, ids of the right sizes.
    let roots: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_empty())
        .collect();
    assert_eq!(roots.len(), 1, "{spans:#?}");
    let root = roots[0];
    let ids = by_id(&spans);
    assert_eq!(ids.len(), spans.len(), "span ids are unique");
    for s in &spans {
        assert_eq!(s.trace_id, root.trace_id);
        assert_eq!((s.trace_id.len(), s.span_id.len()), (16, 8));
        assert!(s.parent_span_id.is_empty() || ids.contains_key(&s.parent_span_id));
        assert!(
            s.start_time_unix_nano >= root.start_time_unix_nano,
            "{}",
            s.name
        );
        assert!(
            s.end_time_unix_nano <= root.end_time_unix_nano,
            "{}",
            s.name
        );
        assert!(s.start_time_unix_nano <= s.end_time_unix_nano, "{}", s.name);
    }

    assert_eq!(root.name, "invoke_workflow diagraph");
    assert_eq!(text(root, "gen_ai.operation.name"), "invoke_workflow");
    assert_eq!(text(root, "gen_ai.agent.name"), "diagraph");
    assert_eq!(int(root, "diagraph.run.id"), run_id);
    assert_eq!(text(root, "diagraph.run.status"), "SUCCESS");
    assert_eq!(text(root, "gen_ai.conversation.id"), trace.run.session_id);
    assert_eq!(text(root, "diagraph.verdict.effective"), "PASS");
    assert_eq!(text(root, "diagraph.verdict.ceiling"), "PASS");
    assert_eq!(text(root, "diagraph.verdict.model"), "PASS");
    assert_eq!(text(root, "diagraph.gatekeeper.status"), "pass");
    let termination = trace
        .run
        .orchestration_trace()
        .unwrap()
        .termination_reason
        .unwrap();
    assert_eq!(text(root, "diagraph.reason_code"), termination.as_str());

    // The root's children are the route's nodes, in order.
    let mut nodes: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id == root.span_id)
        .collect();
    nodes.sort_by_key(|s| s.start_time_unix_nano);
    let names: Vec<&str> = nodes.iter().map(|s| s.name.as_str()).collect();
    let want: Vec<String> = trace
        .run
        .route
        .as_ref()
        .unwrap()
        .iter()
        .map(|n| match n.agent_role() {
            Some(role) => format!("invoke_agent {role}"),
            None => n.as_str().to_string(),
        })
        .collect();
    assert_eq!(names, want);
    for n in &nodes {
        assert_eq!(n.kind, SpanKind::Internal as i32);
        assert!(attr(n, "diagraph.reason_code").is_some(), "{}", n.name);
        assert!(attr(n, "diagraph.outcome").is_some(), "{}", n.name);
        if n.name.starts_with("invoke_agent") {
            assert_eq!(text(n, "gen_ai.operation.name"), "invoke_agent");
            assert_eq!(text(n, "gen_ai.provider.name"), "openai");
            assert_eq!(text(n, "gen_ai.request.model"), "fake-llm");
        }
    }
    let gatekeeper = nodes.iter().find(|s| s.name == "gatekeeper").unwrap();
    assert_eq!(text(gatekeeper, "diagraph.gatekeeper.status"), "pass");
    assert_eq!(text(gatekeeper, "diagraph.outcome"), "PASS");
    let verifier = nodes
        .iter()
        .find(|s| s.name == "invoke_agent verifier")
        .unwrap();
    assert_eq!(text(verifier, "diagraph.verdict.effective"), "PASS");

    // A chat span per model call, under the agent that made it.
    let chats: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("chat"))
        .collect();
    assert_eq!(chats.len(), trace.steps.len());
    for c in &chats {
        assert_eq!(c.name, "chat fake-llm");
        assert_eq!(c.kind, SpanKind::Client as i32);
        assert_eq!(text(c, "gen_ai.operation.name"), "chat");
        assert_eq!(text(c, "gen_ai.provider.name"), "openai");
        assert_eq!(text(c, "gen_ai.request.model"), "fake-llm");
        assert!(int(c, "diagraph.usage.total_tokens") > 0);
        let parent = ids[&c.parent_span_id];
        assert_eq!(
            parent.name,
            format!("invoke_agent {}", text(c, "gen_ai.agent.name"))
        );
        let step = trace
            .steps
            .iter()
            .find(|s| s.id == int(c, "diagraph.step.id"))
            .unwrap();
        assert_eq!(step.token_count, int(c, "diagraph.usage.total_tokens"));
    }

    // An execute_tool span per invocation, under the Executor, its call id
    // the invocation id.
    let tools: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("execute_tool"))
        .collect();
    assert_eq!(tools.len(), trace.tool_invocations.len());
    assert!(!tools.is_empty());
    for (t, inv) in tools.iter().zip(&trace.tool_invocations) {
        assert_eq!(t.name, format!("execute_tool {}", inv.tool_name));
        assert_eq!(text(t, "gen_ai.operation.name"), "execute_tool");
        assert_eq!(text(t, "gen_ai.tool.name"), inv.tool_name);
        assert_eq!(text(t, "gen_ai.tool.call.id"), inv.id.to_string());
        assert_eq!(text(t, "diagraph.tool.evidence_status"), "supported");
        assert_eq!(ids[&t.parent_span_id].name, "invoke_agent executor");
    }

    // The file export of the same run is the same spans.
    let file = stored_run_request(&server.store, run_id).await.unwrap();
    let mut exported: Vec<Span> = file.resource_spans[0].scope_spans[0].spans.clone();
    let mut live = spans.clone();
    exported.sort_by(|a, b| a.span_id.cmp(&b.span_id));
    live.sort_by(|a, b| a.span_id.cmp(&b.span_id));
    assert_eq!(exported, live);

    // Resource and scope name the service.
    let request = &receiver.received.requests()[0];
    let resource = request.resource_spans[0].resource.as_ref().unwrap();
    assert!(resource.attributes.iter().any(|a| a.key == "service.name"
        && a.value.as_ref().unwrap().value == Some(Av::StringValue("diagraph".into()))));
    exporter.shutdown(Duration::from_secs(5)).await;
    assert!(warnings.lock().unwrap().is_empty(), "{warnings:?}");
}

/// A collector that hangs up on every connection; the receiver counts the
/// connections it refused to serve.
async fn hanging_up_collector() -> (String, tokio::sync::watch::Receiver<usize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::watch::channel(0);
    tokio::spawn(async move {
        while let Ok((conn, _)) = listener.accept().await {
            drop(conn);
            tx.send_modify(|n| *n += 1);
        }
    });
    (url, rx)
}

#[tokio::test]
async fn a_dead_collector_is_one_warning_and_no_run_fails() {
    let llm = MockServer::start_with(vec![], fake_llm("payment-service")).await;
    let (dead, mut attempts) = hanging_up_collector().await;
    let (warn, warnings) = counting();
    let (server, exporter, _dir) = exporting_server(&dead, &llm, warn).await;
    for _ in 0..3 {
        let before = *attempts.borrow_and_update();
        let v = ask(&server, "Is HighCPUUsage firing on payment-service?").await;
        assert_eq!(v["status"], "SUCCESS");
        // A batch with this run's spans failed before the next run.
        tokio::time::timeout(Duration::from_secs(10), attempts.wait_for(|n| *n > before))
            .await
            .expect("the exporter tried to send the run")
            .unwrap();
    }
    exporter.shutdown(Duration::from_secs(10)).await;
    let warnings = warnings.lock().unwrap().clone();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("cannot reach"), "{warnings:?}");
    assert!(warnings[0].contains("/v1/traces"), "{warnings:?}");
}

#[tokio::test]
async fn a_cancelled_run_is_an_error_span_with_its_failure_class() {
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(
        Store::connect(&format!("sqlite:{}", dir.path().join("d.db").display()))
            .await
            .unwrap(),
    );
    let (warn, _) = counting();
    let exporter = OtlpExporter::start(&receiver.url, vec![], store.clone(), warn).unwrap();
    let recorder: Arc<dyn Recorder> =
        Arc::new(ExportingRecorder::new(store.clone(), exporter.clone()));
    let engine = shop_engine_with(
        store.clone(),
        recorder,
        Arc::new(diagraph::model::offline::OfflineModel::new()),
    )
    .await;
    let request = RunRequest::new("why is payment-service slow?");
    request.cancel.cancel();
    let outcome = engine.run(request).await.unwrap();
    exporter.shutdown(Duration::from_secs(5)).await;
    let spans = receiver.received.spans();
    let root = spans.iter().find(|s| s.parent_span_id.is_empty()).unwrap();
    assert_eq!(int(root, "diagraph.run.id"), outcome.run_id);
    let status = root.status.as_ref().unwrap();
    assert_eq!(status.code, StatusCode::Error as i32);
    assert_eq!(
        status.message,
        outcome.end.failure.as_ref().unwrap().message
    );
    assert_eq!(text(root, "error.type"), "cancelled");
    assert_eq!(text(root, "diagraph.failure.class"), "cancelled");
    assert_eq!(text(root, "diagraph.run.status"), "CANCELLED");
}

// Multi-threaded: the receiver answers while the test waits for the binary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_exports_its_run_before_it_exits() {
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite:{}", dir.path().join("d.db").display());
    let cmd = |endpoint_var: &str, endpoint: &str| {
        let mut c = diagraph_bin();
        c.env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env("HOME", dir.path())
            .env(endpoint_var, endpoint)
            .args(["--database-url", &db_url]);
        c
    };
    // The standard OpenTelemetry variable works when diagraph's is unset.
    let out = cmd("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.url)
        .args(["ask", "why is payment-service slow?", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run_id = answer["run_id"].as_i64().unwrap();
    // Sent before the process exited: nothing left to wait for.
    let spans = receiver.received.spans();
    let root = spans
        .iter()
        .find(|s| s.parent_span_id.is_empty())
        .expect("the run's spans arrived before exit");
    assert_eq!(int(root, "diagraph.run.id"), run_id);

    // `export --format otlp-json` writes the same spans as OTLP/JSON.
    let file = dir.path().join("run.otlp.json");
    let out = cmd("DIAGRAPH_OTLP_ENDPOINT", &receiver.url)
        .args(["export", &run_id.to_string(), "--format", "otlp-json", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 1, "one request per line");
    let line: serde_json::Value = serde_json::from_str(&text).unwrap();
    let first = &line["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
    // OTLP/JSON: ids in lowercase hex, times as decimal strings.
    let trace_id = first["traceId"].as_str().unwrap();
    assert_eq!(trace_id.len(), 32);
    assert!(
        trace_id
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );
    assert!(first["startTimeUnixNano"].is_string());
    let parsed: ExportTraceServiceRequest = serde_json::from_str(&text).unwrap();
    let mut from_file = parsed.resource_spans[0].scope_spans[0].spans.clone();
    let mut sent = spans.clone();
    from_file.sort_by(|a, b| a.span_id.cmp(&b.span_id));
    sent.sort_by(|a, b| a.span_id.cmp(&b.span_id));
    assert_eq!(from_file, sent);

    let out = cmd("DIAGRAPH_OTLP_ENDPOINT", &receiver.url)
        .args(["export", "999", "--format", "otlp-json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown run 999"));

    // A dead collector: the answer as usual, and one warning line.
    let dead = format!("http://127.0.0.1:{}", free_port());
    let out = cmd("DIAGRAPH_OTLP_ENDPOINT", &dead)
        .args(["ask", "why is payment-service slow?", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("warning: OpenTelemetry export"), "{err}");

    let out = cmd("DIAGRAPH_OTLP_ENDPOINT", "collector:4318")
        .args(["runs"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("otlp_endpoint"));
}

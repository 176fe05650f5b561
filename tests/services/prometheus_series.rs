//! PromQL values as evidence against a real Prometheus: instant and range
//! queries become `$.series[i]` refs stating metric, labels, window,
//! min/max/last and unit; a claim bound to one passes the Gatekeeper and a
//! fabricated number fails it (directly, and in scripted scenario runs);
//! a raw_path outside the arrays a tool declares is rejected; the alerts
//! and the values each survive the other's failure.

use crate::helpers::{base_engine, pack_registry, serve_http, shop_pack, shop_pack_dir};
use crate::prometheus_server::{PromServer, args, as_invocation, tool};
use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use diagraph::engine::nodes::gatekeeper::{GatekeeperRules, check_with_tools};
use diagraph::engine::{Engine, MemoryRecorder};
use diagraph::model::offline::OfflineModel;
use diagraph::scenario::Scenario;
use diagraph::tools::{Tool, ToolError, ToolRegistry};
use diagraph::vocab::contracts::{Verdict, parse_executor_evidence};
use diagraph::vocab::events::EventKind;
use diagraph::vocab::run::FailureClass;
use diagraph::vocab::tool::EvidenceStatus;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const P99: &str = r#"service:http_request_duration_seconds:p99{service="payment-service"}"#;

fn claim(raw_path: &str, excerpt: &str) -> diagraph::vocab::contracts::ExecutorEvidence {
    parse_executor_evidence(
        &json!({"answer_version": "executor_evidence_v2", "claims": [{
            "claim_id": "claim-1", "claim_type": "observation",
            "claim_text": "p99 latency of payment-service rose to 2.3 s",
            "support_level": "direct",
            "evidence_bindings": [{"tool_name": "query_metrics", "source_invocation_id": 41,
                "raw_path": raw_path, "evidence_excerpt": excerpt}]}],
            "hypotheses": [], "recommended_actions": [], "missing_info": []})
        .to_string(),
    )
    .unwrap()
}

#[tokio::test]
async fn values_are_series_evidence_from_a_real_prometheus() {
    let Some(server) = PromServer::start().await else {
        return;
    };
    let metrics = tool(&server.url);
    assert_eq!(metrics.spec().evidence_arrays, ["alerts", "series"]);

    // Instant: the alert and the series, each its own ref.
    let out = metrics
        .call(&args(json!({"service": "payment-service", "promql": P99})))
        .await
        .unwrap();
    assert!(out.partial.is_none(), "{:?}", out.partial);
    let paths: Vec<&str> = out
        .evidence_refs
        .iter()
        .map(|r| r.raw_path.as_str())
        .collect();
    assert_eq!(paths, ["$.alerts[0]", "$.series[0]"]);
    let text = &out.evidence_refs[1].text;
    assert!(
        text.starts_with(
            "metric=service:http_request_duration_seconds:p99 service=payment-service at="
        ),
        "{text}"
    );
    assert!(text.ends_with(" value=2.3 s"), "{text}");
    assert_eq!(out.body["series"][0]["unit"], "seconds");
    assert_eq!(out.body["series"][0]["value"], 2.3);
    assert_eq!(out.body["promql"], P99);

    // Range: the window and the figures over it.
    let out = metrics
        .call(&args(
            json!({"promql": P99, "window_minutes": 5, "step_seconds": 1}),
        ))
        .await
        .unwrap();
    let series = out
        .evidence_refs
        .iter()
        .find(|r| r.raw_path == "$.series[0]")
        .unwrap();
    for needle in [
        "metric=service:http_request_duration_seconds:p99 service=payment-service from=",
        " until=",
        " step=1s min=2.3 s max=2.3 s last=2.3 s points=",
    ] {
        assert!(series.text.contains(needle), "{needle} in {}", series.text);
    }
    assert!(out.body["series"][0]["points"].as_u64().unwrap() >= 1);

    // Without promql, a service's template values are series too.
    let out = metrics
        .call(&args(json!({"service": "payment-service"})))
        .await
        .unwrap();
    assert!(
        out.evidence_refs
            .iter()
            .any(|r| r.raw_path.starts_with("$.series[")
                && r.text.starts_with("metric=up ")
                && r.text.contains("service=payment-service")
                && r.text.ends_with(" value=1")),
        "{:?}",
        out.evidence_refs
    );

    // An expression without a name is named by itself; a rate is per
    // second (once there are two scrapes to take it from).
    let mut out = None;
    for _ in 0..40 {
        let o = metrics
            .call(&args(json!({"promql": "sum(rate(prometheus_http_requests_total[1m]))", "alertname": "none"})))
            .await
            .unwrap();
        if o.evidence_status == EvidenceStatus::Supported {
            out = Some(o);
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let out = out.expect("a rate within 10 s");
    let r = &out.evidence_refs[0];
    assert_eq!(r.raw_path, "$.series[0]");
    assert!(
        r.text
            .starts_with("expr=sum(rate(prometheus_http_requests_total[1m])) at="),
        "{}",
        r.text
    );
    assert!(r.text.contains("/s"), "{}", r.text);

    // Bad PromQL with alerts found: the alerts stay, the call says why.
    let out = metrics
        .call(&args(
            json!({"service": "payment-service", "promql": "rate(up[5m"}),
        ))
        .await
        .unwrap();
    assert_eq!(out.evidence_refs[0].raw_path, "$.alerts[0]");
    let why = out.partial.unwrap();
    assert!(
        why.starts_with("the metric values could not be read (Prometheus rejected the PromQL"),
        "{why}"
    );
    // ... and with nothing else found, the call fails with the reason.
    let err = metrics
        .call(&args(json!({"alertname": "none", "promql": "rate(up[5m"})))
        .await
        .unwrap_err();
    assert_eq!(err.class(), FailureClass::BadResponse, "{err}");
    assert!(err.to_string().contains("bad_data"), "{err}");

    // The Gatekeeper: a claim bound to the series passes; a fabricated
    // number, or a path into an array the tool does not declare, fails.
    let out = metrics
        .call(&args(json!({"promql": P99, "window_minutes": 5})))
        .await
        .unwrap();
    let inv = as_invocation(41, &out);
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(tool(&server.url)));
    let rules = GatekeeperRules::shipped();
    let verdict = |raw_path: &str, excerpt: &str| {
        check_with_tools(
            &claim(raw_path, excerpt),
            std::slice::from_ref(&inv),
            &rules,
            Some(&tools),
        )
    };
    let good = verdict(
        "$.series[0]",
        "metric=service:http_request_duration_seconds:p99 service=payment-service last=2.3 s",
    );
    assert_eq!(good.status, "pass", "{good:?}");
    let fabricated = verdict(
        "$.series[0]",
        "metric=service:http_request_duration_seconds:p99 service=payment-service last=4.1 s",
    );
    assert_eq!(fabricated.status, "fail", "{fabricated:?}");
    let undeclared = verdict("$.logs[0]", "service=payment-service last=2.3 s");
    assert_eq!(undeclared.status, "fail");
    assert!(
        undeclared.errors.iter().any(|e| e
            .contains("raw_path \"$.logs[0]\" must be $.alerts[i], $.series[i] or $.no_evidence")),
        "{undeclared:?}"
    );
}

fn series_scenario(last: &str) -> Scenario {
    let text = format!(
        r#"
name = "PromQL series evidence"
description = "A claim about p99 latency bound to a series of a range query"
pack = {pack:?}
question = "Did payment-service latency rise?"

[[script]]
role = "planner"
text = '''{{"selected_skill": "", "selection_reason": "a latency question", "plan": ["read the p99 latency of payment-service"], "reasoning": "metric values", "queries": [{{"tool": "query_metrics", "arguments": {{"promql": "{promql}", "window_minutes": 10}}, "purpose": "p99 latency"}}]}}'''

[[script]]
role = "executor"
tool_calls = [{{ name = "query_metrics", arguments = {{ promql = '{P99}', window_minutes = 10 }} }}]

[[script]]
role = "executor"
text = '''{{"answer_version": "executor_evidence_v2", "claims": [{{"claim_id": "claim-1", "claim_type": "observation", "claim_text": "p99 latency of payment-service rose to {last}", "support_level": "direct", "evidence_bindings": [{{"tool_name": "query_metrics", "source_invocation_id": {{{{invocation:1}}}}, "raw_path": "$.series[0]", "evidence_excerpt": "metric=service:http_request_duration_seconds:p99 service=payment-service last={last}"}}]}}], "hypotheses": [], "recommended_actions": [], "missing_info": []}}'''
"#,
        pack = shop_pack_dir().display().to_string(),
        promql = P99.replace('"', "\\\""),
    );
    Scenario::parse(Path::new("series.toml"), &text).unwrap()
}

#[tokio::test]
async fn a_scripted_run_binds_a_claim_to_a_series_and_a_fabricated_number_fails() {
    let Some(server) = PromServer::start().await else {
        return;
    };
    let run = |last: &'static str| {
        let url = server.url.clone();
        async move {
            let recorder = Arc::new(MemoryRecorder::new());
            let mut registry = pack_registry(&shop_pack());
            registry.register(Arc::new(tool(&url)));
            let base = Engine {
                tools: Arc::new(registry),
                ..base_engine(recorder.clone())
            };
            let s = series_scenario(last);
            let engine = s.engine_with_pack(&base, Arc::new(OfflineModel::new()), shop_pack());
            let outcome = engine.run(s.request()).await.unwrap();
            let gate = outcome
                .events
                .iter()
                .find_map(|e| match &e.kind {
                    EventKind::GatekeeperChecked { result } => Some(result.clone()),
                    _ => None,
                })
                .expect("the gatekeeper ran");
            (outcome, gate, recorder)
        }
    };
    let (outcome, gate, recorder) = run("2.3 s").await;
    let data = recorder.snapshot();
    let inv = data
        .invocations
        .iter()
        .find(|i| i.tool_name == "query_metrics")
        .unwrap();
    assert!(
        inv.retrieval_details
            .source
            .backend
            .starts_with("prometheus:"),
        "{inv:?}"
    );
    assert!(
        inv.retrieval_details
            .evidence_refs
            .iter()
            .any(|r| r.raw_path == "$.series[0]"),
        "{inv:?}"
    );
    assert_eq!(gate.status, "pass", "{gate:?}");
    assert_eq!(gate.verified_binding_count(), 1);
    assert_eq!(
        outcome.end.effective_verdict,
        Some(Verdict::Pass),
        "{outcome:?}"
    );

    let (outcome, gate, _) = run("4.1 s").await;
    assert_eq!(gate.status, "fail", "{gate:?}");
    assert_ne!(outcome.end.effective_verdict, Some(Verdict::Pass));
}

#[tokio::test]
async fn the_alerts_and_the_values_each_survive_the_others_failure() {
    // A Prometheus-compatible store without an alerts API (VictoriaMetrics
    // single-node answers it only through vmalert): the values still answer.
    let url = serve_http(
        Router::new()
            .route(
                "/api/v1/alerts",
                get(|| async {
                    (
                        StatusCode::BAD_REQUEST,
                        r#"{"status":"error","errorType":"bad_data","error":"unsupported path requested: \"/api/v1/alerts\""}"#,
                    )
                }),
            )
            .route(
                "/api/v1/query",
                get(|| async {
                    axum::Json(json!({"status": "success", "data": {"resultType": "vector",
                        "result": [{"metric": {"__name__": "node_memory_MemAvailable_bytes", "instance": "n1"},
                                    "value": [1783550400.0, "1048576"]}]}}))
                }),
            ),
    )
    .await;
    let out = tool(&url)
        .call(&args(json!({"promql": "node_memory_MemAvailable_bytes"})))
        .await
        .unwrap();
    assert_eq!(out.evidence_status, EvidenceStatus::Supported);
    assert_eq!(
        out.evidence_refs[0].text,
        "metric=node_memory_MemAvailable_bytes instance=n1 at=2026-07-08T22:40:00Z value=1048576 bytes"
    );
    let why = out.partial.unwrap();
    assert!(
        why.starts_with(
            "the alerts could not be read (HTTP 400 (Prometheus /api/v1/alerts, bad_data)"
        ),
        "{why}"
    );
    // No values asked for: the alerts' failure is the call's.
    let err = tool(&url).call(&args(json!({}))).await.unwrap_err();
    assert!(
        matches!(err, ToolError::Status { status: 400, .. }),
        "{err}"
    );

    // A malformed values answer fails the values only.
    let url = serve_http(
        Router::new()
            .route(
                "/api/v1/alerts",
                get(|| async {
                    axum::Json(json!({"status": "success", "data": {"alerts": [
                        {"labels": {"alertname": "HighCPUUsage", "service": "payment-service"}, "state": "firing", "value": "92"}]}}))
                }),
            )
            .route(
                "/api/v1/query_range",
                get(|| async {
                    axum::Json(json!({"status": "success", "data": {"resultType": "matrix",
                        "result": [{"metric": {}, "values": [[1.0, "fast"]]}]}}))
                }),
            ),
    )
    .await;
    let out = tool(&url)
        .call(&args(
            json!({"service": "payment-service", "promql": "x", "window_minutes": 5}),
        ))
        .await
        .unwrap();
    assert_eq!(out.evidence_refs.len(), 1);
    assert_eq!(out.evidence_refs[0].raw_path, "$.alerts[0]");
    assert!(
        out.partial
            .unwrap()
            .contains("Prometheus answered a sample value that is not a number"),
    );
}

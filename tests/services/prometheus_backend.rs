//! query_metrics over Prometheus: a real server (alerts become refs, state
//! and service filters, instant values, bad PromQL), and failure modes
//! through small fakes (refused connection, non-success status, timeout).

use crate::helpers::{free_port, serve_http};
use crate::prometheus_server::{PromServer, args, as_invocation, tool};
use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use diagraph::engine::nodes::gatekeeper::{GatekeeperRules, check};
use diagraph::tools::prometheus::{PrometheusConfig, PrometheusMetrics};
use diagraph::tools::{Tool, ToolError};
use diagraph::vocab::contracts::parse_executor_evidence;
use diagraph::vocab::run::FailureClass;
use diagraph::vocab::tool::EvidenceStatus;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[tokio::test]
async fn against_a_real_prometheus() {
    let Some(server) = PromServer::start().await else {
        return;
    };
    let metrics = tool(&server.url);
    assert_eq!(metrics.spec().name, "query_metrics");

    // A service's firing alert is a $.alerts[i] ref stating what a claim needs.
    let out = metrics
        .call(&args(json!({"service": "payment-service"})))
        .await
        .unwrap();
    assert_eq!(out.evidence_status, EvidenceStatus::Supported);
    // The alert, then the service's template values as series.
    let alerts: Vec<_> = out
        .evidence_refs
        .iter()
        .filter(|r| r.raw_path.starts_with("$.alerts["))
        .collect();
    assert_eq!(alerts.len(), 1, "{:?}", out.evidence_refs);
    let r = alerts[0];
    assert_eq!(r.raw_path, "$.alerts[0]");
    for needle in [
        "alertname=HighCPUUsage",
        "service=payment-service",
        "severity=critical",
        "state=firing",
        "value=92",
        "active_for=",
        "since=",
        "summary=CPU usage above 90%",
    ] {
        assert!(r.text.contains(needle), "{needle} missing in {}", r.text);
    }
    assert_eq!(out.body["total"], 1);
    assert_eq!(out.body["alerts"][0]["labels"]["alertname"], "HighCPUUsage");
    assert_eq!(out.body["source"], "prometheus");
    // Instant values from the templated PromQL: the self-scrape carries the label.
    let values = out.body["series"].as_array().unwrap();
    assert!(
        values
            .iter()
            .any(|v| v["metric"]["__name__"] == "up" && v["metric"]["service"] == "payment-service"),
        "{values:?}"
    );
    assert!(
        out.body["promql"]
            .as_str()
            .unwrap()
            .contains("service=\"payment-service\"")
    );

    // The real alert ref backs a claim through the Gatekeeper; a doctored
    // value does not.
    let invocation = as_invocation(41, &out);
    let active_for = r
        .text
        .split(' ')
        .find(|p| p.starts_with("active_for="))
        .unwrap();
    let claim = |excerpt: &str| {
        parse_executor_evidence(
            &json!({"answer_version": "executor_evidence_v2", "claims": [{
                "claim_id": "claim-1", "claim_type": "observation",
                "claim_text": "HighCPUUsage is firing on payment-service at 92",
                "support_level": "direct",
                "evidence_bindings": [{"tool_name": "query_metrics", "source_invocation_id": 41,
                    "raw_path": "$.alerts[0]", "evidence_excerpt": excerpt}]}],
                "hypotheses": [], "recommended_actions": [], "missing_info": []})
            .to_string(),
        )
        .unwrap()
    };
    let good = claim(&format!(
        "alertname=HighCPUUsage service=payment-service state=firing value=92 {active_for}"
    ));
    let verdict = check(
        &good,
        std::slice::from_ref(&invocation),
        &GatekeeperRules::shipped(),
    );
    assert_eq!(verdict.status, "pass", "{verdict:?}");
    assert_eq!(verdict.verified_binding_count(), 1);
    let doctored = claim("alertname=HighCPUUsage service=payment-service state=firing value=99");
    let verdict = check(&doctored, &[invocation], &GatekeeperRules::shipped());
    assert_eq!(verdict.status, "fail", "{verdict:?}");

    // Filters: a pending alert, by state; everything, by default.
    let pending = metrics
        .call(&args(json!({"state": "pending"})))
        .await
        .unwrap();
    assert_eq!(pending.evidence_refs.len(), 1);
    assert!(
        pending.evidence_refs[0]
            .text
            .contains("alertname=OrderLatencyCreeping")
    );
    assert!(pending.evidence_refs[0].text.contains("state=pending"));
    assert!(pending.evidence_refs[0].text.contains("value=1.5"));
    let all = metrics.call(&args(json!({}))).await.unwrap();
    assert_eq!(all.evidence_refs.len(), 2);
    assert!(
        all.body.get("series").is_none(),
        "no service, no instant query"
    );

    // Nothing matches: the canonical no-evidence output.
    let none = metrics
        .call(&args(json!({"service": "inventory-service"})))
        .await
        .unwrap();
    assert_eq!(none.evidence_status, EvidenceStatus::NoEvidence);
    assert_eq!(none.evidence_refs[0].raw_path, "$.no_evidence");
    assert!(
        none.evidence_refs[0]
            .text
            .contains("service=inventory-service")
    );
    let none = metrics
        .call(&args(
            json!({"alertname": "HighCPUUsage", "state": "pending"}),
        ))
        .await
        .unwrap();
    assert_eq!(none.evidence_status, EvidenceStatus::NoEvidence);

    // Bad PromQL: the real server answers 400 with errorType bad_data.
    // The optional value query failed, the alerts were read: they are
    // kept, and the invocation says what could not be read.
    let broken = PrometheusMetrics::new(PrometheusConfig {
        promql_template: r#"up{service="{service}""#.into(),
        ..PrometheusConfig::new(&server.url)
    })
    .unwrap();
    let kept = broken
        .call(&args(json!({"service": "payment-service"})))
        .await
        .unwrap();
    assert_eq!(kept.evidence_status, EvidenceStatus::Supported);
    assert!(
        kept.evidence_refs[0]
            .text
            .contains("alertname=HighCPUUsage"),
        "{:?}",
        kept.evidence_refs
    );
    let why = kept.partial.as_deref().unwrap();
    assert!(why.contains("rejected the PromQL"), "{why}");
    assert!(why.contains("bad_data"), "{why}");
    assert_eq!(kept.body["partial"], why);

    // A service name cannot inject PromQL: it stays inside the label string.
    let injected = metrics
        .call(&args(json!({"service": "x\"} or vector(1) or up{a=\""})))
        .await
        .unwrap();
    assert_eq!(injected.evidence_status, EvidenceStatus::NoEvidence);
    assert_eq!(injected.body["series"], json!([]));
}

#[tokio::test]
async fn connection_refused_is_a_clear_failure() {
    let port = free_port();
    let err = tool(&format!("http://127.0.0.1:{port}"))
        .call(&args(json!({})))
        .await
        .unwrap_err();
    match &err {
        ToolError::Unavailable(msg) => {
            assert_eq!(
                msg,
                &format!("connection refused to http://127.0.0.1:{port}")
            );
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    assert_eq!(err.class(), FailureClass::Connection);
}

#[tokio::test]
async fn a_non_success_status_is_a_failure_naming_it() {
    let url = serve_http(Router::new().route(
        "/api/v1/alerts",
        get(|| async {
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "Service Unavailable\x1b[2J",
            )
        }),
    ))
    .await;
    let err = tool(&url).call(&args(json!({}))).await.unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, ToolError::Status { status: 503, .. }),
        "{msg}"
    );
    assert_eq!(err.class(), FailureClass::ServerError);
    assert!(msg.starts_with("HTTP 503"), "{msg}");
    assert!(!msg.contains('\x1b'), "{msg}");
}

#[tokio::test]
async fn an_error_envelope_and_a_non_json_body_are_failures() {
    let url = serve_http(Router::new().route(
        "/api/v1/alerts",
        get(|| async {
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                r#"{"status":"error","errorType":"execution","error":"query timed out in expression evaluation"}"#,
            )
        }),
    ))
    .await;
    let msg = tool(&url)
        .call(&args(json!({})))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("422") && msg.contains("execution") && msg.contains("timed out"),
        "{msg}"
    );

    let url =
        serve_http(Router::new().route("/api/v1/alerts", get(|| async { "<html>login</html>" })))
            .await;
    let msg = tool(&url)
        .call(&args(json!({})))
        .await
        .unwrap_err()
        .to_string();
    assert!(msg.contains("not JSON"), "{msg}");
}

#[tokio::test]
async fn a_slow_prometheus_times_out() {
    let url = serve_http(Router::new().route(
        "/api/v1/alerts",
        get(|| async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            "{}"
        }),
    ))
    .await;
    let metrics = PrometheusMetrics::new(PrometheusConfig {
        timeout: Duration::from_millis(200),
        ..PrometheusConfig::new(&url)
    })
    .unwrap();
    let started = Instant::now();
    let err = metrics.call(&args(json!({}))).await.unwrap_err();
    assert_eq!(err, ToolError::Timeout(200));
    assert_eq!(err.to_string(), "timed out after 200 ms");
    assert!(started.elapsed() < Duration::from_millis(1500));
}

#[tokio::test]
async fn recorded_prometheus_answers_parse() {
    // Shape of a real /api/v1/alerts answer (realdata/promtest), with an
    // alert lacking the service label and a `0e+00` value.
    let body = json!({"status": "success", "data": {"alerts": [
        {"labels": {"alertname": "AlwaysFiring", "severity": "critical"},
         "annotations": {"summary": "demo alert that always fires"},
         "state": "firing", "activeAt": "2026-11-29T18:13:16.015730101Z", "value": "1e+00"},
        {"labels": {"alertname": "PrometheusNotConnectedToAlertmanager", "instance": "127.0.0.1:9090",
                    "job": "prometheus", "severity": "critical"},
         "annotations": {"description": "Prometheus cannot connect the alertmanager\n  VALUE = 0"},
         "state": "firing", "activeAt": "2026-11-29T18:13:22.124339672Z", "value": "0e+00"}
    ]}})
    .to_string();
    let url = serve_http(
        Router::new()
            .route(
                "/api/v1/alerts",
                get(move || {
                    let body = body.clone();
                    async move { body }
                }),
            )
            .route(
                "/api/v1/query",
                get(|| async {
                    r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#
                }),
            ),
    )
    .await;
    let out = tool(&url)
        .call(&args(json!({"state": "firing"})))
        .await
        .unwrap();
    assert_eq!(out.evidence_refs.len(), 2);
    let t0 = &out.evidence_refs[0].text;
    assert!(
        t0.starts_with("alertname=AlwaysFiring severity=critical state=firing value=1 "),
        "{t0}"
    );
    let t1 = &out.evidence_refs[1].text;
    assert!(
        t1.starts_with(
            "alertname=PrometheusNotConnectedToAlertmanager service=prometheus \
             severity=critical state=firing value=0 active_for="
        ),
        "{t1}"
    );
    assert!(
        t1.contains(
            "instance=127.0.0.1:9090 job=prometheus \
             summary=Prometheus cannot connect the alertmanager VALUE = 0"
        ),
        "{t1}"
    );
    assert!(t1.contains("since=2026-11-29T18:13:22Z"), "{t1}");
    // Filtering by service uses the same label precedence as the pack.
    let by_job = tool(&url)
        .call(&args(json!({"service": "prometheus"})))
        .await
        .unwrap();
    assert_eq!(by_job.evidence_refs.len(), 1);
}

#[test]
fn a_bad_url_is_rejected_at_construction() {
    for url in ["", "localhost:9090", "ftp://prom"] {
        assert!(
            PrometheusMetrics::new(PrometheusConfig::new(url)).is_err(),
            "{url}"
        );
    }
}

#[tokio::test]
async fn an_alert_storm_is_capped_and_says_so() {
    let alerts: Vec<Value> = (0..150)
        .map(|i| {
            json!({"labels": {"alertname": format!("A{i}"), "service": "s"},
                   "annotations": {}, "state": "firing",
                   "activeAt": "2026-11-29T18:00:00Z", "value": "1"})
        })
        .collect();
    let body = json!({"status": "success", "data": {"alerts": alerts}}).to_string();
    let url = serve_http(Router::new().route(
        "/api/v1/alerts",
        get(move || {
            let body = body.clone();
            async move { body }
        }),
    ))
    .await;
    let out = tool(&url).call(&args(json!({}))).await.unwrap();
    assert_eq!(out.evidence_refs.len(), 100);
    assert_eq!(out.body["alerts"].as_array().unwrap().len(), 100);
    assert_eq!(out.body["total"], 150);
    assert_eq!(out.body["truncated"], true);
}

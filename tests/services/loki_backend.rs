//! query_logs over Grafana Loki, against the fake in `loki_fake` (Loki
//! cannot be installed here): the LogQL sent (syntax, escaping, the time
//! range), label mapping and level detection, exact counts beyond the
//! lines read, credentials, every failure as a failed invocation with its
//! reason, and the offline model diagnosing the shop incident from Loki
//! with the findings it makes from the pack.

use crate::helpers::{
    assert_same_cause, free_port, offline_shop_run, serve_http, shop_pack_dir, silent_http_server,
};
use crate::logs_support::{assert_buckets_exact, call, window, with};
use crate::loki_fake::{Loki, parse_log_query};
use diagraph::config::LokiConfig;
use diagraph::tools::loki::LokiLogs;
use diagraph::tools::{Tool, ToolError};
use diagraph::vocab::run::FailureClass;
use diagraph::vocab::tool::EvidenceStatus;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// 2026-07-08T22:40:00Z in ns.
const T0: i64 = 1_783_550_400_000_000_000;
const S: i64 = 1_000_000_000;

fn loki(url: &str, f: impl FnOnce(&mut LokiConfig)) -> LokiLogs {
    let mut c = LokiConfig {
        url: Some(url.into()),
        ..LokiConfig::default()
    };
    f(&mut c);
    LokiLogs::new(&c, Duration::from_secs(3)).unwrap()
}

#[tokio::test]
async fn lines_counts_labels_and_levels_from_loki() {
    let fake = Loki::default();
    // Loki 3 style: service_name and detected_level labels.
    for i in 0..1200 {
        fake.push(
            &[
                ("service_name", "checkout"),
                ("detected_level", "error"),
                ("pod", "checkout-7f"),
            ],
            T0 + i * S,
            &format!("upstream payment timed out after {}ms", 3000 + i),
        );
    }
    fake.push(
        &[("service_name", "checkout"), ("detected_level", "warn")],
        T0 + 5 * S,
        "retrying \"charge\" {x}",
    );
    fake.push(
        &[("service_name", "cart")],
        T0 + 7 * S,
        "ERROR cart store unreachable",
    );
    let url = fake.clone().serve().await;
    let t = loki(&url, |_| {});
    assert_eq!(t.backend(), format!("loki:{url}"));

    let out = call(
        &t,
        with(
            window(),
            json!({"service": "Checkout", "level": "ERROR", "limit": 5}),
        ),
    )
    .await
    .unwrap();
    // Exact over every line, though Loki returned the newest 1000.
    assert_eq!(out.body["total"], 1200);
    assert_eq!(out.body["first_ts"], "2026-07-08T22:40:00Z");
    assert_eq!(out.body["last_ts"], "2026-07-08T22:59:59Z");
    assert_eq!(out.body["counts_complete"], false);
    assert_eq!(out.body["source"], "loki");
    let logs = out.body["logs"].as_array().unwrap();
    assert_eq!(logs.len(), 5);
    assert_eq!(logs[4]["service"], "checkout");
    assert_eq!(logs[4]["level"], "ERROR");
    assert_eq!(logs[4]["pod"], "checkout-7f");
    assert_eq!(
        out.evidence_refs[4].text,
        "2026-07-08T22:59:59Z ERROR checkout upstream payment timed out after 4199ms"
    );
    assert_eq!(out.evidence_refs[4].raw_path, "$.logs[4]");

    // The LogQL and the time range sent.
    let sent = fake.queries();
    let range = sent
        .iter()
        .find(|q| q.get("direction").map(String::as_str) == Some("backward"))
        .unwrap();
    assert_eq!(
        range["query"],
        r#"{service_name=~"(?i)Checkout"} | detected_level=~"(?i)(error|err|eror)""#
    );
    assert_eq!(range["start"], (T0 - 40 * 60 * S).to_string());
    assert_eq!(range["end"], (T0 + 79 * 60 * S).to_string());
    assert_eq!(range["limit"], "1000");
    assert!(sent.iter().any(|q| q.get("query").is_some_and(|s| {
        s.starts_with("sum(count_over_time({service_name=~") && s.ends_with(" [7140s]))")
    })));
    for q in sent.iter().filter_map(|q| q.get("query")) {
        if !q.starts_with("sum(") {
            parse_log_query(q).unwrap();
        }
    }

    // Keywords with quotes and braces are escaped, matched in any case.
    let out = call(&t, with(window(), json!({"keyword": "\"CHARGE\" {x}"})))
        .await
        .unwrap();
    assert_eq!(out.body["total"], 1);
    assert_eq!(out.body["logs"][0]["level"], "WARN");
    // No level label: the level is read from the line.
    let out = call(&t, with(window(), json!({"service": "cart"})))
        .await
        .unwrap();
    assert_eq!(out.body["logs"][0]["level"], "ERROR");
    assert_eq!(out.body["counts_complete"], true);

    let none = call(&t, with(window(), json!({"service": "nobody"})))
        .await
        .unwrap();
    assert_eq!(none.evidence_status, EvidenceStatus::NoEvidence);
    assert!(
        none.evidence_refs[0]
            .text
            .contains("Loki has no line matching {service_name=~"),
        "{}",
        none.evidence_refs[0].text
    );
}

#[tokio::test]
async fn the_service_label_is_the_first_configured_one_loki_has() {
    let fake = Loki::default();
    fake.push(
        &[("app", "web"), ("job", "default/web"), ("level", "info")],
        T0 + S,
        "GET / 200",
    );
    let url = fake.clone().serve().await;
    let out = call(&loki(&url, |_| {}), window()).await.unwrap();
    assert_eq!(out.body["logs"][0]["service"], "web");
    assert!(
        out.body["logql"]
            .as_str()
            .unwrap()
            .starts_with("{app=~\".+\"}")
    );
    let out = call(
        &loki(&url, |c| c.service_labels = vec!["job".into()]),
        window(),
    )
    .await
    .unwrap();
    assert_eq!(out.body["logs"][0]["service"], "default/web");
    // Label names from config are checked before any query.
    let mut bad = LokiConfig {
        url: Some(url.clone()),
        ..LokiConfig::default()
    };
    bad.service_labels = vec!["service.name".into()];
    assert!(LokiLogs::new(&bad, Duration::from_secs(1)).is_err());
}

#[tokio::test]
async fn credentials_and_tenant_go_in_headers_and_never_into_messages() {
    let fake = Loki {
        token: Some("s3cret-token".into()),
        ..Loki::default()
    };
    fake.push(&[("service", "api")], T0 + S, "ok");
    let url = fake.clone().serve().await;
    let t = loki(&url, |c| {
        c.bearer_token = Some("s3cret-token".into());
        c.tenant = Some("team-a".into());
    });
    call(&t, window()).await.unwrap();
    let q = &fake.queries()[0];
    assert_eq!(q["header:authorization"], "Bearer s3cret-token");
    assert_eq!(q["header:x-scope-orgid"], "team-a");
    let wrong = loki(&url, |c| c.bearer_token = Some("wrong-token-xyz".into()));
    let err = call(&wrong, window()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Unauthorized);
    assert_eq!(
        err.to_string(),
        "HTTP 401: check the credentials (Loki /loki/api/v1/labels): no org id"
    );
    assert!(!format!("{err} {wrong:?} {}", wrong.backend()).contains("wrong-token-xyz"));
    assert!(!format!("{t:?}").contains("s3cret"));
}

#[tokio::test]
async fn every_failure_is_a_failed_call_with_its_reason() {
    let fake = Loki::default();
    fake.push(&[("service", "api")], T0 + S, "boom");
    let url = fake.clone().serve().await;
    let t = loki(&url, |_| {});
    for (status, body, class, says) in [
        (
            429,
            "too many outstanding requests",
            FailureClass::RateLimited,
            "HTTP 429: rate limited (Loki /loki/api/v1/labels): too many outstanding requests",
        ),
        (
            500,
            "rpc error: code = Unavailable",
            FailureClass::ServerError,
            "HTTP 500 (Loki /loki/api/v1/labels): rpc error: code = Unavailable",
        ),
        (
            403,
            "",
            FailureClass::Forbidden,
            "HTTP 403: the credentials may not read this (Loki /loki/api/v1/labels)",
        ),
    ] {
        *fake.fail_all.lock().unwrap() = Some((status, body.into()));
        let err = call(&t, window()).await.unwrap_err();
        assert_eq!((err.class(), err.to_string().as_str()), (class, says));
    }
    *fake.fail_all.lock().unwrap() = None;

    // A failed count keeps the lines and says the figures are partial.
    *fake.fail_count.lock().unwrap() = Some((503, "query-scheduler unavailable".into()));
    let out = call(&t, window()).await.unwrap();
    assert_eq!(out.body["total"], 1);
    let partial = out.partial.unwrap();
    assert!(
        partial.starts_with("the count of all matching lines could not be read (HTTP 503"),
        "{partial}"
    );
    *fake.fail_count.lock().unwrap() = None;

    // Refused, silent and garbage-speaking servers.
    let refused = loki(&format!("http://127.0.0.1:{}", free_port()), |_| {});
    let err = call(&refused, window()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Connection);
    assert!(
        err.to_string()
            .starts_with("connection refused to http://127.0.0.1:"),
        "{err}"
    );

    let silent = silent_http_server().await;
    let slow = LokiLogs::new(
        &LokiConfig {
            url: Some(silent),
            ..LokiConfig::default()
        },
        Duration::from_millis(300),
    )
    .unwrap();
    let err = call(&slow, window()).await.unwrap_err();
    assert_eq!(err, ToolError::Timeout(300));

    let garbage = axum::Router::new().fallback(|| async { "<html>proxy error</html>" });
    let server = serve_http(garbage).await;
    let err = call(&loki(&server, |_| {}), window()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::BadResponse);
    assert!(
        err.to_string()
            .contains("a body that is not JSON: <html>proxy error</html>"),
        "{err}"
    );
}

#[tokio::test]
async fn the_offline_model_finds_the_same_cause_from_loki_as_from_the_pack() {
    let fake = Loki::default();
    let text = std::fs::read_to_string(shop_pack_dir().join("logs.jsonl")).unwrap();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let ts = chrono::DateTime::parse_from_rfc3339(v["ts"].as_str().unwrap()).unwrap();
        fake.push(
            &[
                ("service", v["service"].as_str().unwrap()),
                ("level", &v["level"].as_str().unwrap().to_lowercase()),
            ],
            ts.timestamp_nanos_opt().unwrap(),
            v["message"].as_str().unwrap(),
        );
    }
    let url = fake.clone().serve().await;
    // The shop incident is in the past: a window wide enough to hold it.
    let t = loki(&url, |c| c.default_window_hours = 24 * 365 * 5);
    let question = "why is order-service timing out?";
    let (from_pack, _) = offline_shop_run(question, None).await;
    let (from_loki, _) = offline_shop_run(question, Some(Arc::new(t))).await;
    assert_same_cause(&from_pack, &from_loki, "loki");
    assert!(fake.queries().iter().any(|q| {
        q.get("query")
            .is_some_and(|s| s.contains("order\\\\-service"))
    }));
}

#[tokio::test]
async fn counts_per_bucket_are_the_exact_counts() {
    let fake = Loki::default();
    let since = T0 - 40 * 60 * S; // 22:00:00, the window's start
    let mut matching = Vec::new();
    // Uneven times, lines on bucket boundaries (the window is cut in
    // 59.5 s steps) and on the window's first instant included.
    for i in 0..700i64 {
        let ns = since + (i * i * 7919 % 7_000) * S + (i % 3) * 500_000_000;
        fake.push(
            &[("service_name", "checkout"), ("level", "error")],
            ns,
            &format!("pool wait {i}"),
        );
        matching.push(ns / 1000);
    }
    for k in [0i64, 1, 2, 119] {
        let ns = since + k * 59_500_000_000;
        fake.push(
            &[("service_name", "checkout"), ("level", "error")],
            ns,
            "pool boundary",
        );
        matching.push(ns / 1000);
    }
    // Not matching: another service, another level.
    fake.push(
        &[("service_name", "cart"), ("level", "error")],
        since + 10 * S,
        "x",
    );
    fake.push(
        &[("service_name", "checkout"), ("level", "info")],
        since + 10 * S,
        "y",
    );
    let url = fake.clone().serve().await;
    let t = loki(&url, |c| c.max_lines = 5000);
    let out = call(
        &t,
        with(window(), json!({"service": "checkout", "level": "ERROR"})),
    )
    .await
    .unwrap();
    assert_buckets_exact(&out, &matching);
    let steps: Vec<_> = fake
        .queries()
        .into_iter()
        .filter(|q| q.contains_key("step"))
        .collect();
    assert_eq!(steps.len(), 1, "one range query for the counts");
    assert_eq!(steps[0]["step"], "59500ms");
}

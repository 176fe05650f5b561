//! query_logs over Elasticsearch 8 and OpenSearch 2, against the fake in
//! `es_fake` (neither server can be installed here): the `_search` body
//! sent (time range, service, level and text filters, exact count, sort),
//! configurable index and fields, exact counts beyond the records read,
//! credentials, every failure as a failed invocation with its reason, the
//! partial answers (a count that is a lower bound, a search timed out on
//! the server, a failed shard), the configuration, and the offline model
//! diagnosing the shop incident from Elasticsearch with the findings it
//! makes from the pack.

use crate::es_fake::{Es, Flavor, error_body};
use crate::helpers::{
    assert_same_cause, free_port, offline_shop_run, serve_http, shop_pack_dir, silent_http_server,
};
use crate::logs_support::{assert_buckets_exact, call, window, with};
use diagraph::config::{Config, ConfigFlags, ElasticsearchConfig, LogsBackend};
use diagraph::tools::Tool;
use diagraph::tools::ToolError;
use diagraph::tools::elasticsearch::ElasticsearchLogs;
use diagraph::vocab::run::FailureClass;
use diagraph::vocab::tool::EvidenceStatus;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

fn es(url: &str, f: impl FnOnce(&mut ElasticsearchConfig)) -> ElasticsearchLogs {
    let mut c = ElasticsearchConfig {
        url: Some(url.into()),
        ..ElasticsearchConfig::default()
    };
    f(&mut c);
    ElasticsearchLogs::new(&c, Duration::from_secs(3)).unwrap()
}

/// 2026-07-08T22:40:00Z plus `s` seconds, as Elasticsearch stores it.
fn at(s: i64) -> String {
    let t = chrono::DateTime::parse_from_rfc3339("2026-07-08T22:40:00Z").unwrap()
        + chrono::Duration::seconds(s);
    t.to_utc()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// An ECS index as Elastic Agent / Filebeat write it: `service.name` and
/// `log.level` are keywords.
fn ecs() -> Es {
    Es {
        keyword_fields: vec!["service.name".into(), "log.level".into()],
        ..Es::default()
    }
}

#[tokio::test]
async fn records_counts_and_fields_from_elasticsearch() {
    let fake = ecs();
    for i in 0..1200 {
        fake.push(
            "logs-checkout-2026.07.08",
            json!({"@timestamp": at(i), "service": {"name": "checkout"}, "log": {"level": "error"},
                   "message": format!("upstream payment timed out after {}ms", 3000 + i),
                   "host": {"name": "node-7"}}),
        );
    }
    fake.push(
        "logs-checkout-2026.07.08",
        json!({"@timestamp": at(5), "service.name": "checkout", "log.level": "WARNING",
               "message": "retrying \"charge\" {x} OR *:*"}),
    );
    fake.push(
        "logs-cart-2026.07.08",
        json!({"@timestamp": at(7), "service": {"name": "cart"}, "message": "ERROR cart store unreachable"}),
    );
    // Outside the pattern and outside the window.
    fake.push(
        "audit",
        json!({"@timestamp": at(8), "service": {"name": "checkout"}, "message": "x"}),
    );
    fake.push(
        "logs-checkout-2026.07.07",
        json!({"@timestamp": at(-86400), "service": {"name": "checkout"}, "log": {"level": "error"}, "message": "old"}),
    );
    let url = fake.clone().serve().await;
    let t = es(&url, |_| {});
    assert_eq!(t.backend(), format!("elasticsearch:{url}"));

    let out = call(
        &t,
        with(
            window(),
            json!({"service": "Checkout", "level": "ERROR", "limit": 5}),
        ),
    )
    .await
    .unwrap();
    // Exact over every record, though only the newest 1000 were read.
    assert_eq!(out.body["total"], 1200);
    assert_eq!(out.body["first_ts"], "2026-07-08T22:40:00Z");
    assert_eq!(out.body["last_ts"], "2026-07-08T22:59:59Z");
    assert_eq!(out.body["counts_complete"], false);
    assert_eq!(out.body["source"], "elasticsearch");
    assert_eq!(out.body["index"], "logs-*");
    assert_eq!(out.body["records_read"], 1000);
    assert!(out.partial.is_none());
    let logs = out.body["logs"].as_array().unwrap();
    assert_eq!(logs.len(), 5);
    assert_eq!(logs[4]["service"], "checkout");
    assert_eq!(logs[4]["level"], "ERROR");
    assert_eq!(logs[4]["host.name"], "node-7");
    assert_eq!(logs[4]["_index"], "logs-checkout-2026.07.08");
    assert_eq!(
        out.evidence_refs[4].text,
        "2026-07-08T22:59:59Z ERROR checkout upstream payment timed out after 4199ms"
    );
    assert_eq!(out.evidence_refs[4].raw_path, "$.logs[4]");

    // The request sent.
    let req = fake.requests().pop().unwrap();
    assert_eq!(req.index, "logs-*");
    assert_eq!(req.authorization, None);
    let b = &req.body;
    assert_eq!(b["size"], 1000);
    assert_eq!(b["track_total_hits"], true);
    assert_eq!(b["sort"][0]["@timestamp"]["order"], "desc");
    let f = b["query"]["bool"]["filter"].as_array().unwrap();
    assert_eq!(
        f[0]["range"]["@timestamp"],
        json!({"gte": "2026-07-08T22:00:00.000Z", "lte": "2026-07-08T23:59:00.000Z", "format": "strict_date_optional_time"})
    );
    assert_eq!(
        f[1]["bool"]["should"][0]["term"]["service.name"],
        json!({"value": "Checkout", "case_insensitive": true})
    );
    let spellings: Vec<&str> = f[2]["bool"]["should"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["term"]["log.level"]["value"].as_str())
        .collect();
    assert_eq!(spellings, ["error", "err", "eror"]);

    // Text with quotes and query syntax is a phrase, matched in any case;
    // a WARNING level reads as WARN.
    let out = call(
        &t,
        with(window(), json!({"keyword": "\"CHARGE\" {x} or *:*"})),
    )
    .await
    .unwrap();
    assert_eq!(out.body["total"], 1);
    assert_eq!(out.body["logs"][0]["level"], "WARNING");
    assert_eq!(out.body["counts_complete"], true);
    let out = call(&t, with(window(), json!({"level": "warn"})))
        .await
        .unwrap();
    assert_eq!(out.body["total"], 1);
    // No level field: the level is read from the message.
    let out = call(&t, with(window(), json!({"service": "cart"})))
        .await
        .unwrap();
    assert_eq!(out.body["logs"][0]["level"], "ERROR");

    let none = call(&t, with(window(), json!({"service": "nobody"})))
        .await
        .unwrap();
    assert_eq!(none.evidence_status, EvidenceStatus::NoEvidence);
    assert!(
        none.evidence_refs[0]
            .text
            .contains("Elasticsearch index logs-* has no record matching this query between 2026-07-08T22:00:00Z and 2026-07-08T23:59:00Z"),
        "{}",
        none.evidence_refs[0].text
    );
}

#[tokio::test]
async fn opensearch_with_dynamic_mapping_and_configured_fields() {
    // Dynamic mapping: strings are text with a .keyword sub-field, so a
    // service is matched on `service.keyword`, and the names are custom.
    let fake = Es {
        flavor: Flavor::OpenSearch2,
        ..Es::default()
    };
    fake.push(
        "app-logs",
        json!({"ts": "2026-07-08T22:41:00Z", "app": "order-service", "severity": "WARN", "msg": "pool exhausted, waited 30s"}),
    );
    fake.push(
        "app-logs",
        json!({"ts": "2026-07-08T22:42:00Z", "app": "order-service-canary", "severity": "WARN", "msg": "pool exhausted"}),
    );
    let url = fake.clone().serve().await;
    let t = es(&url, |c| {
        c.index = "app-logs".into();
        c.timestamp_field = "ts".into();
        c.service_fields = vec!["app.keyword".into()];
        c.level_fields = vec!["severity".into()];
        c.message_field = "msg".into();
    });
    let out = call(
        &t,
        with(
            window(),
            json!({"service": "order-service", "keyword": "Pool Exhausted", "level": "warning"}),
        ),
    )
    .await
    .unwrap();
    assert_eq!(out.body["total"], 1);
    assert_eq!(
        out.evidence_refs[0].text,
        "2026-07-08T22:41:00Z WARN order-service pool exhausted, waited 30s"
    );
    // Named as the text field, the service is found through its
    // `.keyword` sub-field (the words of the text field alone would
    // never equal "order-service": the fake is that strict).
    let text_field = es(&url, |c| {
        c.index = "app-logs".into();
        c.timestamp_field = "ts".into();
        c.service_fields = vec!["app".into()];
        c.message_field = "msg".into();
    });
    let out = call(
        &text_field,
        with(window(), json!({"service": "order-service"})),
    )
    .await
    .unwrap();
    assert_eq!(out.body["total"], 1);
    assert_eq!(out.body["logs"][0]["service"], "order-service");
    let sent = &fake.requests().pop().unwrap().body["query"]["bool"]["filter"][1]["bool"]["should"];
    assert_eq!(sent[0]["term"]["app"]["value"], "order-service");
    assert_eq!(sent[1]["term"]["app.keyword"]["value"], "order-service");

    // Bad settings are refused before any request.
    for bad in [
        |c: &mut ElasticsearchConfig| c.index = "logs/../_all".into(),
        |c: &mut ElasticsearchConfig| c.index = "logs-*?q=x".into(),
        |c: &mut ElasticsearchConfig| c.index = "_all".into(),
        |c: &mut ElasticsearchConfig| c.index = " ".into(),
        |c: &mut ElasticsearchConfig| c.service_fields = vec![],
        |c: &mut ElasticsearchConfig| c.message_field = "".into(),
        |c: &mut ElasticsearchConfig| c.url = Some("es:9200".into()),
    ] {
        let mut c = ElasticsearchConfig {
            url: Some(url.clone()),
            ..ElasticsearchConfig::default()
        };
        bad(&mut c);
        assert!(ElasticsearchLogs::new(&c, Duration::from_secs(1)).is_err());
    }
}

#[tokio::test]
async fn credentials_go_in_headers_and_never_into_messages() {
    for flavor in [Flavor::Elasticsearch8, Flavor::OpenSearch2] {
        let fake = Es {
            flavor,
            authorization: Some("ApiKey a2V5LWlkOnMzY3JldA==".into()),
            ..ecs()
        };
        fake.push(
            "logs-a",
            json!({"@timestamp": at(1), "service": {"name": "api"}, "message": "ok"}),
        );
        let url = fake.clone().serve().await;
        let good = es(&url, |c| c.api_key = Some("a2V5LWlkOnMzY3JldA==".into()));
        call(&good, window()).await.unwrap();
        let wrong = es(&url, |c| {
            c.username = Some("elastic".into());
            c.password = Some("pw-wrong-123".into());
        });
        let err = call(&wrong, window()).await.unwrap_err();
        let sent = fake.requests().pop().unwrap().authorization.unwrap();
        assert!(sent.starts_with("Basic "), "{sent}");
        assert_eq!(err.class(), FailureClass::Unauthorized);
        let expected = match flavor {
            Flavor::Elasticsearch8 => {
                "HTTP 401: check the credentials (Elasticsearch /logs-*/_search): security_exception: unable to authenticate user for REST request [/logs-*/_search]"
            }
            Flavor::OpenSearch2 => {
                "HTTP 401: check the credentials (Elasticsearch /logs-*/_search): Unauthorized"
            }
        };
        assert_eq!(err.to_string(), expected);
        let shown = format!("{err} {wrong:?} {good:?} {}", good.backend());
        assert!(
            !shown.contains("pw-wrong-123") && !shown.contains("a2V5LWlkOnMzY3JldA"),
            "{shown}"
        );
    }
}

#[tokio::test]
async fn every_failure_is_a_failed_call_with_its_reason() {
    let fake = ecs();
    fake.push(
        "logs-a",
        json!({"@timestamp": at(1), "service": {"name": "api"}, "message": "boom"}),
    );
    let url = fake.clone().serve().await;

    // A concrete index that does not exist: Elasticsearch's own reason.
    let err = call(&es(&url, |c| c.index = "logs-b".into()), window())
        .await
        .unwrap_err();
    assert_eq!(err.class(), FailureClass::BadResponse);
    assert_eq!(
        err.to_string(),
        "HTTP 404 (Elasticsearch /logs-b/_search): index_not_found_exception: no such index [logs-b]"
    );
    // A pattern that matches nothing is nothing found, not a failure.
    let out = call(&es(&url, |c| c.index = "nothing-*".into()), window())
        .await
        .unwrap();
    assert_eq!(out.evidence_status, EvidenceStatus::NoEvidence);

    let t = es(&url, |_| {});
    for (status, body, class, says) in [
        (
            429,
            error_body(
                429,
                "circuit_breaking_exception",
                "[parent] Data too large",
                None,
            ),
            FailureClass::RateLimited,
            "HTTP 429: rate limited (Elasticsearch /logs-*/_search): circuit_breaking_exception: [parent] Data too large",
        ),
        (
            503,
            error_body(
                503,
                "search_phase_execution_exception",
                "all shards failed",
                Some(("no_shard_available_action_exception", "No shard available")),
            ),
            FailureClass::ServerError,
            "HTTP 503 (Elasticsearch /logs-*/_search): search_phase_execution_exception: all shards failed (No shard available)",
        ),
    ] {
        *fake.fail_all.lock().unwrap() = Some((status, body));
        let err = call(&t, window()).await.unwrap_err();
        assert_eq!((err.class(), err.to_string().as_str()), (class, says));
    }
    *fake.fail_all.lock().unwrap() = None;

    // Refused, silent and garbage-speaking servers; a JSON answer that is
    // not a search response; hits without _source.
    let refused = es(&format!("http://127.0.0.1:{}", free_port()), |_| {});
    let err = call(&refused, window()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Connection);
    assert!(
        err.to_string()
            .starts_with("connection refused to http://127.0.0.1:"),
        "{err}"
    );

    let silent = silent_http_server().await;
    let slow = ElasticsearchLogs::new(
        &ElasticsearchConfig {
            url: Some(silent),
            ..ElasticsearchConfig::default()
        },
        Duration::from_millis(300),
    )
    .unwrap();
    assert_eq!(
        call(&slow, window()).await.unwrap_err(),
        ToolError::Timeout(300)
    );

    for (answer, says) in [
        (
            "<html>proxy error</html>",
            "a body that is not JSON: <html>proxy error</html>",
        ),
        (
            r#"{"acknowledged": true}"#,
            "answered without hits: not a search response",
        ),
        (
            r#"{"hits": {"total": {"value": 1, "relation": "eq"}, "hits": [{"_id": "1"}]}}"#,
            "a hit without _source",
        ),
        (
            r#"{"hits": {"total": {"value": 1, "relation": "eq"}, "hits": [{"_source": {"message": "x"}}]}}"#,
            "a hit without a readable @timestamp",
        ),
        (
            r#"{"hits": {"total": {"value": "many"}, "hits": []}}"#,
            "a hits.total without a count",
        ),
        (
            r#"{"hits": {"total": {"value": 3, "relation": "eq"}, "hits": []}}"#,
            "counted 3 matching records but returned none",
        ),
    ] {
        let app = axum::Router::new().fallback(move || async move { answer });
        let server = serve_http(app).await;
        let err = call(&es(&server, |_| {}), window()).await.unwrap_err();
        assert_eq!(err.class(), FailureClass::BadResponse, "{err}");
        assert!(err.to_string().contains(says), "{err}");
    }
}

#[tokio::test]
async fn a_count_or_search_the_server_cut_short_is_partial_and_says_so() {
    let fake = ecs();
    for i in 0..30 {
        fake.push(
            "logs-a",
            json!({"@timestamp": at(i), "service": {"name": "api"}, "log": {"level": "error"}, "message": "boom"}),
        );
    }
    let url = fake.clone().serve().await;
    let t = es(&url, |c| c.max_lines = 10);

    // The server stops counting at 20: the total is a lower bound.
    *fake.count_cap.lock().unwrap() = Some(20);
    let out = call(&t, window()).await.unwrap();
    assert_eq!(out.body["total"], 20);
    assert_eq!(out.body["counts_complete"], false);
    assert_eq!(
        out.partial.as_deref(),
        Some(
            "Elasticsearch counted at least 20 matching records and stopped counting; the total is a lower bound"
        )
    );
    *fake.count_cap.lock().unwrap() = None;

    *fake.failed_shard.lock().unwrap() = Some("node n2 left the cluster".into());
    *fake.timed_out.lock().unwrap() = true;
    let out = call(&t, window()).await.unwrap();
    assert_eq!(out.body["total"], 30);
    assert_eq!(
        out.partial.as_deref(),
        Some(
            "the search timed out on the server after 2.7 s; 1 of 2 shards failed: node n2 left the cluster"
        )
    );
    // A server (or proxy) that gives no total at all: the figures are of
    // the records read, and the call says so.
    let app = axum::Router::new().fallback(|| async {
        axum::Json(json!({"timed_out": false, "hits": {"hits": [
            {"_index": "logs-a", "_source": {"@timestamp": "2026-07-08T22:40:01Z", "message": "ERROR boom"}}]}}))
    });
    let server = serve_http(app).await;
    let out = call(&es(&server, |_| {}), window()).await.unwrap();
    assert_eq!(out.body["total"], 1);
    assert_eq!(out.body["logs"][0]["level"], "ERROR");
    assert_eq!(
        out.partial.as_deref(),
        Some(
            "Elasticsearch gave no count of all matching records; figures are of the 1 records read"
        )
    );

    // Cut short and nothing found: a failure, never "no evidence".
    let err = call(&t, with(window(), json!({"service": "nobody"})))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("timed out on the server"), "{err}");
}

#[test]
fn elasticsearch_is_chosen_by_its_url_and_its_credentials_are_never_shown() {
    let env_of = |pairs: &'static [(&str, &str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    };
    let env = env_of(&[
        ("DIAGRAPH_ELASTICSEARCH_URL", "https://es.internal:9200"),
        ("DIAGRAPH_ELASTICSEARCH_INDEX", "filebeat-*"),
    ]);
    let c = Config::load_with(&ConfigFlags::default(), &env, None).unwrap();
    assert_eq!(c.logs.backend, LogsBackend::Elasticsearch);
    assert_eq!(c.logs.elasticsearch.index, "filebeat-*");
    assert_eq!(
        c.logs.elasticsearch.service_fields,
        ["service.name", "service"]
    );
    assert_eq!(c.logs.elasticsearch.level_fields, ["log.level", "level"]);
    let both = env_of(&[
        ("DIAGRAPH_ELASTICSEARCH_URL", "https://es.internal:9200"),
        ("DIAGRAPH_LOKI_URL", "http://loki:3100"),
    ]);
    let err = Config::load_with(&ConfigFlags::default(), &both, None).unwrap_err();
    assert!(
        err.to_string()
            .contains("DIAGRAPH_LOKI_URL is set too; query_logs has one backend"),
        "{err}"
    );
    let bad_index = env_of(&[
        ("DIAGRAPH_ELASTICSEARCH_URL", "https://es.internal:9200"),
        ("DIAGRAPH_ELASTICSEARCH_INDEX", "logs/_delete"),
    ]);
    let err = Config::load_with(&ConfigFlags::default(), &bad_index, None).unwrap_err();
    assert!(
        err.to_string().contains("logs.elasticsearch.index"),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        "[logs]\nbackend = \"opensearch\"\n[logs.elasticsearch]\nurl = \"https://ops:pw-in-url@os.internal\"\napi_key = \"key-very-secret\"\nusername = \"ops\"\npassword = \"pw-very-secret\"\nmessage_field = \"msg\"\n",
    )
    .unwrap();
    let none = env_of(&[]);
    let c = Config::load_with(&ConfigFlags::default(), &none, Some(&path)).unwrap();
    assert_eq!(c.logs.backend, LogsBackend::Elasticsearch);
    let shown = c.render_masked_with(&none);
    for secret in ["key-very-secret", "pw-very-secret", "pw-in-url"] {
        assert!(!shown.contains(secret), "{shown}");
        assert!(!format!("{c:?}").contains(secret));
    }
    let json = serde_json::to_string(&c).unwrap();
    assert!(!json.contains("key-very-secret") && !json.contains("pw-very-secret"));
    let t: toml::Table = toml::from_str(&shown).unwrap();
    let e = &t["logs"]["elasticsearch"];
    assert_eq!(e["api_key"].as_str(), Some("***"));
    assert_eq!(e["message_field"].as_str(), Some("msg"));
    assert_eq!(e["index"].as_str(), Some("logs-*"));
    std::fs::write(
        &path,
        "[logs]\nbackend = \"elasticsearch\"\n[logs.elasticsearch]\nurl = \"es:9200\"\n",
    )
    .unwrap();
    let err = Config::load_with(&ConfigFlags::default(), &none, Some(&path)).unwrap_err();
    assert!(err.to_string().contains("logs.elasticsearch.url"), "{err}");
}

#[tokio::test]
async fn the_offline_model_finds_the_same_cause_from_elasticsearch_as_from_the_pack() {
    let fake = ecs();
    let text = std::fs::read_to_string(shop_pack_dir().join("logs.jsonl")).unwrap();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let mut doc = json!({
            "@timestamp": v["ts"],
            "service": {"name": v["service"]},
            "log": {"level": v["level"].as_str().unwrap().to_lowercase()},
            "message": v["message"],
        });
        for (k, x) in v.as_object().unwrap() {
            if !["ts", "service", "level", "message"].contains(&k.as_str()) {
                doc[k] = x.clone();
            }
        }
        fake.push("logs-shop", doc);
    }
    let url = fake.clone().serve().await;
    // The shop incident is in the past: a window wide enough to hold it.
    let t = es(&url, |c| c.default_window_hours = 24 * 365 * 5);
    let question = "why is order-service timing out?";
    let (from_pack, _) = offline_shop_run(question, None).await;
    let (from_es, _) = offline_shop_run(question, Some(Arc::new(t))).await;
    assert_same_cause(&from_pack, &from_es, "elasticsearch");
    assert!(
        fake.requests()
            .iter()
            .any(|r| { r.body.to_string().contains("\"value\":\"order-service\"") })
    );
}

#[tokio::test]
async fn counts_per_bucket_are_the_exact_counts() {
    let fake = ecs();
    let base = chrono::DateTime::parse_from_rfc3339("2026-07-08T22:40:00Z")
        .unwrap()
        .timestamp_micros();
    let mut matching = Vec::new();
    // Uneven times between 22:00 and 23:59 (the window), on bucket edges too.
    for i in 0..900i64 {
        let s = (i * i * 7919) % 7_140 - 2_400;
        fake.push(
            "logs-checkout-2026.07.08",
            json!({"@timestamp": at(s), "service": {"name": "checkout"}, "log": {"level": "error"},
                   "message": format!("pool wait {i}")}),
        );
        matching.push(base + s * 1_000_000);
    }
    // Not matching: another level; outside the window.
    fake.push(
        "logs-checkout-2026.07.08",
        json!({"@timestamp": at(30), "service": {"name": "checkout"}, "log": {"level": "info"}, "message": "x"}),
    );
    fake.push(
        "logs-checkout-2026.07.08",
        json!({"@timestamp": at(5000), "service": {"name": "checkout"}, "log": {"level": "error"}, "message": "late"}),
    );
    let url = fake.clone().serve().await;
    let t = es(&url, |c| c.max_lines = 10);
    let out = call(
        &t,
        with(window(), json!({"service": "checkout", "level": "ERROR"})),
    )
    .await
    .unwrap();
    assert_buckets_exact(&out, &matching);
}

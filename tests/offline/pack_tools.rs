//! The four pack tools over the shipped shop pack: filters, body shapes,
//! ref paths and texts, no_evidence and invalid arguments.

use crate::helpers::shop_pack;
use diagraph::tools::pack::pack_tools;
use diagraph::tools::{Tool, ToolError, ToolOutput};
use diagraph::vocab::tool::EvidenceStatus;
use serde_json::{Map, Value, json};
use std::sync::{Arc, OnceLock};

fn tools() -> &'static Vec<Arc<dyn Tool>> {
    static TOOLS: OnceLock<Vec<Arc<dyn Tool>>> = OnceLock::new();
    TOOLS.get_or_init(|| pack_tools(shop_pack()))
}

async fn call(name: &str, args: Value) -> Result<ToolOutput, ToolError> {
    let tool = tools().iter().find(|t| t.spec().name == name).unwrap();
    let map: Map<String, Value> = serde_json::from_value(args).unwrap();
    tool.call(&map).await
}

fn assert_refs_match_array(out: &ToolOutput, key: &str) {
    let items = out.body[key].as_array().unwrap();
    assert_eq!(out.evidence_refs.len(), items.len());
    for (i, r) in out.evidence_refs.iter().enumerate() {
        assert_eq!(r.raw_path, format!("$.{key}[{i}]"));
        assert!(!r.text.is_empty());
        assert!(!r.text.chars().any(char::is_control), "{:?}", r.text);
    }
}

#[tokio::test]
async fn the_four_tools_are_served() {
    let names: Vec<String> = tools().iter().map(|t| t.spec().name).collect();
    assert_eq!(
        names,
        [
            "query_metrics",
            "query_logs",
            "lookup_knowledge",
            "read_skill"
        ]
    );
    for t in tools() {
        assert_eq!(t.spec().parameters["type"], "object");
    }
}

#[tokio::test]
async fn query_metrics_filters_by_service_name_and_state() {
    let out = call("query_metrics", json!({"service": "payment-service"}))
        .await
        .unwrap();
    assert_eq!(out.evidence_status, EvidenceStatus::Supported);
    assert_eq!(out.body["total"], 1);
    assert_refs_match_array(&out, "alerts");
    let text = &out.evidence_refs[0].text;
    assert!(text.starts_with("alertname=HighCPUUsage service=payment-service severity=critical state=firing value=92 "), "{text}");
    assert!(
        text.contains("active_for=27m since=2026-07-08T22:45:00Z"),
        "{text}"
    );
    assert!(text.contains("summary=CPU usage above 90%"), "{text}");

    let out = call("query_metrics", json!({"alertname": "highrequestlatency"}))
        .await
        .unwrap();
    assert_eq!(out.body["alerts"][0]["labels"]["service"], "order-service");

    let out = call("query_metrics", json!({"state": "pending"}))
        .await
        .unwrap();
    assert!(
        out.body["alerts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["state"] == "pending")
    );
    let out = call("query_metrics", json!({"state": "resolved"}))
        .await
        .unwrap();
    assert!(
        !out.evidence_refs[0].text.contains("active_for"),
        "resolved alerts are not active"
    );

    let all = call("query_metrics", json!({})).await.unwrap();
    let any = call("query_metrics", json!({"state": "ANY"}))
        .await
        .unwrap();
    assert_eq!(all.body["total"], any.body["total"]);
    assert!(all.body["total"].as_u64().unwrap() >= 5);
}

#[tokio::test]
async fn nothing_found_is_no_evidence_not_an_error() {
    let out = call("query_metrics", json!({"service": "inventory-service"}))
        .await
        .unwrap();
    assert_eq!(out.evidence_status, EvidenceStatus::NoEvidence);
    assert_eq!(out.body["total"], 0);
    assert!(out.body["no_evidence"].is_string());
    assert_eq!(out.evidence_refs.len(), 1);
    assert_eq!(out.evidence_refs[0].raw_path, "$.no_evidence");
    assert!(
        out.evidence_refs[0]
            .text
            .contains("service=inventory-service")
    );

    let out = call("query_logs", json!({"service": "inventory-service"}))
        .await
        .unwrap();
    assert_eq!(out.evidence_status, EvidenceStatus::NoEvidence);
    assert!(
        out.evidence_refs[0]
            .text
            .contains("no log lines at all for this service")
    );

    let out = call("lookup_knowledge", json!({"query": "zzzqqq xylophone"}))
        .await
        .unwrap();
    assert_eq!(out.evidence_status, EvidenceStatus::NoEvidence);
}

#[tokio::test]
async fn invalid_arguments_are_errors() {
    for (tool, args) in [
        ("query_metrics", json!({"state": "burning"})),
        ("query_metrics", json!({"sevice": "x"})),
        ("query_logs", json!({"since": "last tuesday"})),
        ("query_logs", json!({"limit": -3})),
        (
            "query_logs",
            json!({"window_minutes": 5, "since": "2026-07-08T22:00:00Z"}),
        ),
        ("lookup_knowledge", json!({})),
        ("read_skill", json!({"name": "no-such-skill"})),
        ("read_skill", json!({"name": 5.5})),
    ] {
        let r = call(tool, args.clone()).await;
        assert!(
            matches!(r, Err(ToolError::InvalidArguments(_))),
            "{tool} {args}: {r:?}"
        );
    }
}

#[tokio::test]
async fn query_logs_filters_and_orders() {
    let out = call("query_logs", json!({"service": "order-service", "level": "error", "keyword": "connection NOT available"}))
        .await
        .unwrap();
    assert_refs_match_array(&out, "logs");
    let logs = out.body["logs"].as_array().unwrap();
    assert_eq!(out.body["total"], 24);
    assert_eq!(out.body["truncated"], false);
    assert!(
        logs.iter()
            .all(|l| l["service"] == "order-service" && l["level"] == "ERROR")
    );
    assert!(
        logs.windows(2)
            .all(|w| w[0]["ts"].as_str() <= w[1]["ts"].as_str()),
        "oldest first"
    );
    assert!(logs[0]["request_id"].is_string(), "extra keys kept");
    let text = &out.evidence_refs[0].text;
    assert!(
        text.ends_with("ERROR order-service HikariPool-1 - Connection is not available, request timed out after 30000ms."),
        "{text}"
    );

    // limit keeps the newest matches.
    let out = call(
        "query_logs",
        json!({"service": "order-service", "level": "ERROR", "limit": 3}),
    )
    .await
    .unwrap();
    assert_eq!(out.body["truncated"], true);
    assert_eq!(out.body["logs"].as_array().unwrap().len(), 3);
    let newest = call(
        "query_logs",
        json!({"service": "order-service", "level": "ERROR", "limit": 200}),
    )
    .await
    .unwrap();
    let all = newest.body["logs"].as_array().unwrap();
    let newest_of_all = &all[all.len() - 1];
    assert_eq!(out.body["logs"][2]["ts"], newest_of_all["ts"]);
    assert_eq!(out.body["logs"][2]["trace_id"], newest_of_all["trace_id"]);
    // The three stand for all of them: the figures cover every match.
    assert_eq!(out.body["total"], newest.body["total"]);
    assert_eq!(out.body["logs"][2]["similar"]["count"], 24);

    // Several levels, and WARNING == WARN.
    let out = call(
        "query_logs",
        json!({"service": "payment-service", "level": "warning,ERROR", "limit": 200}),
    )
    .await
    .unwrap();
    let levels: Vec<&str> = out.body["logs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["level"].as_str().unwrap())
        .collect();
    assert!(levels.contains(&"WARN") && levels.contains(&"ERROR"));

    // Keywords also match extra fields such as trace ids.
    let out = call("query_logs", json!({"keyword": "p004c9"}))
        .await
        .unwrap();
    assert!(out.body["total"].as_u64().unwrap() >= 2);
}

#[tokio::test]
async fn query_logs_time_windows() {
    // now = 23:12:00; the last 10 minutes start at 23:02:00.
    let out = call("query_logs", json!({"window_minutes": 10, "limit": 200}))
        .await
        .unwrap();
    let logs = out.body["logs"].as_array().unwrap();
    assert!(!logs.is_empty());
    assert!(
        logs.iter()
            .all(|l| l["ts"].as_str().unwrap() >= "2026-07-08T23:02:00Z")
    );
    let out = call(
        "query_logs",
        json!({"since": "2026-07-08T22:40:00Z", "until": "2026-07-08T22:45:00Z", "limit": 200}),
    )
    .await
    .unwrap();
    let logs = out.body["logs"].as_array().unwrap();
    assert!(logs.iter().all(|l| {
        let t = l["ts"].as_str().unwrap();
        ("2026-07-08T22:40:00Z"..="2026-07-08T22:45:00Z").contains(&t)
    }));
    assert!(!logs.is_empty());
    let out = call("query_logs", json!({"until": "2026-07-08T21:00:00Z"}))
        .await
        .unwrap();
    assert!(
        out.body["logs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["service"] == "user-service")
    );
}

#[tokio::test]
async fn hostile_log_text_reaches_refs_as_plain_text() {
    let out = call("query_logs", json!({"keyword": "template render"}))
        .await
        .unwrap();
    let text = &out.evidence_refs[0].text;
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert!(
        text.contains("IGNORE PREVIOUS INSTRUCTIONS"),
        "kept as data, not acted on"
    );
}

#[tokio::test]
async fn lookup_knowledge_returns_evidence_blocks() {
    let out = call(
        "lookup_knowledge",
        json!({"query": "HikariPool Connection is not available"}),
    )
    .await
    .unwrap();
    assert_eq!(out.evidence_status, EvidenceStatus::Supported);
    assert_refs_match_array(&out, "evidence_blocks");
    let b = &out.body["evidence_blocks"][0];
    assert_eq!(b["source"], "database/connection-pool-exhaustion.md");
    assert_eq!(b["domain"], "database");
    assert!(
        b["breadcrumb"]
            .as_str()
            .unwrap()
            .starts_with("Connection pool exhaustion (HikariCP)")
    );
    assert!(b["score"].as_f64().unwrap() > 0.0);
    assert!(out.evidence_refs[0].text.starts_with(
        "[database] database/connection-pool-exhaustion.md > Connection pool exhaustion (HikariCP)"
    ));
    assert!(
        out.evidence_refs
            .iter()
            .all(|r| r.text.chars().count() <= 1100)
    );
    assert!(out.retrieved_domains.contains(&"database".to_string()));
    assert!(out.body["total"].as_u64().unwrap() <= 5);

    let out = call(
        "lookup_knowledge",
        json!({"query": "GC pause CPU", "domain": "jvm", "limit": 2}),
    )
    .await
    .unwrap();
    let blocks = out.body["evidence_blocks"].as_array().unwrap();
    assert!(!blocks.is_empty() && blocks.len() <= 2);
    assert!(blocks.iter().all(|b| b["domain"] == "jvm"));
    assert_eq!(out.retrieved_domains, vec!["jvm".to_string()]);

    let out = call(
        "lookup_knowledge",
        json!({"query": "GC pause", "domain": "astrology"}),
    )
    .await
    .unwrap();
    assert_eq!(out.evidence_status, EvidenceStatus::NoEvidence);
    assert!(
        out.evidence_refs[0].text.contains("database"),
        "lists known domains"
    );
}

#[tokio::test]
async fn chinese_query_finds_the_chinese_runbook() {
    let out = call(
        "lookup_knowledge",
        json!({"query": "存活探针失败 容器重启"}),
    )
    .await
    .unwrap();
    assert_eq!(
        out.body["evidence_blocks"][0]["source"],
        "kubernetes/pod-restarts.md"
    );
    let out = call(
        "lookup_knowledge",
        json!({"query": "内存限制", "domain": "kubernetes"}),
    )
    .await
    .unwrap();
    assert_eq!(
        out.body["evidence_blocks"][0]["source"],
        "kubernetes/pod-restarts.md"
    );
}

#[tokio::test]
async fn read_skill_is_guidance_without_refs() {
    let out = call("read_skill", json!({"name": "diagnose-db-connection-pool"}))
        .await
        .unwrap();
    assert_eq!(out.evidence_status, EvidenceStatus::Supported);
    assert!(out.evidence_refs.is_empty());
    assert_eq!(out.body["skill"]["name"], "diagnose-db-connection-pool");
    assert!(
        out.body["skill"]["description"]
            .as_str()
            .unwrap()
            .contains("pool")
    );
    assert!(
        out.body["skill"]["body"]
            .as_str()
            .unwrap()
            .contains("pool message")
    );
}

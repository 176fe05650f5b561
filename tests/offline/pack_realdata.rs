//! A pack assembled from real public material (/work/shared/realdata):
//! prometheus-operator runbooks as knowledge, a recorded Prometheus
//! /api/v1/alerts response, and Zookeeper log lines from loghub converted
//! to logs.jsonl. It must load without warnings and answer queries.
//! Skipped (with a note) where that material is not present.

use crate::realdata::realdata;
use diagraph::tools::Tool;
use diagraph::tools::pack::{Pack, pack_tools};
use diagraph::vocab::tool::EvidenceStatus;
use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::Arc;

fn copy_tree(from: &Path, to: &Path) -> usize {
    let mut n = 0;
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            n += copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
            n += 1;
        }
    }
    n
}

/// `2015-07-29 17:41:44,747 - WARN  [thread:Class@123] - message`
fn zookeeper_to_jsonl(log: &str) -> (String, usize) {
    let mut out = String::new();
    let mut n = 0;
    for line in log.lines() {
        let Some((ts, rest)) = line.split_once(" - ") else {
            continue;
        };
        let Some((level, rest)) = rest.trim_start().split_once(' ') else {
            continue;
        };
        let (thread, message) = match rest.trim_start().split_once("] - ") {
            Some((t, m)) => (t.trim_start_matches('['), m),
            None => ("", rest),
        };
        let ts = format!("{}Z", ts.replace(' ', "T").replace(',', "."));
        let obj = json!({"ts": ts, "service": "zookeeper", "level": level, "message": message, "thread": thread});
        out.push_str(&obj.to_string());
        out.push('\n');
        n += 1;
    }
    (out, n)
}

async fn call(tools: &[Arc<dyn Tool>], name: &str, args: Value) -> diagraph::tools::ToolOutput {
    let t = tools.iter().find(|t| t.spec().name == name).unwrap();
    let map: Map<String, Value> = serde_json::from_value(args).unwrap();
    t.call(&map).await.unwrap()
}

#[tokio::test]
async fn pack_from_real_runbooks_alerts_and_logs() {
    let Some(real) = realdata() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("pack.toml"),
        "name = \"real\"\nservices = [\"zookeeper\"]\n",
    )
    .unwrap();
    let docs = copy_tree(
        &real.join("runbooks/content/runbooks"),
        &d.join("knowledge"),
    );
    assert!(docs >= 40);
    std::fs::copy(
        real.join("promtest/api_v1_alerts.json"),
        d.join("alerts.json"),
    )
    .unwrap();
    let zk = std::fs::read_to_string(real.join("loghub/Zookeeper/Zookeeper_2k.log")).unwrap();
    let (jsonl, lines) = zookeeper_to_jsonl(&zk);
    std::fs::write(d.join("logs.jsonl"), jsonl).unwrap();

    let pack = Arc::new(Pack::load(d).unwrap());
    // Hugo front matter (title, weight) is fine; only a missing skills/ dir is reported.
    let unexpected: Vec<_> = pack
        .warnings
        .iter()
        .filter(|w| w.file != "skills/")
        .collect();
    assert!(unexpected.is_empty(), "{unexpected:?}");
    assert_eq!(pack.logs.len(), lines);
    assert!(!pack.alerts.is_empty());
    assert!(pack.documents.len() >= 40);
    let domains: Vec<&str> = pack.domains.iter().map(|d| d.domain.as_str()).collect();
    for want in ["etcd", "kubernetes", "node", "prometheus"] {
        assert!(domains.contains(&want), "{domains:?}");
    }
    // The newest timestamp in the pack is the reference time when pack.toml has none.
    let newest = pack
        .logs
        .read_all()
        .unwrap()
        .iter()
        .map(|l| l.ts)
        .chain(pack.alerts.iter().filter_map(|a| a.active_at))
        .max();
    assert_eq!(Some(pack.now()), newest);

    let tools = pack_tools(Arc::clone(&pack));
    let out = call(
        &tools,
        "lookup_knowledge",
        json!({"query": "RAID array degraded disk failure"}),
    )
    .await;
    assert_eq!(
        out.body["evidence_blocks"][0]["source"],
        "node/NodeRAIDDegraded.md"
    );
    let out = call(
        &tools,
        "lookup_knowledge",
        json!({"query": "filesystem space", "domain": "node"}),
    )
    .await;
    assert!(
        out.body["evidence_blocks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["domain"] == "node")
    );
    assert!(
        out.body["evidence_blocks"][0]["source"]
            .as_str()
            .unwrap()
            .contains("Filesystem")
    );

    let out = call(
        &tools,
        "query_logs",
        json!({"level": "warn", "keyword": "connection broken", "limit": 10}),
    )
    .await;
    assert_eq!(out.evidence_status, EvidenceStatus::Supported);
    assert!(out.body["total"].as_u64().unwrap() > 10);
    assert_eq!(out.body["truncated"], true);

    let out = call(
        &tools,
        "query_metrics",
        json!({"alertname": "alwaysfiring"}),
    )
    .await;
    assert_eq!(out.evidence_status, EvidenceStatus::Supported);
    assert!(
        out.evidence_refs[0].text.contains("value=1 "),
        "value as people write it, not the API's 1e+00: {}",
        out.evidence_refs[0].text
    );
}

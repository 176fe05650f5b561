//! Logs at scale: counts and first/last times cover every matching line,
//! not the sample; the sample cannot be drowned by one flooding pattern;
//! a keyword query over the streamed table finds exactly what a scan of
//! every line finds; and the offline model's answer states the exact count.

use crate::helpers::{base_engine, pack_registry};
use diagraph::engine::{Engine, MemoryRecorder, RunRequest};
use diagraph::model::offline::OfflineModel;
use diagraph::tools::ToolOutput;
use diagraph::tools::logs::LogQuery;
use diagraph::tools::pack::{Pack, pack_tools};
use diagraph::vocab::run::RunStatus;
use serde_json::{Map, Value, json};
use std::fmt::Write;
use std::path::Path;
use std::sync::Arc;

const FLOOD: usize = 3_000;

/// A pack whose `rm-client` service logs one error pattern `FLOOD` times
/// over ten hours, an older different error a few times, and INFO noise,
/// under a firing alert on that service.
pub fn flood_pack(d: &Path) {
    std::fs::write(
        d.join("pack.toml"),
        "name = \"flood\"\nservices = [\"rm-client\", \"web\"]\n",
    )
    .unwrap();
    let alerts = json!([{"labels": {"alertname": "ResourceManagerUnreachable", "service": "rm-client", "severity": "critical"},
        "annotations": {"summary": "the resource manager cannot be reached"}, "state": "firing",
        "activeAt": "2026-03-01T08:00:00Z", "value": "1"}]);
    std::fs::write(d.join("alerts.json"), alerts.to_string()).unwrap();
    let mut logs = String::new();
    for i in 0..5 {
        writeln!(logs, r#"{{"ts":"2026-03-01T00:0{i}:00Z","service":"rm-client","level":"ERROR","message":"disk quota exceeded on /data{i}"}}"#).unwrap();
    }
    for i in 0..FLOOD {
        let (h, m, s) = (1 + i / 360, (i / 6) % 60, (i % 6) * 10);
        writeln!(logs, r#"{{"ts":"2026-03-01T{h:02}:{m:02}:{s:02}Z","service":"rm-client","level":"ERROR","message":"ERROR IN CONTACTING RM. attempt_{i}_m_{}"}}"#, i * 7).unwrap();
        writeln!(logs, r#"{{"ts":"2026-03-01T{h:02}:{m:02}:{s:02}Z","service":"web","level":"INFO","message":"GET /item/{i} 200 in {}ms","trace":"t-{i}"}}"#, i % 90).unwrap();
    }
    // Text a raw-byte prefilter must not miss: escapes and non-ASCII.
    writeln!(logs, r#"{{"ts":"2026-03-01T09:00:00Z","service":"web","level":"WARN","message":"caf\u00e9 KELVIN \u212a quote \" end"}}"#).unwrap();
    writeln!(logs, r#"{{"ts":"2026-03-01T09:00:01Z","service":"web","level":"WARN","message":"ÉCHEC du paiement"}}"#).unwrap();
    std::fs::write(d.join("logs.jsonl"), logs).unwrap();
}

async fn call(pack: &Arc<Pack>, args: Value) -> ToolOutput {
    let tools = pack_tools(pack.clone());
    let t = tools
        .iter()
        .find(|t| t.spec().name == "query_logs")
        .unwrap();
    let map: Map<String, Value> = serde_json::from_value(args).unwrap();
    t.call(&map).await.unwrap()
}

#[tokio::test]
async fn counts_and_times_cover_every_matching_line_not_the_sample() {
    let dir = tempfile::tempdir().unwrap();
    flood_pack(dir.path());
    let pack = Arc::new(Pack::load(dir.path()).unwrap());
    assert!(
        !pack.warnings.iter().any(|w| w.file == "logs.jsonl"),
        "{:?}",
        pack.warnings
    );
    assert_eq!(pack.logs.len(), 5 + 2 * FLOOD + 2);

    let out = call(
        &pack,
        json!({"service": "rm-client", "level": "ERROR", "limit": 10}),
    )
    .await;
    assert_eq!(out.body["total"], 5 + FLOOD);
    assert_eq!(out.body["first_ts"], "2026-03-01T00:00:00Z");
    assert_eq!(out.body["last_ts"], "2026-03-01T09:19:50Z");
    assert_eq!(out.body["truncated"], true);
    assert_eq!(out.body["counts_complete"], true);
    let logs = out.body["logs"].as_array().unwrap();
    assert_eq!(logs.len(), 10);
    // The older pattern is in the sample, though 3,000 newer lines match.
    assert!(
        logs.iter()
            .any(|l| l["message"].as_str().unwrap().starts_with("disk quota"))
    );
    let flood = out
        .evidence_refs
        .iter()
        .find(|r| r.text.contains("CONTACTING RM"))
        .unwrap();
    assert!(
        flood.text.ends_with(&format!(
            " | {FLOOD} matching lines like this between 2026-03-01T01:00:00Z and 2026-03-01T09:19:50Z"
        )),
        "{}",
        flood.text
    );
    let disk = out
        .evidence_refs
        .iter()
        .find(|r| r.text.contains("disk quota"))
        .unwrap();
    assert!(
        disk.text.contains(
            " | 5 matching lines like this between 2026-03-01T00:00:00Z and 2026-03-01T00:04:00Z"
        ),
        "{}",
        disk.text
    );
    // A query whose sample shows everything states no figures per line.
    let all = call(
        &pack,
        json!({"service": "rm-client", "keyword": "quota", "limit": 200}),
    )
    .await;
    assert_eq!(all.body["total"], 5);
    assert_eq!(all.body["truncated"], false);
    assert!(
        all.evidence_refs
            .iter()
            .all(|r| !r.text.contains("lines like this"))
    );
}

#[tokio::test]
async fn keyword_queries_find_exactly_what_a_scan_of_every_line_finds() {
    let dir = tempfile::tempdir().unwrap();
    flood_pack(dir.path());
    let pack = Arc::new(Pack::load(dir.path()).unwrap());
    let every = pack.logs.read_all().unwrap();
    let now = pack.now();
    for args in [
        json!({"keyword": "café"}),
        json!({"keyword": "k"}),
        json!({"keyword": "\"", "level": "warn"}),
        json!({"keyword": "échec"}),
        json!({"keyword": "contacting rm", "since": "2026-03-01T05:00:00Z", "until": "2026-03-01T06:00:00Z"}),
        json!({"keyword": "t-2999"}),
        json!({"keyword": "GET 200", "service": "WEB"}),
        json!({"keyword": "no such words"}),
    ] {
        let map: Map<String, Value> = serde_json::from_value(args.clone()).unwrap();
        let q = LogQuery::parse(&map, now).unwrap();
        let want = every.iter().filter(|l| q.matches(l)).count() as u64;
        let found = pack.logs.query(&q).unwrap();
        assert_eq!(found.sample.total, want, "{args}");
    }
    // The Kelvin sign folds to ASCII "k"; the escaped é is found as é.
    let map: Map<String, Value> =
        serde_json::from_value(json!({"keyword": "café kelvin"})).unwrap();
    assert_eq!(
        pack.logs
            .query(&LogQuery::parse(&map, now).unwrap())
            .unwrap()
            .sample
            .total,
        1
    );
}

#[tokio::test]
async fn a_log_file_changed_after_loading_fails_the_query_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    flood_pack(dir.path());
    let pack = Arc::new(Pack::load(dir.path()).unwrap());
    std::fs::write(dir.path().join("logs.jsonl"), "{}\n").unwrap();
    let tools = pack_tools(pack.clone());
    let t = tools
        .iter()
        .find(|t| t.spec().name == "query_logs")
        .unwrap();
    let err = t.call(&Map::new()).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("logs.jsonl changed after it was read"),
        "{err}"
    );
}

#[tokio::test]
async fn the_offline_answer_states_the_exact_count_and_time_range() {
    let dir = tempfile::tempdir().unwrap();
    flood_pack(dir.path());
    let pack = Arc::new(Pack::load(dir.path()).unwrap());
    let recorder = Arc::new(MemoryRecorder::new());
    let engine = Engine {
        model: Arc::new(OfflineModel::new()),
        tools: Arc::new(pack_registry(&pack)),
        catalog: Arc::new(pack.catalog()),
        ..base_engine(recorder.clone())
    };
    let outcome = engine
        .run(RunRequest::new("why is rm-client failing?"))
        .await
        .unwrap();
    let answer = &outcome.end.answer;
    assert_eq!(outcome.end.status, RunStatus::Success);
    assert!(!outcome.end.degraded, "{answer}");
    assert!(answer.contains(&FLOOD.to_string()), "{answer}");
    assert!(answer.contains("2026-03-01T01:00:00Z"), "{answer}");
    assert!(
        !answer.contains("counts above are of the returned lines"),
        "{answer}"
    );
}

//! Relative windows ("the last 60 minutes") end at different times per
//! source: live log files at the wall clock, a pack at its own reference
//! time (`now` in pack.toml, else its newest record), so a recorded
//! incident is read as of its own time (DESIGN.md section 6).

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use diagraph::config::LogFilesConfig;
use diagraph::tools::Tool;
use diagraph::tools::files::FileLogs;
use diagraph::tools::pack::{Pack, pack_tools};
use diagraph::vocab::tool::EvidenceStatus;
use serde_json::{Map, Value, json};
use std::fmt::Write;
use std::path::Path;
use std::sync::Arc;

/// JSON lines, one per (minutes before `end`, message).
fn lines(end: DateTime<Utc>, at: &[(i64, &str)]) -> String {
    let mut s = String::new();
    for (ago, msg) in at {
        let ts = (end - Duration::minutes(*ago)).to_rfc3339_opts(SecondsFormat::Secs, true);
        writeln!(
            s,
            r#"{{"ts":"{ts}","service":"api","level":"ERROR","message":"{msg}"}}"#
        )
        .unwrap();
    }
    s
}

fn args(v: Value) -> Map<String, Value> {
    serde_json::from_value(v).unwrap()
}

const AT: [(i64, &str); 3] = [
    (10, "ten minutes"),
    (90, "ninety minutes"),
    (600, "ten hours"),
];

#[tokio::test]
async fn live_files_measure_relative_windows_from_the_wall_clock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("api.log");
    std::fs::write(&path, lines(Utc::now(), &AT)).unwrap();
    let files = FileLogs::new(
        &LogFilesConfig {
            paths: Some(path.display().to_string()),
            ..LogFilesConfig::default()
        },
        std::time::Duration::from_secs(10),
    )
    .unwrap();
    let messages = |out: &diagraph::tools::ToolOutput| -> Vec<String> {
        out.body["logs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["message"].as_str().unwrap().to_string())
            .collect()
    };
    let hour = files
        .call(&args(json!({"window_minutes": 60})))
        .await
        .unwrap();
    assert_eq!(messages(&hour), ["ten minutes"]);
    let day = files
        .call(&args(json!({"window_minutes": 1440})))
        .await
        .unwrap();
    assert_eq!(day.body["total"], 3);

    // The same lines a year ago: nothing in the last hour of the clock.
    std::fs::write(&path, lines(Utc::now() - Duration::days(365), &AT)).unwrap();
    let none = files
        .call(&args(json!({"window_minutes": 60})))
        .await
        .unwrap();
    assert_eq!(
        none.evidence_status,
        EvidenceStatus::NoEvidence,
        "{}",
        none.body
    );
    let year = files
        .call(&args(json!({"window_minutes": 2 * 365 * 24 * 60})))
        .await
        .unwrap();
    assert_eq!(year.body["total"], 3);
}

async fn pack_hour(dir: &Path) -> Vec<String> {
    let pack = Arc::new(Pack::load(dir).unwrap());
    let tools = pack_tools(pack);
    let t = tools
        .iter()
        .find(|t| t.spec().name == "query_logs")
        .unwrap();
    let out = t.call(&args(json!({"window_minutes": 60}))).await.unwrap();
    out.body["logs"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|l| l["message"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_pack_measures_relative_windows_from_its_own_time() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let recorded: DateTime<Utc> = "2020-05-01T12:00:00Z".parse().unwrap();
    std::fs::write(d.join("alerts.json"), "[]").unwrap();
    std::fs::write(d.join("logs.jsonl"), lines(recorded, &AT)).unwrap();
    // No `now`: the newest record is the reference time, years ago.
    std::fs::write(d.join("pack.toml"), "name = \"old\"\n").unwrap();
    assert_eq!(pack_hour(d).await, ["ten minutes"]);
    // `now` set: the window ends there.
    std::fs::write(
        d.join("pack.toml"),
        "name = \"old\"\nnow = \"2020-05-01T10:45:00Z\"\n",
    )
    .unwrap();
    assert_eq!(pack_hour(d).await, ["ninety minutes"]);
}

//! Whether each pack source can answer: a file that is missing, unreadable
//! or corrupt makes its tool fail with the reason; one read only in part
//! (a tail cut mid-line) makes it say so, and a query that
//! finds nothing there fails rather than reporting nothing found; a few
//! bad lines are warnings, too many make the file unusable.

use crate::helpers::{copy_dir, shop_pack_dir};
use diagraph::tools::common::Readable;
use diagraph::tools::pack::{Pack, content_hash, pack_tools};
use diagraph::tools::{ToolError, ToolOutput};
use diagraph::vocab::run::FailureClass;
use diagraph::vocab::tool::EvidenceStatus;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn shop() -> PathBuf {
    shop_pack_dir()
}

/// A copy of the shop pack in a temp dir, to break.
fn copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let dst = dir.path().join("pack");
    copy_dir(&shop(), &dst);
    (dir, dst)
}

async fn call(pack: Pack, tool: &str, args: Value) -> Result<ToolOutput, ToolError> {
    let tools = pack_tools(Arc::new(pack));
    let t = tools
        .iter()
        .find(|t| t.spec().name == tool)
        .unwrap_or_else(|| panic!("{tool} is not offered"));
    let map: Map<String, Value> = serde_json::from_value(args).unwrap();
    t.call(&map).await
}

#[test]
fn the_shipped_pack_is_whole() {
    let pack = Pack::load(&shop()).unwrap();
    assert_eq!(pack.health.alerts, Readable::Whole);
    assert_eq!(pack.health.logs, Readable::Whole);
    assert_eq!(pack.health.knowledge, Readable::Whole);
    assert!(pack.health.unreadable_skills.is_empty());
    assert!(pack.content_hash.starts_with("sha256:"));
    assert_eq!(pack.content_hash.len(), "sha256:".len() + 64);
    // Relative or not, the pack is recorded where it really is.
    assert!(pack.dir.is_absolute());
    assert_eq!(pack.backend(), format!("pack:{}", pack.dir.display()));
}

#[tokio::test]
async fn a_truncated_alerts_file_fails_its_tool_instead_of_finding_no_alert() {
    let (_tmp, dir) = copy();
    let text = std::fs::read_to_string(dir.join("alerts.json")).unwrap();
    std::fs::write(dir.join("alerts.json"), &text[..text.len() / 3]).unwrap();
    let pack = Pack::load(&dir).unwrap();
    let Readable::Unreadable(why) = pack.health.alerts.clone() else {
        panic!("{:?}", pack.health.alerts)
    };
    assert!(why.starts_with("alerts.json line "), "{why}");
    assert!(why.contains("not valid JSON"), "{why}");
    let err = call(pack, "query_metrics", json!({"service": "payment-service"}))
        .await
        .unwrap_err();
    assert_eq!(err.class(), FailureClass::SourceUnreadable);
    assert_eq!(err.to_string(), why);
}

#[tokio::test]
async fn missing_and_unreadable_alerts_are_failures_that_name_the_file() {
    let (_tmp, dir) = copy();
    std::fs::remove_file(dir.join("alerts.json")).unwrap();
    let pack = Pack::load(&dir).unwrap();
    let err = call(pack, "query_metrics", json!({})).await.unwrap_err();
    assert_eq!(err.to_string(), "alerts.json is missing from the pack");
    std::fs::create_dir(dir.join("alerts.json")).unwrap();
    let pack = Pack::load(&dir).unwrap();
    let err = call(pack, "query_metrics", json!({})).await.unwrap_err();
    assert!(
        err.to_string().starts_with("alerts.json: cannot read"),
        "{err}"
    );
}

#[tokio::test]
async fn one_bad_alert_in_many_is_a_warning_and_many_make_the_file_unusable() {
    let (_tmp, dir) = copy();
    let good: Vec<Value> = (0..30)
        .map(|i| {
            json!({"labels": {"alertname": format!("A{i}"), "service": "svc"},
                   "state": "firing"})
        })
        .collect();
    let mut alerts = good.clone();
    alerts.push(json!({"no": "labels"}));
    std::fs::write(dir.join("alerts.json"), json!(alerts).to_string()).unwrap();
    let pack = Pack::load(&dir).unwrap();
    assert_eq!(pack.health.alerts, Readable::Whole);
    assert!(pack.warnings.iter().any(|w| w.file == "alerts.json"));
    let mut alerts = good[..3].to_vec();
    alerts.push(json!({"no": "labels"}));
    std::fs::write(dir.join("alerts.json"), json!(alerts).to_string()).unwrap();
    let pack = Pack::load(&dir).unwrap();
    let Readable::Unreadable(why) = &pack.health.alerts else {
        panic!("{:?}", pack.health.alerts)
    };
    assert!(
        why.starts_with("alerts.json: 1 of 4 alerts could not be read"),
        "{why}"
    );
}

#[tokio::test]
async fn a_log_file_cut_mid_line_is_read_in_part_and_says_so() {
    let (_tmp, dir) = copy();
    let text = std::fs::read_to_string(dir.join("logs.jsonl")).unwrap();
    std::fs::write(dir.join("logs.jsonl"), &text[..text.len() - 30]).unwrap();
    let lines = text.lines().count();
    let pack = Pack::load(&dir).unwrap();
    let Readable::Partial(why) = pack.health.logs.clone() else {
        panic!("{:?}", pack.health.logs)
    };
    assert!(
        why.contains(&format!("ends in the middle of line {lines}")),
        "{why}"
    );
    // A match still answers, and says what it did not read.
    let found = call(
        Pack::load(&dir).unwrap(),
        "query_logs",
        json!({"service": "payment-service"}),
    )
    .await
    .unwrap();
    assert_eq!(found.evidence_status, EvidenceStatus::Supported);
    assert_eq!(found.partial.as_deref(), Some(why.as_str()));
    // No match is not "no log lines": the unread tail was not checked.
    let err = call(pack, "query_logs", json!({"service": "inventory-service"}))
        .await
        .unwrap_err();
    assert_eq!(err.class(), FailureClass::SourceUnreadable);
    assert!(
        err.to_string().contains("the rest was not checked"),
        "{err}"
    );
    assert!(!err.to_string().contains("no log lines at all"), "{err}");
}

#[tokio::test]
async fn too_many_bad_log_lines_make_query_logs_fail() {
    let (_tmp, dir) = copy();
    std::fs::write(
        dir.join("logs.jsonl"),
        "{\"ts\":\"2026-07-08T22:00:00Z\",\"service\":\"a\",\"level\":\"ERROR\",\"message\":\"x\"}\nnot json\nnot json either\n",
    )
    .unwrap();
    let pack = Pack::load(&dir).unwrap();
    let err = call(pack, "query_logs", json!({"service": "a"}))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "logs.jsonl: 2 of 3 lines could not be read (first: line 2: not a JSON object: expected ident at line 1 column 2)"
    );
    // A missing log file is a failure too, never "no log lines".
    std::fs::remove_file(dir.join("logs.jsonl")).unwrap();
    let err = call(Pack::load(&dir).unwrap(), "query_logs", json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "logs.jsonl is missing from the pack");
}

#[tokio::test]
async fn knowledge_and_skills_that_cannot_be_read_fail_their_tools() {
    let (_tmp, dir) = copy();
    // One runbook of a few cannot be read (over the size limit): the
    // search cannot be trusted to be whole.
    let docs: Vec<PathBuf> = walk(&dir.join("knowledge"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    std::fs::write(&docs[0], vec![b'x'; 6 * 1024 * 1024]).unwrap();
    let skill = std::fs::read_dir(dir.join("skills"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .to_string_lossy()
        .into_owned();
    let file = dir.join("skills").join(&skill).join("SKILL.md");
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let pack = Pack::load(&dir).unwrap();
    let err = call(pack, "lookup_knowledge", json!({"query": "cpu"}))
        .await
        .unwrap_err();
    assert_eq!(err.class(), FailureClass::SourceUnreadable);
    assert!(
        err.to_string().starts_with(&format!(
            "1 of {} knowledge files could not be read (first: knowledge/",
            docs.len()
        )),
        "{err}"
    );
    let err = call(
        Pack::load(&dir).unwrap(),
        "read_skill",
        json!({"name": skill}),
    )
    .await
    .unwrap_err();
    assert_eq!(err.class(), FailureClass::SourceUnreadable);
    assert!(
        err.to_string()
            .starts_with(&format!("skills/{skill}/SKILL.md: cannot read")),
        "{err}"
    );
}

/// A pack without runbooks by design offers no lookup_knowledge at all,
/// rather than one that fails on every run.
#[test]
fn a_pack_without_knowledge_does_not_offer_lookup_knowledge() {
    let (_tmp, dir) = copy();
    std::fs::remove_dir_all(dir.join("knowledge")).unwrap();
    let pack = Pack::load(&dir).unwrap();
    assert_eq!(pack.health.knowledge, Readable::Absent);
    let names: Vec<String> = pack_tools(Arc::new(pack))
        .iter()
        .map(|t| t.spec().name)
        .collect();
    assert_eq!(names, ["query_metrics", "query_logs", "read_skill"]);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn the_content_hash_follows_the_content_not_the_path() {
    let (_tmp, a) = copy();
    let (_tmp2, b) = copy();
    assert_eq!(content_hash(&a), content_hash(&b));
    assert_eq!(content_hash(&a), Pack::load(&shop()).unwrap().content_hash);
    let logs = b.join("logs.jsonl");
    let mut text = std::fs::read_to_string(&logs).unwrap();
    text.push('\n');
    std::fs::write(&logs, text).unwrap();
    assert_ne!(content_hash(&a), content_hash(&b));
}

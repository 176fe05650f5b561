//! query_logs over local log files: JSON lines, a `journalctl -o json`
//! export, syslog, nginx and LogHub layouts recognised per file, a
//! configured pattern, globs; files that change, cannot be read or are
//! not logs; and the offline model diagnosing the shop incident from the
//! same logs as files, with the findings it makes from the pack.

use crate::helpers::{assert_same_cause, offline_shop_run, shop_pack_dir};
use crate::realdata::realdata;
use diagraph::config::LogFilesConfig;
use diagraph::tools::files::FileLogs;
use diagraph::tools::{Tool, ToolError, ToolOutput};
use diagraph::vocab::run::FailureClass;
use diagraph::vocab::tool::EvidenceStatus;
use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn files(paths: &str) -> FileLogs {
    cfg(LogFilesConfig {
        paths: Some(paths.into()),
        ..LogFilesConfig::default()
    })
}

fn cfg(c: LogFilesConfig) -> FileLogs {
    FileLogs::new(&c, Duration::from_secs(10)).unwrap()
}

async fn call(t: &FileLogs, args: Value) -> Result<ToolOutput, ToolError> {
    let map: Map<String, Value> = serde_json::from_value(args).unwrap();
    t.call(&map).await
}

/// A `journalctl -o json` export line, with the fields journald writes.
fn journald(us: i64, unit: &str, priority: u8, message: &str) -> String {
    json!({
        "__CURSOR": format!("s=0b1c;i={us:x};b=7f;m=1;t={us:x};x=1"),
        "__REALTIME_TIMESTAMP": us.to_string(),
        "__MONOTONIC_TIMESTAMP": "123456",
        "_BOOT_ID": "7f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c",
        "PRIORITY": priority.to_string(),
        "_SYSTEMD_UNIT": format!("{unit}.service"),
        "SYSLOG_IDENTIFIER": unit,
        "_PID": "811",
        "_HOSTNAME": "web-1",
        "MESSAGE": message,
    })
    .to_string()
}

fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// 2026-07-08T22:40:00Z in µs.
const T0: i64 = 1_783_550_400_000_000;

#[tokio::test]
async fn each_file_is_read_in_its_own_format_through_one_glob() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let journal: String = (0..30)
        .map(|i| {
            journald(
                T0 + i * 1_000_000,
                "payment",
                if i % 10 == 9 { 3 } else { 6 },
                &format!("charge {i} done"),
            ) + "\n"
        })
        .collect();
    write(root, "host/journal.json", &journal);
    write(
        root,
        "host/syslog",
        "Jul  8 22:40:01 web-1 sshd[811]: Failed password for root from 10.0.0.9\nJul  8 22:40:02 web-1 CRON[900]: (root) CMD (run-parts)\n",
    );
    write(
        root,
        "host/nginx.access.log",
        "10.0.0.1 - - [08/Jul/2026:22:40:01 +0000] \"GET /pay HTTP/1.1\" 502 157 \"-\" \"curl\"\n10.0.0.1 - - [08/Jul/2026:22:40:02 +0000] \"GET / HTTP/1.1\" 200 9 \"-\" \"curl\"\n",
    );
    write(
        root,
        "app/orders.jsonl",
        "{\"ts\":\"2026-07-08T22:40:03Z\",\"level\":\"error\",\"msg\":\"pool exhausted\",\"request_id\":\"r-1\"}\n",
    );
    let t = files(&format!("{0}/host/*:{0}/app/*.jsonl", root.display()));
    assert_eq!(
        t.backend(),
        format!("files:{0}/host/*:{0}/app/*.jsonl", root.display())
    );

    let out = call(&t, json!({"service": "payment", "level": "ERROR"}))
        .await
        .unwrap();
    assert_eq!(out.body["total"], 3);
    assert!(
        out.evidence_refs[0]
            .text
            .contains("ERROR payment charge 9 done"),
        "{:?}",
        out.evidence_refs
    );
    assert_eq!(out.body["logs"][0]["hostname"], "web-1");

    let out = call(&t, json!({"service": "sshd"})).await.unwrap();
    assert!(
        out.evidence_refs[0]
            .text
            .ends_with("sshd Failed password for root from 10.0.0.9"),
        "{:?}",
        out.evidence_refs
    );
    assert_eq!(out.body["logs"][0]["host"], "web-1");

    // nginx: the status makes the level; the file name the service.
    let out = call(&t, json!({"service": "nginx", "level": "error"}))
        .await
        .unwrap();
    assert_eq!(out.body["total"], 1);
    assert_eq!(out.body["logs"][0]["status"], "502");
    assert_eq!(out.body["logs"][0]["message"], "GET /pay HTTP/1.1");

    // JSON lines without a service take the file's name; keys alias.
    let out = call(&t, json!({"keyword": "r-1"})).await.unwrap();
    assert_eq!(out.body["logs"][0]["service"], "orders");
    assert_eq!(out.body["logs"][0]["level"], "ERROR");

    // Every error in every file, counted exactly.
    let out = call(&t, json!({"level": "error,fatal", "limit": 1}))
        .await
        .unwrap();
    assert_eq!(out.body["total"], 5);
    assert_eq!(out.body["truncated"], true);

    let none = call(&t, json!({"service": "nobody"})).await.unwrap();
    assert_eq!(none.evidence_status, EvidenceStatus::NoEvidence);
    assert!(
        none.evidence_refs[0]
            .text
            .contains("no lines at all for this service")
    );
}

#[tokio::test]
async fn a_configured_pattern_reads_plain_text_and_continuation_lines() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "app.log",
        "08.07.2026 22:40 [orders] E pool exhausted\n  at Pool.get(Pool.java:12)\n08.07.2026 22:41 [orders] I recovered\n",
    );
    let t = cfg(LogFilesConfig {
        paths: Some(d.path().join("app.log").display().to_string()),
        pattern: Some(
            r"^(?P<ts>\S+ \S+) \[(?P<service>\w+)\] (?P<level>\w) (?P<message>.*)$".into(),
        ),
        ts_format: Some("%d.%m.%Y %H:%M".into()),
        ..LogFilesConfig::default()
    });
    let out = call(&t, json!({"keyword": "Pool.java"})).await.unwrap();
    assert_eq!(out.body["total"], 1);
    assert_eq!(out.body["logs"][0]["ts"], "2026-07-08T22:40:00Z");
    assert_eq!(
        out.body["logs"][0]["message"],
        "pool exhausted\n  at Pool.get(Pool.java:12)"
    );
    // Bad configuration is refused before any query.
    for bad in [
        LogFilesConfig {
            paths: Some("/x".into()),
            pattern: Some("(?P<message>.*)".into()),
            ..LogFilesConfig::default()
        },
        LogFilesConfig {
            paths: Some("/x".into()),
            format: "klingon".into(),
            ..LogFilesConfig::default()
        },
        LogFilesConfig {
            paths: Some("/x/[ab".into()),
            ..LogFilesConfig::default()
        },
        LogFilesConfig {
            paths: None,
            ..LogFilesConfig::default()
        },
    ] {
        assert!(
            FileLogs::new(&bad, Duration::from_secs(1)).is_err(),
            "{bad:?}"
        );
    }
}

#[tokio::test]
async fn files_that_grow_are_read_again_and_broken_ones_say_why() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let path = root.join("svc.jsonl");
    let line = |i: i64, m: &str| {
        format!(
            "{{\"ts\":\"2026-07-08T22:4{i}:00Z\",\"service\":\"svc\",\"level\":\"ERROR\",\"message\":\"{m}\"}}\n"
        )
    };
    std::fs::write(&path, line(0, "first")).unwrap();
    let t = files(&format!("{}/*.jsonl", root.display()));
    assert_eq!(call(&t, json!({})).await.unwrap().body["total"], 1);
    let mut more = line(0, "first");
    more.push_str(&line(1, "second"));
    std::fs::write(&path, more).unwrap();
    assert_eq!(
        call(&t, json!({})).await.unwrap().body["total"],
        2,
        "rebuilt after growing"
    );

    // A glob that names no file fails; it never reads as "no log lines".
    let err = call(&files(&format!("{}/*.nothing", root.display())), json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.class(), FailureClass::SourceUnreadable);
    assert!(err.to_string().starts_with("no log file matches "), "{err}");

    // A file that is not a log, next to one that is: answered in part.
    write(root, "notes.jsonl", "");
    write(root, "readme.txt", "just some words\nin no known layout\n");
    let t = files(&format!("{0}/*.jsonl:{0}/*.txt", root.display()));
    let out = call(&t, json!({})).await.unwrap();
    assert_eq!(out.body["total"], 2);
    let partial = out.partial.unwrap();
    assert!(
        partial.contains("readme.txt: its format was not recognised"),
        "{partial}"
    );
    let err = call(&t, json!({"service": "other"})).await.unwrap_err();
    assert!(
        err.to_string().contains("the rest was not checked"),
        "{err}"
    );

    // Garbage in the only file: the tool fails with the file's reason.
    std::fs::write(&path, "{\"ts\":1}\nnope\n{}\n").unwrap();
    let err = call(&files(&path.display().to_string()), json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.class(), FailureClass::SourceUnreadable);
    assert!(
        err.to_string().contains("3 of 3 lines could not be read"),
        "{err}"
    );
}

#[tokio::test]
async fn loghub_files_are_recognised_and_counted() {
    let Some(real) = realdata() else { return };
    let dir = real.join("loghub");
    let t = files(&format!(
        "{0}/Hadoop/*.log:{0}/Zookeeper/*.log:{0}/Spark/*.log:{0}/HDFS/*.log:{0}/Apache/*.log:{0}/OpenStack/*.log:{0}/BGL/*.log",
        dir.display()
    ));
    let out = call(&t, json!({"keyword": "ERROR IN CONTACTING RM", "limit": 5}))
        .await
        .unwrap();
    let want = std::fs::read_to_string(dir.join("Hadoop/Hadoop_2k.log"))
        .unwrap()
        .lines()
        .filter(|l| l.contains("ERROR IN CONTACTING RM"))
        .count();
    assert_eq!(out.body["total"], want);
    assert_eq!(out.body["logs"][0]["service"], "Hadoop_2k");
    assert!(out.partial.is_none(), "{:?}", out.partial);
    for (service, level) in [
        ("Zookeeper_2k", "WARN"),
        ("Spark_2k", "INFO"),
        ("Apache_2k", "error"),
        ("KERNEL", "FATAL"),
        ("nova-api", "INFO"),
    ] {
        let out = call(&t, json!({"service": service, "level": level, "limit": 1}))
            .await
            .unwrap();
        assert_eq!(
            out.evidence_status,
            EvidenceStatus::Supported,
            "{service} {level}"
        );
    }
}

#[tokio::test]
async fn this_machines_journal_export_is_read_whole_when_there_is_one() {
    let Ok(out) = std::process::Command::new("journalctl")
        .args(["-o", "json", "-n", "200", "--no-pager"])
        .output()
    else {
        eprintln!("SKIP: no journalctl");
        return;
    };
    if out.stdout.iter().filter(|b| **b == b'\n').count() < 2 {
        eprintln!("SKIP: the journal is empty here");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("journal.json"), &out.stdout).unwrap();
    let t = files(&d.path().join("journal.json").display().to_string());
    let res = call(&t, json!({"limit": 200})).await.unwrap();
    assert!(res.partial.is_none(), "{:?}", res.partial);
    assert!(res.body["total"].as_u64().unwrap() >= 2);
}

/// The shop pack's logs as a journald export: the same lines, as journald
/// would have them (unit, priority, µs time).
fn shop_as_journal(dir: &Path) {
    let text = std::fs::read_to_string(shop_pack_dir().join("logs.jsonl")).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let ts = chrono::DateTime::parse_from_rfc3339(v["ts"].as_str().unwrap()).unwrap();
        let priority = match v["level"].as_str().unwrap() {
            "ERROR" => 3,
            "WARN" => 4,
            "DEBUG" => 7,
            _ => 6,
        };
        out.push_str(&journald(
            ts.timestamp_micros(),
            v["service"].as_str().unwrap(),
            priority,
            v["message"].as_str().unwrap(),
        ));
        out.push('\n');
    }
    std::fs::write(dir.join("journal.json"), out).unwrap();
}

#[tokio::test]
async fn the_offline_model_finds_the_same_cause_from_a_journal_as_from_the_pack() {
    let question = "why is order-service timing out?";
    let run = |logs: Option<FileLogs>| async move {
        let logs = logs.map(|l| Arc::new(l) as Arc<dyn Tool>);
        let (out, recorder) = offline_shop_run(question, logs).await;
        let logs_backend = recorder
            .snapshot()
            .invocations
            .iter()
            .find(|i| i.tool_name == "query_logs")
            .map(|i| i.retrieval_details.source.backend.clone());
        (out, logs_backend)
    };
    let (from_pack, pack_backend) = run(None).await;
    let d = tempfile::tempdir().unwrap();
    shop_as_journal(d.path());
    let (from_files, files_backend) =
        run(Some(files(&d.path().join("*.json").display().to_string()))).await;
    assert!(pack_backend.unwrap().starts_with("pack:"));
    assert!(files_backend.unwrap().starts_with("files:"));
    assert_same_cause(&from_pack, &from_files, "files");
    let b = &from_files.end.answer;
    assert!(!from_files.end.degraded, "{b}");
}

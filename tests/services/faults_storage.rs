//! Fault injection, the local half: the database (refused, hanging,
//! garbage, truncated, locked, shared by many processes) and pack files
//! (missing, unreadable, garbage, truncated), driven through the real
//! binary. Each case checks the one-line error or what the answer says
//! could not be checked, the exit code, and that nothing was left RUNNING.

use crate::broken_server::{Fault, QUICK_TIMEOUTS, broken_server};
use crate::mysql_db;
use crate::sandbox::{Sandbox, assert_exits_in_one_line, code, failed_sources, stderr};
use serde_json::Value;
use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

// ---- database ----------------------------------------------------------

#[test]
fn database_refused() {
    let sb = Sandbox::with_config(QUICK_TIMEOUTS);
    let out = sb
        .cmd_on("mysql://root@127.0.0.1:1/nothing")
        .args(["ask", "why?"])
        .output()
        .unwrap();
    assert_exits_in_one_line(&out, 2, "database unreachable");
}

#[test]
fn database_hang() {
    let sb = Sandbox::with_config(QUICK_TIMEOUTS);
    let url = broken_server(Fault::Hang);
    let addr = url.trim_start_matches("http://");
    let started = Instant::now();
    let out = sb
        .cmd_on(&format!("mysql://root@{addr}/db"))
        .args(["ask", "why?"])
        .output()
        .unwrap();
    assert_exits_in_one_line(&out, 2, "no answer within");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn database_garbage_file() {
    let sb = Sandbox::with_config(QUICK_TIMEOUTS);
    let file = sb.path("garbage.db");
    std::fs::write(
        &file,
        b"this is not an SQLite database, just text\n".repeat(200),
    )
    .unwrap();
    let out = sb
        .cmd_on(&format!("sqlite:{}", file.display()))
        .args(["ask", "why?"])
        .output()
        .unwrap();
    assert_exits_in_one_line(&out, 2, "database cannot be used");
    assert!(
        stderr(&out).contains("file is not a database"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn database_truncated_file() {
    let sb = Sandbox::with_config(QUICK_TIMEOUTS);
    // A real database with runs in it, cut in half.
    let (out, _) = sb.ask(&[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let checkpoint = Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.execute('PRAGMA journal_mode=DELETE'); c.close()",
            sb.path("d.db").to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(checkpoint.success());
    let bytes = std::fs::read(sb.path("d.db")).unwrap();
    std::fs::write(sb.path("d.db"), &bytes[..bytes.len() / 2]).unwrap();
    let out = sb.cmd().args(["runs"]).output().unwrap();
    assert_exits_in_one_line(&out, 2, "database cannot be used");
    assert!(stderr(&out).contains("malformed"), "{}", stderr(&out));
}

/// Another process holds the write lock past the busy timeout: the error
/// says locked, not unreachable, and no run is left RUNNING.
#[test]
fn database_locked() {
    let sb = Sandbox::with_config(QUICK_TIMEOUTS);
    let (out, _) = sb.ask(&[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mut holder = Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys,time; c=sqlite3.connect(sys.argv[1], isolation_level=None); \
             c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(30)",
            sb.path("d.db").to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 6];
    holder
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    let out = sb
        .cmd()
        .args(["ask", "why is payment-service slow?"])
        .output()
        .unwrap();
    let _ = holder.kill();
    let _ = holder.wait();
    assert_exits_in_one_line(&out, 2, "locked");
    assert!(!stderr(&out).contains("unreachable"), "{}", stderr(&out));
    sb.assert_nothing_running();
}

// ---- pack files --------------------------------------------------------

/// A pack file broken: its tool fails with the file and the problem, the
/// answer lists it, and the verdict cannot be PASS.
fn pack_case(break_it: impl FnOnce(&Path), tool: &str, needle: &str) -> Value {
    let sb = Sandbox::with_config(QUICK_TIMEOUTS);
    let pack = sb.pack();
    break_it(&pack);
    let (out, v) = sb.ask(&["--pack", pack.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let failed = failed_sources(&v);
    let hit = failed
        .iter()
        .find(|(t, _, _)| t == tool)
        .unwrap_or_else(|| panic!("no failed {tool} in {failed:?}"));
    assert_eq!(hit.1, "source_unreadable", "{hit:?}");
    assert!(hit.2.contains(needle), "{:?} should say {needle:?}", hit.2);
    assert_ne!(v["effective_verdict"], "PASS", "{v}");
    let answer = v["answer"].as_str().unwrap();
    assert!(answer.contains("What could not be checked"), "{answer}");
    assert!(answer.contains(needle), "{answer}");
    assert!(!answer.contains("(0 alerts in the pack)"), "{answer}");
    sb.assert_nothing_running();
    v
}

#[test]
fn pack_alerts_missing() {
    pack_case(
        |p| std::fs::remove_file(p.join("alerts.json")).unwrap(),
        "query_metrics",
        "alerts.json is missing from the pack",
    );
}

#[test]
fn pack_alerts_unreadable() {
    // A directory where the file should be: reading it fails (as root,
    // permissions would not).
    pack_case(
        |p| {
            std::fs::remove_file(p.join("alerts.json")).unwrap();
            std::fs::create_dir(p.join("alerts.json")).unwrap();
        },
        "query_metrics",
        "alerts.json: cannot read",
    );
}

#[test]
fn pack_alerts_garbage() {
    pack_case(
        |p| std::fs::write(p.join("alerts.json"), "<html>not alerts</html>").unwrap(),
        "query_metrics",
        "alerts.json line 1: not valid JSON",
    );
}

#[test]
fn pack_alerts_truncated() {
    let v = pack_case(
        |p| {
            let text = std::fs::read_to_string(p.join("alerts.json")).unwrap();
            let cut: String = text.lines().take(6).collect::<Vec<_>>().join("\n");
            std::fs::write(p.join("alerts.json"), cut).unwrap();
        },
        "query_metrics",
        "alerts.json line 6: not valid JSON",
    );
    // The load warning is recorded with the run and shown with the answer.
    let warnings = v["sources"]["pack_warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().starts_with("alerts.json:6:")),
        "{warnings:?}"
    );
}

#[test]
fn pack_logs_truncated_mid_line() {
    let sb = Sandbox::with_config(QUICK_TIMEOUTS);
    let pack = sb.pack();
    let logs = pack.join("logs.jsonl");
    let text = std::fs::read_to_string(&logs).unwrap();
    std::fs::write(&logs, &text[..text.len() - 40]).unwrap();
    let (out, v) = sb.ask(&["--pack", pack.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let answer = v["answer"].as_str().unwrap();
    assert!(
        answer.contains("read in part: logs.jsonl ends in the middle of line"),
        "{answer}"
    );
    // A logs query that found nothing in the part read is failed, not
    // "no log lines".
    let t = sb.trace(&v["run_id"]);
    for inv in t["toolInvocations"].as_array().unwrap() {
        if inv["toolName"] == "query_logs" {
            assert_ne!(
                inv["retrievalDetails"]["evidence_status"], "no_evidence",
                "{inv}"
            );
        }
    }
}

#[test]
fn pack_logs_garbage_lines() {
    pack_case(
        |p| {
            let mut text = std::fs::read_to_string(p.join("logs.jsonl")).unwrap();
            for i in 0..20 {
                text.push_str(&format!("garbage line {i}\n"));
            }
            std::fs::write(p.join("logs.jsonl"), text).unwrap();
        },
        "query_logs",
        "logs.jsonl: 20 of 124 lines could not be read (first: line 105:",
    );
}

#[test]
fn pack_directory_missing() {
    let sb = Sandbox::with_config(QUICK_TIMEOUTS);
    let out = sb
        .cmd()
        .arg("--pack")
        .arg(sb.path("no-such-pack"))
        .args(["ask", "why?"])
        .output()
        .unwrap();
    assert_exits_in_one_line(&out, 2, "no-such-pack");
    sb.assert_nothing_running();
}

// ---- many processes on one database ------------------------------------

/// 16 `ask` processes at once on one fresh SQLite file: one migrates it,
/// every run is stored and ended, none fails with "locked".
#[test]
fn sixteen_processes_share_one_sqlite_file() {
    let sb = Sandbox::with_config(QUICK_TIMEOUTS);
    let db = sb.db_url();
    many_asks(&sb, &db, 16);
}

/// The same on a fresh MySQL/MariaDB database: exactly one process
/// migrates it (MariaDB ignores sqlx's own lock).
#[test]
fn sixteen_processes_migrate_a_fresh_mysql_database_once() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(db) = rt.block_on(mysql_db::TestDatabase::create(
        "sixteen_processes_migrate_a_fresh_mysql_database_once",
    )) else {
        return;
    };
    let sb = Sandbox::with_config(QUICK_TIMEOUTS);
    many_asks(&sb, &db.url, 16);
    drop(db);
}

fn many_asks(sb: &Sandbox, db: &str, n: usize) {
    let children: Vec<_> = (0..n)
        .map(|i| {
            sb.cmd_on(db)
                .args([
                    "ask",
                    &format!("why is payment-service slow? ({i})"),
                    "--json",
                ])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut ids = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        ids.push(v["run_id"].as_i64().unwrap());
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n);
    let out = sb
        .cmd_on(db)
        .args(["runs", "--json", "--limit", "100"])
        .output()
        .unwrap();
    let runs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(runs.len(), n);
    assert!(runs.iter().all(|r| r["status"] == "SUCCESS"), "{runs:?}");
}

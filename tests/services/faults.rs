//! Fault injection: every external dependency (model endpoint, Prometheus,
//! database, pack files) broken in every way (refused, hang, 5xx, garbage
//! body, truncated data), driven through the real binary. Each case checks
//! what the user sees (the failure class and plain-words message, the
//! "What could not be checked" section, the verdict), the exit code, and
//! that nothing was lost or left RUNNING. The README's fault table is this
//! file in prose.
//!
//! The HTTP dependencies are a raw TCP server in this process that breaks
//! each exchange the way it is told to, so "truncated" is really a body
//! cut short and "hang" a server that never answers.

use crate::helpers::{diagraph_bin, isolate, shop_pack_dir};
use crate::mysql_db;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    /// Nothing listens on the port.
    Refused,
    /// The server accepts and never answers.
    Hang,
    ServerError,
    /// 200 with a body that is not the API's.
    Garbage,
    /// A body cut short: Content-Length promises more than is sent.
    Truncated,
    Unauthorized,
    Quota,
}

/// A server that breaks every exchange with `fault`; its URL.
fn broken_server(fault: Fault) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    if fault == Fault::Refused {
        // Bound, then closed: the port refuses.
        drop(listener);
        return format!("http://{addr}");
    }
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            std::thread::spawn(move || answer(conn, fault));
        }
    });
    format!("http://{addr}")
}

fn answer(mut conn: TcpStream, fault: Fault) {
    // Read the request head and body (the client waits for us anyway).
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let Ok(n) = conn.read(&mut chunk) else { return };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let Ok(n) = conn.read(&mut chunk) else { return };
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let reply = |status: &str, kind: &str, body: &str, claimed: usize| {
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {claimed}\r\nConnection: close\r\n\r\n{body}"
        )
    };
    let text = match fault {
        Fault::Refused => return,
        Fault::Hang => {
            std::thread::sleep(Duration::from_secs(120));
            return;
        }
        Fault::ServerError => {
            let b = "upstream overloaded";
            reply("503 Service Unavailable", "text/plain", b, b.len())
        }
        Fault::Garbage => {
            let b = "<html><body>please log in</body></html>";
            reply("200 OK", "text/html", b, b.len())
        }
        Fault::Truncated => {
            let b = r#"{"status":"success","data":{"alerts":[{"labels":{"alertn"#;
            reply("200 OK", "application/json", b, b.len() + 400)
        }
        Fault::Unauthorized => {
            let b =
                r#"{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}"#;
            reply("401 Unauthorized", "application/json", b, b.len())
        }
        Fault::Quota => {
            let b = r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}}"#;
            reply("429 Too Many Requests", "application/json", b, b.len())
        }
    };
    let _ = conn.write_all(text.as_bytes());
    let _ = conn.flush();
}

/// A private config, data dir and SQLite file.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    /// With one-second model and metrics timeouts, so a hang is quick.
    fn new() -> Sandbox {
        let sb = Sandbox {
            dir: tempfile::tempdir().unwrap(),
        };
        let cfg = sb.path("config/diagraph");
        std::fs::create_dir_all(&cfg).unwrap();
        std::fs::write(
            cfg.join("config.toml"),
            "[model]\ntimeout_secs = 1\n\n[metrics]\ntimeout_secs = 1\n",
        )
        .unwrap();
        sb
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn db_url(&self) -> String {
        format!("sqlite:{}", self.path("d.db").display())
    }

    fn cmd(&self) -> Command {
        self.cmd_on(&self.db_url())
    }

    fn cmd_on(&self, db: &str) -> Command {
        let mut cmd = diagraph_bin();
        isolate(&mut cmd, self.dir.path());
        cmd.arg("--database-url").arg(db);
        cmd
    }

    /// `ask QUESTION --json` with extra arguments before `ask`.
    fn ask(&self, global: &[&str]) -> (Output, Value) {
        let out = self
            .cmd()
            .args(global)
            .args(["ask", "why is payment-service slow?", "--json"])
            .output()
            .unwrap();
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out, v)
    }

    fn ask_model(&self, url: &str) -> (Output, Value) {
        let out = self
            .cmd()
            .env("DIAGRAPH_OPENAI_BASE_URL", format!("{url}/v1"))
            .env("DIAGRAPH_OPENAI_API_KEY", "sk-test-not-a-real-key")
            .args([
                "--model",
                "openai",
                "ask",
                "why is payment-service slow?",
                "--json",
            ])
            .output()
            .unwrap();
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out, v)
    }

    /// Every stored run is ended: none is left RUNNING.
    fn assert_nothing_running(&self) -> Vec<Value> {
        let out = self.cmd().args(["runs", "--json"]).output().unwrap();
        let runs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        for r in &runs {
            assert_ne!(r["status"], "RUNNING", "{r}");
        }
        runs
    }

    fn trace(&self, run_id: &Value) -> Value {
        let out = self
            .cmd()
            .args(["trace", &run_id.to_string(), "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// A copy of the shipped pack to break.
    fn pack(&self) -> PathBuf {
        let dst = self.path("pack");
        copy_dir(&shop_pack_dir(), &dst);
        dst
    }
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), to).unwrap();
        }
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn failed_sources(v: &Value) -> Vec<(String, String, String)> {
    v["failed_sources"]
        .as_array()
        .unwrap_or_else(|| panic!("no failed_sources in {v}"))
        .iter()
        .map(|f| {
            (
                f["tool"].as_str().unwrap().to_string(),
                f["class"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn assert_one_line_error(o: &Output, exit: i32, needle: &str) {
    assert_eq!(code(o), exit, "{}", stderr(o));
    let err = stderr(o);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one error line, got: {err}");
    assert!(
        lines[0].to_lowercase().contains(&needle.to_lowercase()),
        "{:?} should say {needle:?}",
        lines[0]
    );
    assert!(!err.contains("panicked"), "{err}");
}

// ---- model endpoint -----------------------------------------------------

/// A model that cannot answer degrades the run (exit 3) with a failure
/// that says the model could not be reached and why, and the answer says
/// it too; the run is stored SUCCESS/degraded, never RUNNING.
fn model_case(fault: Fault, class: &str, needles: &[&str]) {
    model_case_of(fault, &[class], needles);
}

fn model_case_of(fault: Fault, classes: &[&str], needles: &[&str]) {
    let sb = Sandbox::new();
    let url = broken_server(fault);
    let started = Instant::now();
    let (out, v) = sb.ask_model(&url);
    assert_eq!(code(&out), 3, "{fault:?}: {}\n{v}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(30), "{fault:?}");
    assert_eq!(v["status"], "SUCCESS");
    assert_eq!(v["degraded"], true);
    let class = v["failure"]["class"].as_str().unwrap_or_default();
    assert!(classes.contains(&class), "{fault:?}: {v}");
    let message = v["failure"]["message"].as_str().unwrap();
    assert!(message.starts_with("the planner model "), "{message}");
    for n in needles {
        assert!(
            message.contains(n),
            "{fault:?}: {message:?} should say {n:?}"
        );
    }
    let answer = v["answer"].as_str().unwrap();
    assert!(
        answer.contains("What could not be checked") && answer.contains(message),
        "{fault:?}: the answer says why:\n{answer}"
    );
    assert!(!message.contains("sk-test-not-a-real-key"), "{message}");
    sb.assert_nothing_running();
    // The trace carries the same failure and the failed model calls.
    let t = sb.trace(&v["run_id"]);
    assert_eq!(t["run"]["failure"]["class"], class);
    assert!(
        t["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["error"].is_string())
    );
}

#[test]
fn model_refused() {
    let port_hint = "127.0.0.1";
    model_case(
        Fault::Refused,
        "connection",
        &["could not be reached", port_hint],
    );
}

#[test]
fn model_hang() {
    model_case(Fault::Hang, "timeout", &["could not be reached"]);
}

#[test]
fn model_server_error() {
    model_case(Fault::ServerError, "server_error", &["HTTP 503"]);
}

#[test]
fn model_garbage_body() {
    model_case(Fault::Garbage, "bad_response", &["could not be used"]);
}

#[test]
fn model_truncated_body() {
    let sb = Sandbox::new();
    let url = broken_server(Fault::Truncated);
    let (out, v) = sb.ask_model(&url);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    // A body cut short is a broken connection or an unusable answer.
    let class = v["failure"]["class"].as_str().unwrap();
    assert!(
        ["connection", "bad_response"].contains(&class),
        "{class}: {v}"
    );
    sb.assert_nothing_running();
}

#[test]
fn model_unauthorized() {
    model_case(
        Fault::Unauthorized,
        "unauthorized",
        &["HTTP 401", "check the API key"],
    );
}

#[test]
fn model_quota() {
    // The provider reports a 429 it gave up on without the body's
    // "insufficient_quota", so quota reads as rate limiting until it does;
    // either way the model could not be reached, in plain words.
    model_case_of(
        Fault::Quota,
        &["quota", "rate_limited"],
        &["could not be reached", "HTTP 429"],
    );
}

/// A run stopped by SIGTERM (or Ctrl-C) while the model hangs ends
/// CANCELLED at once, exit 4, with its steps kept and its trace ending on
/// why.
#[test]
fn a_stopped_ask_ends_cancelled_with_what_happened() {
    let sb = Sandbox::new();
    // A model that hangs longer than the test: only the signal ends it.
    std::fs::write(
        sb.path("config/diagraph/config.toml"),
        "[model]\ntimeout_secs = 60\n",
    )
    .unwrap();
    let url = broken_server(Fault::Hang);
    let child = sb
        .cmd()
        .env("DIAGRAPH_OPENAI_BASE_URL", format!("{url}/v1"))
        .env("DIAGRAPH_OPENAI_API_KEY", "sk-test")
        .args([
            "--model",
            "openai",
            "ask",
            "why is payment-service slow?",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the run is stored and the planner is waiting on the model.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let runs = sb.cmd().args(["runs", "--json"]).output().unwrap();
        let list: Vec<Value> = serde_json::from_slice(&runs.stdout).unwrap_or_default();
        if list.first().is_some_and(|r| r["status"] == "RUNNING") {
            break;
        }
        assert!(Instant::now() < deadline, "the run never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    let stopped = Instant::now();
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(stopped.elapsed() < Duration::from_secs(10));
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "CANCELLED");
    assert_eq!(v["failure"]["class"], "cancelled");
    assert_eq!(v["orchestration_trace"]["termination_reason"], "cancelled");
    let runs = sb.assert_nothing_running();
    assert_eq!(runs[0]["status"], "CANCELLED");
    let t = sb.trace(&v["run_id"]);
    assert_eq!(t["run"]["status"], "CANCELLED");
    assert_eq!(
        t["run"]["orchestrationTrace"]["termination_reason"],
        "cancelled"
    );
    assert_eq!(t["run"]["orchestrationTrace"]["final_node"], "planner");
    // The model call that was cut short is kept as a step.
    let steps = t["steps"].as_array().unwrap();
    assert_eq!(steps.len() as i64, t["run"]["stepCount"].as_i64().unwrap());
    assert!(!steps.is_empty());
    assert!(
        steps.last().unwrap()["error"]
            .as_str()
            .unwrap()
            .contains("cancelled")
    );
}

// ---- Prometheus --------------------------------------------------------

/// Prometheus broken, the pack serving logs: query_metrics is a failed
/// invocation that says why, the answer lists it under what could not be
/// checked, the verdict cannot be PASS, and nothing reads "no evidence".
fn prometheus_case(fault: Fault, class: &str, needle: &str) {
    let sb = Sandbox::new();
    let url = broken_server(fault);
    let pack = shop_pack_dir();
    let started = Instant::now();
    let (out, v) = sb.ask(&["--pack", pack.to_str().unwrap(), "--prometheus-url", &url]);
    assert_eq!(code(&out), 0, "{fault:?}: {}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(30));
    let failed = failed_sources(&v);
    assert!(!failed.is_empty(), "{fault:?}: {v}");
    for (tool, c, message) in &failed {
        assert_eq!(tool, "query_metrics");
        assert_eq!(c, class, "{fault:?}: {message}");
        assert!(
            message.contains(needle),
            "{fault:?}: {message:?} should say {needle:?}"
        );
    }
    assert_ne!(v["effective_verdict"], "PASS", "{fault:?}: {v}");
    let answer = v["answer"].as_str().unwrap();
    assert!(answer.contains("What could not be checked"), "{answer}");
    assert!(
        answer.contains(&format!("query_metrics (prometheus:{url})")),
        "{answer}"
    );
    assert!(!answer.contains("returned no evidence"), "{answer}");
    assert_eq!(
        v["sources"]["tools"]["query_metrics"],
        format!("prometheus:{url}")
    );
    assert_eq!(
        v["sources"]["tools"]["query_logs"],
        format!("pack:{}", pack.canonicalize().unwrap().display())
    );
    sb.assert_nothing_running();
}

#[test]
fn prometheus_refused() {
    prometheus_case(
        Fault::Refused,
        "connection",
        "connection refused to http://127.0.0.1",
    );
}

#[test]
fn prometheus_hang() {
    prometheus_case(Fault::Hang, "timeout", "timed out after 1 s");
}

#[test]
fn prometheus_server_error() {
    prometheus_case(Fault::ServerError, "server_error", "HTTP 503");
}

#[test]
fn prometheus_garbage_body() {
    prometheus_case(Fault::Garbage, "bad_response", "not JSON");
}

#[test]
fn prometheus_truncated_body() {
    prometheus_case(Fault::Truncated, "bad_response", "broke off");
}

/// With Prometheus configured and no pack named, the shipped demo pack
/// serves nothing: the run records Prometheus as its only source.
#[test]
fn a_live_backend_without_a_pack_gets_no_demo_pack() {
    let sb = Sandbox::new();
    let url = broken_server(Fault::Refused);
    let (out, v) = sb.ask(&["--prometheus-url", &url]);
    assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
    let tools = v["sources"]["tools"].as_object().unwrap();
    assert_eq!(tools.len(), 1, "{tools:?}");
    assert!(v["sources"].get("pack").is_none(), "{v}");
    let answer = v["answer"].as_str().unwrap();
    assert!(
        !answer.contains("fraud-check"),
        "demo logs leaked in: {answer}"
    );
}

// ---- database ----------------------------------------------------------

#[test]
fn database_refused() {
    let sb = Sandbox::new();
    let out = sb
        .cmd_on("mysql://root@127.0.0.1:1/nothing")
        .args(["ask", "why?"])
        .output()
        .unwrap();
    assert_one_line_error(&out, 2, "database unreachable");
}

#[test]
fn database_hang() {
    let sb = Sandbox::new();
    let url = broken_server(Fault::Hang);
    let addr = url.trim_start_matches("http://");
    let started = Instant::now();
    let out = sb
        .cmd_on(&format!("mysql://root@{addr}/db"))
        .args(["ask", "why?"])
        .output()
        .unwrap();
    assert_one_line_error(&out, 2, "no answer within");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn database_garbage_file() {
    let sb = Sandbox::new();
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
    assert_one_line_error(&out, 2, "database cannot be used");
    assert!(
        stderr(&out).contains("file is not a database"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn database_truncated_file() {
    let sb = Sandbox::new();
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
    assert_one_line_error(&out, 2, "database cannot be used");
    assert!(stderr(&out).contains("malformed"), "{}", stderr(&out));
}

/// Another process holds the write lock past the busy timeout: the error
/// says locked, not unreachable, and no run is left RUNNING.
#[test]
fn database_locked() {
    let sb = Sandbox::new();
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
    assert_one_line_error(&out, 2, "locked");
    assert!(!stderr(&out).contains("unreachable"), "{}", stderr(&out));
    sb.assert_nothing_running();
}

// ---- pack files --------------------------------------------------------

/// A pack file broken: its tool fails with the file and the problem, the
/// answer lists it, and the verdict cannot be PASS.
fn pack_case(break_it: impl FnOnce(&Path), tool: &str, needle: &str) -> Value {
    let sb = Sandbox::new();
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
    let sb = Sandbox::new();
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
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .arg("--pack")
        .arg(sb.path("no-such-pack"))
        .args(["ask", "why?"])
        .output()
        .unwrap();
    assert_one_line_error(&out, 2, "no-such-pack");
    sb.assert_nothing_running();
}

// ---- many processes on one database ------------------------------------

/// 16 `ask` processes at once on one fresh SQLite file: one migrates it,
/// every run is stored and ended, none fails with "locked".
#[test]
fn sixteen_processes_share_one_sqlite_file() {
    let sb = Sandbox::new();
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
    let sb = Sandbox::new();
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

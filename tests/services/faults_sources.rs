//! Fault injection on the sources beyond `faults.rs`: pack files broken
//! in ways that look like data (an empty `alerts.json`) and a Prometheus
//! (or Thanos, Cortex, Mimir) that answers "success" while saying in its
//! `warnings` that the answer is partial. Neither may come out looking
//! whole: the invocation fails or is partial, says why, and the answer's
//! "What could not be checked" names it.

use crate::helpers::{copy_dir, diagraph_bin, isolate, shop_pack_dir};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `ask --json` in a private home with `args` before `ask`.
fn ask(home: &Path, args: &[&str]) -> (Output, Value) {
    let mut cmd = diagraph_bin();
    isolate(&mut cmd, home);
    let db = format!("sqlite:{}", home.join("d.db").display());
    let out = cmd
        .arg("--database-url")
        .arg(db)
        .args(args)
        .args(["ask", "why is payment-service slow?", "--json"])
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, v)
}

/// The query_metrics invocations of a run that failed, with their messages.
fn failed_metrics(v: &Value) -> Vec<String> {
    v["failed_sources"]
        .as_array()
        .unwrap_or_else(|| panic!("no failed_sources in {v}"))
        .iter()
        .filter(|f| f["tool"] == "query_metrics")
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect()
}

// ---- pack files --------------------------------------------------------

/// An `alerts.json` cut to nothing is not "no alerts firing" (that is
/// `[]`): query_metrics fails saying the file is empty, the load warning
/// is recorded, and the verdict cannot be PASS.
#[test]
fn an_empty_alerts_file_is_unreadable_not_no_alerts() {
    for content in ["", "  \n\n"] {
        let home = tempfile::tempdir().unwrap();
        let pack = home.path().join("pack");
        copy_dir(&shop_pack_dir(), &pack);
        std::fs::write(pack.join("alerts.json"), content).unwrap();
        let (out, v) = ask(home.path(), &["--pack", pack.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let failed = failed_metrics(&v);
        assert!(!failed.is_empty(), "{content:?}: {v}");
        for message in &failed {
            assert!(
                message.contains("alerts.json: the file is empty"),
                "{message}"
            );
        }
        assert_ne!(v["effective_verdict"], "PASS", "{v}");
        let answer = v["answer"].as_str().unwrap();
        assert!(
            answer.contains("alerts.json: the file is empty"),
            "{answer}"
        );
        let warnings = v["sources"]["pack_warnings"].as_array().unwrap();
        assert!(
            warnings.iter().any(|w| w
                .as_str()
                .unwrap()
                .starts_with("alerts.json: the file is empty")),
            "{warnings:?}"
        );
    }
}

/// `[]` still reads as no alerts firing: the file is whole.
#[test]
fn an_empty_alert_list_is_whole() {
    let home = tempfile::tempdir().unwrap();
    let pack = home.path().join("pack");
    copy_dir(&shop_pack_dir(), &pack);
    std::fs::write(pack.join("alerts.json"), "[]").unwrap();
    let (out, v) = ask(home.path(), &["--pack", pack.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(failed_metrics(&v).is_empty(), "{v}");
}

/// A pack file that is not a regular file: a named pipe blocks whoever
/// opens it until a writer comes, and `/dev/zero` or `/dev/urandom` never
/// end. Each is a failed source that says what it is, within seconds:
/// never a hang, never memory exhausted.
#[test]
fn pack_files_that_are_pipes_or_devices_fail_at_once() {
    type Make<'a> = &'a dyn Fn(&Path);
    let cases: [(&str, &str, Make); 3] = [
        ("logs.jsonl", "a named pipe", &|p: &Path| {
            let made = std::process::Command::new("mkfifo").arg(p).status();
            assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", p.display());
        }),
        ("logs.jsonl", "a device", &|p: &Path| {
            std::os::unix::fs::symlink("/dev/urandom", p).unwrap();
        }),
        ("alerts.json", "a device", &|p: &Path| {
            std::os::unix::fs::symlink("/dev/zero", p).unwrap();
        }),
    ];
    for (file, what, make) in cases {
        let home = tempfile::tempdir().unwrap();
        let pack = home.path().join("pack");
        copy_dir(&shop_pack_dir(), &pack);
        std::fs::remove_file(pack.join(file)).unwrap();
        make(&pack.join(file));
        let mut cmd = diagraph_bin();
        isolate(&mut cmd, home.path());
        let mut child = cmd
            .arg("--database-url")
            .arg(format!("sqlite:{}", home.path().join("d.db").display()))
            .args(["--pack", pack.to_str().unwrap()])
            .args(["ask", "why is payment-service slow?", "--json"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > std::time::Duration::from_secs(60) {
                let _ = child.kill();
                panic!("{file} as {what}: ask still running after 60 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{file}: {}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let needle = format!("{file}: cannot read: not a regular file ({what})");
        let failed = v["failed_sources"].as_array().unwrap();
        assert!(
            failed
                .iter()
                .any(|f| f["message"].as_str().unwrap().contains(&needle)),
            "{needle}: {failed:?}"
        );
        assert!(v["answer"].as_str().unwrap().contains(&needle), "{v}");
        assert_ne!(v["effective_verdict"], "PASS", "{v}");
    }
}

/// A knowledge document with invalid UTF-8 is read with the bytes
/// replaced, and the load warning says so (as for every other pack file).
#[test]
fn a_knowledge_file_with_invalid_utf8_is_warned_about() {
    let home = tempfile::tempdir().unwrap();
    let pack = home.path().join("pack");
    copy_dir(&shop_pack_dir(), &pack);
    let domain = std::fs::read_dir(pack.join("knowledge"))
        .unwrap()
        .flatten()
        .find(|e| e.file_type().unwrap().is_dir())
        .unwrap()
        .path();
    std::fs::write(
        domain.join("bad.md"),
        b"# Pool\n\nmax \xff\xfe connections\n",
    )
    .unwrap();
    let (out, v) = ask(home.path(), &["--pack", pack.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let warnings = v["sources"]["pack_warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| {
            let w = w.as_str().unwrap();
            w.ends_with("bad.md: file is not valid UTF-8; invalid bytes replaced")
        }),
        "{warnings:?}"
    );
}

// ---- Prometheus --------------------------------------------------------

/// A Prometheus-compatible server that answers every GET with `body`
/// (200, JSON); its URL.
fn answering_server(body: Value) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let body = body.to_string();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let body = body.clone();
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = conn.write_all(reply.as_bytes());
            });
        }
    });
    format!("http://{addr}")
}

/// Thanos, Cortex and Mimir answer "success" with only some of their
/// stores and say so in `warnings`: the alerts that did come back are
/// evidence, but the invocation is partial and the answer says the
/// alerts may be incomplete, naming the server's warning.
#[test]
fn a_prometheus_answer_with_warnings_is_partial_not_whole() {
    let active_at = (chrono::Utc::now() - chrono::Duration::minutes(20)).to_rfc3339();
    let url = answering_server(json!({
        "status": "success",
        "warnings": ["partial response: store 10.0.0.3:10901 unavailable"],
        "data": {"alerts": [{
            "labels": {"alertname": "HighLatency", "service": "payment-service", "severity": "critical"},
            "annotations": {"summary": "payment-service p99 latency above 2s"},
            "state": "firing",
            "activeAt": active_at,
            "value": "2.7"
        }]}
    }));
    let home = tempfile::tempdir().unwrap();
    let pack = shop_pack_dir();
    let (out, v) = ask(
        home.path(),
        &["--pack", pack.to_str().unwrap(), "--prometheus-url", &url],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answer = v["answer"].as_str().unwrap();
    assert!(
        answer.contains("Prometheus warned that the alerts may be incomplete: partial response: store 10.0.0.3:10901 unavailable"),
        "{answer}"
    );
}

/// A body without `data.alerts` is a bad answer (the server broke its
/// API), not an error the server reported.
#[test]
fn a_prometheus_answer_without_an_alert_list_is_a_bad_response() {
    let url = answering_server(json!({"status": "success", "data": {"alerts": "none"}}));
    let home = tempfile::tempdir().unwrap();
    let pack = shop_pack_dir();
    let (out, v) = ask(
        home.path(),
        &["--pack", pack.to_str().unwrap(), "--prometheus-url", &url],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let failed: Vec<&Value> = v["failed_sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["tool"] == "query_metrics")
        .collect();
    assert!(!failed.is_empty(), "{v}");
    for f in failed {
        assert_eq!(f["class"], "bad_response", "{f}");
        assert!(
            f["message"]
                .as_str()
                .unwrap()
                .contains("answered without a data.alerts list"),
            "{f}"
        );
    }
    assert_ne!(v["effective_verdict"], "PASS", "{v}");
}

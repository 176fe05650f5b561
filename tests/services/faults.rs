//! Fault injection: every external dependency broken in every way
//! (refused, hang, 5xx, garbage body, truncated data), driven through the
//! real binary; here the model endpoint and Prometheus, the database and
//! pack files in `faults_storage.rs`. Each case checks what the user sees
//! (the failure class and plain-words message, the "What could not be
//! checked" section, the verdict), the exit code, and that nothing was
//! lost or left RUNNING. The README's fault table is these two files in
//! prose.
//!
//! The HTTP dependencies are `broken_server`s: a raw TCP server in this
//! process that breaks each exchange the way it is told to.

use crate::broken_server::{Fault, QUICK_TIMEOUTS, broken_server, broken_server_reporting};
use crate::helpers::shop_pack_dir;
use crate::sandbox::{Sandbox, code, failed_sources, stderr};
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

// ---- model endpoint -----------------------------------------------------

/// A model that cannot answer degrades the run (exit 3) with a failure
/// that says the model could not be reached and why, and the answer says
/// it too; the run is stored SUCCESS/degraded, never RUNNING.
fn model_case(fault: Fault, class: &str, needles: &[&str]) {
    model_case_of(fault, &[class], needles);
}

fn model_case_of(fault: Fault, classes: &[&str], needles: &[&str]) {
    let sb = Sandbox::with_config(QUICK_TIMEOUTS);
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
    let sb = Sandbox::with_config(QUICK_TIMEOUTS);
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
    // A model that hangs longer than the test: only the signal ends it.
    let sb = Sandbox::with_config("[model]\ntimeout_secs = 60\n");
    let (url, requests) = broken_server_reporting(Fault::Hang);
    let child = sb
        .ask_model_cmd(&url)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The planner's request has reached the model: the run is stored and
    // waiting on it.
    requests
        .recv_timeout(Duration::from_secs(30))
        .expect("the planner called the model");
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
    let sb = Sandbox::with_config(QUICK_TIMEOUTS);
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
    let sb = Sandbox::with_config(QUICK_TIMEOUTS);
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

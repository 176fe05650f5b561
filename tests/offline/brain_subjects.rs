//! The offline brain answers the question it was asked, on a small pack
//! of an invented system (syslog-style programs, hosts in a record field,
//! levels written as single letters): INFO evidence is found, what a
//! keyword query found is shown, a rare crash outranks a routine warning,
//! an alias and a host are subjects, and a subject nothing holds is said
//! so, never answered with PASS.

use crate::brain::ask;
use diagraph::engine::RunOutcome;
use diagraph::vocab::contracts::Verdict;
use serde_json::json;
use std::path::PathBuf;

/// The pack: 300 routine cron lines, 200 throttling warnings, one kernel
/// panic, 40 failed logins at INFO from one address, 5 accepted logins,
/// 3 proxy errors; every record carries its host.
fn pack() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ops");
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(
        path.join("pack.toml"),
        "name = \"ops\"\nservices = [\"sshd\", \"kernel\", \"crond\", \"web-frontend\"]\n\
         [aliases]\nstorefront = [\"web-frontend\"]\n",
    )
    .unwrap();
    let mut lines: Vec<(String, serde_json::Value)> = Vec::new();
    let ts = |m: u32, s: u32| format!("2026-03-01T10:{m:02}:{s:02}Z");
    for i in 0..300 {
        let t = ts(i / 10, i % 60);
        lines.push((t.clone(), json!({"ts": t, "service": "crond", "level": "I", "host": "app-01",
            "message": format!("pam_unix(crond:session): session opened for user root by (uid={i})")})));
    }
    for i in 0..200 {
        let t = ts(i / 7, (i * 7) % 60);
        lines.push((t.clone(), json!({"ts": t, "service": "kernel", "level": "W", "host": "app-01",
            "message": format!("CPU{} temperature above threshold, cpu clock throttled (total events = {i})", i % 4)})));
    }
    let t = ts(20, 5);
    lines.push((
        t.clone(),
        json!({"ts": t, "service": "kernel", "level": "F", "host": "app-01",
        "message": "Kernel panic - not syncing: Fatal exception in interrupt"}),
    ));
    for i in 0..40 {
        let t = ts(25 + i / 10, (i * 3) % 60);
        lines.push((t.clone(), json!({"ts": t, "service": "sshd", "level": "I", "host": "bastion-01",
            "message": format!("Failed password for invalid user admin from 203.0.113.7 port {} ssh2", 40000 + i)})));
    }
    for i in 0..5 {
        let t = ts(12 + i, 30);
        lines.push((t.clone(), json!({"ts": t, "service": "sshd", "level": "I", "host": "bastion-01",
            "message": format!("Accepted publickey for deploy from 198.51.100.4 port {} ssh2", 50000 + i)})));
    }
    for i in 0..3 {
        let t = ts(27, 10 + i);
        lines.push((t.clone(), json!({"ts": t, "service": "web-frontend", "level": "E", "host": "web-02",
            "message": "upstream timed out (110: Connection timed out) while reading response header from upstream"})));
    }
    lines.sort_by(|a, b| a.0.cmp(&b.0));
    let body: String = lines.iter().map(|(_, l)| format!("{l}\n")).collect();
    std::fs::write(path.join("logs.jsonl"), body).unwrap();
    std::fs::write(
        path.join("alerts.json"),
        json!({"status": "success", "data": {"alerts": []}}).to_string(),
    )
    .unwrap();
    (dir, path)
}

fn verdict(o: &RunOutcome) -> Option<Verdict> {
    o.end.effective_verdict
}

/// Claim texts the Executor wrote, in its order, that the Gatekeeper
/// passed.
fn verified(o: &RunOutcome) -> Vec<String> {
    let gk = o
        .self_evaluation
        .verifier_evaluation
        .gatekeeper_result
        .clone()
        .expect("gatekeeper ran");
    let out = o
        .self_evaluation
        .verifier_evaluation
        .executor_structured_output
        .clone()
        .expect("executor output");
    out.claims
        .iter()
        .filter(|c| {
            gk.checked_bindings.iter().any(|b| {
                b.claim_id == c.claim_id
                    && b.status == diagraph::vocab::contracts::BindingStatus::Pass
            })
        })
        .map(|c| c.claim_text.clone())
        .collect()
}

#[tokio::test]
async fn info_evidence_is_found_and_stated() {
    let (_t, dir) = pack();
    let o = ask(&dir, "Were there failed password attempts on sshd?").await;
    let claims = verified(&o);
    assert!(
        claims
            .iter()
            .any(|c| c.contains("Failed password") && c.contains("logged I lines")),
        "{claims:#?}\n{}",
        o.end.answer
    );
    assert!(o.end.answer.contains("Failed password"), "{}", o.end.answer);
    // the masked address keeps its concrete example
    assert!(o.end.answer.contains("203.0.113.7"), "{}", o.end.answer);
}

#[tokio::test]
async fn what_a_keyword_query_found_is_shown() {
    let (_t, dir) = pack();
    let o = ask(&dir, "Did anyone log \"Accepted publickey\"?").await;
    assert!(
        o.end.answer.contains("Accepted publickey"),
        "{}",
        o.end.answer
    );
}

#[tokio::test]
async fn a_rare_crash_outranks_a_routine_warning() {
    let (_t, dir) = pack();
    let o = ask(&dir, "What went wrong on the kernel?").await;
    let claims = verified(&o);
    let panic = claims.iter().position(|c| c.contains("Kernel panic"));
    let throttled = claims.iter().position(|c| c.contains("throttled"));
    assert!(panic.is_some(), "{claims:#?}");
    assert!(
        throttled.is_none_or(|t| panic < Some(t)),
        "the crash comes first: {claims:#?}"
    );
}

#[tokio::test]
async fn single_letter_levels_are_levels() {
    let (_t, dir) = pack();
    let o = ask(&dir, "Did web-frontend log any errors?").await;
    let claims = verified(&o);
    assert!(
        claims.iter().any(|c| c.contains("upstream timed out")),
        "{claims:#?}\n{}",
        o.end.answer
    );
    let o = ask(&dir, "Did the kernel log any fatal errors?").await;
    assert!(
        verified(&o).iter().any(|c| c.contains("Kernel panic")),
        "{}",
        o.end.answer
    );
}

#[tokio::test]
async fn an_alias_is_a_subject_under_the_name_the_sources_hold() {
    let (_t, dir) = pack();
    let o = ask(&dir, "Is the storefront failing?").await;
    assert!(
        o.end
            .answer
            .contains("storefront (in the sources as web-frontend): verified evidence found."),
        "{}",
        o.end.answer
    );
    assert!(
        verified(&o)
            .iter()
            .any(|c| c.contains("upstream timed out")),
        "{}",
        o.end.answer
    );
}

#[tokio::test]
async fn a_host_is_a_subject_found_in_its_records() {
    let (_t, dir) = pack();
    let o = ask(&dir, "What happened on bastion-01 in the last 10 minutes?").await;
    assert!(
        o.end
            .answer
            .contains("bastion-01: verified evidence found."),
        "{}",
        o.end.answer
    );
    assert!(
        verified(&o).iter().any(|c| c.contains("Failed password")),
        "{}",
        o.end.answer
    );
    assert!(!o.end.answer.contains("No service named bastion-01"));
}

#[tokio::test]
async fn a_subject_nothing_holds_is_said_so_and_never_passes() {
    let (_t, dir) = pack();
    for q in ["Why is billing-db slow?", "billing-db 为什么变慢？"] {
        let o = ask(&dir, q).await;
        let said = if q.is_ascii() {
            "No evidence about billing-db: no source holds that name."
        } else {
            "没有关于 billing-db 的证据：没有任何数据源包含这个名称。"
        };
        assert!(o.end.answer.contains(said), "{}", o.end.answer);
        assert_ne!(verdict(&o), Some(Verdict::Pass), "{}", o.end.answer);
        // anything else found is other activity, not the answer
        assert!(
            !o.end.answer.contains("Findings:") && !o.end.answer.contains("Likely cause:"),
            "{}",
            o.end.answer
        );
    }
}

#[tokio::test]
async fn a_plain_word_of_the_question_is_not_taken_for_a_service() {
    let (_t, dir) = pack();
    let o = ask(&dir, "Why is checkout slow?").await;
    assert!(
        !o.end.answer.contains("No service named checkout")
            && !o.end.answer.contains("No evidence about checkout"),
        "{}",
        o.end.answer
    );
}

//! What keeps an honest offline answer free of noise, on the shipped shop
//! pack and on a pack generated here with other names (so nothing passes
//! by knowing the shop): counted findings are stated, not replaced by
//! quoted evidence (a count only where a ref states it); next steps are
//! about the services the answer is about; and a pattern below ERROR that
//! coincides with a firing alert is offered as a possible cause, a
//! hypothesis, under the same time rule as a cause.

use crate::brain::ask;
use crate::helpers::shop_pack_dir;
use diagraph::engine::RunOutcome;
use diagraph::vocab::contracts::ExecutorEvidence;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A pricing platform: quote-engine stalls on heap compaction while its
/// latency alert fires; a flood of cache warnings ended an hour before
/// (more lines than a query shows, so the tool states their count); disk
/// warnings from four weeks before. The skill's procedure also asks for
/// the router's 5xx handling, and the router runbook shares words with a
/// slow service.
fn write_pricing_pack(dir: &Path) {
    for d in [
        "knowledge/router",
        "knowledge/runtime",
        "skills/diagnose-slowness",
    ] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    std::fs::write(
        dir.join("pack.toml"),
        "name = \"pricing\"\ndescription = \"generated\"\nservices = [\"edge-router\", \"quote-engine\", \"catalog-db\", \"audit-worker\"]\nnow = \"2031-05-06T12:30:00Z\"\n",
    )
    .unwrap();
    let mut logs: Vec<Value> = Vec::new();
    for i in 0..3 {
        logs.push(json!({"ts": format!("2031-04-08T09:0{i}:00Z"), "service": "quote-engine", "level": "WARN",
            "message": format!("disk quota nearly reached on volume vol-{i}")}));
    }
    for i in 0..80 {
        logs.push(json!({"ts": format!("2031-05-06T11:{:02}:{:02}Z", i / 4, (i % 4) * 15), "service": "quote-engine", "level": "WARN",
            "message": format!("cache refresh lagging behind by {} entries", 100 + i)}));
    }
    for i in 0..10 {
        logs.push(json!({"ts": format!("2031-05-06T12:{:02}:07Z", i * 3), "service": "quote-engine", "level": "WARN",
            "message": format!("heap compaction stalled request threads for {}ms", 400 + 37 * i)}));
    }
    for i in 0..4 {
        logs.push(json!({"ts": format!("2031-05-06T12:0{i}:30Z"), "service": "audit-worker", "level": "INFO",
            "message": "audit batch flushed"}));
    }
    logs.sort_by(|a, b| a["ts"].as_str().cmp(&b["ts"].as_str()));
    let body: String = logs.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("logs.jsonl"), body).unwrap();
    let alerts = json!({"status": "success", "data": {"alerts": [
        {"labels": {"alertname": "QuoteEngineSlow", "service": "quote-engine", "severity": "warning"},
         "annotations": {"summary": "p99 latency of quote-engine above 2s"}, "state": "firing",
         "activeAt": "2031-05-06T12:05:00Z", "value": "3.4"}
    ]}});
    std::fs::write(dir.join("alerts.json"), alerts.to_string()).unwrap();
    std::fs::write(
        dir.join("knowledge/router/upstream-5xx.md"),
        "# Router 502 and 504 errors from an upstream\n\n## Diagnosis\n\n1. Split the router errors by upstream cluster: one cluster dominating means the problem is behind the router.\n2. Compare the router timeout with the latency of a slow upstream.\n\n## Mitigation\n\nShorten the router timeout so clients of a slow upstream fail fast.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("knowledge/runtime/heap.md"),
        "# Heap compaction stalls\n\n## Diagnosis\n\n1. Compare the compaction stall times with the latency of the slow requests.\n2. Read the heap statistics after each compaction.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("skills/diagnose-slowness/SKILL.md"),
        "---\nname: diagnose-slowness\ndescription: Requests are slow or time out end to end (latency alert, router 504s); find the slowest hop.\n---\n\n1. Query latency alerts for the service.\n2. Query the service's WARN and ERROR logs in the same window.\n3. Look up the knowledge base for the cause you found and for router 5xx handling.\n",
    )
    .unwrap();
}

fn pricing_pack() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pricing");
    write_pricing_pack(&dir);
    (tmp, dir)
}

fn executor_output(o: &RunOutcome) -> ExecutorEvidence {
    o.self_evaluation
        .verifier_evaluation
        .executor_structured_output
        .clone()
        .expect("executor output")
}

/// The lines of the answer's findings and likely cause (not the
/// unverified section).
fn finding_lines(answer: &str) -> Vec<&str> {
    let verified = answer
        .split("Not verified")
        .next()
        .unwrap_or(answer)
        .split("未经验证")
        .next()
        .unwrap_or(answer);
    verified.lines().filter(|l| l.starts_with("- ")).collect()
}

#[tokio::test]
async fn counted_findings_are_stated_not_quoted() {
    let shop = shop_pack_dir();
    let (_tmp, pricing) = pricing_pack();
    for (dir, q) in [
        (&shop, "why is payment-service slow?"),
        (&shop, "支付服务为什么这么慢？"),
        (
            &shop,
            "Why is checkout failing with 504s at the api-gateway?",
        ),
        (&pricing, "why is quote-engine slow?"),
        (&pricing, "quote-engine 为什么这么慢？"),
    ] {
        let o = ask(dir, q).await;
        let answer = &o.end.answer;
        assert!(
            !answer.contains("Recorded evidence") && !answer.contains("记录的证据"),
            "{q}: every finding passes the statement check as written:\n{answer}"
        );
        assert!(
            finding_lines(answer).len() >= 2,
            "{q}: findings are shown:\n{answer}"
        );
    }
}

#[tokio::test]
async fn a_count_is_stated_only_where_a_ref_states_it() {
    let (_tmp, dir) = pricing_pack();
    let o = ask(&dir, "why is quote-engine slow?").await;
    let answer = &o.end.answer;
    // The flood: more lines than the query shows, so its ref states 80.
    let flood = finding_lines(answer)
        .into_iter()
        .find(|l| l.contains("cache refresh lagging"))
        .unwrap_or_else(|| panic!("the flood is a finding:\n{answer}"));
    assert!(flood.contains("80 WARN lines"), "{flood}");
    // The stalls: every line is shown and bound; no ref states 10.
    let stalls = finding_lines(answer)
        .into_iter()
        .find(|l| l.contains("heap compaction stalled"))
        .unwrap_or_else(|| panic!("the stalls are a finding:\n{answer}"));
    assert!(
        !stalls.contains("10 WARN") && stalls.contains("WARN lines") && stalls.contains("x10]"),
        "the citation carries the count: {stalls}"
    );
}

#[tokio::test]
async fn next_steps_are_about_the_services_the_answer_is_about() {
    let (_tmp, dir) = pricing_pack();
    for q in ["why is quote-engine slow?", "quote-engine 为什么这么慢？"] {
        let o = ask(&dir, q).await;
        let out = executor_output(&o);
        assert!(
            out.recommended_actions
                .iter()
                .all(|a| !a.action_text.contains("router")),
            "{q}: no step of the router's runbook: {:?}",
            out.recommended_actions
        );
        assert!(!o.end.answer.contains("router"), "{q}: {}", o.end.answer);
    }
    let shop = shop_pack_dir();
    for q in ["why is payment-service slow?", "支付服务为什么这么慢？"] {
        let o = ask(&shop, q).await;
        assert!(
            !o.end.answer.to_lowercase().contains("gateway"),
            "{q}: no step of the gateway's runbook:\n{}",
            o.end.answer
        );
    }
    // Asked about the gateway, its runbook's steps are the answer's.
    let o = ask(
        &shop,
        "Why is checkout failing with 504s at the api-gateway?",
    )
    .await;
    assert!(
        o.end.answer.contains("Group gateway errors by route"),
        "{}",
        o.end.answer
    );
}

#[tokio::test]
async fn a_warning_pattern_in_an_alerts_window_is_a_possible_cause_not_a_finding() {
    let (_tmp, dir) = pricing_pack();
    for (q, lead, gap) in [
        (
            "why is quote-engine slow?",
            "Possible cause on quote-engine, not confirmed",
            "No ERROR-level pattern coincides",
        ),
        (
            "quote-engine 为什么这么慢？",
            "quote-engine 的可能原因（未经确认）",
            "没有 ERROR 级别的日志模式",
        ),
    ] {
        let o = ask(&dir, q).await;
        let out = executor_output(&o);
        assert!(
            out.claims.iter().all(|c| c.claim_type != "root_cause"),
            "{q}: WARN lines are no confirmed cause: {:?}",
            out.claims
        );
        let possible: Vec<&str> = out
            .hypotheses
            .iter()
            .map(|h| h.hypothesis_text.as_str())
            .filter(|h| h.starts_with(lead))
            .collect();
        // The stalls overlap the alert's window; the cache flood ended an
        // hour before it and the disk warnings four weeks before: history.
        assert_eq!(possible.len(), 1, "{q}: {:?}", out.hypotheses);
        assert!(
            possible[0].contains("heap compaction stalled"),
            "{}",
            possible[0]
        );
        assert!(possible[0].contains("QuoteEngineSlow"), "{}", possible[0]);
        assert!(
            out.missing_info.iter().any(|m| m.starts_with(gap)),
            "{q}: the gap says the possible cause is unconfirmed: {:?}",
            out.missing_info
        );
        assert!(o.end.answer.contains(lead), "{q}: {}", o.end.answer);
        // Its bindings are checked, and pass.
        let gk = o
            .self_evaluation
            .verifier_evaluation
            .gatekeeper_result
            .clone()
            .expect("gatekeeper result");
        assert!(
            gk.unverified_bindings
                .iter()
                .all(|b| b.status == diagraph::vocab::contracts::BindingStatus::Pass),
            "{q}: {:?}",
            gk.unverified_bindings
        );
    }
    // On the shop pack: the GC pauses under the CPU alert.
    let o = ask(&shop_pack_dir(), "why is payment-service slow?").await;
    let out = executor_output(&o);
    assert!(
        out.hypotheses.iter().any(|h| h
            .hypothesis_text
            .starts_with("Possible cause on payment-service")
            && h.hypothesis_text.contains("GC pause")
            && h.hypothesis_text.contains("HighCPUUsage")),
        "{:?}",
        out.hypotheses
    );
}

/// An ingest service failing five ways at once while its error alert
/// fires, also warning about session tokens; one error pattern starts
/// with an address and masks parts of names.
fn write_ingest_pack(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("pack.toml"),
        "name = \"ingest\"\ndescription = \"generated\"\nservices = [\"ingest-node\", \"shard-keeper\"]\nnow = \"2032-09-10T08:30:00Z\"\n",
    )
    .unwrap();
    let mut logs: Vec<Value> = Vec::new();
    let errors = [
        "write rejected for batch b-{i}: quota exceeded",
        "checksum mismatch on segment seg-{i}",
        "flush of memtable mt-{i} aborted",
        "index build failed for table t{i}",
        "replica r{i} lagging beyond limit",
    ];
    for (k, e) in errors.iter().enumerate() {
        for i in 0..3 {
            logs.push(json!({"ts": format!("2032-09-10T08:{:02}:{:02}Z", 5 + k * 4 + i, 10 + k), "service": "ingest-node",
                "level": "ERROR", "message": e.replace("{i}", &(i * 7 + k).to_string())}));
        }
    }
    for i in 0..12 {
        logs.push(json!({"ts": format!("2032-09-10T08:{:02}:41Z", 4 + i * 2), "service": "ingest-node", "level": "ERROR",
            "message": format!("10.0.0.{i}:7000:Got stale shard map shard_{i}_{}_r_{} for /10.0.1.{}:", i + 3, i % 3, i + 20)}));
    }
    for i in 0..6 {
        logs.push(json!({"ts": format!("2032-09-10T08:{:02}:05Z", 10 + i * 3), "service": "ingest-node", "level": "WARN",
            "message": format!("could not renew session token for tenant tn-{i}")}));
    }
    logs.sort_by(|a, b| a["ts"].as_str().cmp(&b["ts"].as_str()));
    let body: String = logs.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("logs.jsonl"), body).unwrap();
    let alerts = json!({"status": "success", "data": {"alerts": [
        {"labels": {"alertname": "IngestErrors", "service": "ingest-node", "severity": "critical"},
         "annotations": {"summary": "ingest-node error ratio above 2%"}, "state": "firing",
         "activeAt": "2032-09-10T08:06:00Z", "value": "0.07"}
    ]}});
    std::fs::write(dir.join("alerts.json"), alerts.to_string()).unwrap();
}

#[tokio::test]
async fn the_lines_a_question_names_come_before_louder_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ingest");
    write_ingest_pack(&dir);
    for q in [
        "Is ingest-node warning about session token renewal?",
        "ingest-node 有没有关于 session token 的警告？",
    ] {
        let o = ask(&dir, q).await;
        assert!(
            finding_lines(&o.end.answer)
                .iter()
                .any(|l| l.contains("could not renew session token")),
            "{q}: the asked-about lines are a finding:\n{}",
            o.end.answer
        );
    }
}

#[tokio::test]
async fn causes_and_masked_patterns_are_stated_in_both_languages() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ingest");
    write_ingest_pack(&dir);
    for (q, cause) in [
        ("why is ingest-node failing?", "Likely cause"),
        ("ingest-node 为什么报错？", "可能原因"),
    ] {
        let o = ask(&dir, q).await;
        let answer = &o.end.answer;
        assert!(answer.contains(cause), "{q}: {answer}");
        assert!(
            !answer.contains("Recorded evidence") && !answer.contains("记录的证据"),
            "{q}: every finding passes the statement check as written:\n{answer}"
        );
    }
    let shop = shop_pack_dir();
    let o = ask(&shop, "api-gateway 为什么一直返回 504？").await;
    assert!(!o.end.answer.contains("记录的证据"), "{}", o.end.answer);
}

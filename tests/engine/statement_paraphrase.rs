//! Honest paraphrases of the answer check, each
//! fixed as a class: rule-level tables in English and Chinese (the honest
//! paraphrases that must pass next to the lies that must fail) and runs
//! through the engine on the adversarial run shape (`answer_rules_engine.rs`).
//!
//! This file: honest wording that was over-rejected (Chinese words
//! with a negator character inside, 无法 against "not", exact unit
//! conversions, English month names and year-less 月日). Cause words:
//! `statement_links.rs`; state words and the unverified section:
//! `statement_polarity.rs`.

use crate::answer_rules_engine::{compose, composer, honest_composer};
use crate::helpers::{evidence, invocation};
use diagraph::engine::nodes::gatekeeper::{GatekeeperRules, check};
use diagraph::evidence::answer::check_text;
use diagraph::evidence::facts::grounded::Added;
use diagraph::vocab::contracts::{Verification, parse_executor_evidence};
use diagraph::vocab::dto::{AllowedClaim, VerifiedEvidence};
use diagraph::vocab::graph::Outcome;
use diagraph::vocab::tool::{EvidenceStatus, ToolInvocation};
use serde_json::json;

pub const CPU: &str = "alertname=HighCPUUsage service=payment-service severity=critical state=firing value=92% active_for=25m since=2026-07-08T22:40:00Z summary=CPU usage above 90%";
pub const LAT: &str = "alertname=HighRequestLatency service=order-service severity=warning state=firing value=31.2 active_for=12m since=2026-07-08T22:53:00Z summary=p99 latency of order-service above 2s";
pub const LOG: &str = "2026-07-08T23:05:28Z ERROR order-service HikariPool-1 - Connection is not available, request timed out after 30000ms";
pub const KB: &str = "[database] runbooks/db.md > Likely causes: slow queries hold connections for a long time, so the pool is exhausted and requests time out after 30000ms";

pub fn names() -> Vec<String> {
    ["payment-service", "order-service", "inventory-service"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// A verified claim of `claim_type` resting on `texts`, each from `tool`.
pub fn claim_on(id: &str, claim_type: &str, tool: &str, texts: &[&str]) -> AllowedClaim {
    AllowedClaim {
        claim_id: id.into(),
        claim_type: claim_type.into(),
        claim_text: "t".into(),
        verification: Verification::DirectEvidence,
        is_negative: false,
        evidence: texts
            .iter()
            .map(|t| VerifiedEvidence {
                claim_id: id.into(),
                source_invocation_id: 1,
                tool_name: tool.into(),
                raw_path: "$.logs[0]".into(),
                matched_text: (*t).into(),
            })
            .collect(),
    }
}

/// The answer check of `statement` over one observation claim per text.
pub fn statement(statement: &str, texts: &[&str]) -> Option<Added> {
    let claims: Vec<AllowedClaim> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            // an alert's text comes from query_metrics, a log line's from query_logs
            let tool = if t.starts_with("alertname=") {
                "query_metrics"
            } else {
                "query_logs"
            };
            claim_on(&format!("c{i}"), "observation", tool, &[t])
        })
        .collect();
    let refs: Vec<&AllowedClaim> = claims.iter().collect();
    check_text(statement, &refs, &names())
}

pub fn gate(path: &str, ref_text: &str, excerpt: &str) -> bool {
    let tool = if path.starts_with("$.alerts") {
        "query_metrics"
    } else {
        "query_logs"
    };
    let inv = ToolInvocation {
        id: 21,
        step_id: Some(1),
        duration_ms: 3,
        ..invocation(
            7,
            21,
            tool,
            EvidenceStatus::Supported,
            vec![evidence(path, ref_text)],
        )
    };
    let text = json!({"answer_version": "executor_evidence_v2", "claims": [{"claim_id": "c1",
        "claim_type": "observation", "claim_text": "t", "support_level": "direct",
        "evidence_bindings": [{"tool_name": tool, "source_invocation_id": 21, "raw_path": path,
        "evidence_excerpt": excerpt}]}], "hypotheses": [], "recommended_actions": [], "missing_info": []})
    .to_string();
    let r = check(
        &parse_executor_evidence(&text).unwrap(),
        &[inv],
        &GatekeeperRules::shipped(),
    );
    r.status == "pass"
}

#[test]
fn honest_chinese_and_english_paraphrases_pass() {
    for (s, ev) in [
        // 级别 特别 是否 能否 区别: a negator character inside a word
        (
            "payment-service 的 HighCPUUsage 告警级别为 critical，正在触发。",
            CPU,
        ),
        (
            "payment-service 的 HighCPUUsage 告警（级别 critical）正在触发，CPU 为 92%。",
            CPU,
        ),
        (
            "payment-service 的 HighCPUUsage 告警正在触发，特别是 CPU 达到 92%。",
            CPU,
        ),
        // 无法 for "not": the negation of the same connection
        ("order-service 连接不可用，请求在 30000ms 后超时。", LOG),
        (
            "order-service 的 HikariPool-1 连接不可用，30000ms 后超时。",
            LOG,
        ),
        ("order-service 的 HikariPool-1 连接不可用。", LOG),
        (
            "order-service HikariPool-1 has no available connection; requests time out after 30000ms.",
            LOG,
        ),
        // exact unit conversions
        (
            "order-service HikariPool-1: the request timed out after 30 seconds.",
            LOG,
        ),
        ("order-service HikariPool-1 timed out after 30s.", LOG),
        ("order-service 的请求在 30 秒后超时。", LOG),
        ("order-service 的请求在 0.5 分钟后超时。", LOG),
        (
            "payment-service HighCPUUsage has been firing for 1500 seconds.",
            CPU,
        ),
        // English month names and year-less 月日
        (
            "At 23:05:28 UTC on July 8, order-service logged an ERROR.",
            LOG,
        ),
        ("On Jul 8 23:05:28 order-service logged an ERROR.", LOG),
        (
            "payment-service HighCPUUsage has fired since July 8 at 22:40 UTC.",
            CPU,
        ),
        ("7月8日 23:05:28，order-service 报错。", LOG),
        ("order-service 于7月8日23:05报错。", LOG),
        ("2026年7月9日 07:05:28 (UTC+8)，order-service 报错。", LOG),
    ] {
        assert_eq!(statement(s, &[ev]), None, "{s}");
    }
}

#[test]
fn the_same_forms_still_catch_a_real_negation_or_a_wrong_value() {
    for (s, ev) in [
        // a real negator next to the words that no longer count
        (
            "payment-service 的 HighCPUUsage 告警级别不是 critical。",
            CPU,
        ),
        ("payment-service 的 HighCPUUsage 告警没有触发。", CPU),
        ("order-service 没有错误。", LOG),
        // conversions are exact, not rounded
        ("order-service HikariPool-1 timed out after 31s.", LOG),
        (
            "order-service HikariPool-1 timed out after 30 minutes.",
            LOG,
        ),
        ("order-service 的请求在 30 分钟后超时。", LOG),
        // dates are compared by their fields
        ("On July 9 order-service logged an ERROR.", LOG),
        ("On Jun 8 23:05:28 order-service logged an ERROR.", LOG),
        ("7月9日 23:05:28，order-service 报错。", LOG),
        ("order-service 于7月8日22:05报错。", LOG),
    ] {
        assert!(statement(s, &[ev]).is_some(), "{s}");
    }
}

#[test]
fn excerpts_quote_a_log_line_with_its_own_timestamp_in_any_rendering() {
    for excerpt in [
        "Jul 8 23:05:28 ERROR order-service HikariPool-1 - Connection is not available",
        "July 8, 23:05:28 ERROR order-service HikariPool-1 - Connection is not available",
        "7月8日 23:05:28 ERROR order-service HikariPool-1 - Connection is not available",
        "2026年7月9日 07:05:28 (UTC+8) ERROR order-service HikariPool-1 - Connection is not available",
    ] {
        assert!(gate("$.logs[0]", LOG, excerpt), "{excerpt}");
    }
    for excerpt in [
        "Jul 9 23:05:28 ERROR order-service HikariPool-1 - Connection is not available",
        "7月8日 23:06:28 ERROR order-service HikariPool-1 - Connection is not available",
        "Jul 8 23:05:28 ERROR order-service HikariPool-1 - Connection is available",
    ] {
        assert!(!gate("$.logs[0]", LOG, excerpt), "{excerpt}");
    }
    // 级别 in a Chinese ref is a word, not a negation, on both sides
    let zh = "告警=CPU使用率过高 服务=payment-service 级别=严重 状态=触发 当前值=92%";
    assert!(gate(
        "$.alerts[0]",
        zh,
        "服务=payment-service 级别=严重 状态=触发"
    ));
}

#[tokio::test]
async fn honest_chinese_statements_complete_on_the_first_composer_reply() {
    for (zh, s, ids) in [
        (
            true,
            "payment-service 的 HighCPUUsage 告警级别为 critical，数值 92。",
            &["c-cpu"][..],
        ),
        (
            true,
            "order-service 的 HikariPool-1 连接不可用，30000ms 后超时。",
            &["c-log"][..],
        ),
        (
            false,
            "order-service: the connection is not available, the request timed out after 30 seconds.",
            &["c-log"][..],
        ),
        (
            false,
            "payment-service HighCPUUsage fired on July 8 at 22:45 UTC.",
            &["c-cpu"][..],
        ),
    ] {
        let (out, attempts) = compose(zh, &[composer(&[(s, ids)]), honest_composer(zh)]).await;
        assert_eq!(attempts[0].0, Outcome::Completed, "{s}: {attempts:?}");
        assert!(out.end.answer.contains(s), "{}", out.end.answer);
    }
}

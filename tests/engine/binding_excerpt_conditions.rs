//! an excerpt keeps the condition or modal of the ref clause it
//! quotes (当…时, 如果, 可能, 应; if, when, may, should), so a runbook's
//! condition cannot become an observation; and a service name alone
//! (`order-service`) is one fact, too little to identify one ref.

use crate::answer_rules_engine::{
    LOG_EXCERPT, bind, claim, executor, honest_claims, scenario, verifier,
};
use crate::runs::{gatekeeper_results, run_scenario};
use crate::statement_paraphrase::{LOG, gate};

const KB_ZH: &str = "[database] runbooks/db.md > 连接池: 当连接池耗尽时，请求会在 30000ms 后超时，应检查慢查询和最大连接数 maximumPoolSize=20";
const KB_EN: &str = "[database] runbooks/db.md > Pool: if the HikariCP pool is exhausted, requests may time out after 30000ms; check slow queries and maximumPoolSize=20";
const ALERT_ZH: &str = "告警=CPU使用率过高 服务=payment-service 级别=严重 状态=触发 当前值=92% 说明=应用 CPU 使用率高于 90%";

#[test]
fn an_excerpt_that_drops_the_refs_condition_fails() {
    let kb = "$.logs[0]";
    for excerpt in [
        "连接池耗尽",
        "连接池耗尽时，请求会在 30000ms 后超时",
        "检查慢查询和最大连接数 maximumPoolSize=20",
    ] {
        assert!(!gate(kb, KB_ZH, excerpt), "{excerpt}");
    }
    for excerpt in [
        "the HikariCP pool is exhausted",
        "requests time out after 30000ms",
    ] {
        assert!(!gate(kb, KB_EN, excerpt), "{excerpt}");
    }
    for excerpt in [
        "当连接池耗尽时，请求会在 30000ms 后超时",
        "应检查慢查询和最大连接数 maximumPoolSize=20",
    ] {
        assert!(gate(kb, KB_ZH, excerpt), "{excerpt}");
    }
    for excerpt in [
        "if the HikariCP pool is exhausted, requests may time out after 30000ms",
        "check slow queries and maximumPoolSize=20",
    ] {
        assert!(gate(kb, KB_EN, excerpt), "{excerpt}");
    }
    // 当前 "current", 应用 "application" are no conditions
    assert!(gate(
        "$.alerts[0]",
        ALERT_ZH,
        "服务=payment-service 状态=触发 当前值=92%"
    ));
    assert!(gate(
        "$.alerts[0]",
        ALERT_ZH,
        "状态=触发 当前值=92% 说明=应用 CPU 使用率高于 90%"
    ));
}

#[test]
fn a_service_name_alone_does_not_identify_a_ref() {
    assert!(!gate("$.logs[0]", LOG, "order-service"));
    assert!(!gate("$.logs[0]", LOG, "order\u{2011}service"));
    assert!(gate("$.logs[0]", LOG, "order-service HikariPool-1"));
    assert!(gate("$.logs[0]", LOG, "ERROR order-service HikariPool-1"));
}

#[tokio::test]
async fn a_service_name_alone_binds_nothing_through_the_engine() {
    let mut claims = honest_claims();
    claims[2] = claim(
        "c-log",
        "symptom",
        "order-service HikariPool-1 has no available connection",
        vec![bind(2, "$.logs[0]", "order-service")],
    );
    let s = scenario(
        false,
        &executor(claims),
        &verifier(&["c-cpu", "c-lat", "c-log", "c-none"]),
        &[],
    );
    let (out, _, _) = run_scenario(&s).await;
    let gk = &gatekeeper_results(&out)[0];
    assert!(
        gk.failed_rules
            .iter()
            .any(|r| r == "binding.excerpt_identifies"),
        "{:?}",
        gk.failed_rules
    );
    // the honest quote of the same line still binds
    let s = scenario(
        false,
        &executor(honest_claims()),
        &verifier(&["c-cpu", "c-lat", "c-log", "c-none"]),
        &[],
    );
    let (out, _, _) = run_scenario(&s).await;
    let gk = &gatekeeper_results(&out)[0];
    assert_eq!(gk.status, "pass", "{:?} {LOG_EXCERPT}", gk.errors);
}

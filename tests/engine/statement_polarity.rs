//! state and health words beyond the excerpt rules' lists (ready,
//! working, silenced, benign, 畅通, 已解除, 误报...) may be said only when
//! the evidence says them, verbatim or as the same concept. a line of
//! the unverified section that concludes the system is resolved or
//! ignorable ("no action needed", 告警已解除, 可以忽略) is dropped and
//! recorded with `answer.unverified_conclusion`.

use crate::answer_rules_engine::{compose, composer, honest_composer};
use crate::statement_paraphrase::{CPU, LAT, LOG, statement};
use diagraph::evidence::facts::FactText;
use diagraph::evidence::facts::grounded::concludes;
use diagraph::vocab::graph::{NodeId, Outcome};
use serde_json::{Value, json};

const RESOLVED: &str = "alertname=DiskUsageHigh service=inventory-service severity=warning state=resolved value=70% summary=disk usage back under 80%";
const POOL: &str = "2026-07-08T23:05:40Z WARN order-service HikariPool-1 - Pool stats (total=10, active=10, idle=0, waiting=25): pool is saturated";
const READY: &str = "2026-07-08T23:20:00Z INFO order-service HikariPool-1 - Pool is ready again, all connections are working";

#[test]
fn a_state_the_evidence_does_not_say_is_rejected_in_english_and_chinese() {
    for (s, ev) in [
        (
            "order-service HikariPool-1 connections are ready again.",
            LOG,
        ),
        ("order-service HikariPool-1 is working again.", LOG),
        (
            "payment-service is operational despite the HighCPUUsage alert.",
            CPU,
        ),
        ("payment-service is online.", CPU),
        (
            "order-service is unaffected by the HighRequestLatency alert.",
            LAT,
        ),
        ("order-service HikariPool-1 timeouts are benign.", LOG),
        ("order-service HikariPool-1 timeouts can be ignored.", LOG),
        ("payment-service HighCPUUsage was silenced.", CPU),
        (
            "payment-service HighCPUUsage was acknowledged and fixed.",
            CPU,
        ),
        ("the order-service HikariPool-1 timeouts disappeared.", LOG),
        ("payment-service is overloaded at 92%.", CPU),
        ("order-service HikariPool-1 has plenty of connections.", LOG),
        ("order-service 的连接池充足。", LOG),
        ("order-service 的 HighRequestLatency 告警已解除。", LAT),
        ("order-service 的 HighRequestLatency 告警已静默。", LAT),
        (
            "order-service 的 HikariPool-1 超时可以忽略，只是误报。",
            LOG,
        ),
        ("order-service 的 HikariPool-1 连接畅通。", LOG),
        ("payment-service 运行平稳。", CPU),
        ("payment-service 的 HighCPUUsage 告警已消失。", CPU),
        ("payment-service 已过载。", CPU),
        ("order-service 的 HikariPool-1 已修复。", LOG),
        ("order-service 在线。", LAT),
    ] {
        let got = statement(s, &[ev]);
        assert!(got.is_some(), "{s}: {got:?}");
    }
}

#[test]
fn a_state_the_evidence_says_passes_in_its_words_or_as_its_concept() {
    for (s, ev) in [
        ("inventory-service DiskUsageHigh is resolved.", RESOLVED),
        ("inventory-service 的 DiskUsageHigh 告警已解除。", RESOLVED),
        (
            "inventory-service 的 DiskUsageHigh 告警已恢复，数值 70%。",
            RESOLVED,
        ),
        ("order-service HikariPool-1 is saturated: 0 idle.", POOL),
        (
            "order-service 的 HikariPool-1 连接池已饱和，25 个在等待。",
            POOL,
        ),
        ("order-service HikariPool-1 is ready again.", READY),
        ("order-service HikariPool-1 连接池已就绪。", READY),
        (
            "order-service HikariPool-1 connections are working again.",
            READY,
        ),
        // nouns that are no state where they stand
        (
            "order-service HikariPool-1 reports its pool stats: 10 active.",
            POOL,
        ),
    ] {
        assert_eq!(statement(s, &[ev]), None, "{s}");
    }
}

#[test]
fn unverified_lines_that_conclude_resolved_or_ignorable_are_found() {
    for s in [
        "No action needed: payment-service has recovered and the alert resolved",
        "inventory-service is clean, skip it",
        "The timeouts are harmless noise",
        "payment-service is operational; nothing to do",
        "无需处理，告警已解除",
        "HikariPool-1 超时可以忽略",
        "只是误报",
        "告警已经静默，服务运行平稳",
    ] {
        assert!(concludes(&FactText::new(s)).is_some(), "{s}");
    }
    // next steps that act, check or restore conclude nothing
    for s in [
        "Check the slow query log of order-service",
        "Restore the dependency first",
        "依赖不可用时先恢复依赖",
        "Raise the memory limit together with the heap size if the working set grew legitimately",
        "Confirm the pool is saturated: look for pool stats with idle=0",
        "检查 order-service 的慢查询并确认告警是否恢复",
        "不要忽略 WARN 日志",
    ] {
        assert_eq!(concludes(&FactText::new(s)), None, "{s}");
    }
}

#[tokio::test]
async fn a_state_the_evidence_does_not_say_is_rejected_through_the_engine() {
    for (zh, s, ids) in [
        (
            true,
            "order-service 的 HighRequestLatency 告警已静默。",
            &["c-lat"][..],
        ),
        (
            false,
            "order-service HikariPool-1 timeouts are benign and can be ignored.",
            &["c-log"][..],
        ),
        (
            true,
            "order-service 的 HikariPool-1 超时可以忽略，只是误报。",
            &["c-log"][..],
        ),
        (
            false,
            "order-service HikariPool-1 connections are ready again.",
            &["c-log"][..],
        ),
    ] {
        let (out, attempts) = compose(zh, &[composer(&[(s, ids)]), honest_composer(zh)]).await;
        assert_eq!(attempts[0].0, Outcome::InvalidOutput, "{s}");
        assert!(
            (attempts[0].1.contains("answer.statement_polarity")
                || attempts[0].1.contains("answer.statement_grounded")),
            "{s}: {}",
            attempts[0].1
        );
        assert!(!out.end.answer.contains(s), "{}", out.end.answer);
    }
}

#[tokio::test]
async fn a_next_step_that_concludes_is_dropped_and_recorded() {
    for (zh, step) in [
        (
            false,
            "No action needed: payment-service has recovered and the alert resolved",
        ),
        (false, "inventory-service is clean, skip it"),
        (true, "无需处理，告警已解除"),
        (true, "order-service 的超时可以忽略"),
    ] {
        let mut out: Value = serde_json::from_str(&honest_composer(zh)).unwrap();
        out["recommended_actions"] = json!([
            {"action_text": step, "reason": "r"},
            {"action_text": "check slow queries of order-service", "reason": "r"}
        ]);
        let (run, attempts) = compose(zh, &[out.to_string()]).await;
        assert_eq!(attempts[0].0, Outcome::Completed, "{attempts:?}");
        let a = &run.end.answer;
        assert!(!a.contains(step), "{step}: {a}");
        assert!(a.contains("check slow queries of order-service"), "{a}");
        let detail = crate::runs::finished(&run)
            .into_iter()
            .find(|(n, ..)| *n == NodeId::Composer)
            .map(|(.., d)| d)
            .unwrap();
        assert!(
            detail.contains("answer.unverified_conclusion"),
            "{step}: {detail}"
        );
    }
}

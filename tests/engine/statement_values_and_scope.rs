//! comparison words (less than, at most, 小于, 以下, 不足; more than,
//! at least, 大于, 以上, 高达) are states the evidence must say. And
//! severity and metric words (critical, warning, minor, memory, disk,
//! latency, average; 严重, 警告, 轻微, 内存, 磁盘, 延迟, 平均) are facts
//! the evidence must hold, so a reading is not moved to another metric or
//! severity. scope, quantity, change and relative-time words likewise.

use crate::answer_rules_engine::{compose, composer, honest_composer};
use crate::statement_paraphrase::{CPU, LAT, LOG, statement};
use diagraph::vocab::graph::Outcome;

#[test]
fn a_comparison_the_evidence_does_not_make_is_rejected() {
    for (s, ev) in [
        ("payment-service CPU usage is less than 90%.", CPU),
        ("payment-service CPU usage is at most 92%.", CPU),
        ("order-service p99 latency is within 2s.", LAT),
        ("payment-service 的 CPU 使用率小于 90%。", CPU),
        ("payment-service 的 CPU 使用率在 90% 以下。", CPU),
        ("payment-service 的 CPU 使用率少于 92%。", CPU),
        ("order-service 的 p99 延迟不足 2s。", LAT),
    ] {
        let got = statement(s, &[ev]);
        assert!(got.is_some(), "{s}: {got:?}");
    }
    for (s, ev) in [
        ("payment-service CPU usage is more than 90%.", CPU),
        ("payment-service 的 CPU 使用率大于 90%。", CPU),
        ("payment-service 的 CPU 使用率在 90% 以上。", CPU),
        ("order-service 的 p99 延迟高于 2s。", LAT),
    ] {
        assert_eq!(statement(s, &[ev]), None, "{s}");
    }
}

#[test]
fn a_severity_or_metric_the_evidence_does_not_name_is_rejected() {
    for (s, ev) in [
        ("payment-service memory usage is at 92.", CPU),
        ("payment-service 的内存使用率为 92%。", CPU),
        ("payment-service disk usage is at 92%.", CPU),
        ("payment-service HighCPUUsage is only a warning.", CPU),
        ("payment-service HighCPUUsage is a minor alert.", CPU),
        ("payment-service 的 HighCPUUsage 只是警告。", CPU),
        ("order-service 的 HighRequestLatency 只是轻微告警。", LAT),
        ("order-service HighRequestLatency is critical.", LAT),
        ("order-service average latency is above 2s.", LAT),
        ("order-service 的平均延迟高于 2s。", LAT),
        ("order-service HikariPool-1 latency is 30000ms.", LOG),
    ] {
        let got = statement(s, &[ev]);
        assert!(got.is_some(), "{s}: {got:?}");
    }
    for (s, ev) in [
        (
            "payment-service CPU usage is at 92%, a critical alert.",
            CPU,
        ),
        ("payment-service 的 CPU 告警级别严重，数值 92%。", CPU),
        ("order-service has a HighRequestLatency warning.", LAT),
        (
            "order-service 的 HighRequestLatency 警告正在触发，p99 延迟高于 2s。",
            LAT,
        ),
        ("order-service p99 latency is above 2s.", LAT),
    ] {
        assert_eq!(statement(s, &[ev]), None, "{s}");
    }
}

#[tokio::test]
async fn swapped_comparisons_and_metrics_are_rejected_through_the_engine() {
    for (zh, s, rule) in [
        (
            true,
            "payment-service 的 CPU 使用率小于 90%。",
            "answer.statement_polarity",
        ),
        (
            false,
            "payment-service memory usage is at 92.",
            "answer.statement_facts",
        ),
        (
            true,
            "order-service 的 HighRequestLatency 只是轻微告警。",
            "answer.statement_facts",
        ),
    ] {
        let ids: &[&str] = if s.contains("order-service") {
            &["c-lat"]
        } else {
            &["c-cpu"]
        };
        let (out, attempts) = compose(zh, &[composer(&[(s, ids)]), honest_composer(zh)]).await;
        assert_eq!(attempts[0].0, Outcome::InvalidOutput, "{s}");
        assert!(
            attempts[0].1.contains(rule) || attempts[0].1.contains("answer.statement_grounded"),
            "{s}: {}",
            attempts[0].1
        );
        assert!(!out.end.answer.contains(s), "{}", out.end.answer);
    }
}

/// scope, quantity, change and relative-time words the evidence does
/// not say (all, every, only, many, doubled, yesterday; 所有, 全部, 只有,
/// 大部分, 偶尔, 翻倍, 昨天) widen or narrow what it says.
#[test]
fn a_scope_quantity_change_or_relative_time_the_evidence_lacks_is_rejected() {
    for (s, ev) in [
        (
            "All order-service requests time out after 30000ms, every minute.",
            LOG,
        ),
        ("Only order-service HikariPool-1 times out.", LOG),
        ("Many order-service requests time out after 30000ms.", LOG),
        (
            "payment-service HighCPUUsage has been firing since yesterday; CPU doubled to 92.",
            CPU,
        ),
        ("payment-service CPU spiked to 92%.", CPU),
        ("order-service 的所有请求都在 30000ms 后超时。", LOG),
        ("order-service 的请求全部超时。", LOG),
        ("只有 order-service 的 HikariPool-1 超时。", LOG),
        ("大部分 order-service 请求超时。", LOG),
        ("order-service 偶尔超时。", LOG),
        ("payment-service 的 CPU 翻倍到 92%。", CPU),
        ("payment-service 的 HighCPUUsage 告警从昨天开始触发。", CPU),
    ] {
        let got = statement(s, &[ev]);
        assert!(got.is_some(), "{s}: {got:?}");
    }
    let busy = "2026-07-08T23:00:30Z WARN order-service HikariPool-1 - all 20 connections are busy, 48 requests waiting";
    for (s, ev) in [
        (
            "order-service HikariPool-1: all 20 connections are busy.",
            busy,
        ),
        (
            "order-service 的 HikariPool-1 所有 20 个连接都在忙，48 个请求在等待。",
            busy,
        ),
        ("order-service requests time out after 30000ms.", LOG),
    ] {
        assert_eq!(statement(s, &[ev]), None, "{s}");
    }
}

#[tokio::test]
async fn a_widened_statement_is_rejected_through_the_engine() {
    for (zh, s, ids) in [
        (
            false,
            "All order-service requests time out after 30000ms, every minute.",
            &["c-log"][..],
        ),
        (
            false,
            "payment-service HighCPUUsage has been firing since yesterday; CPU doubled to 92.",
            &["c-cpu"][..],
        ),
        (
            true,
            "order-service 的所有请求都在 30000ms 后超时。",
            &["c-log"][..],
        ),
    ] {
        let (out, attempts) = compose(zh, &[composer(&[(s, ids)]), honest_composer(zh)]).await;
        assert_eq!(attempts[0].0, Outcome::InvalidOutput, "{s}");
        assert!(
            (attempts[0].1.contains("answer.statement_facts")
                || attempts[0].1.contains("answer.statement_grounded")),
            "{s}: {}",
            attempts[0].1
        );
        assert!(!out.end.answer.contains(s), "{}", out.end.answer);
    }
}

/// a magnitude word no unit table knows (兆, 万, mega) changes the
/// number, and an approximate amount ("half an hour", 大约, 左右) is not
/// the reading.
#[test]
fn unknown_magnitudes_and_approximations_are_rejected() {
    for (s, ev) in [
        ("payment-service 的 CPU 达到 92 兆。", CPU),
        ("payment-service 的 CPU 达到 92 万。", CPU),
        (
            "payment-service HighCPUUsage has been firing for 25 mega minutes.",
            CPU,
        ),
        (
            "payment-service HighCPUUsage has been firing for half an hour.",
            CPU,
        ),
        ("payment-service HighCPUUsage 已持续半小时。", CPU),
        ("payment-service 的 CPU 大约 80%。", CPU),
        ("payment-service 的 CPU 在 80% 左右。", CPU),
        ("payment-service CPU is roughly 80%.", CPU),
    ] {
        let got = statement(s, &[ev]);
        assert!(got.is_some(), "{s}: {got:?}");
    }
    for (s, ev) in [
        (
            "payment-service HighCPUUsage has been firing for 25 minutes at 92%.",
            CPU,
        ),
        (
            "payment-service 的 HighCPUUsage 已持续 25 分钟，CPU 为 92%。",
            CPU,
        ),
        (
            "order-service logged an ERROR about HikariPool-1 after 30000ms.",
            LOG,
        ),
        // an approximation word binds within 10 % of the value it approximates
        ("payment-service 的 CPU 大约 92%。", CPU),
        ("payment-service 的 CPU 在 90% 左右。", CPU),
        ("payment-service CPU is roughly 92%.", CPU),
    ] {
        assert_eq!(statement(s, &[ev]), None, "{s}");
    }
}

//! the facts of one clause (identifiers, service names, numbers)
//! come from one evidence text, so two claims' facts cannot be recombined.
//!
//! a known service name is the same name however it is written: with
//! any dash (U+2010..U+2015, U+2212), with a space or nothing between its
//! parts, or as its distinctive stem alone ("inventory timed out"). A
//! statement may name it only when its evidence does.

use crate::answer_rules_engine::{compose, composer, honest_composer};
use crate::statement_paraphrase::{CPU, LAT, LOG, statement};
use diagraph::vocab::graph::Outcome;

#[test]
fn a_service_name_in_any_spelling_must_be_in_the_evidence() {
    for (s, ev) in [
        (
            "order-service HikariPool-1 timeouts (30000ms) also hit payment\u{2011}service.",
            LOG,
        ),
        (
            "order-service HikariPool-1 timeouts also hit payment\u{2013}service.",
            LOG,
        ),
        (
            "order-service HikariPool-1 timeouts also hit payment\u{2212}service.",
            LOG,
        ),
        (
            "order-service and the payment service both time out after 30000ms.",
            LOG,
        ),
        ("order-service and Payment Service time out.", LOG),
        ("inventory timed out after 30000ms.", LOG),
        ("inventoryservice connection is not available.", LOG),
        (
            "the inventory service HighCPUUsage alert is firing at 92.",
            CPU,
        ),
        ("payment 的 HighRequestLatency 告警正在触发。", LAT),
    ] {
        let got = statement(s, &[ev]);
        assert!(got.is_some(), "{s}: {got:?}");
    }
}

#[test]
fn a_service_name_the_evidence_holds_passes_in_any_spelling() {
    for (s, ev) in [
        (
            "The payment service HighCPUUsage alert is firing at 92.",
            CPU,
        ),
        ("payment\u{2011}service HighCPUUsage is firing at 92.", CPU),
        ("paymentservice HighCPUUsage is firing at 92.", CPU),
        ("payment HighCPUUsage is firing at 92.", CPU),
        (
            "The order service HikariPool-1 connection is not available.",
            LOG,
        ),
        ("order-service 的 HighRequestLatency 告警正在触发。", LAT),
    ] {
        assert_eq!(statement(s, &[ev]), None, "{s}");
    }
}

#[tokio::test]
async fn a_name_without_its_hyphen_is_rejected_through_the_engine() {
    for s in [
        "order-service HikariPool-1 timeouts (30000ms) also hit payment\u{2011}service.",
        "order-service and the payment service both time out after 30000ms.",
        "inventory timed out after 30000ms.",
    ] {
        let (out, attempts) = compose(
            false,
            &[composer(&[(s, &["c-log"])]), honest_composer(false)],
        )
        .await;
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

#[test]
fn facts_of_one_clause_come_from_one_evidence_text() {
    for (s, ev) in [
        (
            "order-service has a critical HighCPUUsage alert firing at 92.",
            &[CPU, LAT][..],
        ),
        (
            "payment-service HighRequestLatency is firing at 31.2 while order-service CPU is at 92.",
            &[CPU, LAT][..],
        ),
        (
            "payment-service HikariPool-1 connection is not available.",
            &[CPU, LOG][..],
        ),
        (
            "order-service 的 HighCPUUsage 告警数值为 92。",
            &[CPU, LAT][..],
        ),
        (
            "payment-service HighCPUUsage is firing at 92. Its HikariPool-1 connection is not available.",
            &[CPU, LOG][..],
        ),
        (
            "payment-service 的 HighCPUUsage 告警为 92。其 HikariPool-1 连接不可用。",
            &[CPU, LOG][..],
        ),
        (
            "payment-service 的 HikariPool-1 连接在 30000ms 后超时。",
            &[CPU, LOG][..],
        ),
    ] {
        let got = statement(s, ev);
        assert!(got.is_some(), "{s}: {got:?}");
    }
    // each clause from its own text: facts side by side pass
    for (s, ev) in [
        (
            "payment-service HighCPUUsage is firing at 92, and order-service HighRequestLatency at 31.2.",
            &[CPU, LAT][..],
        ),
        (
            "payment-service HighCPUUsage is firing at 92; order-service HikariPool-1 connection is not available.",
            &[CPU, LOG][..],
        ),
        (
            "payment-service 的 HighCPUUsage 告警为 92，同时 order-service 的 HighRequestLatency 告警为 31.2。",
            &[CPU, LAT][..],
        ),
        (
            "order-service HikariPool-1 timed out after 30000ms while its HighRequestLatency alert is firing at 31.2.",
            &[LAT, LOG][..],
        ),
    ] {
        assert_eq!(statement(s, ev), None, "{s}");
    }
}

#[tokio::test]
async fn recombined_facts_are_rejected_through_the_engine() {
    for (s, ids) in [
        (
            "order-service has a critical HighCPUUsage alert firing at 92.",
            &["c-cpu", "c-lat"][..],
        ),
        (
            "payment-service HikariPool-1 connection is not available after 30000ms.",
            &["c-cpu", "c-log"][..],
        ),
        // a pronoun carries the service of the sentence before it
        (
            "payment-service HighCPUUsage is firing at 92. Its HikariPool-1 connection is not available after 30000ms.",
            &["c-cpu", "c-log"][..],
        ),
    ] {
        let (out, attempts) =
            compose(false, &[composer(&[(s, ids)]), honest_composer(false)]).await;
        assert!(!out.end.answer.contains(s), "{}", out.end.answer);
        assert_eq!(attempts[0].0, Outcome::InvalidOutput, "{s}");
        assert!(
            (attempts[0].1.contains("answer.statement_facts")
                || attempts[0].1.contains("answer.statement_grounded")),
            "{s}: {}",
            attempts[0].1
        );
    }
}

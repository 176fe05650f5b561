//! The answer check against wordings a model plausibly
//! writes that the first fixes (the first statement-check tests) still let through, each
//! fixed as a class with the honest wordings next to it that must pass.
//!
//! - a cause stated with a clause-opening "so" ("X, so Y", "X. So Y",
//!   "and so") or "which is why" / "that is why" between two facts;
//! - 结束 / 停止 ("the alert has ended / stopped") for a firing alert, the
//!   same as 解除 / 恢复;
//! - a time in a named zone ("22:40 PST") read as if it were UTC;
//! - "just noise", "flapping", 抖动, 预期内: a firing alert dismissed;
//! - "as a consequence", "in turn" between two facts;
//! - over-rejection: "10:40 PM UTC" read as 10:40;
//! - "for an hour" / "a day" (a count of one) against 25m;
//! - "after 1 minute" resting on the `1` of `HikariPool-1`.

use crate::answer_rules_engine::{compose, composer, honest_composer};
use crate::statement_paraphrase::{CPU, LOG, statement};
use diagraph::evidence::facts::grounded::Added;
use diagraph::vocab::graph::Outcome;

#[test]
fn a_clause_opening_so_or_which_is_why_between_two_facts_is_a_cause() {
    for s in [
        "payment-service HighCPUUsage at 92, so order-service HikariPool-1 timed out.",
        "payment-service HighCPUUsage at 92; so order-service HikariPool-1 timed out.",
        "payment-service HighCPUUsage at 92. So order-service HikariPool-1 timed out.",
        "payment-service HighCPUUsage at 92, and so order-service HikariPool-1 timed out.",
        "payment-service HighCPUUsage at 92, which is why order-service HikariPool-1 timed out.",
        "payment-service HighCPUUsage at 92, that is why order-service HikariPool-1 timed out.",
    ] {
        assert!(
            matches!(statement(s, &[CPU, LOG]), Some(Added::Ungrounded(_))),
            "{s}: {:?}",
            statement(s, &[CPU, LOG])
        );
    }
}

/// "so" and "why" are outside the closed connective vocabulary: a
/// statement may use them only where one evidence text states a link.
#[test]
fn so_is_a_link_only_where_one_evidence_text_states_one() {
    for (s, ev) in [
        ("So far, payment-service HighCPUUsage is firing at 92.", CPU),
        (
            "payment-service HighCPUUsage has fired for 25m so far.",
            CPU,
        ),
        (
            "order-service HikariPool-1 timed out after 30000ms, so much that the connection is not available.",
            LOG,
        ),
        ("Why is payment-service HighCPUUsage firing at 92?", CPU),
    ] {
        assert!(statement(s, &[ev]).is_some(), "{s}");
    }
    // the link stated inside one evidence text stands
    let kb = crate::statement_paraphrase::KB;
    assert_eq!(
        statement(
            "Slow queries hold connections for a long time, so the pool is exhausted.",
            &[kb]
        ),
        None
    );
}

#[test]
fn ended_or_stopped_is_a_resolved_state_the_firing_alert_does_not_have() {
    for s in [
        "payment-service 的 HighCPUUsage 告警已结束。",
        "payment-service HighCPUUsage 告警结束了。",
        "payment-service HighCPUUsage 告警已停止。",
    ] {
        assert!(statement(s, &[CPU]).is_some(), "{s}");
    }
    let ended = "2026-07-08T23:10:00Z INFO payment-service HighCPUUsage 告警已结束";
    assert_eq!(
        statement("payment-service 的 HighCPUUsage 告警已结束。", &[ended]),
        None
    );
    assert_eq!(
        statement(
            "payment-service 的 HighCPUUsage 告警正在触发，数值 92。",
            &[CPU]
        ),
        None
    );
}

#[tokio::test]
async fn a_so_link_is_rejected_through_the_engine_and_the_honest_retry_completes() {
    let s = "payment-service HighCPUUsage at 92, so order-service HikariPool-1 timed out after 30000ms.";
    let (out, attempts) = compose(
        false,
        &[
            composer(&[(s, &["c-cpu", "c-log"])]),
            honest_composer(false),
        ],
    )
    .await;
    assert_eq!(attempts[0].0, Outcome::InvalidOutput, "{attempts:?}");
    assert!(
        (attempts[0].1.contains("answer.statement_cause")
            || attempts[0].1.contains("answer.statement_grounded")),
        "{:?}",
        attempts[0].1
    );
    assert_eq!(attempts[1].0, Outcome::Completed);
    assert!(!out.end.answer.contains(s), "{}", out.end.answer);
}

#[test]
fn a_time_in_a_named_zone_is_moved_to_utc_before_it_is_compared() {
    // the alert fired at 22:40 UTC = 14:40 PST = 07:40 JST (next day)
    for s in [
        "payment-service HighCPUUsage fired at 22:40 PST.",
        "payment-service HighCPUUsage fired at 22:40 EST.",
        "payment-service HighCPUUsage fired at 22:40 JST.",
    ] {
        assert!(statement(s, &[CPU]).is_some(), "{s}");
    }
    for s in [
        "payment-service HighCPUUsage fired at 14:40 PST.",
        "payment-service HighCPUUsage fired at 18:40 EDT.",
        "payment-service HighCPUUsage fired at 22:40 UTC.",
    ] {
        assert_eq!(statement(s, &[CPU]), None, "{s}");
    }
}

#[test]
fn noise_flapping_or_expected_dismiss_a_firing_alert_like_benign() {
    for s in [
        "payment-service HighCPUUsage is just noise.",
        "payment-service HighCPUUsage is noisy.",
        "payment-service HighCPUUsage is flapping.",
        "payment-service HighCPUUsage is transient.",
        "payment-service HighCPUUsage is a blip.",
        "payment-service HighCPUUsage 只是抖动。",
        "payment-service HighCPUUsage 是预期内的。",
    ] {
        assert!(statement(s, &[CPU]).is_some(), "{s}");
    }
    // the same word the evidence has stands
    let flap = "alertname=HighCPUUsage service=payment-service state=flapping value=92%";
    assert_eq!(
        statement("payment-service HighCPUUsage is flapping at 92%.", &[flap]),
        None
    );
}

#[test]
fn as_a_consequence_and_in_turn_link_two_facts() {
    for s in [
        "payment-service HighCPUUsage at 92; order-service HikariPool-1 timed out as a consequence.",
        "payment-service HighCPUUsage at 92; in turn order-service HikariPool-1 timed out.",
    ] {
        assert!(
            matches!(statement(s, &[CPU, LOG]), Some(Added::Ungrounded(_))),
            "{s}: {:?}",
            statement(s, &[CPU, LOG])
        );
    }
}

#[test]
fn a_twelve_hour_clock_is_read_with_its_am_or_pm() {
    // the alert fired at 22:40 UTC: honest 12-hour renderings pass
    for s in [
        "payment-service HighCPUUsage fired at 10:40 PM UTC.",
        "payment-service HighCPUUsage fired at 10:40 p.m. UTC.",
        "payment-service HighCPUUsage fired at 10:40pm UTC.",
        "payment-service HighCPUUsage fired at 2:40 PM PST.",
    ] {
        assert_eq!(statement(s, &[CPU]), None, "{s}");
    }
    for s in [
        "payment-service HighCPUUsage fired at 10:40 AM UTC.",
        "payment-service HighCPUUsage fired at 9:40 PM UTC.",
        "payment-service HighCPUUsage fired at 10:40 PM PST.",
    ] {
        assert!(statement(s, &[CPU]).is_some(), "{s}");
    }
}

#[test]
fn an_article_before_a_duration_unit_is_a_count_of_one() {
    // the alert has fired for 25m
    for (s, ev) in [
        (
            "payment-service HighCPUUsage has been firing for an hour.",
            CPU,
        ),
        (
            "payment-service HighCPUUsage has been firing for over an hour.",
            CPU,
        ),
        (
            "payment-service HighCPUUsage has been firing for a day.",
            CPU,
        ),
        ("payment-service HighCPUUsage has fired for a week.", CPU),
    ] {
        assert!(statement(s, &[ev]).is_some(), "{s}");
    }
    // a vague duration is a word the evidence does not ground
    assert!(
        statement(
            "payment-service HighCPUUsage has been firing for 25 minutes, a long time.",
            &[CPU]
        )
        .is_some()
    );
    assert_eq!(
        statement("payment-service HighCPUUsage is firing at 92.", &[CPU]),
        None
    );
    let hour = "alertname=HighCPUUsage service=payment-service state=firing active_for=1h";
    assert_eq!(
        statement(
            "payment-service HighCPUUsage has been firing for an hour.",
            &[hour]
        ),
        None
    );
}

#[test]
fn a_duration_does_not_rest_on_the_digit_of_an_identifier() {
    for s in [
        "order-service HikariPool-1 timed out after 1 minute.",
        "order-service HikariPool-1 timed out after an hour.",
    ] {
        assert!(statement(s, &[LOG]).is_some(), "{s}");
    }
    for s in [
        "order-service HikariPool-1 timed out after 30000ms.",
        "order-service HikariPool-1 timed out after 30 seconds.",
    ] {
        assert_eq!(statement(s, &[LOG]), None, "{s}");
    }
    // a key=value value stands with the unit a statement adds
    let v = "alertname=HighCPUUsage service=payment-service state=firing value=92";
    assert_eq!(
        statement("payment-service HighCPUUsage is firing at 92%.", &[v]),
        None
    );
}

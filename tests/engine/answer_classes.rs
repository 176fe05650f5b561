//! Issue 19, classes 8 and 9 and the fallback's reason line, driven
//! through the engine: a Composer statement that says more than its
//! claims' verified evidence is rejected by its `answer.*` rule in English
//! and Chinese, whatever the wording and however the Verifier referred to
//! the claim; a negative finding reaches the user only as the code
//! template; a fabricated binding on a hypothesis or action is a
//! Gatekeeper failure with its rule; and a fallback after a model failure
//! names the failure's class. (Rule-level cases:
//! `src/engine/nodes/answer/tests.rs`, `src/evidence/facts/grounded/tests.rs`; the
//! properties: `answer_props.rs`.)

use crate::runs::{finished, gatekeeper_results, run_captured};
use diagraph::vocab::contracts::BindingStatus;
use diagraph::vocab::graph::{NodeId, Outcome, ReasonCode};

/// The detail of each Composer attempt, in order.
async fn composer_attempts(file: &str) -> (diagraph::engine::RunOutcome, Vec<(Outcome, String)>) {
    let (out, _, _) = run_captured(file).await;
    let attempts = finished(&out)
        .into_iter()
        .filter(|(node, ..)| *node == NodeId::Composer)
        .map(|(_, outcome, _, detail)| (outcome, detail))
        .collect();
    (out, attempts)
}

#[tokio::test]
async fn a_statement_that_says_more_than_its_evidence_is_rejected_by_its_rule() {
    for (file, rule, hidden) in [
        (
            "47_composer_statement_adds_fact.toml",
            "answer.statement_facts",
            "97%",
        ),
        (
            "48_composer_statement_adds_state_zh.toml",
            "answer.statement_polarity",
            "已经恢复",
        ),
        (
            "49_composer_overstatement_paraphrase.toml",
            "answer.statement_polarity",
            "ruled-out",
        ),
        (
            "51_composer_statement_names_no_claim.toml",
            "answer.statement_cites_claim",
            "database lock",
        ),
    ] {
        let (out, attempts) = composer_attempts(file).await;
        assert_eq!(attempts.len(), 2, "{file}: {attempts:?}");
        assert_eq!(attempts[0].0, Outcome::InvalidOutput, "{file}");
        assert!(
            attempts[0].1.contains(rule) || attempts[0].1.contains("answer.statement_grounded"),
            "{file}: {:?}",
            attempts[0].1
        );
        assert_eq!(
            attempts[1].0,
            Outcome::Completed,
            "{file}: {:?}",
            attempts[1]
        );
        assert!(!out.end.degraded, "{file}");
        assert!(
            !out.end.answer.contains(hidden),
            "{file}: {}",
            out.end.answer
        );
    }
}

#[tokio::test]
async fn the_assembled_answer_cites_and_separates_the_unverified() {
    let (out, _) = composer_attempts("47_composer_statement_adds_fact.toml").await;
    let a = &out.end.answer;
    assert!(a.contains("Findings:\n- payment-service has a critical HighCPUUsage alert firing at 92%. [query_metrics #"), "{a}");
    let unverified = a.find("Not verified").expect("an unverified section");
    assert!(
        a.find("Next step: check payment-service CPU and GC")
            .unwrap()
            > unverified,
        "{a}"
    );
    let (zh, _) = composer_attempts("48_composer_statement_adds_state_zh.toml").await;
    assert!(
        zh.end
            .answer
            .contains("发现：\n- payment-service 的 HighCPUUsage 告警正在触发"),
        "{}",
        zh.end.answer
    );
    assert!(zh.end.answer.contains("未经验证"), "{}", zh.end.answer);
}

#[tokio::test]
async fn a_negative_finding_is_shown_only_as_the_template() {
    let (out, _) = composer_attempts("49_composer_overstatement_paraphrase.toml").await;
    let a = &out.end.answer;
    assert!(a.contains("found no matching logs"), "{a}");
    assert!(!a.contains("The log query found no ERROR lines"), "{a}");
    for word in ["ruled", "healthy"] {
        assert!(!a.contains(word), "{a}");
    }
    // twice over-stated in Chinese: the post-verifier fallback, templates only
    let (zh, attempts) = composer_attempts("50_composer_overstatement_zh.toml").await;
    assert!(
        attempts.iter().all(|(o, d)| *o == Outcome::InvalidOutput
            && (d.contains("answer.statement_polarity")
                || d.contains("answer.statement_grounded"))),
        "{attempts:?}"
    );
    assert_eq!(
        zh.end.trace.termination_reason,
        Some(ReasonCode::ComposerFailed)
    );
    let a = &zh.end.answer;
    assert!(a.contains("未检索到匹配的日志"), "{a}");
    for word in ["排除", "一切正常", "没有问题"] {
        assert!(!a.contains(word), "{a}");
    }
}

#[tokio::test]
async fn a_fabricated_binding_on_an_action_or_hypothesis_is_a_failure_with_its_rule() {
    for (file, item, rule) in [
        (
            "52_gatekeeper_fabricated_action_binding.toml",
            "recommended_actions[0]",
            "binding.invocation_owned",
        ),
        (
            "53_gatekeeper_hypothesis_binding_swapped_zh.toml",
            "hypotheses[0]",
            "binding.excerpt_facts",
        ),
    ] {
        let (out, _, _) = run_captured(file).await;
        let gk = &gatekeeper_results(&out)[0];
        assert_eq!(gk.severity, "reject", "{file}: {:?}", gk.errors);
        assert_eq!(gk.failed_rules, vec![rule.to_string()], "{file}");
        // the claim's own binding passed; the item's failed with its rule
        assert_eq!(gk.verified_binding_count(), 1, "{file}");
        let b = &gk.unverified_bindings[0];
        assert_eq!(b.claim_id, item);
        assert_eq!(b.status, BindingStatus::Fail);
        assert_eq!(b.failed_rule.as_deref(), Some(rule));
        assert!(
            gk.errors
                .iter()
                .any(|e| e.contains(item) && e.contains(rule)),
            "{:?}",
            gk.errors
        );
        assert_eq!(
            out.end.trace.termination_reason,
            Some(ReasonCode::GatekeeperReject)
        );
    }
}

#[tokio::test]
async fn a_fallback_after_a_model_failure_names_its_class() {
    for (file, says) in [
        (
            "08_executor_model_failed.toml",
            "the executor model failed with a server error",
        ),
        (
            "04_planner_unauthorized.toml",
            "the planner model refused the credentials",
        ),
        ("05_planner_fails_twice.toml", "the planner model"),
    ] {
        let (out, _, _) = run_captured(file).await;
        let a = &out.end.answer;
        assert!(a.contains(says), "{file}: {a}");
        assert!(!a.contains("structure validation"), "{file}: {a}");
    }
    // an invalid output is still reported as a validation failure
    let (out, _, _) = run_captured("06_executor_invalid_output.toml").await;
    assert!(
        out.end.answer.contains("structure validation"),
        "{}",
        out.end.answer
    );
}

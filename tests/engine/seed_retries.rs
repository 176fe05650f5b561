//! Seed 003 section 11, "编排" (retries): technical retries of the
//! Verifier and Composer, their independent counters, and the evidence
//! retry's bounded second round, one test per checkbox, asserted on what
//! the run recorded and on the exact requests the models received.

use crate::helpers::load_scenario;
use crate::runs::{
    CLAIM_TEXT, first_entry, gatekeeper_results, of_role, run_captured, run_scenario,
    shop_services, steps, without_unchecked,
};
use diagraph::engine::nodes::fallback;
use diagraph::model::ModelErrorKind;
use diagraph::model::scripted::ScriptEntry;
use diagraph::vocab::agent::AgentRole;
use diagraph::vocab::contracts::{Lang, Verdict};
use diagraph::vocab::graph::NodeId;
use diagraph::vocab::run::RunStatus;
use diagraph::vocab::tool::EvidenceStatus;
use serde_json::Value;

#[tokio::test]
async fn verifier_technical_retry_reuses_the_same_input_and_reruns_nothing_earlier() {
    for file in [
        "19_verifier_invalid_then_ok.toml",
        "20_verifier_timeout_then_ok.toml",
    ] {
        let (out, rec, reqs) = run_captured(file).await;
        let v = of_role(&reqs, AgentRole::Verifier);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].input, v[1].input, "{file}");
        assert_eq!((v[0].attempt, v[1].attempt), (1, 2));
        assert_eq!(gatekeeper_results(&out).len(), 1);
        assert_eq!(steps(&rec, out.run_id, "executor"), 2);
        assert_eq!(
            rec.snapshot()
                .invocations
                .iter()
                .filter(|i| i.run_id == out.run_id)
                .count(),
            1
        );
    }
}

#[tokio::test]
async fn composer_technical_retry_reuses_the_same_input_and_reruns_nothing_earlier() {
    for file in [
        "28_composer_invalid_then_ok.toml",
        "29_composer_timeout_then_ok.toml",
    ] {
        let (out, rec, reqs) = run_captured(file).await;
        let c = of_role(&reqs, AgentRole::Composer);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].input, c[1].input, "{file}");
        assert_eq!(steps(&rec, out.run_id, "verifier"), 1, "{file}");
        assert_eq!(out.end.trace.final_node, Some(NodeId::Composer));
    }
}

#[tokio::test]
async fn verifier_failure_fallback_shows_no_executor_claim() {
    for file in [
        "21_verifier_bad_request.toml",
        "22_verifier_fails_twice.toml",
    ] {
        let (out, _, _) = run_captured(file).await;
        assert!(
            !out.end.answer.contains("HighCPUUsage"),
            "{file}: {}",
            out.end.answer
        );
        assert!(!out.end.answer.contains(CLAIM_TEXT));
    }
}

#[tokio::test]
async fn composer_second_failure_or_non_retryable_uses_the_deterministic_template() {
    for file in [
        "31_composer_exhausted.toml",
        "32_composer_unauthorized.toml",
    ] {
        let (out, _, reqs) = run_captured(file).await;
        let c = &of_role(&reqs, AgentRole::Composer)[0];
        let input: diagraph::vocab::dto::ComposerInput =
            serde_json::from_value(c.input.to_value()).unwrap();
        // the template, after the line code adds per subject of the question
        let answer = without_unchecked(&out.end.answer);
        let (subjects, rest) = answer.split_once("\n\n").unwrap();
        assert_eq!(
            subjects,
            "What the question asks about:\n- payment-service: verified evidence found."
        );
        assert_eq!(
            rest,
            fallback::post_verifier_answer(Lang::En, &input, &shop_services()),
            "{file}"
        );
        assert_eq!(
            out.end.trace.termination_reason.map(|r| r.as_str()),
            Some("composer_failed")
        );
    }
}

#[tokio::test]
async fn retry_counters_are_independent() {
    // Verifier retry, evidence retry and Composer retry in one run.
    let mut s = load_scenario("23_evidence_retry_pass.toml");
    let v = first_entry(&s, AgentRole::Verifier);
    s.script.insert(
        v,
        ScriptEntry::error(AgentRole::Verifier, ModelErrorKind::Timeout),
    );
    let c = first_entry(&s, AgentRole::Composer);
    s.script
        .insert(c, ScriptEntry::text(AgentRole::Composer, "{}"));
    let (out, _, _) = run_scenario(&s).await;
    let reasons: Vec<&str> = out
        .end
        .trace
        .transitions
        .iter()
        .map(|t| t.reason_code.as_str())
        .collect();
    assert!(reasons.contains(&"verifier_technical_retry"));
    assert!(reasons.contains(&"evidence_gap_retry"));
    assert!(reasons.contains(&"composer_technical_retry"));
    assert_eq!(out.end.trace.evidence_retry_count, 1);
    assert_eq!(out.end.trace.final_node, Some(NodeId::Composer));
}

#[tokio::test]
async fn verifier_low_confid_triggers_at_most_one_evidence_retry() {
    let (out, rec, _) = run_captured("26_no_second_retry.toml").await;
    assert_eq!(out.end.trace.evidence_retry_count, 1);
    let retries = out
        .end
        .trace
        .transitions
        .iter()
        .filter(|t| t.reason_code == "verifier_low_confid_gap")
        .count();
    assert_eq!(retries, 1);
    assert_eq!(steps(&rec, out.run_id, "planner"), 2);
    assert_eq!(out.end.effective_verdict, Some(Verdict::LowConfid));
}

#[tokio::test]
async fn evidence_retry_loop_is_bounded_by_one_retry_and_the_recursion_limit() {
    let (out, _, _) = run_captured("26_no_second_retry.toml").await;
    let executions = out.end.trace.transitions.len() + 1;
    assert!(executions < diagraph::engine::graph::RECURSION_LIMIT as usize);
    assert_eq!(out.end.status, RunStatus::Success);
}

#[tokio::test]
async fn ceiling_caused_low_confid_does_not_trigger_an_evidence_retry() {
    let (out, rec, _) = run_captured("24_ceiling_low_confid_no_retry.toml").await;
    assert_eq!(out.verdicts.ceiling, Some(Verdict::LowConfid));
    assert_eq!(out.end.trace.evidence_retry_count, 0);
    assert_eq!(steps(&rec, out.run_id, "planner"), 1);
}

#[tokio::test]
async fn no_extractable_gap_means_no_evidence_retry() {
    let (out, _, _) = run_captured("25_low_confid_no_gap.toml").await;
    assert_eq!(out.end.effective_verdict, Some(Verdict::LowConfid));
    assert_eq!(out.verdicts.ceiling, Some(Verdict::Pass));
    assert_eq!(out.end.trace.evidence_retry_count, 0);
}

#[tokio::test]
async fn second_round_planner_plans_only_the_gaps() {
    let (_, _, reqs) = run_captured("23_evidence_retry_pass.toml").await;
    let p = of_role(&reqs, AgentRole::Planner);
    assert_eq!(p[0].input.to_value()["mode"], "NORMAL");
    assert_eq!(p[0].input.to_value()["retry_context"], Value::Null);
    assert_eq!(p[1].input.to_value()["mode"], "EVIDENCE_GAP_ONLY");
    let view = &p[1].input.to_value()["retry_context"];
    assert_eq!(view["evidence_gaps"].as_array().unwrap().len(), 1);
    let done = view["completed_queries"].as_array().unwrap();
    assert!(done.iter().any(|q| q["tool"] == "query_metrics"));
    // The Planner never sees another agent's output.
    let whole = serde_json::to_string(&p[1].input).unwrap();
    assert!(!whole.contains("claim_text") && !whole.contains("rationale"));
}

#[tokio::test]
async fn second_round_executor_runs_only_new_queries_and_outputs_a_full_snapshot() {
    let (out, rec, reqs) = run_captured("23_evidence_retry_pass.toml").await;
    let e = of_role(&reqs, AgentRole::Executor);
    let round2 = e
        .iter()
        .find(|r| r.input.to_value()["retry_context"] != Value::Null)
        .unwrap();
    assert_eq!(
        round2.input.to_value()["retry_context"]["prior_verified_output"]["claims"][0]["claim_id"],
        "claim-1"
    );
    let invs: Vec<_> = rec
        .snapshot()
        .invocations
        .into_iter()
        .filter(|i| i.run_id == out.run_id)
        .collect();
    assert_eq!(invs.len(), 3);
    assert_eq!(
        invs[1].retrieval_details.evidence_status,
        EvidenceStatus::Deduped
    );
    assert_eq!(invs[1].retrieval_details.deduped_from, Some(invs[0].id));
    let gk = gatekeeper_results(&out);
    let ids: Vec<&str> = gk[1]
        .checked_bindings
        .iter()
        .map(|b| b.claim_id.as_str())
        .collect();
    assert_eq!(
        ids,
        ["claim-1", "claim-2"],
        "the snapshot keeps the first-round claim"
    );
}

#[tokio::test]
async fn second_round_snapshot_is_rechecked_in_full_by_the_gatekeeper() {
    let (out, rec, _) = run_captured("33_evidence_retry_snapshot_rechecked.toml").await;
    let gk = gatekeeper_results(&out);
    assert_eq!(gk.len(), 2);
    assert_eq!(gk[0].status, "pass");
    assert_eq!(
        gk[1].severity, "reject",
        "a first-round pass does not exempt the snapshot"
    );
    assert_eq!(steps(&rec, out.run_id, "verifier"), 1);
}

#[tokio::test]
async fn orchestration_does_not_merge_claim_text_across_rounds() {
    let (_, _, reqs) = run_captured("23_evidence_retry_pass.toml").await;
    let v = of_role(&reqs, AgentRole::Verifier);
    let input = v[1].input.to_value();
    let texts: Vec<&str> = input["verified_executor_output"]["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["claim_text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        [
            CLAIM_TEXT,
            "payment-service had a 984ms GC pause with the heap at 3.6G of 4.0G"
        ],
        "the second Verifier sees exactly the second snapshot's claims"
    );
}

#[tokio::test]
async fn composer_exhaustion_ends_with_the_fixed_template() {
    let (out, rec, _) = run_captured("31_composer_exhausted.toml").await;
    assert_eq!(steps(&rec, out.run_id, "composer"), 2);
    assert_eq!(out.end.trace.route().last(), Some(&NodeId::Fallback));
    assert!(out.end.degraded && out.end.status == RunStatus::Success);
    assert!(!out.end.answer.contains("Sure! Here is the answer."));
}

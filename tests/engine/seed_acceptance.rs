//! Seed 003 section 11, "编排" (routing): one test per checkbox, asserted
//! on what the run recorded (agent steps, tool invocations, events) and on
//! the exact requests the models received. The section's retries are in
//! `seed_retries.rs`, "证据和安全" in `seed_evidence_safety.rs`.

use crate::helpers::load_scenario;
use crate::runs::{
    finished, gatekeeper_results, last_entry, of_role, run_captured, run_scenario, steps,
};
use diagraph::engine::nodes::fallback;
use diagraph::model::ModelErrorKind;
use diagraph::model::scripted::ScriptEntry;
use diagraph::vocab::agent::AgentRole;
use diagraph::vocab::contracts::{Lang, Verdict};
use diagraph::vocab::graph::{NodeId, Outcome};
use diagraph::vocab::run::RunStatus;
use diagraph::vocab::tool::EvidenceStatus;
use serde_json::Value;

#[tokio::test]
async fn planner_technical_retry_at_most_once_per_stage() {
    for file in [
        "02_planner_invalid_then_ok.toml",
        "03_planner_timeout_then_ok.toml",
    ] {
        let (out, rec, _) = run_captured(file).await;
        assert_eq!(steps(&rec, out.run_id, "planner"), 2, "{file}");
        assert_eq!(out.end.trace.final_node, Some(NodeId::Composer));
    }
    let (out, rec, _) = run_captured("05_planner_fails_twice.toml").await;
    assert_eq!(steps(&rec, out.run_id, "planner"), 2);
    assert_eq!(
        out.end.trace.termination_reason.map(|r| r.as_str()),
        Some("planner_failed")
    );
}

#[tokio::test]
async fn planner_non_retryable_or_second_failure_goes_to_fallback() {
    let (out, rec, _) = run_captured("04_planner_unauthorized.toml").await;
    assert_eq!(steps(&rec, out.run_id, "planner"), 1);
    assert_eq!(
        out.end.trace.route(),
        vec![NodeId::Planner, NodeId::Fallback]
    );
    assert!(out.end.degraded && out.end.status == RunStatus::Success);
    let (out, _, _) = run_captured("05_planner_fails_twice.toml").await;
    assert_eq!(
        out.end.trace.route(),
        vec![NodeId::Planner, NodeId::Planner, NodeId::Fallback]
    );
}

#[tokio::test]
async fn planner_retry_is_separate_from_evidence_retry_and_resets_per_stage() {
    // A planner retry in both stages of an evidence-retry run: each stage
    // has its own single retry, and neither counts as an evidence retry.
    let mut s = load_scenario("23_evidence_retry_pass.toml");
    s.script.insert(
        0,
        ScriptEntry::error(AgentRole::Planner, ModelErrorKind::Timeout),
    );
    let pos = last_entry(&s, AgentRole::Planner);
    s.script
        .insert(pos, ScriptEntry::text(AgentRole::Planner, "not a plan"));
    let (out, rec, reqs) = run_scenario(&s).await;
    assert_eq!(steps(&rec, out.run_id, "planner"), 4);
    assert_eq!(out.end.trace.evidence_retry_count, 1);
    assert_eq!(out.end.trace.final_node, Some(NodeId::Composer));
    let attempts: Vec<u32> = of_role(&reqs, AgentRole::Planner)
        .iter()
        .map(|r| r.attempt)
        .collect();
    assert_eq!(
        attempts,
        vec![1, 2, 1, 2],
        "the second stage starts at attempt 1"
    );
}

#[tokio::test]
async fn executor_failed_or_tool_blocked_skips_gatekeeper_and_verifier() {
    for file in [
        "07_executor_tool_blocked.toml",
        "08_executor_model_failed.toml",
    ] {
        let (out, rec, _) = run_captured(file).await;
        assert!(gatekeeper_results(&out).is_empty(), "{file}");
        assert_eq!(steps(&rec, out.run_id, "verifier"), 0, "{file}");
        assert_eq!(steps(&rec, out.run_id, "composer"), 0, "{file}");
        assert_eq!(out.end.trace.route().last(), Some(&NodeId::Fallback));
    }
}

#[tokio::test]
async fn executor_invalid_output_is_not_retried_and_skips_gatekeeper_verifier_and_composer() {
    let (out, rec, _) = run_captured("06_executor_invalid_output.toml").await;
    let executor_nodes = finished(&out)
        .iter()
        .filter(|f| f.0 == NodeId::Executor)
        .count();
    assert_eq!(executor_nodes, 1);
    assert!(gatekeeper_results(&out).is_empty());
    assert_eq!(steps(&rec, out.run_id, "verifier"), 0);
    assert_eq!(steps(&rec, out.run_id, "composer"), 0);
    let ev = &out.self_evaluation.to_value()["verifier_evaluation"]["executor_output_parse_status"];
    assert_eq!(ev["status"], "malformed");
}

#[tokio::test]
async fn tool_blocked_only_when_a_tool_was_blocked_and_no_valid_output_exists() {
    let (out, _, _) = run_captured("07_executor_tool_blocked.toml").await;
    assert_eq!(finished(&out)[1].1, Outcome::ToolBlocked);
    // Blocked call but a valid (empty-claims) output: COMPLETED.
    let mut s = load_scenario("07_executor_tool_blocked.toml");
    s.script.pop();
    s.script.push(ScriptEntry::text(
        AgentRole::Executor,
        r#"{"answer_version": "executor_evidence_v2", "claims": [], "missing_info": ["alerts were not readable"]}"#,
    ));
    let (out, _, _) = run_scenario(&s).await;
    assert_eq!(finished(&out)[1].1, Outcome::Completed);
    assert_eq!(gatekeeper_results(&out).len(), 1);
    // A malformed output without any blocked call is INVALID_OUTPUT.
    let (out, _, _) = run_captured("06_executor_invalid_output.toml").await;
    assert_eq!(finished(&out)[1].1, Outcome::InvalidOutput);
}

#[tokio::test]
async fn empty_or_failed_tool_results_with_valid_output_are_completed() {
    for file in [
        "09_legal_no_evidence.toml",
        "10_tool_failure_legal_output.toml",
    ] {
        let (out, rec, _) = run_captured(file).await;
        assert_eq!(finished(&out)[1].1, Outcome::Completed, "{file}");
        assert_eq!(gatekeeper_results(&out).len(), 1, "{file}");
        let invs = rec.snapshot().invocations;
        let first = invs.iter().find(|i| i.run_id == out.run_id).unwrap();
        let want = if file.starts_with("09") {
            EvidenceStatus::NoEvidence
        } else {
            EvidenceStatus::Failed
        };
        assert_eq!(first.retrieval_details.evidence_status, want, "{file}");
    }
}

#[tokio::test]
async fn legal_no_evidence_goes_through_gatekeeper_and_verifier() {
    let (out, rec, _) = run_captured("09_legal_no_evidence.toml").await;
    assert_eq!(gatekeeper_results(&out)[0].status, "pass");
    assert_eq!(steps(&rec, out.run_id, "verifier"), 1);
    assert_eq!(out.end.effective_verdict, Some(Verdict::Pass));
}

#[tokio::test]
async fn gatekeeper_reject_goes_to_fallback_without_verifier() {
    for file in [
        "11_gatekeeper_fabricated_id.toml",
        "12_gatekeeper_foreign_id.toml",
        "13_gatekeeper_wrong_path.toml",
        "14_gatekeeper_paraphrase.toml",
        "15_gatekeeper_negative_on_positive.toml",
    ] {
        let (out, rec, _) = run_captured(file).await;
        assert_eq!(
            out.end.trace.termination_reason.map(|r| r.as_str()),
            Some("gatekeeper_reject"),
            "{file}"
        );
        assert_eq!(steps(&rec, out.run_id, "verifier"), 0, "{file}");
        assert!(out.end.degraded, "{file}");
    }
}

#[tokio::test]
async fn gatekeeper_low_confid_with_zero_verified_bindings_goes_to_fallback() {
    let (out, rec, _) = run_captured("17_gatekeeper_zero_verified.toml").await;
    let finals = finished(&out);
    assert_eq!(finals[2].1, Outcome::LowConfid);
    assert_eq!(finals[2].2, "gatekeeper_no_verified_binding");
    assert_eq!(steps(&rec, out.run_id, "verifier"), 0);
}

#[tokio::test]
async fn gatekeeper_low_confid_verifier_receives_only_passing_bindings() {
    let (out, _, reqs) = run_captured("16_gatekeeper_low_confid_capped.toml").await;
    let v = &of_role(&reqs, AgentRole::Verifier)[0];
    let input = v.input.to_value();
    let claims = input["verified_executor_output"]["claims"]
        .as_array()
        .unwrap();
    assert_eq!(claims.len(), 1);
    assert_eq!(claims[0]["claim_id"], "claim-1");
    let whole = serde_json::to_string(v).unwrap();
    assert!(
        !whole.contains("zebracorn-17"),
        "the unbound claim reached the Verifier"
    );
    assert_eq!(out.verdicts.ceiling, Some(Verdict::LowConfid));
}

#[tokio::test]
async fn gatekeeper_pass_and_low_confid_both_go_through_verified_input() {
    for file in ["01_pass.toml", "16_gatekeeper_low_confid_capped.toml"] {
        let (out, _, _) = run_captured(file).await;
        let route = out.end.trace.route();
        let gk = route.iter().position(|n| *n == NodeId::Gatekeeper).unwrap();
        assert_eq!(route[gk + 1], NodeId::VerifiedInput, "{file}");
        assert_eq!(route[gk + 2], NodeId::Verifier, "{file}");
    }
}

#[tokio::test]
async fn verifier_receives_only_verified_evidence_not_the_tool_trace() {
    let (_, rec, reqs) = run_captured("01_pass.toml").await;
    let v = &of_role(&reqs, AgentRole::Verifier)[0];
    let input = v.input.to_value();
    let keys: Vec<&str> = input
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "original_query",
            "lang",
            "verified_executor_output",
            "verified_evidence",
            "gatekeeper_result"
        ]
    );
    assert!(v.tools.is_empty());
    let ref_text = &rec.snapshot().invocations[0]
        .retrieval_details
        .evidence_refs[0]
        .text;
    assert_eq!(
        v.input.to_value()["verified_evidence"][0]["matched_text"],
        Value::String(ref_text.clone())
    );
    // The prompt text may name contract fields (the verifier's own output
    // has `evidence_refs`); what must not leak is run data, so check the
    // DTO turn only.
    let whole = v
        .messages
        .iter()
        .filter_map(|m| match m {
            diagraph::model::Message::User { content } => Some(content.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    for forbidden in [
        "tool_trace",
        "evidence_refs",
        "checked_bindings",
        "\"result\"",
        "annotations",
    ] {
        assert!(
            !whole.contains(forbidden),
            "{forbidden} reached the Verifier"
        );
    }
}

#[tokio::test]
async fn unreferenced_or_unverified_tool_results_never_reach_the_verifier() {
    // Two tool results; the claim cites only the alert. The order-service
    // log lines must not appear anywhere in the Verifier's request.
    let mut s = load_scenario("01_pass.toml");
    s.script[1] = ScriptEntry::tool_calls(
        AgentRole::Executor,
        vec![
            (
                "query_metrics",
                serde_json::json!({"service": "payment-service"}),
            ),
            (
                "query_logs",
                serde_json::json!({"service": "order-service", "level": "ERROR"}),
            ),
        ],
    );
    let (out, _, reqs) = run_scenario(&s).await;
    assert_eq!(out.end.trace.final_node, Some(NodeId::Composer));
    let v = serde_json::to_string(&of_role(&reqs, AgentRole::Verifier)[0]).unwrap();
    assert!(
        !v.contains("HikariPool"),
        "an uncited log line reached the Verifier"
    );
    let c = serde_json::to_string(&of_role(&reqs, AgentRole::Composer)[0]).unwrap();
    assert!(
        !c.contains("HikariPool"),
        "an uncited log line reached the Composer"
    );
}

#[tokio::test]
async fn gatekeeper_low_confid_effective_verdict_never_upgrades_to_pass() {
    let (out, _, _) = run_captured("16_gatekeeper_low_confid_capped.toml").await;
    assert_eq!(out.verdicts.model_verdict, Some(Verdict::Pass));
    assert_eq!(out.end.effective_verdict, Some(Verdict::LowConfid));
    let ev = &out.self_evaluation.to_value()["verifier_evaluation"];
    assert_eq!(ev["verdict"], "LOW_CONFID");
    assert_eq!(ev["model_verdict"], "PASS");
    assert_eq!(ev["verdict_ceiling"], "LOW_CONFID");
}

#[tokio::test]
async fn gatekeeper_status_is_normalised_and_unknown_maps_to_reject() {
    for (file, status) in [
        ("01_pass.toml", Outcome::Pass),
        ("16_gatekeeper_low_confid_capped.toml", Outcome::LowConfid),
        ("11_gatekeeper_fabricated_id.toml", Outcome::Reject),
        ("18_gatekeeper_unknown_result.toml", Outcome::Reject),
        ("34_gatekeeper_unparsable_result.toml", Outcome::Reject),
    ] {
        let (out, _, _) = run_captured(file).await;
        let gk = finished(&out)
            .into_iter()
            .find(|f| f.0 == NodeId::Gatekeeper)
            .unwrap();
        assert_eq!(gk.1, status, "{file}");
    }
}

#[tokio::test]
async fn verifier_execution_failure_never_becomes_a_verdict() {
    for file in [
        "21_verifier_bad_request.toml",
        "22_verifier_fails_twice.toml",
    ] {
        let (out, _, _) = run_captured(file).await;
        assert_eq!(out.verdicts.model_verdict, None, "{file}");
        assert_eq!(out.end.effective_verdict, None, "{file}");
        assert_eq!(
            out.self_evaluation.to_value()["verifier_evaluation"]["verdict"],
            Value::Null
        );
        let v = finished(&out)
            .into_iter()
            .rfind(|f| f.0 == NodeId::Verifier)
            .unwrap();
        assert!(matches!(
            v.1,
            Outcome::NonRetryableFailed | Outcome::RetryableFailed
        ));
    }
}

#[tokio::test]
async fn composer_and_routing_read_only_the_effective_verdict() {
    // Model PASS capped to LOW_CONFID: the Composer is told LOW_CONFID and
    // the answer carries the LOW_CONFID banner.
    let (out, _, reqs) = run_captured("16_gatekeeper_low_confid_capped.toml").await;
    let c = &of_role(&reqs, AgentRole::Composer)[0];
    assert_eq!(c.input.to_value()["verdict"], "LOW_CONFID");
    let banner = fallback::verdict_banner(Lang::En, Verdict::LowConfid).unwrap();
    assert!(out.end.answer.starts_with(banner));
    // Model LOW_CONFID with a gap but a LOW_CONFID ceiling: no retry.
    let (out, _, _) = run_captured("24_ceiling_low_confid_no_retry.toml").await;
    assert_eq!(out.end.trace.evidence_retry_count, 0);
}

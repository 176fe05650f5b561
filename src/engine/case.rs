//! The case a run marked useful yields for the case library.
//!
//! Rather than a copy of the whole answer, the root cause and solution come
//! from what the run *verified*: the claims the Verifier found directly
//! supported (root_cause claims first, else observations) with the
//! Gatekeeper's verified evidence, and the recommended actions. Model prose
//! never reaches the case. The store only persists what this builds.

use crate::text::clean;
use crate::vocab::contracts::{BindingStatus, CheckedBinding, Claim, Verification};
use crate::vocab::evaluation::{CaseDraft, SelfEvaluation};

/// A claim the run verified, with its verified evidence texts.
struct VerifiedClaim<'a> {
    claim_type: &'a str,
    text: &'a str,
    evidence: Vec<&'a str>,
}

/// Directly evidenced, non-negative claims: the Verifier's facts_checked
/// joined by claim id with the Gatekeeper's passing bindings (for the
/// evidence) and the Executor's claims (for the text).
fn verified_claims(eval: &SelfEvaluation) -> Vec<VerifiedClaim<'_>> {
    let ve = &eval.verifier_evaluation;
    let passing: Vec<&CheckedBinding> = ve
        .gatekeeper_result
        .as_deref()
        .map(|g| g.checked_bindings.as_slice())
        .unwrap_or_default()
        .iter()
        .filter(|b| b.status == BindingStatus::Pass)
        .collect();
    let executor_claims: &[Claim] = ve
        .executor_structured_output
        .as_ref()
        .map(|o| o.claims.as_slice())
        .unwrap_or_default();
    ve.facts_checked
        .as_deref()
        .unwrap_or_default()
        .iter()
        .filter(|f| f.verification == Verification::DirectEvidence)
        .filter_map(|f| {
            // A fact without a claim id keeps its own text and no evidence.
            let id = f.claim_id.as_deref().filter(|id| !id.is_empty());
            let bindings: Vec<&&CheckedBinding> = passing
                .iter()
                .filter(|b| Some(b.claim_id.as_str()) == id)
                .collect();
            let claim = executor_claims
                .iter()
                .find(|c| Some(c.claim_id.as_str()) == id);
            let claim_type = bindings
                .first()
                .map(|b| b.claim_type.as_str())
                .filter(|t| !t.is_empty())
                .or_else(|| claim.map(|c| c.claim_type.as_str()))
                .unwrap_or("observation");
            let text = claim
                .map(|c| c.claim_text.as_str())
                .filter(|t| !t.is_empty())
                .unwrap_or(f.fact.as_str());
            let evidence = bindings
                .iter()
                .map(|b| b.matched_text.as_str())
                .filter(|t| !t.is_empty())
                .collect();
            (claim_type != "negative_observation" && !text.trim().is_empty()).then_some(
                VerifiedClaim {
                    claim_type,
                    text,
                    evidence,
                },
            )
        })
        .collect()
}

fn recommended_actions(eval: &SelfEvaluation) -> Vec<String> {
    eval.verifier_evaluation
        .executor_structured_output
        .as_ref()
        .map(|o| o.recommended_actions.as_slice())
        .unwrap_or_default()
        .iter()
        .filter_map(|a| {
            let text = a.action_text.trim();
            let reason = a.reason.trim();
            match (text.is_empty(), reason.is_empty()) {
                (true, _) => None,
                (false, true) => Some(text.to_string()),
                (false, false) => Some(format!("{text} ({reason})")),
            }
        })
        .collect()
}

/// Keyword groups for the fault category, most specific first.
const CATEGORIES: [(&str, &[&str]); 7] = [
    (
        "DATABASE",
        &[
            "database",
            "connection pool",
            "hikari",
            "sql",
            "deadlock",
            "jdbc",
            "数据库",
            "连接池",
        ],
    ),
    (
        "MEMORY",
        &[
            "memory",
            "oom",
            "heap",
            "garbage collect",
            "gc pause",
            "内存",
        ],
    ),
    ("CPU", &["cpu", "load average", "throttl"]),
    ("DISK", &["disk", "inode", "filesystem", "磁盘"]),
    (
        "NETWORK",
        &[
            "network",
            "dns",
            "connection refused",
            "connection reset",
            "packet",
            "网络",
        ],
    ),
    (
        "DEPLOYMENT",
        &[
            "deploy",
            "release",
            "rollout",
            "rollback",
            "config change",
            "发布",
            "配置",
        ],
    ),
    (
        "DEPENDENCY",
        &[
            "timeout",
            "timed out",
            "downstream",
            "upstream",
            "latency",
            "超时",
        ],
    ),
];

/// The fault category a text's keywords point at (claims and the alert
/// names in their evidence); GENERAL when none does. The category with the
/// most keyword hits wins; ties go to the more specific one.
pub fn fault_category(text: &str) -> &'static str {
    let lower = text.to_lowercase();
    let mut best = ("GENERAL", 0);
    for (category, words) in CATEGORIES {
        let hits = words.iter().filter(|w| lower.contains(*w)).count();
        if hits > best.1 {
            best = (category, hits);
        }
    }
    best.0
}

/// The case a useful run yields, None when it verified no claim.
pub fn case_from_evaluation(eval: &SelfEvaluation) -> Option<CaseDraft> {
    let claims = verified_claims(eval);
    let root: Vec<&VerifiedClaim> = {
        let rc: Vec<&VerifiedClaim> = claims
            .iter()
            .filter(|c| c.claim_type == "root_cause")
            .collect();
        if rc.is_empty() {
            claims.iter().collect()
        } else {
            rc
        }
    };
    if root.is_empty() {
        return None;
    }
    let root_cause = root
        .iter()
        .map(|c| {
            let evidence: Vec<String> = c.evidence.iter().take(3).map(|e| clean(e, 240)).collect();
            if evidence.is_empty() {
                format!("- {}", c.text.trim())
            } else {
                format!("- {} [evidence: {}]", c.text.trim(), evidence.join(" | "))
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let solution = recommended_actions(eval)
        .iter()
        .map(|a| format!("- {a}"))
        .collect::<Vec<_>>()
        .join("\n");
    let keywords: String = root
        .iter()
        .flat_map(|c| std::iter::once(c.text).chain(c.evidence.iter().copied()))
        .collect::<Vec<_>>()
        .join("\n");
    Some(CaseDraft {
        fault_category: fault_category(&keywords).to_string(),
        root_cause,
        solution,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn evaluation(facts: serde_json::Value, bindings: serde_json::Value) -> SelfEvaluation {
        serde_json::from_value(json!({"verifier_evaluation": {
            "verdict": "PASS", "model_verdict": "PASS", "verdict_ceiling": "PASS",
            "groundedness_score": 1.0, "critical_fact_count": 1, "facts_checked": facts,
            "rationale": "", "round": 1, "traceability_version": "v1",
            "executor_output_parse_status": null,
            "executor_structured_output": {"answer_version": "executor_evidence_v2",
                "claims": [
                    {"claim_id": "c1", "claim_type": "root_cause", "claim_text": "order-service connection pool exhausted",
                     "support_level": "direct", "evidence_bindings": []},
                    {"claim_id": "c2", "claim_type": "negative_observation", "claim_text": "no deploys found",
                     "support_level": "direct", "evidence_bindings": []}
                ],
                "hypotheses": [], "missing_info": [],
                "recommended_actions": [{"action_text": "raise the pool size", "reason": "pool exhausted"}]
            },
            "gatekeeper_result": {"status": "pass", "severity": "none", "rule_set_version": "t", "rules": [],
                "checked_bindings": bindings, "failed_rules": [], "warnings": [], "errors": []},
            "verified_binding_count": 1, "composer_output": null,
            "prompt_versions": {}, "rule_set_version": "t"
        }}))
        .unwrap()
    }

    fn fact(id: &str, verification: &str) -> serde_json::Value {
        json!({"claim_id": id, "fact": "fact text", "is_critical": true,
               "verification": verification, "detail": ""})
    }

    fn binding(id: &str, status: &str) -> serde_json::Value {
        json!({"claim_id": id, "claim_type": "root_cause", "tool_name": "query_logs",
               "source_invocation_id": 7, "raw_path": "$.logs[0]",
               "matched_text": "HikariPool-1 - Connection is not available", "status": status})
    }

    #[test]
    fn a_case_holds_verified_root_causes_with_their_evidence_and_the_actions() {
        let eval = evaluation(
            json!([fact("c1", "direct_evidence"), fact("c2", "direct_evidence")]),
            json!([binding("c1", "pass")]),
        );
        let case = case_from_evaluation(&eval).unwrap();
        assert_eq!(
            case.root_cause,
            "- order-service connection pool exhausted [evidence: HikariPool-1 - Connection is not available]"
        );
        assert!(
            !case.root_cause.contains("no deploys"),
            "negatives never become a cause"
        );
        assert_eq!(case.solution, "- raise the pool size (pool exhausted)");
        assert_eq!(case.fault_category, "DATABASE");
    }

    #[test]
    fn nothing_directly_verified_makes_no_case() {
        let eval = evaluation(
            json!([fact("c1", "indirect_support")]),
            json!([binding("c1", "fail")]),
        );
        assert_eq!(case_from_evaluation(&eval), None);
    }

    #[test]
    fn the_category_with_most_keyword_hits_wins() {
        assert_eq!(
            fault_category("HikariPool connection pool timeout"),
            "DATABASE"
        );
        assert_eq!(fault_category("disk full"), "DISK");
        assert_eq!(fault_category("something odd"), "GENERAL");
    }
}

//! VerifiedInput: keeps only Gatekeeper-passed bindings, drops claims left
//! with none, builds `verified_evidence` from matched_text and sets the
//! verdict ceiling: PASS when the Gatekeeper passed, else LOW_CONFID.
//!
//! Each executor binding is paired with the first not-yet-used checked
//! binding of the same claim id, tool, excerpt, invocation id and raw path
//! (a missing id or path pairs with a backfilled one). Pairing by content
//! rather than by position keeps the projection right for a result that
//! was injected, reordered, or has duplicate claim ids: a binding without a
//! passing partner is dropped. The evidence text the Verifier sees is the
//! ref text the Gatekeeper resolved, never the Executor's excerpt, and
//! bindings on hypotheses and recommended actions (checked, but never
//! evidence of a finding) are stripped.

use crate::vocab::contracts::{
    BindingStatus, CheckedBinding, Claim, EvidenceBinding, ExecutorEvidence, GatekeeperResult,
    Verdict, normalize_gatekeeper,
};
use crate::vocab::dto::{VerifiedEvidence, VerifiedProjection};
use crate::vocab::graph::Outcome;

pub fn project(output: &ExecutorEvidence, result: &GatekeeperResult) -> VerifiedProjection {
    let mut used = vec![false; result.checked_bindings.len()];
    let mut claims = Vec::new();
    let mut evidence = Vec::new();
    for claim in &output.claims {
        let mut kept = Vec::new();
        for b in &claim.evidence_bindings {
            let Some(i) = partner(claim, b, &result.checked_bindings, &used) else {
                continue;
            };
            if let Some(slot) = used.get_mut(i) {
                *slot = true;
            }
            let Some(cb) = result.checked_bindings.get(i) else {
                continue;
            };
            let (Some(id), Some(path)) = (cb.source_invocation_id, cb.raw_path.clone()) else {
                continue;
            };
            if cb.status != BindingStatus::Pass || cb.matched_text.is_empty() {
                continue;
            }
            evidence.push(VerifiedEvidence {
                claim_id: claim.claim_id.clone(),
                source_invocation_id: id,
                tool_name: cb.tool_name.clone(),
                raw_path: path.clone(),
                matched_text: cb.matched_text.clone(),
            });
            kept.push(EvidenceBinding {
                source_invocation_id: Some(id),
                invalid_invocation_id: None,
                raw_path: Some(path),
                ..b.clone()
            });
        }
        if !kept.is_empty() {
            claims.push(Claim {
                evidence_bindings: kept,
                ..claim.clone()
            });
        }
    }
    let verified_binding_count = evidence.len();
    let ceiling = if normalize_gatekeeper(Some(result)) == Outcome::Pass {
        Verdict::Pass
    } else {
        Verdict::LowConfid
    };
    VerifiedProjection {
        verified_output: ExecutorEvidence {
            answer_version: output.answer_version.clone(),
            claims,
            hypotheses: output
                .hypotheses
                .iter()
                .map(|h| {
                    let mut h = h.clone();
                    h.evidence_bindings.clear();
                    h
                })
                .collect(),
            recommended_actions: output
                .recommended_actions
                .iter()
                .map(|a| {
                    let mut a = a.clone();
                    a.evidence_bindings.clear();
                    a
                })
                .collect(),
            missing_info: output.missing_info.clone(),
        },
        verified_evidence: evidence,
        verified_binding_count,
        ceiling,
    }
}

/// The index of the first unused checked binding describing `b`.
fn partner(
    claim: &Claim,
    b: &EvidenceBinding,
    checked: &[CheckedBinding],
    used: &[bool],
) -> Option<usize> {
    let given_path = b
        .raw_path
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty());
    checked.iter().enumerate().position(|(i, cb)| {
        !used.get(i).copied().unwrap_or(true)
            && cb.claim_id == claim.claim_id
            && cb.tool_name == b.tool_name
            && cb.evidence_excerpt == b.evidence_excerpt
            && match b.source_invocation_id {
                Some(id) => cb.source_invocation_id == Some(id),
                None => cb.backfilled && b.invalid_invocation_id.is_none(),
            }
            && match given_path {
                Some(p) => cb.raw_path.as_deref() == Some(p),
                None => cb.backfilled,
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::contracts::{Hypothesis, RecommendedAction};

    fn binding(id: Option<i64>, path: Option<&str>, excerpt: &str) -> EvidenceBinding {
        EvidenceBinding {
            tool_name: "query_logs".into(),
            source_invocation_id: id,
            raw_path: path.map(str::to_string),
            evidence_excerpt: excerpt.into(),
            ..Default::default()
        }
    }

    fn checked(
        claim: &str,
        id: Option<i64>,
        path: &str,
        excerpt: &str,
        pass: bool,
        backfilled: bool,
    ) -> CheckedBinding {
        CheckedBinding {
            claim_id: claim.into(),
            claim_text: String::new(),
            claim_type: "observation".into(),
            tool_name: "query_logs".into(),
            source_invocation_id: id,
            raw_path: Some(path.into()),
            evidence_excerpt: excerpt.into(),
            matched_text: if pass {
                format!("REF {path}")
            } else {
                String::new()
            },
            status: if pass {
                BindingStatus::Pass
            } else {
                BindingStatus::Fail
            },
            failed_rule: None,
            detail: String::new(),
            backfilled,
        }
    }

    fn claim(id: &str, bindings: Vec<EvidenceBinding>) -> Claim {
        Claim {
            claim_id: id.into(),
            claim_type: "observation".into(),
            claim_text: format!("text of {id}"),
            support_level: "direct".into(),
            evidence_bindings: bindings,
        }
    }

    fn result(status: &str, severity: &str, cbs: Vec<CheckedBinding>) -> GatekeeperResult {
        GatekeeperResult {
            status: status.into(),
            severity: severity.into(),
            rule_set_version: "gatekeeper-rules-v1".into(),
            rules: vec![],
            checked_bindings: cbs,
            unverified_bindings: vec![],
            claim_errors: vec![],
            failed_rules: vec![],
            warnings: vec![],
            errors: vec![],
        }
    }

    #[test]
    fn keeps_passing_bindings_drops_empty_claims_and_uses_matched_text() {
        let out = ExecutorEvidence {
            answer_version: "executor_evidence_v2".into(),
            claims: vec![
                claim(
                    "c1",
                    vec![
                        binding(Some(1), Some("$.logs[0]"), "a"),
                        binding(Some(1), Some("$.logs[1]"), "b"),
                    ],
                ),
                claim("c2", vec![binding(Some(9), Some("$.logs[0]"), "fake")]),
            ],
            hypotheses: vec![Hypothesis {
                hypothesis_text: "h".into(),
                ..Default::default()
            }],
            recommended_actions: vec![RecommendedAction {
                action_text: "check pool".into(),
                reason: String::new(),
                evidence_bindings: vec![binding(Some(9), Some("$.logs[5]"), "x")],
            }],
            missing_info: vec!["m".into()],
        };
        let r = result(
            "fail",
            "low_confid",
            vec![
                checked("c1", Some(1), "$.logs[0]", "a", true, false),
                checked("c1", Some(1), "$.logs[1]", "b", false, false),
                checked("c2", Some(9), "$.logs[0]", "fake", false, false),
            ],
        );
        let p = project(&out, &r);
        assert_eq!(p.ceiling, Verdict::LowConfid);
        assert_eq!(p.verified_binding_count, 1);
        assert_eq!(p.verified_output.claims.len(), 1);
        assert_eq!(p.verified_output.claims[0].evidence_bindings.len(), 1);
        assert_eq!(p.verified_evidence[0].matched_text, "REF $.logs[0]");
        assert_eq!(p.verified_evidence[0].claim_id, "c1");
        assert_eq!(p.verified_output.hypotheses.len(), 1);
        assert_eq!(p.verified_output.missing_info, vec!["m".to_string()]);
        assert!(
            p.verified_output.recommended_actions[0]
                .evidence_bindings
                .is_empty()
        );
    }

    #[test]
    fn backfilled_ids_and_paths_reach_the_projection() {
        let out = ExecutorEvidence {
            claims: vec![claim("c1", vec![binding(None, None, "a")])],
            ..Default::default()
        };
        let r = result(
            "pass",
            "none",
            vec![checked("c1", Some(4), "$.logs[2]", "a", true, true)],
        );
        let p = project(&out, &r);
        assert_eq!(p.ceiling, Verdict::Pass);
        let b = &p.verified_output.claims[0].evidence_bindings[0];
        assert_eq!(b.source_invocation_id, Some(4));
        assert_eq!(b.raw_path.as_deref(), Some("$.logs[2]"));
    }

    #[test]
    fn duplicate_claim_ids_and_duplicate_bindings_pair_one_to_one() {
        let b = binding(Some(1), Some("$.logs[0]"), "a");
        let out = ExecutorEvidence {
            claims: vec![
                claim("c1", vec![b.clone(), b.clone()]),
                claim("c1", vec![b]),
            ],
            ..Default::default()
        };
        let r = result(
            "fail",
            "low_confid",
            vec![
                checked("c1", Some(1), "$.logs[0]", "a", true, false),
                checked("c1", Some(1), "$.logs[0]", "a", false, false),
                checked("c1", Some(1), "$.logs[0]", "a", true, false),
            ],
        );
        let p = project(&out, &r);
        assert_eq!(p.verified_binding_count, 2);
        assert_eq!(p.verified_output.claims.len(), 2);
        assert!(
            p.verified_output
                .claims
                .iter()
                .all(|c| c.evidence_bindings.len() == 1)
        );
    }

    #[test]
    fn an_unmatched_or_inconsistent_result_verifies_nothing() {
        let out = ExecutorEvidence {
            claims: vec![claim("c1", vec![binding(Some(1), Some("$.logs[0]"), "a")])],
            ..Default::default()
        };
        // A passing checked binding for another excerpt does not count.
        let r = result(
            "pass",
            "none",
            vec![checked("c1", Some(1), "$.logs[0]", "other", true, false)],
        );
        let p = project(&out, &r);
        assert_eq!(p.verified_binding_count, 0);
        assert!(p.verified_output.claims.is_empty());
        // Unknown status: ceiling is LOW_CONFID, never PASS.
        let r = result("maybe", "none", vec![]);
        assert_eq!(project(&out, &r).ceiling, Verdict::LowConfid);
    }
}

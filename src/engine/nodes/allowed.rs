//! The Composer's allowed material: which verified claims the Verifier
//! allowed, with their verified evidence, and the gaps.
//!
//! A claim is allowed only when a fact check ties to it (by
//! `facts_checked[].claim_id`, else by its exact normalised text) and every
//! fact tied to it is direct_evidence or indirect_support. A claim with no
//! fact check, or with any contradicted or no_evidence fact, is not
//! allowed: silence from the Verifier is not permission.

use crate::engine::nodes::evidence_retry::extract_gaps;
use crate::evidence::facts::FactText;
use crate::vocab::contracts::{
    Claim, ExecutorEvidence, FactCheck, Lang, NO_EVIDENCE_PATH, Verdict, Verification,
    VerifierOutput,
};
use crate::vocab::dto::{AllowedClaim, ComposerInput, EvidenceGap, VerifiedEvidence};

pub fn build_composer_input(
    query: &str,
    lang: Lang,
    effective_verdict: Verdict,
    verified_output: &ExecutorEvidence,
    verified_evidence: &[VerifiedEvidence],
    verifier: &VerifierOutput,
) -> ComposerInput {
    let allowed_claims = verified_output
        .claims
        .iter()
        .filter_map(|c| allowed_claim(c, verified_evidence, &verifier.facts_checked))
        .collect();
    let mut missing_info: Vec<String> = Vec::new();
    let gap_lines = extract_gaps(verifier)
        .into_iter()
        .map(|g| gap_line(lang, &g));
    for line in verified_output
        .missing_info
        .iter()
        .cloned()
        .chain(gap_lines)
    {
        let line = line.trim().to_string();
        if !line.is_empty() && !missing_info.contains(&line) {
            missing_info.push(line);
        }
    }
    ComposerInput {
        original_query: query.to_string(),
        lang,
        verdict: effective_verdict,
        allowed_claims,
        allowed_hypotheses: verified_output.hypotheses.clone(),
        missing_info,
        recommended_actions: verified_output
            .recommended_actions
            .iter()
            .map(|a| {
                let mut a = a.clone();
                a.evidence_bindings.clear();
                a
            })
            .collect(),
        rationale: verifier.rationale.clone(),
    }
}

/// The fact checks that speak about `claim`.
fn facts_for<'a>(claim: &Claim, facts: &'a [FactCheck]) -> Vec<&'a FactCheck> {
    let by_id: Vec<&FactCheck> = facts
        .iter()
        .filter(|f| f.claim_id.as_deref().map(str::trim) == Some(claim.claim_id.as_str()))
        .collect();
    if !by_id.is_empty() {
        return by_id;
    }
    let text = FactText::new(&claim.claim_text);
    if text.is_empty() {
        return vec![];
    }
    facts
        .iter()
        .filter(|f| f.claim_id.is_none() && FactText::new(&f.fact).tokens().eq(text.tokens()))
        .collect()
}

fn allowed_claim(
    claim: &Claim,
    evidence: &[VerifiedEvidence],
    facts: &[FactCheck],
) -> Option<AllowedClaim> {
    let matched = facts_for(claim, facts);
    if matched.is_empty() || !matched.iter().all(|f| f.verification.is_supported()) {
        return None;
    }
    let verification = if matched
        .iter()
        .all(|f| f.verification == Verification::DirectEvidence)
    {
        Verification::DirectEvidence
    } else {
        Verification::IndirectSupport
    };
    let evidence: Vec<VerifiedEvidence> = evidence
        .iter()
        .filter(|e| e.claim_id == claim.claim_id)
        .cloned()
        .collect();
    let is_negative = claim.is_negative()
        || (!evidence.is_empty() && evidence.iter().all(|e| e.raw_path == NO_EVIDENCE_PATH));
    Some(AllowedClaim {
        claim_id: claim.claim_id.clone(),
        claim_type: claim.claim_type.clone(),
        claim_text: claim.claim_text.clone(),
        verification,
        is_negative,
        evidence,
    })
}

fn gap_line(lang: Lang, gap: &EvidenceGap) -> String {
    match (lang, gap.verification) {
        (Lang::En, Verification::IndirectSupport) => {
            format!("{} (only indirect support)", gap.fact)
        }
        (Lang::En, _) => format!("{} (no direct evidence)", gap.fact),
        (Lang::Zh, Verification::IndirectSupport) => format!("{}（仅有间接支持）", gap.fact),
        (Lang::Zh, _) => format!("{}（缺少直接证据）", gap.fact),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::contracts::{Hypothesis, RecommendedAction};

    fn claim(id: &str, ty: &str, text: &str) -> Claim {
        Claim {
            claim_id: id.into(),
            claim_type: ty.into(),
            claim_text: text.into(),
            support_level: "direct".into(),
            evidence_bindings: vec![],
        }
    }

    fn fact(id: Option<&str>, text: &str, v: Verification) -> FactCheck {
        FactCheck {
            claim_id: id.map(str::to_string),
            fact: text.into(),
            is_critical: true,
            verification: v,
            detail: String::new(),
            evidence_refs: vec![],
        }
    }

    fn ev(claim: &str, path: &str) -> VerifiedEvidence {
        VerifiedEvidence {
            claim_id: claim.into(),
            source_invocation_id: 1,
            tool_name: "query_logs".into(),
            raw_path: path.into(),
            matched_text: format!("ref {path}"),
        }
    }

    #[test]
    fn only_supported_and_checked_claims_are_allowed() {
        let out = ExecutorEvidence {
            claims: vec![
                claim("c1", "observation", "Pool exhausted on order-service"),
                claim("c2", "observation", "db slow"),
                claim("c3", "observation", "cache miss storm"),
                claim("c4", "observation", "latency up"),
                claim("c5", "observation", "never checked"),
                claim("c6", "observation", "Mixed facts"),
                claim("c7", "observation", "found nothing"),
            ],
            hypotheses: vec![Hypothesis {
                hypothesis_text: "h".into(),
                ..Default::default()
            }],
            recommended_actions: vec![RecommendedAction {
                action_text: "a".into(),
                ..Default::default()
            }],
            missing_info: vec!["trace ids".into()],
            ..Default::default()
        };
        let verifier = VerifierOutput {
            verdict: Verdict::Pass,
            groundedness_score: 1.0,
            critical_fact_count: 0,
            claim_checks: vec![],
            facts_checked: vec![
                fact(
                    None,
                    "pool exhausted on order-service.",
                    Verification::DirectEvidence,
                ),
                fact(Some("c2"), "db slow", Verification::NoEvidence),
                fact(Some("c3"), "cache", Verification::Contradicted),
                fact(Some("c4"), "latency up", Verification::IndirectSupport),
                fact(Some("c6"), "a", Verification::DirectEvidence),
                fact(Some("c6"), "b", Verification::Contradicted),
                fact(Some("c7"), "found nothing", Verification::DirectEvidence),
            ],
            rationale: "because".into(),
        };
        let evidence = vec![ev("c1", "$.logs[0]"), ev("c7", NO_EVIDENCE_PATH)];
        let input = build_composer_input(
            "why?",
            Lang::En,
            Verdict::LowConfid,
            &out,
            &evidence,
            &verifier,
        );
        let ids: Vec<&str> = input
            .allowed_claims
            .iter()
            .map(|c| c.claim_id.as_str())
            .collect();
        assert_eq!(ids, vec!["c1", "c4", "c7"]);
        assert_eq!(input.allowed_claims[0].evidence.len(), 1);
        assert!(!input.allowed_claims[0].is_negative);
        assert_eq!(
            input.allowed_claims[1].verification,
            Verification::IndirectSupport
        );
        assert!(input.allowed_claims[2].is_negative);
        assert_eq!(
            input.missing_info,
            vec![
                "trace ids".to_string(),
                "db slow (no direct evidence)".to_string(),
                "latency up (only indirect support)".to_string(),
            ]
        );
        assert_eq!(input.verdict, Verdict::LowConfid);
        assert_eq!(input.rationale, "because");
        assert_eq!(input.allowed_hypotheses.len(), 1);
        assert_eq!(input.recommended_actions.len(), 1);
        let zh = build_composer_input(
            "为什么",
            Lang::Zh,
            Verdict::LowConfid,
            &out,
            &evidence,
            &verifier,
        );
        assert!(
            zh.missing_info
                .contains(&"db slow（缺少直接证据）".to_string())
        );
    }
}

//! EvidenceRetry: turns the Verifier's critical gaps into the restricted
//! EVIDENCE_GAP_ONLY retry context ([`RetryContext`]), which sends the run
//! back to the Planner once (edge `verifier_low_confid_gap`).
//!
//! The context carries only verified material (the projection), the gaps,
//! and the queries that already succeeded in this run, so the second
//! Planner plans increments and the tool layer can refuse repeats. Code,
//! not the Verifier, decides what a gap is: a critical fact whose
//! verification is no_evidence or indirect_support.

use crate::evidence::facts::FactText;
use crate::text::clean;
use crate::vocab::contracts::{Lang, Verification, VerifierOutput};
use crate::vocab::dto::VerifiedProjection;
use crate::vocab::dto::{
    CompletedQuery, EvidenceGap, PlannerMode, PlannerRetryView, RetryConstraints, RetryContext,
};
use crate::vocab::tool::{EvidenceStatus, ToolInvocation};
use std::borrow::Borrow;

/// Model text copied into a gap is capped: a gap names a fact, it does not
/// carry an essay into the next prompt.
const MAX_GAP_CHARS: usize = 300;

/// Critical facts with no_evidence or indirect_support. Empty means no
/// retry is possible.
pub fn extract_gaps(output: &VerifierOutput) -> Vec<EvidenceGap> {
    let mut gaps: Vec<EvidenceGap> = Vec::new();
    for f in output.critical_gaps() {
        let fact = clean(&f.fact, MAX_GAP_CHARS);
        if fact.is_empty() {
            continue;
        }
        let claim_id = f
            .claim_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        if gaps
            .iter()
            .any(|g| g.claim_id == claim_id && g.fact == fact)
        {
            continue;
        }
        let reason = match clean(&f.detail, MAX_GAP_CHARS) {
            d if !d.is_empty() => d,
            _ => default_reason(f.verification).to_string(),
        };
        gaps.push(EvidenceGap {
            claim_id,
            fact,
            verification: f.verification,
            reason,
        });
    }
    gaps
}

fn default_reason(v: Verification) -> &'static str {
    match v {
        Verification::IndirectSupport => "only indirect support",
        _ => "no direct evidence",
    }
}

/// Queries of this run that returned a result (supported or no_evidence).
/// Deduped, failed and blocked calls are not "completed": they answered
/// nothing new.
pub fn completed_queries<I: Borrow<ToolInvocation>>(invocations: &[I]) -> Vec<CompletedQuery> {
    invocations
        .iter()
        .map(Borrow::borrow)
        .filter(|i: &&ToolInvocation| {
            let d = &i.retrieval_details;
            !d.blocked
                && matches!(
                    d.evidence_status,
                    EvidenceStatus::Supported | EvidenceStatus::NoEvidence
                )
        })
        .map(|i| CompletedQuery {
            tool: i.tool_name.clone(),
            arguments: i.input_params.clone(),
            invocation_id: i.id,
            evidence_status: i.retrieval_details.evidence_status.as_str().to_string(),
        })
        .collect()
}

pub fn retry_instruction(lang: Lang, round: u32) -> String {
    match lang {
        Lang::En => format!(
            "Evidence-gap retry (round {round}): plan only incremental queries for the evidence gaps listed. \
             Do not repeat completed queries, do not widen the service scope and do not restart the diagnosis. \
             Keep the prior verified claims."
        ),
        Lang::Zh => format!(
            "补证据轮次（第 {round} 轮）：仅针对以上证据缺口规划增量查询，不要重复已完成的检索，\
             不要扩大服务范围，也不要重新开始完整诊断；保留已验证的结论。"
        ),
    }
}

pub fn build_retry_context(
    round: u32,
    projection: &VerifiedProjection,
    gaps: &[EvidenceGap],
    invocations: &[impl Borrow<ToolInvocation>],
    lang: Lang,
) -> RetryContext {
    RetryContext {
        mode: PlannerMode::EvidenceGapOnly,
        round,
        prior_verified_output: projection.verified_output.clone(),
        prior_verified_evidence: projection.verified_evidence.clone(),
        evidence_gaps: gaps.to_vec(),
        completed_queries: completed_queries(invocations),
        constraints: RetryConstraints::default(),
        instruction: retry_instruction(lang, round),
    }
}

/// What the second Planner sees: gaps, completed queries and the texts of
/// prior verified claims that are not themselves gaps.
pub fn planner_view(ctx: &RetryContext) -> PlannerRetryView {
    let gap_texts: Vec<FactText> = ctx
        .evidence_gaps
        .iter()
        .filter(|g| g.claim_id.is_none())
        .map(|g| FactText::new(&g.fact))
        .collect();
    let confirmed_facts = ctx
        .prior_verified_output
        .claims
        .iter()
        .filter(|c| {
            let by_id = ctx
                .evidence_gaps
                .iter()
                .any(|g| g.claim_id.as_deref() == Some(c.claim_id.as_str()));
            let text = FactText::new(&c.claim_text);
            let by_text = gap_texts.iter().any(|g| g.tokens().eq(text.tokens()));
            !by_id && !by_text
        })
        .map(|c| clean(&c.claim_text, MAX_GAP_CHARS))
        .collect();
    PlannerRetryView {
        round: ctx.round,
        evidence_gaps: ctx.evidence_gaps.clone(),
        completed_queries: ctx.completed_queries.clone(),
        confirmed_facts,
        instruction: ctx.instruction.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::contracts::{Claim, ExecutorEvidence, FactCheck, Verdict};
    use crate::vocab::tool::{EvidenceRef, RetrievalDetails};
    use serde_json::json;

    fn fact(
        id: Option<&str>,
        text: &str,
        critical: bool,
        v: Verification,
        detail: &str,
    ) -> FactCheck {
        FactCheck {
            claim_id: id.map(str::to_string),
            fact: text.into(),
            is_critical: critical,
            verification: v,
            detail: detail.into(),
            evidence_refs: vec![],
        }
    }

    fn verifier(facts: Vec<FactCheck>) -> VerifierOutput {
        VerifierOutput {
            verdict: Verdict::LowConfid,
            groundedness_score: 0.5,
            critical_fact_count: 0,
            claim_checks: vec![],
            facts_checked: facts,
            rationale: "r".into(),
        }
    }

    fn inv(id: i64, status: EvidenceStatus, blocked: bool) -> ToolInvocation {
        ToolInvocation {
            id,
            run_id: 1,
            step_id: None,
            seq: 0,
            tool_name: "query_logs".into(),
            input_params: json!({"service": "order-service", "n": id}),
            output_preview: String::new(),
            output_length: 0,
            is_truncated: false,
            retrieval_details: RetrievalDetails {
                evidence_status: status,
                evidence_refs: vec![EvidenceRef {
                    raw_path: "$.logs[0]".into(),
                    text: "t".into(),
                }],
                deduped_from: None,
                blocked,
                retrieved_domains: vec![],
                source: Default::default(),
                buckets: None,
            },
            dedup_reason: None,
            duration_ms: 0,
            success: true,
            error_message: None,
        }
    }

    fn claim(id: &str, text: &str) -> Claim {
        Claim {
            claim_id: id.into(),
            claim_type: "observation".into(),
            claim_text: text.into(),
            support_level: "direct".into(),
            evidence_bindings: vec![],
        }
    }

    #[test]
    fn only_critical_unconfirmed_facts_are_gaps() {
        let v = verifier(vec![
            fact(
                Some("claim-1"),
                "pool exhausted",
                true,
                Verification::DirectEvidence,
                "",
            ),
            fact(
                Some("claim-2"),
                "db slow",
                true,
                Verification::NoEvidence,
                "no db metrics",
            ),
            fact(None, "latency up", true, Verification::IndirectSupport, ""),
            fact(
                Some("claim-4"),
                "minor",
                false,
                Verification::NoEvidence,
                "",
            ),
            fact(
                Some("claim-5"),
                "wrong",
                true,
                Verification::Contradicted,
                "",
            ),
            fact(
                Some("claim-2"),
                "db slow",
                true,
                Verification::NoEvidence,
                "dup",
            ),
        ]);
        let gaps = extract_gaps(&v);
        assert_eq!(gaps.len(), 2);
        assert_eq!(gaps[0].claim_id.as_deref(), Some("claim-2"));
        assert_eq!(gaps[0].reason, "no db metrics");
        assert_eq!(gaps[1].claim_id, None);
        assert_eq!(gaps[1].reason, "only indirect support");
        assert!(extract_gaps(&verifier(vec![])).is_empty());
    }

    #[test]
    fn retry_context_lists_successful_queries_and_the_confirmed_facts() {
        let projection = VerifiedProjection {
            verified_output: ExecutorEvidence {
                claims: vec![
                    claim("claim-1", "order-service pool exhausted"),
                    claim("claim-2", "db slow"),
                    claim("claim-3", "Latency up."),
                ],
                ..Default::default()
            },
            verified_evidence: vec![],
            verified_binding_count: 3,
            ceiling: Verdict::Pass,
        };
        let gaps = extract_gaps(&verifier(vec![
            fact(
                Some("claim-2"),
                "db slow",
                true,
                Verification::NoEvidence,
                "",
            ),
            fact(None, "latency up", true, Verification::IndirectSupport, ""),
        ]));
        let invs = vec![
            inv(1, EvidenceStatus::Supported, false),
            inv(2, EvidenceStatus::NoEvidence, false),
            inv(3, EvidenceStatus::Deduped, false),
            inv(4, EvidenceStatus::Failed, true),
            inv(5, EvidenceStatus::Failed, false),
        ];
        let ctx = build_retry_context(1, &projection, &gaps, &invs, Lang::Zh);
        assert_eq!(ctx.mode, PlannerMode::EvidenceGapOnly);
        assert_eq!(ctx.constraints, RetryConstraints::default());
        let ids: Vec<i64> = ctx
            .completed_queries
            .iter()
            .map(|q| q.invocation_id)
            .collect();
        assert_eq!(ids, vec![1, 2]);
        assert_eq!(ctx.completed_queries[1].evidence_status, "no_evidence");
        assert_eq!(
            ctx.completed_queries[0].arguments["service"],
            "order-service"
        );
        assert!(ctx.instruction.contains("增量"));
        assert!(retry_instruction(Lang::En, 1).contains("incremental"));
        let view = planner_view(&ctx);
        assert_eq!(
            view.confirmed_facts,
            vec!["order-service pool exhausted".to_string()]
        );
        assert_eq!(view.evidence_gaps.len(), 2);
        assert_eq!(view.completed_queries.len(), 2);
    }
}

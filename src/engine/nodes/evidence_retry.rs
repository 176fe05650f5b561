//! EvidenceRetry: turns the Verifier's critical gaps into the restricted
//! EVIDENCE_GAP_ONLY retry context (seed 003 section 4.1).
//!
//! OWNER: deterministic-nodes helper.

use crate::engine::contracts::VerifierOutput;
use crate::engine::dto::EvidenceGap;

/// Critical facts with no_evidence or indirect_support. Empty means no
/// retry is possible.
pub fn extract_gaps(output: &VerifierOutput) -> Vec<EvidenceGap> {
    let _ = output;
    vec![]
}

use super::verified_input::VerifiedProjection;
use crate::engine::contracts::Lang;
use crate::engine::dto::{PlannerMode, PlannerRetryView, RetryConstraints, RetryContext};
use crate::tools::ToolInvocation;

pub fn build_retry_context(
    round: u32,
    projection: &VerifiedProjection,
    gaps: Vec<EvidenceGap>,
    invocations: &[ToolInvocation],
    lang: Lang,
) -> RetryContext {
    let _ = (invocations, lang);
    RetryContext {
        mode: PlannerMode::EvidenceGapOnly,
        round,
        prior_verified_output: projection.verified_output.clone(),
        prior_verified_evidence: projection.verified_evidence.clone(),
        evidence_gaps: gaps,
        completed_queries: vec![],
        constraints: RetryConstraints::default(),
        instruction: String::new(),
    }
}

pub fn planner_view(context: &RetryContext) -> PlannerRetryView {
    PlannerRetryView {
        round: context.round,
        evidence_gaps: context.evidence_gaps.clone(),
        completed_queries: context.completed_queries.clone(),
        confirmed_facts: vec![],
        instruction: context.instruction.clone(),
    }
}

//! Allowed material for the Composer (placeholder until the
//! deterministic-nodes helper's version is merged).
//!
//! OWNER: deterministic-nodes helper.

use crate::engine::contracts::{ExecutorEvidence, Lang, Verdict, VerifierOutput};
use crate::engine::dto::{ComposerInput, VerifiedEvidence};

pub fn build_composer_input(
    query: &str,
    lang: Lang,
    verdict: Verdict,
    verified_output: &ExecutorEvidence,
    verified_evidence: &[VerifiedEvidence],
    verifier_output: &VerifierOutput,
) -> ComposerInput {
    let _ = (verified_output, verified_evidence);
    ComposerInput {
        original_query: query.to_string(),
        lang,
        verdict,
        allowed_claims: vec![],
        allowed_hypotheses: vec![],
        missing_info: vec![],
        recommended_actions: vec![],
        rationale: verifier_output.rationale.clone(),
    }
}

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

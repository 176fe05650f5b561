//! `self_evaluation`: the audit record of what the agents produced and what
//! the code decided, stored with the run (built at the end of a run in
//! `engine/run/finish.rs`). Typed, so a run's end clones its parts instead
//! of building a JSON tree.

use super::contracts::ParseStatus;
use super::contracts::{ComposerOutput, ExecutorEvidence, FactCheck, GatekeeperResult, Verdict};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

pub const TRACEABILITY_VERSION: &str = "v1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfEvaluation {
    pub verifier_evaluation: VerifierEvaluation,
}

/// `self_evaluation.verifier_evaluation`. `verdict` is the effective verdict
/// (`min(model_verdict, verdict_ceiling)`); a part the run never reached is
/// null.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifierEvaluation {
    pub verdict: Option<Verdict>,
    pub model_verdict: Option<Verdict>,
    pub verdict_ceiling: Option<Verdict>,
    pub groundedness_score: Option<f64>,
    pub critical_fact_count: Option<u32>,
    pub facts_checked: Option<Vec<FactCheck>>,
    pub rationale: Option<String>,
    /// 1 for the first round, 2 after an evidence retry.
    pub round: u32,
    pub traceability_version: String,
    pub executor_output_parse_status: Option<ParseStatusRecord>,
    pub executor_structured_output: Option<ExecutorEvidence>,
    pub gatekeeper_result: Option<Arc<GatekeeperResult>>,
    pub verified_binding_count: usize,
    pub composer_output: Option<ComposerOutput>,
    /// Role name to prompt content hash.
    pub prompt_versions: Arc<BTreeMap<String, String>>,
    pub rule_set_version: String,
}

impl SelfEvaluation {
    /// The record as stored and printed.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// `executor_output_parse_status`: whether the Executor's answer parsed as
/// `executor_evidence_v2`, and why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParseStatusRecord {
    pub status: ParseStatus,
    pub detail: String,
}

/// What a case_library row is made of, before it has ids: built by the
/// engine from what a useful run verified, persisted by the store.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseDraft {
    pub fault_category: String,
    pub root_cause: String,
    pub solution: String,
}

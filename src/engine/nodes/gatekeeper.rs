//! The Gatekeeper: code-level citation checks of every evidence binding
//! against this run's recorded invocations (seed 002 section 4).
//!
//! OWNER: deterministic-nodes helper.

use crate::engine::contracts::{ExecutorEvidence, GatekeeperResult};
use crate::tools::ToolInvocation;
use serde::{Deserialize, Serialize};

/// Rule metadata loaded from `gatekeeper-rules.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatekeeperRules {
    pub rule_set_version: String,
}

impl Default for GatekeeperRules {
    fn default() -> Self {
        GatekeeperRules {
            rule_set_version: "unset".into(),
        }
    }
}

/// Checks every binding of `output` against `invocations` (this run's only).
pub fn check(
    output: &ExecutorEvidence,
    invocations: &[ToolInvocation],
    rules: &GatekeeperRules,
) -> GatekeeperResult {
    let _ = (output, invocations);
    GatekeeperResult {
        status: "fail".into(),
        severity: "reject".into(),
        rule_set_version: rules.rule_set_version.clone(),
        rules: vec![],
        checked_bindings: vec![],
        failed_rules: vec![],
        warnings: vec![],
        errors: vec!["not implemented".into()],
    }
}

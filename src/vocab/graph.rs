//! The graph's vocabulary: node ids and the outcomes a node attempt ends
//! with. The edge table and the router that use them live in
//! `engine::graph`.

use super::agent::AgentRole;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeId {
    #[serde(rename = "START")]
    Start,
    Planner,
    Executor,
    Gatekeeper,
    VerifiedInput,
    Verifier,
    EvidenceRetry,
    Composer,
    Fallback,
    #[serde(rename = "END")]
    End,
}

impl NodeId {
    /// The eight executable nodes, in diagram order.
    pub const ALL: [NodeId; 8] = [
        NodeId::Planner,
        NodeId::Executor,
        NodeId::Gatekeeper,
        NodeId::VerifiedInput,
        NodeId::Verifier,
        NodeId::EvidenceRetry,
        NodeId::Composer,
        NodeId::Fallback,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NodeId::Start => "START",
            NodeId::Planner => "planner",
            NodeId::Executor => "executor",
            NodeId::Gatekeeper => "gatekeeper",
            NodeId::VerifiedInput => "verified_input",
            NodeId::Verifier => "verifier",
            NodeId::EvidenceRetry => "evidence_retry",
            NodeId::Composer => "composer",
            NodeId::Fallback => "fallback",
            NodeId::End => "END",
        }
    }

    pub fn parse(s: &str) -> Option<NodeId> {
        [NodeId::Start, NodeId::End]
            .into_iter()
            .chain(NodeId::ALL)
            .find(|n| n.as_str() == s)
    }

    /// The model role an agent node plays; None for deterministic nodes.
    pub fn agent_role(self) -> Option<AgentRole> {
        match self {
            NodeId::Planner => Some(AgentRole::Planner),
            NodeId::Executor => Some(AgentRole::Executor),
            NodeId::Verifier => Some(AgentRole::Verifier),
            NodeId::Composer => Some(AgentRole::Composer),
            NodeId::Start
            | NodeId::End
            | NodeId::Gatekeeper
            | NodeId::VerifiedInput
            | NodeId::EvidenceRetry
            | NodeId::Fallback => None,
        }
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// The terminal outcome of one node attempt. Execution statuses and
/// Gatekeeper statuses share one enum so that one event shape covers every
/// node; diagnosis verdicts are *not* outcomes (they live in the state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Outcome {
    Completed,
    InvalidOutput,
    RetryableFailed,
    NonRetryableFailed,
    ToolBlocked,
    Failed,
    Pass,
    LowConfid,
    Reject,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "COMPLETED",
            Outcome::InvalidOutput => "INVALID_OUTPUT",
            Outcome::RetryableFailed => "RETRYABLE_FAILED",
            Outcome::NonRetryableFailed => "NON_RETRYABLE_FAILED",
            Outcome::ToolBlocked => "TOOL_BLOCKED",
            Outcome::Failed => "FAILED",
            Outcome::Pass => "PASS",
            Outcome::LowConfid => "LOW_CONFID",
            Outcome::Reject => "REJECT",
        }
    }

    /// A failure that the graph may retry once on the same node.
    pub fn is_technical_failure(self) -> bool {
        matches!(self, Outcome::InvalidOutput | Outcome::RetryableFailed)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// Why an edge was taken: the stable code written to events, the
/// orchestration trace and the store. Each is defined once here; the edge
/// table says which edge carries which. `Cancelled` and `Interrupted` end a
/// run without an edge (the termination reason of a stopped run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasonCode {
    Start,
    Completed,
    PlannerTechnicalRetry,
    PlannerFailed,
    ExecutorInvalidOutput,
    ExecutorToolBlocked,
    ExecutorFailed,
    GatekeeperPass,
    GatekeeperLowConfid,
    GatekeeperNoVerifiedBinding,
    GatekeeperReject,
    VerifierLowConfidGap,
    VerifierTechnicalRetry,
    VerifierFailed,
    EvidenceGapRetry,
    ComposerCompleted,
    ComposerTechnicalRetry,
    ComposerFailed,
    Cancelled,
    Interrupted,
}

impl ReasonCode {
    pub const ALL: [ReasonCode; 20] = [
        ReasonCode::Start,
        ReasonCode::Completed,
        ReasonCode::PlannerTechnicalRetry,
        ReasonCode::PlannerFailed,
        ReasonCode::ExecutorInvalidOutput,
        ReasonCode::ExecutorToolBlocked,
        ReasonCode::ExecutorFailed,
        ReasonCode::GatekeeperPass,
        ReasonCode::GatekeeperLowConfid,
        ReasonCode::GatekeeperNoVerifiedBinding,
        ReasonCode::GatekeeperReject,
        ReasonCode::VerifierLowConfidGap,
        ReasonCode::VerifierTechnicalRetry,
        ReasonCode::VerifierFailed,
        ReasonCode::EvidenceGapRetry,
        ReasonCode::ComposerCompleted,
        ReasonCode::ComposerTechnicalRetry,
        ReasonCode::ComposerFailed,
        ReasonCode::Cancelled,
        ReasonCode::Interrupted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::Start => "start",
            ReasonCode::Completed => "completed",
            ReasonCode::PlannerTechnicalRetry => "planner_technical_retry",
            ReasonCode::PlannerFailed => "planner_failed",
            ReasonCode::ExecutorInvalidOutput => "executor_invalid_output",
            ReasonCode::ExecutorToolBlocked => "executor_tool_blocked",
            ReasonCode::ExecutorFailed => "executor_failed",
            ReasonCode::GatekeeperPass => "gatekeeper_pass",
            ReasonCode::GatekeeperLowConfid => "gatekeeper_low_confid",
            ReasonCode::GatekeeperNoVerifiedBinding => "gatekeeper_no_verified_binding",
            ReasonCode::GatekeeperReject => "gatekeeper_reject",
            ReasonCode::VerifierLowConfidGap => "verifier_low_confid_gap",
            ReasonCode::VerifierTechnicalRetry => "verifier_technical_retry",
            ReasonCode::VerifierFailed => "verifier_failed",
            ReasonCode::EvidenceGapRetry => "evidence_gap_retry",
            ReasonCode::ComposerCompleted => "composer_completed",
            ReasonCode::ComposerTechnicalRetry => "composer_technical_retry",
            ReasonCode::ComposerFailed => "composer_failed",
            ReasonCode::Cancelled => "cancelled",
            ReasonCode::Interrupted => "interrupted",
        }
    }

    pub fn parse(s: &str) -> Option<ReasonCode> {
        ReasonCode::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// A fallback after the Verifier allowed material: the post-verifier
    /// template may use that material. Every other fallback reason is a
    /// pre-verification failure and must not show any Executor claim.
    pub fn is_post_verifier_fallback(self) -> bool {
        self == ReasonCode::ComposerFailed
    }
}

impl fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl std::str::FromStr for ReasonCode {
    type Err = String;
    fn from_str(s: &str) -> Result<ReasonCode, String> {
        ReasonCode::parse(s).ok_or_else(|| format!("unknown reason code {s:?}"))
    }
}

impl PartialEq<str> for ReasonCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ReasonCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_codes_round_trip_through_their_text() {
        for r in ReasonCode::ALL {
            assert_eq!(ReasonCode::parse(r.as_str()), Some(r));
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
        }
        assert_eq!(ReasonCode::parse("Completed"), None);
    }
}

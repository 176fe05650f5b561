//! The graph's vocabulary: node ids and the outcomes a node attempt ends
//! with. The edge table and the router that use them live in
//! `engine::graph`.

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
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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
        f.write_str(self.as_str())
    }
}

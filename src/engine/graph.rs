//! The diagnosis graph as data: node ids, node outcomes, the edge table and
//! the pure router.
//!
//! The edge table is the single source of truth for routing. The router
//! decides a `reason_code` from (node, outcome, state) and then looks the
//! edge up in [`EDGES`], so a route that is not in the table cannot be taken.
//! The TUI draws the same table and the route tests enumerate it.

/// Node executions allowed in one run. The longest legal path is far below
/// it; hitting it is an unhandled failure.
pub const RECURSION_LIMIT: u32 = 32;

pub use crate::vocab::graph::{NodeId, Outcome};

/// One row of the routing table (DESIGN section 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    pub from: NodeId,
    pub to: NodeId,
    /// Human-readable condition, shown by the TUI and the docs.
    pub condition: &'static str,
    /// Stable reason code written to events and the orchestration trace.
    /// For `fallback -> END` it is `None`: the reason that led to the
    /// fallback is carried on.
    pub reason_code: Option<&'static str>,
}

const fn edge(
    from: NodeId,
    to: NodeId,
    condition: &'static str,
    reason_code: &'static str,
) -> Edge {
    Edge {
        from,
        to,
        condition,
        reason_code: Some(reason_code),
    }
}

use NodeId::*;

pub static EDGES: &[Edge] = &[
    edge(Start, Planner, "", "start"),
    edge(Planner, Executor, "COMPLETED", "completed"),
    edge(
        Planner,
        Planner,
        "INVALID_OUTPUT or RETRYABLE_FAILED, planner_retry_count = 0",
        "planner_technical_retry",
    ),
    edge(
        Planner,
        Fallback,
        "NON_RETRYABLE_FAILED, or second technical failure",
        "planner_failed",
    ),
    edge(Executor, Gatekeeper, "COMPLETED", "completed"),
    edge(
        Executor,
        Fallback,
        "INVALID_OUTPUT",
        "executor_invalid_output",
    ),
    edge(Executor, Fallback, "TOOL_BLOCKED", "executor_tool_blocked"),
    edge(Executor, Fallback, "FAILED", "executor_failed"),
    edge(Gatekeeper, VerifiedInput, "PASS", "gatekeeper_pass"),
    edge(
        Gatekeeper,
        VerifiedInput,
        "LOW_CONFID and >= 1 verified binding",
        "gatekeeper_low_confid",
    ),
    edge(
        Gatekeeper,
        Fallback,
        "LOW_CONFID and 0 verified bindings",
        "gatekeeper_no_verified_binding",
    ),
    edge(
        Gatekeeper,
        Fallback,
        "REJECT, or result missing/unknown",
        "gatekeeper_reject",
    ),
    edge(VerifiedInput, Verifier, "", "completed"),
    edge(
        Verifier,
        EvidenceRetry,
        "COMPLETED, effective LOW_CONFID, ceiling PASS, evidence_retry_count = 0, >= 1 critical gap",
        "verifier_low_confid_gap",
    ),
    edge(Verifier, Composer, "COMPLETED otherwise", "completed"),
    edge(
        Verifier,
        Verifier,
        "INVALID_OUTPUT or RETRYABLE_FAILED, verifier_retry_count = 0",
        "verifier_technical_retry",
    ),
    edge(
        Verifier,
        Fallback,
        "NON_RETRYABLE_FAILED, or second technical failure",
        "verifier_failed",
    ),
    edge(
        EvidenceRetry,
        Planner,
        "mode EVIDENCE_GAP_ONLY, planner_retry_count reset",
        "evidence_gap_retry",
    ),
    edge(Composer, End, "COMPLETED", "composer_completed"),
    edge(
        Composer,
        Composer,
        "INVALID_OUTPUT or RETRYABLE_FAILED, composer_retry_count = 0",
        "composer_technical_retry",
    ),
    edge(
        Composer,
        Fallback,
        "NON_RETRYABLE_FAILED, or second technical failure",
        "composer_failed",
    ),
    Edge {
        from: Fallback,
        to: End,
        condition: "",
        reason_code: None,
    },
];

/// What the router needs to know beyond (node, outcome). The run state
/// builds it; keeping it a small value type keeps the router pure and easy
/// to enumerate in tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RouteFacts {
    pub planner_retry_count: u32,
    pub verifier_retry_count: u32,
    pub composer_retry_count: u32,
    pub evidence_retry_count: u32,
    /// Gatekeeper-passed bindings available to the Verifier.
    pub verified_binding_count: usize,
    /// The verdict ceiling set by the Gatekeeper (None before it ran).
    pub ceiling: Option<crate::vocab::contracts::Verdict>,
    /// min(model verdict, ceiling), once the Verifier completed.
    pub effective_verdict: Option<crate::vocab::contracts::Verdict>,
    /// Critical facts with no_evidence / indirect_support in facts_checked.
    pub extractable_gap_count: usize,
    /// The reason that sent the run to the fallback.
    pub fallback_reason: Option<&'static str>,
}

/// The router's decision: the edge taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    pub to: NodeId,
    pub reason_code: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("no edge from {node} for outcome {outcome}")]
    NoEdge { node: NodeId, outcome: Outcome },
    #[error("fallback reached without a recorded reason")]
    FallbackWithoutReason,
}

/// The pure router: (node, outcome, facts) -> (next node, reason_code).
pub fn route(node: NodeId, outcome: Outcome, facts: &RouteFacts) -> Result<Route, RouteError> {
    use crate::vocab::contracts::Verdict;
    use Outcome as O;
    let no_edge = || RouteError::NoEdge { node, outcome };
    let reason: &'static str = match (node, outcome) {
        (Start, _) => "start",
        (Planner, O::Completed) => "completed",
        (Planner, o) if o.is_technical_failure() && facts.planner_retry_count == 0 => {
            "planner_technical_retry"
        }
        (Planner, o) if o.is_technical_failure() || o == O::NonRetryableFailed => "planner_failed",
        (Executor, O::Completed) => "completed",
        (Executor, O::InvalidOutput) => "executor_invalid_output",
        (Executor, O::ToolBlocked) => "executor_tool_blocked",
        (Executor, O::Failed) => "executor_failed",
        (Gatekeeper, O::Pass) => "gatekeeper_pass",
        (Gatekeeper, O::LowConfid) if facts.verified_binding_count > 0 => "gatekeeper_low_confid",
        (Gatekeeper, O::LowConfid) => "gatekeeper_no_verified_binding",
        // Anything else the Gatekeeper reports is treated as a rejection.
        (Gatekeeper, _) => "gatekeeper_reject",
        (VerifiedInput, O::Completed) => "completed",
        (Verifier, O::Completed) => {
            let gap_retry = facts.effective_verdict == Some(Verdict::LowConfid)
                && facts.ceiling == Some(Verdict::Pass)
                && facts.evidence_retry_count == 0
                && facts.extractable_gap_count > 0;
            if gap_retry {
                "verifier_low_confid_gap"
            } else {
                "completed"
            }
        }
        (Verifier, o) if o.is_technical_failure() && facts.verifier_retry_count == 0 => {
            "verifier_technical_retry"
        }
        (Verifier, o) if o.is_technical_failure() || o == O::NonRetryableFailed => {
            "verifier_failed"
        }
        (EvidenceRetry, O::Completed) => "evidence_gap_retry",
        (Composer, O::Completed) => "composer_completed",
        (Composer, o) if o.is_technical_failure() && facts.composer_retry_count == 0 => {
            "composer_technical_retry"
        }
        (Composer, o) if o.is_technical_failure() || o == O::NonRetryableFailed => {
            "composer_failed"
        }
        (Fallback, _) => {
            let reason = facts
                .fallback_reason
                .ok_or(RouteError::FallbackWithoutReason)?;
            return Ok(Route {
                to: End,
                reason_code: reason,
            });
        }
        _ => return Err(no_edge()),
    };
    EDGES
        .iter()
        .find(|e| e.from == node && e.reason_code == Some(reason))
        .map(|e| Route {
            to: e.to,
            reason_code: reason,
        })
        .ok_or_else(no_edge)
}

/// Fallback reasons that come after the Verifier allowed material: the
/// post-verifier template may use that material. Every other reason is a
/// pre-verification failure and must not show any Executor claim.
pub fn is_post_verifier_fallback(reason: &str) -> bool {
    reason == "composer_failed"
}

/// Renders the edge table as a Mermaid flowchart (docs and `diagraph graph`).
pub fn to_mermaid() -> String {
    let mut out = String::from("flowchart TD\n");
    for e in EDGES {
        let label = e.reason_code.unwrap_or("fallback reason");
        out.push_str(&format!("    {} -->|{}| {}\n", e.from, label, e.to));
    }
    out
}

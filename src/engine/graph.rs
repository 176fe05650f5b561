//! The diagnosis graph as data: the edge table and the pure router.
//!
//! Each row of [`EDGES`] carries its guard as data: the outcomes it
//! accepts and the condition on the run's [`RouteFacts`]. The router is a
//! lookup: the first row from the node whose guard holds is the edge
//! taken, so a route that is not in the table cannot be taken and a reason
//! code is written once, in its row. The TUI draws the same table, the
//! Mermaid export prints it and the route tests enumerate it.

use crate::vocab::contracts::Verdict;
pub use crate::vocab::graph::{NodeId, Outcome, ReasonCode};
use std::fmt;

/// Node executions allowed in one run. The longest legal path is far below
/// it; hitting it is an unhandled failure.
pub const RECURSION_LIMIT: u32 = 32;

/// Which node outcomes a row accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum On {
    /// Any outcome.
    Any,
    Is(Outcome),
    /// INVALID_OUTPUT or RETRYABLE_FAILED: the failures a node may retry.
    TechnicalFailure,
    /// A technical failure or NON_RETRYABLE_FAILED.
    Failure,
}

impl On {
    pub fn accepts(self, outcome: Outcome) -> bool {
        match self {
            On::Any => true,
            On::Is(o) => o == outcome,
            On::TechnicalFailure => outcome.is_technical_failure(),
            On::Failure => outcome.is_technical_failure() || outcome == Outcome::NonRetryableFailed,
        }
    }
}

/// What must hold of the run besides the outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// Nothing more: the row applies whenever an earlier row of the node
    /// did not.
    Always,
    /// The node's technical retry is still unused.
    RetryUnused(NodeId),
    /// At least one binding passed the Gatekeeper.
    VerifiedBindings,
    /// Effective LOW_CONFID under a PASS ceiling, no evidence retry yet,
    /// and at least one critical gap the retry could close.
    EvidenceGap,
}

impl Guard {
    pub fn holds(self, facts: &RouteFacts) -> bool {
        match self {
            Guard::Always => true,
            Guard::RetryUnused(node) => facts.retry_count(node) == 0,
            Guard::VerifiedBindings => facts.verified_binding_count > 0,
            Guard::EvidenceGap => {
                facts.effective_verdict == Some(Verdict::LowConfid)
                    && facts.ceiling == Some(Verdict::Pass)
                    && facts.evidence_retry_count == 0
                    && facts.extractable_gap_count > 0
            }
        }
    }
}

/// One row of the routing table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    pub from: NodeId,
    pub on: On,
    pub guard: Guard,
    pub to: NodeId,
    /// Stable reason code written to events and the orchestration trace.
    /// For `fallback -> END` it is `None`: the reason that led to the
    /// fallback is carried on.
    pub reason_code: Option<ReasonCode>,
}

const fn edge(from: NodeId, on: On, guard: Guard, to: NodeId, reason: ReasonCode) -> Edge {
    Edge {
        from,
        on,
        guard,
        to,
        reason_code: Some(reason),
    }
}

use Guard::{Always, EvidenceGap, RetryUnused, VerifiedBindings};
use NodeId::*;
use On::{Any, Is};
use Outcome as O;
use ReasonCode as R;

/// The routing table. Rows of one node are tried in order; the first
/// whose outcome and guard match is taken.
pub static EDGES: &[Edge] = &[
    edge(Start, Any, Always, Planner, R::Start),
    edge(Planner, Is(O::Completed), Always, Executor, R::Completed),
    edge(
        Planner,
        On::TechnicalFailure,
        RetryUnused(Planner),
        Planner,
        R::PlannerTechnicalRetry,
    ),
    edge(Planner, On::Failure, Always, Fallback, R::PlannerFailed),
    edge(Executor, Is(O::Completed), Always, Gatekeeper, R::Completed),
    edge(
        Executor,
        Is(O::InvalidOutput),
        Always,
        Fallback,
        R::ExecutorInvalidOutput,
    ),
    edge(
        Executor,
        Is(O::ToolBlocked),
        Always,
        Fallback,
        R::ExecutorToolBlocked,
    ),
    edge(Executor, Is(O::Failed), Always, Fallback, R::ExecutorFailed),
    edge(
        Gatekeeper,
        Is(O::Pass),
        Always,
        VerifiedInput,
        R::GatekeeperPass,
    ),
    edge(
        Gatekeeper,
        Is(O::LowConfid),
        VerifiedBindings,
        VerifiedInput,
        R::GatekeeperLowConfid,
    ),
    edge(
        Gatekeeper,
        Is(O::LowConfid),
        Always,
        Fallback,
        R::GatekeeperNoVerifiedBinding,
    ),
    // REJECT, and anything else a Gatekeeper reports, is a rejection.
    edge(Gatekeeper, Any, Always, Fallback, R::GatekeeperReject),
    edge(
        VerifiedInput,
        Is(O::Completed),
        Always,
        Verifier,
        R::Completed,
    ),
    edge(
        Verifier,
        Is(O::Completed),
        EvidenceGap,
        EvidenceRetry,
        R::VerifierLowConfidGap,
    ),
    edge(Verifier, Is(O::Completed), Always, Composer, R::Completed),
    edge(
        Verifier,
        On::TechnicalFailure,
        RetryUnused(Verifier),
        Verifier,
        R::VerifierTechnicalRetry,
    ),
    edge(Verifier, On::Failure, Always, Fallback, R::VerifierFailed),
    edge(
        EvidenceRetry,
        Is(O::Completed),
        Always,
        Planner,
        R::EvidenceGapRetry,
    ),
    edge(
        Composer,
        Is(O::Completed),
        Always,
        End,
        R::ComposerCompleted,
    ),
    edge(
        Composer,
        On::TechnicalFailure,
        RetryUnused(Composer),
        Composer,
        R::ComposerTechnicalRetry,
    ),
    edge(Composer, On::Failure, Always, Fallback, R::ComposerFailed),
    Edge {
        from: Fallback,
        on: Any,
        guard: Always,
        to: End,
        reason_code: None,
    },
];

impl Edge {
    /// The row's condition in words, for the TUI, the docs and the Mermaid
    /// export: made from the guard, so it cannot drift from it.
    pub fn condition(&self) -> String {
        let on = match self.on {
            On::Any => String::new(),
            On::Is(o) => o.as_str().to_string(),
            On::TechnicalFailure => "INVALID_OUTPUT or RETRYABLE_FAILED".into(),
            On::Failure => "NON_RETRYABLE_FAILED, or second technical failure".into(),
        };
        let guard = match self.guard {
            Guard::Always => None,
            Guard::RetryUnused(node) => Some(format!("{node}_retry_count = 0")),
            Guard::VerifiedBindings => Some(">= 1 verified binding".into()),
            Guard::EvidenceGap => Some(
                "effective LOW_CONFID, ceiling PASS, evidence_retry_count = 0, >= 1 critical gap"
                    .into(),
            ),
        };
        match (on.is_empty(), guard) {
            (_, None) => on,
            (true, Some(g)) => g,
            (false, Some(g)) => format!("{on}, {g}"),
        }
    }
}

impl fmt::Display for Edge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} -> {}", self.from, self.to)?;
        if let Some(r) = self.reason_code {
            write!(f, " ({r})")?;
        }
        Ok(())
    }
}

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
    pub ceiling: Option<Verdict>,
    /// min(model verdict, ceiling), once the Verifier completed.
    pub effective_verdict: Option<Verdict>,
    /// Critical facts with no_evidence / indirect_support in facts_checked.
    pub extractable_gap_count: usize,
    /// The reason that sent the run to the fallback.
    pub fallback_reason: Option<ReasonCode>,
}

impl RouteFacts {
    /// The technical-retry counter of a node that has one.
    pub fn retry_count(&self, node: NodeId) -> u32 {
        match node {
            NodeId::Planner => self.planner_retry_count,
            NodeId::Verifier => self.verifier_retry_count,
            NodeId::Composer => self.composer_retry_count,
            _ => 0,
        }
    }
}

/// The router's decision: the edge taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    pub to: NodeId,
    pub reason_code: ReasonCode,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("no edge from {node} for outcome {outcome}")]
    NoEdge { node: NodeId, outcome: Outcome },
    #[error("fallback reached without a recorded reason")]
    FallbackWithoutReason,
}

/// The pure router: (node, outcome, facts) -> (next node, reason_code), the
/// first row of [`EDGES`] from `node` whose outcome and guard match.
pub fn route(node: NodeId, outcome: Outcome, facts: &RouteFacts) -> Result<Route, RouteError> {
    let edge = EDGES
        .iter()
        .find(|e| e.from == node && e.on.accepts(outcome) && e.guard.holds(facts))
        .ok_or(RouteError::NoEdge { node, outcome })?;
    let reason_code = match edge.reason_code {
        Some(r) => r,
        None => facts
            .fallback_reason
            .ok_or(RouteError::FallbackWithoutReason)?,
    };
    Ok(Route {
        to: edge.to,
        reason_code,
    })
}

/// Renders the edge table as a Mermaid flowchart (docs and `diagraph graph`).
pub fn to_mermaid() -> String {
    to_mermaid_marked(&[])
}

/// The Mermaid flowchart with one run's path marked: `taken` are the
/// (from, to, reason) steps the run took, in order. Each is matched to
/// its row of the table (by from and to, and by reason code where the row
/// has one); those rows' arrows and the nodes they touch are styled, the
/// node the run ended at more strongly.
pub fn to_mermaid_marked(taken: &[(NodeId, NodeId, ReasonCode)]) -> String {
    let mut out = String::from("flowchart TD\n");
    for e in EDGES {
        let label = e.reason_code.map_or("fallback reason", ReasonCode::as_str);
        out.push_str(&format!("    {} -->|{}| {}\n", e.from, label, e.to));
    }
    if taken.is_empty() {
        return out;
    }
    let mut links: Vec<usize> = Vec::new();
    let mut nodes: Vec<NodeId> = Vec::new();
    for (from, to, reason) in taken {
        let row = EDGES
            .iter()
            .position(|e| {
                e.from == *from && e.to == *to && e.reason_code.is_none_or(|r| r == *reason)
            })
            .or_else(|| EDGES.iter().position(|e| e.from == *from && e.to == *to));
        if let Some(i) = row.filter(|i| !links.contains(i)) {
            links.push(i);
        }
        for n in [*from, *to] {
            if !nodes.contains(&n) {
                nodes.push(n);
            }
        }
    }
    links.sort_unstable();
    let names = |ns: &[NodeId]| ns.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(",");
    out.push_str("    classDef visited fill:#dff5e1,stroke:#2e7d32,stroke-width:2px\n");
    out.push_str("    classDef last fill:#fff3c4,stroke:#b26a00,stroke-width:3px\n");
    out.push_str(&format!("    class {} visited\n", names(&nodes)));
    if let Some((_, last, _)) = taken.last() {
        out.push_str(&format!("    class {} last\n", last.as_str()));
    }
    if !links.is_empty() {
        let ids = links
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",");
        out.push_str(&format!(
            "    linkStyle {ids} stroke:#2e7d32,stroke-width:3px\n"
        ));
    }
    out
}

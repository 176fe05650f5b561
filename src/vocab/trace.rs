//! `orchestration_trace`, derived from the node terminal events
//! ([`NodeEvent`], one per node attempt) and nothing else: no prompts, no
//! tool text, no state snapshot.

use super::graph::{NodeId, Outcome, ReasonCode};
use serde::{Deserialize, Serialize};

pub const TRACE_VERSION: &str = "stategraph-v1";

/// The minimal terminal event of one node attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeEvent {
    pub node: NodeId,
    pub outcome: Outcome,
    pub reason_code: ReasonCode,
    pub attempt: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transition {
    pub from: NodeId,
    pub to: NodeId,
    pub reason_code: ReasonCode,
    pub attempt: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrchestrationTrace {
    pub version: String,
    pub transitions: Vec<Transition>,
    pub final_node: Option<NodeId>,
    pub termination_reason: Option<ReasonCode>,
    pub degraded: bool,
    pub evidence_retry_count: u32,
}

/// Transitions come from adjacent events: event i's node, reason and
/// attempt, to event i+1's node. The last event gives the final node and
/// the termination reason.
pub fn build_trace(events: &[NodeEvent], evidence_retry_count: u32) -> OrchestrationTrace {
    let transitions = events
        .windows(2)
        .map(|w| Transition {
            from: w[0].node,
            to: w[1].node,
            reason_code: w[0].reason_code,
            attempt: w[0].attempt,
        })
        .collect();
    let last = events.last();
    OrchestrationTrace {
        version: TRACE_VERSION.into(),
        transitions,
        final_node: last.map(|e| e.node),
        termination_reason: last.map(|e| e.reason_code),
        degraded: events.iter().any(|e| e.node == NodeId::Fallback),
        evidence_retry_count,
    }
}

/// The trace of a run that was stopped (cancelled, or found dead) while
/// `in_progress` was running: the edge into that node happened and is
/// kept, the node is where the run ended, and `reason` says why.
pub fn stopped_trace(
    events: &[NodeEvent],
    in_progress: Option<NodeId>,
    evidence_retry_count: u32,
    reason: ReasonCode,
) -> OrchestrationTrace {
    let mut trace = build_trace(events, evidence_retry_count);
    if let (Some(node), Some(last)) = (in_progress, events.last()) {
        trace.transitions.push(Transition {
            from: last.node,
            to: node,
            reason_code: last.reason_code,
            attempt: last.attempt,
        });
    }
    if in_progress.is_some() {
        trace.final_node = in_progress;
    }
    trace.termination_reason = Some(reason);
    trace
}

impl OrchestrationTrace {
    /// The node path, e.g. `[planner, executor, ..., composer]`, as the
    /// scenarios' `expect_route` lists it.
    pub fn route(&self) -> Vec<NodeId> {
        let mut route: Vec<NodeId> = self.transitions.iter().map(|t| t.from).collect();
        if let Some(last) = self.final_node {
            route.push(last);
        }
        route
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(node: NodeId, outcome: Outcome, reason: ReasonCode) -> NodeEvent {
        NodeEvent {
            node,
            outcome,
            reason_code: reason,
            attempt: 1,
        }
    }

    #[test]
    fn trace_follows_adjacent_events() {
        let t = build_trace(
            &[
                ev(NodeId::Planner, Outcome::Completed, ReasonCode::Completed),
                ev(NodeId::Executor, Outcome::Completed, ReasonCode::Completed),
                ev(
                    NodeId::Gatekeeper,
                    Outcome::Reject,
                    ReasonCode::GatekeeperReject,
                ),
                ev(
                    NodeId::Fallback,
                    Outcome::Completed,
                    ReasonCode::GatekeeperReject,
                ),
            ],
            0,
        );
        assert_eq!(t.transitions.len(), 3);
        assert_eq!(t.transitions[2].from, NodeId::Gatekeeper);
        assert_eq!(t.transitions[2].to, NodeId::Fallback);
        assert_eq!(t.transitions[2].reason_code, "gatekeeper_reject");
        assert_eq!(t.final_node, Some(NodeId::Fallback));
        assert_eq!(t.termination_reason, Some(ReasonCode::GatekeeperReject));
        assert!(t.degraded);
        assert_eq!(t.route().len(), 4);
    }

    #[test]
    fn a_stopped_trace_keeps_the_edge_into_the_node_it_stopped_in() {
        let done = [ev(
            NodeId::Planner,
            Outcome::Completed,
            ReasonCode::Completed,
        )];
        let t = stopped_trace(&done, Some(NodeId::Executor), 0, ReasonCode::Cancelled);
        assert_eq!(t.transitions.len(), 1);
        assert_eq!(t.transitions[0].to, NodeId::Executor);
        assert_eq!(t.final_node, Some(NodeId::Executor));
        assert_eq!(t.termination_reason, Some(ReasonCode::Cancelled));
        assert_eq!(t.route(), [NodeId::Planner, NodeId::Executor]);
        // Stopped before any node finished: where it was, and why.
        let t = stopped_trace(&[], Some(NodeId::Planner), 0, ReasonCode::Interrupted);
        assert!(t.transitions.is_empty());
        assert_eq!(t.route(), [NodeId::Planner]);
        assert_eq!(t.termination_reason, Some(ReasonCode::Interrupted));
    }
}

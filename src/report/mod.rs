//! Reports made from a stored run (`vocab::run_trace::RunTrace`): the
//! Markdown and Mermaid exports, and the comparison of two runs. Pure
//! functions from the trace to text or JSON, shared by `diagraph export`
//! and `diagraph compare` and by the TUI (`y` copies the Markdown, the
//! compare view shows the comparison).
//!
//! Everything a run's text contributes (question, answer, claims,
//! excerpts) is untrusted: the Markdown escapes what would change its
//! structure, and nothing here interprets it.

pub mod compare;
pub mod markdown;
pub mod timeline;

use crate::vocab::graph::{NodeId, ReasonCode};
use crate::vocab::run_trace::RunTrace;

/// The steps a run took through the graph, START and END included:
/// (from, to, reason code), in order. Empty when the stored orchestration
/// trace does not parse.
pub fn path(trace: &RunTrace) -> Vec<(NodeId, NodeId, ReasonCode)> {
    let Some(o) = trace.run.orchestration_trace() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let first = o.transitions.first().map(|t| t.from).or(o.final_node);
    if let Some(first) = first {
        out.push((NodeId::Start, first, ReasonCode::Start));
    }
    out.extend(o.transitions.iter().map(|t| (t.from, t.to, t.reason_code)));
    if let (Some(last), Some(reason)) = (o.final_node, o.termination_reason) {
        out.push((last, NodeId::End, reason));
    }
    out
}

/// The run's nodes in the order visited, START and END included.
pub fn route(trace: &RunTrace) -> Vec<NodeId> {
    let p = path(trace);
    let mut out: Vec<NodeId> = p.first().map(|s| s.0).into_iter().collect();
    out.extend(p.iter().map(|s| s.1));
    out
}

/// What a PASS resting on no verified finding (an unknown service, no
/// evidence) adds to its label, so it never reads as a bare PASS.
pub const NO_FINDINGS: &str = "no findings";

/// Whether a verdict is a PASS with no verified finding under it.
pub fn pass_without_findings(
    verdict: Option<crate::vocab::contracts::Verdict>,
    gatekeeper: Option<&crate::vocab::contracts::GatekeeperResult>,
) -> bool {
    verdict == Some(crate::vocab::contracts::Verdict::Pass)
        && gatekeeper.is_none_or(|g| g.verified_binding_count() == 0)
}

/// The Mermaid flowchart of the routing table with this run's path
/// marked.
pub fn mermaid(trace: &RunTrace) -> String {
    crate::engine::graph::to_mermaid_marked(&path(trace))
}

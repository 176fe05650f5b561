//! The routing table, edge by edge: every row of `graph::EDGES` is driven
//! through the pure router and the real run-state bookkeeping
//! (`RunState::apply`), impossible (node, outcome) pairs have no edge, the
//! retry counters stop every loop, and an exhaustive walk over all outcome
//! sequences shows every path ends well inside the recursion limit.

use diagraph::engine::graph::{EDGES, RECURSION_LIMIT, Route, RouteError, route};
use diagraph::engine::state::RunState;
use diagraph::vocab::contracts::Verdict;
use diagraph::vocab::dto::{EvidenceGap, PlannerMode};
use diagraph::vocab::graph::{NodeId, Outcome};
use std::collections::BTreeSet;

fn gap() -> EvidenceGap {
    EvidenceGap {
        claim_id: None,
        fact: "f".into(),
        verification: diagraph::vocab::contracts::Verification::NoEvidence,
        reason: "r".into(),
    }
}

fn state() -> RunState {
    RunState::new(1, "s".into(), "q".into())
}

/// Routes and applies, like the engine loop does.
fn take(s: &mut RunState, node: NodeId, outcome: Outcome) -> Route {
    let r = route(node, outcome, &s.route_facts()).expect("edge exists");
    s.apply(node, r);
    r
}

/// One driver per edge: a state set-up and the (node, outcome) to route.
fn drive_all() -> Vec<(NodeId, NodeId, Option<diagraph::vocab::graph::ReasonCode>)> {
    let mut taken = Vec::new();
    let mut record = |node: NodeId, r: Route| taken.push((node, r.to, Some(r.reason_code)));

    let mut s = state();
    record(
        NodeId::Start,
        route(NodeId::Start, Outcome::Completed, &s.route_facts()).unwrap(),
    );
    record(
        NodeId::Planner,
        take(&mut s, NodeId::Planner, Outcome::Completed),
    );
    record(
        NodeId::Planner,
        take(&mut state(), NodeId::Planner, Outcome::InvalidOutput),
    );
    record(
        NodeId::Planner,
        take(&mut state(), NodeId::Planner, Outcome::NonRetryableFailed),
    );
    for (o, reason) in [
        (Outcome::Completed, "completed"),
        (Outcome::InvalidOutput, "executor_invalid_output"),
        (Outcome::ToolBlocked, "executor_tool_blocked"),
        (Outcome::Failed, "executor_failed"),
    ] {
        let r = take(&mut state(), NodeId::Executor, o);
        assert_eq!(r.reason_code, reason);
        record(NodeId::Executor, r);
    }
    record(
        NodeId::Gatekeeper,
        take(&mut state(), NodeId::Gatekeeper, Outcome::Pass),
    );
    let mut s = state();
    s.verified_binding_count = 1;
    record(
        NodeId::Gatekeeper,
        take(&mut s, NodeId::Gatekeeper, Outcome::LowConfid),
    );
    record(
        NodeId::Gatekeeper,
        take(&mut state(), NodeId::Gatekeeper, Outcome::LowConfid),
    );
    record(
        NodeId::Gatekeeper,
        take(&mut state(), NodeId::Gatekeeper, Outcome::Reject),
    );
    record(
        NodeId::VerifiedInput,
        take(&mut state(), NodeId::VerifiedInput, Outcome::Completed),
    );
    let mut s = state();
    s.ceiling = Some(Verdict::Pass);
    s.effective_verdict = Some(Verdict::LowConfid);
    s.evidence_gaps = vec![gap()];
    record(
        NodeId::Verifier,
        take(&mut s, NodeId::Verifier, Outcome::Completed),
    );
    record(
        NodeId::Verifier,
        take(&mut state(), NodeId::Verifier, Outcome::Completed),
    );
    record(
        NodeId::Verifier,
        take(&mut state(), NodeId::Verifier, Outcome::RetryableFailed),
    );
    record(
        NodeId::Verifier,
        take(&mut state(), NodeId::Verifier, Outcome::NonRetryableFailed),
    );
    record(
        NodeId::EvidenceRetry,
        take(&mut state(), NodeId::EvidenceRetry, Outcome::Completed),
    );
    record(
        NodeId::Composer,
        take(&mut state(), NodeId::Composer, Outcome::Completed),
    );
    record(
        NodeId::Composer,
        take(&mut state(), NodeId::Composer, Outcome::InvalidOutput),
    );
    record(
        NodeId::Composer,
        take(&mut state(), NodeId::Composer, Outcome::NonRetryableFailed),
    );
    let mut s = state();
    take(&mut s, NodeId::Gatekeeper, Outcome::Reject);
    let r = take(&mut s, NodeId::Fallback, Outcome::Completed);
    assert_eq!(
        r.reason_code, "gatekeeper_reject",
        "fallback carries the reason that led to it"
    );
    taken.push((NodeId::Fallback, r.to, None));
    taken
}

#[test]
fn every_edge_of_the_table_is_reachable_through_the_router() {
    let taken: BTreeSet<(NodeId, NodeId, Option<diagraph::vocab::graph::ReasonCode>)> =
        drive_all().into_iter().collect();
    let table: BTreeSet<(NodeId, NodeId, Option<diagraph::vocab::graph::ReasonCode>)> = EDGES
        .iter()
        .map(|e| (e.from, e.to, e.reason_code))
        .collect();
    assert_eq!(taken, table);
}

#[test]
fn impossible_pairs_have_no_edge() {
    let facts = state().route_facts();
    for (node, outcome) in [
        (NodeId::Planner, Outcome::Pass),
        (NodeId::Planner, Outcome::ToolBlocked),
        (NodeId::Executor, Outcome::Pass),
        (NodeId::Executor, Outcome::RetryableFailed),
        (NodeId::Executor, Outcome::NonRetryableFailed),
        (NodeId::VerifiedInput, Outcome::Reject),
        (NodeId::Verifier, Outcome::Pass),
        (NodeId::Verifier, Outcome::ToolBlocked),
        (NodeId::EvidenceRetry, Outcome::Failed),
        (NodeId::Composer, Outcome::LowConfid),
        (NodeId::End, Outcome::Completed),
    ] {
        assert_eq!(
            route(node, outcome, &facts),
            Err(RouteError::NoEdge { node, outcome }),
            "{node} {outcome}"
        );
    }
    assert_eq!(
        route(NodeId::Fallback, Outcome::Completed, &facts),
        Err(RouteError::FallbackWithoutReason)
    );
}

#[test]
fn retry_counters_stop_every_self_loop() {
    for node in [NodeId::Planner, NodeId::Verifier, NodeId::Composer] {
        let mut s = state();
        assert_eq!(take(&mut s, node, Outcome::InvalidOutput).to, node);
        assert_eq!(s.attempt, 2);
        let r = take(&mut s, node, Outcome::RetryableFailed);
        assert_eq!(r.to, NodeId::Fallback, "{node}: second technical failure");
        assert_eq!(
            s.evidence_retry_count, 0,
            "technical retries never count as evidence retries"
        );
    }
    // One evidence retry per run, and it starts a fresh Planner stage.
    let mut s = state();
    take(&mut s, NodeId::Planner, Outcome::InvalidOutput);
    s.ceiling = Some(Verdict::Pass);
    s.effective_verdict = Some(Verdict::LowConfid);
    s.evidence_gaps = vec![gap()];
    assert_eq!(
        take(&mut s, NodeId::Verifier, Outcome::Completed).to,
        NodeId::EvidenceRetry
    );
    take(&mut s, NodeId::EvidenceRetry, Outcome::Completed);
    assert_eq!((s.planner_retry_count, s.evidence_retry_count), (0, 1));
    assert_eq!(s.planner_mode, PlannerMode::EvidenceGapOnly);
    assert_eq!(
        take(&mut s, NodeId::Planner, Outcome::InvalidOutput).to,
        NodeId::Planner
    );
    s.ceiling = Some(Verdict::Pass);
    s.effective_verdict = Some(Verdict::LowConfid);
    s.evidence_gaps = vec![gap()];
    assert_eq!(
        take(&mut s, NodeId::Verifier, Outcome::Completed).to,
        NodeId::Composer
    );
}

#[test]
fn the_ceiling_and_missing_gaps_block_the_evidence_retry() {
    let mut s = state();
    s.ceiling = Some(Verdict::LowConfid);
    s.effective_verdict = Some(Verdict::LowConfid);
    s.evidence_gaps = vec![gap()];
    assert_eq!(
        take(&mut s, NodeId::Verifier, Outcome::Completed).to,
        NodeId::Composer
    );
    let mut s = state();
    s.ceiling = Some(Verdict::Pass);
    s.effective_verdict = Some(Verdict::LowConfid);
    assert_eq!(
        take(&mut s, NodeId::Verifier, Outcome::Completed).to,
        NodeId::Composer
    );
}

/// What a node may report; for the Verifier and the Gatekeeper also the
/// facts that change routing.
fn choices(node: NodeId) -> Vec<(Outcome, u8)> {
    use Outcome::*;
    match node {
        NodeId::Planner | NodeId::Composer => vec![
            (Completed, 0),
            (InvalidOutput, 0),
            (RetryableFailed, 0),
            (NonRetryableFailed, 0),
        ],
        NodeId::Executor => vec![
            (Completed, 0),
            (InvalidOutput, 0),
            (ToolBlocked, 0),
            (Failed, 0),
        ],
        NodeId::Gatekeeper => vec![(Pass, 0), (LowConfid, 0), (LowConfid, 1), (Reject, 0)],
        NodeId::Verifier => vec![
            (Completed, 0),
            (Completed, 1),
            (InvalidOutput, 0),
            (RetryableFailed, 0),
            (NonRetryableFailed, 0),
        ],
        _ => vec![(Completed, 0)],
    }
}

fn walk(node: NodeId, s: RunState, depth: u32, longest: &mut u32, paths: &mut u64) {
    assert!(
        depth <= RECURSION_LIMIT,
        "a legal path reached the recursion limit"
    );
    if node == NodeId::End {
        *longest = (*longest).max(depth);
        *paths += 1;
        return;
    }
    for (outcome, variant) in choices(node) {
        let mut s = s.clone();
        match (node, variant) {
            (NodeId::Gatekeeper, 1) => s.verified_binding_count = 1,
            (NodeId::Gatekeeper, _) => s.verified_binding_count = 0,
            (NodeId::VerifiedInput, _) => s.ceiling = Some(Verdict::Pass),
            (NodeId::Verifier, 1) => {
                s.effective_verdict = Some(Verdict::LowConfid);
                s.evidence_gaps = vec![gap()];
            }
            _ => {}
        }
        let r = route(node, outcome, &s.route_facts()).expect("every reported outcome routes");
        s.apply(node, r);
        walk(r.to, s, depth + 1, longest, paths);
    }
}

#[test]
fn every_path_terminates_far_below_the_recursion_limit() {
    let mut longest = 0;
    let mut paths = 0;
    walk(NodeId::Planner, state(), 0, &mut longest, &mut paths);
    assert!(paths > 100, "{paths}");
    assert!(longest < RECURSION_LIMIT, "{longest}");
    // planner x2, executor, gatekeeper, verified_input, verifier x2,
    // evidence_retry, planner x2, executor, gatekeeper, verified_input,
    // verifier, composer x2, fallback.
    assert_eq!(longest, 17);
}

#[test]
fn the_recursion_limit_counts_node_executions() {
    let mut s = state();
    s.counters.node_executions = RECURSION_LIMIT - 1;
    assert!(!s.recursion_limit_reached());
    s.counters.node_executions = RECURSION_LIMIT;
    assert!(s.recursion_limit_reached());
}

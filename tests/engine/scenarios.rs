//! Every shipped scenario runs on the in-memory recorder and takes exactly
//! its `expect_route`; its orchestration trace is the one derived from its
//! node events, the live NodeFinished events tell the same story, and the
//! run status and degraded flag follow ARCHITECTURE.md ("Run status").

use crate::helpers::scenario_dir;
use crate::runs::scenario_engine;
use diagraph::scenario::Scenario;
use diagraph::vocab::events::EventKind;
use diagraph::vocab::graph::NodeId;
use diagraph::vocab::run::RunStatus;
use diagraph::vocab::trace::{NodeEvent, build_trace};

#[tokio::test]
async fn every_shipped_scenario_takes_its_expected_route() {
    let list = Scenario::list(&scenario_dir());
    assert!(list.len() >= 30, "only {} scenarios", list.len());
    let mut failures = Vec::new();
    for (path, loaded) in list {
        let s = loaded.unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !s.description.trim().is_empty(),
            "{}: no description",
            path.display()
        );
        let want = s
            .expect_route
            .clone()
            .expect("every shipped scenario has expect_route");
        let (engine, recorder) = scenario_engine(&s);
        let out = engine.run(s.request()).await.expect("run persisted");
        let route = out.end.trace.route();
        if route != want {
            let finished: Vec<String> = out
                .events
                .iter()
                .filter_map(|e| match &e.kind {
                    EventKind::NodeFinished {
                        node,
                        outcome,
                        detail,
                        ..
                    } => Some(format!("{node}:{outcome}:{detail}")),
                    _ => None,
                })
                .collect();
            failures.push(format!(
                "{}: route {route:?} != {want:?}\n   {finished:?}",
                path.display()
            ));
            continue;
        }
        let reasons: Vec<String> = out
            .end
            .trace
            .transitions
            .iter()
            .map(|t| t.reason_code.to_string())
            .collect();
        println!(
            "{}: {reasons:?} -> {:?}",
            path.display(),
            out.end.trace.termination_reason
        );
        check_run(&s.name, &out, &recorder);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn check_run(
    name: &str,
    out: &diagraph::engine::RunOutcome,
    recorder: &diagraph::engine::MemoryRecorder,
) {
    // Trace == build_trace(node terminal events).
    let node_events: Vec<NodeEvent> = out
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::NodeFinished {
                node,
                outcome,
                reason_code,
                attempt,
                ..
            } => Some(NodeEvent {
                node: *node,
                outcome: *outcome,
                reason_code: *reason_code,
                attempt: *attempt,
            }),
            _ => None,
        })
        .collect();
    assert_eq!(
        out.end.trace,
        build_trace(&node_events, out.end.trace.evidence_retry_count),
        "{name}"
    );
    // Each NodeFinished's `next` is the following node; exactly one
    // terminal event per NodeEntered (one per attempt).
    let entered: Vec<(NodeId, u32)> = out
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::NodeEntered { node, attempt, .. } => Some((*node, *attempt)),
            _ => None,
        })
        .collect();
    let finished: Vec<(NodeId, u32, NodeId)> = out
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::NodeFinished {
                node,
                attempt,
                next,
                ..
            } => Some((*node, *attempt, *next)),
            _ => None,
        })
        .collect();
    assert_eq!(entered.len(), finished.len(), "{name}");
    for (i, (node, attempt, next)) in finished.iter().enumerate() {
        assert_eq!(entered[i], (*node, *attempt), "{name}");
        let expected_next = finished.get(i + 1).map(|f| f.0).unwrap_or(NodeId::End);
        assert_eq!(*next, expected_next, "{name}");
    }
    // seq is 1-based and gapless; the journal holds the same events.
    for (i, e) in out.events.iter().enumerate() {
        assert_eq!(e.seq as usize, i + 1, "{name}");
    }
    assert_eq!(recorder.events_of(out.run_id), out.events, "{name}");
    // Lifecycle: SUCCESS whenever an answer was produced; degraded = fallback.
    assert_eq!(out.end.status, RunStatus::Success, "{name}");
    assert!(!out.end.answer.trim().is_empty(), "{name}");
    let via_fallback = out.end.trace.final_node == Some(NodeId::Fallback);
    assert_eq!(out.end.degraded, via_fallback, "{name}");
    assert!(matches!(
        out.events.last().map(|e| &e.kind),
        Some(EventKind::RunFinished(_))
    ));
    let data = recorder.snapshot();
    let (_, _, finish) = data.runs.iter().find(|r| r.0.run_id == out.run_id).unwrap();
    let finish = finish.as_ref().expect("run row finished");
    assert_eq!(finish.end.status, RunStatus::Success, "{name}");
    assert_eq!(finish.end.answer, out.end.answer, "{name}");
    assert_eq!(&finish.end.trace, &out.end.trace, "{name}");
}

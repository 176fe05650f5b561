//! Widths are counted in columns, not chars: a wide (CJK) label is cut to
//! fit and leaves the key hints on screen. Ids, tool and rule names and
//! statuses are whole at 120 columns and more; where a cut cannot be
//! avoided, both of their distinctive ends stay.

use crate::fixtures::{RunBuilder, binding, buffer_text, live_state, pass_run, render};
use diagraph::tui::state::Pane;
use diagraph::vocab::contracts::Verdict;
use diagraph::vocab::graph::{NodeId, Outcome};

#[test]
fn wide_labels_do_not_push_the_key_hints_off() {
    let mut state = live_state(&pass_run(1));
    // Two columns per character: counted in chars, this label would
    // take twice the room it was given.
    state.model_label = "模型".repeat(40);
    state.notify("通知".repeat(10));
    let text = buffer_text(render(&state, 80, 24).backend().buffer());
    let bar = text.lines().last().unwrap_or_default();
    assert!(bar.contains("q quit"), "{bar}");
    assert!(bar.contains('…'), "{bar}");
}

/// A run whose identifiers are long: a nine-digit invocation id, the
/// longest rule name, a retryable failure in the transitions.
fn long_ids_run() -> Vec<diagraph::vocab::events::EngineEvent> {
    let mut b = RunBuilder::new(1, "q");
    b.node(
        NodeId::Planner,
        Outcome::RetryableFailed,
        "planner_technical_retry",
        NodeId::Planner,
    );
    b.enter(NodeId::Executor, Some("completed"));
    let _ = b.tool("query_metrics", "svc", "text", 1);
    let mut inv = 0;
    for _ in 0..3 {
        inv = b.tool("lookup_knowledge", "svc", "text", 1);
    }
    b.finish(
        NodeId::Executor,
        Outcome::Completed,
        "completed",
        NodeId::Gatekeeper,
    );
    b.enter(NodeId::Gatekeeper, Some("completed"));
    let mut bad = binding(
        "claim-1",
        "t",
        "lookup_knowledge",
        inv,
        "$.logs[12345]",
        false,
    );
    bad.failed_rule = Some("binding.invocation_owned".into());
    bad.source_invocation_id = Some(987_654_321);
    b.gatekeeper("fail", "reject", vec![bad]);
    b.verdict(None, Some(Verdict::Reject), None);
    b.done("a", None)
}

#[test]
fn identifiers_and_statuses_are_whole_at_120_columns_and_more() {
    let events = long_ids_run();
    for (w, h) in [(120, 40), (160, 40), (200, 60)] {
        let mut state = live_state(&events);
        // The runs list with the run as the store lists it.
        state.runs[0].status = diagraph::vocab::run::RunStatus::Success;
        for pane in [Pane::Runs, Pane::Transitions, Pane::Tools, Pane::Bindings] {
            state.focus = pane;
            let text = buffer_text(render(&state, w, h).backend().buffer());
            let want: &[&str] = match pane {
                Pane::Runs => &["SUCCESS"],
                Pane::Transitions => &["RETRYABLE_FAILED", "planner_technical_retry"],
                Pane::Tools => &["query_metrics", "lookup_knowledge", "supported"],
                _ => &["987654321", "binding.invocation_owned", "$.logs[12345]"],
            };
            for needle in want {
                assert!(text.contains(needle), "{needle} cut at {w}x{h}:\n{text}");
            }
        }
    }
}

#[test]
fn a_cut_that_cannot_be_avoided_keeps_both_ends() {
    let mut b = RunBuilder::new(1, "q");
    b.enter(NodeId::Executor, None);
    let name = "query_logs_of_the_whole_fleet_in_every_region_and_zone";
    let inv = b.tool(name, "svc", "text", 1);
    b.finish(
        NodeId::Executor,
        Outcome::Completed,
        "completed",
        NodeId::Gatekeeper,
    );
    b.enter(NodeId::Gatekeeper, Some("completed"));
    let mut bad = binding("claim-1", "t", name, inv, "$.logs[12345]", false);
    bad.failed_rule = Some("binding.invocation_owned_by_this_very_run_and_no_other".into());
    b.gatekeeper("fail", "reject", vec![bad]);
    b.verdict(None, Some(Verdict::Reject), None);
    let events = b.done("a", None);

    let mut state = live_state(&events);
    state.focus = Pane::Bindings;
    let text = buffer_text(render(&state, 80, 24).backend().buffer());
    let row = text.lines().find(|l| l.contains("claim-1")).unwrap();
    // Each cut name keeps its head and its tail around one ellipsis.
    assert!(row.contains("query_…") && row.contains("_zone "), "{row}");
    assert!(row.contains("binding…") && row.contains("_other "), "{row}");
    assert!(row.contains("$.logs[12345]"), "{row}");
}

#[test]
fn an_mcp_tool_name_is_shown_whole_on_a_wide_screen() {
    let mut b = RunBuilder::new(1, "q");
    b.enter(NodeId::Executor, None);
    b.tool(
        "everything__get-structured-content",
        "location=Chicago",
        "text",
        1,
    );
    b.tool("query_logs", "svc", "text", 1);
    let events = b.done("a", None);
    let mut state = live_state(&events);
    state.focus = Pane::Tools;
    let text = buffer_text(render(&state, 160, 40).backend().buffer());
    assert!(
        text.contains("everything__get-structured-content"),
        "{text}"
    );
    assert!(text.contains("location=Chicago"), "{text}");
}

#[test]
fn a_narrowed_time_column_keeps_the_time_of_day() {
    let mut state = crate::fixtures::idle_state();
    let rows = (1..=3)
        .map(|i| {
            let mut r =
                crate::fixtures::summary(i, &format!("session-bd01b154b6b2287{i}"), "SUCCESS");
            r.question = "why is order-service failing?".into();
            r
        })
        .collect();
    diagraph::tui::update::update(&mut state, diagraph::tui::update::Msg::RunsLoaded(Ok(rows)));
    // Beside the graph and the verdict the runs list is narrow: the time
    // of day stays, not the date.
    let text = buffer_text(render(&state, 200, 60).backend().buffer());
    let row = text.lines().find(|l| l.contains("SUCCESS")).unwrap();
    assert!(row.contains("23:05"), "{row}");
    // With room, both.
    state.focus = Pane::Runs;
    let text = buffer_text(render(&state, 160, 30).backend().buffer());
    let row = text.lines().find(|l| l.contains("SUCCESS")).unwrap();
    assert!(row.contains("07-08 23:05"), "{row}");
}

//! What the workbench shows of model calls: a streamed answer growing in
//! the answer pane while its node runs, and the cost of priced runs in the
//! runs list.

use crate::fixtures::{RunBuilder, buffer_text, live_state, render};
use diagraph::tui::update::{Msg, update};
use diagraph::vocab::agent::AgentRole;
use diagraph::vocab::events::{DeltaPart, ModelDelta};
use diagraph::vocab::graph::NodeId;

fn screen(state: &diagraph::tui::state::AppState) -> String {
    buffer_text(render(state, 120, 40).backend().buffer())
}

fn piece(generation: u64, run_id: i64, step: u32, part: DeltaPart, text: &str) -> Msg {
    Msg::Delta {
        generation,
        delta: Box::new(ModelDelta {
            run_id,
            step_index: step,
            role: AgentRole::Planner,
            attempt: 1,
            part,
            text: text.into(),
        }),
    }
}

#[test]
fn a_streamed_answer_grows_in_the_answer_pane_until_its_call_ends() {
    let mut run = RunBuilder::new(7, "why is payment-service slow?");
    run.enter(NodeId::Planner, Some("start"));
    let mut state = live_state(&run.events);
    let g = state.shown.generation;
    update(
        &mut state,
        piece(g, 7, 1, DeltaPart::Reasoning, "alerts first"),
    );
    update(
        &mut state,
        piece(g, 7, 1, DeltaPart::Content, "{\"plan\": [\"check"),
    );
    let text = screen(&state);
    assert!(text.contains("planner is writing"), "{text}");
    assert!(text.contains("alerts first"), "{text}");
    assert!(text.contains("{\"plan\": [\"check"), "{text}");
    update(&mut state, piece(g, 7, 1, DeltaPart::Content, " alerts\"]"));
    assert!(screen(&state).contains("{\"plan\": [\"check alerts\"]"));

    // Pieces of another run, or of a source no longer shown, are not
    // this run's; terminal escapes in streamed text never reach the
    // screen raw.
    update(&mut state, piece(g, 8, 1, DeltaPart::Content, "OTHER RUN"));
    update(
        &mut state,
        piece(g + 1, 7, 1, DeltaPart::Content, "OLD SOURCE"),
    );
    update(
        &mut state,
        piece(g, 7, 1, DeltaPart::Content, "\x1b]52;c;aGk=\x07 ok"),
    );
    let text = screen(&state);
    assert!(
        !text.contains("OTHER RUN") && !text.contains("OLD SOURCE"),
        "{text}"
    );
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");

    // The call's ModelCalled event ends its text; a late piece of it is
    // stale and dropped.
    run.model(AgentRole::Planner);
    let ended = run.events.last().cloned().unwrap();
    update(
        &mut state,
        Msg::Engine {
            generation: g,
            event: Box::new(ended),
        },
    );
    update(&mut state, piece(g, 7, 1, DeltaPart::Content, "LATE"));
    let text = screen(&state);
    assert!(
        !text.contains("check alerts") && !text.contains("LATE"),
        "{text}"
    );
    assert!(state.view().streaming.is_none());

    // The next call starts a fresh text, and tool calls show by name.
    update(
        &mut state,
        piece(g, 7, 2, DeltaPart::ToolCall, "query_metrics"),
    );
    update(
        &mut state,
        piece(g, 7, 2, DeltaPart::ToolArguments, "{\"service\":"),
    );
    assert!(screen(&state).contains("→ query_metrics {\"service\":"));
}

#[test]
fn a_long_stream_shows_its_newest_lines() {
    let mut run = RunBuilder::new(3, "q");
    run.enter(NodeId::Planner, Some("start"));
    let mut state = live_state(&run.events);
    let g = state.shown.generation;
    for i in 0..200 {
        update(
            &mut state,
            piece(g, 3, 1, DeltaPart::Content, &format!("line {i}\n")),
        );
    }
    let text = screen(&state);
    assert!(text.contains("line 199"), "{text}");
    assert!(!text.contains("line 100 "), "{text}");
}

fn summary(id: i64, cost: Option<f64>) -> diagraph::vocab::run::RunSummary {
    diagraph::vocab::run::RunSummary {
        cost_usd: cost,
        ..crate::fixtures::summary(id, &format!("s-{id}"), "SUCCESS")
    }
}

#[test]
fn the_runs_list_shows_cost_when_a_run_was_priced() {
    let mut state = crate::fixtures::idle_state();
    state.runs = vec![summary(2, Some(0.0123)), summary(1, None)];
    let text = screen(&state);
    assert!(text.contains("cost"), "{text}");
    assert!(text.contains("$0.0123"), "{text}");
    // Unpriced runs (the offline model's) have no cost column at all.
    state.runs = vec![summary(1, None)];
    let text = screen(&state);
    assert!(!text.contains("cost") && !text.contains('$'), "{text}");
}

#[test]
fn a_node_s_detail_says_why_its_answer_was_rejected() {
    use diagraph::vocab::events::EventKind;
    use diagraph::vocab::graph::Outcome;
    let mut run = RunBuilder::new(5, "q");
    run.enter(NodeId::Planner, Some("start"));
    run.push(EventKind::ModelCalled {
        role: AgentRole::Planner,
        attempt: 1,
        step_id: 11,
        duration_ms: 40,
        tokens: 90,
        tool_calls: 0,
        error: None,
        usage: None,
        parse_error: Some("malformed: no JSON object in the output".into()),
    });
    run.finish(
        NodeId::Planner,
        Outcome::InvalidOutput,
        "planner_technical_retry",
        NodeId::Planner,
    );
    let theme = diagraph::tui::theme::Theme::dark();
    let stored = diagraph::tui::state::StoredRun::Missing("test".into());
    let (_, lines) =
        diagraph::tui::view::inspect::node(&run.events, 0, &stored, false, &theme).unwrap();
    let text: String = lines
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
                + "\n"
        })
        .collect();
    assert!(
        text.contains("answer rejected")
            && text.contains("malformed: no JSON object in the output"),
        "{text}"
    );
}

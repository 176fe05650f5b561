//! Tool and model text is untrusted: escape sequences, control characters
//! and bidi overrides in it must reach the screen as inert text.

use crate::fixtures::{RunBuilder, binding, buffer_text, live_state, render};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use diagraph::tui::state::Pane;
use diagraph::tui::update::{Msg, update};
use diagraph::vocab::contracts::Verdict;
use diagraph::vocab::graph::{NodeId, Outcome};

const NASTY: &str = "boom\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b[31mred\u{9b}1m\u{202e}evil\r\x08done";

fn nasty_run() -> Vec<diagraph::vocab::events::EngineEvent> {
    let mut b = RunBuilder::new(7, &format!("question {NASTY}"));
    b.node(
        NodeId::Planner,
        Outcome::Completed,
        "completed",
        NodeId::Executor,
    );
    b.enter(NodeId::Executor, Some("completed"));
    let inv = b.tool(&format!("query_logs{NASTY}"), NASTY, NASTY, 1);
    b.finish(
        NodeId::Executor,
        Outcome::Completed,
        "completed",
        NodeId::Gatekeeper,
    );
    b.enter(NodeId::Gatekeeper, Some("completed"));
    let mut bad = binding("claim-1", NASTY, "query_logs", inv, NASTY, false);
    bad.evidence_excerpt = NASTY.into();
    b.gatekeeper("fail", "reject", vec![bad]);
    b.verdict(None, Some(Verdict::Reject), None);
    b.finish(
        NodeId::Gatekeeper,
        Outcome::Reject,
        "gatekeeper_reject",
        NodeId::Fallback,
    );
    b.node(
        NodeId::Fallback,
        Outcome::Completed,
        "gatekeeper_reject",
        NodeId::End,
    );
    b.done(&format!("answer {NASTY}"), None)
}

fn assert_inert(buf: &ratatui::buffer::Buffer) {
    for cell in buf.content() {
        assert!(
            !cell
                .symbol()
                .chars()
                .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
            "control character in cell {:?}",
            cell.symbol()
        );
    }
}

#[test]
fn escapes_in_every_pane_render_as_inert_text() {
    let events = nasty_run();
    for pane in [Pane::Tools, Pane::Bindings, Pane::Runs, Pane::Transitions] {
        let mut state = live_state(&events);
        state.focus = pane;
        for (w, h) in [(80, 24), (200, 60)] {
            let term = render(&state, w, h);
            let buf = term.backend().buffer();
            assert_inert(buf);
            let text = buffer_text(buf);
            assert!(
                text.contains("␛[2J") || w == 80,
                "escape shown as text in {pane:?}"
            );
        }
    }
}

#[test]
fn the_detail_view_is_inert_too() {
    let mut state = live_state(&nasty_run());
    state.focus = Pane::Tools;
    update(
        &mut state,
        Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
    );
    assert!(state.popup.is_some());
    let term = render(&state, 120, 40);
    assert_inert(term.backend().buffer());
    state.popup = None;
    state.focus = Pane::Bindings;
    update(
        &mut state,
        Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
    );
    let term = render(&state, 120, 40);
    assert_inert(term.backend().buffer());
    assert!(buffer_text(term.backend().buffer()).contains("claim-1"));
}

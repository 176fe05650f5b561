//! Whole-screen and widget snapshots on ratatui's TestBackend at fixed
//! sizes. Snapshots don't carry colour, so the styles that carry meaning
//! (binding failed, verdict capped, degraded, PASS) are asserted directly.

use crate::fixtures::{
    buffer_text, capped_run, find_text, key, live_state, pass_run, reject_run, render, summary,
};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use diagraph::tui::state::{AppState, Mode, Pane, Popup};
use diagraph::tui::theme::{Role, Theme};
use diagraph::tui::update::{Msg, update};

#[test]
fn pass_run_80x24() {
    let state = live_state(&pass_run(1));
    let term = render(&state, 80, 24);
    insta::assert_snapshot!("pass_80x24", term.backend());
    let buf = term.backend().buffer();
    let (x, y) = find_text(buf, "PASS").unwrap();
    assert_eq!(
        buf[(x, y)].style().fg,
        state.theme.style(Role::VerdictPass).fg
    );
}

#[test]
fn pass_run_200x60_shows_every_pane() {
    let state = live_state(&pass_run(1));
    let term = render(&state, 200, 60);
    insta::assert_snapshot!("pass_200x60", term.backend());
    let text = buffer_text(term.backend().buffer());
    for needle in [
        "Runs",
        "Transitions",
        "Tool invocations",
        "Gatekeeper bindings",
        "Verdict",
        "Answer",
        "Question",
        "composer_completed",
        "HikariPool-1",
    ] {
        assert!(text.contains(needle), "{needle} missing");
    }
}

#[test]
fn reject_fallback_marks_failures_and_degraded() {
    let mut state = live_state(&reject_run(2));
    state.table_pane = Pane::Bindings;
    let term = render(&state, 120, 30);
    insta::assert_snapshot!("reject_120x30", term.backend());
    let buf = term.backend().buffer();
    let theme = &state.theme;
    let (x, y) = find_text(buf, "FAIL").unwrap();
    assert_eq!(buf[(x, y)].style().bg, theme.style(Role::BindingFailed).bg);
    let (x, y) = find_text(buf, "raw_path_in_refs Conn").unwrap();
    assert_eq!(buf[(x, y)].style().bg, theme.style(Role::BindingFailed).bg);
    let (x, y) = find_text(buf, "PASS ").unwrap_or_else(|| find_text(buf, "PASS").unwrap());
    assert_ne!(buf[(x, y)].style().bg, theme.style(Role::BindingFailed).bg);
    let (x, y) = find_text(buf, "DEGRADED").unwrap();
    assert_eq!(buf[(x, y)].style().bg, theme.style(Role::Degraded).bg);
    let (x, y) = find_text(buf, "REJECT").unwrap();
    assert_eq!(buf[(x, y)].style().fg, theme.style(Role::VerdictReject).fg);
    assert!(buffer_text(buf).contains("Answer (degraded)"));
    assert!(buffer_text(buf).contains("last: gatekeeper_reject"));
}

#[test]
fn capped_low_confid_is_visibly_capped() {
    let state = live_state(&capped_run(3));
    let term = render(&state, 100, 30);
    insta::assert_snapshot!("capped_100x30", term.backend());
    let buf = term.backend().buffer();
    let (x, y) = find_text(buf, "LOW_CONFID ▼ capped").unwrap();
    let capped = state.theme.style(Role::VerdictCapped);
    assert_eq!(buf[(x, y)].style().bg, capped.bg);
    assert_eq!(buf[(x, y)].style().fg, capped.fg);
    // The model verdict itself is PASS and styled as such.
    let (x, y) = find_text(buf, "PASS").unwrap();
    assert_eq!(
        buf[(x, y)].style().fg,
        state.theme.style(Role::VerdictPass).fg
    );
}

#[test]
fn replay_mid_way() {
    let events = pass_run(4);
    let mut state = live_state(&events);
    // Open the finished run from the runs list as a replay.
    state.focus = Pane::Runs;
    update(&mut state, key(KeyCode::Enter));
    assert_eq!(state.mode, Mode::Replay);
    for _ in 0..3 {
        update(
            &mut state,
            Msg::Key(KeyEvent::new(KeyCode::Char('N'), KeyModifiers::SHIFT)),
        );
    }
    state.focus = Pane::Graph;
    let term = render(&state, 100, 30);
    insta::assert_snapshot!("replay_mid_100x30", term.backend());
    let text = buffer_text(term.backend().buffer());
    assert!(text.contains(&format!("event {}/{}", state.shown.cursor, events.len())));
    assert!(text.contains("last: gatekeeper_pass"));
    assert!(!text.contains("composer_completed"));
}

/// A finished run with every pane populated: its graph, transitions,
/// tools, bindings, verdict and answer, a runs list with every status it
/// can show (DEGRADED, CANCELLED, FAILED, RUNNING), and a question typed.
fn finished_workbench() -> AppState {
    let mut state = live_state(&pass_run(1));
    let mut stored = summary(1, "s-1", "SUCCESS");
    stored.question = "why is order-service failing?".into();
    let mut degraded = summary(2, "s-1", "SUCCESS");
    degraded.degraded = true;
    degraded.effective_verdict = Some(diagraph::vocab::contracts::Verdict::Reject);
    update(
        &mut state,
        Msg::RunsLoaded(Ok(vec![
            stored,
            degraded,
            summary(3, "s-2", "CANCELLED"),
            summary(4, "s-2", "FAILED"),
            summary(5, "s-3", "RUNNING"),
        ])),
    );
    state.input.insert_str("and the payment-service?");
    state.focus = Pane::Graph;
    state
}

#[test]
fn a_finished_run_fills_every_pane_at_three_sizes() {
    for (w, h) in [(80, 24), (120, 40), (200, 50), (200, 60)] {
        let state = finished_workbench();
        let term = render(&state, w, h);
        insta::assert_snapshot!(format!("finished_{w}x{h}"), term.backend());
        let text = buffer_text(term.backend().buffer());
        // Each pane has its content on every size, not only its frame.
        for needle in [
            "Graph",
            "Verdict",
            "PASS",
            "Answer",
            "HikariPool-1",
            "payment-service?",
        ] {
            assert!(
                text.contains(needle),
                "{needle} missing at {w}x{h}:\n{text}"
            );
        }
        if w >= 120 {
            // Ids, rule names and statuses whole, in whichever table
            // shows them (one at a time when the tables share a tab).
            for (pane, needles) in [
                (
                    Pane::Tools,
                    &["query_logs", "query_metrics", "supported"][..],
                ),
                (
                    Pane::Transitions,
                    &["composer_completed", "gatekeeper_pass"][..],
                ),
                (Pane::Bindings, &["claim-1", "$.logs[0]"][..]),
                (
                    Pane::Runs,
                    &["DEGRADED", "CANCELLED", "FAILED", "RUNNING"][..],
                ),
            ] {
                let mut state = finished_workbench();
                state.focus = pane;
                let text = buffer_text(render(&state, w, h).backend().buffer());
                for needle in needles {
                    assert!(text.contains(needle), "{needle} at {w}x{h}:\n{text}");
                }
            }
        }
    }
}

#[test]
fn too_small_terminal_says_so() {
    let state = live_state(&pass_run(1));
    let term = render(&state, 60, 20);
    let text = buffer_text(term.backend().buffer());
    assert!(
        text.contains("terminal too small (need 80x24, have 60x20)"),
        "{text}"
    );
    // One column or one row short is too small too.
    let term = render(&finished_workbench(), 79, 24);
    insta::assert_snapshot!("too_small_79x24", term.backend());
    let text = buffer_text(render(&finished_workbench(), 80, 23).backend().buffer());
    assert!(text.contains("have 80x23"), "{text}");
}

#[test]
fn any_size_draws_and_handles_keys_without_panicking() {
    // Every popup open, on sizes down to nothing: the screen draws and
    // the keys that scroll a popup (sized to the screen) still work.
    for (w, h) in [
        (0, 0),
        (1, 1),
        (3, 2),
        (20, 5),
        (79, 23),
        (80, 24),
        (500, 3),
        (3, 300),
    ] {
        for open in ['?', 'd', '\n'] {
            let mut state = finished_workbench();
            update(&mut state, Msg::Resize(w, h));
            state.scenarios = Some(vec![]);
            match open {
                '\n' => {
                    state.focus = Pane::Verdict;
                    update(&mut state, key(KeyCode::Enter));
                }
                c => {
                    update(&mut state, crate::fixtures::ch(c));
                }
            }
            assert!(state.popup.is_some(), "{open:?} at {w}x{h}");
            for c in ['G', 'j', 'k', 'g'] {
                update(&mut state, crate::fixtures::ch(c));
                let _ = render(&state, w, h);
            }
        }
    }
}

#[test]
fn help_popup_is_generated_from_the_keymap() {
    let mut state = live_state(&pass_run(1));
    update(
        &mut state,
        Msg::Key(KeyEvent::new(KeyCode::Char('?'), KeyModifiers::SHIFT)),
    );
    assert_eq!(state.popup, Some(Popup::Help { scroll: 0 }));
    let term = render(&state, 100, 40);
    insta::assert_snapshot!("help_100x40", term.backend());
    // Every binding is in the help, page by page as it scrolls.
    update(&mut state, Msg::Resize(100, 40));
    let mut seen = buffer_text(term.backend().buffer());
    for _ in 0..40 {
        update(&mut state, key(KeyCode::Char('j')));
        seen.push_str(&buffer_text(render(&state, 100, 40).backend().buffer()));
    }
    for b in &state.keymap.bindings {
        assert!(
            seen.contains(b.description),
            "{} missing from help",
            b.description
        );
    }
}

#[test]
fn every_theme_renders_meaningful_styles() {
    for name in ["dark", "light", "high-contrast"] {
        let mut state = live_state(&capped_run(3));
        state.theme = Theme::load(name).unwrap();
        let term = render(&state, 100, 30);
        let buf = term.backend().buffer();
        let (x, y) = find_text(buf, "LOW_CONFID ▼ capped").unwrap();
        assert_eq!(
            buf[(x, y)].style().bg,
            state.theme.style(Role::VerdictCapped).bg,
            "{name}"
        );
    }
}

//! "state + keys -> state" tests for `update`, and the replay guarantee:
//! stepping a replay forwards and back lands on the same pane contents as
//! the live run showed after the same number of events.

use crate::fixtures::{
    buffer_text, capped_run, ch, idle_state, key, live_state, pass_run, reject_run, render,
};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use diagraph::engine::StepCommand;
use diagraph::tui::state::{Mode, Pane, Pending, Popup, RunView};
use diagraph::tui::update::{Command, Msg, node_boundary, update};

/// Every pane but the status bar and the input (which differ by mode).
fn panes_text(state: &diagraph::tui::state::AppState) -> String {
    let term = render(state, 120, 40);
    let text = buffer_text(term.backend().buffer());
    text.lines().take(40 - 4).collect::<Vec<_>>().join("\n")
}

#[test]
fn replay_steps_match_the_live_run_at_every_point() {
    for events in [pass_run(1), reject_run(2), capped_run(3)] {
        // What the live run showed after each event.
        let live: Vec<(RunView, String)> = (0..=events.len())
            .map(|k| {
                let mut s = live_state(&events[..k]);
                s.focus = Pane::Graph;
                // The runs list is not part of the run's panes.
                s.runs.clear();
                (s.view().clone(), panes_text(&s))
            })
            .collect();
        let mut state = live_state(&events);
        state.focus = Pane::Runs;
        update(&mut state, key(KeyCode::Enter));
        assert_eq!(state.mode, Mode::Replay);
        state.focus = Pane::Graph;
        state.runs.clear();
        assert_eq!(state.shown.cursor, 0);
        for (k, (view, text)) in live.iter().enumerate().skip(1) {
            update(&mut state, ch('n'));
            assert_eq!(state.shown.cursor, k);
            assert_eq!(state.view(), view, "forward to {k}");
            assert_eq!(&panes_text(&state), text, "forward to {k}");
        }
        update(&mut state, ch('n'));
        assert_eq!(state.shown.cursor, events.len(), "stops at the end");
        for k in (0..events.len()).rev() {
            update(&mut state, key(KeyCode::Left));
            assert_eq!(state.view(), &live[k].0, "back to {k}");
            assert_eq!(panes_text(&state), live[k].1, "back to {k}");
        }
    }
}

#[test]
fn node_steps_land_after_terminal_events() {
    let events = pass_run(1);
    let mut state = live_state(&events);
    state.focus = Pane::Runs;
    update(&mut state, key(KeyCode::Enter));
    update(&mut state, ch('N'));
    let k = state.shown.cursor;
    assert!(matches!(
        events[k - 1].kind,
        diagraph::vocab::events::EventKind::NodeFinished {
            node: diagraph::vocab::graph::NodeId::Planner,
            ..
        }
    ));
    assert_eq!(state.view().transitions.len(), 1);
    update(&mut state, ch('N'));
    assert_eq!(state.view().transitions.len(), 2);
    update(&mut state, ch('P'));
    assert_eq!(state.view().transitions.len(), 1);
    update(&mut state, ch('P'));
    assert_eq!(state.shown.cursor, 0);
    assert_eq!(node_boundary(&events, events.len(), true), events.len());
}

#[test]
fn events_of_a_stale_generation_or_foreign_run_are_dropped() {
    let mut state = live_state(&[]);
    let old = state.shown.generation;
    let new = state.begin(Mode::Live, true, false);
    let a = pass_run(1);
    update(
        &mut state,
        Msg::Engine {
            generation: old,
            event: Box::new(a[0].clone()),
        },
    );
    assert_eq!(state.shown.events.len(), 0);
    update(
        &mut state,
        Msg::Engine {
            generation: new,
            event: Box::new(a[0].clone()),
        },
    );
    let b = pass_run(9);
    update(
        &mut state,
        Msg::Engine {
            generation: new,
            event: Box::new(b[1].clone()),
        },
    );
    assert_eq!(state.shown.events.len(), 1);
    assert_eq!(state.view().run_id, Some(1));
}

#[test]
fn question_input_runs_and_keeps_history() {
    let mut state = idle_state();
    update(&mut state, ch('i'));
    assert_eq!(state.focus, Pane::Input);
    for c in "why q?".chars() {
        // `q` is text here, not quit.
        update(&mut state, ch(c));
    }
    assert!(!state.quit);
    let cmds = update(&mut state, key(KeyCode::Enter));
    let generation = state.shown.generation;
    assert_eq!(
        cmds,
        vec![Command::StartRun {
            generation,
            question: "why q?".into(),
            stepping: false,
        }]
    );
    assert!(!state.shown.stepping);
    // The focus stays in the input: a follow-up typed at once is text.
    assert_eq!(state.focus, Pane::Input);
    // Ctrl-S while typing turns step mode on for the next question.
    update(
        &mut state,
        Msg::Key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL)),
    );
    update(&mut state, ch('x'));
    // The first run is still going: a new question asks before it
    // replaces (and cancels) it.
    assert!(update(&mut state, key(KeyCode::Enter)).is_empty());
    assert!(matches!(
        &state.popup,
        Some(Popup::Confirm(Pending::Ask { question, stepping: true })) if question == "x"
    ));
    let cmds = update(&mut state, ch('y'));
    assert!(
        matches!(&cmds[..], [Command::StartRun { stepping: true, .. }]),
        "{cmds:?}"
    );
    assert!(state.shown.stepping);
    assert_eq!(
        update(&mut state, ch(' ')),
        vec![Command::Step(StepCommand::Next)]
    );
    state.history.truncate(1);
    assert_eq!(state.mode, Mode::Live);
    assert_eq!(state.history, vec!["why q?".to_string()]);
    update(&mut state, ch('i'));
    update(&mut state, key(KeyCode::Up));
    assert_eq!(state.input.lines(), ["why q?"]);
    update(&mut state, key(KeyCode::Down));
    assert_eq!(state.input.lines(), [""]);
    // Empty input does nothing.
    assert!(update(&mut state, key(KeyCode::Enter)).is_empty());
}

#[test]
fn tab_cycles_panes_and_quit_keys_quit() {
    let mut state = live_state(&pass_run(1));
    state.focus = Pane::Input;
    let mut seen = vec![];
    for _ in 0..Pane::CYCLE.len() {
        update(&mut state, key(KeyCode::Tab));
        seen.push(state.focus);
    }
    assert_eq!(state.focus, Pane::Input);
    assert_eq!(seen.len(), 9);
    update(
        &mut state,
        Msg::Key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT)),
    );
    assert_eq!(state.focus, Pane::Answer);
    assert_eq!(update(&mut state, ch('q')), vec![Command::Quit]);
    let mut state = idle_state();
    state.focus = Pane::Input;
    let ctrl_c = || Msg::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert_eq!(update(&mut state, ctrl_c()), vec![Command::Quit]);
    assert!(state.quit);
    // While a run is live, ctrl-c asks; a second one confirms.
    let mut state = live_state(&[]);
    assert!(update(&mut state, ctrl_c()).is_empty());
    assert!(!state.quit);
    assert_eq!(
        update(&mut state, ctrl_c()),
        vec![Command::Cancel, Command::Quit]
    );
    assert!(state.quit);
}

#[test]
fn a_live_run_asks_before_anything_stops_it_and_x_cancels_it() {
    let events = pass_run(1);
    let half = &events[..events.len() / 2];
    // q asks; n keeps the run; the run goes on.
    let mut state = live_state(half);
    assert!(update(&mut state, ch('q')).is_empty());
    assert!(matches!(state.popup, Some(Popup::Confirm(Pending::Quit))));
    let text = buffer_text(render(&state, 120, 40).backend().buffer());
    assert!(
        text.contains("Run 1 is still going. Quit and cancel it?"),
        "{text}"
    );
    assert!(update(&mut state, ch('n')).is_empty());
    assert!(state.popup.is_none() && !state.quit);
    // Other keys do nothing while the question is open.
    update(&mut state, ch('q'));
    assert!(update(&mut state, ch('j')).is_empty());
    assert!(update(&mut state, key(KeyCode::Esc)).is_empty());
    assert!(state.popup.is_none());
    // Opening a stored run asks too.
    state.runs = vec![diagraph::vocab::run::RunSummary {
        rerun_of: None,
        run_id: 7,
        session_id: "s".into(),
        status: diagraph::vocab::run::RunStatus::Success,
        effective_verdict: None,
        degraded: false,
        duration_ms: None,
        question: "q".into(),
        created_at: String::new(),
        tokens: 0,
        cost_usd: None,
    }];
    state.focus = Pane::Runs;
    assert!(update(&mut state, key(KeyCode::Enter)).is_empty());
    assert!(matches!(
        state.popup,
        Some(Popup::Confirm(Pending::Replay(7)))
    ));
    let cmds = update(&mut state, ch('y'));
    assert!(
        matches!(&cmds[..], [Command::LoadReplay { run_id: 7, .. }]),
        "{cmds:?}"
    );
    // x cancels a live run (the key is listed where it applies).
    let mut state = live_state(half);
    let hints: Vec<_> = state
        .keymap
        .hints(&state.contexts())
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert!(hints.contains(&"x".to_string()), "{hints:?}");
    assert_eq!(update(&mut state, ch('x')), vec![Command::Cancel]);
    // A finished run has nothing to cancel, and quits without asking.
    let mut done = live_state(&events);
    assert!(update(&mut done, ch('x')).is_empty());
    assert_eq!(update(&mut done, ch('q')), vec![Command::Quit]);
    // The source ending (the run was cancelled) closes the question.
    update(&mut state, ch('q'));
    let generation = state.shown.generation;
    update(
        &mut state,
        Msg::SourceDone {
            generation,
            error: None,
        },
    );
    assert!(state.popup.is_none());
    assert_eq!(update(&mut state, ch('q')), vec![Command::Quit]);
}

#[test]
fn enter_opens_detail_and_esc_closes_it() {
    let mut state = live_state(&pass_run(1));
    state.focus = Pane::Tools;
    update(&mut state, ch('j'));
    assert_eq!(state.sel.tools, 1);
    update(&mut state, key(KeyCode::Enter));
    match &state.popup {
        Some(Popup::Detail { title, lines, .. }) => {
            assert!(title.contains("1002"));
            assert!(lines.len() > 5);
        }
        other => panic!("{other:?}"),
    }
    update(&mut state, ch('j'));
    assert!(matches!(state.popup, Some(Popup::Detail { scroll: 1, .. })));
    update(&mut state, key(KeyCode::Esc));
    assert_eq!(state.popup, None);
}

#[test]
fn filter_narrows_the_runs_list() {
    let mut state = live_state(&pass_run(1));
    let generation = state.begin(Mode::Live, true, false);
    for e in reject_run(2) {
        update(
            &mut state,
            Msg::Engine {
                generation,
                event: Box::new(e),
            },
        );
    }
    assert_eq!(state.runs.len(), 2);
    update(&mut state, ch('/'));
    assert!(state.filter_editing);
    for c in "payment".chars() {
        update(&mut state, ch(c));
    }
    update(&mut state, key(KeyCode::Enter));
    assert!(!state.filter_editing);
    let shown: Vec<i64> = state.filtered_runs().iter().map(|r| r.run_id).collect();
    assert_eq!(shown, vec![2]);
    update(&mut state, ch('/'));
    update(&mut state, key(KeyCode::Esc));
    assert_eq!(state.filtered_runs().len(), 2);
}

#[test]
fn step_keys_reach_the_engine_only_in_step_mode() {
    let mut state = live_state(&[]);
    assert!(update(&mut state, ch(' ')).is_empty());
    state.begin(Mode::Demo, true, true);
    assert_eq!(
        update(&mut state, ch(' ')),
        vec![Command::Step(StepCommand::Next)]
    );
    assert_eq!(
        update(&mut state, ch('c')),
        vec![Command::Step(StepCommand::Continue)]
    );
    assert!(!state.shown.stepping);
    assert!(update(&mut state, ch(' ')).is_empty());
}

#[test]
fn demo_picker_starts_the_chosen_scenario() {
    use diagraph::tui::state::DemoEntry;
    let mut state = idle_state();
    assert_eq!(update(&mut state, ch('d')), vec![Command::ListScenarios]);
    let entry = |n: &str, err: Option<&str>| DemoEntry {
        path: format!("fixtures/scenarios/{n}.toml").into(),
        name: n.into(),
        description: format!("{n} description"),
        question: "q".into(),
        error: err.map(String::from),
    };
    update(
        &mut state,
        Msg::ScenariosLoaded(vec![entry("a", None), entry("b", None)]),
    );
    update(&mut state, ch('j'));
    let cmds = update(&mut state, key(KeyCode::Enter));
    let generation = state.shown.generation;
    assert_eq!(
        cmds,
        vec![Command::StartDemo {
            generation,
            path: "fixtures/scenarios/b.toml".into()
        }]
    );
    assert_eq!(state.mode, Mode::Demo);
    assert!(state.shown.stepping);
    let text = buffer_text(render(&state, 100, 30).backend().buffer());
    assert!(text.contains("b description"), "{text}");
    // A scenario that failed to load is reported, not started.
    update(&mut state, ch('d'));
    update(
        &mut state,
        Msg::ScenariosLoaded(vec![entry("bad", Some("bad.toml: no question"))]),
    );
    assert!(update(&mut state, key(KeyCode::Enter)).is_empty());
    assert!(
        state
            .notice_text()
            .unwrap_or_default()
            .contains("no question")
    );
}

/// The TUI says how a run ended and what it could not check, in plain
/// words: the failure with its class, failed sources of a run that ended
/// without an answer, and the pack's load warnings.
#[test]
fn the_answer_pane_shows_the_failure_failed_sources_and_pack_warnings() {
    use diagraph::vocab::events::EventKind;
    use diagraph::vocab::run::{Failure, FailureClass, RunSources, RunStatus};
    use diagraph::vocab::tool::{EvidenceStatus, SourceOutcome};
    use std::sync::Arc;
    let mut events = pass_run(1);
    for e in &mut events {
        match &mut e.kind {
            EventKind::RunStarted { sources, .. } => {
                *sources = Arc::new(RunSources {
                    pack_warnings: vec!["alerts.json:7: not valid JSON (EOF)".into()],
                    ..RunSources::default()
                });
            }
            EventKind::ToolInvoked { invocation } => {
                let mut inv = (**invocation).clone();
                inv.retrieval_details.evidence_status = EvidenceStatus::Failed;
                inv.retrieval_details.source = SourceOutcome {
                    backend: "prometheus:http://p:9090".into(),
                    failure_class: Some(FailureClass::Connection),
                    partial: None,
                };
                inv.error_message = Some("connection refused to http://p:9090".into());
                *invocation = Arc::new(inv);
            }
            EventKind::RunFinished(end) => {
                end.status = RunStatus::Cancelled;
                end.answer = String::new();
                end.failure = Some(Failure::new(
                    FailureClass::Cancelled,
                    "stopped by the user before the run finished",
                ));
            }
            _ => {}
        }
    }
    let state = live_state(&events);
    let text = buffer_text(render(&state, 200, 60).backend().buffer());
    assert!(
        text.contains("CANCELLED (cancelled): stopped by the user"),
        "{text}"
    );
    assert!(
        text.contains("could not check: query_logs #1001: connection refused to"),
        "{text}"
    );
    assert!(
        text.contains("pack warning: alerts.json:7: not valid JSON (EOF)"),
        "{text}"
    );
}

/// Priced model calls: the verdict panel shows the prompt/completion split
/// and the run's cost (models without a price show tokens only).
#[test]
fn the_verdict_panel_shows_the_usage_split_and_cost() {
    use diagraph::vocab::events::EventKind;
    use diagraph::vocab::usage::Usage;
    let mut events = pass_run(1);
    for e in &mut events {
        if let EventKind::ModelCalled { tokens, usage, .. } = &mut e.kind {
            *tokens = 1200;
            *usage = Some(Usage {
                prompt_tokens: 1000,
                completion_tokens: 200,
                cost_usd: Some(0.0018),
                ..Usage::default()
            });
        }
    }
    let calls = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ModelCalled { .. }))
        .count() as u64;
    let state = live_state(&events);
    let text = buffer_text(render(&state, 200, 60).backend().buffer());
    let cost = format!("cost       ${:.4}", 0.0018 * calls as f64);
    let split = format!("split      {} in / {} out", 1000 * calls, 200 * calls);
    assert!(text.contains(&cost), "{cost} in\n{text}");
    assert!(text.contains(&split), "{split} in\n{text}");
    // Without a price: tokens only, as before.
    let text = buffer_text(
        render(&live_state(&pass_run(1)), 200, 60)
            .backend()
            .buffer(),
    );
    assert!(
        !text.contains(" in / ") && text.contains(" tokens"),
        "{text}"
    );
}

#[test]
fn a_termination_signal_quits_without_asking_and_cancels_a_live_run() {
    let events = pass_run(1);
    let mut live = live_state(&events[..events.len() / 2]);
    assert!(live.run_live());
    assert_eq!(
        update(&mut live, Msg::Terminate),
        [Command::Cancel, Command::Quit]
    );
    assert!(live.quit);
    assert!(live.popup.is_none(), "no question asked");
    // Nothing live: it just quits.
    for mut state in [idle_state(), live_state(&events)] {
        assert_eq!(update(&mut state, Msg::Terminate), [Command::Quit]);
        assert!(state.quit);
    }
}

//! Live use and demos, where the screen's numbers and keys are taken at
//! their word: node times are work times and the wait at the step gate is
//! shown apart, a followed run's clock turns, notices expire without
//! pushing the replay position off, and what is typed after asking is
//! text.

use crate::fixtures::{RunBuilder, buffer_text, ch, idle_state, key, live_state, pass_run, render};
use crossterm::event::KeyCode;
use diagraph::engine::StepCommand;
use diagraph::tui::state::{AppState, Mode, Pane};
use diagraph::tui::update::{Command, Msg, update};
use diagraph::vocab::events::EngineEvent;
use diagraph::vocab::graph::{NodeId, Outcome};

fn feed(state: &mut AppState, events: &[EngineEvent]) {
    let generation = state.shown.generation;
    for e in events {
        update(
            state,
            Msg::Engine {
                generation,
                event: Box::new(e.clone()),
            },
        );
    }
}

fn stepping_state() -> AppState {
    let mut state = live_state(&[]);
    state.begin(Mode::Live, true, true);
    state.focus = Pane::Transitions;
    state.table_pane = Pane::Transitions;
    state
}

fn status_bar(state: &AppState, w: u16, h: u16) -> String {
    let text = buffer_text(render(state, w, h).backend().buffer());
    text.lines().last().unwrap_or_default().to_string()
}

#[test]
fn the_wait_at_the_step_gate_is_shown_apart_and_is_not_the_node_s_time() {
    let mut state = stepping_state();
    let mut b = RunBuilder::new(7, "why is payment-service slow?");
    b.enter(NodeId::Planner, Some("start"));
    update(&mut state, Msg::Tick { now_ms: 1_000 });
    feed(&mut state, &b.events);
    // The person looks at the screen for nine seconds.
    update(&mut state, Msg::Tick { now_ms: 10_000 });
    for (w, h) in [(80, 24), (120, 40), (200, 50)] {
        let text = buffer_text(render(&state, w, h).backend().buffer());
        let bar = text.lines().last().unwrap_or_default();
        assert!(bar.contains("waiting for space · 9 s"), "{w}x{h}: {bar}");
        assert!(!text.contains("running planner"), "{w}x{h}: {text}");
        let row = text.lines().find(|l| l.contains("▶ planner"));
        if let Some(row) = row {
            assert!(row.contains("waiting") && row.contains("0ms"), "{row}");
        }
    }
    // Space: the engine runs the planner, which takes 40 ms of work.
    assert_eq!(
        update(&mut state, ch(' ')),
        vec![Command::Step(StepCommand::Next)]
    );
    update(&mut state, Msg::Tick { now_ms: 10_020 });
    let bar = status_bar(&state, 120, 40);
    assert!(bar.contains("planner 20ms"), "{bar}");
    assert!(!bar.contains("waiting for"), "{bar}");
    // The engine's clock left the wait out: the planner's entry was at
    // 74 ms and it finishes at 114 ms of work.
    let last = b.events.last().map_or(0, |e| e.at_ms);
    b.finish(
        NodeId::Planner,
        Outcome::Completed,
        "completed",
        NodeId::Executor,
    );
    if let Some(e) = b.events.last_mut() {
        e.at_ms = last + 40;
    }
    b.enter(NodeId::Executor, Some("completed"));
    feed(&mut state, &b.events[b.events.len() - 2..]);
    update(&mut state, Msg::Tick { now_ms: 14_000 });
    let text = buffer_text(render(&state, 120, 40).backend().buffer());
    let row = text
        .lines()
        .find(|l| l.contains("1 planner") && l.contains("completed"))
        .unwrap_or_default();
    assert!(row.contains("40ms"), "{row}");
    let bar = text.lines().last().unwrap_or_default();
    assert!(bar.contains("waiting for space · 3 s"), "{bar}");
    // The run's time is its work: about a tenth of a second, not 13 s.
    assert!(bar.contains("│ 0.1s"), "{bar}");
}

#[test]
fn enter_on_the_graph_in_step_mode_opens_the_node_that_just_ran() {
    let mut state = stepping_state();
    let mut b = RunBuilder::new(7, "q");
    b.node(
        NodeId::Planner,
        Outcome::Completed,
        "completed",
        NodeId::Executor,
    );
    b.enter(NodeId::Executor, Some("completed"));
    feed(&mut state, &b.events);
    state.focus = Pane::Graph;
    update(&mut state, key(KeyCode::Enter));
    let text = buffer_text(render(&state, 120, 40).backend().buffer());
    assert!(text.contains("planner · attempt 1"), "{text}");
    assert!(!text.contains("still running"), "{text}");
    // The waiting node, opened from the transitions, says it waits.
    update(&mut state, key(KeyCode::Esc));
    state.focus = Pane::Transitions;
    state.sel.transitions = 1;
    update(&mut state, key(KeyCode::Enter));
    let text = buffer_text(render(&state, 120, 40).backend().buffer());
    assert!(text.contains("executor · attempt 1"), "{text}");
    assert!(text.contains("waiting at the step gate"), "{text}");
}

#[test]
fn a_running_node_s_took_cell_keeps_its_unit() {
    let mut b = RunBuilder::new(5, "q");
    b.node(
        NodeId::Planner,
        Outcome::Completed,
        "completed",
        NodeId::Executor,
    );
    b.enter(NodeId::Executor, Some("completed"));
    let mut state = live_state(&b.events);
    update(&mut state, Msg::Tick { now_ms: 880 });
    state.focus = Pane::Transitions;
    state.table_pane = Pane::Transitions;
    for (w, h) in [(80, 24), (120, 40), (200, 50)] {
        let text = buffer_text(render(&state, w, h).backend().buffer());
        let row = text.lines().find(|l| l.contains("▶ executor"));
        let row = row.unwrap_or_else(|| panic!("{w}x{h}: {text}"));
        assert!(row.contains("880ms"), "{w}x{h}: {row}");
    }
}

/// A run executing in another process (or on the server followed): its
/// running node's time advances and the spinner turns with the screen
/// clock, as for a run asked here.
#[test]
fn a_followed_run_s_clock_moves() {
    let mut state = live_state(&[]);
    state.begin(Mode::Live, true, false);
    state.shown.watched = true;
    let mut b = RunBuilder::new(9, "q");
    b.enter(NodeId::Planner, Some("start"));
    update(&mut state, Msg::Tick { now_ms: 500 });
    feed(&mut state, &b.events);
    assert!(state.clock_running());
    let first = status_bar(&state, 120, 40);
    update(&mut state, Msg::Tick { now_ms: 2_625 });
    let later = status_bar(&state, 120, 40);
    assert!(first.contains("planner 0ms"), "{first}");
    assert!(later.contains("planner 2.1s"), "{later}");
    let spinner = |bar: &str| {
        bar.split('│')
            .nth(2)
            .map(str::trim)
            .unwrap_or_default()
            .chars()
            .next()
    };
    assert_ne!(spinner(&first), spinner(&later), "{first}\n{later}");
}

#[tokio::test(start_paused = true)]
async fn the_loop_ticks_for_a_followed_run() {
    use diagraph::tui::runtime::event_loop::event_loop;
    use futures::StreamExt;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    let mut state = live_state(&[]);
    state.begin(Mode::Live, true, false);
    state.shown.watched = true;
    let generation = state.shown.generation;
    let mut b = RunBuilder::new(9, "q");
    b.enter(NodeId::Planner, Some("start"));
    let events: Vec<Msg> = b
        .events
        .iter()
        .map(|e| Msg::Engine {
            generation,
            event: Box::new(e.clone()),
        })
        .collect();
    // The messages come, then nothing for three seconds, then the input
    // ends the loop.
    let msgs = futures::stream::iter(events).chain(futures::stream::pending());
    let input = futures::stream::once(async {
        tokio::time::sleep(std::time::Duration::from_secs(3)).await;
        Ok(crossterm::event::Event::Key(
            crossterm::event::KeyEvent::new(
                KeyCode::Char('c'),
                crossterm::event::KeyModifiers::CONTROL,
            ),
        ))
    })
    .chain(futures::stream::pending())
    .boxed();
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let _ = event_loop(&mut terminal, &mut state, input, msgs, |_| {}).await;
    let (_, ms) = state.node_elapsed().expect("the planner runs");
    assert!(
        ms >= 2_800,
        "the followed node's clock stood still: {ms} ms"
    );
}

#[test]
fn notices_expire_and_never_push_the_replay_position_off() {
    let mut state = live_state(&[]);
    state.begin(Mode::Replay, false, false);
    state.shown.events = pass_run(3);
    state.shown.seek(4);
    update(&mut state, Msg::Tick { now_ms: 1_000 });
    state.notify(format!(
        "cancelling run 3…{}",
        " and a long tail".repeat(20)
    ));
    state.model_label = "a very long model label ".repeat(5);
    for (w, h) in [(80, 24), (120, 40), (200, 50)] {
        let bar = status_bar(&state, w, h);
        assert!(bar.contains("event 4/"), "{w}x{h}: {bar}");
        if w >= 120 {
            assert!(bar.contains("cancelling run 3"), "{w}x{h}: {bar}");
        }
    }
    update(&mut state, Msg::Tick { now_ms: 6_000 });
    let bar = status_bar(&state, 120, 40);
    assert!(!bar.contains("cancelling"), "{bar}");
    assert!(state.notice_text().is_none());
}

#[test]
fn after_asking_the_next_keys_are_text() {
    let mut state = idle_state();
    state.focus = Pane::Input;
    for c in "why?".chars() {
        update(&mut state, ch(c));
    }
    let cmds = update(&mut state, key(KeyCode::Enter));
    assert!(matches!(
        &cmds[..],
        [Command::StartRun {
            stepping: false,
            ..
        }]
    ));
    assert_eq!(state.focus, Pane::Input);
    // d, c, x and q typed at once are the follow-up, not commands.
    for c in "dcxq".chars() {
        assert!(update(&mut state, ch(c)).is_empty());
    }
    assert!(!state.quit && state.popup.is_none());
    assert_eq!(state.input.lines().join(""), "dcxq");
    // The hints say how to leave the input, and that ctrl-c quits.
    let bar = status_bar(&state, 120, 40);
    assert!(
        bar.contains("esc leave input") && bar.contains("ctrl-c quit"),
        "{bar}"
    );
    // Escape: now q is a command.
    update(&mut state, key(KeyCode::Esc));
    let bar = status_bar(&state, 120, 40);
    assert!(bar.contains("q quit"), "{bar}");
}

#[test]
fn a_demo_opens_on_the_transitions_tab() {
    let mut state = idle_state();
    let entry = diagraph::tui::state::DemoEntry {
        path: "01_pass.toml".into(),
        name: "pass".into(),
        description: "d".into(),
        question: "q".into(),
        error: None,
    };
    let cmds = update(&mut state, Msg::StartDemo(entry));
    assert!(matches!(&cmds[..], [Command::StartDemo { .. }]));
    assert_eq!(state.focus, Pane::Transitions);
    assert_eq!(state.table_pane, Pane::Transitions);
}

/// A detail whose lines wrap (words move to the next row) scrolls to its
/// last line with G, End and PgDn alike.
#[test]
fn a_detail_popup_scrolls_to_its_last_line_when_lines_wrap() {
    use diagraph::tui::state::Popup;
    use ratatui::text::Line;
    let words = "lorem ipsum dolorsit ametconsectetur adipiscingelit seddo eiusmodtempor ";
    for (w, h) in [(80, 24), (120, 40), (200, 50)] {
        for end in [ch('G'), key(KeyCode::End), key(KeyCode::PageDown)] {
            let mut state = idle_state();
            update(&mut state, Msg::Resize(w, h));
            state.focus = Pane::Graph;
            let mut lines: Vec<Line<'static>> = (0..60)
                .map(|i| Line::from(format!("{i}: {}", words.repeat(1 + i % 7))))
                .collect();
            lines.push(Line::from("THE-LAST-LINE"));
            state.popup = Some(Popup::Detail {
                title: "wrapped".into(),
                lines,
                scroll: 0,
                subject: None,
            });
            // PgDn moves a page: press it as often as a reader would.
            for _ in 0..200 {
                update(&mut state, end.clone());
            }
            let text = buffer_text(render(&state, w, h).backend().buffer());
            assert!(text.contains("THE-LAST-LINE"), "{w}x{h} {end:?}:\n{text}");
        }
    }
}

/// A PASS with no verified finding under it (an unknown service, no
/// evidence) is never a bare green PASS; a verdict pane too short for
/// its lines says there are more.
#[test]
fn a_pass_without_findings_says_so_and_the_verdict_pane_never_drops_lines_unseen() {
    use diagraph::vocab::contracts::Verdict;
    let mut b = RunBuilder::new(4, "why is zebra-service slow?");
    b.node(
        NodeId::Planner,
        Outcome::Completed,
        "completed",
        NodeId::Executor,
    );
    b.gatekeeper("pass", "none", vec![]);
    b.verdict(Some(Verdict::Pass), Some(Verdict::Pass), None);
    let events = b.done("No service named zebra-service.", Some(Verdict::Pass));
    let state = live_state(&events);
    for (w, h) in [(80, 24), (120, 40), (200, 50)] {
        let text = buffer_text(render(&state, w, h).backend().buffer());
        assert!(text.contains("PASS · no findings"), "{w}x{h}:\n{text}");
    }
    let with_finding = live_state(&pass_run(1));
    let text = buffer_text(render(&with_finding, 120, 40).backend().buffer());
    assert!(!text.contains("no findings"), "{text}");
    // At 80x24 the verdict pane is short: its title says more lines
    // follow, or the usage line is in sight.
    let text = buffer_text(render(&with_finding, 80, 24).backend().buffer());
    assert!(
        text.contains("Verdict · ↓ more") || text.contains("usage"),
        "{text}"
    );
}

/// Every cut text ends in "…": the runs list's question, a transition's
/// detail, the demo picker's descriptions.
#[test]
fn cut_texts_end_in_an_ellipsis() {
    use diagraph::tui::state::DemoEntry;
    let long = "why is zebra-checkout slow when the checkout pods restart every few minutes under load tonight and the database pool is exhausted again";
    for (w, h) in [(80, 24), (120, 40), (200, 50)] {
        let mut state = idle_state();
        update(&mut state, Msg::Resize(w, h));
        let mut row = crate::fixtures::summary(1, "s-1", "SUCCESS");
        row.question = long.into();
        update(&mut state, Msg::RunsLoaded(Ok(vec![row])));
        let text = buffer_text(render(&state, w, h).backend().buffer());
        // At 200x50 this idle screen draws the runs pane without its row
        // (left to the runs-list paging work); the cut is checked where
        // the row is drawn.
        if let Some(line) = text.lines().find(|l| l.contains("why is zebra")) {
            assert!(line.contains('…'), "{w}x{h}: {line}");
        } else {
            assert_eq!(w, 200, "{w}x{h}:\n{text}");
        }

        state.scenarios = Some(vec![DemoEntry {
            path: "x.toml".into(),
            name: "a demo".into(),
            description: long.repeat(2),
            question: "q".into(),
            error: None,
        }]);
        state.open_demo_picker();
        let text = buffer_text(render(&state, w, h).backend().buffer());
        let line = text
            .lines()
            .find(|l| l.contains("    why is zebra"))
            .unwrap_or_else(|| panic!("{w}x{h}:\n{text}"));
        assert!(line.contains('…'), "{w}x{h}: {line}");
    }
}

#[test]
fn a_transition_s_long_detail_is_cut_with_an_ellipsis() {
    use diagraph::vocab::events::EventKind;
    let mut b = RunBuilder::new(5, "q");
    b.node(
        NodeId::Planner,
        Outcome::Completed,
        "completed",
        NodeId::Executor,
    );
    if let Some(EventKind::NodeFinished { detail, .. }) = b.events.last_mut().map(|e| &mut e.kind) {
        *detail = "the planner said something very long ".repeat(12);
    }
    let mut state = live_state(&b.events);
    state.focus = Pane::Transitions;
    state.table_pane = Pane::Transitions;
    for (w, h) in [(80, 24), (120, 40), (200, 50)] {
        let text = buffer_text(render(&state, w, h).backend().buffer());
        let line = text
            .lines()
            .find(|l| l.contains("the planner said"))
            .unwrap_or_else(|| panic!("{w}x{h}:\n{text}"));
        assert!(line.contains('…'), "{w}x{h}: {line}");
    }
}

/// A demo waiting at the step gate, as an audience sees it: the node just
/// run with its work time, the next one waiting, the wait apart.
#[test]
fn a_demo_waiting_at_the_gate_at_three_sizes() {
    let mut b = RunBuilder::new(3, "why is payment-service slow?");
    b.node(
        NodeId::Planner,
        Outcome::Completed,
        "completed",
        NodeId::Executor,
    );
    b.enter(NodeId::Executor, Some("completed"));
    for (w, h) in [(80, 24), (120, 40), (200, 50)] {
        let mut state = stepping_state();
        state.mode = Mode::Demo;
        update(&mut state, Msg::Resize(w, h));
        update(&mut state, Msg::Tick { now_ms: 1_000 });
        feed(&mut state, &b.events);
        update(&mut state, Msg::Tick { now_ms: 10_400 });
        let term = render(&state, w, h);
        insta::assert_snapshot!(format!("demo_waiting_{w}x{h}"), term.backend());
        let bar = status_bar(&state, w, h);
        assert!(bar.contains("waiting for space · 9 s"), "{bar}");
    }
}

/// A node's detail leads with what the node decided; its calls, prompts
/// and responses follow.
#[test]
fn a_node_detail_leads_with_what_the_node_decided() {
    use diagraph::tui::state::StoredRun;
    use std::sync::Arc;
    let events = pass_run(1);
    let stored = StoredRun::Loaded(Arc::new(crate::workbench::stored_trace(&events)));
    let theme = diagraph::tui::theme::Theme::dark();
    let count = diagraph::tui::view::inspect::attempt_count(&events);
    let mut checked = 0;
    for k in 0..count {
        let (title, lines) =
            diagraph::tui::view::inspect::node(&events, k, &stored, false, &theme).unwrap();
        let text: Vec<String> = lines.iter().map(ToString::to_string).collect();
        let at = |needle: &str| text.iter().position(|l| l.contains(needle));
        let Some(calls) = at("── model calls") else {
            continue;
        };
        for decided in [
            "── verdict after this node",
            "── gatekeeper",
            "── verifier facts",
        ] {
            if let Some(i) = at(decided) {
                assert!(
                    i < calls,
                    "{title}: {decided} after the calls:\n{}",
                    text.join("\n")
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no node decided anything in the fixture");
}

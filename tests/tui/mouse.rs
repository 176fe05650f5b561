//! The mouse, as synthetic events through `update`: a click focuses the
//! pane under it, selects the row or switches to the tab it lands on; the
//! wheel scrolls the pane under the pointer or the popup; a click outside
//! a popup closes it. Positions come from the rendered screen, so the
//! tests check that clicks hit what is drawn there. Also: pointer moves
//! never wake a redraw of the event loop.

use crate::fixtures::{RunBuilder, buffer_text, ch, find_text, key, live_state, pass_run, render};
use crossterm::event::{Event, KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use diagraph::tui::runtime::event_loop::event_loop;
use diagraph::tui::state::{AppState, DemoEntry, Pane, Pending, Popup};
use diagraph::tui::update::{Command, Msg, WHEEL_STEP, update};
use diagraph::vocab::contracts::Verdict;
use diagraph::vocab::graph::{NodeId, Outcome};
use futures::StreamExt;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn mouse(kind: MouseEventKind, x: u16, y: u16) -> Msg {
    Msg::Mouse(MouseEvent {
        kind,
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    })
}

fn click(x: u16, y: u16) -> Msg {
    mouse(MouseEventKind::Down(MouseButton::Left), x, y)
}

fn sized(mut state: AppState, w: u16, h: u16) -> AppState {
    update(&mut state, Msg::Resize(w, h));
    state
}

/// Where `text` is drawn now.
fn at(state: &AppState, text: &str) -> (u16, u16) {
    let (w, h) = state.screen;
    let term = render(state, w, h);
    find_text(term.backend().buffer(), text).unwrap_or_else(|| {
        panic!(
            "{text:?} not on screen:\n{}",
            buffer_text(term.backend().buffer())
        )
    })
}

/// A finished run with `n` tool invocations, each query unique, and a
/// long answer.
fn many_tools(n: usize) -> Vec<diagraph::vocab::events::EngineEvent> {
    let mut b = RunBuilder::new(7, "why is checkout slow?");
    b.node(
        NodeId::Planner,
        Outcome::Completed,
        "completed",
        NodeId::Executor,
    );
    b.enter(NodeId::Executor, Some("completed"));
    for i in 0..n {
        b.tool("query_logs", &format!("query-{i:03}"), "a log line", 1);
    }
    b.finish(
        NodeId::Executor,
        Outcome::Completed,
        "completed",
        NodeId::Gatekeeper,
    );
    let answer: Vec<String> = (0..80).map(|i| format!("answer line {i}")).collect();
    b.done(&answer.join("\n"), Some(Verdict::Pass))
}

#[test]
fn a_click_focuses_the_pane_and_selects_the_row_under_it() {
    let mut state = sized(live_state(&many_tools(12)), 200, 60);
    state.focus = Pane::Graph;
    let (x, y) = at(&state, "query-004");
    assert!(update(&mut state, click(x, y)).is_empty());
    assert_eq!(state.focus, Pane::Tools);
    assert_eq!(state.sel.tools, 4);
    // The answer pane: focused by a click anywhere in it, borders included.
    let (x, y) = at(&state, "Answer");
    update(&mut state, click(x, y));
    assert_eq!(state.focus, Pane::Answer);
    // The question input: typing follows.
    let (w, h) = state.screen;
    update(&mut state, click(w / 2, h - 3));
    assert_eq!(state.focus, Pane::Input);
    update(&mut state, ch('q'));
    assert!(!state.quit, "q typed into the question");
    assert_eq!(state.input.lines().join(""), "q");
    // The status bar and the header row of a table select nothing.
    update(&mut state, click(2, h - 1));
    assert_eq!(state.focus, Pane::Input);
}

#[test]
fn a_click_on_a_row_of_a_scrolled_list_selects_that_row() {
    let mut state = sized(live_state(&many_tools(40)), 200, 60);
    state.focus = Pane::Tools;
    update(&mut state, key(KeyCode::End));
    assert_eq!(state.sel.tools, 39);
    // The list is scrolled to its end: the rows drawn are the last ones.
    let text = buffer_text(render(&state, 200, 60).backend().buffer());
    assert!(!text.contains("query-000"), "{text}");
    let (x, y) = at(&state, "query-036");
    update(&mut state, click(x, y));
    assert_eq!(state.sel.tools, 36);
    // Below the last row of a short list there is no row: the selection
    // stays.
    let mut state = sized(live_state(&many_tools(3)), 200, 60);
    state.sel.tools = 1;
    let (x, y) = at(&state, "query-002");
    update(&mut state, click(x, y + 1));
    assert_eq!(state.focus, Pane::Tools);
    assert_eq!(state.sel.tools, 1);
}

/// The tool queries drawn now, top to bottom, with their screen rows.
fn queries_on_screen(state: &AppState) -> Vec<(usize, u16)> {
    let (w, h) = state.screen;
    let text = buffer_text(render(state, w, h).backend().buffer());
    text.lines()
        .enumerate()
        .filter_map(|(y, line)| {
            let at = line.find("query-")?;
            let n = line.get(at + 6..at + 9)?.parse().ok()?;
            Some((n, y as u16))
        })
        .collect()
}

#[test]
fn a_click_in_a_scrolled_list_selects_that_row_and_the_view_stays() {
    for (w, h) in [(120, 40), (80, 24), (200, 60)] {
        let mut state = sized(live_state(&many_tools(80)), w, h);
        state.focus = Pane::Tools;
        // Down past the bottom of the window, then back up a little: the
        // view scrolled down once and stays while the selection moves
        // inside it.
        for _ in 0..50 {
            update(&mut state, ch('j'));
        }
        let scrolled = queries_on_screen(&state);
        let (first, _) = scrolled[0];
        let height = scrolled.len();
        assert!(first > 0, "scrolled at {w}x{h}: {scrolled:?}");
        assert_eq!(scrolled.last().map(|r| r.0), Some(50), "{w}x{h}");
        update(&mut state, ch('k'));
        update(&mut state, ch('k'));
        assert_eq!(state.sel.tools, 48);
        assert_eq!(queries_on_screen(&state), scrolled, "keys inside the view");
        // A click in the middle of the window selects the row clicked and
        // the first row drawn does not change.
        let (want, y) = scrolled[height / 2];
        let (x, _) = at(&state, &format!("query-{want:03}"));
        update(&mut state, click(x, y));
        assert_eq!(state.sel.tools, want, "{w}x{h}");
        assert_eq!(queries_on_screen(&state), scrolled, "{w}x{h}");
        // Clicked again at the same place: the same row.
        update(&mut state, click(x, y));
        assert_eq!(state.sel.tools, want, "{w}x{h}");
        // The first row and the last one drawn: selected where they are.
        for (want, y) in [scrolled[0], scrolled[height - 1]] {
            update(&mut state, click(x, y));
            assert_eq!(state.sel.tools, want, "{w}x{h}");
            assert_eq!(queries_on_screen(&state), scrolled, "{w}x{h}");
        }
        // The wheel scrolls the view by its step, and the selection keeps
        // its place on screen.
        let (want, y) = scrolled[height / 2];
        update(&mut state, click(x, y));
        update(&mut state, mouse(MouseEventKind::ScrollDown, x, y));
        let wheeled = queries_on_screen(&state);
        assert_eq!(wheeled[0].0, first + WHEEL_STEP, "{w}x{h}");
        assert_eq!(state.sel.tools, want + WHEEL_STEP);
        let row = wheeled.iter().find(|r| r.0 == state.sel.tools).unwrap();
        assert_eq!(row.1, y, "the selection stays at its row");
        update(&mut state, mouse(MouseEventKind::ScrollUp, x, y));
        assert_eq!(queries_on_screen(&state), scrolled, "{w}x{h}");
        assert_eq!(state.sel.tools, want);
        // At the end of the list the view stops; the selection goes on to
        // the last row.
        for _ in 0..40 {
            update(&mut state, mouse(MouseEventKind::ScrollDown, x, y));
        }
        let end = queries_on_screen(&state);
        assert_eq!(end.last().map(|r| r.0), Some(79), "{w}x{h}");
        assert_eq!(state.sel.tools, 79);
        // Resized smaller, the selection is still drawn.
        update(&mut state, Msg::Resize(80, 24));
        let small = queries_on_screen(&state);
        assert!(small.iter().any(|r| r.0 == 79), "{small:?}");
    }
}

#[test]
fn new_runs_arriving_above_a_scrolled_runs_list_do_not_move_it() {
    let runs = |ids: std::ops::RangeInclusive<i64>| {
        let list = ids
            .map(|i| crate::fixtures::summary(i, &format!("s-{i}"), "SUCCESS"))
            .collect();
        Msg::RunsLoaded(Ok(list))
    };
    let shown = |state: &AppState| -> Vec<String> {
        let text = buffer_text(render(state, 120, 40).backend().buffer());
        text.lines()
            .filter_map(|l| l.split("question ").nth(1))
            .filter_map(|q| q.split_whitespace().next())
            .filter(|id| id.parse::<i64>().is_ok())
            .map(String::from)
            .collect()
    };
    let mut state = sized(crate::fixtures::idle_state(), 120, 40);
    update(&mut state, runs(1..=60));
    state.focus = Pane::Runs;
    for _ in 0..40 {
        update(&mut state, ch('j'));
    }
    update(&mut state, ch('k'));
    let before = shown(&state);
    let selected = state.filtered_runs()[state.sel.runs].run_id;
    assert!(before.len() > 5, "{before:?}");
    assert!(!before.contains(&"60".to_string()), "scrolled: {before:?}");
    // Two newer runs: listed first, above the rows on screen.
    update(&mut state, runs(1..=62));
    assert_eq!(shown(&state), before);
    assert_eq!(state.filtered_runs()[state.sel.runs].run_id, selected);
    // At the top, new runs show up where they arrive.
    update(&mut state, ch('g'));
    update(&mut state, runs(1..=63));
    assert_eq!(shown(&state).first().map(String::as_str), Some("63"));
}

#[test]
fn a_click_on_a_tab_switches_to_it_at_80x24() {
    let mut state = sized(live_state(&pass_run(1)), 80, 24);
    state.focus = Pane::Graph;
    state.table_pane = Pane::Runs;
    for (label, pane) in [
        ("Tools (", Pane::Tools),
        ("Transitions (", Pane::Transitions),
        ("Bindings (", Pane::Bindings),
        ("Runs (", Pane::Runs),
    ] {
        let (x, y) = at(&state, label);
        update(&mut state, click(x + 1, y));
        assert_eq!(state.focus, pane, "{label}");
        assert_eq!(state.table_pane, pane, "{label}");
        let text = buffer_text(render(&state, 80, 24).backend().buffer());
        assert!(
            text.contains(&format!("[{label}")),
            "{label} active:\n{text}"
        );
    }
    // Between two tabs: nothing changes.
    let before = state.focus;
    let (x, y) = at(&state, "[Runs (");
    update(&mut state, click(x - 1, y));
    assert_eq!(state.focus, before);
}

#[test]
fn the_wheel_scrolls_the_pane_under_the_pointer() {
    let mut state = sized(live_state(&many_tools(20)), 200, 60);
    state.focus = Pane::Graph;
    let (x, y) = at(&state, "query-000");
    update(&mut state, mouse(MouseEventKind::ScrollDown, x, y));
    assert_eq!(state.focus, Pane::Tools);
    assert_eq!(state.sel.tools, WHEEL_STEP);
    update(&mut state, mouse(MouseEventKind::ScrollUp, x, y));
    assert_eq!(state.sel.tools, 0);
    // Text panes scroll.
    let (x, y) = at(&state, "Answer");
    update(&mut state, mouse(MouseEventKind::ScrollDown, x, y + 2));
    assert_eq!(state.focus, Pane::Answer);
    assert_eq!(usize::from(state.sel.answer_scroll), WHEEL_STEP);
    // Over the question input it does nothing.
    let (w, h) = state.screen;
    update(&mut state, mouse(MouseEventKind::ScrollDown, w / 2, h - 3));
    assert_eq!(state.focus, Pane::Answer);
}

#[test]
fn popups_scroll_with_the_wheel_and_close_on_a_click_outside() {
    let mut state = sized(live_state(&pass_run(1)), 80, 24);
    update(&mut state, ch('?'));
    let (w, h) = state.screen;
    update(&mut state, mouse(MouseEventKind::ScrollDown, w / 2, h / 2));
    assert_eq!(
        state.popup,
        Some(Popup::Help {
            scroll: WHEEL_STEP as u16
        })
    );
    // A click inside keeps it, and reaches nothing beneath.
    let focus = state.focus;
    update(&mut state, click(w / 2, h / 2));
    assert!(state.popup.is_some());
    assert_eq!(state.focus, focus);
    // Outside it: closed, and the click does nothing else.
    update(&mut state, click(0, 0));
    assert!(state.popup.is_none());
    assert_eq!(state.focus, focus);

    // A detail popup stops at its end, as with the keys.
    state.focus = Pane::Verdict;
    update(&mut state, key(KeyCode::Enter));
    for _ in 0..200 {
        update(&mut state, mouse(MouseEventKind::ScrollDown, w / 2, h / 2));
    }
    let Some(Popup::Detail { scroll: end, .. }) = state.popup.clone() else {
        panic!("{:?}", state.popup)
    };
    update(&mut state, mouse(MouseEventKind::ScrollUp, w / 2, h / 2));
    let Some(Popup::Detail { scroll, .. }) = state.popup.clone() else {
        panic!("{:?}", state.popup)
    };
    assert_eq!(scroll, end.saturating_sub(WHEEL_STEP as u16));
}

#[test]
fn a_click_outside_a_stop_question_answers_no() {
    let events = pass_run(1);
    let mut state = sized(live_state(&events[..events.len() / 2]), 120, 40);
    update(&mut state, ch('q'));
    assert_eq!(state.popup, Some(Popup::Confirm(Pending::Quit)));
    // The wheel does not answer it.
    update(&mut state, mouse(MouseEventKind::ScrollDown, 60, 20));
    assert_eq!(state.popup, Some(Popup::Confirm(Pending::Quit)));
    assert!(update(&mut state, click(0, 0)).is_empty());
    assert!(state.popup.is_none());
    assert!(!state.quit);
    assert!(state.run_live(), "the run goes on");
}

#[test]
fn a_click_picks_a_demo_scenario() {
    let mut state = sized(live_state(&pass_run(1)), 120, 40);
    let entry = |n: &str| DemoEntry {
        path: format!("fixtures/scenarios/{n}.toml").into(),
        name: n.into(),
        description: format!("{n} description"),
        question: "why?".into(),
        error: None,
    };
    state.scenarios = Some(vec![entry("alpha"), entry("beta"), entry("gamma")]);
    update(&mut state, ch('d'));
    // Its description line belongs to the scenario too.
    let (x, y) = at(&state, "gamma description");
    update(&mut state, click(x, y));
    match &state.popup {
        Some(Popup::DemoPicker { selected, .. }) => assert_eq!(*selected, 2),
        other => panic!("{other:?}"),
    }
    match update(&mut state, key(KeyCode::Enter)).as_slice() {
        [Command::StartDemo { path, .. }] => assert!(path.ends_with("gamma.toml")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_click_in_a_scrolled_demo_picker_picks_that_scenario_and_the_list_stays() {
    let mut state = sized(live_state(&pass_run(1)), 80, 24);
    state.scenarios = Some(
        (0..30)
            .map(|i| DemoEntry {
                path: format!("fixtures/scenarios/s{i:02}.toml").into(),
                name: format!("scenario-{i:02}"),
                description: format!("what s{i:02} shows"),
                question: "why?".into(),
                error: None,
            })
            .collect(),
    );
    update(&mut state, ch('d'));
    for _ in 0..20 {
        update(&mut state, ch('j'));
    }
    let names = |state: &AppState| -> Vec<(String, u16)> {
        let text = buffer_text(render(state, 80, 24).backend().buffer());
        text.lines()
            .enumerate()
            .filter_map(|(y, l)| {
                let at = l.find("scenario-")?;
                Some((l.get(at..at + 11)?.to_string(), y as u16))
            })
            .collect()
    };
    let before = names(&state);
    assert!(before.len() > 3, "{before:?}");
    assert!(before.iter().any(|n| n.0 == "scenario-20"), "{before:?}");
    assert!(!before.iter().any(|n| n.0 == "scenario-00"), "{before:?}");
    let (name, y) = before[before.len() / 2].clone();
    let (x, _) = at(&state, &name);
    update(&mut state, click(x, y));
    let want: usize = name["scenario-".len()..].parse().unwrap();
    match &state.popup {
        Some(Popup::DemoPicker { selected, .. }) => assert_eq!(*selected, want),
        other => panic!("{other:?}"),
    }
    assert_eq!(names(&state), before, "the list did not move");
    // Keys inside the list move the selection, not the list.
    update(&mut state, ch('k'));
    assert_eq!(names(&state), before);
}

#[test]
fn a_click_elsewhere_ends_filter_editing_and_keeps_the_filter() {
    let mut state = sized(live_state(&pass_run(1)), 120, 40);
    update(&mut state, ch('/'));
    update(&mut state, ch('x'));
    assert!(state.filter_editing);
    let (x, y) = at(&state, "Verdict");
    update(&mut state, click(x, y));
    assert!(!state.filter_editing);
    assert_eq!(state.filter, "x");
    assert_eq!(state.focus, Pane::Verdict);
}

#[test]
fn on_a_too_small_terminal_the_mouse_does_nothing() {
    for (w, h) in [(60, 20), (0, 0), (1, 1)] {
        let mut state = sized(live_state(&pass_run(1)), w, h);
        let focus = state.focus;
        for kind in [
            MouseEventKind::Down(MouseButton::Left),
            MouseEventKind::ScrollDown,
            MouseEventKind::ScrollUp,
        ] {
            for (x, y) in [(0, 0), (w / 2, h / 2), (u16::MAX, u16::MAX)] {
                assert!(update(&mut state, mouse(kind, x, y)).is_empty());
            }
        }
        assert_eq!(state.focus, focus);
        assert_eq!(state.sel, Default::default());
    }
}

#[test]
fn mouse_capture_is_turned_on_only_when_the_mouse_is_on() {
    use diagraph::tui::runtime::{enable_input_modes, undo_input_modes};
    let written = |f: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| {
        let mut out = Vec::new();
        f(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    };
    // Mouse tracking (1000: clicks, 1006: SGR coordinates) and bracketed
    // paste (2004), as crossterm writes them.
    let on = written(&|o| enable_input_modes(o, true));
    assert!(
        on.contains("\x1b[?1000h") && on.contains("\x1b[?1006h"),
        "{on:?}"
    );
    assert!(on.contains("\x1b[?2004h"), "{on:?}");
    let off = written(&|o| enable_input_modes(o, false));
    assert!(!off.contains("\x1b[?100"), "no mouse mode at all: {off:?}");
    assert!(off.contains("\x1b[?2004h"), "paste still works: {off:?}");
    // What was turned on is turned off again.
    let undo = written(&|o| undo_input_modes(o, true));
    assert!(
        undo.contains("\x1b[?1000l") && undo.contains("\x1b[?2004l"),
        "{undo:?}"
    );
    let undo = written(&|o| undo_input_modes(o, false));
    assert!(
        !undo.contains("\x1b[?100") && undo.contains("\x1b[?2004l"),
        "{undo:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn pointer_moves_never_wake_a_redraw() {
    let mut state = live_state(&pass_run(1));
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let (_tx, mut rx) = tokio::sync::mpsc::channel::<Msg>(4);
    let msgs = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
    let mv = |kind| {
        Ok(Event::Mouse(MouseEvent {
            kind,
            column: 10,
            row: 10,
            modifiers: KeyModifiers::NONE,
        }))
    };
    let mut input: Vec<std::io::Result<Event>> = (0..500)
        .map(|_| mv(MouseEventKind::Moved))
        .chain((0..100).map(|_| mv(MouseEventKind::Drag(MouseButton::Left))))
        .chain((0..100).map(|_| mv(MouseEventKind::Up(MouseButton::Left))))
        .collect();
    input.push(Ok(Event::Key(crossterm::event::KeyEvent::new(
        KeyCode::Char('q'),
        KeyModifiers::NONE,
    ))));
    let input = futures::stream::iter(input)
        .chain(futures::stream::pending())
        .boxed();
    let stats = event_loop(&mut terminal, &mut state, input, msgs, |_| {})
        .await
        .unwrap();
    // Only q was a message, and no move drew a frame.
    assert_eq!(stats.messages, 1, "{stats:?}");
    assert!(stats.frames <= 2, "{stats:?}");
}

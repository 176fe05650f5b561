//! The one place that changes [`AppState`]: `update(state, msg) -> commands`.
//!
//! Messages are terminal keys, engine events tagged with the generation
//! of their source, and results of background work. Commands are what the
//! runtime must do outside the state (start a run, load a replay, send a
//! step). Keeping side effects out of here makes every interaction a
//! "state + keys -> state" test.

use crate::engine::StepCommand;
use crate::tui::keymap::{Action, Context};
use crate::tui::state::{AppState, DemoEntry, Mode, Pane, Pending, Popup};
use crate::tui::view::detail;
use crate::vocab::events::{EngineEvent, EventKind};
use crate::vocab::run::{RunStatus, RunSummary};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub enum Msg {
    Key(KeyEvent),
    Resize(u16, u16),
    /// An event of the source with this generation.
    Engine {
        generation: u64,
        event: Box<EngineEvent>,
    },
    /// The source finished; `error` is set when it failed.
    SourceDone {
        generation: u64,
        error: Option<String>,
    },
    /// Wall-clock progress of a live run.
    Tick {
        generation: u64,
        elapsed_ms: u64,
    },
    RunsLoaded(Result<Vec<RunSummary>, String>),
    ReplayLoaded {
        generation: u64,
        result: Result<Vec<EngineEvent>, String>,
    },
    ScenariosLoaded(Vec<DemoEntry>),
    /// Start this demo now (from `diagraph demo FILE` or the picker).
    StartDemo(DemoEntry),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    StartRun {
        generation: u64,
        question: String,
        /// The engine waits before each node (step mode).
        stepping: bool,
    },
    StartDemo {
        generation: u64,
        path: PathBuf,
    },
    LoadReplay {
        generation: u64,
        run_id: i64,
    },
    /// Watch a run that is still running elsewhere (another process on
    /// the database, or the server the TUI follows) as it goes.
    FollowRun {
        generation: u64,
        run_id: i64,
    },
    Step(StepCommand),
    /// Stop the live run: it ends CANCELLED with its events saved.
    Cancel,
    LoadRuns,
    ListScenarios,
    Quit,
}

/// Whether a message can change what is on screen; the loop redraws only
/// then.
pub fn update(state: &mut AppState, msg: Msg) -> Vec<Command> {
    match msg {
        Msg::Key(key) if key.kind != KeyEventKind::Release => on_key(state, key),
        Msg::Key(_) | Msg::Resize(..) => vec![],
        Msg::Engine { generation, event } => {
            on_engine_event(state, generation, *event);
            vec![]
        }
        Msg::SourceDone { generation, error } => {
            if generation == state.shown.generation {
                state.shown.error = error;
                state.shown.stepping = false;
                state.shown.done = true;
                if matches!(state.popup, Some(Popup::Confirm(_))) {
                    // Nothing left to stop: the question no longer applies.
                    state.popup = None;
                }
            }
            vec![]
        }
        Msg::Tick {
            generation,
            elapsed_ms,
        } => {
            if generation == state.shown.generation {
                state.live_elapsed_ms = elapsed_ms;
            }
            vec![]
        }
        Msg::RunsLoaded(Ok(rows)) => {
            // Store rows win; runs kept only in memory stay listed.
            let mut merged = rows;
            for local in &state.runs {
                if !merged.iter().any(|r| r.run_id == local.run_id) {
                    merged.push(local.clone());
                }
            }
            merged.sort_by_key(|r| std::cmp::Reverse(r.run_id));
            state.runs = merged;
            state.runs_error = None;
            state.sel.runs = state.sel.runs.min(state.runs.len().saturating_sub(1));
            vec![]
        }
        Msg::RunsLoaded(Err(e)) => {
            state.runs_error = Some(e);
            vec![]
        }
        Msg::ReplayLoaded { generation, result } => {
            if generation == state.shown.generation {
                match result {
                    Ok(events) => {
                        state.shown.events = events;
                        state.shown.seek(0);
                    }
                    Err(e) => state.shown.error = Some(e),
                }
            }
            vec![]
        }
        Msg::ScenariosLoaded(entries) => {
            state.popup = Some(Popup::DemoPicker {
                entries,
                selected: 0,
            });
            vec![]
        }
        Msg::StartDemo(entry) => start_demo(state, entry),
    }
}

fn on_engine_event(state: &mut AppState, generation: u64, event: EngineEvent) {
    let shown = &mut state.shown;
    if generation != shown.generation {
        return;
    }
    if let Some(first) = shown.events.first()
        && first.run_id != event.run_id
    {
        return;
    }
    let finished = matches!(event.kind, EventKind::RunFinished { .. });
    shown.events.push(event);
    if shown.follow {
        shown.seek(shown.events.len());
    }
    if finished && state.mode != Mode::Replay {
        remember_run(state);
    }
}

/// Lists a finished live run even without a store.
fn remember_run(state: &mut AppState) {
    let full = crate::tui::state::RunView::fold(&state.shown.events);
    let (Some(run_id), Some(fin)) = (full.run_id, full.finished.as_ref()) else {
        return;
    };
    if state.runs.iter().any(|r| r.run_id == run_id) {
        return;
    }
    state.runs.insert(
        0,
        RunSummary {
            run_id,
            session_id: full.session_id.clone(),
            status: fin.status,
            effective_verdict: fin.effective_verdict,
            degraded: fin.degraded,
            duration_ms: Some(full.last_at_ms),
            question: full.question.clone(),
            created_at: String::new(),
        },
    );
    state
        .local_events
        .insert(run_id, state.shown.events.clone());
}

fn start_demo(state: &mut AppState, entry: DemoEntry) -> Vec<Command> {
    state.popup = None;
    if state.run_live() && entry.error.is_none() {
        return confirm(state, Pending::Demo(entry));
    }
    start_demo_now(state, entry)
}

fn start_demo_now(state: &mut AppState, entry: DemoEntry) -> Vec<Command> {
    state.popup = None;
    if let Some(e) = &entry.error {
        state.notice = Some(format!("cannot run {}: {e}", entry.name));
        return vec![];
    }
    let path = entry.path.clone();
    let generation = state.begin(Mode::Demo, true, true);
    state.demo = Some(entry);
    state.focus = Pane::Graph;
    vec![Command::StartDemo { generation, path }]
}

fn is_ctrl_c(key: &KeyEvent) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c')
}

/// Asks before doing something that would stop the live run.
fn confirm(state: &mut AppState, pending: Pending) -> Vec<Command> {
    state.filter_editing = false;
    state.popup = Some(Popup::Confirm(pending));
    vec![]
}

/// Quits, asking first while a run is live (a second ctrl-c confirms).
fn quit(state: &mut AppState) -> Vec<Command> {
    if state.run_live() {
        return confirm(state, Pending::Quit);
    }
    state.quit = true;
    vec![Command::Quit]
}

/// Does what a confirmed question was about.
fn run_pending(state: &mut AppState, pending: Pending) -> Vec<Command> {
    state.popup = None;
    match pending {
        Pending::Quit => {
            state.quit = true;
            vec![Command::Cancel, Command::Quit]
        }
        Pending::Ask { question, stepping } => ask(state, question, stepping),
        Pending::Replay(run_id) => open_run(state, run_id),
        Pending::Demo(entry) => start_demo_now(state, entry),
    }
}

fn on_key(state: &mut AppState, key: KeyEvent) -> Vec<Command> {
    if is_ctrl_c(&key) {
        if matches!(state.popup, Some(Popup::Confirm(Pending::Quit))) {
            return run_pending(state, Pending::Quit);
        }
        return quit(state);
    }
    if let Some(Popup::Confirm(pending)) = &state.popup {
        let pending = pending.clone();
        return match state.keymap.lookup(&key, &[Context::Confirm]) {
            Some(Action::Confirm) => run_pending(state, pending),
            Some(Action::Deny) => {
                state.popup = None;
                vec![]
            }
            _ => vec![],
        };
    }
    if state.filter_editing {
        on_filter_key(state, key);
        return vec![];
    }
    if state.popup.is_none() && state.focus == Pane::Input {
        if let Some(cmds) = on_input_key(state, key) {
            return cmds;
        }
    }
    let contexts = state.contexts();
    let Some(action) = state.keymap.lookup(&key, &contexts) else {
        return vec![];
    };
    if state.popup.is_some() {
        return on_popup_action(state, action);
    }
    on_action(state, action)
}

fn on_filter_key(state: &mut AppState, key: KeyEvent) {
    match key.code {
        KeyCode::Enter => state.filter_editing = false,
        KeyCode::Esc => {
            state.filter_editing = false;
            state.filter.clear();
        }
        KeyCode::Backspace => {
            state.filter.pop();
        }
        KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
            state.filter.push(c);
        }
        _ => {}
    }
    state.sel.runs = 0;
}

/// Keys for the question input. `None` lets the keymap handle the key.
fn on_input_key(state: &mut AppState, key: KeyEvent) -> Option<Vec<Command>> {
    match key.code {
        KeyCode::Tab | KeyCode::BackTab => None,
        // Ctrl-S: toggling step mode must work while typing.
        KeyCode::Char('s') if key.modifiers.contains(KeyModifiers::CONTROL) => {
            state.step_live = !state.step_live;
            Some(vec![])
        }
        KeyCode::Esc => {
            state.focus = Pane::Graph;
            Some(vec![])
        }
        KeyCode::Enter => {
            let question = state.input.lines().join(" ").trim().to_string();
            if question.is_empty() {
                return Some(vec![]);
            }
            state.history.retain(|h| h != &question);
            state.history.push(question.clone());
            state.history_pos = None;
            state.input = fresh_input(state);
            let stepping = state.step_live;
            if state.run_live() {
                return Some(confirm(state, Pending::Ask { question, stepping }));
            }
            Some(ask(state, question, stepping))
        }
        KeyCode::Up | KeyCode::Down => {
            recall_history(state, key.code == KeyCode::Up);
            Some(vec![])
        }
        _ => {
            state.input.input(key);
            Some(vec![])
        }
    }
}

/// Starts a live run of `question`.
fn ask(state: &mut AppState, question: String, stepping: bool) -> Vec<Command> {
    let generation = state.begin(Mode::Live, true, stepping);
    state.demo = None;
    state.focus = Pane::Graph;
    vec![Command::StartRun {
        generation,
        question,
        stepping,
    }]
}

fn fresh_input(state: &AppState) -> ratatui_textarea::TextArea<'static> {
    let mut input = ratatui_textarea::TextArea::default();
    input.set_placeholder_text(state.input.placeholder_text().to_string());
    input
}

fn recall_history(state: &mut AppState, older: bool) {
    if state.history.is_empty() {
        return;
    }
    let last = state.history.len() - 1;
    let pos = match (state.history_pos, older) {
        (None, true) => Some(last),
        (None, false) => None,
        (Some(p), true) => Some(p.saturating_sub(1)),
        (Some(p), false) if p >= last => None,
        (Some(p), false) => Some(p + 1),
    };
    state.history_pos = pos;
    let text = pos
        .and_then(|p| state.history.get(p))
        .cloned()
        .unwrap_or_default();
    let mut input = fresh_input(state);
    input.insert_str(text);
    state.input = input;
}

fn on_popup_action(state: &mut AppState, action: Action) -> Vec<Command> {
    let Some(popup) = state.popup.as_mut() else {
        return vec![];
    };
    match (popup, action) {
        (_, Action::Quit) => return quit(state),
        (_, Action::Close) | (Popup::Help, Action::Help) => state.popup = None,
        (Popup::Detail { scroll, lines, .. }, a) => {
            let max = lines.len().saturating_sub(1) as u16;
            *scroll = match a {
                Action::Down => scroll.saturating_add(1).min(max),
                Action::Up => scroll.saturating_sub(1),
                Action::Top => 0,
                Action::Bottom => max,
                _ => *scroll,
            };
        }
        (Popup::DemoPicker { entries, selected }, a) => match a {
            Action::Down => *selected = (*selected + 1).min(entries.len().saturating_sub(1)),
            Action::Up => *selected = selected.saturating_sub(1),
            Action::Top => *selected = 0,
            Action::Bottom => *selected = entries.len().saturating_sub(1),
            Action::Open => {
                if let Some(entry) = entries.get(*selected).cloned() {
                    return start_demo(state, entry);
                }
            }
            _ => {}
        },
        (Popup::Help, _) | (Popup::Confirm(_), _) => {}
    }
    vec![]
}

fn on_action(state: &mut AppState, action: Action) -> Vec<Command> {
    match action {
        Action::Quit => return quit(state),
        Action::Cancel => {
            if state.run_live() {
                state.notice = Some(match state.view().run_id {
                    Some(id) => format!("cancelling run {id}…"),
                    None => "cancelling the run…".into(),
                });
                return vec![Command::Cancel];
            }
        }
        Action::Confirm | Action::Deny => {}
        Action::Help => state.popup = Some(Popup::Help),
        Action::NextPane | Action::PrevPane => cycle_focus(state, action == Action::NextPane),
        Action::Down | Action::Up | Action::Top | Action::Bottom => move_selection(state, action),
        Action::Open => return open(state),
        Action::Close => {}
        Action::Filter => {
            state.focus = Pane::Runs;
            state.table_pane = Pane::Runs;
            state.filter_editing = true;
        }
        Action::FocusInput => state.focus = Pane::Input,
        Action::ToggleStep => state.step_live = !state.step_live,
        Action::Demo => return vec![Command::ListScenarios],
        Action::StepNext => return vec![Command::Step(StepCommand::Next)],
        Action::StepContinue => {
            state.shown.stepping = false;
            return vec![Command::Step(StepCommand::Continue)];
        }
        Action::ReplayNext => {
            let k = state.shown.cursor + 1;
            state.shown.seek(k);
        }
        Action::ReplayPrev => {
            let k = state.shown.cursor.saturating_sub(1);
            state.shown.seek(k);
        }
        Action::ReplayNextNode | Action::ReplayPrevNode => {
            let k = node_boundary(
                &state.shown.events,
                state.shown.cursor,
                action == Action::ReplayNextNode,
            );
            state.shown.seek(k);
        }
    }
    vec![]
}

/// The next (or previous) position just after a node's terminal event.
pub fn node_boundary(events: &[EngineEvent], cursor: usize, forward: bool) -> usize {
    let is_boundary = |k: usize| {
        k == 0
            || k == events.len()
            || events.get(k - 1).is_some_and(|e| {
                matches!(
                    e.kind,
                    EventKind::NodeFinished { .. } | EventKind::RunFinished { .. }
                )
            })
    };
    if forward {
        (cursor + 1..=events.len())
            .find(|k| is_boundary(*k))
            .unwrap_or(events.len())
    } else {
        (0..cursor).rev().find(|k| is_boundary(*k)).unwrap_or(0)
    }
}

/// Replays a stored (or remembered) run.
/// Opens a run from the list: one still running elsewhere (another
/// process on the database, or the server followed) is watched live, any
/// other is replayed.
fn open_run(state: &mut AppState, run_id: i64) -> Vec<Command> {
    let running = state
        .runs
        .iter()
        .any(|r| r.run_id == run_id && r.status == RunStatus::Running);
    if running && !state.local_events.contains_key(&run_id) {
        let generation = state.begin(Mode::Live, true, false);
        state.shown.watched = true;
        state.demo = None;
        state.focus = Pane::Graph;
        return vec![Command::FollowRun { generation, run_id }];
    }
    let generation = state.begin(Mode::Replay, false, false);
    state.demo = None;
    if let Some(events) = state.local_events.get(&run_id) {
        state.shown.events = events.clone();
        state.shown.seek(0);
        return vec![];
    }
    vec![Command::LoadReplay { generation, run_id }]
}

fn cycle_focus(state: &mut AppState, forward: bool) {
    let n = Pane::CYCLE.len();
    let i = Pane::CYCLE
        .iter()
        .position(|p| *p == state.focus)
        .unwrap_or(0);
    let next = if forward {
        (i + 1) % n
    } else {
        (i + n - 1) % n
    };
    state.focus = Pane::CYCLE[next];
    if state.focus.is_table() {
        state.table_pane = state.focus;
    }
}

fn move_selection(state: &mut AppState, action: Action) {
    let view = &state.shown.view;
    let runs_len = state.filtered_runs().len();
    let (sel, len) = match state.focus {
        Pane::Runs => (&mut state.sel.runs, runs_len),
        Pane::Transitions => (&mut state.sel.transitions, view.transitions.len()),
        Pane::Tools => (&mut state.sel.tools, view.invocations.len()),
        Pane::Bindings => (
            &mut state.sel.bindings,
            view.gatekeeper
                .as_ref()
                .map_or(0, |g| g.checked_bindings.len()),
        ),
        Pane::Answer | Pane::Graph => {
            let scroll = if state.focus == Pane::Answer {
                &mut state.sel.answer_scroll
            } else {
                &mut state.sel.graph_scroll
            };
            *scroll = match action {
                Action::Down => scroll.saturating_add(1),
                Action::Up => scroll.saturating_sub(1),
                Action::Top => 0,
                // The view clamps the scroll to the content.
                _ => u16::MAX,
            };
            return;
        }
        Pane::Verdict | Pane::Input => return,
    };
    let last = len.saturating_sub(1);
    *sel = match action {
        Action::Down => (*sel + 1).min(last),
        Action::Up => sel.saturating_sub(1),
        Action::Top => 0,
        _ => last,
    };
}

fn open(state: &mut AppState) -> Vec<Command> {
    let view = &state.shown.view;
    match state.focus {
        Pane::Runs => {
            let Some(run_id) = state.filtered_runs().get(state.sel.runs).map(|r| r.run_id) else {
                return vec![];
            };
            if state.run_live() {
                return confirm(state, Pending::Replay(run_id));
            }
            open_run(state, run_id)
        }
        Pane::Tools => {
            if let Some(inv) = view.invocations.get(state.sel.tools) {
                let mut value = serde_json::to_value(inv).unwrap_or_default();
                // The preview is JSON text; show it as JSON when it is
                // complete (a truncated preview stays a string).
                if let Some(slot) = value.get_mut("output_preview")
                    && let Some(parsed) = slot
                        .as_str()
                        .and_then(|p| serde_json::from_str::<serde_json::Value>(p).ok())
                {
                    *slot = parsed;
                }
                state.popup = Some(Popup::Detail {
                    title: format!("invocation {} · {}", inv.id, inv.tool_name),
                    lines: detail::json_lines(&value, &state.theme),
                    scroll: 0,
                });
            }
            vec![]
        }
        Pane::Bindings => {
            let binding = view
                .gatekeeper
                .as_ref()
                .and_then(|g| g.checked_bindings.get(state.sel.bindings));
            if let Some(b) = binding {
                let value = serde_json::to_value(b).unwrap_or_default();
                state.popup = Some(Popup::Detail {
                    title: format!("binding {} · {}", b.claim_id, b.tool_name),
                    lines: detail::json_lines(&value, &state.theme),
                    scroll: 0,
                });
            }
            vec![]
        }
        _ => vec![],
    }
}

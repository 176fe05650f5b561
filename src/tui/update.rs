//! The one place that changes [`AppState`]: `update(state, msg) -> commands`.
//!
//! Messages are terminal keys, engine events tagged with the generation
//! of their source, and results of background work. Commands are what the
//! runtime must do outside the state (start a run, load a replay, send a
//! step). Keeping side effects out of here makes every interaction a
//! "state + keys -> state" test.

use crate::engine::StepCommand;
use crate::tui::keymap::{Action, Context};
use crate::tui::state::{AppState, DemoEntry, Mode, Pane, Pending, Popup, StoredRun, Subject};
use crate::tui::view::{chrome, detail, inspect};
use crate::vocab::events::{EngineEvent, EventKind};
use crate::vocab::run::{RunStatus, RunSummary};
use crate::vocab::run_trace::RunTrace;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::Rect;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub enum Msg {
    Key(KeyEvent),
    /// Text pasted into the terminal (bracketed paste): one piece.
    Paste(String),
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
    /// The newest runs, polled: merged into the list (other processes'
    /// runs appear, running ones change status).
    RunsChanged(Vec<RunSummary>),
    ReplayLoaded {
        generation: u64,
        result: Result<Vec<EngineEvent>, String>,
    },
    ScenariosLoaded(Vec<DemoEntry>),
    /// A run as Markdown, to copy.
    ExportReady {
        run_id: i64,
        result: Result<String, String>,
    },
    /// Two stored runs to compare.
    CompareLoaded {
        a: i64,
        b: i64,
        result: Result<(Arc<RunTrace>, Arc<RunTrace>), String>,
    },
    /// A run's stored trace, asked for by a detail popup.
    TraceLoaded {
        run_id: i64,
        result: Result<Arc<RunTrace>, String>,
    },
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
    /// Read a run's stored trace (prompts, responses, reasoning).
    LoadTrace {
        run_id: i64,
    },
    /// Render a stored run as Markdown and copy it (`ExportReady`).
    CopyExport {
        run_id: i64,
    },
    /// Read two stored runs to compare (`CompareLoaded`).
    LoadCompare {
        a: i64,
        b: i64,
    },
    /// Put text on the terminal's clipboard (OSC 52).
    Copy(String),
    Quit,
}

/// Whether a message can change what is on screen; the loop redraws only
/// then.
pub fn update(state: &mut AppState, msg: Msg) -> Vec<Command> {
    match msg {
        Msg::Key(key) if key.kind != KeyEventKind::Release => on_key(state, key),
        Msg::Paste(text) => {
            on_paste(state, &text);
            vec![]
        }
        Msg::Resize(w, h) => {
            state.screen = (w, h);
            vec![]
        }
        Msg::Key(_) => vec![],
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
            set_runs(state, merged);
            vec![]
        }
        Msg::RunsChanged(rows) => {
            // The newest runs as they stand now: new ones join the list,
            // known ones take their new status.
            let mut merged = state.runs.clone();
            for row in rows {
                match merged.iter_mut().find(|r| r.run_id == row.run_id) {
                    Some(known) => *known = row,
                    None => merged.push(row),
                }
            }
            set_runs(state, merged);
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
        Msg::ScenariosLoaded(loaded) => {
            state.scenarios = Some(loaded.clone());
            // Only a picker that is open takes the list; one closed
            // meanwhile stays closed.
            let Some(Popup::DemoPicker {
                entries,
                selected,
                loading,
                queued,
            }) = state.popup.as_mut()
            else {
                return vec![];
            };
            let keep = entries.get(*selected).map(|e| e.path.clone());
            *selected = keep
                .and_then(|p| loaded.iter().position(|e| e.path == p))
                .unwrap_or(0);
            *entries = loaded;
            *loading = false;
            let queued = std::mem::take(queued);
            let mut cmds = vec![];
            for action in queued {
                if !matches!(state.popup, Some(Popup::DemoPicker { .. })) {
                    break;
                }
                cmds.extend(on_popup_action(state, action));
            }
            cmds
        }
        Msg::StartDemo(entry) => start_demo(state, entry),
        Msg::ExportReady { run_id, result } => match result {
            Ok(text) => {
                state.notice = Some(format!(
                    "copied run {run_id} as Markdown ({} lines)",
                    text.lines().count()
                ));
                vec![Command::Copy(text)]
            }
            Err(e) => {
                state.notice = Some(format!("cannot copy run {run_id}: {e}"));
                vec![]
            }
        },
        Msg::CompareLoaded { a, b, result } => {
            match result {
                Ok((ta, tb)) => {
                    // Two columns and the label fill the popup's inner width.
                    let screen = Rect::new(0, 0, state.screen.0, state.screen.1);
                    let inner = chrome::detail_rect(screen).width.saturating_sub(2);
                    let col = usize::from(inner.saturating_sub(20) / 2).clamp(12, 80);
                    let text = crate::report::compare::to_text(&ta, &tb, col);
                    state.popup = Some(Popup::Detail {
                        title: format!("compare run {a} │ run {b} (≠ differs)"),
                        lines: compare_lines(&text, &state.theme),
                        scroll: 0,
                        subject: None,
                    });
                }
                Err(e) => state.notice = Some(format!("cannot compare runs {a} and {b}: {e}")),
            }
            vec![]
        }
        Msg::TraceLoaded { run_id, result } => {
            on_trace(state, run_id, result);
            vec![]
        }
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

/// Sets the runs list, grouped by session: sessions by their newest run,
/// and the runs of a session newest first. The selection stays on the
/// run it was on.
fn set_runs(state: &mut AppState, mut runs: Vec<RunSummary>) {
    let selected = state.filtered_runs().get(state.sel.runs).map(|r| r.run_id);
    let mut newest: std::collections::HashMap<String, i64> = std::collections::HashMap::new();
    for r in &runs {
        let n = newest.entry(r.session_id.clone()).or_insert(r.run_id);
        *n = (*n).max(r.run_id);
    }
    runs.sort_by_cached_key(|r| {
        (
            std::cmp::Reverse(newest.get(&r.session_id).copied().unwrap_or(r.run_id)),
            r.session_id.clone(),
            std::cmp::Reverse(r.run_id),
        )
    });
    state.runs = runs;
    state.runs_error = None;
    let at = selected.and_then(|id| state.filtered_runs().iter().position(|r| r.run_id == id));
    state.sel.runs = at
        .unwrap_or(state.sel.runs)
        .min(state.runs.len().saturating_sub(1));
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
    let mut runs = state.runs.clone();
    runs.push(RunSummary {
        run_id,
        session_id: full.session_id.clone(),
        status: fin.status,
        effective_verdict: fin.effective_verdict,
        degraded: fin.degraded,
        duration_ms: Some(full.last_at_ms),
        question: full.question.clone(),
        created_at: String::new(),
        tokens: full.tokens,
    });
    set_runs(state, runs);
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
    let contexts = state.contexts();
    if contexts == [Context::Filtering] {
        return on_filter_key(state, key);
    }
    if contexts == [Context::Typing] {
        return on_input_key(state, key);
    }
    let Some(action) = state.keymap.lookup(&key, &contexts) else {
        return vec![];
    };
    if state.popup.is_some() {
        return on_popup_action(state, action);
    }
    on_action(state, action)
}

fn on_filter_key(state: &mut AppState, key: KeyEvent) -> Vec<Command> {
    match state.keymap.lookup(&key, &[Context::Filtering]) {
        Some(Action::Submit) => state.filter_editing = false,
        Some(Action::Close) => {
            state.filter_editing = false;
            state.filter.clear();
        }
        Some(Action::Quit) => return quit(state),
        _ => match key.code {
            KeyCode::Backspace => {
                state.filter.pop();
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                state.filter.push(c);
            }
            _ => {}
        },
    }
    state.sel.runs = 0;
    vec![]
}

/// Keys for the question input: the `Typing` rows of the keymap, and
/// everything else types.
fn on_input_key(state: &mut AppState, key: KeyEvent) -> Vec<Command> {
    match state.keymap.lookup(&key, &[Context::Typing]) {
        Some(Action::ToggleStep) => state.step_live = !state.step_live,
        Some(Action::Close) => state.focus = Pane::Graph,
        Some(Action::Quit) => return quit(state),
        Some(a @ (Action::NextPane | Action::PrevPane)) => {
            cycle_focus(state, a == Action::NextPane)
        }
        Some(a @ (Action::HistoryPrev | Action::HistoryNext)) => {
            recall_history(state, a == Action::HistoryPrev)
        }
        Some(Action::Submit) => {
            let question = state.input.lines().join(" ").trim().to_string();
            if question.is_empty() {
                return vec![];
            }
            state.history.retain(|h| h != &question);
            state.history.push(question.clone());
            state.history_pos = None;
            state.input = fresh_input(state);
            let stepping = state.step_live;
            if state.run_live() {
                return confirm(state, Pending::Ask { question, stepping });
            }
            return ask(state, question, stepping);
        }
        _ => {
            state.input.input(key);
        }
    }
    vec![]
}

/// Pasted text: always part of a question, never keys. Line breaks and
/// tabs become spaces, so a multi-line paste is one question.
fn on_paste(state: &mut AppState, text: &str) {
    if state.filter_editing {
        state.filter.push_str(&one_line_paste(text));
        state.sel.runs = 0;
        return;
    }
    if state.popup.is_some() {
        return;
    }
    state.focus = Pane::Input;
    state.input.insert_str(one_line_paste(text));
}

fn one_line_paste(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .collect();
    crate::text::sanitize_line(spaced.trim())
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

/// A popup's scroll after a movement key, never past its end.
fn scrolled(scroll: u16, action: Action, max: u16) -> u16 {
    match action {
        Action::Down => scroll.saturating_add(1).min(max),
        Action::Up => scroll.min(max).saturating_sub(1),
        Action::Top => 0,
        Action::Bottom => max,
        _ => scroll,
    }
}

fn on_popup_action(state: &mut AppState, action: Action) -> Vec<Command> {
    let screen = Rect::new(0, 0, state.screen.0, state.screen.1);
    let help_max = if matches!(state.popup, Some(Popup::Help { .. })) {
        chrome::max_scroll(&chrome::help_lines(state), chrome::help_rect(screen))
    } else {
        0
    };
    let Some(popup) = state.popup.as_mut() else {
        return vec![];
    };
    match (popup, action) {
        (_, Action::Quit) => return quit(state),
        (_, Action::Close) | (Popup::Help { .. }, Action::Help) => state.popup = None,
        (Popup::Detail { lines, title, .. }, Action::Copy) => {
            let text = lines_text(lines);
            state.notice = Some(format!(
                "copied {} ({} lines)",
                crate::text::sanitize_line(title),
                lines.len()
            ));
            return vec![Command::Copy(text)];
        }
        (Popup::Detail { scroll, lines, .. }, a) => {
            let max = chrome::max_scroll(lines, chrome::detail_rect(screen));
            *scroll = scrolled(*scroll, a, max);
        }
        (Popup::Help { scroll }, a) => {
            *scroll = scrolled(*scroll, a, help_max);
        }
        (
            Popup::DemoPicker {
                loading: true,
                queued,
                ..
            },
            a,
        ) => queued.push(a),
        (
            Popup::DemoPicker {
                entries, selected, ..
            },
            a,
        ) => match a {
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
        (Popup::Confirm(_), _) => {}
    }
    vec![]
}

/// The compare text as lines: differing rows stand out, headings are
/// titles.
fn compare_lines(text: &str, t: &crate::tui::theme::Theme) -> Vec<ratatui::text::Line<'static>> {
    use crate::tui::theme::Role;
    text.lines()
        .map(|l| {
            let role = if l.starts_with('≠') {
                Role::Degraded
            } else if !l.starts_with(' ') && !l.is_empty() {
                Role::Title
            } else {
                Role::Text
            };
            ratatui::text::Line::styled(l.to_string(), t.style(role))
        })
        .collect()
}

/// Plain text of a popup's lines, for copying.
fn lines_text(lines: &[ratatui::text::Line]) -> String {
    let mut out = String::new();
    for l in lines {
        for s in &l.spans {
            out.push_str(&s.content);
        }
        out.push('\n');
    }
    out
}

/// `y`: the answer on the answer pane; elsewhere the shown run as
/// Markdown (read from the store first).
fn copy(state: &mut AppState) -> Vec<Command> {
    let v = state.view();
    if state.focus == Pane::Answer
        && let Some(fin) = &v.finished
    {
        let text = fin.answer.clone();
        state.notice = Some(format!(
            "copied the answer ({} characters)",
            text.chars().count()
        ));
        return vec![Command::Copy(text)];
    }
    let run = match state.focus {
        Pane::Runs => state.filtered_runs().get(state.sel.runs).map(|r| r.run_id),
        _ => v.run_id,
    };
    match run {
        Some(run_id) => {
            state.notice = Some(format!("copying run {run_id} as Markdown…"));
            vec![Command::CopyExport { run_id }]
        }
        None => {
            state.notice = Some("nothing to copy yet".into());
            vec![]
        }
    }
}

/// `m` on the runs list: marks a run, and on a second run compares the
/// two.
fn compare(state: &mut AppState) -> Vec<Command> {
    if state.focus != Pane::Runs {
        state.notice =
            Some("compare: pick two runs in the runs list (tab to it, m on each)".into());
        return vec![];
    }
    let Some(run_id) = state.filtered_runs().get(state.sel.runs).map(|r| r.run_id) else {
        return vec![];
    };
    match state.compare_mark.take() {
        Some(a) if a != run_id => {
            state.notice = Some(format!("comparing runs {a} and {run_id}…"));
            vec![Command::LoadCompare { a, b: run_id }]
        }
        Some(_) => {
            state.notice = Some(format!("run {run_id} unmarked"));
            vec![]
        }
        None => {
            state.compare_mark = Some(run_id);
            state.notice = Some(format!(
                "run {run_id} marked: m on another run compares them"
            ));
            vec![]
        }
    }
}

fn on_action(state: &mut AppState, action: Action) -> Vec<Command> {
    match action {
        Action::Copy => return copy(state),
        Action::Compare => return compare(state),
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
        Action::Confirm
        | Action::Deny
        | Action::Submit
        | Action::HistoryPrev
        | Action::HistoryNext => {}
        Action::Help => state.popup = Some(Popup::Help { scroll: 0 }),
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
        Action::Zoom => state.zoom = !state.zoom,
        Action::ToggleStep => state.step_live = !state.step_live,
        Action::Demo => {
            state.open_demo_picker();
            return vec![Command::ListScenarios];
        }
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
        Pane::Answer | Pane::Graph | Pane::Verdict => {
            let scroll = match state.focus {
                Pane::Answer => &mut state.sel.answer_scroll,
                Pane::Verdict => &mut state.sel.verdict_scroll,
                _ => &mut state.sel.graph_scroll,
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
        Pane::Input => return,
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
                    subject: None,
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
                let mut value = serde_json::to_value(b).unwrap_or_default();
                // The Gatekeeper's claim-level errors about this claim.
                let errors: Vec<&String> = view
                    .gatekeeper
                    .as_ref()
                    .map(|g| {
                        g.errors
                            .iter()
                            .filter(|e| e.contains(&b.claim_id))
                            .collect()
                    })
                    .unwrap_or_default();
                if !errors.is_empty()
                    && let Some(obj) = value.as_object_mut()
                {
                    obj.insert("claim_errors".into(), serde_json::json!(errors));
                }
                state.popup = Some(Popup::Detail {
                    title: format!("binding {} · {}", b.claim_id, b.tool_name),
                    lines: detail::json_lines(&value, &state.theme),
                    scroll: 0,
                    subject: None,
                });
            }
            vec![]
        }
        Pane::Graph => {
            let k = inspect::attempt_count(shown_events(state)).checked_sub(1);
            match k {
                Some(k) => open_subject(state, Subject::Node(k)),
                None => vec![],
            }
        }
        Pane::Transitions => {
            let count = inspect::attempt_count(shown_events(state));
            match count.checked_sub(1) {
                Some(last) => open_subject(state, Subject::Node(state.sel.transitions.min(last))),
                None => vec![],
            }
        }
        Pane::Verdict => open_subject(state, Subject::Verdict),
        Pane::Answer => open_subject(state, Subject::Answer),
        Pane::Input => vec![],
    }
}

/// The events the shown run has applied (a replay: up to its cursor).
fn shown_events(state: &AppState) -> &[EngineEvent] {
    state
        .shown
        .events
        .get(..state.shown.cursor)
        .unwrap_or_default()
}

/// The lines of a detail about the shown run, from its events and
/// whatever of its stored trace has arrived.
fn subject_lines(
    state: &AppState,
    subject: Subject,
) -> Option<(String, Vec<ratatui::text::Line<'static>>)> {
    let v = state.view();
    let stored = v
        .run_id
        .and_then(|id| state.traces.get(&id))
        .cloned()
        .unwrap_or(StoredRun::Loading);
    let t = &state.theme;
    let run = v
        .run_id
        .map_or_else(String::new, |id| format!("run {id} · "));
    match subject {
        Subject::Node(k) => inspect::node(shown_events(state), k, &stored, t)
            .map(|(title, lines)| (format!("{run}{title}"), lines)),
        Subject::Verdict => Some((
            format!("{run}verdict"),
            inspect::verdict(v, shown_events(state), &stored, t),
        )),
        Subject::Answer => Some((format!("{run}answer"), inspect::answer(v, &stored, t))),
    }
}

/// Opens a detail of the shown run and asks for its stored trace when it
/// is not at hand (or the run was still going when it was read).
fn open_subject(state: &mut AppState, subject: Subject) -> Vec<Command> {
    let run_id = state.view().run_id;
    let mut cmds = vec![];
    if let Some(id) = run_id {
        let complete = matches!(
            state.traces.get(&id),
            Some(StoredRun::Loaded(t)) if t.run.status != RunStatus::Running
        );
        if !complete {
            if !matches!(state.traces.get(&id), Some(StoredRun::Loaded(_))) {
                state.traces.insert(id, StoredRun::Loading);
            }
            cmds.push(Command::LoadTrace { run_id: id });
        }
    }
    if let Some((title, lines)) = subject_lines(state, subject) {
        state.popup = Some(Popup::Detail {
            title,
            lines,
            scroll: 0,
            subject: run_id.map(|id| (id, subject)),
        });
    }
    cmds
}

/// A stored trace arrived: keep it and redraw a detail that waits for it.
fn on_trace(state: &mut AppState, run_id: i64, result: Result<Arc<RunTrace>, String>) {
    if state.view().run_id != Some(run_id) {
        return;
    }
    let stored = match result {
        Ok(t) => StoredRun::Loaded(t),
        Err(e) => StoredRun::Missing(e),
    };
    state.traces.insert(run_id, stored);
    let Some(Popup::Detail {
        subject: Some((id, subject)),
        ..
    }) = state.popup.clone()
    else {
        return;
    };
    if id != run_id {
        return;
    }
    if let Some((new_title, new_lines)) = subject_lines(state, subject)
        && let Some(Popup::Detail { title, lines, .. }) = state.popup.as_mut()
    {
        *title = new_title;
        *lines = new_lines;
    }
}

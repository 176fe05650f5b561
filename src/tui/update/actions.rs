//! What an action does to the state: quit (asking first while a run is
//! live), start a run or a demo, open what the focused pane shows, copy,
//! compare, and move the focus and selection. Keys (`input`) and messages
//! (`events`) both end up here.

use super::Command;
use crate::tui::keymap::Action;
use crate::tui::state::{AppState, DemoEntry, Mode, Pane, Pending, Popup, StoredRun, Subject};
use crate::tui::view::{detail, inspect, max_scroll, screen_areas, tables};
use crate::vocab::events::{EngineEvent, EventKind};
use crate::vocab::run::RunStatus;
use ratatui::layout::Rect;

pub(super) fn start_demo(state: &mut AppState, entry: DemoEntry) -> Vec<Command> {
    state.popup = None;
    if state.run_live() && entry.error.is_none() {
        return confirm(state, Pending::Demo(entry));
    }
    start_demo_now(state, entry)
}

pub(super) fn start_demo_now(state: &mut AppState, entry: DemoEntry) -> Vec<Command> {
    state.popup = None;
    if let Some(e) = &entry.error {
        state.notify(format!("cannot run {}: {e}", entry.name));
        return vec![];
    }
    let path = entry.path.clone();
    let generation = state.begin(Mode::Demo, true, true);
    state.demo = Some(entry);
    // A demo is watched node by node: the transitions tell it.
    state.focus = Pane::Transitions;
    state.table_pane = Pane::Transitions;
    vec![Command::StartDemo { generation, path }]
}

/// Asks before doing something that would stop the live run.
pub(super) fn confirm(state: &mut AppState, pending: Pending) -> Vec<Command> {
    state.filter_editing = false;
    state.popup = Some(Popup::Confirm(pending));
    vec![]
}

/// Quits, asking first while a run is live (a second ctrl-c confirms).
pub(super) fn quit(state: &mut AppState) -> Vec<Command> {
    if state.run_live() {
        return confirm(state, Pending::Quit);
    }
    state.quit = true;
    vec![Command::Quit]
}

/// Quits without asking (the process was told to stop): a live run is
/// cancelled first.
pub(super) fn terminate(state: &mut AppState) -> Vec<Command> {
    if state.run_live() {
        return run_pending(state, Pending::Quit);
    }
    state.quit = true;
    vec![Command::Quit]
}

/// Does what a confirmed question was about.
pub(super) fn run_pending(state: &mut AppState, pending: Pending) -> Vec<Command> {
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

/// Starts a live run of `question`.
pub(super) fn ask(state: &mut AppState, question: String, stepping: bool) -> Vec<Command> {
    let generation = state.begin(Mode::Live, true, stepping);
    state.demo = None;
    // What is typed next is a follow-up question, never a command; a
    // stepped run takes the keys that step it, so its panes get them.
    if stepping {
        state.focus = Pane::Graph;
    }
    vec![Command::StartRun {
        generation,
        question,
        stepping,
    }]
}

/// `y`: the answer on the answer pane; elsewhere the shown run as
/// Markdown (read from the store first).
pub(super) fn copy(state: &mut AppState) -> Vec<Command> {
    let v = state.view();
    if state.focus == Pane::Answer
        && let Some(fin) = &v.finished
    {
        let text = fin.answer.clone();
        state.notify(format!(
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
            state.notify(format!("copying run {run_id} as Markdown…"));
            vec![Command::CopyExport { run_id }]
        }
        None => {
            state.notify("nothing to copy yet");
            vec![]
        }
    }
}

/// `m` on the runs list: marks a run, and on a second run compares the
/// two.
pub(super) fn compare(state: &mut AppState) -> Vec<Command> {
    if state.focus != Pane::Runs {
        state.notify("compare: pick two runs in the runs list (tab to it, m on each)");
        return vec![];
    }
    let Some(run_id) = state.filtered_runs().get(state.sel.runs).map(|r| r.run_id) else {
        return vec![];
    };
    match state.compare_mark.take() {
        Some(a) if a != run_id => {
            state.notify(format!("comparing runs {a} and {run_id}…"));
            vec![Command::LoadCompare { a, b: run_id }]
        }
        Some(_) => {
            state.notify(format!("run {run_id} unmarked"));
            vec![]
        }
        None => {
            state.compare_mark = Some(run_id);
            state.notify(format!(
                "run {run_id} marked: m on another run compares them"
            ));
            vec![]
        }
    }
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
pub(super) fn open_run(state: &mut AppState, run_id: i64) -> Vec<Command> {
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

pub(super) fn cycle_focus(state: &mut AppState, forward: bool) {
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

/// A scroll (of a popup or a text pane showing `page` rows) after a
/// movement key, never past its end.
pub(super) fn scrolled(scroll: u16, action: Action, max: u16, page: u16) -> u16 {
    let page = page.saturating_sub(1).max(1);
    match action {
        Action::Down => scroll.saturating_add(1).min(max),
        Action::Up => scroll.min(max).saturating_sub(1),
        Action::PageDown => scroll.saturating_add(page).min(max),
        Action::PageUp => scroll.min(max).saturating_sub(page),
        Action::Top => 0,
        Action::Bottom => max,
        _ => scroll,
    }
}

pub(super) fn move_selection(state: &mut AppState, action: Action) {
    // A text pane scrolls no further than its end, so the way back up
    // starts at once.
    let screen = Rect::new(0, 0, state.screen.0, state.screen.1);
    let rect = screen_areas(state, screen).and_then(|a| a.rect_of(state.focus));
    let text_max = rect.map_or(0, |r| max_scroll(state, state.focus, r));
    // Rows inside the pane's borders (a table also has its header).
    let page = rect.map_or(1, |r| r.height.saturating_sub(3));
    let pane = state.focus;
    match pane {
        Pane::Answer | Pane::Graph | Pane::Verdict => {
            let scroll = match pane {
                Pane::Answer => &mut state.sel.answer_scroll,
                Pane::Verdict => &mut state.sel.verdict_scroll,
                _ => &mut state.sel.graph_scroll,
            };
            *scroll = scrolled(*scroll, action, text_max, page + 1);
        }
        Pane::Input => {}
        Pane::Timeline => super::timeline::move_row(state, action),
        _ => {
            let last = tables::scroll::rows(state, pane).len.saturating_sub(1);
            let sel = state.sel.selected(pane);
            let moved = match action {
                Action::Down => (sel + 1).min(last),
                Action::Up => sel.saturating_sub(1),
                Action::PageDown => (sel + usize::from(page.max(1))).min(last),
                Action::PageUp => sel.saturating_sub(usize::from(page.max(1))),
                Action::Top => 0,
                _ => last,
            };
            state.sel.select(pane, moved);
            keep_in_view(state, pane);
        }
    }
}

/// Stores the first row a table pane shows now, as the view draws it
/// with the selection in sight, so the next frame and the next click
/// start from there instead of recomputing the scroll from the selection.
pub(super) fn keep_in_view(state: &mut AppState, pane: Pane) {
    let screen = Rect::new(0, 0, state.screen.0, state.screen.1);
    if let Some(top) = tables::first_shown(state, pane, screen) {
        state.sel.set_top(pane, top);
    }
}

pub(super) fn open(state: &mut AppState) -> Vec<Command> {
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
        Pane::Timeline => super::timeline::open(state),
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
                .and_then(|g| tables::bindings::binding_at(g, state.sel.bindings));
            if let Some((b, unverified)) = binding {
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
                let kind = if unverified {
                    // Said in the title: the detail of one of the
                    // hypotheses' or actions' bindings is no finding's.
                    format!("{} binding", tables::bindings::UNVERIFIED)
                } else {
                    "binding".into()
                };
                state.popup = Some(Popup::Detail {
                    title: format!("{kind} {} · {}", b.claim_id, b.tool_name),
                    lines: detail::json_lines(&value, &state.theme),
                    scroll: 0,
                    subject: None,
                });
            }
            vec![]
        }
        Pane::Graph => {
            // In step mode the newest node has not started yet: the one
            // that just ran is the one before it.
            let count = inspect::attempt_count(state.shown.applied());
            let waiting = usize::from(state.shown.waiting_since.is_some() && count > 1);
            let k = count.checked_sub(1 + waiting);
            match k {
                Some(k) => open_subject(state, Subject::Node(k)),
                None => vec![],
            }
        }
        Pane::Transitions => {
            let count = inspect::attempt_count(state.shown.applied());
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

/// Opens a detail of the shown run and asks for its stored trace when it
/// is not at hand (or the run was still going when it was read).
pub(super) fn open_subject(state: &mut AppState, subject: Subject) -> Vec<Command> {
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
    if let Some((title, lines)) = inspect::subject(state, subject) {
        state.popup = Some(Popup::Detail {
            title,
            lines,
            scroll: 0,
            subject: run_id.map(|id| (id, subject)),
        });
    }
    cmds
}

//! Folding what arrives from outside the keyboard into the state: engine
//! events of the shown run, the end of its source, the runs list as the
//! store sees it, and the results of background work (replays, scenarios,
//! exports, comparisons, stored traces).

use super::Command;
use super::input::on_popup_action;
use crate::tui::state::{AppState, DemoEntry, Mode, Pane, Popup, StoredRun};
use crate::tui::view::{chrome, detail, inspect};
use crate::vocab::events::{EngineEvent, EventKind, ModelDelta};
use crate::vocab::run::RunSummary;
use crate::vocab::run_trace::RunTrace;
use ratatui::layout::Rect;
use std::sync::Arc;

/// A piece of a streamed answer, shown only at the live edge: a user
/// stepping back through the run sees what was recorded at that step.
pub(super) fn on_delta(state: &mut AppState, generation: u64, delta: &ModelDelta) {
    let shown = &mut state.shown;
    if generation == shown.generation && shown.follow && shown.cursor == shown.events.len() {
        shown.view.apply_delta(delta);
    }
}

pub(super) fn on_engine_event(state: &mut AppState, generation: u64, event: EngineEvent) {
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
    // A stepped run's engine waits at the gate after entering a node,
    // until the person advances.
    let at_gate = shown.stepping && matches!(event.kind, EventKind::NodeEntered { .. });
    shown.events.push(event);
    if shown.follow {
        shown.seek(shown.events.len());
    }
    shown.synced_at = Some(state.clock_ms);
    if at_gate {
        shown.waiting_since = Some(state.clock_ms);
    } else if finished {
        shown.waiting_since = None;
    }
    if finished && state.mode != Mode::Replay {
        remember_run(state);
    }
}

/// The shown run's source finished; `error` is set when it failed.
pub(super) fn on_source_done(state: &mut AppState, generation: u64, error: Option<String>) {
    if generation == state.shown.generation {
        state.shown.error = error;
        state.shown.stepping = false;
        state.shown.waiting_since = None;
        state.shown.done = true;
        if matches!(state.popup, Some(Popup::Confirm(_))) {
            // Nothing left to stop: the question no longer applies.
            state.popup = None;
        }
    }
}

pub(super) fn on_runs_loaded(state: &mut AppState, rows: Vec<RunSummary>) {
    // Store rows win; runs kept only in memory stay listed.
    let mut merged = rows;
    for local in &state.runs {
        if !merged.iter().any(|r| r.run_id == local.run_id) {
            merged.push(local.clone());
        }
    }
    set_runs(state, merged);
}

pub(super) fn on_runs_changed(state: &mut AppState, rows: Vec<RunSummary>) {
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
}

pub(super) fn on_replay_loaded(
    state: &mut AppState,
    generation: u64,
    result: Result<Vec<EngineEvent>, String>,
) {
    if generation == state.shown.generation {
        match result {
            Ok(events) => {
                state.shown.events = events;
                state.shown.seek(0);
            }
            Err(e) => state.shown.error = Some(e),
        }
    }
}

/// The demo scenarios arrived: an open picker takes them and runs the
/// keys typed while it was loading.
pub(super) fn on_scenarios_loaded(state: &mut AppState, loaded: Vec<DemoEntry>) -> Vec<Command> {
    state.scenarios = Some(loaded.clone());
    // Only a picker that is open takes the list; one closed
    // meanwhile stays closed.
    let Some(Popup::DemoPicker {
        entries,
        selected,
        top,
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
    *top = 0;
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

pub(super) fn on_export_ready(
    state: &mut AppState,
    run_id: i64,
    result: Result<String, String>,
) -> Vec<Command> {
    match result {
        Ok(text) => {
            state.notify(format!(
                "copied run {run_id} as Markdown ({} lines)",
                text.lines().count()
            ));
            vec![Command::Copy(text)]
        }
        Err(e) => {
            state.notify(format!("cannot copy run {run_id}: {e}"));
            vec![]
        }
    }
}

pub(super) fn on_compare_loaded(
    state: &mut AppState,
    a: i64,
    b: i64,
    result: Result<(Arc<RunTrace>, Arc<RunTrace>), String>,
) {
    match result {
        Ok((ta, tb)) => {
            // Two columns and the label fill the popup's inner width.
            let screen = Rect::new(0, 0, state.screen.0, state.screen.1);
            let inner = chrome::detail_rect(screen).width.saturating_sub(2);
            let col = usize::from(inner.saturating_sub(20) / 2).clamp(12, 80);
            let text = crate::report::compare::to_text(&ta, &tb, col);
            // The comparison is the final state of "comparing runs…".
            state.notice = None;
            state.popup = Some(Popup::Detail {
                title: format!("compare run {a} │ run {b} (≠ differs)"),
                lines: detail::compare_lines(&text, &state.theme),
                scroll: 0,
                subject: None,
            });
        }
        Err(e) => state.notify(format!("cannot compare runs {a} and {b}: {e}")),
    }
}

/// Sets the runs list, grouped by session: sessions by their newest run,
/// and the runs of a session newest first. The selection stays on the
/// run it was on.
pub(super) fn set_runs(state: &mut AppState, mut runs: Vec<RunSummary>) {
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
    let before = state.sel.runs;
    state.sel.runs = at
        .unwrap_or(state.sel.runs)
        .min(state.runs.len().saturating_sub(1));
    // A list scrolled down moves with its selected run, so new runs
    // arriving above do not shift what is on screen; at the top it stays
    // at the top, where they appear.
    let top = state.sel.top(Pane::Runs);
    if top > 0 {
        state
            .sel
            .set_top(Pane::Runs, (top + state.sel.runs).saturating_sub(before));
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
    let mut runs = state.runs.clone();
    runs.push(RunSummary {
        rerun_of: None,
        run_id,
        session_id: full.session_id.clone(),
        status: fin.status,
        effective_verdict: fin.effective_verdict,
        degraded: fin.degraded,
        duration_ms: Some(full.last_at_ms),
        question: full.question.clone(),
        created_at: String::new(),
        tokens: full.tokens,
        cost_usd: full.usage.cost_usd,
    });
    set_runs(state, runs);
    state
        .local_events
        .insert(run_id, state.shown.events.clone());
}

/// A stored trace arrived: keep it and redraw a detail that waits for it.
pub(super) fn on_trace(state: &mut AppState, run_id: i64, result: Result<Arc<RunTrace>, String>) {
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
    if let Some((new_title, new_lines)) = inspect::subject(state, subject)
        && let Some(Popup::Detail { title, lines, .. }) = state.popup.as_mut()
    {
        *title = new_title;
        *lines = new_lines;
    }
}

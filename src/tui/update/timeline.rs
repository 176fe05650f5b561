//! What keys, clicks and Enter do on the Timeline tab: move the time
//! cursor and the selected row, zoom, and open the evidence behind a row
//! (its invocation, refs first).

use super::Command;
use crate::tui::keymap::Action;
use crate::tui::state::{AppState, Pane, Popup};
use crate::tui::view::{detail, screen_areas, timeline as pane};
use ratatui::layout::Rect;

/// The tab's inner area as drawn now, if it is.
fn inner(state: &AppState) -> Option<Rect> {
    let screen = Rect::new(0, 0, state.screen.0, state.screen.1);
    let r = screen_areas(state, screen)?.rect_of(Pane::Timeline)?;
    Some(ratatui::widgets::Block::bordered().inner(r))
}

fn columns(state: &AppState) -> usize {
    inner(state).map_or(80, |r| usize::from(pane::geometry(r).cols))
}

pub(super) fn on_key(state: &mut AppState, action: Action) {
    let Some(t) = state
        .timeline
        .timeline(state.shown.generation, state.view())
    else {
        return;
    };
    let cols = columns(state);
    match action {
        Action::TimeEarlier => state.timeline.step(&t, cols, -1),
        Action::TimeLater => state.timeline.step(&t, cols, 1),
        Action::TimeZoomIn => state.timeline.zoom_by(&t, true),
        Action::TimeZoomOut => state.timeline.zoom_by(&t, false),
        _ => {}
    }
}

pub(super) fn move_row(state: &mut AppState, action: Action) {
    let n = state
        .timeline
        .timeline(state.shown.generation, state.view())
        .map_or(0, |t| t.rows.len());
    let last = n.saturating_sub(1);
    let ts = &mut state.timeline;
    ts.row = match action {
        Action::Down => (ts.row + 1).min(last),
        Action::Up => ts.row.saturating_sub(1).min(last),
        Action::Top => 0,
        _ => last,
    };
    let h = inner(state).map_or(1, |r| pane::geometry(r).rows_h);
    let ts = &mut state.timeline;
    ts.top = pane::first_row(ts.row, ts.top, h);
}

/// A click in the plot puts the cursor at that column's time and selects
/// the row clicked; a click on a label selects its row.
pub(super) fn click(state: &mut AppState, x: u16, y: u16) {
    let (Some(r), Some(t)) = (
        inner(state),
        state
            .timeline
            .timeline(state.shown.generation, state.view()),
    ) else {
        return;
    };
    let g = pane::geometry(r);
    if y >= g.rows_y && y < g.rows_y + g.rows_h {
        let i = state.timeline.top + usize::from(y - g.rows_y);
        if i < t.rows.len() {
            state.timeline.row = i;
        }
    }
    if x >= g.plot_x && x < g.plot_x + g.cols {
        let a = state.timeline.axis(&t, usize::from(g.cols));
        let (lo, hi) = a.column_range(usize::from(x - g.plot_x));
        state.timeline.at_us = Some(lo + (hi - lo) / 2);
    }
}

/// The evidence behind the selected row: its invocation as stored, with
/// the row's refs (cited first) on top.
pub(super) fn open(state: &mut AppState) -> Vec<Command> {
    let Some(t) = state
        .timeline
        .timeline(state.shown.generation, state.view())
    else {
        return vec![];
    };
    let Some(row) = t.rows.get(state.timeline.row) else {
        return vec![];
    };
    let Some(inv) = state
        .view()
        .invocations
        .iter()
        .find(|i| i.id == row.invocation_id)
    else {
        return vec![];
    };
    let refs: Vec<&crate::vocab::tool::EvidenceRef> = row
        .refs
        .iter()
        .filter_map(|p| {
            inv.retrieval_details
                .evidence_refs
                .iter()
                .find(|r| r.raw_path == *p)
        })
        .collect();
    let value = serde_json::json!({
        "row": row.label,
        "cited": row.cited,
        "refs": refs,
        "invocation": {
            "id": inv.id,
            "tool_name": inv.tool_name,
            "input_params": inv.input_params,
            "evidence_status": inv.retrieval_details.evidence_status,
            "backend": inv.retrieval_details.source.backend,
            "buckets": inv.retrieval_details.buckets,
        },
    });
    state.popup = Some(Popup::Detail {
        title: format!("timeline row · invocation {} · {}", inv.id, inv.tool_name),
        lines: detail::json_lines(&value, &state.theme),
        scroll: 0,
        subject: None,
    });
    vec![]
}

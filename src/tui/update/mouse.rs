//! The mouse: a click focuses the pane under it, selects the row or
//! switches to the tab it lands on, and a click outside a popup closes
//! it; the wheel scrolls the pane under the pointer (focusing it) or the
//! open popup. Positions are hit-tested against the same geometry the
//! view draws (`view::screen_areas`, `tables::row_at`, `chrome::popup_rect`),
//! at the terminal size last seen.

use super::Command;
use super::actions::{keep_in_view, move_selection};
use super::input::on_popup_action;
use crate::tui::keymap::Action;
use crate::tui::state::{AppState, Pane, Popup};
use crate::tui::view::{chrome, screen_areas, tables};
use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

/// Rows (or lines) one notch of the wheel moves.
pub const WHEEL_STEP: usize = 3;

pub(super) fn on_mouse(state: &mut AppState, ev: MouseEvent) -> Vec<Command> {
    let screen = Rect::new(0, 0, state.screen.0, state.screen.1);
    let at = Position {
        x: ev.column,
        y: ev.row,
    };
    match ev.kind {
        MouseEventKind::Down(MouseButton::Left) => click(state, screen, at),
        MouseEventKind::ScrollDown => wheel(state, screen, at, Action::Down),
        MouseEventKind::ScrollUp => wheel(state, screen, at, Action::Up),
        _ => vec![],
    }
}

/// Focuses a pane; editing the filter ends (the filter kept, as enter
/// would) when the focus leaves the runs list.
fn focus(state: &mut AppState, pane: Pane) {
    if pane != Pane::Runs {
        state.filter_editing = false;
    }
    state.focus = pane;
    if pane.is_table() {
        state.table_pane = pane;
    }
}

fn click(state: &mut AppState, screen: Rect, at: Position) -> Vec<Command> {
    if let Some(popup) = &state.popup {
        let rect = chrome::popup_rect(state, popup, screen);
        if !rect.contains(at) {
            // Outside a popup: it closes, as esc would; a yes/no question
            // is answered no.
            state.popup = None;
            return vec![];
        }
        if let Some(Popup::DemoPicker {
            entries,
            selected,
            top,
            loading: false,
            ..
        }) = state.popup.as_mut()
            && let Some(k) = chrome::picker_entry_at(entries.len(), (*selected, *top), screen, at.y)
        {
            // The scenario clicked is on screen: the list stays put.
            *top = chrome::picker_top(entries.len(), *selected, *top, screen);
            *selected = k;
        }
        return vec![];
    }
    let Some(areas) = screen_areas(state, screen) else {
        return vec![];
    };
    let Some((pane, rect)) = areas.pane_at(at.x, at.y) else {
        return vec![];
    };
    if pane.is_table() && areas.tabbed && at.y == rect.y {
        if let Some(tab) = tables::tab_at(state, pane, rect, at.x) {
            focus(state, tab);
        }
        return vec![];
    }
    if pane == Pane::Timeline {
        focus(state, pane);
        super::timeline::click(state, at.x, at.y);
        return vec![];
    }
    if pane.is_table()
        && let Some(k) = tables::row_at(state, pane, rect, at.y)
    {
        // The row clicked is on screen: the view stays where it is.
        state.sel.select(pane, k);
        keep_in_view(state, pane);
    }
    focus(state, pane);
    vec![]
}

/// One notch of the wheel over a table: the view scrolls, and the
/// selection moves with it, keeping its place on screen (as far as the
/// ends of the list allow).
fn scroll_table(state: &mut AppState, pane: Pane, screen: Rect, down: bool) {
    let Some(area) = screen_areas(state, screen).and_then(|a| a.rect_of(pane)) else {
        return;
    };
    let height = usize::from(tables::scroll::rows_area(state, pane, area).height);
    let rows = tables::scroll::rows(state, pane);
    let start = tables::scroll::shown(state, pane, height).start;
    let last_top = rows.drawn.saturating_sub(height);
    let sel = state.sel.selected(pane);
    let (top, moved) = if down {
        (
            (start + WHEEL_STEP).min(last_top),
            (sel + WHEEL_STEP).min(rows.len.saturating_sub(1)),
        )
    } else {
        (
            start.saturating_sub(WHEEL_STEP),
            sel.saturating_sub(WHEEL_STEP),
        )
    };
    state.sel.set_top(pane, top);
    state.sel.select(pane, moved);
    keep_in_view(state, pane);
}

fn wheel(state: &mut AppState, screen: Rect, at: Position, action: Action) -> Vec<Command> {
    match &state.popup {
        // A question waits for its answer; a picker still loading has
        // nothing to scroll yet.
        Some(Popup::Confirm(_) | Popup::DemoPicker { loading: true, .. }) => vec![],
        Some(_) => {
            let mut cmds = vec![];
            for _ in 0..WHEEL_STEP {
                cmds.extend(on_popup_action(state, action));
            }
            cmds
        }
        None => {
            let under = screen_areas(state, screen).and_then(|a| a.pane_at(at.x, at.y));
            match under {
                Some((Pane::Input, _)) => return vec![],
                Some((pane, _)) => focus(state, pane),
                None => {}
            }
            if state.focus.is_table() && state.focus != Pane::Timeline {
                scroll_table(state, state.focus, screen, action == Action::Down);
            } else {
                for _ in 0..WHEEL_STEP {
                    move_selection(state, action);
                }
            }
            vec![]
        }
    }
}

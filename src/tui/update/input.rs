//! Keys and pastes, per input mode. A confirm question takes only its
//! answer; the runs filter and the question input type everything that is
//! not one of their few keys; a popup is modal; otherwise a key is an
//! action on the focused pane (`keymap`).

use super::Command;
use super::actions::{
    ask, compare, confirm, copy, cycle_focus, move_selection, node_boundary, open, quit,
    run_pending, scrolled, start_demo,
};
use crate::engine::StepCommand;
use crate::tui::keymap::{Action, Context};
use crate::tui::state::{AppState, Pane, Pending, Popup};
use crate::tui::view::chrome;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

fn is_ctrl_c(key: &KeyEvent) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c')
}

pub(super) fn on_key(state: &mut AppState, key: KeyEvent) -> Vec<Command> {
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
pub(super) fn on_paste(state: &mut AppState, text: &str) {
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

pub(super) fn on_popup_action(state: &mut AppState, action: Action) -> Vec<Command> {
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
            let notice = format!(
                "copied {} ({} lines)",
                crate::text::sanitize_line(title),
                lines.len()
            );
            state.notify(notice);
            return vec![Command::Copy(text)];
        }
        (Popup::Detail { scroll, lines, .. }, a) => {
            let rect = chrome::detail_rect(screen);
            let max = chrome::max_scroll(lines, rect);
            *scroll = scrolled(*scroll, a, max, rect.height.saturating_sub(2));
        }
        (Popup::Help { scroll }, a) => {
            let page = chrome::help_rect(screen).height.saturating_sub(2);
            *scroll = scrolled(*scroll, a, help_max, page);
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
                entries,
                selected,
                top,
                ..
            },
            a,
        ) => {
            match a {
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
            }
            *top = chrome::picker_top(entries.len(), *selected, *top, screen);
        }
        (Popup::Confirm(_), _) => {}
    }
    vec![]
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

fn on_action(state: &mut AppState, action: Action) -> Vec<Command> {
    match action {
        Action::Copy => return copy(state),
        Action::Compare => return compare(state),
        Action::Quit => return quit(state),
        Action::Cancel => {
            if state.run_live() {
                state.notify(match state.view().run_id {
                    Some(id) => format!("cancelling run {id}…"),
                    None => "cancelling the run…".to_string(),
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
        Action::Down
        | Action::Up
        | Action::Top
        | Action::Bottom
        | Action::PageDown
        | Action::PageUp => move_selection(state, action),
        Action::Open => return open(state),
        Action::TimeEarlier | Action::TimeLater | Action::TimeZoomIn | Action::TimeZoomOut => {
            super::timeline::on_key(state, action);
        }
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
        Action::StepNext => {
            state.shown.waiting_since = None;
            state.shown.synced_at = Some(state.clock_ms);
            return vec![Command::Step(StepCommand::Next)];
        }
        Action::StepContinue => {
            state.shown.stepping = false;
            state.shown.waiting_since = None;
            state.shown.synced_at = Some(state.clock_ms);
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

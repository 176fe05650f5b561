//! Which rows of a table pane are drawn. The first one is state
//! (`Selections::tops`), moved only as far as it takes to keep the
//! selection in sight, so the view, a click's hit-test and the wheel all
//! read the same window and a click never makes the view jump.

use crate::tui::state::{AppState, Pane};
use ratatui::layout::{Margin, Rect};

/// Drawn rows [start, end) of a table `len` rows long in `height` rows:
/// from `top` (where the view was left), moved only as far as it takes to
/// fill the rows and to show the row `selected`.
pub fn window(selected: usize, top: usize, len: usize, height: usize) -> (usize, usize) {
    if height == 0 || len == 0 {
        return (0, 0);
    }
    let selected = selected.min(len - 1);
    let mut start = top.min(len.saturating_sub(height));
    if selected < start {
        start = selected;
    } else if selected >= start + height {
        start = selected + 1 - height;
    }
    (start, (start + height).min(len))
}

/// How a table's selectable rows sit among the rows it draws: the
/// transitions draw the running node's row after theirs, the bindings a
/// heading before the unverified group; neither can be selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rows {
    /// Rows that can be selected.
    pub len: usize,
    /// Rows drawn, the unselectable ones included.
    pub drawn: usize,
    /// A heading drawn at this row, before the selectable row of the
    /// same index.
    pub heading: Option<usize>,
}

impl Rows {
    /// The drawn row of selectable row `k`.
    pub fn drawn_of(&self, k: usize) -> usize {
        match self.heading {
            Some(h) if k >= h => k + 1,
            _ => k,
        }
    }

    /// The selectable row drawn at row `d`, if any.
    pub fn selectable_at(&self, d: usize) -> Option<usize> {
        let k = match self.heading {
            Some(h) if d == h => return None,
            Some(h) if d > h => d - 1,
            _ => d,
        };
        (k < self.len).then_some(k)
    }
}

/// The rows of a table pane as drawn now.
pub fn rows(state: &AppState, pane: Pane) -> Rows {
    let v = state.view();
    match pane {
        Pane::Runs => {
            let len = state.filtered_runs().len();
            Rows {
                len,
                drawn: len,
                heading: None,
            }
        }
        Pane::Transitions => {
            let len = v.transitions.len();
            Rows {
                len,
                drawn: len + usize::from(state.node_elapsed().is_some()),
                heading: None,
            }
        }
        Pane::Tools => {
            let len = v.invocations.len();
            Rows {
                len,
                drawn: len,
                heading: None,
            }
        }
        _ => {
            let (verified, unverified) = v.gatekeeper.as_ref().map_or((0, 0), |g| {
                (g.checked_bindings.len(), g.unverified_bindings.len())
            });
            let heading = (unverified > 0).then_some(verified);
            Rows {
                len: verified + unverified,
                drawn: verified + unverified + usize::from(heading.is_some()),
                heading,
            }
        }
    }
}

/// Where a table pane drawn at `area` lists its rows (below the borders,
/// the filter line while it is edited, and the header).
pub fn rows_area(state: &AppState, pane: Pane, area: Rect) -> Rect {
    let inner = area.inner(Margin::new(1, 1));
    let editing = u16::from(state.filter_editing && pane == Pane::Runs);
    let top = editing + 1;
    Rect {
        y: inner.y.saturating_add(top),
        height: inner.height.saturating_sub(top),
        ..inner
    }
}

/// The rows a table pane draws now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Drawn rows [start, end).
    pub start: usize,
    pub end: usize,
    /// The selected row's place among them.
    pub selected: Option<usize>,
}

/// The rows a table pane whose rows area is `height` rows tall draws.
pub fn shown(state: &AppState, pane: Pane, height: usize) -> Window {
    let rows = rows(state, pane);
    let selected = rows
        .len
        .checked_sub(1)
        .map(|last| rows.drawn_of(state.sel.selected(pane).min(last)));
    let (start, end) = window(
        selected.unwrap_or(0),
        state.sel.top(pane),
        rows.drawn,
        height,
    );
    Window {
        start,
        end,
        selected: selected.and_then(|s| s.checked_sub(start)),
    }
}

/// The first drawn row of a table pane on a screen of `screen`, as the
/// view would draw it now; None when the pane is not on screen.
pub fn first_shown(state: &AppState, pane: Pane, screen: Rect) -> Option<usize> {
    let area = crate::tui::view::screen_areas(state, screen)?.rect_of(pane)?;
    let height = rows_area(state, pane, area).height;
    Some(shown(state, pane, height.into()).start)
}

/// The index of the row a table pane drawn at `area` shows at screen
/// row `y`, if that row lists one it can select.
pub fn row_at(state: &AppState, pane: Pane, area: Rect, y: u16) -> Option<usize> {
    let area = rows_area(state, pane, area);
    if !(area.top()..area.bottom()).contains(&y) {
        return None;
    }
    let shown = shown(state, pane, area.height.into());
    let d = shown.start + usize::from(y - area.y);
    if d >= shown.end {
        return None;
    }
    rows(state, pane).selectable_at(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_moves_only_as_far_as_the_selection_needs() {
        // Left at 10 with the selection inside: it stays.
        assert_eq!(window(14, 10, 100, 8), (10, 18));
        // Selection below: the window follows until it is the last row.
        assert_eq!(window(20, 10, 100, 8), (13, 21));
        // Selection above: it becomes the first row.
        assert_eq!(window(3, 10, 100, 8), (3, 11));
        // A top past the end (the list shrank, the pane grew) fills the rows.
        assert_eq!(window(95, 99, 100, 8), (92, 100));
        assert_eq!(window(0, 5, 3, 8), (0, 3));
        assert_eq!(window(0, 0, 0, 8), (0, 0));
        assert_eq!(window(7, 0, 10, 0), (0, 0));
        // A selection past the end counts as the last row.
        assert_eq!(window(500, 0, 10, 4), (6, 10));
    }

    #[test]
    fn a_heading_is_drawn_but_never_selected() {
        let rows = Rows {
            len: 5,
            drawn: 6,
            heading: Some(3),
        };
        let drawn: Vec<usize> = (0..5).map(|k| rows.drawn_of(k)).collect();
        assert_eq!(drawn, [0, 1, 2, 4, 5]);
        let back: Vec<Option<usize>> = (0..7).map(|d| rows.selectable_at(d)).collect();
        assert_eq!(
            back,
            [Some(0), Some(1), Some(2), None, Some(3), Some(4), None]
        );
        // The running node's row after the transitions.
        let live = Rows {
            len: 2,
            drawn: 3,
            heading: None,
        };
        assert_eq!(live.selectable_at(2), None);
    }
}

//! The Timeline tab: the shown run's evidence on one time axis
//! (`report::timeline`, the picture `diagraph timeline` prints), with a
//! time cursor, zoom and the selected row. Glyphs carry the meaning
//! (bars, `[` starts, sparkline levels, `C`/`A` markers, `v` for the
//! cursor); colour only adds to it. Only the rows that fit are cut into
//! columns.

use crate::report::timeline::{AlertState, Axis, Cell, Row, RowKind, Timeline, text};
use crate::tui::state::AppState;
use crate::tui::theme::{Role, Theme};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

/// Lines above the rows (window, axis, markers) and below them (readout).
const HEAD: u16 = 3;
const FOOT: u16 = 1;

/// Where the parts of the tab go inside its block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub label_w: u16,
    /// The plot: its first column and how many.
    pub plot_x: u16,
    pub cols: u16,
    /// The first row line and how many rows fit.
    pub rows_y: u16,
    pub rows_h: u16,
}

pub fn geometry(inner: Rect) -> Geometry {
    let (label_w, cols) = text::split(usize::from(inner.width));
    let label_w = u16::try_from(label_w).unwrap_or(0);
    Geometry {
        label_w,
        plot_x: inner.x.saturating_add(label_w + 1),
        cols: u16::try_from(cols)
            .unwrap_or(1)
            .min(inner.width.saturating_sub(label_w + 1))
            .max(1),
        rows_y: inner.y.saturating_add(HEAD),
        rows_h: inner.height.saturating_sub(HEAD + FOOT),
    }
}

/// The first row drawn so that the selected one is in sight.
pub fn first_row(selected: usize, top: usize, rows_h: u16) -> usize {
    let h = usize::from(rows_h.max(1));
    if selected < top {
        selected
    } else if selected >= top + h {
        selected + 1 - h
    } else {
        top
    }
}

fn cell_style(row: &Row, cell: Cell, theme: &Theme) -> Style {
    match cell {
        Cell::Empty => theme.style(Role::Muted),
        Cell::Bar(s) | Cell::Start(s) => theme.style(match s {
            AlertState::Firing => Role::Error,
            AlertState::Pending => Role::Warning,
            AlertState::Resolved => Role::Muted,
        }),
        Cell::Level(_) => match &row.kind {
            RowKind::Logs { level: Some(l), .. } => {
                let l = l.to_ascii_uppercase();
                if l.contains("ERR") || l.contains("FATAL") {
                    theme.style(Role::Error)
                } else if l.contains("WARN") {
                    theme.style(Role::Warning)
                } else {
                    theme.style(Role::EvidenceSupported)
                }
            }
            _ => theme.style(Role::EvidenceSupported),
        },
    }
}

fn put(buf: &mut Buffer, x: u16, y: u16, s: &str, style: Style, max: u16) {
    buf.set_stringn(x, y, s, usize::from(max), style);
}

/// Draws the tab inside `inner` (the block is drawn by the table area).
pub fn render(state: &AppState, inner: Rect, buf: &mut Buffer) {
    let theme = &state.theme;
    let Some(t) = state
        .timeline
        .timeline(state.shown.generation, state.view())
    else {
        put(
            buf,
            inner.x,
            inner.y,
            "no recorded evidence with a time yet (alerts, log counts, series)",
            theme.style(Role::Muted),
            inner.width,
        );
        return;
    };
    if inner.height < HEAD + FOOT + 1 || inner.width < 24 {
        return;
    }
    let g = geometry(inner);
    let a = state.timeline.axis(&t, usize::from(g.cols));
    draw(state, &t, &a, g, inner, buf);
}

fn draw(state: &AppState, t: &Timeline, a: &Axis, g: Geometry, inner: Rect, buf: &mut Buffer) {
    let theme = &state.theme;
    let ts = &state.timeline;
    let cursor_col = a.column_of_us(ts.cursor_us(t));
    let mut window = text::window_line(t, a);
    if ts.zoom > 0 {
        window.push_str(&format!("  zoom ×{}", 1u32 << ts.zoom));
    }
    put(
        buf,
        inner.x,
        inner.y,
        &window,
        theme.style(Role::Muted),
        inner.width,
    );
    let mut axis_line: Vec<char> = text::axis(a).chars().collect();
    if let Some(c) = cursor_col.and_then(|c| axis_line.get_mut(c)) {
        *c = 'v';
    }
    let axis_line: String = axis_line.into_iter().collect();
    put(
        buf,
        g.plot_x,
        inner.y + 1,
        &axis_line,
        theme.style(Role::Muted),
        g.cols,
    );
    put(
        buf,
        inner.x,
        inner.y + 2,
        "markers",
        theme.style(Role::Muted),
        g.label_w,
    );
    put(
        buf,
        g.plot_x,
        inner.y + 2,
        &text::marker_line(t, a),
        theme.style(Role::KeyHint),
        g.cols,
    );
    let rules = text::marker_columns(t, a);
    let selected = ts.row.min(t.rows.len().saturating_sub(1));
    let top = first_row(selected, ts.top, g.rows_h);
    let cursor_style = theme.style(Role::Selected).add_modifier(Modifier::REVERSED);
    for (i, row) in t
        .rows
        .iter()
        .enumerate()
        .skip(top)
        .take(usize::from(g.rows_h))
    {
        let y = g.rows_y + u16::try_from(i - top).unwrap_or(0);
        let label = text::row_label(row, usize::from(g.label_w));
        let label_style = if i == selected && state.focus == crate::tui::state::Pane::Timeline {
            theme.style(Role::Selected)
        } else if row.subject {
            theme.style(Role::Text).add_modifier(Modifier::BOLD)
        } else {
            theme.style(Role::Text)
        };
        put(buf, inner.x, y, &label, label_style, g.label_w);
        for (c, cell) in t.cells(row, a).into_iter().enumerate() {
            let x = g.plot_x + u16::try_from(c).unwrap_or(0);
            let mut ch = text::glyph(cell, false);
            let mut style = cell_style(row, cell, theme);
            if cell == Cell::Empty && rules.contains(&c) {
                ch = text::marker_rule(false);
                style = theme.style(Role::KeyHint);
            }
            if Some(c) == cursor_col {
                style = cursor_style;
            }
            if let Some(cell) = buf.cell_mut((x, y)) {
                cell.set_char(ch).set_style(style);
            }
        }
    }
    // The readout: the cursor's time and what the selected row holds there.
    if let (Some(c), Some(row)) = (cursor_col, t.rows.get(selected)) {
        let (lo, hi) = a.column_range(c);
        let line = format!(
            "{}–{}  {}: {}",
            crate::report::timeline::hhmmss(crate::report::timeline::us_time(lo)),
            crate::report::timeline::hhmmss(crate::report::timeline::us_time(hi)),
            row.label,
            t.readout(row, c, a)
        );
        let y = inner.y + inner.height.saturating_sub(1);
        put(buf, inner.x, y, &line, theme.style(Role::Text), inner.width);
    }
}

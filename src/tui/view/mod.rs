//! The pure view: `view(&AppState, &mut Frame)` lays the screen out and
//! renders each pane from the state, nothing else. Each pane is a small
//! widget over a borrowed slice of the state, in its own file.
//!
//! Layouts: wide terminals (>= 160x40) show every pane at once, the
//! answer beside the stacked run tables and growing with the terminal;
//! smaller ones show the four table panes (runs, transitions, tools,
//! bindings) in one tabbed area that follows the focus, the active tab
//! bracketed. The graph pane is sized to its diagram when the terminal
//! has room for it, and to its list otherwise. Any pane can be zoomed to
//! the whole body. Below 80x24 the screen says so instead of drawing a
//! broken layout.

pub mod chrome;
pub mod columns;
pub mod detail;
pub mod diagram;
pub mod graph;
pub mod inspect;
pub mod panels;
pub mod tables;
pub mod timeline;

use crate::tui::state::{AppState, MIN_HEIGHT, MIN_WIDTH, Pane, Popup};
use crate::tui::theme::{Role, Theme};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders};

/// Where each pane was drawn (None: not visible in this layout).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Areas {
    pub graph: Rect,
    pub verdict: Rect,
    pub answer: Rect,
    pub input: Rect,
    pub status: Rect,
    /// Table panes and their areas.
    pub tables: Vec<(Pane, Rect)>,
    /// The four tables share one area, a tab each.
    pub tabbed: bool,
}

pub fn is_wide(area: Rect) -> bool {
    area.width >= 160 && area.height >= 40
}

/// The verdict pane's width beside the graph on wide terminals.
const VERDICT_W: u16 = 38;
/// The narrowest the runs list gets beside them.
const RUNS_MIN_W: u16 = 44;

pub fn layout(area: Rect, table_pane: Pane) -> Areas {
    let [main, status] = Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
    if is_wide(area) {
        // Top: the graph (sized to its diagram when that leaves the verdict
        // and the runs list their room), the verdict and the runs list.
        // Below: the three run tables stacked on the left, and the answer
        // on the right, growing with the terminal.
        let (graph_w, graph_h) =
            graph::pane_size(area.width.saturating_sub(VERDICT_W + RUNS_MIN_W))
                .map_or((72, 14), |(w, h)| (w.max(72), h.max(14)));
        let [top, rest, input] = Layout::vertical([
            Constraint::Length(graph_h),
            Constraint::Min(0),
            Constraint::Length(3),
        ])
        .areas(main);
        let [graph, verdict, runs] = Layout::horizontal([
            Constraint::Length(graph_w),
            Constraint::Length(VERDICT_W),
            Constraint::Min(RUNS_MIN_W),
        ])
        .areas(top);
        let tables_w = (area.width * 3 / 5)
            .max(118)
            .min(area.width.saturating_sub(40));
        let [left, answer] =
            Layout::horizontal([Constraint::Length(tables_w), Constraint::Min(40)]).areas(rest);
        let [transitions, tools, bindings] = Layout::vertical([
            Constraint::Fill(1),
            Constraint::Fill(1),
            Constraint::Fill(1),
        ])
        .areas(left);
        Areas {
            graph,
            verdict,
            answer,
            input,
            status,
            tables: vec![
                (Pane::Runs, runs),
                (Pane::Transitions, transitions),
                (Pane::Tools, tools),
                (Pane::Bindings, bindings),
            ],
            tabbed: false,
        }
    } else {
        // The diagram when the verdict/answer column keeps 36 columns and
        // the tables a few rows; the list otherwise. The top row grows
        // with the terminal so the answer does too.
        let body = main.height.saturating_sub(3);
        let fit = graph::pane_size(area.width.saturating_sub(36)).filter(|(_, h)| *h + 8 <= body);
        let grown = if body >= 36 { body / 2 } else { body * 2 / 5 };
        let (graph_w, graph_h) = match fit {
            Some((w, h)) => (w, h.max(12).max(grown)),
            None => ((area.width * 3 / 5).clamp(44, 72), grown.max(12)),
        };
        let [top, mid, input] = Layout::vertical([
            Constraint::Length(graph_h),
            Constraint::Min(4),
            Constraint::Length(3),
        ])
        .areas(main);
        let [graph, right] =
            Layout::horizontal([Constraint::Length(graph_w), Constraint::Min(20)]).areas(top);
        let verdict_h = if graph_h >= 16 { 10 } else { 7 };
        let [verdict, answer] =
            Layout::vertical([Constraint::Length(verdict_h), Constraint::Min(3)]).areas(right);
        Areas {
            graph,
            verdict,
            answer,
            input,
            status,
            tables: vec![(table_pane, mid)],
            tabbed: true,
        }
    }
}

/// Where the zoomed pane is drawn: everything above the question input.
pub fn zoom_area(area: Rect) -> Rect {
    Rect {
        height: area.height.saturating_sub(4),
        ..area
    }
}

impl Areas {
    /// The pane drawn at a cell, and its area (the status bar is none).
    pub fn pane_at(&self, x: u16, y: u16) -> Option<(Pane, Rect)> {
        let pos = ratatui::layout::Position { x, y };
        [
            (Pane::Graph, self.graph),
            (Pane::Verdict, self.verdict),
            (Pane::Answer, self.answer),
            (Pane::Input, self.input),
        ]
        .into_iter()
        .chain(self.tables.iter().copied())
        .find(|(_, r)| r.contains(pos))
    }

    /// Where a pane is drawn (None: not in this layout).
    pub fn rect_of(&self, pane: Pane) -> Option<Rect> {
        let r = match pane {
            Pane::Graph => self.graph,
            Pane::Verdict => self.verdict,
            Pane::Answer => self.answer,
            Pane::Input => self.input,
            _ => self.tables.iter().find(|(p, _)| *p == pane)?.1,
        };
        (!r.is_empty()).then_some(r)
    }
}

/// Where each pane of `state` is drawn on a screen of `area`, zoom
/// included: what the view draws and what a mouse click hits. None when
/// the terminal is too small for the workbench.
pub fn screen_areas(state: &AppState, area: Rect) -> Option<Areas> {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        return None;
    }
    let table_pane = if state.focus.is_table() {
        state.focus
    } else {
        state.table_pane
    };
    let mut areas = layout(area, table_pane);
    if !areas.tabbed && state.focus == Pane::Timeline {
        // Wide: the run tables below the graph give way to the timeline
        // while it has the focus.
        let stacked: Vec<Rect> = areas
            .tables
            .iter()
            .filter(|(p, _)| *p != Pane::Runs)
            .map(|(_, r)| *r)
            .collect();
        if let Some(all) = stacked.into_iter().reduce(|a, b| a.union(b)) {
            areas.tables.retain(|(p, _)| *p == Pane::Runs);
            areas.tables.push((Pane::Timeline, all));
        }
    }
    if let Some(z) = state.zoomed() {
        // One pane over the whole body; the others are not drawn.
        let full = zoom_area(area);
        let keep = |p: Pane| if p == z { full } else { Rect::default() };
        areas.graph = keep(Pane::Graph);
        areas.verdict = keep(Pane::Verdict);
        areas.answer = keep(Pane::Answer);
        areas.tables = if z.is_table() {
            vec![(z, full)]
        } else {
            vec![]
        };
        areas.tabbed = false;
    }
    Some(areas)
}

pub fn view(state: &AppState, frame: &mut Frame) {
    let area = frame.area();
    let theme = &state.theme;
    let Some(areas) = screen_areas(state, area) else {
        chrome::too_small(frame, area, theme);
        return;
    };
    if !areas.graph.is_empty() {
        frame.render_widget(graph_pane(state), areas.graph);
    }
    if !areas.verdict.is_empty() {
        frame.render_widget(verdict_pane(state), areas.verdict);
    }
    if !areas.answer.is_empty() {
        frame.render_widget(answer_pane(state), areas.answer);
    }
    for (pane, rect) in &areas.tables {
        tables::render_table(state, *pane, *rect, areas.tabbed, frame.buffer_mut());
    }
    panels::render_input(state, areas.input, frame);
    chrome::status_bar(state, areas.status, frame.buffer_mut());
    match &state.popup {
        Some(Popup::Help { scroll }) => chrome::help(state, *scroll, area, frame.buffer_mut()),
        Some(Popup::Detail {
            title,
            lines,
            scroll,
            ..
        }) => chrome::detail(title, lines, *scroll, theme, area, frame.buffer_mut()),
        Some(Popup::DemoPicker {
            entries,
            selected,
            top,
            loading,
            ..
        }) => chrome::demo_picker(
            entries,
            (*selected, *top),
            *loading,
            theme,
            area,
            frame.buffer_mut(),
        ),
        Some(Popup::Confirm(pending)) => chrome::confirm(state, pending, area, frame.buffer_mut()),
        None => {}
    }
}

fn graph_pane(state: &AppState) -> graph::GraphPane<'_> {
    graph::GraphPane {
        view: state.view(),
        theme: &state.theme,
        focused: state.focus == Pane::Graph,
        scroll: state.sel.graph_scroll,
        waiting: state.shown.stepping,
    }
}

fn verdict_pane(state: &AppState) -> panels::VerdictPane<'_> {
    panels::VerdictPane {
        view: state.view(),
        theme: &state.theme,
        focused: state.focus == Pane::Verdict,
        scroll: state.sel.verdict_scroll,
    }
}

fn answer_pane(state: &AppState) -> panels::AnswerPane<'_> {
    panels::AnswerPane {
        state,
        focused: state.focus == Pane::Answer,
    }
}

/// How far a text pane (graph list, verdict, answer) drawn at `area` can
/// scroll; tables move a selection instead.
pub fn max_scroll(state: &AppState, pane: Pane, area: Rect) -> u16 {
    match pane {
        Pane::Graph => graph_pane(state).max_scroll(area),
        Pane::Verdict => verdict_pane(state).max_scroll(area),
        Pane::Answer => answer_pane(state).max_scroll(area),
        _ => 0,
    }
}

/// A pane frame whose border shows focus.
pub fn pane_block<'a>(title: impl Into<Line<'a>>, focused: bool, theme: &Theme) -> Block<'a> {
    let (border, kind) = if focused {
        (theme.style(Role::FocusedBorder), BorderType::Thick)
    } else {
        (theme.style(Role::Border), BorderType::Plain)
    };
    Block::default()
        .borders(Borders::ALL)
        .border_type(kind)
        .border_style(border)
        .title(title)
        .title_style(theme.style(Role::Title))
}

pub fn verdict_span(v: Option<crate::vocab::contracts::Verdict>, theme: &Theme) -> Span<'static> {
    use crate::vocab::contracts::Verdict;
    match v {
        Some(Verdict::Pass) => Span::styled("PASS", theme.style(Role::VerdictPass)),
        Some(Verdict::LowConfid) => Span::styled("LOW_CONFID", theme.style(Role::VerdictLow)),
        Some(Verdict::Reject) => Span::styled("REJECT", theme.style(Role::VerdictReject)),
        None => Span::styled("—", theme.style(Role::Muted)),
    }
}

/// A line cut to `width` columns, ending in "…" where it was cut (a
/// paragraph that does not wrap would clip it without a mark).
pub fn fit_line(line: Line<'static>, width: u16) -> Line<'static> {
    let width = usize::from(width);
    if line.width() <= width {
        return line;
    }
    let mut room = width.saturating_sub(1);
    let mut spans = Vec::with_capacity(line.spans.len() + 1);
    let mut last_style = line.style;
    for span in line.spans {
        if room == 0 {
            break;
        }
        let w = span.width();
        last_style = span.style;
        if w <= room {
            room -= w;
            spans.push(span);
        } else {
            let cut = crate::text::truncate_width(&span.content, room + 1);
            let cut = cut.trim_end_matches('…').to_string();
            room = 0;
            spans.push(Span::styled(cut, span.style));
        }
    }
    if width > 0 {
        spans.push(Span::styled("…", last_style));
    }
    Line::from(spans).style(line.style)
}

/// A centred rectangle of the given percentage of `area`.
pub fn centered(area: Rect, pct_w: u16, pct_h: u16) -> Rect {
    let w = (area.width * pct_w / 100).max(20).min(area.width);
    let h = (area.height * pct_h / 100).max(5).min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

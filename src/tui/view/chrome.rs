//! Screen chrome: the status bar, the popups (help, detail, demo picker)
//! and the "terminal too small" message. The help popup and the status
//! hints are generated from the keymap table.

use super::centered;
use crate::text::{display_width, sanitize_line, truncate_width};
use crate::tui::keymap::{Action, Context};
use crate::tui::state::{AppState, DemoEntry, MIN_HEIGHT, MIN_WIDTH, Mode, Pending, Popup};
use crate::tui::theme::{Role, Theme};
use crate::vocab::run::RunSources;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

pub fn too_small(frame: &mut Frame, area: Rect, theme: &Theme) {
    let msg = format!(
        "terminal too small (need {MIN_WIDTH}x{MIN_HEIGHT}, have {}x{})",
        area.width, area.height
    );
    let lines = vec![
        Line::styled(msg, theme.style(Role::Error)),
        Line::styled(
            "resize the window, or press q to quit",
            theme.style(Role::Muted),
        ),
    ];
    let h = lines.len() as u16;
    let y = area.y + area.height.saturating_sub(h) / 2;
    let rect = Rect {
        y,
        height: h.min(area.height),
        ..area
    };
    frame.render_widget(
        Paragraph::new(lines)
            .alignment(Alignment::Center)
            .wrap(Wrap { trim: true }),
        rect,
    );
}

fn fmt_elapsed(ms: u64) -> String {
    if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms / 1000) % 60)
    }
}

/// "waiting for space · 9 s": the engine waits at the step gate for the
/// key that runs the next node.
pub fn waiting_label(state: &AppState, wait_ms: u64) -> String {
    let key = state
        .keymap
        .keys_of(Action::StepNext, Context::Step)
        .unwrap_or_else(|| "the next step".to_string());
    format!("waiting for {key} · {} s", wait_ms / 1000)
}

/// Contexts whose hints apply right now.
pub fn active_contexts(state: &AppState) -> Vec<Context> {
    state.contexts()
}

pub fn status_bar(state: &AppState, area: Rect, buf: &mut Buffer) {
    let t = &state.theme;
    let bar = t.style(Role::StatusBar);
    let v = state.view();
    // What the run is doing and where a replay stands come first: a
    // notice or the labels never push them off the line.
    let mut left = format!(" {} ", state.mode.label());
    if let Some(id) = v.run_id {
        left.push_str(&format!("│ run {id} "));
    }
    // The live clock: a spinner and the running node's own work time, or
    // the wait for the person at the step gate, shown apart.
    if state.clock_running() {
        left.push_str(&format!("│ {} ", state.spinner()));
        if let Some(wait) = state.gate_wait_ms() {
            left.push_str(&format!("{} ", waiting_label(state, wait)));
        } else if let Some((node, ms)) = state.node_elapsed() {
            left.push_str(&format!("{node} {} ", super::tables::fmt_ms(ms)));
        }
    }
    if state.mode == Mode::Replay {
        left.push_str(&format!(
            "│ event {}/{} ",
            state.shown.cursor,
            state.shown.events.len()
        ));
    }
    left.push_str(&format!("│ {} ", fmt_elapsed(state.work_ms())));
    let mut labels = String::new();
    if let Some(sources) = sources_label(&v.sources) {
        labels.push_str(&format!("│ sources: {sources} "));
    }
    labels.push_str(&format!(
        "│ model: {} │ db: {} ",
        sanitize_line(&state.model_label),
        sanitize_line(&state.db_label)
    ));
    // Key hints are right-aligned and win over the labels when space runs
    // out; the labels are cut with an ellipsis.
    let mut right: Vec<Span> = Vec::new();
    let mut right_w = 0usize;
    for (key, desc) in state.keymap.hints(&active_contexts(state)) {
        let (k, d) = (format!(" {key}"), format!(" {desc}"));
        let w = display_width(&k) + display_width(&d);
        if right_w + w > area.width as usize / 2 {
            break;
        }
        right_w += w;
        right.push(Span::styled(k, t.style(Role::KeyHint)));
        right.push(Span::styled(d, bar));
    }
    right.push(Span::styled(" ", bar));
    right_w += 1;
    let room = (area.width as usize).saturating_sub(right_w);
    let mut spans = Vec::new();
    let left = truncate_width(&left, room);
    let mut used = display_width(&left);
    spans.push(Span::styled(left, bar));
    if let Some(n) = state.notice_text() {
        let n = truncate_width(
            &format!("│ {} ", sanitize_line(n)),
            room.saturating_sub(used),
        );
        used += display_width(&n);
        spans.push(Span::styled(n, t.style(Role::Error)));
    }
    let labels = truncate_width(&labels, room.saturating_sub(used));
    used += display_width(&labels);
    spans.push(Span::styled(labels, bar));
    spans.push(Span::styled(" ".repeat(room.saturating_sub(used)), bar));
    spans.extend(right);
    buf.set_style(area, bar);
    Paragraph::new(Line::from(spans))
        .style(bar)
        .render(area, buf);
}

/// The kinds of source the run in view read (`pack`, `Prometheus`,
/// `Loki`, `files`, `ES`, `MCP`), from the backends its tools recorded,
/// in that order; `None` when it recorded none.
pub fn sources_label(sources: &RunSources) -> Option<String> {
    const KNOWN: [(&str, &str); 7] = [
        ("pack", "pack"),
        ("prometheus", "Prometheus"),
        ("loki", "Loki"),
        ("files", "files"),
        ("elasticsearch", "ES"),
        ("opensearch", "ES"),
        ("mcp", "MCP"),
    ];
    let mut known = Vec::new();
    let mut other = Vec::new();
    for backend in sources.tools.values() {
        let kind = backend.split(':').next().unwrap_or_default().trim();
        match KNOWN.iter().position(|(k, _)| kind.eq_ignore_ascii_case(k)) {
            Some(i) => known.push(KNOWN[i].1),
            // Built-in tools read no outside source.
            None if kind.is_empty() || kind == "builtin" => {}
            None => other.push(sanitize_line(kind)),
        }
    }
    known.sort_by_key(|label| KNOWN.iter().position(|(_, l)| l == label));
    known.dedup();
    other.sort();
    other.dedup();
    let all: Vec<String> = known.into_iter().map(str::to_string).chain(other).collect();
    (!all.is_empty()).then(|| all.join(", "))
}

fn popup_block<'a>(title: impl Into<Line<'a>>, theme: &Theme) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_style(theme.style(Role::FocusedBorder))
        .title(title)
        .title_style(theme.style(Role::Title))
        .style(theme.style(Role::Popup))
}

/// What the glyphs on screen mean, shown under the keys in the help.
pub const LEGEND: &[(&str, &str)] = &[
    ("╔═╗", "the node running now (or waiting at the step gate)"),
    ("┏━┓ ●", "a node the run has visited; ×N: how many times"),
    ("┌─┐ ○", "a node the run has not reached"),
    ("━▶ N", "an edge the run took, N times"),
    ("─▶", "an edge the run has not taken"),
    ("┅ ⇢", "the edge the engine takes next (step mode)"),
    ("↺", "a retry: the node runs again"),
    ("▼ capped", "the ceiling lowered the model's verdict"),
    ("*", "a degraded run: the answer came from a fallback"),
    ("✗N", "N Gatekeeper bindings failed"),
    ("[Tab]", "the table shown in the tabbed area"),
    ("·", "runs list: a run of the same session as the one above"),
    ("◆", "runs list: the run marked to compare (m)"),
    ("…", "cut to fit; identifiers keep both ends"),
];

/// Where the help popup is drawn: most of the screen, at most 100 wide.
pub fn help_rect(area: Rect) -> Rect {
    let w = area.width.saturating_sub(4).min(100);
    let h = area.height.saturating_sub(2);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// The help's lines: every key binding from the keymap, then the legend.
pub fn help_lines(state: &AppState) -> Vec<Line<'static>> {
    let t = &state.theme;
    let mut lines = vec![Line::styled(
        format!("{:<22} {:<36} {}", "keys", "action", "where"),
        t.style(Role::Title),
    )];
    for b in &state.keymap.bindings {
        let keys = b
            .keys
            .iter()
            .map(|k| k.to_string())
            .collect::<Vec<_>>()
            .join(" / ");
        lines.push(Line::from(vec![
            Span::styled(format!("{keys:<22} "), t.style(Role::KeyHint)),
            Span::styled(format!("{:<36} ", b.description), t.style(Role::Popup)),
            Span::styled(b.context.label(), t.style(Role::Muted)),
        ]));
    }
    lines.push(Line::from(""));
    lines.push(Line::styled("glyphs", t.style(Role::Title)));
    for (glyph, meaning) in LEGEND {
        lines.push(Line::from(vec![
            Span::styled(format!("{glyph:<10} "), t.style(Role::KeyHint)),
            Span::styled(*meaning, t.style(Role::Popup)),
        ]));
    }
    lines
}

/// Highest useful scroll of a popup showing `lines` in `rect` (borders
/// included), wrapping at its inner width.
pub fn max_scroll(lines: &[Line], rect: Rect) -> u16 {
    let inner_w = rect.width.saturating_sub(2);
    super::panels::wrapped_height(lines, inner_w).saturating_sub(rect.height.saturating_sub(2))
}

pub fn help(state: &AppState, scroll: u16, area: Rect, buf: &mut Buffer) {
    let t = &state.theme;
    let rect = help_rect(area);
    Clear.render(rect, buf);
    let lines = help_lines(state);
    let scroll = scroll.min(max_scroll(&lines, rect));
    Paragraph::new(lines)
        .block(popup_block(
            " Keys and glyphs · j/k scroll · esc closes ",
            t,
        ))
        .style(t.style(Role::Popup))
        .wrap(Wrap { trim: false })
        .scroll((scroll, 0))
        .render(rect, buf);
}

/// Where the yes/no question is drawn: as wide as its prompt.
pub fn confirm_rect(state: &AppState, pending: &Pending, area: Rect) -> Rect {
    let prompt = pending.prompt(state.view().run_id);
    let w = (display_width(&prompt) as u16 + 4).clamp(30.min(area.width), area.width);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + area.height.saturating_sub(5) / 2,
        width: w,
        height: 5.min(area.height),
    }
}

/// Where a popup is drawn on a screen of `area`.
pub fn popup_rect(state: &AppState, popup: &Popup, area: Rect) -> Rect {
    match popup {
        Popup::Help { .. } => help_rect(area),
        Popup::Confirm(pending) => confirm_rect(state, pending, area),
        Popup::Detail { .. } => detail_rect(area),
        Popup::DemoPicker { .. } => demo_picker_rect(area),
    }
}

/// The yes/no question before stopping a live run.
pub fn confirm(state: &AppState, pending: &Pending, area: Rect, buf: &mut Buffer) {
    let t = &state.theme;
    let prompt = pending.prompt(state.view().run_id);
    let rect = confirm_rect(state, pending, area);
    Clear.render(rect, buf);
    let keys: Vec<Span> = state
        .keymap
        .hints(&[Context::Confirm])
        .into_iter()
        .flat_map(|(k, d)| {
            [
                Span::styled(format!(" {k}"), t.style(Role::KeyHint)),
                Span::styled(format!(" {d} "), t.style(Role::Popup)),
            ]
        })
        .collect();
    Paragraph::new(vec![
        Line::styled(prompt, t.style(Role::Text)),
        Line::from(""),
        Line::from(keys),
    ])
    .alignment(Alignment::Center)
    .block(popup_block(" Stop the run? ", t))
    .render(rect, buf);
}

/// Where the detail popup is drawn.
pub fn detail_rect(area: Rect) -> Rect {
    centered(area, 90, 85)
}

pub fn detail(
    title: &str,
    lines: &[Line<'static>],
    scroll: u16,
    t: &Theme,
    area: Rect,
    buf: &mut Buffer,
) {
    let rect = detail_rect(area);
    Clear.render(rect, buf);
    let title = format!(" {} · j/k scroll · esc closes ", sanitize_line(title));
    Paragraph::new(lines.to_vec())
        .block(popup_block(title, t))
        .wrap(Wrap { trim: false })
        .scroll((scroll.min(max_scroll(lines, rect)), 0))
        .render(rect, buf);
}

/// Where the demo picker is drawn.
pub fn demo_picker_rect(area: Rect) -> Rect {
    centered(area, 80, 80)
}

/// Each scenario takes two lines: its name, then its description or
/// why it did not load.
const PICKER_ENTRY_LINES: usize = 2;

/// The first scenario the picker drawn on a screen of `area` shows: from
/// `top`, moved only as far as it takes to keep `selected` in sight.
pub fn picker_top(entries: usize, selected: usize, top: usize, area: Rect) -> usize {
    let inner = demo_picker_rect(area).inner(ratatui::layout::Margin::new(1, 1));
    let fit = (usize::from(inner.height) / PICKER_ENTRY_LINES).max(1);
    super::tables::scroll::window(selected, top, entries, fit).0
}

/// The scenario the picker drawn on a screen of `area` shows at row `y`.
pub fn picker_entry_at(
    entries: usize,
    (selected, top): (usize, usize),
    area: Rect,
    y: u16,
) -> Option<usize> {
    let inner = demo_picker_rect(area).inner(ratatui::layout::Margin::new(1, 1));
    if !(inner.top()..inner.bottom()).contains(&y) {
        return None;
    }
    let first = picker_top(entries, selected, top, area);
    let k = first + usize::from(y - inner.y) / PICKER_ENTRY_LINES;
    (k < entries).then_some(k)
}

pub fn demo_picker(
    entries: &[DemoEntry],
    (selected, top): (usize, usize),
    loading: bool,
    t: &Theme,
    area: Rect,
    buf: &mut Buffer,
) {
    let rect = demo_picker_rect(area);
    Clear.render(rect, buf);
    let block = popup_block(" Demo scenarios · enter runs in step mode · esc closes ", t);
    let inner = block.inner(rect);
    block.render(rect, buf);
    if entries.is_empty() {
        let msg = if loading {
            "loading scenarios…"
        } else {
            "no scenarios found"
        };
        Paragraph::new(Span::styled(msg, t.style(Role::Muted))).render(inner, buf);
        return;
    }
    let mut lines: Vec<Line> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let style = if i == selected {
            t.style(Role::Selected)
        } else {
            t.style(Role::Title)
        };
        lines.push(Line::styled(
            format!(
                "{} {}",
                if i == selected { "▶" } else { " " },
                sanitize_line(&e.name)
            ),
            style,
        ));
        match &e.error {
            Some(err) => lines.push(Line::styled(
                format!("    {}", sanitize_line(err)),
                t.style(Role::Error),
            )),
            None => lines.push(Line::styled(
                format!("    {}", sanitize_line(&e.description)),
                t.style(Role::Muted),
            )),
        }
    }
    let first = picker_top(entries.len(), selected, top, area);
    let scroll = u16::try_from(first * PICKER_ENTRY_LINES).unwrap_or(u16::MAX);
    let lines: Vec<Line> = lines
        .into_iter()
        .map(|l| super::fit_line(l, inner.width))
        .collect();
    Paragraph::new(lines).scroll((scroll, 0)).render(inner, buf);
}

//! The four table panes: runs, transitions, tool invocations and
//! Gatekeeper bindings (the claims' checked ones, and apart from them the
//! unverified ones of hypotheses and actions: `bindings`). Only the rows that fit are built, so a run
//! with hundreds of invocations renders as fast as a short one. Every
//! untrusted cell is sanitised.
//!
//! Columns follow their content (`super::columns`): ids, tool and rule
//! names, raw paths, statuses and reason codes get the width of their
//! widest value, and free text (questions, queries, claims, excerpts)
//! takes the rest. Only when a table is too narrow for its identifiers
//! are they cut, in the middle, so both ends stay readable.

pub mod bindings;
pub mod scroll;

pub use scroll::{first_shown, row_at};

use super::columns::{self, Col};
use super::{pane_block, verdict_span};
use crate::text::{sanitize_line, truncate_middle, truncate_width};
use crate::tui::state::{AppState, Pane};
use crate::tui::theme::Role;
use crate::vocab::run::{RunStatus, RunSummary};
use crate::vocab::tool::{EvidenceStatus, ToolInvocation};
use crate::vocab::usage::cost_text;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, Widget};

/// Space between columns.
const SPACING: u16 = 1;

/// Untrusted text as a one-line cell, cut to a sane length (the column
/// clips it further).
/// Untrusted free text in a column `width` wide: cut with "…" where the
/// column ends (the table would clip it without a mark).
fn cell_text(s: &str, width: u16) -> String {
    truncate_width(&sanitize_line(s), width.into())
}

/// An untrusted identifier in a column `width` wide: whole when it fits,
/// else both ends kept.
fn id_cell(s: &str, width: u16) -> String {
    truncate_middle(&sanitize_line(s), width.into())
}

/// The table area's tabs in order.
pub const TABS: [Pane; 5] = [
    Pane::Runs,
    Pane::Transitions,
    Pane::Tools,
    Pane::Bindings,
    Pane::Timeline,
];

fn short_title(p: Pane) -> &'static str {
    match p {
        Pane::Tools => "Tools",
        Pane::Bindings => "Bindings",
        other => other.title(),
    }
}

fn tab_title(state: &AppState, pane: Pane, tabbed: bool, width: u16) -> Line<'static> {
    let t = &state.theme;
    let count = |p: Pane| match p {
        Pane::Runs => state.filtered_runs().len(),
        Pane::Transitions => state.view().transitions.len(),
        Pane::Tools => state.view().invocations.len(),
        Pane::Bindings => state
            .view()
            .gatekeeper
            .as_ref()
            .map_or(0, |g| g.checked_bindings.len()),
        Pane::Timeline => state
            .timeline
            .timeline(state.shown.generation, state.view())
            .map_or(0, |t| t.rows.len()),
        _ => 0,
    };
    // The unverified bindings are counted apart from the claims' own.
    let unverified = state
        .view()
        .gatekeeper
        .as_ref()
        .map(|g| bindings::passed(&g.unverified_bindings))
        .filter(|(_, total)| *total > 0);
    let label = |p: Pane, short: bool| {
        let title = if short { short_title(p) } else { p.title() };
        let mut s = format!("{title} ({})", count(p));
        // The stored history beyond the pages read so far is counted.
        if p == Pane::Runs
            && let Some(total) = crate::tui::update::stored_total(state)
            && total > count(p) as u64
        {
            s = format!("{title} ({} of {total})", count(p));
        }
        if p == Pane::Bindings && state.view().failed_bindings() > 0 {
            s.push_str(&format!(" ✗{}", state.view().failed_bindings()));
        }
        if p == Pane::Bindings
            && let Some((pass, total)) = unverified
        {
            s.push_str(&format!(" +{total}"));
            if !short {
                s.push_str(" unverified");
            }
            if pass < total {
                s.push_str(&format!(" ✗{}", total - pass));
            }
        }
        if p == Pane::Runs && !state.filter.is_empty() {
            s.push_str(&format!(" /{}", sanitize_line(&state.filter)));
        }
        s
    };
    if !tabbed {
        return Line::from(format!(" {} ", label(pane, false)));
    }
    // The active tab is bracketed and drawn in the selection style, so it
    // reads as active without colour too.
    let full: usize = TABS
        .iter()
        .map(|p| crate::text::display_width(&label(*p, false)) + 3)
        .sum();
    let short = full + 2 > usize::from(width.saturating_sub(2));
    let mut spans = vec![Span::raw(" ")];
    for p in TABS {
        if p == pane {
            spans.push(Span::styled(
                format!("[{}]", label(p, short)),
                t.style(Role::Selected),
            ));
        } else {
            spans.push(Span::styled(
                format!(" {} ", label(p, short)),
                t.style(Role::Muted),
            ));
        }
        spans.push(Span::raw(" "));
    }
    Line::from(spans)
}

/// The tab drawn at column `x` of the title row of the tabbed table area
/// `area`, whose active tab is `active`.
pub fn tab_at(state: &AppState, active: Pane, area: Rect, x: u16) -> Option<Pane> {
    let title = tab_title(state, active, true, area.width);
    // The title starts after the block's corner; spans alternate a
    // separator and a tab, in `TABS` order.
    let mut left = area.x.saturating_add(1);
    for (i, span) in title.spans.iter().enumerate() {
        let right = left.saturating_add(span.width() as u16);
        if (left..right).contains(&x) {
            return (i % 2 == 1).then(|| TABS[i / 2]);
        }
        left = right;
    }
    None
}

pub fn render_table(state: &AppState, pane: Pane, area: Rect, tabbed: bool, buf: &mut Buffer) {
    let t = &state.theme;
    let block = pane_block(
        tab_title(state, pane, tabbed, area.width),
        state.focus == pane,
        t,
    );
    let inner = block.inner(area);
    block.render(area, buf);
    if pane == Pane::Timeline {
        super::timeline::render(state, inner, buf);
        return;
    }
    if state.filter_editing && pane == Pane::Runs && inner.height > 0 {
        let line = Line::from(vec![
            Span::styled("filter: ", t.style(Role::KeyHint)),
            Span::styled(sanitize_line(&state.filter), t.style(Role::Text)),
            Span::styled("▏", t.style(Role::FocusedBorder)),
        ]);
        Paragraph::new(line).render(Rect { height: 1, ..inner }, buf);
    }
    let editing = state.filter_editing && pane == Pane::Runs;
    let inner = if editing {
        Rect {
            y: inner.y.saturating_add(1),
            height: inner.height.saturating_sub(1),
            ..inner
        }
    } else {
        inner
    };
    let rows_h = usize::from(scroll::rows_area(state, pane, area).height);
    let focused = state.focus == pane;
    let parts = match pane {
        Pane::Runs => runs(state, rows_h, inner.width),
        Pane::Transitions => transitions(state, rows_h, inner.width),
        Pane::Tools => tools(state, rows_h, inner.width),
        _ => bindings::bindings(state, rows_h, inner.width),
    };
    if parts.rows.is_empty() {
        let msg = match pane {
            Pane::Runs => state
                .runs_error
                .as_ref()
                .map(|e| format!("runs unavailable: {}", sanitize_line(e)))
                .unwrap_or_else(|| "no runs yet".into()),
            Pane::Transitions => "no transitions yet".into(),
            Pane::Tools => "no tool invocations yet".into(),
            _ => "no bindings checked yet".into(),
        };
        if inner.height > 0 {
            Paragraph::new(Span::styled(msg, t.style(Role::Muted)))
                .render(Rect { height: 1, ..inner }, buf);
        }
        return;
    }
    let rows: Vec<Row> = parts
        .rows
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            if focused && Some(i) == parts.selected {
                r.style(t.style(Role::Selected))
            } else {
                r
            }
        })
        .collect();
    let header = columns::shown(&parts.widths, parts.header);
    let widths: Vec<Constraint> = parts
        .widths
        .iter()
        .filter(|w| **w > 0)
        .map(|w| Constraint::Length(*w))
        .collect();
    Table::new(rows, widths)
        .header(Row::new(header.into_iter().map(Cell::from)).style(t.style(Role::Title)))
        .column_spacing(SPACING)
        .style(t.style(Role::Text))
        .render(inner, buf);
    if let Some((i, line)) = parts.heading {
        // Below the header row, across every column.
        let y = inner.y.saturating_add(1).saturating_add(i as u16);
        if y < inner.bottom() {
            Paragraph::new(line).render(
                Rect {
                    y,
                    height: 1,
                    ..inner
                },
                buf,
            );
        }
    }
}

struct TableParts {
    header: Vec<&'static str>,
    widths: Vec<u16>,
    rows: Vec<Row<'static>>,
    /// Index of the selected row among `rows`.
    selected: Option<usize>,
    /// A group heading drawn across the table over the empty row of this
    /// index among `rows`.
    heading: Option<(usize, Line<'static>)>,
}

/// A run's status as listed: a fallback answer reads DEGRADED.
pub fn run_status(r: &RunSummary) -> (&'static str, Role) {
    match (r.status, r.degraded) {
        (RunStatus::Success, true) => ("DEGRADED", Role::Degraded),
        (RunStatus::Failed | RunStatus::Cancelled, _) => (r.status.as_str(), Role::Error),
        (s, _) => (s.as_str(), Role::Text),
    }
}

/// `2026-07-08T23:05:28.123Z` as `07-08 23:05`; anything else as given.
fn short_time(created_at: &str) -> String {
    match (created_at.get(5..10), created_at.get(11..16)) {
        (Some(day), Some(hm)) if created_at.as_bytes().get(10) == Some(&b'T') => {
            format!("{day} {hm}")
        }
        _ => sanitize_line(created_at),
    }
}

/// A listed time in a column `width` wide: `07-08 23:05` whole, else its
/// time of day (what tells runs of one incident apart), else both ends.
fn time_cell(time: &str, width: u16) -> String {
    let w = usize::from(width);
    if crate::text::display_width(time) <= w {
        return time.to_string();
    }
    match time.rsplit_once(' ') {
        Some((_, hm)) if hm.len() <= w => hm.to_string(),
        _ => truncate_middle(time, w),
    }
}

/// Milliseconds as `850ms`, `12.3s` or `4m05s`.
pub fn fmt_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms / 1000) % 60)
    }
}

fn runs(state: &AppState, h: usize, width: u16) -> TableParts {
    let t = &state.theme;
    let list = state.filtered_runs();
    // Only the rows shown are formatted: the list can hold 10,000 runs.
    // Times and durations have bounded widths; sessions are measured on
    // the rows shown.
    let win = scroll::shown(state, Pane::Runs, h);
    let (start, end) = (win.start, win.end);
    let shown = list.get(start..end).unwrap_or_default();
    let times: Vec<String> = shown.iter().map(|r| short_time(&r.created_at)).collect();
    // The cost column only when a shown run had a priced model: the
    // offline model's runs have no cost to show.
    let costs: Option<Vec<String>> = shown.iter().any(|r| r.cost_usd.is_some()).then(|| {
        shown
            .iter()
            .map(|r| r.cost_usd.map(cost_text).unwrap_or_default())
            .collect()
    });
    let mut cols = vec![
        Col::fit(
            "run",
            columns::widest_number(list.iter().map(|r| r.run_id))
                + usize::from(state.compare_mark.is_some()),
            3,
        ),
        Col::fit("time", columns::widest(times.iter().map(String::as_str)), 5).droppable(2),
        // Every status whole: DEGRADED and CANCELLED included.
        Col::fit("status", 9, 9),
        Col::fit("verdict", 11, 11),
        // `850ms`, `12.3s`, `4m05s`: at most six columns.
        Col::fit("took", 6, 6).droppable(3),
        Col::fit(
            "tokens",
            columns::widest_number(shown.iter().map(|r| r.tokens as i64)),
            // Numbers are never cut: the column goes instead.
            20,
        )
        .droppable(4),
        Col::fit(
            "session",
            columns::widest(shown.iter().map(|r| r.session_id.as_str())),
            7,
        )
        .droppable(1),
        Col::fill(12, 1),
    ];
    let mut header = vec![
        "run", "time", "status", "verdict", "took", "tokens", "session", "question",
    ];
    if let Some(costs) = &costs {
        // Amounts are never cut either; the column goes first.
        cols.insert(
            6,
            Col::fit(
                "cost",
                columns::widest(costs.iter().map(String::as_str)),
                20,
            )
            .droppable(5),
        );
        header.insert(6, "cost");
    }
    let session_col = header.iter().position(|h| *h == "session").unwrap_or(6);
    let widths = columns::fit(width, SPACING, &cols);
    let rows = shown
        .iter()
        .zip(&times)
        .enumerate()
        .map(|(i, (r, time))| {
            // Runs are grouped by session: a run of the session above
            // says so instead of repeating its id.
            let above = (start + i)
                .checked_sub(1)
                .and_then(|j| list.get(j))
                .map(|a| a.session_id.as_str());
            let session = if above == Some(r.session_id.as_str()) {
                Span::styled("  ·", t.style(Role::Muted))
            } else {
                Span::raw(id_cell(&r.session_id, widths[session_col]))
            };
            let mut vcell = verdict_span(r.effective_verdict, t);
            if r.degraded {
                vcell = Span::styled(format!("{}*", vcell.content), t.style(Role::Degraded));
            }
            let (status, role) = run_status(r);
            let id = if state.compare_mark == Some(r.run_id) {
                format!("{}◆", r.run_id)
            } else {
                r.run_id.to_string()
            };
            let mut cells = vec![
                Cell::from(id),
                Cell::from(time_cell(time, widths[1])),
                Cell::from(Span::styled(id_cell(status, widths[2]), t.style(role))),
                Cell::from(vcell),
                Cell::from(r.duration_ms.map(fmt_ms).unwrap_or_default()),
                Cell::from(if r.tokens > 0 {
                    r.tokens.to_string()
                } else {
                    String::new()
                }),
                Cell::from(session),
                Cell::from(cell_text(&r.question, widths.last().copied().unwrap_or(0))),
            ];
            if let Some(costs) = &costs {
                cells.insert(6, Cell::from(costs[i].clone()));
            }
            Row::new(columns::shown(&widths, cells))
        })
        .collect();
    TableParts {
        header,
        widths,
        rows,
        selected: win.selected,
        heading: None,
    }
}

fn transitions(state: &AppState, h: usize, width: u16) -> TableParts {
    let t = &state.theme;
    let list = &state.view().transitions;
    let live_node = state.node_elapsed().map(|(n, _)| n.as_str());
    let node_w = columns::widest(
        list.iter()
            .flat_map(|r| [r.from.as_str(), r.to.as_str()])
            .chain(live_node),
    );
    let took: Vec<String> = list.iter().map(|r| fmt_ms(r.duration_ms)).collect();
    // The running node's clock is as wide as its unit needs ("880ms"),
    // never cut to "880m".
    let live_took = state.node_elapsed().map(|(_, ms)| fmt_ms(ms));
    let widths = columns::fit(
        width,
        SPACING,
        &[
            Col::fit("#", (list.len() + 1).to_string().len(), 1),
            Col::fit("from", node_w, 8),
            Col::fit("to", node_w, 8),
            Col::fit(
                "reason_code",
                columns::widest(list.iter().map(|r| r.reason_code.as_str())).max(7),
                12,
            ),
            Col::fit("att", 1, 3),
            Col::fit(
                "outcome",
                columns::widest(list.iter().map(|r| r.outcome.as_str())),
                9,
            ),
            Col::fit(
                "took",
                columns::widest(took.iter().chain(&live_took).map(String::as_str)).max(5),
                20,
            )
            .droppable(1),
            Col::fill(6, 1),
        ],
    );
    // The node running now gets a row of its own, with its clock.
    let live = state.node_elapsed();
    let win = scroll::shown(state, Pane::Transitions, h);
    let (start, end) = (win.start, win.end);
    let mut rows: Vec<Row<'static>> = list[start..end.min(list.len())]
        .iter()
        .enumerate()
        .map(|(i, tr)| {
            let failed = matches!(tr.to, crate::vocab::graph::NodeId::Fallback)
                || tr.outcome.is_technical_failure();
            Row::new(columns::shown(
                &widths,
                vec![
                    Cell::from((start + i + 1).to_string()),
                    Cell::from(id_cell(tr.from.as_str(), widths[1])),
                    Cell::from(id_cell(tr.to.as_str(), widths[2])),
                    Cell::from(Span::styled(
                        id_cell(tr.reason_code.as_str(), widths[3]),
                        t.style(if failed { Role::Error } else { Role::EdgeTaken }),
                    )),
                    Cell::from(tr.attempt.to_string()),
                    Cell::from(id_cell(tr.outcome.as_str(), widths[5])),
                    Cell::from(took.get(start + i).cloned().unwrap_or_default()),
                    Cell::from(Span::styled(
                        cell_text(&tr.detail, widths[7]),
                        t.style(Role::Muted),
                    )),
                ],
            ))
        })
        .collect();
    if let Some((node, ms)) = live.filter(|_| end > list.len()) {
        rows.push(
            Row::new(columns::shown(
                &widths,
                vec![
                    Cell::from("▶"),
                    Cell::from(id_cell(node.as_str(), widths[1])),
                    Cell::from("…"),
                    Cell::from(if state.gate_wait_ms().is_some() {
                        "waiting"
                    } else {
                        "running"
                    }),
                    Cell::from(state.view().visited(node).to_string()),
                    Cell::from(""),
                    Cell::from(fmt_ms(ms)),
                    Cell::from(""),
                ],
            ))
            .style(t.style(Role::NodeCurrent)),
        );
    }
    TableParts {
        header: vec![
            "#",
            "from",
            "to",
            "reason_code",
            "att",
            "outcome",
            "took",
            "detail",
        ],
        widths,
        rows,
        selected: win.selected,
        heading: None,
    }
}

pub fn evidence_role(s: EvidenceStatus) -> Role {
    match s {
        EvidenceStatus::Supported => Role::EvidenceSupported,
        EvidenceStatus::NoEvidence => Role::EvidenceNone,
        EvidenceStatus::Deduped => Role::EvidenceDeduped,
        EvidenceStatus::Failed => Role::EvidenceFailed,
    }
}

/// An invocation's evidence status as listed.
fn evidence_label(inv: &ToolInvocation) -> String {
    let rd = &inv.retrieval_details;
    let mut status = rd.evidence_status.as_str().to_string();
    if rd.blocked {
        status.push_str(" (blocked)");
    }
    status
}

fn tools(state: &AppState, h: usize, width: u16) -> TableParts {
    let t = &state.theme;
    let list = &state.view().invocations;
    let widths = columns::fit(
        width,
        SPACING,
        &[
            Col::fit("id", columns::widest_number(list.iter().map(|i| i.id)), 4),
            Col::fit(
                "tool",
                columns::widest(list.iter().map(|i| i.tool_name.as_str())),
                10,
            ),
            Col::fill(12, 1),
            Col::fit(
                "evidence",
                list.iter()
                    .map(|i| crate::text::display_width(&evidence_label(i)))
                    .max()
                    .unwrap_or(0),
                9,
            ),
            Col::fit(
                "refs",
                columns::widest_number(
                    list.iter()
                        .map(|i| i.retrieval_details.evidence_refs.len() as i64),
                ),
                20,
            )
            .droppable(2),
            Col::fit(
                "took",
                list.iter()
                    .map(|i| fmt_ms(i.duration_ms).len())
                    .max()
                    .unwrap_or(0),
                20,
            )
            .droppable(1),
        ],
    );
    let win = scroll::shown(state, Pane::Tools, h);
    let (start, end) = (win.start, win.end);
    let rows = list[start..end]
        .iter()
        .map(|inv| {
            let rd = &inv.retrieval_details;
            Row::new(columns::shown(
                &widths,
                vec![
                    Cell::from(id_cell(&inv.id.to_string(), widths[0])),
                    Cell::from(id_cell(&inv.tool_name, widths[1])),
                    Cell::from(cell_text(&inv.query_summary(), widths[2])),
                    Cell::from(Span::styled(
                        id_cell(&evidence_label(inv), widths[3]),
                        t.style(evidence_role(rd.evidence_status)),
                    )),
                    Cell::from(rd.evidence_refs.len().to_string()),
                    Cell::from(fmt_ms(inv.duration_ms)),
                ],
            ))
        })
        .collect();
    TableParts {
        header: vec!["id", "tool", "query", "evidence", "refs", "took"],
        widths,
        rows,
        selected: win.selected,
        heading: None,
    }
}

//! The four table panes: runs, transitions, tool invocations and
//! Gatekeeper checked bindings. Only the rows that fit are built, so a run
//! with hundreds of invocations renders as fast as a short one. Every
//! untrusted cell is sanitised. Identifiers in fixed-width columns (ids,
//! tool and rule names, raw paths, statuses) are cut in the middle so both
//! ends stay readable; free text is clipped by its column.

use super::{pane_block, verdict_span};
use crate::text::{sanitize_line, truncate_middle, truncate_width};
use crate::tui::state::{AppState, Pane};
use crate::tui::theme::Role;
use crate::vocab::contracts::BindingStatus;
use crate::vocab::run::RunStatus;
use crate::vocab::tool::EvidenceStatus;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, Widget};

/// Rows [start, end) to draw so that `selected` stays visible.
pub fn window(selected: usize, len: usize, height: usize) -> (usize, usize) {
    if height == 0 || len == 0 {
        return (0, 0);
    }
    let selected = selected.min(len - 1);
    let start = (selected + 1).saturating_sub(height);
    (start, (start + height).min(len))
}

/// Untrusted text as a one-line cell, cut to a sane length (the column
/// clips it further).
fn cell_text(s: &str) -> String {
    truncate_width(&sanitize_line(s), 400)
}

/// An untrusted identifier in a column `width` wide.
fn id_cell(s: &str, width: u16) -> String {
    truncate_middle(&sanitize_line(s), width.into())
}

fn tab_title(state: &AppState, pane: Pane, tabbed: bool) -> Line<'static> {
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
        _ => 0,
    };
    let label = |p: Pane| {
        let mut s = format!(" {} ({})", p.title(), count(p));
        if p == Pane::Bindings && state.view().failed_bindings() > 0 {
            s.push_str(&format!(" ✗{}", state.view().failed_bindings()));
        }
        if p == Pane::Runs && !state.filter.is_empty() {
            s.push_str(&format!(" /{}", sanitize_line(&state.filter)));
        }
        s.push(' ');
        s
    };
    if !tabbed {
        return Line::from(label(pane));
    }
    let mut spans = Vec::new();
    for p in [Pane::Runs, Pane::Transitions, Pane::Tools, Pane::Bindings] {
        let style = if p == pane {
            t.style(Role::Title)
        } else {
            t.style(Role::Muted)
        };
        spans.push(Span::styled(label(p), style));
    }
    Line::from(spans)
}

pub fn render_table(state: &AppState, pane: Pane, area: Rect, tabbed: bool, buf: &mut Buffer) {
    let t = &state.theme;
    let block = pane_block(tab_title(state, pane, tabbed), state.focus == pane, t);
    let inner = block.inner(area);
    block.render(area, buf);
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
    let rows_h = (inner.height as usize).saturating_sub(1);
    let focused = state.focus == pane;
    let (header, widths, rows, selected) = match pane {
        Pane::Runs => runs(state, rows_h),
        Pane::Transitions => transitions(state, rows_h),
        Pane::Tools => tools(state, rows_h),
        _ => bindings(state, rows_h, inner.width),
    };
    if rows.is_empty() {
        let msg = match pane {
            Pane::Runs => state
                .runs_error
                .as_ref()
                .map(|e| format!("runs unavailable: {}", sanitize_line(e)))
                .unwrap_or_else(|| "no runs yet".into()),
            _ => "nothing yet".into(),
        };
        if inner.height > 0 {
            Paragraph::new(Span::styled(msg, t.style(Role::Muted)))
                .render(Rect { height: 1, ..inner }, buf);
        }
        return;
    }
    let rows: Vec<Row> = rows
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            if focused && Some(i) == selected {
                r.style(t.style(Role::Selected))
            } else {
                r
            }
        })
        .collect();
    Table::new(rows, widths)
        .header(Row::new(header.iter().copied().map(Cell::from)).style(t.style(Role::Title)))
        .column_spacing(1)
        .style(t.style(Role::Text))
        .render(inner, buf);
}

type TableParts = (
    Vec<&'static str>,
    Vec<Constraint>,
    Vec<Row<'static>>,
    Option<usize>,
);

/// Wide enough for every run status and DEGRADED: statuses are never cut.
const STATUS_W: u16 = 9;
const SESSION_W: u16 = 6;

fn runs(state: &AppState, h: usize) -> TableParts {
    let t = &state.theme;
    let list = state.filtered_runs();
    let (start, end) = window(state.sel.runs, list.len(), h);
    let rows = list[start..end]
        .iter()
        .map(|r| {
            let verdict = r.effective_verdict;
            let mut vcell = verdict_span(verdict, t);
            if r.degraded {
                vcell = Span::styled(format!("{}*", vcell.content), t.style(Role::Degraded));
            }
            let (status, role) = match (r.status, r.degraded) {
                (RunStatus::Success, true) => ("DEGRADED", Role::Degraded),
                (RunStatus::Failed | RunStatus::Cancelled, _) => (r.status.as_str(), Role::Error),
                (s, _) => (s.as_str(), Role::Text),
            };
            Row::new(vec![
                Cell::from(r.run_id.to_string()),
                Cell::from(Span::styled(id_cell(status, STATUS_W), t.style(role))),
                Cell::from(vcell),
                Cell::from(id_cell(&r.session_id, SESSION_W)),
                Cell::from(cell_text(&r.question)),
            ])
        })
        .collect();
    (
        vec!["run", "status", "verdict", "session", "question"],
        vec![
            Constraint::Length(5),
            Constraint::Length(STATUS_W),
            Constraint::Length(11),
            Constraint::Length(SESSION_W),
            Constraint::Fill(1),
        ],
        rows,
        Some(state.sel.runs.min(list.len().saturating_sub(1)) - start),
    )
}

/// RETRYABLE_FAILED whole; the longer NON_RETRYABLE_FAILED keeps both ends.
const OUTCOME_W: u16 = 16;

fn transitions(state: &AppState, h: usize) -> TableParts {
    let t = &state.theme;
    let list = &state.view().transitions;
    let (start, end) = window(state.sel.transitions, list.len(), h);
    let rows = list[start..end]
        .iter()
        .enumerate()
        .map(|(i, tr)| {
            let failed = matches!(tr.to, crate::vocab::graph::NodeId::Fallback)
                || tr.outcome.is_technical_failure();
            Row::new(vec![
                Cell::from((start + i + 1).to_string()),
                Cell::from(tr.from.as_str()),
                Cell::from(tr.to.as_str()),
                Cell::from(Span::styled(
                    cell_text(tr.reason_code.as_str()),
                    t.style(if failed { Role::Error } else { Role::EdgeTaken }),
                )),
                Cell::from(tr.attempt.to_string()),
                Cell::from(id_cell(tr.outcome.as_str(), OUTCOME_W)),
            ])
        })
        .collect();
    (
        vec!["#", "from", "to", "reason_code", "att", "outcome"],
        vec![
            Constraint::Length(3),
            Constraint::Length(14),
            Constraint::Length(14),
            Constraint::Min(16),
            Constraint::Length(3),
            Constraint::Length(OUTCOME_W),
        ],
        rows,
        Some(state.sel.transitions.min(list.len().saturating_sub(1)) - start),
    )
}

pub fn evidence_role(s: EvidenceStatus) -> Role {
    match s {
        EvidenceStatus::Supported => Role::EvidenceSupported,
        EvidenceStatus::NoEvidence => Role::EvidenceNone,
        EvidenceStatus::Deduped => Role::EvidenceDeduped,
        EvidenceStatus::Failed => Role::EvidenceFailed,
    }
}

const TOOL_W: u16 = 16;
const EVIDENCE_W: u16 = 12;

fn tools(state: &AppState, h: usize) -> TableParts {
    let t = &state.theme;
    let list = &state.view().invocations;
    let (start, end) = window(state.sel.tools, list.len(), h);
    let rows = list[start..end]
        .iter()
        .map(|inv| {
            let rd = &inv.retrieval_details;
            let mut status = rd.evidence_status.as_str().to_string();
            if rd.blocked {
                status.push_str(" (blocked)");
            }
            Row::new(vec![
                Cell::from(inv.id.to_string()),
                Cell::from(id_cell(&inv.tool_name, TOOL_W)),
                Cell::from(cell_text(&inv.query_summary())),
                Cell::from(Span::styled(
                    id_cell(&status, EVIDENCE_W),
                    t.style(evidence_role(rd.evidence_status)),
                )),
                Cell::from(rd.evidence_refs.len().to_string()),
                Cell::from(format!("{}ms", inv.duration_ms)),
            ])
        })
        .collect();
    (
        vec!["id", "tool", "query", "evidence", "refs", "time"],
        vec![
            Constraint::Length(5),
            Constraint::Length(TOOL_W),
            Constraint::Min(12),
            Constraint::Length(EVIDENCE_W),
            Constraint::Length(4),
            Constraint::Length(7),
        ],
        rows,
        Some(state.sel.tools.min(list.len().saturating_sub(1)) - start),
    )
}

fn bindings(state: &AppState, h: usize, width: u16) -> TableParts {
    let t = &state.theme;
    let empty = Vec::new();
    let list = state
        .view()
        .gatekeeper
        .as_ref()
        .map_or(&empty, |g| &g.checked_bindings);
    let (start, end) = window(state.sel.bindings, list.len(), h);
    // Narrow screens give the fixed columns less so the claim and the
    // matched text keep readable widths.
    let narrow = width < 120;
    let (tool_w, inv_w, path_w, rule_w) = if narrow {
        (12, 4, 11, 16)
    } else {
        (14, 5, 18, 18)
    };
    let rows = list[start..end]
        .iter()
        .map(|b| {
            let pass = b.status == BindingStatus::Pass;
            let claim = if b.claim_text.is_empty() {
                b.claim_id.clone()
            } else {
                format!("{}: {}", b.claim_id, b.claim_text)
            };
            let matched = if pass {
                &b.matched_text
            } else {
                &b.evidence_excerpt
            };
            let row = Row::new(vec![
                Cell::from(cell_text(&claim)),
                Cell::from(id_cell(&b.tool_name, tool_w)),
                Cell::from(
                    b.source_invocation_id
                        .map(|i| i.to_string())
                        .unwrap_or_else(|| "—".into()),
                ),
                Cell::from(id_cell(b.raw_path.as_deref().unwrap_or("—"), path_w)),
                Cell::from(if pass { "PASS" } else { "FAIL" }),
                Cell::from(id_cell(b.failed_rule.as_deref().unwrap_or(""), rule_w)),
                Cell::from(cell_text(matched)),
            ]);
            if pass {
                row.style(t.style(Role::BindingPass))
            } else {
                row.style(t.style(Role::BindingFailed))
            }
        })
        .collect();
    (
        vec![
            "claim",
            "tool",
            "inv",
            "raw_path",
            "check",
            "failed rule",
            "matched / excerpt",
        ],
        vec![
            Constraint::Fill(if narrow { 1 } else { 2 }),
            Constraint::Length(tool_w),
            Constraint::Length(inv_w),
            Constraint::Length(path_w),
            Constraint::Length(5),
            Constraint::Length(rule_w),
            Constraint::Fill(if narrow { 1 } else { 3 }),
        ],
        rows,
        Some(state.sel.bindings.min(list.len().saturating_sub(1)) - start),
    )
}

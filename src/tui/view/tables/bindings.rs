//! The Gatekeeper's bindings: the checked bindings of the claims (what
//! the verified counts are about), then, under a heading of their own,
//! the unverified bindings carried by the Executor's hypotheses and
//! recommended actions. Those are checked by the same rules, and a failing
//! one names its rule, but they never count as verified, so they are never
//! listed among the claims' bindings.

use super::{SPACING, TableParts, cell_text, id_cell, scroll};
use crate::tui::state::{AppState, Pane};
use crate::tui::theme::{Role, Theme};
use crate::tui::view::columns::{self, Col};
use crate::vocab::contracts::{BindingStatus, CheckedBinding, GatekeeperResult};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row};

/// The heading of the unverified group.
pub const UNVERIFIED: &str = "unverified (hypotheses/actions)";

/// The binding selected by row `k` of the bindings table, and whether it
/// is one of the unverified group.
pub fn binding_at(g: &GatekeeperResult, k: usize) -> Option<(&CheckedBinding, bool)> {
    match g.checked_bindings.get(k) {
        Some(b) => Some((b, false)),
        None => g
            .unverified_bindings
            .get(k - g.checked_bindings.len())
            .map(|b| (b, true)),
    }
}

/// Passing and total bindings of a group.
pub fn passed(list: &[CheckedBinding]) -> (usize, usize) {
    let pass = list
        .iter()
        .filter(|b| b.status == BindingStatus::Pass)
        .count();
    (pass, list.len())
}

/// The heading line of the unverified group, drawn across the table.
pub fn heading(g: &GatekeeperResult, t: &Theme) -> Line<'static> {
    let (pass, total) = passed(&g.unverified_bindings);
    Line::from(vec![
        Span::styled(format!("── {UNVERIFIED}: "), t.style(Role::Title)),
        Span::styled(
            format!("{pass}/{total} pass"),
            t.style(if pass < total {
                Role::BindingFailed
            } else {
                Role::Muted
            }),
        ),
        Span::styled(
            " · not findings, not counted as verified ──",
            t.style(Role::Muted),
        ),
    ])
}

pub(super) fn bindings(state: &AppState, h: usize, width: u16) -> TableParts {
    let t = &state.theme;
    let g = state.view().gatekeeper.as_deref();
    let verified = g.map_or(&[][..], |g| &g.checked_bindings);
    let unverified = g.map_or(&[][..], |g| &g.unverified_bindings);
    let all = || verified.iter().chain(unverified);
    // Claim ids lead their free-text cell: the column keeps room for the
    // longest (`recommended_actions[12]`), within reason.
    let claim_min = columns::widest(all().map(|b| b.claim_id.as_str())).clamp(12, 24) as u16;
    let widths = columns::fit(
        width,
        SPACING,
        &[
            Col::fill(claim_min, 2),
            Col::fit(
                "tool",
                columns::widest(all().map(|b| b.tool_name.as_str())),
                10,
            ),
            Col::fit(
                "inv",
                columns::widest_number(all().filter_map(|b| b.source_invocation_id)),
                4,
            ),
            Col::fit(
                "raw_path",
                columns::widest(all().map(|b| b.raw_path.as_deref().unwrap_or("—"))),
                10,
            ),
            Col::fit("check", 4, 5),
            Col::fit(
                "failed rule",
                columns::widest(all().filter_map(|b| b.failed_rule.as_deref())),
                12,
            ),
            Col::fill(10, 3),
        ],
    );
    let layout = scroll::rows(state, Pane::Bindings);
    let win = scroll::shown(state, Pane::Bindings, h);
    let (start, end) = (win.start, win.end);
    let mut heading_at = None;
    let rows = (start..end)
        .map(|d| {
            let Some(k) = layout.selectable_at(d) else {
                // The heading is drawn over this row once the table is.
                heading_at = Some(d - start);
                return Row::new(Vec::<Cell>::new());
            };
            let (b, unverified) = match k.checked_sub(verified.len()) {
                None => (&verified[k], false),
                Some(j) => (&unverified[j], true),
            };
            binding_row(b, unverified, &widths, t)
        })
        .collect();
    TableParts {
        header: vec![
            "claim",
            "tool",
            "inv",
            "raw_path",
            "check",
            "failed rule",
            "matched / excerpt",
        ],
        widths,
        rows,
        selected: win.selected,
        heading: heading_at.zip(g).map(|(i, g)| (i, heading(g, t))),
    }
}

fn binding_row(b: &CheckedBinding, unverified: bool, widths: &[u16], t: &Theme) -> Row<'static> {
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
    let row = Row::new(columns::shown(
        widths,
        vec![
            Cell::from(cell_text(&claim, widths[0])),
            Cell::from(id_cell(&b.tool_name, widths[1])),
            Cell::from(id_cell(
                &b.source_invocation_id
                    .map(|i| i.to_string())
                    .unwrap_or_else(|| "—".into()),
                widths[2],
            )),
            Cell::from(id_cell(b.raw_path.as_deref().unwrap_or("—"), widths[3])),
            Cell::from(if pass { "PASS" } else { "FAIL" }),
            Cell::from(id_cell(b.failed_rule.as_deref().unwrap_or(""), widths[5])),
            Cell::from(cell_text(matched, widths[6])),
        ],
    ));
    // A passing unverified binding is muted: it grounds no finding.
    row.style(t.style(match (pass, unverified) {
        (false, _) => Role::BindingFailed,
        (true, false) => Role::BindingPass,
        (true, true) => Role::Muted,
    }))
}

//! The graph pane, drawn from the engine's edge table (`graph::EDGES`):
//! one row per node with its visit count, followed by its outgoing edges
//! grouped by target. Taken edges carry their counts, the current node is
//! highlighted, and in step mode the edge the engine is about to take is
//! marked. The title carries the reason_code of the last transition.

use super::pane_block;
use crate::engine::graph::EDGES;
use crate::tui::state::RunView;
use crate::tui::theme::{Role, Theme};
use crate::vocab::graph::NodeId;
use crate::vocab::graph::ReasonCode;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

pub struct GraphPane<'a> {
    pub view: &'a RunView,
    pub theme: &'a Theme,
    pub focused: bool,
    pub scroll: u16,
    /// The engine is waiting at a step gate.
    pub waiting: bool,
}

/// Diagram order: START, the eight nodes, END.
pub fn diagram_nodes() -> impl Iterator<Item = NodeId> {
    std::iter::once(NodeId::Start)
        .chain(NodeId::ALL)
        .chain(std::iter::once(NodeId::End))
}

fn short(node: NodeId) -> &'static str {
    match node {
        NodeId::Start => "START",
        NodeId::Planner => "plan",
        NodeId::Executor => "exec",
        NodeId::Gatekeeper => "gate",
        NodeId::VerifiedInput => "vinput",
        NodeId::Verifier => "verify",
        NodeId::EvidenceRetry => "eretry",
        NodeId::Composer => "compose",
        NodeId::Fallback => "fallback",
        NodeId::End => "END",
    }
}

/// Outgoing targets of a node in edge-table order, without duplicates
/// (several reason codes can share one target).
pub fn targets(from: NodeId) -> Vec<NodeId> {
    let mut out: Vec<NodeId> = Vec::new();
    for e in EDGES.iter().filter(|e| e.from == from) {
        if !out.contains(&e.to) {
            out.push(e.to);
        }
    }
    out
}

impl GraphPane<'_> {
    pub fn lines(&self, compact: bool) -> Vec<Line<'static>> {
        let t = self.theme;
        let v = self.view;
        let pending = v.pending_edge.as_ref().map(|(f, to, _)| (*f, *to));
        let name_w = if compact { 9 } else { 15 };
        diagram_nodes()
            .map(|node| {
                let visits = v.visited(node);
                let is_current = v.current == Some(node);
                let reached = visits > 0
                    || (node == NodeId::Start && v.run_id.is_some())
                    || (node == NodeId::End && v.finished.is_some());
                let (marker, role) = if is_current {
                    ("▶", Role::NodeCurrent)
                } else if reached {
                    ("●", Role::NodeVisited)
                } else {
                    ("○", Role::NodeIdle)
                };
                let label = if compact { short(node) } else { node.as_str() };
                let mut spans = vec![
                    Span::styled(format!("{marker} {label:<name_w$}"), t.style(role)),
                    Span::styled(
                        if visits > 0 {
                            format!("×{visits:<2}")
                        } else {
                            "   ".into()
                        },
                        t.style(if visits > 0 { Role::Text } else { Role::Muted }),
                    ),
                ];
                for to in targets(node) {
                    let count = v.edge_count(node, to);
                    let is_pending = self.waiting && pending == Some((node, to));
                    let arrow = if to == node { "↺" } else { "→" };
                    let to_label = if to == node {
                        String::new()
                    } else if compact {
                        short(to).to_string()
                    } else {
                        to.as_str().to_string()
                    };
                    let (text, role) = if is_pending {
                        (format!(" ⇢{to_label}?"), Role::EdgePending)
                    } else if count > 0 {
                        (format!(" {arrow}{to_label}·{count}"), Role::EdgeTaken)
                    } else {
                        (format!(" {arrow}{to_label}"), Role::EdgeIdle)
                    };
                    spans.push(Span::styled(text, t.style(role)));
                }
                Line::from(spans)
            })
            .collect()
    }
}

impl Widget for GraphPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let last = self.view.last_reason.map_or("—", ReasonCode::as_str);
        let mut block = pane_block(
            Line::from(vec![
                Span::raw(" Graph · last: "),
                Span::styled(last, t.style(Role::EdgeTaken)),
                Span::raw(" "),
            ]),
            self.focused,
            t,
        );
        if self.waiting
            && let Some((from, to, reason)) = &self.view.pending_edge
        {
            block = block.title_bottom(Line::from(Span::styled(
                format!(" waiting: {from} → {to} ({reason}) · space steps "),
                t.style(Role::EdgePending),
            )));
        }
        let compact = area.width < 70;
        let lines = self.lines(compact);
        let inner_h = area.height.saturating_sub(2);
        let max_scroll = (lines.len() as u16).saturating_sub(inner_h);
        Paragraph::new(lines)
            .block(block)
            .style(t.style(Role::Text))
            .scroll((self.scroll.min(max_scroll), 0))
            .render(area, buf);
    }
}

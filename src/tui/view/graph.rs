//! The graph pane. Where the pane has room it draws the routing table as
//! a diagram (see [`super::diagram`]): the full node names when they fit,
//! short ones otherwise. Smaller than that, it falls back to a list drawn
//! from the same edge table, one row per node with its visit count and its
//! outgoing edges grouped by target, and says so in its title. Either way
//! taken edges carry their counts, the current node is highlighted, in
//! step mode the edge the engine is about to take is marked, and the title
//! carries the reason_code of the last transition.

use super::diagram::{self, Diagram, Live, Names};
use super::pane_block;
use crate::engine::graph::EDGES;
use crate::tui::state::RunView;
use crate::tui::theme::{Role, Theme};
use crate::vocab::graph::NodeId;
use crate::vocab::graph::ReasonCode;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};
use unicode_width::UnicodeWidthStr;

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

/// The diagram variants, widest first.
const VARIANTS: [Names; 2] = [Names::Full, Names::Short];

/// The widest diagram whose pane (borders included) fits in `max_width`,
/// as that pane's (width, height). None when none fits: the pane then
/// shows the list.
pub fn pane_size(max_width: u16) -> Option<(u16, u16)> {
    VARIANTS
        .iter()
        .filter_map(|n| diagram::shipped(*n).ok())
        .map(|d| (d.width.saturating_add(2), d.height.saturating_add(2)))
        .find(|(w, _)| *w <= max_width)
}

/// The widest diagram that fits inside `inner`, or why the list is shown
/// (the size the pane would need, or why there is no diagram).
fn fitting(inner: Rect) -> Result<&'static Diagram, String> {
    let mut smallest = None;
    for names in VARIANTS {
        match diagram::shipped(names) {
            Ok(d) if d.width <= inner.width && d.height <= inner.height => return Ok(d),
            Ok(d) => smallest = Some((d.width + 2, d.height + 2)),
            Err(e) => return Err(e.to_string()),
        }
    }
    Err(smallest.map_or_else(String::new, |(w, h)| format!("the diagram needs {w}×{h}")))
}

impl GraphPane<'_> {
    /// How far the pane drawn at `area` can scroll: the diagram does not,
    /// the list does when it is longer than the pane.
    pub fn max_scroll(&self, area: Rect) -> u16 {
        let inner = Block::bordered().inner(area);
        match fitting(inner) {
            Ok(_) => 0,
            Err(_) => (self.lines(area.width < 70).len() as u16).saturating_sub(inner.height),
        }
    }
}

impl Widget for GraphPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let last = self.view.last_reason.map_or("—", ReasonCode::as_str);
        let inner = Block::bordered().inner(area);
        let fit = fitting(inner);
        // The list says so in the title, and why when the title has room.
        let mut title = vec![Span::raw(" Graph · ")];
        if let Err(why) = &fit {
            let long = format!("list: {why} · ");
            let room = usize::from(area.width.saturating_sub(2));
            // " Graph · " + long + "last: " + last + " "
            let need = 16 + long.width() + last.width();
            let short = need > room || why.is_empty();
            let text = if short { "list · ".into() } else { long };
            title.push(Span::styled(text, t.style(Role::Muted)));
        }
        title.extend([
            Span::raw("last: "),
            Span::styled(last, t.style(Role::EdgeTaken)),
            Span::raw(" "),
        ]);
        let mut block = pane_block(Line::from(title), self.focused, t);
        if self.waiting
            && let Some((from, to, reason)) = &self.view.pending_edge
        {
            block = block.title_bottom(Line::from(Span::styled(
                format!(" waiting: {from} → {to} ({reason}) · space steps "),
                t.style(Role::EdgePending),
            )));
        }
        match fit {
            Ok(d) => {
                block.style(t.style(Role::Text)).render(area, buf);
                let live = Live {
                    view: self.view,
                    waiting: self.waiting,
                };
                diagram::paint(d, live, t, inner, buf);
            }
            Err(_) => {
                let compact = area.width < 70;
                let lines: Vec<Line<'static>> = self
                    .lines(compact)
                    .into_iter()
                    .map(|l| super::fit_line(l, inner.width))
                    .collect();
                let max_scroll = (lines.len() as u16).saturating_sub(inner.height);
                Paragraph::new(lines)
                    .block(block)
                    .style(t.style(Role::Text))
                    .scroll((self.scroll.min(max_scroll), 0))
                    .render(area, buf);
            }
        }
    }
}

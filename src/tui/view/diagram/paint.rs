//! Draws a laid-out [`Diagram`] with a run's state into a ratatui buffer.
//!
//! Every mark of state has a glyph as well as a theme role: the current
//! node is a double box (`node_current`), visited nodes heavy boxes with a
//! visit count, taken edges heavy lines with their count, the edge the
//! engine is about to take in step mode dashed (`edge_pending`), and the
//! last reason code is written beside its edge. Lines into and out of the
//! fallback take the `warning` role's colour.

use super::glyph::{Arms, Border, Weight, head};
use super::{Diagram, Ink, Shape, Slot};
use crate::tui::state::RunView;
use crate::tui::theme::{Role, Theme};
use crate::vocab::graph::NodeId;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use unicode_width::UnicodeWidthStr;

/// The run state the diagram shows.
#[derive(Clone, Copy)]
pub struct Live<'a> {
    pub view: &'a RunView,
    /// The engine waits at a step gate: its pending edge is about to be
    /// taken.
    pub waiting: bool,
}

/// Ordered by precedence: where links share a cell, the highest wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum EdgeState {
    Idle,
    Taken,
    Pending,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeState {
    Idle,
    Visited,
    Current,
}

impl EdgeState {
    fn weight(self) -> Weight {
        if self == EdgeState::Idle {
            Weight::Light
        } else {
            Weight::Heavy
        }
    }
}

impl NodeState {
    fn border(self) -> Border {
        match self {
            NodeState::Idle => Border::Light,
            NodeState::Visited => Border::Heavy,
            NodeState::Current => Border::Double,
        }
    }
}

struct Painter<'a> {
    d: &'a Diagram,
    t: &'a Theme,
    area: Rect,
    origin: (u16, u16),
    edges: Vec<EdgeState>,
    nodes: Vec<NodeState>,
}

/// Draws `d` into `area` (centred horizontally, from the top). Nothing is
/// drawn outside `area`, whatever its size.
pub fn paint(d: &Diagram, live: Live<'_>, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let v = live.view;
    let pending = live
        .waiting
        .then_some(v.pending_edge)
        .flatten()
        .map(|(f, t, _)| (f, t));
    let edges = d
        .links
        .iter()
        .map(|l| {
            if pending == Some((l.from, l.to)) {
                EdgeState::Pending
            } else if v.edge_count(l.from, l.to) > 0 {
                EdgeState::Taken
            } else {
                EdgeState::Idle
            }
        })
        .collect();
    let nodes = d
        .boxes
        .iter()
        .map(|b| {
            if v.current == Some(b.node) {
                NodeState::Current
            } else if v.visited(b.node) > 0
                || v.edges_taken
                    .keys()
                    .any(|(f, t)| *f == b.node || *t == b.node)
            {
                NodeState::Visited
            } else {
                NodeState::Idle
            }
        })
        .collect();
    let origin = (area.x + area.width.saturating_sub(d.width) / 2, area.y);
    let p = Painter {
        d,
        t: theme,
        area,
        origin,
        edges,
        nodes,
    };
    p.boxes(v, buf);
    p.ink(buf);
    p.counts(v, buf);
    p.reason_label(v, buf);
}

impl Painter<'_> {
    /// Writes one cell given in diagram coordinates, if it is inside both
    /// the diagram and the area.
    fn put(&self, buf: &mut Buffer, x: u16, y: u16, ch: char, style: Style) {
        if x >= self.d.width || y >= self.d.height {
            return;
        }
        let (sx, sy) = (
            self.origin.0.saturating_add(x),
            self.origin.1.saturating_add(y),
        );
        if sx < self.area.left()
            || sx >= self.area.right()
            || sy < self.area.top()
            || sy >= self.area.bottom()
        {
            return;
        }
        if let Some(cell) = buf.cell_mut((sx, sy)) {
            cell.set_char(ch).set_style(style);
        }
    }

    fn text(&self, buf: &mut Buffer, slot: Slot, text: &str, style: Style) {
        for (i, ch) in text.chars().take(usize::from(slot.len)).enumerate() {
            let x = slot.x.saturating_add(u16::try_from(i).unwrap_or(u16::MAX));
            self.put(buf, x, slot.y, ch, style);
        }
    }

    fn on_fallback_path(&self, link: usize) -> bool {
        self.d
            .links
            .get(link)
            .is_some_and(|l| l.from == NodeId::Fallback || l.to == NodeId::Fallback)
    }

    /// The fallback path keeps its role's weight and modifiers but takes
    /// the warning colour; a pending edge stays in the pending style.
    fn warn(&self, style: Style) -> Style {
        let w = self.t.style(Role::Warning);
        let style = match w.fg {
            Some(fg) => style.fg(fg),
            None => style,
        };
        style.add_modifier(w.add_modifier)
    }

    fn edge_style(&self, link: usize) -> Style {
        let state = self.edges.get(link).copied().unwrap_or(EdgeState::Idle);
        let base = self.t.style(match state {
            EdgeState::Idle => Role::EdgeIdle,
            EdgeState::Taken => Role::EdgeTaken,
            EdgeState::Pending => Role::EdgePending,
        });
        if state != EdgeState::Pending && self.on_fallback_path(link) {
            self.warn(base)
        } else {
            base
        }
    }

    fn node_style(&self, i: usize) -> Style {
        let state = self.nodes.get(i).copied().unwrap_or(NodeState::Idle);
        let base = self.t.style(match state {
            NodeState::Idle => Role::NodeIdle,
            NodeState::Visited => Role::NodeVisited,
            NodeState::Current => Role::NodeCurrent,
        });
        let fallback = self
            .d
            .boxes
            .get(i)
            .is_some_and(|b| b.node == NodeId::Fallback);
        if fallback && state != NodeState::Current {
            self.warn(base)
        } else {
            base
        }
    }

    /// The link among `links` whose state takes precedence (the first of
    /// equals).
    fn lead<'l>(&self, links: impl IntoIterator<Item = &'l usize>) -> Option<usize> {
        let mut best: Option<(EdgeState, usize)> = None;
        for &l in links {
            let s = self.edges.get(l).copied().unwrap_or(EdgeState::Idle);
            if best.is_none_or(|(b, _)| s > b) {
                best = Some((s, l));
            }
        }
        best.map(|(_, l)| l)
    }

    fn state(&self, link: Option<usize>) -> EdgeState {
        link.and_then(|l| self.edges.get(l).copied())
            .unwrap_or(EdgeState::Idle)
    }

    fn boxes(&self, v: &RunView, buf: &mut Buffer) {
        for (i, b) in self.d.boxes.iter().enumerate() {
            let state = self.nodes.get(i).copied().unwrap_or(NodeState::Idle);
            let style = self.node_style(i);
            let [tl, tr, bl, br, h, vert] = state.border().parts();
            let (right, bottom) = (b.x + b.w.saturating_sub(1), b.y + b.h.saturating_sub(1));
            for y in b.y..=bottom {
                for x in b.x..=right {
                    let ch = match (x == b.x, x == right, y == b.y, y == bottom) {
                        (true, _, true, _) => tl,
                        (_, true, true, _) => tr,
                        (true, _, _, true) => bl,
                        (_, true, _, true) => br,
                        (_, _, true, _) | (_, _, _, true) => h,
                        (true, _, _, _) | (_, true, _, _) => vert,
                        _ => ' ',
                    };
                    self.put(buf, x, y, ch, style);
                }
            }
            let label_w = u16::try_from(b.label.width()).unwrap_or(u16::MAX);
            let inner = b.w.saturating_sub(2);
            let lx = b.x + 1 + inner.saturating_sub(label_w) / 2;
            let slot = Slot {
                x: lx,
                y: b.y + b.h / 2,
                len: inner.min(label_w),
            };
            self.text(buf, slot, b.label, style);
            let visits = v.visited(b.node);
            if visits > 0 {
                self.text(buf, b.visits, &format!("×{visits}"), style);
            }
        }
    }

    fn ink(&self, buf: &mut Buffer) {
        for (x, y, ink) in &self.d.ink {
            let (ch, style) = match ink {
                Ink::Line { arms } => {
                    let lead = self.lead(arms.iter().flatten());
                    let weight = |owners: &Vec<usize>| {
                        if owners.is_empty() {
                            Weight::None
                        } else {
                            self.state(self.lead(owners)).weight()
                        }
                    };
                    let a = Arms {
                        up: weight(&arms[0]),
                        down: weight(&arms[1]),
                        left: weight(&arms[2]),
                        right: weight(&arms[3]),
                    };
                    let dashed = self.state(lead) == EdgeState::Pending;
                    (
                        a.glyph(dashed),
                        lead.map_or_else(Style::default, |l| self.edge_style(l)),
                    )
                }
                Ink::Port { node, dir, links } => {
                    let lead = self.lead(links);
                    let state = self.nodes.get(*node).copied().unwrap_or(NodeState::Idle);
                    let ch = state.border().port(*dir, self.state(lead).weight());
                    (ch, self.border_cell_style(*node, lead))
                }
                Ink::Head { node, dir, links } => {
                    (head(*dir), self.border_cell_style(*node, self.lead(links)))
                }
            };
            self.put(buf, *x, *y, ch, style);
        }
    }

    /// A port or arrowhead sits on a box border: on the current node it
    /// keeps the node's highlight, elsewhere it shows its edge.
    fn border_cell_style(&self, node: usize, lead: Option<usize>) -> Style {
        if self.nodes.get(node) == Some(&NodeState::Current) {
            return self.node_style(node);
        }
        lead.map_or_else(|| self.node_style(node), |l| self.edge_style(l))
    }

    /// Taken counts beside each edge's start and the retry markers.
    fn counts(&self, v: &RunView, buf: &mut Buffer) {
        for (i, l) in self.d.links.iter().enumerate() {
            let n = v.edge_count(l.from, l.to);
            let style = self.edge_style(i);
            match l.shape {
                Shape::SelfLoop => {
                    let mark = if n > 0 {
                        format!("↺{n}")
                    } else {
                        "↺".into()
                    };
                    self.text(buf, l.count, &mark, style);
                }
                Shape::Straight | Shape::Routed if n > 0 => {
                    self.text(buf, l.count, &n.to_string(), style);
                }
                _ => {}
            }
        }
    }

    /// The reason code of the last transition, on blank cells as close to
    /// its edge as there are.
    fn reason_label(&self, v: &RunView, buf: &mut Buffer) {
        let last = match v.transitions.last() {
            Some(t) => Some((t.from, t.to, t.reason_code)),
            None => v.pending_edge,
        };
        let Some((from, to, reason)) = last else {
            return;
        };
        let Some(link) = self.d.link(from, to) else {
            return;
        };
        let text = reason.as_str();
        let len = u16::try_from(text.width()).unwrap_or(u16::MAX);
        let anchor = self.d.links[link].anchor;
        if let Some((x, y)) = place_label(self.d, anchor, len) {
            self.text(buf, Slot { x, y, len }, text, self.edge_style(link));
        }
    }
}

/// The blank run nearest `anchor` (rows weigh more than columns) that
/// holds `len` cells with a blank cell either side, so a label never
/// touches a line or a box.
fn place_label(d: &Diagram, anchor: (u16, u16), len: u16) -> Option<(u16, u16)> {
    let (ax, ay) = (i32::from(anchor.0), i32::from(anchor.1));
    let (w, len) = (i32::from(d.width), i32::from(len));
    let mut best: Option<(i32, u16, u16)> = None;
    for y in 0..d.height {
        let dy = (i32::from(y) - ay).abs();
        let mut x = 0;
        while x < w {
            if !d.is_blank(x as u16, y) {
                x += 1;
                continue;
            }
            let start = x;
            while x < w && d.is_blank(x as u16, y) {
                x += 1;
            }
            let lo = start + i32::from(start > 0);
            let hi = x - len - i32::from(x < w);
            if lo > hi {
                continue;
            }
            let at = ax.clamp(lo, hi);
            let cost = dy * 12 + (at - ax).abs();
            if best.is_none_or(|b| cost < b.0) {
                best = Some((cost, at as u16, y));
            }
        }
    }
    best.map(|(_, x, y)| (x, y))
}

/// The diagram with no run: plain text, blank rows above it and trailing
/// blanks trimmed.
pub(super) fn plain_text(d: &Diagram) -> String {
    let area = Rect::new(0, 0, d.width, d.height);
    let mut buf = Buffer::empty(area);
    let view = RunView::default();
    paint(
        d,
        Live {
            view: &view,
            waiting: false,
        },
        &Theme::dark(),
        area,
        &mut buf,
    );
    let mut out = String::new();
    for y in 0..d.height {
        let mut line = String::new();
        for x in 0..d.width {
            line.push_str(buf[(x, y)].symbol());
        }
        let line = line.trim_end();
        if !(out.is_empty() && line.is_empty()) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

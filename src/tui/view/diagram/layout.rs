//! Lays an edge table out as node boxes joined by orthogonal lines.
//!
//! The steps, each a plain function of the table:
//! 1. Nodes in order of first appearance; one link per (from, to) pair,
//!    however many rows (reason codes) share it; self-loops set apart.
//! 2. The main line: the first path from the table's first node to a node
//!    with no way out, searched in table order. Each node lists its
//!    success edge first, so this is the happy path (START … composer →
//!    END); an edge back to a node already on the path is skipped, which
//!    is how evidence_retry's loop stays off the line.
//! 3. Two rows: the main line left to right, every other node on a side
//!    row below, ordered by the barycentre of its neighbours on the main
//!    line and pushed apart so boxes never touch.
//! 4. Neighbours on one row joined by a forward link get a straight arrow.
//!    Every other link leaves its box through a port on the top or bottom
//!    border, runs along a horizontal track in the band between the rows
//!    (or above the main line, or below the side row) and enters its target
//!    through an arrowhead on the border. Links into the same border of the
//!    same node share one track (a bus), so fan-in stays compact.
//! 5. Ports in one band get distinct columns and tracks whose spans overlap
//!    get distinct rows, so two lines never run along the same cell: lines
//!    only cross at right angles. Track rows are ordered to cross least.
//!    Steps 4 and 5 are `route.rs`.
//!
//! The result is computed once per table and naming; drawing it with run
//! state is [`super::paint()`]'s job.

use super::route::{Band, Grid, Net, Side, assign_ports, assign_tracks, classify, widen_for_ports};
use super::{Diagram, Link, NodeBox, Shape, Slot};
use crate::engine::graph::Edge;
use crate::vocab::graph::NodeId;
use std::collections::BTreeMap;

/// Node labels: full names, or short ones for a narrow pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Names {
    Full,
    Short,
}

pub fn node_label(node: NodeId, names: Names) -> &'static str {
    match names {
        Names::Full => node.as_str(),
        Names::Short => match node {
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
        },
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("the edge table is empty")]
    Empty,
    #[error("no room on {0}'s border for its {1} lines")]
    Ports(NodeId, usize),
    #[error("the diagram would be larger than a terminal")]
    TooLarge,
}

/// Cells between two boxes on one row: room for a line and its count.
const GAP: i32 = 2;
/// A box is its label between two borders, three rows high.
pub(super) const BOX_H: i32 = 3;
/// The count of a taken edge or a visit ("×12") takes up to this many
/// border cells.
pub(super) const COUNT_W: i32 = 3;

pub(super) struct Placed {
    pub(super) node: NodeId,
    pub(super) label: &'static str,
    pub(super) row: usize,
    pub(super) x: i32,
    pub(super) w: i32,
    pub(super) looped: bool,
}

impl Placed {
    pub(super) fn center(&self) -> i32 {
        self.x + self.w / 2
    }
}

/// The rows of the drawing, top to bottom: a free row for labels, the band
/// above the main line, the main line, the band between, the side row, the
/// band below.
struct Rows {
    box_y: [i32; 2],
    band_y: [i32; 3],
    height: i32,
}

impl Rows {
    fn new(tracks: &BTreeMap<Band, usize>, has_side: bool) -> Rows {
        let n = |band| tracks.get(&band).copied().unwrap_or(0) as i32;
        let between = n(Band::Between).max(i32::from(has_side));
        let top = 1;
        let box_y = [top + n(Band::Above), top + n(Band::Above) + BOX_H + between];
        let height = if has_side {
            box_y[1] + BOX_H + n(Band::Below)
        } else {
            box_y[0] + BOX_H
        };
        Rows {
            box_y,
            band_y: [top, box_y[0] + BOX_H, box_y[1] + BOX_H],
            height,
        }
    }

    fn top(&self, b: &Placed) -> i32 {
        self.box_y[b.row.min(1)]
    }

    fn border(&self, b: &Placed, side: Side) -> i32 {
        self.top(b) + if side == Side::Top { 0 } else { BOX_H - 1 }
    }

    fn track(&self, net: &Net) -> i32 {
        self.band_y[net.band as usize] + net.track as i32
    }
}

pub fn layout(edges: &[Edge], names: Names) -> Result<Diagram, LayoutError> {
    let (nodes, pairs) = distinct(edges);
    if nodes.is_empty() {
        return Err(LayoutError::Empty);
    }
    let spine = main_line(&nodes, &pairs);
    let mut boxes = place_rows(&nodes, &pairs, &spine, names);
    let index = |n: NodeId| boxes.iter().position(|b| b.node == n).unwrap_or(0);
    let ends: Vec<(usize, usize)> = pairs.iter().map(|(f, t)| (index(*f), index(*t))).collect();
    let (mut nets, mut exits) = classify(&boxes, &ends);
    widen_for_ports(&mut boxes, &nets, &exits);
    pack_rows(&mut boxes, &pairs);
    assign_ports(&boxes, &mut nets, &mut exits)?;
    let tracks = assign_tracks(&mut nets, &exits);
    let rows = Rows::new(&tracks, boxes.iter().any(|b| b.row == 1));

    let to16 = |v: i32| u16::try_from(v).map_err(|_| LayoutError::TooLarge);
    let mut grid = Grid::default();
    let mut links = Vec::with_capacity(pairs.len());
    for (i, (&(from, to), &(f, t))) in pairs.iter().zip(&ends).enumerate() {
        let (a, b) = (&boxes[f], &boxes[t]);
        let (shape, count, anchor) = if f == t {
            // The retry marker and its count open the outer border.
            let y = rows.border(a, outer(a));
            (Shape::SelfLoop, (a.x + 1, y, COUNT_W), (a.x + 1, y))
        } else if let Some(exit) = &exits[i] {
            let net = &nets[exit.net];
            let ey = rows.border(a, exit.side);
            let ny = rows.border(b, net.side);
            grid.route(i, (f, t), (exit.x, ey), rows.track(net), (net.port, ny));
            let count = (exit.x + 1, ey, COUNT_W - 1);
            (Shape::Routed, count, (exit.x, ey))
        } else {
            let y = rows.top(a) + 1;
            let (x0, x1) = (a.x + a.w - 1, b.x);
            grid.straight(i, (f, t), x0, x1, y);
            (Shape::Straight, (x0 + 1, y, x1 - x0 - 1), (x0 + 1, y))
        };
        links.push(Link {
            from,
            to,
            shape,
            count: slot(count)?,
            anchor: (to16(anchor.0)?, to16(anchor.1)?),
        });
    }
    let mut out = Vec::with_capacity(boxes.len());
    for b in &boxes {
        // The visit count closes the outer border.
        let visits = (b.x + b.w - 1 - COUNT_W, rows.border(b, outer(b)), COUNT_W);
        out.push(NodeBox {
            node: b.node,
            label: b.label,
            x: to16(b.x)?,
            y: to16(rows.top(b))?,
            w: to16(b.w)?,
            h: to16(BOX_H)?,
            visits: slot(visits)?,
        });
    }
    let width = to16(boxes.iter().map(|b| b.x + b.w).max().unwrap_or(0))?;
    let height = to16(rows.height)?;
    Ok(Diagram::new(width, height, out, links, grid.into_ink()?))
}

fn slot((x, y, len): (i32, i32, i32)) -> Result<Slot, LayoutError> {
    let f = |v: i32| u16::try_from(v.max(0)).map_err(|_| LayoutError::TooLarge);
    Ok(Slot {
        x: f(x)?,
        y: f(y)?,
        len: f(len)?,
    })
}

/// The border facing away from the other row.
pub(super) fn outer(b: &Placed) -> Side {
    if b.row == 0 { Side::Top } else { Side::Bottom }
}

/// Nodes in order of first appearance and the distinct (from, to) pairs.
fn distinct(edges: &[Edge]) -> (Vec<NodeId>, Vec<(NodeId, NodeId)>) {
    let mut nodes = Vec::new();
    let mut pairs = Vec::new();
    for e in edges {
        for n in [e.from, e.to] {
            if !nodes.contains(&n) {
                nodes.push(n);
            }
        }
        if !pairs.contains(&(e.from, e.to)) {
            pairs.push((e.from, e.to));
        }
    }
    (nodes, pairs)
}

/// The first path, in table order, from the first node to a node with no
/// way out. Without such a node, the longest path the search met.
fn main_line(nodes: &[NodeId], pairs: &[(NodeId, NodeId)]) -> Vec<NodeId> {
    let succ = |n: NodeId| -> Vec<NodeId> {
        pairs
            .iter()
            .filter(|(f, t)| *f == n && *t != n)
            .map(|(_, t)| *t)
            .collect()
    };
    let start = nodes[0];
    let mut seen = vec![start];
    let mut path = vec![(start, 0usize)];
    let mut longest = vec![start];
    while let Some(&(node, next)) = path.last() {
        let out = succ(node);
        if out.is_empty() {
            return path.iter().map(|(n, _)| *n).collect();
        }
        if path.len() > longest.len() {
            longest = path.iter().map(|(n, _)| *n).collect();
        }
        match out.iter().skip(next).position(|n| !seen.contains(n)) {
            Some(k) => {
                let child = out[next + k];
                if let Some(top) = path.last_mut() {
                    top.1 = next + k + 1;
                }
                seen.push(child);
                path.push((child, 0));
            }
            None => {
                path.pop();
            }
        }
    }
    longest
}

/// Boxes with widths and rows, each row in drawing order: the main line
/// as found, the side row by the barycentre of main-line neighbours.
fn place_rows(
    nodes: &[NodeId],
    pairs: &[(NodeId, NodeId)],
    spine: &[NodeId],
    names: Names,
) -> Vec<Placed> {
    let make = |node: NodeId, row: usize| {
        let label = node_label(node, names);
        let looped = pairs.contains(&(node, node));
        Placed {
            node,
            label,
            row,
            x: 0,
            w: unicode_width::UnicodeWidthStr::width(label) as i32 + 2,
            looped,
        }
    };
    let mut boxes: Vec<Placed> = spine.iter().map(|n| make(*n, 0)).collect();
    let mut x = 0;
    for b in &mut boxes {
        b.x = x;
        x += b.w + GAP;
    }
    let mut side: Vec<(i32, usize, Placed)> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        if !spine.contains(n) {
            let bary = barycentre(&boxes, pairs, *n).unwrap_or(i32::MAX);
            side.push((bary, i, make(*n, 1)));
        }
    }
    side.sort_by_key(|(bary, i, _)| (*bary, *i));
    boxes.extend(side.into_iter().map(|(_, _, b)| b));
    boxes
}

/// Final x positions: the main line packed left to right; each side box
/// centred under the barycentre of its main-line neighbours, in the order
/// `place_rows` chose, pushed right so boxes never touch and pulled back
/// left where they would overhang the main line.
fn pack_rows(boxes: &mut [Placed], pairs: &[(NodeId, NodeId)]) {
    let mut x = 0;
    for b in boxes.iter_mut().filter(|b| b.row == 0) {
        b.x = x;
        x += b.w + GAP;
    }
    let right = x - GAP;
    let side: Vec<usize> = (0..boxes.len()).filter(|i| boxes[*i].row == 1).collect();
    for &i in &side {
        if let Some(c) = barycentre(boxes, pairs, boxes[i].node) {
            boxes[i].x = c - boxes[i].w / 2;
        } else {
            boxes[i].x = right;
        }
    }
    let mut min_x = 0;
    for &i in &side {
        boxes[i].x = boxes[i].x.max(min_x);
        min_x = boxes[i].x + boxes[i].w + GAP;
    }
    let mut max_end = right;
    for &i in side.iter().rev() {
        let b = &mut boxes[i];
        b.x = b.x.min(max_end - b.w).max(0);
        max_end = b.x - GAP;
    }
    let mut min_x = 0;
    for &i in &side {
        boxes[i].x = boxes[i].x.max(min_x);
        min_x = boxes[i].x + boxes[i].w + GAP;
    }
}

/// The mean centre of a node's neighbours on the main line.
fn barycentre(boxes: &[Placed], pairs: &[(NodeId, NodeId)], n: NodeId) -> Option<i32> {
    let centers: Vec<i32> = pairs
        .iter()
        .filter_map(|(f, t)| match (*f == n, *t == n) {
            (true, false) => Some(*t),
            (false, true) => Some(*f),
            _ => None,
        })
        .filter_map(|m| {
            boxes
                .iter()
                .find(|b| b.node == m && b.row == 0)
                .map(Placed::center)
        })
        .collect();
    let n = i32::try_from(centers.len()).ok().filter(|n| *n > 0)?;
    Some(centers.iter().sum::<i32>() / n)
}

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
//!
//! The result is computed once per table and naming; drawing it with run
//! state is [`super::paint()`]'s job.

use super::{Diagram, Dir, Ink, Link, NodeBox, Shape, Slot};
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
const BOX_H: i32 = 3;
/// The count of a taken edge or a visit ("×12") takes up to this many
/// border cells.
const COUNT_W: i32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Band {
    Above,
    Between,
    Below,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Top,
    Bottom,
}

struct Placed {
    node: NodeId,
    label: &'static str,
    row: usize,
    x: i32,
    w: i32,
    looped: bool,
}

impl Placed {
    fn center(&self) -> i32 {
        self.x + self.w / 2
    }
}

/// The links entering one border of one node: they share a track and
/// an arrowhead.
struct Net {
    target: usize,
    side: Side,
    band: Band,
    port: i32,
    track: usize,
}

/// Where a routed link leaves its source box, and the net it joins.
struct Exit {
    source: usize,
    side: Side,
    net: usize,
    x: i32,
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

/// Sorts links into self-loops and straight arrows (no exit) and routed
/// ones, grouping the routed ones into nets by the border they enter.
/// Each row's boxes are contiguous and in order, so neighbours on a row
/// are adjacent indices.
fn classify(boxes: &[Placed], ends: &[(usize, usize)]) -> (Vec<Net>, Vec<Option<Exit>>) {
    let mut nets: Vec<Net> = Vec::new();
    let mut exits = Vec::with_capacity(ends.len());
    for &(f, t) in ends {
        if f == t || (t == f + 1 && boxes[f].row == boxes[t].row) {
            exits.push(None);
            continue;
        }
        let (band, exit_side, entry_side) = match (boxes[f].row, boxes[t].row) {
            (0, 0) => (Band::Above, Side::Top, Side::Top),
            (0, _) => (Band::Between, Side::Bottom, Side::Top),
            (_, 0) => (Band::Between, Side::Top, Side::Bottom),
            _ => (Band::Below, Side::Bottom, Side::Bottom),
        };
        let net = match nets
            .iter()
            .position(|n| n.target == t && n.side == entry_side)
        {
            Some(n) => n,
            None => {
                nets.push(Net {
                    target: t,
                    side: entry_side,
                    band,
                    port: 0,
                    track: 0,
                });
                nets.len() - 1
            }
        };
        exits.push(Some(Exit {
            source: f,
            side: exit_side,
            net,
            x: 0,
        }));
    }
    (nets, exits)
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
fn outer(b: &Placed) -> Side {
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

/// Makes each box wide enough for the ports on its borders and the
/// marks on its outer border.
fn widen_for_ports(boxes: &mut [Placed], nets: &[Net], exits: &[Option<Exit>]) {
    for (bi, b) in boxes.iter_mut().enumerate() {
        for side in [Side::Top, Side::Bottom] {
            let ports = nets
                .iter()
                .filter(|n| n.target == bi && n.side == side)
                .count()
                + exits
                    .iter()
                    .flatten()
                    .filter(|e| e.source == bi && e.side == side)
                    .count();
            // A port and the cells for its count.
            let mut need = ports as i32 * COUNT_W;
            if side == outer(b) {
                need += COUNT_W + if b.looped { COUNT_W } else { 0 };
            }
            b.w = b.w.max(need + 2);
        }
    }
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

/// Picks a column for every port: inside its box, distinct from every
/// other port in the same band (so vertical lines never share a cell),
/// spaced on one border so each exit keeps room for its count, and as
/// close as it can get to the other end of its line.
fn assign_ports(
    boxes: &[Placed],
    nets: &mut [Net],
    exits: &mut [Option<Exit>],
) -> Result<(), LayoutError> {
    enum Owner {
        Net(usize),
        Exit(usize),
    }
    struct Req {
        band: Band,
        b: usize,
        side: Side,
        pref: i32,
        owner: Owner,
    }
    let mut reqs = Vec::new();
    for (ni, n) in nets.iter().enumerate() {
        let sources: Vec<i32> = exits
            .iter()
            .flatten()
            .filter(|e| e.net == ni)
            .map(|e| boxes[e.source].center())
            .collect();
        let pref = sources.iter().sum::<i32>() / sources.len().max(1) as i32;
        reqs.push(Req {
            band: n.band,
            b: n.target,
            side: n.side,
            pref,
            owner: Owner::Net(ni),
        });
    }
    for (li, e) in exits.iter().enumerate() {
        if let Some(e) = e {
            reqs.push(Req {
                band: nets[e.net].band,
                b: e.source,
                side: e.side,
                pref: boxes[nets[e.net].target].center(),
                owner: Owner::Exit(li),
            });
        }
    }
    reqs.sort_by_key(|r| (r.band, r.pref));
    let mut taken: Vec<(Band, usize, Side, i32)> = Vec::new();
    for r in &reqs {
        let b = &boxes[r.b];
        // The outer border keeps its ends for the retry marker and the
        // visit count.
        let (mut lo, mut hi) = (b.x + 1, b.x + b.w - 2);
        if r.side == outer(b) {
            if b.looped {
                lo += COUNT_W;
            }
            hi -= COUNT_W;
        }
        // Free: no other port of the band in this column, and none on the
        // same border closer than `spacing`.
        let free = |x: i32, spacing: i32| {
            !taken.iter().any(|&(band, tb, ts, tx)| {
                (band == r.band && tx == x)
                    || (tb == r.b && ts == r.side && (tx - x).abs() < spacing)
            })
        };
        let mut cols: Vec<i32> = (lo..=hi).collect();
        cols.sort_by_key(|x| ((x - r.pref).abs(), *x));
        let x = [COUNT_W, 2, 1]
            .iter()
            .find_map(|s| cols.iter().copied().find(|x| free(*x, *s)))
            .ok_or_else(|| {
                let on_box = taken.iter().filter(|t| t.1 == r.b).count() + 1;
                LayoutError::Ports(b.node, on_box)
            })?;
        taken.push((r.band, r.b, r.side, x));
        match r.owner {
            Owner::Net(n) => nets[n].port = x,
            Owner::Exit(li) => {
                if let Some(e) = exits[li].as_mut() {
                    e.x = x;
                }
            }
        }
    }
    Ok(())
}

/// Gives every net a track in its band: nets whose spans overlap (or
/// touch) get different tracks; then the tracks are ordered so that the
/// fewest vertical lines cross other nets' tracks. Returns the number of
/// tracks in each band.
fn assign_tracks(nets: &mut [Net], exits: &[Option<Exit>]) -> BTreeMap<Band, usize> {
    let mut counts = BTreeMap::new();
    for band in [Band::Above, Band::Between, Band::Below] {
        let members: Vec<usize> = (0..nets.len()).filter(|i| nets[*i].band == band).collect();
        if members.is_empty() {
            continue;
        }
        // Each net's span and its vertical stubs: (x, comes from above).
        let mut span = BTreeMap::new();
        let mut stubs = BTreeMap::new();
        for &ni in &members {
            let n = &nets[ni];
            let mut s = vec![(n.port, n.side == Side::Bottom)];
            for e in exits.iter().flatten().filter(|e| e.net == ni) {
                s.push((e.x, e.side == Side::Bottom));
            }
            let lo = s.iter().map(|p| p.0).min().unwrap_or(0);
            let hi = s.iter().map(|p| p.0).max().unwrap_or(0);
            span.insert(ni, (lo, hi));
            stubs.insert(ni, s);
        }
        // Interval colouring, leftmost first: optimal track count.
        let mut order = members.clone();
        order.sort_by_key(|ni| span[ni]);
        let mut ends: Vec<i32> = Vec::new();
        let mut track = BTreeMap::new();
        for ni in order {
            let (lo, hi) = span[&ni];
            let t = match ends.iter().position(|end| *end + 1 < lo) {
                Some(t) => t,
                None => {
                    ends.push(i32::MIN);
                    ends.len() - 1
                }
            };
            ends[t] = hi;
            track.insert(ni, t);
        }
        let k = ends.len();
        let crossings = |perm: &[usize]| {
            let row = |ni: &usize| perm[track[ni]];
            let mut c = 0;
            for (ni, s) in &stubs {
                for &(x, from_above) in s {
                    c += members
                        .iter()
                        .filter(|m| {
                            let (lo, hi) = span[*m];
                            *m != ni
                                && lo <= x
                                && x <= hi
                                && if from_above {
                                    row(m) < row(ni)
                                } else {
                                    row(m) > row(ni)
                                }
                        })
                        .count();
                }
            }
            c
        };
        let mut best: Vec<usize> = (0..k).collect();
        if k <= 6 {
            let mut best_c = crossings(&best);
            permutations(k, &mut |p| {
                let c = crossings(p);
                if c < best_c {
                    best_c = c;
                    best = p.to_vec();
                }
            });
        }
        for &ni in &members {
            nets[ni].track = best[track[&ni]];
        }
        counts.insert(band, k);
    }
    counts
}

/// Calls `f` with every permutation of 0..k (Heap's algorithm).
fn permutations(k: usize, f: &mut dyn FnMut(&[usize])) {
    let mut p: Vec<usize> = (0..k).collect();
    let mut c = vec![0; k];
    f(&p);
    let mut i = 0;
    while i < k {
        if c[i] < i {
            if i % 2 == 0 {
                p.swap(0, i);
            } else {
                p.swap(c[i], i);
            }
            f(&p);
            c[i] += 1;
            i = 0;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
}

/// The line layer while it is being built, keyed by (y, x) so that it
/// comes out in reading order.
#[derive(Default)]
struct Grid {
    cells: BTreeMap<(i32, i32), Ink>,
}

impl Grid {
    fn put(&mut self, x: i32, y: i32, ink: Ink) {
        match (self.cells.get_mut(&(y, x)), ink) {
            (Some(Ink::Head { links, .. }), Ink::Head { links: more, .. })
            | (Some(Ink::Port { links, .. }), Ink::Port { links: more, .. }) => {
                for l in more {
                    if !links.contains(&l) {
                        links.push(l);
                    }
                }
            }
            (_, ink) => {
                self.cells.insert((y, x), ink);
            }
        }
    }

    /// Adds an arm owned by `link` to a line cell.
    fn arm(&mut self, x: i32, y: i32, dir: Dir, link: usize) {
        let cell = self.cells.entry((y, x)).or_insert_with(|| Ink::Line {
            arms: Default::default(),
        });
        if let Ink::Line { arms } = cell {
            let owners = &mut arms[dir as usize];
            if !owners.contains(&link) {
                owners.push(link);
            }
        }
    }

    /// A horizontal arrow on row `y` from the right border of `source`
    /// (at `x0`) to the left border of `target` (at `x1`).
    fn straight(
        &mut self,
        link: usize,
        (source, target): (usize, usize),
        x0: i32,
        x1: i32,
        y: i32,
    ) {
        let port = Ink::Port {
            node: source,
            dir: Dir::Right,
            links: vec![link],
        };
        self.put(x0, y, port);
        for x in x0 + 1..x1 {
            self.arm(x, y, Dir::Left, link);
            self.arm(x, y, Dir::Right, link);
        }
        let head = Ink::Head {
            node: target,
            dir: Dir::Right,
            links: vec![link],
        };
        self.put(x1, y, head);
    }

    /// A line from a port at `from`, straight to track row `ty`, along it
    /// and straight to an arrowhead at `to`.
    fn route(
        &mut self,
        link: usize,
        (source, target): (usize, usize),
        from: (i32, i32),
        ty: i32,
        to: (i32, i32),
    ) {
        let toward = |a: i32, b: i32| if b > a { Dir::Down } else { Dir::Up };
        let out = toward(from.1, ty);
        self.put(
            from.0,
            from.1,
            Ink::Port {
                node: source,
                dir: out,
                links: vec![link],
            },
        );
        self.vertical(link, from.0, from.1, ty);
        if from.0 != to.0 {
            let (h_out, h_in) = if to.0 > from.0 {
                (Dir::Right, Dir::Left)
            } else {
                (Dir::Left, Dir::Right)
            };
            self.arm(from.0, ty, h_out, link);
            let step = if to.0 > from.0 { 1 } else { -1 };
            let mut x = from.0 + step;
            while x != to.0 {
                self.arm(x, ty, Dir::Left, link);
                self.arm(x, ty, Dir::Right, link);
                x += step;
            }
            self.arm(to.0, ty, h_in, link);
        }
        self.vertical(link, to.0, to.1, ty);
        let into = toward(ty, to.1);
        self.put(
            to.0,
            to.1,
            Ink::Head {
                node: target,
                dir: into,
                links: vec![link],
            },
        );
    }

    /// The vertical run between a border row and a track row, including
    /// the track cell's arm back toward the border.
    fn vertical(&mut self, link: usize, x: i32, border: i32, ty: i32) {
        let (down, up) = (Dir::Down, Dir::Up);
        let step = if ty > border { 1 } else { -1 };
        let (fwd, back) = if step > 0 { (down, up) } else { (up, down) };
        let mut y = border + step;
        while y != ty {
            self.arm(x, y, back, link);
            self.arm(x, y, fwd, link);
            y += step;
        }
        self.arm(x, ty, back, link);
    }

    fn into_ink(self) -> Result<Vec<(u16, u16, Ink)>, LayoutError> {
        self.cells
            .into_iter()
            .map(|((y, x), ink)| match (u16::try_from(x), u16::try_from(y)) {
                (Ok(x), Ok(y)) => Ok((x, y, ink)),
                _ => Err(LayoutError::TooLarge),
            })
            .collect()
    }
}

//! Routing: which border each line leaves and enters by, a column for
//! every port and a track row for every net, and the cells the lines run
//! through.
//!
//! Ports in one band get distinct columns and nets whose spans overlap get
//! distinct tracks, so two lines never run along the same cell unless they
//! are one bus into the same border; lines of different nets only cross at
//! right angles.

use super::layout::{COUNT_W, LayoutError, Placed, outer};
use super::{Dir, Ink};
use std::collections::BTreeMap;

/// Where a routed line runs: above the main line, between the two rows of
/// boxes, or below the side row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Band {
    Above,
    Between,
    Below,
}

/// The border of a box a line leaves or enters by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Top,
    Bottom,
}

/// The links entering one border of one node: they share a track and
/// an arrowhead.
pub(super) struct Net {
    pub(super) target: usize,
    pub(super) side: Side,
    pub(super) band: Band,
    pub(super) port: i32,
    pub(super) track: usize,
}

/// Where a routed link leaves its source box, and the net it joins.
pub(super) struct Exit {
    pub(super) source: usize,
    pub(super) side: Side,
    pub(super) net: usize,
    pub(super) x: i32,
}

/// Sorts links into self-loops and straight arrows (no exit) and routed
/// ones, grouping the routed ones into nets by the border they enter.
/// Each row's boxes are contiguous and in order, so neighbours on a row
/// are adjacent indices.
pub(super) fn classify(boxes: &[Placed], ends: &[(usize, usize)]) -> (Vec<Net>, Vec<Option<Exit>>) {
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

/// Makes each box wide enough for the ports on its borders and the
/// marks on its outer border.
pub(super) fn widen_for_ports(boxes: &mut [Placed], nets: &[Net], exits: &[Option<Exit>]) {
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

/// Picks a column for every port: inside its box, distinct from every
/// other port in the same band (so vertical lines never share a cell),
/// spaced on one border so each exit keeps room for its count, and as
/// close as it can get to the other end of its line.
pub(super) fn assign_ports(
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
pub(super) fn assign_tracks(nets: &mut [Net], exits: &[Option<Exit>]) -> BTreeMap<Band, usize> {
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
pub(super) struct Grid {
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
    pub(super) fn straight(
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
    pub(super) fn route(
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

    pub(super) fn into_ink(self) -> Result<Vec<(u16, u16, Ink)>, LayoutError> {
        self.cells
            .into_iter()
            .map(|((y, x), ink)| match (u16::try_from(x), u16::try_from(y)) {
                (Ok(x), Ok(y)) => Ok((x, y, ink)),
                _ => Err(LayoutError::TooLarge),
            })
            .collect()
    }
}

//! The routing table drawn as a diagram: node boxes joined by lines with
//! arrowheads, laid out from the edge table (not drawn by hand), so a
//! node or edge added to the table appears without touching the view.
//!
//! [`layout()`] turns a table into a [`Diagram`]: boxes, the cells every
//! line runs through (with the links that own each stroke) and the slots
//! where counts go. That is done once per table and naming and cached.
//! [`paint()`] draws it with a run's state into a ratatui buffer: the
//! current node, the edge about to be taken, visited nodes and taken edges
//! with counts, the last reason code and the fallback path. State is
//! carried by glyph as well as colour (double border for the current node,
//! heavy for visited nodes and taken edges, dashes for the pending edge),
//! so it reads in any theme and on a monochrome terminal.
//!
//! Why not a layout crate: `ascii-dag`, the maintained one, lays this
//! table out with the fallback after the composer, far wider or taller
//! than a pane, renders strings rather than styled cells, and needs a
//! newer compiler than this crate supports. The table is small and its
//! shape is known (a main line, a few side nodes), so a two-row layered
//! layout with channel-routed edges is short and fits the pane.

mod glyph;
pub mod layout;
pub mod paint;
mod route;

pub use layout::{LayoutError, Names, layout};
pub use paint::{Live, paint};

use crate::engine::graph::EDGES;
use crate::vocab::graph::NodeId;
use std::sync::OnceLock;

/// A direction out of a cell; also the index of a line cell's arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Up = 0,
    Down = 1,
    Left = 2,
    Right = 3,
}

/// A run of cells that a count or marker may be written over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub x: u16,
    pub y: u16,
    pub len: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A technical retry: marked on its node's outer border.
    SelfLoop,
    /// Neighbours on one row: a horizontal arrow between the boxes.
    Straight,
    /// Out through a top or bottom port, along a track, in through an
    /// arrowhead.
    Routed,
}

/// One drawn edge: every table row from `from` to `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub from: NodeId,
    pub to: NodeId,
    pub shape: Shape,
    /// Where its taken count (or, for a self-loop, its marker) goes.
    pub count: Slot,
    /// The cell its reason label is placed near.
    pub anchor: (u16, u16),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeBox {
    pub node: NodeId,
    pub label: &'static str,
    pub x: u16,
    pub y: u16,
    pub w: u16,
    pub h: u16,
    /// Where the visit count goes (the border facing away from the other
    /// row of boxes).
    pub visits: Slot,
}

/// What a line cell holds; `usize`s index [`Diagram::links`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ink {
    /// A stroke: for each arm (indexed by [`Dir`]) the links running
    /// along it. Several links share the cells of a bus.
    Line { arms: [Vec<usize>; 4] },
    /// A border cell of box `node` (an index into [`Diagram::boxes`])
    /// where a link leaves toward `dir`.
    Port {
        node: usize,
        dir: Dir,
        links: Vec<usize>,
    },
    /// An arrowhead on the border of box `node` where links enter,
    /// pointing `dir`.
    Head {
        node: usize,
        dir: Dir,
        links: Vec<usize>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagram {
    pub width: u16,
    pub height: u16,
    pub boxes: Vec<NodeBox>,
    pub links: Vec<Link>,
    /// Line cells in reading order.
    pub ink: Vec<(u16, u16, Ink)>,
    /// Row-major: the cell holds nothing (labels may go there).
    blank: Vec<bool>,
}

impl Diagram {
    fn new(
        width: u16,
        height: u16,
        boxes: Vec<NodeBox>,
        links: Vec<Link>,
        ink: Vec<(u16, u16, Ink)>,
    ) -> Diagram {
        let (w, h) = (usize::from(width), usize::from(height));
        let mut blank = vec![true; w * h];
        let mut fill = |x: usize, y: usize| {
            if x < w
                && y < h
                && let Some(c) = blank.get_mut(y * w + x)
            {
                *c = false;
            }
        };
        for b in &boxes {
            for y in b.y..b.y.saturating_add(b.h) {
                for x in b.x..b.x.saturating_add(b.w) {
                    fill(usize::from(x), usize::from(y));
                }
            }
        }
        for (x, y, _) in &ink {
            fill(usize::from(*x), usize::from(*y));
        }
        let mut d = Diagram {
            width,
            height,
            boxes,
            links,
            ink,
            blank,
        };
        // Counts may only replace plain strokes, never a corner, a port or
        // an arrowhead.
        for i in 0..d.links.len() {
            d.links[i].count = d.plain_run(d.links[i].count);
        }
        for i in 0..d.boxes.len() {
            d.boxes[i].visits = d.plain_run(d.boxes[i].visits);
        }
        d
    }

    fn ink_at(&self, x: u16, y: u16) -> Option<&Ink> {
        self.ink
            .binary_search_by_key(&(y, x), |(ix, iy, _)| (*iy, *ix))
            .ok()
            .and_then(|i| self.ink.get(i))
            .map(|(_, _, ink)| ink)
    }

    /// A horizontal stroke with nothing joining it: a box's top or bottom
    /// border between its corners, or a line running left to right.
    fn is_plain(&self, x: u16, y: u16) -> bool {
        match self.ink_at(x, y) {
            Some(Ink::Line { arms }) => {
                arms[0].is_empty()
                    && arms[1].is_empty()
                    && !arms[2].is_empty()
                    && !arms[3].is_empty()
            }
            Some(_) => false,
            None => self
                .boxes
                .iter()
                .any(|b| (y == b.y || y + 1 == b.y + b.h) && x > b.x && x + 1 < b.x + b.w),
        }
    }

    /// `slot` cut short at its first cell that is not plain.
    fn plain_run(&self, slot: Slot) -> Slot {
        let len = (0..slot.len)
            .take_while(|i| self.is_plain(slot.x.saturating_add(*i), slot.y))
            .count();
        Slot {
            len: u16::try_from(len).unwrap_or(0),
            ..slot
        }
    }

    pub fn is_blank(&self, x: u16, y: u16) -> bool {
        x < self.width
            && y < self.height
            && self
                .blank
                .get(usize::from(y) * usize::from(self.width) + usize::from(x))
                .copied()
                .unwrap_or(false)
    }

    pub fn link(&self, from: NodeId, to: NodeId) -> Option<usize> {
        self.links.iter().position(|l| l.from == from && l.to == to)
    }

    /// The diagram as plain text, no run state: what `diagraph graph
    /// --text` prints and the pane shows before a run.
    pub fn to_text(&self) -> String {
        paint::plain_text(self)
    }
}

/// The shipped routing table's diagram, laid out on first use.
pub fn shipped(names: Names) -> Result<&'static Diagram, &'static LayoutError> {
    static FULL: OnceLock<Result<Diagram, LayoutError>> = OnceLock::new();
    static SHORT: OnceLock<Result<Diagram, LayoutError>> = OnceLock::new();
    let cell = match names {
        Names::Full => &FULL,
        Names::Short => &SHORT,
    };
    cell.get_or_init(|| layout(EDGES, names)).as_ref()
}

//! Box-drawing glyphs chosen from what meets in a cell: each of the four
//! arms (up, down, left, right) is absent, light or heavy, and Unicode has
//! a character for every such combination. Dashed and double strokes exist
//! only for some shapes, so they are asked for separately.

/// How heavy a stroke is. Idle lines are light; a taken edge, a visited
/// node's border and a pending edge are heavy, so state shows without
/// colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Weight {
    #[default]
    None,
    Light,
    Heavy,
}

/// The four arms of a cell, in the order the table below is indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Arms {
    pub up: Weight,
    pub down: Weight,
    pub left: Weight,
    pub right: Weight,
}

/// Every light/heavy combination of (up, down, left, right), indexed by
/// `up*27 + down*9 + left*3 + right` with None=0, Light=1, Heavy=2.
/// Generated from the Unicode character names of U+2500..U+257F.
const TABLE: [char; 81] = [
    ' ', '╶', '╺', '╴', '─', '╼', '╸', '╾', '━', '╷', '┌', '┍', '┐', '┬', '┮', '┑', '┭', '┯', '╻',
    '┎', '┏', '┒', '┰', '┲', '┓', '┱', '┳', '╵', '└', '┕', '┘', '┴', '┶', '┙', '┵', '┷', '│', '├',
    '┝', '┤', '┼', '┾', '┥', '┽', '┿', '╽', '┟', '┢', '┧', '╁', '╆', '┪', '╅', '╈', '╹', '┖', '┗',
    '┚', '┸', '┺', '┛', '┹', '┻', '╿', '┞', '┡', '┦', '╀', '╄', '┩', '╃', '╇', '┃', '┠', '┣', '┨',
    '╂', '╊', '┫', '╉', '╋',
];

impl Arms {
    /// The glyph for these arms; `dashed` draws a straight run (only two
    /// opposite heavy or light arms) as a dashed line, the mark of an edge
    /// the engine is about to take.
    pub fn glyph(self, dashed: bool) -> char {
        use Weight::*;
        if dashed {
            match (self.up, self.down, self.left, self.right) {
                (None, None, l, r) if l != None && r != None => return '┅',
                (u, d, None, None) if u != None && d != None => return '┇',
                _ => {}
            }
        }
        let i = self.up as usize * 27 + self.down as usize * 9 + self.left as usize * 3;
        TABLE.get(i + self.right as usize).copied().unwrap_or(' ')
    }
}

/// The corners and sides of a node box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Border {
    Light,
    Heavy,
    /// The current node.
    Double,
}

impl Border {
    /// (top-left, top-right, bottom-left, bottom-right, horizontal, vertical)
    pub fn parts(self) -> [char; 6] {
        match self {
            Border::Light => ['┌', '┐', '└', '┘', '─', '│'],
            Border::Heavy => ['┏', '┓', '┗', '┛', '━', '┃'],
            Border::Double => ['╔', '╗', '╚', '╝', '═', '║'],
        }
    }

    /// A border cell where a line leaves the box: the side's stroke plus
    /// one arm pointing out, `out` heavy or light. Double borders have no
    /// heavy joins, so a line leaving the current node is drawn light at
    /// that one cell.
    pub fn port(self, out: crate::tui::view::diagram::Dir, weight: Weight) -> char {
        use crate::tui::view::diagram::Dir;
        if self == Border::Double {
            return match out {
                Dir::Down => '╤',
                Dir::Up => '╧',
                Dir::Right => '╟',
                Dir::Left => '╢',
            };
        }
        let side = if self == Border::Heavy {
            Weight::Heavy
        } else {
            Weight::Light
        };
        let mut arms = Arms::default();
        match out {
            Dir::Down | Dir::Up => {
                arms.left = side;
                arms.right = side;
            }
            Dir::Left | Dir::Right => {
                arms.up = side;
                arms.down = side;
            }
        }
        match out {
            Dir::Up => arms.up = weight,
            Dir::Down => arms.down = weight,
            Dir::Left => arms.left = weight,
            Dir::Right => arms.right = weight,
        }
        arms.glyph(false)
    }
}

/// An arrowhead pointing `dir`.
pub fn head(dir: crate::tui::view::diagram::Dir) -> char {
    use crate::tui::view::diagram::Dir;
    match dir {
        Dir::Up => '▲',
        Dir::Down => '▼',
        Dir::Left => '◀',
        Dir::Right => '▶',
    }
}

#[cfg(test)]
mod tests {
    use super::Weight::{Heavy as H, Light as L, None as N};
    use super::*;

    fn arms(up: Weight, down: Weight, left: Weight, right: Weight) -> char {
        Arms {
            up,
            down,
            left,
            right,
        }
        .glyph(false)
    }

    #[test]
    fn table_follows_the_unicode_names() {
        assert_eq!(arms(N, N, N, N), ' ');
        assert_eq!(arms(N, N, L, L), '─');
        assert_eq!(arms(N, N, H, H), '━');
        assert_eq!(arms(L, L, N, N), '│');
        assert_eq!(arms(N, L, N, L), '┌');
        assert_eq!(arms(H, N, H, N), '┛');
        assert_eq!(arms(L, L, H, H), '┿');
        assert_eq!(arms(H, H, L, L), '╂');
        assert_eq!(arms(H, L, N, L), '┞');
        assert_eq!(arms(L, N, L, L), '┴');
        assert_eq!(arms(H, H, H, H), '╋');
        assert_eq!(arms(N, N, L, H), '╼');
    }

    #[test]
    fn dashes_only_on_straight_runs() {
        let run = Arms {
            left: H,
            right: H,
            ..Arms::default()
        };
        assert_eq!(run.glyph(true), '┅');
        let corner = Arms {
            down: H,
            right: H,
            ..Arms::default()
        };
        assert_eq!(corner.glyph(true), '┏');
    }

    #[test]
    fn ports_join_the_border() {
        use crate::tui::view::diagram::Dir;
        assert_eq!(Border::Light.port(Dir::Down, L), '┬');
        assert_eq!(Border::Light.port(Dir::Down, H), '┰');
        assert_eq!(Border::Heavy.port(Dir::Up, H), '┻');
        assert_eq!(Border::Heavy.port(Dir::Right, L), '┠');
        assert_eq!(Border::Double.port(Dir::Down, H), '╤');
    }
}

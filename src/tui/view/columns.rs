//! Column widths that follow the content. Each column says how wide its
//! content is (`want`, the header included), how narrow it may get
//! (`min`) and whether it takes the room left over (`fill`, a weight).
//! Identifiers keep their full width whenever the table has room; only
//! when the fixed columns together do not fit are they narrowed, the
//! widest first, and a narrowed identifier is then cut in the middle by
//! its cell (`crate::text::truncate_middle`).

use crate::text::display_width;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Col {
    pub want: u16,
    pub min: u16,
    /// 0: the column is as wide as its content; more: it shares the room
    /// left over with the other fill columns, by weight.
    pub fill: u16,
    /// 0: always shown; more: left out when even the minimum widths do
    /// not fit, the highest first.
    pub drop: u8,
}

impl Col {
    /// A column as wide as its widest value (and its header), never cut
    /// below `min`.
    pub fn fit(header: &str, widest: usize, min: u16) -> Col {
        let want = widest.max(display_width(header)).min(u16::MAX.into()) as u16;
        Col {
            want,
            min: min.min(want),
            fill: 0,
            drop: 0,
        }
    }

    /// The column may be left out of a table too narrow for it; higher
    /// `priority` goes first.
    pub fn droppable(self, priority: u8) -> Col {
        Col {
            drop: priority,
            ..self
        }
    }

    /// A column of free text that takes what is left, at least `min`.
    pub fn fill(min: u16, weight: u16) -> Col {
        Col {
            want: min,
            min,
            fill: weight.max(1),
            drop: 0,
        }
    }
}

/// The widest display width among `items`.
pub fn widest<'a>(items: impl IntoIterator<Item = &'a str>) -> usize {
    items.into_iter().map(display_width).max().unwrap_or(0)
}

/// Digits of the widest number among `ids`.
pub fn widest_number(ids: impl IntoIterator<Item = i64>) -> usize {
    ids.into_iter()
        .map(|i| i.to_string().len())
        .max()
        .unwrap_or(1)
}

/// Widths for `cols` in a table `width` wide with `spacing` between
/// columns. Fixed columns get what they want while everything fits; fill
/// columns share the rest. Short of room, fill columns go down to their
/// minimum first, then fixed columns are narrowed one column at a time,
/// always the one furthest above its minimum.
pub fn fit(width: u16, spacing: u16, cols: &[Col]) -> Vec<u16> {
    let gaps = spacing.saturating_mul(cols.len().saturating_sub(1) as u16);
    let avail = i32::from(width.saturating_sub(gaps));
    let mut out: Vec<u16> = cols
        .iter()
        .map(|c| if c.fill > 0 { c.min } else { c.want })
        .collect();
    let total: i32 = out.iter().map(|w| i32::from(*w)).sum();
    if total <= avail {
        let extra = avail - total;
        let weights: i32 = cols.iter().map(|c| i32::from(c.fill)).sum();
        if weights > 0 {
            let mut given = 0;
            let last_fill = cols.iter().rposition(|c| c.fill > 0);
            for (i, c) in cols.iter().enumerate().filter(|(_, c)| c.fill > 0) {
                let share = if Some(i) == last_fill {
                    extra - given
                } else {
                    extra * i32::from(c.fill) / weights
                };
                given += share;
                out[i] = out[i].saturating_add(share as u16);
            }
        }
        return out;
    }
    let mut deficit = total - avail;
    while deficit > 0 {
        let slack = |i: usize| i32::from(out[i]) - i32::from(cols[i].min);
        let Some(i) = (0..cols.len())
            .filter(|i| cols[*i].fill == 0 && slack(*i) > 0)
            .max_by_key(|i| (slack(*i), std::cmp::Reverse(*i)))
        else {
            break;
        };
        out[i] -= 1;
        deficit -= 1;
    }
    // Still too wide: leave out what may be left out, least needed first.
    while deficit > 0 {
        let Some(i) = (0..cols.len())
            .filter(|i| cols[*i].drop > 0 && out[*i] > 0)
            .max_by_key(|i| (cols[*i].drop, *i))
        else {
            break;
        };
        deficit -= i32::from(out[i]) + i32::from(spacing);
        out[i] = 0;
    }
    // Still too wide: the fill columns give up what they have left.
    for (i, c) in cols.iter().enumerate() {
        if deficit <= 0 {
            break;
        }
        if c.fill > 0 {
            let take = deficit.min(i32::from(out[i]).saturating_sub(1)).max(0);
            out[i] -= take as u16;
            deficit -= take;
        }
    }
    out
}

/// `items` without those of columns left out (width 0).
pub fn shown<T>(widths: &[u16], items: Vec<T>) -> Vec<T> {
    items
        .into_iter()
        .zip(widths)
        .filter(|(_, w)| **w > 0)
        .map(|(item, _)| item)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_fits_and_fill_takes_the_rest() {
        let cols = [Col::fit("id", 9, 4), Col::fill(10, 1), Col::fit("st", 9, 9)];
        let w = fit(40, 1, &cols);
        assert_eq!(w, vec![9, 20, 9]);
    }

    #[test]
    fn short_of_room_fill_goes_to_min_then_widest_fixed_shrinks() {
        let cols = [
            Col::fit("id", 9, 5),
            Col::fit("rule", 24, 12),
            Col::fill(8, 1),
        ];
        // 9 + 24 + 8 + 2 gaps = 43; at 35 the rule loses 8.
        assert_eq!(fit(35, 1, &cols), vec![9, 16, 8]);
        // Both shrink once their slack is level.
        let w = fit(28, 1, &cols);
        assert_eq!(w[2], 8);
        assert!(w[0] >= 5 && w[1] >= 12, "{w:?}");
        assert_eq!(w.iter().sum::<u16>() + 2, 28);
    }

    #[test]
    fn far_too_narrow_never_underflows() {
        let cols = [Col::fit("id", 9, 5), Col::fill(8, 1)];
        let w = fit(3, 1, &cols);
        assert!(w.iter().all(|w| *w >= 1), "{w:?}");
    }

    #[test]
    fn droppable_columns_go_before_anything_is_cut_below_its_minimum() {
        let cols = [
            Col::fit("status", 9, 9),
            Col::fit("tokens", 6, 5).droppable(2),
            Col::fit("session", 8, 6).droppable(1),
            Col::fill(10, 1),
        ];
        // 9 + 5 + 6 + 10 + 3 gaps = 33 at the minimum; at 30 tokens goes.
        let w = fit(30, 1, &cols);
        assert_eq!(w[0], 9);
        assert_eq!(w[1], 0);
        assert!(w[2] >= 6, "{w:?}");
        assert_eq!(shown(&w, vec!["a", "b", "c", "d"]), ["a", "c", "d"]);
        // At 24 the session goes too; the status is never cut.
        let w = fit(24, 1, &cols);
        assert_eq!((w[0], w[1], w[2]), (9, 0, 0));
    }

    #[test]
    fn weights_split_the_rest() {
        let cols = [Col::fill(0, 1), Col::fill(0, 3)];
        assert_eq!(fit(41, 1, &cols), vec![10, 30]);
    }
}

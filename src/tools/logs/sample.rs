//! Exact figures over every matching line, and the sample that is cited.
//!
//! A query may match millions of lines; the model is shown at most
//! `limit`. [`Sampler`] sees every match once, in any order, with bounded
//! memory: it counts them, keeps the first and last time, counts each
//! group of lines like this (service, level and [`crate::text::pattern`]) with its
//! own first and last time, and keeps the newest line of each group plus
//! the newest `limit` lines overall. The sample is the newest line of each
//! group (newest groups first), filled up with the newest lines; so one
//! flooding pattern cannot hide every other one, and counts never depend
//! on what was sampled.

use crate::vocab::buckets::TimeBuckets;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::Hash;

/// Groups tracked per query; lines of further groups are still counted in
/// the totals, but their lines carry no group figures.
pub const MAX_GROUPS: usize = 50_000;

const UNTRACKED: u32 = u32::MAX;

/// How many lines of one group matched, and when the first and last were.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupStat {
    pub count: u64,
    /// Microseconds since the epoch.
    pub first: i64,
    pub last: i64,
}

struct Group {
    stat: GroupStat,
    /// (time, id) of the newest line of the group.
    newest: (i64, u64),
}

pub struct Sampler<K> {
    limit: usize,
    total: u64,
    first: Option<i64>,
    last: Option<i64>,
    index: HashMap<K, u32>,
    groups: Vec<Group>,
    /// The newest `limit` lines: (time, id, group); a min-heap on time.
    newest: BinaryHeap<Reverse<(i64, u64, u32)>>,
    /// Every line counted per time bucket, when the caller gave a grid.
    buckets: Option<TimeBuckets>,
}

/// One sampled line: the caller's id, its time, and its group's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Picked {
    pub id: u64,
    pub ts: i64,
    /// Which group (an index of this sample), and its figures; `None` for
    /// a line of a group past [`MAX_GROUPS`].
    pub group: Option<(u32, GroupStat)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    pub total: u64,
    pub first: Option<i64>,
    pub last: Option<i64>,
    /// Oldest first.
    pub picked: Vec<Picked>,
    /// Every matching line per time bucket, when counted.
    pub buckets: Option<TimeBuckets>,
}

impl<K: Hash + Eq> Sampler<K> {
    pub fn new(limit: usize) -> Sampler<K> {
        Sampler {
            limit: limit.max(1),
            total: 0,
            first: None,
            last: None,
            index: HashMap::new(),
            groups: Vec::new(),
            newest: BinaryHeap::new(),
            buckets: None,
        }
    }

    /// Also counts every line per bucket of `grid` (a line outside it is
    /// counted in the totals only).
    pub fn with_buckets(mut self, grid: TimeBuckets) -> Sampler<K> {
        self.buckets = Some(grid);
        self
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// One matching line: its time (µs), the caller's id for it, and the
    /// key of its group (`None`: a line whose group is not known).
    pub fn add(&mut self, ts: i64, id: u64, key: Option<K>) {
        self.total += 1;
        if let Some(b) = &mut self.buckets {
            b.add(ts);
        }
        self.first = Some(self.first.map_or(ts, |f| f.min(ts)));
        self.last = Some(self.last.map_or(ts, |l| l.max(ts)));
        let g = match key.map(|k| (self.index.get(&k).copied(), k)) {
            None => UNTRACKED,
            Some((Some(g), _)) => g,
            Some((None, key)) if self.groups.len() < MAX_GROUPS => {
                let g = u32::try_from(self.groups.len()).unwrap_or(UNTRACKED);
                self.groups.push(Group {
                    stat: GroupStat {
                        count: 0,
                        first: ts,
                        last: ts,
                    },
                    newest: (ts, id),
                });
                self.index.insert(key, g);
                g
            }
            Some((None, _)) => UNTRACKED,
        };
        if let Some(group) = self.groups.get_mut(g as usize) {
            group.stat.count += 1;
            group.stat.first = group.stat.first.min(ts);
            group.stat.last = group.stat.last.max(ts);
            if (ts, id) > group.newest {
                group.newest = (ts, id);
            }
        }
        self.newest.push(Reverse((ts, id, g)));
        if self.newest.len() > self.limit {
            self.newest.pop();
        }
    }

    pub fn finish(self) -> Sample {
        let mut by_recency: Vec<(i64, u64, u32)> = self
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| (g.newest.0, g.newest.1, i as u32))
            .collect();
        by_recency.sort_unstable_by(|a, b| b.cmp(a));
        let mut chosen: Vec<(i64, u64, u32)> = by_recency.into_iter().take(self.limit).collect();
        let mut rest: Vec<(i64, u64, u32)> = self.newest.into_iter().map(|r| r.0).collect();
        rest.sort_unstable_by(|a, b| b.cmp(a));
        for item in rest {
            if chosen.len() >= self.limit {
                break;
            }
            if !chosen.iter().any(|c| c.1 == item.1) {
                chosen.push(item);
            }
        }
        chosen.sort_unstable();
        let picked = chosen
            .into_iter()
            .map(|(ts, id, g)| Picked {
                id,
                ts,
                group: self.groups.get(g as usize).map(|x| (g, x.stat)),
            })
            .collect();
        Sample {
            total: self.total,
            first: self.first,
            last: self.last,
            picked,
            buckets: self.buckets,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_cover_every_line_and_every_group_is_sampled() {
        let mut s = Sampler::new(3);
        // A flood of one pattern, and one older line of another.
        s.add(5, 100, Some("other"));
        for i in 0..1000 {
            s.add(10 + i, i as u64, Some("flood"));
        }
        let out = s.finish();
        assert_eq!(out.total, 1001);
        assert_eq!((out.first, out.last), (Some(5), Some(1009)));
        let ids: Vec<u64> = out.picked.iter().map(|p| p.id).collect();
        assert_eq!(ids, [100, 998, 999], "the other pattern is not drowned");
        assert_eq!(
            out.picked[2].group.map(|g| g.1),
            Some(GroupStat {
                count: 1000,
                first: 10,
                last: 1009
            })
        );
        assert_eq!(out.picked[0].group.map(|g| g.1.count), Some(1));
    }

    #[test]
    fn order_of_arrival_does_not_matter() {
        let mut a = Sampler::new(2);
        let mut b = Sampler::new(2);
        let lines: Vec<(i64, u64, &str)> = (0..50)
            .map(|i| (i * 7 % 50, i as u64, ["x", "y"][i as usize % 2]))
            .collect();
        for (ts, id, k) in &lines {
            a.add(*ts, *id, Some(*k));
        }
        for (ts, id, k) in lines.iter().rev() {
            b.add(*ts, *id, Some(*k));
        }
        // Group ids are the order groups were first seen; all else is equal.
        let seen = |s: Sample| {
            let p: Vec<_> = s
                .picked
                .iter()
                .map(|p| (p.id, p.ts, p.group.map(|g| g.1)))
                .collect();
            (s.total, s.first, s.last, p)
        };
        assert_eq!(seen(a.finish()), seen(b.finish()));
    }
}

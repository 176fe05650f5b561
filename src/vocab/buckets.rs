//! Counts of records per time bucket: how many lines a log query matched
//! in each slice of its window, over every match (not the sample).
//!
//! A `query_logs` backend fills one [`TimeBuckets`] while it counts, and the
//! invocation records it (`RetrievalDetails::buckets`), so a timeline drawn
//! later from the stored run needs no source. Bucket `i` holds the records
//! with `start + i·step <= ts < start + (i+1)·step`.
//!
//! Two grids: [`TimeBuckets::covering`] puts round steps (1 s, 5 min, 1 h…)
//! on epoch multiples over a span, for a backend that counts only its
//! matches whatever the grid (the pack and file tables, Elasticsearch's
//! `date_histogram` within the query's filter); [`TimeBuckets::tiling`]
//! cuts a window into equal parts that end exactly at its end, for a
//! backend whose per-bucket count is not bounded by the window (Loki's
//! `count_over_time`), so no bucket reaches past what was asked.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Buckets in one grid, at most.
pub const MAX_BUCKETS: usize = 120;

const MS: i64 = 1;
const S: i64 = 1000 * MS;
const MIN: i64 = 60 * S;
const H: i64 = 60 * MIN;
const DAY: i64 = 24 * H;
/// Round steps, smallest first.
const STEPS_MS: [i64; 27] = [
    MS,
    2 * MS,
    5 * MS,
    10 * MS,
    20 * MS,
    50 * MS,
    100 * MS,
    200 * MS,
    500 * MS,
    S,
    2 * S,
    5 * S,
    10 * S,
    15 * S,
    30 * S,
    MIN,
    2 * MIN,
    5 * MIN,
    10 * MIN,
    15 * MIN,
    30 * MIN,
    H,
    2 * H,
    3 * H,
    6 * H,
    12 * H,
    DAY,
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeBuckets {
    /// Where bucket 0 starts.
    pub start: DateTime<Utc>,
    /// The width of every bucket, in milliseconds (at least 1).
    pub step_ms: i64,
    pub counts: Vec<u64>,
}

impl TimeBuckets {
    /// Round steps on epoch multiples, from the bucket holding `first` to
    /// the one holding `last` (µs since the epoch, both inclusive).
    pub fn covering(first_us: i64, last_us: i64) -> TimeBuckets {
        let (first_ms, last_ms) = (
            first_us.min(last_us).div_euclid(1000),
            first_us.max(last_us).div_euclid(1000),
        );
        let span = last_ms.saturating_sub(first_ms).saturating_add(1);
        // The finest round step that fits: the most detail a grid holds.
        let fits = |step: i64| {
            let a = first_ms.div_euclid(step);
            let b = last_ms.div_euclid(step);
            b.saturating_sub(a).saturating_add(1)
        };
        let step = STEPS_MS
            .iter()
            .copied()
            .find(|s| fits(*s) <= MAX_BUCKETS as i64)
            .unwrap_or_else(|| {
                // Longer than the ladder: whole days, as many as needed.
                let days = span.div_euclid(DAY * (MAX_BUCKETS as i64 - 1)) + 1;
                days * DAY
            });
        let start_ms = first_ms.div_euclid(step) * step;
        let n = usize::try_from(fits(step))
            .unwrap_or(1)
            .clamp(1, MAX_BUCKETS);
        TimeBuckets {
            start: ms_time(start_ms),
            step_ms: step,
            counts: vec![0; n],
        }
    }

    /// Equal buckets from `since` that end exactly at `until` (ms, whole
    /// milliseconds of the window; a window of under one millisecond is
    /// one bucket of 1 ms): the most buckets up to [`MAX_BUCKETS`] whose
    /// width is a whole number of milliseconds.
    pub fn tiling(since: DateTime<Utc>, until: DateTime<Utc>) -> TimeBuckets {
        let span = (until - since).num_milliseconds().max(1);
        let n = (1..=MAX_BUCKETS as i64)
            .rev()
            .find(|n| span % n == 0)
            .unwrap_or(1);
        TimeBuckets {
            start: since,
            step_ms: span / n,
            counts: vec![0; usize::try_from(n).unwrap_or(1)],
        }
    }

    pub fn start_us(&self) -> i64 {
        self.start.timestamp_micros()
    }

    pub fn step_us(&self) -> i64 {
        self.step_ms.max(1).saturating_mul(1000)
    }

    /// The end of the last bucket (exclusive), µs.
    pub fn end_us(&self) -> i64 {
        self.start_us()
            .saturating_add(self.step_us().saturating_mul(self.counts.len() as i64))
    }

    /// The bucket a time falls in, if any.
    pub fn index_of(&self, ts_us: i64) -> Option<usize> {
        if ts_us < self.start_us() {
            return None;
        }
        let i = (ts_us - self.start_us()) / self.step_us();
        usize::try_from(i).ok().filter(|i| *i < self.counts.len())
    }

    /// Counts one record; a time outside the grid is not counted and
    /// says so (false).
    pub fn add(&mut self, ts_us: i64) -> bool {
        match self.index_of(ts_us).and_then(|i| self.counts.get_mut(i)) {
            Some(c) => {
                *c += 1;
                true
            }
            None => false,
        }
    }

    /// Where bucket `i` starts, µs.
    pub fn bucket_start_us(&self, i: usize) -> i64 {
        self.start_us()
            .saturating_add(self.step_us().saturating_mul(i as i64))
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Whether the buckets are usable as stored: a positive step, at most
    /// [`MAX_BUCKETS`] of them. A stored row is read back through this, so
    /// a damaged one is left out rather than drawn.
    pub fn is_sound(&self) -> bool {
        self.step_ms > 0 && !self.counts.is_empty() && self.counts.len() <= MAX_BUCKETS
    }
}

fn ms_time(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or(DateTime::UNIX_EPOCH)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn covering_uses_a_round_step_on_its_multiples() {
        let a = t("2026-03-10T13:47:12Z").timestamp_micros();
        let b = t("2026-03-10T14:20:00Z").timestamp_micros();
        let g = TimeBuckets::covering(a, b);
        assert_eq!(g.step_ms, 30 * S);
        assert_eq!(g.start, t("2026-03-10T13:47:00Z"));
        assert_eq!(g.counts.len(), 67);
        assert_eq!(g.index_of(a), Some(0));
        assert_eq!(g.index_of(b), Some(66));
        assert!(g.end_us() > b);
    }

    #[test]
    fn covering_holds_any_span_in_at_most_max_buckets() {
        for (a, b) in [
            (0, 0),
            (-5, 5),
            (0, 1_000_000_000_000_000),
            (1_700_000_000_000_000, 1_700_000_000_000_001),
        ] {
            let g = TimeBuckets::covering(a, b);
            assert!(g.is_sound(), "{a} {b}: {g:?}");
            assert!(
                g.index_of(a).is_some() && g.index_of(b).is_some(),
                "{a} {b}"
            );
        }
    }

    #[test]
    fn tiling_ends_at_the_window_end() {
        let since = Utc.with_ymd_and_hms(2026, 3, 10, 13, 0, 0).unwrap();
        let until = since + chrono::Duration::minutes(90);
        let g = TimeBuckets::tiling(since, until);
        assert_eq!(g.counts.len(), 120);
        assert_eq!(g.end_us(), until.timestamp_micros());
        let odd = TimeBuckets::tiling(since, since + chrono::Duration::milliseconds(7919));
        assert_eq!(
            odd.end_us(),
            (since + chrono::Duration::milliseconds(7919)).timestamp_micros()
        );
    }
}

//! The evidence timeline: what a run's evidence says happened when, on one
//! time axis. Built only from what the run's tool invocations returned and
//! stored (their refs, recorded counts per time bucket and bodies), so a
//! replay, a rerun and a run read on another machine draw the same
//! picture; it never queries a source.
//!
//! Rows: each alert as a bar over its active window (its start marked),
//! each log query with what it matched per time bucket (and the pattern
//! and level of the line it stands for, the cited one first), each metric
//! series (`$.series[i]`) with its values and unit. Markers: the likely
//! cause (the earliest evidence of a passing root-cause binding) and the
//! alert start. Rows about a service the question names come first.
//!
//! [`Timeline::cells`] cuts a row into display columns; the text picture
//! (`text`), `diagraph timeline` and the workbench's Timeline tab all draw
//! those cells, so they cannot disagree.

mod build;
mod refs;
pub mod text;

use crate::vocab::buckets::TimeBuckets;
use chrono::{DateTime, Utc};
use serde::Serialize;

pub use build::{Evidence, TimelineInput};

/// What a timeline is drawn from, whoever read the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeline {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    /// Where the window came from.
    pub window: WindowSource,
    pub rows: Vec<Row>,
    pub markers: Vec<Marker>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowSource {
    /// The window the question names.
    Question,
    /// The alerts' active windows, with a margin.
    Alerts,
    /// All evidence with a time, with a margin (no alert was recorded).
    Evidence,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// One line about the row: what it is, made from code-made ref text.
    pub label: String,
    pub service: Option<String>,
    /// The row is about a service the question names.
    pub subject: bool,
    /// The invocation whose result it is drawn from.
    pub invocation_id: i64,
    /// Its refs (`$.alerts[2]`, `$.logs[0]`…), the cited ones first.
    pub refs: Vec<String>,
    /// A passing binding of the run cites one of its refs.
    pub cited: bool,
    pub kind: RowKind,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RowKind {
    Alert {
        state: AlertState,
        start: DateTime<Utc>,
        /// The end of its active window: the evidence's "now" for an
        /// alert still active; `None` when not recorded (a resolved
        /// alert states no end).
        end: Option<DateTime<Utc>>,
    },
    Logs {
        level: Option<String>,
        /// The masked message of the line the row stands for.
        pattern: Option<String>,
        /// Matching lines per time bucket, as recorded; `None` for a
        /// result recorded without them.
        buckets: Option<TimeBuckets>,
        total: u64,
    },
    Series {
        unit: String,
        points: Vec<(DateTime<Utc>, f64)>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertState {
    Firing,
    Pending,
    Resolved,
}

impl AlertState {
    pub fn as_str(self) -> &'static str {
        match self {
            AlertState::Firing => "firing",
            AlertState::Pending => "pending",
            AlertState::Resolved => "resolved",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Marker {
    pub kind: MarkerKind,
    pub at: DateTime<Utc>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkerKind {
    LikelyCause,
    AlertStart,
}

impl MarkerKind {
    /// The letter that marks it, with or without colour.
    pub fn letter(self) -> char {
        match self {
            MarkerKind::LikelyCause => 'C',
            MarkerKind::AlertStart => 'A',
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MarkerKind::LikelyCause => "likely cause",
            MarkerKind::AlertStart => "alert start",
        }
    }
}

/// One display column of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    Empty,
    /// A sparkline level, 1 (least) to 8 (the row's most).
    Level(u8),
    /// Inside an alert's active window.
    Bar(AlertState),
    /// Where an alert's active window starts.
    Start(AlertState),
}

impl Timeline {
    pub fn build(input: &TimelineInput) -> Option<Timeline> {
        build::build(input)
    }

    /// A row cut into the axis' columns.
    pub fn cells(&self, row: &Row, axis: &Axis) -> Vec<Cell> {
        let cols = axis.cols;
        let mut out = vec![Cell::Empty; cols];
        match &row.kind {
            RowKind::Alert { state, start, end } => {
                let first = axis.column_of(*start);
                let from = first.unwrap_or(0);
                let before = start.timestamp_micros() < axis.start_us;
                let last = match end {
                    Some(e) if e.timestamp_micros() >= axis.end_us => Some(cols.saturating_sub(1)),
                    Some(e) => axis.column_of(*e),
                    None => None,
                };
                if let Some(last) = last.filter(|_| first.is_some() || before) {
                    for c in out.iter_mut().take(last + 1).skip(from) {
                        *c = Cell::Bar(*state);
                    }
                }
                if let Some(f) = first
                    && let Some(c) = out.get_mut(f)
                {
                    *c = Cell::Start(*state);
                }
            }
            RowKind::Logs {
                buckets: Some(b), ..
            } => {
                let weights = spread(b, axis);
                levels(&weights, &mut out);
            }
            RowKind::Logs { buckets: None, .. } => {}
            RowKind::Series { points, .. } => {
                let mut sum = vec![0.0f64; cols];
                let mut n = vec![0u32; cols];
                let min = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
                for (t, v) in points {
                    if let Some(c) = axis.column_of(*t) {
                        sum[c] += v;
                        n[c] += 1;
                    }
                }
                // Levels over the series' own range, the lowest value at 1.
                let weights: Vec<f64> = sum
                    .iter()
                    .zip(&n)
                    .map(|(s, n)| {
                        if *n == 0 {
                            0.0
                        } else {
                            s / f64::from(*n) - min + f64::EPSILON
                        }
                    })
                    .collect();
                levels(&weights, &mut out);
            }
        }
        out
    }

    /// What column `c` holds for a row, in words: the recorded counts of
    /// the buckets it overlaps, the alert's state, the values.
    pub fn readout(&self, row: &Row, c: usize, axis: &Axis) -> String {
        let (lo, hi) = axis.column_range(c);
        match &row.kind {
            RowKind::Alert { state, start, end } => {
                let s = start.timestamp_micros();
                let active = s < hi && end.is_none_or(|e| e.timestamp_micros() >= lo);
                match (active, end) {
                    (true, None) if *state == AlertState::Resolved => {
                        format!(
                            "{} since {} (end not recorded)",
                            state.as_str(),
                            hhmmss(*start)
                        )
                    }
                    (true, _) => format!("{} since {}", state.as_str(), hhmmss(*start)),
                    (false, _) if s >= hi => format!("not yet active (starts {})", hhmmss(*start)),
                    (false, _) => "no longer active".into(),
                }
            }
            RowKind::Logs {
                buckets: Some(b), ..
            } => {
                let hit: Vec<usize> = (0..b.counts.len())
                    .filter(|i| {
                        let blo = b.bucket_start_us(*i);
                        blo < hi && blo.saturating_add(b.step_us()) > lo
                    })
                    .collect();
                let (Some(first), Some(last)) = (hit.first(), hit.last()) else {
                    return "no query bucket here".into();
                };
                let n: u64 = hit.iter().filter_map(|i| b.counts.get(*i)).sum();
                let from = us_time(b.bucket_start_us(*first));
                let to = us_time(b.bucket_start_us(*last).saturating_add(b.step_us()));
                format!("{n} matching lines {}–{}", hhmmss(from), hhmmss(to))
            }
            RowKind::Logs { buckets: None, .. } => "no counts per time recorded".into(),
            RowKind::Series { unit, points } => {
                let here: Vec<f64> = points
                    .iter()
                    .filter(|(t, _)| {
                        let t = t.timestamp_micros();
                        t >= lo && t < hi
                    })
                    .map(|p| p.1)
                    .collect();
                match here.last() {
                    Some(v) => format!("{} {unit}", trim_float(*v)),
                    None => "no value here".into(),
                }
            }
        }
    }
}

/// Recorded counts spread over the columns by how much of each bucket a
/// column covers.
fn spread(b: &TimeBuckets, axis: &Axis) -> Vec<f64> {
    let mut w = vec![0.0f64; axis.cols];
    for (i, n) in b.counts.iter().enumerate().filter(|(_, n)| **n > 0) {
        let lo = b.bucket_start_us(i);
        let hi = lo.saturating_add(b.step_us());
        if hi <= axis.start_us || lo >= axis.end_us {
            continue;
        }
        // Only the columns the bucket overlaps.
        let first = axis.column_of_us(lo.max(axis.start_us)).unwrap_or(0);
        let last = axis
            .column_of_us((hi - 1).min(axis.end_us))
            .unwrap_or(axis.cols.saturating_sub(1));
        let upto = last.min(axis.cols.saturating_sub(1));
        for (c, slot) in w.iter_mut().enumerate().take(upto + 1).skip(first) {
            let (clo, chi) = axis.column_range(c);
            let overlap = hi.min(chi) - lo.max(clo);
            if overlap > 0 {
                *slot += *n as f64 * overlap as f64 / (hi - lo).max(1) as f64;
            }
        }
    }
    w
}

/// The time a view shows, cut into columns: the whole window, or a part
/// of it when zoomed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axis {
    pub start_us: i64,
    pub end_us: i64,
    pub cols: usize,
}

impl Axis {
    /// The whole window in `cols` columns.
    pub fn full(t: &Timeline, cols: usize) -> Axis {
        let start_us = t.start.timestamp_micros();
        Axis {
            start_us,
            end_us: t.end.timestamp_micros().max(start_us + 1),
            cols: cols.max(1),
        }
    }

    /// `1 / 2^zoom` of the window around `center_us`, kept inside it.
    pub fn zoomed(t: &Timeline, cols: usize, zoom: u8, center_us: i64) -> Axis {
        let full = Axis::full(t, cols);
        let span = (full.span() >> zoom.min(20))
            .max(full.cols as i64)
            .min(full.span());
        let start = (center_us - span / 2).clamp(full.start_us, full.end_us - span);
        Axis {
            start_us: start,
            end_us: start + span,
            cols: full.cols,
        }
    }

    pub fn span(&self) -> i64 {
        (self.end_us - self.start_us).max(1)
    }

    /// The time range `[from, to)` of column `c`, µs.
    pub fn column_range(&self, c: usize) -> (i64, i64) {
        let cols = self.cols.max(1) as i128;
        let span = i128::from(self.span());
        let s = i128::from(self.start_us);
        let at = |k: i128| i64::try_from(s + span * k / cols).unwrap_or(i64::MAX);
        (at(c as i128), at(c as i128 + 1))
    }

    /// The column a time falls in, if inside the axis.
    pub fn column_of(&self, t: DateTime<Utc>) -> Option<usize> {
        self.column_of_us(t.timestamp_micros())
    }

    pub fn column_of_us(&self, us: i64) -> Option<usize> {
        let off = us.checked_sub(self.start_us)?;
        if off < 0 || off > self.span() {
            return None;
        }
        let c = i128::from(off) * self.cols as i128 / i128::from(self.span());
        usize::try_from(c)
            .ok()
            .map(|c| c.min(self.cols.saturating_sub(1)))
    }
}

/// Sparkline levels 1..=8 of non-negative weights, over the row's most.
fn levels(weights: &[f64], out: &mut [Cell]) {
    let max = weights.iter().copied().fold(0.0f64, f64::max);
    if max <= 0.0 {
        return;
    }
    for (w, c) in weights.iter().zip(out.iter_mut()) {
        if *w > 0.0 {
            let l = (w / max * 8.0).ceil().clamp(1.0, 8.0) as u8;
            *c = Cell::Level(l);
        }
    }
}

pub fn us_time(us: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(us).unwrap_or(DateTime::UNIX_EPOCH)
}

/// `22:41:30`: times on the axis and in readouts (the window says the date).
pub fn hhmmss(t: DateTime<Utc>) -> String {
    t.format("%H:%M:%S").to_string()
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

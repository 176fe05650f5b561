//! The Timeline tab's state: which row is selected, where the time cursor
//! stands and how far the axis is zoomed, and the shown run's timeline,
//! built from what `RunView` folded (its invocations and latest
//! Gatekeeper result) once per change of those, not once per frame.
//!
//! The picture is `report::timeline`'s, the one `diagraph timeline` and
//! the export draw: live it fills as invocations land, in replay it is
//! the timeline of the events up to the cursor.

use crate::report::timeline::{Axis, Timeline, TimelineInput};
use crate::tui::state::RunView;
use std::cell::RefCell;
use std::sync::Arc;

/// Deepest zoom: 1/64 of the window.
pub const MAX_ZOOM: u8 = 6;

#[derive(Debug, Default)]
pub struct TimelineState {
    /// The selected row.
    pub row: usize,
    /// The first row drawn.
    pub top: usize,
    /// The cursor's time (µs); `None`: not placed yet (the alert start,
    /// else the window's middle).
    pub at_us: Option<i64>,
    /// Each level halves the span shown, around the cursor.
    pub zoom: u8,
    cache: RefCell<Cached>,
}

#[derive(Debug, Default)]
struct Cached {
    key: Option<(u64, usize, u32, usize)>,
    timeline: Option<Arc<Timeline>>,
}

impl TimelineState {
    /// The timeline of what `view` holds (`generation` tells runs apart),
    /// built again only when its invocations or Gatekeeper result changed.
    pub fn timeline(&self, generation: u64, view: &RunView) -> Option<Arc<Timeline>> {
        let key = (
            generation,
            view.invocations.len(),
            view.gatekeeper_rounds,
            view.question.len(),
        );
        let mut c = self.cache.borrow_mut();
        if c.key != Some(key) {
            let input = TimelineInput::from_invocations(
                &view.question,
                &view.invocations,
                view.gatekeeper.as_deref(),
            );
            c.timeline = Timeline::build(&input).map(Arc::new);
            c.key = Some(key);
        }
        c.timeline.clone()
    }

    /// Where the cursor stands in `t`.
    pub fn cursor_us(&self, t: &Timeline) -> i64 {
        let (s, e) = (t.start.timestamp_micros(), t.end.timestamp_micros());
        self.at_us
            .or_else(|| {
                t.markers
                    .iter()
                    .find(|m| m.kind == crate::report::timeline::MarkerKind::AlertStart)
                    .map(|m| m.at.timestamp_micros())
            })
            .unwrap_or(s + (e - s) / 2)
            .clamp(s, e.max(s))
    }

    /// The axis drawn in `cols` columns.
    pub fn axis(&self, t: &Timeline, cols: usize) -> Axis {
        Axis::zoomed(t, cols, self.zoom, self.cursor_us(t))
    }

    /// Moves the cursor by `columns` of the axis drawn in `cols`.
    pub fn step(&mut self, t: &Timeline, cols: usize, columns: i64) {
        let a = self.axis(t, cols);
        let width = (a.span() / a.cols.max(1) as i64).max(1);
        let at = self
            .cursor_us(t)
            .saturating_add(width.saturating_mul(columns));
        self.at_us = Some(at.clamp(t.start.timestamp_micros(), t.end.timestamp_micros()));
    }

    pub fn zoom_by(&mut self, t: &Timeline, deeper: bool) {
        // Zooming keeps the cursor where it is.
        self.at_us = Some(self.cursor_us(t));
        self.zoom = if deeper {
            (self.zoom + 1).min(MAX_ZOOM)
        } else {
            self.zoom.saturating_sub(1)
        };
    }

    /// Forgets the cursor, zoom and selection (another run is shown).
    pub fn reset(&mut self) {
        self.row = 0;
        self.top = 0;
        self.at_us = None;
        self.zoom = 0;
    }
}

//! A run's engine events as one stream, whoever runs it: live from this
//! server's registry, tailed from the database while another process runs
//! it, or replayed from the journal once it has ended. The server sends
//! the stream as Server-Sent Events; the TUI tails a run the same way.
//!
//! Positions are event sequence numbers (1-based, gapless per run): a
//! stream "after k" starts with event k+1, so a client that saw event k
//! resumes without gaps or repeats.

use super::live::LiveRun;
use crate::store::{Store, StoreError};
use crate::vocab::events::{EngineEvent, EventKind, ModelDelta};
use crate::vocab::run::RunStatus;
use futures::Stream;
use futures::stream::{self, StreamExt};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often a run of another process is read back from the database.
pub const TAIL_INTERVAL: Duration = Duration::from_millis(250);
/// Reads of an ended run waiting for its last event (2 s): its owner's
/// journal writes it within a fraction of a second.
const TAIL_GRACE_READS: u32 = 8;

/// One item of a run's event stream.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamItem {
    Event(Arc<EngineEvent>),
    /// A piece of the answer a model is streaming (live runs only; it has
    /// no position, and a resumed stream does not repeat it).
    Delta(Arc<ModelDelta>),
    /// The stream is complete: the run ended with this status (RUNNING
    /// only when the stream was stopped before the run ended).
    End(RunStatus),
}

/// Events of a run this server executes, after `after`, then its end.
pub fn live(run: Arc<LiveRun>, after: u32) -> impl Stream<Item = StreamItem> + Send {
    struct State {
        run: Arc<LiveRun>,
        rx: tokio::sync::watch::Receiver<u64>,
        next: usize,
        after: u32,
        done: bool,
        /// The streaming call whose pieces were sent, and how many.
        delta_step: u32,
        deltas_sent: usize,
    }
    let rx = run.subscribe();
    let state = State {
        run,
        rx,
        next: 0,
        after,
        done: false,
        delta_step: 0,
        deltas_sent: 0,
    };
    stream::unfold(state, |mut s| async move {
        loop {
            if s.done {
                return None;
            }
            // Mark the current version seen before reading, so a push
            // between the read and the wait still wakes us.
            s.rx.borrow_and_update();
            let (events, ended) = s.run.events_from(s.next);
            if !events.is_empty() {
                s.next += events.len();
                let after = s.after;
                let batch: Vec<StreamItem> = events
                    .into_iter()
                    .filter(|e| e.seq > after)
                    .map(StreamItem::Event)
                    .collect();
                if !batch.is_empty() {
                    return Some((stream::iter(batch), s));
                }
                continue;
            }
            let deltas = s.run.deltas_after(s.delta_step, s.deltas_sent);
            if let Some(first) = deltas.first() {
                if first.step_index != s.delta_step {
                    s.delta_step = first.step_index;
                    s.deltas_sent = 0;
                }
                s.deltas_sent += deltas.len();
                let batch: Vec<StreamItem> = deltas.into_iter().map(StreamItem::Delta).collect();
                return Some((stream::iter(batch), s));
            }
            if ended {
                s.done = true;
                let status = match s.run.result() {
                    Some(super::live::RunResult::Ended { status, .. }) => status,
                    _ => RunStatus::Failed,
                };
                return Some((stream::iter(vec![StreamItem::End(status)]), s));
            }
            if s.rx.changed().await.is_err() {
                return None;
            }
        }
    })
    .flatten()
}

/// Events of a stored run after `after`: the whole rest of the journal for
/// a run that has ended; for a run still RUNNING (in another process),
/// new events as they reach the database until it ends or `stop` fires.
pub fn stored(
    store: Arc<Store>,
    run_id: i64,
    after: u32,
    stop: CancellationToken,
) -> impl Stream<Item = Result<StreamItem, StoreError>> + Send {
    struct State {
        store: Arc<Store>,
        run_id: i64,
        after: u32,
        stop: CancellationToken,
        first: bool,
        done: bool,
        /// Reads left for the journal's tail once the row says the run
        /// ended (its owner writes the last events a moment later).
        grace: u32,
    }
    let state = State {
        store,
        run_id,
        after,
        stop,
        first: true,
        done: false,
        grace: TAIL_GRACE_READS,
    };
    stream::unfold(state, |mut s| async move {
        loop {
            if s.done {
                return None;
            }
            if !s.first {
                tokio::select! {
                    _ = tokio::time::sleep(TAIL_INTERVAL) => {}
                    _ = s.stop.cancelled() => {
                        s.done = true;
                        return Some((stream::iter(vec![Ok(StreamItem::End(RunStatus::Running))]), s));
                    }
                }
            }
            s.first = false;
            // Status first: every event journalled before it was read is
            // in the load below.
            let status = match s.store.run_summary(s.run_id).await {
                Ok(summary) => summary.status,
                Err(e) => {
                    s.done = true;
                    return Some((stream::iter(vec![Err(e)]), s));
                }
            };
            let events = match s.store.load_events(s.run_id).await {
                Ok(events) => events,
                Err(e) => {
                    s.done = true;
                    return Some((stream::iter(vec![Err(e)]), s));
                }
            };
            let mut batch: Vec<Result<StreamItem, StoreError>> = Vec::new();
            let mut ended = None;
            for event in events {
                // Also a terminal event before `after`: the stream resumed
                // past the end has nothing left to wait for.
                if let EventKind::RunFinished(end) = &event.kind {
                    ended = Some(end.status);
                }
                if event.seq <= s.after {
                    continue;
                }
                s.after = event.seq;
                batch.push(Ok(StreamItem::Event(Arc::new(event))));
            }
            if ended.is_none() && status != RunStatus::Running {
                // An ended run whose last event is not in yet, or a run
                // marked interrupted that never wrote one.
                if s.grace == 0 {
                    ended = Some(status);
                }
                s.grace = s.grace.saturating_sub(1);
            }
            if let Some(status) = ended {
                s.done = true;
                batch.push(Ok(StreamItem::End(status)));
            }
            if !batch.is_empty() {
                return Some((stream::iter(batch), s));
            }
        }
    })
    .flatten()
}

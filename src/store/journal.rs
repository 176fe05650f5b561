//! The per-run event journal (`run_event`): what makes replay exact.
//!
//! `record_event` only buffers. The buffer of a run is written in the same
//! transaction as the run's next step, invocation or finish, or by the
//! background flusher once its oldest event is [`FLUSH_AFTER`] old, so a
//! scripted run costs a handful of commits instead of one per event while a
//! slow live run still reaches the database within a fraction of a second.
//! A failed write puts the events back; rows are keyed by (run_id, seq) and
//! written insert-or-ignore, so writing them again never duplicates.

use crate::store::Store;
use crate::store::StoreError;
use crate::store::db::{Db, to_i64, with_pool};
use crate::text::error_line;
use crate::vocab::events::{EngineEvent, EventKind};
use crate::vocab::record::RecordError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

/// The longest a buffered event waits for a write of its run.
pub const FLUSH_AFTER: Duration = Duration::from_millis(100);

/// Rows per multi-row INSERT (6 binds each, far below both servers' limits).
const CHUNK: usize = 200;

#[derive(Default)]
pub(crate) struct Journal {
    runs: Mutex<HashMap<i64, OpenRun>>,
}

/// A run this store started and has not finished yet.
struct OpenRun {
    session_id: String,
    pending: Vec<EngineEvent>,
    oldest: Option<Instant>,
}

/// One `run_event` row, serialised ahead of the transaction.
pub(crate) struct EventRow {
    pub run_id: i64,
    pub seq: i64,
    pub event_type: &'static str,
    pub at_ms: i64,
    /// The event as stored ([`stored_payload`]), packed.
    pub payload: Vec<u8>,
}

/// How a `ToolInvoked` event is journaled: by the id of its
/// `tool_invocation` row, which holds every field of the invocation, so
/// the (often large) tool body is stored once. [`load`] puts the row back.
#[derive(serde::Serialize, serde::Deserialize)]
struct InvocationRef {
    run_id: i64,
    seq: u32,
    at_ms: u64,
    tool_invoked: i64,
}

/// One stored journal payload, read back.
pub(crate) enum StoredEvent {
    Event(EngineEvent),
    /// A `ToolInvoked` event whose invocation is the row with this id.
    Invocation {
        run_id: i64,
        seq: u32,
        at_ms: u64,
        invocation_id: i64,
    },
}

/// The JSON a journal row holds for `e`.
fn stored_payload(e: &EngineEvent) -> Result<String, serde_json::Error> {
    match &e.kind {
        // An invocation always has its row before its event is emitted
        // (the invoker records it first and fails the call otherwise).
        EventKind::ToolInvoked { invocation } if invocation.id > 0 => {
            serde_json::to_string(&InvocationRef {
                run_id: e.run_id,
                seq: e.seq,
                at_ms: e.at_ms,
                tool_invoked: invocation.id,
            })
        }
        _ => serde_json::to_string(e),
    }
}

/// Reads one stored payload (packed or, in older rows, plain JSON).
pub(crate) fn decode(stored: Vec<u8>) -> Result<StoredEvent, String> {
    let text = super::packed::unpack(stored)?;
    match serde_json::from_str::<EngineEvent>(&text) {
        Ok(e) => Ok(StoredEvent::Event(e)),
        Err(event_error) => match serde_json::from_str::<InvocationRef>(&text) {
            Ok(r) => Ok(StoredEvent::Invocation {
                run_id: r.run_id,
                seq: r.seq,
                at_ms: r.at_ms,
                invocation_id: r.tool_invoked,
            }),
            Err(_) => Err(error_line(&event_error)),
        },
    }
}

impl Journal {
    fn lock(&self) -> MutexGuard<'_, HashMap<i64, OpenRun>> {
        // Poisoning only means a panic elsewhere mid-push; the map is intact.
        self.runs.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn open(&self, run_id: i64, session_id: &str) {
        self.lock().insert(
            run_id,
            OpenRun {
                session_id: session_id.to_string(),
                pending: Vec::new(),
                oldest: None,
            },
        );
    }

    pub(crate) fn session_of(&self, run_id: i64) -> Option<String> {
        self.lock().get(&run_id).map(|r| r.session_id.clone())
    }

    /// Buffers the event; false when the run is not open here (the caller
    /// writes it directly).
    pub(crate) fn push(&self, event: &EngineEvent) -> bool {
        match self.lock().get_mut(&event.run_id) {
            Some(run) => {
                run.oldest.get_or_insert_with(Instant::now);
                run.pending.push(event.clone());
                true
            }
            None => false,
        }
    }

    pub(crate) fn take(&self, run_id: i64) -> Vec<EngineEvent> {
        match self.lock().get_mut(&run_id) {
            Some(run) => {
                run.oldest = None;
                std::mem::take(&mut run.pending)
            }
            None => Vec::new(),
        }
    }

    /// A copy of the run's buffered events, left in the buffer.
    pub(crate) fn snapshot(&self, run_id: i64) -> Vec<EngineEvent> {
        self.lock()
            .get(&run_id)
            .map(|r| r.pending.clone())
            .unwrap_or_default()
    }

    /// Drops buffered events that are now committed (by seq).
    pub(crate) fn forget(&self, run_id: i64, written: &[EngineEvent]) {
        let mut runs = self.lock();
        if let Some(run) = runs.get_mut(&run_id) {
            run.pending
                .retain(|e| !written.iter().any(|w| w.seq == e.seq));
            if run.pending.is_empty() {
                run.oldest = None;
            }
        }
    }

    /// Returns events whose write failed, ahead of any buffered since.
    pub(crate) fn put_back(&self, run_id: i64, mut events: Vec<EngineEvent>) {
        if events.is_empty() {
            return;
        }
        let mut runs = self.lock();
        let run = runs.entry(run_id).or_insert_with(|| OpenRun {
            session_id: String::new(),
            pending: Vec::new(),
            oldest: None,
        });
        events.append(&mut run.pending);
        run.pending = events;
        run.oldest = Some(Instant::now());
    }

    pub(crate) fn close(&self, run_id: i64) {
        self.lock().remove(&run_id);
    }

    fn due(&self, age: Duration) -> Vec<i64> {
        self.lock()
            .iter()
            .filter(|(_, r)| r.oldest.is_some_and(|t| t.elapsed() >= age))
            .map(|(id, _)| *id)
            .collect()
    }

    fn all_pending(&self) -> Vec<i64> {
        self.lock()
            .iter()
            .filter(|(_, r)| !r.pending.is_empty())
            .map(|(id, _)| *id)
            .collect()
    }
}

pub(crate) fn event_type(kind: &EventKind) -> &'static str {
    match kind {
        EventKind::RunStarted { .. } => "run_started",
        EventKind::NodeEntered { .. } => "node_entered",
        EventKind::ModelCalled { .. } => "model_called",
        EventKind::ToolInvoked { .. } => "tool_invoked",
        EventKind::GatekeeperChecked { .. } => "gatekeeper_checked",
        EventKind::VerdictUpdated { .. } => "verdict_updated",
        EventKind::NodeFinished { .. } => "node_finished",
        EventKind::RunFinished { .. } => "run_finished",
    }
}

pub(crate) fn rows(events: &[EngineEvent]) -> Result<Vec<EventRow>, RecordError> {
    events
        .iter()
        .map(|e| {
            Ok(EventRow {
                run_id: e.run_id,
                seq: i64::from(e.seq),
                event_type: event_type(&e.kind),
                at_ms: to_i64(e.at_ms),
                payload: super::packed::pack(&stored_payload(e).map_err(|err| {
                    RecordError::Rejected(format!("event not serialisable: {}", error_line(&err)))
                })?),
            })
        })
        .collect()
}

/// Inserts `$rows` (`&[EventRow]`) through the executor `$conn`
/// (`&mut *tx` or a pool), insert-or-ignore.
macro_rules! insert_events {
    ($db:expr, $conn:expr, $rows:expr) => {{
        let mut result: Result<(), sqlx::Error> = Ok(());
        let created = $crate::store::db::now_ms();
        for chunk in $rows.chunks($crate::store::journal::CHUNK_ROWS) {
            let mut qb = sqlx::QueryBuilder::new(format!(
                "{} run_event (run_id, seq, event_type, at_ms, payload, created_at) ",
                $db.insert_ignore()
            ));
            qb.push_values(chunk, |mut b, row| {
                b.push_bind(row.run_id)
                    .push_bind(row.seq)
                    .push_bind(row.event_type)
                    .push_bind(row.at_ms)
                    .push_bind(row.payload.as_slice())
                    .push_bind(created);
            });
            if let Err(e) = qb.build().execute($conn).await {
                result = Err(e);
                break;
            }
        }
        result
    }};
}
pub(crate) use insert_events;
pub(crate) const CHUNK_ROWS: usize = CHUNK;

/// Writes the run's buffered events in their own transaction.
///
/// The events stay buffered until the write commits: a flush that is still
/// waiting on an unreachable server must not hide them from the run's next
/// write or from a reader. Rows are insert-or-ignore on (run_id, seq), so an
/// event written twice is stored once.
pub(crate) async fn flush_run(store: &Store, run_id: i64) -> Result<(), RecordError> {
    let events = store.journal.snapshot(run_id);
    if events.is_empty() {
        return Ok(());
    }
    write_rows(&store.db, &rows(&events)?).await?;
    store.journal.forget(run_id, &events);
    Ok(())
}

/// Writes rows straight away (a run this store does not have open).
pub(crate) async fn write_rows(db: &Db, rows: &[EventRow]) -> Result<(), RecordError> {
    with_pool!(db, p => {
        let mut tx = crate::store::db::begin_write(p).await.map_err(super::connect::record_error)?;
        insert_events!(db, &mut *tx, rows).map_err(super::connect::record_error)?;
        tx.commit().await.map_err(super::connect::record_error)
    })
}

pub(crate) async fn flush_all(store: &Store) -> Result<(), StoreError> {
    let mut first_error = None;
    for run_id in store.journal.all_pending() {
        if let Err(e) = flush_run(store, run_id).await {
            first_error.get_or_insert(StoreError::Unreachable(e.to_string()));
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Starts the background flusher. It holds only a weak reference, so it
/// ends by itself once every clone of the store is dropped.
pub(crate) fn spawn_flusher(store: &Store) {
    let weak: Weak<Journal> = Arc::downgrade(&store.journal);
    let db = store.db.clone();
    let display = store.display.clone();
    let owner = store.owner.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(FLUSH_AFTER / 2);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(journal) = weak.upgrade() else {
                break;
            };
            let store = Store {
                db: db.clone(),
                display: display.clone(),
                owner: owner.clone(),
                journal,
            };
            for run_id in store.journal.due(FLUSH_AFTER) {
                // A failure keeps the events buffered; the next write of the
                // run (which the engine retries) or the next tick tries again.
                if let Err(e) = flush_run(&store, run_id).await {
                    tracing::debug!(run_id, error = %e, "journal flush failed; will retry");
                }
            }
        }
    });
}

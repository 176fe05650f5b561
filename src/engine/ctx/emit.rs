//! The one place events leave the engine: sequence numbers, timestamps,
//! the live channel and the recorder's journal; and, beside them, the
//! pieces of streamed answers for live views ([`DeltaOut`]).
//!
//! Every event is kept in memory first, so that after a store failure the
//! not-yet-persisted tail can be retried and the outcome still carries the
//! full sequence.

use crate::vocab::events::{EngineEvent, EventKind, ModelDelta};
use crate::vocab::record::{RecordError, Recorder};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub(crate) struct Emitter {
    run_id: i64,
    started: Instant,
    events: Vec<EngineEvent>,
    /// Events `[0, persisted)` are in the recorder's journal.
    persisted: usize,
    sender: Option<mpsc::Sender<EngineEvent>>,
    recorder: Arc<dyn Recorder>,
    cancel: CancellationToken,
}

impl Emitter {
    pub fn new(
        run_id: i64,
        started: Instant,
        sender: Option<mpsc::Sender<EngineEvent>>,
        recorder: Arc<dyn Recorder>,
        cancel: CancellationToken,
    ) -> Emitter {
        Emitter {
            run_id,
            started,
            events: Vec::with_capacity(32),
            persisted: 0,
            sender,
            recorder,
            cancel,
        }
    }

    /// Moves the run clock's origin forward by a wait that is not work
    /// (a step gate), so `at_ms` counts work time.
    pub fn exclude_wait(&mut self, waited: std::time::Duration) {
        self.started = self.started.checked_add(waited).unwrap_or(self.started);
    }

    /// Assigns seq and at_ms, sends the event live and journals it.
    pub async fn emit(&mut self, kind: EventKind) -> Result<(), RecordError> {
        self.push(kind).await;
        self.persist_pending().await
    }

    /// Keeps and sends the event without journalling it (the failure path
    /// journals the whole tail afterwards).
    pub async fn push(&mut self, kind: EventKind) {
        let event = EngineEvent {
            run_id: self.run_id,
            // Bounded by the recursion limit and tool budgets: far below u32::MAX.
            seq: u32::try_from(self.events.len() + 1).unwrap_or(u32::MAX),
            at_ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            kind,
        };
        self.send(&event).await;
        self.events.push(event);
    }

    /// Journals every event not yet persisted, stopping at the first error.
    pub async fn persist_pending(&mut self) -> Result<(), RecordError> {
        while let Some(event) = self.events.get(self.persisted) {
            self.recorder.record_event(event).await?;
            self.persisted += 1;
        }
        Ok(())
    }

    async fn send(&mut self, event: &EngineEvent) {
        let Some(sender) = &self.sender else {
            return;
        };
        if sender.is_closed() {
            self.sender = None;
            return;
        }
        // A live viewer that stops reading must not hang the run forever:
        // cancellation also unblocks the send.
        // Biased: with room in the channel the send wins even after a
        // cancel, so a viewer still gets the final RunFinished.
        let sent = tokio::select! {
            biased;
            r = sender.send(event.clone()) => r.is_ok(),
            _ = self.cancel.cancelled() => false,
        };
        if !sent {
            self.sender = None;
        }
    }

    pub fn into_events(self) -> Vec<EngineEvent> {
        self.events
    }
}

/// The live channel of streamed answer pieces. A piece the channel has no
/// room for waits, merged with the pieces after it of the same part, until
/// there is room: a slow viewer gets fewer, longer pieces, never a gap,
/// and the model call is never held up by a viewer.
pub(crate) struct DeltaOut {
    sender: mpsc::Sender<ModelDelta>,
    waiting: Mutex<VecDeque<ModelDelta>>,
}

impl DeltaOut {
    pub fn new(sender: mpsc::Sender<ModelDelta>) -> DeltaOut {
        DeltaOut {
            sender,
            waiting: Mutex::new(VecDeque::new()),
        }
    }

    pub fn send(&self, delta: ModelDelta) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        match waiting.back_mut() {
            Some(last) if last.step_index == delta.step_index && last.part == delta.part => {
                last.text.push_str(&delta.text)
            }
            _ => waiting.push_back(delta),
        }
        while let Some(next) = waiting.pop_front() {
            match self.sender.try_send(next) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(next)) => {
                    waiting.push_front(next);
                    break;
                }
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    waiting.clear();
                    break;
                }
            }
        }
    }

    /// The call ended: pieces still waiting are dropped (its ModelCalled
    /// event and recorded step carry the whole answer).
    pub fn end_call(&self) {
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

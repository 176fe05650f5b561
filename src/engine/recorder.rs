//! Recorders that keep a run in process instead of a database:
//! [`MemoryRecorder`] keeps everything (tests, runs without a database),
//! [`NullRecorder`] only hands out ids (throughput benchmarks).

use crate::vocab::agent::HistoryTurn;
use crate::vocab::events::EngineEvent;
use crate::vocab::record::{AgentStep, RecordError, Recorder, RunFinish, RunHandle, RunStart};
use crate::vocab::tool::{InvocationId, ToolInvocation};
use async_trait::async_trait;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

/// Everything in process memory. Ids are process-wide counters, so ids of
/// different runs never collide, like database ids.
#[derive(Default)]
pub struct MemoryRecorder {
    next_id: AtomicI64,
    inner: Mutex<MemoryData>,
}

#[derive(Default, Debug, Clone)]
pub struct MemoryData {
    pub runs: Vec<(RunHandle, RunStart, Option<RunFinish>)>,
    pub steps: Vec<AgentStep>,
    pub invocations: Vec<ToolInvocation>,
    pub events: Vec<EngineEvent>,
}

impl MemoryRecorder {
    pub fn new() -> Self {
        MemoryRecorder {
            next_id: AtomicI64::new(1),
            inner: Mutex::new(MemoryData::default()),
        }
    }

    fn id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn data(&self) -> std::sync::MutexGuard<'_, MemoryData> {
        // A poisoned lock only means another thread panicked mid-push; the
        // vectors are still consistent enough to read.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn snapshot(&self) -> MemoryData {
        self.data().clone()
    }

    pub fn events_of(&self, run_id: i64) -> Vec<EngineEvent> {
        self.data()
            .events
            .iter()
            .filter(|e| e.run_id == run_id)
            .cloned()
            .collect()
    }
}

#[async_trait]
impl Recorder for MemoryRecorder {
    async fn start_run(&self, start: &RunStart) -> Result<RunHandle, RecordError> {
        let handle = RunHandle::in_memory(self.id(), start);
        self.data().runs.push((handle.clone(), start.clone(), None));
        Ok(handle)
    }

    async fn session_history(
        &self,
        session_id: &str,
        limit: usize,
    ) -> Result<Vec<HistoryTurn>, RecordError> {
        let data = self.data();
        let turns: Vec<HistoryTurn> = data
            .runs
            .iter()
            .filter(|(h, _, f)| h.session_id == session_id && f.is_some())
            .map(|(h, s, f)| HistoryTurn {
                run_id: h.run_id,
                question: s.question.clone(),
                answer: f.as_ref().map(|f| f.end.answer.clone()).unwrap_or_default(),
            })
            .collect();
        let skip = turns.len().saturating_sub(limit);
        Ok(turns.into_iter().skip(skip).collect())
    }

    async fn record_step(&self, step: &AgentStep) -> Result<i64, RecordError> {
        let id = self.id();
        let mut s = step.clone();
        s.id = id;
        self.data().steps.push(s);
        Ok(id)
    }

    async fn record_tool_invocation(
        &self,
        invocation: &ToolInvocation,
    ) -> Result<InvocationId, RecordError> {
        let id = self.id();
        let mut inv = invocation.clone();
        inv.id = id;
        self.data().invocations.push(inv);
        Ok(id)
    }

    async fn record_event(&self, event: &EngineEvent) -> Result<(), RecordError> {
        self.data().events.push(event.clone());
        Ok(())
    }

    async fn finish_run(&self, finish: &RunFinish) -> Result<(), RecordError> {
        let mut data = self.data();
        match data
            .runs
            .iter_mut()
            .find(|(h, _, _)| h.run_id == finish.run_id)
        {
            Some(run) => {
                run.2 = Some(finish.clone());
                Ok(())
            }
            None => Err(RecordError::Rejected(format!(
                "unknown run {}",
                finish.run_id
            ))),
        }
    }

    async fn foreign_invocation_id(&self, run_id: i64) -> Result<InvocationId, RecordError> {
        if let Some(inv) = self.data().invocations.iter().find(|i| i.run_id != run_id) {
            return Ok(inv.id);
        }
        // No other run has invocations yet: make a placeholder owned by a
        // run id that is not this one.
        let id = self.id();
        let owner = -id;
        let mut placeholder = ToolInvocation::placeholder(owner, 0);
        placeholder.id = id;
        self.data().invocations.push(placeholder);
        Ok(id)
    }

    fn describe(&self) -> String {
        "memory".into()
    }
}

/// Hands out ids and keeps nothing: runs without persistence, where even
/// [`MemoryRecorder`]'s growing journal would cost more than the run itself
/// (throughput benchmarks, fire-and-forget runs). Session history is always
/// empty, and every id is fresh, so a foreign invocation id is never one of
/// the asking run's.
pub struct NullRecorder {
    next_id: AtomicI64,
}

impl Default for NullRecorder {
    fn default() -> Self {
        Self::new()
    }
}

impl NullRecorder {
    pub fn new() -> Self {
        NullRecorder {
            next_id: AtomicI64::new(1),
        }
    }

    fn id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }
}

#[async_trait]
impl Recorder for NullRecorder {
    async fn start_run(&self, start: &RunStart) -> Result<RunHandle, RecordError> {
        Ok(RunHandle::in_memory(self.id(), start))
    }

    async fn session_history(
        &self,
        _session_id: &str,
        _limit: usize,
    ) -> Result<Vec<HistoryTurn>, RecordError> {
        Ok(Vec::new())
    }

    async fn record_step(&self, _step: &AgentStep) -> Result<i64, RecordError> {
        Ok(self.id())
    }

    async fn record_tool_invocation(
        &self,
        _invocation: &ToolInvocation,
    ) -> Result<InvocationId, RecordError> {
        Ok(self.id())
    }

    async fn record_event(&self, _event: &EngineEvent) -> Result<(), RecordError> {
        Ok(())
    }

    async fn finish_run(&self, _finish: &RunFinish) -> Result<(), RecordError> {
        Ok(())
    }

    async fn foreign_invocation_id(&self, _run_id: i64) -> Result<InvocationId, RecordError> {
        Ok(self.id())
    }

    fn describe(&self) -> String {
        "none".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(session: Option<&str>) -> RunStart {
        RunStart {
            session_id: session.map(str::to_string),
            question: "q".into(),
            model: "scripted".into(),
            pack: None,
            scenario: None,
            sources: Default::default(),
            rerun_of: None,
        }
    }

    #[tokio::test]
    async fn null_recorder_hands_out_distinct_ids_and_keeps_nothing() {
        let rec = NullRecorder::new();
        let a = rec.start_run(&start(None)).await.unwrap();
        let b = rec.start_run(&start(Some("s1"))).await.unwrap();
        assert_ne!(a.run_id, b.run_id);
        assert_eq!(a.session_id, format!("session-{}", a.run_id));
        assert_eq!(b.session_id, "s1");
        let inv = rec
            .record_tool_invocation(&ToolInvocation::placeholder(b.run_id, 1))
            .await
            .unwrap();
        let foreign = rec.foreign_invocation_id(b.run_id).await.unwrap();
        assert_ne!(inv, foreign);
        assert!(foreign > inv);
        assert!(rec.session_history("s1", 10).await.unwrap().is_empty());
        assert_eq!(rec.describe(), "none");
    }
}

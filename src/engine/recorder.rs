//! The engine's persistence port. The engine records a run as it happens
//! through this trait; `store` implements it on SQLite and MySQL, and
//! [`MemoryRecorder`] keeps everything in process (benchmarks, tests, and
//! runs without a database).
//!
//! Ids come from the recorder. With a database they are database ids, which
//! is what makes the Gatekeeper's ownership check real: an invocation id
//! cited by the Executor either belongs to this run's recorded invocations
//! or it does not.

use super::evaluation::SelfEvaluation;
use super::events::{EngineEvent, RunStatus};
use super::trace::OrchestrationTrace;
use crate::tools::{InvocationId, ToolInvocation};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error("store rejected the write: {0}")]
    Rejected(String),
    #[error("unknown session {0}")]
    UnknownSession(String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStart {
    /// Continue this session; a new one is created when None.
    pub session_id: Option<String>,
    pub question: String,
    pub model: String,
    pub pack: Option<String>,
    pub scenario: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunHandle {
    pub run_id: i64,
    pub session_id: String,
}

impl RunHandle {
    /// The handle the in-memory recorders give: the requested session, or
    /// a new one named after the run.
    fn in_memory(run_id: i64, start: &RunStart) -> RunHandle {
        let session_id = start
            .session_id
            .clone()
            .unwrap_or_else(|| format!("session-{run_id}"));
        RunHandle { run_id, session_id }
    }
}

/// One earlier question/answer of the session (Planner and Executor input).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryTurn {
    pub run_id: i64,
    pub question: String,
    pub answer: String,
}

/// An agent_step row: one model call of one role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentStep {
    pub id: i64,
    pub run_id: i64,
    pub seq: u32,
    /// Order of model calls in the run, 1-based.
    pub step_index: u32,
    pub agent_name: String,
    pub attempt: u32,
    pub model_input: String,
    pub model_output: String,
    pub thought: String,
    pub has_tool_call: bool,
    pub duration_ms: u64,
    pub token_count: u64,
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFinish {
    pub run_id: i64,
    pub status: RunStatus,
    pub answer: String,
    pub degraded: bool,
    pub effective_verdict: Option<String>,
    pub duration_ms: u64,
    pub token_count: u64,
    pub step_count: u32,
    pub tool_call_count: u32,
    /// None for a run that ended before its evaluation could be built.
    pub self_evaluation: Option<Arc<SelfEvaluation>>,
    pub orchestration_trace: Option<OrchestrationTrace>,
    pub failure_reason: Option<String>,
}

#[async_trait]
pub trait Recorder: Send + Sync {
    /// Creates the session if needed and the run row as RUNNING.
    async fn start_run(&self, start: &RunStart) -> Result<RunHandle, RecordError>;
    /// Earlier turns of the session, oldest first, at most `limit`.
    async fn session_history(
        &self,
        session_id: &str,
        limit: usize,
    ) -> Result<Vec<HistoryTurn>, RecordError>;
    /// Records a model call; returns the step id.
    async fn record_step(&self, step: &AgentStep) -> Result<i64, RecordError>;
    /// Records a tool invocation (its `id` field is ignored); returns the
    /// generated id.
    async fn record_tool_invocation(
        &self,
        invocation: &ToolInvocation,
    ) -> Result<InvocationId, RecordError>;
    /// Appends an event to the run's journal (exact replay).
    async fn record_event(&self, event: &EngineEvent) -> Result<(), RecordError>;
    /// Ends the run: SUCCESS or FAILED, with answer, counts and traces.
    async fn finish_run(&self, finish: &RunFinish) -> Result<(), RecordError>;
    /// Some invocation id that exists but belongs to another run, for the
    /// scripted `{{invocation:foreign}}` placeholder. Creating one is
    /// allowed when none exists.
    async fn foreign_invocation_id(&self, run_id: i64) -> Result<InvocationId, RecordError>;
    /// Short description for status bars: "sqlite:/path", "mysql://host/db", "memory".
    fn describe(&self) -> String;
}

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
                answer: f.as_ref().map(|f| f.answer.clone()).unwrap_or_default(),
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

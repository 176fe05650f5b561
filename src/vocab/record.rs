//! The persistence port: what the engine records while a run happens.
//! `store` implements it on SQLite and MySQL; the engine's in-process
//! recorders implement it without a database.
//!
//! Ids come from the recorder. With a database they are database ids, which
//! is what makes the Gatekeeper's ownership check real: an invocation id
//! cited by the Executor either belongs to this run's recorded invocations
//! or it does not.

use super::agent::HistoryTurn;
use super::evaluation::SelfEvaluation;
use super::events::EngineEvent;
use super::run::{RunEnd, RunSources};
use super::tool::{InvocationId, ToolInvocation};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

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
    /// Which backend serves each tool, the pack, and the model per role.
    #[serde(default)]
    pub sources: Arc<RunSources>,
    /// The stored run this one re-executes (`diagraph rerun`).
    #[serde(default)]
    pub rerun_of: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunHandle {
    pub run_id: i64,
    pub session_id: String,
}

impl RunHandle {
    /// The handle the in-memory recorders give: the requested session, or
    /// a new one named after the run.
    pub fn in_memory(run_id: i64, start: &RunStart) -> RunHandle {
        let session_id = start
            .session_id
            .clone()
            .unwrap_or_else(|| format!("session-{run_id}"));
        RunHandle { run_id, session_id }
    }
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
    /// Prompt / completion (reasoning, cached) tokens and cost of the call.
    #[serde(default)]
    pub usage: super::usage::Usage,
    /// Why `model_output` was rejected as the role's contract (None: it
    /// was used, or there was nothing to parse).
    #[serde(default)]
    pub parse_error: Option<String>,
}

/// The run row's final write: how the run ended, plus its totals and
/// audit record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFinish {
    pub run_id: i64,
    pub end: RunEnd,
    pub duration_ms: u64,
    pub token_count: u64,
    pub step_count: u32,
    pub tool_call_count: u32,
    /// None for a run that ended before its evaluation could be built.
    pub self_evaluation: Option<Arc<SelfEvaluation>>,
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
    /// Ends the run: SUCCESS, FAILED or CANCELLED, with answer, counts and
    /// traces.
    async fn finish_run(&self, finish: &RunFinish) -> Result<(), RecordError>;
    /// Some invocation id that exists but belongs to another run, for the
    /// scripted `{{invocation:foreign}}` placeholder. Creating one is
    /// allowed when none exists.
    async fn foreign_invocation_id(&self, run_id: i64) -> Result<InvocationId, RecordError>;
    /// Short description for status bars: "sqlite:/path", "mysql://host/db", "memory".
    fn describe(&self) -> String;
}

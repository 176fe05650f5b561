//! The embedded diagnosis engine: a bounded state graph of agent nodes and
//! deterministic checks (ARCHITECTURE.md, "engine").
//!
//! The engine never touches a terminal. It emits [`EngineEvent`]s on a
//! bounded channel, records the run through a [`Recorder`], and returns a
//! [`RunOutcome`].

pub mod case;
pub(crate) mod ctx;
pub mod graph;
pub mod invoker;
pub mod nodes;
pub mod prompts;
pub mod recorder;
mod run;
pub mod state;

pub use recorder::{MemoryRecorder, NullRecorder};

use crate::model::ChatModel;
use crate::tools::ToolRegistry;
use crate::vocab::catalog::Catalog;
use crate::vocab::evaluation::SelfEvaluation;
use crate::vocab::events::EngineEvent;
use crate::vocab::record::{RecordError, Recorder};
use crate::vocab::run::{RunEnd, VerdictSnapshot};
use nodes::gatekeeper::GatekeeperRules;
use prompts::Prompts;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Tool calls the Executor may make per round before it must answer.
    pub max_tool_calls: u32,
    /// Model turns of the Executor loop per round, final answer included.
    pub max_executor_turns: u32,
    /// Earlier session turns given to the Planner and Executor.
    pub history_limit: usize,
    /// Tools the Executor may use.
    pub tool_permissions: Vec<String>,
    /// How long to keep retrying the store after it failed mid-run, before
    /// giving up (the next start marks the run FAILED).
    pub store_recovery_timeout: Duration,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            max_tool_calls: 12,
            max_executor_turns: 8,
            history_limit: 5,
            tool_permissions: crate::vocab::tool::DEFAULT_EXECUTOR_TOOLS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            store_recovery_timeout: Duration::from_secs(30),
        }
    }
}

/// Everything a run needs. Cheap to clone (all shared parts are `Arc`s), so
/// a scenario can build one per run with its own scripted model.
#[derive(Clone)]
pub struct Engine {
    pub model: Arc<dyn ChatModel>,
    pub tools: Arc<ToolRegistry>,
    pub recorder: Arc<dyn Recorder>,
    pub catalog: Arc<Catalog>,
    pub prompts: Arc<Prompts>,
    pub rules: Arc<GatekeeperRules>,
    pub config: EngineConfig,
}

/// Commands a step-mode UI sends to the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepCommand {
    /// Execute the next node.
    Next,
    /// Stop waiting; run to the end.
    Continue,
}

/// Makes the engine wait before each node until the user advances. A
/// dropped sender means "continue".
pub struct StepGate {
    pub commands: mpsc::Receiver<StepCommand>,
}

/// Test and demo hooks that break a run on purpose.
#[derive(Debug, Clone, Default)]
pub struct FaultInjection {
    /// Replaces the Gatekeeper's raw result (as JSON) before it is
    /// normalised, to prove unknown results route to REJECT.
    pub gatekeeper_result: Option<Value>,
}

pub struct RunRequest {
    pub question: String,
    pub session_id: Option<String>,
    pub scenario: Option<String>,
    pub pack: Option<String>,
    /// Bounded channel for live events; a closed receiver is ignored.
    pub events: Option<mpsc::Sender<EngineEvent>>,
    pub step_gate: Option<StepGate>,
    pub cancel: CancellationToken,
    pub faults: FaultInjection,
}

impl RunRequest {
    pub fn new(question: impl Into<String>) -> Self {
        RunRequest {
            question: question.into(),
            session_id: None,
            scenario: None,
            pack: None,
            events: None,
            step_gate: None,
            cancel: CancellationToken::new(),
            faults: FaultInjection::default(),
        }
    }
}

/// What [`Engine::run`] returns: how the run ended, with its audit record
/// and every event it emitted.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub run_id: i64,
    pub session_id: String,
    pub end: RunEnd,
    /// The last verdict snapshot (model verdict, ceiling, effective).
    pub verdicts: VerdictSnapshot,
    pub self_evaluation: Arc<SelfEvaluation>,
    /// Every event the run emitted, in order.
    pub events: Vec<EngineEvent>,
}

impl RunOutcome {
    /// The `ask --json` object. Its keys are listed in README.md ("Using
    /// it"); scripts depend on them, so add keys rather than rename them.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "run_id": self.run_id,
            "session_id": self.session_id,
            "status": self.end.status.as_str(),
            "answer": self.end.answer,
            "degraded": self.end.degraded,
            "effective_verdict": self.end.effective_verdict.map(|v| v.as_str()),
            "orchestration_trace": self.end.trace,
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The run could not even be created (store unreachable at start).
    #[error("could not start the run: {0}")]
    Start(RecordError),
    /// The run failed and its FAILED state could not be persisted within
    /// the recovery timeout; the next start marks it interrupted.
    #[error("run {run_id} failed ({reason}) and the store stayed unavailable: {store}")]
    Unpersisted {
        run_id: i64,
        reason: String,
        store: RecordError,
    },
}

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
pub mod rerun;
mod run;
pub mod state;
pub mod subjects;
pub mod unchecked;

pub use recorder::{MemoryRecorder, NullRecorder};

use crate::model::ChatModel;
use crate::tools::ToolRegistry;
use crate::vocab::catalog::Catalog;
use crate::vocab::evaluation::SelfEvaluation;
use crate::vocab::events::{EngineEvent, ModelDelta};
use crate::vocab::record::{RecordError, Recorder};
use crate::vocab::run::{FailedSource, RunEnd, RunSources, RunStatus, VerdictSnapshot};
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
    /// Whether the tools of a source that comes up after set-up (an MCP
    /// server retried at run start) join `tool_permissions`. False once
    /// a scenario names its own tools: a narrowed list stays narrowed.
    pub permit_late_tools: bool,
    /// Wall-clock budget of a run: model calls after it fail as timeouts
    /// and the run ends in its fallback. None: no deadline.
    pub run_deadline: Option<Duration>,
    /// The wait before a technical retry after a retryable model failure:
    /// doubled per attempt, with jitter, at least the server's Retry-After.
    pub retry_backoff: Duration,
    /// No wait before a retry is longer than this (nor than what is left
    /// of the run deadline).
    pub retry_backoff_max: Duration,
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
            permit_late_tools: true,
            run_deadline: None,
            retry_backoff: Duration::from_millis(500),
            retry_backoff_max: Duration::from_secs(30),
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

impl Engine {
    /// An engine on `model`, `tools` and `recorder`, with an empty catalog,
    /// the shipped prompts and Gatekeeper rules and the default
    /// configuration; the `with_` methods replace one of them.
    pub fn new(
        model: Arc<dyn ChatModel>,
        tools: impl Into<Arc<ToolRegistry>>,
        recorder: Arc<dyn Recorder>,
    ) -> Engine {
        Engine {
            model,
            tools: tools.into(),
            recorder,
            catalog: Arc::new(Catalog::default()),
            prompts: Arc::new(Prompts::shipped()),
            rules: Arc::new(GatekeeperRules::shipped()),
            config: EngineConfig::default(),
        }
    }

    /// What the Planner may know: domains, skills, services, the time.
    pub fn with_catalog(self, catalog: impl Into<Arc<Catalog>>) -> Engine {
        Engine {
            catalog: catalog.into(),
            ..self
        }
    }

    pub fn with_prompts(self, prompts: impl Into<Arc<Prompts>>) -> Engine {
        Engine {
            prompts: prompts.into(),
            ..self
        }
    }

    pub fn with_rules(self, rules: impl Into<Arc<GatekeeperRules>>) -> Engine {
        Engine {
            rules: rules.into(),
            ..self
        }
    }

    pub fn with_config(self, config: EngineConfig) -> Engine {
        Engine { config, ..self }
    }

    /// This engine with `pack` serving the tools a pack serves: its tools
    /// replace this engine's pack tools, a live backend (a tool without a
    /// pack) keeps serving its tool, a source that could not be set up
    /// stays unavailable, and the catalog is the pack's.
    pub fn on_pack(&self, pack: Arc<crate::tools::pack::Pack>) -> Engine {
        let catalog = pack.catalog();
        let mut registry = ToolRegistry::new();
        for tool in crate::tools::pack::pack_tools(pack) {
            registry.register(tool);
        }
        for name in self.tools.names() {
            if let Some(tool) = self.tools.get(name).filter(|t| t.pack().is_none()) {
                registry.register(Arc::clone(tool));
            }
        }
        for source in self.tools.unavailable() {
            registry.register_unavailable(source.clone());
        }
        for sources in self.tools.retried() {
            registry.register_retried(Arc::clone(sources));
        }
        Engine {
            tools: Arc::new(registry),
            catalog: Arc::new(catalog),
            ..self.clone()
        }
    }
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
    /// Bounded channel for the pieces of streamed model answers (live
    /// views only; never journaled). Pieces a slow reader has no room for
    /// are merged into the next one, never dropped in the middle.
    pub deltas: Option<mpsc::Sender<ModelDelta>>,
    pub step_gate: Option<StepGate>,
    pub cancel: CancellationToken,
    pub faults: FaultInjection,
    /// The stored run this one re-executes (`diagraph rerun`), recorded
    /// on the new run's row.
    pub rerun_of: Option<i64>,
}

impl RunRequest {
    pub fn new(question: impl Into<String>) -> Self {
        RunRequest {
            question: question.into(),
            session_id: None,
            scenario: None,
            pack: None,
            events: None,
            deltas: None,
            step_gate: None,
            cancel: CancellationToken::new(),
            faults: FaultInjection::default(),
            rerun_of: None,
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
    /// What served the run: backends, pack, models.
    pub sources: Arc<RunSources>,
    /// Every tool invocation of the run that failed.
    pub failed_sources: Vec<FailedSource>,
    /// Every event the run emitted, in order.
    pub events: Vec<EngineEvent>,
}

impl RunOutcome {
    /// The `ask --json` object: `run_id, session_id, status, answer,
    /// degraded, effective_verdict, orchestration_trace`, `failure` when
    /// something failed, `failed_sources` and `sources`. Its keys are listed
    /// in README.md ("Using it"); scripts depend on them, so add keys rather
    /// than rename them.
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::json!({
            "run_id": self.run_id,
            "session_id": self.session_id,
            "status": self.end.status.as_str(),
            "answer": self.end.answer,
            "degraded": self.end.degraded,
            "effective_verdict": self.end.effective_verdict.map(|v| v.as_str()),
            "orchestration_trace": self.end.trace,
            "failed_sources": self.failed_sources,
            "sources": *self.sources,
        });
        if let (Some(failure), Value::Object(map)) = (&self.end.failure, &mut v) {
            map.insert(
                "failure".into(),
                serde_json::to_value(failure).unwrap_or(Value::Null),
            );
        }
        v
    }

    /// The exit code of `ask`: 0 an answer that is not degraded, 3 a
    /// degraded one, 4 a run that ended FAILED or CANCELLED.
    pub fn exit_code(&self) -> u8 {
        match (self.end.status, self.end.degraded) {
            (RunStatus::Success, false) => 0,
            (RunStatus::Success, true) => 3,
            (RunStatus::Failed | RunStatus::Cancelled, _) => 4,
            // The engine never returns a running run.
            (RunStatus::Running, _) => 1,
        }
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
        /// The composed answer, when the run got that far: shown to the
        /// user although the store could not keep it.
        answer: Option<String>,
    },
}

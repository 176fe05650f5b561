//! Engine events: the one stream that the TUI folds, the store journals and
//! a replay re-creates. Every event carries its run id and a per-run
//! sequence number, so a consumer can drop events of a run it no longer
//! shows and a replay can restore the exact order.

use super::contracts::{GatekeeperResult, Lang};
use super::graph::{NodeId, Outcome, ReasonCode};
use super::run::{RunEnd, RunSources, VerdictSnapshot};
use crate::vocab::agent::AgentRole;
use crate::vocab::tool::ToolInvocation;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineEvent {
    pub run_id: i64,
    /// 1-based, gapless within a run.
    pub seq: u32,
    /// Milliseconds of work since the run started: a wait for a person
    /// at a step gate is not counted.
    pub at_ms: u64,
    pub kind: EventKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    RunStarted {
        session_id: String,
        question: String,
        lang: Lang,
        /// Display name of the model, e.g. "offline (rule-based)".
        model: String,
        /// Scenario name when the run was driven by one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scenario: Option<String>,
        /// What serves the run: backends, pack and its load warnings, models.
        #[serde(default, skip_serializing_if = "is_empty_sources")]
        sources: Arc<RunSources>,
    },
    /// The engine is about to execute `node` (emitted before it runs, and
    /// before waiting at a step gate), having arrived over `via`.
    NodeEntered {
        node: NodeId,
        attempt: u32,
        via: Option<ReasonCode>,
    },
    ModelCalled {
        role: AgentRole,
        attempt: u32,
        step_id: i64,
        duration_ms: u64,
        tokens: u64,
        tool_calls: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// The call's usage split and cost (absent in journals written
        /// before it was recorded).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<crate::vocab::usage::Usage>,
        /// Why the answer was rejected as the role's contract.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parse_error: Option<String>,
    },
    /// Shared with the run state: a run's events and its state hold the
    /// same record, not copies.
    ToolInvoked {
        invocation: Arc<ToolInvocation>,
    },
    GatekeeperChecked {
        result: Arc<GatekeeperResult>,
    },
    VerdictUpdated(VerdictSnapshot),
    /// The one terminal event of a node attempt, with the edge the router
    /// chose. The orchestration trace is derived from these alone
    /// (`vocab::trace::build_trace`).
    NodeFinished {
        node: NodeId,
        outcome: Outcome,
        reason_code: ReasonCode,
        attempt: u32,
        next: NodeId,
        /// Short code-made explanation (parse error, failed rule...). Never
        /// tool text.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        detail: String,
    },
    RunFinished(RunEnd),
}

fn is_empty_sources(s: &Arc<RunSources>) -> bool {
    s.is_empty()
}

impl EngineEvent {
    pub fn is_terminal(&self) -> bool {
        matches!(self.kind, EventKind::RunFinished(_))
    }
}

/// Which part of a streamed answer a [`ModelDelta`] extends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeltaPart {
    /// Reasoning the server sends beside the answer (`reasoning_content`).
    Reasoning,
    /// The answer text.
    Content,
    /// A tool call begins: its name.
    ToolCall,
    /// A piece of the arguments of the tool call begun last.
    ToolArguments,
}

/// A piece of a model answer as it streams in, for live views only. Not an
/// [`EngineEvent`]: it has no sequence number, is never journaled and a
/// replay does not re-create it (the step's recorded output stands for
/// it). Pieces sent while a viewer lags arrive merged; the call's
/// `ModelCalled` event ends its text either way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelDelta {
    pub run_id: i64,
    /// The agent step this call will be recorded as (1-based, per run), so
    /// a viewer starts a fresh text for each call.
    pub step_index: u32,
    pub role: AgentRole,
    pub attempt: u32,
    pub part: DeltaPart,
    pub text: String,
}

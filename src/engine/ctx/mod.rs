//! The context one run executes in: its state, the event emitter, the
//! tool invoker and the model call every agent node shares. Nodes take a
//! [`RunCtx`] and return a [`NodeResult`]; the run loop (`engine::run`)
//! routes between them.

mod agent;
mod emit;

pub(crate) use agent::{NodeResult, invalid, parse_status_str, rendered_input, step_text};
pub(crate) use emit::{DeltaOut, Emitter};

use crate::engine::graph;
use crate::engine::invoker::ToolInvoker;
use crate::engine::state::RunState;
use crate::engine::{Engine, FaultInjection};
use crate::vocab::events::EventKind;
use crate::vocab::graph::Outcome;
use crate::vocab::record::RecordError;
use crate::vocab::run::VerdictSnapshot;
use crate::vocab::run::{Failure, FailureClass};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Why a run stopped without an answer.
#[derive(Debug)]
pub(crate) enum Unhandled {
    Record(RecordError),
    Cancelled,
    RecursionLimit,
    Internal(String),
}

impl Unhandled {
    pub fn failure(&self) -> Failure {
        match self {
            Unhandled::Record(e) => Failure::new(FailureClass::Store, format!("store error: {e}")),
            Unhandled::Cancelled => Failure::new(
                FailureClass::Cancelled,
                "stopped by the user before the run finished",
            ),
            Unhandled::RecursionLimit => Failure::new(
                FailureClass::Internal,
                format!(
                    "recursion limit of {} node executions reached",
                    graph::RECURSION_LIMIT
                ),
            ),
            Unhandled::Internal(m) => {
                Failure::new(FailureClass::Internal, format!("internal error: {m}"))
            }
        }
    }
}

impl From<RecordError> for Unhandled {
    fn from(e: RecordError) -> Self {
        Unhandled::Record(e)
    }
}

/// Everything one run needs while it executes.
pub(crate) struct RunCtx<'a> {
    pub engine: &'a Engine,
    pub state: RunState,
    pub emitter: Emitter,
    pub invoker: ToolInvoker,
    pub faults: FaultInjection,
    pub model_name: String,
    pub started: Instant,
    pub verdicts: VerdictSnapshot,
    /// Set when a person stops the run; model and tool calls in flight
    /// end at once.
    pub cancel: CancellationToken,
    /// What serves this run (the outcome reports it).
    pub sources: std::sync::Arc<crate::vocab::run::RunSources>,
    /// The wait owed before the next model call: set by a retryable model
    /// failure, whose technical retry is that next call.
    pub backoff: Option<std::time::Duration>,
    /// Where the pieces of streamed answers go, when someone watches live.
    pub deltas: Option<DeltaOut>,
}

impl RunCtx<'_> {
    pub async fn emit(&mut self, kind: EventKind) -> Result<(), Unhandled> {
        self.emitter.emit(kind).await.map_err(Unhandled::Record)
    }
}

/// Outcome of an attempt that the router will see, for node code that has
/// no detail to add.
pub(crate) fn result(outcome: Outcome, detail: impl Into<String>) -> NodeResult {
    NodeResult {
        outcome,
        detail: detail.into(),
    }
}

//! The engine loop: run lifecycle, the bounded node loop, step gate and
//! cancellation, and the unhandled-failure path with best-effort
//! persistence (ARCHITECTURE.md, "Run status").
//!
//! Attempt numbers are per node entry: 1 when a node is entered from
//! another node, +1 for each technical retry of the same node. So the
//! second-round Planner after an evidence retry starts again at attempt 1,
//! matching its reset `planner_retry_count`.

mod finish;
mod glue;

use crate::engine::ctx::{DeltaOut, Emitter, NodeResult, RunCtx, Unhandled};

use crate::engine::graph;
use crate::engine::invoker::ToolInvoker;
use crate::engine::state::RunState;
use crate::engine::unchecked::{Met, Origin};
use crate::engine::{Engine, EngineError, RunOutcome, RunRequest, StepCommand, StepGate};
use crate::vocab::agent::AgentRole;
use crate::vocab::events::EventKind;
use crate::vocab::graph::{NodeId, ReasonCode};
use crate::vocab::record::RunStart;
use crate::vocab::run::{Failure, FailureClass, PackIdentity, RunSources, VerdictSnapshot};
use crate::vocab::trace::NodeEvent;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

impl RunCtx<'_> {
    async fn drive(
        &mut self,
        question: &str,
        scenario: Option<String>,
        sources: Arc<RunSources>,
        mut gate: Option<StepGate>,
        cancel: &CancellationToken,
    ) -> Result<(), Unhandled> {
        self.emit(EventKind::RunStarted {
            session_id: self.state.session_id.clone(),
            question: question.to_string(),
            lang: self.state.lang,
            model: self.model_name.clone(),
            scenario,
            sources,
        })
        .await?;
        self.state.history = self
            .engine
            .recorder
            .session_history(&self.state.session_id, self.engine.config.history_limit)
            .await?
            .into_iter()
            // The run being executed is not history yet.
            .filter(|t| t.run_id != self.state.run_id)
            .collect();
        self.record_unavailable_sources().await?;

        let mut node = NodeId::Planner;
        let mut via = Some(ReasonCode::Start);
        while node != NodeId::End {
            if cancel.is_cancelled() {
                return Err(Unhandled::Cancelled);
            }
            if self.state.recursion_limit_reached() {
                return Err(Unhandled::RecursionLimit);
            }
            let attempt = self.state.attempt;
            self.state.in_progress = Some(node);
            self.emit(EventKind::NodeEntered { node, attempt, via })
                .await?;
            let waited = wait_at_gate(&mut gate, cancel).await?;
            self.exclude_wait(waited);
            self.state.counters.node_executions += 1;

            let result = self.execute(node, attempt).await?;
            self.state.set_status(node, result.outcome);
            let route = graph::route(node, result.outcome, &self.state.route_facts())
                .map_err(|e| Unhandled::Internal(e.to_string()))?;
            if route.to == NodeId::Fallback && node != NodeId::Fallback
                || result.outcome.is_technical_failure()
            {
                self.state.failures.push(Met {
                    origin: Origin::Node,
                    failure: Failure::new(
                        FailureClass::InvalidOutput,
                        format!("{node} ended {}: {}", result.outcome, result.detail),
                    ),
                });
            }
            self.state.node_events.push(NodeEvent {
                node,
                outcome: result.outcome,
                reason_code: route.reason_code,
                attempt,
            });
            self.state.in_progress = None;
            self.emit(EventKind::NodeFinished {
                node,
                outcome: result.outcome,
                reason_code: route.reason_code,
                attempt,
                next: route.to,
                detail: result.detail,
            })
            .await?;
            self.state.apply(node, route);
            self.emit_verdicts_if_changed().await?;
            via = Some(route.reason_code);
            node = route.to;
        }
        Ok(())
    }

    /// Each source that could not be set up (an MCP server that did not
    /// start) is a failed invocation of this run from its start, so the
    /// run names it among what it could not check, as it names a source
    /// that failed mid-run. It is not a root cause of what the nodes did:
    /// no node asked for it.
    async fn record_unavailable_sources(&mut self) -> Result<(), Unhandled> {
        let tools = Arc::clone(&self.engine.tools);
        for source in tools.unavailable() {
            let seq = self.state.counters.next_seq();
            let invoked = self.invoker.record_unavailable(source, seq).await?;
            let invocation = Arc::new(invoked.invocation);
            self.state.invocations.push(Arc::clone(&invocation));
            self.emit(EventKind::ToolInvoked { invocation }).await?;
        }
        Ok(())
    }

    async fn execute(&mut self, node: NodeId, attempt: u32) -> Result<NodeResult, Unhandled> {
        use crate::engine::nodes;
        match node {
            NodeId::Planner => nodes::planner::run(self, attempt).await,
            NodeId::Executor => nodes::executor::run(self, attempt).await,
            NodeId::Gatekeeper => glue::gatekeeper(self).await,
            NodeId::VerifiedInput => glue::verified_input(self),
            NodeId::Verifier => nodes::verifier::run(self, attempt).await,
            NodeId::EvidenceRetry => glue::evidence_retry(self),
            NodeId::Composer => nodes::composer::run(self, attempt).await,
            NodeId::Fallback => Ok(glue::fallback(self)),
            NodeId::Start | NodeId::End => Err(Unhandled::Internal(format!(
                "{node} is not an executable node"
            ))),
        }
    }

    async fn emit_verdicts_if_changed(&mut self) -> Result<(), Unhandled> {
        let now = self.state.verdict_snapshot();
        if now == self.verdicts {
            return Ok(());
        }
        self.verdicts = now;
        self.emit(EventKind::VerdictUpdated(now)).await
    }
}

/// Step mode: wait for Next (one node) or Continue (stop waiting). A
/// dropped sender means continue; cancellation ends the wait. Returns how
/// long the wait took.
async fn wait_at_gate(
    gate: &mut Option<StepGate>,
    cancel: &CancellationToken,
) -> Result<Duration, Unhandled> {
    let Some(g) = gate else {
        return Ok(Duration::ZERO);
    };
    let since = Instant::now();
    tokio::select! {
        cmd = g.commands.recv() => {
            if cmd != Some(StepCommand::Next) {
                *gate = None;
            }
            Ok(since.elapsed())
        }
        _ = cancel.cancelled() => Err(Unhandled::Cancelled),
    }
}

impl RunCtx<'_> {
    /// The run clock counts work, not the wait for a person at a step
    /// gate: its origin moves forward by the wait, so event times, node
    /// durations, the run's total and its deadline all leave it out.
    fn exclude_wait(&mut self, waited: Duration) {
        if waited.is_zero() {
            return;
        }
        self.started = self.started.checked_add(waited).unwrap_or(self.started);
        self.emitter.exclude_wait(waited);
    }
}

impl Engine {
    /// What serves a run of this engine: each tool's backend, the pack
    /// (path, content hash, load warnings) and the model of each role.
    pub fn sources(&self) -> RunSources {
        let mut sources = RunSources::default();
        for name in self.tools.names() {
            let Some(tool) = self.tools.get(name) else {
                continue;
            };
            sources.tools.insert(name.to_string(), tool.backend());
            if let (None, Some(pack)) = (&sources.pack, tool.pack()) {
                sources.pack = Some(PackIdentity {
                    path: pack.dir.display().to_string(),
                    content_hash: pack.content_hash.clone(),
                });
                sources.pack_warnings = pack.warnings.iter().map(ToString::to_string).collect();
            }
        }
        for role in AgentRole::ALL {
            sources
                .models
                .insert(role.as_str().to_string(), self.model.model_for(role));
        }
        sources
    }

    /// Runs one diagnosis to the end. Returns `Err` only when the run could
    /// not be created, or when it failed and the store stayed unavailable
    /// for the recovery timeout; a cancelled or otherwise failed run that
    /// was persisted is `Ok` with status CANCELLED or FAILED.
    pub async fn run(&self, request: RunRequest) -> Result<RunOutcome, EngineError> {
        let started = Instant::now();
        // Sources that were down at set-up are tried again (within their
        // timeouts); the tools of those now up are this run's, permitted
        // as the ones that started at set-up are.
        let (tools, added) = self.tools.for_run().await;
        if added.is_empty() && Arc::ptr_eq(&tools, &self.tools) {
            return self.run_started(request, started).await;
        }
        let mut engine = Engine {
            tools,
            ..self.clone()
        };
        if engine.config.permit_late_tools {
            engine.config.tool_permissions.extend(added);
        }
        engine.run_started(request, started).await
    }

    async fn run_started(
        &self,
        mut request: RunRequest,
        started: Instant,
    ) -> Result<RunOutcome, EngineError> {
        let model_name = self.model.name();
        let sources = Arc::new(self.sources());
        let handle = self
            .recorder
            .start_run(&RunStart {
                session_id: request.session_id.clone(),
                question: request.question.clone(),
                model: model_name.clone(),
                pack: request.pack.clone(),
                scenario: request.scenario.clone(),
                sources: Arc::clone(&sources),
                rerun_of: request.rerun_of,
            })
            .await
            .map_err(EngineError::Start)?;
        let state = RunState::new(handle.run_id, handle.session_id, request.question.clone());
        let emitter = Emitter::new(
            handle.run_id,
            started,
            request.events.take(),
            self.recorder.clone(),
            request.cancel.clone(),
        );
        let invoker = ToolInvoker::new(
            self.tools.clone(),
            self.config.tool_permissions.clone(),
            self.recorder.clone(),
            handle.run_id,
        )
        .with_cancel(request.cancel.clone());
        let mut ctx = RunCtx {
            engine: self,
            state,
            emitter,
            invoker,
            faults: std::mem::take(&mut request.faults),
            model_name,
            started,
            verdicts: VerdictSnapshot::default(),
            cancel: request.cancel.clone(),
            sources: Arc::clone(&sources),
            backoff: None,
            deltas: request.deltas.take().map(DeltaOut::new),
        };
        let gate = request.step_gate.take();
        let scenario = request.scenario.take();
        let result = ctx
            .drive(&request.question, scenario, sources, gate, &request.cancel)
            .await;
        match result {
            Ok(()) => ctx.finish_success().await,
            Err(failure) => ctx.finish_failed(failure).await,
        }
    }
}

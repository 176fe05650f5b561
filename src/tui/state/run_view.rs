//! `RunView`: everything the panes show about one run, as a pure fold over
//! its `EngineEvent`s. Live runs, replays and demos all build it the same
//! way, so replay position k is exactly `fold(events[..k])` and shows what
//! the live run showed after its k-th event.

use crate::vocab::contracts::GatekeeperResult;
use crate::vocab::events::{DeltaPart, EngineEvent, EventKind, ModelDelta};
use crate::vocab::graph::{NodeId, Outcome, ReasonCode};
use crate::vocab::run::{RunEnd, RunSources, VerdictSnapshot};
use crate::vocab::tool::ToolInvocation;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq)]
pub struct TransitionRow {
    pub from: NodeId,
    pub to: NodeId,
    pub outcome: Outcome,
    pub reason_code: ReasonCode,
    pub attempt: u32,
    pub detail: String,
    /// From the node's entry to its terminal event (run clock).
    pub duration_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunView {
    pub run_id: Option<i64>,
    pub session_id: String,
    pub question: String,
    pub model: String,
    pub scenario: Option<String>,
    /// Backends, pack (and its load warnings) and models of the run.
    pub sources: Arc<RunSources>,
    /// The node that was entered and has not finished yet.
    pub current: Option<NodeId>,
    /// How the current node was reached: the edge the engine is about to
    /// take (step mode waits here).
    pub pending_edge: Option<(NodeId, NodeId, ReasonCode)>,
    /// Run-clock time the current node was entered at.
    pub entered_at_ms: u64,
    /// Node -> times entered.
    pub visits: BTreeMap<NodeId, u32>,
    /// (from, to) -> times taken.
    pub edges_taken: BTreeMap<(NodeId, NodeId), u32>,
    pub transitions: Vec<TransitionRow>,
    pub last_reason: Option<ReasonCode>,
    pub invocations: Vec<Arc<ToolInvocation>>,
    pub gatekeeper: Option<Arc<GatekeeperResult>>,
    pub gatekeeper_rounds: u32,
    pub verdict: VerdictSnapshot,
    pub model_calls: u32,
    pub model_errors: u32,
    pub tokens: u64,
    /// The calls' usage summed: the split and, when priced, the cost.
    pub usage: crate::vocab::usage::Usage,
    pub finished: Option<RunEnd>,
    pub events_applied: usize,
    pub last_at_ms: u64,
    /// The streamed answer of the model call in progress, as far as it
    /// has arrived (live runs with a streaming model only).
    pub streaming: Option<StreamingText>,
}

/// A model answer growing as its pieces arrive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamingText {
    pub step_index: u32,
    pub role: Option<crate::vocab::agent::AgentRole>,
    pub reasoning: String,
    /// The answer text, and tool calls as they are written.
    pub content: String,
}

/// What one streamed call may hold on screen; the head goes first, since
/// the pane shows the newest text.
const STREAMING_KEEP: usize = 64 * 1024;

impl RunView {
    pub fn fold<'a>(events: impl IntoIterator<Item = &'a EngineEvent>) -> RunView {
        let mut v = RunView::default();
        for e in events {
            v.apply(e);
        }
        v
    }

    pub fn apply(&mut self, event: &EngineEvent) {
        self.events_applied += 1;
        self.last_at_ms = self.last_at_ms.max(event.at_ms);
        if self.run_id.is_none() {
            self.run_id = Some(event.run_id);
        }
        match &event.kind {
            EventKind::RunStarted {
                session_id,
                question,
                model,
                scenario,
                sources,
                ..
            } => {
                self.session_id = session_id.clone();
                self.question = question.clone();
                self.model = model.clone();
                self.scenario = scenario.clone();
                self.sources = Arc::clone(sources);
            }
            EventKind::NodeEntered { node, via, .. } => {
                let from = self
                    .transitions
                    .last()
                    .map(|t| t.from)
                    .unwrap_or(NodeId::Start);
                let reason = via.unwrap_or(ReasonCode::Start);
                if self.transitions.is_empty() {
                    *self.edges_taken.entry((NodeId::Start, *node)).or_default() += 1;
                    self.last_reason = Some(reason);
                }
                self.pending_edge = Some((from, *node, reason));
                self.current = Some(*node);
                self.entered_at_ms = event.at_ms;
                *self.visits.entry(*node).or_default() += 1;
            }
            EventKind::ModelCalled {
                error,
                tokens,
                usage,
                ..
            } => {
                self.streaming = None;
                self.model_calls += 1;
                self.tokens += tokens;
                if let Some(u) = usage {
                    self.usage.add(u);
                }
                if error.is_some() {
                    self.model_errors += 1;
                }
            }
            EventKind::ToolInvoked { invocation } => self.invocations.push(invocation.clone()),
            EventKind::GatekeeperChecked { result } => {
                self.gatekeeper = Some(result.clone());
                self.gatekeeper_rounds += 1;
            }
            EventKind::VerdictUpdated(v) => self.verdict = *v,
            EventKind::NodeFinished {
                node,
                outcome,
                reason_code,
                attempt,
                next,
                detail,
            } => {
                self.transitions.push(TransitionRow {
                    from: *node,
                    to: *next,
                    outcome: *outcome,
                    reason_code: *reason_code,
                    attempt: *attempt,
                    detail: detail.clone(),
                    duration_ms: event.at_ms.saturating_sub(self.entered_at_ms),
                });
                *self.edges_taken.entry((*node, *next)).or_default() += 1;
                self.last_reason = Some(*reason_code);
                self.pending_edge = None;
                self.current = if *next == NodeId::End {
                    None
                } else {
                    self.current
                };
            }
            EventKind::RunFinished(end) => {
                self.streaming = None;
                self.current = None;
                self.pending_edge = None;
                if end.effective_verdict.is_some() {
                    self.verdict.effective_verdict = end.effective_verdict;
                }
                self.finished = Some(end.clone());
            }
        }
    }

    /// A piece of the running call's streamed answer. Pieces are not
    /// events: a replay never has them, and the call's ModelCalled event
    /// ends the text.
    pub fn apply_delta(&mut self, delta: &ModelDelta) {
        // Every call ends in one ModelCalled event, so calls up to
        // `model_calls` have ended and their late pieces are stale.
        if self.finished.is_some()
            || self.run_id.is_some_and(|id| id != delta.run_id)
            || delta.step_index <= self.model_calls
        {
            return;
        }
        let text = self.streaming.get_or_insert_with(StreamingText::default);
        if text.step_index != delta.step_index {
            *text = StreamingText {
                step_index: delta.step_index,
                role: Some(delta.role),
                ..StreamingText::default()
            };
        }
        let into = match delta.part {
            DeltaPart::Reasoning => &mut text.reasoning,
            DeltaPart::Content | DeltaPart::ToolArguments => &mut text.content,
            DeltaPart::ToolCall => {
                if !text.content.is_empty() && !text.content.ends_with('\n') {
                    text.content.push('\n');
                }
                text.content.push_str("→ ");
                &mut text.content
            }
        };
        into.push_str(&delta.text);
        if delta.part == DeltaPart::ToolCall {
            into.push(' ');
        }
        if into.len() > STREAMING_KEEP {
            let mut cut = into.len() - STREAMING_KEEP / 2;
            while !into.is_char_boundary(cut) {
                cut += 1;
            }
            into.replace_range(..cut, "…");
        }
    }

    pub fn is_running(&self) -> bool {
        self.run_id.is_some() && self.finished.is_none()
    }

    pub fn visited(&self, node: NodeId) -> u32 {
        self.visits.get(&node).copied().unwrap_or(0)
    }

    pub fn edge_count(&self, from: NodeId, to: NodeId) -> u32 {
        self.edges_taken.get(&(from, to)).copied().unwrap_or(0)
    }

    pub fn failed_bindings(&self) -> usize {
        self.gatekeeper
            .as_ref()
            .map_or(0, |g| g.checked_bindings.len() - g.verified_binding_count())
    }
}

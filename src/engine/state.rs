//! Typed run state: the latest output and status of every node, the retry
//! counters, the verdict ceiling and the bounded list of node terminal
//! events.
//!
//! Counters change in exactly one place, [`RunState::apply`], when the
//! engine takes an edge. Keeping that bookkeeping out of the nodes is what
//! lets the route tests drive the real state through every edge without a
//! model.

use crate::engine::graph::{Route, RouteFacts};
use crate::engine::unchecked::Met;
use crate::vocab::agent::HistoryTurn;
use crate::vocab::contracts::ComposerOutput;
use crate::vocab::contracts::{
    ExecutorEvidence, GatekeeperResult, Lang, PlannerPlan, Verdict, VerifierOutput,
};
use crate::vocab::dto::{
    ComposerInput, EvidenceGap, PlannerMode, RetryContext, VerifiedProjection,
};
use crate::vocab::evaluation::ParseStatusRecord;
use crate::vocab::graph::{NodeId, Outcome, ReasonCode};
use crate::vocab::run::VerdictSnapshot;
use crate::vocab::tool::ToolInvocation;
use crate::vocab::trace::NodeEvent;
use std::collections::BTreeSet;
use std::sync::Arc;

/// Run-wide totals written to the run row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub tokens: u64,
    pub agent_steps: u32,
    pub tool_calls: u32,
    /// Node executions so far (the recursion limit counts these).
    pub node_executions: u32,
    /// Shared order of agent steps and tool invocations within the run.
    pub seq: u32,
}

impl Counters {
    pub fn next_seq(&mut self) -> u32 {
        self.seq += 1;
        self.seq
    }
}

#[derive(Debug, Clone, Default)]
pub struct RunState {
    pub run_id: i64,
    pub session_id: String,
    pub question: String,
    pub lang: Lang,
    pub history: Vec<HistoryTurn>,

    pub planner_plan: Option<PlannerPlan>,
    /// The question's subjects, resolved by code from the first plan
    /// (`engine::subjects`).
    pub subjects: Vec<crate::engine::subjects::Subject>,
    pub planner_status: Option<Outcome>,
    pub planner_retry_count: u32,
    pub planner_mode: PlannerMode,

    pub executor_output: Option<ExecutorEvidence>,
    pub executor_status: Option<Outcome>,
    pub executor_parse_status: Option<ParseStatusRecord>,

    pub gatekeeper_result: Option<Arc<GatekeeperResult>>,
    pub gatekeeper_status: Option<Outcome>,

    pub verified: Option<VerifiedProjection>,
    pub verified_binding_count: usize,
    pub ceiling: Option<Verdict>,

    pub verifier_output: Option<VerifierOutput>,
    pub verifier_status: Option<Outcome>,
    pub verifier_retry_count: u32,
    pub model_verdict: Option<Verdict>,
    pub effective_verdict: Option<Verdict>,
    /// Critical gaps extracted from the last completed Verifier output.
    pub evidence_gaps: Vec<EvidenceGap>,

    /// Built once per Composer stage so that a technical retry re-sends the
    /// same input.
    pub composer_input: Option<Arc<ComposerInput>>,
    pub composer_output: Option<ComposerOutput>,
    pub composer_status: Option<Outcome>,
    pub composer_retry_count: u32,

    pub evidence_retry_count: u32,
    pub retry_context: Option<RetryContext>,

    pub node_events: Vec<NodeEvent>,
    /// The node entered and not yet finished (where a stopped run was).
    pub in_progress: Option<NodeId>,
    pub final_answer: Option<String>,
    /// Every failure the run met, in order: failed model calls, failed
    /// invocations, rejected outputs. The root cause is chosen from these.
    pub failures: Vec<Met>,
    /// Tools named in the queries of any plan of this run.
    pub planned_tools: BTreeSet<String>,
    /// The reason code of the edge that led to the fallback.
    pub fallback_reason: Option<ReasonCode>,
    /// This run's tool invocations, in order.
    pub invocations: Vec<Arc<ToolInvocation>>,
    /// Ref texts as facts, parsed once per run: by the Gatekeeper, read
    /// back by the answer check.
    pub facts: crate::evidence::facts::FactCache,
    /// What the next technical retry of a node is told besides the format
    /// reminder: the Composer's retry hears which word of its statement
    /// the evidence did not ground. Taken by that retry.
    pub retry_note: Option<String>,
    pub counters: Counters,
    /// Attempt of the node about to run: 1 when entered from another node,
    /// +1 for each technical retry of the same node.
    pub attempt: u32,
}

impl RunState {
    pub fn new(run_id: i64, session_id: String, question: String) -> RunState {
        let lang = Lang::detect(&question);
        RunState {
            run_id,
            session_id,
            question,
            lang,
            attempt: 1,
            ..Default::default()
        }
    }

    /// What the pure router needs from this state.
    pub fn route_facts(&self) -> RouteFacts {
        RouteFacts {
            planner_retry_count: self.planner_retry_count,
            verifier_retry_count: self.verifier_retry_count,
            composer_retry_count: self.composer_retry_count,
            evidence_retry_count: self.evidence_retry_count,
            verified_binding_count: self.verified_binding_count,
            ceiling: self.ceiling,
            effective_verdict: self.effective_verdict,
            extractable_gap_count: self.evidence_gaps.len(),
            fallback_reason: self.fallback_reason,
        }
    }

    /// Records the status a node attempt ended with (before routing).
    pub fn set_status(&mut self, node: NodeId, outcome: Outcome) {
        match node {
            NodeId::Planner => self.planner_status = Some(outcome),
            NodeId::Executor => self.executor_status = Some(outcome),
            NodeId::Gatekeeper => self.gatekeeper_status = Some(outcome),
            NodeId::Verifier => self.verifier_status = Some(outcome),
            NodeId::Composer => self.composer_status = Some(outcome),
            _ => {}
        }
    }

    /// The bookkeeping of taking an edge: retry counters, planner mode,
    /// the fallback reason and the next attempt number.
    pub fn apply(&mut self, from: NodeId, route: Route) {
        match route.reason_code {
            ReasonCode::PlannerTechnicalRetry => self.planner_retry_count += 1,
            ReasonCode::VerifierTechnicalRetry => self.verifier_retry_count += 1,
            ReasonCode::ComposerTechnicalRetry => self.composer_retry_count += 1,
            ReasonCode::EvidenceGapRetry => {
                self.evidence_retry_count += 1;
                self.planner_retry_count = 0;
                self.planner_mode = PlannerMode::EvidenceGapOnly;
                // The next round is judged afresh on its full snapshot:
                // nothing of this round's verdicts carries over (the retry
                // context keeps the prior verified material read-only).
                self.clear_round();
            }
            _ => {}
        }
        if route.to == NodeId::Fallback && from != NodeId::Fallback {
            self.fallback_reason = Some(route.reason_code);
        }
        self.attempt = if route.to == from {
            self.attempt + 1
        } else {
            1
        };
    }

    fn clear_round(&mut self) {
        self.executor_output = None;
        self.gatekeeper_result = None;
        self.gatekeeper_status = None;
        self.verified = None;
        self.verified_binding_count = 0;
        self.ceiling = None;
        self.verifier_output = None;
        self.model_verdict = None;
        self.effective_verdict = None;
        self.evidence_gaps.clear();
        self.composer_input = None;
    }

    /// Stores a completed Verifier output: model verdict, effective verdict
    /// = min(model, ceiling), and the gaps an evidence retry could close.
    pub fn set_verifier_output(&mut self, output: VerifierOutput, gaps: Vec<EvidenceGap>) {
        let model = output.verdict;
        self.model_verdict = Some(model);
        // Without a ceiling the Verifier should not have run; LOW_CONFID is
        // the safe cap in that case.
        let ceiling = self.ceiling.unwrap_or(Verdict::LowConfid);
        self.effective_verdict = Some(model.min(ceiling));
        self.evidence_gaps = gaps;
        self.verifier_output = Some(output);
    }

    /// Stores the Gatekeeper's raw result and its normalised status.
    pub fn set_gatekeeper(&mut self, result: Option<Arc<GatekeeperResult>>, status: Outcome) {
        self.verified_binding_count = result
            .as_deref()
            .map(GatekeeperResult::verified_binding_count)
            .unwrap_or(0);
        self.gatekeeper_result = result;
        self.gatekeeper_status = Some(status);
    }

    /// Stores the verified projection and its ceiling.
    pub fn set_projection(&mut self, projection: VerifiedProjection) {
        self.verified_binding_count = projection.verified_binding_count;
        self.ceiling = Some(projection.ceiling);
        self.verified = Some(projection);
    }

    /// The values the verdict panel shows; a change emits VerdictUpdated.
    pub fn verdict_snapshot(&self) -> VerdictSnapshot {
        VerdictSnapshot {
            model_verdict: self.model_verdict,
            ceiling: self.ceiling,
            effective_verdict: self.effective_verdict,
            groundedness_score: self.verifier_output.as_ref().map(|v| v.groundedness_score),
            evidence_retry_count: self.evidence_retry_count,
        }
    }

    /// The recursion limit: a further node execution is not allowed.
    pub fn recursion_limit_reached(&self) -> bool {
        self.counters.node_executions >= crate::engine::graph::RECURSION_LIMIT
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::graph::route;

    fn take(state: &mut RunState, node: NodeId, outcome: Outcome) -> Route {
        let r = route(node, outcome, &state.route_facts()).unwrap();
        state.apply(node, r);
        r
    }

    #[test]
    fn planner_retries_once_per_stage() {
        let mut s = RunState::new(1, "s".into(), "q".into());
        let r = take(&mut s, NodeId::Planner, Outcome::InvalidOutput);
        assert_eq!(r.to, NodeId::Planner);
        assert_eq!(s.attempt, 2);
        let r = take(&mut s, NodeId::Planner, Outcome::RetryableFailed);
        assert_eq!(r.to, NodeId::Fallback);
        assert_eq!(s.fallback_reason, Some(ReasonCode::PlannerFailed));
        assert_eq!(s.evidence_retry_count, 0);
    }

    #[test]
    fn evidence_retry_resets_the_planner_stage() {
        let mut s = RunState::new(1, "s".into(), "q".into());
        take(&mut s, NodeId::Planner, Outcome::InvalidOutput);
        assert_eq!(s.planner_retry_count, 1);
        take(&mut s, NodeId::EvidenceRetry, Outcome::Completed);
        assert_eq!(s.planner_retry_count, 0);
        assert_eq!(s.evidence_retry_count, 1);
        assert_eq!(s.planner_mode, PlannerMode::EvidenceGapOnly);
        assert_eq!(s.attempt, 1);
    }

    #[test]
    fn effective_verdict_is_capped_by_the_ceiling() {
        let mut s = RunState::new(1, "s".into(), "q".into());
        s.ceiling = Some(Verdict::LowConfid);
        s.set_verifier_output(
            VerifierOutput {
                verdict: Verdict::Pass,
                groundedness_score: 1.0,
                critical_fact_count: 0,
                claim_checks: vec![],
                facts_checked: vec![],
                rationale: String::new(),
            },
            vec![],
        );
        assert_eq!(s.model_verdict, Some(Verdict::Pass));
        assert_eq!(s.effective_verdict, Some(Verdict::LowConfid));
    }
}

//! A run of the scripted PASS path's shape, recorded through the Recorder
//! API the way the engine records one: journal events with a gapless seq,
//! each step and invocation stored under the seq of the event that
//! announces it, ids taken from the store.

use crate::helpers::{evidence, invocation};
use diagraph::vocab::agent::AgentRole;
use diagraph::vocab::contracts::{BindingStatus, CheckedBinding, GatekeeperResult};
use diagraph::vocab::contracts::{Lang, Verdict};
use diagraph::vocab::evaluation::SelfEvaluation;
use diagraph::vocab::events::{EngineEvent, EventKind};
use diagraph::vocab::graph::{NodeId, Outcome};
use diagraph::vocab::record::Recorder;
use diagraph::vocab::record::{AgentStep, RunFinish, RunHandle, RunStart};
use diagraph::vocab::run::RunStatus;
use diagraph::vocab::run::{RunEnd, VerdictSnapshot};
use diagraph::vocab::tool::{EvidenceStatus, ToolInvocation};
use diagraph::vocab::trace::{NodeEvent, build_trace};
use diagraph::vocab::usage::Usage;
use serde_json::json;

pub struct RecordedRun {
    pub handle: RunHandle,
    /// Every event, in the order the "live" run emitted it.
    pub events: Vec<EngineEvent>,
    pub step_ids: Vec<i64>,
    pub invocation_ids: Vec<i64>,
}

struct Emitter<'a> {
    rec: &'a dyn Recorder,
    run_id: i64,
    seq: u32,
    events: Vec<EngineEvent>,
    nodes: Vec<NodeEvent>,
}

impl Emitter<'_> {
    fn next_seq(&mut self) -> u32 {
        self.seq += 1;
        self.seq
    }

    async fn emit_at(&mut self, seq: u32, kind: EventKind) {
        let event = EngineEvent {
            run_id: self.run_id,
            seq,
            at_ms: u64::from(seq) * 3,
            kind,
        };
        self.rec.record_event(&event).await.unwrap();
        self.events.push(event);
    }

    async fn emit(&mut self, kind: EventKind) {
        let seq = self.next_seq();
        self.emit_at(seq, kind).await;
    }

    async fn enter(&mut self, node: NodeId, via: Option<&str>) {
        self.emit(EventKind::NodeEntered {
            node,
            attempt: 1,
            via: via.map(|v| v.parse().unwrap()),
        })
        .await;
    }

    async fn finish(&mut self, node: NodeId, outcome: Outcome, reason: &str, next: NodeId) {
        self.nodes.push(NodeEvent {
            node,
            outcome,
            reason_code: reason.parse().unwrap(),
            attempt: 1,
        });
        self.emit(EventKind::NodeFinished {
            node,
            outcome,
            reason_code: reason.parse().unwrap(),
            attempt: 1,
            next,
            detail: String::new(),
        })
        .await;
    }

    async fn model_call(
        &mut self,
        role: AgentRole,
        index: u32,
        output: &str,
        tool_calls: usize,
    ) -> i64 {
        let seq = self.next_seq();
        let step = AgentStep {
            id: 0,
            run_id: self.run_id,
            seq,
            step_index: index,
            agent_name: format!("{role:?}").to_lowercase(),
            attempt: 1,
            model_input: format!("{{\"role\":\"{role:?}\",\"index\":{index}}}"),
            model_output: output.into(),
            thought: String::new(),
            has_tool_call: tool_calls > 0,
            duration_ms: 2,
            token_count: 100,
            error: None,
            usage: Usage {
                prompt_tokens: 70,
                completion_tokens: 30,
                reasoning_tokens: Some(5),
                cached_tokens: None,
                cost_usd: Some(0.0025),
            },
            parse_error: None,
        };
        let step_id = self.rec.record_step(&step).await.unwrap();
        self.emit_at(
            seq,
            EventKind::ModelCalled {
                role,
                attempt: 1,
                step_id,
                duration_ms: 2,
                tokens: 100,
                tool_calls,
                error: None,
                usage: Some(step.usage),
                parse_error: None,
            },
        )
        .await;
        step_id
    }

    async fn tool(&mut self, step_id: i64, service: &str) -> ToolInvocation {
        let seq = self.next_seq();
        let text = format!(
            "2026-07-08T23:05:28Z ERROR {service} HikariPool-1 - Connection is not available, request timed out after 30000ms"
        );
        let mut inv = ToolInvocation {
            step_id: Some(step_id),
            input_params: json!({"service": service, "level": "ERROR"}),
            output_preview: json!({"logs": [{"message": text}], "total": 1}).to_string(),
            output_length: 120,
            ..invocation(
                self.run_id,
                seq,
                "query_logs",
                EvidenceStatus::Supported,
                vec![evidence("$.logs[0]", &text)],
            )
        };
        inv.id = self.rec.record_tool_invocation(&inv).await.unwrap();
        self.emit_at(
            seq,
            EventKind::ToolInvoked {
                invocation: inv.clone().into(),
            },
        )
        .await;
        inv
    }
}

pub fn gatekeeper_pass(inv: &ToolInvocation, claim_text: &str) -> GatekeeperResult {
    let matched = inv.retrieval_details.evidence_refs[0].text.clone();
    GatekeeperResult {
        status: "pass".into(),
        severity: "none".into(),
        rule_set_version: "test-rules-1".into(),
        rules: vec![],
        checked_bindings: vec![CheckedBinding {
            claim_id: "c1".into(),
            claim_text: claim_text.into(),
            claim_type: "root_cause".into(),
            tool_name: inv.tool_name.clone(),
            source_invocation_id: Some(inv.id),
            raw_path: Some("$.logs[0]".into()),
            evidence_excerpt: "Connection is not available".into(),
            matched_text: matched,
            status: BindingStatus::Pass,
            failed_rule: None,
            detail: String::new(),
            backfilled: false,
        }],
        unverified_bindings: vec![],
        claim_errors: vec![],
        failed_rules: vec![],
        warnings: vec![],
        errors: vec![],
    }
}

/// Records a complete PASS-path run and returns what the live run emitted.
pub async fn pass_run(
    rec: &dyn Recorder,
    session: Option<&str>,
    question: &str,
    service: &str,
) -> RecordedRun {
    let handle = rec
        .start_run(&RunStart {
            session_id: session.map(str::to_string),
            question: question.into(),
            model: "scripted".into(),
            pack: Some("fixtures/packs/shop".into()),
            scenario: Some("pass".into()),
            sources: Default::default(),
            rerun_of: None,
        })
        .await
        .unwrap();
    let mut e = Emitter {
        rec,
        run_id: handle.run_id,
        seq: 0,
        events: vec![],
        nodes: vec![],
    };
    e.emit(EventKind::RunStarted {
        session_id: handle.session_id.clone(),
        question: question.into(),
        lang: Lang::En,
        model: "scripted".into(),
        scenario: Some("pass".into()),
        sources: Default::default(),
    })
    .await;
    let mut steps = vec![];
    e.enter(NodeId::Planner, Some("start")).await;
    steps.push(
        e.model_call(AgentRole::Planner, 1, "{\"plan\":[]}", 0)
            .await,
    );
    e.finish(
        NodeId::Planner,
        Outcome::Completed,
        "completed",
        NodeId::Executor,
    )
    .await;
    e.enter(NodeId::Executor, Some("completed")).await;
    let call = e.model_call(AgentRole::Executor, 2, "", 1).await;
    steps.push(call);
    let inv = e.tool(call, service).await;
    let claim_text = format!("{service} database connection pool is exhausted");
    steps.push(
        e.model_call(AgentRole::Executor, 3, "{\"claims\":[]}", 0)
            .await,
    );
    e.finish(
        NodeId::Executor,
        Outcome::Completed,
        "completed",
        NodeId::Gatekeeper,
    )
    .await;
    e.enter(NodeId::Gatekeeper, Some("completed")).await;
    let gk = gatekeeper_pass(&inv, &claim_text);
    e.emit(EventKind::GatekeeperChecked {
        result: gk.clone().into(),
    })
    .await;
    e.finish(
        NodeId::Gatekeeper,
        Outcome::Pass,
        "gatekeeper_pass",
        NodeId::VerifiedInput,
    )
    .await;
    e.enter(NodeId::VerifiedInput, Some("gatekeeper_pass"))
        .await;
    e.finish(
        NodeId::VerifiedInput,
        Outcome::Completed,
        "completed",
        NodeId::Verifier,
    )
    .await;
    e.enter(NodeId::Verifier, Some("completed")).await;
    steps.push(
        e.model_call(AgentRole::Verifier, 4, "{\"verdict\":\"PASS\"}", 0)
            .await,
    );
    e.emit(EventKind::VerdictUpdated(VerdictSnapshot {
        model_verdict: Some(Verdict::Pass),
        ceiling: Some(Verdict::Pass),
        effective_verdict: Some(Verdict::Pass),
        groundedness_score: Some(0.875),
        evidence_retry_count: 0,
    }))
    .await;
    e.finish(
        NodeId::Verifier,
        Outcome::Completed,
        "completed",
        NodeId::Composer,
    )
    .await;
    e.enter(NodeId::Composer, Some("completed")).await;
    steps.push(
        e.model_call(AgentRole::Composer, 5, "{\"answer\":\"...\"}", 0)
            .await,
    );
    e.finish(
        NodeId::Composer,
        Outcome::Completed,
        "composer_completed",
        NodeId::End,
    )
    .await;
    let trace = build_trace(&e.nodes, 0);
    let answer = format!("The {service} connection pool is exhausted.");
    e.emit(EventKind::RunFinished(RunEnd {
        status: RunStatus::Success,
        degraded: false,
        answer: answer.clone(),
        effective_verdict: Some(Verdict::Pass),
        trace: trace.clone(),
        failure: None,
    }))
    .await;
    let self_evaluation: SelfEvaluation = serde_json::from_value(json!({
        "verifier_evaluation": {
            "verified_binding_count": 1,
            "prompt_versions": {},
            "rule_set_version": "synthetic",
            "verdict": "PASS",
            "model_verdict": "PASS",
            "groundedness_score": 0.875,
            "critical_fact_count": 1,
            "facts_checked": [{
                "claim_id": "c1",
                "fact": claim_text,
                "is_critical": true,
                "verification": "direct_evidence",
                "detail": "log line shows pool exhaustion",
                "evidence_refs": []
            }],
            "rationale": "bound to a log line",
            "round": 1,
            "traceability_version": "v1",
            "executor_structured_output": {
                "answer_version": "executor_evidence_v2",
                "claims": [{"claim_id": "c1", "claim_type": "root_cause", "claim_text": claim_text,
                            "support_level": "direct", "evidence_bindings": []}],
                "hypotheses": [],
                "recommended_actions": [{"action_text": "Raise the Hikari pool size and find the slow queries holding connections", "reason": "pool exhausted"}],
                "missing_info": []
            },
            "gatekeeper_result": serde_json::to_value(&gk).unwrap()
        }
    }))
    .unwrap();
    rec.finish_run(&RunFinish {
        run_id: handle.run_id,
        end: RunEnd {
            status: RunStatus::Success,
            degraded: false,
            answer,
            effective_verdict: Some(Verdict::Pass),
            trace,
            failure: None,
        },
        duration_ms: 42,
        token_count: 500,
        step_count: steps.len() as u32,
        tool_call_count: 1,
        self_evaluation: Some(self_evaluation.into()),
    })
    .await
    .unwrap();
    RecordedRun {
        handle,
        events: e.events,
        step_ids: steps,
        invocation_ids: vec![inv.id],
    }
}

//! Run lifecycle: a store that fails mid-run (recovered, and for good),
//! a store that is down at start, cancellation, the step gate and the live
//! events channel.

use crate::helpers::load_scenario;
use crate::runs::{Capture, scenario_engine};
use async_trait::async_trait;
use diagraph::engine::{EngineError, MemoryRecorder, StepCommand, StepGate};
use diagraph::vocab::agent::HistoryTurn;
use diagraph::vocab::events::{EngineEvent, EventKind};
use diagraph::vocab::graph::{NodeId, ReasonCode};
use diagraph::vocab::record::{AgentStep, RecordError, Recorder, RunFinish, RunHandle, RunStart};
use diagraph::vocab::run::FailureClass;
use diagraph::vocab::run::RunEnd;
use diagraph::vocab::run::RunStatus;
use diagraph::vocab::tool::{InvocationId, ToolInvocation};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;

/// A memory recorder whose event journal fails from the `fail_from`-th
/// event on, `failures` times (u32::MAX = for good); start can fail too.
struct Flaky {
    inner: MemoryRecorder,
    fail_from: u32,
    failures: AtomicU32,
    fail_start: AtomicBool,
    /// How many times the final run-row write fails (u32::MAX = for good).
    finish_failures: AtomicU32,
}

impl Flaky {
    fn new(fail_from: u32, failures: u32) -> Arc<Flaky> {
        Arc::new(Flaky {
            inner: MemoryRecorder::new(),
            fail_from,
            failures: AtomicU32::new(failures),
            fail_start: AtomicBool::new(false),
            finish_failures: AtomicU32::new(0),
        })
    }

    fn down(&self) -> Result<(), RecordError> {
        let left = self.failures.load(Ordering::SeqCst);
        if left == 0 {
            return Ok(());
        }
        if left != u32::MAX {
            self.failures.store(left - 1, Ordering::SeqCst);
        }
        Err(RecordError::Unavailable("connection refused".into()))
    }
}

#[async_trait]
impl Recorder for Flaky {
    async fn start_run(&self, start: &RunStart) -> Result<RunHandle, RecordError> {
        if self.fail_start.load(Ordering::SeqCst) {
            return Err(RecordError::Unavailable("no database".into()));
        }
        self.inner.start_run(start).await
    }
    async fn session_history(
        &self,
        s: &str,
        limit: usize,
    ) -> Result<Vec<HistoryTurn>, RecordError> {
        self.inner.session_history(s, limit).await
    }
    async fn record_step(&self, step: &AgentStep) -> Result<i64, RecordError> {
        self.inner.record_step(step).await
    }
    async fn record_tool_invocation(
        &self,
        i: &ToolInvocation,
    ) -> Result<InvocationId, RecordError> {
        self.inner.record_tool_invocation(i).await
    }
    async fn record_event(&self, event: &EngineEvent) -> Result<(), RecordError> {
        if event.seq >= self.fail_from {
            self.down()?;
        }
        self.inner.record_event(event).await
    }
    async fn finish_run(&self, finish: &RunFinish) -> Result<(), RecordError> {
        if self.failures.load(Ordering::SeqCst) > 0 {
            self.down()?;
        }
        let left = self.finish_failures.load(Ordering::SeqCst);
        if left > 0 {
            if left != u32::MAX {
                self.finish_failures.store(left - 1, Ordering::SeqCst);
            }
            return Err(RecordError::Unavailable("lost the connection".into()));
        }
        self.inner.finish_run(finish).await
    }
    async fn foreign_invocation_id(&self, run_id: i64) -> Result<InvocationId, RecordError> {
        self.inner.foreign_invocation_id(run_id).await
    }
    fn describe(&self) -> String {
        "flaky".into()
    }
}

fn engine_on(recorder: Arc<Flaky>) -> (diagraph::engine::Engine, diagraph::scenario::Scenario) {
    let s = load_scenario("01_pass.toml");
    let (mut engine, _) = scenario_engine(&s);
    engine.recorder = recorder;
    engine.config.store_recovery_timeout = Duration::from_secs(5);
    (engine, s)
}

#[tokio::test(start_paused = true)]
async fn a_store_failure_mid_run_ends_failed_with_every_event_persisted() {
    let rec = Flaky::new(6, 3);
    let (engine, s) = engine_on(rec.clone());
    let out = engine.run(s.request()).await.expect("store came back");
    assert_eq!(out.end.status, RunStatus::Failed);
    assert!(
        out.end
            .failure
            .as_ref()
            .unwrap()
            .message
            .starts_with("store error")
    );
    assert!(out.end.answer.is_empty());
    let journal = rec.inner.events_of(out.run_id);
    assert_eq!(
        journal, out.events,
        "the unpersisted tail was written on recovery"
    );
    assert!(matches!(
        journal.last().unwrap().kind,
        EventKind::RunFinished(RunEnd {
            status: RunStatus::Failed,
            ..
        })
    ));
    let data = rec.inner.snapshot();
    let finish = data.runs[0].2.as_ref().unwrap();
    assert_eq!(finish.end.status, RunStatus::Failed);
    assert_eq!(finish.end.trace, out.end.trace);
}

#[tokio::test(start_paused = true)]
async fn a_store_that_stays_down_returns_unpersisted() {
    let rec = Flaky::new(4, u32::MAX);
    let (engine, s) = engine_on(rec);
    match engine.run(s.request()).await {
        Err(EngineError::Unpersisted { reason, .. }) => assert!(reason.starts_with("store error")),
        other => panic!("{other:?}"),
    }
}

/// The answer is composed when the last write fails: the run is not turned
/// into a FAILED row, the same final write is retried and lands.
#[tokio::test(start_paused = true)]
async fn a_store_hiccup_on_the_final_write_keeps_the_answer() {
    let rec = Flaky::new(u32::MAX, 0);
    rec.finish_failures.store(2, Ordering::SeqCst);
    let (engine, s) = engine_on(rec.clone());
    let out = engine.run(s.request()).await.expect("store came back");
    assert_eq!(out.end.status, RunStatus::Success);
    assert!(!out.end.answer.is_empty());
    let data = rec.inner.snapshot();
    let finish = data.runs[0].2.as_ref().expect("the run row was finished");
    assert_eq!(finish.end.status, RunStatus::Success);
    assert_eq!(finish.end.answer, out.end.answer);
    assert_eq!(rec.inner.events_of(out.run_id), out.events);
}

/// If the store stays down after the answer is composed, the error still
/// carries the answer, so the caller can show it.
#[tokio::test(start_paused = true)]
async fn a_store_lost_after_the_answer_hands_the_answer_back() {
    let rec = Flaky::new(u32::MAX, 0);
    rec.finish_failures.store(u32::MAX, Ordering::SeqCst);
    let (engine, s) = engine_on(rec);
    match engine.run(s.request()).await {
        Err(EngineError::Unpersisted {
            reason,
            answer: Some(answer),
            ..
        }) => {
            assert!(
                reason.starts_with("answer composed but not recorded"),
                "{reason}"
            );
            assert!(!answer.trim().is_empty());
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_store_down_at_start_is_a_start_error() {
    let rec = Flaky::new(u32::MAX, 0);
    rec.fail_start.store(true, Ordering::SeqCst);
    let (engine, s) = engine_on(rec);
    assert!(matches!(
        engine.run(s.request()).await,
        Err(EngineError::Start(_))
    ));
}

#[tokio::test]
async fn a_cancelled_run_ends_cancelled_not_failed() {
    let s = load_scenario("01_pass.toml");
    let (engine, _) = scenario_engine(&s);
    let req = s.request();
    req.cancel.cancel();
    let out = engine.run(req).await.unwrap();
    assert_eq!(out.end.status, RunStatus::Cancelled);
    assert_eq!(
        out.end.failure.as_ref().map(|f| f.class),
        Some(FailureClass::Cancelled)
    );
    assert_eq!(
        out.end.trace.termination_reason,
        Some(ReasonCode::Cancelled)
    );
    assert!(out.end.trace.transitions.is_empty());
    assert_eq!(out.exit_code(), 4);
}

// Paused clock: the sleep below returns only once every other task is
// idle (the runtime auto-advances time then), so "nothing happened" is
// checked after the engine has done all it could, without real waiting.
#[tokio::test(start_paused = true)]
async fn the_step_gate_waits_before_each_node_and_honours_cancel() {
    let s = load_scenario("01_pass.toml");
    let (engine, _) = scenario_engine(&s);
    let (tx_cmd, rx_cmd) = mpsc::channel(4);
    let (tx_ev, mut rx_ev) = mpsc::channel(64);
    let mut req = s.request();
    req.step_gate = Some(StepGate { commands: rx_cmd });
    req.events = Some(tx_ev);
    let cancel = req.cancel.clone();
    let run = tokio::spawn(async move { engine.run(req).await });

    // Entered the planner, then waits: nothing finishes without a command.
    let mut seen = Vec::new();
    while !matches!(
        seen.last(),
        Some(EventKind::NodeEntered {
            node: NodeId::Planner,
            ..
        })
    ) {
        seen.push(rx_ev.recv().await.unwrap().kind);
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(rx_ev.try_recv().is_err(), "the planner ran without a Next");
    tx_cmd.send(StepCommand::Next).await.unwrap();
    let mut finished = 0;
    loop {
        match rx_ev.recv().await.unwrap().kind {
            EventKind::NodeFinished { node, .. } => {
                assert_eq!(node, NodeId::Planner);
                finished += 1;
            }
            EventKind::NodeEntered {
                node: NodeId::Executor,
                ..
            } => break,
            _ => {}
        }
    }
    assert_eq!(finished, 1);
    cancel.cancel();
    let out = run.await.unwrap().unwrap();
    assert_eq!(out.end.status, RunStatus::Cancelled);
    assert_eq!(
        out.end.failure.as_ref().map(|f| f.class),
        Some(FailureClass::Cancelled)
    );
    // It stopped waiting in front of the executor: the edge into it
    // happened, and the trace ends there, on why.
    assert_eq!(
        out.end.trace.route(),
        vec![NodeId::Planner, NodeId::Executor]
    );
    assert_eq!(
        out.end.trace.termination_reason,
        Some(ReasonCode::Cancelled)
    );
    let mut last = None;
    while let Ok(e) = rx_ev.try_recv() {
        last = Some(e.kind);
    }
    assert!(
        matches!(
            last,
            Some(EventKind::RunFinished(RunEnd {
                status: RunStatus::Cancelled,
                ..
            }))
        ),
        "the viewer sees the cancelled run finish"
    );
}

// A person who takes 5 s before each step: the wait is not the nodes'
// time, nor the run's.
#[tokio::test(start_paused = true)]
async fn time_waiting_at_the_step_gate_is_not_work() {
    let s = load_scenario("01_pass.toml");
    let (engine, recorder) = scenario_engine(&s);
    let (tx_cmd, rx_cmd) = mpsc::channel(4);
    let (tx_ev, mut rx_ev) = mpsc::channel(64);
    let mut req = s.request();
    req.step_gate = Some(StepGate { commands: rx_cmd });
    req.events = Some(tx_ev);
    let run = tokio::spawn(async move { engine.run(req).await });
    let mut events = Vec::new();
    let started = tokio::time::Instant::now();
    while let Some(e) = rx_ev.recv().await {
        let entered = matches!(e.kind, EventKind::NodeEntered { .. });
        events.push(e);
        if entered {
            tokio::time::sleep(Duration::from_secs(5)).await;
            tx_cmd.send(StepCommand::Next).await.unwrap();
        }
    }
    let out = run.await.unwrap().unwrap();
    assert_eq!(out.end.status, RunStatus::Success);
    let entries = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::NodeEntered { .. }))
        .count() as u64;
    assert!(entries >= 3, "{entries} nodes entered");
    assert!(
        started.elapsed() >= Duration::from_secs(5 * entries),
        "the person waited before every node"
    );
    let mut entered_at = 0;
    for e in &events {
        match e.kind {
            EventKind::NodeEntered { .. } => entered_at = e.at_ms,
            EventKind::NodeFinished { node, .. } => {
                let took = e.at_ms - entered_at;
                assert!(took < 1_000, "{node} took {took} ms of waiting");
            }
            _ => {}
        }
    }
    let last = events.last().map_or(u64::MAX, |e| e.at_ms);
    assert!(last < 1_000, "the run clock counted the waits: {last} ms");
    let data = recorder.snapshot();
    let total = data.runs[0].2.as_ref().map_or(u64::MAX, |f| f.duration_ms);
    assert!(
        total < 1_000,
        "the run's total counted the waits: {total} ms"
    );
}

#[tokio::test]
async fn a_dropped_gate_sender_means_continue() {
    let s = load_scenario("01_pass.toml");
    let (engine, _) = scenario_engine(&s);
    let (tx_cmd, rx_cmd) = mpsc::channel(4);
    let mut req = s.request();
    req.step_gate = Some(StepGate { commands: rx_cmd });
    tx_cmd.send(StepCommand::Next).await.unwrap();
    drop(tx_cmd);
    let out = engine.run(req).await.unwrap();
    assert_eq!(out.end.status, RunStatus::Success);
    assert_eq!(out.end.trace.final_node, Some(NodeId::Composer));
}

#[tokio::test]
async fn live_events_match_the_outcome_and_a_closed_receiver_is_ignored() {
    let s = load_scenario("23_evidence_retry_pass.toml");
    let (engine, _) = scenario_engine(&s);
    let (tx, mut rx) = mpsc::channel(4);
    let mut req = s.request();
    req.events = Some(tx);
    let run = tokio::spawn(async move { engine.run(req).await });
    let mut live = Vec::new();
    while let Some(e) = rx.recv().await {
        live.push(e);
    }
    let out = run.await.unwrap().unwrap();
    assert_eq!(live, out.events);

    let (engine, _) = scenario_engine(&s);
    let (tx, rx) = mpsc::channel(1);
    drop(rx);
    let mut req = s.request();
    req.events = Some(tx);
    let out = engine.run(req).await.unwrap();
    assert_eq!(out.end.status, RunStatus::Success);
    assert!(
        out.events
            .iter()
            .any(|e| matches!(e.kind, EventKind::VerdictUpdated(_)))
    );
}

#[tokio::test]
async fn session_history_reaches_the_planner_and_executor() {
    let s = load_scenario("01_pass.toml");
    let (mut engine, _) = scenario_engine(&s);
    let capture = Capture::new(engine.model.clone());
    engine.model = capture.clone();
    let first = engine.run(s.request()).await.unwrap();
    let mut req = s.request();
    req.session_id = Some(first.session_id.clone());
    let second = engine.run(req).await.unwrap();
    assert_eq!(second.session_id, first.session_id);
    let reqs = capture.requests();
    let planner2 = reqs
        .iter()
        .filter(|r| r.role() == diagraph::vocab::agent::AgentRole::Planner)
        .nth(1)
        .unwrap();
    assert_eq!(
        planner2.input.to_value()["history"][0]["run_id"],
        first.run_id
    );
    assert_eq!(
        planner2.input.to_value()["history"][0]["answer"],
        first.end.answer.as_str()
    );
    let verifier2 = reqs
        .iter()
        .filter(|r| r.role() == diagraph::vocab::agent::AgentRole::Verifier)
        .nth(1)
        .unwrap();
    assert!(verifier2.input.to_value().get("history").is_none());
}

#[tokio::test]
async fn the_tool_budget_forces_exactly_one_final_answer_with_tool_choice_none() {
    use diagraph::model::Message;
    use diagraph::vocab::agent::AgentRole;
    let mut s = load_scenario("01_pass.toml");
    s.script[1] = diagraph::model::scripted::ScriptEntry::tool_calls(
        AgentRole::Executor,
        vec![
            (
                "query_metrics",
                serde_json::json!({"service": "payment-service"}),
            ),
            (
                "query_logs",
                serde_json::json!({"service": "order-service"}),
            ),
            ("query_logs", serde_json::json!({"service": "user-service"})),
        ],
    );
    let (mut engine, recorder) = scenario_engine(&s);
    engine.config.max_tool_calls = 2;
    let capture = Capture::new(engine.model.clone());
    engine.model = capture.clone();
    let out = engine.run(s.request()).await.unwrap();
    assert_eq!(out.end.trace.final_node, Some(NodeId::Composer));
    assert_eq!(
        recorder.snapshot().invocations.len(),
        2,
        "the third call was not executed"
    );
    let exec: Vec<_> = capture
        .requests()
        .into_iter()
        .filter(|r| r.role() == AgentRole::Executor)
        .collect();
    assert_eq!(exec.len(), 2);
    assert!(!exec[0].tools.is_empty());
    assert_eq!(exec[0].tool_choice, diagraph::model::ToolChoice::Auto);
    // The final ask keeps the tools (gateways reject tool history without
    // them) but allows none.
    assert_eq!(exec[1].tools, exec[0].tools);
    assert_eq!(exec[1].tool_choice, diagraph::model::ToolChoice::None);
    assert!(exec[1].callable_tools().is_empty());
    assert!(
        matches!(exec[1].messages.last(), Some(Message::User { content }) if content.contains("executor_evidence_v2"))
    );
    // Every tool call of the assistant turn has its tool message.
    let tool_msgs = exec[1]
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Tool { .. }))
        .count();
    assert_eq!(tool_msgs, 3);
    assert_eq!(
        exec[1].tool_results()[2]["error"],
        "tool call budget exhausted; not executed"
    );
}

#[tokio::test]
async fn invalid_tool_arguments_are_recorded_and_shown_to_the_model() {
    use diagraph::vocab::agent::AgentRole;
    let mut s = load_scenario("10_tool_failure_legal_output.toml");
    s.script[1] = diagraph::model::scripted::ScriptEntry::tool_calls(
        AgentRole::Executor,
        vec![(
            "query_logs",
            serde_json::Value::String("{\"service\": ".into()),
        )],
    );
    let (mut engine, recorder) = scenario_engine(&s);
    let capture = Capture::new(engine.model.clone());
    engine.model = capture.clone();
    let out = engine.run(s.request()).await.unwrap();
    assert_eq!(out.end.trace.final_node, Some(NodeId::Composer));
    let inv = &recorder.snapshot().invocations[0];
    assert!(!inv.success);
    assert!(
        inv.error_message
            .as_deref()
            .unwrap()
            .starts_with("invalid arguments JSON")
    );
    let exec: Vec<_> = capture
        .requests()
        .into_iter()
        .filter(|r| r.role() == AgentRole::Executor)
        .collect();
    let seen = &exec[1].tool_results()[0];
    assert_eq!(seen["evidence_status"], "failed");
    assert_eq!(seen["invocation_id"], inv.id);
}

/// Answers every call as cut at the token limit.
struct Truncating;

#[async_trait]
impl diagraph::model::ChatModel for Truncating {
    fn name(&self) -> String {
        "truncating".into()
    }
    async fn chat(
        &self,
        _r: &diagraph::model::ChatRequest,
    ) -> Result<diagraph::model::ChatResponse, diagraph::model::ModelError> {
        Ok(diagraph::model::ChatResponse {
            content: Some(r#"{"plan": ["a"]}"#.into()),
            finish_reason: diagraph::model::FinishReason::Length,
            ..Default::default()
        })
    }
}

#[tokio::test]
async fn an_answer_cut_at_the_token_limit_is_invalid_output() {
    let s = load_scenario("01_pass.toml");
    let (mut engine, _) = scenario_engine(&s);
    engine.model = Arc::new(Truncating);
    let out = engine.run(s.request()).await.unwrap();
    assert_eq!(
        out.end.trace.route(),
        vec![NodeId::Planner, NodeId::Planner, NodeId::Fallback]
    );
    let details: Vec<String> = out
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::NodeFinished {
                outcome, detail, ..
            } => Some(format!("{outcome} {detail}")),
            _ => None,
        })
        .collect();
    assert!(
        details[0].starts_with("INVALID_OUTPUT output truncated"),
        "{details:?}"
    );
}

//! Engine runs for the engine tests: shipped scenarios and inline scripts
//! on the scripted model over the in-memory recorder, a model wrapper that
//! captures every request, readers of what a run recorded, and what the
//! shipped scenarios' answers must not show.

use crate::helpers::{base_engine, load_scenario, shop_pack};
use async_trait::async_trait;
use diagraph::engine::{Engine, MemoryRecorder, RunOutcome};
use diagraph::model::scripted::UncoveredModel;
use diagraph::model::{ChatModel, ChatRequest, ChatResponse, ModelError};
use diagraph::scenario::Scenario;
use diagraph::vocab::agent::AgentRole;
use diagraph::vocab::events::EventKind;
use diagraph::vocab::graph::{NodeId, Outcome};
use std::sync::{Arc, Mutex};

/// Records every request and forwards it.
pub struct Capture {
    pub inner: Arc<dyn ChatModel>,
    pub requests: Mutex<Vec<ChatRequest>>,
}

impl Capture {
    pub fn new(inner: Arc<dyn ChatModel>) -> Arc<Capture> {
        Arc::new(Capture {
            inner,
            requests: Mutex::new(vec![]),
        })
    }

    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap().clone()
    }
}

#[async_trait]
impl ChatModel for Capture {
    fn name(&self) -> String {
        "capture".into()
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.requests.lock().unwrap().push(request.clone());
        self.inner.chat(request).await
    }
}

/// A scenario engine on a fresh memory recorder, fully scripted.
pub fn scenario_engine(s: &Scenario) -> (Engine, Arc<MemoryRecorder>) {
    let recorder = Arc::new(MemoryRecorder::new());
    let base = base_engine(recorder.clone());
    let engine = s.engine_with_pack(&base, Arc::new(UncoveredModel), shop_pack());
    (engine, recorder)
}

/// Runs a shipped scenario with every model request captured.
pub async fn run_captured(file: &str) -> (RunOutcome, Arc<MemoryRecorder>, Vec<ChatRequest>) {
    let s = load_scenario(file);
    let (mut engine, recorder) = scenario_engine(&s);
    let capture = Capture::new(engine.model.clone());
    engine.model = capture.clone();
    let outcome = engine.run(s.request()).await.expect("run persisted");
    (outcome, recorder, capture.requests())
}

pub fn steps(rec: &MemoryRecorder, run_id: i64, agent: &str) -> usize {
    rec.snapshot()
        .steps
        .iter()
        .filter(|s| s.run_id == run_id && s.agent_name == agent)
        .count()
}

pub fn of_role(reqs: &[ChatRequest], role: AgentRole) -> Vec<ChatRequest> {
    reqs.iter().filter(|r| r.role() == role).cloned().collect()
}

pub fn gatekeeper_results(out: &RunOutcome) -> Vec<diagraph::vocab::contracts::GatekeeperResult> {
    out.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::GatekeeperChecked { result } => Some((**result).clone()),
            _ => None,
        })
        .collect()
}

pub fn finished(out: &RunOutcome) -> Vec<(NodeId, Outcome, String, String)> {
    out.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::NodeFinished {
                node,
                outcome,
                reason_code,
                detail,
                ..
            } => Some((*node, *outcome, reason_code.to_string(), detail.clone())),
            _ => None,
        })
        .collect()
}

pub async fn run_scenario(s: &Scenario) -> (RunOutcome, Arc<MemoryRecorder>, Vec<ChatRequest>) {
    let (mut engine, recorder) = scenario_engine(s);
    let capture = Capture::new(engine.model.clone());
    engine.model = capture.clone();
    let out = engine.run(s.request()).await.unwrap();
    (out, recorder, capture.requests())
}

/// Index of the first script entry of `role` (to insert a reply before it).
pub fn first_entry(s: &Scenario, role: AgentRole) -> usize {
    s.script
        .iter()
        .position(|e| e.role == role)
        .unwrap_or_else(|| panic!("{}: no {role} entry", s.name))
}

/// Index of the last script entry of `role`.
pub fn last_entry(s: &Scenario, role: AgentRole) -> usize {
    s.script
        .iter()
        .rposition(|e| e.role == role)
        .unwrap_or_else(|| panic!("{}: no {role} entry", s.name))
}

/// The claim the shipped scenarios' Executor makes (and fallbacks must
/// never show).
pub const CLAIM_TEXT: &str = "payment-service has a critical HighCPUUsage alert firing at 92%";

/// The service names of the shipped pack, as the engine's answer check
/// knows them.
pub fn shop_services() -> Vec<String> {
    crate::helpers::shop_pack()
        .catalog()
        .services
        .iter()
        .map(|s| s.to_lowercase())
        .collect()
}

/// The answer without the code-made "What could not be checked" section
/// that follows whatever a node wrote (an unreachable model, a failed
/// source). The section itself names no Executor claim.
pub fn without_unchecked(answer: &str) -> &str {
    match answer.split_once("\n\nWhat could not be checked") {
        Some((head, section)) => {
            assert!(!section.contains(CLAIM_TEXT), "{section}");
            head
        }
        None => answer,
    }
}

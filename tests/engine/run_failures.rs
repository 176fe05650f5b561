//! What a run does with failures, through the engine: it records what
//! served it, names every failed source in the answer, cannot end PASS
//! when a planned source failed on every query, says why a degraded run
//! degraded, and stops at once when cancelled mid-call.

use crate::helpers::{base_engine, load_scenario, shop_pack, shop_pack_dir};
use async_trait::async_trait;
use diagraph::engine::{MemoryRecorder, RunRequest};
use diagraph::model::offline::OfflineModel;
use diagraph::model::{ChatModel, ChatRequest, ChatResponse, ModelError};
use diagraph::tools::pack::{Pack, pack_tools};
use diagraph::tools::prometheus::{PrometheusConfig, PrometheusMetrics};
use diagraph::tools::{Tool, ToolError, ToolOutput, ToolRegistry};
use diagraph::vocab::agent::AgentRole;
use diagraph::vocab::contracts::Verdict;
use diagraph::vocab::events::EventKind;
use diagraph::vocab::graph::{NodeId, ReasonCode};
use diagraph::vocab::run::{FailureClass, RunStatus};
use diagraph::vocab::tool::{EvidenceStatus, QUERY_METRICS, ToolSpec};
use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// An engine over `pack` with the offline model and a memory recorder.
fn offline_engine(pack: Arc<Pack>) -> (diagraph::engine::Engine, Arc<MemoryRecorder>) {
    let recorder = Arc::new(MemoryRecorder::new());
    let mut engine = base_engine(recorder.clone());
    let mut tools = ToolRegistry::new();
    for t in pack_tools(pack.clone()) {
        tools.register(t);
    }
    engine.tools = Arc::new(tools);
    engine.catalog = Arc::new(pack.catalog());
    engine.model = Arc::new(OfflineModel::new());
    (engine, recorder)
}

fn broken_alerts_pack() -> (tempfile::TempDir, Arc<Pack>) {
    let dir = tempfile::tempdir().unwrap();
    let shop = shop_pack_dir();
    let copy = |rel: &str| {
        let src = shop.join(rel);
        let dst = dir.path().join(rel);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(src, dst).unwrap();
    };
    for rel in ["pack.toml", "logs.jsonl"] {
        copy(rel);
    }
    for sub in ["knowledge", "skills"] {
        for entry in walk(&shop.join(sub)) {
            copy(entry.strip_prefix(&shop).unwrap().to_str().unwrap());
        }
    }
    let alerts = std::fs::read_to_string(shop.join("alerts.json")).unwrap();
    std::fs::write(dir.path().join("alerts.json"), &alerts[..alerts.len() / 2]).unwrap();
    let pack = Arc::new(Pack::load(dir.path()).unwrap());
    (dir, pack)
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Today's behaviour this replaces: a truncated alerts.json read as "no
/// alert matched (0 alerts in the pack)", a successful no-evidence call,
/// and the run ended PASS.
#[tokio::test]
async fn a_planned_source_that_failed_every_query_caps_the_run_below_pass() {
    let (_dir, pack) = broken_alerts_pack();
    let (engine, _) = offline_engine(pack.clone());
    let out = engine
        .run(RunRequest::new("why is payment-service slow?"))
        .await
        .unwrap();
    assert_eq!(out.end.status, RunStatus::Success);
    let metrics: Vec<_> = out
        .failed_sources
        .iter()
        .filter(|f| f.tool == QUERY_METRICS)
        .collect();
    assert!(!metrics.is_empty(), "{:?}", out.failed_sources);
    for f in &metrics {
        assert_eq!(f.class, FailureClass::SourceUnreadable);
        assert!(f.message.starts_with("alerts.json line "), "{}", f.message);
    }
    assert_eq!(out.verdicts.ceiling, Some(Verdict::LowConfid));
    assert_ne!(out.end.effective_verdict, Some(Verdict::Pass));
    let detail = out
        .events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::NodeFinished {
                node: NodeId::VerifiedInput,
                detail,
                ..
            } => Some(detail.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        detail.contains("every call of query_metrics failed"),
        "{detail}"
    );
    // The answer names the failed source, whatever node wrote it.
    assert!(
        out.end.answer.contains("What could not be checked")
            && out.end.answer.contains(&metrics[0].message),
        "{}",
        out.end.answer
    );
    assert!(!out.end.answer.contains("0 alerts in the pack"));
    // The run records what served it.
    assert_eq!(
        out.sources.pack.as_ref().unwrap().content_hash,
        pack.content_hash
    );
    assert!(
        out.sources
            .pack_warnings
            .iter()
            .any(|w| w.starts_with("alerts.json:")),
        "{:?}",
        out.sources.pack_warnings
    );
    let json = out.to_json();
    assert_eq!(json["failed_sources"][0]["class"], "source_unreadable");
    assert!(json.get("failure").is_none(), "not degraded: {json}");
    assert_eq!(out.exit_code(), 0);
}

#[tokio::test]
async fn a_run_records_the_backend_of_every_tool_and_invocation_and_the_model_per_role() {
    let (engine, recorder) = offline_engine(shop_pack());
    let out = engine
        .run(RunRequest::new("why is payment-service slow?"))
        .await
        .unwrap();
    let backend = format!("pack:{}", shop_pack().dir.display());
    assert_eq!(out.sources.tools.len(), 4);
    assert!(out.sources.tools.values().all(|b| *b == backend));
    assert_eq!(out.sources.models.len(), 4);
    assert_eq!(out.sources.models["planner"], "offline (rule-based)");
    let data = recorder.snapshot();
    assert_eq!(*data.runs[0].1.sources, *out.sources);
    assert!(!data.invocations.is_empty());
    for inv in &data.invocations {
        assert_eq!(inv.retrieval_details.source.backend, backend);
    }
    // The first event carries them too, so the TUI and a replay show them.
    match &out.events[0].kind {
        EventKind::RunStarted { sources, .. } => assert_eq!(**sources, *out.sources),
        other => panic!("{other:?}"),
    }
}

/// A scenario names its own pack; a live backend of the base engine still
/// serves its tool (and the run says so).
#[tokio::test]
async fn a_live_backend_keeps_its_tool_when_a_scenario_brings_a_pack() {
    let recorder = Arc::new(MemoryRecorder::new());
    let mut base = base_engine(recorder);
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(
        PrometheusMetrics::new(PrometheusConfig::new("http://127.0.0.1:1")).unwrap(),
    ));
    base.tools = Arc::new(tools);
    let s = load_scenario("01_pass.toml");
    let engine = s.engine_with_pack(&base, Arc::new(OfflineModel::new()), shop_pack());
    let sources = engine.sources();
    assert_eq!(
        sources.tools["query_metrics"],
        "prometheus:http://127.0.0.1:1"
    );
    assert!(sources.tools["query_logs"].starts_with("pack:"));
}

/// A model that never answers; `called` is notified when a call arrives.
#[derive(Default)]
struct Hangs {
    called: Notify,
}

#[async_trait]
impl ChatModel for Hangs {
    fn name(&self) -> String {
        "hangs".into()
    }
    async fn chat(&self, _: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.called.notify_one();
        std::future::pending().await
    }
}

#[tokio::test]
async fn cancelling_during_a_model_call_ends_the_run_at_once_cancelled() {
    let (mut engine, recorder) = offline_engine(shop_pack());
    let model = Arc::new(Hangs::default());
    engine.model = model.clone();
    let request = RunRequest::new("why is payment-service slow?");
    let cancel = request.cancel.clone();
    let run = tokio::spawn(async move { engine.run(request).await });
    tokio::time::timeout(Duration::from_secs(5), model.called.notified())
        .await
        .expect("the planner called the model");
    cancel.cancel();
    let out = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .expect("the cancel stops the model call")
        .unwrap()
        .unwrap();
    assert_eq!(out.end.status, RunStatus::Cancelled);
    assert_eq!(
        out.end.trace.termination_reason,
        Some(ReasonCode::Cancelled)
    );
    assert_eq!(out.end.trace.final_node, Some(NodeId::Planner));
    assert_eq!(out.exit_code(), 4);
    let steps = recorder.snapshot().steps;
    assert_eq!(steps.len(), 1);
    assert!(steps[0].error.as_deref().unwrap().contains("cancelled"));
    // Every event, the end included, is in the journal.
    let journal = recorder.events_of(out.run_id);
    assert_eq!(journal.len(), out.events.len());
    assert!(journal.last().unwrap().is_terminal());
}

/// A tool that waits `wait` and then answers; `timeout` is what it says
/// its own I/O may take; `called` is notified when a call starts.
struct Slow {
    wait: Duration,
    timeout: Option<Duration>,
    called: Arc<Notify>,
}

impl Slow {
    fn new(wait: Duration, timeout: Option<Duration>) -> Slow {
        Slow {
            wait,
            timeout,
            called: Arc::default(),
        }
    }
}

#[async_trait]
impl Tool for Slow {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: QUERY_METRICS.into(),
            description: String::new(),
            evidence_arrays: vec![],
            parameters: json!({"type": "object"}),
        }
    }
    async fn call(&self, _: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
        self.called.notify_one();
        tokio::time::sleep(self.wait).await;
        Ok(ToolOutput::no_evidence(QUERY_METRICS, "", "nothing"))
    }
    fn timeout(&self) -> Option<Duration> {
        self.timeout
    }
}

fn invoker_with(tool: Slow) -> diagraph::engine::invoker::ToolInvoker {
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(tool));
    diagraph::engine::invoker::ToolInvoker::new(
        Arc::new(tools),
        vec![QUERY_METRICS.into()],
        Arc::new(MemoryRecorder::new()),
        1,
    )
}

/// Today the invoker's fixed 20 s cut every tool short, so a configured
/// `metrics.timeout_secs` above 20 had no effect.
#[tokio::test(start_paused = true)]
async fn a_tool_configured_for_longer_than_twenty_seconds_gets_that_long() {
    let mut patient = invoker_with(Slow::new(
        Duration::from_secs(25),
        Some(Duration::from_secs(30)),
    ));
    let i = patient.invoke(QUERY_METRICS, "{}", None, 1).await.unwrap();
    assert!(i.invocation.success, "{:?}", i.invocation.error_message);
    let mut default = invoker_with(Slow::new(Duration::from_secs(25), None));
    let i = default.invoke(QUERY_METRICS, "{}", None, 1).await.unwrap();
    assert!(!i.invocation.success);
    assert_eq!(
        i.invocation.error_message.as_deref(),
        Some("timed out after 20 s")
    );
    assert_eq!(
        i.invocation.retrieval_details.source.failure_class,
        Some(FailureClass::Timeout)
    );
    // The Prometheus tool asks for what its configuration allows.
    let prom = PrometheusMetrics::new(PrometheusConfig {
        timeout: Duration::from_secs(45),
        ..PrometheusConfig::new("http://127.0.0.1:9090")
    })
    .unwrap();
    assert!(prom.timeout().unwrap() >= Duration::from_secs(45));
}

#[tokio::test]
async fn cancelling_during_a_tool_call_records_it_and_ends_cancelled() {
    let (mut engine, recorder) = offline_engine(shop_pack());
    let mut tools = ToolRegistry::new();
    for t in pack_tools(shop_pack()) {
        tools.register(t);
    }
    let slow = Slow::new(Duration::from_secs(3600), Some(Duration::from_secs(7200)));
    let called = slow.called.clone();
    tools.register(Arc::new(slow));
    engine.tools = Arc::new(tools);
    let request = RunRequest::new("why is payment-service slow?");
    let cancel = request.cancel.clone();
    let run = tokio::spawn(async move { engine.run(request).await });
    tokio::time::timeout(Duration::from_secs(10), called.notified())
        .await
        .expect("the executor called query_metrics");
    cancel.cancel();
    let out = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(out.end.status, RunStatus::Cancelled);
    let invs = recorder.snapshot().invocations;
    let cut = invs
        .iter()
        .find(|i| i.tool_name == QUERY_METRICS)
        .expect("the cancelled call is recorded");
    assert_eq!(
        cut.retrieval_details.evidence_status,
        EvidenceStatus::Failed
    );
    assert_eq!(
        cut.retrieval_details.source.failure_class,
        Some(FailureClass::Cancelled)
    );
    assert_eq!(out.end.trace.final_node, Some(NodeId::Executor));
}

/// A degraded run names its root cause: the failed dependency, not the
/// invalid output it caused.
#[tokio::test]
async fn a_degraded_run_names_the_failed_model_as_its_root_cause() {
    use diagraph::model::ModelErrorKind;
    use diagraph::model::scripted::{ScriptEntry, ScriptedModel};
    let (mut engine, _) = offline_engine(shop_pack());
    engine.model = Arc::new(ScriptedModel::new(
        vec![
            ScriptEntry::error(AgentRole::Planner, ModelErrorKind::Unauthorized),
            ScriptEntry::error(AgentRole::Planner, ModelErrorKind::Unauthorized),
        ],
        Arc::new(OfflineModel::new()),
    ));
    let out = engine
        .run(RunRequest::new("why is payment-service slow?"))
        .await
        .unwrap();
    assert!(out.end.degraded);
    let f = out.end.failure.as_ref().unwrap();
    assert_eq!(f.class, FailureClass::Unauthorized);
    assert!(
        f.message
            .starts_with("the planner model could not be reached"),
        "{}",
        f.message
    );
    assert!(
        out.end.answer.ends_with(&format!("- {}", f.message)),
        "{}",
        out.end.answer
    );
    assert_eq!(out.exit_code(), 3);
    assert_eq!(out.to_json()["failure"]["class"], "unauthorized");
}

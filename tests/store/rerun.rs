//! `diagraph rerun` at the engine level, on a SQLite store: a stored run
//! re-executed from its recorded answers and tool results reproduces its
//! route, claims, bindings and verdict (old invocation ids mapped to the
//! new run's); a stricter rules file changes the outcome while the model
//! answers stay the recorded ones; `--from` runs the rest live; a run that
//! cannot be replayed is refused and never left RUNNING.

use crate::helpers::{base_engine, load_scenario, shop_pack};
use crate::suite::bare_run;
use async_trait::async_trait;
use diagraph::engine::nodes::gatekeeper::GatekeeperRules;
use diagraph::engine::rerun::{rerun_engine, rerun_request};
use diagraph::engine::{Engine, RunOutcome, RunRequest};
use diagraph::model::offline::OfflineModel;
use diagraph::model::{ChatModel, ChatRequest, ChatResponse, ModelError};
use diagraph::store::Store;
use diagraph::tools::ToolRegistry;
use diagraph::vocab::agent::AgentRole;
use diagraph::vocab::contracts::CheckedBinding;
use diagraph::vocab::graph::NodeId;
use diagraph::vocab::record::Recorder;
use diagraph::vocab::run::RunStatus;
use diagraph::vocab::run_trace::RunTrace;
use std::sync::{Arc, Mutex};
use tempfile::TempDir;

const QUESTION: &str = "why is payment-service slow?";

async fn fresh() -> (TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("d.db").display());
    (dir, Store::connect(&url).await.unwrap())
}

/// The offline model on the shop pack, recorded by `store`.
fn offline_engine(store: &Store) -> Engine {
    let base = base_engine(Arc::new(store.clone())).on_pack(shop_pack());
    Engine {
        model: Arc::new(OfflineModel::new()),
        ..base
    }
}

/// A run of the offline model on the shop pack, and its trace as stored.
async fn offline_run(store: &Store) -> (RunOutcome, RunTrace) {
    let first = offline_engine(store)
        .run(RunRequest::new(QUESTION))
        .await
        .unwrap();
    let trace = store.run_trace(first.run_id).await.unwrap();
    (first, trace)
}

/// An engine that can answer nothing by itself: a model that fails every
/// call and no tools. What a rerun on it gets right comes from the
/// recording alone (no model, no pack read).
fn empty_engine(store: &Store) -> Engine {
    Engine {
        tools: Arc::new(ToolRegistry::new()),
        ..base_engine(Arc::new(store.clone()))
    }
}

async fn rerun(
    store: &Store,
    base: &Engine,
    trace: &RunTrace,
    from: Option<NodeId>,
) -> (RunOutcome, RunTrace, Option<String>) {
    let (engine, state) = rerun_engine(base, trace, from).unwrap();
    let out = engine.run(rerun_request(trace)).await.unwrap();
    let new = store.run_trace(out.run_id).await.unwrap();
    (out, new, state.missing())
}

/// A binding without its invocation id (which differs between runs).
fn shape(b: &CheckedBinding) -> (String, String, Option<String>, String, String) {
    (
        b.claim_id.clone(),
        b.tool_name.clone(),
        b.raw_path.clone(),
        b.evidence_excerpt.clone(),
        format!("{:?}", b.status),
    )
}

fn bindings(t: &RunTrace) -> Vec<CheckedBinding> {
    t.run
        .gatekeeper_result
        .as_ref()
        .map(|g| g.checked_bindings.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_rerun_of_an_offline_run_reproduces_route_claims_bindings_and_verdict() {
    let (_dir, store) = fresh().await;
    let (first, old) = offline_run(&store).await;
    assert!(!bindings(&old).is_empty(), "the offline run binds evidence");

    let (out, new, missing) = rerun(&store, &empty_engine(&store), &old, None).await;
    assert_eq!(missing, None);
    assert_ne!(out.run_id, first.run_id);
    assert_eq!(new.run.route, old.run.route);
    assert_eq!(same_ids(&out, &new, &old), first.end.answer);
    assert_eq!(out.end.effective_verdict, first.end.effective_verdict);
    assert_eq!(out.verdicts, first.verdicts);
    assert_eq!(out.end.degraded, first.end.degraded);
    let (a, b) = (bindings(&old), bindings(&new));
    assert_eq!(
        a.iter().map(shape).collect::<Vec<_>>(),
        b.iter().map(shape).collect::<Vec<_>>()
    );
    // The citations were mapped to the new run's own invocations, in
    // tool-call order: that is why the ownership rule passes them.
    let old_ids: Vec<i64> = old.tool_invocations.iter().map(|i| i.id).collect();
    let new_ids: Vec<i64> = new.tool_invocations.iter().map(|i| i.id).collect();
    assert_eq!(old_ids.len(), new_ids.len());
    for (o, n) in a.iter().zip(&b) {
        let at = old_ids
            .iter()
            .position(|id| Some(*id) == o.source_invocation_id)
            .unwrap();
        assert_eq!(n.source_invocation_id, Some(new_ids[at]));
    }
    // The same tool results, served from the recording.
    for (o, n) in old.tool_invocations.iter().zip(&new.tool_invocations) {
        assert_eq!(o.tool_name, n.tool_name);
        assert_eq!(o.input_params, n.input_params);
        let (od, nd) = (
            o.retrieval_details.typed().unwrap(),
            n.retrieval_details.typed().unwrap(),
        );
        assert_eq!(od.evidence_refs, nd.evidence_refs);
        assert_eq!(od.evidence_status, nd.evidence_status);
        assert_eq!(od.source.backend, nd.source.backend);
    }
    // The link is stored and listed.
    assert_eq!(new.run.rerun_of, Some(first.run_id));
    assert_eq!(old.run.rerun_of, None);
    let listed = store.list_runs(10).await.unwrap();
    let row = listed.iter().find(|r| r.run_id == out.run_id).unwrap();
    assert_eq!(row.rerun_of, Some(first.run_id));
}

/// The rerun's answer with its own ids (run, invocations) written as the
/// stored run's: a fallback answer points at its run's trace and names the
/// invocations that failed.
fn same_ids(out: &RunOutcome, new: &RunTrace, old: &RunTrace) -> String {
    let mut answer = out.end.answer.replace(
        &format!("trace {}`", out.run_id),
        &format!("trace {}`", old.run.run_id),
    );
    let pairs: std::collections::HashMap<String, i64> = new
        .tool_invocations
        .iter()
        .zip(&old.tool_invocations)
        .map(|(n, o)| (n.id.to_string(), o.id))
        .collect();
    // Citations name invocations as `#ID` (`[query_logs #12 $.logs[0]]`).
    let id = regex::Regex::new(r"#(\d+)\b").unwrap();
    answer = id
        .replace_all(&answer, |c: &regex::Captures| match pairs.get(&c[1]) {
            Some(o) => format!("#{o}"),
            None => c[0].to_string(),
        })
        .into_owned();
    answer
}

#[tokio::test]
async fn a_rerun_of_a_scripted_failing_run_reproduces_its_route() {
    let (_dir, store) = fresh().await;
    for file in [
        "03_planner_timeout_then_ok.toml",
        "06_executor_invalid_output.toml",
        "07_executor_tool_blocked.toml",
        "09_legal_no_evidence.toml",
        "10_tool_failure_legal_output.toml",
        "11_gatekeeper_fabricated_id.toml",
        "12_gatekeeper_foreign_id.toml",
        "22_verifier_fails_twice.toml",
        "23_evidence_retry_pass.toml",
        "31_composer_exhausted.toml",
    ] {
        let s = load_scenario(file);
        let base = base_engine(Arc::new(store.clone()));
        let engine = s.engine(&base, Arc::new(OfflineModel::new())).unwrap();
        let first = engine.run(s.request()).await.unwrap();
        let old = store.run_trace(first.run_id).await.unwrap();
        let (out, new, missing) = rerun(&store, &empty_engine(&store), &old, None).await;
        assert_eq!(missing, None, "{file}");
        assert_eq!(new.run.route, old.run.route, "{file}");
        assert_eq!(out.end.degraded, first.end.degraded, "{file}");
        assert_eq!(same_ids(&out, &new, &old), first.end.answer, "{file}");
        assert_eq!(
            out.end.effective_verdict, first.end.effective_verdict,
            "{file}"
        );
        assert_eq!(
            bindings(&old).iter().map(shape).collect::<Vec<_>>(),
            bindings(&new).iter().map(shape).collect::<Vec<_>>(),
            "{file}"
        );
        assert_eq!(
            out.end.failure.as_ref().map(|f| f.class),
            first.end.failure.as_ref().map(|f| f.class),
            "{file}"
        );
        // A failed tool call is replayed as the same failure.
        let failed = |o: &RunOutcome| -> Vec<String> {
            o.failed_sources
                .iter()
                .map(|f| format!("{} {} {}", f.tool, f.class, f.message))
                .collect()
        };
        assert_eq!(failed(&out), failed(&first), "{file}");
    }
}

#[tokio::test]
async fn a_stricter_rules_file_changes_the_outcome_with_the_recorded_answers() {
    let (_dir, store) = fresh().await;
    let (_, old) = offline_run(&store).await;
    assert_eq!(old.run.gatekeeper_result.as_ref().unwrap().status, "pass");
    // An excerpt must now be longer than any the run quoted.
    let mut rules: serde_json::Value =
        serde_json::from_str(include_str!("../../src/engine/nodes/gatekeeper-rules.json")).unwrap();
    for rule in rules["rules"].as_array_mut().unwrap() {
        if rule["id"] == "binding.excerpt_identifies" {
            rule["params"]["min_excerpt_chars"] = 100_000.into();
        }
    }
    let strict = GatekeeperRules::from_json(&rules.to_string()).unwrap();
    let base = Engine {
        rules: Arc::new(strict),
        ..empty_engine(&store)
    };
    let (out, new, missing) = rerun(&store, &base, &old, None).await;
    assert_eq!(missing, None, "no call beyond the recorded ones was needed");
    let gk = new.run.gatekeeper_result.as_ref().unwrap();
    assert_ne!(gk.status, "pass");
    assert!(
        gk.failed_rules
            .iter()
            .any(|r| r == "binding.excerpt_identifies"),
        "{gk:?}"
    );
    assert!(out.end.degraded);
    assert_ne!(new.run.route, old.run.route);
    // The Executor's answers were the recorded ones (the base model fails
    // every call, so nothing else could have answered).
    let executor = |t: &RunTrace| -> Vec<String> {
        t.steps
            .iter()
            .filter(|s| s.agent_name == "executor")
            .map(|s| s.model_output.clone())
            .collect()
    };
    assert_eq!(executor(&old).len(), executor(&new).len());
}

/// The offline model, noting which roles it answered.
struct Noting {
    roles: Mutex<Vec<AgentRole>>,
    inner: OfflineModel,
}

impl Noting {
    fn new() -> Arc<Noting> {
        Arc::new(Noting {
            roles: Mutex::new(vec![]),
            inner: OfflineModel::new(),
        })
    }
}

#[async_trait]
impl ChatModel for Noting {
    fn name(&self) -> String {
        "noting offline".into()
    }
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.roles.lock().unwrap().push(request.role());
        self.inner.chat(request).await
    }
}

#[tokio::test]
async fn from_composer_runs_the_composer_live_and_the_rest_from_the_recording() {
    let (_dir, store) = fresh().await;
    let (first, old) = offline_run(&store).await;
    let live = Noting::new();
    let base = Engine {
        model: live.clone(),
        ..empty_engine(&store)
    };
    let (out, new, missing) = rerun(&store, &base, &old, Some(NodeId::Composer)).await;
    assert_eq!(missing, None);
    assert_eq!(*live.roles.lock().unwrap(), vec![AgentRole::Composer]);
    assert_eq!(new.run.route, old.run.route);
    assert_eq!(out.end.effective_verdict, first.end.effective_verdict);

    // --from the Executor: its turns and the tools run live on the pack.
    // The recording keeps no tool result here, so every one the rerun got
    // came from the real tools.
    let mut no_results = old.clone();
    no_results.tool_invocations.clear();
    let live = Noting::new();
    let on_pack = Engine {
        model: live.clone(),
        ..offline_engine(&store)
    };
    let (out, new, missing) = rerun(&store, &on_pack, &no_results, Some(NodeId::Executor)).await;
    assert!(
        new.tool_invocations.iter().any(|i| i.success),
        "the live tools answered"
    );
    assert_eq!(missing, None);
    let roles = live.roles.lock().unwrap().clone();
    assert!(!roles.contains(&AgentRole::Planner), "{roles:?}");
    assert_eq!(roles.first(), Some(&AgentRole::Executor));
    assert!(roles.contains(&AgentRole::Composer), "{roles:?}");
    assert_eq!(new.run.route, old.run.route);
    assert_eq!(out.end.effective_verdict, first.end.effective_verdict);

    // --from a deterministic node is refused before any run.
    let err = rerun_engine(&base, &old, Some(NodeId::Gatekeeper))
        .err()
        .unwrap();
    assert!(err.to_string().contains("not an agent node"), "{err}");
}

#[tokio::test]
async fn a_run_that_cannot_be_replayed_is_refused_and_never_left_running() {
    let (_dir, store) = fresh().await;
    // Unknown run.
    assert!(store.run_trace(999_999).await.is_err());
    // Still RUNNING.
    let handle = store.start_run(&bare_run("q")).await.unwrap();
    let running = store.run_trace(handle.run_id).await.unwrap();
    let err = rerun_engine(&empty_engine(&store), &running, None)
        .err()
        .unwrap();
    assert!(err.to_string().contains("RUNNING"), "{err}");

    let (_, old) = offline_run(&store).await;
    // An answer an older version stored cut.
    let mut cut = old.clone();
    let step = cut.steps.iter_mut().find(|s| !s.has_tool_call).unwrap();
    step.model_output.push_str("…[truncated 120 bytes]");
    let err = rerun_engine(&empty_engine(&store), &cut, None)
        .err()
        .unwrap();
    assert!(err.to_string().contains("cut"), "{err}");
    // Tool calls that do not parse back.
    let mut broken = old.clone();
    let step = broken.steps.iter_mut().find(|s| s.has_tool_call).unwrap();
    step.model_output = "[{\"id\":".into();
    assert!(rerun_engine(&empty_engine(&store), &broken, None).is_err());
    // A recorded call missing: the rerun ends (not RUNNING) and says which.
    let mut short = old.clone();
    short.steps.retain(|s| s.agent_name != "composer");
    let (out, _, missing) = rerun(&store, &empty_engine(&store), &short, None).await;
    let missing = missing.unwrap();
    assert!(missing.contains("composer call 1"), "{missing}");
    assert_ne!(out.end.status, RunStatus::Running);
    let stored = store.run_trace(out.run_id).await.unwrap();
    assert_ne!(stored.run.status, RunStatus::Running);
}

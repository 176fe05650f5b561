//! Every shipped scenario through the real engine, recorded by a store:
//! the Run Trace projection shows the route, step and invocation counts,
//! verdicts and gatekeeper result the engine produced, and replaying the
//! stored run rebuilds exactly the event sequence the live run emitted.

use crate::helpers::{base_engine, scenario_dir};
use diagraph::engine::RunOutcome;
use diagraph::model::offline::OfflineModel;
use diagraph::scenario::Scenario;
use diagraph::store::Store;
use diagraph::tools::pack::Pack;
use diagraph::vocab::events::EventKind;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Loaded packs by directory, so each is indexed once.
#[derive(Default)]
pub struct Packs(HashMap<PathBuf, Arc<Pack>>);

impl Packs {
    pub fn get(&mut self, dir: &Path) -> Arc<Pack> {
        self.0
            .entry(dir.to_path_buf())
            .or_insert_with(|| Arc::new(Pack::load(dir).unwrap()))
            .clone()
    }
}

/// Runs one scenario with `store` as the engine's recorder.
pub async fn run_scenario(store: &Store, packs: &mut Packs, s: &Scenario) -> RunOutcome {
    let base = base_engine(Arc::new(store.clone()));
    let engine = s.engine_with_pack(&base, Arc::new(OfflineModel::new()), packs.get(&s.pack));
    engine.run(s.request()).await.unwrap()
}

/// What the stored run must show, compared with the live outcome.
pub async fn check_stored_run(store: &Store, s: &Scenario, out: &RunOutcome) {
    let name = &s.name;
    let trace = serde_json::to_value(store.run_trace(out.run_id).await.unwrap()).unwrap();
    let run = &trace["run"];
    assert_eq!(run["runId"], json!(out.run_id), "{name}");
    assert_eq!(run["status"], out.end.status.as_str(), "{name}");
    assert_eq!(run["degraded"], json!(out.end.degraded), "{name}");
    assert_eq!(run["answer"], json!(out.end.answer), "{name}");
    assert_eq!(
        run["effectiveVerdict"],
        json!(out.end.effective_verdict.map(|v| v.as_str())),
        "{name}"
    );
    assert_eq!(
        run["orchestrationTrace"],
        serde_json::to_value(&out.end.trace).unwrap(),
        "{name}"
    );
    assert_eq!(
        run["route"],
        serde_json::to_value(out.end.trace.route()).unwrap(),
        "{name}"
    );
    if let Some(want) = &s.expect_route {
        assert_eq!(run["route"], serde_json::to_value(want).unwrap(), "{name}");
    }
    assert_eq!(
        run["selfEvaluation"],
        out.self_evaluation.to_value(),
        "{name}"
    );
    // Steps and invocations: exactly the ones the live run announced.
    let step_ids: Vec<i64> = out
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelCalled { step_id, .. } => Some(*step_id),
            _ => None,
        })
        .collect();
    let invocation_ids: Vec<i64> = out
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolInvoked { invocation } => Some(invocation.id),
            _ => None,
        })
        .collect();
    let ids = |key: &str| -> Vec<i64> {
        trace[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(ids("steps"), step_ids, "{name}: steps");
    assert_eq!(
        ids("toolInvocations"),
        invocation_ids,
        "{name}: invocations"
    );
    assert_eq!(run["stepCount"], json!(step_ids.len()), "{name}");
    assert_eq!(run["toolCallCount"], json!(invocation_ids.len()), "{name}");
    for key in ["steps", "toolInvocations"] {
        for row in trace[key].as_array().unwrap() {
            assert_eq!(
                row["runId"],
                json!(out.run_id),
                "{name}: {key} of another run"
            );
        }
    }
    // Verdicts and gatekeeper result as the engine emitted them last.
    let last_gk = out.events.iter().rev().find_map(|e| match &e.kind {
        EventKind::GatekeeperChecked { result } => Some(serde_json::to_value(result).unwrap()),
        _ => None,
    });
    assert_eq!(
        run["gatekeeperResult"],
        last_gk.unwrap_or(Value::Null),
        "{name}"
    );
    let last_verdict = out.events.iter().rev().find_map(|e| match &e.kind {
        EventKind::VerdictUpdated(v) => Some(json!(v.effective_verdict)),
        _ => None,
    });
    if let Some(v) = last_verdict {
        assert_eq!(run["verdicts"]["effectiveVerdict"], v, "{name}");
    }
    // Exact replay.
    let replay = store.load_events(out.run_id).await.unwrap();
    assert_eq!(
        replay, out.events,
        "{name}: replay differs from the live run"
    );
}

/// The whole shipped scenario suite against one store.
pub async fn scenario_suite(store: &Store) {
    let mut packs = Packs::default();
    let list = Scenario::list(&scenario_dir());
    assert!(list.len() >= 30, "only {} scenarios", list.len());
    for (_, loaded) in list {
        let s = loaded.unwrap();
        let out = run_scenario(store, &mut packs, &s).await;
        check_stored_run(store, &s, &out).await;
    }
    assert_eq!(store.running_count().await.unwrap(), 0);
}

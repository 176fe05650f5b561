//! A stored run re-executed (`diagraph rerun`): the engine it runs on and
//! the request that starts it.
//!
//! The rerun engine is the given one (its prompts, Gatekeeper rules and
//! live model, so a team sees whether a prompt or rule change flips the
//! verdict) with the model replaced by [`ReplayModel`] over the stored
//! run's recorded answers and every tool by its replay
//! ([`replay_registry`]). Deterministic nodes run for real on what the
//! replay serves; nothing here decides a verdict.

use crate::engine::{Engine, RunRequest};
use crate::model::replay::{Recording, RecordingError, ReplayModel, ReplayState};
use crate::tools::replay::{RecordedResults, replay_registry};
use crate::vocab::graph::NodeId;
use crate::vocab::run::RunStatus;
use crate::vocab::run_trace::RunTrace;
use std::sync::Arc;

/// An engine that replays `trace`, live from the first execution of
/// `from` on, and the state that says afterwards whether the replay ran
/// short of recorded calls. `from` must be an agent node (deterministic
/// nodes are code and always run anew), and the run must have ended.
pub fn rerun_engine(
    base: &Engine,
    trace: &RunTrace,
    from: Option<NodeId>,
) -> Result<(Engine, Arc<ReplayState>), RecordingError> {
    let run_id = trace.run.run_id;
    let fail = |reason: String| RecordingError { run_id, reason };
    if trace.run.status == RunStatus::Running {
        return Err(fail(
            "it is still RUNNING (rerun a run once it has ended)".into(),
        ));
    }
    let from = match from {
        None => None,
        Some(node) => Some(node.agent_role().ok_or_else(|| {
            fail(format!(
                "--from {} is not an agent node (planner, executor, verifier, composer); \
                 deterministic nodes always run anew",
                node.as_str()
            ))
        })?),
    };
    let recording = Recording::from_trace(trace)?;
    let results = RecordedResults::from_trace(trace).map_err(fail)?;
    // Permissions are not stored with a run; the refusals it recorded
    // are kept (a scenario may have narrowed the set).
    let mut config = base.config.clone();
    config
        .tool_permissions
        .retain(|p| !results.unpermitted_tools().any(|t| t == p));
    let model = ReplayModel::new(recording, Arc::clone(&base.model), from);
    let state = model.state();
    let backends = trace
        .run
        .sources()
        .map(|s| s.tools.clone())
        .unwrap_or_default();
    let tools = replay_registry(
        &base.tools,
        Arc::new(results),
        &backends,
        Arc::clone(&state),
    );
    let catalog = match recorded_names(trace) {
        Some(names) if base.catalog.services.is_empty() => Arc::new(
            crate::vocab::catalog::Catalog {
                services: names.services.clone().into(),
                ..(*base.catalog).clone()
            }
            .with_names(names),
        ),
        _ => Arc::clone(&base.catalog),
    };
    let engine = Engine {
        model: Arc::new(model),
        tools: Arc::new(tools),
        config,
        catalog,
        ..base.clone()
    };
    Ok((engine, state))
}

/// The names the stored run's first Planner was told the sources hold
/// (`known_services`, `aliases`): a rerun without the run's pack resolves
/// the question's subjects against the same names.
fn recorded_names(trace: &RunTrace) -> Option<crate::vocab::catalog::HeldNames> {
    let step = trace.steps.iter().find(|s| s.agent_name == "planner")?;
    let input: serde_json::Value = serde_json::from_str(&step.model_input).ok()?;
    let strings = |v: Option<&serde_json::Value>| -> Vec<String> {
        v.and_then(serde_json::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let services = strings(input.get("known_services"));
    let aliases: Vec<(String, Vec<String>)> = input
        .get("aliases")
        .and_then(serde_json::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|pair| {
                    let name = pair.get(0)?.as_str()?.to_string();
                    Some((name, strings(pair.get(1))))
                })
                .collect()
        })
        .unwrap_or_default();
    (!services.is_empty() || !aliases.is_empty()).then_some(crate::vocab::catalog::HeldNames {
        services,
        aliases,
        ..Default::default()
    })
}

/// The request of a rerun: the stored run's question, pack and scenario
/// names, in a new session, linked by `rerun_of`.
pub fn rerun_request(trace: &RunTrace) -> RunRequest {
    let mut request = RunRequest::new(trace.run.query.clone());
    request.pack = trace.run.pack.clone();
    request.scenario = trace.run.scenario.clone();
    request.rerun_of = Some(trace.run.run_id);
    request
}

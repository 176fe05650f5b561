//! `diagraph rerun RUN_ID`: a stored run re-executed from its recorded
//! model answers and tool results (no network), live from `--from NODE`
//! on, as a new run linked by `rerun_of`. With `--prompts DIR` and
//! `--rules FILE` it shows whether a prompt or rule change flips the
//! stored run's verdict.
//!
//! Exit codes as `ask`; a run that cannot be rerun (unknown, still
//! RUNNING, answers stored cut, or a call the recording does not cover)
//! is bad input, exit 2.

use super::CliError;
use super::ask::{cancel_on_signal, human};
use super::out::emit;
use super::setup::{Output, Setup};
use crate::config::Config;
use crate::engine::nodes::gatekeeper::GatekeeperRules;
use crate::engine::rerun::{rerun_engine, rerun_request};
use crate::tools::pack::Pack;
use crate::vocab::graph::NodeId;
use crate::vocab::run::RunStatus;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

pub async fn run(
    config: &Config,
    run_id: i64,
    from: Option<String>,
    rules: Option<PathBuf>,
    json: bool,
) -> Result<ExitCode, CliError> {
    let from = match from.as_deref() {
        None => None,
        Some(name) => Some(
            NodeId::parse(&name.trim().to_ascii_lowercase()).ok_or_else(|| {
                CliError::input(format!(
                    "--from {name:?} is not a node (planner, executor, verifier, composer)"
                ))
            })?,
        ),
    };
    let rules = match &rules {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                CliError::input(format!("cannot read rules file {}: {e}", path.display()))
            })?;
            Some(
                GatekeeperRules::from_json(&text)
                    .map_err(|e| CliError::input(format!("rules file {}: {e}", path.display())))?,
            )
        }
    };
    let setup = Setup::build(config, Output::Quiet).await?;
    let trace = setup.store.run_trace(run_id).await?;
    let mut base = setup.engine.clone();
    if let Some(rules) = rules {
        base.rules = Arc::new(rules);
    }
    // Live tools after --from read the stored run's pack when it is still
    // there and no other pack was asked for; a pure replay reads no pack.
    if from.is_some()
        && config.pack.is_none()
        && let Some(path) = &trace.run.pack
        && let Ok(pack) = Pack::load(std::path::Path::new(path))
    {
        base = base.on_pack(Arc::new(pack));
    }
    let (engine, state) =
        rerun_engine(&base, &trace, from).map_err(|e| CliError::input(e.to_string()))?;
    let request = rerun_request(&trace);
    let stop = tokio::spawn(cancel_on_signal(request.cancel.clone()));
    let outcome = engine.run(request).await;
    stop.abort();
    let printed = match outcome {
        Err(e) => Err(CliError::from(e)),
        Ok(outcome) => match state.missing() {
            // The new run ended (never left RUNNING), but it is not the
            // stored run replayed: say so rather than print its answer.
            Some(missing) => Err(CliError::input(format!(
                "run {run_id} cannot be rerun: {missing}; the partial rerun is run {} ({})",
                outcome.run_id,
                // As `diagraph runs` lists it: a fallback answer is not a
                // plain SUCCESS.
                match (outcome.end.status, outcome.end.degraded) {
                    (RunStatus::Success, true) => "DEGRADED",
                    (status, _) => status.as_str(),
                }
            ))),
            None => {
                let text = if json {
                    let mut v = outcome.to_json();
                    if let serde_json::Value::Object(map) = &mut v {
                        map.insert("rerun_of".into(), run_id.into());
                    }
                    let mut text = serde_json::to_string_pretty(&v).unwrap_or_default();
                    text.push('\n');
                    text
                } else {
                    format!("rerun of run {run_id}\n{}", human(&outcome))
                };
                emit(&text).map(|()| ExitCode::from(outcome.exit_code()))
            }
        },
    };
    setup.finish().await;
    printed
}

//! `diagraph ask`: one question (or one scenario), one run, one answer.

use super::CliError;
use super::setup::{Output, Setup};
use crate::config::Config;
use crate::engine::{RunOutcome, RunRequest};
use crate::scenario::Scenario;
use crate::text::{sanitize_line, sanitize_multiline};
use crate::vocab::run::RunStatus;
use std::path::PathBuf;
use std::process::ExitCode;

pub async fn run(
    config: &Config,
    question: Option<String>,
    scenario: Option<PathBuf>,
    session: Option<String>,
    json: bool,
) -> Result<ExitCode, CliError> {
    // Validate the cheap inputs before touching the database.
    let scenario = match &scenario {
        Some(path) => Some(Scenario::load(path)?),
        None => None,
    };
    if scenario.is_none() && question.as_deref().is_none_or(|q| q.trim().is_empty()) {
        return Err(CliError(
            "ask needs a question (or --scenario FILE)".to_string(),
        ));
    }
    let setup = Setup::build(config, Output::Stderr).await?;
    let (engine, mut request) = match &scenario {
        Some(s) => {
            let engine = s.engine(&setup.engine, setup.fallthrough.clone())?;
            let mut request = s.request();
            if let Some(q) = question.filter(|q| !q.trim().is_empty()) {
                request.question = q;
            }
            (engine, request)
        }
        None => (
            setup.engine.clone(),
            RunRequest::new(question.unwrap_or_default()),
        ),
    };
    if session.is_some() {
        request.session_id = session;
    }
    if let Some(pack) = config.pack.as_ref() {
        request
            .pack
            .get_or_insert_with(|| pack.display().to_string());
    }

    // Ctrl-C cancels the run cleanly: it ends FAILED ("cancelled"), never
    // left RUNNING.
    let cancel = request.cancel.clone();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            cancel.cancel();
        }
    });
    let outcome = engine.run(request).await;
    ctrl_c.abort();
    let outcome = outcome?;

    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&outcome.to_json()).unwrap_or_default()
        );
    } else {
        print_human(&outcome);
    }
    Ok(match outcome.end.status {
        RunStatus::Success => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}

fn print_human(outcome: &RunOutcome) {
    let verdict = outcome
        .end
        .effective_verdict
        .map(|v| v.as_str())
        .unwrap_or("none");
    let capped = match (outcome.verdicts.model_verdict, outcome.verdicts.ceiling) {
        (Some(m), Some(c)) if m > c => format!(" (model {m}, capped by ceiling {c})"),
        _ => String::new(),
    };
    println!(
        "run {} · session {} · {} · verdict {verdict}{capped}{}",
        outcome.run_id,
        sanitize_line(&outcome.session_id),
        outcome.end.status.as_str(),
        if outcome.end.degraded {
            " · degraded"
        } else {
            ""
        }
    );
    let route: Vec<&str> = outcome
        .end
        .trace
        .route()
        .iter()
        .map(|n| n.as_str())
        .collect();
    println!("route: {}", route.join(" -> "));
    if let Some(reason) = &outcome.end.failure {
        println!("failure: {}", sanitize_line(&reason.message));
    }
    println!();
    println!("{}", sanitize_multiline(&outcome.end.answer));
    println!();
    println!("trace: diagraph trace {}", outcome.run_id);
}

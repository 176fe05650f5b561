//! `diagraph ask`: one question (or one scenario), one run, one answer.
//!
//! Exit codes: 0 an answer that is not degraded, 3 a degraded one (a
//! fallback), 4 a run that ended FAILED or CANCELLED; errors before the
//! run are 2 (bad input or configuration) or 1.

use super::CliError;
use super::out::{emit, line};
use super::setup::{Output, Setup};
use crate::config::Config;
use crate::engine::{EngineError, RunOutcome, RunRequest};
use crate::scenario::Scenario;
use crate::text::{sanitize_line, sanitize_multiline};
use std::path::PathBuf;
use std::process::ExitCode;
use tokio_util::sync::CancellationToken;

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
        return Err(CliError::input("ask needs a question (or --scenario FILE)"));
    }
    // Pack warnings are part of the answer's record, not stderr noise.
    let setup = Setup::build(config, Output::Quiet).await?;
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

    // Ctrl-C or SIGTERM cancels the run cleanly: it ends CANCELLED with
    // its events saved, never left RUNNING.
    let stop = tokio::spawn(cancel_on_signal(request.cancel.clone()));
    let outcome = engine.run(request).await;
    stop.abort();
    let printed = match outcome {
        Ok(outcome) => {
            let text = if json {
                let mut text = serde_json::to_string_pretty(&outcome.to_json()).unwrap_or_default();
                text.push('\n');
                text
            } else {
                human(&outcome)
            };
            emit(&text).map(|()| ExitCode::from(outcome.exit_code()))
        }
        Err(e) => {
            // The store lost the run, not the user: the answer still goes
            // to stdout, the error (with the run id) to stderr.
            if let EngineError::Unpersisted {
                answer: Some(answer),
                ..
            } = &e
                && !json
            {
                let _ = emit(&format!("{}\n", sanitize_multiline(answer)));
            }
            Err(CliError::from(e))
        }
    };
    // After the answer is out: sending the run's spans may take a moment.
    setup.finish().await;
    printed
}

pub(super) async fn cancel_on_signal(cancel: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate());
        match term {
            Ok(mut term) => {
                tokio::select! {
                    r = tokio::signal::ctrl_c() => if r.is_err() { return },
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                if tokio::signal::ctrl_c().await.is_err() {
                    return;
                }
            }
        }
    }
    #[cfg(not(unix))]
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    cancel.cancel();
}

pub(super) fn human(outcome: &RunOutcome) -> String {
    let mut out = String::new();
    let verdict = outcome
        .end
        .effective_verdict
        .map(|v| v.as_str())
        .unwrap_or("none");
    let capped = match (outcome.verdicts.model_verdict, outcome.verdicts.ceiling) {
        (Some(m), Some(c)) if m > c => format!(" (model {m}, capped by ceiling {c})"),
        _ => String::new(),
    };
    let gatekeeper = outcome.events.iter().rev().find_map(|e| match &e.kind {
        crate::vocab::events::EventKind::GatekeeperChecked { result } => Some(result.as_ref()),
        _ => None,
    });
    let findings =
        if crate::report::pass_without_findings(outcome.end.effective_verdict, gatekeeper) {
            format!(" · {}", crate::report::NO_FINDINGS)
        } else {
            String::new()
        };
    // A fallback answer is a success of the run, not of the diagnosis:
    // it reads DEGRADED, as in `runs` and the workbench.
    let status = match (outcome.end.status, outcome.end.degraded) {
        (crate::vocab::run::RunStatus::Success, true) => "DEGRADED",
        (s, _) => s.as_str(),
    };
    line(
        &mut out,
        format!(
            "run {} · session {} · {status} · verdict {verdict}{findings}{capped}",
            outcome.run_id,
            sanitize_line(&outcome.session_id),
        ),
    );
    let route: Vec<&str> = outcome
        .end
        .trace
        .route()
        .iter()
        .map(|n| n.as_str())
        .collect();
    line(&mut out, format!("route: {}", route.join(" -> ")));
    if let Some(f) = &outcome.end.failure {
        line(
            &mut out,
            format!("failure ({}): {}", f.class, sanitize_line(&f.message)),
        );
    }
    for w in &outcome.sources.pack_warnings {
        line(&mut out, format!("pack warning: {}", sanitize_line(w)));
    }
    line(&mut out, "");
    line(&mut out, sanitize_multiline(&outcome.end.answer));
    line(&mut out, "");
    line(
        &mut out,
        format!("trace: diagraph trace {}", outcome.run_id),
    );
    out
}

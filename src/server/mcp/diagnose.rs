//! The `diagnose` tool: one run through the server's run registry
//! ([`LiveRuns`]), progress notifications from its events while it runs,
//! and the answer with the citations the evidence gate verified.
//!
//! The run lives in the registry, not in the request: a client that
//! cancels the request cancels the run (it ends CANCELLED with its events
//! saved), and a client that goes away leaves it to the shutdown, which
//! cancels and persists every run in progress.

use crate::server::live::{LiveRun, LiveRuns, OnPack, RunResult, StartError};
use crate::text::error_line;
use crate::vocab::contracts::BindingStatus;
use crate::vocab::events::{EngineEvent, EventKind};
use crate::vocab::graph::NodeId;
use crate::vocab::run::RunStatus;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::Serialize;
use serde_json::{Value, json};
use std::borrow::Borrow;
use std::path::PathBuf;
use std::sync::Arc;

use super::tools::{DiagnoseArgs, MAX_SESSION_ID};

/// One evidence binding the answer rests on: the Gatekeeper traced it to
/// a recorded tool result of this run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Citation {
    pub claim_id: String,
    pub tool: String,
    pub invocation_id: i64,
    pub raw_path: String,
    pub excerpt: String,
}

/// The bindings that passed the last Gatekeeper check the run moved on
/// from to `verified_input`. A check that sent the run to the fallback
/// leaves none: that answer rests on no claim. An evidence retry re-checks
/// every binding, so the last check is the one that counts.
pub fn verified_citations<E: Borrow<EngineEvent>>(events: &[E]) -> Vec<Citation> {
    let mut checked = None;
    let mut verified = Vec::new();
    for event in events {
        match &event.borrow().kind {
            EventKind::GatekeeperChecked { result } => checked = Some(result.clone()),
            EventKind::NodeFinished {
                node: NodeId::Gatekeeper,
                next,
                ..
            } => {
                verified = match (&checked, *next == NodeId::VerifiedInput) {
                    (Some(result), true) => result
                        .checked_bindings
                        .iter()
                        .filter(|b| b.status == BindingStatus::Pass)
                        .filter_map(|b| {
                            Some(Citation {
                                claim_id: b.claim_id.clone(),
                                tool: b.tool_name.clone(),
                                invocation_id: b.source_invocation_id?,
                                raw_path: b.raw_path.clone()?,
                                excerpt: if b.evidence_excerpt.is_empty() {
                                    b.matched_text.clone()
                                } else {
                                    b.evidence_excerpt.clone()
                                },
                            })
                        })
                        .collect(),
                    _ => Vec::new(),
                };
            }
            _ => {}
        }
    }
    verified
}

/// Checks the arguments, loads the pack a call names, starts the run,
/// reports progress until it ends and answers with its result.
pub async fn diagnose(
    live: &Arc<LiveRuns>,
    args: DiagnoseArgs,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, ErrorData> {
    let question = args.question.trim().to_string();
    if question.is_empty() {
        return Err(ErrorData::invalid_params("question is empty", None));
    }
    if let Some(s) = &args.session_id
        && (s.trim().is_empty() || s.chars().count() > MAX_SESSION_ID)
    {
        return Err(ErrorData::invalid_params(
            format!("session_id must be 1 to {MAX_SESSION_ID} characters"),
            None,
        ));
    }
    let on = match args.pack.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(dir) => Some(on_pack(live, PathBuf::from(dir)).await?),
    };
    let run = live
        .start_on(question, args.session_id, on)
        .await
        .map_err(start_error)?;
    let progress = context.meta.get_progress_token();
    let result = tokio::select! {
        result = follow(&run, progress, context) => result,
        // The client cancelled the request: the run ends CANCELLED.
        () = context.ct.cancelled() => {
            run.cancel();
            run.wait().await
        }
    };
    let (events, _) = run.events_from(0);
    answer(run.run_id, result, &events)
}

async fn on_pack(live: &LiveRuns, dir: PathBuf) -> Result<OnPack, ErrorData> {
    let shown = dir.display().to_string();
    // Loading reads the pack's log index and indexes its knowledge (once
    // while its files are unchanged): not on the protocol's task.
    let packs = live.packs();
    let loaded = tokio::task::spawn_blocking(move || packs.load(&dir)).await;
    match loaded {
        Ok(Ok(pack)) => Ok(OnPack {
            engine: live.engine().on_pack(pack),
            pack: shown,
        }),
        Ok(Err(e)) => Err(ErrorData::invalid_params(
            format!("cannot use pack {shown}: {}", error_line(&e)),
            None,
        )),
        Err(_) => Err(ErrorData::internal_error(
            format!("loading pack {shown} failed unexpectedly"),
            None,
        )),
    }
}

fn start_error(e: StartError) -> ErrorData {
    ErrorData::internal_error(format!("could not start the diagnosis: {e}"), None)
}

/// Waits for the run to end, sending one progress notification per node
/// entered and tool invoked when the client asked for progress.
async fn follow(
    run: &LiveRun,
    token: Option<ProgressToken>,
    context: &RequestContext<RoleServer>,
) -> RunResult {
    let Some(token) = token else {
        return run.wait().await;
    };
    let mut changed = run.subscribe();
    let mut seen = 0;
    loop {
        let (events, ended) = run.events_from(seen);
        for event in &events {
            seen += 1;
            if let Some(message) = progress_message(event) {
                let note = ProgressNotificationParam::new(token.clone(), seen as f64)
                    .with_message(message);
                // A client that stopped listening does not stop the run.
                let _ = context.peer.notify_progress(note).await;
            }
        }
        if ended {
            return run.wait().await;
        }
        if changed.changed().await.is_err() {
            return run.wait().await;
        }
    }
}

/// What a progress notification says about an event; code-made, no tool
/// or model text.
fn progress_message(event: &EngineEvent) -> Option<String> {
    match &event.kind {
        EventKind::RunStarted { .. } => Some(format!("run {} started", event.run_id)),
        EventKind::NodeEntered { node, attempt, .. } if *attempt > 1 => {
            Some(format!("{} (attempt {attempt})", node.as_str()))
        }
        EventKind::NodeEntered { node, .. } => Some(node.as_str().to_string()),
        EventKind::ToolInvoked { invocation } => Some(format!(
            "tool {} #{}: {}",
            invocation.tool_name,
            invocation.id,
            invocation.retrieval_details.evidence_status.as_str()
        )),
        EventKind::RunFinished(end) => Some(format!("finished: {}", end.status.as_str())),
        _ => None,
    }
}

/// The tool result: the `ask --json` object of the run with its verified
/// citations, as `structuredContent` and as JSON text. A run that ended
/// FAILED or CANCELLED is a tool error (`isError`) that says why.
fn answer(
    run_id: i64,
    result: RunResult,
    events: &[Arc<EngineEvent>],
) -> Result<CallToolResult, ErrorData> {
    let (mut json, status) = match result {
        RunResult::Ended { json, status } => (json, status),
        RunResult::Error(message) => {
            return Err(ErrorData::internal_error(
                format!("run {run_id} failed and could not be saved: {message}"),
                Some(json!({ "run_id": run_id })),
            ));
        }
    };
    if let Value::Object(map) = &mut json {
        let citations = serde_json::to_value(verified_citations(events)).unwrap_or_default();
        map.insert("citations".into(), citations);
    }
    let text = serde_json::to_string_pretty(&json).unwrap_or_default();
    let mut result = CallToolResult::structured(json);
    result.content = vec![ContentBlock::text(text)];
    if matches!(status, RunStatus::Failed | RunStatus::Cancelled) {
        result.is_error = Some(true);
    }
    Ok(result)
}

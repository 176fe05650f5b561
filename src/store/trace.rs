//! The Run Trace projection (`diagraph trace RUN_ID --json`) and the
//! replay journal reader.
//!
//! The projection is exact-run: `{run: {..., orchestrationTrace}, steps,
//! toolInvocations}`, every row selected by run_id, and
//! `orchestrationTrace` appears under `run` only: the shape of
//! `vocab::run_trace::RunTrace`.
//! Stored JSON columns come back as JSON; a column that no longer parses
//! is returned as its raw text rather than failing the whole trace.

use crate::store::connect::query_error;
use crate::store::db::{RowExt, ms_to_rfc3339, with_pool};
use crate::store::journal::{self, StoredEvent};
use crate::store::{Store, StoreError};
use crate::vocab::contracts::Verdict;
use crate::vocab::events::{EngineEvent, EventKind};
use crate::vocab::run::{FailedSource, Failure, FailureClass, RunStatus};
use crate::vocab::run_trace::{RunTrace, Stored, TracedInvocation, TracedRun, TracedStep};
use crate::vocab::trace::OrchestrationTrace;
use crate::vocab::usage::Usage;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

const RUN: &str = "SELECT id, session_id, status, agent_flow, query, answer, model, pack, \
     scenario, degraded, effective_verdict, total_duration_ms, total_token_count, step_count, \
     tool_call_count, self_evaluation, orchestration_trace, failure_reason, failure_class, \
     sources, feedback, rerun_of, created_at, finished_at FROM diagnosis_run WHERE id = ?";
const STEPS: &str = "SELECT id, run_id, session_id, seq, step_index, agent_name, attempt, \
     model_input, model_output, thought, has_tool_call, duration_ms, token_count, \
     error_message, created_at, prompt_tokens, completion_tokens, reasoning_tokens, \
     cached_tokens, cost_usd, parse_error FROM agent_step WHERE run_id = ? ORDER BY seq, id";
const INVOCATIONS: &str = "SELECT id, run_id, session_id, step_id, seq, tool_name, \
     input_params, output_preview, output_length, retrieval_layer, l0_match_count, \
     l1_match_count, is_truncated, relevance_level, dedup_reason, retrieval_details, \
     duration_ms, success, error_message, created_at FROM tool_invocation \
     WHERE run_id = ? ORDER BY seq, id";
const EXISTS: &str = "SELECT id FROM diagnosis_run WHERE id = ?";
const EVENTS: &str = "SELECT seq, payload FROM run_event WHERE run_id = ? ORDER BY seq";

fn stored<T: for<'de> serde::Deserialize<'de>>(text: Option<String>) -> Option<Stored<T>> {
    text.map(|t| Stored::from_text(&t))
}

/// A column holding a value this binary does not know.
pub(crate) fn bad_column(col: &str, value: &str) -> sqlx::Error {
    sqlx::Error::ColumnDecode {
        index: col.to_string(),
        source: format!("unexpected value {value:?}").into(),
    }
}

fn run_row(r: &impl RowExt) -> Result<TracedRun, sqlx::Error> {
    let status = r.text("status")?;
    let verdict = r.opt_text("effective_verdict")?;
    Ok(TracedRun {
        run_id: r.int("id")?,
        session_id: r.text("session_id")?,
        status: RunStatus::parse(&status).ok_or_else(|| bad_column("status", &status))?,
        agent_flow: r.text("agent_flow")?,
        query: r.text("query")?,
        answer: r.packed("answer")?,
        model: r.text("model")?,
        pack: r.opt_text("pack")?,
        scenario: r.opt_text("scenario")?,
        degraded: r.flag("degraded")?,
        effective_verdict: match verdict {
            None => None,
            Some(v) => Some(Verdict::parse(&v).ok_or_else(|| bad_column("effective_verdict", &v))?),
        },
        total_duration_ms: r.opt_int("total_duration_ms")?,
        total_token_count: r.int("total_token_count")?,
        step_count: r.int("step_count")?,
        tool_call_count: r.int("tool_call_count")?,
        self_evaluation: stored(r.opt_packed("self_evaluation")?),
        // Runs stored before the trace was left to the journal have it here.
        orchestration_trace: stored(r.opt_text("orchestration_trace")?),
        failure: failure(r.opt_text("failure_reason")?, r.opt_text("failure_class")?),
        failure_reason: r.opt_text("failure_reason")?,
        sources: stored(r.opt_packed("sources")?),
        failed_sources: Vec::new(),
        feedback: r.opt_text("feedback")?,
        rerun_of: r.opt_int("rerun_of")?,
        created_at: ms_to_rfc3339(r.int("created_at")?),
        finished_at: r.opt_int("finished_at")?.map(ms_to_rfc3339),
        route: None,
        verdicts: None,
        gatekeeper_result: None,
        event_count: 0,
        usage: Usage::default(),
    })
}

/// The stored failure: its message, with the class recorded beside it
/// (rows written before classes existed get one from the message).
fn failure(message: Option<String>, class: Option<String>) -> Option<Failure> {
    let message = message?;
    let class = class
        .as_deref()
        .and_then(FailureClass::parse)
        .unwrap_or_else(|| FailureClass::of_legacy_message(&message));
    Some(Failure::new(class, message))
}

fn step_row(r: &impl RowExt) -> Result<TracedStep, sqlx::Error> {
    Ok(TracedStep {
        id: r.int("id")?,
        run_id: r.int("run_id")?,
        session_id: r.text("session_id")?,
        seq: r.int("seq")?,
        step_index: r.int("step_index")?,
        agent_name: r.text("agent_name")?,
        attempt: r.int("attempt")?,
        model_input: r.packed("model_input")?,
        model_output: r.packed("model_output")?,
        thought: r.text("thought")?,
        has_tool_call: r.flag("has_tool_call")?,
        duration_ms: r.int("duration_ms")?,
        token_count: r.int("token_count")?,
        error: r.opt_text("error_message")?,
        created_at: ms_to_rfc3339(r.int("created_at")?),
        usage: step_usage(r)?,
        parse_error: r.opt_text("parse_error")?,
    })
}

/// A step's usage. A row written before usage was recorded has no split:
/// its figures read as 0 (and null) and only `tokenCount` tells the total.
fn step_usage(r: &impl RowExt) -> Result<Usage, sqlx::Error> {
    let count =
        |col: &str| Ok::<_, sqlx::Error>(r.opt_int(col)?.and_then(|n| u64::try_from(n).ok()));
    Ok(Usage {
        prompt_tokens: count("prompt_tokens")?.unwrap_or(0),
        completion_tokens: count("completion_tokens")?.unwrap_or(0),
        reasoning_tokens: count("reasoning_tokens")?,
        cached_tokens: count("cached_tokens")?,
        cost_usd: r.opt_float("cost_usd")?,
    })
}

fn invocation_row(r: &impl RowExt) -> Result<TracedInvocation, sqlx::Error> {
    let params = r.text("input_params")?;
    Ok(TracedInvocation {
        id: r.int("id")?,
        run_id: r.int("run_id")?,
        session_id: r.text("session_id")?,
        step_id: r.opt_int("step_id")?,
        seq: r.int("seq")?,
        tool_name: r.text("tool_name")?,
        input_params: serde_json::from_str(&params).unwrap_or(Value::String(params)),
        output_preview: r.packed("output_preview")?,
        output_length: r.int("output_length")?,
        retrieval_layer: r.opt_text("retrieval_layer")?,
        l0_match_count: r.opt_int("l0_match_count")?,
        l1_match_count: r.opt_int("l1_match_count")?,
        is_truncated: r.flag("is_truncated")?,
        relevance_level: r.opt_text("relevance_level")?,
        dedup_reason: r.opt_text("dedup_reason")?,
        retrieval_details: Stored::from_text(&r.packed("retrieval_details")?),
        duration_ms: r.int("duration_ms")?,
        success: r.flag("success")?,
        error_message: r.opt_text("error_message")?,
        created_at: ms_to_rfc3339(r.int("created_at")?),
    })
}

impl Store {
    /// `{run: {..., orchestrationTrace}, steps, toolInvocations}` for exactly
    /// this run. `run` also carries `route` (node path), `verdicts` (the
    /// last verdict update) and `gatekeeperResult` (the last check), taken
    /// from what the engine recorded.
    #[tracing::instrument(level = "debug", skip_all, fields(run_id = run_id), err(level = "warn"))]
    pub async fn run_trace(&self, run_id: i64) -> Result<RunTrace, StoreError> {
        let (mut run, steps, tool_invocations) = with_pool!(&self.db, p => {
            let run = sqlx::query(RUN).bind(run_id).fetch_optional(p).await.map_err(query_error)?;
            let Some(run) = run else {
                return Err(StoreError::UnknownRun(run_id));
            };
            let run = run_row(&run).map_err(query_error)?;
            let steps = sqlx::query(STEPS).bind(run_id).fetch_all(p).await.map_err(query_error)?
                .iter().map(step_row).collect::<Result<Vec<_>, _>>().map_err(query_error)?;
            let invs = sqlx::query(INVOCATIONS).bind(run_id).fetch_all(p).await.map_err(query_error)?
                .iter().map(invocation_row).collect::<Result<Vec<_>, _>>().map_err(query_error)?;
            (run, steps, invs)
        });
        let events = self.load_events(run_id).await.unwrap_or_default();
        decorate(&mut run, &events);
        for step in &steps {
            run.usage.add(&step.usage);
        }
        run.failed_sources = tool_invocations
            .iter()
            .filter_map(|i| {
                let f = i.failure()?;
                Some(FailedSource {
                    tool: i.tool_name.clone(),
                    invocation_id: i.id,
                    class: f.class,
                    message: f.message,
                })
            })
            .collect();
        Ok(RunTrace {
            run,
            steps,
            tool_invocations,
        })
    }

    /// The run's journal in sequence order, as the live run emitted it.
    #[tracing::instrument(level = "debug", skip_all, fields(run_id = run_id), err(level = "warn"))]
    pub async fn load_events(&self, run_id: i64) -> Result<Vec<EngineEvent>, StoreError> {
        // Events of a live run of this store may still sit in the buffer.
        if let Err(e) = journal::flush_run(self, run_id).await {
            tracing::debug!(run_id, error = %e, "could not flush the journal before reading it");
        }
        with_pool!(&self.db, p => {
            let exists = sqlx::query(EXISTS).bind(run_id)
                .fetch_optional(p).await.map_err(query_error)?.is_some();
            if !exists {
                return Err(StoreError::UnknownRun(run_id));
            }
            let rows = sqlx::query(EVENTS).bind(run_id).fetch_all(p).await.map_err(query_error)?;
            let mut stored = Vec::with_capacity(rows.len());
            for r in &rows {
                let seq = r.int("seq").map_err(query_error)?;
                let payload = r.opt_bytes("payload").map_err(query_error)?.unwrap_or_default();
                stored.push(journal::decode(payload).map_err(|e| unreadable(run_id, seq, &e))?);
            }
            let mut invocations = HashMap::new();
            if stored.iter().any(|e| matches!(e, StoredEvent::Invocation { .. })) {
                for r in sqlx::query(INVOCATIONS).bind(run_id).fetch_all(p).await.map_err(query_error)? {
                    let traced = invocation_row(&r).map_err(query_error)?;
                    invocations.insert(traced.id, traced);
                }
            }
            stored.into_iter().map(|e| match e {
                StoredEvent::Event(e) => Ok(e),
                StoredEvent::Invocation { run_id: owner, seq, at_ms, invocation_id } => {
                    let invocation = invocations.get(&invocation_id)
                        .and_then(TracedInvocation::to_invocation)
                        .ok_or_else(|| unreadable(run_id, i64::from(seq), &format!(
                            "its tool invocation {invocation_id} is missing or unreadable")))?;
                    Ok(EngineEvent {
                        run_id: owner,
                        seq,
                        at_ms,
                        kind: EventKind::ToolInvoked { invocation: Arc::new(invocation) },
                    })
                }
            }).collect()
        })
    }
}

fn unreadable(run_id: i64, seq: i64, why: &str) -> StoreError {
    StoreError::Query(format!("run {run_id} event {seq} is unreadable: {why}"))
}

/// Adds `route`, `verdicts` and `gatekeeperResult` to the run.
fn decorate(run: &mut TracedRun, events: &[EngineEvent]) {
    // The trace a run ended with is its RunFinished event's.
    if run.orchestration_trace.is_none() {
        run.orchestration_trace = events.iter().rev().find_map(|e| match &e.kind {
            EventKind::RunFinished(end) => Some(Stored::Typed(end.trace.clone())),
            _ => None,
        });
    }
    run.route = run.orchestration_trace().map(OrchestrationTrace::route);
    let mut gatekeeper = None;
    for e in events {
        match &e.kind {
            EventKind::GatekeeperChecked { result } => gatekeeper = Some(result.as_ref().clone()),
            EventKind::VerdictUpdated(v) => run.verdicts = Some(*v),
            _ => {}
        }
    }
    // The journal holds exactly what the engine emitted; self_evaluation
    // is the fallback for runs recorded without a journal.
    run.gatekeeper_result = gatekeeper.or_else(|| {
        run.self_evaluation()
            .and_then(|e| e.verifier_evaluation.gatekeeper_result.as_deref().cloned())
    });
    run.event_count = events.len();
}

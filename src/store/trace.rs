//! The Run Trace projection (`diagraph trace RUN_ID --json`) and the
//! replay journal reader.
//!
//! The projection is exact-run: `{run: {..., orchestrationTrace}, steps,
//! toolInvocations}`, every row selected by run_id, and
//! `orchestrationTrace` appears under `run` only (seed 001 section 6).
//! Stored JSON columns come back as JSON; a column that no longer parses
//! is returned as its raw text rather than failing the whole trace.

use crate::store::connect::query_error;
use crate::store::db::{RowExt, ms_to_rfc3339, with_pool};
use crate::store::journal;
use crate::store::{Store, StoreError};
use crate::vocab::events::{EngineEvent, EventKind};
use crate::vocab::trace::OrchestrationTrace;
use serde_json::{Map, Value, json};

const RUN: &str = "SELECT id, session_id, status, agent_flow, query, answer, model, pack, \
     scenario, degraded, effective_verdict, total_duration_ms, total_token_count, step_count, \
     tool_call_count, self_evaluation, orchestration_trace, failure_reason, feedback, \
     created_at, finished_at FROM diagnosis_run WHERE id = ?";
const STEPS: &str = "SELECT id, run_id, session_id, seq, step_index, agent_name, attempt, \
     model_input, model_output, thought, has_tool_call, duration_ms, token_count, \
     error_message, created_at FROM agent_step WHERE run_id = ? ORDER BY seq, id";
const INVOCATIONS: &str = "SELECT id, run_id, session_id, step_id, seq, tool_name, \
     input_params, output_preview, output_length, retrieval_layer, l0_match_count, \
     l1_match_count, is_truncated, relevance_level, dedup_reason, retrieval_details, \
     duration_ms, success, error_message, created_at FROM tool_invocation \
     WHERE run_id = ? ORDER BY seq, id";
const EXISTS: &str = "SELECT id FROM diagnosis_run WHERE id = ?";
const EVENTS: &str = "SELECT seq, payload FROM run_event WHERE run_id = ? ORDER BY seq";

fn parse_json(text: Option<String>) -> Value {
    match text {
        None => Value::Null,
        Some(t) => serde_json::from_str(&t).unwrap_or(Value::String(t)),
    }
}

fn run_json(r: &impl RowExt) -> Result<Value, sqlx::Error> {
    Ok(json!({
        "runId": r.int("id")?,
        "sessionId": r.text("session_id")?,
        "status": r.text("status")?,
        "agentFlow": r.text("agent_flow")?,
        "query": r.text("query")?,
        "answer": r.text("answer")?,
        "model": r.text("model")?,
        "pack": r.opt_text("pack")?,
        "scenario": r.opt_text("scenario")?,
        "degraded": r.flag("degraded")?,
        "effectiveVerdict": r.opt_text("effective_verdict")?,
        "totalDurationMs": r.opt_int("total_duration_ms")?,
        "totalTokenCount": r.int("total_token_count")?,
        "stepCount": r.int("step_count")?,
        "toolCallCount": r.int("tool_call_count")?,
        "selfEvaluation": parse_json(r.opt_text("self_evaluation")?),
        "orchestrationTrace": parse_json(r.opt_text("orchestration_trace")?),
        "failureReason": r.opt_text("failure_reason")?,
        "feedback": r.opt_text("feedback")?,
        "createdAt": ms_to_rfc3339(r.int("created_at")?),
        "finishedAt": r.opt_int("finished_at")?.map(ms_to_rfc3339),
    }))
}

fn step_json(r: &impl RowExt) -> Result<Value, sqlx::Error> {
    Ok(json!({
        "id": r.int("id")?,
        "runId": r.int("run_id")?,
        "sessionId": r.text("session_id")?,
        "seq": r.int("seq")?,
        "stepIndex": r.int("step_index")?,
        "agentName": r.text("agent_name")?,
        "attempt": r.int("attempt")?,
        "modelInput": r.text("model_input")?,
        "modelOutput": r.text("model_output")?,
        "thought": r.text("thought")?,
        "hasToolCall": r.flag("has_tool_call")?,
        "durationMs": r.int("duration_ms")?,
        "tokenCount": r.int("token_count")?,
        "error": r.opt_text("error_message")?,
        "createdAt": ms_to_rfc3339(r.int("created_at")?),
    }))
}

fn invocation_json(r: &impl RowExt) -> Result<Value, sqlx::Error> {
    Ok(json!({
        "id": r.int("id")?,
        "runId": r.int("run_id")?,
        "sessionId": r.text("session_id")?,
        "stepId": r.opt_int("step_id")?,
        "seq": r.int("seq")?,
        "toolName": r.text("tool_name")?,
        "inputParams": parse_json(Some(r.text("input_params")?)),
        "outputPreview": r.text("output_preview")?,
        "outputLength": r.int("output_length")?,
        "retrievalLayer": r.opt_text("retrieval_layer")?,
        "l0MatchCount": r.opt_int("l0_match_count")?,
        "l1MatchCount": r.opt_int("l1_match_count")?,
        "isTruncated": r.flag("is_truncated")?,
        "relevanceLevel": r.opt_text("relevance_level")?,
        "dedupReason": r.opt_text("dedup_reason")?,
        "retrievalDetails": parse_json(Some(r.text("retrieval_details")?)),
        "durationMs": r.int("duration_ms")?,
        "success": r.flag("success")?,
        "errorMessage": r.opt_text("error_message")?,
        "createdAt": ms_to_rfc3339(r.int("created_at")?),
    }))
}

impl Store {
    /// `{run: {..., orchestrationTrace}, steps, toolInvocations}` for exactly
    /// this run. `run` also carries `route` (node path), `verdicts` (the
    /// last verdict update) and `gatekeeperResult` (the last check), taken
    /// from what the engine recorded.
    pub async fn run_trace(&self, run_id: i64) -> Result<Value, StoreError> {
        let (run, steps, invocations) = with_pool!(&self.db, p => {
            let run = sqlx::query(RUN).bind(run_id).fetch_optional(p).await.map_err(query_error)?;
            let Some(run) = run else {
                return Err(StoreError::UnknownRun(run_id));
            };
            let run = run_json(&run).map_err(query_error)?;
            let steps = sqlx::query(STEPS).bind(run_id).fetch_all(p).await.map_err(query_error)?
                .iter().map(step_json).collect::<Result<Vec<_>, _>>().map_err(query_error)?;
            let invs = sqlx::query(INVOCATIONS).bind(run_id).fetch_all(p).await.map_err(query_error)?
                .iter().map(invocation_json).collect::<Result<Vec<_>, _>>().map_err(query_error)?;
            (run, steps, invs)
        });
        let mut run = match run {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        let events = self.load_events(run_id).await.unwrap_or_default();
        decorate(&mut run, &events);
        Ok(json!({ "run": run, "steps": steps, "toolInvocations": invocations }))
    }

    /// The run's journal in sequence order, as the live run emitted it.
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
            rows.iter().map(|r| {
                let seq = r.int("seq").map_err(query_error)?;
                let payload = r.text("payload").map_err(query_error)?;
                serde_json::from_str::<EngineEvent>(&payload).map_err(|e| StoreError::Query(format!(
                    "run {run_id} event {seq} is unreadable: {}", super::connect::one_line(&e)
                )))
            }).collect()
        })
    }
}

/// Adds `route`, `verdicts` and `gatekeeperResult` to the run object.
fn decorate(run: &mut Map<String, Value>, events: &[EngineEvent]) {
    let trace: Option<OrchestrationTrace> = run
        .get("orchestrationTrace")
        .and_then(|t| serde_json::from_value(t.clone()).ok());
    if let Some(trace) = trace {
        run.insert("route".into(), json!(trace.route()));
    }
    let from_eval = run
        .get("selfEvaluation")
        .and_then(|s| s.get("verifier_evaluation"))
        .and_then(|v| v.get("gatekeeper_result"))
        .filter(|g| !g.is_null())
        .cloned();
    let mut gatekeeper = None;
    let mut verdicts = None;
    for e in events {
        match &e.kind {
            EventKind::GatekeeperChecked { result } => {
                gatekeeper = serde_json::to_value(result).ok()
            }
            EventKind::VerdictUpdated(v) => {
                verdicts = Some(json!({
                    "modelVerdict": v.model_verdict,
                    "ceiling": v.ceiling,
                    "effectiveVerdict": v.effective_verdict,
                    "groundednessScore": v.groundedness_score,
                    "evidenceRetryCount": v.evidence_retry_count,
                }));
            }
            _ => {}
        }
    }
    run.insert("verdicts".into(), verdicts.unwrap_or(Value::Null));
    // The journal holds exactly what the engine emitted; self_evaluation
    // is the fallback for runs recorded without a journal.
    run.insert(
        "gatekeeperResult".into(),
        gatekeeper.or(from_eval).unwrap_or(Value::Null),
    );
    run.insert("eventCount".into(), json!(events.len()));
}

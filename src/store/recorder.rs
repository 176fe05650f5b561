//! `impl Recorder for Store`: the run row is created RUNNING, steps and
//! invocations are written as they happen (with the run's buffered journal
//! events in the same transaction), and the run ends SUCCESS or FAILED.
//!
//! Every write is safe to repeat, because the engine retries writes that
//! failed while the database was away, and a write whose commit was lost
//! in transit may in fact have landed: a step or invocation already stored
//! under the same (run_id, seq) returns its existing id, and journal events
//! are insert-or-ignore.

use crate::store::Store;
use crate::store::connect::record_error;
use crate::store::db::{InsertId, RowExt, begin_write, now_ms, random_hex, to_i64, with_pool};
use crate::store::journal::{self, insert_events};
use crate::store::packed;
use crate::text::{clean, error_line};
use crate::vocab::agent::HistoryTurn;
use crate::vocab::events::EngineEvent;
use crate::vocab::record::{AgentStep, RecordError, Recorder, RunFinish, RunHandle, RunStart};
use crate::vocab::run::{RunEnd, RunStatus};
use crate::vocab::tool::{InvocationId, LOOKUP_KNOWLEDGE, ToolInvocation};
use crate::vocab::trace::build_trace;
use async_trait::async_trait;

// A run never updates its session row: concurrent runs of one session each
// hold a shared lock on it (the foreign key of their run insert), and
// upgrading those to write locks deadlocks on MySQL.
const INSERT_SESSION_TAIL: &str =
    " chat_session (session_id, title, created_at, updated_at) VALUES (?, ?, ?, ?)";
const INSERT_RUN: &str = "INSERT INTO diagnosis_run (session_id, status, agent_flow, query, \
     answer, model, pack, scenario, sources, degraded, total_token_count, step_count, \
     tool_call_count, owner_pid, owner_host, owner_token, created_at, updated_at, rerun_of) \
     VALUES (?, 'RUNNING', ?, ?, '', ?, ?, ?, ?, 0, 0, 0, 0, ?, ?, ?, ?, ?, ?)";
const INSERT_STEP: &str = "INSERT INTO agent_step (run_id, session_id, seq, step_index, \
     agent_name, attempt, model_input, model_output, thought, has_tool_call, duration_ms, \
     token_count, error_message, created_at, prompt_tokens, completion_tokens, \
     reasoning_tokens, cached_tokens, cost_usd, parse_error) \
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
const FIND_STEP: &str =
    "SELECT id, agent_name, step_index FROM agent_step WHERE run_id = ? AND seq = ?";
const INSERT_INVOCATION: &str = "INSERT INTO tool_invocation (run_id, session_id, step_id, seq, \
     tool_name, input_params, output_preview, output_length, retrieval_layer, l0_match_count, \
     l1_match_count, is_truncated, relevance_level, dedup_reason, retrieval_details, \
     duration_ms, success, error_message, created_at) \
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
const FIND_INVOCATION: &str =
    "SELECT id, tool_name, input_params FROM tool_invocation WHERE run_id = ? AND seq = ?";
const FINISH_RUN: &str = "UPDATE diagnosis_run SET status = ?, answer = ?, degraded = ?, \
     effective_verdict = ?, total_duration_ms = ?, total_token_count = ?, step_count = ?, \
     tool_call_count = ?, self_evaluation = ?, failure_reason = ?, \
     failure_class = ?, finished_at = ?, updated_at = ? WHERE id = ?";
const RUN_SESSION: &str = "SELECT session_id FROM diagnosis_run WHERE id = ?";
const HISTORY: &str = "SELECT id, query, answer FROM diagnosis_run \
     WHERE session_id = ? AND agent_flow = 'CHAT' AND status <> 'RUNNING' \
     ORDER BY id DESC LIMIT ?";
const FOREIGN_INVOCATION: &str =
    "SELECT id FROM tool_invocation WHERE run_id <> ? ORDER BY id LIMIT 1";

/// Session of the placeholder run that owns a made-up foreign invocation.
const PLACEHOLDER_SESSION: &str = "diagraph-placeholder";
/// agent_flow of that run, which keeps it out of run lists and histories.
const PLACEHOLDER_FLOW: &str = "PLACEHOLDER";

fn json_text<T: serde::Serialize>(v: &Option<T>) -> Option<String> {
    v.as_ref().and_then(|v| serde_json::to_string(v).ok())
}

fn unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

impl Store {
    async fn run_session(&self, run_id: i64) -> Result<String, RecordError> {
        if let Some(s) = self.journal.session_of(run_id)
            && !s.is_empty()
        {
            return Ok(s);
        }
        let row =
            with_pool!(&self.db, p => sqlx::query(RUN_SESSION).bind(run_id).fetch_optional(p).await
            .and_then(|r| r.map(|r| r.text("session_id")).transpose()))
            .map_err(record_error)?;
        row.ok_or_else(|| RecordError::Rejected(format!("unknown run {run_id}")))
    }

    /// Creates a session (if new) and a RUNNING run in `agent_flow`.
    async fn insert_run(&self, start: &RunStart, flow: &str) -> Result<RunHandle, RecordError> {
        let session_id = match &start.session_id {
            Some(s) if s.trim().is_empty() => {
                return Err(RecordError::UnknownSession(s.clone()));
            }
            Some(s) => s.clone(),
            None => format!("session-{}", random_hex(8)),
        };
        let title = clean(&start.question, 100);
        let now = now_ms();
        let insert_session = format!("{}{INSERT_SESSION_TAIL}", self.db.insert_ignore());
        let owner = &self.owner;
        let token = owner.token();
        let sources = (!start.sources.is_empty())
            .then(|| serde_json::to_string(&*start.sources).ok())
            .flatten()
            .map(|s| packed::pack(&s));
        let run_id = with_pool!(&self.db, p => async {
            let mut tx = begin_write(p).await?;
            sqlx::query(sqlx::AssertSqlSafe(insert_session))
                .bind(&session_id).bind(&title).bind(now).bind(now)
                .execute(&mut *tx).await?;
            let r = sqlx::query(INSERT_RUN)
                .bind(&session_id)
                .bind(flow)
                .bind(&start.question)
                .bind(&start.model)
                .bind(start.pack.as_deref())
                .bind(start.scenario.as_deref())
                .bind(sources.as_deref())
                .bind(i64::from(owner.pid))
                .bind(&owner.host)
                .bind(&token)
                .bind(now)
                .bind(now)
                .bind(start.rerun_of)
                .execute(&mut *tx).await?;
            tx.commit().await?;
            Ok::<_, sqlx::Error>(r.insert_id())
        }.await)
        .map_err(record_error)?;
        Ok(RunHandle { run_id, session_id })
    }
}

#[async_trait]
impl Recorder for Store {
    #[tracing::instrument(level = "debug", skip_all, err(level = "warn"))]
    async fn start_run(&self, start: &RunStart) -> Result<RunHandle, RecordError> {
        let handle = self.insert_run(start, "CHAT").await?;
        self.journal.open(handle.run_id, &handle.session_id);
        Ok(handle)
    }

    #[tracing::instrument(level = "debug", skip_all, err(level = "warn"))]
    async fn session_history(
        &self,
        session_id: &str,
        limit: usize,
    ) -> Result<Vec<HistoryTurn>, RecordError> {
        let mut turns = with_pool!(&self.db, p => {
            let rows = sqlx::query(HISTORY).bind(session_id).bind(to_i64(limit))
                .fetch_all(p).await.map_err(record_error)?;
            rows.iter().map(|r| Ok(HistoryTurn {
                run_id: r.int("id")?,
                question: r.text("query")?,
                answer: r.packed("answer")?,
            })).collect::<Result<Vec<_>, sqlx::Error>>().map_err(record_error)?
        });
        turns.reverse();
        Ok(turns)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(run_id = step.run_id), err(level = "warn"))]
    async fn record_step(&self, step: &AgentStep) -> Result<i64, RecordError> {
        let session_id = self.run_session(step.run_id).await?;
        let events = self.journal.take(step.run_id);
        let rows = journal::rows(&events)?;
        let now = now_ms();
        let result = with_pool!(&self.db, p => async {
            let mut tx = begin_write(p).await?;
            insert_events!(self.db, &mut *tx, rows)?;
            let inserted = sqlx::query(INSERT_STEP)
                .bind(step.run_id)
                .bind(&session_id)
                .bind(i64::from(step.seq))
                .bind(i64::from(step.step_index))
                .bind(&step.agent_name)
                .bind(i64::from(step.attempt))
                .bind(packed::pack(&step.model_input))
                .bind(packed::pack(&step.model_output))
                .bind(&step.thought)
                .bind(i64::from(step.has_tool_call))
                .bind(to_i64(step.duration_ms))
                .bind(to_i64(step.token_count))
                .bind(step.error.as_deref())
                .bind(now)
                .bind(to_i64(step.usage.prompt_tokens))
                .bind(to_i64(step.usage.completion_tokens))
                .bind(step.usage.reasoning_tokens.map(to_i64))
                .bind(step.usage.cached_tokens.map(to_i64))
                .bind(step.usage.cost_usd.filter(|c| c.is_finite()))
                .bind(step.parse_error.as_deref())
                .execute(&mut *tx).await;
            let id = match inserted {
                Ok(r) => Ok(r.insert_id()),
                Err(e) if unique_violation(&e) => {
                    let row = sqlx::query(FIND_STEP).bind(step.run_id).bind(i64::from(step.seq))
                        .fetch_one(&mut *tx).await?;
                    if row.text("agent_name")? == step.agent_name
                        && row.int("step_index")? == i64::from(step.step_index)
                    {
                        Ok(row.int("id")?)
                    } else {
                        Err(format!("seq {} of run {} already holds a different step", step.seq, step.run_id))
                    }
                }
                Err(e) => return Err(e),
            };
            tx.commit().await?;
            Ok::<_, sqlx::Error>(id)
        }.await);
        finish_write(self, step.run_id, events, result)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(run_id = invocation.run_id), err(level = "warn"))]
    async fn record_tool_invocation(
        &self,
        invocation: &ToolInvocation,
    ) -> Result<InvocationId, RecordError> {
        let inv = invocation;
        let session_id = self.run_session(inv.run_id).await?;
        let events = self.journal.take(inv.run_id);
        let rows = journal::rows(&events)?;
        let params = inv.input_params.to_string();
        let details = serde_json::to_string(&inv.retrieval_details)
            .map_err(|e| RecordError::Rejected(error_line(&e)))?;
        // tool_invocation columns that only a knowledge lookup fills:
        // its retrieval layer and how many blocks it matched.
        let is_knowledge = inv.tool_name == LOOKUP_KNOWLEDGE;
        let layer = is_knowledge.then_some("bm25");
        let l0 = is_knowledge.then(|| to_i64(inv.retrieval_details.evidence_refs.len()));
        let relevance = inv.retrieval_details.evidence_status.as_str();
        let now = now_ms();
        let result = with_pool!(&self.db, p => async {
            let mut tx = begin_write(p).await?;
            insert_events!(self.db, &mut *tx, rows)?;
            let inserted = sqlx::query(INSERT_INVOCATION)
                .bind(inv.run_id)
                .bind(&session_id)
                .bind(inv.step_id)
                .bind(i64::from(inv.seq))
                .bind(&inv.tool_name)
                .bind(&params)
                .bind(packed::pack(&inv.output_preview))
                .bind(to_i64(inv.output_length))
                .bind(layer)
                .bind(l0)
                .bind(None::<i64>)
                .bind(i64::from(inv.is_truncated))
                .bind(relevance)
                .bind(inv.dedup_reason.as_deref())
                .bind(packed::pack(&details))
                .bind(to_i64(inv.duration_ms))
                .bind(i64::from(inv.success))
                .bind(inv.error_message.as_deref())
                .bind(now)
                .execute(&mut *tx).await;
            let id = match inserted {
                Ok(r) => Ok(r.insert_id()),
                Err(e) if unique_violation(&e) => {
                    let row = sqlx::query(FIND_INVOCATION).bind(inv.run_id).bind(i64::from(inv.seq))
                        .fetch_one(&mut *tx).await?;
                    if row.text("tool_name")? == inv.tool_name && row.text("input_params")? == params {
                        Ok(row.int("id")?)
                    } else {
                        Err(format!("seq {} of run {} already holds a different invocation", inv.seq, inv.run_id))
                    }
                }
                Err(e) => return Err(e),
            };
            tx.commit().await?;
            Ok::<_, sqlx::Error>(id)
        }.await);
        finish_write(self, inv.run_id, events, result)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(run_id = event.run_id), err(level = "warn"))]
    async fn record_event(&self, event: &EngineEvent) -> Result<(), RecordError> {
        if self.journal.push(event) {
            return Ok(());
        }
        // Not a run this store has open (finished already, or started by
        // another store): write through.
        journal::write_rows(&self.db, &journal::rows(std::slice::from_ref(event))?).await
    }

    #[tracing::instrument(level = "debug", skip_all, fields(run_id = finish.run_id), err(level = "warn"))]
    async fn finish_run(&self, finish: &RunFinish) -> Result<(), RecordError> {
        if finish.end.status == RunStatus::Running {
            return Err(RecordError::Rejected(format!(
                "run {} cannot finish as RUNNING",
                finish.run_id
            )));
        }
        let events = self.journal.take(finish.run_id);
        let rows = journal::rows(&events)?;
        // The orchestration trace is not stored beside the run: the
        // RunFinished event journaled with this write carries it.
        let self_eval = json_text(&finish.self_evaluation).map(|t| packed::pack(&t));
        let now = now_ms();
        let result = with_pool!(&self.db, p => async {
            let mut tx = begin_write(p).await?;
            insert_events!(self.db, &mut *tx, rows)?;
            sqlx::query(FINISH_RUN)
                .bind(finish.end.status.as_str())
                .bind(packed::pack(&finish.end.answer))
                .bind(i64::from(finish.end.degraded))
                .bind(finish.end.effective_verdict.map(|v| v.as_str()))
                .bind(to_i64(finish.duration_ms))
                .bind(to_i64(finish.token_count))
                .bind(i64::from(finish.step_count))
                .bind(i64::from(finish.tool_call_count))
                .bind(self_eval.as_deref())
                .bind(finish.end.failure.as_ref().map(|f| f.message.as_str()))
                .bind(finish.end.failure.as_ref().map(|f| f.class.as_str()))
                .bind(now)
                .bind(now)
                .bind(finish.run_id)
                .execute(&mut *tx).await?;
            // MySQL counts changed rows only, so existence is checked apart.
            let exists = sqlx::query(RUN_SESSION).bind(finish.run_id).fetch_optional(&mut *tx).await?.is_some();
            if !exists {
                return Ok(Err(format!("unknown run {}", finish.run_id)));
            }
            tx.commit().await?;
            Ok::<_, sqlx::Error>(Ok(()))
        }.await);
        finish_write(self, finish.run_id, events, result)?;
        self.journal.close(finish.run_id);
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(run_id = run_id), err(level = "warn"))]
    async fn foreign_invocation_id(&self, run_id: i64) -> Result<InvocationId, RecordError> {
        let existing = with_pool!(&self.db, p => sqlx::query(FOREIGN_INVOCATION).bind(run_id)
            .fetch_optional(p).await
            .and_then(|r| r.map(|r| r.int("id")).transpose()))
        .map_err(record_error)?;
        if let Some(id) = existing {
            return Ok(id);
        }
        // No other run has an invocation yet: make one, owned by a hidden
        // placeholder run, so the id is real and provably not this run's.
        let start = RunStart {
            session_id: Some(PLACEHOLDER_SESSION.into()),
            question: "(placeholder run owning a foreign tool invocation)".into(),
            model: String::new(),
            pack: None,
            scenario: None,
            sources: Default::default(),
            rerun_of: None,
        };
        let handle = self.insert_run(&start, PLACEHOLDER_FLOW).await?;
        let invocation = ToolInvocation::placeholder(handle.run_id, 1);
        let id = self.record_tool_invocation(&invocation).await?;
        let finish = RunFinish {
            run_id: handle.run_id,
            end: RunEnd {
                status: RunStatus::Success,
                degraded: false,
                answer: String::new(),
                effective_verdict: None,
                trace: build_trace(&[], 0),
                failure: None,
            },
            duration_ms: 0,
            token_count: 0,
            step_count: 0,
            tool_call_count: 1,
            self_evaluation: None,
        };
        self.finish_run(&finish).await?;
        Ok(id)
    }

    fn describe(&self) -> String {
        Store::describe(self)
    }
}

/// Maps a write's outcome, putting the run's journal events back when the
/// transaction did not commit.
fn finish_write<T>(
    store: &Store,
    run_id: i64,
    events: Vec<EngineEvent>,
    result: Result<Result<T, String>, sqlx::Error>,
) -> Result<T, RecordError> {
    match result {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(conflict)) => {
            store.journal.put_back(run_id, events);
            Err(RecordError::Rejected(conflict))
        }
        Err(e) => {
            store.journal.put_back(run_id, events);
            Err(record_error(e))
        }
    }
}

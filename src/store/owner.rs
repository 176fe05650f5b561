//! Which process owns a RUNNING run, and sweeping runs whose owner died.
//!
//! Every run row records the owner's pid, hostname and a token unique to
//! the process (`host/pid/start`, `start` being the kernel's process start
//! time when /proc has it). At connect, RUNNING runs of other owners are
//! marked FAILED (interrupted) unless their owner is provably alive: on
//! this host, a process with that pid and the same start time. Runs owned
//! by another host cannot be probed; they are swept once they are older
//! than [`FOREIGN_HOST_GRACE_MS`], far beyond any bounded run.
//!
//! A swept run is ended the way the engine ends one: its orchestration
//! trace and counts are rebuilt from what was recorded, and its journal
//! gets a `RunFinished` saying it was interrupted, so its trace and its
//! replay show what happened and end on why it ended.

use crate::store::StoreError;
use crate::store::connect::query_error;
use crate::store::db::{Db, RowExt, begin_write, now_ms, to_i64, with_pool};
use crate::store::journal::{self, insert_events, rows};
use crate::vocab::events::{EngineEvent, EventKind};
use crate::vocab::graph::{NodeId, ReasonCode};
use crate::vocab::run::{Failure, FailureClass, RunEnd, RunStatus};
use crate::vocab::trace::{NodeEvent, stopped_trace};
use std::sync::OnceLock;

/// Runs of another host are left alone this long (30 minutes).
pub const FOREIGN_HOST_GRACE_MS: i64 = 30 * 60 * 1000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessOwner {
    pub pid: u32,
    pub host: String,
    /// Process start time in clock ticks since boot (from /proc), or a
    /// random nonce where /proc does not exist.
    pub start: String,
}

impl ProcessOwner {
    /// This process. Computed once: every store of the process shares it, so
    /// a second store never sweeps the first one's live runs.
    pub fn current() -> ProcessOwner {
        static CURRENT: OnceLock<ProcessOwner> = OnceLock::new();
        CURRENT
            .get_or_init(|| {
                let pid = std::process::id();
                ProcessOwner {
                    pid,
                    host: hostname(),
                    start: proc_start_time(pid).unwrap_or_else(|| super::db::random_hex(8)),
                }
            })
            .clone()
    }

    pub fn token(&self) -> String {
        format!("{}/{}/{}", self.host, self.pid, self.start)
    }

    /// Whether the process this owner names is still running.
    fn is_alive(&self) -> bool {
        if self.host != hostname() {
            return false;
        }
        match proc_start_time(self.pid) {
            Some(start) => start == self.start,
            // No such pid, or no /proc to ask: only our own pid is known alive.
            None => self.pid == std::process::id() && self.start == ProcessOwner::current().start,
        }
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

/// Field 22 of /proc/PID/stat (after the parenthesised command name, which
/// may itself contain spaces and parentheses).
fn proc_start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19).map(str::to_string)
}

/// Marks RUNNING runs of dead owners FAILED. Returns how many.
pub(crate) async fn sweep_interrupted(db: &Db, me: &ProcessOwner) -> Result<u64, StoreError> {
    const SELECT: &str = "SELECT id, owner_pid, owner_host, owner_token, created_at \
         FROM diagnosis_run WHERE status = 'RUNNING' AND owner_token <> ?";
    let token = me.token();
    let rows: Vec<(i64, ProcessOwner, i64)> = with_pool!(db, p => {
        let rows = sqlx::query(SELECT).bind(&token).fetch_all(p).await.map_err(query_error)?;
        rows.iter()
            .map(|r| -> Result<_, sqlx::Error> {
                let stored = r.text("owner_token")?;
                let start = stored.rsplit('/').next().unwrap_or_default().to_string();
                Ok((
                    r.int("id")?,
                    ProcessOwner {
                        pid: u32::try_from(r.int("owner_pid")?).unwrap_or(0),
                        host: r.text("owner_host")?,
                        start,
                    },
                    r.int("created_at")?,
                ))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(query_error)?
    });
    let now = now_ms();
    let my_host = hostname();
    let mut swept = 0;
    for (run_id, owner, created_at) in rows {
        let dead = if owner.host == my_host {
            !owner.is_alive()
        } else {
            now.saturating_sub(created_at) > FOREIGN_HOST_GRACE_MS
        };
        if dead {
            let reason = format!(
                "interrupted: the process that ran it ({}) ended before the run finished",
                owner.token()
            );
            swept += mark_failed(db, run_id, &reason).await?;
        }
    }
    Ok(swept)
}

/// Ends a RUNNING run whose process died: FAILED, class `interrupted`,
/// with the trace, counts and a final journal event rebuilt from what was
/// recorded. Returns 1 when this call ended it, 0 when it was not RUNNING
/// (another process swept it first).
pub(crate) async fn mark_failed(db: &Db, run_id: i64, reason: &str) -> Result<u64, StoreError> {
    const EVENTS: &str = "SELECT payload FROM run_event WHERE run_id = ? ORDER BY seq";
    const STEPS: &str = "SELECT COUNT(*) AS n FROM agent_step WHERE run_id = ?";
    const INVOCATIONS: &str = "SELECT COUNT(*) AS n FROM tool_invocation WHERE run_id = ?";
    const FINISH: &str = "UPDATE diagnosis_run SET status = 'FAILED', failure_reason = ?, \
         failure_class = ?, total_duration_ms = ?, \
         total_token_count = ?, step_count = ?, tool_call_count = ?, effective_verdict = ?, \
         finished_at = ?, updated_at = ? WHERE id = ? AND status = 'RUNNING'";
    let (payloads, steps, invocations) = with_pool!(db, p => {
        let payloads: Vec<Vec<u8>> = sqlx::query(EVENTS).bind(run_id).fetch_all(p).await
            .and_then(|rows| rows.iter().map(|r| r.opt_bytes("payload").map(Option::unwrap_or_default)).collect())
            .map_err(query_error)?;
        let steps = sqlx::query(STEPS).bind(run_id).fetch_one(p).await
            .and_then(|r| r.int("n")).map_err(query_error)?;
        let invocations = sqlx::query(INVOCATIONS).bind(run_id).fetch_one(p).await
            .and_then(|r| r.int("n")).map_err(query_error)?;
        (payloads, steps, invocations)
    });
    // Events that no longer parse are left out of the summary, not fatal;
    // tool invocations (journaled by reference) do not enter it.
    let events: Vec<EngineEvent> = payloads
        .into_iter()
        .filter_map(|p| match journal::decode(p) {
            Ok(journal::StoredEvent::Event(e)) => Some(e),
            _ => None,
        })
        .collect();
    let end = interrupted_end(&events, reason);
    let last = events.last();
    let finished = EngineEvent {
        run_id,
        seq: last.map_or(1, |e| e.seq.saturating_add(1)),
        at_ms: last.map_or(0, |e| e.at_ms),
        kind: EventKind::RunFinished(end.clone()),
    };
    let tokens: u64 = events
        .iter()
        .map(|e| match e.kind {
            EventKind::ModelCalled { tokens, .. } => tokens,
            _ => 0,
        })
        .sum();
    let journal =
        rows(std::slice::from_ref(&finished)).map_err(|e| StoreError::Query(e.to_string()))?;
    let now = now_ms();
    with_pool!(db, p => async {
        let mut tx = begin_write(p).await?;
        let ended = sqlx::query(FINISH)
            .bind(reason)
            .bind(FailureClass::Interrupted.as_str())
            .bind(to_i64(finished.at_ms))
            .bind(to_i64(tokens))
            .bind(steps)
            .bind(invocations)
            .bind(end.effective_verdict.map(|v| v.as_str()))
            .bind(now)
            .bind(now)
            .bind(run_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if ended == 1 {
            insert_events!(db, &mut *tx, journal)?;
        }
        tx.commit().await?;
        Ok::<u64, sqlx::Error>(ended)
    }.await)
    .map_err(query_error)
}

/// How a run found dead ended, from its journal: the transitions and the
/// node it was in, the last verdicts, and the reason.
fn interrupted_end(events: &[EngineEvent], reason: &str) -> RunEnd {
    let mut nodes = Vec::new();
    let mut in_progress: Option<NodeId> = None;
    let mut verdict = None;
    let mut retries = 0;
    for e in events {
        match &e.kind {
            EventKind::NodeEntered { node, .. } => in_progress = Some(*node),
            EventKind::NodeFinished {
                node,
                outcome,
                reason_code,
                attempt,
                ..
            } => {
                nodes.push(NodeEvent {
                    node: *node,
                    outcome: *outcome,
                    reason_code: *reason_code,
                    attempt: *attempt,
                });
                in_progress = None;
            }
            EventKind::VerdictUpdated(v) => {
                verdict = v.effective_verdict;
                retries = v.evidence_retry_count;
            }
            _ => {}
        }
    }
    RunEnd {
        status: RunStatus::Failed,
        degraded: false,
        answer: String::new(),
        effective_verdict: verdict,
        trace: stopped_trace(&nodes, in_progress, retries, ReasonCode::Interrupted),
        failure: Some(Failure::new(FailureClass::Interrupted, reason)),
    }
}

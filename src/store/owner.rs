//! Which process owns a RUNNING run, and sweeping runs whose owner died.
//!
//! Every run row records the owner's pid, hostname and a token unique to
//! the process (`host/pid/start`, `start` being the kernel's process start
//! time when /proc has it). At connect, RUNNING runs of other owners are
//! marked FAILED (interrupted) unless their owner is provably alive: on
//! this host, a process with that pid and the same start time. Runs owned
//! by another host cannot be probed; they are swept once they are older
//! than [`FOREIGN_HOST_GRACE_MS`], far beyond any bounded run.

use crate::store::StoreError;
use crate::store::connect::query_error;
use crate::store::db::{Db, RowExt, now_ms, with_pool};
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

pub(crate) async fn mark_failed(db: &Db, run_id: i64, reason: &str) -> Result<u64, StoreError> {
    const SQL: &str = "UPDATE diagnosis_run SET status = 'FAILED', failure_reason = ?, \
         finished_at = ?, updated_at = ? WHERE id = ? AND status = 'RUNNING'";
    let now = now_ms();
    with_pool!(db, p => sqlx::query(SQL)
        .bind(reason)
        .bind(now)
        .bind(now)
        .bind(run_id)
        .execute(p)
        .await
        .map(|r| r.rows_affected())
        .map_err(query_error))
}

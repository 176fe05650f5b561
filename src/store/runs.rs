//! Run lists (`diagraph runs`, the server's `GET /api/runs`) and
//! single-run lookups.

use crate::store::connect::query_error;
use crate::store::db::{RowExt, begin_write, ms_to_rfc3339, to_i64, with_pool};
use crate::store::trace::bad_column;
use crate::store::{Store, StoreError};
use crate::vocab::contracts::Verdict;
use crate::vocab::run::{RunStatus, RunSummary};

// Only the filters a query sets are in its SQL (`matching`): a
// `? IS NULL OR ...` form would keep MySQL from walking the list index
// from `before` down, and make every page scan from the newest run.
// Every column here is in the list index (idx_run_list), so on SQLite a
// list reads no run's large texts. The text filter is a case-insensitive
// substring of the id, status, verdict, session or question, as the
// TUI's filter is (`!` escapes LIKE's wildcards: a backslash means
// different things to the two dialects).
const TEXT_MATCHES: &str = " AND (LOWER(query) LIKE ? ESCAPE '!' OR LOWER(session_id) LIKE ? ESCAPE '!' \
     OR LOWER(status) LIKE ? ESCAPE '!' OR LOWER(COALESCE(effective_verdict, '')) LIKE ? ESCAPE '!' \
     OR CAST(id AS CHAR) LIKE ? ESCAPE '!')";

/// The FROM and WHERE of the runs `q` selects from `table`, its `before`
/// cursor included when `paged`.
fn matching(table: &str, q: &RunQuery, paged: bool) -> String {
    let mut sql = format!("FROM {table} WHERE agent_flow = 'CHAT'");
    if paged && q.before.is_some() {
        sql.push_str(" AND id < ?");
    }
    if q.status.is_some() {
        sql.push_str(" AND status = ?");
    }
    if q.session_id.is_some() {
        sql.push_str(" AND session_id = ?");
    }
    if has_text(q) {
        sql.push_str(TEXT_MATCHES);
    }
    sql
}

fn has_text(q: &RunQuery) -> bool {
    q.text.as_deref().is_some_and(|t| !t.is_empty())
}

// A run's cost is the sum of its steps' (NULL while none was priced).
const LIST_COLUMNS: &str = "SELECT id, session_id, status, effective_verdict, degraded, \
     total_duration_ms, total_token_count, query, created_at, rerun_of, \
     (SELECT SUM(s.cost_usd) FROM agent_step s WHERE s.run_id = diagnosis_run.id) AS cost_usd ";
// Runs older than the cut-off without feedback, oldest first, a batch at
// a time (one transaction per batch keeps the write lock short).
const PRUNE_IF: &str =
    "agent_flow = 'CHAT' AND status <> 'RUNNING' AND feedback IS NULL AND created_at < ?";
const PRUNE_BATCH: usize = 500;
const ONE: &str = "SELECT id, session_id, status, effective_verdict, degraded, \
     total_duration_ms, total_token_count, query, created_at, rerun_of, \
     (SELECT SUM(s.cost_usd) FROM agent_step s WHERE s.run_id = diagnosis_run.id) AS cost_usd \
     FROM diagnosis_run WHERE id = ? AND agent_flow = 'CHAT'";
const COUNT_RUNNING: &str = "SELECT COUNT(*) AS n FROM diagnosis_run WHERE status = 'RUNNING'";

fn summary(r: &impl RowExt) -> Result<RunSummary, sqlx::Error> {
    let status = r.text("status")?;
    Ok(RunSummary {
        run_id: r.int("id")?,
        session_id: r.text("session_id")?,
        status: RunStatus::parse(&status).ok_or_else(|| bad_column("status", &status))?,
        effective_verdict: r
            .opt_text("effective_verdict")?
            .as_deref()
            .and_then(Verdict::parse),
        degraded: r.flag("degraded")?,
        duration_ms: r
            .opt_int("total_duration_ms")?
            .map(|d| u64::try_from(d).unwrap_or(0)),
        question: r.text("query")?,
        created_at: ms_to_rfc3339(r.int("created_at")?),
        tokens: u64::try_from(r.int("total_token_count")?).unwrap_or(0),
        cost_usd: r.opt_float("cost_usd")?,
        rerun_of: r.opt_int("rerun_of")?,
    })
}

/// One page of a run list: newest first, each filter optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunQuery {
    pub limit: usize,
    /// Only runs with a smaller id: the `before` of the next page is the
    /// last run id of this one.
    pub before: Option<i64>,
    pub status: Option<RunStatus>,
    pub session_id: Option<String>,
    /// A case-insensitive substring of the run's id, status, verdict,
    /// session or question.
    pub text: Option<String>,
}

/// `text` as a LIKE pattern matching it anywhere, lower-cased.
fn like_pattern(text: &str) -> String {
    let mut p = String::with_capacity(text.len() + 2);
    p.push('%');
    for c in text.to_lowercase().chars() {
        if matches!(c, '!' | '%' | '_') {
            p.push('!');
        }
        p.push(c);
    }
    p.push('%');
    p
}

/// Binds the filters `matching(_, q, paged)` put in, in their order.
macro_rules! bind_matching {
    ($query:expr, $q:expr, $paged:expr) => {{
        let mut query = $query;
        if $paged && let Some(before) = $q.before {
            query = query.bind(before);
        }
        if let Some(status) = $q.status {
            query = query.bind(status.as_str());
        }
        if let Some(session) = $q.session_id.as_deref() {
            query = query.bind(session);
        }
        if has_text($q) {
            let like = like_pattern($q.text.as_deref().unwrap_or_default());
            for _ in 0..5 {
                query = query.bind(like.clone());
            }
        }
        query
    }};
}

impl Store {
    /// The most recent runs, newest first.
    #[tracing::instrument(level = "debug", skip_all, err(level = "warn"))]
    pub async fn list_runs(&self, limit: usize) -> Result<Vec<RunSummary>, StoreError> {
        self.query_runs(&RunQuery {
            limit,
            ..RunQuery::default()
        })
        .await
    }

    /// A page of runs matching `q`, newest first.
    #[tracing::instrument(level = "debug", skip_all, err(level = "warn"))]
    pub async fn query_runs(&self, q: &RunQuery) -> Result<Vec<RunSummary>, StoreError> {
        let sql = format!(
            "{LIST_COLUMNS}{} ORDER BY id DESC LIMIT ?",
            matching(self.db.runs_newest_first(), q, true)
        );
        with_pool!(&self.db, p => {
            let rows = bind_matching!(sqlx::query(sqlx::AssertSqlSafe(sql.as_str())), q, true)
                .bind(to_i64(q.limit))
                .fetch_all(p).await.map_err(query_error)?;
            rows.iter().map(summary).collect::<Result<Vec<_>, _>>().map_err(query_error)
        })
    }

    /// How many runs match `q`'s filters (its limit and `before` left
    /// aside).
    pub async fn count_runs(&self, q: &RunQuery) -> Result<u64, StoreError> {
        let sql = format!(
            "SELECT COUNT(*) AS n {}",
            matching("diagnosis_run", q, false)
        );
        with_pool!(&self.db, p => {
            bind_matching!(sqlx::query(sqlx::AssertSqlSafe(sql.as_str())), q, false)
                .fetch_one(p).await.and_then(|r| r.uint("n")).map_err(query_error)
        })
    }

    /// Deletes finished runs created before `cutoff_ms` (epoch ms) that
    /// have no feedback, with their steps, invocations and journal.
    /// Returns how many runs were deleted.
    pub async fn prune_runs(&self, cutoff_ms: i64) -> Result<u64, StoreError> {
        let mut deleted = 0u64;
        loop {
            let ids: Vec<i64> = with_pool!(&self.db, p => {
                let sql = format!("SELECT id FROM diagnosis_run WHERE {PRUNE_IF} ORDER BY id LIMIT ?");
                sqlx::query(sqlx::AssertSqlSafe(sql)).bind(cutoff_ms).bind(to_i64(PRUNE_BATCH))
                    .fetch_all(p).await
                    .and_then(|rows| rows.iter().map(|r| r.int("id")).collect::<Result<Vec<_>, _>>())
                    .map_err(query_error)?
            });
            let Some((&first, &last)) = ids.first().zip(ids.last()) else {
                return Ok(deleted);
            };
            let gone = with_pool!(&self.db, p => async {
                let mut tx = begin_write(p).await?;
                // Children first: their rows name the run by foreign key.
                // The conditions are checked again here, so a run given
                // feedback since the batch was chosen is kept whole.
                for table in ["run_event", "agent_step", "tool_invocation"] {
                    let sql = format!("DELETE FROM {table} WHERE run_id IN \
                         (SELECT id FROM diagnosis_run WHERE id BETWEEN ? AND ? AND {PRUNE_IF})");
                    sqlx::query(sqlx::AssertSqlSafe(sql)).bind(first).bind(last).bind(cutoff_ms)
                        .execute(&mut *tx).await?;
                }
                let sql = format!("DELETE FROM diagnosis_run WHERE id BETWEEN ? AND ? AND {PRUNE_IF}");
                let gone = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(first).bind(last).bind(cutoff_ms)
                    .execute(&mut *tx).await?.rows_affected();
                tx.commit().await?;
                Ok::<u64, sqlx::Error>(gone)
            }.await).map_err(query_error)?;
            if gone == 0 {
                return Ok(deleted);
            }
            deleted += gone;
        }
    }

    /// One run's list row: how it stands now.
    #[tracing::instrument(level = "debug", skip_all, fields(run_id = run_id), err(level = "warn"))]
    pub async fn run_summary(&self, run_id: i64) -> Result<RunSummary, StoreError> {
        with_pool!(&self.db, p => {
            let row = sqlx::query(ONE).bind(run_id).fetch_optional(p).await.map_err(query_error)?;
            match row {
                Some(r) => summary(&r).map_err(query_error),
                None => Err(StoreError::UnknownRun(run_id)),
            }
        })
    }

    /// How many runs are RUNNING right now (all owners).
    #[tracing::instrument(level = "debug", skip_all, err(level = "warn"))]
    pub async fn running_count(&self) -> Result<u64, StoreError> {
        with_pool!(&self.db, p => sqlx::query(COUNT_RUNNING).fetch_one(p).await
            .and_then(|r| r.uint("n")).map_err(query_error))
    }

    /// Marks RUNNING runs of dead processes FAILED (also done at connect).
    #[tracing::instrument(level = "debug", skip_all, err(level = "warn"))]
    pub async fn sweep_interrupted(&self) -> Result<u64, StoreError> {
        super::owner::sweep_interrupted(&self.db, &self.owner).await
    }
}

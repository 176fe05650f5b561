//! Run lists (`diagraph runs`, the server's `GET /api/runs`) and
//! single-run lookups.

use crate::store::connect::query_error;
use crate::store::db::{RowExt, ms_to_rfc3339, to_i64, with_pool};
use crate::store::trace::bad_column;
use crate::store::{Store, StoreError};
use crate::vocab::contracts::Verdict;
use crate::vocab::run::{RunStatus, RunSummary};

// A filter left out binds NULL, so one SQL text serves every combination.
// A run's cost is the sum of its steps' (NULL while none was priced).
const LIST: &str = "SELECT id, session_id, status, effective_verdict, degraded, \
     total_duration_ms, total_token_count, query, created_at, rerun_of, \
     (SELECT SUM(s.cost_usd) FROM agent_step s WHERE s.run_id = diagnosis_run.id) AS cost_usd \
     FROM diagnosis_run WHERE agent_flow = 'CHAT' \
     AND (? IS NULL OR id < ?) AND (? IS NULL OR status = ?) AND (? IS NULL OR session_id = ?) \
     ORDER BY id DESC LIMIT ?";
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
        let status = q.status.map(RunStatus::as_str);
        with_pool!(&self.db, p => {
            let rows = sqlx::query(LIST)
                .bind(q.before).bind(q.before)
                .bind(status).bind(status)
                .bind(q.session_id.as_deref()).bind(q.session_id.as_deref())
                .bind(to_i64(q.limit))
                .fetch_all(p).await.map_err(query_error)?;
            rows.iter().map(summary).collect::<Result<Vec<_>, _>>().map_err(query_error)
        })
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

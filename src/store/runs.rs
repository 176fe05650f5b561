//! Run lists (`diagraph runs`) and single-run lookups shared by the trace
//! projection and feedback.

use crate::store::connect::query_error;
use crate::store::db::{RowExt, ms_to_rfc3339, to_i64, with_pool};
use crate::store::trace::bad_column;
use crate::store::{Store, StoreError};
use crate::vocab::contracts::Verdict;
use crate::vocab::run::{RunStatus, RunSummary};

const LIST: &str = "SELECT id, session_id, status, effective_verdict, degraded, \
     total_duration_ms, query, created_at FROM diagnosis_run WHERE agent_flow = 'CHAT' \
     ORDER BY id DESC LIMIT ?";
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
    })
}

impl Store {
    /// The most recent runs, newest first.
    pub async fn list_runs(&self, limit: usize) -> Result<Vec<RunSummary>, StoreError> {
        with_pool!(&self.db, p => {
            let rows = sqlx::query(LIST).bind(to_i64(limit)).fetch_all(p).await.map_err(query_error)?;
            rows.iter().map(summary).collect::<Result<Vec<_>, _>>().map_err(query_error)
        })
    }

    /// How many runs are RUNNING right now (all owners).
    pub async fn running_count(&self) -> Result<u64, StoreError> {
        with_pool!(&self.db, p => sqlx::query(COUNT_RUNNING).fetch_one(p).await
            .and_then(|r| r.uint("n")).map_err(query_error))
    }

    /// Marks RUNNING runs of dead processes FAILED (also done at connect).
    pub async fn sweep_interrupted(&self) -> Result<u64, StoreError> {
        super::owner::sweep_interrupted(&self.db, &self.owner).await
    }
}

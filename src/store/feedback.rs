//! Feedback on a run, and the case library it feeds. A run marked useful
//! becomes a case_library row built by `make_case` (the engine's
//! `case::case_from_evaluation`) from the run's typed self_evaluation.
//! Marking the same run useful again returns the existing case; marking it
//! not_useful withdraws the automatic case.

use crate::store::connect::query_error;
use crate::store::db::{InsertId, RowExt, now_ms, random_hex, with_pool};
use crate::store::{Store, StoreError};
use crate::text::clean;
use crate::vocab::evaluation::{CaseDraft, SelfEvaluation};

const RUN: &str =
    "SELECT id, session_id, status, query, self_evaluation FROM diagnosis_run WHERE id = ?";
const SET_FEEDBACK: &str = "UPDATE diagnosis_run SET feedback = ?, updated_at = ? WHERE id = ?";
const FIND_CASE: &str = "SELECT case_id FROM case_library WHERE run_id = ?";
const INSERT_CASE: &str = "INSERT INTO case_library (case_id, run_id, diagnosis_id, source_type, \
     fault_category, title, root_cause, solution, created_by, created_at) \
     VALUES (?, ?, ?, 'AUTO', ?, ?, ?, ?, 'system', ?)";
const DELETE_CASE: &str = "DELETE FROM case_library WHERE run_id = ? AND source_type = 'AUTO'";
const CASE: &str = "SELECT case_id, run_id, diagnosis_id, source_type, fault_category, title, \
     root_cause, solution, created_by FROM case_library WHERE case_id = ?";

/// A case_library row.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CaseRecord {
    pub case_id: String,
    pub run_id: i64,
    pub diagnosis_id: String,
    pub source_type: String,
    pub fault_category: String,
    pub title: String,
    pub root_cause: String,
    pub solution: String,
    pub created_by: String,
}

impl Store {
    /// Records `useful` / `not_useful` on the run. Useful returns the case
    /// id (new or existing), or None when the run verified nothing a case
    /// could be made of.
    #[tracing::instrument(level = "debug", skip_all, fields(run_id = run_id), err(level = "warn"))]
    pub async fn record_feedback(
        &self,
        run_id: i64,
        useful: bool,
        make_case: impl FnOnce(&SelfEvaluation) -> Option<CaseDraft>,
    ) -> Result<Option<String>, StoreError> {
        let label = if useful { "useful" } else { "not_useful" };
        let now = now_ms();
        with_pool!(&self.db, p => {
            let mut tx = crate::store::db::begin_write(p).await.map_err(query_error)?;
            let Some(run) = sqlx::query(RUN).bind(run_id).fetch_optional(&mut *tx).await.map_err(query_error)? else {
                return Err(StoreError::UnknownRun(run_id));
            };
            if run.text("status").map_err(query_error)? == "RUNNING" {
                return Err(StoreError::FeedbackWhileRunning(run_id));
            }
            sqlx::query(SET_FEEDBACK).bind(label).bind(now).bind(run_id)
                .execute(&mut *tx).await.map_err(query_error)?;
            if !useful {
                sqlx::query(DELETE_CASE).bind(run_id).execute(&mut *tx).await.map_err(query_error)?;
                tx.commit().await.map_err(query_error)?;
                return Ok(None);
            }
            let existing = sqlx::query(FIND_CASE).bind(run_id).fetch_optional(&mut *tx).await
                .and_then(|r| r.map(|r| r.text("case_id")).transpose()).map_err(query_error)?;
            if existing.is_some() {
                tx.commit().await.map_err(query_error)?;
                return Ok(existing);
            }
            let eval = run.opt_packed("self_evaluation").map_err(query_error)?
                .and_then(|t| serde_json::from_str::<SelfEvaluation>(&t).ok());
            let Some(draft) = eval.as_ref().and_then(make_case) else {
                tx.commit().await.map_err(query_error)?;
                return Ok(None);
            };
            let case_id = format!("case-{}", random_hex(12));
            let title = clean(&run.text("query").map_err(query_error)?, 100);
            let session = run.text("session_id").map_err(query_error)?;
            let inserted = sqlx::query(INSERT_CASE)
                .bind(&case_id).bind(run_id).bind(&session).bind(&draft.fault_category)
                .bind(&title).bind(&draft.root_cause).bind(&draft.solution).bind(now)
                .execute(&mut *tx).await;
            match inserted {
                Ok(r) => {
                    let _ = r.insert_id();
                    tx.commit().await.map_err(query_error)?;
                    Ok(Some(case_id))
                }
                // Another process made the case first: return theirs.
                Err(sqlx::Error::Database(d)) if d.is_unique_violation() => {
                    drop(tx);
                    let found = sqlx::query(FIND_CASE).bind(run_id).fetch_optional(p).await
                        .and_then(|r| r.map(|r| r.text("case_id")).transpose()).map_err(query_error)?;
                    Ok(found)
                }
                Err(e) => Err(query_error(e)),
            }
        })
    }

    /// One case_library row by its case id.
    #[tracing::instrument(level = "debug", skip_all, err(level = "warn"))]
    pub async fn case(&self, case_id: &str) -> Result<Option<CaseRecord>, StoreError> {
        with_pool!(&self.db, p => {
            let row = sqlx::query(CASE).bind(case_id).fetch_optional(p).await.map_err(query_error)?;
            row.map(|r| -> Result<CaseRecord, sqlx::Error> {
                Ok(CaseRecord {
                    case_id: r.text("case_id")?,
                    run_id: r.int("run_id")?,
                    diagnosis_id: r.text("diagnosis_id")?,
                    source_type: r.text("source_type")?,
                    fault_category: r.text("fault_category")?,
                    title: r.text("title")?,
                    root_cause: r.text("root_cause")?,
                    solution: r.text("solution")?,
                    created_by: r.text("created_by")?,
                })
            }).transpose().map_err(query_error)
        })
    }
}

//! Persistence with sqlx: an embedded SQLite file by default, MySQL or
//! MariaDB for `mysql://` URLs (DESIGN section 5). Implements the engine's
//! `Recorder`, and serves the Run Trace projection, run lists, replay
//! events, feedback and knowledge metadata.
//!
//! OWNER: store helper. The signatures below are the shared interface.

use crate::engine::EngineEvent;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database unreachable: {0}")]
    Unreachable(String),
    #[error("database rejected the credentials: {0}")]
    Auth(String),
    #[error(
        "database schema is version {found}, newer than this diagraph ({supported}); upgrade diagraph"
    )]
    TooNew { found: i64, supported: i64 },
    #[error("migration failed: {0}")]
    Migration(String),
    #[error("unknown run {0}")]
    UnknownRun(i64),
    #[error("invalid database url: {0}")]
    BadUrl(String),
    #[error("database error: {0}")]
    Query(String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub run_id: i64,
    pub session_id: String,
    pub status: String,
    pub effective_verdict: Option<String>,
    pub degraded: bool,
    pub duration_ms: Option<u64>,
    pub question: String,
    pub created_at: String,
}

pub struct Store {
    url: String,
}

impl Store {
    pub async fn connect(url: &str) -> Result<Store, StoreError> {
        Err(StoreError::BadUrl(url.into()))
    }

    pub fn describe(&self) -> String {
        self.url.clone()
    }

    pub async fn list_runs(&self, limit: usize) -> Result<Vec<RunSummary>, StoreError> {
        let _ = limit;
        Ok(vec![])
    }

    pub async fn run_trace(&self, run_id: i64) -> Result<Value, StoreError> {
        Err(StoreError::UnknownRun(run_id))
    }

    pub async fn load_events(&self, run_id: i64) -> Result<Vec<EngineEvent>, StoreError> {
        Err(StoreError::UnknownRun(run_id))
    }
}

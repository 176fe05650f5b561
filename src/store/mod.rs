//! Persistence with sqlx: an embedded SQLite file by default, MySQL or
//! MariaDB for `mysql://` URLs. Implements the engine's
//! `Recorder`, and serves the Run Trace projection, run lists, replay
//! events, feedback and knowledge metadata.
//!
//! One code path serves both backends (see [`db`]): the SQL is shared, and
//! only insert-or-ignore and generated ids are dialect-specific. Migrations
//! run at connect, after a check that the database is not newer than this
//! binary; then RUNNING runs of dead processes are marked FAILED.
//!
//! Writes of a run are few and batched: journal events are buffered per run
//! and written in the same transaction as the next step, invocation or
//! finish (or by a background flush after [`journal::FLUSH_AFTER`]), because
//! on MySQL every commit is a log flush and a run emits dozens of events.

mod connect;
pub use connect::sqlite_path;
pub(crate) mod db;
mod feedback;
mod journal;
mod knowledge;
mod lease;
mod migrate;
mod owner;
mod packed;
mod recorder;
mod runs;
mod trace;

pub use feedback::CaseRecord;
pub use knowledge::DocumentInfo;
pub use lease::{DEFAULT_LEASE, LeaseHolder};
pub use owner::{FOREIGN_HOST_GRACE_MS, ProcessOwner};
pub use runs::RunQuery;

use db::Db;
use journal::Journal;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database unreachable: {0}")]
    Unreachable(String),
    /// Another process holds the database's write lock longer than the
    /// busy timeout.
    #[error("database is locked by another process: {0}")]
    Locked(String),
    #[error("database rejected the credentials: {0}")]
    Auth(String),
    #[error(
        "database schema is version {found}, newer than this diagraph ({supported}); upgrade diagraph"
    )]
    TooNew { found: i64, supported: i64 },
    #[error("migration failed: {0}")]
    Migration(String),
    /// The database answered but cannot be used: not a database, a
    /// damaged file, a refused statement while connecting.
    #[error("database cannot be used: {0}")]
    Unusable(String),
    /// The database can be read but not written: a read-only file,
    /// directory or server, or a full disk.
    #[error("database cannot be written: {0}")]
    CannotWrite(String),
    /// Feedback is on an answer, which a RUNNING run does not have yet.
    #[error("run {0} is still running; give feedback once it has finished")]
    FeedbackWhileRunning(i64),
    #[error("unknown run {0}")]
    UnknownRun(i64),
    #[error("invalid database url: {0}")]
    BadUrl(String),
    #[error("database error: {0}")]
    Query(String),
}

/// A connected, migrated store. Cheap to clone; clones share the pool and
/// the per-run journal buffers.
#[derive(Clone)]
pub struct Store {
    db: Db,
    display: String,
    owner: ProcessOwner,
    journal: Arc<Journal>,
}

impl Store {
    /// Connects (`sqlite:PATH`, `sqlite::memory:` or `mysql://...`),
    /// migrates, and marks RUNNING runs of dead processes FAILED.
    #[tracing::instrument(level = "debug", skip_all, err(level = "warn"))]
    pub async fn connect(url: &str) -> Result<Store, StoreError> {
        Store::connect_as(url, ProcessOwner::current()).await
    }

    /// [`Store::connect`] with an explicit owner identity for the runs this
    /// store starts. Tests use it to stand in for another (dead) process.
    #[doc(hidden)]
    #[tracing::instrument(level = "debug", skip_all, err(level = "warn"))]
    pub async fn connect_as(url: &str, owner: ProcessOwner) -> Result<Store, StoreError> {
        let connected = connect::open(url).await?;
        let store = Store {
            db: connected.db,
            display: connected.display,
            owner,
            journal: Arc::new(Journal::default()),
        };
        if let Err(e) = migrate::run(&store.db, &store.display).await {
            store.db.close().await;
            return Err(e);
        }
        match owner::sweep_interrupted(&store.db, &store.owner).await {
            // Reading a database that cannot be written (a full disk, a
            // read-only file) still works: the runs of dead processes stay
            // RUNNING until a later start can end them, and a command that
            // writes fails on its own write with the same reason.
            Err(StoreError::CannotWrite(why)) => {
                tracing::warn!("runs of ended processes not swept: {why}");
            }
            Err(e) => {
                store.db.close().await;
                return Err(e);
            }
            Ok(_) => {}
        }
        journal::spawn_flusher(&store);
        Ok(store)
    }

    /// The SQLite file in the user's data directory
    /// (`$XDG_DATA_HOME/diagraph/diagraph.db`), created when missing.
    #[tracing::instrument(level = "debug", skip_all, err(level = "warn"))]
    pub async fn open_default() -> Result<Store, StoreError> {
        let path = connect::default_sqlite_path()?;
        Store::connect(&connect::sqlite_url(&path)).await
    }

    /// The URL without its password, e.g. `mysql://root@127.0.0.1:3306/diagraph`.
    pub fn describe(&self) -> String {
        self.display.clone()
    }

    /// Whether this store is backed by MySQL/MariaDB.
    pub fn is_mysql(&self) -> bool {
        matches!(self.db, Db::MySql(_))
    }

    /// The schema version this binary migrates to.
    pub fn schema_version(&self) -> i64 {
        migrate::supported_version(&self.db)
    }

    /// Writes every buffered journal event, then closes the pool.
    pub async fn close(&self) {
        let _ = self.flush_all().await;
        self.db.close().await;
    }

    /// Writes every buffered journal event now.
    #[tracing::instrument(level = "debug", skip_all, err(level = "warn"))]
    pub async fn flush_all(&self) -> Result<(), StoreError> {
        journal::flush_all(self).await
    }

    /// Writes the run's buffered journal events now, so that other
    /// processes reading the database see the whole run.
    #[tracing::instrument(level = "debug", skip_all, fields(run_id = run_id), err(level = "warn"))]
    pub async fn flush_run(&self, run_id: i64) -> Result<(), StoreError> {
        journal::flush_run(self, run_id)
            .await
            .map_err(|e| StoreError::Unreachable(e.to_string()))
    }
}

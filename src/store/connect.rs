//! Turning a database URL into a pool, and sqlx errors into one-line
//! [`StoreError`]s / [`RecordError`]s.
//!
//! A MySQL URL is probed with one direct connection under a hard timeout
//! before the pool is built: the pool itself retries a refused connection
//! until its acquire timeout and then reports only "timed out", which
//! would hide whether the server is down or the password is wrong.

use crate::store::StoreError;
use crate::store::db::Db;
use crate::text::{error_line, mask_url};
use crate::vocab::record::RecordError;
use sqlx::ConnectOptions;
use sqlx::mysql::{MySqlConnectOptions, MySqlDatabaseError, MySqlPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

/// How long a first connection may take before the server counts as unreachable.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a query waits for a pooled connection (also bounds reconnects
/// during an outage, so a write fails instead of hanging).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);
/// Enough for 32 concurrent runs plus readers; MySQL servers default to
/// 151 connections, shared with everyone else.
const MYSQL_MAX_CONNECTIONS: u32 = 40;
/// How long an SQLite statement waits for another process's write lock.
/// Many processes may share one file; a run's writes are short.
pub(crate) const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) struct Connected {
    pub db: Db,
    /// The URL without its password.
    pub display: String,
}

pub(crate) async fn open(url: &str) -> Result<Connected, StoreError> {
    let url = url.trim();
    if let Some(rest) = url.strip_prefix("sqlite:") {
        open_sqlite(rest).await
    } else if url.starts_with("mysql://") || url.starts_with("mariadb://") {
        open_mysql(url).await
    } else {
        Err(StoreError::BadUrl(format!(
            "{} (expected sqlite:PATH, sqlite::memory: or mysql://USER@HOST/DB)",
            mask_url(url)
        )))
    }
}

async fn open_sqlite(rest: &str) -> Result<Connected, StoreError> {
    let base = SqliteConnectOptions::new()
        .journal_mode(SqliteJournalMode::Wal)
        // NORMAL in WAL mode is durable across application crashes and only
        // risks the last transactions on power loss: the usual trade.
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(SQLITE_BUSY_TIMEOUT)
        // A run's rows are mostly compressed texts of one to a few KB; on
        // 8 KiB pages fewer of them straddle a page, which stores a run in
        // about 6% fewer bytes than the 4 KiB default. Only a new database
        // takes it (an existing one keeps its page size).
        .page_size(8192)
        .foreign_keys(true);
    let file = sqlite_file(rest);
    let in_memory = file.is_none();
    let (options, display) = match file {
        None => (base.in_memory(true), "sqlite::memory:".to_string()),
        Some(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| {
                    StoreError::Unreachable(format!("cannot create {}: {e}", dir.display()))
                })?;
            }
            let display = format!("sqlite:{}", path.display());
            (base.filename(&path).create_if_missing(true), display)
        }
    };
    // One connection: SQLite has one writer anyway, and queueing in the pool
    // is cheaper than busy-waiting on the file lock. It is also what keeps an
    // in-memory database alive and shared.
    // Switching a new file to WAL takes an exclusive lock that the busy
    // timeout does not wait for, so processes opening one fresh file
    // together retry here until the first one has switched it.
    let deadline = tokio::time::Instant::now() + SQLITE_BUSY_TIMEOUT;
    let mut delay = Duration::from_millis(20);
    loop {
        let mut pool_options = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .acquire_timeout(ACQUIRE_TIMEOUT);
        // The in-memory database lives only as long as its one connection:
        // replacing it would lose everything, so it is never discarded.
        if !in_memory {
            pool_options = pool_options.after_release(|conn, _| Box::pin(still_usable(conn)));
        }
        let opened = pool_options.connect_with(options.clone()).await;
        match opened {
            Ok(pool) => {
                return Ok(Connected {
                    db: Db::Sqlite(pool),
                    display,
                });
            }
            Err(e) if is_locked(&e) && tokio::time::Instant::now() + delay < deadline => {
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_millis(500));
            }
            Err(e) => return Err(classify(&e, &display)),
        }
    }
}

/// Whether a released SQLite connection may go back into the pool. When a
/// COMMIT fails on a full disk or an I/O error, SQLite rolls the
/// transaction back by itself; sqlx's own ROLLBACK then fails ("no
/// transaction is active") and the driver still counts one open
/// transaction, so every later `BEGIN` on that connection fails with
/// "non-zero transaction depth" and the process's only connection is
/// dead for good. Such a connection is closed; the pool opens a fresh one.
async fn still_usable(conn: &mut sqlx::SqliteConnection) -> Result<bool, sqlx::Error> {
    use sqlx::Connection;
    // The rollback of a dropped transaction is queued on the connection's
    // worker: a ping after it returns once that rollback has run.
    if conn.ping().await.is_err() {
        return Ok(false);
    }
    Ok(!conn.is_in_transaction())
}

/// SQLite's BUSY or LOCKED (the primary result code of the extended code).
pub(crate) fn is_locked(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(db) if mysql_number(e).is_none() => db
            .code()
            .and_then(|c| c.parse::<i64>().ok())
            .is_some_and(|c| matches!(c & 0xff, 5 | 6)),
        _ => false,
    }
}

async fn open_mysql(url: &str) -> Result<Connected, StoreError> {
    let normalized = match url.strip_prefix("mariadb://") {
        Some(rest) => format!("mysql://{rest}"),
        None => url.to_string(),
    };
    let options = MySqlConnectOptions::from_str(&normalized)
        .map_err(|e| StoreError::BadUrl(format!("{}: {}", mask_url(url), error_line(&e))))?
        .charset("utf8mb4");
    let display = describe_mysql(&options);
    match tokio::time::timeout(CONNECT_TIMEOUT, options.connect()).await {
        Err(_) => {
            return Err(StoreError::Unreachable(format!(
                "{display}: no answer within {} s",
                CONNECT_TIMEOUT.as_secs()
            )));
        }
        Ok(Err(e)) => return Err(classify(&e, &display)),
        Ok(Ok(conn)) => {
            let _ = sqlx::Connection::close(conn).await;
        }
    }
    let pool = MySqlPoolOptions::new()
        .max_connections(MYSQL_MAX_CONNECTIONS)
        .min_connections(0)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .idle_timeout(Duration::from_secs(60))
        .connect_lazy_with(options);
    Ok(Connected {
        db: Db::MySql(pool),
        display,
    })
}

fn describe_mysql(o: &MySqlConnectOptions) -> String {
    let db = o.get_database().unwrap_or("");
    format!(
        "mysql://{}@{}:{}/{}",
        o.get_username(),
        o.get_host(),
        o.get_port(),
        db
    )
}

fn mysql_number(e: &sqlx::Error) -> Option<u16> {
    match e {
        sqlx::Error::Database(db) => db
            .try_downcast_ref::<MySqlDatabaseError>()
            .map(|m| m.number()),
        _ => None,
    }
}

/// Whether the error means "the database is not there right now" (worth
/// retrying) rather than "the database refused this statement".
pub(crate) fn is_connection_error(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => {
            // 1053 server shutdown, 1205 lock wait timeout, 1213 deadlock,
            // 1927 connection killed, 2006/2013 server gone / connection
            // lost, 4031 idle client disconnected.
            if let Some(n) = mysql_number(e) {
                return matches!(n, 1053 | 1205 | 1213 | 1927 | 2006 | 2013 | 4031);
            }
            // SQLite: 5 BUSY, 6 LOCKED (primary result code of the extended code).
            db.code()
                .and_then(|c| c.parse::<i64>().ok())
                .is_some_and(|c| matches!(c & 0xff, 5 | 6))
        }
        _ => false,
    }
}

/// Whether a write was refused because the database is read-only (file,
/// directory or server) or its disk is full: the environment, not a query
/// of ours, and the same for every write until someone fixes it.
pub(crate) fn cannot_write(e: &sqlx::Error) -> bool {
    if let Some(n) = mysql_number(e) {
        // 1021 disk full, 1114 table full, 1290 --read-only, 1792
        // read-only transaction.
        return matches!(n, 1021 | 1114 | 1290 | 1792);
    }
    match e {
        // SQLite: 8 READONLY, 13 FULL (primary result code).
        sqlx::Error::Database(db) => db
            .code()
            .and_then(|c| c.parse::<i64>().ok())
            .is_some_and(|c| matches!(c & 0xff, 8 | 13)),
        _ => false,
    }
}

/// Errors while connecting and migrating.
pub(crate) fn classify(e: &sqlx::Error, target: &str) -> StoreError {
    if let Some(n) = mysql_number(e) {
        // 1044 no access to the database, 1045 bad user or password,
        // 1698 socket-auth user over TCP.
        if matches!(n, 1044 | 1045 | 1698) {
            return StoreError::Auth(format!("{target}: {}", error_line(e)));
        }
    }
    if is_locked(e) {
        return StoreError::Locked(format!(
            "{target}: still locked after waiting {} s ({})",
            SQLITE_BUSY_TIMEOUT.as_secs(),
            error_line(e)
        ));
    }
    if is_connection_error(e) {
        return StoreError::Unreachable(format!("{target}: {}", error_line(e)));
    }
    if cannot_write(e) {
        return StoreError::CannotWrite(format!("{target}: {}", error_line(e)));
    }
    if let sqlx::Error::Configuration(_) = e {
        return StoreError::BadUrl(format!("{target}: {}", error_line(e)));
    }
    StoreError::Unusable(format!("{target}: {}", error_line(e)))
}

/// Errors of queries after the store is up.
pub(crate) fn query_error(e: sqlx::Error) -> StoreError {
    if is_locked(&e) {
        StoreError::Locked(format!(
            "still locked after waiting {} s ({})",
            SQLITE_BUSY_TIMEOUT.as_secs(),
            error_line(&e)
        ))
    } else if is_connection_error(&e) {
        StoreError::Unreachable(error_line(&e))
    } else if cannot_write(&e) {
        StoreError::CannotWrite(error_line(&e))
    } else {
        StoreError::Query(error_line(&e))
    }
}

pub(crate) fn record_error(e: sqlx::Error) -> RecordError {
    if is_connection_error(&e) {
        RecordError::Unavailable(error_line(&e))
    } else {
        RecordError::Rejected(error_line(&e))
    }
}

/// `$XDG_DATA_HOME/diagraph/diagraph.db` (or the platform's equivalent).
pub(crate) fn default_sqlite_path() -> Result<PathBuf, StoreError> {
    use etcetera::BaseStrategy;
    let strategy = etcetera::choose_base_strategy()
        .map_err(|e| StoreError::Unreachable(format!("no data directory: {e}")))?;
    Ok(strategy.data_dir().join("diagraph").join("diagraph.db"))
}

/// The file a `sqlite:` URL's rest names; `None` for an in-memory
/// database.
pub(crate) fn sqlite_file(rest: &str) -> Option<PathBuf> {
    let path = rest.strip_prefix("//").unwrap_or(rest);
    let path = path.split('?').next().unwrap_or(path);
    (path != ":memory:" && !path.is_empty()).then(|| PathBuf::from(path))
}

/// The SQLite file a database URL (or, without one, the default
/// database) is stored in; `None` for MySQL or an in-memory database.
pub fn sqlite_path(url: Option<&str>) -> Result<Option<PathBuf>, StoreError> {
    match url.map(str::trim) {
        None => default_sqlite_path().map(Some),
        Some(url) => Ok(url.strip_prefix("sqlite:").and_then(sqlite_file)),
    }
}

pub(crate) fn sqlite_url(path: &Path) -> String {
    format!("sqlite:{}", path.display())
}

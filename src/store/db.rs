//! The two backends behind one query path. `Db` is an enum over the SQLite
//! and MySQL pools; [`with_pool!`] expands a block once per backend, so
//! each SQL text is written once and type-checked against both drivers.
//! The few places where the dialects really differ (insert-or-ignore,
//! the generated id of an insert) are named here and nowhere else.

use sqlx::mysql::{MySqlPool, MySqlQueryResult, MySqlRow};
use sqlx::sqlite::{SqlitePool, SqliteQueryResult, SqliteRow};

#[derive(Clone, Debug)]
pub(crate) enum Db {
    Sqlite(SqlitePool),
    MySql(MySqlPool),
}

/// Runs `$body` with `$p` bound to the pool of whichever backend `$db` is.
macro_rules! with_pool {
    ($db:expr, $p:ident => $body:expr) => {
        match $db {
            $crate::store::db::Db::Sqlite($p) => $body,
            $crate::store::db::Db::MySql($p) => $body,
        }
    };
}
pub(crate) use with_pool;

impl Db {
    /// `INSERT` that silently skips a row whose unique key already exists:
    /// what makes re-recording an event with the same (run_id, seq) a no-op.
    pub(crate) fn insert_ignore(&self) -> &'static str {
        match self {
            Db::Sqlite(_) => "INSERT OR IGNORE INTO",
            Db::MySql(_) => "INSERT IGNORE INTO",
        }
    }

    /// The run table as a page of the run list reads it, newest first
    /// from a cursor. MariaDB otherwise picks the list index by its
    /// `agent_flow` prefix alone and walks every run newer than the cursor
    /// (seconds per page at 100,000 runs); the primary key reads just the
    /// page. SQLite reads the list index, which holds every listed column.
    pub(crate) fn runs_newest_first(&self) -> &'static str {
        match self {
            Db::Sqlite(_) => "diagnosis_run",
            Db::MySql(_) => "diagnosis_run FORCE INDEX (PRIMARY)",
        }
    }

    pub(crate) async fn close(&self) {
        with_pool!(self, p => p.close().await)
    }
}

/// A transaction that will write. On SQLite it takes the write lock at
/// BEGIN (IMMEDIATE): a deferred transaction that reads first and then
/// writes cannot wait for another process's writer and fails at once with
/// "database is locked", where IMMEDIATE waits its turn (busy timeout).
pub(crate) trait BeginWrite {
    type Db: sqlx::Database;
    fn begin_write(
        &self,
    ) -> impl Future<Output = Result<sqlx::Transaction<'static, Self::Db>, sqlx::Error>> + Send;
}

impl BeginWrite for SqlitePool {
    type Db = sqlx::Sqlite;
    fn begin_write(
        &self,
    ) -> impl Future<Output = Result<sqlx::Transaction<'static, sqlx::Sqlite>, sqlx::Error>> + Send
    {
        self.begin_with("BEGIN IMMEDIATE")
    }
}

impl BeginWrite for MySqlPool {
    type Db = sqlx::MySql;
    fn begin_write(
        &self,
    ) -> impl Future<Output = Result<sqlx::Transaction<'static, sqlx::MySql>, sqlx::Error>> + Send
    {
        self.begin()
    }
}

pub(crate) async fn begin_write<P: BeginWrite>(
    pool: &P,
) -> Result<sqlx::Transaction<'static, P::Db>, sqlx::Error> {
    pool.begin_write().await
}

/// The database-generated id of an insert.
pub(crate) trait InsertId {
    fn insert_id(&self) -> i64;
}

impl InsertId for SqliteQueryResult {
    fn insert_id(&self) -> i64 {
        self.last_insert_rowid()
    }
}

impl InsertId for MySqlQueryResult {
    fn insert_id(&self) -> i64 {
        i64::try_from(self.last_insert_id()).unwrap_or(i64::MAX)
    }
}

/// Typed column access that reads alike on both backends. Integers are
/// read as i64 (booleans are stored as 0/1) so no column type differs.
pub(crate) trait RowExt {
    fn int(&self, col: &str) -> Result<i64, sqlx::Error>;
    fn opt_int(&self, col: &str) -> Result<Option<i64>, sqlx::Error>;
    fn text(&self, col: &str) -> Result<String, sqlx::Error>;
    fn opt_text(&self, col: &str) -> Result<Option<String>, sqlx::Error>;
    fn opt_float(&self, col: &str) -> Result<Option<f64>, sqlx::Error>;
    fn opt_bytes(&self, col: &str) -> Result<Option<Vec<u8>>, sqlx::Error>;

    /// A column written through `packed::pack` (plain text in older rows).
    fn packed(&self, col: &str) -> Result<String, sqlx::Error> {
        self.opt_packed(col)?
            .ok_or_else(|| sqlx::Error::ColumnDecode {
                index: col.to_string(),
                source: "unexpected NULL".into(),
            })
    }

    fn opt_packed(&self, col: &str) -> Result<Option<String>, sqlx::Error> {
        self.opt_bytes(col)?
            .map(super::packed::unpack)
            .transpose()
            .map_err(|e| sqlx::Error::ColumnDecode {
                index: col.to_string(),
                source: e.into(),
            })
    }

    fn flag(&self, col: &str) -> Result<bool, sqlx::Error> {
        Ok(self.int(col)? != 0)
    }

    fn uint(&self, col: &str) -> Result<u64, sqlx::Error> {
        Ok(u64::try_from(self.int(col)?).unwrap_or(0))
    }
}

macro_rules! impl_row_ext {
    ($row:ty) => {
        impl RowExt for $row {
            fn int(&self, col: &str) -> Result<i64, sqlx::Error> {
                sqlx::Row::try_get::<i64, _>(self, col)
            }
            fn opt_int(&self, col: &str) -> Result<Option<i64>, sqlx::Error> {
                sqlx::Row::try_get::<Option<i64>, _>(self, col)
            }
            fn text(&self, col: &str) -> Result<String, sqlx::Error> {
                sqlx::Row::try_get::<String, _>(self, col)
            }
            fn opt_text(&self, col: &str) -> Result<Option<String>, sqlx::Error> {
                sqlx::Row::try_get::<Option<String>, _>(self, col)
            }
            fn opt_float(&self, col: &str) -> Result<Option<f64>, sqlx::Error> {
                sqlx::Row::try_get::<Option<f64>, _>(self, col)
            }
            fn opt_bytes(&self, col: &str) -> Result<Option<Vec<u8>>, sqlx::Error> {
                sqlx::Row::try_get::<Option<Vec<u8>>, _>(self, col)
            }
        }
    };
}
impl_row_ext!(SqliteRow);
impl_row_ext!(MySqlRow);

/// Milliseconds since the Unix epoch: the stored time format of every table.
pub(crate) fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// RFC 3339 text of a stored epoch-milliseconds time.
pub(crate) fn ms_to_rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

/// Clamps an unsigned count into a signed BIGINT column.
pub(crate) fn to_i64<T: TryInto<i64>>(v: T) -> i64 {
    v.try_into().unwrap_or(i64::MAX)
}

/// A random hex string (session ids, case ids, test database names). The
/// std hasher is randomly keyed per instance, which is all the entropy an
/// identifier needs; it is not a secret.
pub(crate) fn random_hex(bytes: usize) -> String {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut out = String::with_capacity(bytes * 2);
    while out.len() < bytes * 2 {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        h.write_i64(now_ms());
        out.push_str(&format!("{:016x}", h.finish()));
    }
    out.truncate(bytes * 2);
    out
}

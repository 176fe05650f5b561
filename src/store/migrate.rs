//! Schema migrations, embedded from `migrations/sqlite` and
//! `migrations/mysql` and applied at every connect.
//!
//! Before migrating, the newest applied version is compared with the
//! newest this binary knows: a database written by a newer diagraph is
//! refused with [`StoreError::TooNew`] instead of being half-understood.
//!
//! Many processes may start together on a fresh database; exactly one
//! migrates it while the others wait. On SQLite the whole migration runs
//! in one `BEGIN IMMEDIATE` transaction (SQLite DDL is transactional, and
//! a second process waits for the write lock, then finds the work done).
//! On MySQL, whose DDL commits implicitly, a named lock (`GET_LOCK` with a
//! finite timeout and its result checked) is held on the connection that
//! migrates: sqlx's own lock asks for an infinite wait with -1, which
//! MariaDB answers with NULL at once, leaving the migration unguarded.

use crate::store::StoreError;
use crate::store::connect::classify;
use crate::store::db::{Db, RowExt, with_pool};
use sqlx::Connection;
use sqlx::migrate::{MigrateError, Migrator};

use std::time::Duration;

/// How long a process waits for another one's migration.
const LOCK_WAIT: Duration = Duration::from_secs(60);

static SQLITE: Migrator = sqlx::migrate!("migrations/sqlite");
static MYSQL: Migrator = sqlx::migrate!("migrations/mysql");

fn migrator(db: &Db) -> &'static Migrator {
    match db {
        Db::Sqlite(_) => &SQLITE,
        Db::MySql(_) => &MYSQL,
    }
}

/// The newest schema version this binary can run.
pub fn supported_version(db: &Db) -> i64 {
    migrator(db).iter().map(|m| m.version).max().unwrap_or(0)
}

/// The newest migration applied to the database, None when it was never
/// migrated (the bookkeeping table does not exist yet).
async fn applied_version(db: &Db) -> Option<i64> {
    const SQL: &str = "SELECT MAX(version) AS v FROM _sqlx_migrations WHERE success = 1";
    let row = with_pool!(db, p => sqlx::query(SQL).fetch_optional(p).await
        .map(|r| r.and_then(|r| r.opt_int("v").ok().flatten())));
    // An error here means "no table yet": a fresh database.
    row.ok().flatten()
}

pub(crate) async fn run(db: &Db, target: &str) -> Result<(), StoreError> {
    let supported = supported_version(db);
    match applied_version(db).await {
        Some(found) if found > supported => {
            return Err(StoreError::TooNew { found, supported });
        }
        // Up to date: no lock needed (the common start).
        Some(found) if found == supported => return Ok(()),
        _ => {}
    }
    let result = match db {
        Db::Sqlite(p) => migrate_sqlite(p).await,
        Db::MySql(p) => migrate_mysql(p, target).await?,
    };
    result.map_err(|e| match e {
        MigrateError::Execute(inner) | MigrateError::ExecuteMigration(inner, _) => {
            match classify(&inner, target) {
                StoreError::Unusable(m) => StoreError::Migration(m),
                other => other,
            }
        }
        MigrateError::VersionMissing(v) | MigrateError::VersionTooNew(v, _) => StoreError::TooNew {
            found: v,
            supported,
        },
        other => StoreError::Migration(crate::text::error_line(&other)),
    })
}

async fn migrate_sqlite(pool: &sqlx::SqlitePool) -> Result<(), MigrateError> {
    let mut conn = pool.acquire().await?;
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
    // Inside the transaction each migration is a savepoint.
    SQLITE.run(&mut *tx).await?;
    tx.commit().await?;
    Ok(())
}

/// Holds `diagraph_migrate` for the migration. The outer error is a lock
/// that could not be had; the inner one the migration's own.
async fn migrate_mysql(
    pool: &sqlx::MySqlPool,
    target: &str,
) -> Result<Result<(), MigrateError>, StoreError> {
    const LOCK: &str = "SELECT GET_LOCK(CONCAT('diagraph_migrate_', DATABASE()), ?) AS got";
    const UNLOCK: &str = "SELECT RELEASE_LOCK(CONCAT('diagraph_migrate_', DATABASE()))";
    let mut conn = pool.acquire().await.map_err(|e| classify(&e, target))?;
    let got = sqlx::query(LOCK)
        .bind(i64::try_from(LOCK_WAIT.as_secs()).unwrap_or(60))
        .fetch_one(&mut *conn)
        .await
        .and_then(|r| r.opt_int("got"))
        .map_err(|e| classify(&e, target))?;
    if got != Some(1) {
        return Err(StoreError::Migration(format!(
            "{target}: another process kept the migration lock for {} s",
            LOCK_WAIT.as_secs()
        )));
    }
    // sqlx takes its own (differently named) lock too; with ours held it
    // is uncontended, and harmless where MariaDB ignores it.
    let result = MYSQL.run(&mut *conn).await;
    let _ = sqlx::query(UNLOCK).execute(&mut *conn).await;
    Ok(result)
}

//! Schema migrations, embedded from `migrations/sqlite` and
//! `migrations/mysql` and applied at every connect.
//!
//! Before migrating, the newest applied version is compared with the
//! newest this binary knows: a database written by a newer diagraph is
//! refused with [`StoreError::TooNew`] instead of being half-understood.

use crate::store::StoreError;
use crate::store::connect::classify;
use crate::store::db::{Db, RowExt, with_pool};
use sqlx::migrate::{MigrateError, Migrator};

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
    if let Some(found) = applied_version(db).await
        && found > supported
    {
        return Err(StoreError::TooNew { found, supported });
    }
    let result = with_pool!(db, p => migrator(db).run(p).await);
    result.map_err(|e| match e {
        MigrateError::Execute(inner) | MigrateError::ExecuteMigration(inner, _) => {
            match classify(&inner, target) {
                StoreError::Query(m) => StoreError::Migration(m),
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

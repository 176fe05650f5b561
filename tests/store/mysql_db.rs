//! A fresh MySQL/MariaDB database per test, on a real server.
//!
//! The server URL comes from `DIAGRAPH_TEST_MYSQL_URL` (default
//! `mysql://root@127.0.0.1:3306/test`; `.ci/run` makes sure one is up).
//! Each test gets its own `diagraph_t_<random>` database, dropped when the
//! handle is dropped, even if the test panics. When the server cannot be
//! reached, a test skips with a note, except under CI, where it fails
//! (`helpers::skip_or_fail`): CI must never pass by skipping.
//!
//! A module of the store tests; `benches/store.rs` includes it too, with
//! `tests/helpers`.

use crate::helpers::skip_or_fail;
use sqlx::Connection;
use sqlx::mysql::MySqlConnection;
use std::time::Duration;

pub const URL_ENV: &str = "DIAGRAPH_TEST_MYSQL_URL";
pub const DEFAULT_URL: &str = "mysql://root@127.0.0.1:3306/test";

/// The server URL the tests use.
pub fn server_url() -> String {
    std::env::var(URL_ENV)
        .ok()
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_URL.to_string())
}

/// `url` with its database path replaced by `db`, query string kept.
pub fn with_database(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let path_start = base[authority_start..]
        .find('/')
        .map_or(base.len(), |i| authority_start + i);
    let mut out = format!("{}/{}", &base[..path_start], db);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

fn random_name() -> String {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    let mut h = RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.write_u32(std::process::id());
    format!("diagraph_t_{:016x}", h.finish())
}

/// A database created for one test; dropped with the handle.
pub struct TestDatabase {
    /// URL of the fresh database, for `Store::connect`.
    pub url: String,
    pub name: String,
    server: String,
}

impl TestDatabase {
    /// A fresh database, or None (after printing a skip note) when no
    /// server answers outside CI. Panics under CI when none answers.
    pub async fn create(test: &str) -> Option<TestDatabase> {
        let server = server_url();
        let connected =
            tokio::time::timeout(Duration::from_secs(5), MySqlConnection::connect(&server)).await;
        let mut conn = match connected {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => return unreachable(test, &server, &e.to_string()),
            Err(_) => return unreachable(test, &server, "no answer within 5 s"),
        };
        let name = random_name();
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
        )))
        .execute(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("{test}: cannot create database {name}: {e}"));
        let _ = conn.close().await;
        Some(TestDatabase {
            url: with_database(&server, &name),
            name,
            server,
        })
    }
}

fn unreachable(test: &str, server: &str, why: &str) -> Option<TestDatabase> {
    let shown = mask(server);
    skip_or_fail(
        test,
        &format!("no MySQL server at {shown} ({why}); set {URL_ENV} to run it"),
    );
    None
}

fn mask(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => match url[s + 3..at].find(':') {
            Some(c) => format!("{}:***{}", &url[..s + 3 + c], &url[at..]),
            None => url.to_string(),
        },
        _ => url.to_string(),
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // Drop runs outside any async context we can rely on (possibly
        // during a panic), so the cleanup gets its own thread and runtime.
        let server = self.server.clone();
        let name = self.name.clone();
        let cleanup = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                let connect =
                    tokio::time::timeout(Duration::from_secs(5), MySqlConnection::connect(&server));
                if let Ok(Ok(mut conn)) = connect.await {
                    let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                        "DROP DATABASE IF EXISTS `{name}`"
                    )))
                    .execute(&mut conn)
                    .await;
                    let _ = conn.close().await;
                }
            });
        });
        let _ = cleanup.join();
    }
}

//! The store suite on SQLite (a fresh file per test), plus the SQLite-only
//! cases: the default path, in-memory URLs, bad URLs and a schema newer
//! than this binary.

use crate::suite;
use diagraph::store::{Store, StoreError};
use tempfile::TempDir;

async fn fresh() -> (TempDir, Store, String) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite:{}",
        dir.path().join("nested/dir/diagraph.db").display()
    );
    let store = Store::connect(&url).await.unwrap();
    (dir, store, url)
}

macro_rules! suite_tests {
    ($($name:ident),* $(,)?) => {$(
        #[tokio::test]
        async fn $name() {
            let (_dir, store, _url) = fresh().await;
            suite::$name(&store).await;
        }
    )*};
}

each_store_check!(suite_tests);

#[tokio::test]
async fn stale_runs_swept() {
    let (_dir, _store, url) = fresh().await;
    suite::stale_runs_swept(&url).await;
}

#[tokio::test]
async fn interrupted_run_keeps_what_happened() {
    let (_dir, _store, url) = fresh().await;
    suite::interrupted_run_keeps_what_happened(&url).await;
}

#[tokio::test]
async fn in_memory_url_works() {
    let store = Store::connect("sqlite::memory:").await.unwrap();
    assert_eq!(store.describe(), "sqlite::memory:");
    suite::replay_equals_live(&store).await;
}

#[tokio::test]
async fn describe_names_the_file() {
    let (dir, store, _) = fresh().await;
    assert_eq!(
        store.describe(),
        format!(
            "sqlite:{}",
            dir.path().join("nested/dir/diagraph.db").display()
        )
    );
    assert!(!store.is_mysql());
}

#[tokio::test]
async fn reopening_keeps_runs() {
    let (_dir, store, url) = fresh().await;
    let run = suite::synthetic::pass_run(&store, None, "persisted?", "svc").await;
    store.close().await;
    let reopened = Store::connect(&url).await.unwrap();
    assert_eq!(
        reopened.load_events(run.handle.run_id).await.unwrap(),
        run.events
    );
}

#[tokio::test]
async fn bad_urls_are_one_line_errors() {
    for url in ["postgres://x/y", "", "http://localhost"] {
        let err = Store::connect(url).await.err().unwrap();
        assert!(matches!(err, StoreError::BadUrl(_)), "{url}: {err:?}");
        assert!(!err.to_string().contains('\n'));
    }
    let err = Store::connect("mysql://user:hunter2@").await.err().unwrap();
    assert!(!err.to_string().contains("hunter2"), "{err}");
}

#[tokio::test]
async fn newer_schema_is_refused() {
    let (_dir, store, url) = fresh().await;
    let newer = store.schema_version() + 1;
    store.close().await;
    {
        use sqlx::Connection;
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (?, 'from the future', 1, x'00', 0)",
        )
        .bind(newer)
        .execute(&mut conn)
        .await
        .unwrap();
        conn.close().await.unwrap();
    }
    let err = Store::connect(&url).await.err().unwrap();
    match &err {
        StoreError::TooNew { found, supported } => {
            assert_eq!(*found, newer);
            assert_eq!(*supported, newer - 1);
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
    assert!(!err.to_string().contains('\n'));
}

#[tokio::test]
async fn unwritable_path_is_an_error_not_a_panic() {
    let err = Store::connect("sqlite:/proc/diagraph-cannot-exist/x.db")
        .await
        .err()
        .unwrap();
    assert!(!err.to_string().contains('\n'), "{err}");
}

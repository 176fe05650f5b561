//! The store suite on a real MySQL/MariaDB server (never a mock), each
//! test in its own fresh database (see `mysql_db.rs` for how the
//! server is found and when a test skips), plus the MySQL-only cases:
//! credentials, an unreachable server, a newer schema and 32 concurrent
//! runs.

use crate::mysql_db::{TestDatabase, with_database};
use crate::suite;
use diagraph::store::{Store, StoreError};
use diagraph::vocab::events::EventKind;
use serde_json::json;

macro_rules! fresh_or_skip {
    ($test:expr) => {{
        let Some(db) = TestDatabase::create($test).await else {
            return;
        };
        let store = Store::connect(&db.url).await.unwrap();
        (db, store)
    }};
}

macro_rules! suite_tests {
    ($($name:ident),* $(,)?) => {$(
        #[tokio::test]
        async fn $name() {
            let (_db, store) = fresh_or_skip!(stringify!($name));
            suite::$name(&store).await;
            store.close().await;
        }
    )*};
}

each_store_check!(suite_tests);

#[tokio::test]
async fn stale_runs_swept() {
    let (db, store) = fresh_or_skip!("stale_runs_swept");
    suite::stale_runs_swept(&db.url).await;
    store.close().await;
}

#[tokio::test]
async fn interrupted_run_keeps_what_happened() {
    let (db, store) = fresh_or_skip!("interrupted_run_keeps_what_happened");
    suite::interrupted_run_keeps_what_happened(&db.url).await;
    store.close().await;
}

#[tokio::test]
async fn describe_hides_the_password() {
    let (db, store) = fresh_or_skip!("describe_hides_the_password");
    assert!(store.is_mysql());
    assert!(store.describe().starts_with("mysql://"));
    assert!(store.describe().ends_with(&format!("/{}", db.name)));
    store.close().await;
}

#[tokio::test]
async fn wrong_password_is_an_auth_error() {
    let Some(db) = TestDatabase::create("wrong_password_is_an_auth_error").await else {
        return;
    };
    let (scheme, rest) = db.url.split_once("://").unwrap();
    let (auth, host) = rest.split_once('@').unwrap();
    let user = auth.split(':').next().unwrap();
    let bad = format!("{scheme}://{user}:not-the-password-42@{host}");
    let err = Store::connect(&bad).await.err().unwrap();
    assert!(matches!(err, StoreError::Auth(_)), "{err:?}");
    let text = err.to_string();
    assert!(!text.contains("not-the-password-42"), "{text}");
    assert!(!text.contains('\n'));
}

#[tokio::test]
async fn unreachable_server_fails_fast() {
    // Port 1 on loopback: refused at once, no server involved.
    let started = std::time::Instant::now();
    let err = Store::connect("mysql://root:secret@127.0.0.1:1/diagraph")
        .await
        .err()
        .unwrap();
    assert!(matches!(err, StoreError::Unreachable(_)), "{err:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(8));
    assert!(!err.to_string().contains("secret"));
    assert!(!err.to_string().contains('\n'));
}

#[tokio::test]
async fn unknown_database_is_an_error() {
    let Some(db) = TestDatabase::create("unknown_database_is_an_error").await else {
        return;
    };
    let url = with_database(&db.url, &format!("{}_missing", db.name));
    let err = Store::connect(&url).await.err().unwrap();
    assert!(!err.to_string().contains('\n'), "{err}");
}

#[tokio::test]
async fn newer_schema_is_refused() {
    let (db, store) = fresh_or_skip!("newer_schema_is_refused");
    let newer = store.schema_version() + 1;
    store.close().await;
    {
        use sqlx::Connection;
        let mut conn = sqlx::MySqlConnection::connect(&db.url).await.unwrap();
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
    match Store::connect(&db.url).await.err().unwrap() {
        StoreError::TooNew { found, supported } => {
            assert_eq!(found, newer);
            assert_eq!(supported, newer - 1);
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
}

/// 32 runs at once: every run's rows, counts, ownership and journal are
/// its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_runs_do_not_mix() {
    let (_db, store) = fresh_or_skip!("concurrent_runs_do_not_mix");
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..32 {
        let store = store.clone();
        tasks.spawn(async move {
            let service = format!("svc-{i:02}");
            let session = format!("session-{}", i % 4);
            let run =
                suite::synthetic::pass_run(&store, Some(&session), &format!("q{i}"), &service)
                    .await;
            (service, run)
        });
    }
    let runs: Vec<_> = tasks.join_all().await;
    assert_eq!(runs.len(), 32);
    let mut all_invocations = std::collections::HashSet::new();
    for (service, run) in &runs {
        let id = run.handle.run_id;
        let trace = serde_json::to_value(store.run_trace(id).await.unwrap()).unwrap();
        assert_eq!(trace["run"]["status"], "SUCCESS");
        assert_eq!(trace["run"]["stepCount"], json!(5));
        let steps = trace["steps"].as_array().unwrap();
        let invs = trace["toolInvocations"].as_array().unwrap();
        assert_eq!(steps.len(), 5);
        assert_eq!(invs.len(), 1);
        assert!(steps.iter().all(|s| s["runId"] == json!(id)));
        assert_eq!(invs[0]["runId"], json!(id));
        assert_eq!(invs[0]["inputParams"]["service"], json!(service));
        assert_eq!(invs[0]["id"], json!(run.invocation_ids[0]));
        assert!(all_invocations.insert(run.invocation_ids[0]));
        let events = store.load_events(id).await.unwrap();
        assert_eq!(&events, &run.events);
        for e in &events {
            if let EventKind::GatekeeperChecked { result } = &e.kind {
                assert_eq!(
                    result.checked_bindings[0].source_invocation_id,
                    Some(run.invocation_ids[0])
                );
            }
        }
    }
    assert_eq!(store.running_count().await.unwrap(), 0);
    store.close().await;
}

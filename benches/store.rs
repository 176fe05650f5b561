//! Store throughput and latency (printed figures, not a timed test).
//!
//! A persisted run is the scripted PASS path's shape recorded through the
//! Recorder API: session + run row, 5 steps, 1 tool invocation, 21 journal
//! events, finish. Figures, as `key=value` lines: runs per second and
//! median per-run latency on SQLite and MySQL, single stream and 32
//! concurrent, and the median time to load a stored run for replay.
//! MySQL figures use `DIAGRAPH_TEST_MYSQL_URL` (default
//! mysql://root@127.0.0.1:3306/test) in a fresh database, and are skipped
//! with a note when no server answers.
//!
//! Then what a year of runs costs: the bytes one offline run of the
//! shipped pack adds to the database (SQLite: the file's growth over 300
//! runs, WAL checkpointed; MySQL: InnoDB's data and index length after
//! ANALYZE TABLE, which counts whole pages and is approximate), and the
//! time to list 100,000 runs whose rows hold those runs' texts: the first
//! page, every page down to the oldest (`runs --before`, the TUI's
//! scroll), the count, and a text search.
//!
//! Run with `cargo bench --bench store`.

// A benchmark whose set-up fails should stop loudly, like a test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// The allocator the `diagraph` binary uses, so figures match the product.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../tests/helpers/mod.rs"]
mod helpers;
#[path = "../tests/store/mysql_db.rs"]
mod mysql_support;
#[allow(dead_code)] // the bench reads only what it times
#[path = "../tests/store/suite/synthetic.rs"]
mod synthetic;

use diagraph::engine::nodes::gatekeeper::GatekeeperRules;
use diagraph::engine::prompts::Prompts;
use diagraph::engine::{Engine, EngineConfig, RunRequest};
use diagraph::model::offline::OfflineModel;
use diagraph::store::{RunQuery, Store};
use diagraph::tools::ToolRegistry;
use diagraph::tools::pack::{Pack, pack_tools};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const QUESTIONS: &[&str] = &[
    "why is payment-service slow?",
    "is there a HighCPUUsage alert on payment-service?",
    "order-service 为什么下单超时？",
    "why is checkout failing?",
];
const FOOTPRINT_RUNS: usize = 300;
const LISTED_RUNS: i64 = 100_000;
const PAGE: usize = 500;

fn offline_engine(store: &Store) -> Engine {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/packs/shop");
    let pack = Arc::new(Pack::load(&dir).expect("shipped pack loads"));
    let mut registry = ToolRegistry::new();
    for t in pack_tools(pack.clone()) {
        registry.register(t);
    }
    Engine {
        model: Arc::new(OfflineModel::new()),
        tools: Arc::new(registry),
        recorder: Arc::new(store.clone()),
        catalog: Arc::new(pack.catalog()),
        prompts: Arc::new(Prompts::shipped()),
        rules: Arc::new(GatekeeperRules::shipped()),
        config: EngineConfig::default(),
    }
}

async fn offline_runs(store: &Store, n: usize) {
    let engine = offline_engine(store);
    for i in 0..n {
        engine
            .run(RunRequest::new(QUESTIONS[i % QUESTIONS.len()]))
            .await
            .expect("offline run");
    }
    store.flush_all().await.expect("journal written");
}

/// Bytes the database holds: the SQLite file (its WAL checkpointed by
/// closing the store), or InnoDB's data and index length.
async fn stored_bytes(url: &str) -> u64 {
    if let Some(path) = url.strip_prefix("sqlite:") {
        return std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    }
    let pool = sqlx::MySqlPool::connect(url).await.expect("mysql");
    for t in [
        "diagnosis_run",
        "agent_step",
        "tool_invocation",
        "run_event",
        "chat_session",
    ] {
        sqlx::query(sqlx::AssertSqlSafe(format!("ANALYZE TABLE {t}")))
            .execute(&pool)
            .await
            .expect("analyze");
    }
    let n: i64 = sqlx::query_scalar(
        "SELECT CAST(SUM(data_length + index_length) AS SIGNED) FROM information_schema.tables \
         WHERE table_schema = DATABASE()",
    )
    .fetch_one(&pool)
    .await
    .expect("sizes");
    pool.close().await;
    u64::try_from(n).unwrap_or(0)
}

/// Bytes per offline run of the shipped pack, then 100,000 runs listed.
async fn year_of_runs(label: &str, url: &str) {
    // A few runs first, so the schema's fixed pages are not counted.
    let store = Store::connect(url).await.expect("store");
    offline_runs(&store, 8).await;
    store.close().await;
    let before = stored_bytes(url).await;
    let store = Store::connect(url).await.expect("store");
    let started = Instant::now();
    offline_runs(&store, FOOTPRINT_RUNS).await;
    let took = started.elapsed();
    store.close().await;
    let after = stored_bytes(url).await;
    println!("{label}.offline_run.runs={FOOTPRINT_RUNS}");
    println!(
        "{label}.offline_run.bytes_per_run={}",
        after.saturating_sub(before) / FOOTPRINT_RUNS as u64
    );
    println!(
        "{label}.offline_run.runs_per_sec={:.1}",
        FOOTPRINT_RUNS as f64 / took.as_secs_f64()
    );

    // Copies of the real run rows (their texts included) double up to
    // 100,000 runs; steps and events are not needed to list them.
    let store = Store::connect(url).await.expect("store");
    let columns = "session_id, status, agent_flow, query, answer, model, pack, scenario, \
         degraded, effective_verdict, total_duration_ms, total_token_count, step_count, \
         tool_call_count, self_evaluation, sources, failure_reason, failure_class, owner_pid, \
         owner_host, owner_token, created_at, updated_at, finished_at";
    let copy = format!(
        "INSERT INTO diagnosis_run ({columns}) SELECT {columns} FROM diagnosis_run \
         WHERE agent_flow = 'CHAT' ORDER BY id LIMIT ?"
    );
    let (pool_sqlite, pool_mysql) = if url.starts_with("sqlite:") {
        (
            Some(sqlx::SqlitePool::connect(url).await.expect("sqlite")),
            None,
        )
    } else {
        (
            None,
            Some(sqlx::MySqlPool::connect(url).await.expect("mysql")),
        )
    };
    loop {
        let have = store.count_runs(&RunQuery::default()).await.expect("count");
        let missing = LISTED_RUNS - i64::try_from(have).unwrap_or(0);
        if missing <= 0 {
            break;
        }
        let q = sqlx::AssertSqlSafe(copy.clone());
        match (&pool_sqlite, &pool_mysql) {
            (Some(p), _) => sqlx::query(q).bind(missing).execute(p).await.map(|_| ()),
            (_, Some(p)) => sqlx::query(q).bind(missing).execute(p).await.map(|_| ()),
            _ => unreachable!(),
        }
        .expect("copy runs");
    }
    if let Some(p) = pool_sqlite {
        p.close().await;
    }
    if let Some(p) = pool_mysql {
        p.close().await;
    }
    store.close().await;

    let store = Store::connect(url).await.expect("store");
    let started = Instant::now();
    let first = store
        .query_runs(&RunQuery {
            limit: PAGE,
            ..RunQuery::default()
        })
        .await
        .expect("first page");
    let first_ms = started.elapsed();
    let started = Instant::now();
    let mut listed = first.len();
    let mut before = first.last().map(|r| r.run_id);
    while let Some(b) = before {
        let page = store
            .query_runs(&RunQuery {
                limit: PAGE,
                before: Some(b),
                ..RunQuery::default()
            })
            .await
            .expect("page");
        listed += page.len();
        before = (page.len() == PAGE)
            .then(|| page.last().map(|r| r.run_id))
            .flatten();
    }
    let all_ms = started.elapsed() + first_ms;
    let started = Instant::now();
    let total = store.count_runs(&RunQuery::default()).await.expect("count");
    let count_ms = started.elapsed();
    let started = Instant::now();
    let found = store
        .count_runs(&RunQuery {
            text: Some("no run asks this".into()),
            ..RunQuery::default()
        })
        .await
        .expect("search");
    let search_ms = started.elapsed();
    store.close().await;
    println!("{label}.list.runs={total}");
    println!("{label}.list.first_page_ms={}", ms(first_ms));
    println!(
        "{label}.list.all_pages_ms={} ({listed} runs, pages of {PAGE})",
        ms(all_ms)
    );
    println!("{label}.list.count_ms={}", ms(count_ms));
    println!(
        "{label}.list.text_search_ms={} ({found} found)",
        ms(search_ms)
    );
}

const SINGLE_RUNS: usize = 200;
const CONCURRENCY: usize = 32;
const CONCURRENT_RUNS_PER_TASK: usize = 10;
const REPLAY_LOADS: usize = 100;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

async fn one_run(store: &Store, i: usize) -> (Duration, i64) {
    let started = Instant::now();
    let run = synthetic::pass_run(
        store,
        None,
        &format!("why is svc-{i} slow?"),
        &format!("svc-{i}"),
    )
    .await;
    (started.elapsed(), run.handle.run_id)
}

async fn bench_backend(label: &str, store: &Store) {
    // Warm up connections and statement caches.
    for i in 0..5 {
        one_run(store, i).await;
    }
    let mut latencies = Vec::with_capacity(SINGLE_RUNS);
    let mut last_run = 0;
    let started = Instant::now();
    for i in 0..SINGLE_RUNS {
        let (d, id) = one_run(store, i).await;
        latencies.push(d);
        last_run = id;
    }
    let elapsed = started.elapsed();
    println!("{label}.single.runs={SINGLE_RUNS}");
    println!(
        "{label}.single.runs_per_sec={:.1}",
        SINGLE_RUNS as f64 / elapsed.as_secs_f64()
    );
    println!("{label}.single.median_ms={}", ms(median(latencies)));

    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for t in 0..CONCURRENCY {
        let store = store.clone();
        tasks.spawn(async move {
            let mut out = Vec::with_capacity(CONCURRENT_RUNS_PER_TASK);
            for i in 0..CONCURRENT_RUNS_PER_TASK {
                out.push(one_run(&store, t * 1000 + i).await.0);
            }
            out
        });
    }
    let latencies: Vec<Duration> = tasks.join_all().await.into_iter().flatten().collect();
    let elapsed = started.elapsed();
    let total = latencies.len();
    println!("{label}.concurrent{CONCURRENCY}.runs={total}");
    println!(
        "{label}.concurrent{CONCURRENCY}.runs_per_sec={:.1}",
        total as f64 / elapsed.as_secs_f64()
    );
    println!(
        "{label}.concurrent{CONCURRENCY}.median_ms={}",
        ms(median(latencies))
    );

    let mut loads = Vec::with_capacity(REPLAY_LOADS);
    let mut events = 0;
    for _ in 0..REPLAY_LOADS {
        let started = Instant::now();
        events = store
            .load_events(last_run)
            .await
            .map(|e| e.len())
            .unwrap_or(0);
        loads.push(started.elapsed());
    }
    println!("{label}.replay_load.events={events}");
    println!("{label}.replay_load.median_ms={}", ms(median(loads)));
}

fn main() {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start a runtime: {e}");
            return;
        }
    };
    rt.block_on(async {
        let dir = match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => {
                eprintln!("no temp dir: {e}");
                return;
            }
        };
        let url = format!("sqlite:{}", dir.path().join("bench.db").display());
        match Store::connect(&url).await {
            Ok(store) => {
                bench_backend("sqlite", &store).await;
                store.close().await;
            }
            Err(e) => eprintln!("sqlite: {e}"),
        }
        let year = format!("sqlite:{}", dir.path().join("year.db").display());
        year_of_runs("sqlite", &year).await;
        let Some(db) = mysql_support::TestDatabase::create("bench store").await else {
            println!("mysql.skipped=1");
            return;
        };
        match Store::connect(&db.url).await {
            Ok(store) => {
                bench_backend("mysql", &store).await;
                store.close().await;
            }
            Err(e) => eprintln!("mysql: {e}"),
        }
        if let Some(year) = mysql_support::TestDatabase::create("bench year").await {
            year_of_runs("mysql", &year.url).await;
        }
    });
}

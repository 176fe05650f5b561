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

use diagraph::store::Store;
use std::time::{Duration, Instant};

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
    });
}

//! Runs per second through the HTTP API (printed figures, not a timed
//! test).
//!
//! Two `diagraph serve` instances (in process, each with its own store
//! connection pool, as two processes would have) share one fresh MySQL
//! database; clients send `POST /api/chat` and wait for each answer, 32 at
//! a time, alternating servers. A run is the offline model on the shipped
//! pack: a full diagnosis with its steps, invocations and journal stored.
//! Figures, as `key=value` lines: runs per second and per-request latency
//! (median, p90) on MySQL with two servers, and on SQLite with one for
//! comparison; and, for each database, runs per second calling the engine
//! directly (the same runs and concurrency, no HTTP), which is what the
//! API's figure is to be read against: a run's cost is its writes. MySQL uses `DIAGRAPH_TEST_MYSQL_URL` (default
//! mysql://root@127.0.0.1:3306/test) and is skipped with a note when no
//! server answers.
//!
//! Run with `cargo bench --bench server`.

// A benchmark whose set-up fails should stop loudly, like a test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// The allocator the `diagraph` binary uses, so figures match the product.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../tests/helpers/mod.rs"]
mod helpers;
#[path = "../tests/store/mysql_db.rs"]
mod mysql_support;

use diagraph::engine::{Engine, RunRequest};
use diagraph::model::offline::OfflineModel;
use diagraph::server::{ServeOptions, bind, serve};
use diagraph::store::Store;
use diagraph::vocab::catalog::Catalog;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

const CONCURRENCY: usize = 32;
const REQUESTS: usize = 640;
const WARM_UP: usize = 32;

/// The shop pack's engine with the offline model, recording to `store`.
async fn engine(store: Arc<Store>) -> Engine {
    let pack = helpers::shop_pack();
    store.sync_knowledge(&pack).await.unwrap();
    let domains = store.knowledge_domains().await.unwrap();
    Engine::new(
        Arc::new(OfflineModel::new()),
        helpers::pack_registry(&pack),
        store,
    )
    .with_catalog(Catalog::new(
        domains,
        pack.skill_catalog(),
        pack.manifest.services.clone(),
    ))
}

struct Running {
    url: String,
    stop: oneshot::Sender<()>,
    done: tokio::task::JoinHandle<()>,
}

async fn start(db_url: &str) -> Running {
    let store = Arc::new(Store::connect(db_url).await.unwrap());
    let engine = engine(store.clone()).await;
    let options = ServeOptions {
        listen: "127.0.0.1:0".into(),
        max_concurrent_runs: CONCURRENCY * 2,
        ..ServeOptions::default()
    };
    let listener = bind(&options).await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = oneshot::channel::<()>();
    let done = tokio::spawn(async move {
        serve(listener, engine, store.clone(), &options, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
        store.close().await;
    });
    Running { url, stop, done }
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

/// `n` chat requests, `CONCURRENCY` at a time, spread over `urls`.
async fn drive(urls: &[String], n: usize) -> (Duration, Vec<Duration>) {
    let client = reqwest::Client::new();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..CONCURRENCY {
        let client = client.clone();
        let urls = urls.to_vec();
        let next = next.clone();
        workers.spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= n {
                    return latencies;
                }
                let url = format!("{}/api/chat", urls[i % urls.len()]);
                let t = Instant::now();
                let r = client
                    .post(url)
                    .json(&serde_json::json!({"question": format!("why is payment-service slow? {i}")}))
                    .send()
                    .await
                    .unwrap();
                assert!(r.status().is_success(), "HTTP {}", r.status());
                let body: serde_json::Value = r.json().await.unwrap();
                assert_eq!(body["status"], "SUCCESS", "{body}");
                latencies.push(t.elapsed());
            }
        });
    }
    let mut all = Vec::with_capacity(n);
    while let Some(l) = workers.join_next().await {
        all.extend(l.unwrap());
    }
    let elapsed = started.elapsed();
    all.sort();
    (elapsed, all)
}

/// The same runs with no HTTP in between: `engine.run` from 32 tasks on
/// one store, for the cost the API adds.
async fn direct(label: &str, db_url: &str) {
    let store = Arc::new(Store::connect(db_url).await.unwrap());
    let engine = engine(store.clone()).await;
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..CONCURRENCY {
        let engine = engine.clone();
        let next = next.clone();
        workers.spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= REQUESTS {
                    return;
                }
                let request = RunRequest::new(format!("why is payment-service slow? {i}"));
                let outcome = engine.run(request).await.unwrap();
                assert_eq!(outcome.end.status.as_str(), "SUCCESS");
            }
        });
    }
    while workers.join_next().await.is_some() {}
    println!(
        "{label}_direct_runs_per_s={:.0}",
        REQUESTS as f64 / started.elapsed().as_secs_f64()
    );
    store.close().await;
}

async fn bench(label: &str, db_url: &str, servers: usize) {
    let mut running = Vec::new();
    for _ in 0..servers {
        running.push(start(db_url).await);
    }
    let urls: Vec<String> = running.iter().map(|r| r.url.clone()).collect();
    drive(&urls, WARM_UP).await;
    let (elapsed, latencies) = drive(&urls, REQUESTS).await;
    println!(
        "{label}_servers={servers} {label}_concurrency={CONCURRENCY} {label}_requests={REQUESTS}"
    );
    println!(
        "{label}_runs_per_s={:.0}",
        REQUESTS as f64 / elapsed.as_secs_f64()
    );
    println!(
        "{label}_latency_p50_ms={} {label}_latency_p90_ms={}",
        ms(pct(&latencies, 0.5)),
        ms(pct(&latencies, 0.9))
    );
    for r in running {
        let _ = r.stop.send(());
        r.done.await.unwrap();
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        match mysql_support::TestDatabase::create("bench_server").await {
            Some(db) => {
                // Migrate once before the servers start.
                Store::connect(&db.url).await.unwrap().close().await;
                bench("mysql", &db.url, 2).await;
                direct("mysql", &db.url).await;
            }
            None => println!("mysql: skipped (no server)"),
        }
        let dir = tempfile::tempdir().unwrap();
        let sqlite = format!("sqlite:{}", dir.path().join("bench.db").display());
        bench("sqlite", &sqlite, 1).await;
        direct("sqlite", &sqlite).await;
    });
}

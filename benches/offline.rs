//! Benchmark: a full offline diagnosis through the engine on the shipped
//! shop pack, with the in-memory recorder (no persistence). Prints
//! `offline_run_ms_p50=X` (and p90/max) over a few questions.
//!
//! Run with `cargo bench --bench offline`.

// A benchmark whose set-up fails should stop loudly, like a test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// The allocator the `diagraph` binary uses, so figures match the product.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use diagraph::engine::{Engine, MemoryRecorder, RunRequest};
use diagraph::model::offline::OfflineModel;
use diagraph::tools::ToolRegistry;
use diagraph::tools::pack::{Pack, pack_tools};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

const QUESTIONS: &[&str] = &[
    "why is payment-service slow?",
    "is there a HighCPUUsage alert on payment-service?",
    "order-service 为什么下单超时？",
    "why is checkout failing?",
];
const ROUNDS: usize = 25;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/packs/shop");
    let pack = Arc::new(Pack::load(&dir).expect("shipped pack loads"));
    let mut registry = ToolRegistry::new();
    for t in pack_tools(pack.clone()) {
        registry.register(t);
    }
    let engine = Engine::new(
        Arc::new(OfflineModel::new()),
        registry,
        Arc::new(MemoryRecorder::new()),
    )
    .with_catalog(pack.catalog());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut samples: Vec<f64> = Vec::with_capacity(ROUNDS * QUESTIONS.len());
    rt.block_on(async {
        // Warm-up: lazily compiled regexes, index readers.
        for q in QUESTIONS {
            let _ = engine.run(RunRequest::new(*q)).await;
        }
        for _ in 0..ROUNDS {
            for q in QUESTIONS {
                let start = Instant::now();
                let outcome = engine.run(RunRequest::new(*q)).await.expect("run");
                samples.push(start.elapsed().as_secs_f64() * 1000.0);
                assert!(!outcome.end.answer.is_empty());
            }
        }
    });
    samples.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    println!("offline_run_ms_p50={:.3}", pct(0.5));
    println!("offline_run_ms_p90={:.3}", pct(0.9));
    println!("offline_run_ms_max={:.3}", pct(1.0));
    println!("runs={}", samples.len());
}

//! Engine throughput: runs per second through the real engine (prompt
//! rendering, parsers, Gatekeeper, projection, trace) with the scripted
//! model, a recorder that keeps nothing (no persistence; set
//! DIAGRAPH_BENCH_RECORDER=memory for the in-memory journal) and the shipped pack's tools in process.
//!
//! Prints exactly `runs_per_s_pass=N runs_per_s_retry=N`.

// A benchmark whose set-up fails should stop loudly, like a test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// The allocator the `diagraph` binary uses, so figures match the product.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use diagraph::engine::nodes::gatekeeper::GatekeeperRules;
use diagraph::engine::prompts::Prompts;
use diagraph::engine::{Engine, EngineConfig, MemoryRecorder, NullRecorder};
use diagraph::model::scripted::UncoveredModel;
use diagraph::scenario::Scenario;
use diagraph::tools::ToolRegistry;
use diagraph::tools::pack::Pack;
use diagraph::vocab::catalog::Catalog;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs per recorder: a fresh recorder per batch keeps memory flat.
const BATCH: usize = 500;

fn base() -> Engine {
    Engine {
        model: Arc::new(UncoveredModel),
        tools: Arc::new(ToolRegistry::new()),
        recorder: if std::env::var("DIAGRAPH_BENCH_RECORDER").as_deref() == Ok("memory") {
            Arc::new(MemoryRecorder::new())
        } else {
            Arc::new(NullRecorder::new())
        },
        catalog: Arc::new(Catalog::default()),
        prompts: Arc::new(Prompts::shipped()),
        rules: Arc::new(GatekeeperRules::shipped()),
        config: EngineConfig::default(),
    }
}

async fn runs_per_s(scenario: &Scenario, pack: &Arc<Pack>, budget: Duration) -> f64 {
    let started = Instant::now();
    let mut runs = 0usize;
    while started.elapsed() < budget {
        let engine = scenario.engine_with_pack(&base(), Arc::new(UncoveredModel), pack.clone());
        for _ in 0..BATCH {
            let out = engine.run(scenario.request()).await.expect("run");
            assert_eq!(
                Some(out.end.trace.route()),
                scenario.expect_route,
                "{}",
                scenario.name
            );
            runs += 1;
        }
    }
    runs as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pack = Arc::new(Pack::load(&root.join("fixtures/packs/shop")).expect("pack"));
    let pass = Scenario::load(&root.join("fixtures/scenarios/01_pass.toml")).expect("scenario");
    let retry = Scenario::load(&root.join("fixtures/scenarios/23_evidence_retry_pass.toml"))
        .expect("scenario");
    let secs = std::env::var("DIAGRAPH_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let budget = Duration::from_secs_f64(secs);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        // Warm-up (allocator, lazy statics).
        runs_per_s(&pass, &pack, Duration::from_millis(200)).await;
        let p = runs_per_s(&pass, &pack, budget).await;
        let r = runs_per_s(&retry, &pack, budget).await;
        println!("runs_per_s_pass={p:.0} runs_per_s_retry={r:.0}");
    });
}

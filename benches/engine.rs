//! Engine throughput: runs per second through the real engine (prompt
//! rendering, parsers, Gatekeeper, projection, trace) with the scripted
//! model, a recorder that keeps nothing (no persistence; set
//! DIAGRAPH_BENCH_RECORDER=memory for the in-memory journal) and the shipped pack's tools in process.
//!
//! Then the Gatekeeper alone: every binding of a realistic Executor output
//! (alerts, log lines with timestamps and negations, Chinese text, a
//! no-evidence ref, one cheat per rule class) checked against its
//! invocations, fresh each round as in a run (no warm ref cache).
//!
//! Prints exactly `runs_per_s_pass=N runs_per_s_retry=N` and then
//! `gatekeeper_bindings_per_s=N`.

// A benchmark whose set-up fails should stop loudly, like a test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// The allocator the `diagraph` binary uses, so figures match the product.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use diagraph::engine::nodes::gatekeeper::{GatekeeperRules, check};
use diagraph::engine::{Engine, MemoryRecorder, NullRecorder};
use diagraph::model::scripted::UncoveredModel;
use diagraph::scenario::Scenario;
use diagraph::tools::ToolRegistry;
use diagraph::tools::pack::Pack;
use diagraph::vocab::contracts::{Claim, EvidenceBinding, ExecutorEvidence};
use diagraph::vocab::record::Recorder;
use diagraph::vocab::tool::{EvidenceRef, EvidenceStatus, RetrievalDetails, ToolInvocation};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs per recorder: a fresh recorder per batch keeps memory flat.
const BATCH: usize = 500;

fn base() -> Engine {
    let recorder: Arc<dyn Recorder> =
        if std::env::var("DIAGRAPH_BENCH_RECORDER").as_deref() == Ok("memory") {
            Arc::new(MemoryRecorder::new())
        } else {
            Arc::new(NullRecorder::new())
        };
    Engine::new(Arc::new(UncoveredModel), ToolRegistry::new(), recorder)
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

fn invocation(id: i64, tool: &str, refs: &[(&str, &str)]) -> ToolInvocation {
    ToolInvocation {
        id,
        run_id: 1,
        step_id: None,
        seq: 0,
        tool_name: tool.into(),
        input_params: serde_json::Value::Null,
        output_preview: String::new(),
        output_length: 0,
        is_truncated: false,
        retrieval_details: RetrievalDetails {
            evidence_status: if refs.iter().all(|(p, _)| *p == "$.no_evidence") {
                EvidenceStatus::NoEvidence
            } else {
                EvidenceStatus::Supported
            },
            evidence_refs: refs
                .iter()
                .map(|(p, t)| EvidenceRef {
                    raw_path: (*p).into(),
                    text: (*t).into(),
                })
                .collect(),
            deduped_from: None,
            blocked: false,
            retrieved_domains: vec![],
            source: Default::default(),
            buckets: None,
        },
        dedup_reason: None,
        duration_ms: 0,
        success: true,
        error_message: None,
    }
}

/// An Executor output of 12 bindings over 3 invocations: honest quotes
/// (with timestamps, paraphrased spacing, Chinese) and one cheat of each
/// kind (dropped negation, swapped number, spliced refs, lone word).
fn gatekeeper_case() -> (ExecutorEvidence, Vec<ToolInvocation>) {
    let alerts = invocation(
        1,
        "query_metrics",
        &[
            (
                "$.alerts[0]",
                "alert HighCPUUsage service=payment-service severity=critical state=firing value=92 for=25m summary=CPU usage above 90% for 10 minutes",
            ),
            (
                "$.alerts[1]",
                "alert HighRequestLatency service=order-service severity=warning state=firing value=2.3 quantile=0.99",
            ),
        ],
    );
    let logs = invocation(
        2,
        "query_logs",
        &[
            (
                "$.logs[0]",
                "2026-07-08 23:06:03 ERROR order-service HikariPool-1 - Connection is not available, request timed out after 30000ms",
            ),
            (
                "$.logs[1]",
                "2026-07-08 23:06:09 WARN order-service slow query on orders took 2300ms",
            ),
            (
                "$.logs[2]",
                "2026-07-08 23:07:12 ERROR 订单服务 连接池 HikariPool-1 不可用，请求在 30000ms 后超时",
            ),
        ],
    );
    let none = invocation(
        3,
        "query_logs",
        &[(
            "$.no_evidence",
            "query_logs returned no evidence; evidence_status=no_evidence; query=service=inventory-service level=ERROR; total=0",
        )],
    );
    let b = |inv: i64, tool: &str, path: &str, excerpt: &str| EvidenceBinding {
        tool_name: tool.into(),
        source_invocation_id: Some(inv),
        raw_path: Some(path.into()),
        evidence_excerpt: excerpt.into(),
        ..Default::default()
    };
    let claim = |id: &str, ty: &str, bindings: Vec<EvidenceBinding>| Claim {
        claim_id: id.into(),
        claim_type: ty.into(),
        claim_text: "text".into(),
        support_level: "direct".into(),
        evidence_bindings: bindings,
    };
    let m = "query_metrics";
    let l = "query_logs";
    let out = ExecutorEvidence {
        answer_version: "executor_evidence_v2".into(),
        claims: vec![
            claim(
                "c1",
                "observation",
                vec![
                    b(
                        1,
                        m,
                        "$.alerts[0]",
                        "alertname=HighCPUUsage service=payment-service severity=critical state=firing value=92",
                    ),
                    b(
                        1,
                        m,
                        "$.alerts[1]",
                        "HighRequestLatency service=order-service state=firing value=2.3",
                    ),
                ],
            ),
            claim(
                "c2",
                "symptom",
                vec![
                    b(
                        2,
                        l,
                        "$.logs[0]",
                        "2026-07-08T23:06:03Z ERROR order-service HikariPool-1 - Connection is not available",
                    ),
                    b(
                        2,
                        l,
                        "$.logs[1]",
                        "23:06:09 WARN order-service slow query on orders took 2300ms",
                    ),
                    b(
                        2,
                        l,
                        "$.logs[2]",
                        "订单服务 连接池 HikariPool-1 不可用，请求在 ３００００ms 后超时",
                    ),
                ],
            ),
            claim(
                "c3",
                "negative_observation",
                vec![b(3, l, "$.no_evidence", "query_logs returned no evidence")],
            ),
            claim(
                "c4",
                "observation",
                vec![
                    b(
                        2,
                        l,
                        "$.logs[0]",
                        "HikariPool-1 - Connection is available, request timed out after 30000ms",
                    ),
                    b(
                        1,
                        m,
                        "$.alerts[0]",
                        "HighCPUUsage service=payment-service state=firing value=97",
                    ),
                    b(
                        2,
                        l,
                        "$.logs[1]",
                        "slow query on orders took 2300ms ... Connection is not available",
                    ),
                    b(2, l, "$.logs[0]", "ERROR"),
                    b(
                        1,
                        m,
                        "$.alerts[1]",
                        "HighRequestLatency service=payment-service state=resolved",
                    ),
                    b(2, l, "$.logs[2]", "连接池 HikariPool-1 可用"),
                ],
            ),
        ],
        ..Default::default()
    };
    (out, vec![alerts, logs, none])
}

fn bindings_per_s(budget: Duration) -> f64 {
    let (out, invs) = gatekeeper_case();
    let rules = GatekeeperRules::shipped();
    let per_round: usize = out.claims.iter().map(|c| c.evidence_bindings.len()).sum();
    let first = check(&out, &invs, &rules);
    assert_eq!(first.verified_binding_count(), 6, "{:?}", first.errors);
    let started = Instant::now();
    let mut bindings = 0usize;
    while started.elapsed() < budget {
        for _ in 0..100 {
            let r = check(&out, &invs, &rules);
            bindings += r.checked_bindings.len();
        }
    }
    assert_eq!(bindings % per_round, 0);
    bindings as f64 / started.elapsed().as_secs_f64()
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
    bindings_per_s(Duration::from_millis(200));
    let g = bindings_per_s(budget);
    println!("gatekeeper_bindings_per_s={g:.0}");
}

//! A diagnosis run against a real Prometheus: the engine, the Gatekeeper
//! and the OpenAI provider (a fake LLM behind an in-process
//! chat-completions server) with query_metrics served by Prometheus. The
//! run's query_metrics invocation carries real alert refs, the Executor's
//! binding to one passes the Gatekeeper, and the verdict is PASS.

use crate::fake_llm::{engine, fake_llm, openai, shop};
use crate::openai_mock::MockServer;
use crate::prometheus_server::PromServer;
use diagraph::engine::RunRequest;
use diagraph::tools::prometheus::{PrometheusConfig, PrometheusMetrics};
use diagraph::vocab::contracts::Verdict;
use std::sync::Arc;
use std::time::Duration;

#[tokio::test]
async fn a_run_against_a_real_prometheus_passes_the_gatekeeper() {
    let Some(prom) = PromServer::start().await else {
        return;
    };
    let llm = MockServer::start_with(vec![], fake_llm("payment-service")).await;
    let (mut registry, services) = shop();
    registry.register(Arc::new(
        PrometheusMetrics::new(PrometheusConfig::new(&prom.url)).unwrap(),
    ));
    let (engine, recorder) = engine(
        openai(&llm.base_url, Duration::from_secs(5)),
        registry,
        services,
    );
    let outcome = engine
        .run(RunRequest::new(
            "Is HighCPUUsage firing on payment-service?",
        ))
        .await
        .unwrap();

    let data = recorder.snapshot();
    let inv: Vec<_> = data
        .invocations
        .iter()
        .filter(|i| i.run_id == outcome.run_id && i.tool_name == "query_metrics")
        .collect();
    assert_eq!(inv.len(), 1, "{:?}", data.invocations);
    assert!(inv[0].success);
    assert!(
        inv[0].output_preview.contains("\"source\":\"prometheus\""),
        "{}",
        inv[0].output_preview
    );
    let refs = &inv[0].retrieval_details.evidence_refs;
    assert_eq!(refs[0].raw_path, "$.alerts[0]");
    assert!(
        refs[0]
            .text
            .contains("alertname=HighCPUUsage service=payment-service"),
        "{}",
        refs[0].text
    );
    // Prometheus' clock, not the shop pack's 2026-07-08 evening.
    assert!(
        !refs[0].text.contains("since=2026-07-08"),
        "{}",
        refs[0].text
    );

    assert_eq!(outcome.verdicts.ceiling, Some(Verdict::Pass), "{outcome:?}");
    assert_eq!(outcome.end.effective_verdict, Some(Verdict::Pass));
    assert!(!outcome.end.degraded);
    assert!(
        outcome.end.answer.contains("HighCPUUsage"),
        "{}",
        outcome.end.answer
    );
}

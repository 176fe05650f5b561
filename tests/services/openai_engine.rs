//! Whole runs through the engine with the OpenAI-compatible provider: a
//! fake LLM behind an in-process chat-completions server plays the four
//! roles from the DTOs it receives, tools are the shop pack's (and, in
//! `prometheus_engine`, a real Prometheus). Also: an unreachable base
//! URL degrades the run quickly with the reason in the trace.

use crate::fake_llm::{KEY, dto, engine, fake_llm, openai, shop, shop_engine, usage_reply};
use crate::helpers::free_port;
use crate::openai_mock::{MockServer, Reply};
use diagraph::engine::RunRequest;
use diagraph::engine::prompts::Prompts;
use diagraph::vocab::contracts::Verdict;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_pass_run_with_tool_calls_over_the_openai_protocol() {
    let server = MockServer::start_with(vec![], fake_llm("payment-service")).await;
    let (engine, recorder) = shop_engine(&server.base_url);
    let outcome = engine
        .run(RunRequest::new(
            "Is HighCPUUsage firing on payment-service?",
        ))
        .await
        .unwrap();
    assert_eq!(
        outcome.end.effective_verdict,
        Some(Verdict::Pass),
        "{outcome:?}"
    );
    assert!(!outcome.end.degraded);
    assert!(
        outcome.end.answer.contains("HighCPUUsage"),
        "{}",
        outcome.end.answer
    );

    let data = recorder.snapshot();
    let inv: Vec<_> = data
        .invocations
        .iter()
        .filter(|i| i.run_id == outcome.run_id)
        .collect();
    assert_eq!(inv.len(), 1);
    assert_eq!(inv[0].tool_name, "query_metrics");
    assert!(
        inv[0].retrieval_details.evidence_refs[0]
            .text
            .contains("alertname=HighCPUUsage")
    );

    // Token usage recorded on every agent step (planner 250, executor 320 + 250, ...).
    let steps: Vec<_> = data
        .steps
        .iter()
        .filter(|s| s.run_id == outcome.run_id)
        .collect();
    assert_eq!(steps.len(), 5, "{steps:?}");
    assert!(
        steps.iter().all(|s| s.token_count > 0 && s.error.is_none()),
        "{steps:?}"
    );
    assert_eq!(
        steps.iter().map(|s| s.token_count).sum::<u64>(),
        250 + 320 + 250 + 250 + 250
    );

    // The rendered prompt reached the provider, and the tools as functions.
    let got = server.received();
    let system = got[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("# Role: Planner"));
    // The input is sent once: in the user message, not in the system prompt.
    assert!(!system.contains("Is HighCPUUsage firing on payment-service?"));
    let request_text = got[0].body["messages"].to_string();
    assert_eq!(
        request_text
            .matches("Is HighCPUUsage firing on payment-service?")
            .count(),
        1,
        "{request_text}"
    );
    let executor = got.iter().find(|r| r.body.get("tools").is_some()).unwrap();
    let names: Vec<&str> = executor.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(
        names.contains(&"query_metrics") && names.contains(&"query_logs"),
        "{names:?}"
    );
    assert!(
        got.iter()
            .all(|r| r.authorization.as_deref() == Some(&*format!("Bearer {KEY}")))
    );

    // Prompt versions are content hashes in self_evaluation; no key anywhere.
    let versions = Prompts::shipped().versions();
    let eval = outcome.self_evaluation.to_value().to_string();
    assert!(eval.contains(versions["executor"].as_str()), "{eval}");
    let everything = format!(
        "{:?} {}",
        data.events,
        serde_json::to_string(&data.steps).unwrap()
    );
    assert!(!everything.contains(KEY));
}

#[tokio::test]
async fn an_unreachable_base_url_degrades_quickly_with_the_reason_in_the_trace() {
    let port = free_port();
    let (registry, services) = shop();
    let (engine, recorder) = engine(
        openai(
            &format!("http://127.0.0.1:{port}/v1"),
            Duration::from_secs(2),
        ),
        registry,
        services,
    );
    let started = Instant::now();
    let outcome = engine
        .run(RunRequest::new("why is payment-service slow?"))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(outcome.end.degraded, "{outcome:?}");
    assert_eq!(outcome.end.effective_verdict, None);
    let steps = recorder.snapshot().steps;
    let planner_errors: Vec<&str> = steps
        .iter()
        .filter(|s| s.agent_name == "planner")
        .filter_map(|s| s.error.as_deref())
        .collect();
    assert_eq!(
        planner_errors.len(),
        2,
        "one technical retry, then fallback"
    );
    assert!(
        planner_errors
            .iter()
            .all(|e| e.contains("connection") && e.contains(&port.to_string())),
        "{planner_errors:?}"
    );
    let trace = serde_json::to_string(&outcome.end.trace).unwrap();
    assert!(trace.contains("planner_failed"), "{trace}");
}

#[tokio::test]
async fn malformed_provider_answers_lead_to_node_statuses_not_panics() {
    // Planner: empty choices twice -> RETRYABLE_FAILED, retry, fallback.
    let empty = Reply::json(200, json!({"choices": []}));
    let server = MockServer::start(vec![empty.clone(), empty]).await;
    let (e, _) = shop_engine(&server.base_url);
    let outcome = e
        .run(RunRequest::new("why is payment-service slow?"))
        .await
        .unwrap();
    assert!(outcome.end.degraded);
    assert_eq!(server.received().len(), 2);

    // Planner truncated at the token limit, then a valid plan; the
    // Executor's tool call has broken JSON arguments -> the run degrades.
    let cut = usage_reply(
        json!({"role": "assistant", "content": "{\"selected_skill\": nu"}),
        "length",
        10,
        10,
    );
    let broken_call = usage_reply(
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "query_metrics", "arguments": "{\"service\": \"payment"}}]}),
        "tool_calls",
        10,
        10,
    );
    let server = MockServer::start_with(vec![cut], {
        let llm = fake_llm("payment-service");
        Arc::new(move |body: &Value| {
            if dto(body).get("planner_plan").is_some()
                && !body["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|m| m["role"] == "tool")
            {
                return broken_call.clone();
            }
            llm(body)
        })
    })
    .await;
    let (e, _) = shop_engine(&server.base_url);
    let outcome = e
        .run(RunRequest::new("why is payment-service slow?"))
        .await
        .unwrap();
    let trace = serde_json::to_string(&outcome.end.trace).unwrap();
    assert!(trace.contains("planner_technical_retry"), "{trace}");
    // Whatever the engine makes of the broken call, it is an answer, not a crash.
    assert!(!outcome.end.answer.is_empty());
}

#[tokio::test]
async fn the_run_deadline_ends_a_slow_run_in_its_fallback() {
    // Every answer takes 3 s; the run may take 1 s.
    let slow = Reply::json(200, json!({"choices": []})).delayed(Duration::from_secs(3));
    let server = MockServer::start(vec![slow.clone(), slow.clone(), slow]).await;
    let (mut engine, recorder) = shop_engine(&server.base_url);
    engine.config.run_deadline = Some(Duration::from_secs(1));
    let started = Instant::now();
    let outcome = engine
        .run(RunRequest::new("why is payment-service slow?"))
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );
    assert!(outcome.end.degraded, "{outcome:?}");
    let failure = outcome.end.failure.clone().unwrap();
    assert_eq!(failure.class.as_str(), "timeout", "{failure:?}");
    assert!(
        failure.message.contains("run deadline of 1 s"),
        "{failure:?}"
    );
    let errors: Vec<String> = recorder
        .snapshot()
        .steps
        .iter()
        .filter_map(|s| s.error.clone())
        .collect();
    assert!(
        errors.iter().all(|e| e.contains("run deadline")),
        "{errors:?}"
    );
}

/// A gateway that refuses `stream_options` (as some OpenAI-compatible
/// proxies do): with `stream_usage = false` a streaming model's requests
/// leave it out and the run passes; with the default every call is
/// refused and the run degrades.
#[tokio::test]
async fn stream_usage_off_leaves_stream_options_out_for_gateways_that_refuse_it() {
    use diagraph::config::ModelConfig;
    use diagraph::model::openai::{ApiKey, OpenAiConfig, OpenAiModel};
    let llm = fake_llm("payment-service");
    let gateway: crate::openai_mock::Responder = Arc::new(move |body: &Value| {
        if body.get("stream_options").is_some() {
            return Reply::error(
                400,
                "Unrecognized request argument supplied: stream_options",
                "invalid_request_error",
            );
        }
        llm(body)
    });
    for stream_usage in [false, true] {
        let server = MockServer::start_with(vec![], gateway.clone()).await;
        let section: ModelConfig = toml::from_str(&format!(
            "provider = \"openai\"\nbase_url = {:?}\nmodel = \"fake-llm\"\n\
             streaming = true\nstream_usage = {stream_usage}\n",
            server.base_url
        ))
        .unwrap();
        let model = OpenAiModel::new(OpenAiConfig {
            api_key: Some(ApiKey::new(KEY)),
            ..OpenAiConfig::from_config(&section)
        })
        .unwrap();
        let (registry, services) = shop();
        let (engine, _) = engine(model, registry, services);
        let outcome = engine
            .run(RunRequest::new(
                "Is HighCPUUsage firing on payment-service?",
            ))
            .await
            .unwrap();
        let sent = server.received();
        assert!(!sent.is_empty());
        for r in &sent {
            assert_eq!(r.body["stream"], json!(true));
            assert_eq!(
                r.body.get("stream_options"),
                stream_usage
                    .then(|| json!({"include_usage": true}))
                    .as_ref(),
                "stream_usage = {stream_usage}"
            );
        }
        if stream_usage {
            assert!(outcome.end.degraded, "{outcome:?}");
        } else {
            assert_eq!(outcome.end.effective_verdict, Some(Verdict::Pass));
            assert!(!outcome.end.degraded, "{outcome:?}");
        }
    }
}

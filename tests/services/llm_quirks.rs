//! The quirks of real OpenAI-compatible servers, one test each, against
//! aimock (an independent mock from npm) and, where a server rejects
//! requests by what they carry, the fault proxy in front of it.

use crate::aimock::{Aimock, on_user};
use crate::fake_llm::{KEY, shop};
use crate::fault_proxy::{FaultProxy, Quirk};
use crate::helpers::base_engine;
use diagraph::config::{ModelConfig, Provider};
use diagraph::engine::{Engine, MemoryRecorder, RunRequest};
use diagraph::model::openai::{ApiKey, OpenAiConfig, OpenAiModel};
use diagraph::model::{ChatModel, ChatRequest, ChatResponse, Message, ModelError, ModelErrorKind};
use diagraph::vocab::catalog::Catalog;
use diagraph::vocab::dto::ExecutorInput;
use serde_json::{Value, json};

use std::sync::Arc;
use std::time::Duration;

/// A provider config for the aimock server (also the streaming tests').
pub(crate) fn config(base_url: &str, model: &str) -> OpenAiConfig {
    OpenAiConfig {
        api_key: Some(ApiKey::new(KEY)),
        timeout: Duration::from_secs(10),
        ..OpenAiConfig::new(base_url, model)
    }
}

/// A Planner-like request with one user message.
pub(crate) fn ask(user: &str) -> ChatRequest {
    ChatRequest {
        attempt: 1,
        input: ExecutorInput::default().into(),
        messages: vec![
            Message::System {
                content: "# Role: Planner".into(),
            },
            Message::User {
                content: user.into(),
            },
        ],
        tools: vec![],
        tool_choice: Default::default(),
        script: Default::default(),
    }
}

/// One call of a model on `cfg` with the request [`ask`] makes of `user`.
pub(crate) async fn chat_once(cfg: OpenAiConfig, user: &str) -> Result<ChatResponse, ModelError> {
    OpenAiModel::new(cfg).unwrap().chat(&ask(user)).await
}

/// An engine on `cfg` over the shop tools, recording in memory (also the
/// streaming tests').
pub(crate) fn engine_on(cfg: OpenAiConfig) -> (Engine, Arc<MemoryRecorder>) {
    let (registry, services) = shop();
    let recorder = Arc::new(MemoryRecorder::new());
    let engine = Engine {
        model: Arc::new(OpenAiModel::new(cfg).unwrap()),
        tools: Arc::new(registry),
        catalog: Arc::new(Catalog::new(vec![], vec![], services)),
        ..base_engine(recorder.clone())
    };
    (engine, recorder)
}

fn role(name: &str) -> Value {
    json!({"systemMessage": format!("# Role: {name}")})
}

pub(crate) const PLAN: &str = r#"{"selected_skill": null, "selection_reason": "no skill needed",
  "plan": ["Check the alerts of payment-service"], "reasoning": "alerts first",
  "queries": [{"tool": "query_metrics", "arguments": {"service": "payment-service"}, "purpose": "alerts"}]}"#;

pub(crate) const NO_CLAIMS: &str = r#"{"answer_version": "executor_evidence_v2", "claims": [],
  "hypotheses": [], "recommended_actions": [], "missing_info": ["nothing bound yet"]}"#;

/// Aimock answering "qwen3" behind the fault proxy as DashScope's qwen3
/// with thinking on: non-streaming calls must set `enable_thinking` to
/// false. None when aimock cannot run here.
pub(crate) async fn qwen3_behind_proxy(test: &str) -> Option<(Aimock, FaultProxy)> {
    let mock = Aimock::start(
        test,
        json!([on_user("qwen3", json!({"content": "{\"ok\": true}"}))]),
    )?;
    let quirk = Quirk::RequireUnlessStreaming("enable_thinking", json!(false));
    let proxy = FaultProxy::start(&mock.base_url(), vec![quirk]).await;
    Some((mock, proxy))
}

#[tokio::test]
async fn temperature_is_omitted_unless_set_so_reasoning_models_answer() {
    let Some(mock) = Aimock::start(
        "temperature_is_omitted_unless_set_so_reasoning_models_answer",
        json!([on_user("temperature", json!({"content": "{\"ok\": true}"}))]),
    ) else {
        return;
    };
    let proxy = FaultProxy::start(&mock.base_url(), vec![Quirk::RejectTemperature]).await;
    let model = OpenAiModel::new(config(&proxy.base_url, "o3-mini")).unwrap();
    let r = model.chat(&ask("temperature")).await.unwrap();
    assert_eq!(r.content.as_deref(), Some("{\"ok\": true}"));
    assert!(proxy.received()[0].get("temperature").is_none());

    // Set, it is sent: the reasoning model's 400 is a non-retryable error
    // with the server's own words.
    let mut cfg = config(&proxy.base_url, "o3-mini");
    cfg.temperature = Some(0.0);
    let e = chat_once(cfg, "temperature").await.unwrap_err();
    assert_eq!(e.kind, ModelErrorKind::BadRequest, "{e}");
    assert!(!e.is_retryable());
    assert!(
        e.message.contains("'temperature' does not support 0"),
        "{e}"
    );
    assert_eq!(proxy.received()[1]["temperature"], json!(0.0));
}

#[tokio::test]
async fn extra_body_carries_the_field_a_server_requires() {
    let Some((mock, proxy)) =
        qwen3_behind_proxy("extra_body_carries_the_field_a_server_requires").await
    else {
        return;
    };
    let e = chat_once(config(&proxy.base_url, "qwen3-32b"), "qwen3")
        .await
        .unwrap_err();
    assert_eq!(e.kind, ModelErrorKind::BadRequest);
    assert!(e.message.contains("enable_thinking"), "{e}");

    let mut cfg = config(&proxy.base_url, "qwen3-32b");
    cfg.extra_body
        .insert("enable_thinking".into(), json!(false));
    cfg.max_tokens = Some(512);
    cfg.max_tokens_field = diagraph::config::MaxTokensField::MaxCompletionTokens;
    let r = chat_once(cfg, "qwen3").await.unwrap();
    assert_eq!(r.content.as_deref(), Some("{\"ok\": true}"));
    let sent = &proxy.received()[1];
    assert_eq!(sent["enable_thinking"], json!(false));
    assert_eq!(sent["max_completion_tokens"], json!(512));
    assert!(sent.get("max_tokens").is_none());
    // What reached the mock is the same body.
    assert_eq!(mock.received().await[0]["enable_thinking"], json!(false));
}

#[tokio::test]
async fn reasoning_prefix_and_fenced_json_are_stripped_and_recorded() {
    let planner = format!(
        "<think>\nThe question names payment-service {{a brace in thought}}; alerts first.\n</think>\n\nHere is my plan:\n```json\n{PLAN}\n```"
    );
    let executor_final = format!("I checked the alerts; nothing to bind yet.\n\n{NO_CLAIMS}");
    let mut executor_call = role("Executor");
    executor_call["hasToolResult"] = json!(false);
    let mut executor_done = role("Executor");
    executor_done["hasToolResult"] = json!(true);
    let Some(mock) = Aimock::start(
        "reasoning_prefix_and_fenced_json_are_stripped_and_recorded",
        json!([
            {"match": role("Planner"), "response": {"content": planner}},
            {"match": executor_call, "response": {"toolCalls": [
                {"name": "query_metrics", "arguments": {"service": "payment-service"}}]}},
            {"match": executor_done, "response": {"content": executor_final,
                "reasoning": "The alert list came back; I will not invent bindings."}},
        ]),
    ) else {
        return;
    };
    let (engine, recorder) = engine_on(config(&mock.base_url(), "deepseek-reasoner"));
    let outcome = engine
        .run(RunRequest::new(
            "Is HighCPUUsage firing on payment-service?",
        ))
        .await
        .unwrap();
    // Planner and Executor both completed on the first attempt: the
    // reasoning did not make either answer invalid.
    let hops: Vec<(String, String, String)> = outcome
        .end
        .trace
        .transitions
        .iter()
        .map(|t| {
            (
                t.from.to_string(),
                t.to.to_string(),
                t.reason_code.to_string(),
            )
        })
        .collect();
    let hop = |from: &str, to: &str| (from.to_string(), to.to_string(), "completed".to_string());
    assert!(hops.contains(&hop("planner", "executor")), "{hops:?}");
    assert!(hops.contains(&hop("executor", "gatekeeper")), "{hops:?}");

    let data = recorder.snapshot();
    // The tool work is kept: one recorded invocation.
    assert_eq!(data.invocations.len(), 1, "{:?}", data.invocations);
    let planner_step = data
        .steps
        .iter()
        .find(|s| s.agent_name == "planner")
        .unwrap();
    assert!(
        planner_step.thought.contains("alerts first.")
            && planner_step.thought.contains("Here is my plan:"),
        "{}",
        planner_step.thought
    );
    // The raw answer, reasoning included, stays the step's output.
    assert!(planner_step.model_output.starts_with("<think>"));
    let last = data
        .steps
        .iter()
        .rfind(|s| s.agent_name == "executor")
        .unwrap();
    assert!(
        last.thought.contains("I will not invent bindings")
            && last.thought.contains("I checked the alerts"),
        "{}",
        last.thought
    );
}

#[tokio::test]
async fn the_forced_last_turn_keeps_the_tools_with_tool_choice_none() {
    let Some(mock) = Aimock::start(
        "the_forced_last_turn_keeps_the_tools_with_tool_choice_none",
        json!([
            {"match": role("Planner"), "response": {"content": PLAN}},
            // An Executor that never stops asking for tools.
            {"match": role("Executor"), "response": {"toolCalls": [
                {"name": "query_metrics", "arguments": {"service": "payment-service"}}]}},
        ]),
    ) else {
        return;
    };
    let (mut engine, _) = engine_on(config(&mock.base_url(), "gpt-4o-mini"));
    engine.config.max_tool_calls = 1;
    engine
        .run(RunRequest::new("why is payment-service slow?"))
        .await
        .unwrap();
    let got = mock.received().await;
    let executor: Vec<&Value> = got
        .iter()
        .filter(|b| {
            b["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .starts_with("# Role: Executor")
        })
        .collect();
    assert_eq!(executor.len(), 2, "one tool turn, then the forced answer");
    assert_eq!(executor[0]["tool_choice"], "auto");
    let forced = executor[1];
    assert_eq!(forced["tool_choice"], "none");
    assert!(forced["tools"].as_array().is_some_and(|t| !t.is_empty()));
    assert!(
        forced["messages"]
            .to_string()
            .contains("tool budget for this round is spent")
    );
}

#[tokio::test]
async fn a_base_url_query_string_is_kept_and_its_secret_masked() {
    let Some(mock) = Aimock::start(
        "a_base_url_query_string_is_kept_and_its_secret_masked",
        json!([on_user("query", json!({"content": "{\"ok\": true}"}))]),
    ) else {
        return;
    };
    let base = format!(
        "{}?api-version=2024-10-21&api_key=SECRET-IN-URL",
        mock.base_url()
    );
    let model = OpenAiModel::new(config(&base, "gpt-4o-mini")).unwrap();
    model.chat(&ask("query")).await.unwrap();
    let (path, _) = &mock.journal().await[0];
    assert_eq!(
        path,
        "/v1/chat/completions?api-version=2024-10-21&api_key=SECRET-IN-URL"
    );
    let shown = model.model_for(diagraph::vocab::agent::AgentRole::Planner);
    assert!(
        !shown.contains("SECRET-IN-URL") && shown.contains("api_key=***"),
        "{shown}"
    );

    // A failure names the masked URL, never the secret.
    let port = crate::helpers::free_port();
    let dead = format!("http://127.0.0.1:{port}/v1?api_key=SECRET-IN-URL");
    let e = chat_once(config(&dead, "m"), "query").await.unwrap_err();
    assert_eq!(e.kind, ModelErrorKind::Connection);
    assert!(!e.message.contains("SECRET-IN-URL"), "{e}");
}

fn rate_limited(retry_after_secs: u64) -> Value {
    json!({"error": {"message": "Rate limit reached for requests", "type": "rate_limit_error",
        "code": "rate_limit_exceeded"}, "status": 429, "retryAfter": retry_after_secs})
}

#[tokio::test]
async fn retry_after_is_honoured_up_to_the_cap() {
    let fixtures = json!([
        {"match": {"userMessage": "retry", "sequenceIndex": 0}, "response": rate_limited(2)},
        {"match": {"userMessage": "retry", "sequenceIndex": 1}, "response": {"content": "{\"ok\": 1}"}},
    ]);
    let Some(mock) = Aimock::start("retry_after_is_honoured_up_to_the_cap", fixtures.clone())
    else {
        return;
    };
    // The server asks for 2 s: waited in full (the old provider cut it to 2 s
    // at most; the default cap is 30 s).
    let started = std::time::Instant::now();
    let r = chat_once(config(&mock.base_url(), "gpt-4o-mini"), "retry")
        .await
        .unwrap();
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(2) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("back-off 2000 ms (Retry-After)")),
        "{:?}",
        r.notes
    );

    // A cap of 1 s: waited 1 s, and the note says it was capped.
    let Some(mock) = Aimock::start("retry_after_is_honoured_up_to_the_cap", fixtures) else {
        return;
    };
    let mut cfg = config(&mock.base_url(), "gpt-4o-mini");
    cfg.max_rate_limit_backoff = Duration::from_secs(1);
    let started = std::time::Instant::now();
    let r = chat_once(cfg, "retry").await.unwrap();
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_millis(1900),
        "{waited:?}"
    );
    assert!(
        r.notes.iter().any(|n| n.contains("capped at 1000 ms")),
        "{:?}",
        r.notes
    );
}

#[tokio::test]
async fn a_retry_after_beyond_the_call_budget_is_honoured_by_the_graph_with_back_off() {
    let fixtures = json!([
        {"match": {"systemMessage": "# Role: Planner", "sequenceIndex": 0}, "response": rate_limited(1)},
        {"match": {"systemMessage": "# Role: Planner", "sequenceIndex": 1}, "response": {"content": PLAN}},
    ]);
    let Some(mock) = Aimock::start(
        "a_retry_after_beyond_the_call_budget_is_honoured_by_the_graph_with_back_off",
        fixtures,
    ) else {
        return;
    };
    // The call may take 500 ms: the 1 s Retry-After does not fit, so the
    // provider gives it to the graph, which waits it before its retry.
    let mut cfg = config(&mock.base_url(), "gpt-4o-mini");
    cfg.timeout = Duration::from_millis(500);
    let (mut engine, recorder) = engine_on(cfg);
    engine.config.retry_backoff = Duration::from_millis(100);
    let outcome = engine
        .run(RunRequest::new("why is payment-service slow?"))
        .await
        .unwrap();
    let hops = format!("{:?}", outcome.end.trace.transitions);
    assert!(hops.contains("PlannerTechnicalRetry"), "{hops}");
    let steps = recorder.snapshot().steps;
    let planner: Vec<_> = steps.iter().filter(|s| s.agent_name == "planner").collect();
    assert_eq!(planner.len(), 2);
    assert!(
        planner[0]
            .error
            .as_deref()
            .unwrap_or("")
            .contains("Rate limit reached"),
        "{:?}",
        planner[0]
    );
    assert!(planner[1].error.is_none(), "{:?}", planner[1]);
    let waited: u64 = planner[1]
        .thought
        .split("[engine] waited ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no wait recorded: {}", planner[1].thought));
    assert!((1000..2000).contains(&waited), "{waited}");
    let got = mock.journal().await;
    assert!(got.len() >= 2);
}

#[tokio::test]
async fn graph_retries_back_off_exponentially_with_jitter() {
    // A 503 without a hint: the wait before the retry is the back-off,
    // half to all of base x 2^(attempt-1).
    let fixtures = json!([
        {"match": {"systemMessage": "# Role: Planner", "sequenceIndex": 0},
         "response": {"error": {"message": "overloaded", "type": "server_error"}, "status": 503}},
        {"match": {"systemMessage": "# Role: Planner", "sequenceIndex": 1}, "response": {"content": PLAN}},
    ]);
    let Some(mock) = Aimock::start("graph_retries_back_off_exponentially_with_jitter", fixtures)
    else {
        return;
    };
    let (mut engine, recorder) = engine_on(config(&mock.base_url(), "gpt-4o-mini"));
    engine.config.retry_backoff = Duration::from_millis(400);
    let started = std::time::Instant::now();
    engine
        .run(RunRequest::new("why is payment-service slow?"))
        .await
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(200));
    let steps = recorder.snapshot().steps;
    let retry = steps
        .iter()
        .filter(|s| s.agent_name == "planner")
        .nth(1)
        .unwrap();
    let waited: u64 = retry
        .thought
        .split("[engine] waited ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no wait recorded: {}", retry.thought));
    assert!((200..=400).contains(&waited), "{waited}");
}

#[tokio::test]
async fn quota_exhaustion_is_not_retried_and_keeps_the_providers_message() {
    let quota = json!({"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
        "type": "insufficient_quota", "code": "insufficient_quota"}, "status": 429});
    let Some(mock) = Aimock::start(
        "quota_exhaustion_is_not_retried_and_keeps_the_providers_message",
        json!([{"match": {"systemMessage": "# Role: Planner"}, "response": quota}]),
    ) else {
        return;
    };
    let (engine, _) = engine_on(config(&mock.base_url(), "gpt-4o-mini"));
    let outcome = engine
        .run(RunRequest::new("why is payment-service slow?"))
        .await
        .unwrap();
    assert!(outcome.end.degraded);
    let failure = outcome.end.failure.clone().unwrap();
    assert_eq!(failure.class.as_str(), "quota", "{failure:?}");
    assert!(
        failure.message.contains("You exceeded your current quota"),
        "{failure:?}"
    );
    let hops = format!("{:?}", outcome.end.trace.transitions);
    assert!(!hops.contains("PlannerTechnicalRetry"), "{hops}");
    // One request: no provider back-off, no graph retry.
    assert_eq!(mock.received().await.len(), 1);
}

fn section(base_url: &str, model: &str) -> ModelConfig {
    ModelConfig {
        provider: Provider::OpenAi,
        base_url: base_url.into(),
        model: model.into(),
        api_key_env: String::new(),
        ..ModelConfig::default()
    }
}

fn routed_engine(config: &ModelConfig) -> (Engine, Arc<MemoryRecorder>) {
    let (registry, services) = shop();
    let recorder = Arc::new(MemoryRecorder::new());
    let offline: Arc<dyn ChatModel> = Arc::new(diagraph::model::offline::OfflineModel::new());
    let engine = Engine {
        model: diagraph::model::routed::from_config(config, offline).unwrap(),
        tools: Arc::new(registry),
        catalog: Arc::new(Catalog::new(vec![], vec![], services)),
        ..base_engine(recorder.clone())
    };
    (engine, recorder)
}

fn executor_fixtures(model: &str) -> Vec<Value> {
    let mut call = role("Executor");
    call["model"] = json!(model);
    call["hasToolResult"] = json!(false);
    let mut done = role("Executor");
    done["model"] = json!(model);
    done["hasToolResult"] = json!(true);
    vec![
        json!({"match": call, "response": {"toolCalls": [
            {"name": "query_metrics", "arguments": {"service": "payment-service"}}]}}),
        json!({"match": done, "response": {"content": NO_CLAIMS}}),
    ]
}

#[tokio::test]
async fn each_role_is_served_by_its_named_model() {
    let mut fixtures = vec![
        json!({"match": {"systemMessage": "# Role: Planner", "model": "small-planner"},
        "response": {"content": PLAN}}),
    ];
    fixtures.extend(executor_fixtures("big-executor"));
    let Some(mock) = Aimock::start(
        "each_role_is_served_by_its_named_model",
        Value::Array(fixtures),
    ) else {
        return;
    };
    let mut config = section(&mock.base_url(), "big-executor");
    config
        .models
        .insert("small".into(), section(&mock.base_url(), "small-planner"));
    config.roles.insert("planner".into(), "small".into());
    let (engine, _) = routed_engine(&config);
    let outcome = engine
        .run(RunRequest::new("why is payment-service slow?"))
        .await
        .unwrap();
    let models: Vec<(String, String)> = mock
        .received()
        .await
        .iter()
        .map(|b| {
            let role = b["messages"][0]["content"].as_str().unwrap_or("");
            let role = role.lines().next().unwrap_or("").to_string();
            (role, b["model"].as_str().unwrap_or("").to_string())
        })
        .collect();
    assert!(models.len() >= 3, "{models:?}");
    for (role, model) in &models {
        let want = if role.contains("Planner") {
            "small-planner"
        } else {
            "big-executor"
        };
        assert_eq!(model, want, "{role}: {models:?}");
    }
    // The run records which model served each role.
    let served = &outcome.sources.models;
    assert!(
        served["planner"].contains("small") && served["planner"].contains("small-planner"),
        "{served:?}"
    );
    assert!(served["executor"].contains("big-executor"), "{served:?}");
}

#[tokio::test]
async fn a_retryable_failure_falls_back_to_the_next_model_but_quota_does_not() {
    let mut fixtures = vec![
        json!({"match": {"model": "primary"},
            "response": {"error": {"message": "The server is overloaded", "type": "server_error"}, "status": 503}}),
        json!({"match": {"systemMessage": "# Role: Planner", "model": "backup"}, "response": {"content": PLAN}}),
    ];
    fixtures.extend(executor_fixtures("main"));
    let Some(mock) = Aimock::start(
        "a_retryable_failure_falls_back_to_the_next_model_but_quota_does_not",
        Value::Array(fixtures),
    ) else {
        return;
    };
    let mut config = section(&mock.base_url(), "main");
    config
        .models
        .insert("primary".into(), section(&mock.base_url(), "primary"));
    config
        .models
        .insert("backup".into(), section(&mock.base_url(), "backup"));
    config.roles.insert("planner".into(), "primary".into());
    config
        .fallbacks
        .insert("planner".into(), vec!["backup".into()]);
    let (engine, recorder) = routed_engine(&config);
    let outcome = engine
        .run(RunRequest::new("why is payment-service slow?"))
        .await
        .unwrap();
    let hops = format!("{:?}", outcome.end.trace.transitions);
    assert!(
        !hops.contains("PlannerTechnicalRetry"),
        "the fallback answered at once: {hops}"
    );
    let planner = recorder
        .snapshot()
        .steps
        .into_iter()
        .find(|s| s.agent_name == "planner")
        .unwrap();
    assert!(planner.error.is_none(), "{planner:?}");
    assert!(
        planner
            .thought
            .contains("served by fallback model backup after")
            && planner.thought.contains("overloaded"),
        "{}",
        planner.thought
    );
    assert!(outcome.sources.models["planner"].contains("fallbacks: backup"));
    let sent: Vec<String> = mock
        .received()
        .await
        .iter()
        .map(|b| b["model"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(&sent[..2], ["primary", "backup"], "{sent:?}");

    // An exhausted quota is not something another model fixes... but it
    // is the primary's account: no fallback is tried for a non-retryable
    // failure.
    let Some(mock) = Aimock::start(
        "a_retryable_failure_falls_back_to_the_next_model_but_quota_does_not",
        json!([
            {"match": {"model": "primary"}, "response": {"error": {"message": "You exceeded your current quota",
                "type": "insufficient_quota", "code": "insufficient_quota"}, "status": 429}},
            {"match": {"model": "backup"}, "response": {"content": PLAN}},
        ]),
    ) else {
        return;
    };
    let mut config = section(&mock.base_url(), "main");
    config
        .models
        .insert("primary".into(), section(&mock.base_url(), "primary"));
    config
        .models
        .insert("backup".into(), section(&mock.base_url(), "backup"));
    config.roles.insert("planner".into(), "primary".into());
    config
        .fallbacks
        .insert("planner".into(), vec!["backup".into()]);
    let (engine, _) = routed_engine(&config);
    let outcome = engine
        .run(RunRequest::new("why is payment-service slow?"))
        .await
        .unwrap();
    assert_eq!(outcome.end.failure.unwrap().class.as_str(), "quota");
    let sent: Vec<String> = mock
        .received()
        .await
        .iter()
        .map(|b| b["model"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(sent, ["primary"]);
}

#[tokio::test]
async fn usage_is_split_and_priced_per_call_and_summed_per_run() {
    let usage = json!({"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200});
    let mut call = role("Executor");
    call["hasToolResult"] = json!(false);
    let mut done = role("Executor");
    done["hasToolResult"] = json!(true);
    let Some(mock) = Aimock::start(
        "usage_is_split_and_priced_per_call_and_summed_per_run",
        json!([
            {"match": role("Planner"), "response": {"content": PLAN, "usage": usage}},
            {"match": call, "response": {"toolCalls": [
                {"name": "query_metrics", "arguments": {"service": "payment-service"}}], "usage": usage}},
            {"match": done, "response": {"content": NO_CLAIMS, "usage": usage}},
        ]),
    ) else {
        return;
    };
    let mut cfg = config(&mock.base_url(), "gpt-4o-mini");
    cfg.price = Some(diagraph::model::openai::Price {
        prompt: 1.0,
        completion: 4.0,
    });
    let (engine, recorder) = engine_on(cfg);
    let outcome = engine
        .run(RunRequest::new("why is payment-service slow?"))
        .await
        .unwrap();
    // Planner, Executor (tool turn, answer); later roles have no fixture.
    let steps: Vec<_> = recorder
        .snapshot()
        .steps
        .into_iter()
        .filter(|s| s.error.is_none())
        .collect();
    assert_eq!(steps.len(), 3, "{steps:?}");
    for s in &steps {
        assert_eq!(
            (s.usage.prompt_tokens, s.usage.completion_tokens),
            (1000, 200)
        );
        assert_eq!(s.token_count, 1200);
        // 1000 x $1/M + 200 x $4/M
        assert!(
            (s.usage.cost_usd.unwrap() - 0.0018).abs() < 1e-12,
            "{:?}",
            s.usage
        );
    }
    // The live events carry it, so the TUI sums it for the verdict panel.
    let mut run = diagraph::vocab::usage::Usage::default();
    for e in &outcome.events {
        if let diagraph::vocab::events::EventKind::ModelCalled { usage: Some(u), .. } = &e.kind {
            run.add(u);
        }
    }
    assert_eq!((run.prompt_tokens, run.completion_tokens), (3000, 600));
    assert!((run.cost_usd.unwrap() - 0.0054).abs() < 1e-12);
    assert_eq!(run.short(), "3.6k tok · $0.0054");
}

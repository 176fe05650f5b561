//! The quirks of real OpenAI-compatible servers, one test each, against
//! aimock (an independent mock from npm) and, where a server rejects
//! requests by what they carry, the fault proxy in front of it.

use crate::aimock::{Aimock, on_user};
use crate::fake_llm::{KEY, shop};
use crate::fault_proxy::{FaultProxy, Quirk};
use crate::helpers::base_engine;
use diagraph::engine::{Engine, MemoryRecorder, RunRequest};
use diagraph::model::openai::{ApiKey, OpenAiConfig, OpenAiModel};
use diagraph::model::{ChatModel, ChatRequest, Message, ModelErrorKind};
use diagraph::vocab::catalog::Catalog;
use diagraph::vocab::dto::ExecutorInput;
use serde_json::{Value, json};

use std::sync::Arc;
use std::time::Duration;

fn config(base_url: &str, model: &str) -> OpenAiConfig {
    OpenAiConfig {
        api_key: Some(ApiKey::new(KEY)),
        timeout: Duration::from_secs(10),
        ..OpenAiConfig::new(base_url, model)
    }
}

fn ask(user: &str) -> ChatRequest {
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

fn engine_on(cfg: OpenAiConfig) -> (Engine, Arc<MemoryRecorder>) {
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

const PLAN: &str = r#"{"selected_skill": null, "selection_reason": "no skill needed",
  "plan": ["Check the alerts of payment-service"], "reasoning": "alerts first",
  "queries": [{"tool": "query_metrics", "arguments": {"service": "payment-service"}, "purpose": "alerts"}]}"#;

const NO_CLAIMS: &str = r#"{"answer_version": "executor_evidence_v2", "claims": [],
  "hypotheses": [], "recommended_actions": [], "missing_info": ["nothing bound yet"]}"#;

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
    let e = OpenAiModel::new(cfg)
        .unwrap()
        .chat(&ask("temperature"))
        .await
        .unwrap_err();
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
    let Some(mock) = Aimock::start(
        "extra_body_carries_the_field_a_server_requires",
        json!([on_user("qwen3", json!({"content": "{\"ok\": true}"}))]),
    ) else {
        return;
    };
    let quirk = Quirk::RequireUnlessStreaming("enable_thinking", json!(false));
    let proxy = FaultProxy::start(&mock.base_url(), vec![quirk]).await;
    let e = OpenAiModel::new(config(&proxy.base_url, "qwen3-32b"))
        .unwrap()
        .chat(&ask("qwen3"))
        .await
        .unwrap_err();
    assert_eq!(e.kind, ModelErrorKind::BadRequest);
    assert!(e.message.contains("enable_thinking"), "{e}");

    let mut cfg = config(&proxy.base_url, "qwen3-32b");
    cfg.extra_body
        .insert("enable_thinking".into(), json!(false));
    cfg.max_tokens = Some(512);
    cfg.max_tokens_field = diagraph::config::MaxTokensField::MaxCompletionTokens;
    let r = OpenAiModel::new(cfg)
        .unwrap()
        .chat(&ask("qwen3"))
        .await
        .unwrap();
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
    let e = OpenAiModel::new(config(&dead, "m"))
        .unwrap()
        .chat(&ask("query"))
        .await
        .unwrap_err();
    assert_eq!(e.kind, ModelErrorKind::Connection);
    assert!(!e.message.contains("SECRET-IN-URL"), "{e}");
}

//! A fake LLM for engine runs over the chat-completions protocol, and an
//! engine assembled around it, for the `*_engine` tests (the provider
//! tests use the mock server alone).

use crate::helpers::{base_engine, pack_registry, shop_pack};
use crate::openai_mock::{Reply, Responder};
use diagraph::engine::Engine;
use diagraph::engine::recorder::MemoryRecorder;
use diagraph::model::openai::{ApiKey, OpenAiConfig, OpenAiModel};
use diagraph::tools::ToolRegistry;
use diagraph::vocab::catalog::Catalog;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

pub const KEY: &str = "sk-e2e-secret-0123456789";

/// The user turn of a request: the role's input DTO.
pub fn dto(body: &Value) -> Value {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .and_then(|c| serde_json::from_str(c).ok())
        .unwrap_or(Value::Null)
}

pub fn usage_reply(message: Value, finish: &str, prompt: u64, completion: u64) -> Reply {
    Reply::json(
        200,
        json!({"id": "x", "object": "chat.completion", "model": "fake",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}),
    )
}

/// A fake LLM that follows the prompts' contracts: it plans one
/// query_metrics call for `service`, cites the first ref it gets back with
/// an excerpt copied from the ref text, passes what the Verifier sees and
/// composes from the allowed claims.
pub fn fake_llm(service: &'static str) -> Responder {
    Arc::new(move |body: &Value| {
        let input = dto(body);
        let text = |v: Value| {
            usage_reply(
                json!({"role": "assistant", "content": v.to_string()}),
                "stop",
                200,
                50,
            )
        };
        if input.get("available_tools").is_some() {
            return text(json!({
                "selected_skill": null, "selection_reason": "no skill needed",
                "plan": [format!("Check active alerts of {service}")], "reasoning": "alerts first",
                "queries": [{"tool": "query_metrics", "arguments": {"service": service}, "purpose": "alerts"}]
            }));
        }
        if input.get("planner_plan").is_some() {
            let results: Vec<Value> = body["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|m| m["role"] == "tool")
                .filter_map(|m| serde_json::from_str(m["content"].as_str()?).ok())
                .collect();
            let Some(first) = results.first() else {
                return usage_reply(
                    json!({"role": "assistant", "content": null, "tool_calls": [{
                        "id": "call_1", "type": "function",
                        "function": {"name": "query_metrics",
                                     "arguments": json!({"service": service}).to_string()}}]}),
                    "tool_calls",
                    300,
                    20,
                );
            };
            let r = &first["evidence_refs"][0];
            let excerpt: Vec<&str> = r["text"]
                .as_str()
                .unwrap_or("")
                .split(' ')
                .filter(|p| {
                    ["alertname=", "service=", "state=", "value="]
                        .iter()
                        .any(|k| p.starts_with(k))
                })
                .collect();
            return text(json!({
                "answer_version": "executor_evidence_v2",
                "claims": [{"claim_id": "claim-1", "claim_type": "observation",
                    "claim_text": format!("{service} has an active alert: {}", excerpt.join(" ")),
                    "support_level": "direct",
                    "evidence_bindings": [{"source_type": "tool_trace", "tool_name": "query_metrics",
                        "source_invocation_id": first["invocation_id"], "raw_path": r["raw_path"],
                        "evidence_excerpt": excerpt.join(" ")}]}],
                "hypotheses": [], "recommended_actions": [], "missing_info": []
            }));
        }
        if let Some(evidence) = input.get("verified_evidence").and_then(Value::as_array) {
            let facts: Vec<Value> = evidence
                .iter()
                .map(|e| json!({"claim_id": e["claim_id"], "fact": e["matched_text"], "is_critical": true,
                    "verification": "direct_evidence", "detail": "stated by the alert",
                    "evidence_refs": [{"trace_ref": e["raw_path"], "tool_name": e["tool_name"],
                        "source_invocation_ids": [e["source_invocation_id"]]}]}))
                .collect();
            return text(json!({"verdict": "PASS", "groundedness_score": 1.0,
                "critical_fact_count": facts.len(), "claim_checks": [], "facts_checked": facts,
                "rationale": "every critical fact is directly evidenced"}));
        }
        if let Some(claims) = input.get("allowed_claims").and_then(Value::as_array) {
            // one statement per allowed claim, naming it (composer_output)
            let statements: Vec<Value> = claims
                .iter()
                .map(|c| json!({"text": c["claim_text"], "claim_ids": [c["claim_id"]]}))
                .collect();
            return text(json!({"answer_summary": "Confirmed from the alerts.",
                "statements": statements,
                "recommended_actions": []}));
        }
        Reply::error(400, "fake LLM: unknown role", "bad_request")
    })
}

pub fn engine(
    model: OpenAiModel,
    registry: ToolRegistry,
    services: Vec<String>,
) -> (Engine, Arc<MemoryRecorder>) {
    let recorder = Arc::new(MemoryRecorder::new());
    let engine = Engine {
        model: Arc::new(model),
        tools: Arc::new(registry),
        catalog: Arc::new(Catalog::new(vec![], vec![], services)),
        ..base_engine(recorder.clone())
    };
    (engine, recorder)
}

/// The shop pack's tools behind an OpenAI-compatible model at `base_url`.
pub fn shop_engine(base_url: &str) -> (Engine, Arc<MemoryRecorder>) {
    let (registry, services) = shop();
    engine(openai(base_url, Duration::from_secs(5)), registry, services)
}

pub fn shop() -> (ToolRegistry, Vec<String>) {
    let pack = shop_pack();
    (pack_registry(&pack), pack.manifest.services.clone())
}

pub fn openai(base_url: &str, timeout: Duration) -> OpenAiModel {
    OpenAiModel::new(OpenAiConfig {
        api_key: Some(ApiKey::new(KEY)),
        timeout,
        ..OpenAiConfig::new(base_url, "fake-llm")
    })
    .unwrap()
}

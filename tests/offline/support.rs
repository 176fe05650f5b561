//! Test support for the offline model: request builders, a small in-memory
//! tool backend that answers in the tool-result message format (`engine::invoker::ResultMessage`), and a
//! hand-driven pipeline (planner -> executor loop -> pass-through
//! verification -> verifier -> composer) for tests that run before or
//! without the engine.
use diagraph::model::offline::OfflineModel;
use diagraph::model::{ChatRequest, ChatResponse, Message, ScriptContext};
use diagraph::tools::ToolOutput;
use diagraph::vocab::catalog::{DomainInfo, SkillInfo};
use diagraph::vocab::contracts::{
    ComposerOutput, ExecutorEvidence, Lang, PlannerPlan, Verdict, VerifierOutput,
    parse_composer_output, parse_executor_evidence, parse_planner_plan, parse_verifier_output,
};
use diagraph::vocab::dto::*;
use diagraph::vocab::level::canonical;
use diagraph::vocab::tool::{ToolSpec, summarize_args};
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub fn request(
    input: impl Into<AgentInput>,
    messages: Vec<Message>,
    tools: Vec<ToolSpec>,
) -> ChatRequest {
    ChatRequest {
        attempt: 1,
        input: input.into(),
        messages,
        tools: tools.into_iter().map(Arc::new).collect(),
        tool_choice: Default::default(),
        script: ScriptContext::default(),
    }
}

pub fn respond(req: &ChatRequest) -> ChatResponse {
    OfflineModel::new()
        .respond(req)
        .expect("offline model answers")
}

pub fn spec(name: &str, params: &[&str]) -> ToolSpec {
    let props: Map<String, Value> = params
        .iter()
        .map(|p| (p.to_string(), json!({"type": "string"})))
        .collect();
    ToolSpec {
        name: name.into(),
        description: name.into(),
        evidence_arrays: vec![],
        parameters: json!({"type": "object", "properties": props}),
    }
}

pub fn tool_specs() -> Vec<ToolSpec> {
    vec![
        spec("query_metrics", &["service", "alertname", "state"]),
        spec(
            "query_logs",
            &[
                "service",
                "level",
                "keyword",
                "since",
                "until",
                "window_minutes",
                "limit",
            ],
        ),
        spec("lookup_knowledge", &["query", "domain", "limit"]),
        spec("read_skill", &["name"]),
    ]
}

pub fn tool_briefs() -> Vec<Arc<ToolSpec>> {
    tool_specs().into_iter().map(Arc::new).collect()
}

pub fn planner_input(question: &str, services: &[&str], skills: &[(&str, &str)]) -> PlannerInput {
    PlannerInput {
        question: question.into(),
        lang: Lang::detect(question),
        mode: PlannerMode::Normal,
        history: vec![],
        available_knowledge_domains: vec![DomainInfo {
            domain: "runbooks".into(),
            description: "operational runbooks".into(),
            when_to_retrieve: "alerts, latency, errors, connection pool, timeouts".into(),
            document_count: 3,
        }]
        .into(),
        skill_catalog: skills
            .iter()
            .map(|(n, d)| SkillInfo {
                name: n.to_string(),
                description: d.to_string(),
                procedure: vec![],
            })
            .collect::<Vec<_>>()
            .into(),
        known_services: services
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .into(),
        aliases: vec![],
        now: None,
        available_tools: tool_briefs().into(),
        retry_context: None,
    }
}

pub fn plan(input: &PlannerInput) -> PlannerPlan {
    let r = respond(&request(input.clone(), vec![], vec![]));
    parse_planner_plan(r.content.as_deref().unwrap_or("")).expect("valid planner_plan")
}

/// A tiny pack: alerts and logs in the shapes of alerts.json/logs.jsonl,
/// knowledge blocks as lookup_knowledge returns them.
#[derive(Default, Clone)]
pub struct FakeBackend {
    pub alerts: Vec<Value>,
    pub logs: Vec<Value>,
    pub knowledge: Vec<Value>,
    pub next_id: i64,
}

pub fn alert(name: &str, service: &str, state: &str, value: &str) -> Value {
    json!({"labels": {"alertname": name, "service": service, "severity": "critical"},
           "annotations": {"summary": format!("{name} on {service}")},
           "state": state, "activeAt": "2026-07-08T22:40:00Z", "value": value})
}

pub fn log(ts: &str, service: &str, level: &str, message: &str) -> Value {
    json!({"ts": ts, "service": service, "level": level, "message": message})
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

impl FakeBackend {
    pub fn call(&mut self, tool: &str, args: &Map<String, Value>) -> ToolOutput {
        let arg = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_lowercase);
        let summary = summarize_args(&Value::Object(args.clone()));
        match tool {
            "query_metrics" => {
                let items: Vec<&Value> = self
                    .alerts
                    .iter()
                    .filter(|a| {
                        arg("service")
                            .is_none_or(|x| s(&a["labels"], "service").to_lowercase() == x)
                    })
                    .filter(|a| {
                        arg("alertname")
                            .is_none_or(|x| s(&a["labels"], "alertname").to_lowercase() == x)
                    })
                    .filter(|a| arg("state").is_none_or(|x| x == "any" || s(a, "state") == x))
                    .collect();
                if items.is_empty() {
                    return ToolOutput::no_evidence(tool, &summary, "no matching alerts");
                }
                let refs = items
                    .iter()
                    .enumerate()
                    .map(|(i, a)| diagraph::vocab::tool::EvidenceRef {
                        raw_path: format!("$.alerts[{i}]"),
                        text: format!(
                            "alertname={} service={} severity={} state={} value={} active_for=25m since={} summary={}",
                            s(&a["labels"], "alertname"),
                            s(&a["labels"], "service"),
                            s(&a["labels"], "severity"),
                            s(a, "state"),
                            s(a, "value"),
                            s(a, "activeAt"),
                            s(&a["annotations"], "summary")
                        ),
                    })
                    .collect();
                ToolOutput {
                    body: json!({"alerts": items, "total": items.len()}),
                    evidence_status: diagraph::vocab::tool::EvidenceStatus::Supported,
                    evidence_refs: refs,
                    retrieved_domains: vec![],
                    partial: None,
                    buckets: None,
                }
            }
            "query_logs" => {
                let items: Vec<&Value> = self
                    .logs
                    .iter()
                    .filter(|l| arg("service").is_none_or(|x| s(l, "service").to_lowercase() == x))
                    .filter(|l| {
                        // "ERROR,FATAL": any of the levels, in any spelling.
                        arg("level").is_none_or(|x| {
                            x.split(',')
                                .any(|w| canonical(w) == canonical(s(l, "level")))
                        })
                    })
                    .filter(|l| {
                        arg("keyword").is_none_or(|k| {
                            let m = s(l, "message").to_lowercase();
                            k.split_whitespace().all(|w| m.contains(w))
                        })
                    })
                    .collect();
                if items.is_empty() {
                    return ToolOutput::no_evidence(tool, &summary, "no matching log lines");
                }
                let refs = items
                    .iter()
                    .enumerate()
                    .map(|(i, l)| diagraph::vocab::tool::EvidenceRef {
                        raw_path: format!("$.logs[{i}]"),
                        text: format!(
                            "{} {} {} {}",
                            s(l, "ts"),
                            s(l, "level"),
                            s(l, "service"),
                            s(l, "message")
                        ),
                    })
                    .collect();
                ToolOutput {
                    body: json!({"logs": items, "total": items.len(), "truncated": false}),
                    evidence_status: diagraph::vocab::tool::EvidenceStatus::Supported,
                    evidence_refs: refs,
                    retrieved_domains: vec![],
                    partial: None,
                    buckets: None,
                }
            }
            "lookup_knowledge" => {
                if self.knowledge.is_empty() {
                    return ToolOutput::no_evidence(tool, &summary, "no matching documents");
                }
                let refs = self
                    .knowledge
                    .iter()
                    .enumerate()
                    .map(|(i, b)| diagraph::vocab::tool::EvidenceRef {
                        raw_path: format!("$.evidence_blocks[{i}]"),
                        text: format!(
                            "[{}] {} > {}: {}",
                            s(b, "domain"),
                            s(b, "source"),
                            s(b, "breadcrumb"),
                            s(b, "text")
                        ),
                    })
                    .collect();
                ToolOutput {
                    body: json!({"evidence_blocks": self.knowledge, "total": self.knowledge.len()}),
                    evidence_status: diagraph::vocab::tool::EvidenceStatus::Supported,
                    evidence_refs: refs,
                    retrieved_domains: vec!["runbooks".into()],
                    partial: None,
                    buckets: None,
                }
            }
            _ => ToolOutput {
                body: json!({"skill": {"name": arg("name"), "description": "", "body": "steps"}}),
                evidence_status: diagraph::vocab::tool::EvidenceStatus::Supported,
                evidence_refs: vec![],
                retrieved_domains: vec![],
                partial: None,
                buckets: None,
            },
        }
    }

    /// The tool result message content the engine's invoker builds.
    pub fn message(&mut self, tool: &str, arguments: &str) -> (i64, String) {
        self.next_id += 1;
        let id = self.next_id + 100;
        let args: Map<String, Value> = serde_json::from_str(arguments).unwrap_or_default();
        let out = self.call(tool, &args);
        let content = json!({
            "invocation_id": id, "tool": tool, "arguments": args,
            "evidence_status": out.evidence_status.as_str(),
            "evidence_refs": out.evidence_refs,
            "deduped_from": null, "blocked": false, "error": null, "result": out.body,
        });
        (id, content.to_string())
    }
}

pub struct Pipeline {
    pub plan: PlannerPlan,
    pub executor: ExecutorEvidence,
    pub verifier: VerifierOutput,
    pub composer: ComposerOutput,
    /// Every tool result message content, in order.
    pub results: Vec<Value>,
}

pub fn executor_input(
    question: &str,
    plan: &PlannerPlan,
    retry: Option<RetryContext>,
) -> ExecutorInput {
    ExecutorInput {
        question: question.into(),
        lang: Lang::detect(question),
        planner_plan: plan.clone(),
        selected_skill: plan.selected_skill.clone(),
        history: vec![],
        tool_permissions: tool_specs().into_iter().map(|t| t.name).collect(),
        retry_context: retry,
        max_tool_calls: 12,
    }
}

/// Drives the Executor's tool-call loop against the backend.
pub fn run_executor(
    input: &ExecutorInput,
    backend: &mut FakeBackend,
) -> (ExecutorEvidence, usize, Vec<Value>) {
    let mut messages = vec![Message::User {
        content: "executor input".into(),
    }];
    let mut results = Vec::new();
    for turn in 1..=8 {
        let r = respond(&request(input.clone(), messages.clone(), tool_specs()));
        if r.tool_calls.is_empty() {
            let text = r.content.expect("final executor text");
            return (
                parse_executor_evidence(&text).expect("valid executor_evidence_v2"),
                turn,
                results,
            );
        }
        messages.push(Message::Assistant {
            content: None,
            tool_calls: r.tool_calls.clone(),
        });
        for call in r.tool_calls {
            let (_, content) = backend.message(&call.name, &call.arguments);
            results.push(serde_json::from_str(&content).unwrap());
            messages.push(Message::Tool {
                tool_call_id: call.id,
                content,
            });
        }
    }
    panic!("executor did not finish in 8 turns");
}

/// What VerifiedInput would build if every binding passed: the excerpt is
/// the ref text, so matched_text = excerpt.
pub fn pass_through(output: &ExecutorEvidence) -> Vec<VerifiedEvidence> {
    output
        .claims
        .iter()
        .flat_map(|c| {
            c.evidence_bindings.iter().map(move |b| VerifiedEvidence {
                claim_id: c.claim_id.clone(),
                source_invocation_id: b.source_invocation_id.unwrap_or(0),
                tool_name: b.tool_name.clone(),
                raw_path: b.raw_path.clone().unwrap_or_default(),
                matched_text: b.evidence_excerpt.clone(),
            })
        })
        .collect()
}

pub fn verifier_input(
    question: &str,
    output: &ExecutorEvidence,
    evidence: Vec<VerifiedEvidence>,
) -> VerifierInput {
    VerifierInput {
        original_query: question.into(),
        lang: Lang::detect(question),
        verified_executor_output: output.clone(),
        gatekeeper_result: GatekeeperSummary {
            status: "pass".into(),
            severity: "none".into(),
            rule_set_version: "test".into(),
            verified_binding_count: evidence.len(),
            verdict_ceiling: Verdict::Pass,
        },
        verified_evidence: evidence,
    }
}

pub fn verify(input: &VerifierInput) -> VerifierOutput {
    let r = respond(&request(input.clone(), vec![], vec![]));
    parse_verifier_output(r.content.as_deref().unwrap_or("")).expect("valid verifier_output")
}

pub fn composer_input(
    question: &str,
    output: &ExecutorEvidence,
    v: &VerifierOutput,
    evidence: &[VerifiedEvidence],
) -> ComposerInput {
    let allowed = output
        .claims
        .iter()
        .filter_map(|c| {
            let f = v
                .facts_checked
                .iter()
                .find(|f| f.claim_id.as_deref() == Some(&c.claim_id))?;
            f.verification.is_supported().then(|| AllowedClaim {
                claim_id: c.claim_id.clone(),
                claim_type: c.claim_type.clone(),
                claim_text: c.claim_text.clone(),
                verification: f.verification,
                is_negative: c.is_negative(),
                evidence: evidence
                    .iter()
                    .filter(|e| e.claim_id == c.claim_id)
                    .cloned()
                    .collect(),
            })
        })
        .collect();
    ComposerInput {
        original_query: question.into(),
        lang: Lang::detect(question),
        verdict: v.verdict,
        allowed_claims: allowed,
        allowed_hypotheses: output.hypotheses.clone(),
        missing_info: output.missing_info.clone(),
        recommended_actions: output.recommended_actions.clone(),
        rationale: v.rationale.clone(),
    }
}

pub fn compose(input: &ComposerInput) -> ComposerOutput {
    let r = respond(&request(input.clone(), vec![], vec![]));
    parse_composer_output(r.content.as_deref().unwrap_or("")).expect("valid composer_output")
}

pub fn pipeline(question: &str, services: &[&str], backend: &mut FakeBackend) -> Pipeline {
    let plan = plan(&planner_input(question, services, &[]));
    let (executor, _turns, results) = run_executor(&executor_input(question, &plan, None), backend);
    let evidence = pass_through(&executor);
    let verifier = verify(&verifier_input(question, &executor, evidence.clone()));
    let composer = compose(&composer_input(question, &executor, &verifier, &evidence));
    Pipeline {
        plan,
        executor,
        verifier,
        composer,
        results,
    }
}

/// Every binding's excerpt is the text of the ref it cites, in the results.
pub fn assert_bindings_trace(p: &Pipeline) {
    for c in &p.executor.claims {
        assert!(
            !c.evidence_bindings.is_empty(),
            "{} has no binding",
            c.claim_id
        );
        for b in &c.evidence_bindings {
            let r = p
                .results
                .iter()
                .find(|r| r["invocation_id"].as_i64() == b.source_invocation_id)
                .unwrap_or_else(|| panic!("{} cites an unknown invocation", c.claim_id));
            assert_eq!(r["tool"], json!(b.tool_name));
            let found = r["evidence_refs"].as_array().unwrap().iter().any(|x| {
                x["raw_path"] == json!(b.raw_path.clone().unwrap())
                    && x["text"] == json!(b.evidence_excerpt)
            });
            assert!(found, "{} binding {:?} not in refs", c.claim_id, b.raw_path);
        }
    }
}

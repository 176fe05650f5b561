//! The offline Verifier's verdicts, the Composer's wording, and the
//! Executor's protocol edges (budget, no tools, deduped/failed results,
//! the evidence-gap snapshot).

use crate::support::*;
use diagraph::model::{Message, ToolCall};
use diagraph::vocab::contracts::*;
use diagraph::vocab::dto::*;
use serde_json::json;

const ALERT: &str = "alertname=HighCPUUsage service=payment-service severity=critical state=firing value=92% active_for=25m since=2026-07-08T22:40:00Z summary=CPU usage above 90%";

fn binding(tool: &str, id: i64, path: &str, text: &str) -> EvidenceBinding {
    EvidenceBinding {
        source_type: "tool_trace".into(),
        source_id: String::new(),
        tool_name: tool.into(),
        source_invocation_id: Some(id),
        invalid_invocation_id: None,
        raw_path: Some(path.into()),
        evidence_excerpt: text.into(),
    }
}

fn claim(id: &str, kind: &str, text: &str, bindings: Vec<EvidenceBinding>) -> Claim {
    Claim {
        claim_id: id.into(),
        claim_type: kind.into(),
        claim_text: text.into(),
        support_level: "direct".into(),
        evidence_bindings: bindings,
    }
}

fn output(claims: Vec<Claim>) -> ExecutorEvidence {
    ExecutorEvidence {
        answer_version: EXECUTOR_ANSWER_VERSION.into(),
        claims,
        ..Default::default()
    }
}

fn check_one(question: &str, c: Claim) -> VerifierOutput {
    let out = output(vec![c]);
    verify(&verifier_input(question, &out, pass_through(&out)))
}

#[test]
fn direct_evidence_in_both_languages() {
    let q = "is HighCPUUsage firing on payment-service?";
    let b = || vec![binding("query_metrics", 7, "$.alerts[0]", ALERT)];
    let v = check_one(
        q,
        claim(
            "c1",
            "observation",
            "HighCPUUsage is firing on payment-service (value=92%, active_for=25m)",
            b(),
        ),
    );
    assert_eq!(
        v.facts_checked[0].verification,
        Verification::DirectEvidence
    );
    assert_eq!(v.verdict, Verdict::Pass);
    assert_eq!(v.groundedness_score, 1.0);
    // The seed's own example: Chinese text, a differently shaped excerpt.
    let seed = "HighCPUUsage, service=payment-service, state=firing, current=92%, duration=25m";
    let v = check_one(
        "payment-service 有 HighCPUUsage 告警吗",
        claim(
            "c1",
            "observation",
            "payment-service 当前存在 HighCPUUsage 告警，CPU 使用率为 92%。",
            vec![binding("query_metrics", 7, "$.alerts[0]", seed)],
        ),
    );
    assert_eq!(
        v.facts_checked[0].verification,
        Verification::DirectEvidence,
        "{:#?}",
        v
    );
}

#[test]
fn contradicted_state_or_value_rejects() {
    let q = "is HighCPUUsage firing on payment-service?";
    let b = || vec![binding("query_metrics", 7, "$.alerts[0]", ALERT)];
    let v = check_one(
        q,
        claim(
            "c1",
            "observation",
            "HighCPUUsage is resolved on payment-service",
            b(),
        ),
    );
    assert_eq!(v.facts_checked[0].verification, Verification::Contradicted);
    assert_eq!(v.verdict, Verdict::Reject);
    let v = check_one(
        q,
        claim(
            "c1",
            "observation",
            "HighCPUUsage is firing on payment-service at 97%",
            b(),
        ),
    );
    assert_eq!(v.facts_checked[0].verification, Verification::Contradicted);
    assert_eq!(v.verdict, Verdict::Reject);
}

#[test]
fn missing_detail_is_indirect_and_unbound_claim_is_no_evidence() {
    let q = "why is payment-service slow?";
    let b = vec![binding("query_metrics", 7, "$.alerts[0]", ALERT)];
    let c1 = claim(
        "c1",
        "observation",
        "HighCPUUsage is firing on payment-service since 2026-07-09T01:00:00Z",
        b,
    );
    let c2 = claim(
        "c2",
        "root_cause",
        "payment-service is slow because of a GC storm on payment-db",
        vec![],
    );
    let out = output(vec![c1, c2]);
    let v = verify(&verifier_input(q, &out, pass_through(&out)));
    assert_eq!(
        v.facts_checked[0].verification,
        Verification::IndirectSupport,
        "{:#?}",
        v
    );
    assert_eq!(v.facts_checked[1].verification, Verification::NoEvidence);
    assert!(v.facts_checked[1].is_critical);
    assert_eq!(v.verdict, Verdict::LowConfid);
    assert!(v.groundedness_score > 0.0 && v.groundedness_score < 1.0);
}

#[test]
fn counts_must_match_the_bound_items() {
    let q = "are there errors in order-service logs?";
    let lines: Vec<EvidenceBinding> = (0..3)
        .map(|i| {
            binding(
                "query_logs",
                9,
                &format!("$.logs[{i}]"),
                &format!("2026-07-08T23:0{i}:00Z ERROR order-service pool timeout after 3000{i}ms"),
            )
        })
        .collect();
    let ok = check_one(
        q,
        claim(
            "c1",
            "observation",
            "order-service logged 3 ERROR lines matching \"pool timeout after *ms\"",
            lines.clone(),
        ),
    );
    assert_eq!(
        ok.facts_checked[0].verification,
        Verification::DirectEvidence,
        "{:#?}",
        ok
    );
    let bad = check_one(
        q,
        claim(
            "c1",
            "observation",
            "order-service logged 5 ERROR lines matching \"pool timeout after *ms\"",
            lines,
        ),
    );
    assert_eq!(
        bad.facts_checked[0].verification,
        Verification::IndirectSupport
    );
}

#[test]
fn negative_claims_rest_only_on_no_evidence_and_never_conclude() {
    let ne = "query_logs returned no evidence; evidence_status=no_evidence; query=keyword=pool service=inventory-service; total=0; message=no match";
    let q = "does inventory-service have pool errors?";
    let ok = check_one(
        q,
        claim(
            "c1",
            "negative_observation",
            "The query query_logs keyword=pool service=inventory-service found no matching logs",
            vec![binding("query_logs", 4, "$.no_evidence", ne)],
        ),
    );
    assert_eq!(
        ok.facts_checked[0].verification,
        Verification::DirectEvidence
    );
    let over = check_one(
        q,
        claim(
            "c1",
            "negative_observation",
            "inventory-service has no problem with its pool",
            vec![binding("query_logs", 4, "$.no_evidence", ne)],
        ),
    );
    assert_eq!(
        over.facts_checked[0].verification,
        Verification::Contradicted
    );
    let mixed = check_one(
        q,
        claim(
            "c1",
            "negative_observation",
            "no pool errors on inventory-service",
            vec![binding("query_metrics", 7, "$.alerts[0]", ALERT)],
        ),
    );
    assert_eq!(
        mixed.facts_checked[0].verification,
        Verification::Contradicted
    );
    let positive_on_nothing = check_one(
        q,
        claim(
            "c1",
            "observation",
            "inventory-service pool is exhausted",
            vec![binding("query_logs", 4, "$.no_evidence", ne)],
        ),
    );
    assert_eq!(
        positive_on_nothing.facts_checked[0].verification,
        Verification::Contradicted
    );
}

#[test]
fn the_gatekeeper_ceiling_caps_the_verdict() {
    let out = output(vec![claim(
        "c1",
        "observation",
        "HighCPUUsage is firing on payment-service",
        vec![binding("query_metrics", 7, "$.alerts[0]", ALERT)],
    )]);
    let mut input = verifier_input("is HighCPUUsage firing?", &out, pass_through(&out));
    input.gatekeeper_result.verdict_ceiling = Verdict::LowConfid;
    assert_eq!(verify(&input).verdict, Verdict::LowConfid);
}

fn allowed(
    id: &str,
    kind: &str,
    text: &str,
    v: Verification,
    ev: Vec<VerifiedEvidence>,
) -> AllowedClaim {
    AllowedClaim {
        claim_id: id.into(),
        claim_type: kind.into(),
        claim_text: text.into(),
        verification: v,
        is_negative: kind == "negative_observation",
        evidence: ev,
    }
}

fn ev(id: &str, tool: &str, path: &str, text: &str) -> VerifiedEvidence {
    VerifiedEvidence {
        claim_id: id.into(),
        source_invocation_id: 11,
        tool_name: tool.into(),
        raw_path: path.into(),
        matched_text: text.into(),
    }
}

fn composer_in(q: &str, verdict: Verdict, claims: Vec<AllowedClaim>) -> ComposerInput {
    ComposerInput {
        original_query: q.into(),
        lang: Lang::detect(q),
        verdict,
        allowed_claims: claims,
        allowed_hypotheses: vec![Hypothesis {
            hypothesis_text: "Runbook guidance suggests GC pressure".into(),
            basis: "runbook".into(),
            needed_evidence: vec![],
            evidence_bindings: vec![],
        }],
        missing_info: vec!["no GC metrics".into()],
        recommended_actions: vec![RecommendedAction {
            action_text: "Read GC logs".into(),
            reason: "runbook".into(),
            evidence_bindings: vec![],
        }],
        rationale: "r".into(),
    }
}

#[test]
fn composer_renders_sections_marks_indirect_and_words_negatives_safely() {
    let ne = "query_logs returned no evidence; evidence_status=no_evidence; query=service=inventory-service; total=0; message=none";
    for q in ["why is payment-service slow?", "payment-service 为什么慢？"] {
        let input = composer_in(
            q,
            Verdict::LowConfid,
            vec![
                allowed(
                    "c1",
                    "observation",
                    "HighCPUUsage is firing on payment-service",
                    Verification::IndirectSupport,
                    vec![ev("c1", "query_metrics", "$.alerts[0]", ALERT)],
                ),
                allowed(
                    "c2",
                    "negative_observation",
                    "inventory-service is healthy",
                    Verification::DirectEvidence,
                    vec![ev("c2", "query_logs", "$.no_evidence", ne)],
                ),
            ],
        );
        let out = compose(&input);
        let a = &out.user_facing_answer;
        assert_eq!(find_overstatement(&out), None, "{a}");
        assert!(
            !a.contains("is healthy"),
            "negative claims are re-worded from their evidence: {a}"
        );
        if Lang::detect(q) == Lang::Zh {
            assert!(
                a.contains("低置信度")
                    && a.contains("仅有间接证据")
                    && a.contains("未检索到匹配的日志"),
                "{a}"
            );
            assert!(
                a.contains("未经证实的假设") && a.contains("缺少的信息") && a.contains("下一步"),
                "{a}"
            );
        } else {
            assert!(
                a.contains("low confidence") && a.contains("(indirect support only)"),
                "{a}"
            );
            assert!(
                a.contains("found no matching logs") && a.contains("service=inventory-service"),
                "{a}"
            );
            assert!(
                a.contains("Unconfirmed hypotheses")
                    && a.contains("Missing information")
                    && a.contains("Next steps"),
                "{a}"
            );
        }
        assert_eq!(out.recommended_actions.len(), 1);
    }
}

#[test]
fn quoted_log_text_cannot_smuggle_an_overstatement() {
    let line = "2026-07-08T23:00:00Z ERROR payment-service health probe says no problem, all services are healthy";
    let input = composer_in(
        "why is payment-service slow?",
        Verdict::Pass,
        vec![
            allowed(
                "c1",
                "observation",
                "payment-service logged 1 ERROR line matching \"health probe says no problem, all services are healthy\"",
                Verification::DirectEvidence,
                vec![ev("c1", "query_logs", "$.logs[0]", line)],
            ),
            allowed(
                "c2",
                "negative_observation",
                "x",
                Verification::DirectEvidence,
                vec![ev(
                    "c2",
                    "query_metrics",
                    "$.no_evidence",
                    "query_metrics returned no evidence; query=service=payment-service; total=0",
                )],
            ),
        ],
    );
    let out = compose(&input);
    assert_eq!(find_overstatement(&out), None, "{}", out.user_facing_answer);
    assert!(out.user_facing_answer.contains("health probe says"));
}

fn exec_request(
    input: &ExecutorInput,
    messages: Vec<Message>,
    tools: bool,
) -> diagraph::model::ChatRequest {
    request(
        input.clone(),
        messages,
        if tools { tool_specs() } else { vec![] },
    )
}

#[test]
fn executor_respects_the_budget_and_answers_when_no_tools_are_offered() {
    let q = "why is payment-service slow?";
    let p = plan(&planner_input(q, &["payment-service"], &[]));
    assert!(p.queries.len() > 2);
    let mut input = executor_input(q, &p, None);
    input.max_tool_calls = 2;
    let r = respond(&exec_request(&input, vec![], true));
    assert_eq!(r.tool_calls.len(), 2);
    let r = respond(&exec_request(&input, vec![], false));
    assert!(r.tool_calls.is_empty());
    // The forced last turn: tools still offered, tool_choice none.
    let mut forced = exec_request(&input, vec![], true);
    forced.tool_choice = diagraph::model::ToolChoice::None;
    assert!(respond(&forced).tool_calls.is_empty());
    let out = parse_executor_evidence(r.content.as_deref().unwrap()).unwrap();
    assert!(out.claims.is_empty());
    assert!(!out.missing_info.is_empty());
}

#[test]
fn deduped_and_failed_results_make_no_claims() {
    let q = "why is payment-service slow?";
    let p = plan(&planner_input(q, &["payment-service"], &[]));
    let input = executor_input(q, &p, None);
    let calls = vec![
        ToolCall {
            id: "a".into(),
            name: "query_logs".into(),
            arguments: "{}".into(),
        },
        ToolCall {
            id: "b".into(),
            name: "query_metrics".into(),
            arguments: "{}".into(),
        },
    ];
    let messages = vec![
        Message::Assistant { content: None, tool_calls: calls },
        Message::Tool {
            tool_call_id: "a".into(),
            content: json!({"invocation_id": 9, "tool": "query_logs", "arguments": {"service": "payment-service"},
                "evidence_status": "deduped", "evidence_refs": [], "deduped_from": 3, "blocked": false, "error": null, "result": null}).to_string(),
        },
        Message::Tool {
            tool_call_id: "b".into(),
            content: json!({"invocation_id": 10, "tool": "query_metrics", "arguments": {"service": "payment-service"},
                "evidence_status": "failed", "evidence_refs": [], "deduped_from": null, "blocked": true, "error": "not permitted", "result": null}).to_string(),
        },
    ];
    let r = respond(&exec_request(&input, messages, true));
    let out = parse_executor_evidence(r.content.as_deref().unwrap()).unwrap();
    assert!(out.claims.is_empty());
    assert!(
        out.missing_info
            .iter()
            .any(|m| m.contains("query_metrics") && m.contains("not permitted")),
        "{:?}",
        out.missing_info
    );
}

#[test]
fn gap_round_outputs_the_full_snapshot() {
    let q = "why is payment-service slow?";
    let prior = output(vec![claim(
        "claim-1",
        "symptom",
        "HighCPUUsage is firing on payment-service (value=92%)",
        vec![binding("query_metrics", 7, "$.alerts[0]", ALERT)],
    )]);
    let retry = RetryContext {
        mode: PlannerMode::EvidenceGapOnly,
        round: 2,
        prior_verified_output: prior.clone(),
        prior_verified_evidence: vec![],
        evidence_gaps: vec![EvidenceGap {
            claim_id: Some("claim-2".into()),
            fact: "payment-service timeouts".into(),
            verification: Verification::NoEvidence,
            reason: "r".into(),
        }],
        completed_queries: vec![CompletedQuery {
            tool: "query_metrics".into(),
            arguments: json!({"service": "payment-service"}),
            invocation_id: 7,
            evidence_status: "supported".into(),
        }],
        constraints: RetryConstraints::default(),
        instruction: "gaps only".into(),
    };
    let p = PlannerPlan {
        selected_skill: None,
        selection_reason: String::new(),
        plan: vec!["q".into()],
        reasoning: String::new(),
        queries: vec![
            PlannedQuery {
                tool: "query_metrics".into(),
                arguments: json!({"service": "payment-service"})
                    .as_object()
                    .cloned()
                    .unwrap(),
                purpose: String::new(),
            },
            PlannedQuery {
                tool: "query_logs".into(),
                arguments: json!({"service": "payment-service", "keyword": "timeout"})
                    .as_object()
                    .cloned()
                    .unwrap(),
                purpose: String::new(),
            },
        ],
        subjects: Default::default(),
    };
    let input = executor_input(q, &p, Some(retry));
    let mut b = FakeBackend::default();
    b.logs.push(log(
        "2026-07-08T23:00:00Z",
        "payment-service",
        "ERROR",
        "fraud-check timeout after 5000ms",
    ));
    let (out, _, results) = run_executor(&input, &mut b);
    // The completed query is not repeated; the prior claim is kept as is.
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["tool"], json!("query_logs"));
    assert_eq!(out.claims[0], prior.claims[0]);
    assert_eq!(out.claims.len(), 2);
    assert_eq!(out.claims[1].claim_id, "claim-2");

    // Nothing new planned: the snapshot is the prior output, with a note.
    let mut empty = input.clone();
    empty.planner_plan.queries.clear();
    let (out, turns, results) = run_executor(&empty, &mut b);
    assert!(results.is_empty());
    assert_eq!(turns, 1);
    assert_eq!(out.claims, prior.claims);
    assert!(!out.missing_info.is_empty());
}

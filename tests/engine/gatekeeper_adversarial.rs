//! Adversarial executor outputs against realistic invocations of one run:
//! every Gatekeeper rule at its severity, plus hostile shapes (foreign and
//! fabricated ids, sub-paths, unicode, huge inputs). Doctored excerpts are
//! in `gatekeeper_excerpts.rs`; the run itself in `gatekeeper_run.rs`.

use crate::gatekeeper_run::{
    CPU, KB, LOG0, NONE, assert_single_failure, binding, claim, executor, foreign, gate, inv,
    run_invocations,
};
use diagraph::engine::nodes::gatekeeper::{GatekeeperRules, check};
use diagraph::engine::nodes::verified_input::project;
use diagraph::vocab::contracts::{BindingStatus, normalize_gatekeeper};
use diagraph::vocab::graph::Outcome;
use diagraph::vocab::tool::EvidenceStatus;
use serde_json::{Value, json};

#[test]
fn a_clean_multi_tool_diagnosis_passes() {
    let out = executor(vec![
        claim(
            "observation",
            "payment-service has HighCPUUsage firing at 92%",
            vec![binding(
                "query_metrics",
                json!(101),
                json!("$.alerts[0]"),
                "alertname=HighCPUUsage service=payment-service state=firing value=92%",
            )],
        ),
        claim(
            "symptom",
            "order-service cannot get DB connections within 30000ms",
            vec![
                binding(
                    "query_logs",
                    json!(102),
                    json!("$.logs[0]"),
                    "HikariPool-1 - Connection is not available, request timed out after 30000ms",
                ),
                binding(
                    "lookup_knowledge",
                    json!("103"),
                    json!("$.evidence_blocks[0]"),
                    "当连接池耗尽时，请求会在 30000ms 后超时",
                ),
            ],
        ),
        claim(
            "negative_observation",
            "this query found no HikariCP logs for inventory-service",
            vec![binding(
                "query_logs",
                json!(104),
                json!("$.no_evidence"),
                "query_logs returned no evidence; query=inventory-service HikariCP; total=0",
            )],
        ),
    ]);
    let r = gate(&out);
    assert_eq!(
        (r.status.as_str(), r.severity.as_str()),
        ("pass", "none"),
        "{:?}",
        r.errors
    );
    assert_eq!(normalize_gatekeeper(Some(&r)), Outcome::Pass);
    assert_eq!(r.checked_bindings.len(), 4);
    let texts: Vec<&str> = r
        .checked_bindings
        .iter()
        .map(|b| b.matched_text.as_str())
        .collect();
    assert_eq!(texts, vec![CPU, LOG0, KB, NONE]);
    let p = project(&out, &r);
    assert_eq!(p.verified_binding_count, 4);
    assert_eq!(p.verified_output.claims.len(), 3);
}

#[test]
fn fabricated_foreign_and_non_numeric_ids_reject() {
    for id in [
        json!(999),
        json!(foreign().id),
        json!("inv-abc"),
        json!(-1),
        json!(1.5),
        json!(true),
    ] {
        let r = assert_single_failure(
            vec![claim(
                "observation",
                "pool exhausted",
                vec![binding("query_logs", id.clone(), json!("$.logs[0]"), LOG0)],
            )],
            "binding.invocation_owned",
            "reject",
        );
        assert_eq!(normalize_gatekeeper(Some(&r)), Outcome::Reject, "{id}");
    }
    // Even with the foreign invocation's exact text, and with that invocation
    // visible to the caller, a run only checks against its own list.
    let mut mixed = run_invocations();
    let out = executor(vec![claim(
        "observation",
        "x",
        vec![binding("query_logs", json!(201), json!("$.logs[0]"), LOG0)],
    )]);
    assert_eq!(
        check(&out, &mixed, &GatekeeperRules::shipped()).severity,
        "reject"
    );
    mixed.push(foreign());
    assert_eq!(
        check(&out, &mixed, &GatekeeperRules::shipped()).severity,
        "none"
    );
}

#[test]
fn tool_name_mismatch_rejects() {
    assert_single_failure(
        vec![claim(
            "observation",
            "cpu high",
            vec![binding(
                "query_logs",
                json!(101),
                json!("$.alerts[0]"),
                "HighCPUUsage value=92%",
            )],
        )],
        "binding.tool_name",
        "reject",
    );
    assert_single_failure(
        vec![claim(
            "observation",
            "cpu high",
            vec![binding(
                "",
                json!(101),
                json!("$.alerts[0]"),
                "HighCPUUsage value=92%",
            )],
        )],
        "binding.tool_name",
        "reject",
    );
}

#[test]
fn sub_paths_and_malformed_paths_reject() {
    for path in [
        "$.alerts[0].state",
        "$.alerts[0].labels.service",
        "$.alerts",
        "$.alerts[*]",
        "alerts[0]",
        "$['alerts'][0]",
    ] {
        assert_single_failure(
            vec![claim(
                "observation",
                "cpu",
                vec![binding(
                    "query_metrics",
                    json!(101),
                    json!(path),
                    "state=firing",
                )],
            )],
            "binding.raw_path_shape",
            "reject",
        );
    }
}

#[test]
fn real_ids_with_wrong_paths_reject() {
    for (tool, id, path) in [
        ("query_logs", 102, "$.logs[7]"),
        ("query_logs", 102, "$.alerts[0]"),
        ("query_metrics", 101, "$.no_evidence"),
        ("query_logs", 104, "$.logs[0]"),
    ] {
        assert_single_failure(
            vec![claim(
                "observation",
                "x",
                vec![binding(tool, json!(id), json!(path), LOG0)],
            )],
            "binding.raw_path_exists",
            "reject",
        );
    }
}

#[test]
fn negative_claims_bound_to_positive_evidence_reject() {
    assert_single_failure(
        vec![claim(
            "negative_observation",
            "no pool errors in inventory-service",
            vec![binding(
                "query_logs",
                json!(102),
                json!("$.logs[0]"),
                "Connection is not available",
            )],
        )],
        "binding.negative_binds_no_evidence",
        "reject",
    );
}

#[test]
fn positive_claims_bound_to_no_evidence_are_low_confid() {
    let r = assert_single_failure(
        vec![claim(
            "root_cause",
            "inventory-service is healthy",
            vec![binding(
                "query_logs",
                json!(104),
                json!("$.no_evidence"),
                "query_logs returned no evidence",
            )],
        )],
        "binding.positive_needs_positive_evidence",
        "low_confid",
    );
    assert_eq!(r.verified_binding_count(), 0);
}

#[test]
fn claims_without_bindings_are_low_confid() {
    let r = assert_single_failure(
        vec![claim("root_cause", "the DB is overloaded", vec![])],
        "claim.has_bindings",
        "low_confid",
    );
    assert!(r.checked_bindings.is_empty());
}

#[test]
fn invocations_without_refs_are_low_confid() {
    for (tool, id) in [
        ("query_logs", 105),
        ("query_metrics", 106),
        ("read_skill", 107),
    ] {
        assert_single_failure(
            vec![claim(
                "observation",
                "x",
                vec![binding(tool, json!(id), json!("$.logs[0]"), LOG0)],
            )],
            "binding.invocation_has_refs",
            "low_confid",
        );
    }
}

#[test]
fn duplicate_items_in_one_claim_are_low_confid_but_other_claims_may_reuse_them() {
    let b = binding(
        "query_logs",
        json!(102),
        json!("$.logs[0]"),
        "Connection is not available",
    );
    let r = assert_single_failure(
        vec![
            claim("observation", "pool", vec![b.clone(), b.clone()]),
            claim("symptom", "timeouts", vec![b]),
        ],
        "binding.unique_item",
        "low_confid",
    );
    let statuses: Vec<_> = r.checked_bindings.iter().map(|b| b.status).collect();
    assert_eq!(
        statuses,
        vec![
            BindingStatus::Pass,
            BindingStatus::Fail,
            BindingStatus::Pass
        ]
    );
    let p = project(&executor(vec![]), &r);
    assert_eq!(p.verified_binding_count, 0);
}

#[test]
fn missing_ids_backfill_only_on_a_unique_match() {
    let out = executor(vec![claim(
        "observation",
        "cpu",
        vec![binding(
            "query_metrics",
            Value::Null,
            json!("$.alerts[1]"),
            "HighLatency value=1.8s",
        )],
    )]);
    let r = gate(&out);
    assert_eq!(r.status, "pass", "{:?}", r.errors);
    assert!(r.checked_bindings[0].backfilled);
    assert_eq!(r.checked_bindings[0].source_invocation_id, Some(101));
    assert!(r.warnings.iter().any(|w| w.contains("backfilled")));
    let p = project(&out, &r);
    assert_eq!(
        p.verified_output.claims[0].evidence_bindings[0].source_invocation_id,
        Some(101)
    );

    // Wrong excerpt, wrong tool, both fields missing, or two candidates: no backfill.
    for b in [
        binding(
            "query_metrics",
            Value::Null,
            json!("$.alerts[1]"),
            "HighLatency value=9.9s",
        ),
        binding(
            "query_logs",
            Value::Null,
            json!("$.alerts[1]"),
            "HighLatency value=1.8s",
        ),
        binding(
            "query_metrics",
            Value::Null,
            Value::Null,
            "HighLatency value=1.8s",
        ),
    ] {
        assert_single_failure(
            vec![claim("observation", "x", vec![b])],
            "binding.invocation_id_present",
            "low_confid",
        );
    }
    let mut twice = run_invocations();
    twice.push(inv(
        108,
        7,
        "query_logs",
        EvidenceStatus::Supported,
        &[("$.logs[0]", LOG0)],
    ));
    let out = executor(vec![claim(
        "observation",
        "x",
        vec![binding(
            "query_logs",
            Value::Null,
            json!("$.logs[0]"),
            "Connection is not available",
        )],
    )]);
    let r = check(&out, &twice, &GatekeeperRules::shipped());
    assert_eq!(r.severity, "low_confid");
    assert_eq!(r.failed_rules, vec!["binding.invocation_id_present"]);
}

#[test]
fn missing_paths_backfill_only_on_a_unique_ref() {
    let r = gate(&executor(vec![claim(
        "observation",
        "x",
        vec![binding(
            "query_logs",
            json!(102),
            Value::Null,
            "request timed out after 30000ms",
        )],
    )]));
    assert_eq!(r.status, "pass", "{:?}", r.errors);
    assert_eq!(r.checked_bindings[0].raw_path.as_deref(), Some("$.logs[0]"));
    assert_single_failure(
        vec![claim(
            "observation",
            "x",
            vec![binding(
                "query_logs",
                json!(102),
                json!(""),
                "order-service",
            )],
        )],
        "binding.raw_path_present",
        "low_confid",
    );
}

#[test]
fn wrong_answer_version_rejects_even_with_good_bindings() {
    let mut out = executor(vec![claim(
        "observation",
        "cpu",
        vec![binding(
            "query_metrics",
            json!(101),
            json!("$.alerts[0]"),
            "HighCPUUsage",
        )],
    )]);
    for v in ["executor_evidence_v1", "", "EXECUTOR_EVIDENCE_V2"] {
        out.answer_version = v.into();
        let r = gate(&out);
        assert_eq!(r.severity, "reject");
        assert_eq!(r.failed_rules, vec!["contract.answer_version"]);
        assert_eq!(r.checked_bindings[0].status, BindingStatus::Pass);
    }
}

#[test]
fn a_reject_anywhere_wins_over_low_confid_and_passes() {
    let r = gate(&executor(vec![
        claim(
            "observation",
            "cpu",
            vec![binding(
                "query_metrics",
                json!(101),
                json!("$.alerts[0]"),
                "HighCPUUsage",
            )],
        ),
        claim("observation", "dup", vec![]),
        claim(
            "observation",
            "fake",
            vec![binding("query_logs", json!(4242), json!("$.logs[0]"), LOG0)],
        ),
    ]));
    assert_eq!(r.severity, "reject");
    assert_eq!(normalize_gatekeeper(Some(&r)), Outcome::Reject);
    assert_eq!(
        r.failed_rules,
        vec!["claim.has_bindings", "binding.invocation_owned"]
    );
}

#[test]
fn unicode_and_control_characters_never_break_the_check() {
    let weird = "\u{202e}\u{1b}[2J🔥 HikariPool-1 – Connection\u{0301} is not available\u{0000}";
    let r = gate(&executor(vec![claim(
        "observation",
        "x\u{1b}]0;pwn\u{7}",
        vec![
            binding("query_logs", json!(102), json!("$.logs[0]\u{200b}"), weird),
            binding("query_logs", json!(102), json!("$.logs[0]"), weird),
        ],
    )]));
    for e in r.errors.iter().chain(&r.warnings) {
        assert!(!e.chars().any(|c| c.is_control()), "{e:?}");
    }
    assert_eq!(r.checked_bindings[0].status, BindingStatus::Fail);
}

#[test]
fn huge_inputs_are_checked_whole() {
    // Built past the parser's size limit on purpose: the Gatekeeper must
    // cope with whatever it is handed.
    let template = executor(vec![claim(
        "observation",
        "x",
        vec![
            binding(
                "query_logs",
                json!(102),
                json!("$.logs[0]"),
                "Connection is not available",
            ),
            binding(
                "query_logs",
                Value::Null,
                json!("$.logs[0]"),
                "request timed out",
            ),
            binding("query_logs", json!(100_000), json!("$.logs[0]"), "x"),
        ],
    )]);
    let mut out = template.clone();
    for i in 1..5_000 {
        let mut c = template.claims[0].clone();
        c.claim_id = format!("claim-{i}");
        out.claims.push(c);
    }
    let mut big = template.claims[0].clone();
    big.evidence_bindings.truncate(1);
    big.evidence_bindings[0].evidence_excerpt =
        "HikariPool-1 Connection is not available ".repeat(30_000);
    out.claims.push(big);
    // How fast is the Gatekeeper bench's business (bindings per second);
    // here only that every binding of a huge output is checked.
    let r = gate(&out);
    assert_eq!(r.checked_bindings.len(), 15_001);
    assert_eq!(r.severity, "reject");
    // Per claim: the first binding passes, the backfilled second one cites
    // the same item again (unique_item), the third is fabricated. The huge
    // repeated excerpt is not a substring of the ref but all its words are
    // in it: supported, as the overlap rule intends.
    assert_eq!(r.verified_binding_count(), 5_001);
    assert!(r.failed_rules.contains(&"binding.unique_item".to_string()));
}

#[test]
fn only_verified_material_flows_to_the_verifier_retry_and_composer() {
    use diagraph::engine::nodes::allowed::build_composer_input;
    use diagraph::engine::nodes::evidence_retry::{
        build_retry_context, extract_gaps, planner_view,
    };
    use diagraph::engine::nodes::fallback::post_verifier_answer;
    use diagraph::vocab::contracts::{FactCheck, Lang, Verdict, Verification, VerifierOutput};

    let out = executor(vec![
        claim(
            "observation",
            "order-service pool exhausted",
            vec![binding(
                "query_logs",
                json!(102),
                json!("$.logs[0]"),
                "HikariPool-1 - Connection is not available",
            )],
        ),
        claim("root_cause", "UNBACKED: the DBA dropped an index", vec![]),
        claim(
            "observation",
            "UNBACKED: a made-up 500 error",
            vec![binding(
                "query_logs",
                Value::Null,
                json!("$.logs[9]"),
                "HTTP 500",
            )],
        ),
    ]);
    let r = gate(&out);
    assert_eq!(
        normalize_gatekeeper(Some(&r)),
        Outcome::LowConfid,
        "{:?}",
        r.errors
    );
    let p = project(&out, &r);
    assert_eq!(p.ceiling, Verdict::LowConfid);
    assert_eq!(p.verified_output.claims.len(), 1);
    assert_eq!(p.verified_evidence[0].matched_text, LOG0);
    let verifier_view = serde_json::to_string(&p.verified_output).unwrap();
    assert!(!verifier_view.contains("UNBACKED"));

    let fact = |id: &str, text: &str, v| FactCheck {
        claim_id: Some(id.into()),
        fact: text.into(),
        is_critical: true,
        verification: v,
        detail: "needs pool metrics".into(),
        evidence_refs: vec![],
    };
    let verifier = VerifierOutput {
        verdict: Verdict::Pass,
        groundedness_score: 0.9,
        critical_fact_count: 2,
        claim_checks: vec![],
        facts_checked: vec![
            fact(
                "claim-1",
                "order-service pool exhausted",
                Verification::DirectEvidence,
            ),
            fact("claim-9", "pool size too small", Verification::NoEvidence),
        ],
        rationale: "r".into(),
    };
    let gaps = extract_gaps(&verifier);
    let ctx = build_retry_context(1, &p, &gaps, &run_invocations(), Lang::En);
    let ids: Vec<i64> = ctx
        .completed_queries
        .iter()
        .map(|q| q.invocation_id)
        .collect();
    assert_eq!(ids, vec![101, 102, 103, 104, 107]);
    assert_eq!(
        planner_view(&ctx).confirmed_facts,
        vec!["order-service pool exhausted".to_string()]
    );

    let input = build_composer_input(
        "why?",
        Lang::En,
        Verdict::LowConfid,
        &p.verified_output,
        &p.verified_evidence,
        &verifier,
    );
    assert_eq!(input.allowed_claims.len(), 1);
    let answer = post_verifier_answer(Lang::En, &input, &[]);
    // "exhausted" is a word its evidence does not ground: the fallback
    // quotes the evidence instead
    assert!(!answer.contains("order-service pool exhausted"), "{answer}");
    assert!(answer.contains("Connection is not available"), "{answer}");
    assert!(
        answer.contains("pool size too small (no direct evidence)"),
        "{answer}"
    );
    assert!(!answer.contains("UNBACKED"), "{answer}");
}

use super::*;
use crate::vocab::tool::{EvidenceRef, RetrievalDetails};
use serde_json::json;

const ALERT: &str = "alertname=HighCPUUsage service=payment-service severity=critical state=firing value=92% active_for=25m since=2026-07-08T22:40:00Z summary=CPU usage above 90%";
const LOG: &str = "2026-07-08T23:05:28Z ERROR order-service HikariPool-1 - Connection is not available, request timed out after 30000ms";
const NONE: &str = "query_logs returned no evidence; evidence_status=no_evidence; query=service=inventory-service keyword=HikariCP; total=0; message=no matching logs";

fn inv(id: i64, tool: &str, status: EvidenceStatus, refs: &[(&str, &str)]) -> ToolInvocation {
    ToolInvocation {
        id,
        run_id: 1,
        step_id: None,
        seq: id as u32,
        tool_name: tool.into(),
        input_params: json!({}),
        output_preview: String::new(),
        output_length: 0,
        is_truncated: false,
        retrieval_details: RetrievalDetails {
            evidence_status: status,
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
        duration_ms: 1,
        success: true,
        error_message: None,
    }
}

fn invocations() -> Vec<ToolInvocation> {
    vec![
        inv(
            10,
            "query_metrics",
            EvidenceStatus::Supported,
            &[("$.alerts[0]", ALERT)],
        ),
        inv(
            11,
            "query_logs",
            EvidenceStatus::Supported,
            &[("$.logs[0]", LOG)],
        ),
        inv(
            12,
            "query_logs",
            EvidenceStatus::NoEvidence,
            &[("$.no_evidence", NONE)],
        ),
    ]
}

fn bind(tool: &str, id: Option<i64>, path: Option<&str>, excerpt: &str) -> EvidenceBinding {
    EvidenceBinding {
        tool_name: tool.into(),
        source_invocation_id: id,
        raw_path: path.map(str::to_string),
        evidence_excerpt: excerpt.into(),
        ..Default::default()
    }
}

fn output(claims: Vec<(&str, Vec<EvidenceBinding>)>) -> ExecutorEvidence {
    ExecutorEvidence {
        answer_version: EXECUTOR_ANSWER_VERSION.into(),
        claims: claims
            .into_iter()
            .enumerate()
            .map(|(i, (ty, b))| Claim {
                claim_id: format!("claim-{}", i + 1),
                claim_type: ty.into(),
                claim_text: format!("claim text {}", i + 1),
                support_level: "direct".into(),
                evidence_bindings: b,
            })
            .collect(),
        ..Default::default()
    }
}

fn run(out: &ExecutorEvidence) -> GatekeeperResult {
    check(out, &invocations(), &GatekeeperRules::shipped())
}

#[test]
fn correct_bindings_pass_with_the_ref_text() {
    let out = output(vec![
        (
            "observation",
            vec![bind(
                "query_metrics",
                Some(10),
                Some("$.alerts[0]"),
                "HighCPUUsage state=firing value=92%",
            )],
        ),
        (
            "negative_observation",
            vec![bind(
                "query_logs",
                Some(12),
                Some("$.no_evidence"),
                "query_logs returned no evidence; query=inventory-service HikariCP; total=0",
            )],
        ),
    ]);
    let r = run(&out);
    assert_eq!(
        (r.status.as_str(), r.severity.as_str()),
        ("pass", "none"),
        "{:?}",
        r.errors
    );
    assert_eq!(r.rule_set_version, super::RULE_SET_VERSION);
    // the result lists the rules the Gatekeeper checks, not the answer's
    let gatekeeper_rules = RuleId::ALL.iter().filter(|r| r.is_gatekeeper()).count();
    assert_eq!(r.rules.len(), gatekeeper_rules);
    assert!(r.rules.iter().all(|x| !x.id.starts_with("answer.")));
    assert_eq!(r.checked_bindings.len(), 2);
    assert_eq!(r.checked_bindings[0].matched_text, ALERT);
    assert_eq!(r.checked_bindings[1].matched_text, NONE);
    assert_eq!(r.verified_binding_count(), 2);
    assert!(r.errors.is_empty() && r.failed_rules.is_empty() && r.warnings.is_empty());
}

#[test]
fn missing_id_backfills_only_on_a_unique_match() {
    let out = output(vec![(
        "observation",
        vec![bind(
            "query_logs",
            None,
            Some("$.logs[0]"),
            "Connection is not available",
        )],
    )]);
    let r = run(&out);
    assert_eq!(r.status, "pass", "{:?}", r.errors);
    let b = &r.checked_bindings[0];
    assert!(b.backfilled);
    assert_eq!(b.source_invocation_id, Some(11));
    assert_eq!(r.warnings.len(), 1);

    // Two invocations hold the same item: ambiguous, so no backfill.
    let mut two = invocations();
    two.push(inv(
        13,
        "query_logs",
        EvidenceStatus::Supported,
        &[("$.logs[0]", LOG)],
    ));
    let r = check(&out, &two, &GatekeeperRules::shipped());
    assert_eq!(r.severity, "low_confid");
    assert_eq!(r.failed_rules, vec!["binding.invocation_id_present"]);
    assert_eq!(r.checked_bindings[0].status, BindingStatus::Fail);
    assert!(!r.checked_bindings[0].backfilled);
}

#[test]
fn missing_path_backfills_from_the_one_supporting_ref() {
    let invs = vec![inv(
        20,
        "query_logs",
        EvidenceStatus::Supported,
        &[
            ("$.logs[0]", LOG),
            (
                "$.logs[1]",
                "2026-07-08T23:06:00Z WARN order-service slow query 1200ms",
            ),
        ],
    )];
    let out = output(vec![(
        "observation",
        vec![bind(
            "query_logs",
            Some(20),
            None,
            "request timed out after 30000ms",
        )],
    )]);
    let r = check(&out, &invs, &GatekeeperRules::shipped());
    assert_eq!(r.status, "pass", "{:?}", r.errors);
    assert_eq!(r.checked_bindings[0].raw_path.as_deref(), Some("$.logs[0]"));
    assert!(r.checked_bindings[0].backfilled);

    let out = output(vec![(
        "observation",
        vec![bind("query_logs", Some(20), None, "order-service")],
    )]);
    let r = check(&out, &invs, &GatekeeperRules::shipped());
    assert_eq!(r.severity, "low_confid");
    assert_eq!(r.failed_rules, vec!["binding.raw_path_present"]);
}

#[test]
fn wrong_answer_version_and_empty_claims_are_reported() {
    let mut out = output(vec![("observation", vec![])]);
    out.answer_version = "executor_evidence_v1".into();
    let r = run(&out);
    assert_eq!(r.severity, "reject");
    assert_eq!(
        r.failed_rules,
        vec!["contract.answer_version", "claim.has_bindings"]
    );
    assert_eq!(r.errors.len(), 2);
    assert!(r.errors[1].contains("claim-1"), "{}", r.errors[1]);
}

#[test]
fn disabled_rules_are_skipped_but_unresolved_bindings_never_pass() {
    let mut rules = GatekeeperRules::shipped();
    for r in &mut rules.rules {
        if r.id.starts_with("binding.excerpt_") || r.id == "binding.invocation_owned" {
            r.enabled = false;
        }
    }
    let out = output(vec![(
        "observation",
        vec![
            bind(
                "query_metrics",
                Some(10),
                Some("$.alerts[0]"),
                "something else entirely",
            ),
            bind(
                "query_metrics",
                Some(999),
                Some("$.alerts[0]"),
                "HighCPUUsage",
            ),
        ],
    )]);
    let r = check(&out, &invocations(), &rules);
    assert_eq!(r.checked_bindings[0].status, BindingStatus::Pass);
    assert_eq!(r.checked_bindings[1].status, BindingStatus::Fail);
    assert_eq!(r.severity, "low_confid");
    assert!(r.rules.iter().all(|s| s.id != "binding.excerpt_supported"));
}

#[test]
fn a_rule_at_severity_none_only_warns() {
    let mut rules = GatekeeperRules::shipped();
    for r in &mut rules.rules {
        if r.id == "binding.unique_item" {
            r.default_severity = Severity::None;
        }
    }
    let b = bind(
        "query_logs",
        Some(11),
        Some("$.logs[0]"),
        "Connection is not available",
    );
    let out = output(vec![("observation", vec![b.clone(), b])]);
    let r = check(&out, &invocations(), &rules);
    assert_eq!(r.status, "pass", "{:?}", r.errors);
    assert_eq!(r.warnings.len(), 1);
}

#[test]
fn error_lines_quote_untrusted_text_short_and_clean() {
    let long = format!("\u{1b}[31m{}", "x".repeat(500));
    let out = output(vec![(
        "observation",
        vec![bind("query_logs", Some(11), Some(&long), "e")],
    )]);
    let r = run(&out);
    assert_eq!(r.severity, "reject");
    for e in &r.errors {
        assert!(!e.contains('\u{1b}'), "{e}");
        assert!(e.chars().count() < 400, "{e}");
        assert!(
            e.contains("claim-1") && e.contains("binding.raw_path_shape"),
            "{e}"
        );
    }
}

#[test]
fn raw_path_shapes() {
    let arrays: Vec<String> = ["alerts", "logs", "evidence_blocks", "items", "series"]
        .map(String::from)
        .to_vec();
    for ok in [
        "$.alerts[0]",
        "$.logs[12]",
        "$.evidence_blocks[3]",
        "$.items[7]",
        "$.series[2]",
        "$.no_evidence",
    ] {
        assert!(raw_path_shape_ok(ok, &arrays), "{ok}");
    }
    assert_eq!(raw_path_array("$.series[4]"), Some("series"));
    assert!(!raw_path_shape_ok("$.logs[0]", &["alerts".to_string()]));
    for bad in [
        "$.alerts[0].state",
        "$.logs[0].message",
        "$.items[0].name",
        "$.logs",
        "$.logs[-1]",
        "$.logs[01]",
        "$.foo[0]",
        "$..logs[0]",
        "$.logs[0] x",
        "",
    ] {
        assert!(!raw_path_shape_ok(bad, &arrays), "{bad}");
    }
}

fn alert_binding() -> EvidenceBinding {
    bind(
        "query_metrics",
        Some(10),
        Some("$.alerts[0]"),
        "HighCPUUsage state=firing",
    )
}

#[test]
fn enum_values_outside_the_contract_reject_in_any_spelling_but_the_exact_one() {
    for (claim_type, level) in [
        ("Negative_Observation", "direct"),
        ("negative observation", "direct"),
        ("negative-observation", "direct"),
        ("NEGATIVE_OBSERVATION", "direct"),
        ("ｎｅｇａｔｉｖｅ＿ｏｂｓｅｒｖａｔｉｏｎ", "direct"),
        ("negative_observation ", "direct"),
        ("Observation", "direct"),
        ("root cause", "direct"),
        ("finding", "direct"),
        ("", "direct"),
        ("observation", "Direct"),
        ("observation", "strong"),
        ("observation", " direct"),
    ] {
        let mut out = output(vec![(claim_type, vec![alert_binding()])]);
        out.claims[0].support_level = level.into();
        let r = run(&out);
        assert_eq!(
            r.severity, "reject",
            "{claim_type:?}/{level:?}: {:?}",
            r.errors
        );
        assert!(
            r.failed_rules.iter().any(|f| f == "contract.enum_values"),
            "{claim_type:?}/{level:?}: {:?}",
            r.failed_rules
        );
        let e = &r.claim_errors[0];
        assert_eq!(e.rule, "contract.enum_values");
        assert_eq!(e.claim_id.as_deref(), Some("claim-1"));
        assert_eq!(e.claim_index, Some(0));
    }
    for ty in CLAIM_TYPES {
        let binding = if ty == "negative_observation" {
            bind(
                "query_logs",
                Some(12),
                Some("$.no_evidence"),
                "query_logs returned no evidence",
            )
        } else {
            alert_binding()
        };
        let r = run(&output(vec![(ty, vec![binding])]));
        assert!(r.claim_errors.is_empty(), "{ty}: {:?}", r.errors);
    }
}

#[test]
fn a_repeated_claim_id_rejects_whatever_its_spelling() {
    for second in ["claim-1", "CLAIM-1", " claim-1 ", "ｃｌａｉｍ－１"] {
        let mut out = output(vec![
            ("observation", vec![alert_binding()]),
            ("root_cause", vec![alert_binding()]),
        ]);
        out.claims[1].claim_id = second.into();
        let r = run(&out);
        assert_eq!(r.severity, "reject", "{second:?}");
        assert_eq!(
            r.failed_rules,
            vec!["contract.unique_claim_id"],
            "{second:?}"
        );
        assert_eq!(r.claim_errors[0].claim_index, Some(1));
        assert!(r.errors[0].contains("claims[0]"), "{}", r.errors[0]);
    }
}

#[test]
fn no_claims_fails_low_confid_with_a_claim_level_error() {
    let r = run(&output(vec![]));
    assert_eq!(
        (r.status.as_str(), r.severity.as_str()),
        ("fail", "low_confid")
    );
    assert_eq!(r.failed_rules, vec!["contract.has_claims"]);
    assert_eq!(r.verified_binding_count(), 0);
    assert_eq!(r.claim_errors[0].claim_id, None);
}

#[test]
fn bindings_on_hypotheses_and_actions_are_checked_but_never_verify() {
    use crate::vocab::contracts::{Hypothesis, RecommendedAction};
    let honest = bind(
        "query_logs",
        Some(11),
        Some("$.logs[0]"),
        "HikariPool-1 - Connection is not available",
    );
    let mut out = output(vec![("observation", vec![alert_binding()])]);
    out.hypotheses = vec![Hypothesis {
        hypothesis_text: "the pool is too small".into(),
        evidence_bindings: vec![honest.clone()],
        ..Default::default()
    }];
    out.recommended_actions = vec![RecommendedAction {
        action_text: "check inventory-service".into(),
        reason: String::new(),
        // a found-nothing ref may motivate an action: no claim-type rule applies
        evidence_bindings: vec![bind(
            "query_logs",
            Some(12),
            Some("$.no_evidence"),
            "query_logs returned no evidence",
        )],
    }];
    let r = run(&out);
    assert_eq!(
        (r.status.as_str(), r.severity.as_str()),
        ("pass", "none"),
        "{:?}",
        r.errors
    );
    assert_eq!(
        r.verified_binding_count(),
        1,
        "items never count as verified"
    );
    let ids: Vec<&str> = r
        .unverified_bindings
        .iter()
        .map(|b| b.claim_id.as_str())
        .collect();
    assert_eq!(ids, vec!["hypotheses[0]", "recommended_actions[0]"]);

    // each cheat fails with its rule, at the rule's severity
    for (binding, rule) in [
        (
            bind(
                "query_logs",
                Some(999),
                Some("$.logs[0]"),
                "HikariPool-1 - Connection",
            ),
            "binding.invocation_owned",
        ),
        (
            bind(
                "query_logs",
                Some(11),
                Some("$.logs[0]"),
                "HikariPool-1 - Connection is available",
            ),
            "binding.excerpt_polarity",
        ),
        (
            bind(
                "query_logs",
                Some(11),
                Some("$.logs[0]"),
                "HikariPool-2 - Connection is not available",
            ),
            "binding.excerpt_facts",
        ),
        (
            bind("query_logs", Some(11), Some("$.logs[0]"), "ERROR"),
            "binding.excerpt_identifies",
        ),
        (
            bind(
                "query_logs",
                Some(11),
                Some("$.logs[0].message"),
                "HikariPool-1 - Connection is not available",
            ),
            "binding.raw_path_shape",
        ),
    ] {
        for hypothesis in [true, false] {
            let mut out = output(vec![("observation", vec![alert_binding()])]);
            let item = if hypothesis {
                out.hypotheses = vec![Hypothesis {
                    hypothesis_text: "h".into(),
                    evidence_bindings: vec![binding.clone()],
                    ..Default::default()
                }];
                "hypotheses[0]"
            } else {
                out.recommended_actions = vec![RecommendedAction {
                    action_text: "a".into(),
                    reason: String::new(),
                    evidence_bindings: vec![binding.clone()],
                }];
                "recommended_actions[0]"
            };
            let r = run(&out);
            assert_eq!(r.severity, "reject", "{rule}");
            assert_eq!(r.failed_rules, vec![rule], "{:?}", r.errors);
            assert_eq!(r.unverified_bindings[0].failed_rule.as_deref(), Some(rule));
            assert!(r.errors[0].contains(item), "{}", r.errors[0]);
            assert_eq!(r.verified_binding_count(), 1);
        }
    }
}

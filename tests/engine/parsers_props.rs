//! Model output is untrusted: every contract parser takes arbitrary bytes,
//! strings and JSON-shaped garbage (built from the contracts' own field
//! names, so the generator reaches deep into the parsers) without
//! panicking, and a successful parse always yields the contract's
//! invariants.

use diagraph::vocab::contracts::{
    find_overstatement, parse_composer_output, parse_executor_evidence, parse_gatekeeper_result,
    parse_planner_plan, parse_verifier_output,
};
use proptest::prelude::*;
use serde_json::{Map, Value};

const KEYS: &[&str] = &[
    "plan",
    "selected_skill",
    "selection_reason",
    "reasoning",
    "queries",
    "tool",
    "arguments",
    "answer_version",
    "claims",
    "claim_id",
    "claim_type",
    "claim_text",
    "support_level",
    "evidence_bindings",
    "tool_name",
    "source_invocation_id",
    "raw_path",
    "evidence_excerpt",
    "hypotheses",
    "hypothesis_text",
    "recommended_actions",
    "action_text",
    "reason",
    "missing_info",
    "status",
    "severity",
    "rule_set_version",
    "rules",
    "checked_bindings",
    "matched_text",
    "failed_rules",
    "warnings",
    "errors",
    "verdict",
    "groundedness_score",
    "facts_checked",
    "fact",
    "is_critical",
    "verification",
    "detail",
    "evidence_refs",
    "rationale",
    "user_facing_answer",
    "answer_summary",
    "diagnosis_summary",
    "step",
];

const WORDS: &[&str] = &[
    "PASS",
    "LOW_CONFID",
    "REJECT",
    "executor_evidence_v2",
    "direct_evidence",
    "no_evidence",
    "indirect_support",
    "contradicted",
    "$.logs[0]",
    "$.no_evidence",
    "pass",
    "fail",
    "reject",
    "low_confid",
    "none",
    "ruled out",
    "已排除",
    "",
    " ",
    "\u{0}",
    "\u{1b}[31m",
    "𝔘",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop::sample::select(WORDS).prop_map(|s| Value::String(s.to_string())),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..8).prop_map(|kv| {
                Value::Object(
                    kv.into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect::<Map<_, _>>(),
                )
            }),
        ]
    })
}

fn run_all(text: &str) {
    if let Ok(p) = parse_planner_plan(text) {
        assert!(!p.plan.is_empty());
    }
    if let Ok(e) = parse_executor_evidence(text) {
        assert!(e.claims.iter().all(|c| !c.claim_text.trim().is_empty()));
    }
    let _ = parse_gatekeeper_result(text);
    if let Ok(v) = parse_verifier_output(text) {
        assert!((0.0..=1.0).contains(&v.groundedness_score));
        assert_eq!(
            v.critical_fact_count as usize,
            v.facts_checked.iter().filter(|f| f.is_critical).count()
        );
    }
    if let Ok(c) = parse_composer_output(text) {
        assert!(!c.user_facing_answer.trim().is_empty());
        let _ = find_overstatement(&c);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        run_all(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn random_strings_never_panic(s in ".{0,256}") {
        run_all(&s);
        run_all(&format!("```json\n{s}\n```"));
    }

    #[test]
    fn json_shaped_garbage_never_panics(v in json_value(), cut in 0usize..400) {
        let text = v.to_string();
        run_all(&text);
        run_all(&format!("```\n{text}\n```"));
        // Truncated JSON, cut at any char boundary.
        let mut end = cut.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        run_all(&text[..end]);
    }

    #[test]
    fn contract_shaped_objects_never_panic(
        claims in prop::collection::vec(json_value(), 0..4),
        facts in prop::collection::vec(json_value(), 0..4),
        verdict in prop::sample::select(WORDS),
        score in any::<f64>(),
    ) {
        let executor = serde_json::json!({"answer_version": "executor_evidence_v2", "claims": claims});
        run_all(&executor.to_string());
        let verifier = serde_json::json!({"verdict": verdict, "groundedness_score": score, "facts_checked": facts});
        run_all(&verifier.to_string());
        let planner = serde_json::json!({"plan": claims, "queries": facts});
        run_all(&planner.to_string());
    }
}

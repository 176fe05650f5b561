//! Property tests: random executor outputs against random invocations.
//! The Gatekeeper never panics, a binding citing an id outside this run's
//! list never passes, a reject-rule failure always makes the result reject,
//! and what passes resolves to a real ref text.

use diagraph::engine::nodes::gatekeeper::{
    ExcerptParams, GatekeeperRules, NormText, check, supports,
};
use diagraph::engine::nodes::verified_input::project;
use diagraph::vocab::contracts::{
    BindingStatus, Claim, EvidenceBinding, ExecutorEvidence, Severity,
};
use diagraph::vocab::tool::{EvidenceRef, EvidenceStatus, RetrievalDetails, ToolInvocation};
use proptest::prelude::*;
use std::collections::HashSet;

const TOOLS: [&str; 5] = [
    "query_metrics",
    "query_logs",
    "lookup_knowledge",
    "read_skill",
    "Query_Logs",
];
const PATHS: [&str; 9] = [
    "$.alerts[0]",
    "$.alerts[1]",
    "$.logs[0]",
    "$.logs[1]",
    "$.evidence_blocks[0]",
    "$.no_evidence",
    "$.logs[0].message",
    "$.alerts",
    "",
];
const WORDS: [&str; 14] = [
    "error",
    "timeout",
    "30000ms",
    "92%",
    "payment-service",
    "HikariPool-1",
    "连接池",
    "耗尽",
    "not",
    "firing",
    "ＣＰＵ",
    "🔥",
    "\u{1b}[31m",
    "value=1.5s",
];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS.to_vec()), 0..8).prop_map(|w| w.join(" "))
}

fn status() -> impl Strategy<Value = EvidenceStatus> {
    prop::sample::select(vec![
        EvidenceStatus::Supported,
        EvidenceStatus::NoEvidence,
        EvidenceStatus::Deduped,
        EvidenceStatus::Failed,
    ])
}

fn invocation() -> impl Strategy<Value = ToolInvocation> {
    (
        0i64..12,
        prop::sample::select(TOOLS[..4].to_vec()),
        status(),
        any::<bool>(),
        prop::collection::vec((prop::sample::select(PATHS[..6].to_vec()), text()), 0..4),
    )
        .prop_map(|(id, tool, status, blocked, refs)| ToolInvocation {
            id,
            run_id: 1,
            step_id: None,
            seq: 0,
            tool_name: tool.into(),
            input_params: serde_json::Value::Null,
            output_preview: String::new(),
            output_length: 0,
            is_truncated: false,
            retrieval_details: RetrievalDetails {
                evidence_status: status,
                evidence_refs: refs
                    .into_iter()
                    .map(|(p, t)| EvidenceRef {
                        raw_path: p.into(),
                        text: t,
                    })
                    .collect(),
                deduped_from: None,
                blocked,
                retrieved_domains: vec![],
                source: Default::default(),
            },
            dedup_reason: None,
            duration_ms: 0,
            success: true,
            error_message: None,
        })
}

fn binding() -> impl Strategy<Value = EvidenceBinding> {
    (
        prop::sample::select(TOOLS.to_vec()),
        prop::option::of(-2i64..16),
        prop::option::of("[a-z0-9-]{1,6}"),
        prop::option::of(prop_oneof![
            prop::sample::select(PATHS.to_vec()).prop_map(String::from),
            ".{0,12}"
        ]),
        prop_oneof![text(), ".{0,40}"],
    )
        .prop_map(|(tool, id, bad, path, excerpt)| EvidenceBinding {
            tool_name: tool.into(),
            source_invocation_id: if bad.is_some() { None } else { id },
            invalid_invocation_id: bad,
            raw_path: path,
            evidence_excerpt: excerpt,
            ..Default::default()
        })
}

fn output() -> impl Strategy<Value = ExecutorEvidence> {
    (
        prop::sample::select(vec!["executor_evidence_v2", "executor_evidence_v1", ""]),
        prop::collection::vec(
            (
                prop::sample::select(vec![
                    "observation",
                    "negative_observation",
                    "root_cause",
                    "",
                ]),
                prop::sample::select(vec!["claim-1", "claim-2", "claim-1"]),
                prop::collection::vec(binding(), 0..4),
            ),
            0..5,
        ),
    )
        .prop_map(|(version, claims)| ExecutorEvidence {
            answer_version: version.into(),
            claims: claims
                .into_iter()
                .map(|(ty, id, b)| Claim {
                    claim_id: id.into(),
                    claim_type: ty.into(),
                    claim_text: "t".into(),
                    support_level: "direct".into(),
                    evidence_bindings: b,
                })
                .collect(),
            ..Default::default()
        })
}

fn reject_rules(rules: &GatekeeperRules) -> HashSet<String> {
    rules
        .rules
        .iter()
        .filter(|r| r.enabled && r.default_severity == Severity::Reject)
        .map(|r| r.id.clone())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn gatekeeper_invariants(out in output(), invs in prop::collection::vec(invocation(), 0..6)) {
        let rules = GatekeeperRules::shipped();
        let r = check(&out, &invs, &rules);
        prop_assert_eq!(&r, &check(&out, &invs, &rules), "deterministic");

        let bindings: Vec<&EvidenceBinding> =
            out.claims.iter().flat_map(|c| c.evidence_bindings.iter()).collect();
        prop_assert_eq!(bindings.len(), r.checked_bindings.len());
        let ids: HashSet<i64> = invs.iter().map(|i| i.id).collect();

        for (b, cb) in bindings.iter().zip(&r.checked_bindings) {
            let cited_foreign = b.invalid_invocation_id.is_some()
                || b.source_invocation_id.is_some_and(|id| !ids.contains(&id));
            if cited_foreign {
                prop_assert_eq!(cb.status, BindingStatus::Fail);
                prop_assert_eq!(cb.failed_rule.as_deref(), Some("binding.invocation_owned"));
            }
            if cb.status == BindingStatus::Pass {
                let id = cb.source_invocation_id.unwrap();
                let path = cb.raw_path.as_deref().unwrap();
                let real = invs.iter().filter(|i| i.id == id).take(1).any(|i| {
                    i.tool_name == cb.tool_name
                        && i.retrieval_details.evidence_refs.iter()
                            .any(|rf| rf.raw_path == path && rf.text == cb.matched_text)
                });
                prop_assert!(real, "a passing binding must resolve to a ref of this run");
                prop_assert!(cb.failed_rule.is_none());
            } else {
                prop_assert!(cb.matched_text.is_empty());
                prop_assert!(cb.failed_rule.is_some());
            }
        }

        let rejects = reject_rules(&rules);
        if r.failed_rules.iter().any(|f| rejects.contains(f)) {
            prop_assert_eq!(r.severity.as_str(), "reject");
        }
        let clean = r.failed_rules.is_empty() && r.errors.is_empty();
        prop_assert_eq!(r.status == "pass", clean);
        prop_assert_eq!(r.severity == "none", clean);
        for line in r.errors.iter().chain(&r.warnings) {
            prop_assert!(!line.chars().any(char::is_control));
        }

        let p = project(&out, &r);
        prop_assert_eq!(p.verified_binding_count, r.verified_binding_count());
        prop_assert!(p.verified_output.claims.iter().all(|c| !c.evidence_bindings.is_empty()));
        for e in &p.verified_evidence {
            let real = invs.iter().any(|i| i.id == e.source_invocation_id
                && i.retrieval_details.evidence_refs.iter().any(|rf| rf.text == e.matched_text));
            prop_assert!(real);
        }
    }

    #[test]
    fn changing_a_number_breaks_support(words in prop::collection::vec("[a-z]{2,8}", 2..10), n in 0u32..100_000, at in 0usize..10) {
        let mut ref_words = words.clone();
        let at = at.min(ref_words.len());
        ref_words.insert(at, n.to_string());
        let reference = NormText::new(&ref_words.join(" "));
        let params = ExcerptParams::default();
        prop_assert!(supports(&NormText::new(&ref_words.join(", ")), &reference, &params).is_ok());
        let mut doctored = ref_words.clone();
        doctored[at] = (u64::from(n) + 1).to_string();
        prop_assert!(supports(&NormText::new(&doctored.join(" ")), &reference, &params).is_err());
    }

    #[test]
    fn normalisation_never_panics(s in "\\PC{0,200}", t in ".{0,200}") {
        let params = ExcerptParams::default();
        let _ = supports(&NormText::new(&s), &NormText::new(&t), &params);
    }
}

//! Property tests: random executor outputs against random invocations.
//! The Gatekeeper never panics, a binding citing an id outside this run's
//! list never passes, a reject-rule failure always makes the result reject,
//! and what passes resolves to a real ref text.

use diagraph::engine::nodes::gatekeeper::{
    ExcerptParams, FactText, GatekeeperRules, check, supports,
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
                buckets: None,
            },
            dedup_reason: None,
            duration_ms: 0,
            success: true,
            error_message: None,
        })
}

/// A run's invocations: their ids are unique, as the store's keys are.
fn invocations() -> impl Strategy<Value = Vec<ToolInvocation>> {
    prop::collection::vec(invocation(), 0..6).prop_map(|mut invs| {
        let mut seen = HashSet::new();
        invs.retain(|i| seen.insert(i.id));
        invs
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
    fn gatekeeper_invariants(out in output(), invs in invocations()) {
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
        let reference = FactText::new(&ref_words.join(" "));
        let params = ExcerptParams::default();
        prop_assert!(supports(&FactText::new(&ref_words.join(", ")), &reference, &params).is_ok());
        let mut doctored = ref_words.clone();
        doctored[at] = (u64::from(n) + 1).to_string();
        prop_assert!(supports(&FactText::new(&doctored.join(" ")), &reference, &params).is_err());
    }

    #[test]
    fn a_units_spacing_never_breaks_support(words in prop::collection::vec("[a-z]{2,8}", 2..10), n in 0u32..100_000, at in 0usize..10, unit in prop::sample::select(vec!["ms", "s", "min", "h", "%", "MB", "GiB", "req/s", "毫秒", "分钟"])) {
        let at = at.min(words.len());
        let mut attached = words.clone();
        attached.insert(at, format!("{n}{unit}"));
        let mut spaced = words.clone();
        spaced.insert(at, format!("{n} {unit}"));
        let params = ExcerptParams::default();
        for (ex, rf) in [(&spaced, &attached), (&attached, &spaced)] {
            let reference = FactText::new(&rf.join(" "));
            prop_assert!(supports(&FactText::new(&ex.join(" ")), &reference, &params).is_ok());
        }
    }

    #[test]
    fn normalisation_never_panics(s in "\\PC{0,200}", t in ".{0,200}") {
        let params = ExcerptParams::default();
        let _ = supports(&FactText::new(&s), &FactText::new(&t), &params);
    }
}

/// Realistic refs for the fact-comparison properties: a log line
/// `TS LEVEL service clause, clause, ...`, some clauses negated
/// (`... not available`), some with a number.
mod quoting {
    use super::*;

    pub const SERVICES: [&str; 5] = [
        "payment-service",
        "order-service",
        "inventory-service",
        "user-service",
        "gateway-api",
    ];
    /// Content words, in two halves so two refs can be made to differ.
    pub const WORDS_A: [&str; 6] = ["connection", "pool", "request", "query", "cache", "socket"];
    pub const WORDS_B: [&str; 6] = [
        "thread", "handler", "upstream", "session", "buffer", "lease",
    ];
    pub const STATES: [&str; 3] = ["available", "reachable", "healthy"];

    #[derive(Debug, Clone)]
    pub struct Clause {
        pub words: Vec<&'static str>,
        pub negated_state: Option<&'static str>,
        pub number: Option<(u32, &'static str)>,
    }

    impl Clause {
        pub fn render(&self, negate: bool) -> String {
            let mut out: Vec<String> = self.words.iter().map(|w| w.to_string()).collect();
            if let Some(state) = self.negated_state {
                out.push("is".into());
                if negate {
                    out.push("not".into());
                }
                out.push(state.into());
            }
            if let Some((n, unit)) = self.number {
                out.push(format!("after {n}{unit}"));
            }
            out.join(" ")
        }
    }

    #[derive(Debug, Clone)]
    pub struct LogRef {
        pub hms: (u32, u32, u32),
        pub level: &'static str,
        pub service: &'static str,
        pub clauses: Vec<Clause>,
    }

    impl LogRef {
        pub fn text(&self) -> String {
            let (h, m, s) = self.hms;
            let body: Vec<String> = self.clauses.iter().map(|c| c.render(true)).collect();
            format!(
                "2026-07-08T{h:02}:{m:02}:{s:02}Z {} {} {}",
                self.level,
                self.service,
                body.join(", ")
            )
        }

        /// The ref's own timestamp in one of the common renderings.
        pub fn stamp(&self, style: usize) -> String {
            let (h, m, s) = self.hms;
            match style % 6 {
                0 => format!("2026-07-08 {h:02}:{m:02}:{s:02}"),
                1 => format!("2026-07-08T{h:02}:{m:02}:{s:02}Z"),
                2 => format!("2026/07/08 {h:02}:{m:02}:{s:02}.000"),
                3 => format!("{h:02}:{m:02}:{s:02}"),
                4 => format!("07-08 {h:02}:{m:02}:{s:02}"),
                _ => format!("2026年7月8日 {h:02}:{m:02}:{s:02}"),
            }
        }
    }

    fn clause(words: &'static [&'static str]) -> impl Strategy<Value = Clause> {
        (
            prop::sample::subsequence(words.to_vec(), 2..4),
            prop::option::of(prop::sample::select(STATES.to_vec())),
            prop::option::of((1u32..99_999, prop::sample::select(vec!["ms", "s", ""]))),
        )
            .prop_map(|(words, negated_state, number)| Clause {
                words,
                negated_state,
                number,
            })
    }

    pub fn log_ref(words: &'static [&'static str]) -> impl Strategy<Value = LogRef> {
        (
            (0u32..24, 0u32..60, 0u32..60),
            prop::sample::select(vec!["ERROR", "WARN", "INFO"]),
            prop::sample::select(SERVICES.to_vec()),
            prop::collection::vec(clause(words), 1..4),
        )
            .prop_map(|(hms, level, service, clauses)| LogRef {
                hms,
                level,
                service,
                clauses,
            })
    }

    /// An honest excerpt: a run of whole clauses, with or without the
    /// header (timestamp in some rendering, level, service).
    pub fn excerpt(r: &LogRef, from: usize, len: usize, header: bool, style: usize) -> String {
        let from = from % r.clauses.len();
        let to = (from + 1 + len % r.clauses.len()).min(r.clauses.len());
        let body: Vec<String> = r.clauses[from..to].iter().map(|c| c.render(true)).collect();
        if header && from == 0 {
            format!(
                "{} {} {} {}",
                r.stamp(style),
                r.level,
                r.service,
                body.join(", ")
            )
        } else {
            body.join(", ")
        }
    }

    pub fn params() -> ExcerptParams {
        ExcerptParams::default()
    }

    pub fn ok(excerpt: &str, reference: &str) -> bool {
        supports(
            &FactText::new(excerpt),
            &FactText::new(reference),
            &params(),
        )
        .is_ok()
    }
}

proptest! {
    #[test]
    fn an_honest_quote_of_a_ref_with_its_timestamp_passes(
        r in quoting::log_ref(&quoting::WORDS_A), from in 0usize..4, len in 0usize..4,
        header in any::<bool>(), style in 0usize..6,
    ) {
        let text = r.text();
        let e = quoting::excerpt(&r, from, len, header, style);
        prop_assert!(quoting::ok(&e, &text), "{e:?} should quote {text:?}");
        // case and full width do not matter
        let wide: String = e.to_uppercase().chars().map(|c| match c {
            '!'..='~' => char::from_u32(c as u32 + 0xFEE0).unwrap_or(c),
            _ => c,
        }).collect();
        prop_assert!(quoting::ok(&wide, &text), "{wide:?} should quote {text:?}");
    }

    #[test]
    fn adding_or_dropping_a_negation_fails(r in quoting::log_ref(&quoting::WORDS_A), pick in 0usize..4) {
        let text = r.text();
        let k = pick % r.clauses.len();
        let c = &r.clauses[k];
        if c.negated_state.is_some() {
            // the ref says "is not X"; quoting "is X" drops the negation
            let dropped = c.render(false);
            prop_assert!(!quoting::ok(&dropped, &text), "{dropped:?} passed against {text:?}");
            let zh_style = format!("{}，{}", r.service, dropped);
            prop_assert!(!quoting::ok(&zh_style, &text));
        } else {
            let mut words: Vec<String> = c.render(true).split(' ').map(String::from).collect();
            words.insert(1, "not".into());
            let added = words.join(" ");
            prop_assert!(!quoting::ok(&added, &text), "{added:?} passed against {text:?}");
        }
    }

    #[test]
    fn swapping_a_service_or_a_number_fails(
        r in quoting::log_ref(&quoting::WORDS_A), other in 0usize..5, bump in 1u32..9, style in 0usize..6,
    ) {
        let text = r.text();
        let honest = quoting::excerpt(&r, 0, 3, true, style);
        let service = quoting::SERVICES[other];
        if service != r.service {
            let swapped = honest.replacen(r.service, service, 1);
            prop_assert!(!quoting::ok(&swapped, &text), "{swapped:?} passed against {text:?}");
        }
        if let Some((n, unit)) = r.clauses.iter().find_map(|c| c.number) {
            let from = format!("{n}{unit}");
            let to = format!("{}{unit}", n + bump);
            let swapped = text.split_once(' ').map(|(_, rest)| rest.replacen(&from, &to, 1)).unwrap_or_default();
            prop_assert!(!quoting::ok(&swapped, &text), "{swapped:?} passed against {text:?}");
        }
        // another instant is not the ref's timestamp
        let (h, m, s) = r.hms;
        let late = format!("2026-07-08 {h:02}:{m:02}:{:02} {} {}", (s + 1) % 60, r.level, r.service);
        prop_assert!(!quoting::ok(&late, &text), "{late:?} passed against {text:?}");
    }

    #[test]
    fn splicing_two_refs_fails(
        a in quoting::log_ref(&quoting::WORDS_A), b in quoting::log_ref(&quoting::WORDS_B),
        fa in 0usize..4, fb in 0usize..4,
    ) {
        let (ta, tb) = (a.text(), b.text());
        let spliced = format!(
            "{}, {}",
            quoting::excerpt(&a, fa, 0, false, 0),
            quoting::excerpt(&b, fb, 0, false, 0)
        );
        prop_assert!(!quoting::ok(&spliced, &ta), "{spliced:?} passed against {ta:?}");
        prop_assert!(!quoting::ok(&spliced, &tb), "{spliced:?} passed against {tb:?}");
    }
}

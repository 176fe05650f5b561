use super::*;
use crate::vocab::contracts::{
    ComposerAction, ComposerStatement, Hypothesis, Lang, NO_EVIDENCE_PATH, RecommendedAction,
    Verdict, Verification,
};
use crate::vocab::dto::{AllowedClaim, ComposerInput, VerifiedEvidence};

const ALERT: &str =
    "alert HighCPUUsage service=payment-service severity=critical state=firing value=92 for=25m";
const NOTHING: &str = "query_logs returned no evidence; evidence_status=no_evidence; query=service=inventory-service level=ERROR; total=0";

fn claim(id: &str, ty: &str, path: &str, text: &str) -> AllowedClaim {
    AllowedClaim {
        claim_id: id.into(),
        claim_type: ty.into(),
        claim_text: "the Executor's wording, never shown by the answer".into(),
        verification: Verification::DirectEvidence,
        is_negative: path == NO_EVIDENCE_PATH,
        evidence: vec![VerifiedEvidence {
            claim_id: id.into(),
            source_invocation_id: if path == NO_EVIDENCE_PATH { 2 } else { 1 },
            tool_name: if path == NO_EVIDENCE_PATH {
                "query_logs"
            } else {
                "query_metrics"
            }
            .into(),
            raw_path: path.into(),
            matched_text: text.into(),
        }],
    }
}

fn input(lang: Lang) -> ComposerInput {
    ComposerInput {
        original_query: "why is payment-service slow?".into(),
        lang,
        verdict: Verdict::Pass,
        allowed_claims: vec![
            claim("c1", "observation", "$.alerts[0]", ALERT),
            claim("c2", "negative_observation", NO_EVIDENCE_PATH, NOTHING),
        ],
        allowed_hypotheses: vec![Hypothesis {
            hypothesis_text: "GC pressure may drive the CPU".into(),
            ..Default::default()
        }],
        missing_info: vec!["latency metrics".into()],
        recommended_actions: vec![RecommendedAction {
            action_text: "check GC logs".into(),
            ..Default::default()
        }],
        rationale: String::new(),
    }
}

fn output(statements: &[(&str, &[&str])]) -> ComposerOutput {
    ComposerOutput {
        answer_summary: String::new(),
        statements: statements
            .iter()
            .map(|(t, ids)| ComposerStatement {
                text: (*t).into(),
                claim_ids: ids.iter().map(|s| s.to_string()).collect(),
            })
            .collect(),
        recommended_actions: vec![ComposerAction {
            action_text: "Check the top CPU consumers on payment-service hosts.".into(),
            reason: String::new(),
        }],
        user_facing_answer: String::new(),
    }
}

fn run(lang: Lang, statements: &[(&str, &[&str])]) -> Result<Assembled, Rejection> {
    let names = vec!["payment-service".to_string(), "redis".to_string()];
    assemble(
        &input(lang),
        &output(statements),
        &names,
        &GatekeeperRules::shipped(),
    )
}

fn rule(lang: Lang, statements: &[(&str, &[&str])]) -> &'static str {
    match run(lang, statements) {
        Ok(a) => panic!("accepted: {}", a.text),
        Err(r) => r.rule.as_str(),
    }
}

#[test]
fn faithful_statements_are_assembled_with_code_made_parts() {
    let a = run(
        Lang::En,
        &[(
            "payment-service has the HighCPUUsage alert firing at 92% for 25 minutes.",
            &["c1"],
        )],
    )
    .unwrap();
    let t = &a.text;
    assert!(
        t.contains("Findings:\n- payment-service has the HighCPUUsage alert firing at 92% for 25 minutes. [query_metrics #1 $.alerts[0]]"),
        "{t}"
    );
    assert!(t.contains("What the queries did not find:\n- The query query_logs (service=inventory-service level=ERROR) found no matching logs."), "{t}");
    let unverified = t.find("Not verified").unwrap();
    assert!(
        t.find("- Missing: latency metrics").unwrap() > unverified,
        "{t}"
    );
    assert!(
        t.find("Hypothesis: GC pressure").unwrap() > unverified,
        "{t}"
    );
    assert!(
        t.find("Next step: Check the top CPU").unwrap() > unverified,
        "{t}"
    );
    assert!(!t.contains("the Executor's wording"), "{t}");

    let zh = run(
        Lang::Zh,
        &[(
            "payment-service 的 HighCPUUsage 告警正在触发，CPU 为 92%，持续 25 分钟。",
            &["C1 "],
        )],
    )
    .unwrap();
    assert!(
        zh.text
            .contains("发现：\n- payment-service 的 HighCPUUsage"),
        "{}",
        zh.text
    );
    assert!(zh.text.contains("本次查询未检索到："), "{}", zh.text);
    assert!(zh.text.contains("未经验证"), "{}", zh.text);
}

#[test]
fn a_statement_must_name_verified_claims() {
    for lang in [Lang::En, Lang::Zh] {
        assert_eq!(
            rule(lang, &[("payment-service CPU is at 92%", &[])]),
            "answer.statement_cites_claim"
        );
        assert_eq!(
            rule(lang, &[("payment-service CPU is at 92%", &["c9"])]),
            "answer.statement_cites_claim"
        );
    }
    // a seed-002 free-text answer is one statement naming no claim
    let mut legacy = output(&[]);
    legacy.user_facing_answer = "payment-service is fine.".into();
    let r = assemble(&input(Lang::En), &legacy, &[], &GatekeeperRules::shipped()).unwrap_err();
    assert_eq!(r.rule, RuleId::StatementCitesClaim);
}

#[test]
fn added_facts_are_rejected_by_their_rule_in_english_and_chinese() {
    for (lang, s, want) in [
        (
            Lang::En,
            "order-service has the HighCPUUsage alert firing.",
            "answer.statement_facts",
        ),
        (
            Lang::En,
            "payment-service CPU is at 97%.",
            "answer.statement_facts",
        ),
        (Lang::En, "redis CPU is at 92%.", "answer.statement_facts"),
        (
            Lang::Zh,
            "order-service 的 HighCPUUsage 告警正在触发。",
            "answer.statement_facts",
        ),
        (
            Lang::Zh,
            "payment-service 的 CPU 为 ٩٧%。",
            "answer.statement_facts",
        ),
        (
            Lang::En,
            "The HighCPUUsage alert on payment-service is resolved.",
            "answer.statement_polarity",
        ),
        (
            Lang::En,
            "The HighCPUUsage alert on payment-service is not firing.",
            "answer.statement_polarity",
        ),
        (
            Lang::En,
            "payment-service is healthy apart from the CPU alert.",
            "answer.statement_polarity",
        ),
        (
            Lang::Zh,
            "payment-service 的 HighCPUUsage 告警已经恢复。",
            "answer.statement_polarity",
        ),
        (
            Lang::Zh,
            "payment-service 一切正常。",
            "answer.statement_polarity",
        ),
    ] {
        // the allowlist names an ungrounded word before the structural
        // checks run: either rejection holds the attack
        let got = rule(lang, &[(s, &["c1"])]);
        assert!(
            got == want || got == "answer.statement_grounded",
            "{s}: {got}"
        );
    }
}

#[test]
fn over_statements_of_a_negative_finding_are_rejected_whatever_their_wording() {
    for (lang, s) in [
        (Lang::En, "inventory-service errors are ruled-out."),
        (Lang::En, "inventory-service was confirmed to be healthy."),
        (Lang::En, "There is no problem with inventory-service."),
        (Lang::Zh, "inventory-service 的错误已经排除。"),
        (Lang::Zh, "inventory-service 没有问题。"),
        (Lang::Zh, "inventory-service 不存在错误。"),
    ] {
        let got = rule(lang, &[(s, &["c2"])]);
        assert!(
            matches!(
                got,
                "answer.statement_polarity" | "answer.statement_grounded"
            ),
            "{s}: {got}"
        );
    }
    // an honest one passes, and is shown as the template, not as written
    let a = run(
        Lang::En,
        &[(
            "The query found no ERROR logs for inventory-service.",
            &["c2"],
        )],
    )
    .unwrap();
    assert!(
        !a.text.contains("The query found no ERROR logs"),
        "{}",
        a.text
    );
    assert!(a.text.contains("found no matching logs"), "{}", a.text);
}

#[test]
fn a_negative_finding_cannot_lend_its_negation_to_a_positive_claim() {
    assert_eq!(
        rule(
            Lang::En,
            &[("payment-service has no CPU alert firing.", &["c1", "c2"])]
        ),
        "answer.negative_by_template"
    );
}

#[test]
fn concluding_unverified_lines_are_dropped_with_their_rule() {
    let mut out = output(&[("payment-service CPU is at 92%.", &["c1"])]);
    out.recommended_actions.push(ComposerAction {
        action_text: "Nothing else to do: inventory-service is healthy.".into(),
        reason: String::new(),
    });
    let mut inp = input(Lang::En);
    inp.allowed_hypotheses.push(Hypothesis {
        hypothesis_text: "数据库一切正常".into(),
        ..Default::default()
    });
    let a = assemble(&inp, &out, &[], &GatekeeperRules::shipped()).unwrap();
    assert!(
        !a.text.contains("healthy") && !a.text.contains("正常"),
        "{}",
        a.text
    );
    assert_eq!(a.warnings.len(), 2, "{:?}", a.warnings);
    assert!(
        a.warnings
            .iter()
            .all(|w| w.starts_with("answer.unverified_conclusion"))
    );
}

#[test]
fn switching_a_rule_off_lets_its_check_pass() {
    let mut rules = GatekeeperRules::shipped();
    for r in &mut rules.rules {
        if matches!(
            r.id.as_str(),
            "answer.statement_facts" | "answer.statement_grounded"
        ) {
            r.enabled = false;
        }
    }
    let names: Vec<String> = vec![];
    let out = output(&[("payment-service CPU is at 97%.", &["c1"])]);
    assert!(assemble(&input(Lang::En), &out, &names, &rules).is_ok());
    // polarity stays on
    let out = output(&[("payment-service is healthy.", &["c1"])]);
    assert_eq!(
        assemble(&input(Lang::En), &out, &names, &rules)
            .unwrap_err()
            .rule,
        RuleId::StatementPolarity
    );
}

#[test]
fn a_long_statement_is_shown_whole_as_checked() {
    let long = format!(
        "{} SQLTransientConnectionException on order-service",
        "2026-07-08T22:55:04Z ERROR order-service POST /orders failed; ".repeat(10)
    );
    let mut inp = input(Lang::En);
    inp.allowed_claims[0].evidence[0].matched_text = long.clone();
    let out = output(&[(long.as_str(), &["c1"])]);
    let a = assemble(&inp, &out, &[], &GatekeeperRules::shipped()).unwrap();
    assert!(
        a.text
            .contains("SQLTransientConnectionException on order-service"),
        "{}",
        a.text
    );
}

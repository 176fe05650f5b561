use super::*;
use crate::evidence::facts::FactText;
use crate::evidence::facts::grounded::concludes;
use crate::vocab::contracts::{Hypothesis, NO_EVIDENCE_PATH, RecommendedAction};
use crate::vocab::contracts::{OVERSTATEMENT_PHRASES, Verification};
use crate::vocab::dto::VerifiedEvidence;
use crate::vocab::graph::ReasonCode;
use crate::vocab::tool::{EvidenceRef, RetrievalDetails};

const REASONS: [ReasonCode; 7] = [
    ReasonCode::PlannerFailed,
    ReasonCode::ExecutorInvalidOutput,
    ReasonCode::ExecutorToolBlocked,
    ReasonCode::ExecutorFailed,
    ReasonCode::GatekeeperReject,
    ReasonCode::GatekeeperNoVerifiedBinding,
    ReasonCode::VerifierFailed,
];

fn inv(status: EvidenceStatus, blocked: bool, success: bool) -> ToolInvocation {
    ToolInvocation {
        id: 1,
        run_id: 1,
        step_id: None,
        seq: 0,
        tool_name: "query_logs".into(),
        input_params: serde_json::json!({"keyword": "SECRET_TOOL_TEXT"}),
        output_preview: "SECRET_TOOL_TEXT".into(),
        output_length: 16,
        is_truncated: false,
        retrieval_details: RetrievalDetails {
            evidence_status: status,
            evidence_refs: vec![EvidenceRef {
                raw_path: "$.logs[0]".into(),
                text: "SECRET_TOOL_TEXT".into(),
            }],
            deduped_from: None,
            blocked,
            retrieved_domains: vec![],
            source: Default::default(),
            buckets: None,
        },
        dedup_reason: None,
        duration_ms: 0,
        success,
        error_message: Some("SECRET_TOOL_TEXT".into()),
    }
}

fn evidence(path: &str, text: &str) -> VerifiedEvidence {
    VerifiedEvidence {
        claim_id: "c".into(),
        source_invocation_id: 17,
        tool_name: "query_logs".into(),
        raw_path: path.into(),
        matched_text: text.into(),
    }
}

fn allowed(text: &str, negative: bool, v: Verification) -> AllowedClaim {
    let ev = if negative {
        evidence(
            NO_EVIDENCE_PATH,
            "query_logs returned no evidence; evidence_status=no_evidence; query=keyword=HikariCP service=inventory-service; total=0; message=none",
        )
    } else {
        evidence(
            "$.logs[0]",
            "2026-07-08T23:05:28Z ERROR order-service HikariPool-1",
        )
    };
    AllowedClaim {
        claim_id: "c".into(),
        claim_type: if negative {
            "negative_observation"
        } else {
            "observation"
        }
        .into(),
        claim_text: text.into(),
        verification: v,
        is_negative: negative,
        evidence: vec![ev],
    }
}

fn input(lang: Lang, verdict: Verdict, claims: Vec<AllowedClaim>) -> ComposerInput {
    ComposerInput {
        original_query: "q".into(),
        lang,
        verdict,
        allowed_claims: claims,
        allowed_hypotheses: vec![Hypothesis {
            hypothesis_text: "slow queries hold connections".into(),
            ..Default::default()
        }],
        missing_info: vec!["database metrics".into()],
        recommended_actions: vec![RecommendedAction {
            action_text: "check the slow query log".into(),
            ..Default::default()
        }],
        rationale: "r".into(),
    }
}

#[test]
fn counts_come_from_invocations() {
    let invs = vec![
        inv(EvidenceStatus::Supported, false, true),
        inv(EvidenceStatus::NoEvidence, false, true),
        inv(EvidenceStatus::Deduped, false, true),
        inv(EvidenceStatus::Failed, false, false),
        inv(EvidenceStatus::Failed, true, false),
    ];
    let c = ToolCounts::from_invocations(&invs);
    assert_eq!(
        c,
        ToolCounts {
            succeeded: 3,
            failed: 1,
            blocked: 1
        }
    );
    assert_eq!(c.describe(Lang::En), "3 succeeded, 1 failed, 1 blocked");
    assert_eq!(c.describe(Lang::Zh), "成功 3 次，失败 1 次，阻断 1 次");
}

/// An answer over-states when a phrase of the old list, or a concluding
/// state word on any line, appears in it.
fn has_overstatement(a: &str) -> bool {
    let lower = a.to_lowercase();
    OVERSTATEMENT_PHRASES.iter().any(|p| lower.contains(p))
        || a.lines().any(|l| concludes(&FactText::new(l)).is_some())
}

fn names() -> Vec<String> {
    vec!["order-service".into(), "inventory-service".into()]
}

#[test]
fn pre_verification_answer_states_reason_counts_and_trace_pointer() {
    let counts = ToolCounts {
        succeeded: 4,
        failed: 2,
        blocked: 1,
    };
    for lang in [Lang::En, Lang::Zh] {
        let mut seen = Vec::new();
        for reason in REASONS {
            let a = pre_verification_answer(lang, Some(reason), None, counts, 42);
            assert!(a.contains("diagraph trace 42"), "{a}");
            assert!(a.contains(&counts.describe(lang)), "{a}");
            match lang {
                Lang::En => assert!(a.contains("No trustworthy root cause"), "{a}"),
                Lang::Zh => assert!(a.contains("当前无法给出可信根因"), "{a}"),
            }
            assert!(!has_overstatement(&a), "{a}");
            assert!(
                !seen.contains(&a),
                "wording must depend on the reason: {reason}"
            );
            seen.push(a);
        }
        let generic = pre_verification_answer(lang, None, None, counts, 42);
        assert!(generic.contains("diagraph trace 42"));
    }
    let en = pre_verification_answer(
        Lang::En,
        Some(ReasonCode::GatekeeperReject),
        None,
        counts,
        7,
    );
    assert!(en.contains("evidence-citation validation"), "{en}");
    let zh = pre_verification_answer(
        Lang::Zh,
        Some(ReasonCode::GatekeeperReject),
        None,
        counts,
        7,
    );
    assert!(zh.contains("证据引用校验"), "{zh}");
}

#[test]
fn a_model_failure_is_named_by_its_class_not_as_structure_validation() {
    let counts = ToolCounts::default();
    let cases = [
        (
            AgentRole::Planner,
            FailureClass::Timeout,
            "planner model timed out",
            "规划模型调用超时",
        ),
        (
            AgentRole::Executor,
            FailureClass::Quota,
            "executor model is out of quota",
            "执行模型配额已用尽",
        ),
        (
            AgentRole::Verifier,
            FailureClass::Connection,
            "verifier model could not be reached",
            "校验模型无法连接",
        ),
        (
            AgentRole::Planner,
            FailureClass::Unauthorized,
            "check the API key",
            "请检查 API key",
        ),
        (
            AgentRole::Executor,
            FailureClass::RateLimited,
            "rate limited",
            "被限流",
        ),
    ];
    let mut seen = Vec::new();
    for (role, class, en, zh) in cases {
        let reason = match role {
            AgentRole::Planner => ReasonCode::PlannerFailed,
            AgentRole::Executor => ReasonCode::ExecutorFailed,
            _ => ReasonCode::VerifierFailed,
        };
        let cause = Some(ModelCause { role, class });
        let a = pre_verification_answer(Lang::En, Some(reason), cause, counts, 1);
        assert!(a.contains(en), "{a}");
        assert!(!a.contains("structure validation"), "{a}");
        let b = pre_verification_answer(Lang::Zh, Some(reason), cause, counts, 1);
        assert!(b.contains(zh), "{b}");
        assert!(!b.contains("结构校验"), "{b}");
        assert!(!seen.contains(&a));
        seen.push(a);
    }
    // an invalid output is still a validation failure
    let a = pre_verification_answer(Lang::En, Some(ReasonCode::PlannerFailed), None, counts, 1);
    assert!(a.contains("structure validation"), "{a}");
}

#[test]
fn pre_verification_answer_carries_no_tool_text() {
    let invs = vec![
        inv(EvidenceStatus::Supported, false, true),
        inv(EvidenceStatus::Failed, false, false),
    ];
    let counts = ToolCounts::from_invocations(&invs);
    for lang in [Lang::En, Lang::Zh] {
        let a = pre_verification_answer(
            lang,
            Some(ReasonCode::ExecutorInvalidOutput),
            None,
            counts,
            3,
        );
        assert!(!a.contains("SECRET_TOOL_TEXT"));
        assert!(!a.contains("query_logs"));
    }
}

#[test]
fn banners_only_for_low_confid_and_reject() {
    for lang in [Lang::En, Lang::Zh] {
        assert_eq!(verdict_banner(lang, Verdict::Pass), None);
        let low = verdict_banner(lang, Verdict::LowConfid).unwrap();
        let rej = verdict_banner(lang, Verdict::Reject).unwrap();
        assert_ne!(low, rej);
        assert!(!has_overstatement(low) && !has_overstatement(rej));
    }
}

#[test]
fn templates_follow_the_verdict_in_both_languages() {
    let claims = || {
        vec![
            allowed(
                "order-service HikariPool-1 ERROR",
                false,
                Verification::DirectEvidence,
            ),
            allowed(
                "HikariPool-1 errors on order-service",
                false,
                Verification::IndirectSupport,
            ),
        ]
    };
    let en_low = post_verifier_answer(
        Lang::En,
        &input(Lang::En, Verdict::LowConfid, claims()),
        &names(),
    );
    assert!(en_low.starts_with(verdict_banner(Lang::En, Verdict::LowConfid).unwrap()));
    for part in [
        "Confirmed information:",
        "- order-service HikariPool-1 ERROR [query_logs #17 $.logs[0]]",
        "HikariPool-1 errors on order-service (indirect support only)",
        "Current gaps (not verified):",
        "- database metrics",
        "Not verified (hypotheses and next steps, not checked against the evidence):",
        "- Hypothesis: slow queries hold connections",
        "- Next step: check the slow query log",
    ] {
        assert!(en_low.contains(part), "{part}\n{en_low}");
    }
    let unverified = en_low.find("Not verified").unwrap();
    assert!(
        en_low.find("slow queries hold connections").unwrap() > unverified,
        "hypotheses only in the unverified section"
    );

    let zh_rej = post_verifier_answer(
        Lang::Zh,
        &input(Lang::Zh, Verdict::Reject, claims()),
        &names(),
    );
    for part in [
        "当前无法基于已获取证据生成可靠结论。",
        "已确认信息：",
        "证据缺口（未经验证）：",
        "未经验证（假设与下一步建议，未与证据核对）：",
        "下一步：check the slow query log",
    ] {
        assert!(zh_rej.contains(part), "{part}\n{zh_rej}");
    }
    let zh_low = post_verifier_answer(
        Lang::Zh,
        &input(Lang::Zh, Verdict::LowConfid, claims()),
        &names(),
    );
    assert!(zh_low.starts_with("以下结论基于当前已获取证据，仍存在部分证据缺口，请谨慎参考。"));
    assert!(zh_low.contains("当前缺口（未经验证）：") && zh_low.contains("（仅有间接证据）"));

    let en_pass = post_verifier_answer(
        Lang::En,
        &input(Lang::En, Verdict::Pass, claims()),
        &names(),
    );
    assert!(en_pass.starts_with("Confirmed findings:"), "{en_pass}");
    assert!(en_pass.contains("- Hypothesis: slow queries hold connections"));
}

#[test]
fn a_claim_text_that_says_more_than_its_evidence_is_replaced_by_the_evidence() {
    for (lang, text) in [
        (Lang::En, "order-service pool exhausted on payment-service"),
        (Lang::En, "order-service HikariPool-1 is healthy again"),
        (Lang::En, "order-service errors started at 23:50"),
        (Lang::Zh, "order-service 的连接池已经恢复正常"),
        (Lang::Zh, "order-service 连接池 HikariPool-2 耗尽"),
    ] {
        let i = input(
            lang,
            Verdict::Pass,
            vec![allowed(text, false, Verification::DirectEvidence)],
        );
        let a = post_verifier_answer(lang, &i, &names());
        assert!(!a.contains(text), "{a}");
        assert!(
            a.contains("\"2026-07-08T23:05:28Z ERROR order-service HikariPool-1\" [query_logs #17 $.logs[0]]"),
            "{a}"
        );
    }
}

#[test]
fn empty_material_still_renders_every_section() {
    for lang in [Lang::En, Lang::Zh] {
        for verdict in [Verdict::Pass, Verdict::LowConfid, Verdict::Reject] {
            let mut i = input(lang, verdict, vec![]);
            i.allowed_hypotheses.clear();
            i.missing_info.clear();
            i.recommended_actions.clear();
            let a = post_verifier_answer(lang, &i, &names());
            assert!(!has_overstatement(&a), "{a}");
            assert!(a.contains(titles(lang).none), "{a}");
            assert!(a.contains(titles(lang).default_step), "{a}");
        }
    }
}

#[test]
fn negative_claims_are_the_template_never_the_claim_text() {
    let cases = [
        (
            Lang::En,
            "HikariCP pool exhaustion in inventory-service is ruled out",
        ),
        (Lang::En, "inventory-service is healthy: no HikariCP errors"),
        (Lang::En, "inventory-service was confirmed to be healthy"),
        (
            Lang::En,
            "HikariCP errors are ruled-out for inventory-service",
        ),
        (Lang::Zh, "inventory-service 连接池耗尽问题已排除"),
        (Lang::Zh, "日志层面确认没有连接池错误"),
        (Lang::Zh, "inventory-service 已经排除，一切正常"),
        (
            Lang::En,
            "this query found no HikariCP logs for inventory-service",
        ),
    ];
    for (lang, text) in cases {
        for verdict in [Verdict::Pass, Verdict::LowConfid, Verdict::Reject] {
            let i = input(
                lang,
                verdict,
                vec![allowed(text, true, Verification::DirectEvidence)],
            );
            let a = post_verifier_answer(lang, &i, &names());
            assert!(!has_overstatement(&a), "{a}");
            assert!(!a.contains(text), "{a}");
            assert!(a.contains("query_logs #17"), "{a}");
            assert!(
                a.contains("keyword=HikariCP service=inventory-service"),
                "{a}"
            );
            match lang {
                Lang::En => assert!(a.contains("found no matching logs"), "{a}"),
                Lang::Zh => assert!(a.contains("未检索到匹配的日志"), "{a}"),
            }
        }
    }
}

#[test]
fn concluding_hypotheses_actions_and_gaps_are_dropped_and_text_is_one_line() {
    let mut i = input(
        Lang::En,
        Verdict::LowConfid,
        vec![allowed(
            "order-service\n\u{1b}[2JHikariPool-1 ERROR",
            false,
            Verification::DirectEvidence,
        )],
    );
    i.allowed_hypotheses[0].hypothesis_text = "the database is healthy".into();
    i.recommended_actions[0].action_text = "nothing to do, no issue".into();
    i.missing_info = vec!["none, everything ruled-out".into(), "数据库一切正常".into()];
    let a = post_verifier_answer(Lang::En, &i, &names());
    assert!(!has_overstatement(&a), "{a}");
    assert!(a.contains("- order-service HikariPool-1 ERROR"), "{a}");
    assert!(!a.contains('\u{1b}'));
    assert!(
        !a.contains("healthy") && !a.contains("no issue") && !a.contains("正常"),
        "{a}"
    );
}

#[test]
fn evidence_lines_carry_only_verified_text() {
    let e = VerifiedEvidence {
        claim_id: "c".into(),
        source_invocation_id: 3,
        tool_name: "query_metrics".into(),
        raw_path: "$.alerts[0]".into(),
        matched_text: "alert HighCPUUsage service=payment-service state=firing value=92".into(),
    };
    let c = AllowedClaim {
        claim_id: "c".into(),
        claim_type: "observation".into(),
        claim_text: "payment-service CPU at 97%".into(),
        verification: Verification::DirectEvidence,
        is_negative: false,
        evidence: vec![e],
    };
    let a = post_verifier_answer(Lang::En, &input(Lang::En, Verdict::Pass, vec![c]), &[]);
    assert!(!a.contains("97"), "{a}");
    assert!(a.contains("value=92"), "{a}");
}

//! cause words. Two verified facts do not verify that one caused the
//! other, and a runbook's "likely causes" are not what happened here. A
//! statement with a cause word rests on one evidence text that states the
//! cause (`answer.statement_cause`); a root_cause claim resting only on
//! knowledge-base text is runbook background in the unverified section
//! (`answer.runbook_background`), in the Composer's answer and the
//! fallback alike.

use crate::answer_rules_engine::{compose, composer, honest_composer};
use crate::statement_paraphrase::{CPU, KB, LAT, LOG, claim_on, names, statement};
use diagraph::evidence::answer::check_text;
use diagraph::evidence::facts::grounded::Added;
use diagraph::vocab::dto::AllowedClaim;
use diagraph::vocab::graph::{NodeId, Outcome};

const CAUSED: &str = "2026-07-08T23:05:30Z ERROR order-service PaymentClient - call failed, caused by java.net.SocketTimeoutException: Read timed out after 5000ms";

fn is_cause(a: &Option<Added>) -> bool {
    matches!(a, Some(Added::Ungrounded(_) | Added::Recombined(_)))
}

#[test]
fn a_cause_between_two_facts_is_rejected_in_english_and_chinese() {
    for (s, ev) in [
        (
            "payment-service HighCPUUsage at 92 caused the order-service HikariPool-1 connection timeouts after 30000ms.",
            &[CPU, LOG][..],
        ),
        (
            "payment-service 的 HighCPUUsage 告警（92）导致 order-service 的 HikariPool-1 连接超时。",
            &[CPU, LOG][..],
        ),
        (
            "order-service HighRequestLatency is firing because HikariPool-1 connection is not available.",
            &[LAT, LOG][..],
        ),
        (
            "由于 HikariPool-1 连接不可用，order-service 的 HighRequestLatency 告警正在触发。",
            &[LAT, LOG][..],
        ),
        (
            "order-service requests time out after 30000ms due to HikariPool-1.",
            &[LOG][..],
        ),
        (
            "HikariPool-1 timeouts led to the order-service HighRequestLatency alert.",
            &[LAT, LOG][..],
        ),
        (
            "payment-service HighCPUUsage is the root cause of the order-service timeouts.",
            &[CPU, LOG][..],
        ),
        (
            "order-service 超时的根因是 payment-service 的 HighCPUUsage。",
            &[CPU, LOG][..],
        ),
        (
            "payment-service 的 HighCPUUsage 告警引起了 order-service 的延迟。",
            &[CPU, LAT][..],
        ),
        // a cause word in one text does not carry facts of another
        (
            "payment-service HighCPUUsage at 92 caused the order-service call failure.",
            &[CPU, CAUSED][..],
        ),
        // a hedge does not excuse a link verb
        (
            "payment-service HighCPUUsage may have caused the order-service timeouts.",
            &[CPU, LOG][..],
        ),
        (
            "payment-service 的 HighCPUUsage 可能导致了超时。",
            &[CPU, LOG][..],
        ),
    ] {
        let got = statement(s, ev);
        assert!(is_cause(&got), "{s}: {got:?}");
    }
}

#[test]
fn a_cause_its_own_evidence_states_passes() {
    for (s, ev) in [
        // the log line states the cause itself
        (
            "order-service's PaymentClient call failed, caused by a SocketTimeoutException after 5000ms.",
            &[CAUSED][..],
        ),
        (
            "order-service 的 PaymentClient 调用失败，原因是 5000ms 后的 SocketTimeoutException。",
            &[CAUSED][..],
        ),
        // a quotation of that line, next to another fact
        (
            "payment-service HighCPUUsage is firing at 92; order-service logged \"call failed, caused by java.net.SocketTimeoutException\".",
            &[CPU, CAUSED][..],
        ),
        // the runbook states its causes
        (
            "The runbook lists slow queries as a likely cause: requests time out after 30000ms.",
            &[KB][..],
        ),
        // no cause word: facts side by side
        (
            "payment-service HighCPUUsage is firing at 92, and order-service HikariPool-1 connection is not available.",
            &[CPU, LOG][..],
        ),
        (
            "payment-service 的 HighCPUUsage 告警正在触发（92），同时 order-service 的 HikariPool-1 连接不可用。",
            &[CPU, LOG][..],
        ),
    ] {
        assert_eq!(statement(s, ev), None, "{s}");
    }
}

#[test]
fn a_hedged_label_stands_only_on_an_observed_root_cause_claim() {
    let observed = claim_on("c-root", "root_cause", "query_metrics", &[CPU, LOG]);
    let runbook = claim_on("c-kb", "root_cause", "lookup_knowledge", &[CPU, LOG]);
    let observation = claim_on("c-obs", "observation", "query_metrics", &[CPU, LOG]);
    for s in [
        "Likely cause on payment-service: HighCPUUsage is firing at 92 while order-service HikariPool-1 connection is not available.",
        "payment-service 的可能根因：HighCPUUsage 告警触发（92）期间，order-service 的 HikariPool-1 连接不可用。",
        "payment-service 可能的原因：HighCPUUsage 告警在 92 触发。",
    ] {
        let check = |c: &AllowedClaim| check_text(s, &[c], &names());
        assert_eq!(check(&observed), None, "{s}");
        assert!(is_cause(&check(&runbook)), "{s}");
        assert!(is_cause(&check(&observation)), "{s}");
    }
}

#[tokio::test]
async fn a_cause_between_two_facts_is_rejected_through_the_engine() {
    for (zh, s) in [
        (
            false,
            "payment-service HighCPUUsage at 92 caused the order-service HikariPool-1 connection timeouts after 30000ms.",
        ),
        (
            true,
            "payment-service 的 HighCPUUsage 告警（92）导致 order-service 的 HikariPool-1 连接超时。",
        ),
    ] {
        let (out, attempts) = compose(
            zh,
            &[composer(&[(s, &["c-cpu", "c-log"])]), honest_composer(zh)],
        )
        .await;
        assert_eq!(attempts[0].0, Outcome::InvalidOutput, "{s}");
        assert!(
            (attempts[0].1.contains("answer.statement_cause")
                || attempts[0].1.contains("answer.statement_grounded")),
            "{s}: {:?}",
            attempts[0].1
        );
        assert_eq!(attempts[1].0, Outcome::Completed, "{s}");
        assert!(!out.end.answer.contains(s), "{}", out.end.answer);
    }
}

/// A run that asks the knowledge base and claims its text as a root cause.
fn runbook_cause_scenario(zh: bool, composers: &[&str]) -> diagraph::scenario::Scenario {
    let (q, question, ex) = if zh {
        (
            "容器反复重启 依赖不可用",
            "payment-service 的容器为什么反复重启？",
            "内存超过限制被系统杀掉（`OOMKilled`）",
        )
    } else {
        (
            "connection pool exhaustion slow queries",
            "Why is order-service slow?",
            "Slow queries hold connections for a long time (missing index, lock waits, a large join)",
        )
    };
    let path = if zh {
        "$.evidence_blocks[1]"
    } else {
        "$.evidence_blocks[0]"
    };
    let mut text = format!(
        r#"name = "runbook-cause"
description = "a runbook's likely causes claimed as the root cause"
pack = "../packs/shop"
question = "{question}"

[[script]]
role = "planner"
text = '''{{"selected_skill": null, "selection_reason": "r", "plan": ["kb"], "reasoning": "r", "queries": [{{"tool": "lookup_knowledge", "arguments": {{"query": "{q}", "limit": 3}}, "purpose": "kb"}}]}}'''

[[script]]
role = "executor"
tool_calls = [{{ name = "lookup_knowledge", arguments = {{ query = "{q}", limit = 3 }} }}]

[[script]]
role = "executor"
text = '''{{"answer_version": "executor_evidence_v2", "claims": [{{"claim_id": "c1", "claim_type": "root_cause", "claim_text": "{ex}", "support_level": "direct", "evidence_bindings": [{{"tool_name": "lookup_knowledge", "source_invocation_id": {{{{invocation:1}}}}, "raw_path": "{path}", "evidence_excerpt": "{ex}"}}]}}], "hypotheses": [], "recommended_actions": [], "missing_info": []}}'''

[[script]]
role = "verifier"
text = '''{{"verdict": "PASS", "groundedness_score": 1.0, "facts_checked": [{{"claim_id": "c1", "fact": "f", "is_critical": true, "verification": "direct_evidence", "detail": "d"}}], "rationale": "r"}}'''
"#
    );
    for c in composers {
        text.push_str(&format!(
            "\n[[script]]\nrole = \"composer\"\ntext = '''{{\"answer_summary\": \"s\", \"statements\": [{{\"text\": \"{c}\", \"claim_ids\": [\"c1\"]}}], \"recommended_actions\": []}}'''\n"
        ));
    }
    diagraph::scenario::Scenario::parse(
        &crate::helpers::scenario_dir().join("runbook-cause.toml"),
        &text,
    )
    .unwrap()
}

#[tokio::test]
async fn a_root_cause_only_a_runbook_states_is_background_never_a_likely_cause() {
    for (zh, st) in [
        (
            false,
            "Slow queries hold connections for a long time (missing index, lock waits).",
        ),
        (true, "容器因内存超过限制被系统杀掉（OOMKilled）。"),
    ] {
        let s = runbook_cause_scenario(zh, &[st]);
        let (out, _, _) = crate::runs::run_scenario(&s).await;
        let a = &out.end.answer;
        let (cause, findings, background) = if zh {
            ("可能原因：", "发现：\n- 容器", "运行手册背景")
        } else {
            ("Likely cause:", "Findings:\n- Slow", "Runbook background")
        };
        assert!(!a.contains(cause), "{a}");
        assert!(!a.contains(findings), "{a}");
        assert!(a.contains(background), "{a}");
        let composer = crate::runs::finished(&out)
            .into_iter()
            .find(|(n, ..)| *n == NodeId::Composer)
            .unwrap();
        assert_eq!(composer.1, Outcome::Completed, "{composer:?}");
        // the post-verifier fallback (the Composer adds a number twice)
        let bad = "Slow queries hold 999 connections.";
        let mut s = runbook_cause_scenario(zh, &[bad, bad]);
        s.name = "runbook-cause-fallback".into();
        let (out, _, _) = crate::runs::run_scenario(&s).await;
        let a = &out.end.answer;
        assert!(out.end.degraded, "{a}");
        assert!(a.contains(background), "{a}");
        assert!(!a.contains(cause), "{a}");
    }
}

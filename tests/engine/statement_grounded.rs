//! Rule `answer.statement_grounded`: every content word of a statement is
//! grounded in the verified evidence of the claims it names, and a
//! statement resting only on runbook text is background
//! (`answer.runbook_background`).
//!
//! Properties: a sub-quote of an evidence text passes; a word outside the
//! evidence, the connectives and the equivalences is rejected and named;
//! a look-alike spelling of a rejected word is rejected too. A corpus of
//! honest statements (English and Chinese, numbers in every common
//! rendering, the source named, converted units) passes.

use crate::statement_paraphrase::{claim_on, statement};
use diagraph::engine::nodes::answer::assemble;
use diagraph::engine::nodes::gatekeeper::GatekeeperRules;
use diagraph::evidence::answer::check_text;
use diagraph::vocab::contracts::{ComposerOutput, ComposerStatement, Lang, Verdict};
use diagraph::vocab::dto::ComposerInput;
use proptest::prelude::*;

const TEXTS: [&str; 5] = [
    "2026-07-08T23:05:28Z ERROR order-service HikariPool-1 - Connection is not available, request timed out after 30000ms",
    "alertname=HighCPUUsage service=payment-service severity=critical state=firing value=0.92 active_for=25m since=2026-07-08T22:40:00Z",
    "2026-07-08T23:00:30Z WARN inventory-service disk usage 12500 MB on volume vol-3, 48 requests waiting",
    "2026-07-08T22:52:02Z ERROR payment-service Request to fraud-check timed out after 5000ms; retrying (attempt 2/3)",
    "2026-07-08T23:10:00Z INFO checkout-service processed 1250 orders in 15 minutes",
];

fn tool_of(text: &str) -> &'static str {
    if text.starts_with("alertname=") {
        "query_metrics"
    } else {
        "query_logs"
    }
}

fn check(s: &str, text: &str) -> Option<String> {
    let c = claim_on("c1", "observation", tool_of(text), &[text]);
    check_text(s, &[&c], &[]).map(|a| a.word().to_string())
}

/// Words that occur in none of the texts nor the lexicon.
fn invented() -> impl Strategy<Value = String> {
    "[b-df-hj-np-tv-z]{3}[aeiou][b-df-hj-np-tv-z]{2}q"
}

/// Latin letters and the Cyrillic letters that look like them.
const LOOK_ALIKES: [(char, char); 7] = [
    ('a', 'а'),
    ('e', 'е'),
    ('o', 'о'),
    ('p', 'р'),
    ('c', 'с'),
    ('x', 'х'),
    ('y', 'у'),
];

fn disguise(w: &str) -> String {
    w.chars()
        .map(|c| {
            LOOK_ALIKES
                .iter()
                .find(|(l, _)| *l == c)
                .map_or(c, |(_, k)| *k)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_sub_quote_of_an_evidence_text_passes(t in 0..TEXTS.len(), from in 0usize..20, len in 1usize..20) {
        // whole clauses: a cut inside a clause could drop its negation
        // ("available" of "not available"), which is a lie, not a quote
        let text = TEXTS[t];
        let clauses: Vec<&str> = text.split([',', ';']).collect();
        let from = from % clauses.len();
        let to = (from + len).min(clauses.len());
        let quote = clauses[from..to].join(",");
        prop_assert_eq!(check(&quote, text), None, "{}", quote);
    }

    #[test]
    fn a_run_of_words_of_a_clause_without_negation_passes(t in 0..TEXTS.len(), from in 0usize..20, len in 1usize..20) {
        let text = TEXTS[t];
        let clause = text.split([',', ';']).find(|c| !c.contains(" not ")).unwrap_or(text);
        let words: Vec<&str> = clause.split_whitespace().collect();
        let from = from % words.len();
        let to = (from + len).min(words.len());
        let quote = words[from..to].join(" ");
        prop_assert_eq!(check(&quote, text), None, "{}", quote);
    }

    #[test]
    fn a_word_outside_evidence_connectives_and_equivalences_is_rejected(
        t in 0..TEXTS.len(),
        w in invented(),
        at in 0usize..20,
    ) {
        let text = TEXTS[t];
        let mut words: Vec<String> = text.split_whitespace().map(String::from).collect();
        let at = at % (words.len() + 1);
        words.insert(at, w.clone());
        let s = words.join(" ");
        prop_assert_eq!(check(&s, text), Some(w.clone()), "{}", s);
    }

    #[test]
    fn a_look_alike_spelling_of_a_rejected_word_is_rejected(
        t in 0..TEXTS.len(),
        w in prop::sample::select(vec!["healthy", "revenue", "deadlocked", "never", "ok", "resolved", "because", "restored"]),
    ) {
        let text = TEXTS[t];
        let plain = format!("{text} {w}");
        let disguised = format!("{text} {}", disguise(w));
        prop_assert!(check(&plain, text).is_some(), "{}", plain);
        prop_assert!(check(&disguised, text).is_some(), "{}", disguised);
    }
}

#[test]
fn honest_statements_pass() {
    let log = TEXTS[0];
    let cpu = TEXTS[1];
    let disk = TEXTS[2];
    let orders = TEXTS[4];
    for (s, e) in [
        // quotes and connectives, the source named
        (
            "The logs show that order-service timed out after 30000ms.",
            log,
        ),
        (
            "Loki reports order-service: Connection is not available.",
            log,
        ),
        (
            "Prometheus reports the HighCPUUsage alert firing on payment-service.",
            cpu,
        ),
        (
            "The alert HighCPUUsage is critical and firing on payment-service.",
            cpu,
        ),
        // converted units and durations
        ("order-service timed out after 30 seconds.", log),
        ("order-service timed out after 30 s.", log),
        (
            "order-service timed out after half a minute, 30000 ms.",
            log,
        ),
        (
            "payment-service HighCPUUsage has been firing for 25 minutes.",
            cpu,
        ),
        // ratios as percentages, numbers in every rendering
        ("payment-service CPU is at 92%.", cpu),
        ("payment-service HighCPUUsage value is 92 percent.", cpu),
        ("inventory-service disk usage is 12,500 MB.", disk),
        ("inventory-service disk usage is 12 500 MB.", disk),
        (
            "checkout-service processed 1,250 orders in a quarter of an hour.",
            orders,
        ),
        (
            "checkout-service processed about 1,200 orders in 15 minutes.",
            orders,
        ),
        // timestamps in other renderings
        (
            "At 23:05 order-service logged ERROR: Connection is not available.",
            log,
        ),
        (
            "On 2026-07-08 at 23:05:28 UTC order-service logged an ERROR.",
            log,
        ),
        // Chinese
        ("order-service 的连接不可用，请求在 30 秒后超时。", log),
        ("日志显示 order-service 在 30000ms 后超时。", log),
        (
            "payment-service 的 HighCPUUsage 告警正在触发，CPU 为 92%，持续 25 分钟。",
            cpu,
        ),
        (
            "inventory-service 的磁盘使用 12500 MB，48 个请求在等待。",
            disk,
        ),
        ("checkout-service 在 15 分钟内处理了 1250 个订单。", orders),
    ] {
        assert_eq!(check(s, e), None, "{s}");
    }
}

#[test]
fn words_of_impact_mechanism_scope_and_sequence_are_rejected() {
    let log = TEXTS[0];
    for (s, word) in [
        ("order-service revenue is dropping.", "revenue"),
        ("order-service threads are deadlocked.", "threads"),
        ("order-service timed out again and again.", "again"),
        ("order-service timed out for a long while.", "long"),
        (
            "order-service timed out, which then made checkout fail.",
            "then",
        ),
        ("Connection is not available => request timed out.", "=>"),
        ("连接不可用，于是请求超时。", "于是"),
        ("order-service est en panne.", "est"),
    ] {
        assert_eq!(check(s, log).as_deref(), Some(word), "{s}");
    }
    // a look-alike negation is a negation the evidence must make
    let cpu = TEXTS[1];
    assert!(check("payment-service HighCPUUsage is n\u{43e}t firing.", cpu).is_some());
}

#[test]
fn a_link_stands_only_where_one_evidence_text_states_it() {
    let stated = "2026-07-08T23:05:28Z ERROR order-service request timed out because Connection is not available";
    assert_eq!(
        check(
            "order-service request timed out because Connection is not available.",
            stated
        ),
        None
    );
    assert_eq!(
        statement(
            "order-service request timed out because payment-service HighCPUUsage is firing.",
            &[TEXTS[0], TEXTS[1]]
        )
        .map(|a| a.word().to_string()),
        Some("because".to_string())
    );
}

fn composer_input(claims: Vec<diagraph::vocab::dto::AllowedClaim>) -> ComposerInput {
    ComposerInput {
        original_query: "why?".into(),
        lang: Lang::En,
        verdict: Verdict::Pass,
        allowed_claims: claims,
        allowed_hypotheses: vec![],
        missing_info: vec![],
        recommended_actions: vec![],
        rationale: String::new(),
    }
}

#[test]
fn a_statement_resting_only_on_runbook_text_is_background_whatever_its_claim_type() {
    let kb = "[database] runbooks/db.md > Likely causes: slow queries hold connections";
    for claim_type in ["observation", "root_cause"] {
        let c = claim_on("k1", claim_type, "lookup_knowledge", &[kb]);
        let out = ComposerOutput {
            statements: vec![ComposerStatement {
                text: "slow queries hold connections".into(),
                claim_ids: vec!["k1".into()],
            }],
            ..Default::default()
        };
        let a = assemble(
            &composer_input(vec![c]),
            &out,
            &[],
            &GatekeeperRules::shipped(),
        )
        .unwrap();
        let line = a
            .text
            .lines()
            .find(|l| l.contains("slow queries hold connections"))
            .unwrap_or_default();
        assert!(line.starts_with("- Runbook background"), "{}", a.text);
        assert!(!a.text.contains("Likely cause:"), "{}", a.text);
    }
}

#[test]
fn a_mixed_claim_shows_only_its_observed_part_as_a_finding() {
    let kb = "[database] runbooks/db.md > Likely causes: slow queries hold connections";
    let mut c = claim_on("m1", "observation", "query_logs", &[TEXTS[0]]);
    c.evidence
        .extend(claim_on("m1", "observation", "lookup_knowledge", &[kb]).evidence);
    // a word only the runbook spells is not grounded for the finding
    assert_eq!(
        check_text("order-service: slow queries hold connections.", &[&c], &[])
            .map(|a| a.word().to_string()),
        Some("slow".to_string())
    );
    assert_eq!(
        check_text("order-service: Connection is not available.", &[&c], &[]),
        None
    );
}

#[tokio::test]
async fn the_composers_retry_is_told_the_ungrounded_word() {
    use crate::runs::{of_role, run_captured};
    use diagraph::model::Message;
    use diagraph::vocab::agent::AgentRole;
    let (_, _, reqs) = run_captured("55_composer_statement_adds_component.toml").await;
    let composer = of_role(&reqs, AgentRole::Composer);
    assert_eq!(composer.len(), 2);
    let told = |r: &diagraph::model::ChatRequest| {
        r.messages.iter().any(|m| {
            matches!(m, Message::User { content }
                if content.contains("answer.statement_grounded") && content.contains("\"slow\""))
        })
    };
    assert!(!told(&composer[0]));
    assert!(told(&composer[1]), "{:?}", composer[1].messages);
}

#[tokio::test]
async fn a_rejected_composer_output_keeps_its_rule_and_word_on_its_step() {
    use crate::runs::run_captured;
    let (out, rec, _) = run_captured("55_composer_statement_adds_component.toml").await;
    let steps: Vec<_> = rec
        .snapshot()
        .steps
        .into_iter()
        .filter(|s| s.run_id == out.run_id && s.agent_name == "composer")
        .collect();
    assert_eq!(steps.len(), 2, "{steps:#?}");
    let why = steps[0].parse_error.as_deref().unwrap_or_default();
    assert!(why.contains("answer.statement_grounded"), "{why}");
    assert!(why.contains("\"slow\""), "{why}");
    // the rejected output itself is kept whole on the step
    assert!(
        steps[0].model_output.contains("redis"),
        "{}",
        steps[0].model_output
    );
    assert_eq!(steps[1].parse_error, None);
}

#[tokio::test]
async fn new_scenarios_are_rejected_for_their_word_or_complete_when_honest() {
    use crate::runs::run_captured;
    use diagraph::vocab::graph::{NodeId, Outcome};
    for (file, rejected_for) in [
        ("57_composer_ungrounded_impact_word.toml", Some("revenue")),
        ("58_composer_look_alike_negation.toml", Some("not")),
        ("59_composer_honest_converted_units.toml", None),
    ] {
        let (out, _, _) = run_captured(file).await;
        let attempts: Vec<(Outcome, String)> = crate::runs::finished(&out)
            .into_iter()
            .filter(|(node, ..)| *node == NodeId::Composer)
            .map(|(_, outcome, _, detail)| (outcome, detail))
            .collect();
        match rejected_for {
            Some(word) => {
                assert_eq!(
                    attempts[0].0,
                    Outcome::InvalidOutput,
                    "{file}: {attempts:?}"
                );
                assert!(attempts[0].1.contains(word), "{file}: {attempts:?}");
                assert_eq!(attempts[1].0, Outcome::Completed, "{file}: {attempts:?}");
            }
            None => assert_eq!(attempts.len(), 1, "{file}: {attempts:?}"),
        }
        assert!(!out.end.degraded, "{file}");
    }
}

#[tokio::test]
async fn an_observation_only_a_runbook_states_is_background() {
    use crate::runs::run_captured;
    let (out, _, _) = run_captured("60_composer_runbook_only_statement.toml").await;
    let a = &out.end.answer;
    let line = a
        .lines()
        .find(|l| l.contains("Slow queries hold connections"))
        .unwrap_or_default();
    assert!(line.starts_with("- Runbook background"), "{a}");
    assert!(!a.contains("Findings:\n- Slow"), "{a}");
    assert!(!a.contains("Likely cause:"), "{a}");
}

//! Property tests of the answer check (`answer.*` rules): a statement made
//! of the facts of its claims' verified evidence, in any order, with any
//! filler and in English or Chinese, is assembled; the same statement with
//! a negation inserted, its service swapped or a number changed is
//! rejected by the rule that names that addition.

use diagraph::engine::nodes::answer::{Rejection, assemble};
use diagraph::engine::nodes::gatekeeper::GatekeeperRules;
use diagraph::vocab::contracts::{ComposerOutput, ComposerStatement, Lang, Verdict, Verification};
use diagraph::vocab::dto::{AllowedClaim, ComposerInput, VerifiedEvidence};
use proptest::prelude::*;

const SERVICES: [&str; 5] = [
    "payment-service",
    "order-service",
    "inventory-service",
    "user-service",
    "gateway-api",
];
const ALERTS: [&str; 4] = [
    "HighCPUUsage",
    "HighRequestLatency",
    "PodCrashLooping",
    "DiskPressure",
];
const FILLER_EN: [&str; 6] = ["reports", "shows", "currently", "with", "alert", "has"];
const FILLER_ZH: [&str; 4] = ["当前", "告警", "显示", "持续"];

#[derive(Debug, Clone)]
struct Alert {
    service: usize,
    alert: usize,
    value: u32,
    minutes: u32,
}

impl Alert {
    fn text(&self) -> String {
        format!(
            "alert {} service={} severity=critical state=firing value={} for={}m",
            ALERTS[self.alert], SERVICES[self.service], self.value, self.minutes
        )
    }
}

fn alert() -> impl Strategy<Value = Alert> {
    (0..SERVICES.len(), 0..ALERTS.len(), 200u32..1000, 1u32..120).prop_map(
        |(service, alert, value, minutes)| Alert {
            service,
            alert,
            value,
            minutes,
        },
    )
}

/// A statement of the alert's facts: `facts` picks which, in which order.
fn statement(a: &Alert, facts: &[usize], filler: &[usize], zh: bool, negate: bool) -> String {
    let mut parts: Vec<String> = Vec::new();
    for (k, f) in facts.iter().enumerate() {
        let fill = filler.get(k).copied().unwrap_or(0);
        let word = if zh {
            FILLER_ZH[fill % FILLER_ZH.len()]
        } else {
            FILLER_EN[fill % FILLER_EN.len()]
        };
        parts.push(word.to_string());
        parts.push(match (f % 4, zh) {
            (0, _) => SERVICES[a.service].to_string(),
            (1, _) => ALERTS[a.alert].to_string(),
            (2, false) => format!("{}%", a.value),
            (2, true) => format!("值为 {}", a.value),
            (_, false) => format!("for {} minutes", a.minutes),
            (_, true) => format!("{} 分钟", a.minutes),
        });
    }
    match (negate, zh) {
        (false, false) => parts.push("firing".into()),
        (false, true) => parts.push("正在触发".into()),
        (true, false) => parts.push("not firing".into()),
        (true, true) => parts.push("没有触发".into()),
    }
    parts.join(" ")
}

fn check(a: &Alert, text: &str, zh: bool) -> Result<(), String> {
    assemble_one(("query_metrics", "$.alerts[0]"), &a.text(), text, zh)
        .map_err(|r| r.rule.as_str().to_string())
}

/// The answer assembled from one statement `text` resting on one claim
/// whose verified evidence is `evidence`, returned by `(tool, raw_path)`.
fn assemble_one(
    (tool, path): (&str, &str),
    evidence: &str,
    text: &str,
    zh: bool,
) -> Result<(), Rejection> {
    let claim = AllowedClaim {
        claim_id: "c1".into(),
        claim_type: "observation".into(),
        claim_text: String::new(),
        verification: Verification::DirectEvidence,
        is_negative: false,
        evidence: vec![VerifiedEvidence {
            claim_id: "c1".into(),
            source_invocation_id: 9999,
            tool_name: tool.into(),
            raw_path: path.into(),
            matched_text: evidence.into(),
        }],
    };
    let input = ComposerInput {
        original_query: "why?".into(),
        lang: if zh { Lang::Zh } else { Lang::En },
        verdict: Verdict::Pass,
        allowed_claims: vec![claim],
        allowed_hypotheses: vec![],
        missing_info: vec![],
        recommended_actions: vec![],
        rationale: String::new(),
    };
    let output = ComposerOutput {
        statements: vec![ComposerStatement {
            text: text.into(),
            claim_ids: vec!["c1".into()],
        }],
        ..Default::default()
    };
    let names: Vec<String> = SERVICES.iter().map(|s| s.to_string()).collect();
    assemble(&input, &output, &names, &GatekeeperRules::shipped()).map(|_| ())
}

fn facts() -> impl Strategy<Value = Vec<usize>> {
    Just(vec![0usize, 1, 2, 3])
        .prop_shuffle()
        .prop_flat_map(|v| {
            let n = v.len();
            (Just(v), 1..=n).prop_map(|(v, k)| v.into_iter().take(k).collect())
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_statement_of_its_evidence_facts_passes(
        a in alert(),
        f in facts(),
        filler in prop::collection::vec(0usize..8, 4),
        zh in any::<bool>(),
    ) {
        let s = statement(&a, &f, &filler, zh, false);
        prop_assert_eq!(check(&a, &s, zh), Ok(()), "{}", s);
    }

    #[test]
    fn inserting_a_negation_fails(
        a in alert(),
        f in facts(),
        filler in prop::collection::vec(0usize..8, 4),
        zh in any::<bool>(),
    ) {
        let s = statement(&a, &f, &filler, zh, true);
        let got = check(&a, &s, zh);
        prop_assert!(got == Err("answer.statement_polarity".to_string()) || got == Err("answer.statement_grounded".to_string()), "{}: {:?}", s, got);
    }

    #[test]
    fn swapping_the_service_or_a_number_fails(
        a in alert(),
        f in facts(),
        filler in prop::collection::vec(0usize..8, 4),
        zh in any::<bool>(),
        other in 1usize..SERVICES.len(),
        delta in 1u32..50,
        which in 0usize..3,
    ) {
        let mut told = a.clone();
        let mut f = f;
        // make sure the swapped fact is stated
        let fact = match which { 0 => 0, 1 => 2, _ => 3 };
        if !f.contains(&fact) {
            f.push(fact);
        }
        match which {
            0 => told.service = (a.service + other) % SERVICES.len(),
            1 => told.value = a.value + delta,
            _ => told.minutes = a.minutes + delta,
        }
        let s = statement(&told, &f, &filler, zh, false);
        let got = check(&a, &s, zh);
        prop_assert!(got == Err("answer.statement_facts".to_string()) || got == Err("answer.statement_grounded".to_string()), "{}: {:?}", s, got);
    }
}

/// Log lines with ordinary words, identifiers, components, numbers with
/// units and timestamps (no negation, so no sub-phrase can drop one).
fn log_line(kind: usize, service: usize, n: u32, zh: bool) -> String {
    let svc = SERVICES[service];
    match (kind % 3, zh) {
        (0, false) => format!(
            "2026-07-08 23:06:{:02} ERROR {svc} call to redis timed out after {n}ms while reading the session cache",
            n % 60
        ),
        (1, false) => {
            format!("{svc} slow query on orders table took {n} ms during checkout of cart items")
        }
        (_, false) => {
            format!("WARN {svc} kafka consumer lag rose to {n} messages on topic payments.v2")
        }
        (0, true) => format!(
            "2026-07-08 23:06:{:02} ERROR {svc} 调用 redis 超时 耗时 {n}ms 会话 缓存 读取 中断",
            n % 60
        ),
        (1, true) => format!("{svc} 慢查询 orders 表 耗时 {n} ms 结算 购物车 商品"),
        (_, true) => format!("WARN {svc} kafka 消费 延迟 升高 到 {n} 条 消息 topic payments.v2"),
    }
}

fn check_against(evidence: &str, text: &str, zh: bool) -> Result<(), String> {
    assemble_one(("query_logs", "$.logs[0]"), evidence, text, zh).map_err(|r| r.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// An honest statement: sub-phrases of its evidence (whole words, in
    /// any order, each cut anywhere), joined by ordinary words. Nothing in
    /// it is new, so the component, identifier and number checks pass it.
    #[test]
    fn a_statement_of_sub_phrases_of_its_evidence_passes(
        kind in 0usize..3,
        service in 0..SERVICES.len(),
        n in 1u32..100_000,
        zh in any::<bool>(),
        cuts in prop::collection::vec((0usize..40, 1usize..8), 1..4),
    ) {
        let evidence = log_line(kind, service, n, zh);
        let words: Vec<&str> = evidence.split_whitespace().collect();
        let phrases: Vec<String> = cuts
            .iter()
            .map(|&(start, len)| {
                let start = start % words.len();
                let end = (start + len).min(words.len());
                words[start..end].join(" ")
            })
            .collect();
        let statement = if zh {
            format!("日志显示 {}。", phrases.join("，"))
        } else {
            format!("The logs show {}.", phrases.join(", and "))
        };
        prop_assert_eq!(check_against(&evidence, &statement, zh), Ok(()), "{}", statement);
    }
}

//! Executor and Verifier rules through the engine: doctored
//! excerpts, respelt enums and claim ids, foreign or made-up invocation
//! ids, JSON with duplicate keys, and a Verifier that refers to claims
//! loosely. Each asserts the rule that catches it and that the lie never
//! reaches the answer. (Run shape and helpers: `answer_rules_engine.rs`.)

use crate::answer_rules_engine::{
    ALL, CPU_EXCERPT, LOG_EXCERPT, bind, claim, compose, composer, executor, honest_claims,
    honest_composer, scenario, verifier,
};
use crate::runs::{finished, gatekeeper_results, run_scenario};
use diagraph::engine::RunOutcome;
use diagraph::vocab::graph::{NodeId, Outcome, ReasonCode};
use serde_json::{Value, json};

/// Runs `claims` (honest Verifier and Composer after them).
async fn run_claims(zh: bool, claims: Vec<Value>) -> RunOutcome {
    run_executor_text(zh, &executor(claims)).await
}

async fn run_executor_text(zh: bool, executor_text: &str) -> RunOutcome {
    let s = scenario(zh, executor_text, &verifier(ALL), &[honest_composer(zh)]);
    run_scenario(&s).await.0
}

/// Asserts the run's first Gatekeeper check failed `rule` and the run was
/// rejected, without `hidden` in the answer.
fn assert_gate_rejects(out: &RunOutcome, rule: &str, hidden: &str, what: &str) {
    let gk = &gatekeeper_results(out)[0];
    assert_eq!(gk.status, "fail", "{what}: {:?}", gk.errors);
    assert!(
        gk.failed_rules.iter().any(|r| r == rule),
        "{what}: expected {rule}, got {:?} {:?}",
        gk.failed_rules,
        gk.errors
    );
    assert_eq!(
        out.end.trace.termination_reason,
        Some(ReasonCode::GatekeeperReject),
        "{what}"
    );
    assert!(
        !out.end.answer.contains(hidden),
        "{what}: {}",
        out.end.answer
    );
}

/// The honest claims with claim `i`'s first excerpt replaced.
fn with_excerpt(i: usize, excerpt: &str) -> Vec<Value> {
    let mut claims = honest_claims();
    claims[i]["evidence_bindings"][0]["evidence_excerpt"] = json!(excerpt);
    claims
}

#[tokio::test]
async fn a_doctored_excerpt_is_rejected_by_its_rule() {
    for (i, excerpt, rule) in [
        // antonyms: the negation dropped, a state flipped
        (
            2,
            "ERROR order-service HikariPool-1 - Connection is available",
            "binding.excerpt_polarity",
        ),
        (
            2,
            "ERROR order-service HikariPool-1 - Connection is not available, request succeeded after 30000ms",
            "binding.excerpt_polarity",
        ),
        (
            2,
            "ERROR order-service HikariPool-1 - Connection is ready, request timed out after 30000ms",
            "binding.excerpt_facts",
        ),
        (
            0,
            "alertname=HighCPUUsage service=payment-service severity=critical state=resolved value=92",
            "binding.excerpt_polarity",
        ),
        (
            1,
            "alertname=HighRequestLatency service=order-service summary=p99 latency of order-service below 2s",
            "binding.excerpt_polarity",
        ),
        // a level, severity, name, number, unit or time swapped
        (
            2,
            "WARN order-service HikariPool-1 - Connection is not available",
            "binding.excerpt_facts",
        ),
        (
            0,
            "alertname=HighCPUUsage service=payment-service severity=warning state=firing value=92",
            "binding.excerpt_facts",
        ),
        (
            2,
            "ERROR order-service HikariPool-2 - Connection is not available",
            "binding.excerpt_facts",
        ),
        (
            2,
            "ERROR оrder-service HikariPool-1 - Connection is not available",
            "binding.excerpt_facts",
        ),
        (
            2,
            "ERROR order-service HikariPool-1 - Connection is not available, request timed out after 3000ms",
            "binding.excerpt_facts",
        ),
        (
            2,
            "ERROR order-service HikariPool-1 - Connection is not available, request timed out after 30000s",
            "binding.excerpt_facts",
        ),
        (
            2,
            "2026-07-09T22:55:03Z ERROR order-service HikariPool-1 - Connection is not available",
            "binding.excerpt_facts",
        ),
        (
            2,
            "2026-07-08 23:55:03 ERROR order-service HikariPool-1 - Connection is not available",
            "binding.excerpt_facts",
        ),
        (
            0,
            "alertname=HighCPUUsage service=payment-service state=firing value=97",
            "binding.excerpt_facts",
        ),
        (
            0,
            "alertname=HighCPUUsage service=payment-service state=firing value=９７",
            "binding.excerpt_facts",
        ),
        // a clause spliced from another alert, a word added, too little quoted
        (
            0,
            "alertname=HighCPUUsage service=order-service ... summary=CPU usage above 90%",
            "binding.excerpt_facts",
        ),
        (
            2,
            "HikariPool-1 - Connection is not available, request timed out after 30000ms because of slow queries",
            "binding.excerpt_facts",
        ),
        (2, "30000ms", "binding.excerpt_identifies"),
    ] {
        let out = run_claims(false, with_excerpt(i, excerpt)).await;
        assert_gate_rejects(&out, rule, excerpt, excerpt);
    }
}

#[tokio::test]
async fn an_honest_quote_in_another_rendering_passes() {
    for excerpt in [
        "2026-07-08T22:55:03Z ERROR order-service HikariPool-1 - Connection is not available",
        "2026-07-08 22:55:03 ERROR order-service HikariPool-1 - Connection is not available",
        "22:55:03 ERROR order-service HikariPool-1 - Connection is not available",
        "2026/07/08 22:55:03 ERROR order-service HikariPool-1 - Connection is not available",
        "2026-07-08T22:55:03.000Z ERROR order-service HikariPool-1 - Connection is not available",
        "2026-07-08 22:55:03 UTC ERROR order-service HikariPool-1 - Connection is not available",
        "2026-07-09T06:55:03+08:00 ERROR order-service HikariPool-1 - Connection is not available",
        "[2026-07-08T22:55:03Z] ERROR order-service HikariPool-1 - Connection is not available",
        // quoted, case, contraction, dash and ellipsis variants of the same line
        "`ERROR order-service HikariPool-1 - Connection is not available`",
        "error order-service hikaripool-1 - connection is not available",
        "ERROR order-service HikariPool-1 - Connection isn't available",
        "ERROR order-service HikariPool-1 – Connection is NOT available",
        "order-service HikariPool-1 Connection is not available … timed out after 30,000 ms",
    ] {
        let out = run_claims(false, with_excerpt(2, excerpt)).await;
        let gk = &gatekeeper_results(&out)[0];
        assert_eq!(gk.status, "pass", "{excerpt}: {:?}", gk.errors);
        assert!(!out.end.degraded, "{excerpt}");
    }
}

#[tokio::test]
async fn an_enum_or_claim_id_respelt_is_a_contract_rejection() {
    for ty in [
        "Observation",
        "negative observation",
        "negative-observation",
        "ｏｂｓｅｒｖａｔｉｏｎ",
        "observation\u{200b}",
        " observation",
    ] {
        let mut claims = honest_claims();
        claims[0]["claim_type"] = json!(ty);
        let out = run_claims(false, claims).await;
        assert_gate_rejects(&out, "contract.enum_values", "92", ty);
    }
    let mut claims = honest_claims();
    claims[0]["support_level"] = json!("Direct");
    assert_gate_rejects(
        &run_claims(false, claims).await,
        "contract.enum_values",
        "92",
        "Direct",
    );
    // a made-up cause under an id that differs only in spelling
    for id in [" C-CPU", "ｃ-ｃｐｕ", "c-\u{200b}cpu", "C-cpu\t"] {
        let mut claims = honest_claims();
        claims.push(claim(
            id,
            "root_cause",
            "a database outage caused everything",
            vec![bind(1, "$.alerts[0]", CPU_EXCERPT)],
        ));
        let out = run_claims(false, claims).await;
        assert_gate_rejects(&out, "contract.unique_claim_id", "outage", id);
    }
}

#[tokio::test]
async fn an_invocation_id_not_of_this_run_is_rejected() {
    for id in [
        json!("{{invocation:foreign}}"),
        json!(999_999),
        json!("5abc"),
        json!(-1),
    ] {
        let mut claims = honest_claims();
        claims[2]["evidence_bindings"][0]["source_invocation_id"] = id.clone();
        let text = executor(claims).replace("\"{{invocation:foreign}}\"", "{{invocation:foreign}}");
        let out = run_executor_text(false, &text).await;
        assert_gate_rejects(
            &out,
            "binding.invocation_owned",
            "HikariPool-1 has",
            &id.to_string(),
        );
    }
}

#[tokio::test]
async fn a_fabricated_binding_on_a_hypothesis_is_recorded_with_its_rule() {
    let text = executor(honest_claims()).replace(
        r#"{"hypothesis_text":"slow queries may exhaust the order-service pool"}"#,
        &json!({"hypothesis_text": "the connection pool is healthy",
                "evidence_bindings": [bind(2, "$.logs[0]", "ERROR order-service HikariPool-1 - Connection is available")]})
        .to_string()
        .replace("\"{{invocation:2}}\"", "{{invocation:2}}"),
    );
    assert!(text.contains("is healthy"), "{text}");
    let out = run_executor_text(false, &text).await;
    assert_gate_rejects(&out, "binding.excerpt_polarity", "healthy", "hypothesis");
    let gk = &gatekeeper_results(&out)[0];
    assert!(
        gk.unverified_bindings
            .iter()
            .any(|b| b.claim_id == "hypotheses[0]"),
        "{:?}",
        gk.unverified_bindings
    );
}

#[tokio::test]
async fn duplicate_json_keys_never_split_what_is_checked_from_what_is_shown() {
    // Executor: the honest excerpt first, the lie second (the parser keeps
    // one value, and that value is the one checked)
    let flipped = "ERROR order-service HikariPool-1 - Connection is available";
    let text = executor(honest_claims()).replace(
        &format!("\"evidence_excerpt\":\"{LOG_EXCERPT}\""),
        &format!("\"evidence_excerpt\":\"{LOG_EXCERPT}\",\"evidence_excerpt\":\"{flipped}\""),
    );
    assert!(text.contains(flipped));
    let out = run_executor_text(false, &text).await;
    assert_gate_rejects(
        &out,
        "binding.excerpt_polarity",
        "available,",
        "duplicate excerpt",
    );
    // a negative_observation smuggled as a second claim_type on a positive ref
    let text = executor(honest_claims()).replacen(
        "\"claim_type\":\"observation\"",
        "\"claim_type\":\"observation\",\"claim_type\":\"negative_observation\"",
        1,
    );
    let out = run_executor_text(false, &text).await;
    assert_gate_rejects(
        &out,
        "binding.negative_binds_no_evidence",
        "92",
        "duplicate type",
    );
    // Composer: a lie and an honest text in one statement, either order
    let honest = "payment-service has a critical HighCPUUsage alert firing at 92.";
    let lie = "payment-service HighCPUUsage has resolved.";
    for (first, second) in [(honest, lie), (lie, honest)] {
        let bad = format!(
            r#"{{"answer_summary": "s", "statements": [{{"text": "{first}", "text": "{second}", "claim_ids": ["c-cpu"]}}], "recommended_actions": []}}"#
        );
        let (out, attempts) = compose(false, &[bad, honest_composer(false)]).await;
        assert!(
            attempts.iter().any(|(o, _)| *o == Outcome::Completed),
            "{attempts:?}"
        );
        assert!(!out.end.answer.contains("resolved"), "{}", out.end.answer);
    }
}

#[tokio::test]
async fn a_verifier_that_refers_loosely_or_contradicts_allows_nothing() {
    // by an id in another case, or with a contradicted fact: c-cpu is not
    // allowed, so a statement citing it is rejected and never shown
    let mut respelt: Value = serde_json::from_str(&verifier(ALL)).unwrap();
    respelt["facts_checked"][0]["claim_id"] = json!("C-CPU");
    let mut contradicted: Value = serde_json::from_str(&verifier(ALL)).unwrap();
    contradicted["facts_checked"].as_array_mut().unwrap().push(
        json!({"claim_id": "c-cpu", "fact": "the CPU alert resolved", "is_critical": false,
                     "verification": "contradicted", "detail": "x"}),
    );
    for v in [respelt, contradicted] {
        let bad = composer(&[(
            "payment-service has a critical HighCPUUsage alert firing at 92.",
            &["c-cpu"],
        )]);
        let s = scenario(
            false,
            &executor(honest_claims()),
            &v.to_string(),
            &[bad.clone(), bad],
        );
        let (out, _, _) = run_scenario(&s).await;
        let composer_runs: Vec<_> = finished(&out)
            .into_iter()
            .filter(|(n, ..)| *n == NodeId::Composer)
            .collect();
        assert_eq!(composer_runs.len(), 2, "{composer_runs:?}");
        assert!(
            composer_runs
                .iter()
                .all(|(_, o, _, d)| *o == Outcome::InvalidOutput
                    && d.contains("answer.statement_cites_claim")),
            "{composer_runs:?}"
        );
        assert!(!out.end.answer.contains("92"), "{}", out.end.answer);
    }
}

//! The classes of issue 19 driven through the engine: each scenario's
//! Gatekeeper result names the rule that caught the cheat, and the honest
//! quotes pass. (The rule-level cases are in `gatekeeper_adversarial.rs`
//! and `src/engine/nodes/gatekeeper/excerpt/tests.rs`, the properties in
//! `gatekeeper_props.rs`.)

use crate::runs::{gatekeeper_results, run_captured};

async fn failed_rules(file: &str) -> (String, Vec<String>, Vec<String>) {
    let (out, _, _) = run_captured(file).await;
    let gk = gatekeeper_results(&out);
    let first = gk
        .first()
        .unwrap_or_else(|| panic!("{file}: no gatekeeper result"));
    (
        first.severity.clone(),
        first.failed_rules.clone(),
        first.errors.clone(),
    )
}

#[tokio::test]
async fn each_cheat_is_rejected_by_its_rule_in_english_and_chinese() {
    for (file, rule) in [
        (
            "35_gatekeeper_negation_dropped.toml",
            "binding.excerpt_polarity",
        ),
        (
            "36_gatekeeper_negation_dropped_zh.toml",
            "binding.excerpt_polarity",
        ),
        ("37_gatekeeper_fact_swapped.toml", "binding.excerpt_facts"),
        (
            "38_gatekeeper_digits_swapped_zh.toml",
            "binding.excerpt_facts",
        ),
    ] {
        let (severity, failed, errors) = failed_rules(file).await;
        assert_eq!(severity, "reject", "{file}: {errors:?}");
        assert_eq!(failed, vec![rule.to_string()], "{file}: {errors:?}");
    }
}

#[tokio::test]
async fn honest_quotes_with_their_timestamp_pass() {
    for file in [
        "39_gatekeeper_quote_with_timestamp.toml",
        "40_gatekeeper_quote_with_timestamp_zh.toml",
    ] {
        let (severity, failed, errors) = failed_rules(file).await;
        assert_eq!(severity, "none", "{file}: {errors:?}");
        assert!(failed.is_empty(), "{file}: {errors:?}");
    }
}

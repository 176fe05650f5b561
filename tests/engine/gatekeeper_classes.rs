//! The classes of issue 19 driven through the engine: each scenario's
//! Gatekeeper result names the rule that caught the cheat, and the honest
//! quotes pass. (The rule-level cases are in `gatekeeper_adversarial.rs`,
//! `gatekeeper_excerpts.rs` and `src/engine/nodes/gatekeeper/excerpt/tests.rs`,
//! the properties in `gatekeeper_props.rs`.)

use crate::runs::{gatekeeper_results, run_captured};
use diagraph::vocab::graph::ReasonCode;

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

#[tokio::test]
async fn loose_contracts_are_rejected_by_their_own_rule_in_english_and_chinese() {
    for (file, rule) in [
        ("41_gatekeeper_enum_misspelt.toml", "contract.enum_values"),
        (
            "42_gatekeeper_enum_misspelt_zh.toml",
            "contract.enum_values",
        ),
        (
            "43_gatekeeper_duplicate_claim_id.toml",
            "contract.unique_claim_id",
        ),
        (
            "44_gatekeeper_duplicate_claim_id_zh.toml",
            "contract.unique_claim_id",
        ),
    ] {
        let (out, _, _) = run_captured(file).await;
        let gk = &gatekeeper_results(&out)[0];
        assert_eq!(gk.severity, "reject", "{file}: {:?}", gk.errors);
        assert_eq!(
            gk.failed_rules,
            vec![rule.to_string()],
            "{file}: {:?}",
            gk.errors
        );
        // the failure is a claim-level error naming its rule and claim
        let e = gk.claim_errors.iter().find(|e| e.rule == rule).expect(file);
        assert!(
            e.claim_id.is_some() && e.claim_index.is_some(),
            "{file}: {e:?}"
        );
        assert_eq!(
            out.end.trace.termination_reason,
            Some(ReasonCode::GatekeeperReject),
            "{file}"
        );
        assert!(!out.end.answer.contains("zebracorn"), "{}", out.end.answer);
    }
}

#[tokio::test]
async fn an_output_without_claims_routes_as_zero_verified_bindings() {
    for file in [
        "45_gatekeeper_empty_claims.toml",
        "46_gatekeeper_empty_claims_zh.toml",
    ] {
        let (out, _, _) = run_captured(file).await;
        let gk = &gatekeeper_results(&out)[0];
        assert_eq!(gk.severity, "low_confid", "{file}");
        assert_eq!(gk.failed_rules, vec!["contract.has_claims".to_string()]);
        assert_eq!(gk.claim_errors.len(), 1);
        assert_eq!(gk.claim_errors[0].claim_id, None);
        assert_eq!(
            out.end.trace.termination_reason,
            Some(ReasonCode::GatekeeperNoVerifiedBinding),
            "{file}"
        );
    }
}

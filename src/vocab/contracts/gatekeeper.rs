//! `gatekeeper_result` and its normalisation into the outcome the router
//! sees ([`normalize_gatekeeper`]): anything but `pass`/`none` or
//! `fail`/`low_confid` is a REJECT.

use super::json::{ParseFailure, extract_json_object};
use crate::vocab::graph::Outcome;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    None,
    LowConfid,
    Reject,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::None => "none",
            Severity::LowConfid => "low_confid",
            Severity::Reject => "reject",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleSummary {
    pub id: String,
    pub description: String,
    pub enabled: bool,
    pub default_severity: Severity,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BindingStatus {
    Pass,
    Fail,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckedBinding {
    pub claim_id: String,
    /// The claim text, for display; the Verifier never receives it from here.
    #[serde(default)]
    pub claim_text: String,
    #[serde(default)]
    pub claim_type: String,
    pub tool_name: String,
    pub source_invocation_id: Option<i64>,
    pub raw_path: Option<String>,
    #[serde(default)]
    pub evidence_excerpt: String,
    /// The evidence_refs text the binding resolved to (empty on failure).
    pub matched_text: String,
    pub status: BindingStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_rule: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// The invocation id was filled in by the unique-match backfill rule.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub backfilled: bool,
}

/// A failure that is about a claim (or the whole output) rather than one
/// binding: a claim without bindings, an enum value outside the contract,
/// a repeated claim_id, an output without claims.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimError {
    /// The claim's id; None for a failure of the whole output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_id: Option<String>,
    /// Index of the claim in `claims`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_index: Option<usize>,
    pub rule: String,
    pub severity: Severity,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatekeeperResult {
    /// `pass` or `fail`; kept as a string because an unknown value must be
    /// representable (and normalises to REJECT).
    pub status: String,
    pub severity: String,
    pub rule_set_version: String,
    pub rules: Vec<RuleSummary>,
    pub checked_bindings: Vec<CheckedBinding>,
    /// The bindings on hypotheses and recommended actions, checked by the
    /// same rules (their `claim_id` is `hypotheses[i]` or
    /// `recommended_actions[i]`). They never make an item a finding and do
    /// not count as verified bindings; a failing one counts at its rule's
    /// severity like any other.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unverified_bindings: Vec<CheckedBinding>,
    /// Failures of a claim or of the whole output, each naming its rule.
    #[serde(default)]
    pub claim_errors: Vec<ClaimError>,
    pub failed_rules: Vec<String>,
    pub warnings: Vec<String>,
    pub errors: Vec<String>,
}

impl GatekeeperResult {
    pub fn verified_binding_count(&self) -> usize {
        self.checked_bindings
            .iter()
            .filter(|b| b.status == BindingStatus::Pass)
            .count()
    }
}

/// pass -> PASS; fail + low_confid -> LOW_CONFID; fail + reject -> REJECT;
/// anything else (missing, unknown, inconsistent) -> REJECT.
pub fn normalize_gatekeeper(result: Option<&GatekeeperResult>) -> Outcome {
    let Some(r) = result else {
        return Outcome::Reject;
    };
    match (r.status.as_str(), r.severity.as_str()) {
        ("pass", "none") => Outcome::Pass,
        ("fail", "low_confid") => Outcome::LowConfid,
        _ => Outcome::Reject,
    }
}

/// Reads a gatekeeper result from JSON text (used for injected results in
/// fault-injection scenarios and when loading stored runs). A result that
/// does not parse is `None`, which normalises to REJECT.
pub fn parse_gatekeeper_result(text: &str) -> Result<GatekeeperResult, ParseFailure> {
    let map = extract_json_object(text)?;
    serde_json::from_value(Value::Object(map.to_map()))
        .map_err(|e| ParseFailure::malformed(format!("gatekeeper_result: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(status: &str, severity: &str) -> GatekeeperResult {
        GatekeeperResult {
            status: status.into(),
            severity: severity.into(),
            rule_set_version: "v".into(),
            rules: vec![],
            checked_bindings: vec![],
            unverified_bindings: vec![],
            claim_errors: vec![],
            failed_rules: vec![],
            warnings: vec![],
            errors: vec![],
        }
    }

    #[test]
    fn normalisation_is_safe_by_default() {
        assert_eq!(
            normalize_gatekeeper(Some(&result("pass", "none"))),
            Outcome::Pass
        );
        assert_eq!(
            normalize_gatekeeper(Some(&result("fail", "low_confid"))),
            Outcome::LowConfid
        );
        assert_eq!(
            normalize_gatekeeper(Some(&result("fail", "reject"))),
            Outcome::Reject
        );
        assert_eq!(
            normalize_gatekeeper(Some(&result("maybe", "none"))),
            Outcome::Reject
        );
        assert_eq!(
            normalize_gatekeeper(Some(&result("pass", "reject"))),
            Outcome::Reject
        );
        assert_eq!(normalize_gatekeeper(None), Outcome::Reject);
    }
}

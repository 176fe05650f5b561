//! Gatekeeper rule metadata: the rule ids the code implements, and the JSON
//! file (`gatekeeper-rules.json`) that enables them, sets their severity and
//! carries their few parameters.
//!
//! The rules themselves are fixed code; the file only tunes them. Loading
//! is strict: an unknown, missing or duplicated rule id is an error, so a
//! typo in the file cannot silently switch a check off.

use crate::evidence::excerpt::ExcerptParams;
use crate::vocab::contracts::{RuleSummary, Severity};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::LazyLock;

const SHIPPED_JSON: &str = include_str!("../gatekeeper-rules.json");

/// The version of the rules this code implements; the shipped file says
/// the same (a unit test keeps them equal).
pub const RULE_SET_VERSION: &str = "gatekeeper-rules-v6";

/// Every rule the Gatekeeper implements. The discriminant indexes the
/// resolved severity table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleId {
    AnswerVersion,
    ForbiddenFields,
    HasClaims,
    EnumValues,
    UniqueClaimIds,
    ClaimHasBindings,
    InvocationOwned,
    InvocationIdPresent,
    RawPathPresent,
    ToolName,
    RawPathShape,
    RawPathExists,
    InvocationHasRefs,
    ExcerptSupported,
    ExcerptIdentifies,
    ExcerptFacts,
    ExcerptPolarity,
    UniqueItem,
    NegativeBindsNoEvidence,
    PositiveNeedsPositiveEvidence,
    StatementCitesClaim,
    StatementFacts,
    StatementPolarity,
    NegativeByTemplate,
    UnverifiedConclusion,
    StatementGrounded,
    RunbookBackground,
}

impl RuleId {
    pub const ALL: [RuleId; 27] = [
        RuleId::AnswerVersion,
        RuleId::ForbiddenFields,
        RuleId::HasClaims,
        RuleId::EnumValues,
        RuleId::UniqueClaimIds,
        RuleId::ClaimHasBindings,
        RuleId::InvocationOwned,
        RuleId::InvocationIdPresent,
        RuleId::RawPathPresent,
        RuleId::ToolName,
        RuleId::RawPathShape,
        RuleId::RawPathExists,
        RuleId::InvocationHasRefs,
        RuleId::ExcerptSupported,
        RuleId::ExcerptIdentifies,
        RuleId::ExcerptFacts,
        RuleId::ExcerptPolarity,
        RuleId::UniqueItem,
        RuleId::NegativeBindsNoEvidence,
        RuleId::PositiveNeedsPositiveEvidence,
        RuleId::StatementCitesClaim,
        RuleId::StatementFacts,
        RuleId::StatementPolarity,
        RuleId::NegativeByTemplate,
        RuleId::UnverifiedConclusion,
        RuleId::StatementGrounded,
        RuleId::RunbookBackground,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RuleId::AnswerVersion => "contract.answer_version",
            RuleId::ForbiddenFields => "contract.forbidden_fields",
            RuleId::HasClaims => "contract.has_claims",
            RuleId::EnumValues => "contract.enum_values",
            RuleId::UniqueClaimIds => "contract.unique_claim_id",
            RuleId::ClaimHasBindings => "claim.has_bindings",
            RuleId::InvocationOwned => "binding.invocation_owned",
            RuleId::InvocationIdPresent => "binding.invocation_id_present",
            RuleId::RawPathPresent => "binding.raw_path_present",
            RuleId::ToolName => "binding.tool_name",
            RuleId::RawPathShape => "binding.raw_path_shape",
            RuleId::RawPathExists => "binding.raw_path_exists",
            RuleId::InvocationHasRefs => "binding.invocation_has_refs",
            RuleId::ExcerptSupported => "binding.excerpt_supported",
            RuleId::ExcerptIdentifies => "binding.excerpt_identifies",
            RuleId::ExcerptFacts => "binding.excerpt_facts",
            RuleId::ExcerptPolarity => "binding.excerpt_polarity",
            RuleId::UniqueItem => "binding.unique_item",
            RuleId::NegativeBindsNoEvidence => "binding.negative_binds_no_evidence",
            RuleId::PositiveNeedsPositiveEvidence => "binding.positive_needs_positive_evidence",
            RuleId::StatementCitesClaim => "answer.statement_cites_claim",
            RuleId::StatementFacts => "answer.statement_facts",
            RuleId::StatementPolarity => "answer.statement_polarity",
            RuleId::NegativeByTemplate => "answer.negative_by_template",
            RuleId::UnverifiedConclusion => "answer.unverified_conclusion",
            RuleId::StatementGrounded => "answer.statement_grounded",
            RuleId::RunbookBackground => "answer.runbook_background",
        }
    }

    pub fn parse(id: &str) -> Option<RuleId> {
        RuleId::ALL.into_iter().find(|r| r.as_str() == id)
    }

    /// Whether the Gatekeeper checks this rule on the Executor's output;
    /// the `answer.*` rules are checked on the answer (Composer node and
    /// post-verifier fallback, `engine::nodes::answer`).
    pub fn is_gatekeeper(self) -> bool {
        !self.as_str().starts_with("answer.")
    }

    /// The rule's built-in severity, the one the shipped file sets too (a
    /// unit test keeps them equal). Used only if the embedded file is broken.
    pub fn seed_severity(self) -> Severity {
        match self {
            RuleId::AnswerVersion
            | RuleId::ForbiddenFields
            | RuleId::EnumValues
            | RuleId::UniqueClaimIds
            | RuleId::InvocationOwned
            | RuleId::ToolName
            | RuleId::RawPathShape
            | RuleId::RawPathExists
            | RuleId::ExcerptSupported
            | RuleId::ExcerptIdentifies
            | RuleId::ExcerptFacts
            | RuleId::ExcerptPolarity
            | RuleId::NegativeBindsNoEvidence
            | RuleId::StatementCitesClaim
            | RuleId::StatementFacts
            | RuleId::StatementPolarity
            | RuleId::NegativeByTemplate
            | RuleId::StatementGrounded => Severity::Reject,
            RuleId::UnverifiedConclusion | RuleId::RunbookBackground => Severity::None,
            RuleId::HasClaims
            | RuleId::ClaimHasBindings
            | RuleId::InvocationIdPresent
            | RuleId::RawPathPresent
            | RuleId::InvocationHasRefs
            | RuleId::UniqueItem
            | RuleId::PositiveNeedsPositiveEvidence => Severity::LowConfid,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One rule's metadata as it appears in the JSON file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleDef {
    pub id: String,
    pub description: String,
    pub enabled: bool,
    pub default_severity: Severity,
    #[serde(default)]
    pub params: Map<String, Value>,
    /// What the rule checks and why, in full (the file documents itself).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub doc: String,
}

/// Rule metadata loaded from `gatekeeper-rules.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatekeeperRules {
    pub rule_set_version: String,
    pub rules: Vec<RuleDef>,
}

static SHIPPED: LazyLock<GatekeeperRules> = LazyLock::new(|| {
    GatekeeperRules::from_json(SHIPPED_JSON).unwrap_or_else(|_| GatekeeperRules::builtin())
});

impl Default for GatekeeperRules {
    fn default() -> Self {
        GatekeeperRules::shipped()
    }
}

impl GatekeeperRules {
    /// The rules embedded in the binary.
    pub fn shipped() -> GatekeeperRules {
        SHIPPED.clone()
    }

    /// Every rule enabled at its built-in severity; the safety net should the
    /// embedded file ever fail to load (a unit test keeps the two equal).
    fn builtin() -> GatekeeperRules {
        GatekeeperRules {
            rule_set_version: RULE_SET_VERSION.into(),
            rules: RuleId::ALL
                .into_iter()
                .map(|r| RuleDef {
                    id: r.as_str().into(),
                    description: r.as_str().into(),
                    enabled: true,
                    default_severity: r.seed_severity(),
                    params: Map::new(),
                    doc: String::new(),
                })
                .collect(),
        }
    }

    pub fn from_json(text: &str) -> Result<GatekeeperRules, String> {
        let rules: GatekeeperRules =
            serde_json::from_str(text).map_err(|e| format!("gatekeeper rules: {e}"))?;
        if rules.rule_set_version.trim().is_empty() {
            return Err("gatekeeper rules: rule_set_version is empty".into());
        }
        let mut seen = [false; RuleId::ALL.len()];
        for def in &rules.rules {
            let id = RuleId::parse(&def.id)
                .ok_or_else(|| format!("gatekeeper rules: unknown rule id {:?}", def.id))?;
            let slot = &mut seen[id.index()];
            if *slot {
                return Err(format!("gatekeeper rules: rule {} listed twice", def.id));
            }
            *slot = true;
        }
        if let Some(missing) = RuleId::ALL.into_iter().find(|r| !seen[r.index()]) {
            return Err(format!(
                "gatekeeper rules: rule {} is missing (list it with \"enabled\": false to switch it off)",
                missing.as_str()
            ));
        }
        let mut p = ExcerptParams::default();
        for d in &rules.rules {
            excerpt_params(&mut p, &d.params)?;
        }
        if !(p.min_token_overlap > 0.0 && p.min_token_overlap <= 1.0) {
            return Err(format!(
                "gatekeeper rules: min_token_overlap {} must be in (0, 1]",
                p.min_token_overlap
            ));
        }
        if !(p.min_content_units >= 1.0 && p.min_content_units.is_finite()) {
            return Err(format!(
                "gatekeeper rules: min_content_units {} must be at least 1",
                p.min_content_units
            ));
        }
        Ok(rules)
    }

    /// Metadata of the enabled rules, as reported in every result.
    pub fn summaries(&self) -> Vec<RuleSummary> {
        self.rules
            .iter()
            .filter(|r| r.enabled && RuleId::parse(&r.id).is_some_and(RuleId::is_gatekeeper))
            .map(|r| RuleSummary {
                id: r.id.clone(),
                description: r.description.clone(),
                enabled: true,
                default_severity: r.default_severity,
            })
            .collect()
    }

    /// The severity a rule runs at, or None when it is switched off.
    pub fn severity(&self, rule: RuleId) -> Option<Severity> {
        self.resolve().severity(rule)
    }

    /// The per-rule severity table (None = disabled) and the parameters.
    /// Rules a hand-built value leaves out run at their built-in severity, so
    /// an incomplete value can only be stricter, never laxer; parameters a
    /// hand-built value gets wrong fall back to their defaults.
    pub(crate) fn resolve(&self) -> Resolved {
        let mut severity: [Option<Severity>; RuleId::ALL.len()] =
            RuleId::ALL.map(|r| Some(r.seed_severity()));
        let mut excerpt = ExcerptParams::default();
        for def in &self.rules {
            let Some(id) = RuleId::parse(&def.id) else {
                continue;
            };
            severity[id.index()] = def.enabled.then_some(def.default_severity);
            let mut p = excerpt;
            if excerpt_params(&mut p, &def.params).is_ok() {
                excerpt = p;
            }
        }
        let on = |r: RuleId| severity[r.index()].is_some();
        excerpt.overlap = on(RuleId::ExcerptSupported);
        excerpt.identifies = on(RuleId::ExcerptIdentifies);
        excerpt.facts = on(RuleId::ExcerptFacts);
        excerpt.polarity = on(RuleId::ExcerptPolarity);
        let valid = excerpt.min_token_overlap > 0.0
            && excerpt.min_token_overlap <= 1.0
            && excerpt.min_content_units >= 1.0
            && excerpt.min_content_units.is_finite();
        if !valid {
            let d = ExcerptParams::default();
            excerpt.min_token_overlap = d.min_token_overlap;
            excerpt.min_content_units = d.min_content_units;
        }
        Resolved { severity, excerpt }
    }
}

/// Reads the excerpt parameters a rule's `params` sets into `p`.
fn excerpt_params(p: &mut ExcerptParams, params: &Map<String, Value>) -> Result<(), String> {
    if let Some(v) = params.get("min_token_overlap") {
        p.min_token_overlap = v
            .as_f64()
            .ok_or("gatekeeper rules: min_token_overlap must be a number")?;
    }
    if let Some(v) = params.get("min_excerpt_chars") {
        p.min_excerpt_chars = v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or("gatekeeper rules: min_excerpt_chars must be a non-negative integer")?;
    }
    if let Some(v) = params.get("min_content_units") {
        p.min_content_units = v
            .as_f64()
            .ok_or("gatekeeper rules: min_content_units must be a number")?;
    }
    Ok(())
}

/// Rules ready for checking.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resolved {
    severity: [Option<Severity>; RuleId::ALL.len()],
    pub excerpt: ExcerptParams,
}

impl Resolved {
    /// The severity of a rule, or None when it is disabled.
    pub fn severity(&self, rule: RuleId) -> Option<Severity> {
        self.severity.get(rule.index()).copied().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_file_loads_and_matches_the_seed_severities() {
        let rules = GatekeeperRules::from_json(SHIPPED_JSON).unwrap();
        assert_eq!(rules.rule_set_version, RULE_SET_VERSION);
        assert_eq!(rules.rules.len(), RuleId::ALL.len());
        for def in &rules.rules {
            let id = RuleId::parse(&def.id).unwrap();
            assert!(def.enabled, "{}", def.id);
            assert_eq!(def.default_severity, id.seed_severity(), "{}", def.id);
        }
        assert_eq!(GatekeeperRules::default(), rules);
        let p = rules.resolve().excerpt;
        assert_eq!(p, ExcerptParams::default());
    }

    #[test]
    fn loading_is_strict() {
        let shipped = GatekeeperRules::shipped();
        let mut unknown = shipped.clone();
        unknown.rules[0].id = "binding.made_up".into();
        let mut twice = shipped.clone();
        twice.rules[1].id = twice.rules[0].id.clone();
        let mut missing = shipped.clone();
        missing.rules.pop();
        let mut bad_param = shipped.clone();
        for r in &mut bad_param.rules {
            if r.id == "binding.excerpt_supported" {
                r.params
                    .insert("min_token_overlap".into(), Value::from(1.5));
            }
        }
        for bad in [unknown, twice, missing, bad_param] {
            let text = serde_json::to_string(&bad).unwrap();
            assert!(GatekeeperRules::from_json(&text).is_err(), "{text}");
        }
        assert!(GatekeeperRules::from_json("{").is_err());
    }

    #[test]
    fn disabled_rules_resolve_to_none_and_are_not_summarised() {
        let mut rules = GatekeeperRules::shipped();
        for r in &mut rules.rules {
            if r.id == "claim.has_bindings" {
                r.enabled = false;
            }
        }
        let text = serde_json::to_string(&rules).unwrap();
        let rules = GatekeeperRules::from_json(&text).unwrap();
        let resolved = rules.resolve();
        assert_eq!(resolved.severity(RuleId::ClaimHasBindings), None);
        assert_eq!(
            resolved.severity(RuleId::InvocationOwned),
            Some(Severity::Reject)
        );
        let gatekeeper_rules = RuleId::ALL.iter().filter(|r| r.is_gatekeeper()).count();
        assert_eq!(rules.summaries().len(), gatekeeper_rules - 1);
        assert!(
            rules
                .summaries()
                .iter()
                .all(|r| r.id != "claim.has_bindings")
        );
    }
}

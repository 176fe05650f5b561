//! `verifier_output`: the Verifier's verdict, groundedness, fact checks and
//! rationale.
//!
//! `facts_checked[].claim_id` ties a checked fact back
//! to the verified claim, so the Composer's allowed claims and the evidence
//! gaps are chosen by id rather than by matching free text.

use super::Verdict;
use super::json::{Fields, Json, ParseFailure, extract_json_object, objects};
use crate::text::truncate_middle;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verification {
    DirectEvidence,
    IndirectSupport,
    NoEvidence,
    Contradicted,
}

impl Verification {
    pub fn parse(s: &str) -> Option<Verification> {
        match s.trim() {
            "direct_evidence" => Some(Verification::DirectEvidence),
            "indirect_support" => Some(Verification::IndirectSupport),
            "no_evidence" => Some(Verification::NoEvidence),
            "contradicted" => Some(Verification::Contradicted),
            _ => None,
        }
    }

    /// Whether the Composer may state the fact (with "indirect" wording for
    /// indirect support).
    pub fn is_supported(self) -> bool {
        matches!(
            self,
            Verification::DirectEvidence | Verification::IndirectSupport
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactRef {
    #[serde(default)]
    pub trace_ref: String,
    #[serde(default)]
    pub tool_name: String,
    #[serde(default)]
    pub topic_domain: String,
    #[serde(default)]
    pub source_invocation_ids: Vec<i64>,
    #[serde(default)]
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactCheck {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_id: Option<String>,
    pub fact: String,
    pub is_critical: bool,
    pub verification: Verification,
    pub detail: String,
    #[serde(default)]
    pub evidence_refs: Vec<FactRef>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifierOutput {
    pub verdict: Verdict,
    pub groundedness_score: f64,
    pub critical_fact_count: u32,
    #[serde(default)]
    pub claim_checks: Vec<Value>,
    pub facts_checked: Vec<FactCheck>,
    pub rationale: String,
}

impl VerifierOutput {
    /// Critical facts whose verification is no_evidence or indirect_support:
    /// the evidence gaps an evidence retry may try to close.
    pub fn critical_gaps(&self) -> impl Iterator<Item = &FactCheck> {
        self.facts_checked.iter().filter(|f| {
            f.is_critical
                && matches!(
                    f.verification,
                    Verification::NoEvidence | Verification::IndirectSupport
                )
        })
    }
}

pub fn parse_verifier_output(text: &str) -> Result<VerifierOutput, ParseFailure> {
    let map = extract_json_object(text)?;
    let f = Fields::new(&map, "verifier_output");
    let verdict_text = f.req_str("verdict")?;
    let verdict = Verdict::parse(&verdict_text).ok_or_else(|| {
        ParseFailure::malformed(format!(
            "verdict {:?} is not PASS, LOW_CONFID or REJECT",
            truncate_middle(&verdict_text, 40)
        ))
    })?;
    let score = f.opt_f64("groundedness_score")?.unwrap_or(0.0);
    if !score.is_finite() || !(0.0..=1.0).contains(&score) {
        return Err(ParseFailure::malformed(format!(
            "groundedness_score {score} is outside 0..1"
        )));
    }
    let mut facts = Vec::new();
    for (i, fc) in objects(f.req_array("facts_checked")?, "facts_checked")?
        .into_iter()
        .enumerate()
    {
        let ff = Fields::new(fc, "facts_checked[]");
        let verification_text = ff.req_str("verification")?;
        let verification = Verification::parse(&verification_text).ok_or_else(|| {
            ParseFailure::malformed(format!(
                "facts_checked[{i}].verification {:?} is not one of direct_evidence, indirect_support, no_evidence, contradicted",
                truncate_middle(&verification_text, 40)
            ))
        })?;
        let claim_id = match fc.get("claim_id") {
            Some(Json::Number(n)) => Some(n.to_string()),
            _ => ff.opt_nullable_str("claim_id")?,
        };
        let mut refs = Vec::new();
        for r in objects(ff.opt_array("evidence_refs")?, "evidence_refs")? {
            let rf = Fields::new(r, "evidence_refs[]");
            let ids = rf
                .opt_array("source_invocation_ids")?
                .iter()
                .filter_map(Json::as_i64)
                .collect();
            refs.push(FactRef {
                trace_ref: rf.opt_str("trace_ref")?,
                tool_name: rf.opt_str("tool_name")?,
                topic_domain: rf.opt_str("topic_domain")?,
                source_invocation_ids: ids,
                note: rf.opt_str("note")?,
            });
        }
        facts.push(FactCheck {
            claim_id,
            fact: ff.req_str("fact")?,
            is_critical: ff.opt_bool("is_critical")?.unwrap_or(false),
            verification,
            detail: ff.opt_str("detail")?,
            evidence_refs: refs,
        });
    }
    let critical = facts.iter().filter(|f| f.is_critical).count() as u32;
    Ok(VerifierOutput {
        verdict,
        groundedness_score: score,
        // Recomputed by code: the count is derivable, so a model's number is
        // not trusted.
        critical_fact_count: critical,
        claim_checks: f
            .opt_array("claim_checks")?
            .iter()
            .map(Json::to_value)
            .collect(),
        facts_checked: facts,
        rationale: f.opt_str("rationale")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_recounts_critical_facts() {
        let v = parse_verifier_output(
            r#"{"verdict": "LOW_CONFID", "groundedness_score": 0.5, "critical_fact_count": 9,
                "facts_checked": [
                  {"claim_id": "claim-1", "fact": "a", "is_critical": true, "verification": "no_evidence", "detail": ""},
                  {"fact": "b", "is_critical": false, "verification": "direct_evidence", "detail": ""}
                ], "rationale": "r"}"#,
        )
        .unwrap();
        assert_eq!(v.critical_fact_count, 1);
        assert_eq!(v.critical_gaps().count(), 1);
    }

    #[test]
    fn rejects_unknown_verdicts_and_bad_scores() {
        for bad in [
            r#"{"verdict": "FAILED", "facts_checked": []}"#,
            r#"{"verdict": "PASS", "groundedness_score": 7, "facts_checked": []}"#,
            r#"{"verdict": "PASS", "facts_checked": [{"fact": "x", "verification": "maybe"}]}"#,
            r#"{"verdict": "PASS"}"#,
            r#"{"verdict": 1, "facts_checked": []}"#,
        ] {
            assert!(parse_verifier_output(bad).is_err(), "{bad}");
        }
    }
}

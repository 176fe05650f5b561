//! `executor_evidence_v2`: claims with evidence bindings, hypotheses,
//! recommended actions and missing information.
//!
//! The parser enforces the structure only: a parseable output whose
//! bindings are wrong is COMPLETED and the Gatekeeper judges it. What makes
//! an output INVALID_OUTPUT: empty, not JSON, not an object, `claims` not
//! an array, a forbidden field (`diagnosis_summary`, `user_facing_answer`),
//! or items of the wrong shape.

use super::json::{Fields, Json, Object, ParseFailure, extract_json_object, kind, objects};
use serde::{Deserialize, Serialize};

pub const EXECUTOR_ANSWER_VERSION: &str = "executor_evidence_v2";
pub const FORBIDDEN_EXECUTOR_FIELDS: [&str; 2] = ["diagnosis_summary", "user_facing_answer"];
pub const NO_EVIDENCE_PATH: &str = "$.no_evidence";
/// The `claim_type` values of the contract, spelled exactly so. Anything
/// else, another case or separator included, is rejected by the
/// Gatekeeper (`contract.enum_values`): a misspelt `negative_observation`
/// would otherwise slip past every rule keyed on it.
pub const CLAIM_TYPES: [&str; 4] = [
    "observation",
    "negative_observation",
    "symptom",
    "root_cause",
];
/// The `support_level` values of the contract, spelled exactly so.
pub const SUPPORT_LEVELS: [&str; 2] = ["direct", "indirect"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ExecutorEvidence {
    pub answer_version: String,
    pub claims: Vec<Claim>,
    pub hypotheses: Vec<Hypothesis>,
    pub recommended_actions: Vec<RecommendedAction>,
    pub missing_info: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    pub claim_id: String,
    pub claim_type: String,
    pub claim_text: String,
    pub support_level: String,
    pub evidence_bindings: Vec<EvidenceBinding>,
}

impl Claim {
    pub fn is_negative(&self) -> bool {
        self.claim_type == "negative_observation"
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct EvidenceBinding {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source_type: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source_id: String,
    pub tool_name: String,
    pub source_invocation_id: Option<i64>,
    /// A `source_invocation_id` that was present but not an integer (for
    /// example a made-up string). The Gatekeeper rejects it as fabricated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_invocation_id: Option<String>,
    pub raw_path: Option<String>,
    pub evidence_excerpt: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Hypothesis {
    pub hypothesis_text: String,
    #[serde(default)]
    pub basis: String,
    #[serde(default)]
    pub needed_evidence: Vec<String>,
    /// Citations a model attached to the hypothesis. They never make it a
    /// finding, but the Gatekeeper checks them like any binding.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence_bindings: Vec<EvidenceBinding>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct RecommendedAction {
    pub action_text: String,
    #[serde(default)]
    pub reason: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence_bindings: Vec<EvidenceBinding>,
}

pub fn parse_executor_evidence(text: &str) -> Result<ExecutorEvidence, ParseFailure> {
    let map = extract_json_object(text)?;
    for field in FORBIDDEN_EXECUTOR_FIELDS {
        if map.contains_key(field) {
            return Err(ParseFailure::malformed(format!(
                "executor output contains the forbidden field `{field}`"
            )));
        }
    }
    let f = Fields::new(&map, "executor_evidence");
    let claims_raw = match map.get("claims") {
        Some(Json::Array(a)) => a,
        Some(other) => {
            return Err(ParseFailure::malformed(format!(
                "claims must be an array, got {}",
                kind(other)
            )));
        }
        None => return Err(ParseFailure::malformed("claims is missing")),
    };
    let mut claims = Vec::with_capacity(claims_raw.len());
    for (i, c) in objects(claims_raw, "claims")?.into_iter().enumerate() {
        claims.push(parse_claim(i, c)?);
    }
    let mut hypotheses = Vec::new();
    for h in objects(f.opt_array("hypotheses")?, "hypotheses")? {
        let hf = Fields::new(h, "hypotheses[]");
        let bindings = objects(hf.opt_array("evidence_bindings")?, "evidence_bindings")?
            .into_iter()
            .map(parse_binding)
            .collect::<Result<Vec<_>, _>>()?;
        hypotheses.push(Hypothesis {
            hypothesis_text: hf.req_str("hypothesis_text")?,
            basis: hf.opt_str("basis")?,
            needed_evidence: hf.opt_string_list("needed_evidence")?,
            evidence_bindings: bindings,
        });
    }
    let mut recommended_actions = Vec::new();
    for a in objects(f.opt_array("recommended_actions")?, "recommended_actions")? {
        let af = Fields::new(a, "recommended_actions[]");
        let bindings = objects(af.opt_array("evidence_bindings")?, "evidence_bindings")?
            .into_iter()
            .map(parse_binding)
            .collect::<Result<Vec<_>, _>>()?;
        recommended_actions.push(RecommendedAction {
            action_text: af.req_str("action_text")?,
            reason: af.opt_str("reason")?,
            evidence_bindings: bindings,
        });
    }
    Ok(ExecutorEvidence {
        answer_version: f.opt_str("answer_version")?,
        claims,
        hypotheses,
        recommended_actions,
        missing_info: f.opt_string_list("missing_info")?,
    })
}

fn parse_claim(index: usize, c: &Object<'_>) -> Result<Claim, ParseFailure> {
    let cf = Fields::new(c, "claims[]");
    let claim_id = match c.get("claim_id") {
        Some(Json::String(s)) if !s.trim().is_empty() => s.to_string(),
        Some(Json::Number(n)) => n.to_string(),
        None | Some(Json::Null) => format!("claim-{}", index + 1),
        Some(Json::String(_)) => format!("claim-{}", index + 1),
        Some(other) => {
            return Err(ParseFailure::malformed(format!(
                "claims[{index}].claim_id must be a string, got {}",
                kind(other)
            )));
        }
    };
    let claim_text = cf.req_str("claim_text")?;
    if claim_text.trim().is_empty() {
        return Err(ParseFailure::malformed(format!(
            "claims[{index}].claim_text is empty"
        )));
    }
    let bindings = objects(cf.opt_array("evidence_bindings")?, "evidence_bindings")?
        .into_iter()
        .map(parse_binding)
        .collect::<Result<Vec<_>, _>>()?;
    let claim_type = cf.opt_str("claim_type")?;
    Ok(Claim {
        claim_id,
        claim_type: if claim_type.is_empty() {
            "observation".into()
        } else {
            claim_type
        },
        claim_text,
        support_level: {
            let s = cf.opt_str("support_level")?;
            if s.is_empty() { "direct".into() } else { s }
        },
        evidence_bindings: bindings,
    })
}

fn parse_binding(b: &Object<'_>) -> Result<EvidenceBinding, ParseFailure> {
    let bf = Fields::new(b, "evidence_bindings[]");
    let (source_invocation_id, invalid_invocation_id) = match b.get("source_invocation_id") {
        None | Some(Json::Null) => (None, None),
        Some(Json::Number(n)) => match n.as_i64() {
            Some(id) => (Some(id), None),
            None => (None, Some(n.to_string())),
        },
        Some(Json::String(s)) => match s.trim().parse::<i64>() {
            Ok(id) => (Some(id), None),
            Err(_) if s.trim().is_empty() => (None, None),
            Err(_) => (None, Some(crate::text::truncate_middle(s, 64))),
        },
        Some(other) => (None, Some(kind(other).to_string())),
    };
    let raw_path = bf.opt_nullable_str("raw_path")?;
    Ok(EvidenceBinding {
        source_type: bf.opt_str("source_type")?,
        source_id: match b.get("source_id") {
            Some(Json::Number(n)) => n.to_string(),
            _ => bf.opt_str("source_id")?,
        },
        tool_name: bf.opt_str("tool_name")?,
        source_invocation_id,
        invalid_invocation_id,
        raw_path,
        evidence_excerpt: bf.opt_str("evidence_excerpt")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = r#"{
      "answer_version": "executor_evidence_v2",
      "claims": [{
        "claim_id": "claim-1", "claim_type": "observation",
        "claim_text": "payment-service has HighCPUUsage firing at 92%",
        "support_level": "direct",
        "evidence_bindings": [{"tool_name": "query_metrics", "source_invocation_id": 7,
          "raw_path": "$.alerts[0]", "evidence_excerpt": "HighCPUUsage firing"}]
      }],
      "hypotheses": [], "recommended_actions": [], "missing_info": []
    }"#;

    #[test]
    fn parses_valid_output() {
        let e = parse_executor_evidence(VALID).unwrap();
        assert_eq!(
            e.claims[0].evidence_bindings[0].source_invocation_id,
            Some(7)
        );
    }

    #[test]
    fn empty_claims_is_legal() {
        let e = parse_executor_evidence(
            r#"{"answer_version":"executor_evidence_v2","claims":[],"missing_info":["no data"]}"#,
        )
        .unwrap();
        assert!(e.claims.is_empty());
    }

    #[test]
    fn forbidden_fields_and_bad_claims_are_invalid() {
        for bad in [
            r#"{"claims": [], "diagnosis_summary": "x"}"#,
            r#"{"claims": [], "user_facing_answer": "x"}"#,
            r#"{"claims": {}}"#,
            r#"{"claims": "none"}"#,
            r#"{"hypotheses": []}"#,
            r#"{"claims": [1]}"#,
            r#"{"claims": [{"claim_text": 5}]}"#,
            r#"{"claims": [{"claim_text": ""}]}"#,
            r#"{"claims": [{"claim_text": "x", "evidence_bindings": "b"}]}"#,
        ] {
            assert!(parse_executor_evidence(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn odd_invocation_ids_are_kept_for_the_gatekeeper() {
        let e = parse_executor_evidence(
            r#"{"claims": [{"claim_text": "x", "evidence_bindings": [
                {"tool_name": "query_logs", "source_invocation_id": "abc", "raw_path": "$.logs[0]", "evidence_excerpt": "e"},
                {"tool_name": "query_logs", "source_invocation_id": "12", "raw_path": "$.logs[1]", "evidence_excerpt": "e"}
            ]}]}"#,
        )
        .unwrap();
        let b = &e.claims[0].evidence_bindings;
        assert_eq!(b[0].invalid_invocation_id.as_deref(), Some("abc"));
        assert_eq!(b[1].source_invocation_id, Some(12));
    }
}

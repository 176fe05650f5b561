//! `composer_output`: the statements the Composer chooses, each naming the
//! verified claims it rests on, and the over-statement phrases the
//! evaluation still counts (the answer itself is checked by facts, in
//! `engine::nodes::answer`).
//!
//! Parsing stays compatible with the earlier `composer_output` shape
//! (`answer_summary`, `recommended_actions`, `user_facing_answer`): an
//! output in that shape parses, and its free-text answer then counts as one
//! statement that names no claim. What is INVALID_OUTPUT here: not one
//! JSON object, items of the wrong shape, or neither `statements` nor a
//! non-empty `user_facing_answer`.

use super::json::{Fields, Json, ParseFailure, extract_json_object, kind, objects};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ComposerAction {
    pub action_text: String,
    #[serde(default)]
    pub reason: String,
}

/// One statement of the answer and the verified claims it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ComposerStatement {
    pub text: String,
    #[serde(default)]
    pub claim_ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ComposerOutput {
    #[serde(default)]
    pub answer_summary: String,
    /// The findings, each naming its claims. Code assembles the answer
    /// from them; absent in outputs of the earlier shape.
    #[serde(default)]
    pub statements: Vec<ComposerStatement>,
    #[serde(default)]
    pub recommended_actions: Vec<ComposerAction>,
    /// The earlier shape's free-text answer. Never shown: it names no claim.
    #[serde(default)]
    pub user_facing_answer: String,
}

pub fn parse_composer_output(text: &str) -> Result<ComposerOutput, ParseFailure> {
    let map = extract_json_object(text)?;
    let f = Fields::new(&map, "composer_output");
    let answer = f.opt_str("user_facing_answer")?;
    let has_statements = matches!(map.get("statements"), Some(Json::Array(_)));
    if !has_statements && answer.trim().is_empty() {
        return Err(ParseFailure::malformed(
            "composer_output has no statements (and no user_facing_answer)",
        ));
    }
    let mut statements = Vec::new();
    for (i, st) in objects(f.opt_array("statements")?, "statements")?
        .into_iter()
        .enumerate()
    {
        let sf = Fields::new(st, "statements[]");
        let text = sf.req_str("text")?;
        if text.trim().is_empty() {
            return Err(ParseFailure::malformed(format!(
                "statements[{i}].text is empty"
            )));
        }
        let claim_ids = match st.get("claim_ids") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::String(s)) => vec![s.to_string()],
            Some(Json::Array(items)) => {
                let mut ids = Vec::with_capacity(items.len());
                for (k, v) in items.iter().enumerate() {
                    match v {
                        Json::String(s) => ids.push(s.to_string()),
                        Json::Number(n) => ids.push(n.to_string()),
                        other => {
                            return Err(ParseFailure::malformed(format!(
                                "statements[{i}].claim_ids[{k}] must be a string, got {}",
                                kind(other)
                            )));
                        }
                    }
                }
                ids
            }
            Some(other) => {
                return Err(ParseFailure::malformed(format!(
                    "statements[{i}].claim_ids must be an array of claim ids, got {}",
                    kind(other)
                )));
            }
        };
        statements.push(ComposerStatement { text, claim_ids });
    }
    let mut actions = Vec::new();
    for a in objects(f.opt_array("recommended_actions")?, "recommended_actions")? {
        let af = Fields::new(a, "recommended_actions[]");
        actions.push(ComposerAction {
            action_text: af.req_str("action_text")?,
            reason: af.opt_str("reason")?,
        });
    }
    Ok(ComposerOutput {
        answer_summary: f.opt_str("answer_summary")?,
        statements,
        recommended_actions: actions,
        user_facing_answer: answer,
    })
}

/// Phrases that turn "this query found nothing" into a conclusion the
/// evidence cannot carry, matched case-insensitively. The evaluation counts
/// them as over-claims; the answer check itself compares facts (polarity
/// and state words, `evidence::facts::grounded`), which also catches the
/// paraphrases no list can hold.
pub const OVERSTATEMENT_PHRASES: &[&str] = &[
    "ruled out",
    "rule out",
    "not present",
    "is healthy",
    "are healthy",
    "confirmed healthy",
    "does not exist",
    "do not exist",
    "doesn't exist",
    "no problem",
    "no issue",
    "nothing wrong",
    "已排除",
    "排除了",
    "不存在",
    "确认没有",
    "没有问题",
    "一切正常",
    "已经健康",
    "是健康的",
];

/// The over-statement phrase found in a composer output's text, if any.
pub fn find_overstatement(output: &ComposerOutput) -> Option<&'static str> {
    let text = format!(
        "{}\n{}\n{}\n{}",
        output.answer_summary,
        output.user_facing_answer,
        output
            .statements
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        output
            .recommended_actions
            .iter()
            .map(|a| format!("{} {}", a.action_text, a.reason))
            .collect::<Vec<_>>()
            .join("\n")
    )
    .to_lowercase();
    OVERSTATEMENT_PHRASES
        .iter()
        .copied()
        .find(|p| text.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_detects_overstatement() {
        let out = parse_composer_output(
            r#"{"answer_summary": "s", "recommended_actions": [], "user_facing_answer": "Connection pool exhaustion is ruled out."}"#,
        )
        .unwrap();
        assert_eq!(find_overstatement(&out), Some("ruled out"));
        let zh = ComposerOutput {
            user_facing_answer: "日志层面已排除该问题".into(),
            ..Default::default()
        };
        assert_eq!(find_overstatement(&zh), Some("已排除"));
        let ok = ComposerOutput {
            user_facing_answer: "The query found no matching logs.".into(),
            ..Default::default()
        };
        assert_eq!(find_overstatement(&ok), None);
    }

    #[test]
    fn rejects_missing_or_empty_answer() {
        for bad in [
            r#"{"answer_summary": "s"}"#,
            r#"{"user_facing_answer": "  "}"#,
            r#"{"user_facing_answer": ["a"]}"#,
            r#"{"user_facing_answer": "a", "recommended_actions": [{"reason": "r"}]}"#,
            r#"{"statements": {"text": "a"}}"#,
            r#"{"statements": [{"claim_ids": ["c1"]}]}"#,
            r#"{"statements": [{"text": " ", "claim_ids": ["c1"]}]}"#,
            r#"{"statements": [{"text": "a", "claim_ids": [{"id": "c1"}]}]}"#,
            r#"{"statements": [{"text": "a", "claim_ids": 7}]}"#,
            r#"{"statements": ["a"]}"#,
        ] {
            assert!(parse_composer_output(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn statements_name_their_claims_and_the_earlier_shape_still_parses() {
        let out = parse_composer_output(
            r#"{"statements": [{"text": "a", "claim_ids": ["c1", 2]}, {"text": "b", "claim_ids": "c3"}, {"text": "c"}]}"#,
        )
        .unwrap();
        let ids: Vec<Vec<String>> = out.statements.iter().map(|s| s.claim_ids.clone()).collect();
        assert_eq!(
            ids,
            vec![
                vec!["c1".to_string(), "2".to_string()],
                vec!["c3".to_string()],
                vec![]
            ]
        );
        let legacy =
            parse_composer_output(r#"{"answer_summary": "s", "user_facing_answer": "a"}"#).unwrap();
        assert!(legacy.statements.is_empty());
        assert_eq!(legacy.user_facing_answer, "a");
        let empty = parse_composer_output(r#"{"statements": []}"#).unwrap();
        assert!(empty.statements.is_empty() && empty.user_facing_answer.is_empty());
    }
}

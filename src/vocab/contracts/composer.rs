//! `composer_output` and the over-statement check that code, not a prompt,
//! guarantees: "found nothing" never reads as "ruled out" (ARCHITECTURE.md,
//! "Evidence trust boundary").

use super::json::{Fields, ParseFailure, extract_json_object, objects};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ComposerAction {
    pub action_text: String,
    #[serde(default)]
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ComposerOutput {
    pub answer_summary: String,
    pub recommended_actions: Vec<ComposerAction>,
    pub user_facing_answer: String,
}

pub fn parse_composer_output(text: &str) -> Result<ComposerOutput, ParseFailure> {
    let map = extract_json_object(text)?;
    let f = Fields::new(&map, "composer_output");
    let answer = f.req_str("user_facing_answer")?;
    if answer.trim().is_empty() {
        return Err(ParseFailure::malformed("user_facing_answer is empty"));
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
        recommended_actions: actions,
        user_facing_answer: answer,
    })
}

/// Phrases that turn "this query found nothing" into a conclusion the
/// evidence cannot carry. Matched case-insensitively on the whole answer.
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

/// The over-statement phrase found in a composer answer, if any. Only
/// applied when the allowed material contains a negative observation (or a
/// `$.no_evidence` binding): only then can "found nothing" be over-stated,
/// and elsewhere the phrases may be legitimate.
pub fn find_overstatement(output: &ComposerOutput) -> Option<&'static str> {
    let text = format!(
        "{}\n{}\n{}",
        output.answer_summary,
        output.user_facing_answer,
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
        ] {
            assert!(parse_composer_output(bad).is_err(), "{bad}");
        }
    }
}

//! Skills: `skills/<name>/SKILL.md` with front matter (name, description)
//! and a body that is the diagnosis procedure.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub body: String,
    /// Path relative to the pack directory.
    pub source: String,
}

/// Most steps of a procedure the Planner is shown.
const MAX_STEPS: usize = 12;
/// Characters of one step.
const MAX_STEP_CHARS: usize = 240;

/// The steps of a skill's procedure: its numbered or bulleted list items
/// (wrapped lines joined), else its prose paragraphs; headings, tables
/// and code are left out. Bounded, cleaned text: a skill file is input.
pub fn procedure(body: &str) -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    let mut para: Vec<&str> = Vec::new();
    let mut in_code = false;
    for line in body.lines().chain(std::iter::once("")) {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_code = !in_code;
            items.extend(current.take());
            continue;
        }
        if in_code {
            continue;
        }
        if let Some(item) = list_item(t) {
            items.extend(current.take());
            current = Some(item.to_string());
            continue;
        }
        let structural = t.starts_with(['#', '|', '<']);
        if t.is_empty() || structural {
            items.extend(current.take());
            if !para.is_empty() {
                paragraphs.push(para.join(" "));
                para.clear();
            }
            continue;
        }
        match current.as_mut() {
            Some(c) => {
                c.push(' ');
                c.push_str(t);
            }
            None => para.push(t),
        }
    }
    let steps = if items.is_empty() { paragraphs } else { items };
    steps
        .iter()
        .map(|s| crate::text::clean(s, MAX_STEP_CHARS))
        .filter(|s| s.chars().count() >= 8)
        .take(MAX_STEPS)
        .collect()
}

/// `1. text`, `2) text`, `- text`, `* text` -> `text`.
fn list_item(line: &str) -> Option<&str> {
    if let Some(rest) = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")) {
        return Some(rest.trim());
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || digits > 3 {
        return None;
    }
    let rest = line.get(digits..)?;
    rest.strip_prefix(". ")
        .or_else(|| rest.strip_prefix(") "))
        .map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procedure_steps_from_lists_or_paragraphs() {
        let body = "# Title\n\n1. Query the ERROR logs (keyword \"pool\") and note\n   when it started.\n2) Query alerts.\n\n```\n3. not a step\n```\n- Look up the runbook for pool exhaustion.\n";
        assert_eq!(
            procedure(body),
            vec![
                "Query the ERROR logs (keyword \"pool\") and note when it started.".to_string(),
                "Query alerts.".to_string(),
                "Look up the runbook for pool exhaustion.".to_string(),
            ]
        );
        assert_eq!(
            procedure("Check the alerts first.\n\nThen read the error logs."),
            vec![
                "Check the alerts first.".to_string(),
                "Then read the error logs.".to_string()
            ]
        );
        assert!(procedure("").is_empty());
        assert!(procedure("```\nunclosed\n1. step inside code").is_empty());
        let many: String = (1..40)
            .map(|i| format!("{i}. step number {i} here\n"))
            .collect();
        assert_eq!(procedure(&many).len(), MAX_STEPS);
        let long = format!("1. {}", "x".repeat(5000));
        assert!(procedure(&long)[0].chars().count() <= MAX_STEP_CHARS + 1);
    }
}

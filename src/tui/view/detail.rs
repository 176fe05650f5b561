//! The detail popup: a record's full JSON, highlighted with syntect, and
//! the two-run compare text with its differing rows marked.
//!
//! syntect only tokenises; the token scopes map onto theme roles, so the
//! highlighting follows the UI theme instead of a separate syntect theme.
//! The text is sanitised before parsing, and the lines are computed once
//! when the popup opens, so scrolling costs nothing.

use crate::text::sanitize_multiline;
use crate::tui::theme::{Role, Theme};
use ratatui::text::{Line, Span};
use serde_json::Value;
use std::sync::LazyLock;
use syntect::easy::ScopeRangeIterator;
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxSet};

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_nonewlines);

struct ScopeRoles {
    key: Option<Scope>,
    /// The older Sublime JSON grammar (the one syntect bundles) names keys so.
    key_legacy: Option<Scope>,
    string: Option<Scope>,
    number: Option<Scope>,
    literal: Option<Scope>,
    punct: Option<Scope>,
}

static SCOPES: LazyLock<ScopeRoles> = LazyLock::new(|| ScopeRoles {
    key: Scope::new("meta.mapping.key").ok(),
    key_legacy: Scope::new("meta.structure.dictionary.key").ok(),
    string: Scope::new("string").ok(),
    number: Scope::new("constant.numeric").ok(),
    literal: Scope::new("constant.language").ok(),
    punct: Scope::new("punctuation").ok(),
});

/// Lines beyond this are cut: a detail view is for reading, and a huge
/// body must not stall the UI.
const MAX_LINES: usize = 4000;

fn role_for(stack: &ScopeStack) -> Role {
    let s = &*SCOPES;
    let has = |scope: Option<Scope>| {
        scope.is_some_and(|want| stack.as_slice().iter().any(|sc| want.is_prefix_of(*sc)))
    };
    if has(s.key) || has(s.key_legacy) {
        Role::JsonKey
    } else if has(s.string) {
        Role::JsonString
    } else if has(s.number) {
        Role::JsonNumber
    } else if has(s.literal) {
        Role::JsonLiteral
    } else if has(s.punct) {
        Role::JsonPunct
    } else {
        Role::Text
    }
}

/// Pretty JSON as styled, sanitised lines.
pub fn json_lines(value: &Value, theme: &Theme) -> Vec<Line<'static>> {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    highlight_json(&text, theme)
}

pub fn highlight_json(text: &str, theme: &Theme) -> Vec<Line<'static>> {
    let text = sanitize_multiline(text);
    let syntax = SYNTAXES.find_syntax_by_extension("json");
    let mut state = syntax.map(ParseState::new);
    let mut stack = ScopeStack::new();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if i >= MAX_LINES {
            out.push(Line::styled(
                format!("… {} more lines", text.lines().count() - MAX_LINES),
                theme.style(Role::Muted),
            ));
            break;
        }
        let ops = state
            .as_mut()
            .and_then(|st| st.parse_line(line, &SYNTAXES).ok());
        let Some(ops) = ops else {
            out.push(Line::styled(line.to_string(), theme.style(Role::Text)));
            continue;
        };
        let mut spans = Vec::new();
        // Each range is the text that follows its op, so the op applies
        // first.
        for (range, op) in ScopeRangeIterator::new(&ops, line) {
            let _ = stack.apply(op);
            let piece = line.get(range).unwrap_or_default();
            if !piece.is_empty() {
                spans.push(Span::styled(
                    piece.to_string(),
                    theme.style(role_for(&stack)),
                ));
            }
        }
        out.push(Line::from(spans));
    }
    out
}

/// The compare text as lines: differing rows stand out, headings are
/// titles.
pub fn compare_lines(text: &str, t: &Theme) -> Vec<Line<'static>> {
    text.lines()
        .map(|l| {
            let role = if l.starts_with('≠') {
                Role::Degraded
            } else if !l.starts_with(' ') && !l.is_empty() {
                Role::Title
            } else {
                Role::Text
            };
            Line::styled(l.to_string(), t.style(role))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_strings_and_numbers_get_their_roles() {
        let theme = Theme::dark();
        let lines = highlight_json("{\n  \"tool\": \"query_logs\",\n  \"n\": 17\n}", &theme);
        let line = &lines[1];
        let find = |text: &str| {
            line.spans
                .iter()
                .find(|s| s.content.contains(text))
                .map(|s| s.style)
                .unwrap()
        };
        assert_eq!(find("tool"), theme.style(Role::JsonKey));
        assert_eq!(find("query_logs"), theme.style(Role::JsonString));
        assert_eq!(
            lines[2]
                .spans
                .iter()
                .find(|s| s.content.contains("17"))
                .unwrap()
                .style,
            theme.style(Role::JsonNumber)
        );
    }

    #[test]
    fn escapes_in_values_stay_inert() {
        let v = serde_json::json!({"body": "x\u{1b}[2Jy\u{9b}31m\u{202e}z"});
        let lines = json_lines(&v, &Theme::dark());
        for l in &lines {
            for s in &l.spans {
                assert!(
                    !s.content.chars().any(|c| c.is_control()),
                    "{:?}",
                    s.content
                );
            }
        }
    }
}

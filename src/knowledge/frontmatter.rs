//! Front matter of knowledge and skill files: a `---` fenced block of
//! simple YAML (`key: value`, quoted values, `[a, b]` and `- item` lists,
//! `|`/`>` block scalars). Pack files are user input, so this parser never
//! fails: a line it cannot read becomes a problem with its line number and
//! the rest of the block (and the body) still loads.

use crate::text::clean;
use std::collections::BTreeMap;

/// Characters of a bad line quoted in an issue.
const PREVIEW_CHARS: usize = 60;

/// The parsed block. Lists are joined with "; " so every value is text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrontMatter {
    pub fields: BTreeMap<String, String>,
}

impl FrontMatter {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }
}

/// A front matter problem: 1-based line in the file, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontMatterIssue {
    pub line: usize,
    pub message: String,
}

/// Result of splitting a markdown file.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub front: FrontMatter,
    pub body: String,
    /// 1-based file line where `body` starts.
    pub body_line: usize,
    pub issues: Vec<FrontMatterIssue>,
}

/// Splits `text` into front matter and body.
pub fn parse(text: &str) -> Parsed {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.split('\n').collect();
    let first = lines.first().map(|l| l.trim_end_matches('\r').trim_end());
    if first != Some("---") {
        return Parsed {
            body: text.to_string(),
            body_line: 1,
            ..Parsed::default()
        };
    }
    let close = lines
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, l)| matches!(l.trim_end_matches('\r').trim_end(), "---" | "..."))
        .map(|(i, _)| i);
    let Some(close) = close else {
        // An unclosed block: keep the whole file as the body so nothing is lost.
        return Parsed {
            body: text.to_string(),
            body_line: 1,
            issues: vec![FrontMatterIssue {
                line: 1,
                message: "front matter opened with '---' is never closed; read the file as plain markdown".into(),
            }],
            ..Parsed::default()
        };
    };
    let (front, issues) = parse_block(lines.get(1..close).unwrap_or(&[]), 2);
    let body = lines.get(close + 1..).unwrap_or(&[]).join("\n");
    Parsed {
        front,
        body,
        body_line: close + 2,
        issues,
    }
}

enum Pending {
    None,
    List(String, Vec<String>),
    Block(String, bool, Vec<String>),
}

fn parse_block(lines: &[&str], first_line: usize) -> (FrontMatter, Vec<FrontMatterIssue>) {
    let mut fm = FrontMatter::default();
    let mut issues = Vec::new();
    let mut pending = Pending::None;
    for (i, raw) in lines.iter().enumerate() {
        let line_no = first_line + i;
        let line = raw.trim_end_matches('\r');
        let trimmed = line.trim();
        let indented = line.starts_with(' ') || line.starts_with('\t');
        match &mut pending {
            Pending::Block(_, _, acc) if indented || trimmed.is_empty() => {
                acc.push(trimmed.to_string());
                continue;
            }
            Pending::List(_, items) if trimmed.starts_with("- ") || trimmed == "-" => {
                items.push(unquote(trimmed.trim_start_matches('-').trim()));
                continue;
            }
            Pending::List(_, items) if indented && !trimmed.is_empty() => {
                // Continuation of the previous list item.
                if let Some(last) = items.last_mut() {
                    last.push(' ');
                    last.push_str(trimmed);
                }
                continue;
            }
            _ => {}
        }
        flush(&mut fm, std::mem::replace(&mut pending, Pending::None));
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let Some((key, value)) = trimmed.split_once(':') else {
            issues.push(FrontMatterIssue {
                line: line_no,
                message: format!(
                    "front matter line is not 'key: value': {}",
                    clean(trimmed, PREVIEW_CHARS)
                ),
            });
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        if key.is_empty() || key.contains(char::is_whitespace) {
            issues.push(FrontMatterIssue {
                line: line_no,
                message: format!(
                    "front matter key is not a single word: {}",
                    clean(trimmed, PREVIEW_CHARS)
                ),
            });
            continue;
        }
        let value = value.trim();
        if indented {
            // Nested maps are not part of our format; keep going without them.
            continue;
        }
        match value {
            "" => pending = Pending::List(key, Vec::new()),
            "|" | "|-" | "|+" => pending = Pending::Block(key, true, Vec::new()),
            ">" | ">-" | ">+" => pending = Pending::Block(key, false, Vec::new()),
            v if v.starts_with('[') => {
                if !v.ends_with(']') {
                    issues.push(FrontMatterIssue {
                        line: line_no,
                        message: format!("unterminated list for '{key}'"),
                    });
                }
                let inner = v.trim_start_matches('[').trim_end_matches(']');
                let items: Vec<String> = inner
                    .split(',')
                    .map(|s| unquote(s.trim()))
                    .filter(|s| !s.is_empty())
                    .collect();
                fm.fields.insert(key, items.join("; "));
            }
            v => {
                fm.fields.insert(key, unquote(v));
            }
        }
    }
    flush(&mut fm, pending);
    (fm, issues)
}

fn flush(fm: &mut FrontMatter, pending: Pending) {
    match pending {
        Pending::None => {}
        Pending::List(key, items) => {
            fm.fields.insert(key, items.join("; "));
        }
        Pending::Block(key, literal, acc) => {
            let sep = if literal { "\n" } else { " " };
            let joined = acc.join(sep).trim().to_string();
            fm.fields.insert(key, joined);
        }
    }
}

fn unquote(v: &str) -> String {
    let v = v.trim();
    let stripped = v
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')));
    match stripped {
        Some(s) => s.replace("\\\"", "\"").replace("''", "'"),
        None => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_scalars_lists_and_blocks() {
        let text = "---\ntitle: \"Pool exhaustion\"\ndomain: database\ntags: [db, pool]\nwhen_to_retrieve:\n  - pool errors\n  - timeouts\nnote: >\n  one\n  two\n---\n# Body\n";
        let p = parse(text);
        assert_eq!(p.front.get("title"), Some("Pool exhaustion"));
        assert_eq!(p.front.get("tags"), Some("db; pool"));
        assert_eq!(
            p.front.get("when_to_retrieve"),
            Some("pool errors; timeouts")
        );
        assert_eq!(p.front.get("note"), Some("one two"));
        assert_eq!(p.body_line, 12);
        assert!(p.body.starts_with("# Body"));
        assert!(p.issues.is_empty());
    }

    #[test]
    fn bad_line_is_reported_with_its_line_and_rest_loads() {
        let p = parse("---\ntitle: A\nthis is not yaml\ndomain: b\n---\nbody");
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].line, 3);
        assert_eq!(p.front.get("domain"), Some("b"));
        assert_eq!(p.body, "body");
    }

    #[test]
    fn unclosed_block_keeps_the_body() {
        let p = parse("---\ntitle: A\n# Heading\ntext");
        assert_eq!(p.issues.len(), 1);
        assert!(p.body.contains("# Heading"));
    }
}

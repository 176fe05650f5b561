//! Text helpers shared by the offline roles: tokenising (English words and
//! Chinese bigrams), log-message templates and the `k=v` fields of evidence
//! refs. Untrusted text is cleaned with [`crate::text::clean`] before it is
//! copied anywhere.
//!
//! Everything here is pure and allocation-light: the offline model must run
//! a whole diagnosis in a few milliseconds, so regexes are compiled once.

use crate::text::clean;
use crate::text::literal_regex;
use regex::Regex;
use std::collections::BTreeSet;
use std::sync::LazyLock;

/// Words that carry no meaning for matching questions to skills or docs.
const STOPWORDS: &[&str] = &[
    "the",
    "and",
    "for",
    "are",
    "was",
    "why",
    "what",
    "how",
    "is",
    "there",
    "any",
    "with",
    "from",
    "this",
    "that",
    "have",
    "has",
    "does",
    "did",
    "not",
    "all",
    "our",
    "its",
    "into",
    "when",
    "who",
    "use",
    "used",
    "using",
    "can",
    "could",
    "should",
    "would",
    "been",
    "being",
    "you",
    "your",
    "about",
    "which",
    "over",
    "than",
    "then",
    "them",
    "they",
    "also",
    "only",
    "show",
    "tell",
    "please",
    "check",
    "see",
    "get",
    "got",
    "some",
    "more",
    "most",
    "very",
    "just",
    "now",
    "right",
    "currently",
    "current",
    "service",
    "services",
    "svc",
    "app",
    "diagnose",
    "diagnosis",
    "investigate",
    "issue",
    "issues",
    "problem",
    "problems",
    "skill",
    "procedure",
    "steps",
    "guide",
    "runbook",
    "when",
    "where",
    "will",
    "going",
    "on",
    "in",
    "of",
    "to",
    "a",
    "an",
    "it",
    "be",
    "or",
    "by",
    "at",
    "as",
    "if",
];

pub fn is_stopword(w: &str) -> bool {
    STOPWORDS.contains(&w)
}

pub use crate::text::is_han;

/// Lowercase ASCII-alphanumeric words (split on anything else, `-` too),
/// plus bigrams of each run of Han characters.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut han: Vec<char> = Vec::new();
    let flush_han = |han: &mut Vec<char>, out: &mut Vec<String>| {
        if han.len() == 1 {
            out.push(han[0].to_string());
        }
        for pair in han.windows(2) {
            out.push(pair.iter().collect());
        }
        han.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            flush_han(&mut han, &mut out);
            word.push(c.to_ascii_lowercase());
        } else {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            if is_han(c) {
                han.push(c);
            } else {
                flush_han(&mut han, &mut out);
            }
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    flush_han(&mut han, &mut out);
    out
}

/// Meaningful tokens: no stopwords, no 1-2 letter English words.
pub fn content_tokens(text: &str) -> BTreeSet<String> {
    tokens(text)
        .into_iter()
        .filter(|t| {
            let han = t.chars().any(is_han);
            han || (t.len() >= 3 && !is_stopword(t))
        })
        .collect()
}

/// The template of a log message: the one log-pattern rule
/// ([`crate::text::pattern::pattern`]) the tools count "lines like this"
/// by, so a group here is a group there.
pub fn template(message: &str) -> String {
    clean(&crate::text::pattern::pattern(message), 160)
}

/// The literal pieces of a template or quoted phrase (split at `*` and
/// `…`), each trimmed; pieces shorter than 3 characters are dropped.
pub fn literal_pieces(phrase: &str) -> Vec<String> {
    phrase
        .split(['*', '…'])
        .map(|p| p.trim_matches(|c: char| c.is_whitespace() || c == ',' || c == ';'))
        .filter(|p| p.chars().count() >= 3)
        .map(str::to_string)
        .collect()
}

static FIELD: LazyLock<Regex> =
    LazyLock::new(|| literal_regex(r"(?:^|\s)([A-Za-z_][A-Za-z0-9_.]*)="));

/// The `key=value` fields of an evidence ref text such as
/// `alertname=X service=Y state=firing value=92% summary=CPU above 90%`. A
/// value runs to the next ` key=`; the last one runs to the end.
pub fn ref_fields(text: &str) -> Vec<(String, String)> {
    let starts: Vec<(usize, usize, String)> = FIELD
        .captures_iter(text)
        .filter_map(|c| {
            let whole = c.get(0)?;
            let key = c.get(1)?;
            Some((
                whole.start(),
                whole.end(),
                key.as_str().to_ascii_lowercase(),
            ))
        })
        .collect();
    let mut out = Vec::with_capacity(starts.len());
    for (i, (_, value_start, key)) in starts.iter().enumerate() {
        let value_end = starts.get(i + 1).map_or(text.len(), |n| n.0);
        let value = text
            .get(*value_start..value_end)
            .unwrap_or("")
            .trim()
            .trim_end_matches([',', ';'])
            .to_string();
        out.push((key.clone(), value));
    }
    out
}

pub fn field<'a>(fields: &'a [(String, String)], key: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(k, v)| k == key && !v.is_empty())
        .map(|(_, v)| v.as_str())
}

/// Case-insensitive containment (ASCII case only, so byte offsets of
/// non-ASCII text are unaffected).
pub fn contains_ci(haystack: &str, needle: &str) -> bool {
    haystack
        .to_ascii_lowercase()
        .contains(&needle.to_ascii_lowercase())
}

/// Whether `needle` occurs in `haystack` as a whole word: the characters
/// around it are not ASCII letters or digits (Chinese text counts as a
/// boundary, so "payment-service的" still matches).
pub fn contains_word(haystack_lower: &str, needle_lower: &str) -> bool {
    if needle_lower.is_empty() {
        return false;
    }
    let bytes = haystack_lower.as_bytes();
    let mut from = 0;
    while let Some(pos) = haystack_lower
        .get(from..)
        .and_then(|h| h.find(needle_lower))
    {
        let start = from + pos;
        let end = start + needle_lower.len();
        let before_ok = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
        let after_ok = end >= bytes.len() || !bytes[end].is_ascii_alphanumeric();
        if before_ok && after_ok {
            return true;
        }
        from = start + 1;
        while from < haystack_lower.len() && !haystack_lower.is_char_boundary(from) {
            from += 1;
        }
    }
    false
}

/// A leading timestamp of a log ref text (`2026-07-08T23:05:28Z ...` or
/// `2026-07-08 23:05:28 ...`), exactly as written there.
pub fn leading_timestamp(text: &str) -> Option<String> {
    static TS: LazyLock<Regex> = LazyLock::new(|| {
        literal_regex(
            r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?",
        )
    });
    TS.find(text.trim_start()).map(|m| m.as_str().to_string())
}

/// `text` cleaned, cut at a space to at most `max` characters (with `…`
/// when cut): a number or name is quoted whole or not at all.
pub fn whole_words(text: &str, max: usize) -> String {
    let full = crate::text::clean(text, usize::MAX);
    if full.chars().count() <= max {
        return full;
    }
    let cut: String = full.chars().take(max.saturating_sub(1)).collect();
    match cut.rfind(' ') {
        Some(i) => format!("{}…", cut[..i].trim_end()),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_mask_variable_parts() {
        let a =
            template("HikariPool-1 - Connection is not available, request timed out after 30000ms");
        let b =
            template("HikariPool-1 - Connection is not available, request timed out after 30012ms");
        assert_eq!(a, b);
        assert!(a.contains("Connection is not available"));
        assert_eq!(
            template("user 3f2a9c1e-1111-2222-3333-444455556666 from 10.0.0.1:8080 failed"),
            template("user 0a2a9c1e-1111-2222-3333-444455556666 from 10.0.0.2:80 failed"),
        );
        // A number's sign does not split a pattern in two.
        assert_eq!(
            template("Receiving block blk_-6952295868487656571 src: /10.0.0.1:5"),
            template("Receiving block blk_38865049064139660 src: /10.0.0.2:6"),
        );
        assert_eq!(template("keyId: -127633188)"), template("keyId: 42)"));
        assert_eq!(template("delta=-5 now"), "delta=* now");
        assert_eq!(template("HikariPool-1 - stats"), "HikariPool-* - stats");
    }

    #[test]
    fn ref_fields_split_on_keys() {
        let f = ref_fields(
            "alertname=HighCPUUsage service=payment-service state=firing value=92% summary=CPU usage above 90%",
        );
        assert_eq!(field(&f, "service"), Some("payment-service"));
        assert_eq!(field(&f, "summary"), Some("CPU usage above 90%"));
    }

    #[test]
    fn word_boundaries_and_tokens() {
        assert!(contains_word(
            "why is payment-service slow",
            "payment-service"
        ));
        assert!(!contains_word("prepayment-services", "payment-service"));
        assert!(contains_word("payment-service的延迟", "payment-service"));
        assert!(tokens("支付服务超时").contains(&"超时".to_string()));
    }
}

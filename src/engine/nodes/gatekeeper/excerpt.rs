//! Whether an evidence excerpt is supported by a ref's text.
//!
//! Both texts are normalised to a token sequence (lowercase, full-width
//! folded to half-width, punctuation and whitespace collapsed, each Han or
//! kana character its own token, so Chinese is compared character by
//! character). Supported means: the excerpt is a contiguous run of the
//! ref's tokens, or enough of its distinct tokens occur in the ref AND every
//! token carrying a digit occurs there too AND it adds no negation word the
//! ref lacks AND no `key=value` field contradicts a field of the ref with a
//! value the ref never mentions (so `state=firing` cannot cite an alert
//! whose text says `state=resolved`).
//! Whole-token comparison is what stops `value=9%` passing against
//! `value=92%`.

use super::rules::ExcerptParams;
use std::collections::HashSet;

/// A normalised text: tokens joined by single spaces, padded with a space
/// on both ends so a token-boundary substring test is a plain `contains`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormText {
    padded: String,
    /// `key=value` fields of the original text: key, value tokens.
    fields: Vec<(String, Vec<String>)>,
}

/// Negation words whose appearance in an excerpt but not in the ref flips
/// the meaning while keeping the token overlap high.
const NEGATORS: &[&str] = &[
    "not", "no", "never", "none", "without", "cannot", "nothing", "isn", "aren", "wasn", "weren",
    "doesn", "don", "didn", "won", "hasn", "haven", "不", "没", "无", "未", "非", "否",
];

fn is_cjk_char(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF      // CJK unified ideographs
        | 0x3400..=0x4DBF    // extension A
        | 0xF900..=0xFAFF    // compatibility ideographs
        | 0x20000..=0x2FFFF  // extensions B..
        | 0x3040..=0x309F    // hiragana
        | 0x30A0..=0x30FF    // katakana
    )
}

/// Full-width ASCII variants and the ideographic space to their ASCII form.
fn fold_width(c: char) -> char {
    match c as u32 {
        0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        0x3000 => ' ',
        _ => c,
    }
}

fn fold(text: &str) -> Vec<char> {
    text.chars()
        .map(fold_width)
        .flat_map(char::to_lowercase)
        .collect()
}

impl NormText {
    pub fn new(text: &str) -> NormText {
        let chars = fold(text);
        let mut n = NormText::from_chars(&chars);
        n.fields = fields(&chars);
        n
    }

    /// Tokens only, no field extraction (for field values themselves).
    fn new_plain(text: &str) -> NormText {
        NormText::from_chars(&fold(text))
    }

    fn from_chars(chars: &[char]) -> NormText {
        let mut padded = String::with_capacity(chars.len() + 2);
        padded.push(' ');
        let mut at_sep = true;
        let digit = |i: Option<usize>| {
            i.and_then(|i| chars.get(i))
                .is_some_and(|c| c.is_ascii_digit())
        };
        for (i, &c) in chars.iter().enumerate() {
            if is_cjk_char(c) {
                if !at_sep {
                    padded.push(' ');
                }
                padded.push(c);
                padded.push(' ');
                at_sep = true;
            } else if c.is_alphanumeric()
                // keep decimal points inside numbers: 92.5 is one token
                || (c == '.' && digit(i.checked_sub(1)) && digit(i.checked_add(1)))
            {
                padded.push(c);
                at_sep = false;
            } else if !at_sep {
                padded.push(' ');
                at_sep = true;
            }
        }
        if !at_sep {
            padded.push(' ');
        }
        NormText {
            padded,
            fields: Vec::new(),
        }
    }

    pub fn tokens(&self) -> impl Iterator<Item = &str> {
        self.padded.split(' ').filter(|t| !t.is_empty())
    }

    /// Characters of content, separators excluded.
    pub fn content_chars(&self) -> usize {
        self.padded.chars().filter(|c| *c != ' ').count()
    }

    pub fn is_empty(&self) -> bool {
        self.padded.trim().is_empty()
    }
}

/// `key=value` chunks (split on whitespace, `,` and `;`) whose key is an
/// ASCII identifier, as code-made ref texts write them. The value is
/// tokenised like the text; everything after the first `=` is the value.
fn fields(chars: &[char]) -> Vec<(String, Vec<String>)> {
    let text: String = chars.iter().collect();
    let mut out = Vec::new();
    for chunk in text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '，' | '；')) {
        let Some((key, value)) = chunk.split_once('=') else {
            continue;
        };
        let ident = key
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !ident {
            continue;
        }
        let tokens: Vec<String> = NormText::new_plain(value)
            .tokens()
            .map(str::to_string)
            .collect();
        if !tokens.is_empty() {
            out.push((key.to_string(), tokens));
        }
    }
    out
}

/// Why an excerpt was judged unsupported, for the error line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsupported {
    TooShort,
    LowOverlap,
    NumberMissing,
    NegationAdded,
    FieldConflict,
}

impl Unsupported {
    pub fn describe(self) -> &'static str {
        match self {
            Unsupported::TooShort => "the excerpt is empty or too short to cite anything",
            Unsupported::LowOverlap => "too few of the excerpt's words occur in the ref text",
            Unsupported::NumberMissing => "a number in the excerpt does not occur in the ref text",
            Unsupported::NegationAdded => {
                "the excerpt adds a negation the ref text does not contain"
            }
            Unsupported::FieldConflict => {
                "a key=value field in the excerpt contradicts the ref text"
            }
        }
    }
}

pub fn supports(
    excerpt: &NormText,
    reference: &NormText,
    p: &ExcerptParams,
) -> Result<(), Unsupported> {
    if excerpt.is_empty() || excerpt.content_chars() < p.min_excerpt_chars {
        return Err(Unsupported::TooShort);
    }
    if reference.padded.contains(&excerpt.padded) {
        return Ok(());
    }
    let ref_tokens: HashSet<&str> = reference.tokens().collect();
    let ex_tokens: HashSet<&str> = excerpt.tokens().collect();
    if ex_tokens
        .iter()
        .any(|t| NEGATORS.contains(t) && !ref_tokens.contains(t))
    {
        return Err(Unsupported::NegationAdded);
    }
    if p.require_numbers
        && ex_tokens
            .iter()
            .any(|t| t.bytes().any(|b| b.is_ascii_digit()) && !ref_tokens.contains(t))
    {
        return Err(Unsupported::NumberMissing);
    }
    // A field conflicts when the ref has the same key, no ref value for it
    // shares a token with the excerpt's value, and the excerpt's value is
    // not elsewhere in the ref either (free-text fields such as `query=`
    // span several chunks, so their words may sit in a neighbouring one).
    let conflict = excerpt.fields.iter().any(|(key, value)| {
        let mut ref_values = reference.fields.iter().filter(|(k, _)| k == key).peekable();
        ref_values.peek().is_some()
            && !ref_values.any(|(_, rv)| value.iter().any(|t| rv.contains(t)))
            && value.iter().any(|t| !ref_tokens.contains(t.as_str()))
    });
    if conflict {
        return Err(Unsupported::FieldConflict);
    }
    let present = ex_tokens.iter().filter(|t| ref_tokens.contains(*t)).count();
    // ex_tokens is non-empty here: the excerpt had content.
    let overlap = present as f64 / ex_tokens.len().max(1) as f64;
    if overlap + 1e-9 >= p.min_token_overlap {
        Ok(())
    } else {
        Err(Unsupported::LowOverlap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(excerpt: &str, reference: &str) -> Result<(), Unsupported> {
        supports(
            &NormText::new(excerpt),
            &NormText::new(reference),
            &ExcerptParams::default(),
        )
    }

    const ALERT: &str = "alertname=HighCPUUsage service=payment-service severity=critical state=firing value=92% active_for=25m since=2026-07-08T22:40:00Z summary=CPU usage above 90%";

    #[test]
    fn normalises_case_width_punctuation_and_han() {
        assert_eq!(NormText::new("  Hello,  WORLD!! ").padded, " hello world ");
        assert_eq!(NormText::new("ＣＰＵ＝９２％").padded, " cpu 92 ");
        assert_eq!(
            NormText::new("连接池耗尽abc").padded,
            " 连 接 池 耗 尽 abc "
        );
        assert_eq!(NormText::new("v=92.5%. end.").padded, " v 92.5 end ");
        assert_eq!(NormText::new("").padded, " ");
    }

    #[test]
    fn substring_and_paraphrase_pass() {
        assert_eq!(check("state=firing value=92%", ALERT), Ok(()));
        assert_eq!(
            check(
                "HighCPUUsage, service=payment-service, state=firing, value=92%",
                ALERT
            ),
            Ok(())
        );
        assert_eq!(
            check("连接池耗尽", "日志显示：连接池耗尽，请求超时"),
            Ok(())
        );
    }

    #[test]
    fn changed_numbers_and_partial_tokens_fail() {
        assert_eq!(check("value=9%", ALERT), Err(Unsupported::NumberMissing));
        assert_eq!(
            check("HighCPUUsage payment-service firing value=97%", ALERT),
            Err(Unsupported::NumberMissing)
        );
        assert_eq!(check("usage abo", ALERT), Err(Unsupported::LowOverlap));
    }

    #[test]
    fn unrelated_short_and_negated_excerpts_fail() {
        assert_eq!(
            check("database deadlock detected on orders table", ALERT),
            Err(Unsupported::LowOverlap)
        );
        assert_eq!(check("", ALERT), Err(Unsupported::TooShort));
        assert_eq!(check(" , ", ALERT), Err(Unsupported::TooShort));
        assert_eq!(check("92", ALERT), Err(Unsupported::TooShort));
        assert_eq!(
            check(
                "HighCPUUsage service payment-service severity critical state not firing",
                ALERT
            ),
            Err(Unsupported::NegationAdded)
        );
        assert_eq!(
            check("连接池未耗尽", "连接池耗尽"),
            Err(Unsupported::NegationAdded)
        );
    }
}

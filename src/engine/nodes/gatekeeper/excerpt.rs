//! Whether an evidence excerpt is supported by a ref's text.
//!
//! Both texts are normalised to a token sequence (lowercase, full-width
//! folded to half-width, punctuation and whitespace collapsed, each Han or
//! kana character its own token, so Chinese is compared character by
//! character). Supported means: the excerpt is a contiguous run of the
//! ref's tokens, or enough of its distinct tokens occur in the ref AND every
//! token carrying a digit occurs there too AND it adds no negation word the
//! ref lacks AND no `key=value` field contradicts an atomic field of the
//! ref (so `state=firing` cannot cite an alert whose text says
//! `state=resolved`, nor `value=45` one that says `value=92`). Whole-token
//! comparison is what stops `value=9%` passing against `value=92%`; a bare
//! number still matches the same number with a unit (`27 minutes`,
//! `active_for=27m`).
//!
//! This runs for every binding of every run, so normalisation is one pass
//! and the costlier parts (token sets, `key=value` fields) are only built
//! when the cheap substring test fails.

use crate::engine::nodes::gatekeeper::rules::ExcerptParams;
use std::sync::OnceLock;

/// One `key=value` field of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Field {
    key: String,
    tokens: Vec<String>,
    /// A single-chunk value without a nested `=` (`state=firing`), as
    /// opposed to free text (`summary=CPU usage above 90%`) or a nested
    /// summary (`query=keyword=HikariCP service=...`). Only atomic ref
    /// fields can be contradicted.
    atomic: bool,
}

type Fields = Vec<Field>;

/// A normalised text: tokens joined by single spaces, padded with a space
/// on both ends so a token-boundary substring test is a plain `contains`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormText {
    padded: String,
    /// The source text, kept only when it has a `=` (it may hold fields).
    /// Folding and field parsing wait until a check needs them: most
    /// excerpts pass on the substring test alone.
    source: String,
    fields: OnceLock<Fields>,
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

/// `text` width-folded and lowercased.
fn fold(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    text.chars()
        .map(fold_width)
        .flat_map(char::to_lowercase)
        .collect()
}

/// The padded token string of `text`.
fn tokenize(text: &str) -> String {
    if text.is_ascii() {
        tokenize_ascii(text.as_bytes())
    } else {
        tokenize_chars(text)
    }
}

/// [`tokenize`] of ASCII text (the common case: code-made ref texts),
/// byte by byte, without Unicode tables.
fn tokenize_ascii(text: &[u8]) -> String {
    let mut out: Vec<u8> = Vec::with_capacity(text.len() + 2);
    out.push(b' ');
    let mut at_sep = true;
    let mut prev_digit = false;
    for (i, &b) in text.iter().enumerate() {
        if b.is_ascii_alphanumeric() {
            out.push(b.to_ascii_lowercase());
            at_sep = false;
            prev_digit = b.is_ascii_digit();
            continue;
        }
        // keep decimal points inside numbers: 92.5 is one token
        if b == b'.' && prev_digit && text.get(i + 1).is_some_and(u8::is_ascii_digit) {
            out.push(b'.');
        } else if !at_sep {
            out.push(b' ');
            at_sep = true;
        }
        prev_digit = false;
    }
    if !at_sep {
        out.push(b' ');
    }
    // Only ASCII bytes were pushed.
    String::from_utf8(out).unwrap_or_default()
}

/// [`tokenize`] of any text: full-width folding, Unicode lowercasing, each
/// Han or kana character its own token.
fn tokenize_chars(text: &str) -> String {
    let mut padded = String::with_capacity(text.len() + 2);
    padded.push(' ');
    let mut at_sep = true;
    let mut prev_digit = false;
    let mut chars = text.chars().peekable();
    while let Some(raw) = chars.next() {
        let c = fold_width(raw);
        if c.is_ascii() {
            if c.is_ascii_alphanumeric() {
                padded.push(c.to_ascii_lowercase());
                at_sep = false;
                prev_digit = c.is_ascii_digit();
                continue;
            }
            // keep decimal points inside numbers: 92.5 is one token
            if c == '.'
                && prev_digit
                && chars
                    .peek()
                    .is_some_and(|n| fold_width(*n).is_ascii_digit())
            {
                padded.push('.');
            } else if !at_sep {
                padded.push(' ');
                at_sep = true;
            }
            prev_digit = false;
            continue;
        }
        prev_digit = false;
        if is_cjk_char(c) {
            if !at_sep {
                padded.push(' ');
            }
            padded.push(c);
            padded.push(' ');
            at_sep = true;
        } else if c.is_alphanumeric() {
            padded.extend(c.to_lowercase());
            at_sep = false;
        } else if !at_sep {
            padded.push(' ');
            at_sep = true;
        }
    }
    if !at_sep {
        padded.push(' ');
    }
    padded
}

impl NormText {
    pub fn new(text: &str) -> NormText {
        let source = if text.contains(['=', '\u{FF1D}']) {
            text.to_string()
        } else {
            String::new()
        };
        NormText {
            padded: tokenize(text),
            source,
            fields: OnceLock::new(),
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

    fn fields(&self) -> &Fields {
        self.fields
            .get_or_init(|| parse_fields(&fold(&self.source)))
    }

    /// Distinct tokens, sorted, for binary-search membership tests.
    fn token_set(&self) -> Vec<&str> {
        let mut t: Vec<&str> = self.tokens().collect();
        t.sort_unstable();
        t.dedup();
        t
    }
}

fn is_key(key: &str) -> bool {
    key.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

fn push_tokens(into: &mut Vec<String>, text: &str) {
    into.extend(
        tokenize(text)
            .split(' ')
            .filter(|t| !t.is_empty())
            .map(str::to_string),
    );
}

/// `key=value` fields as code-made ref texts write them: segments split on
/// `,` and `;`, chunks on whitespace; a chunk `key=value` with an ASCII
/// identifier key starts a field, and later plain chunks of the same
/// segment extend its value (making it free text, not atomic).
fn parse_fields(folded: &str) -> Fields {
    let mut out: Fields = Vec::new();
    for segment in folded.split([',', ';', '，', '；']) {
        let mut open = false;
        for chunk in segment.split_whitespace() {
            match chunk.split_once('=') {
                Some((key, value)) if is_key(key) => {
                    let mut tokens = Vec::new();
                    push_tokens(&mut tokens, value);
                    out.push(Field {
                        key: key.to_string(),
                        tokens,
                        atomic: !value.contains('='),
                    });
                    open = true;
                }
                _ if open => {
                    if let Some(f) = out.last_mut() {
                        push_tokens(&mut f.tokens, chunk);
                        f.atomic = false;
                    }
                }
                _ => {}
            }
        }
    }
    out.retain(|f| !f.tokens.is_empty());
    out
}

/// The leading number of a token (`27` of `27m`), empty if none.
fn num_prefix(t: &str) -> &str {
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    t.get(..end).unwrap_or("")
}

/// Equal tokens, or a bare number and the same number with a unit
/// (`27` and `27m`), so `27 minutes` still cites `active_for=27m`.
fn token_match(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (na, nb) = (num_prefix(a), num_prefix(b));
    !na.is_empty() && na == nb && (na.len() == a.len() || nb.len() == b.len())
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
    let ref_tokens = reference.token_set();
    let in_ref = |t: &str| {
        ref_tokens.binary_search(&t).is_ok()
            || (!num_prefix(t).is_empty() && ref_tokens.iter().any(|r| token_match(t, r)))
    };
    let ex_tokens = excerpt.token_set();
    if ex_tokens.iter().any(|t| NEGATORS.contains(t) && !in_ref(t)) {
        return Err(Unsupported::NegationAdded);
    }
    if p.require_numbers
        && ex_tokens
            .iter()
            .any(|t| t.bytes().any(|b| b.is_ascii_digit()) && !in_ref(t))
    {
        return Err(Unsupported::NumberMissing);
    }
    // A field conflicts when the ref has the same key with only atomic
    // values and none of them shares a token with the excerpt's value.
    let ref_fields = reference.fields();
    let conflict = excerpt.fields().iter().any(|f| {
        let mut same_key = ref_fields.iter().filter(|r| r.key == f.key).peekable();
        same_key.peek().is_some()
            && same_key.clone().all(|r| r.atomic)
            && !same_key.any(|r| {
                f.tokens
                    .iter()
                    .any(|t| r.tokens.iter().any(|rt| token_match(t, rt)))
            })
    });
    if conflict {
        return Err(Unsupported::FieldConflict);
    }
    let present = ex_tokens.iter().filter(|t| in_ref(t)).count();
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
    fn the_ascii_path_tokenizes_like_the_general_one() {
        for text in [
            "",
            "  Hello,  WORLD!! ",
            "v=92.5%. end. 1.2.3 .5 5. a.b",
            ALERT,
            "2026-07-08T22:41:03Z ERROR order-service HikariPool-1 - Connection is not available",
        ] {
            assert_eq!(
                tokenize_ascii(text.as_bytes()),
                tokenize_chars(text),
                "{text}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn the_ascii_path_agrees_on_any_printable_ascii(text in "[ -~]{0,120}") {
            proptest::prop_assert_eq!(tokenize_ascii(text.as_bytes()), tokenize_chars(&text));
        }
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

//! Untrusted text (tool and model output, server bodies, error chains,
//! stored rows) made fit for where it goes. One rule per job:
//!
//! - the terminal, CLI and TUI alike: [`sanitize_line`] and
//!   [`sanitize_multiline`];
//! - a one-line message, an evidence text: [`clean`] (and [`one_line`],
//!   [`error_line`], [`root_cause`] built on it);
//! - a bounded width on screen: [`truncate_width`], and
//!   [`truncate_middle`] for identifiers;
//! - a bounded size in storage: [`truncate_bytes`];
//! - a URL in a message: [`mask_url`];
//! - Han script: [`is_han`], and the value of Chinese numerals
//!   ([`han_number`]);
//! - what a log message is *like*, its variable parts masked:
//!   [`pattern::pattern`] (the tools count lines by it, the offline model
//!   groups them by it: one rule, so both agree).
//!
//! It imports nothing else of the crate, so every layer can use it.

mod chars;
mod han;
pub mod pattern;
#[cfg(test)]
mod props;
mod sanitize;
pub mod sse;
mod truncate;
mod url;

pub use han::{han_number, is_han, is_han_numeral};
pub use sanitize::{ESC_SYMBOL, sanitize_line, sanitize_multiline};
pub use truncate::{display_width, truncate_bytes, truncate_middle, truncate_width};
pub use url::{is_secret_name, mask_url};

pub use chars::is_invisible;
use chars::{MAX_MARKS, is_escape_introducer, is_line_separator, is_mark, skip_escape};

/// Printable text on one line, of at most `max` characters followed by
/// `…` when cut. Escape sequences are removed whole (CSI, OSC, DCS...,
/// 7- and 8-bit), as are control, bidi and invisible characters and
/// combining marks without a base or beyond a few per base; runs of
/// whitespace (line breaks included) become one space, and the ends are
/// trimmed. The result is also safe for a terminal: it passes
/// [`sanitize_line`] unchanged.
pub fn clean(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max.saturating_mul(4)));
    let mut chars = s.chars().peekable();
    let mut count = 0usize;
    let mut space = false;
    let mut base_marks: Option<usize> = None;
    while let Some(c) = chars.next() {
        if is_escape_introducer(c) {
            skip_escape(c, &mut chars);
        } else if c.is_whitespace() || is_line_separator(c) {
            space = !out.is_empty();
            base_marks = None;
        } else if c.is_control() || is_invisible(c) {
        } else if is_mark(c) {
            if let Some(n) = base_marks.as_mut().filter(|n| **n < MAX_MARKS) {
                *n += 1;
                out.push(c);
            }
        } else {
            if count + usize::from(space) + 1 > max {
                out.push('…');
                return out;
            }
            if std::mem::take(&mut space) {
                out.push(' ');
                count += 1;
            }
            out.push(c);
            count += 1;
            base_marks = Some(0);
        }
    }
    out
}

/// [`clean`] without a length bound.
pub fn one_line(s: &str) -> String {
    clean(s, usize::MAX)
}

/// Characters of an error shown by [`error_line`].
const ERROR_LINE_CHARS: usize = 300;

/// An error's message as one bounded line.
pub fn error_line(err: &dyn std::fmt::Display) -> String {
    clean(&err.to_string(), ERROR_LINE_CHARS)
}

/// The innermost error text of a chain (reqwest's own Display repeats the
/// URL, which is noise in a one-line message).
pub fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cur: &(dyn std::error::Error + 'static) = err;
    while let Some(next) = cur.source() {
        cur = next;
    }
    clean(&cur.to_string(), 200)
}

/// The kind of a JSON value, as error messages name it ("a string").
pub fn json_kind(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A regular expression written in the source. Its pattern is a literal
/// that the tests of its module compile on their first use, so a typo fails
/// the suite, never a user's run.
#[allow(clippy::expect_used)]
pub fn literal_regex(pattern: &'static str) -> regex::Regex {
    regex::Regex::new(pattern).expect("a literal pattern compiles")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_is_one_bounded_line() {
        assert_eq!(clean("abcdef", 3), "abc…");
        assert_eq!(clean("abcdef", 6), "abcdef");
        assert_eq!(clean("  a   b  ", 10), "a b");
        assert_eq!(clean("a\u{1b}[31m  b\n", 10), "a b");
        assert_eq!(clean("l1\r\nl2\tl3\u{2028}l4", 100), "l1 l2 l3 l4");
        // The space before a cut is not kept.
        assert_eq!(clean("abc defg", 4), "abc…");
        assert_eq!(clean("abc defg", 5), "abc d…");
        // Trailing whitespace is not content: no marker for it.
        assert_eq!(clean("abc   ", 3), "abc");
        assert_eq!(clean("", 0), "");
        assert_eq!(clean("   ", 0), "");
        assert_eq!(clean("a", 0), "…");
        assert_eq!(clean("中文字符", 2), "中文…");
        assert_eq!(one_line(" a\n\n b "), "a b");
    }

    #[test]
    fn clean_removes_escape_sequences_whole() {
        assert_eq!(clean("a\u{1b}[31mred\u{1b}[0m\n\tb", 100), "ared b");
        assert_eq!(clean("a\x1b[2J\n  b", 100), "a b");
        assert_eq!(clean("x\u{1b}]0;title\u{7}y", 100), "xy");
        assert_eq!(clean("x\u{1b}]8;;http://evil\u{1b}\\link", 100), "xlink");
        assert_eq!(clean("a\u{9b}31mb", 100), "ab");
        assert_eq!(clean("a\u{9d}0;t\u{9c}b", 100), "ab");
        assert_eq!(clean("a\u{1b}Pq#0\u{1b}\\b", 100), "ab");
        assert_eq!(clean("a\u{1b}7b\u{1b}(Bc", 100), "abc");
        // An ESC inside a sequence starts the next one.
        assert_eq!(clean("a\u{1b}]0;t\u{1b}[31mb", 100), "ab");
        assert_eq!(clean("a\u{1b}[1\u{1b}[2mb", 100), "ab");
        // A character that cannot be part of a CSI ends it and stays.
        assert_eq!(clean("a\u{1b}[1中b", 100), "a中b");
        // A lone ESC at the end, an unterminated string.
        assert_eq!(clean("ab\u{1b}", 100), "ab");
        assert_eq!(clean("ab\u{1b}]0;never ends", 100), "ab");
        // Deeply nested aborted sequences do not recurse.
        let nested = "\u{1b}]".repeat(100_000);
        assert_eq!(clean(&format!("a{nested}"), 10), "a");
    }

    #[test]
    fn clean_drops_what_sanitising_drops() {
        assert_eq!(clean("ab\u{202e}cd\u{0}\u{200b}e\u{7}f", 100), "abcdef");
        assert_eq!(clean("1\u{200E}2\u{061C}3\u{2066}4", 100), "1234");
        assert_eq!(clean("\u{301}e\u{301}", 100), "e\u{301}");
        assert_eq!(clean("a \u{301}b", 100), "a b");
        let zalgo: String = std::iter::once('z')
            .chain(std::iter::repeat_n('\u{36B}', 40))
            .collect();
        assert_eq!(clean(&zalgo, 100).chars().count(), 1 + MAX_MARKS);
        // Marks do not count towards the bound.
        assert_eq!(clean("e\u{301}e\u{301}x", 2), "e\u{301}e\u{301}…");
        let nasty = "a\u{1b}[2J\u{9b}1m\u{202e}b\u{200d}c\u{e0041}\u{fe0f}\r\n\u{301}d🔥";
        let cleaned = clean(nasty, 100);
        assert_eq!(cleaned, "abc d🔥");
        assert_eq!(sanitize_line(&cleaned), cleaned);
    }

    #[test]
    fn error_lines_are_bounded() {
        let long = "x".repeat(1000);
        assert_eq!(error_line(&format!("a\n{long}")).chars().count(), 301);
        assert_eq!(error_line(&"bad\r\nthing"), "bad thing");
    }

    #[test]
    fn root_cause_is_the_innermost_error() {
        #[derive(Debug)]
        struct Outer(std::io::Error);
        impl std::fmt::Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("outer with http://url")
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = Outer(std::io::Error::other("connection\nrefused\u{1b}[2J"));
        assert_eq!(root_cause(&e), "connection refused");
        assert_eq!(root_cause(&e.0), "connection refused");
    }

    #[test]
    fn the_module_imports_nothing_else_of_the_crate() {
        let needle = concat!("crate", "::");
        for (name, src) in [
            ("mod.rs", include_str!("mod.rs")),
            ("chars.rs", include_str!("chars.rs")),
            ("sanitize.rs", include_str!("sanitize.rs")),
            ("truncate.rs", include_str!("truncate.rs")),
            ("url.rs", include_str!("url.rs")),
            ("props.rs", include_str!("props.rs")),
        ] {
            assert!(!src.contains(needle), "{name} reaches into the crate");
        }
    }

    #[test]
    fn json_kinds() {
        use serde_json::json;
        assert_eq!(json_kind(&json!(null)), "null");
        assert_eq!(json_kind(&json!(true)), "a boolean");
        assert_eq!(json_kind(&json!(1.5)), "a number");
        assert_eq!(json_kind(&json!("s")), "a string");
        assert_eq!(json_kind(&json!([])), "an array");
        assert_eq!(json_kind(&json!({})), "an object");
    }
}

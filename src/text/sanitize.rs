//! The one gate between untrusted text (tool output, model output, stored
//! rows, error messages) and a terminal, for the CLI and the TUI alike.
//!
//! Nothing that can move the cursor, change the terminal's state, reorder
//! or hide what the user reads gets through raw: escape sequences, C0/C1
//! controls, bidi controls, zero-width and other invisible characters,
//! orphaned or piled-up combining marks. An escape introducer is shown as
//! [`ESC_SYMBOL`] rather than silently dropped, so an auditor can see that
//! the text tried to send one; what follows it is printable and inert.

use super::chars::{MAX_MARKS, is_escape_introducer, is_invisible, is_line_separator, is_mark};

/// The visible stand-in for ESC and the 8-bit sequence introducers.
pub const ESC_SYMBOL: char = '\u{241B}';

/// Text shown on one line: line breaks and tabs become spaces, everything
/// unsafe is dropped (escape introducers become [`ESC_SYMBOL`]).
pub fn sanitize_line(s: &str) -> String {
    sanitize(s, false)
}

/// Text that keeps its line structure: line breaks become `\n` (a `\r\n`
/// pair is one break), tabs become spaces, everything else as
/// [`sanitize_line`].
pub fn sanitize_multiline(s: &str) -> String {
    sanitize(s, true)
}

fn sanitize(s: &str, keep_newlines: bool) -> String {
    let mut out = String::with_capacity(s.len());
    // Some(n): the last character shown is a base carrying n marks; None:
    // a mark here would have nothing of its own to draw on.
    let mut base_marks: Option<usize> = None;
    for c in s.chars() {
        if is_mark(c) {
            if let Some(n) = base_marks.as_mut().filter(|n| **n < MAX_MARKS) {
                *n += 1;
                out.push(c);
            }
            continue;
        }
        let shown = match c {
            '\n' if keep_newlines => '\n',
            c if keep_newlines && is_line_separator(c) => '\n',
            '\n' | '\t' => ' ',
            c if is_line_separator(c) => ' ',
            c if is_escape_introducer(c) => ESC_SYMBOL,
            c if c.is_control() || is_invisible(c) => continue,
            c => c,
        };
        out.push(shown);
        base_marks = (!shown.is_whitespace()).then_some(0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::chars::is_bidi_control;
    use super::*;

    #[test]
    fn escapes_become_inert_text() {
        assert_eq!(sanitize_line("a\x1b[2Jb"), "a␛[2Jb");
        assert_eq!(sanitize_line("\x1b[31;1mred\x1b[0m"), "␛[31;1mred␛[0m");
        assert_eq!(sanitize_line("x\x1b]0;title\x07y"), "x␛]0;titley");
        assert_eq!(sanitize_line("a\u{9b}31mb"), "a␛31mb");
        assert_eq!(sanitize_line("a\u{9d}0;t\u{9c}b"), "a␛0;tb");
        assert_eq!(sanitize_line("a\u{90}q\u{98}s\u{9e}p\u{9f}x"), "a␛q␛s␛p␛x");
        assert_eq!(sanitize_line("a\x07\x08\x7fb\rc"), "abc");
        assert_eq!(sanitize_line("l1\nl2\tx"), "l1 l2 x");
        assert_eq!(sanitize_line("中文 ok"), "中文 ok");
    }

    #[test]
    fn c1_controls_are_dropped() {
        let c1: String = ('\u{80}'..='\u{9f}').collect();
        let out = sanitize_line(&format!("a{c1}b"));
        // Only the introducers leave a visible trace.
        assert_eq!(out, "a␛␛␛␛␛␛b");
        assert!(!out.chars().any(|c| ('\u{80}'..='\u{9f}').contains(&c)));
    }

    #[test]
    fn multiline_keeps_line_breaks_only() {
        assert_eq!(sanitize_multiline("l1\nl2"), "l1\nl2");
        assert_eq!(sanitize_multiline("l1\r\nl2\r\n"), "l1\nl2\n");
        assert_eq!(sanitize_multiline("a\tb\u{2028}c\u{2029}d"), "a b\nc\nd");
        assert_eq!(sanitize_line("a\u{2028}b"), "a b");
        assert_eq!(sanitize_multiline("x\x1b[2Ky\x0b\x0cz"), "x␛[2Kyz");
        assert_eq!(sanitize_multiline(""), "");
        assert_eq!(sanitize_line(""), "");
    }

    #[test]
    fn bidi_controls_and_marks_are_dropped() {
        assert_eq!(sanitize_line("a\u{202E}evil\u{2066}b"), "aevilb");
        for c in ('\u{202A}'..='\u{202E}').chain('\u{2066}'..='\u{2069}') {
            assert_eq!(sanitize_line(&format!("x{c}y")), "xy", "{:?}", c);
        }
        // LRM, RLM and the Arabic letter mark reorder neutral characters.
        assert_eq!(sanitize_line("1\u{200E}2\u{200F}3\u{061C}4"), "1234");
        assert_eq!(sanitize_multiline("\u{202E}line\n\u{2067}two"), "line\ntwo");
    }

    #[test]
    fn zero_width_and_invisible_characters_are_dropped() {
        // ZWSP, ZWNJ, ZWJ, word joiner, BOM, soft hyphen, invisible times.
        assert_eq!(
            sanitize_line("pay\u{200B}ment\u{200C}-\u{200D}svc\u{2060}\u{FEFF}\u{AD}\u{2062}"),
            "payment-svc"
        );
        // Tag characters ("ASCII smuggling") and variation selectors carry
        // hidden data.
        assert_eq!(sanitize_line("ok\u{E0041}\u{E0042}\u{E007F}"), "ok");
        assert_eq!(sanitize_line("a\u{FE0F}\u{E0100}b"), "ab");
        // Hangul fillers look like blank names.
        assert_eq!(sanitize_line("[\u{3164}\u{115F}\u{FFA0}]"), "[]");
        // Emoji stay; a ZWJ family falls apart into its members, which
        // every terminal draws at the same width.
        assert_eq!(sanitize_line("🔥 ok 👨\u{200D}👩"), "🔥 ok 👨👩");
    }

    #[test]
    fn combining_marks_need_a_base_and_cannot_pile_up() {
        // Decomposed accents stay on their letter.
        assert_eq!(sanitize_line("e\u{301}te\u{301}"), "e\u{301}te\u{301}");
        assert_eq!(sanitize_line("ệ"), "ệ");
        // A mark with no base would draw on whatever is left of the text.
        assert_eq!(sanitize_line("\u{301}\u{338}abc"), "abc");
        assert_eq!(sanitize_line("a \u{338}b"), "a b");
        assert_eq!(sanitize_multiline("a\n\u{301}b"), "a\nb");
        // Zalgo: at most MAX_MARKS per base.
        let zalgo: String = std::iter::once('z')
            .chain(std::iter::repeat_n('\u{36B}', 40))
            .collect();
        let out = sanitize_line(&zalgo);
        assert_eq!(out.chars().count(), 1 + MAX_MARKS);
        // A mark after a dropped character still belongs to the base.
        assert_eq!(sanitize_line("a\u{202E}\u{301}"), "a\u{301}");
    }

    #[test]
    fn no_unsafe_character_survives() {
        let all: String = (0u32..0x3000)
            .chain(0xFE00..0xFFFF)
            .chain(0xE0000..0xE0100)
            .filter_map(char::from_u32)
            .collect();
        for out in [sanitize_line(&all), sanitize_multiline(&all)] {
            assert!(out.chars().all(|c| !c.is_control() || c == '\n'));
            assert!(!out.chars().any(is_bidi_control));
            assert!(!out.chars().any(is_invisible));
            assert!(!out.chars().any(is_line_separator));
        }
        assert!(!sanitize_line(&all).contains('\n'));
    }

    #[test]
    fn sanitising_is_idempotent() {
        for s in [
            "a\x1b[2J\u{9b}b\u{202e}c\n\td\u{301}\u{301}\u{301}\u{301}",
            "\u{301}x",
            "中文🔥",
        ] {
            let once = sanitize_multiline(s);
            assert_eq!(sanitize_multiline(&once), once);
            let line = sanitize_line(s);
            assert_eq!(sanitize_line(&line), line);
        }
    }
}

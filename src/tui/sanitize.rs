//! The one gate between untrusted text (tool output, model output, stored
//! rows) and the terminal. Every string that becomes a `Span` goes through
//! here first, so escape sequences, control characters and bidi overrides
//! are rendered as nothing rather than interpreted by the terminal.

/// Sanitises text that is shown on one line: newlines and tabs become
/// spaces, everything unsafe is dropped.
pub fn sanitize_line(s: &str) -> String {
    clean(s, false)
}

/// Sanitises text that keeps its line structure: `\n` survives, every
/// other control character and escape sequence is dropped.
pub fn sanitize_multiline(s: &str) -> String {
    clean(s, true)
}

/// Bidi controls can reorder what the user reads (Trojan Source), so they
/// are removed like control characters.
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// The visible stand-in for ESC. Showing it (rather than silently
/// dropping the sequence) lets an auditor see that the tool tried to send
/// an escape sequence; what follows ESC is printable and therefore inert.
pub const ESC_SYMBOL: char = '\u{241B}';

fn clean(s: &str, keep_newlines: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' if keep_newlines => out.push('\n'),
            '\n' | '\t' => out.push(' '),
            // ESC and the 8-bit CSI/OSC/DCS introducers.
            '\u{1b}' | '\u{9b}' | '\u{9d}' | '\u{90}' => out.push(ESC_SYMBOL),
            c if c.is_control() || is_bidi_control(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// Truncates to at most `max` chars, marking the cut with an ellipsis.
pub fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_become_inert_text() {
        assert_eq!(sanitize_line("a\x1b[2Jb"), "a␛[2Jb");
        assert_eq!(sanitize_line("\x1b[31;1mred\x1b[0m"), "␛[31;1mred␛[0m");
        assert_eq!(sanitize_line("x\x1b]0;title\x07y"), "x␛]0;titley");
        assert_eq!(sanitize_line("a\u{9b}31mb"), "a␛31mb");
        assert_eq!(sanitize_line("a\x07\x08\x7fb\rc"), "abc");
        assert_eq!(sanitize_line("l1\nl2\tx"), "l1 l2 x");
        assert_eq!(sanitize_multiline("l1\nl2"), "l1\nl2");
        assert_eq!(sanitize_line("a\u{202E}evil\u{2066}b"), "aevilb");
        assert_eq!(sanitize_line("中文 ok"), "中文 ok");
    }

    #[test]
    fn no_control_character_survives() {
        let all: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        for out in [sanitize_line(&all), sanitize_multiline(&all)] {
            assert!(out.chars().all(|c| !c.is_control() || c == '\n'));
            assert!(!out.chars().any(is_bidi_control));
        }
        assert!(!sanitize_line(&all).contains('\n'));
    }
}

//! Cutting text to a bound. On screen the bound is display width (a CJK
//! character or an emoji takes two columns), and the cut is marked with
//! `…`; in storage the bound is bytes, and the marker says how much went.
//!
//! These helpers do not sanitise: sanitise first, then cut, so the width
//! counted is the width shown.

use super::chars::width;

/// The marker of a cut on screen: one column.
const ELLIPSIS: char = '…';

/// Display width of `s`, counting each character as [`truncate_width`]
/// does (controls count 0).
pub fn display_width(s: &str) -> usize {
    s.chars().map(width).sum()
}

/// `s` cut to at most `max` columns, the end replaced by `…` when it did
/// not fit. A wide character that would straddle the bound is left out
/// whole; combining marks stay with their base.
pub fn truncate_width(s: &str, max: usize) -> String {
    if display_width(s) <= max {
        return s.to_string();
    }
    let Some(budget) = max.checked_sub(1) else {
        return String::new();
    };
    let mut out = take_front(s, budget);
    out.push(ELLIPSIS);
    out
}

/// For identifiers (ids, rule names, paths, statuses), whose distinctive
/// part is often at the end: `s` cut to at most `max` columns by dropping
/// the middle, so both ends stay (`binding.inv…_owned`). The head gets the
/// odd column.
pub fn truncate_middle(s: &str, max: usize) -> String {
    if display_width(s) <= max {
        return s.to_string();
    }
    let Some(budget) = max.checked_sub(1) else {
        return String::new();
    };
    let head = take_front(s, budget - budget / 2);
    let tail = take_back(s, budget - display_width(&head));
    format!("{head}{ELLIPSIS}{tail}")
}

/// For storage: `text` cut to at most `limit` bytes at a char boundary,
/// followed by `…[truncated N bytes]` (N the bytes dropped). Stored rows
/// and their readers depend on this exact marker.
pub fn truncate_bytes(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_string();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…[truncated {} bytes]", &text[..end], text.len() - end)
}

/// The longest prefix of at most `budget` columns. Zero-width characters
/// after the last one taken come along (they draw on it).
fn take_front(s: &str, budget: usize) -> String {
    let mut used = 0;
    let mut out = String::new();
    for c in s.chars() {
        used += width(c);
        if used > budget {
            break;
        }
        out.push(c);
    }
    out
}

/// The longest suffix of at most `budget` columns that does not start with
/// a zero-width character (a mark whose base was cut off).
fn take_back(s: &str, budget: usize) -> String {
    let mut used = 0;
    let mut start = s.len();
    for (i, c) in s.char_indices().rev() {
        used += width(c);
        if used > budget {
            break;
        }
        start = i;
    }
    s[start..].trim_start_matches(|c| width(c) == 0).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_truncation_marks_the_cut() {
        assert_eq!(truncate_width("abcdef", 6), "abcdef");
        assert_eq!(truncate_width("abcdef", 5), "abcd…");
        assert_eq!(truncate_width("abcdef", 2), "a…");
        assert_eq!(truncate_width("abcdef", 1), "…");
        assert_eq!(truncate_width("abcdef", 0), "");
        assert_eq!(truncate_width("", 0), "");
        assert_eq!(truncate_width("", 3), "");
        assert_eq!(truncate_width("a", 1), "a");
        assert_eq!(truncate_width("ab", 2), "ab");
    }

    #[test]
    fn wide_characters_are_never_split() {
        // 中 is two columns: at a cut it goes whole or not at all.
        assert_eq!(display_width("a中b"), 4);
        assert_eq!(truncate_width("a中b", 4), "a中b");
        assert_eq!(truncate_width("a中b", 3), "a…");
        assert_eq!(truncate_width("中文字", 5), "中文…");
        assert_eq!(truncate_width("中文字", 4), "中…");
        assert_eq!(truncate_width("中文字", 2), "…");
        assert_eq!(truncate_width("中文字", 1), "…");
        assert_eq!(truncate_width("🔥🔥🔥", 4), "🔥…");
        for max in 0..8 {
            for s in ["中文字", "a🔥b🔥c", "ab中cd"] {
                assert!(display_width(&truncate_width(s, max)) <= max, "{s} {max}");
                assert!(display_width(&truncate_middle(s, max)) <= max, "{s} {max}");
            }
        }
    }

    #[test]
    fn marks_stay_with_their_base() {
        // e + combining acute: the accent is kept with its letter.
        assert_eq!(truncate_width("e\u{301}e\u{301}e\u{301}", 2), "e\u{301}…");
        assert_eq!(
            truncate_middle("e\u{301}bcde\u{301}", 3),
            "e\u{301}…e\u{301}"
        );
        // A tail never starts with a mark that lost its base.
        assert_eq!(truncate_middle("ab中\u{301}", 3), "a…");
        // Controls count nothing (sanitise before cutting).
        assert_eq!(display_width("a\x1b[b"), 3);
    }

    #[test]
    fn identifiers_keep_both_ends() {
        assert_eq!(
            truncate_middle("binding.invocation_owned", 18),
            "binding.i…on_owned"
        );
        assert_eq!(truncate_middle("abcdef", 6), "abcdef");
        assert_eq!(truncate_middle("abcdef", 5), "ab…ef");
        assert_eq!(truncate_middle("abcdef", 4), "ab…f");
        assert_eq!(truncate_middle("abcdef", 2), "a…");
        assert_eq!(truncate_middle("abcdef", 1), "…");
        assert_eq!(truncate_middle("abcdef", 0), "");
        assert_eq!(truncate_middle("", 0), "");
        // A wide character at the cut: the head's spare column goes to the tail.
        assert_eq!(truncate_middle("a中bcd", 4), "a…cd");
        assert_eq!(truncate_middle("a中中中b", 6), "a中…b");
        assert_eq!(truncate_middle("中中中中", 5), "中…中");
        assert_eq!(truncate_middle("🔥a🔥b🔥", 6), "🔥a…🔥");
    }

    #[test]
    fn byte_truncation_keeps_its_stored_format() {
        assert_eq!(truncate_bytes("hello", 10), "hello");
        assert_eq!(truncate_bytes("hello", 5), "hello");
        assert_eq!(
            truncate_bytes("hello world", 5),
            "hello…[truncated 6 bytes]"
        );
        assert_eq!(truncate_bytes("hello", 0), "…[truncated 5 bytes]");
        assert_eq!(truncate_bytes("", 0), "");
        // 中 is three bytes: the cut backs off to a char boundary.
        assert_eq!(truncate_bytes("a中b", 2), "a…[truncated 4 bytes]");
        assert_eq!(truncate_bytes("a中b", 4), "a中…[truncated 1 bytes]");
        assert_eq!(truncate_bytes("🔥🔥", 5), "🔥…[truncated 4 bytes]");
        assert_eq!(truncate_bytes("e\u{301}x", 2), "e…[truncated 3 bytes]");
    }
}

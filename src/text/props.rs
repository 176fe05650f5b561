//! Properties of the text rules over arbitrary (hostile) strings.

use super::chars::{is_bidi_control, is_invisible, is_line_separator};
use super::*;
use proptest::prelude::*;

/// Strings rich in what the rules are about: escapes, C1 controls, bidi
/// and zero-width characters, marks, wide characters, line breaks.
fn nasty() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any::<char>().prop_map(String::from),
        Just("\x1b[31m".to_string()),
        Just("\x1b]0;t\x07".to_string()),
        Just("\x1b".to_string()),
        Just("\u{9b}".to_string()),
        Just("\u{202e}".to_string()),
        Just("\u{2066}".to_string()),
        Just("\u{200b}".to_string()),
        Just("\u{200d}".to_string()),
        Just("\u{301}".to_string()),
        Just("中".to_string()),
        Just("🔥".to_string()),
        Just("\r\n".to_string()),
        Just("\t".to_string()),
        Just(" ".to_string()),
        "[a-z]{1,4}",
    ];
    prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n') || is_bidi_control(c) || is_invisible(c) || is_line_separator(c)
}

proptest! {
    #[test]
    fn sanitised_text_is_inert(s in nasty()) {
        let line = sanitize_line(&s);
        prop_assert!(!line.chars().any(|c| is_unsafe(c) || c == '\n'), "{line:?}");
        prop_assert_eq!(sanitize_line(&line), line.clone());
        let multi = sanitize_multiline(&s);
        prop_assert!(!multi.chars().any(is_unsafe), "{multi:?}");
        prop_assert_eq!(sanitize_multiline(&multi), multi.clone());
        prop_assert_eq!(multi.replace('\n', " "), line);
    }

    #[test]
    fn cleaned_text_is_one_bounded_safe_line(s in nasty(), max in 0usize..60) {
        let c = clean(&s, max);
        prop_assert_eq!(sanitize_line(&c), c.clone());
        prop_assert!(!c.contains("  ") && c.trim() == c, "{c:?}");
        let counted = c.chars().filter(|ch| display_width(&ch.to_string()) > 0).count();
        prop_assert!(counted <= max + 1, "{c:?}");
        prop_assert_eq!(clean(&c, usize::MAX), c);
    }

    #[test]
    fn width_cuts_fit(s in nasty(), max in 0usize..30) {
        let s = sanitize_line(&s);
        let end = truncate_width(&s, max);
        let mid = truncate_middle(&s, max);
        prop_assert!(display_width(&end) <= max);
        prop_assert!(display_width(&mid) <= max);
        if display_width(&s) <= max {
            prop_assert_eq!(&end, &s);
            prop_assert_eq!(&mid, &s);
        } else if max > 0 {
            let kept = end.strip_suffix('…').unwrap_or_default();
            prop_assert!(s.starts_with(kept));
            let (head, tail) = mid.split_once('…').unwrap_or_default();
            prop_assert!(s.starts_with(head) && s.ends_with(tail));
        }
    }

    #[test]
    fn byte_cuts_keep_a_prefix(s in nasty(), limit in 0usize..80) {
        let t = truncate_bytes(&s, limit);
        if s.len() <= limit {
            prop_assert_eq!(t, s);
        } else {
            let (kept, marker) = t.split_once("…[truncated ").unwrap_or_default();
            prop_assert!(kept.len() <= limit && s.starts_with(kept));
            prop_assert_eq!(marker, format!("{} bytes]", s.len() - kept.len()));
        }
    }

    #[test]
    fn url_secrets_never_leak(
        user in "[a-z]{1,8}",
        password in "[A-Za-z0-9/?#@:_.-]{1,12}",
        token in "[A-Za-z0-9_.-]{1,12}",
        name in prop::sample::select(vec!["api_key", "token", "key", "password", "secret", "access_token"]),
    ) {
        let secret = format!("S3{password}");
        let url = format!("mysql://{user}:{secret}@db.example:3306/app?{name}=T0{token}&x=1");
        let masked = mask_url(&url);
        prop_assert!(!masked.contains(&secret), "{masked}");
        prop_assert!(!masked.contains(&format!("T0{token}")), "{masked}");
    }

    #[test]
    fn masking_never_panics(s in nasty()) {
        let _ = mask_url(&s);
        let _ = mask_url(&format!("https://{s}@{s}/{s}?{s}#{s}"));
    }
}

//! Properties over arbitrary (hostile) text: ref text is always plain and
//! bounded; tokenising and front matter parsing never panic.

use diagraph::knowledge::frontmatter;
use diagraph::knowledge::tokenizer::tokenize;
use diagraph::text::{clean, display_width};
use diagraph::tools::pack::load::parse_log_line;
use proptest::prelude::*;

proptest! {
    #[test]
    fn plain_text_has_no_controls_and_is_bounded(s in any::<String>(), max in 1usize..200) {
        let p = clean(&s, max);
        prop_assert!(!p.chars().any(|c| c.is_control()));
        let rlo = '\u{202e}';
        prop_assert!(!p.contains(rlo), "bidi override kept");
        // Combining marks ride on their base and are not counted.
        let counted = p.chars().filter(|c| display_width(&c.to_string()) > 0).count();
        prop_assert!(counted <= max + 1);
        prop_assert_eq!(p.trim(), p.as_str());
    }

    #[test]
    fn tokens_are_lowercase_and_non_empty(s in any::<String>()) {
        for t in tokenize(&s) {
            prop_assert!(!t.is_empty());
            prop_assert!(t.len() <= 64 * 4);
        }
    }

    #[test]
    fn front_matter_parser_never_panics(s in "(---\n)?([a-z_ :|>\\-\\[\\],\"']{0,20}\n){0,8}(---\n)?.{0,40}") {
        let p = frontmatter::parse(&s);
        for issue in p.issues {
            prop_assert!(issue.line >= 1);
        }
    }

    #[test]
    fn log_line_parser_never_panics(s in any::<String>()) {
        let _ = parse_log_line(&s);
    }
}

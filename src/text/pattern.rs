//! The pattern of a log message: what stays when its variable parts go.
//!
//! Lines of one pattern are "lines like this": `query_logs` counts them
//! over every matching line, whatever backend, so an answer can say "10,437
//! lines like this between A and B" while citing only a sample. The rule is
//! deliberately simple and fast (it runs once per line when a large pack is
//! indexed): every word that holds a digit becomes `*`, as do long hex runs
//! (ids, hashes), and runs of `*` collapse. Words are split at anything
//! that is not a letter or digit, so `HikariPool-1` keeps `HikariPool-`.

/// Characters of a pattern kept; the rest of a very long message does not
/// change what it is like.
const MAX_PATTERN_CHARS: usize = 160;

pub fn pattern(message: &str) -> String {
    shape(message, false).pattern
}

/// A message's pattern and what its `*` hid, as far as a keyword search
/// needs it: the runs of ASCII letters in its variable words, lowercased
/// (`30000ms` -> `ms`, `container01` -> `container`). A word of ASCII
/// letters is in the lowercased message exactly when it is in the
/// lowercased pattern or in one of these runs, unless the pattern was
/// `cut` short (then the rest of the message is unknown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub pattern: String,
    pub hidden: Vec<String>,
    pub cut: bool,
}

pub fn shape(message: &str, hidden: bool) -> Shape {
    let mut p = Pattern {
        out: String::with_capacity(message.len().min(MAX_PATTERN_CHARS * 4)),
        chars: 0,
        last_star: false,
        hidden: hidden.then(Vec::new),
    };
    let mut word = String::new();
    let mut space = false;
    let mut chars = message.chars().peekable();
    let mut prev: Option<char> = None;
    while let Some(c) = chars.next() {
        if p.chars >= MAX_PATTERN_CHARS {
            return Shape {
                pattern: p.out,
                hidden: p.hidden.unwrap_or_default(),
                cut: true,
            };
        }
        // A sign where a sign can stand (not inside a word like
        // `HikariPool-1`) belongs to its number: `blk_-69…` is `blk_*`,
        // like `blk_38…`.
        let sign = (c == '-' || c == '+')
            && word.is_empty()
            && !prev.is_some_and(char::is_alphanumeric)
            && chars.peek().is_some_and(char::is_ascii_digit);
        prev = Some(c);
        if c.is_alphanumeric() || sign {
            if word.is_empty() && std::mem::take(&mut space) {
                p.space();
            }
            word.push(c);
            continue;
        }
        p.word(&mut word);
        if c.is_whitespace() || c.is_control() {
            space = true;
            continue;
        }
        if std::mem::take(&mut space) {
            p.space();
        }
        p.text(c.encode_utf8(&mut [0u8; 4]));
    }
    p.word(&mut word);
    Shape {
        pattern: p.out,
        hidden: p.hidden.unwrap_or_default(),
        cut: false,
    }
}

/// The one hidden run standing for every run of the letters a-f alone:
/// the letters of hex ids, hashes and UUIDs. Kept one by one, a pattern's
/// records would hide a different run per id (`a`, `fc`, `bd`, ...), and
/// the pattern could no longer decide any word; as one class it decides
/// every word with a letter outside a-f. Not a run of letters itself, so
/// it cannot be mistaken for one.
pub const HEX_LETTERS: &str = "*a-f";

/// The runs of ASCII letters of `text` lowercased, each once; a run of
/// the letters a-f alone is noted as [`HEX_LETTERS`].
pub fn letter_runs(text: &str, out: &mut Vec<String>) {
    let mut run = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphabetic() {
            run.push(c);
        } else if !run.is_empty() {
            push_run(out, std::mem::take(&mut run));
        }
    }
    if !run.is_empty() {
        push_run(out, run);
    }
}

fn push_run(out: &mut Vec<String>, run: String) {
    let run = if run.bytes().all(|b| (b'a'..=b'f').contains(&b)) {
        HEX_LETTERS.to_string()
    } else {
        run
    };
    if !out.contains(&run) {
        out.push(run);
    }
}

/// Whether the hidden run `run` (from [`letter_runs`]) may hold `word`
/// (ASCII letters, lowercased).
pub fn hides(run: &str, word: &str) -> bool {
    if run == HEX_LETTERS {
        word.bytes().all(|b| (b'a'..=b'f').contains(&b))
    } else {
        run.contains(word)
    }
}

struct Pattern {
    out: String,
    chars: usize,
    last_star: bool,
    /// Letter runs of the variable words, when asked for.
    hidden: Option<Vec<String>>,
}

impl Pattern {
    fn space(&mut self) {
        if !self.out.is_empty() {
            self.text(" ");
        }
    }

    fn text(&mut self, s: &str) {
        self.out.push_str(s);
        self.chars += s.chars().count();
        self.last_star = false;
    }

    fn word(&mut self, word: &mut String) {
        if word.is_empty() {
            return;
        }
        let variable = word.chars().any(|c| c.is_ascii_digit())
            || (word.len() >= 12 && word.chars().all(|c| c.is_ascii_hexdigit()));
        if variable && let Some(hidden) = self.hidden.as_mut() {
            letter_runs(word, hidden);
        }
        if !variable {
            self.text(word);
        } else if !self.last_star {
            self.out.push('*');
            self.chars += 1;
            self.last_star = true;
        }
        word.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_letters_of_hex_ids_are_one_class_and_other_letters_stay_runs() {
        let mut runs = Vec::new();
        letter_runs(
            "3fa85f64-5717-4562-b3fc-2c963f66afa6 deadbeef 0x1F3A req42x",
            &mut runs,
        );
        assert_eq!(runs, [HEX_LETTERS, "x", "req"]);
        // A word of a-f letters may hide in any hex id; one with another
        // letter only in a run that holds it.
        assert!(hides(HEX_LETTERS, "bad"));
        assert!(hides(HEX_LETTERS, "fcafe"));
        assert!(!hides(HEX_LETTERS, "timeout"));
        assert!(!hides(HEX_LETTERS, "fx"));
        assert!(hides("req", "eq"));
        assert!(!hides("req", "x"));
    }

    #[test]
    fn variable_parts_are_masked_and_the_rest_kept() {
        let a =
            pattern("HikariPool-1 - Connection is not available, request timed out after 30000ms.");
        let b =
            pattern("HikariPool-2 - Connection is not available, request timed out after 30012ms.");
        assert_eq!(a, b);
        assert_eq!(
            a,
            "HikariPool-* - Connection is not available, request timed out after *."
        );
        assert_eq!(
            pattern("ERROR IN CONTACTING RM. attempt_1445144423722_0020_m_000002_0"),
            "ERROR IN CONTACTING RM. attempt_*_*_m_*_*"
        );
        assert_eq!(
            pattern("user 3f2a9c1e-1111-2222-3333-444455556666 from 10.0.0.1:8080 failed"),
            "user *-*-*-*-* from *.*.*.*:* failed"
        );
        assert_eq!(pattern("deadbeefcafe0000 done"), "* done");
        // A number's sign does not split a pattern in two.
        assert_eq!(
            pattern("Receiving block blk_-6952295868487656571 src: /10.0.0.1:5"),
            pattern("Receiving block blk_38865049064139660 src: /10.0.0.2:6"),
        );
        assert_eq!(pattern("keyId: -127633188)"), "keyId: *)");
        assert_eq!(pattern("delta=+5 x-1"), "delta=* x-*");
        assert_eq!(pattern("  spaced\n\tout  "), "spaced out");
    }

    #[test]
    fn the_shape_keeps_the_letters_the_pattern_hid() {
        let s = shape("took 30000ms on Container01 (container02) K1", true);
        assert_eq!(s.pattern, "took * on * (*) *");
        assert_eq!(s.hidden, ["ms", "container", "k"]);
        assert!(!s.cut);
        assert!(shape(&"word ".repeat(200), true).cut);
        assert!(shape("plain words", false).hidden.is_empty());
    }

    #[test]
    fn long_messages_are_cut_and_odd_text_never_panics() {
        let long = "word ".repeat(200);
        assert!(pattern(&long).chars().count() <= MAX_PATTERN_CHARS + 1);
        for s in ["", "***", "\u{1b}[31m", "日志 123 错误", "é1", "\0\0"] {
            let _ = pattern(s);
        }
        assert_eq!(pattern("日志 123 错误"), "日志 * 错误");
    }
}

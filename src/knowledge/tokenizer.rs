//! The tokenizer knowledge search uses for documents and queries alike.
//!
//! Latin text: lowercased runs of letters and digits. A run joined by `-`,
//! `_`, `.` or `/` (`hikaripool-1`, `p99.9`, `order_service`) yields the
//! whole compound and each of its parts, so both `HikariPool-1` and
//! `hikaripool` find it. CJK text has no spaces, so every Han (and kana or
//! hangul) character yields a unigram and each adjacent pair a bigram:
//! `连接池` gives 连, 接, 池, 连接, 接池. BM25 over unigrams+bigrams is the
//! usual dictionary-free way to make Chinese searchable.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// Tokens longer than this are junk (base64, hashes) and only bloat the index.
const MAX_TOKEN_BYTES: usize = 64;

/// Registered with tantivy under [`MixedTokenizer::NAME`].
#[derive(Clone, Default)]
pub struct MixedTokenizer;

impl MixedTokenizer {
    pub const NAME: &'static str = "diagraph_mixed";
}

pub struct MixedTokenStream {
    tokens: Vec<Token>,
    next: usize,
    /// Returned if tantivy asks for a token before `advance`.
    empty: Token,
}

impl Tokenizer for MixedTokenizer {
    type TokenStream<'a> = MixedTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> MixedTokenStream {
        MixedTokenStream {
            tokens: tokens_with_offsets(text),
            next: 0,
            empty: Token::default(),
        }
    }
}

impl TokenStream for MixedTokenStream {
    fn advance(&mut self) -> bool {
        if self.next < self.tokens.len() {
            self.next += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        self.next
            .checked_sub(1)
            .and_then(|i| self.tokens.get(i))
            .unwrap_or(&self.empty)
    }

    fn token_mut(&mut self) -> &mut Token {
        match self
            .next
            .checked_sub(1)
            .and_then(|i| self.tokens.get_mut(i))
        {
            Some(t) => t,
            None => &mut self.empty,
        }
    }
}

/// The token texts of `text`, in order (duplicates kept).
pub fn tokenize(text: &str) -> Vec<String> {
    tokens_with_offsets(text)
        .into_iter()
        .map(|t| t.text)
        .collect()
}

pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // kana
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xAC00..=0xD7AF    // hangul syllables
        | 0xF900..=0xFAFF    // compatibility ideographs
        | 0x20000..=0x2EBEF) // extensions B-F
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() && !is_cjk(c)
}

fn is_joiner(c: char) -> bool {
    matches!(c, '-' | '_' | '.' | '/')
}

fn tokens_with_offsets(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let end_of = |i: usize| chars.get(i).map_or(text.len(), |(o, _)| *o);
    let mut i = 0;
    while let Some(&(start, c)) = chars.get(i) {
        if is_cjk(c) {
            let mut j = i;
            while chars.get(j).is_some_and(|(_, c)| is_cjk(*c)) {
                j += 1;
            }
            for k in i..j {
                push(&mut out, text, end_of(k), end_of(k + 1));
                if k + 1 < j {
                    push(&mut out, text, end_of(k), end_of(k + 2));
                }
            }
            i = j;
        } else if is_word_char(c) {
            // A compound: word chars, with single joiners between them.
            let mut parts = vec![(i, i)];
            let mut j = i;
            loop {
                while chars.get(j).is_some_and(|(_, c)| is_word_char(*c)) {
                    j += 1;
                }
                if let Some(last) = parts.last_mut() {
                    last.1 = j;
                }
                let joined = chars.get(j).is_some_and(|(_, c)| is_joiner(*c))
                    && chars.get(j + 1).is_some_and(|(_, c)| is_word_char(*c));
                if !joined {
                    break;
                }
                j += 1;
                parts.push((j, j));
            }
            if parts.len() > 1 {
                push(&mut out, text, start, end_of(j));
            }
            for (a, b) in parts {
                push(&mut out, text, end_of(a), end_of(b));
                // `30000ms` should also be found by `30000`.
                let runs = digit_letter_runs(chars.get(a..b).unwrap_or(&[]));
                if runs.len() > 1 {
                    for (x, y) in runs {
                        push(&mut out, text, end_of(a + x), end_of(a + y));
                    }
                }
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// Index ranges of the digit and non-digit runs of a word.
fn digit_letter_runs(word: &[(usize, char)]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut start = 0;
    for k in 1..=word.len() {
        let boundary = match (word.get(k - 1), word.get(k)) {
            (Some((_, p)), Some((_, c))) => p.is_ascii_digit() != c.is_ascii_digit(),
            _ => true,
        };
        if boundary {
            runs.push((start, k));
            start = k;
        }
    }
    runs
}

fn push(out: &mut Vec<Token>, text: &str, from: usize, to: usize) {
    let Some(slice) = text.get(from..to) else {
        return;
    };
    if slice.is_empty() || slice.len() > MAX_TOKEN_BYTES {
        return;
    }
    let position = out.len();
    out.push(Token {
        offset_from: from,
        offset_to: to,
        position,
        text: slice.to_lowercase(),
        position_length: 1,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin_compounds_keep_whole_and_parts() {
        assert_eq!(
            tokenize("HikariPool-1 returned 5xx."),
            vec![
                "hikaripool-1",
                "hikaripool",
                "1",
                "returned",
                "5xx",
                "5",
                "xx"
            ]
        );
        assert_eq!(tokenize("30000ms"), vec!["30000ms", "30000", "ms"]);
    }

    #[test]
    fn han_gives_unigrams_and_bigrams() {
        assert_eq!(tokenize("连接池"), vec!["连", "连接", "接", "接池", "池"]);
        assert_eq!(
            tokenize("数据库 pool"),
            vec!["数", "数据", "据", "据库", "库", "pool"]
        );
    }

    #[test]
    fn stream_yields_every_token_once() {
        let mut t = MixedTokenizer;
        let mut s = t.token_stream("a b 中文");
        let mut seen = Vec::new();
        while s.advance() {
            seen.push(s.token().text.clone());
        }
        assert_eq!(seen, vec!["a", "b", "中", "中文", "文"]);
        assert!(!s.advance());
    }
}

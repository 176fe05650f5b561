//! Texts as sequences of facts, for comparing what two texts *say* rather
//! than how they spell it: the Gatekeeper compares an evidence excerpt with
//! the ref it cites, and the Composer check compares a statement with the
//! evidence of its claims.
//!
//! [`FactText::new`] normalises once (Unicode NFKC, so full-width letters
//! and digits, ligatures and circled numbers become plain ones; decimal
//! digits of every script become ASCII; invisible characters go; case is
//! folded) and splits the text into *parts*: words (camelCase split, so
//! `HighCPUUsage` is `high cpu usage` joined), numbers (`92.5`, `30000ms`,
//! `九十二` as `92`), single Han characters, and timestamps (one part each,
//! compared by their fields, see [`stamp`]). Each part has a [`Kind`]:
//! negation, state/polarity word, filler, or fact-bearing. Parts written
//! without a space between them (`payment-service`, `state=firing`) are
//! *joined*; a run of joined parts is one unit when matching. Clause
//! boundaries (punctuation, ` - `, the start of a `key=` field) and
//! ellipsis gaps are recorded, since a negation governs its clause.
//!
//! The padded form (`" p0 p1 ... "`) makes "is a contiguous run of the
//! other's parts" one substring search.

mod cache;
pub mod clauses;
pub mod grounded;
mod normal;
pub mod stamp;
pub mod states;
mod units;
pub mod words;

pub use cache::FactCache;
pub use normal::normalize;
pub use units::{number_value, numbers_match, quantities_match, unit_after};

pub use crate::text::is_han;
use crate::text::{han_number, is_han_numeral};
use stamp::Stamp;
use unicode_normalization::char::is_combining_mark;
use words::{
    is_filler_en, is_filler_han, is_han_non_negation, is_han_non_negation_after, is_negator_en,
    is_negator_han, is_polarity_en, lone_han_numeral_counts, number_word,
};

/// What a part is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A fact-bearing word or identifier part.
    Word,
    /// A number, possibly with a unit suffix (`30000ms`).
    Number,
    /// A fact-bearing Han character.
    Han,
    /// A negation (`not`, `n't`, `never`, `不`, `未`...).
    Negation,
    /// A state or polarity word (`firing`, `healthy`, `above`...). In Han
    /// text, the first character of such a word (see `FactText::polar`).
    Polarity,
    /// A word that carries no fact (`the`, `is`, `alert`, `的`).
    Filler,
    /// A timestamp; the index into `FactText::stamps`.
    Stamp(u16),
}

/// How a part attaches to the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Join {
    /// Separated by whitespace or punctuation, or the first part.
    Apart,
    /// Written together with a connector (`-`, `_`, `.`, `/`, `:`, `=`,
    /// `@`, `#`, `'`) or a camelCase boundary.
    Joined,
    /// A Han character directly after another.
    HanRun,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    start: u32,
    end: u32,
    pub kind: Kind,
    pub join: Join,
    /// Clause index (increasing).
    pub clause: u16,
    /// Ellipsis-separated segment index (increasing).
    pub segment: u16,
    /// The part is (within) the key of a `key=value` field.
    pub key: bool,
    /// The part had an upper-case letter after a lower-case one, or a
    /// digit, or belongs to a joined run: it reads as an identifier.
    pub ident: bool,
}

/// A normalised text split into parts. Built once per text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactText {
    padded: String,
    parts: Vec<Part>,
    stamps: Vec<Stamp>,
    /// Han state/polarity words: (index of the first part, the word).
    polar: Vec<(u32, &'static str)>,
    /// The normalised source, kept when it has `key=value` fields.
    fields_source: String,
}

fn is_connector(c: char) -> bool {
    matches!(
        c,
        '-' | '_' | '.' | '/' | ':' | '=' | '@' | '#' | '\'' | '’' | '+'
    )
}

/// Characters that end a clause wherever they stand.
fn is_clause_mark(c: char) -> bool {
    matches!(
        c,
        ',' | ';'
            | '!'
            | '?'
            | '('
            | ')'
            | '['
            | ']'
            | '{'
            | '}'
            | '|'
            | '"'
            | '<'
            | '>'
            | '、'
            | '。'
            | '「'
            | '」'
            | '『'
            | '』'
            | '【'
            | '】'
            | '《'
            | '》'
            | '“'
            | '”'
            | '‘'
            | '\n'
    )
}

struct Builder {
    padded: String,
    parts: Vec<Part>,
    stamps: Vec<Stamp>,
    polar: Vec<(u32, &'static str)>,
    clause: u16,
    segment: u16,
    /// The next part's join.
    join: Join,
    clause_pending: bool,
    /// The last part when it is a spelled-out number: (index, value).
    number_word: Option<(usize, u64)>,
    /// A buffer for lower-casing words.
    lower: String,
}

/// Two number words read as one number (`twenty` `five`, `two`
/// `hundred`, `three hundred` `twelve`), if they do.
fn compose_number(prev: u64, next: u64) -> Option<u64> {
    let tens = (20..100).contains(&prev) && prev.is_multiple_of(10);
    if tens && (1..10).contains(&next) {
        return Some(prev + next);
    }
    if matches!(next, 100 | 1000) && (1..next).contains(&prev) {
        return Some(prev * next);
    }
    if prev >= 100 && prev.is_multiple_of(100) && (1..100).contains(&next) {
        return Some(prev + next);
    }
    None
}

impl Builder {
    fn push(&mut self, text: &str, kind: Kind, ident: bool) {
        self.number_word = None;
        if self.clause_pending {
            self.clause = self.clause.saturating_add(1);
            self.clause_pending = false;
        }
        let start = self.padded.len() as u32;
        self.padded.push_str(text);
        let end = self.padded.len() as u32;
        self.padded.push(' ');
        let ident = ident || self.join == Join::Joined;
        if self.join == Join::Joined
            && let Some(prev) = self.parts.last_mut()
        {
            prev.ident = true;
        }
        self.parts.push(Part {
            start,
            end,
            kind,
            join: self.join,
            clause: self.clause,
            segment: self.segment,
            key: false,
            ident,
        });
        self.join = Join::Apart;
    }

    fn push_word(&mut self, word: &str, ident: bool) {
        if word.is_ascii() && word.bytes().any(|b| b.is_ascii_uppercase()) {
            // one reused buffer: camelCase splits make many short words
            let mut lower = std::mem::take(&mut self.lower);
            lower.clear();
            lower.push_str(word);
            lower.make_ascii_lowercase();
            self.push_lower(&lower, ident);
            self.lower = lower;
        } else if word.is_ascii() {
            self.push_lower(word, ident);
        } else {
            self.push_lower(&word.to_lowercase(), ident);
        }
    }

    fn push_lower(&mut self, w: &str, ident: bool) {
        let kind = classify_word(w);
        if let Some(v) = number_word(w) {
            self.push_number_word(w, v);
            return;
        }
        self.article_as_one(w);
        // `n't`: the part `t` after an apostrophe is a negation of its own
        let kind = if w == "t"
            && self.join == Join::Joined
            && self.parts.last().is_some_and(|p| {
                self.padded
                    .get(p.start as usize..p.end as usize)
                    .is_some_and(|s| s.ends_with('n'))
            }) {
            self.join = Join::Apart;
            Kind::Negation
        } else {
            kind
        };
        self.push(w, kind, ident || kind == Kind::Number);
    }

    /// A spelled-out number is the number (`five` is `5`, so `five
    /// minutes` is `5min`); the words of one number (`twenty-five`, `two
    /// hundred`) are one part. A lone `one` keeps its word: it is as often
    /// "a" as a count.
    fn push_number_word(&mut self, w: &str, v: u64) {
        let same_clause = !self.clause_pending && self.join != Join::HanRun;
        if same_clause
            && let Some((at, prev)) = self.number_word
            && at + 1 == self.parts.len()
            && let Some(total) = compose_number(prev, v)
            && let Some(p) = self.parts.last_mut()
        {
            self.padded.truncate(p.start as usize);
            self.padded.push_str(&total.to_string());
            p.end = self.padded.len() as u32;
            self.padded.push(' ');
            self.number_word = Some((at, total));
            self.join = Join::Apart;
            return;
        }
        let text = if w == "one" {
            "one".to_string()
        } else {
            v.to_string()
        };
        self.push(&text, Kind::Number, true);
        self.number_word = Some((self.parts.len().saturating_sub(1), v));
    }

    /// "for an hour", "a day ago": the article before a duration unit is
    /// its count, so "an hour" is `1h` and is checked like "1 hour"
    /// ("firing for over an hour" against 25m is a number the evidence
    /// lacks). "half an hour" and "a quarter hour" are no count of one.
    fn article_as_one(&mut self, w: &str) {
        if !matches!(w, "second" | "minute" | "hour" | "day" | "week") || self.clause_pending {
            return;
        }
        let n = self.parts.len();
        let Some(p) = self.parts.last() else { return };
        let article = self
            .padded
            .get(p.start as usize..p.end as usize)
            .is_some_and(|a| matches!(a, "a" | "an"));
        let fraction_before = n >= 2
            && self.parts.get(n - 2).is_some_and(|q| {
                self.padded
                    .get(q.start as usize..q.end as usize)
                    .is_some_and(|b| matches!(b, "half" | "quarter"))
            });
        if !article || fraction_before || self.join != Join::Apart {
            return;
        }
        let Some(p) = self.parts.last_mut() else {
            return;
        };
        self.padded.truncate(p.start as usize);
        self.padded.push('1');
        p.end = self.padded.len() as u32;
        p.kind = Kind::Number;
        p.ident = true;
        self.padded.push(' ');
    }

    fn apart(&mut self) {
        self.join = Join::Apart;
    }

    fn end_clause(&mut self) {
        self.join = Join::Apart;
        self.clause_pending = true;
    }
}

fn classify_word(w: &str) -> Kind {
    if w.bytes().any(|b| b.is_ascii_digit()) || number_word(w).is_some() {
        Kind::Number
    } else if is_negator_en(w) {
        Kind::Negation
    } else if is_polarity_en(w) {
        Kind::Polarity
    } else if is_filler_en(w) {
        Kind::Filler
    } else {
        Kind::Word
    }
}

impl FactText {
    pub fn new(text: &str) -> FactText {
        let norm = normalize(text);
        let s: &str = &norm;
        let mut b = Builder {
            // room for the spaces between parts, so it grows at most once
            padded: String::with_capacity(s.len() + s.len() / 4 + 8),
            parts: Vec::with_capacity(s.len() / 4 + 1),
            stamps: Vec::new(),
            polar: Vec::new(),
            clause: 0,
            segment: 0,
            join: Join::Apart,
            clause_pending: false,
            number_word: None,
            lower: String::new(),
        };
        b.padded.push(' ');
        let bytes = s.as_bytes();
        let mut i = 0usize;
        let mut prev: Option<char> = None;
        let mut word = String::new();
        let mut word_ident = false;
        while i < s.len() {
            let Some(c) = s.get(i..).and_then(|r| r.chars().next()) else {
                break;
            };
            let len = c.len_utf8();
            // timestamps: at a digit not inside a word (a Han character
            // before it is no word: `于7月8日`), or at an English month name
            let at_word_start =
                word.is_empty() && !prev.is_some_and(|p| p.is_alphanumeric() && !is_han(p));
            if at_word_start
                && let Some((st, end)) = if c.is_ascii_digit() {
                    stamp::parse_at(s, i)
                } else if c.is_ascii_alphabetic() && !prev.is_some_and(is_han) {
                    stamp::parse_month_name_at(s, i)
                } else {
                    None
                }
            {
                let idx = b.stamps.len().min(u16::MAX as usize) as u16;
                b.stamps.push(st);
                b.push(&format!("#t{idx}"), Kind::Stamp(idx), true);
                i = end;
                prev = s.get(..i).and_then(|r| r.chars().next_back());
                continue;
            }
            // ASCII first: most of a log line is, and the Unicode tables cost
            let mark = !c.is_ascii() && is_combining_mark(c);
            if c.is_alphanumeric() && !mark && (c.is_ascii() || !is_han(c)) {
                // camelCase boundaries split a word into joined parts
                if let Some(p) = prev
                    && !word.is_empty()
                    && c.is_uppercase()
                {
                    let next_lower = s
                        .get(i + len..)
                        .and_then(|r| r.chars().next())
                        .is_some_and(char::is_lowercase);
                    if p.is_lowercase() || (p.is_uppercase() && next_lower) {
                        b.push_word(&word, true);
                        b.join = Join::Joined;
                        word.clear();
                        word_ident = true;
                    }
                }
                word.push(c);
                i += len;
                prev = Some(c);
                continue;
            }
            if mark && !word.is_empty() {
                word.push(c);
                i += len;
                continue;
            }
            // a decimal point or a thousands separator inside a number
            let next = s.get(i + len..).and_then(|r| r.chars().next());
            if (c == '.' || c == ',')
                && !word.is_empty()
                && prev.is_some_and(|p| p.is_ascii_digit())
                && next.is_some_and(|n| n.is_ascii_digit())
                && word.bytes().all(|x| x.is_ascii_digit() || x == b'.')
            {
                if c == '.' {
                    word.push('.');
                    i += 1;
                    prev = Some(c);
                    continue;
                }
                let three = bytes
                    .get(i + 1..i + 4)
                    .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
                    && !bytes.get(i + 4).is_some_and(u8::is_ascii_digit);
                if three {
                    i += 1;
                    continue;
                }
            }
            if !word.is_empty() {
                b.push_word(&word, word_ident);
                word.clear();
                word_ident = false;
            }
            if is_han(c) {
                if !b.parts.is_empty() && prev.is_some_and(is_han) {
                    b.join = Join::HanRun;
                }
                // Chinese numerals: a run worth a number
                if is_han_numeral(c) {
                    let run_end = s
                        .get(i..)
                        .map(|r| {
                            r.char_indices()
                                .find(|(_, x)| !is_han_numeral(*x))
                                .map_or(r.len(), |(k, _)| k)
                        })
                        .unwrap_or(0);
                    let run = s.get(i..i + run_end).unwrap_or("");
                    let counts = run.chars().count() >= 2
                        || lone_han_numeral_counts(c, s.get(i + run_end..).unwrap_or(""));
                    if counts && let Some(v) = han_number(run) {
                        b.push(&v.to_string(), Kind::Number, true);
                        i += run_end;
                        prev = run.chars().next_back();
                        continue;
                    }
                }
                let after = next.unwrap_or(' ');
                let kind = if is_negator_han(c)
                    && !is_han_non_negation(c, after)
                    && !prev.is_some_and(|p| is_han_non_negation_after(p, c))
                {
                    Kind::Negation
                } else if is_filler_han(c) {
                    Kind::Filler
                } else {
                    Kind::Han
                };
                let mut buf = [0u8; 4];
                b.push(c.encode_utf8(&mut buf), kind, false);
                i += len;
                prev = Some(c);
                continue;
            }
            // separators, connectors, clause marks
            if c == '.' && next == Some('.') || c == '⋯' || c == '…' {
                // an ellipsis: a gap in the quotation
                let mut j = i;
                while let Some(x) = s.get(j..).and_then(|r| r.chars().next()) {
                    if x == '.' || x == '⋯' || x == '…' {
                        j += x.len_utf8();
                    } else {
                        break;
                    }
                }
                b.end_clause();
                b.segment = b.segment.saturating_add(1);
                i = j;
                prev = Some('.');
                continue;
            }
            if c == '%' && b.parts.last().is_some_and(|p| p.kind == Kind::Number) {
                // `92%`, `92 %`: the unit of the number before it
                let gap = s.get(..i).unwrap_or("");
                let trimmed = gap.trim_end();
                if trimmed.ends_with(|x: char| x.is_ascii_digit() || is_han_numeral(x)) {
                    b.push("%", Kind::Filler, false);
                    i += len;
                    prev = Some(c);
                    continue;
                }
            }
            let space_before = prev.is_none_or(char::is_whitespace);
            let space_after = next.is_none_or(char::is_whitespace);
            if c == '=' && !space_before && !b.parts.is_empty() {
                // the run before `=` is a key (a key written apart starts a
                // clause); its value is a unit of its own
                mark_key(&mut b);
                b.join = Join::Apart;
            } else if is_clause_mark(c)
                || (matches!(c, ':' | '.' | '：') && space_after)
                // a full-width colon (`根因：X`) reads `:` after NFKC: next
                // to Han text it is punctuation, not a connector
                || (c == ':' && (prev.is_some_and(is_han) || next.is_some_and(is_han)))
                || (c == '-' && space_before && space_after)
            {
                b.end_clause();
            } else if is_connector(c) && !space_before && !space_after && !b.parts.is_empty() {
                b.join = Join::Joined;
            } else {
                b.apart();
            }
            i += len;
            prev = Some(c);
        }
        if !word.is_empty() {
            b.push_word(&word, word_ident);
        }
        units::attach_units(&mut b);
        mark_han_polarity(&mut b);
        let fields_source = if s.contains('=') {
            s.to_lowercase()
        } else {
            String::new()
        };
        FactText {
            padded: b.padded,
            parts: b.parts,
            stamps: b.stamps,
            polar: b.polar,
            fields_source,
        }
    }

    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    pub fn text(&self, p: &Part) -> &str {
        self.padded
            .get(p.start as usize..p.end as usize)
            .unwrap_or("")
    }

    pub fn text_at(&self, i: usize) -> &str {
        self.parts.get(i).map_or("", |p| self.text(p))
    }

    pub fn stamp(&self, k: Kind) -> Option<Stamp> {
        match k {
            Kind::Stamp(i) => self.stamps.get(i as usize).copied(),
            _ => None,
        }
    }

    pub fn stamps(&self) -> &[Stamp] {
        &self.stamps
    }

    /// `" p0 p1 ... "`.
    pub fn padded(&self) -> &str {
        &self.padded
    }

    /// Han state/polarity words: (first part index, word).
    pub fn han_polarity(&self) -> &[(u32, &'static str)] {
        &self.polar
    }

    /// Part texts in order.
    pub fn tokens(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().map(|p| self.text(p))
    }

    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// Characters of content (part texts).
    pub fn content_chars(&self) -> usize {
        self.parts
            .iter()
            .map(|p| self.text(p).chars().count())
            .sum()
    }

    /// The normalised, lower-cased text, when it has `key=value` fields.
    pub fn fields_source(&self) -> &str {
        &self.fields_source
    }

    /// The part index whose text starts at byte `offset` of the padded form.
    pub fn part_at(&self, offset: usize) -> Option<usize> {
        self.parts
            .binary_search_by_key(&(offset as u32), |p| p.start)
            .ok()
    }

    /// Indices of the runs of joined parts (units): `(first, last)` inclusive.
    pub fn units(&self) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = Vec::with_capacity(self.parts.len());
        for (i, p) in self.parts.iter().enumerate() {
            match out.last_mut() {
                Some(last)
                    if p.join == Join::Joined
                        && !matches!(p.kind, Kind::Stamp(_))
                        && !self
                            .parts
                            .get(last.1)
                            .is_some_and(|q| matches!(q.kind, Kind::Stamp(_))) =>
                {
                    last.1 = i
                }
                _ => out.push((i, i)),
            }
        }
        out
    }

    /// Whether part `i` is a negation, in the canonical sense (every
    /// negator is the same negation).
    pub fn is_negation(&self, i: usize) -> bool {
        self.parts.get(i).is_some_and(|p| p.kind == Kind::Negation)
    }

    /// Whether the text holds a negation anywhere.
    pub fn has_negation(&self) -> bool {
        self.parts.iter().any(|p| p.kind == Kind::Negation)
    }

    /// Whether the text holds the English polarity word or Han polarity
    /// word `w` (as a part, or as a run of Han parts).
    pub fn has_polarity_word(&self, w: &str) -> bool {
        if w.is_ascii() {
            return self
                .parts
                .iter()
                .any(|p| p.kind == Kind::Polarity && self.text(p) == w);
        }
        self.polar.iter().any(|(_, x)| *x == w)
    }
}

/// Marks the run of joined parts ending at the last part as a key; a key
/// written apart from what precedes it starts a new clause.
fn mark_key(b: &mut Builder) {
    let mut first = b.parts.len();
    while first > 0 {
        first -= 1;
        let Some(p) = b.parts.get(first) else { break };
        if p.join != Join::Joined {
            break;
        }
    }
    let starts_apart = b.parts.get(first).is_some_and(|p| p.join == Join::Apart);
    let new_clause = if starts_apart && first > 0 {
        b.clause.saturating_add(1)
    } else {
        b.clause
    };
    for p in b.parts.iter_mut().skip(first) {
        p.key = true;
        p.clause = new_clause;
        if p.kind == Kind::Polarity || p.kind == Kind::Word {
            p.kind = Kind::Filler;
        }
    }
    b.clause = new_clause;
}

fn mark_han_polarity(b: &mut Builder) {
    let n = b.parts.len();
    let mut i = 0;
    while i + 1 < n {
        let (Some(p), Some(q)) = (b.parts.get(i), b.parts.get(i + 1)) else {
            break;
        };
        if q.join == Join::HanRun {
            let a = b.padded.get(p.start as usize..p.end as usize).unwrap_or("");
            let c = b.padded.get(q.start as usize..q.end as usize).unwrap_or("");
            if let Some(w) = words::POLARITY_HAN
                .iter()
                .find(|w| w.strip_prefix(a).is_some_and(|rest| rest == c))
            {
                b.polar.push((i as u32, w));
                if let Some(p) = b.parts.get_mut(i)
                    && p.kind != Kind::Negation
                {
                    p.kind = Kind::Polarity;
                }
                if let Some(q) = b.parts.get_mut(i + 1)
                    && q.kind != Kind::Negation
                {
                    q.kind = Kind::Polarity;
                }
                i += 2;
                continue;
            }
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests;

//! Statement grounding, by allowlist: a statement passes only when every
//! content word of it is grounded in the verified evidence of the claims
//! it names. A word is grounded when it is
//!
//! - spelled in that evidence, after normalisation: NFKC, case, width and
//!   digits ([`FactText`]), a look-alike letter of another script read as
//!   the letter it imitates (the UTS #39 confusable skeleton), an English
//!   inflection by its Snowball stem, Chinese by the lexicon's longest
//!   match and otherwise by the evidence's own characters;
//! - a number, duration, ratio or percentage, or timestamp equal in value
//!   to one there (`12 500 ms` = `12.5 s`, `0.35` = `35 %`; next to an
//!   approximation word, within 10 %);
//! - the name of what served the evidence (its tool, or the lexicon's
//!   source words for that kind of tool: Prometheus, the alert, the logs);
//! - a connective of the lexicon (function words, determiners,
//!   auxiliaries, generic reporting verbs), a negation (whose own check is
//!   structural, `grounded`), or an approximation word;
//! - a term of the lexicon whose concept the evidence spells in another
//!   word (a translation or an inflection).
//!
//! Everything else is ungrounded, whatever its kind: an impact, a
//! mechanism, a scope, a frequency. A cause or sequence link (the
//! lexicon's `link` class, or an arrow) is grounded only when one evidence
//! text states a link of the same concept.

use super::facts::{FactText, Join, Kind, number_value, quantities_match, unit_after};
use super::lexicon::{Class, ConceptId, Entry, Lexicon, lexicon, stem};
use std::borrow::Cow;
use std::collections::HashSet;

/// One verified evidence text and the tool that returned it.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    pub text: &'a FactText,
    pub tool: &'a str,
}

/// The first word of a statement that its evidence does not ground.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ungrounded {
    pub word: String,
    pub kind: UngroundedKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UngroundedKind {
    /// A word no evidence text, connective or equivalence grounds.
    Word,
    /// A number or timestamp no evidence value equals.
    Number,
    /// A cause or sequence link no single evidence text states.
    Link,
    /// A level said of a service that only another record's message says.
    Field,
}

impl Ungrounded {
    pub fn describe(&self) -> String {
        match self.kind {
            UngroundedKind::Word => format!(
                "says {:?}, which is not grounded in its evidence (not spelled there, not a connective, not an equivalence of a word there)",
                self.word
            ),
            UngroundedKind::Number => format!(
                "states {:?}, which no value of its evidence equals",
                self.word
            ),
            UngroundedKind::Link => format!(
                "links facts by {:?}, a cause or sequence that no single evidence text states",
                self.word
            ),
            UngroundedKind::Field => format!(
                "says {:?} of a service whose log record does not have that level (it is only inside a message)",
                self.word
            ),
        }
    }
}

/// Arrows that say "then" or "leads to".
const ARROWS: [&str; 6] = ["=>", "->", "→", "⇒", "⟶", "➔"];

/// A text as the statement check reads it: thousands separators between
/// digit groups dropped (`12,500`, `12 500` = `12500`), and each letter of
/// another script that imitates a Latin letter replaced by that letter,
/// so `nоt` with a Cyrillic `о` is `not`. The Gatekeeper's excerpt check
/// compares quotations and keeps the text as written.
pub fn fold(text: &str) -> Cow<'_, str> {
    let needs = text.chars().any(|c| !c.is_ascii() && c.is_alphabetic())
        || text.as_bytes().windows(5).any(|w| {
            w[0].is_ascii_digit()
                && matches!(w[1], b',' | b' ')
                && w[2..].iter().all(u8::is_ascii_digit)
        })
        || text.contains('\u{a0}')
        || text.contains('\u{202f}');
    if !needs {
        return Cow::Borrowed(text);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        let digit_at = |k: usize| chars.get(k).is_some_and(char::is_ascii_digit);
        if matches!(c, ',' | ' ' | '\u{a0}' | '\u{202f}' | '\'')
            && i > 0
            && digit_at(i - 1)
            && (1..=3).all(|k| digit_at(i + k))
            && !digit_at(i + 4)
            && group_before(&chars, i)
        {
            continue;
        }
        if !c.is_ascii() && c.is_alphabetic() && !crate::text::is_han(c) {
            let lower: String = c.to_lowercase().collect();
            let sk: String = unicode_security::skeleton(&lower).collect();
            let mut it = sk.chars();
            if let (Some(a), None) = (it.next(), it.next())
                && a.is_ascii_alphabetic()
            {
                out.push(a);
                continue;
            }
        }
        out.push(c);
    }
    Cow::Owned(out)
}

/// Whether the digits before a separator at `i` are a group of one to
/// three (`12 500`, not `2026 500`).
fn group_before(chars: &[char], i: usize) -> bool {
    let mut n = 0;
    let mut k = i;
    while k > 0 && chars.get(k - 1).is_some_and(char::is_ascii_digit) {
        n += 1;
        k -= 1;
    }
    (1..=3).contains(&n) && !(k > 0 && chars.get(k - 1).is_some_and(|c| *c == '.'))
}

/// What the evidence spells, read once per check.
struct Index<'a> {
    words: HashSet<&'a str>,
    stems: HashSet<String>,
    /// Concepts of the lexicon some evidence word belongs to.
    concepts: HashSet<ConceptId>,
    /// Per evidence text: its Han runs, and the link concepts it states.
    han: Vec<String>,
    links: Vec<HashSet<ConceptId>>,
    raw_links: Vec<&'static str>,
    /// Source concepts (source.metrics...) of the tools that served.
    served: HashSet<&'static str>,
    tools: HashSet<String>,
    /// The evidence texts' padded forms (`" p0 p1 "`).
    padded: Vec<&'a str>,
    /// The evidence's joined runs of more than one part, by their parts.
    runs: Vec<Vec<&'a str>>,
}

fn han_runs(t: &FactText) -> String {
    let mut out = String::new();
    let mut prev_han = false;
    for p in t.parts() {
        let w = t.text(p);
        let han = !w.is_ascii() && w.chars().all(crate::text::is_han);
        if han {
            if !(prev_han && p.join == Join::HanRun) {
                out.push('|');
            }
            out.push_str(w);
        }
        prev_han = han;
    }
    out
}

/// The source concept a tool's results are named by.
fn served_by(tool: &str) -> Option<&'static str> {
    let t = tool.to_ascii_lowercase();
    if t.contains("metric") || t.contains("alert") {
        Some("source.metrics")
    } else if t.contains("log") {
        Some("source.logs")
    } else if t.contains("knowledge") || t.contains("runbook") || t.contains("skill") {
        Some("source.knowledge")
    } else {
        None
    }
}

impl<'a> Index<'a> {
    fn new(sources: &[Source<'a>], raw: &[&str], lx: &Lexicon) -> Index<'a> {
        let mut ix = Index {
            words: HashSet::new(),
            stems: HashSet::new(),
            concepts: HashSet::new(),
            han: Vec::with_capacity(sources.len()),
            links: Vec::with_capacity(sources.len()),
            raw_links: ARROWS
                .iter()
                .copied()
                .filter(|a| raw.iter().any(|r| r.contains(a)))
                .collect(),
            served: HashSet::new(),
            tools: HashSet::new(),
            padded: sources.iter().map(|s| s.text.padded()).collect(),
            runs: sources
                .iter()
                .flat_map(|s| {
                    s.text
                        .units()
                        .into_iter()
                        .filter(|(a, b)| b > a)
                        .map(|(a, b)| (a..=b).map(|i| s.text.text_at(i)).collect())
                })
                .collect(),
        };
        for s in sources {
            ix.served.insert("source.any");
            if let Some(c) = served_by(s.tool) {
                ix.served.insert(c);
            }
            ix.tools.insert(s.tool.to_ascii_lowercase());
            let mut links = HashSet::new();
            for w in s.text.tokens() {
                if w.is_empty() || w.chars().all(crate::text::is_han) {
                    continue;
                }
                // a number's unit names its unit's concept (`30000ms`: ms)
                if let Some((_, unit)) = number_value(w)
                    && let Some(e) = lx.entry(unit)
                {
                    ix.concepts.insert(e.concept);
                }
                ix.words.insert(w);
                let st = stem(w);
                if let Some(e) = lx.entry_en(w, &st) {
                    ix.concepts.insert(e.concept);
                    if e.class == Class::Link {
                        links.insert(e.concept);
                    }
                }
                ix.stems.insert(st);
            }
            let han = han_runs(s.text);
            if !han.is_empty() {
                for (w, e) in &lx.han {
                    if han.contains(w.as_str()) {
                        ix.concepts.insert(e.concept);
                        if e.class == Class::Link {
                            links.insert(e.concept);
                        }
                    }
                }
            }
            ix.han.push(han);
            ix.links.push(links);
        }
        ix
    }

    fn spells_han(&self, w: &str) -> bool {
        self.han.iter().any(|h| h.contains(w))
    }

    /// Whether an entry of the lexicon is grounded here (links aside).
    fn grounds(&self, e: Entry, lx: &Lexicon) -> bool {
        match e.class {
            Class::Connective | Class::Approx | Class::Negation => true,
            Class::Link => self.links.iter().any(|l| l.contains(&e.concept)),
            Class::Source => {
                self.concepts.contains(&e.concept)
                    || lx
                        .concept(e.concept)
                        .is_some_and(|c| self.served.contains(c.name.as_str()))
            }
            Class::Term | Class::Unit => self.concepts.contains(&e.concept),
        }
    }
}

/// The first word of `statement` (raw, as shown) that `sources` do not
/// ground, if any. `raw_evidence` are the evidence texts as written (for
/// arrows, which the tokenizer drops). With `hedged_cause` (the statement
/// rests on a root_cause claim observed in this system) the noun "cause"
/// (原因, 根因) may label it: that is what the answer's "Likely cause"
/// section says of it.
pub fn ungrounded(
    statement_raw: &str,
    statement: &FactText,
    sources: &[Source<'_>],
    raw_evidence: &[&str],
    hedged_cause: bool,
) -> Option<Ungrounded> {
    let lx = lexicon();
    let ix = Index::new(sources, raw_evidence, lx);
    for a in ARROWS {
        if statement_raw.contains(a) && !ix.raw_links.contains(&a) {
            return Some(Ungrounded {
                word: a.to_string(),
                kind: UngroundedKind::Link,
            });
        }
    }
    let parts = statement.parts();
    let approx_near = |i: usize| {
        let lo = i.saturating_sub(2);
        (lo..(i + 3).min(parts.len())).any(|k| {
            k != i && {
                let w = statement.text_at(k);
                lx.entry(w).is_some_and(|e| e.class == Class::Approx)
                    || (!w.is_ascii() && han_approx_at(statement, k, lx))
            }
        })
    };
    // Han state and polarity words, by the parts they cover: the
    // structural check holds them
    let mut states: HashSet<usize> = HashSet::new();
    for (i, w) in statement
        .han_polarity()
        .iter()
        .map(|(i, w)| (*i as usize, *w))
        .chain(super::facts::states::han_states(statement))
    {
        states.extend(i..i + w.chars().count());
    }
    let mut skip_until = 0usize;
    for (first, last) in statement.units() {
        if first < skip_until {
            continue;
        }
        let Some(p) = parts.get(first) else { continue };
        let text = statement.text(p);
        if let Some(st) = statement.stamp(p.kind) {
            if !sources
                .iter()
                .any(|s| s.text.stamps().iter().any(|&rs| st.renders(rs)))
            {
                return Some(Ungrounded {
                    word: text.to_string(),
                    kind: UngroundedKind::Number,
                });
            }
            continue;
        }
        if last > first {
            if let Some(u) = joined_run(statement, first, last, &ix, lx) {
                return Some(u);
            }
            continue;
        }
        match p.kind {
            Kind::Number
                if number_value(text).is_some()
                    || text.chars().all(|c| c.is_ascii_digit() || c == '.') =>
            {
                if !number_grounded(statement, first, sources, approx_near(first)) {
                    return Some(Ungrounded {
                        word: number_shown(statement, first),
                        kind: UngroundedKind::Number,
                    });
                }
                // a unit written apart is part of the number
                if !unit_after(statement, first).is_empty() {
                    skip_until = first + 2;
                }
            }
            _ if !text.is_ascii() && text.chars().all(crate::text::is_han) => {
                let end = han_run_end(statement, first);
                if let Some(u) = han_run(statement, (first, end), &states, &ix, lx, hedged_cause) {
                    return Some(u);
                }
                skip_until = end + 1;
            }
            // "half a minute", "a quarter of an hour": a fraction of a unit
            _ if fraction(text).is_some() => {
                let Some((v, unit, end)) = fraction_at(statement, first) else {
                    return Some(Ungrounded {
                        word: text.to_string(),
                        kind: UngroundedKind::Word,
                    });
                };
                if !value_grounded(v, unit, sources, approx_near(first)) {
                    return Some(Ungrounded {
                        word: (first..=end)
                            .map(|i| statement.text_at(i))
                            .collect::<Vec<_>>()
                            .join(" "),
                        kind: UngroundedKind::Number,
                    });
                }
                skip_until = end + 1;
            }
            // states and negations: the structural check (`grounded`)
            // holds them to what the evidence says, with their polarity
            Kind::Polarity | Kind::Negation => {}
            _ => {
                if hedged_cause && text == "cause" {
                    continue;
                }
                if let Some(u) = word(text, &ix, lx) {
                    return Some(u);
                }
            }
        }
    }
    None
}

/// The number at part `i` as the statement shows it, with a unit written apart.
fn number_shown(t: &FactText, i: usize) -> String {
    let unit = unit_after(t, i);
    if unit.is_empty() {
        t.text_at(i).to_string()
    } else {
        format!("{} {}", t.text_at(i), t.text_at(i + 1))
    }
}

/// Whether a Chinese approximation word (约, 左右...) covers part `k`.
fn han_approx_at(t: &FactText, k: usize, lx: &Lexicon) -> bool {
    let tail: String = (k..(k + 3).min(t.parts().len()))
        .map(|j| t.text_at(j))
        .collect();
    lx.han_prefix(&tail)
        .is_some_and(|(_, e)| e.class == Class::Approx)
}

/// A single word (not Han): spelled, a lexicon word grounded here, or the
/// name of a tool that served.
fn word(w: &str, ix: &Index<'_>, lx: &Lexicon) -> Option<Ungrounded> {
    if ix.words.contains(w) || ix.tools.contains(w) {
        return None;
    }
    // `paymentservice`: a joined name of the evidence written without its joints
    if w.len() > 3 && ix.runs.iter().any(|r| r.len() > 1 && r.concat() == w) {
        return None;
    }
    let st = stem(w);
    let entry = lx.entry_en(w, &st);
    if let Some(e) = entry {
        if e.class == Class::Link {
            if ix.grounds(e, lx) {
                return None;
            }
            return Some(Ungrounded {
                word: w.to_string(),
                kind: UngroundedKind::Link,
            });
        }
        if ix.grounds(e, lx) {
            return None;
        }
    }
    if w.is_ascii() && ix.stems.contains(&st) {
        return None;
    }
    if is_tail(w) {
        return None;
    }
    Some(Ungrounded {
        word: w.to_string(),
        kind: UngroundedKind::Word,
    })
}

/// The possessive or contraction tail of a word (`'s`, `n't`, `'ll`).
fn is_tail(w: &str) -> bool {
    matches!(w, "s" | "t" | "d" | "ll" | "re" | "ve" | "m")
}

/// A joined run (`payment-service`, `HikariPool-1`, `state=firing`): spelled
/// whole in the evidence, or, when no part carries a digit, every part
/// grounded on its own and the run spelled nowhere as another name.
fn joined_run(
    t: &FactText,
    first: usize,
    last: usize,
    ix: &Index<'_>,
    lx: &Lexicon,
) -> Option<Ungrounded> {
    let mut pieces: Vec<&str> = (first..=last).map(|i| t.text_at(i)).collect();
    let shown = pieces.join("-");
    // `payment-service's`, `don't`: a possessive or contraction tail
    while pieces.len() > 1 && pieces.last().is_some_and(|s| is_tail(s)) {
        pieces.pop();
    }
    if let [one] = pieces.as_slice() {
        return word(one, ix, lx);
    }
    // the evidence's own words, joined the same way
    let key: String = pieces.concat();
    if ix.words.contains(key.as_str())
        || ix.tools.contains(&pieces.join("_"))
        || ix.stems.contains(&stem(&key))
    {
        return None;
    }
    // a run the evidence spells as consecutive parts
    let needle = format!(" {} ", pieces.join(" "));
    if ix.padded.iter().any(|p| p.contains(&needle)) {
        return None;
    }
    // a run with a connective in it (`matching-got` of a masked pattern)
    // is words written together, not a name
    let connective = pieces
        .iter()
        .any(|w| lx.entry(w).is_some_and(|e| e.class == Class::Connective));
    let ident = !connective
        && (first..=last).any(|i| {
            t.parts()
                .get(i)
                .is_some_and(|p| p.kind == Kind::Number || p.ident && p.kind == Kind::Word)
        });
    if ident && !masked_run_of_evidence(&pieces, ix) {
        return Some(Ungrounded {
            word: shown,
            kind: UngroundedKind::Word,
        });
    }
    for w in pieces {
        if let Some(u) = word(w, ix, lx) {
            return Some(u);
        }
    }
    None
}

/// Whether `pieces` are, in order, pieces of one joined run of the
/// evidence: a masked pattern of its identifier (`shard_*_*_r_*` of
/// `shard_0_3_r_0`), which names nothing the evidence does not.
fn masked_run_of_evidence(pieces: &[&str], ix: &Index<'_>) -> bool {
    ix.runs.iter().any(|run| {
        let mut it = run.iter();
        run.len() > pieces.len() && pieces.iter().all(|p| it.any(|r| r == p))
    })
}

/// The last part of the Han run that starts at `first`.
fn han_run_end(t: &FactText, first: usize) -> usize {
    let mut end = first;
    while t.parts().get(end + 1).is_some_and(|p| {
        p.join == Join::HanRun && {
            let w = t.text(p);
            !w.is_ascii() && w.chars().all(crate::text::is_han)
        }
    }) {
        end += 1;
    }
    end
}

/// Segments a run of Han characters, longest first: a state or polarity
/// word (held by the structural check), a lexicon word grounded here, or
/// characters the evidence spells. A lexicon link that is not grounded is
/// ungrounded however its characters are spelled apart elsewhere; a term
/// may still be read as shorter lexicon words (不可用 as 不 + 可用).
fn han_run(
    t: &FactText,
    (first, end): (usize, usize),
    states: &HashSet<usize>,
    ix: &Index<'_>,
    lx: &Lexicon,
    hedged_cause: bool,
) -> Option<Ungrounded> {
    let chars: Vec<&str> = (first..=end).map(|i| t.text_at(i)).collect();
    let mut k = 0;
    while k < chars.len() {
        if states.contains(&(first + k)) {
            k += 1;
            continue;
        }
        let rest: String = chars.get(k..).unwrap_or(&[]).concat();
        // the longest piece the evidence spells
        let mut spelled = 0;
        for len in (1..=(chars.len() - k).min(12)).rev() {
            let piece: String = chars.get(k..k + len).unwrap_or(&[]).concat();
            if ix.spells_han(&piece) {
                spelled = len;
                break;
            }
        }
        let lexical: Vec<(&str, Entry)> = lx
            .han
            .iter()
            .filter(|(w, _)| rest.starts_with(w.as_str()))
            .map(|(w, e)| (w.as_str(), *e))
            .collect();
        let longest = lexical.first().copied();
        let lex_len = longest.map_or(0, |(w, _)| w.chars().count());
        if spelled >= lex_len.max(2) || (spelled > 0 && longest.is_none()) {
            k += spelled;
            continue;
        }
        if let Some((w, e)) = longest
            && e.class == Class::Link
            && !ix.grounds(e, lx)
            && !(hedged_cause && matches!(w, "原因" | "根因"))
        {
            return Some(Ungrounded {
                word: w.to_string(),
                kind: UngroundedKind::Link,
            });
        }
        let grounded = lexical
            .iter()
            .find(|(w, e)| ix.grounds(*e, lx) || (hedged_cause && matches!(*w, "原因" | "根因")));
        match (grounded, longest) {
            (Some((w, _)), _) => k += w.chars().count().max(spelled),
            (None, _) if spelled > 0 => k += spelled,
            (None, Some((w, _))) => {
                return Some(Ungrounded {
                    word: w.to_string(),
                    kind: UngroundedKind::Word,
                });
            }
            (None, None) => {
                let shown: String = chars
                    .get(k..(k + 2).min(chars.len()))
                    .unwrap_or(&[])
                    .concat();
                return Some(Ungrounded {
                    word: shown,
                    kind: UngroundedKind::Word,
                });
            }
        }
    }
    None
}

/// Whether the number at part `i` equals a value of the evidence: the
/// same quantity in any unit, a ratio as a percentage or the reverse, and
/// within 10 % next to an approximation word.
fn number_grounded(t: &FactText, i: usize, sources: &[Source<'_>], approx: bool) -> bool {
    let text = t.text_at(i);
    let unit = unit_after(t, i);
    let Some((v, u)) = value(text, unit) else {
        return false;
    };
    sources.iter().any(|s| {
        let e = s.text;
        e.parts().iter().enumerate().any(|(j, q)| {
            if q.kind != Kind::Number {
                return false;
            }
            // "1 hour" does not rest on the `1` of `HikariPool-1`
            if !u.is_empty() && super::facts::grounded::in_identifier(e, j) {
                return false;
            }
            let qt = e.text(q);
            let qu = if q.join == Join::Apart {
                unit_after(e, j)
            } else {
                ""
            };
            if same_quantity(text, unit, qt, qu) {
                return true;
            }
            if !approx {
                return false;
            }
            let Some((w, wu)) = value(qt, qu) else {
                return false;
            };
            let close = |a: f64, b: f64| (a - b).abs() <= 0.1 * a.abs().max(b.abs());
            match (seconds(v, &u), seconds(w, &wu)) {
                (Some(x), Some(y)) => close(x, y),
                _ => (u == wu && close(v, w)) || ratio_of(v, &u, w, &wu, close),
            }
        })
    })
}

/// The value of a fraction word.
fn fraction(w: &str) -> Option<f64> {
    match w {
        "half" => Some(0.5),
        "quarter" => Some(0.25),
        _ => None,
    }
}

/// A fraction word at part `i` and the unit it measures a few words on
/// (`half a minute`, `a quarter of an hour`): its value, canonical unit
/// and the last part it spans.
fn fraction_at(t: &FactText, i: usize) -> Option<(f64, &'static str, usize)> {
    let v = fraction(t.text_at(i))?;
    for j in i + 1..(i + 4).min(t.parts().len()) {
        let w = t.text_at(j);
        if matches!(w, "a" | "an" | "of") {
            continue;
        }
        // "an hour" reads as one hour: the unit is the fraction's
        let unit = match number_value(w) {
            Some((n, u)) if (n - 1.0).abs() < 1e-9 && !u.is_empty() => u,
            _ => super::facts::words::canonical_unit(w).filter(|u| !u.is_empty())?,
        };
        return Some((v, unit, j));
    }
    None
}

/// Whether a value in `unit` equals a value of the evidence (durations in
/// any unit; within 10 % with `approx`).
fn value_grounded(v: f64, unit: &str, sources: &[Source<'_>], approx: bool) -> bool {
    let tol = if approx { 0.1 } else { 1e-9 };
    let close = |a: f64, b: f64| (a - b).abs() <= tol * a.abs().max(b.abs());
    sources.iter().any(|s| {
        let e = s.text;
        e.parts().iter().enumerate().any(|(j, q)| {
            if q.kind != Kind::Number {
                return false;
            }
            let qu = if q.join == Join::Apart {
                unit_after(e, j)
            } else {
                ""
            };
            let Some((w, wu)) = value(e.text(q), qu) else {
                return false;
            };
            match (seconds(v, unit), seconds(w, &wu)) {
                (Some(x), Some(y)) => close(x, y),
                _ => unit == wu && close(v, w),
            }
        })
    })
}

/// Whether two number parts say the same quantity: equal in value and
/// unit (a duration in any unit), or a ratio and the percentage it is
/// (`0.35` = `35 %`). `unit_a`/`unit_b`: a unit written apart.
pub fn same_quantity(a: &str, unit_a: &str, b: &str, unit_b: &str) -> bool {
    if quantities_match(a, unit_a, b, unit_b) {
        return true;
    }
    let (Some((v, u)), Some((w, wu))) = (value(a, unit_a), value(b, unit_b)) else {
        return false;
    };
    let exact = |x: f64, y: f64| (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0);
    ratio_of(v, &u, w, &wu, exact)
}

/// Whether `v u` and `w wu` are a percentage and the ratio it is.
fn ratio_of(v: f64, u: &str, w: f64, wu: &str, close: impl Fn(f64, f64) -> bool) -> bool {
    match (u, wu) {
        ("%", "") => w <= 1.0 && close(v, w * 100.0),
        ("", "%") => v <= 1.0 && close(v * 100.0, w),
        _ => false,
    }
}

/// A number part's value and canonical unit (a unit word written apart counts).
fn value(text: &str, unit_apart: &str) -> Option<(f64, String)> {
    let (v, u) = number_value(text).or_else(|| text.parse::<f64>().ok().map(|v| (v, "")))?;
    let u = if u.is_empty() { unit_apart } else { u };
    Some((v, u.to_string()))
}

/// A duration in seconds.
fn seconds(v: f64, unit: &str) -> Option<f64> {
    Some(
        v * match unit {
            "ns" => 1e-9,
            "us" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "min" => 60.0,
            "h" => 3600.0,
            "d" => 86_400.0,
            _ => return None,
        },
    )
}

#[cfg(test)]
mod tests;

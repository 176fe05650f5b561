//! Whether an evidence excerpt quotes the ref it cites: a comparison of
//! facts, not of strings.
//!
//! Both texts are [`FactText`]s (NFKC, digits of every script, case, width
//! and invisible characters normalised; parts classified as facts,
//! negations, state/polarity words or filler). The excerpt is supported
//! when, in this order:
//!
//! 1. it says enough to identify a ref: at least `min_content_units` fact
//!    units (a Han character counts half), so a lone `ERROR` binds nothing
//!    (`binding.excerpt_identifies`);
//! 2. every fact-bearing unit of it (identifiers, service and alert names,
//!    numbers with their unit, states, levels, timestamps) occurs in the
//!    ref, and within each clause of the excerpt in the ref's order, so a
//!    swapped name, number or state, or a clause spliced in from another
//!    ref, fails; the ref's own timestamp may be rendered any common way
//!    (`binding.excerpt_facts`);
//! 3. polarity is kept both ways: a negation or state word the excerpt
//!    adds must be in the ref, and one the ref has inside the matched span,
//!    or anywhere in a clause the excerpt quotes from, must be in the
//!    excerpt; an ellipsis marks a gap but cannot drop a clause's negation
//!    (`binding.excerpt_polarity`);
//! 4. of the rest (filler words), enough occur in the ref:
//!    `min_token_overlap` (`binding.excerpt_supported`).
//!
//! This runs for every binding of every run. Texts are normalised once
//! (the Gatekeeper caches ref texts); an excerpt that is a contiguous run
//! of the ref's parts needs only the clause check after one substring
//! search.

use crate::evidence::facts::words::canonical_unit;
use crate::evidence::facts::{FactText, Join, Kind, number_value, numbers_match, unit_after};
use std::collections::HashSet;

/// The four excerpt checks, each a Gatekeeper rule of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExcerptRule {
    Identifies,
    Facts,
    Polarity,
    Supported,
}

impl ExcerptRule {
    /// The rule id the Gatekeeper reports it under.
    pub fn as_str(self) -> &'static str {
        match self {
            ExcerptRule::Identifies => "binding.excerpt_identifies",
            ExcerptRule::Facts => "binding.excerpt_facts",
            ExcerptRule::Polarity => "binding.excerpt_polarity",
            ExcerptRule::Supported => "binding.excerpt_supported",
        }
    }
}

/// Parameters of the excerpt rules (`binding.excerpt_supported`:
/// `min_token_overlap`; `binding.excerpt_identifies`: `min_excerpt_chars`,
/// `min_content_units`) and which of the four excerpt checks are enabled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExcerptParams {
    pub min_token_overlap: f64,
    pub min_excerpt_chars: usize,
    /// Fact units an excerpt needs to identify its ref (a Han character
    /// counts half).
    pub min_content_units: f64,
    pub overlap: bool,
    pub identifies: bool,
    pub facts: bool,
    pub polarity: bool,
}

impl Default for ExcerptParams {
    fn default() -> Self {
        ExcerptParams {
            min_token_overlap: 0.8,
            min_excerpt_chars: 3,
            min_content_units: 2.0,
            overlap: true,
            identifies: true,
            facts: true,
            polarity: true,
        }
    }
}

impl ExcerptParams {
    /// Whether any excerpt check runs.
    pub fn any(&self) -> bool {
        self.overlap || self.identifies || self.facts || self.polarity
    }
}

/// Why an excerpt was judged unsupported, for the error line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsupported {
    /// Empty, or fewer characters than `min_excerpt_chars`.
    TooShort,
    /// Too few fact units to identify one ref.
    Unidentifying,
    /// A fact-bearing unit that does not occur in the ref.
    FactMissing(String),
    /// Facts that occur in the ref, but not as one quotation (out of
    /// order within a clause of the excerpt).
    NotQuoted(String),
    /// A `key=value` field contradicting the ref's field of that key.
    FieldConflict(String),
    /// A negation or state word of the ref the excerpt leaves out.
    PolarityDropped(String),
    /// A negation or state word the excerpt adds.
    PolarityAdded(String),
    /// Too few of the remaining words occur in the ref.
    LowOverlap,
}

impl Unsupported {
    /// The check that failed.
    pub fn rule(&self) -> ExcerptRule {
        match self {
            Unsupported::TooShort | Unsupported::Unidentifying => ExcerptRule::Identifies,
            Unsupported::FactMissing(_)
            | Unsupported::NotQuoted(_)
            | Unsupported::FieldConflict(_) => ExcerptRule::Facts,
            Unsupported::PolarityDropped(_) | Unsupported::PolarityAdded(_) => {
                ExcerptRule::Polarity
            }
            Unsupported::LowOverlap => ExcerptRule::Supported,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Unsupported::TooShort => "the excerpt is empty or too short to cite anything".into(),
            Unsupported::Unidentifying => {
                "the excerpt has too few facts to identify the ref it cites".into()
            }
            Unsupported::FactMissing(u) => format!("{u:?} does not occur in the ref text"),
            Unsupported::NotQuoted(u) => {
                format!("{u:?} is not quoted from the ref text in its order")
            }
            Unsupported::FieldConflict(k) => {
                format!("the field {k:?} contradicts the ref text")
            }
            Unsupported::PolarityDropped(w) => {
                format!("the ref text says {w:?} where the excerpt quotes it, the excerpt drops it")
            }
            Unsupported::PolarityAdded(w) => {
                format!("the excerpt adds {w:?}, which the ref text does not say")
            }
            Unsupported::LowOverlap => {
                "too few of the excerpt's words occur in the ref text".into()
            }
        }
    }
}

/// One run of joined excerpt parts.
struct Unit {
    first: usize,
    last: usize,
    content: bool,
    /// Index of the excerpt clause (clause and segment).
    clause: u16,
}

pub fn supports(
    excerpt: &FactText,
    reference: &FactText,
    p: &ExcerptParams,
) -> Result<(), Unsupported> {
    if excerpt.is_empty() {
        return Err(Unsupported::TooShort);
    }
    let units = units(excerpt);
    if p.identifies {
        if excerpt.content_chars() < p.min_excerpt_chars {
            return Err(Unsupported::TooShort);
        }
        let weight: f64 = distinct_content(excerpt, &units).sum();
        if weight + 1e-9 < p.min_content_units {
            return Err(Unsupported::Unidentifying);
        }
    }
    // a condition or modal of a quoted ref clause stays in the quotation
    if p.polarity
        && let Some(m) = conditions::dropped_condition(excerpt, reference)
    {
        return Err(Unsupported::PolarityDropped(m));
    }
    // A contiguous quotation: only the clauses it touches need checking.
    let single_segment = excerpt.parts().iter().all(|x| x.segment == 0);
    if single_segment
        && excerpt.stamps().is_empty()
        && let Some(at) = reference.padded().find(excerpt.padded())
        && let Some(lo) = reference.part_at(at + 1)
    {
        let hi = lo + excerpt.parts().len().saturating_sub(1);
        let placed: Vec<(usize, usize, usize)> = vec![(0, lo, hi)];
        if !p.polarity || placed_polarity(excerpt, reference, &placed).is_ok() {
            return Ok(());
        }
        // another placement may read the ref honestly: the general path decides
    }

    let mut present = 0usize;
    let mut seen: HashSet<String> = HashSet::new();
    let mut matches: Vec<Vec<(usize, usize)>> = Vec::with_capacity(units.len());
    for u in &units {
        let m = unit_matches(excerpt, u, reference);
        let key = unit_text(excerpt, u);
        if seen.insert(key.clone()) && !m.is_empty() {
            present += 1;
        }
        if m.is_empty() && u.content {
            let why = missing(excerpt, u, key);
            if why.rule() == ExcerptRule::Polarity && p.polarity || p.facts {
                return Err(why);
            }
        }
        matches.push(m);
    }
    if p.facts {
        field_conflict(excerpt, reference)?;
    }

    // Ref parts some excerpt unit could be quoting: a state word inside
    // one of them does not count against a placement.
    let mut maybe_quoted = vec![false; reference.parts().len()];
    for &(a, b) in matches.iter().flatten() {
        for j in a..=b {
            if let Some(slot) = maybe_quoted.get_mut(j) {
                *slot = true;
            }
        }
    }

    // Place the excerpt in the ref and check its polarity there: the
    // tightest reading first, else one that keeps the ref's polarity
    // where it can; a cheat fails both, and the tightest names it best.
    let ctx = Placing {
        ex: excerpt,
        r: reference,
        units: &units,
        matches: &matches,
        p,
    };
    if let Err(tight) = ctx.check(None) {
        ctx.check(Some(&maybe_quoted)).map_err(|_| tight)?;
    }
    if !p.overlap {
        return Ok(());
    }
    let overlap = present as f64 / seen.len().max(1) as f64;
    if overlap + 1e-9 >= p.min_token_overlap {
        Ok(())
    } else {
        Err(Unsupported::LowOverlap)
    }
}

struct Placing<'a> {
    ex: &'a FactText,
    r: &'a FactText,
    units: &'a [Unit],
    matches: &'a [Vec<(usize, usize)>],
    p: &'a ExcerptParams,
}

impl Placing<'_> {
    /// Places each clause of the excerpt in the ref (in order where two
    /// units fall in one ref clause, then the tightest; with `avoid`, away
    /// from ref clauses whose polarity the excerpt drops) and checks the
    /// polarity of that reading.
    fn check(&self, avoid: Option<&[bool]>) -> Result<(), Unsupported> {
        let (ex, r, units, p) = (self.ex, self.r, self.units, self.p);
        let has_negation = ex.has_negation();
        let mut placed: Vec<(usize, usize, usize)> = Vec::new();
        let mut clause_start = 0;
        while clause_start < units.len() {
            let clause = units.get(clause_start).map_or(0, |u| u.clause);
            let clause_end = units
                .iter()
                .skip(clause_start)
                .position(|u| u.clause != clause)
                .map_or(units.len(), |k| clause_start + k);
            let idx: Vec<usize> = (clause_start..clause_end)
                .filter(|&k| {
                    units.get(k).is_some_and(|u| u.content)
                        && self.matches.get(k).is_some_and(|m| !m.is_empty())
                })
                .collect();
            clause_start = clause_end;
            if idx.is_empty() {
                continue;
            }
            let Some(chosen) = place(ex, has_negation, r, &idx, self.matches, avoid) else {
                if !p.facts {
                    continue;
                }
                return Err(Unsupported::NotQuoted(clause_text(ex, clause)));
            };
            let lo = chosen.iter().map(|m| m.0).min().unwrap_or(0);
            let hi = chosen.iter().map(|m| m.1).max().unwrap_or(0);
            if p.polarity {
                let clause_negated = units.iter().filter(|u| u.clause == clause).any(|u| {
                    ex.parts()
                        .get(u.first)
                        .is_some_and(|x| x.kind == Kind::Negation)
                });
                span_polarity(ex, clause_negated, r, (lo, hi), &chosen)?;
                scope_of_negations(ex, r, units, &idx, &chosen)?;
            }
            // a unit's own parts are quoted; what precedes it in its clause is checked
            for (&k, &(a, b)) in idx.iter().zip(&chosen) {
                if let Some(u) = units.get(k) {
                    placed.push((u.first, a, b));
                }
            }
        }
        if p.polarity {
            placed_polarity(ex, r, &placed)?;
        }
        Ok(())
    }
}

/// A negation or state word of the ref, before position `j` in `j`'s
/// clause, that the excerpt does not say (`negated`: whether the excerpt
/// quotes a negation of that clause).
fn dropped_before(
    ex: &FactText,
    negated: bool,
    r: &FactText,
    j: usize,
    quoted: &[bool],
) -> Option<String> {
    let clause = r.parts().get(j)?.clause;
    let mut q = j;
    while q > 0 {
        q -= 1;
        let Some(x) = r.parts().get(q) else { break };
        if x.clause != clause {
            break;
        }
        if quoted.get(q).copied().unwrap_or(false) {
            continue;
        }
        match x.kind {
            Kind::Negation if !negated => return Some(r.text(x).into()),
            Kind::Polarity if r.text(x).is_ascii() && !ex.has_polarity_word(r.text(x)) => {
                return Some(r.text(x).into());
            }
            _ => {}
        }
    }
    r.han_polarity()
        .iter()
        .find(|(first, w)| {
            let f = *first as usize;
            f < j
                && !quoted.get(f).copied().unwrap_or(false)
                && r.parts().get(f).is_some_and(|x| x.clause == clause)
                && !ex.has_polarity_word(w)
        })
        .map(|(_, w)| (*w).to_string())
}

/// Every placed unit (first excerpt part, ref range): the ref's negations
/// and state words before it in its clause, outside what the excerpt
/// quotes, are said by the excerpt too; a negation by an excerpt negation
/// placed in that clause.
fn placed_polarity(
    ex: &FactText,
    r: &FactText,
    placed: &[(usize, usize, usize)],
) -> Result<(), Unsupported> {
    let clause_of = |j: usize| r.parts().get(j).map_or(0, |x| x.clause);
    let mut quoted = vec![false; r.parts().len()];
    let mut negated: Vec<u16> = Vec::new();
    for &(_, a, b) in placed {
        for j in a..=b {
            if let Some(slot) = quoted.get_mut(j) {
                *slot = true;
            }
            if r.parts().get(j).is_some_and(|x| x.kind == Kind::Negation) {
                negated.push(clause_of(j));
            }
        }
    }
    negated.sort_unstable();
    for &(_, a, _) in placed {
        let neg = negated.binary_search(&clause_of(a)).is_ok();
        if let Some(w) = dropped_before(ex, neg, r, a, &quoted) {
            return Err(Unsupported::PolarityDropped(w));
        }
    }
    Ok(())
}

/// Chooses one occurrence per unit of `idx` (units of one excerpt clause):
/// two consecutive units in one ref clause keep their order; a placement
/// whose ref clause says a negation or state word the excerpt does not is
/// avoided when another exists; then the least total distance.
fn place(
    ex: &FactText,
    negated: bool,
    r: &FactText,
    idx: &[usize],
    matches: &[Vec<(usize, usize)>],
    avoid: Option<&[bool]>,
) -> Option<Vec<(usize, usize)>> {
    const PENALTY: u64 = 1 << 32;
    let occ = |k: usize| matches.get(k).map_or(&[][..], Vec::as_slice);
    let clause_of = |j: usize| r.parts().get(j).map_or(0, |x| x.clause);
    let penalty = |_k: usize, m: (usize, usize)| -> u64 {
        match avoid {
            Some(quoted) if dropped_before(ex, negated, r, m.0, quoted).is_some() => PENALTY,
            _ => 0,
        }
    };
    // cost and back-pointer per occurrence of the current unit
    let first = *idx.first()?;
    let mut cost: Vec<Option<u64>> = occ(first)
        .iter()
        .map(|&m| Some(penalty(first, m)))
        .collect();
    let mut back: Vec<Vec<usize>> = Vec::with_capacity(idx.len());
    let mut prev_k = first;
    for &k in idx.iter().skip(1) {
        let mut next_cost = Vec::with_capacity(occ(k).len());
        let mut next_back = Vec::with_capacity(occ(k).len());
        for &m in occ(k) {
            let mut best: Option<(u64, usize)> = None;
            for (pi, &pm) in occ(prev_k).iter().enumerate() {
                let Some(c) = cost.get(pi).copied().flatten() else {
                    continue;
                };
                if clause_of(pm.1) == clause_of(m.0) && m.0 <= pm.1 {
                    continue;
                }
                let d = (m.0 as i64 - pm.1 as i64).unsigned_abs();
                let total = c + d + penalty(k, m);
                if best.is_none_or(|(b, _)| total < b) {
                    best = Some((total, pi));
                }
            }
            next_cost.push(best.map(|b| b.0));
            next_back.push(best.map_or(usize::MAX, |b| b.1));
        }
        cost = next_cost;
        back.push(next_back);
        prev_k = k;
    }
    let (mut at, _) = cost
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.map(|c| (i, c)))
        .min_by_key(|(_, c)| *c)?;
    let mut chosen = vec![(0, 0); idx.len()];
    for t in (0..idx.len()).rev() {
        let k = *idx.get(t)?;
        *chosen.get_mut(t)? = *occ(k).get(at)?;
        if t > 0 {
            at = *back.get(t - 1)?.get(at)?;
        }
    }
    Some(chosen)
}

/// A negation of the excerpt reads where the ref negates: the units
/// around it in the excerpt clause fall in the ref clause of the negation
/// it was placed on.
fn scope_of_negations(
    ex: &FactText,
    r: &FactText,
    units: &[Unit],
    idx: &[usize],
    chosen: &[(usize, usize)],
) -> Result<(), Unsupported> {
    let clause_of = |j: usize| r.parts().get(j).map_or(0, |x| x.clause);
    for (t, &k) in idx.iter().enumerate() {
        let Some(u) = units.get(k) else { continue };
        if !ex
            .parts()
            .get(u.first)
            .is_some_and(|x| x.kind == Kind::Negation)
        {
            continue;
        }
        let Some(&(q, _)) = chosen.get(t) else {
            continue;
        };
        let neighbours = [t.checked_sub(1), Some(t + 1)];
        for n in neighbours.into_iter().flatten() {
            if let Some(&(a, _)) = chosen.get(n)
                && clause_of(a) != clause_of(q)
            {
                return Err(Unsupported::PolarityAdded(ex.text_at(u.first).into()));
            }
        }
    }
    Ok(())
}

/// Negations and state words inside `lo..=hi` of the ref, outside the
/// units quoted there, must be in the excerpt (a negation in the same
/// excerpt clause).
fn span_polarity(
    ex: &FactText,
    negated: bool,
    r: &FactText,
    (lo, hi): (usize, usize),
    quoted: &[(usize, usize)],
) -> Result<(), Unsupported> {
    for j in lo..=hi {
        if quoted.iter().any(|(a, b)| (*a..=*b).contains(&j)) {
            continue;
        }
        let Some(q) = r.parts().get(j) else { break };
        match q.kind {
            Kind::Negation if !negated => {
                return Err(Unsupported::PolarityDropped(r.text(q).into()));
            }
            Kind::Polarity if r.text(q).is_ascii() && !ex.has_polarity_word(r.text(q)) => {
                return Err(Unsupported::PolarityDropped(r.text(q).into()));
            }
            _ => {}
        }
    }
    for (first, w) in r.han_polarity() {
        let f = *first as usize;
        let own = quoted
            .iter()
            .any(|(a, b)| (*a..=*b).contains(&f) && (*a..=*b).contains(&(f + 1)));
        if (lo..=hi).contains(&f) && !own && !ex.has_polarity_word(w) {
            return Err(Unsupported::PolarityDropped((*w).into()));
        }
    }
    Ok(())
}

fn is_content(k: Kind) -> bool {
    k != Kind::Filler
}

fn units(t: &FactText) -> Vec<Unit> {
    t.units()
        .into_iter()
        .map(|(first, last)| {
            let parts = t.parts().get(first..=last).unwrap_or(&[]);
            let content = parts.iter().any(|x| is_content(x.kind) && !x.key);
            let clause = parts.first().map_or(0, |x| x.clause);
            Unit {
                first,
                last,
                content,
                clause,
            }
        })
        .collect()
}

/// Distinct content units with what each says about which ref is meant:
/// an identifier (a joined run with a word in it: `payment-service`,
/// `HighCPUUsage`, `HikariPool-1`) names it outright (2), a Han character
/// half a word (0.5), any other word, number or timestamp one (1).
fn distinct_content<'a>(t: &'a FactText, units: &'a [Unit]) -> impl Iterator<Item = f64> + 'a {
    let mut seen = HashSet::new();
    units.iter().filter(|u| u.content).filter_map(move |u| {
        let parts = t.parts().get(u.first..=u.last).unwrap_or(&[]);
        // a service name is one unit however it is joined: `order-service`
        // alone identifies no one log line of order-service
        let weight = if parts.len() > 1 && is_service_name(t, parts) {
            1.0
        } else if parts.len() > 1 && parts.iter().any(|x| x.kind != Kind::Number) {
            2.0
        } else if parts.iter().all(|x| x.kind == Kind::Han) {
            0.5
        } else {
            1.0
        };
        seen.insert(unit_text(t, u)).then_some(weight)
    })
}

/// A joined run of words ending in a service word (`order-service`,
/// `api-gateway`): it names a service, which many refs share.
fn is_service_name(t: &FactText, parts: &[crate::evidence::facts::Part]) -> bool {
    parts.iter().all(|x| x.kind != Kind::Number)
        && parts.last().is_some_and(|x| {
            matches!(
                t.text(x),
                "service" | "svc" | "server" | "api" | "gateway" | "app" | "worker" | "db"
            )
        })
}

fn unit_text(t: &FactText, u: &Unit) -> String {
    (u.first..=u.last)
        .map(|i| t.text_at(i))
        .collect::<Vec<_>>()
        .join("-")
}

fn clause_text(t: &FactText, clause: u16) -> String {
    let words: Vec<&str> = t
        .parts()
        .iter()
        .filter(|x| x.clause == clause && !matches!(x.kind, Kind::Stamp(_)))
        .map(|x| t.text(x))
        .collect();
    crate::text::truncate_middle(&words.join(" "), 60)
}

fn missing(t: &FactText, u: &Unit, text: String) -> Unsupported {
    let parts = t.parts().get(u.first..=u.last).unwrap_or(&[]);
    if parts.iter().any(|x| x.kind == Kind::Negation) {
        return Unsupported::PolarityAdded(text);
    }
    if parts.len() == 1 && parts.iter().any(|x| x.kind == Kind::Polarity) {
        return Unsupported::PolarityAdded(text);
    }
    if parts.iter().any(|x| matches!(x.kind, Kind::Stamp(_))) {
        return Unsupported::FactMissing("a timestamp".into());
    }
    Unsupported::FactMissing(text)
}

/// Where unit `u` of the excerpt occurs in the ref: inclusive part ranges.
/// A run of joined parts matches ref parts that spell the same letters
/// (`HIKARIPOOL-1` and `HikariPool-1` split differently); a number alone
/// matches the same value (`27` and `27m`, `25 minutes` and `25m`); a
/// negation alone any negation; a timestamp the ref's own.
fn unit_matches(ex: &FactText, u: &Unit, r: &FactText) -> Vec<(usize, usize)> {
    let rparts = r.parts();
    let mut out = Vec::new();
    if u.first == u.last {
        let Some(p) = ex.parts().get(u.first) else {
            return out;
        };
        if let Some(st) = ex.stamp(p.kind) {
            for (j, q) in rparts.iter().enumerate() {
                if r.stamp(q.kind).is_some_and(|rs| st.renders(rs)) {
                    out.push((j, j));
                }
            }
            return out;
        }
        if p.kind == Kind::Negation {
            for (j, q) in rparts.iter().enumerate() {
                if q.kind == Kind::Negation {
                    out.push((j, j));
                }
            }
            return out;
        }
        if p.kind == Kind::Number {
            let (ta, ua) = (ex.text(p), unit_after(ex, u.first));
            for (j, q) in rparts.iter().enumerate() {
                if q.kind == Kind::Number {
                    let ub = if q.join == Join::Apart {
                        unit_after(r, j)
                    } else {
                        ""
                    };
                    if numbers_match(ta, ua, r.text(q), ub) {
                        out.push((j, j));
                    }
                }
            }
            return out;
        }
    }
    // a unit word standing apart (`0, us`) quotes the unit of a ref number (`0us`)
    if u.first == u.last
        && let Some(unit) = canonical_unit(ex.text_at(u.first)).filter(|x| !x.is_empty())
    {
        for (j, q) in rparts.iter().enumerate() {
            if q.kind == Kind::Number && number_value(r.text(q)).is_some_and(|(_, x)| x == unit) {
                out.push((j, j));
            }
        }
    }
    let target: String = (u.first..=u.last).map(|i| ex.text_at(i)).collect();
    let first_byte = target.as_bytes().first().copied();
    for (j, q) in rparts.iter().enumerate() {
        if r.text(q).as_bytes().first().copied() != first_byte {
            continue;
        }
        let mut len = 0usize;
        for t in j..rparts.len() {
            let piece = r.text_at(t);
            let Some(rest) = target.get(len..) else { break };
            if !rest.starts_with(piece) || piece.is_empty() {
                break;
            }
            len += piece.len();
            if len == target.len() {
                out.push((j, t));
                break;
            }
        }
    }
    out
}

/// One `key=value` field: its key and value parts.
struct Field {
    key: String,
    values: Vec<String>,
    /// A one-part value (`state=firing`), as opposed to free text.
    atomic: bool,
}

fn fields(t: &FactText) -> Vec<Field> {
    if t.fields_source().is_empty() {
        return Vec::new();
    }
    let mut out: Vec<Field> = Vec::new();
    let parts = t.parts();
    let mut i = 0;
    while i < parts.len() {
        let Some(p) = parts.get(i) else { break };
        if !p.key {
            i += 1;
            continue;
        }
        let mut key = Vec::new();
        while let Some(p) = parts.get(i).filter(|p| p.key) {
            key.push(t.text(p));
            i += 1;
        }
        let clause = parts.get(i).map_or(0, |p| p.clause);
        let mut values = Vec::new();
        let mut stamped = false;
        while let Some(p) = parts.get(i).filter(|p| !p.key && p.clause == clause) {
            stamped |= matches!(p.kind, Kind::Stamp(_));
            values.push(t.text(p).to_string());
            i += 1;
        }
        // timestamps compare by their fields, in the unit matching
        if !values.is_empty() && !stamped {
            let atomic = values.len() == 1;
            out.push(Field {
                key: key.join("_"),
                values,
                atomic,
            });
        }
    }
    out
}

/// A field of the excerpt whose key the ref has only with atomic values
/// none of which it shares.
fn field_conflict(ex: &FactText, r: &FactText) -> Result<(), Unsupported> {
    let ef = fields(ex);
    if ef.is_empty() {
        return Ok(());
    }
    let rf = fields(r);
    for f in &ef {
        let same: Vec<&Field> = rf.iter().filter(|x| x.key == f.key).collect();
        if same.is_empty() || !same.iter().all(|x| x.atomic) {
            continue;
        }
        let shares = same.iter().any(|x| {
            f.values.iter().any(|v| {
                x.values
                    .iter()
                    .any(|w| v == w || numbers_match(v, "", w, ""))
            })
        });
        if !shares {
            return Err(Unsupported::FieldConflict(format!(
                "{}={}",
                f.key,
                f.values.join(" ")
            )));
        }
    }
    Ok(())
}

mod conditions;

#[cfg(test)]
mod tests;

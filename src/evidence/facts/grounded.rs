//! Whether a statement says more than the evidence it rests on: the check
//! behind every finding an answer shows (ARCHITECTURE.md, "Evidence trust
//! boundary").
//!
//! An answer may paraphrase (its words are free), but it may not add a
//! fact. [`added`] compares a statement with the verified evidence texts of
//! the claims it names and reports the first thing the statement adds:
//!
//! - a *name*: an identifier (a joined or camelCase run such as
//!   `order-service`, `HikariPool-1`, `HighCPUUsage`) or a known service
//!   name that is not spelled in the evidence;
//! - a *number* or *timestamp* the evidence does not hold (compared by
//!   value and unit, `25 minutes` = `25m`; timestamps by their fields);
//! - a *negation* where the evidence negates nothing: a negated clause of
//!   the statement must rest on a negated clause of the evidence that
//!   speaks of one of its facts, so "order-service has no errors" cannot
//!   borrow the "not" of "Connection is not available";
//! - a *state or health word* (firing, resolved, healthy, ruled out,
//!   problem, 正常, 已排除, 问题...) the evidence does not say. States are
//!   compared as concepts across English and Chinese (`firing` = `触发`,
//!   `failed` = `失败`), so a Chinese answer over English logs is not
//!   over-rejected.
//!
//! - a *cause*, *scope*, *comparison*, *severity or metric* word, a service
//!   name however spelt, or facts of one clause taken from two evidence
//!   texts: the sibling modules `cause`, `scope`, `compare`, `names` and
//!   `clauses` (the caller, `evidence::answer::check_text`, runs `cause`).
//!
//! The check reads facts, not phrases: "ruled-out", "confirmed to be
//! healthy", "已经排除" and "一切正常" are caught by their state words,
//! whatever surrounds them.

use super::{FactText, Join, Kind, number_value, states, unit_after};

/// What a statement adds to its evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// An identifier or service name the evidence does not spell.
    Name(String),
    /// A number or timestamp the evidence does not hold.
    Number(String),
    /// A negation the evidence does not make about the same facts.
    Negation(String),
    /// A state, health or polarity word the evidence does not say.
    State(String),
    /// Facts of one clause that no single evidence text holds together.
    Recombined(String),
    /// A word the evidence does not ground (the allowlist,
    /// `evidence::ground`).
    Ungrounded(crate::evidence::ground::Ungrounded),
}

impl Added {
    /// Negations and state words (polarity), as opposed to names and numbers (facts).
    pub fn is_polarity(&self) -> bool {
        matches!(self, Added::Negation(_) | Added::State(_))
    }

    pub fn describe(&self) -> String {
        match self {
            Added::Name(n) => format!("names {n:?}, which its evidence does not contain"),
            Added::Number(n) => format!("states {n:?}, which its evidence does not contain"),
            Added::Negation(n) => {
                format!("negates ({n:?}) where its evidence negates nothing about the same facts")
            }
            Added::State(w) => format!("says {w:?}, which its evidence does not say"),
            Added::Recombined(f) => {
                format!("puts {f:?} in one clause, which no single evidence text says together")
            }
            Added::Ungrounded(u) => u.describe(),
        }
    }

    /// The word or fact the statement adds, as it wrote it.
    pub fn word(&self) -> &str {
        match self {
            Added::Name(w)
            | Added::Number(w)
            | Added::Negation(w)
            | Added::State(w)
            | Added::Recombined(w) => w,
            Added::Ungrounded(u) => &u.word,
        }
    }
}

/// The first thing `statement` adds to `evidence`. `names` are service
/// names known to the sources (lower case); a single-word one counts as a
/// name wherever it stands.
pub fn added<E: std::borrow::Borrow<FactText>>(
    statement: &FactText,
    evidence: &[E],
    names: &[String],
) -> Option<Added> {
    let evidence: Vec<&FactText> = evidence.iter().map(|e| e.borrow()).collect();
    let evidence = evidence.as_slice();
    let parts = statement.parts();
    let negated: Vec<u16> = parts
        .iter()
        .filter(|p| p.kind == Kind::Negation)
        .map(|p| p.clause)
        .collect();
    let clause_negated = |i: usize| parts.get(i).is_some_and(|p| negated.contains(&p.clause));
    // state words first, so "ruled-out" reads as the state it says
    for (i, q) in parts.iter().enumerate() {
        let w = statement.text(q);
        let state = match q.kind {
            Kind::Polarity => w.is_ascii(),
            Kind::Word | Kind::Filler => states::is_state_en(statement, i),
            _ => false,
        };
        if state && !states_rest_on(evidence, concept(w), clause_negated(i)) {
            return Some(Added::State(w.to_string()));
        }
    }
    if let Some(pair) = super::clauses::recombined(statement, evidence, names) {
        return Some(Added::Recombined(pair));
    }
    let han = statement
        .han_polarity()
        .iter()
        .map(|(i, w)| (*i as usize, *w))
        .chain(states::han_states(statement));
    for (i, w) in han {
        if !states_rest_on(evidence, concept(w), clause_negated(i)) {
            return Some(Added::State(w.to_string()));
        }
    }
    let mut clauses: Vec<(u16, String)> = parts
        .iter()
        .filter(|p| p.kind == Kind::Negation)
        .map(|p| (p.clause, statement.text(p).to_string()))
        .collect();
    clauses.dedup_by_key(|(c, _)| *c);
    for (clause, word) in clauses {
        if !negation_rests_on_evidence(statement, clause, evidence) {
            return Some(Added::Negation(word));
        }
    }
    None
}

/// A state the statement says rests on evidence that says it; one the
/// statement says without a negation, on evidence that says it without a
/// negation in its clause ("not available" supports no "available"). A
/// negated state is checked with its negation.
fn states_rest_on(evidence: &[&FactText], c: &str, negated: bool) -> bool {
    if negated && opposite_said(evidence, c) {
        return true;
    }
    evidence.iter().any(|e| {
        let neg: Vec<u16> = e
            .parts()
            .iter()
            .filter(|p| p.kind == Kind::Negation)
            .map(|p| p.clause)
            .collect();
        state_at(e, c)
            .into_iter()
            .any(|j| negated || !e.parts().get(j).is_some_and(|p| neg.contains(&p.clause)))
    })
}

/// The state that excludes `c` where one of the two holds: an alert that
/// is firing has not resolved, one that resolved is not firing. Only pairs
/// with no third state between them: "not healthy" is not "down".
fn opposite(c: &str) -> Option<&'static str> {
    match c {
        "firing" => Some("resolved"),
        "resolved" => Some("firing"),
        _ => None,
    }
}

/// Whether the evidence says the opposite of `c` without a negation, so a
/// statement may say `c` negated ("has not resolved" of a firing alert,
/// 告警仍未解除).
fn opposite_said(evidence: &[&FactText], c: &str) -> bool {
    opposite(c).is_some_and(|o| states_rest_on(evidence, o, false))
}

/// The word by which `text` concludes about a system rather than reports
/// a reading: a state of health or absence (healthy, normal, ruled out,
/// excluded, absent, 正常, 健康, 排除, 存在), or a problem word under a
/// negation ("no problem", "nothing wrong", "not exist", 没有问题). Such a
/// line may not stand next to a "found nothing" result, in any section.
pub fn concludes(text: &FactText) -> Option<String> {
    let parts = text.parts();
    let negated_before = |i: usize| {
        (i.saturating_sub(3)..i).any(|k| parts.get(k).is_some_and(|p| p.kind == Kind::Negation))
    };
    for (i, p) in parts.iter().enumerate() {
        let w = text.text(p);
        if !w.is_ascii() || !matches!(p.kind, Kind::Polarity | Kind::Word | Kind::Filler) {
            continue;
        }
        let c = concept(w);
        // `working set`, `fixed delay`: no state where no state stands
        if states::concept_of(w).is_some() && !states::is_state_en(text, i) {
            continue;
        }
        if CONCLUSIONS.contains(&c)
            || ((c == "problem" || matches!(w, "exist" | "exists" | "existing"))
                && negated_before(i))
        {
            return Some(w.to_string());
        }
    }
    for (i, w) in text.han_polarity() {
        if CONCLUSIONS.contains(&concept(w))
            && (concept(w) != "exist" || negated_before(*i as usize))
        {
            return Some((*w).to_string());
        }
    }
    if let Some((_, w)) = states::han_states(text)
        .into_iter()
        .find(|(_, w)| CONCLUSIONS.contains(&concept(w)))
    {
        return Some(w.to_string());
    }
    han_health_words(text)
        .into_iter()
        .find(|(i, _)| negated_before(*i))
        .map(|(_, w)| w.to_string())
        .or_else(|| states::concludes_resolved(text))
}

/// State concepts that conclude about a system rather than report a reading.
const CONCLUSIONS: &[&str] = &["healthy", "normal", "ruled", "absent", "exist"];

/// The concept a state word stands for, across English and Chinese; a word
/// without an entry stands for itself.
pub fn concept(w: &str) -> &str {
    match w {
        "firing" | "fire" | "fired" | "触发" => "firing",
        "resolved" | "recovered" | "recovering" | "恢复" | "解决" => "resolved",
        "fail" | "failed" | "failing" | "failure" | "failures" | "失败" | "故障" => "failed",
        "success" | "successful" | "successfully" | "succeeded" | "succeed" | "成功" => "success",
        "normal" | "normally" | "正常" => "normal",
        "abnormal" | "异常" => "abnormal",
        "healthy" | "ok" | "fine" | "健康" | "良好" | "无恙" | "完好" => "healthy",
        "available" | "可用" => "available",
        "above" | "over" | "exceed" | "exceeded" | "exceeds" | "exceeding" | "higher" | "超过"
        | "高于" => "above",
        "below" | "under" | "lower" | "低于" => "below",
        "increase" | "increased" | "increasing" | "rising" | "升高" | "上升" | "增加" => {
            "increase"
        }
        "decrease" | "decreased" | "decreasing" | "falling" | "dropped" | "降低" | "下降"
        | "减少" => "decrease",
        "stopped" | "停止" => "stopped",
        "started" | "启动" => "started",
        "down" | "dead" | "宕机" => "down",
        "crashed" | "crash" | "crashing" | "崩溃" => "crashed",
        "stable" | "稳定" => "stable",
        "ruled" | "rule" | "excluded" | "exclude" | "eliminated" | "排除" => "ruled",
        "confirmed" | "确认" => "confirmed",
        "nonexistent" | "absent" => "absent",
        "存在" => "exist",
        "problem" | "problems" | "issue" | "issues" | "wrong" | "问题" => "problem",
        "fault" | "faults" | "faulty" => "failed",
        "lack" | "lacks" | "lacking" | "absence" | "missing" => "lack",
        other => states::concept_of(other).unwrap_or(other),
    }
}

/// Chinese health and conclusion words outside the excerpt rules' state
/// words (问题 "problem", 没事 "nothing wrong", 一切 "everything").
const HEALTH_HAN: &[&str] = &["问题", "没事", "无碍"];

fn han_health_words(t: &FactText) -> Vec<(usize, &'static str)> {
    super::states::han_pairs(t, HEALTH_HAN)
}

/// Part indices where `e` says the state concept `c` (an English or
/// Chinese word of it).
fn state_at(e: &FactText, c: &str) -> Vec<usize> {
    let mut out: Vec<usize> = e
        .parts()
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            let w = e.text(p);
            w.is_ascii()
                && matches!(p.kind, Kind::Polarity | Kind::Word | Kind::Filler)
                && concept(w) == c
        })
        .map(|(j, _)| j)
        .collect();
    out.extend(
        e.han_polarity()
            .iter()
            .map(|(i, w)| (*i as usize, *w))
            .chain(han_health_words(e))
            .chain(states::han_states(e))
            .filter(|(_, w)| concept(w) == c)
            .map(|(i, _)| i),
    );
    out
}

/// Whether `e` spells the identifier `key`, or its singular (`ERRORs`,
/// split by case into `erro` `rs`, is the plural of `ERROR`).
pub(super) fn spells(e: &FactText, key: &str) -> bool {
    !run_at(e, key).is_empty()
        || key
            .strip_suffix('s')
            .is_some_and(|k| !k.is_empty() && !run_at(e, k).is_empty())
}

pub(super) fn has_word(e: &FactText, w: &str) -> bool {
    e.tokens().any(|t| t == w) || !run_at(e, w).is_empty()
}

/// The letters of a joined run, without a trailing filler part (the `s`
/// of `payment-service's`).
pub(super) fn ident_key(t: &FactText, first: usize, mut last: usize) -> String {
    while last > first && t.parts().get(last).is_some_and(|p| p.kind == Kind::Filler) {
        last -= 1;
    }
    (first..=last).map(|i| t.text_at(i)).collect()
}

/// First part indices of the runs of consecutive parts of `e` that spell `key`.
fn run_at(e: &FactText, key: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let first_byte = key.as_bytes().first().copied();
    for j in 0..e.parts().len() {
        if e.text_at(j).as_bytes().first().copied() != first_byte {
            continue;
        }
        let mut len = 0usize;
        for k in j..e.parts().len() {
            let piece = e.text_at(k);
            let Some(rest) = key.get(len..) else { break };
            if piece.is_empty() || !rest.starts_with(piece) {
                break;
            }
            len += piece.len();
            if len == key.len() {
                out.push(j);
                break;
            }
        }
    }
    out
}

/// Part indices of `e`'s numbers equal to `text` (with the unit word after it).
pub(super) fn number_at(e: &FactText, text: &str, unit: &str) -> Vec<usize> {
    e.parts()
        .iter()
        .enumerate()
        .filter(|(j, q)| {
            q.kind == Kind::Number && !(has_unit(text, unit) && in_identifier(e, *j)) && {
                let ub = if q.join == Join::Apart {
                    unit_after(e, *j)
                } else {
                    ""
                };
                crate::evidence::ground::same_quantity(text, unit, e.text(q), ub)
            }
        })
        .map(|(j, _)| j)
        .collect()
}

/// Whether a statement number carries a unit (`1 hour`, `30s`).
fn has_unit(text: &str, unit: &str) -> bool {
    !unit.is_empty() || number_value(text).is_some_and(|(_, u)| !u.is_empty())
}

/// Whether `e`'s number part `j` is the unitless tail of an identifier
/// (`HikariPool-1`, `db-01`), not a `key=value` value: "timed out after 1
/// hour" must not rest on the `1` of `HikariPool-1`.
pub(crate) fn in_identifier(e: &FactText, j: usize) -> bool {
    let parts = e.parts();
    let Some(q) = parts.get(j) else { return false };
    q.join == Join::Joined
        && j > 0
        && parts
            .get(j - 1)
            .is_some_and(|p| !p.key && p.kind != Kind::Number)
        && number_value(e.text(q)).is_none_or(|(_, u)| u.is_empty())
}

/// A negated clause of the statement rests on the evidence when a clause of
/// the evidence negates and speaks of one of the statement clause's facts;
/// when none of its facts occur in the evidence at all (a Chinese
/// paraphrase of an English line), any negation of the evidence will do.
fn negation_rests_on_evidence(s: &FactText, clause: u16, evidence: &[&FactText]) -> bool {
    let in_clause = |i: usize| s.parts().get(i).is_some_and(|p| p.clause == clause);
    let items: Vec<(usize, usize)> = s
        .units()
        .into_iter()
        .filter(|&(first, _)| {
            in_clause(first)
                && s.parts()
                    .get(first)
                    .is_some_and(|p| matches!(p.kind, Kind::Word | Kind::Number | Kind::Han))
        })
        .collect();
    // states by concept, so 可用 finds "available"
    let states: Vec<&str> = s
        .parts()
        .iter()
        .enumerate()
        .filter(|(i, p)| in_clause(*i) && p.kind == Kind::Polarity && s.text(p).is_ascii())
        .map(|(_, p)| concept(s.text(p)))
        .chain(
            s.han_polarity()
                .iter()
                .map(|(i, w)| (*i as usize, *w))
                .chain(states::han_states(s))
                .filter(|(i, _)| in_clause(*i))
                .map(|(_, w)| concept(w)),
        )
        .collect();
    // the clause's Chinese words by their English glosses, so 无法获取连接
    // finds the "connection" of "Connection is not available"
    let han: String = s
        .parts()
        .iter()
        .enumerate()
        .filter(|(i, p)| in_clause(*i) && matches!(p.kind, Kind::Han | Kind::Polarity))
        .map(|(_, p)| s.text(p))
        .filter(|t| !t.is_ascii())
        .collect();
    let glossed = crate::evidence::lexicon::lexicon().english_of(&han);
    let mut any_occurs = false;
    for e in evidence {
        let negated: Vec<u16> = e
            .parts()
            .iter()
            .filter(|p| p.kind == Kind::Negation)
            .map(|p| p.clause)
            .collect();
        let mut at: Vec<usize> = Vec::new();
        for &(first, last) in &items {
            if last > first {
                at.extend(run_at(e, &ident_key(s, first, last)));
                continue;
            }
            let text = s.text_at(first);
            match s.parts().get(first).map(|p| p.kind) {
                Some(Kind::Number) => at.extend(number_at(e, text, unit_after(s, first))),
                _ => at.extend((0..e.parts().len()).filter(|&j| e.text_at(j) == text)),
            }
        }
        // "has not resolved" rests on one text that says the alert is
        // firing and names what the clause names
        let speaks_of_it = items.is_empty() || !at.is_empty();
        if speaks_of_it && states.iter().any(|c| opposite_said(&[*e], c)) {
            return true;
        }
        for c in &states {
            at.extend(state_at(e, c));
        }
        for w in &glossed {
            at.extend((0..e.parts().len()).filter(|&j| e.text_at(j) == *w));
        }
        any_occurs |= !at.is_empty();
        if at.iter().any(|&j| {
            e.parts()
                .get(j)
                .is_some_and(|p| negated.contains(&p.clause))
        }) {
            return true;
        }
    }
    !any_occurs && evidence.iter().any(|e| e.has_negation())
}

#[cfg(test)]
mod tests;

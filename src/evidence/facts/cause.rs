//! Cause words: a statement that one fact caused another says more than
//! either fact. "payment-service CPU at 92 caused the order-service
//! timeouts" is two verified facts and one unverified link; each fact has
//! its evidence, the link has none. So a statement with a cause word
//! (caused, because, due to, leads to, results in, root cause, a clause-
//! opening "so", "which is why"; 导致, 因为,
//! 由于, 引起, 造成, 根因...) must rest on *one* evidence text that states
//! a cause itself and holds every fact of the statement's sentence: the
//! link is then the evidence's, not the writer's.
//!
//! A hedged label ("likely cause", 可能根因) is what the answer's "Likely
//! cause" section already says of a root_cause claim the Verifier
//! checked; the caller says when it may stand.

use super::grounded::added;
use super::{FactText, Join, Kind};

/// English cause words that state a link on their own.
fn is_cause_en(w: &str) -> bool {
    matches!(
        w,
        "cause"
            | "caused"
            | "causes"
            | "causing"
            | "because"
            | "due"
            | "owing"
            | "therefore"
            | "hence"
            | "consequently"
            | "consequence"
            | "thus"
            | "culprit"
            | "triggered"
            | "triggers"
            | "triggering"
            | "attributed"
            | "attributable"
    )
}

/// English verbs that state a link with the word after them: "leads
/// to", "results in", "stems from".
fn is_cause_pair_en(w: &str, next: &str) -> bool {
    matches!(
        (w, next),
        ("lead" | "leads" | "led" | "leading", "to")
            | (
                "result" | "results" | "resulted" | "resulting",
                "in" | "from"
            )
            | ("stem" | "stems" | "stemmed" | "stemming", "from")
            | ("responsible", "for")
            | ("in", "turn")
            | ("root", "cause" | "causes")
    )
}

/// Chinese cause words (two characters).
const CAUSE_HAN: &[&str] = &[
    "导致", "因为", "由于", "引起", "造成", "致使", "引发", "诱发", "根因", "原因", "所以", "因此",
    "因而", "起因", "源于", "归因", "导因", "以致", "使得", "从而", "进而",
];

/// Hedges that make "cause" a label: "likely cause", 可能根因.
fn is_hedge_en(w: &str) -> bool {
    matches!(
        w,
        "likely" | "possible" | "probable" | "potential" | "suspected" | "candidate"
    )
}

const HEDGE_HAN: &[&str] = &["可能", "疑似", "潜在"];

/// The cause words of `t`: (part index, word). A hedged label is left out
/// when `hedged_ok`.
pub fn cause_words(t: &FactText, hedged_ok: bool) -> Vec<(usize, String)> {
    let parts = t.parts();
    let mut out = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let w = t.text(p);
        if w.is_ascii() && matches!(p.kind, Kind::Word | Kind::Filler | Kind::Polarity) {
            let next = t.text_at(i + 1);
            // the noun after a hedge: "likely cause", "possible causes"
            let hedged = matches!(w, "cause" | "causes") && i > 0 && is_hedge_en(t.text_at(i - 1));
            if is_cause_pair_en(w, next) {
                if !(hedged_ok && w == "root" && i > 0 && is_hedge_en(t.text_at(i - 1))) {
                    out.push((i, format!("{w} {next}")));
                }
            } else if w == "result" && i > 1 && t.text_at(i - 1) == "a" && t.text_at(i - 2) == "as"
            {
                // "as a result"
                out.push((i, "as a result".into()));
            } else if w == "so" && opens_clause(t, i) && !is_so_idiom(next) {
                // "X, so Y": the link between two clauses ("so far", "so
                // that" and the intensifier "so high" are not links)
                out.push((i, w.to_string()));
            } else if w == "why" && i > 0 && matches!(t.text_at(i - 1), "is" | "that's" | "s") {
                // "which is why", "that's why"
                out.push((i, format!("{} why", t.text_at(i - 1))));
            } else if is_cause_en(w)
                && !(hedged_ok && hedged)
                && !(i > 0 && t.text_at(i - 1) == "root")
            {
                out.push((i, w.to_string()));
            }
            continue;
        }
        let Some(q) = parts.get(i + 1) else { continue };
        if q.join != Join::HanRun {
            continue;
        }
        if let Some(c) = super::states::pair_in(CAUSE_HAN, w, t.text(q)) {
            // `可能根因`, `可能的原因`
            let hedged = HEDGE_HAN.iter().any(|h| {
                han_before(t, i).ends_with(h)
                    || (i > 0 && t.text_at(i - 1) == "的" && han_before(t, i - 1).ends_with(h))
            });
            if !(hedged_ok && hedged && matches!(c, "根因" | "原因")) {
                out.push((i, c.to_string()));
            }
        }
    }
    out
}

/// Whether part `i` opens its clause, or follows "and" that does
/// ("..., and so order-service timed out").
fn opens_clause(t: &FactText, i: usize) -> bool {
    let parts = t.parts();
    let first = |j: usize| j == 0 || parts[j - 1].clause != parts[j].clause;
    first(i) || (i > 0 && t.text_at(i - 1) == "and" && first(i - 1))
}

/// Words after a clause-opening "so" that make it something other than a
/// link: "so far", "so that" (purpose), "so many", "so long as".
fn is_so_idiom(next: &str) -> bool {
    matches!(
        next,
        "far" | "that" | "much" | "many" | "long" | "as" | "to" | "called" | "on" | ""
    )
}

/// Up to two Han characters right before part `i`.
fn han_before(t: &FactText, i: usize) -> String {
    (i.saturating_sub(2)..i).map(|k| t.text_at(k)).collect()
}

/// Whether `t` states a cause anywhere (any cause word, a hedged one too:
/// a runbook's "Likely causes" states causes).
pub fn states_cause(t: &FactText) -> bool {
    !cause_words(t, false).is_empty()
}

/// The first cause word of `text` that no single evidence text backs:
/// every sentence (or quoted span) with a cause word must have all its
/// facts (names, numbers, times, states, negations) in one evidence text
/// that states a cause itself. `hedged_ok`: a hedged label ("likely
/// cause", 可能根因) may stand (the statement rests on a root_cause claim
/// with observed evidence).
pub fn unbacked_cause<E: std::borrow::Borrow<FactText>>(
    text: &str,
    evidence: &[E],
    names: &[String],
    hedged_ok: bool,
) -> Option<String> {
    for scope in scopes(text) {
        let st = FactText::new(&scope);
        let Some((_, word)) = cause_words(&st, hedged_ok).into_iter().next() else {
            continue;
        };
        let backed = evidence
            .iter()
            .map(|e| e.borrow())
            .any(|e| states_cause(e) && added(&st, std::slice::from_ref(e), names).is_none());
        if !backed {
            return Some(word);
        }
    }
    None
}

/// The sentences of `text`, with each quoted span a scope of its own (a
/// quotation of one evidence text may carry that text's cause words).
fn scopes(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut outside = String::new();
    let mut quoted = String::new();
    let mut in_quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(close) = in_quote {
            if c == close {
                out.push(std::mem::take(&mut quoted));
                in_quote = None;
            } else {
                quoted.push(c);
            }
            continue;
        }
        let close = match c {
            '"' => Some('"'),
            '“' => Some('”'),
            '「' => Some('」'),
            '『' => Some('』'),
            _ => None,
        };
        if close.is_some() {
            in_quote = close;
            continue;
        }
        let ends = matches!(c, ';' | '。' | '；' | '!' | '?' | '！' | '？' | '\n')
            || (c == '.' && chars.peek().is_none_or(|n| n.is_whitespace()));
        outside.push(c);
        if ends {
            out.push(std::mem::take(&mut outside));
        }
    }
    out.push(outside);
    out.push(quoted);
    out.retain(|s| !s.trim().is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str, hedged_ok: bool) -> Vec<String> {
        cause_words(&FactText::new(s), hedged_ok)
            .into_iter()
            .map(|(_, w)| w)
            .collect()
    }

    #[test]
    fn finds_cause_words_in_english_and_chinese() {
        for s in [
            "A caused B",
            "B because of A",
            "B due to A",
            "A leads to B",
            "A resulted in B",
            "A is the root cause of B",
            "A 导致 B",
            "由于 A，B 超时",
            "B 的原因是 A",
            "A 引起了 B",
            "A happened; as a result, B timed out",
            "A 使得 B 超时",
        ] {
            assert!(!words(s, false).is_empty(), "{s}");
        }
        assert!(words("A is firing at 92", false).is_empty());
        assert!(words("A 正在触发", false).is_empty());
    }

    #[test]
    fn a_hedged_label_stands_only_when_allowed() {
        for s in [
            "Likely cause on payment-service: 3 ERROR lines",
            "payment-service 的可能根因：告警触发期间记录了 3 条 ERROR 日志",
            "the probable root cause is the pool",
        ] {
            assert!(words(s, true).is_empty(), "{s}");
            assert!(!words(s, false).is_empty(), "{s}");
        }
        // a hedge does not excuse a link verb
        assert!(!words("A likely caused B", true).is_empty());
        assert!(!words("A 可能导致 B", true).is_empty());
    }

    #[test]
    fn scopes_are_sentences_and_quotes() {
        assert_eq!(
            scopes("A is 31.2 here. B \"C caused D\" E; F"),
            vec!["A is 31.2 here.", "C caused D", " B  E;", " F"]
        );
    }
}

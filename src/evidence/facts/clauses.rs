//! Facts of one clause come from one evidence text. A statement that
//! names two claims may not recombine their facts: "order-service has a
//! critical HighCPUUsage alert firing at 92" takes the service from one
//! alert and the alert and value from another; each fact is in the
//! evidence, the sentence is not. So within one clause of a statement
//! (split further at "and", "while", 同时...), the identifiers, service
//! names and numbers must all occur in one evidence text.
//!
//! Timestamps are left out: a time range ("from 22:55 to 23:06") spans
//! the first and last line of a group by design.

use super::grounded::{has_word, ident_key, number_at, spells};
use super::{FactText, Kind, unit_after};

/// Words that join two clauses into one sentence.
fn is_conjunction_en(w: &str) -> bool {
    matches!(
        w,
        "and" | "while" | "whereas" | "but" | "also" | "plus" | "meanwhile" | "whilst" | "though"
    )
}

const CONJUNCTIONS_HAN: &[&str] = &["同时", "并且", "而且", "以及", "另外", "此外", "但是"];

/// A clause index and the conjunctions before a part within it.
type SubClause = (u16, u16);

/// Words that refer back to a service named before ("Its pool", 其连接池).
fn is_pronoun(w: &str) -> bool {
    matches!(w, "its" | "it" | "their" | "they" | "其" | "它" | "该")
}

/// The last part of a service name: `order-service`, `api-gateway`.
fn is_service_word(w: &str) -> bool {
    matches!(
        w,
        "service" | "svc" | "server" | "api" | "gateway" | "app" | "worker" | "db"
    )
}

#[derive(Clone)]
enum Item {
    Ident(String),
    Name(String),
    Number(String, &'static str),
}

/// The first clause of `statement` whose facts no single evidence text
/// holds together, as (fact, fact) it paired.
pub fn recombined(
    statement: &FactText,
    evidence: &[&FactText],
    names: &[String],
) -> Option<String> {
    let parts = statement.parts();
    // sub-clause of each part: its clause, split at conjunctions
    let mut sub: Vec<SubClause> = Vec::with_capacity(parts.len());
    let mut split: u16 = 0;
    for (i, p) in parts.iter().enumerate() {
        let w = statement.text(p);
        let han_pair = format!("{w}{}", statement.text_at(i + 1));
        if (w.is_ascii() && is_conjunction_en(w))
            || (!w.is_ascii() && CONJUNCTIONS_HAN.contains(&han_pair.as_str()))
            || (w == "和" || w == "及" || w == "而")
        {
            split = split.saturating_add(1);
        }
        sub.push((p.clause, split));
    }
    let mut groups: Vec<(SubClause, Vec<(Item, String)>)> = Vec::new();
    // the service a pronoun refers back to, and the sub-clauses with one
    let mut last_service: Option<(Item, String)> = None;
    let mut inherited: Vec<(SubClause, (Item, String))> = Vec::new();
    let mut with_service: Vec<SubClause> = Vec::new();
    for (first, last) in statement.units() {
        let Some(p) = parts.get(first) else { continue };
        let text = statement.text(p);
        if last == first && is_pronoun(text) {
            if let Some(at) = sub.get(first).copied()
                && !inherited.iter().any(|(k, _)| *k == at)
                && let Some(svc) = last_service.clone()
            {
                inherited.push((at, svc));
            }
            continue;
        }
        let shown = (first..=last)
            .map(|k| statement.text_at(k))
            .collect::<Vec<_>>()
            .join("-");
        let item = if last > first {
            let key = ident_key(statement, first, last);
            if key.is_empty() || !evidence.iter().any(|e| spells(e, &key)) {
                continue;
            }
            Item::Ident(key)
        } else {
            match p.kind {
                // a number no text holds as written (a fraction of a unit,
                // an approximation) is the allowlist's to judge, not a fact
                // to place in one text
                Kind::Number
                    if text != "one"
                        && evidence.iter().any(|e| {
                            !number_at(e, text, unit_after(statement, first)).is_empty()
                        }) =>
                {
                    Item::Number(text.to_string(), unit_after(statement, first))
                }
                Kind::Word | Kind::Filler if names.iter().any(|n| n == text) => {
                    Item::Name(text.to_string())
                }
                _ => continue,
            }
        };
        let Some(at) = sub.get(first).copied() else {
            continue;
        };
        let service = matches!(item, Item::Name(_))
            || (last > first && is_service_word(statement.text_at(last)));
        if service {
            last_service = Some((item.clone(), shown.clone()));
            with_service.push(at);
        }
        push(&mut groups, at, (item, shown));
    }
    // a pronoun refers back only where its clause names no service itself
    for (at, svc) in inherited {
        if !with_service.contains(&at) && groups.iter().any(|(k, _)| *k == at) {
            push(&mut groups, at, svc);
        }
    }
    for (_, items) in groups.iter().filter(|(_, items)| items.len() >= 2) {
        let held = |e: &FactText, item: &Item| match item {
            Item::Ident(key) => spells(e, key),
            Item::Name(n) => has_word(e, n),
            Item::Number(n, unit) => !number_at(e, n, unit).is_empty(),
        };
        let together = evidence
            .iter()
            .any(|e| items.iter().all(|(item, _)| held(e, item)));
        if !together {
            let shown: Vec<&str> = items.iter().map(|(_, t)| t.as_str()).collect();
            return Some(shown.join(" + "));
        }
    }
    None
}

fn push(groups: &mut Vec<(SubClause, Vec<(Item, String)>)>, at: SubClause, item: (Item, String)) {
    match groups.iter_mut().find(|(k, _)| *k == at) {
        Some((_, items)) => items.push(item),
        None => groups.push((at, vec![item])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPU: &str =
        "alertname=HighCPUUsage service=payment-service severity=critical state=firing value=92";
    const LAT: &str = "alertname=HighRequestLatency service=order-service severity=warning state=firing value=31.2";

    fn check(s: &str) -> Option<String> {
        recombined(
            &FactText::new(s),
            &[&FactText::new(CPU), &FactText::new(LAT)],
            &[],
        )
    }

    #[test]
    fn facts_of_two_texts_in_one_clause_fail() {
        for s in [
            "order-service has a critical HighCPUUsage alert firing at 92.",
            "payment-service HighRequestLatency is firing at 31.2.",
            "order-service 的 HighCPUUsage 告警数值为 92。",
            "payment-service HighCPUUsage is firing at 92. Its HighRequestLatency is at 31.2.",
            "payment-service 的 HighCPUUsage 为 92，其 HighRequestLatency 为 31.2。",
        ] {
            assert!(check(s).is_some(), "{s}");
        }
        for s in [
            "payment-service HighCPUUsage is firing at 92, order-service HighRequestLatency at 31.2.",
            "payment-service HighCPUUsage is firing at 92 and order-service HighRequestLatency at 31.2.",
            "payment-service 的 HighCPUUsage 告警为 92，同时 order-service 的 HighRequestLatency 告警为 31.2。",
            "order-service HighRequestLatency is firing. Its value is 31.2.",
        ] {
            assert_eq!(check(s), None, "{s}");
        }
    }
}

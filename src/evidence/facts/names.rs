//! Known service names however a statement spells them: `payment
//! service`, `paymentservice`, `payment‑service` (any dash, see
//! [`super::normalize`]), and the distinctive stem alone (`inventory
//! timed out`). A name the statement mentions must be in its evidence.

use super::{FactText, Kind};

/// First segments of service names that are ordinary words too: alone
/// they name nothing ("in order to", "user requests").
const COMMON_STEMS: &[&str] = &[
    "order", "orders", "user", "users", "api", "app", "web", "service", "server", "data", "db",
    "core", "main", "common", "base", "admin", "auth", "front", "frontend", "backend", "worker",
    "job", "jobs", "test", "demo", "new", "old", "log", "logs", "cache", "search", "account",
    "accounts", "cart", "product", "products", "shop", "store", "mail", "message", "messages",
    "queue", "config", "gateway", "proxy", "edge", "public", "internal", "billing", "report",
    "reports", "file", "files", "event", "events", "task", "tasks", "metrics", "alert", "alerts",
];

/// The first known service name `statement` mentions that no evidence
/// text holds, as the statement wrote it.
pub fn unsupported_name(
    statement: &FactText,
    evidence: &[&FactText],
    names: &[String],
) -> Option<String> {
    let parts = statement.parts();
    let texts: Vec<&str> = statement.tokens().collect();
    for name in names {
        let segs: Vec<&str> = name
            .split(|c: char| !c.is_alphanumeric())
            .filter(|s| !s.is_empty())
            .collect();
        if segs.len() < 2 {
            continue;
        }
        let key: String = segs.concat();
        let stem = segs
            .first()
            .copied()
            .filter(|s| s.chars().count() >= 5 && !COMMON_STEMS.contains(s))
            .filter(|s| {
                names
                    .iter()
                    .filter(|n| n.split(|c: char| !c.is_alphanumeric()).next() == Some(*s))
                    .count()
                    == 1
            });
        for i in 0..texts.len() {
            let whole = texts
                .get(i..i + segs.len())
                .is_some_and(|w| w.iter().zip(&segs).all(|(a, b)| a == b));
            let glued = texts.get(i).is_some_and(|t| *t == key);
            let alone = stem.is_some_and(|s| {
                texts
                    .get(i)
                    .is_some_and(|t| *t == s || t.strip_suffix('s') == Some(s))
                    && parts
                        .get(i)
                        .is_some_and(|p| matches!(p.kind, Kind::Word | Kind::Filler))
            });
            if !(whole || glued || alone) {
                continue;
            }
            let word = texts.get(i).copied().unwrap_or_default();
            let held = evidence.iter().any(|e| {
                let all: String = e.tokens().collect();
                all.contains(&key)
                    || (alone
                        && e.tokens()
                            .any(|t| t == word || stem.is_some_and(|s| t == s)))
            });
            if !held {
                let n = if whole { segs.len() } else { 1 };
                return Some(texts.get(i..i + n).unwrap_or_default().join(" "));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(s: &str, e: &str) -> Option<String> {
        let names: Vec<String> = ["payment-service", "order-service", "inventory-service"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        unsupported_name(&FactText::new(s), &[&FactText::new(e)], &names)
    }

    const LOG: &str = "ERROR order-service HikariPool-1 - Connection is not available";

    #[test]
    fn a_name_however_spelt_must_be_in_the_evidence() {
        for s in [
            "the payment service times out",
            "paymentservice times out",
            "payment\u{2011}service times out",
            "inventory timed out",
            "Payment Service errors",
        ] {
            assert!(check(s, LOG).is_some(), "{s}");
        }
        for s in [
            "the order service times out",
            "orderservice connection is not available",
            "in order to check the pool",
            "order-service connection is not available",
        ] {
            assert_eq!(check(s, LOG), None, "{s}");
        }
        assert_eq!(
            check(
                "the payment service is slow",
                "payment-service HighCPUUsage"
            ),
            None
        );
        assert_eq!(
            check("payment is slow", "payment-service HighCPUUsage"),
            None
        );
        // a word the evidence itself says is quoted, not a name added
        assert_eq!(
            check(
                "JOIN payments p took 28410ms",
                "Slow query: JOIN payments p took 28410ms"
            ),
            None
        );
    }
}

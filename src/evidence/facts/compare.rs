//! Comparison, severity and metric words an answer may not add (red team
//! H6, H8). "CPU is less than 90%" turns "above 90%" around; "memory is
//! at 92" moves a CPU reading to another metric; "HighCPUUsage is only a
//! warning" lowers a critical alert; "average latency" is not p99.
//!
//! Comparisons are states (concepts `above` / `below`, the ones of
//! `grounded::concept`); severities and metric names are facts. Either
//! may be said only when the evidence says it, verbatim or as the same
//! concept in the other language.

use super::grounded::{Added, concept, number_at};
use super::{FactText, Join, Kind};

/// The comparison concept of English part `i` of `t`, read with its
/// neighbours ("less than", "at least", "within 90%"), if it is one.
fn comparison_en(t: &FactText, i: usize) -> Option<&'static str> {
    let w = t.text_at(i);
    let next = t.text_at(i + 1);
    let prev = if i > 0 { t.text_at(i - 1) } else { "" };
    match w {
        "less" | "fewer" | "smaller" if next == "than" => Some("below"),
        "more" | "greater" | "larger" | "bigger" if next == "than" => Some("above"),
        "most" if prev == "at" => Some("below"),
        "least" if prev == "at" => Some("above"),
        "within" => Some("below"),
        _ => None,
    }
}

/// Whether part `i` is a number with a time unit (`30s`, `5min`).
fn is_duration(t: &FactText, i: usize) -> bool {
    t.parts().get(i).is_some_and(|p| p.kind == Kind::Number)
        && super::number_value(t.text_at(i))
            .is_some_and(|(_, u)| matches!(u, "ns" | "us" | "ms" | "s" | "min" | "h" | "d"))
}

/// "within 30 seconds" over "timed out after 30000ms" restates a time
/// limit, not a comparison with a reading: the duration at part `i` is
/// one an evidence text holds without comparing it ("p99 latency above
/// 2s" makes "within 2s" a comparison again).
fn time_limit(t: &FactText, i: usize, evidence: &[&FactText]) -> bool {
    is_duration(t, i)
        && evidence
            .iter()
            .any(|e| !number_at(e, t.text_at(i), "").is_empty() && !says_comparison(e, "above"))
}

/// Chinese comparison words: (word, concept).
const COMPARISON_HAN: &[(&str, &str)] = &[
    ("小于", "below"),
    ("少于", "below"),
    ("以下", "below"),
    ("不足", "below"),
    ("不到", "below"),
    ("以内", "below"),
    ("大于", "above"),
    ("多于", "above"),
    ("以上", "above"),
    ("高达", "above"),
    ("超出", "above"),
];

/// The severity or metric concept of a word, across English and Chinese.
fn fact_concept(w: &str) -> Option<&'static str> {
    Some(match w {
        "critical" | "severe" | "严重" | "紧急" => "critical",
        "warning" | "warn" | "警告" => "warning",
        "minor" | "轻微" => "minor",
        "major" | "重大" => "major",
        "memory" | "mem" | "ram" | "内存" => "memory",
        "cpu" => "cpu",
        "disk" | "磁盘" | "硬盘" => "disk",
        "heap" => "heap",
        "latency" | "延迟" | "延时" => "latency",
        "average" | "avg" | "mean" | "平均" => "average",
        "median" | "中位" => "median",
        _ => return None,
    })
}

/// Han pairs of `t` (first part index, the two characters).
fn han_pairs(t: &FactText) -> Vec<(usize, String)> {
    let parts = t.parts();
    let mut out = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let Some(q) = parts.get(i + 1) else { break };
        if q.join == Join::HanRun {
            out.push((i, format!("{}{}", t.text(p), t.text(q))));
        }
    }
    out
}

/// Whether `e` says the comparison concept `c`: a polarity word of it
/// (above, exceeds, 超过...) or a comparison word.
fn says_comparison(e: &FactText, c: &str) -> bool {
    (0..e.parts().len()).any(|j| {
        let w = e.text_at(j);
        (w.is_ascii() && concept(w) == c) || comparison_en(e, j) == Some(c)
    }) || han_pairs(e)
        .iter()
        .any(|(_, p)| concept(p) == c || COMPARISON_HAN.iter().any(|(w, k)| w == p && *k == c))
}

/// Whether `e` names the severity or metric concept `c`.
fn says_fact(e: &FactText, c: &str) -> bool {
    e.tokens().any(|w| fact_concept(w) == Some(c))
        || han_pairs(e).iter().any(|(_, p)| fact_concept(p) == Some(c))
}

/// The first comparison, severity or metric word of `statement` its
/// evidence does not say.
pub fn unsupported_word(statement: &FactText, evidence: &[&FactText]) -> Option<Added> {
    for (i, p) in statement.parts().iter().enumerate() {
        let w = statement.text(p);
        if !w.is_ascii() || !matches!(p.kind, Kind::Word | Kind::Filler | Kind::Polarity) {
            continue;
        }
        if let Some(c) = comparison_en(statement, i)
            && !(w == "within" && time_limit(statement, i + 1, evidence))
            && !evidence.iter().any(|e| says_comparison(e, c))
        {
            return Some(Added::State(w.to_string()));
        }
        if let Some(c) = fact_concept(w)
            && !evidence.iter().any(|e| says_fact(e, c))
        {
            return Some(Added::Name(w.to_string()));
        }
    }
    for (i, pair) in han_pairs(statement) {
        if let Some((_, c)) = COMPARISON_HAN.iter().find(|(w, _)| *w == pair) {
            // `30 秒以内` is a time, not a comparison
            let timed = pair == "以内" && i > 0 && time_limit(statement, i - 1, evidence);
            if !timed && !evidence.iter().any(|e| says_comparison(e, c)) {
                return Some(Added::State(pair));
            }
        }
        if let Some(c) = fact_concept(&pair)
            && !evidence.iter().any(|e| says_fact(e, c))
        {
            return Some(Added::Name(pair));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPU: &str = "alertname=HighCPUUsage service=payment-service severity=critical state=firing value=92% summary=CPU usage above 90%";
    const LOG: &str = "ERROR order-service HikariPool-1 - Connection is not available, request timed out after 30000ms";

    fn check(s: &str, e: &str) -> Option<Added> {
        unsupported_word(&FactText::new(s), &[&FactText::new(e)])
    }

    #[test]
    fn comparisons_severities_and_metrics_must_be_in_the_evidence() {
        let lat = "p99 latency of order-service above 2s";
        assert!(check("order-service p99 latency is within 2s.", lat).is_some());
        for s in [
            "payment-service CPU is less than 90%.",
            "payment-service CPU is at most 92%.",
            "payment-service 的 CPU 使用率小于 90%。",
            "payment-service 的 CPU 在 90% 以下。",
            "payment-service memory usage is at 92.",
            "payment-service 的内存使用率为 92%。",
            "HighCPUUsage is a warning.",
            "HighCPUUsage 只是轻微告警。",
            "payment-service average CPU is 92%.",
        ] {
            assert!(check(s, CPU).is_some(), "{s}");
        }
        for s in [
            "payment-service CPU is more than 90%.",
            "payment-service 的 CPU 使用率大于 90%，级别严重。",
            "payment-service CPU is above 90%, a critical alert.",
            "payment-service 的 CPU 超过 90%。",
        ] {
            assert_eq!(check(s, CPU), None, "{s}");
        }
        // a time limit is no comparison with a reading
        assert_eq!(
            check(
                "order-service could not get a connection within 30 seconds.",
                LOG
            ),
            None
        );
        assert_eq!(check("order-service 在 30 秒以内未获取到连接。", LOG), None);
    }
}

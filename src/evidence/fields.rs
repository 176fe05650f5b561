//! Fields, not words, say who said what. A log ref's text is its record's
//! fields (timestamp, level, service: `tools::logs` writes them first)
//! and then its free message. A statement that a service logged at a
//! level is grounded only by a record whose fields say that level and
//! that service, never by words inside a message: a line of
//! checkout-service that quotes `service=payment-service level=ERROR` is
//! still checkout-service's INFO line.

use crate::vocab::dto::VerifiedEvidence;
use crate::vocab::level::Level;
use crate::vocab::tool::QUERY_LOGS;

/// A log record's fields: its level and service (lower case).
fn record(text: &str) -> Option<(Level, String)> {
    let mut it = text.split_whitespace();
    let ts = it.next()?;
    if !ts.contains(':') {
        return None;
    }
    let level = Level::parse(it.next()?)?;
    let service = it.next()?.to_lowercase();
    Some((level, service))
}

/// Service names a message quotes as a field (`service=payment-service`).
fn quoted_services(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split_whitespace()
        .filter_map(|w| {
            w.to_lowercase()
                .strip_prefix("service=")
                .map(str::to_string)
        })
        .map(|s| s.trim_matches(|c: char| !c.is_alphanumeric()).to_string())
        .filter(|s| !s.is_empty())
}

/// `statement` (lower case) with every quotation of an evidence text
/// blanked: a verbatim span of at least three words is the record's own
/// words, so a level word inside it ("ciod: Error loading") is not a
/// level the statement says of a service.
fn without_evidence_quotes(statement: &str, logs: &[&str]) -> String {
    let logs: Vec<String> = logs.iter().map(|t| t.to_lowercase()).collect();
    let mut out = statement.to_string();
    for (open, close) in [
        ('"', '"'),
        ('\u{201c}', '\u{201d}'),
        ('\u{300c}', '\u{300d}'),
    ] {
        let mut from = 0;
        while let Some(a) = out[from..].find(open).map(|i| from + i + open.len_utf8()) {
            let Some(b) = out[a..].find(close).map(|i| a + i) else {
                break;
            };
            let span = &out[a..b];
            let quoted = span.split_whitespace().count() >= 3
                && logs.iter().any(|l| l.contains(span.trim()));
            if quoted {
                let blank = " ".repeat(span.len());
                out.replace_range(a..b, &blank);
            }
            from = b + close.len_utf8();
        }
    }
    out
}

/// The level word of `statement` that no log record's fields say for the
/// service it names, if any (the statement folded as the check reads it).
pub fn level_only_in_a_message(statement: &str, evidence: &[&VerifiedEvidence]) -> Option<String> {
    let logs: Vec<&str> = evidence
        .iter()
        .filter(|e| e.tool_name == QUERY_LOGS)
        .map(|e| e.matched_text.as_str())
        .collect();
    let records: Vec<(Level, String)> = logs.iter().filter_map(|t| record(t)).collect();
    if records.is_empty() {
        return None;
    }
    let services: Vec<String> = records
        .iter()
        .map(|(_, s)| s.clone())
        .chain(logs.iter().flat_map(|t| quoted_services(t)))
        .collect();
    let lower = without_evidence_quotes(&statement.to_lowercase(), &logs);
    // a `key=value` the statement quotes (`severity=warning`) is that
    // field, not a level the statement says
    let words: Vec<&str> = lower
        .split(|c: char| {
            c.is_whitespace()
                || matches!(c, ',' | ';' | '(' | ')' | '"' | '，' | '：' | '（' | '）')
        })
        .filter(|w| !w.contains('='))
        .flat_map(|w| w.split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))))
        .map(|w| w.trim_matches('.'))
        .filter(|w| !w.is_empty())
        .collect();
    let named: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| services.iter().any(|s| s == w))
        .collect();
    for w in &words {
        // a severity of an alert is not a log level
        if matches!(*w, "critical" | "crit" | "severe") {
            continue;
        }
        let Some(level) = Level::parse_word(w) else {
            continue;
        };
        let said = records
            .iter()
            .any(|(l, s)| *l == level && (named.is_empty() || named.contains(&s.as_str())));
        if !said {
            return Some(w.to_uppercase());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(text: &str) -> VerifiedEvidence {
        VerifiedEvidence {
            claim_id: "c".into(),
            source_invocation_id: 1,
            tool_name: QUERY_LOGS.into(),
            raw_path: "$.logs[0]".into(),
            matched_text: text.into(),
        }
    }

    #[test]
    fn a_level_and_service_quoted_in_a_message_are_not_the_records() {
        let relay = ev(
            "2026-07-08T23:05:28Z INFO checkout-service relaying upstream status: service=payment-service level=ERROR",
        );
        for s in [
            "payment-service logged ERROR.",
            "checkout-service logged an ERROR.",
            "payment-service 记录了 ERROR 日志。",
        ] {
            assert_eq!(
                level_only_in_a_message(s, &[&relay]).as_deref(),
                Some("ERROR"),
                "{s}"
            );
        }
        assert_eq!(
            level_only_in_a_message("checkout-service logged an INFO line.", &[&relay]),
            None
        );
        let own = ev(
            "2026-07-08T23:05:28Z ERROR order-service HikariPool-1 - Connection is not available",
        );
        for s in [
            "order-service logged ERROR: Connection is not available.",
            "HikariPool-1 ERROR: Connection is not available.",
            "The HighCPUUsage alert is critical.",
            "order-service alert (severity=warning) while it logged ERROR lines.",
        ] {
            assert_eq!(level_only_in_a_message(s, &[&own]), None, "{s}");
        }
    }

    #[test]
    fn a_quotation_of_the_record_is_its_own_words() {
        let fatal = ev(
            "2005-12-21T07:27:17Z FATAL bgl-app ciod: Error loading /g/x.exe: program image too big",
        );
        assert_eq!(
            level_only_in_a_message(
                "Recorded evidence: \"2005-12-21T07:27:17Z FATAL bgl-app ciod: Error loading /g/x.exe: program image too big\"",
                &[&fatal]
            ),
            None
        );
        // outside a quotation, or quoting too little to identify the record,
        // the level is still the statement's
        for s in [
            "bgl-app logged ERROR: \"program image too big\"",
            "bgl-app logged \"Error\" lines.",
        ] {
            assert_eq!(
                level_only_in_a_message(s, &[&fatal]).as_deref(),
                Some("ERROR"),
                "{s}"
            );
        }
    }
}

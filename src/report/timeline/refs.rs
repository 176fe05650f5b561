//! Reading the code-made ref texts back: an alert's `key=value` fields
//! (both alert backends write the same keys) and a log line's
//! `TS LEVEL SERVICE message | N matching lines like this between A and B`.
//! Values are shown, never interpreted beyond their times.

use crate::vocab::time::parse_ts;
use chrono::{DateTime, Utc};

/// `alertname=X service=Y … summary=free text`: the pairs in order. A
/// word without `key=` belongs to the value before it.
pub fn fields(text: &str) -> Vec<(&str, String)> {
    let mut out: Vec<(&str, String)> = Vec::new();
    for word in text.split(' ') {
        let key = word
            .split_once('=')
            .map(|(k, _)| k)
            .filter(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
        let in_summary = out.last().is_some_and(|l| l.0 == "summary");
        match (key, out.last_mut()) {
            (Some(k), _) if !in_summary => {
                out.push((k, word[k.len() + 1..].to_string()));
            }
            (_, Some(last)) => {
                last.1.push(' ');
                last.1.push_str(word);
            }
            (_, None) => {}
        }
    }
    out
}

pub fn field<'a>(fields: &'a [(&str, String)], key: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.as_str())
}

/// `25m`, `2h5m`, `3d4h` (how alert refs state `active_for`) in minutes.
pub fn minutes(d: &str) -> Option<i64> {
    let mut total = 0i64;
    let mut n = String::new();
    for ch in d.chars() {
        if ch.is_ascii_digit() {
            n.push(ch);
            continue;
        }
        let v: i64 = n.parse().ok()?;
        n.clear();
        total += v * match ch {
            'm' => 1,
            'h' => 60,
            'd' => 24 * 60,
            _ => return None,
        };
    }
    n.is_empty().then_some(total)
}

/// A log ref, read back.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRef {
    pub ts: DateTime<Utc>,
    pub level: String,
    pub service: String,
    pub message: String,
    /// The lines like it: how many, and the first and last time.
    pub similar: Option<(u64, Option<DateTime<Utc>>)>,
}

pub fn log_ref(text: &str) -> Option<LogRef> {
    let (line, similar) = match text.rsplit_once(" | ") {
        Some((l, s)) if s.contains("matching lines like this") => (l, Some(s)),
        _ => (text, None),
    };
    let mut parts = line.splitn(4, ' ');
    let ts = parse_ts(parts.next()?)?;
    let level = parts.next()?.to_string();
    let service = parts.next()?.to_string();
    let message = parts.next().unwrap_or("").to_string();
    let similar = similar.and_then(|s| {
        let n: u64 = s.split(' ').next()?.parse().ok()?;
        let first = s
            .split_once(" between ")
            .and_then(|(_, r)| r.split(' ').next())
            .and_then(parse_ts);
        Some((n, first))
    });
    Some(LogRef {
        ts,
        level,
        service,
        message,
        similar,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alert_fields_keep_the_summary_whole() {
        let f = fields(
            "alertname=HighErrorRate service=api-gateway severity=critical state=firing value=0.18 active_for=11m since=2026-07-08T23:01:00Z summary=5xx ratio a=b on /api/orders",
        );
        assert_eq!(field(&f, "alertname"), Some("HighErrorRate"));
        assert_eq!(field(&f, "active_for"), Some("11m"));
        assert_eq!(field(&f, "summary"), Some("5xx ratio a=b on /api/orders"));
        assert_eq!(minutes("2h5m"), Some(125));
        assert_eq!(minutes("3d4h"), Some(3 * 1440 + 240));
        assert_eq!(minutes("5x"), None);
    }

    #[test]
    fn log_refs_are_read_back_with_their_figures() {
        let r = log_ref("2026-07-08T22:52:10Z ERROR order-service HikariPool-1 - Connection is not available | 37 matching lines like this between 2026-07-08T22:50:01Z and 2026-07-08T23:10:00Z").unwrap();
        assert_eq!(r.level, "ERROR");
        assert_eq!(r.service, "order-service");
        assert_eq!(r.message, "HikariPool-1 - Connection is not available");
        assert_eq!(r.similar.map(|s| s.0), Some(37));
        assert_eq!(
            r.similar.and_then(|s| s.1),
            parse_ts("2026-07-08T22:50:01Z")
        );
        assert!(log_ref("not a log ref").is_none());
    }
}

//! Dependencies named in evidence: the other service a log line blames
//! ("upstream order-service timed out", "Request to fraud-check timed
//! out", "503 from inventory-api", "pool exhaustion in ledger-db",
//! "调用 user-service 超时").
//!
//! A name counts only where a dependency cue stands next to it, so a
//! path, a host:port, an IP or an exception class is never taken for a
//! service. The offline model follows such a name one hop: the Executor
//! states it as a cause still to be confirmed, the Verifier wants the
//! named service's own evidence, and the evidence-gap round asks for it.

use crate::text::literal_regex;
use regex::Regex;
use std::sync::LazyLock;

/// Cues before the name (`upstream X`, `request to X`, `503 from X`). A
/// name is written as services are: a letter, then letters, digits, `-`,
/// `_` or `.`, ending in a letter or digit.
static BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    literal_regex(
        r"(?i)(?:\b(?:upstream|downstream|dependency|backend)(?:\s+(?:service|server|host|call\s+to|request\s+to|connection\s+to))?|\b(?:call|calls|calling|request|requests|connect|connecting|connection|connections|proxying|proxy|forwarding|routing|sending|send|publish(?:ing)?)\s+to|\b(?:5\d\d|4\d\d|errors?|failures?|response|responses|reply)\s+from|\b(?:timed\s+out|timeout)\s+(?:calling|waiting\s+for|to|from)|\b(?:exhaust\w*|saturat\w*|starv\w*)\s+(?:in|on|of|at)|\bunable\s+to\s+reach|\bcould\s+not\s+reach|\bfailed\s+to\s+(?:reach|connect\s+to|call))\s+([A-Za-z][A-Za-z0-9_.\-]*[A-Za-z0-9])",
    )
});
/// Cues after the name (`X timed out`, `X is unavailable`).
static AFTER: LazyLock<Regex> = LazyLock::new(|| {
    literal_regex(
        r"(?i)\b([A-Za-z][A-Za-z0-9_.\-]*[-_][A-Za-z0-9_.\-]*[A-Za-z0-9])\s+(?:timed\s+out|is\s+unavailable|unavailable|unreachable|is\s+down|refused|not\s+responding|returned\s+5\d\d|connection\s+(?:reset|refused))",
    )
});
/// Chinese cues (`调用 X`, `上游 X`, `连接 X`), the name in ASCII.
static BEFORE_ZH: LazyLock<Regex> = LazyLock::new(|| {
    literal_regex(r"(?:调用|上游|下游|依赖|连接|请求)\s*([A-Za-z][A-Za-z0-9_.\-]*[A-Za-z0-9])")
});

/// Words a cue can precede that are not a service.
const NOT_NAMES: &[&str] = &[
    "the",
    "a",
    "an",
    "server",
    "service",
    "host",
    "peer",
    "client",
    "database",
    "db",
    "remote",
    "backend",
    "upstream",
    "downstream",
    "endpoint",
    "node",
    "it",
    "itself",
    "call",
    "request",
    "connection",
    "socket",
    "channel",
    "port",
    "url",
    "target",
    "this",
    "that",
    "all",
    "any",
    "localhost",
    "null",
    "none",
    "unknown",
    "pool",
    "timeout",
    "retry",
    "http",
    "https",
    "tcp",
    "udp",
    "grpc",
    "status",
    "code",
];

/// Other services the text names as a dependency, in order, without
/// `own` (the service that wrote the line).
pub fn mentions(text: &str, own: &str) -> Vec<String> {
    let mut found: Vec<(usize, String)> = Vec::new();
    for re in [&*BEFORE, &*AFTER, &*BEFORE_ZH] {
        for c in re.captures_iter(text) {
            if let Some(m) = c.get(1) {
                found.push((m.start(), m.as_str().to_string()));
            }
        }
    }
    found.sort_by_key(|(at, _)| *at);
    let mut out: Vec<String> = Vec::new();
    for (_, name) in found {
        let name = name.trim_end_matches(['.', '-', '_']).to_string();
        if is_name(&name)
            && !name.eq_ignore_ascii_case(own)
            && !out.iter().any(|o| o.eq_ignore_ascii_case(&name))
        {
            out.push(name);
        }
    }
    out
}

/// A plausible service name: not a generic word, an exception or class
/// name, a dotted package or host, a version, or a name ending in a
/// number segment (`HikariPool-1`, `msra-sa-41`: instances and hosts).
fn is_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    name.len() >= 3
        && name.len() <= 63
        && !NOT_NAMES.contains(&lower.as_str())
        && !lower.ends_with("exception")
        && !lower.ends_with("error")
        && name.matches('.').count() <= 1
        && !name
            .rsplit(['-', '_', '.'])
            .next()
            .is_some_and(|last| last.chars().all(|c| c.is_ascii_digit()))
        && name.chars().any(|c| c.is_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_next_to_dependency_cues() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "upstream order-service timed out after 30000ms: POST /api/orders returned 504",
                "api-gateway",
                &["order-service"],
            ),
            (
                "POST /api/orders returned 502: upstream order-service connection reset",
                "api-gateway",
                &["order-service"],
            ),
            (
                "Request to fraud-check timed out after 5000ms; retrying (attempt 2/3)",
                "payment-service",
                &["fraud-check"],
            ),
            (
                "got 503 from inventory-api for sku 12",
                "cart",
                &["inventory-api"],
            ),
            (
                "connection pool exhausted in ledger-db",
                "billing",
                &["ledger-db"],
            ),
            ("user-service is unavailable", "web", &["user-service"]),
            ("调用 user-service 超时", "order-service", &["user-service"]),
            ("connection to redis refused", "session", &["redis"]),
            // Not services: paths, hosts, IPs, generic words, own name,
            // exceptions, instances.
            ("Retrying connect to server: msra-sa-41:8030", "rm", &[]),
            ("Failed to connect to /10.10.34.11:48069", "spark", &[]),
            ("request timed out after 30000ms", "order-service", &[]),
            (
                "HikariPool-1 - Connection is not available",
                "order-service",
                &[],
            ),
            ("calls to order-service are slow", "order-service", &[]),
            ("error from java.io.IOException: reset", "x", &[]),
            ("error from SocketTimeoutException", "x", &[]),
            ("connect to worker-12 failed", "x", &[]),
        ];
        for (text, own, want) in cases {
            let got = mentions(text, own);
            let want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
            assert_eq!(got, want, "{text}");
        }
    }

    #[test]
    fn malformed_text_names_nothing() {
        for text in ["", "upstream", "upstream -", "to to to", "调用", "上游 ！"] {
            assert!(mentions(text, "x").is_empty(), "{text}");
        }
        let long = format!("upstream {}", "a".repeat(5000));
        assert!(mentions(&long, "x").is_empty());
    }
}

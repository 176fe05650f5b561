//! Entities in a question (or a gap fact): services the pack knows, alert
//! names, symptoms (error words in English and Chinese), literal keywords,
//! a time window, and whether the question is *narrow* (it asks to confirm
//! one alert, one service's logs, one error).
//!
//! Matching is deliberately generic: services come from the pack's list
//! (exact, with/without a `-service` suffix, or by their distinctive name
//! tokens) or look like service names; alert names are CamelCase words that
//! read like alerts. Nothing here knows the shipped pack.

pub use crate::model::offline::symptoms::{SYMPTOMS, Symptom};
use crate::model::offline::text::contains_word;
use crate::text::literal_regex;
use crate::vocab::level::Level;
use crate::vocab::time::{self, Window};
use chrono::{DateTime, Utc};
use regex::Regex;
use std::sync::LazyLock;

/// What the question names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Entities {
    /// Services in order of first appearance.
    pub services: Vec<String>,
    pub alerts: Vec<String>,
    pub symptoms: Vec<&'static Symptom>,
    /// Literal words to search logs for: quoted phrases, exception names,
    /// CamelCase words that are not alerts, explicit HTTP codes.
    pub keywords: Vec<String>,
    /// The time window the question names (`vocab::time`).
    pub window: Option<Window>,
    /// The question mentions alerts/告警 in general.
    pub mentions_alerts: bool,
    /// The question mentions logs/日志 in general.
    pub mentions_logs: bool,
    pub mentions_firing: bool,
    /// The log levels the question asks about, least severe first; empty
    /// when it names none. "errors" includes the levels above ERROR.
    pub levels: Vec<Level>,
}

/// Why a narrow question is narrow: the one thing it asks to confirm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NarrowTarget {
    /// "Is there a HighCPUUsage alert (on payment-service)?"
    Alert {
        alertname: String,
        service: Option<String>,
    },
    /// "Is payment-service alerting?"
    ServiceAlerts { service: String, firing: bool },
    /// "Are there timeout errors in order-service logs?"
    Logs {
        service: Option<String>,
        keyword: Option<String>,
        /// The levels asked about; empty: any level when a keyword is
        /// given, else errors.
        levels: Vec<Level>,
    },
}

/// Generic suffixes that do not identify a service on their own.
const GENERIC_NAME_PARTS: &[&str] = &[
    "service", "svc", "api", "server", "app", "backend", "worker", "srv", "daemon", "system",
];

static SERVICE_LIKE: LazyLock<Regex> = LazyLock::new(|| {
    literal_regex(
        r"\b[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*[-_](?:service|svc|api|server|db|worker|gateway)\b",
    )
});
/// `kafka-broker`: lowercase words joined by `-`, each part led by a
/// letter (`mod_jk`, `max_connections` are identifiers, not services).
static HYPHENATED: LazyLock<Regex> =
    LazyLock::new(|| literal_regex(r"\b[a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)+\b"));
/// Hyphenated words that are English, not names.
const NOT_SERVICES: &[&str] = &[
    "out-of-memory",
    "time-out",
    "e-mail",
    "re-try",
    "follow-up",
    "built-in",
    "end-to-end",
    "so-called",
    "up-to-date",
    "read-only",
    "write-ahead",
    "long-running",
    "non-zero",
    "dead-lock",
    "set-up",
    "check-in",
    "log-in",
    "sign-in",
    "on-call",
    "well-known",
    "third-party",
    "real-time",
    "high-cpu",
    "p99-latency",
];
static WORD: LazyLock<Regex> = LazyLock::new(|| literal_regex(r"[A-Za-z][A-Za-z0-9_]*"));
static QUOTED: LazyLock<Regex> = LazyLock::new(|| {
    literal_regex(r#""([^"]{3,80})"|“([^”]{3,80})”|`([^`]{3,80})`|「([^」]{2,80})」"#)
});
static HTTP_CODE: LazyLock<Regex> = LazyLock::new(|| literal_regex(r"\b(5\d\d|4\d\d)s?\b"));
/// Parts of CamelCase words that make them read like an alert name.
const ALERTISH: &[&str] = &[
    "high",
    "low",
    "down",
    "latency",
    "usage",
    "fail",
    "missing",
    "notready",
    "crash",
    "restart",
    "slow",
    "exhaust",
    "throttl",
    "unavailable",
    "spike",
    "rate",
    "quota",
    "pressure",
    "alert",
    "errors",
    "full",
    "filling",
    "lag",
    "outage",
    "unreachable",
    "saturat",
    "leak",
    "expir",
    "flapping",
    "skew",
    "absent",
    "degraded",
    "timeout",
    "toomany",
    "backlog",
    "offline",
    "noleader",
    "insufficient",
    "behind",
    "stuck",
    "overload",
    "mismatch",
    "oom",
    "killed",
];

pub fn extract(question: &str, known_services: &[String]) -> Entities {
    extract_at(question, known_services, None)
}

/// [`extract`], with clock and calendar windows ("since 10:00",
/// "yesterday") resolved against `now`.
pub fn extract_at(
    question: &str,
    known_services: &[String],
    now: Option<DateTime<Utc>>,
) -> Entities {
    let lower = question.to_lowercase();
    let mut e = Entities {
        services: find_services(&lower, known_services),
        ..Default::default()
    };
    e.mentions_alerts = ["alert", "alerts", "alarm", "alerting", "firing", "fired"]
        .iter()
        .any(|w| contains_word(&lower, w))
        || ["告警", "报警", "警报"].iter().any(|w| lower.contains(w));
    e.mentions_firing = contains_word(&lower, "firing") || lower.contains("触发");
    e.mentions_logs = ["log", "logs", "logged", "logging"]
        .iter()
        .any(|w| contains_word(&lower, w))
        || lower.contains("日志");
    for s in SYMPTOMS {
        let hit =
            s.en.iter().any(|p| contains_word(&lower, p)) || s.zh.iter().any(|p| lower.contains(p));
        if hit {
            e.symptoms.push(s);
        }
    }
    for m in WORD.find_iter(question) {
        let w = m.as_str();
        if !is_camel(w) || e.services.iter().any(|s| s.eq_ignore_ascii_case(w)) {
            continue;
        }
        let wl = w.to_ascii_lowercase();
        let exception =
            wl.ends_with("exception") || wl.ends_with("error") && !wl.ends_with("errors");
        if !exception && (ALERTISH.iter().any(|a| wl.contains(a)) || e.mentions_alerts) {
            push_unique(&mut e.alerts, w);
        } else {
            push_unique(&mut e.keywords, w);
        }
    }
    for c in QUOTED.captures_iter(question) {
        if let Some(m) = (1..=4).find_map(|i| c.get(i)) {
            let q = m.as_str().trim();
            if !q.is_empty() && !e.alerts.iter().any(|a| a == q) {
                push_unique(&mut e.keywords, q);
            }
        }
    }
    for c in HTTP_CODE.captures_iter(&lower) {
        if let Some(m) = c.get(1) {
            push_unique(&mut e.keywords, m.as_str());
        }
    }
    // Identifiers (a request or instance id, a block id) are searched
    // for literally.
    for w in question.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')) {
        let w = w.trim_matches(['-', '_']);
        if is_id(w) {
            push_unique(&mut e.keywords, w);
        }
    }
    e.window = time::parse(question, now);
    e.levels = levels(&lower);
    e
}

/// Names of machines in a question: an IPv4 address, or a word joining
/// letters and digits with `-`, `.` or `:` (`node-17`, `db01.prod`,
/// `R02-M1-N0`) or with two digits or more (`web01`), that is not one of
/// `services`, a time, a duration or an HTTP code. A word of letters
/// only is never a host.
pub fn hosts(question: &str, services: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in question
        .split(|c: char| c.is_whitespace() || ",;!?()[]{}\"'`“”，。？！：；（）「」".contains(c))
    {
        let w = raw.trim_matches(|c: char| !c.is_ascii_alphanumeric());
        if w.len() < 3 || !w.is_ascii() || w.contains("://") {
            continue;
        }
        let digits = w.chars().filter(|c| c.is_ascii_digit()).count();
        let letters = w.chars().filter(|c| c.is_ascii_alphabetic()).count();
        let joined = w.contains(['-', '.', ':', '_']);
        let ipv4 = w.split('.').count() == 4
            && w.split('.')
                .all(|p| !p.is_empty() && p.len() <= 3 && p.chars().all(|c| c.is_ascii_digit()));
        let named = letters > 0 && digits > 0 && (joined || digits >= 2);
        let time_like = TIME_LIKE.is_match(w) || HTTP_CODE.is_match(&w.to_ascii_lowercase());
        let host = ipv4 || named && !time_like;
        if !host || is_id(w) {
            continue;
        }
        if services.iter().any(|s| s.eq_ignore_ascii_case(w)) {
            continue;
        }
        if !out.iter().any(|o| o.eq_ignore_ascii_case(w)) {
            out.push(w.to_string());
        }
    }
    out
}

/// An identifier rather than a machine: a UUID or a long run of hex
/// digits (a request, instance or block id).
pub fn is_id(w: &str) -> bool {
    let hex = w.chars().filter(|c| c.is_ascii_hexdigit()).count();
    hex >= 12
        && w.chars()
            .all(|c| c.is_ascii_hexdigit() || c == '-' || c == '_')
        || w.len() >= 8
            && w.chars().filter(|c| c.is_ascii_digit()).count() * 2 >= w.len()
            && w.contains('_')
}

/// Times, dates and durations a question writes with letters and digits.
static TIME_LIKE: LazyLock<Regex> = LazyLock::new(|| {
    literal_regex(
        r"(?i)^(?:\d+(?:\.\d+)?(?:ms|s|sec|secs|m|min|mins|h|hr|hrs|d|days?|w|k|kb|mb|gb|tb|x|am|pm|st|nd|rd|th)|\d{1,2}:\d{2}(?::\d{2})?(?:am|pm|z)?|\d{4}-\d{2}-\d{2}(?:t[\d:.]+z?)?|\d+xx|p\d{2,3}|utc[+-]\d+)$",
    )
});

/// Level words of a question and the levels each asks for.
const LEVEL_WORDS: &[(&[&str], &[&str], Level)] = &[
    (
        &["warning", "warnings", "warn", "warns"],
        &["警告"],
        Level::Warn,
    ),
    (
        &["error", "errors", "err"],
        &["错误", "报错", "异常日志"],
        Level::Error,
    ),
    (
        &[
            "fatal",
            "critical",
            "crit",
            "severe",
            "emergency",
            "emerg",
            "panic",
        ],
        &["致命", "严重错误"],
        Level::Fatal,
    ),
];

fn levels(lower: &str) -> Vec<Level> {
    let mut out: Vec<Level> = Vec::new();
    for (en, zh, level) in LEVEL_WORDS {
        if en.iter().any(|w| contains_word(lower, w)) || zh.iter().any(|w| lower.contains(w)) {
            // A question about a level also asks about the worse ones,
            // except warnings: "any warnings?" is not "any errors?".
            let wanted = if *level == Level::Warn {
                vec![Level::Warn]
            } else {
                level.and_above()
            };
            out.extend(wanted);
        }
    }
    out.sort();
    out.dedup();
    out
}

fn push_unique(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|x| x == item) {
        list.push(item.to_string());
    }
}

/// CamelCase: ASCII alphanumeric, at least 6 long, mixed case with at least
/// two capitals (HighCPUUsage, etcdNoLeader), not all caps.
pub fn is_camel(w: &str) -> bool {
    w.len() >= 6
        && w.chars().all(|c| c.is_ascii_alphanumeric())
        && w.chars().any(|c| c.is_ascii_lowercase())
        && w.chars().filter(|c| c.is_ascii_uppercase()).count() >= 2
}

/// Known services named in the question, then unknown service-like names.
/// Common Chinese names of service roles, so "支付服务" can find a
/// `payment-*` service. Generic vocabulary, not any pack's names.
const ZH_SERVICE_WORDS: &[(&str, &str)] = &[
    ("支付", "payment"),
    ("订单", "order"),
    ("下单", "order"),
    ("库存", "inventory"),
    ("用户", "user"),
    ("网关", "gateway"),
    ("通知", "notification"),
    ("数据库", "database"),
    ("缓存", "cache"),
    ("搜索", "search"),
    ("购物车", "cart"),
    ("结算", "checkout"),
    ("认证", "auth"),
    ("鉴权", "auth"),
    ("消息队列", "queue"),
    ("商品", "product"),
    ("目录", "catalog"),
    ("物流", "shipping"),
    ("账户", "account"),
];

/// A question word names a name part: equal, or the part plus a plural "s".
fn word_matches(words: &[String], part: &str) -> bool {
    words.iter().any(|w| {
        w == part || (w.len() == part.len() + 1 && w.starts_with(part) && w.ends_with('s'))
    })
}

fn name_parts(n: &str) -> Vec<&str> {
    n.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| p.len() >= 3 && !GENERIC_NAME_PARTS.contains(p))
        .collect()
}

fn find_services(lower: &str, known: &[String]) -> Vec<String> {
    let mut question_words: Vec<String> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    for (zh, en) in ZH_SERVICE_WORDS {
        if lower.contains(zh) {
            question_words.push(en.to_string());
        }
    }
    // (position, name); a longer name at the same place wins.
    let mut found: Vec<(usize, String)> = Vec::new();
    // Names matched only by their parts, with those parts; and the parts
    // of names matched exactly.
    let mut fuzzy_found: Vec<(usize, String, Vec<String>)> = Vec::new();
    let mut exact_parts: Vec<String> = Vec::new();
    let mut partial: Vec<(usize, String)> = Vec::new();
    for name in known {
        let n = name.to_lowercase();
        if n.is_empty() {
            continue;
        }
        let mut variants = vec![n.clone(), n.replace(['-', '_'], " ")];
        for suffix in ["-service", "_service", "-svc", "-api", "-server"] {
            if let Some(base) = n.strip_suffix(suffix)
                && !base.is_empty()
            {
                variants.push(base.to_string());
                variants.push(base.replace(['-', '_'], " "));
            }
        }
        let exact = variants
            .iter()
            .filter(|v| v.len() >= 2 && contains_word(lower, v))
            .filter_map(|v| lower.find(v.as_str()))
            .min();
        let parts = name_parts(&n);
        let position = |parts: &[&str]| {
            parts
                .iter()
                .filter_map(|p| lower.find(p))
                .min()
                .unwrap_or(usize::MAX)
        };
        let fuzzy = || {
            // Fuzzy: every distinctive part of the name is a question word.
            (!parts.is_empty() && parts.iter().all(|p| word_matches(&question_words, p)))
                .then(|| position(&parts))
        };
        if let Some(p) = exact {
            found.push((p, name.clone()));
            exact_parts.extend(parts.iter().map(|p| p.to_string()));
        } else if let Some(p) = fuzzy() {
            fuzzy_found.push((
                p,
                name.clone(),
                parts.iter().map(|p| p.to_string()).collect(),
            ));
        } else if parts
            .iter()
            .any(|p| p.len() >= 4 && word_matches(&question_words, p))
        {
            partial.push((position(&parts), name.clone()));
        }
    }
    // A name whose parts all belong to a name the question spells out is
    // that name's sibling, not asked about ("bgl-mmcs" does not ask about
    // bgl-app, whose one distinctive part is "bgl").
    for (p, name, parts) in fuzzy_found {
        if !parts.iter().all(|x| exact_parts.contains(x)) {
            found.push((p, name));
        }
    }
    // Some distinctive parts only ("datanode" for hdfs-datanode): accepted
    // when nothing matched better and exactly one service fits.
    if found.is_empty() && partial.len() == 1 {
        found.append(&mut partial);
    }
    // A name standing for a known one found already (`payment-svc` for
    // payment-service) adds nothing.
    let stands_for_found = |found: &[(usize, String)], s: &str| {
        found.iter().any(|(_, n)| {
            n.eq_ignore_ascii_case(s)
                || name_parts(s)
                    .iter()
                    .all(|p| name_parts(&n.to_lowercase()).contains(p))
        })
    };
    for m in SERVICE_LIKE.find_iter(lower) {
        let s = m.as_str();
        if !stands_for_found(&found, s) && !known.iter().any(|k| k.eq_ignore_ascii_case(s)) {
            found.push((m.start(), s.to_string()));
        }
    }
    // Other hyphenated names (`kafka-broker`) name a component the
    // sources may not have: asking about it must say so, not answer
    // about everything else. Not when a known service already stands for
    // the same words (`payment-svc` for payment-service).
    // A machine's name (`r02-m1-n0`, `node-17`) is a host, not a service.
    let host_names: Vec<String> = hosts(lower, &[])
        .into_iter()
        .map(|h| h.to_lowercase())
        .collect();
    for m in HYPHENATED.find_iter(lower) {
        let s = m.as_str();
        if host_names.iter().any(|h| h.contains(s))
            || NOT_SERVICES.contains(&s)
            || stands_for_found(&found, s)
            || known.iter().any(|k| k.eq_ignore_ascii_case(s))
            || SYMPTOMS
                .iter()
                .any(|sym| sym.en.iter().any(|p| p.contains(s)))
        {
            continue;
        }
        found.push((m.start(), s.to_string()));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.len().cmp(&a.1.len())));
    let mut out: Vec<String> = Vec::new();
    for (_, name) in found {
        // Drop a name contained in one already chosen (order-service vs order).
        let lname = name.to_lowercase();
        if out.iter().any(|o| {
            o.to_lowercase() == lname
                || (o.to_lowercase().contains(&lname) && known_is_prefix(o, &name))
        }) {
            continue;
        }
        out.push(name);
    }
    out
}

fn known_is_prefix(longer: &str, shorter: &str) -> bool {
    longer.to_lowercase().starts_with(&shorter.to_lowercase())
}

/// Words that ask for an explanation: such a question is never narrow.
const BROAD_EN: &[&str] = &[
    "why",
    "cause",
    "caused",
    "causing",
    "root cause",
    "diagnose",
    "investigate",
    "explain",
    "what happened",
    "what is wrong",
    "what's wrong",
    "how come",
    "troubleshoot",
];
const BROAD_ZH: &[&str] = &[
    "为什么",
    "原因",
    "根因",
    "排查",
    "怎么回事",
    "诊断",
    "分析",
    "为何",
    "怎么了",
];
const YES_NO_EN: &[&str] = &[
    "is",
    "are",
    "was",
    "were",
    "does",
    "do",
    "did",
    "has",
    "have",
    "any",
    "confirm",
    "verify",
    "check whether",
    "check if",
    "whether",
];
const YES_NO_ZH: &[&str] = &["有没有", "是否", "是不是", "有无", "确认", "吗"];

/// Phrases that ask what to do or check rather than what is wrong here.
const GUIDANCE_EN: &[&str] = &[
    "what to check",
    "what should i check",
    "what do i check",
    "what should we check",
    "what to look at",
    "how to handle",
    "how do i handle",
    "how should i handle",
    "how to fix",
    "how do i fix",
    "how to mitigate",
    "how do i mitigate",
    "how to troubleshoot",
    "what to do when",
    "what should i do when",
    "what does it mean when",
    "runbook for",
    "steps for",
];
const GUIDANCE_ZH: &[&str] = &[
    "应该检查什么",
    "检查什么",
    "查什么",
    "怎么处理",
    "如何处理",
    "怎么办",
    "如何排查",
    "怎么排查",
    "如何修复",
    "怎么修复",
    "如何缓解",
    "是什么意思",
    "处理步骤",
    "排查步骤",
];

/// The question asks for guidance (a runbook's steps), not a diagnosis.
pub fn asks_guidance(question: &str) -> bool {
    let lower = question.to_lowercase();
    GUIDANCE_EN.iter().any(|p| lower.contains(p)) || GUIDANCE_ZH.iter().any(|p| lower.contains(p))
}

/// The one thing a narrow question asks to confirm, or None for a broad one.
pub fn narrow_target(question: &str, e: &Entities) -> Option<NarrowTarget> {
    let lower = question.trim().to_lowercase();
    if BROAD_EN.iter().any(|w| contains_word(&lower, w))
        || BROAD_ZH.iter().any(|w| lower.contains(w))
    {
        return None;
    }
    let first = lower.split_whitespace().next().unwrap_or("");
    let yes_no = YES_NO_EN
        .iter()
        .any(|w| first == *w || lower.starts_with(&format!("{w} ")))
        || lower.starts_with("can you confirm")
        || lower.starts_with("please confirm")
        || YES_NO_ZH.iter().any(|w| lower.contains(w));
    if !yes_no || e.services.len() > 1 || e.alerts.len() > 1 {
        return None;
    }
    let service = e.services.first().cloned();
    if let Some(alert) = e.alerts.first() {
        return Some(NarrowTarget::Alert {
            alertname: alert.clone(),
            service,
        });
    }
    let keyword = e.keywords.first().cloned().or_else(|| {
        e.symptoms
            .iter()
            .find(|s| !s.log_keywords.is_empty())
            .and_then(|s| s.log_keywords.first())
            .map(|k| k.to_string())
    });
    if e.mentions_logs || (keyword.is_some() && !e.mentions_alerts) {
        if service.is_none() && keyword.is_none() {
            return None;
        }
        return Some(NarrowTarget::Logs {
            service,
            keyword,
            levels: e.levels.clone(),
        });
    }
    if e.mentions_alerts {
        return service.map(|service| NarrowTarget::ServiceAlerts {
            service,
            firing: e.mentions_firing,
        });
    }
    None
}

/// Well-known infrastructure components (datastores, caches, brokers,
/// proxies, orchestrators), each with the other spellings of the same
/// component. A question that names one asks about a component, not an
/// ordinary word; words that are also
/// common English (vault, spark, oracle) are left out.
pub fn infra_component(w: &str) -> Option<&'static [&'static str]> {
    const GROUPS: &[&[&str]] = &[
        &["redis"],
        &["kafka"],
        &["postgres", "postgresql", "pg", "pgbouncer"],
        &["mysql", "mariadb"],
        &["mongodb", "mongo"],
        &["elasticsearch", "opensearch"],
        &["nginx"],
        &["envoy"],
        &["haproxy"],
        &["traefik"],
        &["istio"],
        &["etcd"],
        &["rabbitmq", "rabbit"],
        &["activemq"],
        &["pulsar"],
        &["nats"],
        &["memcached", "memcache"],
        &["cassandra"],
        &["scylladb", "scylla"],
        &["consul"],
        &["kubernetes", "k8s", "kube", "kubelet"],
        &["docker", "dockerd"],
        &["containerd"],
        &["clickhouse"],
        &["cockroachdb"],
        &["tidb"],
        &["dynamodb"],
        &["sqlite"],
        &["minio"],
        &["ceph"],
        &["prometheus"],
        &["grafana"],
        &["jaeger"],
        &["tomcat"],
        &["jetty"],
        &["gunicorn"],
        &["uwsgi"],
    ];
    GROUPS.iter().copied().find(|g| g.contains(&w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Vec<String> {
        vec![
            "payment-service".into(),
            "order-service".into(),
            "inventory".into(),
        ]
    }

    #[test]
    fn finds_services_alerts_symptoms_and_windows() {
        let e = extract(
            "why is payment slow in the last 30 minutes? HighCPUUsage?",
            &known(),
        );
        assert_eq!(e.services, vec!["payment-service".to_string()]);
        assert_eq!(e.alerts, vec!["HighCPUUsage".to_string()]);
        assert!(e.symptoms.iter().any(|s| s.id == "latency"));
        assert_eq!(e.window, Some(Window::Last { minutes: 30 }));
        let by_zh = extract("支付服务为什么这么慢", &known());
        assert_eq!(by_zh.services, vec!["payment-service".to_string()]);
        let partial = extract(
            "why is the datanode slow?",
            &["hdfs-datanode".to_string(), "hdfs-namenode".to_string()],
        );
        assert_eq!(partial.services, vec!["hdfs-datanode".to_string()]);
        let plural = extract("why are payments failing?", &known());
        assert_eq!(plural.services, vec!["payment-service".to_string()]);
        let zh = extract("最近1小时 order-service 连接池超时", &known());
        assert_eq!(zh.services, vec!["order-service".to_string()]);
        assert!(zh.symptoms.iter().any(|s| s.id == "connection_pool"));
        assert!(zh.symptoms.iter().any(|s| s.id == "timeout"));
        assert_eq!(zh.window, Some(Window::Last { minutes: 60 }));
        let unknown = extract(
            "is ledger-service throwing SocketTimeoutException?",
            &known(),
        );
        assert_eq!(unknown.services, vec!["ledger-service".to_string()]);
        assert_eq!(unknown.keywords, vec!["SocketTimeoutException".to_string()]);
    }

    #[test]
    fn unknown_names_and_siblings() {
        let bgl: Vec<String> = ["bgl-app", "bgl-mmcs", "bgl-kernel"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let e = extract("what errors does bgl-mmcs report?", &bgl);
        assert_eq!(e.services, vec!["bgl-mmcs".to_string()]);
        let e = extract("why is kafka-broker failing?", &known());
        assert_eq!(e.services, vec!["kafka-broker".to_string()]);
        let e = extract("kafka-broker 为什么一直报错？", &known());
        assert_eq!(e.services, vec!["kafka-broker".to_string()]);
        let e = extract("what is mod_jk complaining about?", &known());
        assert!(e.services.is_empty(), "{:?}", e.services);
        let e = extract("is payment-svc out-of-memory?", &known());
        assert_eq!(e.services, vec!["payment-service".to_string()]);
        let e = extract("a time-out on the on-call e-mail", &known());
        assert!(e.services.is_empty(), "{:?}", e.services);
    }

    #[test]
    fn narrow_and_broad() {
        let q = "is there a HighCPUUsage alert on payment-service?";
        let e = extract(q, &known());
        assert_eq!(
            narrow_target(q, &e),
            Some(NarrowTarget::Alert {
                alertname: "HighCPUUsage".into(),
                service: Some("payment-service".into())
            })
        );
        let q = "why is payment-service slow?";
        assert_eq!(narrow_target(q, &extract(q, &known())), None);
        let q = "order-service 有没有超时日志？";
        assert_eq!(
            narrow_target(q, &extract(q, &known())),
            Some(NarrowTarget::Logs {
                service: Some("order-service".into()),
                keyword: Some("timeout".into()),
                levels: vec![],
            })
        );
    }
}

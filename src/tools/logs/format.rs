//! Log records from files: JSON lines (the pack's keys, or `journalctl -o
//! json` exports), classic syslog, and plain text read with a regex whose
//! named groups are `ts`, `service`, `level` and `message` (any other named
//! group is kept as an extra key).
//!
//! A plain-text line the pattern does not match continues the record
//! before it (a stack trace), so a record may span lines. Times without a
//! zone are read as UTC; syslog's, which have no year, get the year that
//! puts them in the past. Everything here is file content: a record that
//! does not parse is an `Err` naming why, never a panic.

use super::{LogLine, detect_level};
use crate::text::clean;
use crate::tools::common::parse_time;
use chrono::{DateTime, Datelike, NaiveDateTime, TimeZone, Utc};
use regex::Regex;
use serde_json::{Map, Value};
use std::sync::LazyLock;

/// How the records of one file are written.
#[derive(Debug, Clone)]
pub enum Format {
    /// One JSON object a line: `ts`/`timestamp`/`time`/`@timestamp`,
    /// `service`/`app`/`component`, `level`/`severity`/`lvl`,
    /// `message`/`msg`; or journald's `__REALTIME_TIMESTAMP`, `MESSAGE`,
    /// `PRIORITY`, `_SYSTEMD_UNIT`/`SYSLOG_IDENTIFIER`.
    Json,
    /// Plain text read with a pattern (syslog is one of the shipped ones).
    Text(TextPattern),
}

/// What a record lacks is filled from here; `strict` (the pack) makes a
/// missing service or level an error instead.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    pub service: Option<String>,
    pub strict: bool,
}

#[derive(Debug, Clone)]
pub struct TextPattern {
    pub name: String,
    regex: Regex,
    /// chrono `strftime` format of the `ts` group; `None`: the common ones.
    ts_format: Option<String>,
}

impl TextPattern {
    /// A pattern from configuration: it must have the named groups `ts`
    /// and `message`.
    pub fn new(name: &str, pattern: &str, ts_format: Option<&str>) -> Result<TextPattern, String> {
        let regex = Regex::new(pattern).map_err(|e| clean(&e.to_string(), 300))?;
        let names: Vec<&str> = regex.capture_names().flatten().collect();
        for need in ["ts", "message"] {
            if !names.contains(&need) {
                return Err(format!(
                    "the log pattern needs a named group (?P<{need}>...); it has: {}",
                    names.join(", ")
                ));
            }
        }
        Ok(TextPattern {
            name: name.into(),
            regex,
            ts_format: ts_format
                .map(str::to_string)
                .filter(|f| !f.trim().is_empty()),
        })
    }

    fn parse(&self, record: &str, d: &Defaults) -> Result<LogLine, String> {
        let (first, rest) = record.split_once('\n').unwrap_or((record, ""));
        let first = first.trim_end_matches('\r');
        let caps = self
            .regex
            .captures(first)
            .ok_or_else(|| format!("does not match the {} pattern", self.name))?;
        let group = |n: &str| {
            caps.name(n)
                .map(|m| m.as_str().trim())
                .filter(|s| !s.is_empty())
        };
        let ts_text = group("ts").ok_or("no timestamp")?;
        let ts = parse_ts(ts_text, self.ts_format.as_deref())
            .ok_or_else(|| format!("timestamp '{}' is not understood", clean(ts_text, 40)))?;
        let mut message = group("message").unwrap_or("").to_string();
        if !rest.trim().is_empty() {
            message.push('\n');
            message.push_str(rest.trim_end());
        }
        let status = group("status").and_then(|s| s.parse::<u16>().ok());
        let level = match (group("level"), status) {
            (Some(l), _) => l.to_ascii_uppercase(),
            (None, Some(s)) if s >= 500 => "ERROR".into(),
            (None, Some(s)) if s >= 400 => "WARN".into(),
            (None, Some(_)) => "INFO".into(),
            (None, None) => detect_level(&message).unwrap_or("UNKNOWN").to_string(),
        };
        let service = group("service")
            .map(str::to_string)
            .or_else(|| d.service.clone())
            .ok_or("no service")?;
        let mut extra = Map::new();
        for name in self.regex.capture_names().flatten() {
            if !["ts", "service", "level", "message"].contains(&name)
                && let Some(v) = group(name)
            {
                extra.insert(name.to_string(), Value::String(v.to_string()));
            }
        }
        Ok(LogLine {
            ts,
            service,
            level,
            message,
            extra,
        })
    }
}

/// Shipped plain-text patterns, tried in order when a file's format is
/// detected: syslog, nginx, Apache, and the layouts of common Java and
/// Python loggers and of the LogHub collections.
static SHIPPED: LazyLock<Vec<TextPattern>> = LazyLock::new(|| {
    let p = |name: &str, re: &str| TextPattern::new(name, re, None).ok();
    [
        p(
            "syslog",
            r"^(?P<ts>[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}) (?P<host>\S+) (?P<service>[^\s\[:]+)(?:\[(?P<pid>\d+)\])?: (?P<message>.*)$",
        ),
        p(
            "syslog-iso",
            r"^(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})) (?P<host>\S+) (?P<service>[^\s\[:]+)(?:\[(?P<pid>\d+)\])?: (?P<message>.*)$",
        ),
        p(
            "nginx-access",
            r#"^(?P<client>\S+) \S+ \S+ \[(?P<ts>[^\]]+)\] "(?P<message>[^"]*)" (?P<status>\d{3}) (?P<bytes>\S+)"#,
        ),
        p(
            "nginx-error",
            r"^(?P<ts>\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}) \[(?P<level>[a-z]+)\] (?P<pid>\d+)#\d+: (?P<message>.*)$",
        ),
        p(
            "apache-error",
            r"^\[(?P<ts>[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}(?:\.\d+)? \d{4})\] \[(?:[a-z_]+:)?(?P<level>[a-z]+)\] (?P<message>.*)$",
        ),
        p(
            "openstack",
            r"^(?P<service>[a-z][\w-]*?)\.log\S*\s+(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?)\s+(?P<pid>\d+)\s+(?P<level>[A-Z]+)\s+(?P<message>.*)$",
        ),
        p(
            "iso-level",
            r"^(?P<ts>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\s+(?:-\s+)?\[?(?P<level>[A-Za-z]+)\]?\s+(?P<message>.*)$",
        ),
        p(
            "spark",
            r"^(?P<ts>\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2})\s+(?P<level>[A-Z]+)\s+(?P<message>.*)$",
        ),
        p(
            "hdfs",
            r"^(?P<ts>\d{6} \d{6})\s+(?P<pid>\d+)\s+(?P<level>[A-Z]+)\s+(?P<message>.*)$",
        ),
        p(
            "bgl",
            r"^\S+\s+\d+\s+\S+\s+(?P<node>\S+)\s+(?P<ts>\d{4}-\d{2}-\d{2}-\d{2}\.\d{2}\.\d{2}\.\d+)\s+\S+\s+\S+\s+(?P<service>[A-Z]+)\s+(?P<level>[A-Z]+)\s+(?P<message>.*)$",
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
});

/// Named shipped pattern (`syslog`, `nginx-access`, ...).
pub fn shipped(name: &str) -> Option<TextPattern> {
    SHIPPED.iter().find(|p| p.name == name).cloned()
}

pub fn shipped_names() -> Vec<&'static str> {
    SHIPPED.iter().map(|p| p.name.as_str()).collect()
}

impl Format {
    /// The format of a file from its first non-empty lines: JSON when they
    /// are objects, else the first shipped pattern that reads most of them.
    pub fn detect(sample: &[&str]) -> Option<Format> {
        let lines: Vec<&str> = sample
            .iter()
            .map(|l| l.trim_end_matches('\r'))
            .filter(|l| !l.trim().is_empty())
            .take(20)
            .collect();
        let first = lines.first()?;
        if first.trim_start().starts_with('{') {
            return Some(Format::Json);
        }
        // The first pattern (in shipped order) that reads the most lines,
        // as long as it reads more than half of them.
        let mut best: Option<(usize, &TextPattern)> = None;
        for p in SHIPPED.iter() {
            let n = lines.iter().filter(|l| p.regex.is_match(l)).count();
            if n * 2 > lines.len() && best.is_none_or(|(b, _)| n > b) {
                best = Some((n, p));
            }
        }
        best.map(|(_, p)| Format::Text(p.clone()))
    }

    pub fn name(&self) -> &str {
        match self {
            Format::Json => "json",
            Format::Text(p) => &p.name,
        }
    }

    /// Whether a physical line begins a new record; a plain-text line the
    /// pattern does not match continues the one before.
    pub fn starts_record(&self, line: &str) -> bool {
        match self {
            Format::Json => true,
            Format::Text(p) => p.regex.is_match(line.trim_end_matches(['\n', '\r'])),
        }
    }

    pub fn parse(&self, record: &str, d: &Defaults) -> Result<LogLine, String> {
        match self {
            Format::Json => parse_json(record, d),
            Format::Text(p) => p.parse(record, d),
        }
    }
}

const TS_KEYS: [&str; 4] = ["ts", "timestamp", "time", "@timestamp"];
const SERVICE_KEYS: [&str; 3] = ["service", "app", "component"];
const LEVEL_KEYS: [&str; 3] = ["level", "severity", "lvl"];
const MESSAGE_KEYS: [&str; 2] = ["message", "msg"];

/// One JSON line: the pack's keys or a journald export record.
pub fn parse_json(text: &str, d: &Defaults) -> Result<LogLine, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not a JSON object: {e}"))?;
    let Value::Object(mut obj) = v else {
        return Err("not a JSON object".into());
    };
    if obj.contains_key("__REALTIME_TIMESTAMP") {
        return journald(obj, d);
    }
    let mut take = |keys: &[&str], what: &str| -> Result<Option<String>, String> {
        for k in keys {
            if let Some(v) = obj.get(*k) {
                let s = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => return Err(format!("'{k}' is not a string")),
                };
                obj.remove(*k);
                return Ok(Some(s));
            }
        }
        if d.strict {
            return Err(format!("missing '{what}'"));
        }
        Ok(None)
    };
    let ts_text = take(&TS_KEYS, "ts")?.ok_or("missing 'ts'")?;
    let service = take(&SERVICE_KEYS, "service")?;
    let level = take(&LEVEL_KEYS, "level")?;
    let message = take(&MESSAGE_KEYS, "message")?.ok_or("missing 'message'")?;
    let ts = parse_ts(&ts_text, None)
        .ok_or_else(|| format!("ts '{}' is not an RFC 3339 time", clean(&ts_text, 40)))?;
    let service = service
        .map(|s| s.trim().to_string())
        .or_else(|| d.service.clone())
        .ok_or("missing 'service'")?;
    let level = level
        .map(|l| l.trim().to_ascii_uppercase())
        .or_else(|| detect_level(&message).map(str::to_string))
        .unwrap_or_else(|| "UNKNOWN".into());
    Ok(LogLine {
        ts,
        service,
        level,
        message,
        extra: obj,
    })
}

/// journald's priorities, 0 (emerg) to 7 (debug), as level names.
const PRIORITIES: [&str; 8] = [
    "EMERG", "ALERT", "CRIT", "ERROR", "WARNING", "NOTICE", "INFO", "DEBUG",
];

/// A `journalctl -o json` record. Fields are strings (a binary MESSAGE
/// is an array of bytes); the time is microseconds since the epoch.
fn journald(mut obj: Map<String, Value>, d: &Defaults) -> Result<LogLine, String> {
    let us: i64 = match obj.remove("__REALTIME_TIMESTAMP") {
        Some(Value::String(s)) => s
            .trim()
            .parse()
            .map_err(|_| format!("__REALTIME_TIMESTAMP '{}' is not a number", clean(&s, 30)))?,
        Some(Value::Number(n)) => n.as_i64().ok_or("__REALTIME_TIMESTAMP is not an integer")?,
        _ => return Err("__REALTIME_TIMESTAMP is not a number".into()),
    };
    let ts = DateTime::from_timestamp_micros(us).ok_or("__REALTIME_TIMESTAMP is out of range")?;
    let message = match obj.remove("MESSAGE") {
        Some(Value::String(s)) => s,
        Some(Value::Array(bytes)) => {
            let b: Vec<u8> = bytes
                .iter()
                .filter_map(|v| v.as_u64().and_then(|n| u8::try_from(n).ok()))
                .collect();
            String::from_utf8_lossy(&b).into_owned()
        }
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let text = |obj: &Map<String, Value>, k: &str| {
        obj.get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let service = text(&obj, "_SYSTEMD_UNIT")
        .map(|u| u.strip_suffix(".service").unwrap_or(&u).to_string())
        .or_else(|| text(&obj, "SYSLOG_IDENTIFIER"))
        .or_else(|| text(&obj, "_COMM"))
        .or_else(|| d.service.clone())
        .ok_or("no _SYSTEMD_UNIT, SYSLOG_IDENTIFIER or _COMM")?;
    let level = text(&obj, "PRIORITY")
        .and_then(|p| p.parse::<usize>().ok())
        .and_then(|p| PRIORITIES.get(p))
        .map(|l| l.to_string())
        .or_else(|| detect_level(&message).map(str::to_string))
        .unwrap_or_else(|| "UNKNOWN".into());
    // Only the fields a person reads; cursors and boot ids are noise.
    let mut extra = Map::new();
    for k in ["_HOSTNAME", "_PID", "SYSLOG_IDENTIFIER", "_SYSTEMD_UNIT"] {
        if let Some(v) = obj.remove(k) {
            extra.insert(
                k.to_ascii_lowercase().trim_start_matches('_').to_string(),
                v,
            );
        }
    }
    Ok(LogLine {
        ts,
        service,
        level,
        message,
        extra,
    })
}

/// Common timestamp layouts; naive times are UTC.
const LAYOUTS: [&str; 8] = [
    "%Y-%m-%d %H:%M:%S%.f",
    "%a %b %d %H:%M:%S%.f %Y",
    "%y/%m/%d %H:%M:%S",
    "%y%m%d %H%M%S",
    "%Y-%m-%d-%H.%M.%S%.f",
    "%Y/%m/%d %H:%M:%S",
    "%d/%b/%Y:%H:%M:%S",
    "%Y-%m-%dT%H:%M:%S%.f",
];

/// A time as logs write it: the given `strftime` layout, else RFC 3339,
/// the common layouts, `dd/Mon/yyyy:hh:mm:ss +zone` (nginx), syslog's
/// `Mmm dd hh:mm:ss` (no year), or epoch seconds or milliseconds.
pub fn parse_ts(s: &str, layout: Option<&str>) -> Option<DateTime<Utc>> {
    let s = s.trim();
    if let Some(f) = layout {
        return DateTime::parse_from_str(s, f)
            .map(|t| t.with_timezone(&Utc))
            .ok()
            .or_else(|| {
                NaiveDateTime::parse_from_str(s, f)
                    .ok()
                    .map(|t| t.and_utc())
            });
    }
    if let Some(t) = parse_time(s) {
        return Some(t);
    }
    if let Ok(t) = DateTime::parse_from_str(s, "%d/%b/%Y:%H:%M:%S %z") {
        return Some(t.with_timezone(&Utc));
    }
    // Java and Python write a comma before the milliseconds.
    let dotted = s.replacen(',', ".", 1);
    for f in LAYOUTS {
        if let Ok(t) = NaiveDateTime::parse_from_str(&dotted, f) {
            return Some(t.and_utc());
        }
    }
    if s.len() >= 14 && s.as_bytes().get(3) == Some(&b' ') {
        return syslog_time(s);
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        let n: i64 = s.parse().ok()?;
        return match s.len() {
            10 => DateTime::from_timestamp(n, 0),
            13 => DateTime::from_timestamp_millis(n),
            16 => DateTime::from_timestamp_micros(n),
            19 => Some(DateTime::from_timestamp_nanos(n)),
            _ => None,
        };
    }
    None
}

/// `Mmm dd hh:mm:ss` in the most recent year that is not in the future.
fn syslog_time(s: &str) -> Option<DateTime<Utc>> {
    let now = Utc::now();
    let at = |year: i32| {
        NaiveDateTime::parse_from_str(&format!("{year} {s}"), "%Y %b %e %H:%M:%S")
            .ok()
            .and_then(|t| Utc.from_local_datetime(&t).single())
    };
    let this_year = at(now.year())?;
    if this_year > now + chrono::Duration::days(1) {
        at(now.year() - 1)
    } else {
        Some(this_year)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lenient(service: &str) -> Defaults {
        Defaults {
            service: Some(service.into()),
            strict: false,
        }
    }

    #[test]
    fn journald_records_read_time_unit_priority_and_message() {
        let rec = r#"{"__REALTIME_TIMESTAMP":"1751990400123456","_SYSTEMD_UNIT":"nginx.service","PRIORITY":"3","MESSAGE":"upstream timed out","_HOSTNAME":"web-1","__CURSOR":"s=abc"}"#;
        let l = parse_json(rec, &Defaults::default()).unwrap();
        assert_eq!(l.ts.timestamp_micros(), 1_751_990_400_123_456);
        assert_eq!((l.service.as_str(), l.level.as_str()), ("nginx", "ERROR"));
        assert_eq!(l.message, "upstream timed out");
        assert_eq!(l.extra["hostname"], "web-1");
        assert!(!l.extra.contains_key("__CURSOR"));
        let bin = r#"{"__REALTIME_TIMESTAMP":"1751990400000000","SYSLOG_IDENTIFIER":"kernel","PRIORITY":"4","MESSAGE":[104,105]}"#;
        let l = parse_json(bin, &Defaults::default()).unwrap();
        assert_eq!(
            (l.service.as_str(), l.level.as_str(), l.message.as_str()),
            ("kernel", "WARNING", "hi")
        );
        for bad in [
            r#"{"__REALTIME_TIMESTAMP":"soon","MESSAGE":"x","SYSLOG_IDENTIFIER":"a"}"#,
            r#"{"__REALTIME_TIMESTAMP":"1751990400000000","MESSAGE":"x"}"#,
            r#"{"__REALTIME_TIMESTAMP":[1],"MESSAGE":"x"}"#,
        ] {
            assert!(parse_json(bad, &Defaults::default()).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_pack_keys_are_strict_and_files_are_lenient() {
        let strict = Defaults {
            service: None,
            strict: true,
        };
        let line = r#"{"ts":"2026-07-08T22:00:00Z","message":"boom ERROR here"}"#;
        assert_eq!(parse_json(line, &strict).unwrap_err(), "missing 'service'");
        let l = parse_json(line, &lenient("app")).unwrap();
        assert_eq!((l.service.as_str(), l.level.as_str()), ("app", "ERROR"));
        for bad in [
            "",
            "[]",
            "{",
            r#"{"ts": 5, "message": "x"}"#,
            r#"{"message":"x"}"#,
        ] {
            assert!(parse_json(bad, &lenient("a")).is_err(), "{bad}");
        }
    }

    #[test]
    fn shipped_patterns_read_syslog_nginx_and_loghub_layouts() {
        let cases = [
            (
                "Jul  8 22:40:01 web-1 sshd[811]: Failed password for root",
                "syslog",
                "sshd",
                "UNKNOWN",
            ),
            (
                "127.0.0.1 - - [08/Jul/2026:22:40:01 +0000] \"GET /api HTTP/1.1\" 502 157 \"-\" \"curl\"",
                "nginx-access",
                "web",
                "ERROR",
            ),
            (
                "2026/07/08 22:40:01 [error] 31#31: *1 upstream timed out",
                "nginx-error",
                "web",
                "ERROR",
            ),
            (
                "[Sun Dec 04 04:47:44 2005] [error] mod_jk child workerEnv in error state 6",
                "apache-error",
                "web",
                "ERROR",
            ),
            (
                "2015-10-18 18:01:47,978 INFO [main] org.apache.hadoop.mapreduce.v2.app.MRAppMaster: Created MRAppMaster",
                "iso-level",
                "web",
                "INFO",
            ),
            (
                "2015-07-29 17:41:44,747 - WARN  [QuorumPeer[myid=1]/0:0:0:0:0:0:0:0:2181:Learner@233] - Unexpected exception",
                "iso-level",
                "web",
                "WARN",
            ),
            (
                "17/06/09 20:10:40 INFO executor.CoarseGrainedExecutorBackend: Registered signal handlers",
                "spark",
                "web",
                "INFO",
            ),
            (
                "081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1 terminating",
                "hdfs",
                "web",
                "INFO",
            ),
            (
                "nova-api.log.1.2017-05-16_13:53:08 2017-05-16 00:00:00.008 25746 INFO nova.osapi_compute.wsgi.server [req-1] GET",
                "openstack",
                "nova-api",
                "INFO",
            ),
            (
                "- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 R02-M1-N0-C:J12-U11 RAS KERNEL FATAL data TLB error interrupt",
                "bgl",
                "KERNEL",
                "FATAL",
            ),
        ];
        for (line, name, service, level) in cases {
            let f = Format::detect(&[line]).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(f.name(), name, "{line}");
            let l = f.parse(line, &lenient("web")).unwrap();
            assert_eq!(
                (l.service.as_str(), l.level.as_str()),
                (service, level),
                "{line}"
            );
        }
    }

    #[test]
    fn continuation_lines_join_their_record() {
        let f = Format::Text(shipped("iso-level").unwrap());
        assert!(f.starts_record("2026-07-08 22:40:01,001 ERROR boom"));
        assert!(!f.starts_record("\tat com.example.Foo.bar(Foo.java:12)"));
        let l = f
            .parse(
                "2026-07-08 22:40:01,001 ERROR boom\n\tat com.example.Foo.bar(Foo.java:12)\n",
                &lenient("app"),
            )
            .unwrap();
        assert_eq!(l.message, "boom\n\tat com.example.Foo.bar(Foo.java:12)");
        assert_eq!(l.ts.timestamp_subsec_millis(), 1);
    }

    #[test]
    fn configured_patterns_need_ts_and_message() {
        assert!(TextPattern::new("x", r"^(?P<ts>\S+) (?P<msg>.*)$", None).is_err());
        assert!(TextPattern::new("x", r"(unclosed", None).is_err());
        let p = TextPattern::new(
            "x",
            r"^(?P<ts>\S+ \S+) (?P<level>\w+) (?P<message>.*)$",
            Some("%d.%m.%Y %H:%M"),
        )
        .unwrap();
        let l = Format::Text(p)
            .parse("08.07.2026 22:40 error disk full", &lenient("db"))
            .unwrap();
        assert_eq!(l.ts.to_rfc3339(), "2026-07-08T22:40:00+00:00");
        assert_eq!(l.level, "ERROR");
    }

    #[test]
    fn timestamps_in_many_layouts() {
        for (s, want) in [
            ("2026-07-08T22:40:01Z", "2026-07-08T22:40:01+00:00"),
            ("2026-07-08 22:40:01,5", "2026-07-08T22:40:01.500+00:00"),
            ("08/Jul/2026:22:40:01 +0200", "2026-07-08T20:40:01+00:00"),
            ("1751990400", "2025-07-08T16:00:00+00:00"),
            ("1751990400000", "2025-07-08T16:00:00+00:00"),
        ] {
            assert_eq!(parse_ts(s, None).unwrap().to_rfc3339(), want, "{s}");
        }
        for bad in ["", "yesterday", "99/99/99 99:99:99", "Foo 99 99:99:99"] {
            assert!(parse_ts(bad, None).is_none(), "{bad}");
        }
    }
}

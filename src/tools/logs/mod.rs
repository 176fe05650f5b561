//! `query_logs`, whatever serves it: the arguments, the answer and its
//! evidence, shared by every backend (the pack's `logs.jsonl`, local log
//! files, Loki, Elasticsearch/OpenSearch) so that the Gatekeeper and the
//! models treat them alike.
//!
//! Every backend reads the same arguments ([`LogQuery`]), turns what it
//! found into [`LogLine`]s and answers through [`answer`]: the body's
//! `logs` array (oldest first), one `$.logs[i]` ref per line whose text is
//! made here (`TS LEVEL SERVICE message`), and figures over *every*
//! matching line, not the sample: `total`, `first_ts`, `last_ts`, and per
//! sampled line, when the sample does not show all of them, how many lines
//! like it matched and when (`similar`, also stated in the ref text so a
//! claim about them can be checked).

pub mod format;
pub mod index;
pub mod sample;
pub mod table;

pub use crate::text::pattern::pattern;

use crate::text::clean;
use crate::tools::common::{Args, Readable, fmt_time, query_summary};
use crate::tools::{ToolError, ToolOutput};
use crate::vocab::tool::{EvidenceRef, EvidenceStatus, QUERY_LOGS, ToolSpec};
use chrono::{DateTime, Duration, Utc};
use sample::{GroupStat, Sample};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// Log lines longer than this are skipped.
pub const MAX_LOG_LINE_BYTES: usize = 64 * 1024;
pub const DEFAULT_LIMIT: u64 = 50;
pub const MAX_LIMIT: u64 = 200;
/// Message length in refs; bodies carry more, but not without bound.
const REF_MESSAGE_CHARS: usize = 500;
const BODY_MESSAGE_CHARS: usize = 4000;
const ARGS: [&str; 7] = [
    "service",
    "level",
    "keyword",
    "since",
    "until",
    "window_minutes",
    "limit",
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogLine {
    pub ts: DateTime<Utc>,
    pub service: String,
    pub level: String,
    pub message: String,
    /// Extra keys of the line, kept as they were.
    #[serde(default, flatten)]
    pub extra: Map<String, Value>,
}

impl LogLine {
    /// Lowercased text a keyword is searched in: the message and the
    /// values of the extra keys.
    pub fn haystack(&self) -> String {
        let mut s = self.message.to_lowercase();
        for v in self.extra.values() {
            s.push(' ');
            match v {
                Value::String(x) => s.push_str(&x.to_lowercase()),
                other => s.push_str(&other.to_string().to_lowercase()),
            }
        }
        s
    }

    pub fn ts_micros(&self) -> i64 {
        self.ts.timestamp_micros()
    }
}

/// WARNING and WARN are the same level to anyone asking; so are the
/// spellings of "worse than an error" (`vocab::level` decides).
pub fn norm_level(l: &str) -> String {
    crate::vocab::level::canonical(l)
}

/// The level a line states in its first words (`ERROR`, `[warn]`,
/// `level=info`), for formats without a level field: its canonical name.
pub fn detect_level(message: &str) -> Option<&'static str> {
    message.split_whitespace().take(6).find_map(|w| {
        let w = w.strip_prefix("level=").unwrap_or(w);
        let w = w.trim_matches(|c: char| !c.is_ascii_alphabetic());
        crate::vocab::level::Level::parse_word(w).map(crate::vocab::level::Level::as_str)
    })
}

/// What `query_logs` was asked, checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogQuery {
    pub service: Option<String>,
    /// Normalised levels ([`norm_level`]); `None` = any.
    pub levels: Option<Vec<String>>,
    /// Lowercased words; a line must contain all of them.
    pub words: Vec<String>,
    pub since: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
    pub limit: usize,
}

impl LogQuery {
    /// Reads the arguments; `now` (the pack's reference time or the
    /// clock) anchors `window_minutes`.
    pub fn parse(args: &Map<String, Value>, now: DateTime<Utc>) -> Result<LogQuery, ToolError> {
        let a = Args::new(args, &ARGS)?;
        let service = a.string("service")?;
        let levels: Option<Vec<String>> = a.string("level")?.map(|l| {
            l.split(',')
                .map(norm_level)
                .filter(|l| !l.is_empty())
                .collect()
        });
        let words: Vec<String> = a
            .string("keyword")?
            .map(|k| k.split_whitespace().map(str::to_lowercase).collect())
            .unwrap_or_default();
        let mut since = a.time("since")?;
        let mut until = a.time("until")?;
        if let Some(w) = a.uint("window_minutes")? {
            if since.is_some() || until.is_some() {
                return Err(ToolError::InvalidArguments(
                    "give either window_minutes or since/until, not both".into(),
                ));
            }
            let w = i64::try_from(w.min(10 * 365 * 24 * 60)).unwrap_or(0);
            since = Some(now - Duration::minutes(w));
            until = Some(now);
        }
        if let (Some(s), Some(u)) = (since, until)
            && s > u
        {
            return Err(ToolError::InvalidArguments(
                "'since' is after 'until'".into(),
            ));
        }
        let limit = a
            .uint("limit")?
            .unwrap_or(DEFAULT_LIMIT)
            .clamp(1, MAX_LIMIT) as usize;
        Ok(LogQuery {
            service,
            levels,
            words,
            since,
            until,
            limit,
        })
    }

    /// Whether a line passes every filter.
    pub fn matches(&self, l: &LogLine) -> bool {
        self.service
            .as_ref()
            .is_none_or(|s| l.service.eq_ignore_ascii_case(s))
            && self
                .levels
                .as_ref()
                .is_none_or(|ls| ls.contains(&norm_level(&l.level)))
            && self.since.is_none_or(|s| l.ts >= s)
            && self.until.is_none_or(|u| l.ts <= u)
            && (self.words.is_empty() || {
                let hay = l.haystack();
                self.words.iter().all(|w| hay.contains(w.as_str()))
            })
    }
}

/// The one spec of `query_logs`, whatever backend serves it.
pub fn query_logs_spec() -> ToolSpec {
    ToolSpec {
        name: QUERY_LOGS.into(),
        description: "Log lines of the environment. Filter by service, level (ERROR, WARN, INFO...), keyword (case-insensitive; several words must all match) and time (since/until RFC 3339, or window_minutes before now). Returns up to `limit` matching lines in time order (the newest line of each kind first, then the newest), with exact counts over all matches: total, first_ts, last_ts, and for a line that stands for more, how many lines like it matched and when.".into(),
        evidence_arrays: vec!["logs".into()],
        parameters: json!({
            "type": "object",
            "properties": {
                "service": {"type": "string"},
                "level": {"type": "string", "description": "one level or a comma-separated list, e.g. ERROR,WARN"},
                "keyword": {"type": "string"},
                "since": {"type": "string", "description": "RFC 3339"},
                "until": {"type": "string", "description": "RFC 3339"},
                "window_minutes": {"type": "integer", "minimum": 1},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT}
            },
            "additionalProperties": false
        }),
    }
}

fn micros_time(us: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_micros(us)
}

/// `TS LEVEL SERVICE message`, plus what the line stands for when the
/// sample does not show every line like it:
/// `… | 10437 matching lines like this between A and B`.
pub fn log_ref_text(l: &LogLine, similar: Option<&GroupStat>) -> String {
    let mut text = format!(
        "{} {} {} {}",
        fmt_time(&l.ts),
        clean(&l.level, 10),
        clean(&l.service, 80),
        clean(&l.message, REF_MESSAGE_CHARS)
    );
    if let Some(g) = similar {
        text.push_str(&similar_text(g));
    }
    text
}

fn similar_text(g: &GroupStat) -> String {
    let (Some(a), Some(b)) = (micros_time(g.first), micros_time(g.last)) else {
        return format!(" | {} matching lines like this", g.count);
    };
    format!(
        " | {} matching lines like this between {} and {}",
        g.count,
        fmt_time(&a),
        fmt_time(&b)
    )
}

fn body_line(l: &LogLine, similar: Option<&GroupStat>) -> Value {
    let mut m = Map::new();
    m.insert("ts".into(), json!(fmt_time(&l.ts)));
    m.insert("service".into(), json!(l.service));
    m.insert("level".into(), json!(l.level));
    let msg = if l.message.chars().count() > BODY_MESSAGE_CHARS {
        let mut s: String = l.message.chars().take(BODY_MESSAGE_CHARS).collect();
        s.push_str("...");
        s
    } else {
        l.message.clone()
    };
    m.insert("message".into(), json!(msg));
    if let Some(g) = similar {
        m.insert(
            "similar".into(),
            json!({
                "pattern": pattern(&l.message),
                "count": g.count,
                "first": micros_time(g.first).map(|t| fmt_time(&t)),
                "last": micros_time(g.last).map(|t| fmt_time(&t)),
            }),
        );
    }
    for (k, v) in &l.extra {
        if !m.contains_key(k) {
            m.insert(k.clone(), v.clone());
        }
    }
    Value::Object(m)
}

/// What a backend found, ready to answer: the sample's lines (oldest
/// first, each with its group's figures) and the figures over all
/// matching lines.
pub struct Found {
    pub sample: Sample,
    pub lines: Vec<LogLine>,
    /// Figures per line are known (a backend that only counts the total,
    /// such as Loki or Elasticsearch, says false).
    pub groups_counted: bool,
}

/// The `query_logs` answer for what was found, or the no-evidence answer
/// (`nothing` explains it) when nothing matched. `partial` says what part
/// of the source was not read: then nothing found is a failure.
pub fn answer(
    found: Found,
    args: &Map<String, Value>,
    nothing: &str,
    partial: Option<String>,
) -> Result<ToolOutput, ToolError> {
    let Found {
        sample,
        lines,
        groups_counted,
    } = found;
    if sample.total == 0 || lines.is_empty() {
        if let Some(why) = partial {
            return Err(Readable::nothing_found_in_part(&why));
        }
        return Ok(ToolOutput::no_evidence(
            QUERY_LOGS,
            &query_summary(args),
            nothing,
        ));
    }
    // Figures are stated for a line only when the sample does not already
    // show every line like it.
    let shown_of_group = |id: u32| {
        sample
            .picked
            .iter()
            .filter(|p| p.group.is_some_and(|g| g.0 == id))
            .count() as u64
    };
    let similar: Vec<Option<GroupStat>> = sample
        .picked
        .iter()
        .map(|p| {
            p.group
                .filter(|(id, g)| groups_counted && g.count > shown_of_group(*id))
                .map(|g| g.1)
        })
        .collect();
    let time = |us: Option<i64>| us.and_then(micros_time).map(|t| fmt_time(&t));
    let truncated = sample.total > lines.len() as u64;
    Ok(ToolOutput {
        body: json!({
            "logs": lines.iter().zip(&similar).map(|(l, s)| body_line(l, s.as_ref())).collect::<Vec<_>>(),
            "total": sample.total,
            "first_ts": time(sample.first),
            "last_ts": time(sample.last),
            "truncated": truncated,
            // Every line shown either shows all lines like it or states
            // how many there were: counts read from the sample are exact.
            "counts_complete": !truncated
                || groups_counted && sample.picked.iter().all(|p| p.group.is_some()),
        }),
        evidence_status: EvidenceStatus::Supported,
        evidence_refs: lines
            .iter()
            .zip(&similar)
            .enumerate()
            .map(|(i, (l, s))| EvidenceRef {
                raw_path: format!("$.logs[{i}]"),
                text: log_ref_text(l, s.as_ref()),
            })
            .collect(),
        retrieved_domains: vec![],
        partial,
        buckets: sample.buckets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_read_from_the_first_words() {
        assert_eq!(detect_level("[error] mod_jk child"), Some("ERROR"));
        assert_eq!(detect_level("2015 INFO [main] x"), Some("INFO"));
        assert_eq!(detect_level("level=warn msg=x"), Some("WARN"));
        assert_eq!(detect_level("all good here"), None);
        assert_eq!(norm_level("emerg"), "FATAL");
    }

    #[test]
    fn arguments_are_checked() {
        let now = Utc::now();
        let args = |v: Value| v.as_object().cloned().unwrap();
        assert!(LogQuery::parse(&args(json!({"bogus": 1})), now).is_err());
        assert!(
            LogQuery::parse(
                &args(json!({"window_minutes": 5, "since": "2026-01-01T00:00:00Z"})),
                now
            )
            .is_err()
        );
        assert!(
            LogQuery::parse(
                &args(json!({"since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"})),
                now
            )
            .is_err()
        );
        let q = LogQuery::parse(
            &args(json!({"level": "warning,err", "keyword": "Pool  Timeout", "limit": 999})),
            now,
        )
        .unwrap();
        assert_eq!(
            q.levels,
            Some(vec!["WARN".to_string(), "ERROR".to_string()])
        );
        assert_eq!(q.words, ["pool", "timeout"]);
        assert_eq!(q.limit, MAX_LIMIT as usize);
    }
}

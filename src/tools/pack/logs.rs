//! `query_logs`: the pack's log lines filtered by service, level, keywords
//! and a time window.
//!
//! Order: of all matching lines, the newest `limit` are returned, listed
//! oldest first so they read as a timeline; `truncated` says older matches
//! were left out. The newest lines are what an on-call engineer needs.

use crate::text::clean;
use crate::tools::pack::text::{Args, fmt_time, query_summary};
use crate::tools::pack::{LogLine, Pack, Readable};
use crate::tools::{Tool, ToolError, ToolOutput};
use crate::vocab::tool::{EvidenceRef, EvidenceStatus, QUERY_LOGS, ToolSpec};
use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub const DEFAULT_LIMIT: u64 = 50;
pub const MAX_LIMIT: u64 = 200;
/// Message length in refs; bodies carry more, but not without bound.
const REF_MESSAGE_CHARS: usize = 500;
const BODY_MESSAGE_CHARS: usize = 4000;

pub struct QueryLogs {
    pack: Arc<Pack>,
    /// The pack's reference time: finding it scans every line, so it is
    /// found once.
    now: DateTime<Utc>,
    /// Per line of the pack, in order: the normalised level and the
    /// lowercased text a keyword is searched in, made once instead of for
    /// every line of every query.
    indexed: Vec<IndexedLine>,
}

struct IndexedLine {
    level: String,
    haystack: String,
}

impl QueryLogs {
    pub fn new(pack: Arc<Pack>) -> QueryLogs {
        let now = pack.now();
        let indexed = pack
            .logs
            .iter()
            .map(|l| IndexedLine {
                level: norm_level(&l.level),
                haystack: haystack(l),
            })
            .collect();
        QueryLogs { pack, now, indexed }
    }
}

/// WARNING and WARN are the same level to anyone asking.
fn norm_level(l: &str) -> String {
    match l.trim().to_ascii_uppercase().as_str() {
        "WARNING" => "WARN".into(),
        "ERR" => "ERROR".into(),
        "CRITICAL" | "CRIT" => "FATAL".into(),
        other => other.to_string(),
    }
}

pub fn log_ref_text(l: &LogLine) -> String {
    format!(
        "{} {} {} {}",
        fmt_time(&l.ts),
        clean(&l.level, 10),
        clean(&l.service, 80),
        clean(&l.message, REF_MESSAGE_CHARS)
    )
}

fn haystack(l: &LogLine) -> String {
    let mut s = l.message.to_lowercase();
    for v in l.extra.values() {
        s.push(' ');
        match v {
            Value::String(x) => s.push_str(&x.to_lowercase()),
            other => s.push_str(&other.to_string().to_lowercase()),
        }
    }
    s
}

fn body_line(l: &LogLine) -> Value {
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
    for (k, v) in &l.extra {
        if !m.contains_key(k) {
            m.insert(k.clone(), v.clone());
        }
    }
    Value::Object(m)
}

#[async_trait]
impl Tool for QueryLogs {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: QUERY_LOGS.into(),
            description: "Log lines of the environment. Filter by service, level (ERROR, WARN, INFO...), keyword (case-insensitive; several words must all match) and time (since/until RFC 3339, or window_minutes before now). Returns the newest `limit` matches in time order.".into(),
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

    fn backend(&self) -> String {
        self.pack.backend()
    }

    fn pack(&self) -> Option<&Arc<Pack>> {
        Some(&self.pack)
    }

    async fn call(&self, args: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
        let partial = self.pack.health.logs.check()?;
        let a = Args::new(
            args,
            &[
                "service",
                "level",
                "keyword",
                "since",
                "until",
                "window_minutes",
                "limit",
            ],
        )?;
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
            let now = self.now;
            let w = i64::try_from(w.min(10 * 365 * 24 * 60)).unwrap_or(0);
            since = Some(now - Duration::minutes(w));
            until = Some(now);
        }
        if let (Some(s), Some(u)) = (since, until) {
            if s > u {
                return Err(ToolError::InvalidArguments(
                    "'since' is after 'until'".into(),
                ));
            }
        }
        let limit = a
            .uint("limit")?
            .unwrap_or(DEFAULT_LIMIT)
            .clamp(1, MAX_LIMIT) as usize;

        let matching: Vec<&LogLine> = self
            .pack
            .logs
            .iter()
            .zip(&self.indexed)
            .filter(|(l, ix)| {
                service
                    .as_ref()
                    .is_none_or(|s| l.service.eq_ignore_ascii_case(s))
                    && levels.as_ref().is_none_or(|ls| ls.contains(&ix.level))
                    && since.is_none_or(|s| l.ts >= s)
                    && until.is_none_or(|u| l.ts <= u)
                    && words.iter().all(|w| ix.haystack.contains(w.as_str()))
            })
            .map(|(l, _)| l)
            .collect();
        let total = matching.len();
        if total == 0 {
            if let Some(why) = partial {
                return Err(Readable::nothing_found_in_part(why));
            }
            let mut msg = String::from("no log line matched these filters");
            if let Some(s) = &service {
                if !self
                    .pack
                    .logs
                    .iter()
                    .any(|l| l.service.eq_ignore_ascii_case(s))
                {
                    msg.push_str("; the pack has no log lines at all for this service");
                }
            }
            return Ok(ToolOutput::no_evidence(
                QUERY_LOGS,
                &query_summary(args),
                &msg,
            ));
        }
        let shown = matching.get(total.saturating_sub(limit)..).unwrap_or(&[]);
        Ok(ToolOutput {
            body: json!({
                "logs": shown.iter().map(|l| body_line(l)).collect::<Vec<_>>(),
                "total": total,
                "truncated": total > shown.len(),
            }),
            evidence_status: EvidenceStatus::Supported,
            evidence_refs: shown
                .iter()
                .enumerate()
                .map(|(i, l)| EvidenceRef {
                    raw_path: format!("$.logs[{i}]"),
                    text: log_ref_text(l),
                })
                .collect(),
            retrieved_domains: vec![],
            partial: partial.map(str::to_string),
        })
    }
}

//! Reading tool results back into evidence items: alerts, log lines,
//! knowledge blocks, no-evidence answers and failures.
//!
//! Every item keeps the invocation id, tool name, raw_path and ref text it
//! came from, because claims may only be built from those refs. The tool
//! body is used for structure (service, level, message); when it is absent
//! or odd, the ref text is parsed instead. Nothing in tool text is ever
//! interpreted as an instruction: it is data to group and quote.

use crate::model::offline::text::{field, leading_timestamp, ref_fields, template};
use crate::text::clean;
use crate::vocab::contracts::NO_EVIDENCE_PATH;
use crate::vocab::level::{self, Level};
use crate::vocab::time;
use crate::vocab::tool::{
    LOOKUP_KNOWLEDGE, QUERY_LOGS, QUERY_METRICS, UNKNOWN_SERVICE_NOTE, summarize_args,
};
use chrono::{DateTime, Duration, Utc};
use serde_json::Value;
use std::collections::BTreeSet;

/// Where a piece of evidence came from: exactly what a binding cites.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub invocation_id: Option<i64>,
    pub tool: String,
    pub raw_path: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AlertItem {
    pub src: Source,
    pub alertname: String,
    pub service: String,
    pub state: String,
    /// Detail fields as they appear in the ref text (`value=92%`).
    pub details: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LogItem {
    pub src: Source,
    pub service: String,
    pub level: String,
    /// The message template used for grouping.
    pub template: String,
    /// The timestamp as the ref text writes it.
    pub ts: String,
    /// The lines like this one that matched, counted over every match by
    /// the tool, when the sample does not show them all.
    pub similar: Option<Similar>,
    /// The keywords (lower case) of the queries that returned this line:
    /// what a keyword query found is shown.
    pub found_by: Vec<String>,
}

/// `similar` of a `query_logs` line: how many lines like it matched and
/// when, as its ref text states them.
#[derive(Debug, Clone, PartialEq)]
pub struct Similar {
    pub pattern: String,
    pub count: u64,
    pub first: String,
    pub last: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KnowledgeItem {
    pub source: String,
    pub breadcrumb: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NoEvidence {
    pub src: Source,
    pub query: String,
    /// The service the query asked about, if any.
    pub service: Option<String>,
    /// The source said no part of it names that service.
    pub unknown_service: bool,
    /// A narrower form (fewer levels) of a query that did find lines: it
    /// says nothing the wider query's lines do not.
    pub narrowed: bool,
    args: Value,
}

/// Everything this Executor conversation's tool results contained.
#[derive(Debug, Clone, Default)]
pub struct Collected {
    pub alerts: Vec<AlertItem>,
    pub logs: Vec<LogItem>,
    pub knowledge: Vec<KnowledgeItem>,
    pub no_evidence: Vec<NoEvidence>,
    /// Human notes on failed or blocked calls.
    pub failures: Vec<String>,
    /// Queries whose results were cut at their limit: (tool, query,
    /// returned, total).
    pub truncated: Vec<(String, String, usize, u64)>,
    /// (tool, args summary) of every answered call.
    pub answered: BTreeSet<String>,
}

/// Alert detail keys worth stating, in this order.
const ALERT_DETAILS: &[&str] = &["value", "severity", "active_for", "since"];

pub fn collect(results: &[Value], skip: &BTreeSet<(i64, String)>) -> Collected {
    let mut c = Collected::default();
    let mut seen_text: BTreeSet<(String, String)> = BTreeSet::new();
    let mut supported_logs: Vec<Value> = Vec::new();
    for r in results {
        let tool = r
            .get("tool")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let args = r.get("arguments").cloned().unwrap_or(Value::Null);
        let query = summarize_args(&args);
        c.answered.insert(super::planner::query_key(&tool, &args));
        let invocation_id = r.get("invocation_id").and_then(Value::as_i64);
        let status = r
            .get("evidence_status")
            .and_then(Value::as_str)
            .unwrap_or("");
        let blocked = r.get("blocked").and_then(Value::as_bool).unwrap_or(false);
        if blocked || status == "failed" {
            let why = r
                .get("error")
                .and_then(Value::as_str)
                .map(|e| clean(e, 120))
                .unwrap_or_else(|| {
                    if blocked {
                        "not permitted".into()
                    } else {
                        "failed".into()
                    }
                });
            c.failures.push(format!("{tool} {query}: {why}"));
            continue;
        }
        let body = r.get("result").unwrap_or(&Value::Null);
        // Counts are of the returned lines only, unless the tool says each
        // line states how many like it matched.
        if body.get("truncated").and_then(Value::as_bool) == Some(true)
            && body.get("counts_complete").and_then(Value::as_bool) != Some(true)
        {
            let returned = body
                .get("logs")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            let total = body.get("total").and_then(Value::as_u64).unwrap_or(0);
            c.truncated
                .push((tool.clone(), query.clone(), returned, total));
        }
        let refs = r
            .get("evidence_refs")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for rf in &refs {
            let (Some(raw_path), Some(text)) = (
                rf.get("raw_path").and_then(Value::as_str),
                rf.get("text").and_then(Value::as_str),
            ) else {
                continue;
            };
            if invocation_id.is_some_and(|id| skip.contains(&(id, raw_path.to_string()))) {
                continue;
            }
            let src = Source {
                invocation_id,
                tool: tool.clone(),
                raw_path: raw_path.to_string(),
                text: text.to_string(),
            };
            if raw_path == NO_EVIDENCE_PATH {
                let service = args
                    .get("service")
                    .and_then(Value::as_str)
                    .map(|s| clean(s, 80))
                    .filter(|s| !s.is_empty());
                c.no_evidence.push(NoEvidence {
                    unknown_service: service.is_some() && text.contains(UNKNOWN_SERVICE_NOTE),
                    service,
                    src,
                    query: query.clone(),
                    narrowed: false,
                    args: args.clone(),
                });
                continue;
            }
            // The same line or alert returned by two queries is one item.
            if !seen_text.insert((tool.clone(), text.to_string())) {
                if let Some(k) = keyword_of(&args)
                    && let Some(l) = c.logs.iter_mut().find(|l| l.src.text == text)
                    && !l.found_by.contains(&k)
                {
                    l.found_by.push(k);
                }
                continue;
            }
            let item = array_item(body, raw_path);
            match tool.as_str() {
                // Metric series ($.series[i]) are not alerts; this model
                // does not reason about values, so it leaves them out.
                QUERY_METRICS if !raw_path.starts_with("$.alerts[") => {}
                QUERY_METRICS => c.alerts.push(alert_item(src, item)),
                QUERY_LOGS => c.logs.push(log_item(src, item, &args)),
                LOOKUP_KNOWLEDGE => c.knowledge.push(knowledge_item(&src, item)),
                // Unknown evidence tools: keep their refs as log-like text.
                _ => c.logs.push(log_item(src, None, &args)),
            }
        }
        if status == "supported" && tool == QUERY_LOGS {
            supported_logs.push(args.clone());
        }
    }
    for n in c
        .no_evidence
        .iter_mut()
        .filter(|n| n.src.tool == QUERY_LOGS)
    {
        n.narrowed = supported_logs
            .iter()
            .any(|wide| narrows_levels(&n.args, wide));
    }
    c
}

/// `narrow` is `wide` with fewer levels and nothing else changed.
fn narrows_levels(narrow: &Value, wide: &Value) -> bool {
    let (Some(n), Some(w)) = (narrow.as_object(), wide.as_object()) else {
        return false;
    };
    let levels = |m: &serde_json::Map<String, Value>| -> BTreeSet<String> {
        m.get("level")
            .and_then(Value::as_str)
            .unwrap_or("")
            .split(',')
            .map(level::canonical)
            .filter(|l| !l.is_empty())
            .collect()
    };
    let same_rest =
        n.len() == w.len() && n.iter().all(|(k, v)| k == "level" || w.get(k) == Some(v));
    let (ln, lw) = (levels(n), levels(w));
    same_rest && !ln.is_empty() && ln.len() < lw.len() && ln.is_subset(&lw)
}

/// `$.logs[3]` -> body["logs"][3].
fn array_item<'a>(body: &'a Value, raw_path: &str) -> Option<&'a Value> {
    let rest = raw_path.strip_prefix("$.")?;
    let (name, idx) = rest.split_once('[')?;
    let idx: usize = idx.strip_suffix(']')?.parse().ok()?;
    body.get(name)?.get(idx)
}

fn str_at<'a>(v: Option<&'a Value>, path: &[&str]) -> Option<&'a str> {
    let mut cur = v?;
    for p in path {
        cur = cur.get(p)?;
    }
    cur.as_str().filter(|s| !s.trim().is_empty())
}

fn alert_item(src: Source, item: Option<&Value>) -> AlertItem {
    let fields = ref_fields(&src.text);
    let from_text = |k: &str| field(&fields, k).map(str::to_string);
    let alertname = from_text("alertname")
        .or_else(|| str_at(item, &["labels", "alertname"]).map(str::to_string))
        .unwrap_or_default();
    let service = from_text("service")
        .or_else(|| str_at(item, &["labels", "service"]).map(str::to_string))
        .or_else(|| from_text("job"))
        .or_else(|| from_text("instance"))
        .unwrap_or_default();
    let state = from_text("state")
        .or_else(|| str_at(item, &["state"]).map(str::to_string))
        .unwrap_or_default();
    // Details are only stated when the ref text carries them verbatim.
    let details = ALERT_DETAILS
        .iter()
        .filter_map(|k| field(&fields, k).map(|v| (k.to_string(), clean(v, 40))))
        .filter(|(_, v)| src.text.contains(v.as_str()))
        .collect();
    AlertItem {
        alertname: clean(&alertname, 80),
        service: clean(&service, 80),
        state: clean(&state, 20).to_lowercase(),
        details,
        src,
    }
}

fn log_item(src: Source, item: Option<&Value>, args: &Value) -> LogItem {
    let ts_text = leading_timestamp(&src.text);
    let level = str_at(item, &["level"])
        .map(str::to_string)
        .or_else(|| level::find_in_text(&src.text, 6).map(|(w, _)| w.to_string()))
        .unwrap_or_default()
        .to_ascii_uppercase();
    let service = str_at(item, &["service"])
        .or_else(|| args.get("service").and_then(Value::as_str))
        .unwrap_or("")
        .to_string();
    let message = str_at(item, &["message"]).map(str::to_string);
    let similar = similar(&src.text, item);
    // The ref text without the figures the tool appended.
    let line_text = match similar_suffix_start(&src.text) {
        Some(i) if similar.is_some() => &src.text[..i],
        _ => src.text.as_str(),
    };
    // Prefer the body message when the ref text really contains it, so
    // that the quoted template can be found in the cited text.
    let message = match message {
        Some(m) if line_text.contains(m.trim()) => m,
        _ => strip_prefix_fields(line_text, ts_text.as_deref(), &level, &service),
    };
    LogItem {
        service: clean(&service, 80),
        level: clean(&level, 12),
        template: template(&message),
        ts: ts_text.unwrap_or_default(),
        similar,
        found_by: keyword_of(args).into_iter().collect(),
        src,
    }
}

/// The keyword the query searched for, lower case.
fn keyword_of(args: &Value) -> Option<String> {
    args.get("keyword")
        .and_then(Value::as_str)
        .map(|k| k.trim().to_lowercase())
        .filter(|k| !k.is_empty())
}

const SIMILAR_MARK: &str = " matching lines like this";

fn similar_suffix_start(text: &str) -> Option<usize> {
    let at = text.rfind(SIMILAR_MARK)?;
    text[..at].rfind(" | ")
}

/// The body's `similar` figures, taken only when the ref text states
/// them (a claim built on them must find them in what it cites).
fn similar(text: &str, item: Option<&Value>) -> Option<Similar> {
    let s = item?.get("similar")?;
    let count = s.get("count")?.as_u64()?;
    let first = s.get("first")?.as_str()?.to_string();
    let last = s.get("last")?.as_str()?.to_string();
    let pattern = s.get("pattern")?.as_str()?.to_string();
    let stated = format!(" | {count}{SIMILAR_MARK} between {first} and {last}");
    text.ends_with(&stated).then_some(Similar {
        pattern,
        count,
        first,
        last,
    })
}

/// The message part of a `TS LEVEL SERVICE message` ref text.
fn strip_prefix_fields(text: &str, ts: Option<&str>, level: &str, service: &str) -> String {
    let mut rest = text.trim_start();
    if let Some(ts) = ts {
        rest = rest.strip_prefix(ts).unwrap_or(rest).trim_start();
    }
    for word in [level, service] {
        if word.is_empty() {
            continue;
        }
        if let Some(first) = rest.split_whitespace().next()
            && first
                .trim_matches(['[', ']', ':'])
                .eq_ignore_ascii_case(word)
        {
            rest = rest[first.len()..].trim_start();
        }
    }
    rest.to_string()
}

fn knowledge_item(src: &Source, item: Option<&Value>) -> KnowledgeItem {
    let source = str_at(item, &["source"]).unwrap_or("").to_string();
    let breadcrumb = str_at(item, &["breadcrumb"]).unwrap_or("").to_string();
    let text = str_at(item, &["text"]).unwrap_or(&src.text).to_string();
    KnowledgeItem {
        source: clean(&source, 120),
        breadcrumb: clean(&breadcrumb, 120),
        text,
    }
}

/// Log lines grouped by (service, level, template), in rank order: the
/// most severe level first, then by size, then by first seen.
pub fn group_logs(logs: &[LogItem]) -> Vec<Vec<&LogItem>> {
    let mut groups: Vec<Vec<&LogItem>> = Vec::new();
    // Lines the tool counted as alike group by its pattern: the figures
    // they state are of that group.
    let same = |f: &LogItem, l: &LogItem| match (&f.similar, &l.similar) {
        (Some(a), Some(b)) => a.pattern == b.pattern,
        (None, None) => f.template == l.template,
        _ => false,
    };
    for l in logs {
        match groups.iter_mut().find(|g| {
            g.first()
                .is_some_and(|f| f.service == l.service && f.level == l.level && same(f, l))
        }) {
            Some(g) => g.push(l),
            None => groups.push(vec![l]),
        }
    }
    // Stable sort keeps first-seen order among equals.
    groups.sort_by(|a, b| {
        let ra = a.first().map_or(9, |l| level_rank(&l.level));
        let rb = b.first().map_or(9, |l| level_rank(&l.level));
        ra.cmp(&rb).then(group_count(b).cmp(&group_count(a)))
    });
    groups
}

/// Lines in a group: as the tool counted them over every match when its
/// lines say so, else the lines returned.
pub fn group_count(g: &[&LogItem]) -> u64 {
    g.iter()
        .filter_map(|l| l.similar.as_ref().map(|s| s.count))
        .max()
        .unwrap_or(g.len() as u64)
}

/// First and last time of a group, over every match when its lines say.
pub fn group_range(g: &[&LogItem]) -> Option<(String, String)> {
    if let Some(s) = g.iter().find_map(|l| l.similar.as_ref()) {
        return Some((s.first.clone(), s.last.clone()));
    }
    let times = || g.iter().map(|l| l.ts.as_str()).filter(|t| !t.is_empty());
    Some((times().min()?.to_string(), times().max()?.to_string()))
}

/// When a group's lines were written, as times (None when a side is
/// missing or unreadable).
pub fn group_times(g: &[&LogItem]) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    let (a, b) = group_range(g)?;
    Some((time::parse_ts(&a)?, time::parse_ts(&b)?))
}

impl AlertItem {
    /// When the alert became active, as its ref text states.
    pub fn since(&self) -> Option<DateTime<Utc>> {
        let (_, v) = self.details.iter().find(|(k, _)| k == "since")?;
        time::parse_ts(v)
    }

    /// Firing or pending: the alert has an active window that is still open.
    pub fn is_active(&self) -> bool {
        matches!(self.state.as_str(), "firing" | "pending")
    }
}

/// How a log group's time relates to an alert's active window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// The lines reach into the window (or end within `margin` before it).
    Overlaps,
    /// Every line is older than the window's start minus the margin.
    Before,
    /// A time is missing: the relation cannot be stated.
    Unknown,
}

pub fn timing(g: &[&LogItem], a: &AlertItem, margin: Duration) -> Timing {
    match (group_times(g), a.since()) {
        (Some((_, last)), Some(since)) if last >= since - margin => Timing::Overlaps,
        (Some(_), Some(_)) => Timing::Before,
        _ => Timing::Unknown,
    }
}

/// Most severe first: 0 for FATAL (and its aliases), 1 ERROR, 2 WARN, 3
/// the rest.
pub fn level_rank(level: &str) -> u8 {
    match Level::parse(level) {
        Some(Level::Fatal) => 0,
        Some(Level::Error) => 1,
        Some(Level::Warn) => 2,
        _ => 3,
    }
}

/// ERROR or worse, in any spelling.
pub fn is_error_level(level: &str) -> bool {
    Level::parse(level).is_some_and(Level::is_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn collects_and_dedups_log_lines() {
        let line = "2026-07-08T23:05:28Z ERROR order-service pool timeout after 30000ms";
        let result = |id: i64| {
            json!({"invocation_id": id, "tool": "query_logs", "arguments": {"service": "order-service"},
                "evidence_status": "supported",
                "evidence_refs": [{"raw_path": "$.logs[0]", "text": line}],
                "result": {"logs": [{"ts": "2026-07-08T23:05:28Z", "service": "order-service",
                    "level": "ERROR", "message": "pool timeout after 30000ms"}], "total": 1}})
        };
        let c = collect(&[result(1), result(2)], &BTreeSet::new());
        assert_eq!(c.logs.len(), 1);
        assert_eq!(c.logs[0].template, "pool timeout after *");
        assert_eq!(c.logs[0].ts, "2026-07-08T23:05:28Z");
    }

    #[test]
    fn metric_series_are_not_taken_for_alerts() {
        let r = json!({"invocation_id": 1, "tool": "query_metrics", "arguments": {"service": "payment-service"},
            "evidence_status": "supported",
            "evidence_refs": [
                {"raw_path": "$.alerts[0]", "text": "alertname=HighCPUUsage service=payment-service state=firing value=92"},
                {"raw_path": "$.series[0]", "text": "metric=up service=payment-service at=2026-07-08T22:40:00Z value=1"}],
            "result": {"alerts": [{"labels": {"alertname": "HighCPUUsage"}}],
                "series": [{"metric": {"__name__": "up"}, "value": 1.0}]}});
        let c = collect(&[r], &BTreeSet::new());
        assert_eq!(c.alerts.len(), 1);
        assert_eq!(c.alerts[0].alertname, "HighCPUUsage");
    }
}

//! A [`Timeline`] from a run's recorded invocations and checked bindings,
//! whether they come from the store (`RunTrace`) or from the events a
//! workbench folded (live or replayed): the same input, the same picture.

use super::refs::{self, LogRef};
use super::{AlertState, Marker, MarkerKind, Row, RowKind, Timeline, WindowSource};
use crate::text::{clean, pattern::pattern};
use crate::vocab::contracts::{BindingStatus, CheckedBinding, GatekeeperResult};
use crate::vocab::run_trace::RunTrace;
use crate::vocab::time::{self, Window};
use crate::vocab::tool::{
    EvidenceStatus, QUERY_LOGS, QUERY_METRICS, RetrievalDetails, ToolInvocation,
};
use chrono::{DateTime, Duration, Utc};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Row labels are cut here; a view cuts them further to its width.
const LABEL_CHARS: usize = 160;

/// What makes two reads of an alert the same alert: name, service, start.
type AlertKey = (String, String, DateTime<Utc>);

/// One recorded invocation, as the timeline reads it.
pub struct Evidence<'a> {
    pub id: i64,
    pub tool_name: &'a str,
    pub input_params: &'a Value,
    pub output_preview: &'a str,
    pub details: &'a RetrievalDetails,
    pub success: bool,
}

/// Everything a timeline is drawn from.
pub struct TimelineInput<'a> {
    pub question: &'a str,
    pub evidence: Vec<Evidence<'a>>,
    pub bindings: &'a [CheckedBinding],
}

impl<'a> TimelineInput<'a> {
    /// From a stored run.
    pub fn from_trace(trace: &'a RunTrace) -> TimelineInput<'a> {
        TimelineInput {
            question: &trace.run.query,
            evidence: trace
                .tool_invocations
                .iter()
                .filter_map(|i| {
                    Some(Evidence {
                        id: i.id,
                        tool_name: &i.tool_name,
                        input_params: &i.input_params,
                        output_preview: &i.output_preview,
                        details: i.retrieval_details.typed()?,
                        success: i.success,
                    })
                })
                .collect(),
            bindings: trace
                .run
                .gatekeeper_result
                .as_ref()
                .map_or(&[], |g| g.checked_bindings.as_slice()),
        }
    }

    /// From invocations and the latest Gatekeeper result a view folded.
    pub fn from_invocations(
        question: &'a str,
        invocations: &'a [std::sync::Arc<ToolInvocation>],
        gatekeeper: Option<&'a GatekeeperResult>,
    ) -> TimelineInput<'a> {
        TimelineInput {
            question,
            evidence: invocations
                .iter()
                .map(|i| Evidence {
                    id: i.id,
                    tool_name: &i.tool_name,
                    input_params: &i.input_params,
                    output_preview: &i.output_preview,
                    details: &i.retrieval_details,
                    success: i.success,
                })
                .collect(),
            bindings: gatekeeper.map_or(&[], |g| g.checked_bindings.as_slice()),
        }
    }
}

pub fn build(input: &TimelineInput) -> Option<Timeline> {
    let cited: HashSet<(i64, &str)> = input
        .bindings
        .iter()
        .filter(|b| b.status == BindingStatus::Pass)
        .filter_map(|b| Some((b.source_invocation_id?, b.raw_path.as_deref()?)))
        .collect();
    let question = input.question.to_lowercase();
    let mut rows: Vec<Row> = Vec::new();
    let mut alerts_seen: HashMap<AlertKey, usize> = HashMap::new();
    for e in &input.evidence {
        if !e.success || e.details.evidence_status != EvidenceStatus::Supported {
            continue;
        }
        let is_cited = |path: &str| cited.contains(&(e.id, path));
        match e.tool_name {
            QUERY_METRICS => {
                let body: Option<Value> = serde_json::from_str(e.output_preview).ok();
                for (i, r) in e.details.evidence_refs.iter().enumerate() {
                    if r.raw_path.starts_with("$.alerts[") {
                        let Some((key, row)) =
                            alert_row(e.id, &r.raw_path, &r.text, is_cited(&r.raw_path))
                        else {
                            continue;
                        };
                        // The same alert read twice is one row, cited if
                        // either read is.
                        match alerts_seen.get(&key).and_then(|i| rows.get_mut(*i)) {
                            Some(same) => same.cited |= row.cited,
                            None => {
                                alerts_seen.insert(key, rows.len());
                                rows.push(row);
                            }
                        }
                    } else if r.raw_path.starts_with("$.series[")
                        && let Some(row) = series_row(
                            e.id,
                            &r.raw_path,
                            &r.text,
                            body.as_ref(),
                            i,
                            is_cited(&r.raw_path),
                        )
                    {
                        rows.push(row);
                    }
                }
            }
            QUERY_LOGS => {
                if let Some(row) = logs_row(e, &is_cited) {
                    rows.push(row);
                }
            }
            _ => {}
        }
    }
    if rows.is_empty() {
        return None;
    }
    for r in &mut rows {
        r.subject = r
            .service
            .as_deref()
            .is_some_and(|s| !s.is_empty() && question.contains(&s.to_lowercase()));
    }
    rows.sort_by_key(|r| (!r.subject, kind_order(&r.kind), start_of(r)));
    let markers = markers(&rows, input);
    let (start, end, window) = window(input.question, &rows, &markers)?;
    Some(Timeline {
        start,
        end,
        window,
        rows,
        markers,
    })
}

fn kind_order(k: &RowKind) -> u8 {
    match k {
        RowKind::Alert { .. } => 0,
        RowKind::Logs { .. } => 1,
        RowKind::Series { .. } => 2,
    }
}

fn start_of(r: &Row) -> Option<DateTime<Utc>> {
    match &r.kind {
        RowKind::Alert { start, .. } => Some(*start),
        RowKind::Logs { buckets, .. } => buckets.as_ref().and_then(|b| {
            let i = b.counts.iter().position(|n| *n > 0)?;
            Some(super::us_time(b.bucket_start_us(i)))
        }),
        RowKind::Series { points, .. } => points.first().map(|p| p.0),
    }
}

fn alert_row(id: i64, raw_path: &str, text: &str, cited: bool) -> Option<(AlertKey, Row)> {
    let f = refs::fields(text);
    let state = match refs::field(&f, "state")? {
        "firing" => AlertState::Firing,
        "pending" => AlertState::Pending,
        "resolved" | "inactive" => AlertState::Resolved,
        _ => return None,
    };
    let start = time::parse_ts(refs::field(&f, "since")?)?;
    let end = match state {
        AlertState::Resolved => None,
        _ => refs::field(&f, "active_for")
            .and_then(refs::minutes)
            .map(|m| start + Duration::minutes(m)),
    };
    let name = refs::field(&f, "alertname").unwrap_or("alert").to_string();
    let service = refs::field(&f, "service").map(str::to_string);
    let severity = refs::field(&f, "severity").unwrap_or("");
    let label = clean(
        &format!(
            "alert {name} {} {severity} {}",
            service.as_deref().unwrap_or(""),
            state.as_str()
        ),
        LABEL_CHARS,
    );
    let key = (name, service.clone().unwrap_or_default(), start);
    Some((
        key,
        Row {
            label,
            service,
            subject: false,
            invocation_id: id,
            refs: vec![raw_path.to_string()],
            cited,
            kind: RowKind::Alert { state, start, end },
        },
    ))
}

fn series_row(
    id: i64,
    raw_path: &str,
    text: &str,
    body: Option<&Value>,
    index: usize,
    cited: bool,
) -> Option<Row> {
    let item = body?.get("series")?.get(index)?;
    let points: Vec<(DateTime<Utc>, f64)> = item
        .get("values")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let t = p.get(0)?.as_f64()?;
            let v = p.get(1)?.as_f64().filter(|v| v.is_finite())?;
            Some((DateTime::from_timestamp_millis((t * 1000.0) as i64)?, v))
        })
        .collect();
    if points.is_empty() {
        return None;
    }
    let unit = item
        .get("unit")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let what = text
        .split(" from=")
        .next()
        .unwrap_or(text)
        .split(" at=")
        .next()
        .unwrap_or(text);
    let f = refs::fields(what);
    let service = ["service", "job", "app"]
        .iter()
        .find_map(|k| refs::field(&f, k))
        .map(str::to_string);
    Some(Row {
        label: clean(&format!("series {what} ({unit})"), LABEL_CHARS),
        service,
        subject: false,
        invocation_id: id,
        refs: vec![raw_path.to_string()],
        cited,
        kind: RowKind::Series { unit, points },
    })
}

fn logs_row(e: &Evidence, is_cited: &dyn Fn(&str) -> bool) -> Option<Row> {
    let read: Vec<(&str, LogRef)> = e
        .details
        .evidence_refs
        .iter()
        .filter(|r| r.raw_path.starts_with("$.logs["))
        .filter_map(|r| Some((r.raw_path.as_str(), refs::log_ref(&r.text)?)))
        .collect();
    // The line the row stands for: a cited one, else the one standing
    // for the most lines.
    let chosen = read.iter().find(|(p, _)| is_cited(p)).or_else(|| {
        read.iter()
            .max_by_key(|(_, r)| (r.similar.map_or(1, |s| s.0), r.ts))
    });
    let cited = read.iter().any(|(p, _)| is_cited(p));
    let mut paths: Vec<String> = read
        .iter()
        .filter(|(p, _)| is_cited(p))
        .map(|(p, _)| p.to_string())
        .collect();
    paths.extend(
        read.iter()
            .filter(|(p, _)| !is_cited(p))
            .map(|(p, _)| p.to_string()),
    );
    let arg = |k: &str| e.input_params.get(k).and_then(Value::as_str);
    let service = arg("service")
        .map(str::to_string)
        .or_else(|| chosen.map(|c| c.1.service.clone()));
    let level = arg("level")
        .map(str::to_uppercase)
        .or_else(|| chosen.map(|c| c.1.level.clone()));
    let pattern = chosen.map(|c| pattern(&c.1.message));
    let buckets = e.details.buckets.clone().filter(|b| b.is_sound());
    let total = buckets.as_ref().map_or(read.len() as u64, |b| b.total());
    let mut label = format!(
        "logs {} {}",
        service.as_deref().unwrap_or("*"),
        level.as_deref().unwrap_or("*")
    );
    if let Some(k) = arg("keyword") {
        label.push_str(&format!(" ~{k}"));
    }
    if let Some(p) = &pattern {
        label.push_str(&format!(" \"{p}\""));
    }
    Some(Row {
        label: clean(&label, LABEL_CHARS),
        service,
        subject: false,
        invocation_id: e.id,
        refs: paths,
        cited,
        kind: RowKind::Logs {
            level,
            pattern,
            buckets,
            total,
        },
    })
}

/// The likely cause: the earliest time the evidence of a passing
/// root-cause binding states. The alert start: the earliest start of an
/// active alert about a service the question names, else of any.
fn markers(rows: &[Row], input: &TimelineInput) -> Vec<Marker> {
    let mut out = Vec::new();
    let cause = input
        .bindings
        .iter()
        .filter(|b| b.status == BindingStatus::Pass && b.claim_type == "root_cause")
        .filter_map(|b| evidence_time(&b.matched_text))
        .min();
    if let Some(at) = cause {
        out.push(Marker {
            kind: MarkerKind::LikelyCause,
            at,
        });
    }
    let active_start = |subject_only: bool| {
        rows.iter()
            .filter(|r| r.subject || !subject_only)
            .filter_map(|r| match &r.kind {
                RowKind::Alert { state, start, .. } if *state != AlertState::Resolved => {
                    Some(*start)
                }
                _ => None,
            })
            .min()
    };
    if let Some(at) = active_start(true).or_else(|| active_start(false)) {
        out.push(Marker {
            kind: MarkerKind::AlertStart,
            at,
        });
    }
    out
}

/// The earliest time one evidence text states: a log line's (or its
/// kind's first), an alert's start.
fn evidence_time(text: &str) -> Option<DateTime<Utc>> {
    if let Some(l) = refs::log_ref(text) {
        return Some(l.similar.and_then(|s| s.1).unwrap_or(l.ts).min(l.ts));
    }
    let f = refs::fields(text);
    refs::field(&f, "since").and_then(time::parse_ts)
}

/// The question's window; else the active alerts' windows; else all the
/// evidence's times; with a margin of a tenth (at least a minute) on
/// either side of the latter two, which also hold the likely cause and
/// the cited rows' starts.
fn window(
    question: &str,
    rows: &[Row],
    markers: &[Marker],
) -> Option<(DateTime<Utc>, DateTime<Utc>, WindowSource)> {
    let mut times: Vec<DateTime<Utc>> = Vec::new();
    for r in rows {
        match &r.kind {
            RowKind::Alert { start, end, .. } => {
                times.extend([Some(*start), *end].into_iter().flatten())
            }
            RowKind::Logs {
                buckets: Some(b), ..
            } => {
                let used: Vec<usize> = (0..b.counts.len()).filter(|i| b.counts[*i] > 0).collect();
                if let (Some(f), Some(l)) = (used.first(), used.last()) {
                    times.push(super::us_time(b.bucket_start_us(*f)));
                    times.push(super::us_time(b.bucket_start_us(*l) + b.step_us()));
                }
            }
            RowKind::Logs { .. } => {}
            RowKind::Series { points, .. } => times.extend(points.iter().map(|p| p.0)),
        }
    }
    let now = times.iter().max().copied();
    if let Some(now) = now {
        match time::parse(question, Some(now)) {
            Some(Window::Range { since, until }) if until.unwrap_or(now) > since => {
                return Some((since, until.unwrap_or(now), WindowSource::Question));
            }
            Some(Window::Last { minutes }) if minutes > 0 => {
                return Some((
                    now - Duration::minutes(i64::from(minutes)),
                    now,
                    WindowSource::Question,
                ));
            }
            _ => {}
        }
    }
    let alert_times: Vec<DateTime<Utc>> = rows
        .iter()
        .filter_map(|r| match &r.kind {
            RowKind::Alert { state, start, end } if *state != AlertState::Resolved => {
                Some([Some(*start), *end])
            }
            _ => None,
        })
        .flatten()
        .flatten()
        .collect();
    let (mut ts, source) = if alert_times.is_empty() {
        (times, WindowSource::Evidence)
    } else {
        (alert_times, WindowSource::Alerts)
    };
    // What the answer rests on is in the picture even when it began
    // before any alert: the likely cause and the cited rows' first times.
    ts.extend(markers.iter().map(|m| m.at));
    ts.extend(rows.iter().filter(|r| r.cited).filter_map(start_of));
    let (lo, hi) = (ts.iter().min().copied()?, ts.iter().max().copied()?);
    let margin = ((hi - lo) / 10).max(Duration::minutes(1));
    Some((lo - margin, hi + margin, source))
}

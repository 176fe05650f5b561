//! `query_logs` over Grafana Loki (`DIAGRAPH_LOKI_URL`, `[logs.loki]`).
//!
//! One call is up to five requests, all bounded by the configured timeout:
//! - `GET /loki/api/v1/labels` for the window, to pick the service label
//!   (the first configured one Loki has: `service`, `service_name`, `app`,
//!   `job`) and the level label (`level`, else `detected_level`);
//! - `GET /loki/api/v1/query_range`, `direction=backward`, for the newest
//!   `max_lines` matching lines (the sample is chosen from those);
//! - `GET /loki/api/v1/query` with `sum(count_over_time(…[range]))`, the
//!   exact count of every matching line in the window;
//! - `GET /loki/api/v1/query_range`, `direction=forward`, `limit=1`, for the
//!   time of the oldest one;
//! - `GET /loki/api/v1/query_range` with `sum(count_over_time(…[step]))`,
//!   the matching lines per time bucket of the window.
//!
//! Lines become [`LogLine`]s: the time from the nanosecond timestamp, the
//! service and level from the stream's labels (the level from the line
//! when no label has it), and answer through `tools::logs::answer` like
//! every backend. A window not given is the last `default_window_hours`.
//! Loki counts lines, not kinds of line, so figures per kind are stated
//! only when every matching line was read. A failed count is a partial
//! answer that says so; every other failure fails the call with its reason.

pub mod logql;

use crate::config::LokiConfig;
use crate::tools::common::fmt_time;
use crate::tools::http::{Auth, HttpSource};
use crate::tools::logs::sample::Sampler;
use crate::tools::logs::{
    Found, LogLine, LogQuery, answer, detect_level, pattern, query_logs_spec,
};
use crate::tools::{Tool, ToolError, ToolOutput};
use crate::vocab::buckets::TimeBuckets;
use crate::vocab::tool::ToolSpec;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use std::time::Duration;

pub struct LokiLogs {
    src: HttpSource,
    service_labels: Vec<String>,
    level_labels: Vec<String>,
    max_lines: usize,
    default_window: chrono::Duration,
    timeout: Duration,
}

impl std::fmt::Debug for LokiLogs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LokiLogs").field("src", &self.src).finish()
    }
}

impl LokiLogs {
    /// From `[logs.loki]`: a bad URL or label name is an error now.
    pub fn new(cfg: &LokiConfig, timeout: Duration) -> Result<LokiLogs, String> {
        let url = cfg.url.clone().unwrap_or_default();
        if url.trim().is_empty() {
            return Err(
                "the loki log backend needs a URL (set DIAGRAPH_LOKI_URL or logs.loki.url)".into(),
            );
        }
        for l in cfg.service_labels.iter().chain(&cfg.level_labels) {
            if !logql::valid_label(l) {
                return Err(format!("logs.loki: {l:?} is not a Loki label name"));
            }
        }
        if cfg.service_labels.is_empty() || cfg.level_labels.is_empty() {
            return Err(
                "logs.loki: service_labels and level_labels need at least one label".into(),
            );
        }
        let auth = match (&cfg.bearer_token, &cfg.username) {
            (Some(t), _) => Auth::Bearer(t.clone()),
            (None, Some(u)) => Auth::Basic {
                user: u.clone(),
                password: cfg.password.clone().unwrap_or_default(),
            },
            (None, None) => Auth::None,
        };
        let headers = cfg
            .tenant
            .iter()
            .map(|t| ("X-Scope-OrgID".to_string(), t.clone()))
            .collect();
        Ok(LokiLogs {
            src: HttpSource::new("Loki", &url, timeout, auth, headers)?,
            service_labels: cfg.service_labels.clone(),
            level_labels: cfg.level_labels.clone(),
            max_lines: cfg.max_lines.clamp(1, 5000),
            default_window: chrono::Duration::hours(i64::from(cfg.default_window_hours.max(1))),
            timeout,
        })
    }

    fn first_present<'a>(&self, want: &'a [String], have: &[String]) -> Option<&'a str> {
        want.iter()
            .find(|w| have.iter().any(|h| h == *w))
            .map(String::as_str)
    }

    fn line(
        &self,
        labels: &Map<String, Value>,
        service_label: &str,
        v: &Value,
    ) -> Result<LogLine, ToolError> {
        let bad = |why: &str| {
            ToolError::BadResponse(format!("Loki query_range answered a value that is {why}"))
        };
        let pair = v
            .as_array()
            .ok_or_else(|| bad("not a [timestamp, line] pair"))?;
        let ns: i64 = pair
            .first()
            .and_then(Value::as_str)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("without a nanosecond timestamp"))?;
        let text = pair
            .get(1)
            .and_then(Value::as_str)
            .ok_or_else(|| bad("without a line"))?;
        let label = |k: &str| {
            labels
                .get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        let service = label(service_label)
            .or_else(|| self.service_labels.iter().find_map(|k| label(k)))
            .unwrap_or("")
            .to_string();
        let level = self
            .level_labels
            .iter()
            .find_map(|k| label(k))
            .map(str::to_ascii_uppercase)
            .or_else(|| detect_level(text).map(str::to_string))
            .unwrap_or_else(|| "UNKNOWN".into());
        let mut extra = Map::new();
        for (k, v) in labels {
            if k != service_label && !self.level_labels.contains(k) {
                extra.insert(k.clone(), v.clone());
            }
        }
        Ok(LogLine {
            ts: DateTime::from_timestamp_nanos(ns),
            service,
            level,
            message: text.to_string(),
            extra,
        })
    }

    async fn lines(
        &self,
        logql: &str,
        start: i64,
        end: i64,
        limit: usize,
        forward: bool,
        service_label: &str,
    ) -> Result<Vec<LogLine>, ToolError> {
        let data = self
            .src
            .get(
                "/loki/api/v1/query_range",
                &[
                    ("query", logql.to_string()),
                    ("start", start.to_string()),
                    ("end", end.to_string()),
                    ("limit", limit.to_string()),
                    (
                        "direction",
                        if forward { "forward" } else { "backward" }.to_string(),
                    ),
                ],
            )
            .await
            .and_then(success)?;
        if data.get("resultType").and_then(Value::as_str) != Some("streams") {
            return Err(ToolError::BadResponse(
                "Loki query_range answered without resultType \"streams\"".into(),
            ));
        }
        let streams = data
            .get("result")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                ToolError::BadResponse("Loki query_range answered without data.result".into())
            })?;
        let mut out = Vec::new();
        for s in streams {
            let labels = s
                .get("stream")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            for v in s
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                out.push(self.line(&labels, service_label, v)?);
            }
        }
        Ok(out)
    }

    async fn count(&self, logql: &str, start: i64, end: i64) -> Result<u64, ToolError> {
        let range = u64::try_from((end - start) / 1_000_000_000).unwrap_or(1);
        let data = self
            .src
            .get(
                "/loki/api/v1/query",
                &[
                    ("query", logql::count_query(logql, range)),
                    ("time", end.to_string()),
                ],
            )
            .await
            .and_then(success)?;
        let result = data
            .get("result")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                ToolError::BadResponse("Loki query answered without data.result".into())
            })?;
        // No series: nothing matched.
        let Some(first) = result.first() else {
            return Ok(0);
        };
        first
            .get("value")
            .and_then(|v| v.get(1))
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|n| n.is_finite() && *n >= 0.0)
            .map(|n| n.round() as u64)
            .ok_or_else(|| {
                ToolError::BadResponse("Loki answered a count that is not a number".into())
            })
    }
}

impl LokiLogs {
    /// The matching lines per bucket of `grid`: one range query of
    /// `count_over_time` whose range is the step. Loki counts a range
    /// `(t - range, t]` at each evaluation time `t`; evaluating 1 ns before
    /// each bucket's end makes that `[bucket start, bucket end)`, the
    /// buckets every backend records. A step with no line has no point.
    async fn buckets(&self, logql: &str, mut grid: TimeBuckets) -> Result<TimeBuckets, ToolError> {
        let step_ns = grid.step_ms.max(1).saturating_mul(1_000_000);
        let first_eval = grid
            .start
            .timestamp_nanos_opt()
            .unwrap_or(i64::MAX)
            .saturating_add(step_ns - 1);
        let last_eval =
            first_eval.saturating_add(step_ns.saturating_mul(grid.counts.len() as i64 - 1));
        let data = self
            .src
            .get(
                "/loki/api/v1/query_range",
                &[
                    ("query", logql::bucket_query(logql, grid.step_ms)),
                    ("start", first_eval.to_string()),
                    ("end", last_eval.to_string()),
                    ("step", format!("{}ms", grid.step_ms.max(1))),
                ],
            )
            .await
            .and_then(success)?;
        let bad = |why: &str| ToolError::BadResponse(format!("Loki's count per step {why}"));
        if data.get("resultType").and_then(Value::as_str) != Some("matrix") {
            return Err(bad("came without resultType \"matrix\""));
        }
        let series = data
            .get("result")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("came without data.result"))?;
        for point in series
            .iter()
            .filter_map(|s| s.get("values").and_then(Value::as_array))
            .flatten()
        {
            let secs = point
                .get(0)
                .and_then(|t| t.as_f64().or_else(|| t.as_str()?.parse().ok()))
                .filter(|t| t.is_finite())
                .ok_or_else(|| bad("has a point without a time"))?;
            let n = point
                .get(1)
                .and_then(Value::as_str)
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|n| n.is_finite() && *n >= 0.0)
                .ok_or_else(|| bad("has a count that is not a number"))?;
            // Times come back in seconds, rounded; the nearest step is the one.
            let k = ((secs * 1e9 - first_eval as f64) / step_ns as f64).round();
            let slot = (k >= 0.0)
                .then(|| usize::try_from(k as i64).ok())
                .flatten()
                .and_then(|k| grid.counts.get_mut(k))
                .ok_or_else(|| bad("has a point outside the window asked"))?;
            *slot += n.round() as u64;
        }
        Ok(grid)
    }
}

/// The `data` of a `{"status": "success"}` answer.
fn success(v: Value) -> Result<Value, ToolError> {
    if v.get("status").and_then(Value::as_str) != Some("success") {
        return Err(ToolError::BadResponse(format!(
            "Loki answered without status \"success\": {}",
            crate::text::clean(&v.to_string(), 200)
        )));
    }
    Ok(v.get("data").cloned().unwrap_or(Value::Null))
}

#[async_trait]
impl Tool for LokiLogs {
    fn spec(&self) -> ToolSpec {
        query_logs_spec()
    }

    fn backend(&self) -> String {
        format!("loki:{}", self.src.shown_url())
    }

    /// Five requests, each bounded by the timeout.
    fn timeout(&self) -> Option<Duration> {
        Some(self.timeout * 5 + Duration::from_secs(1))
    }

    async fn call(&self, args: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
        let now = Utc::now();
        let q = LogQuery::parse(args, now)?;
        let end = q.until.unwrap_or(now);
        let start = q.since.unwrap_or(end - self.default_window);
        let ns = |t: DateTime<Utc>| t.timestamp_nanos_opt().unwrap_or(i64::MAX);
        let (start_ns, end_ns) = (ns(start), ns(end));
        let labels: Vec<String> = self
            .src
            .get(
                "/loki/api/v1/labels",
                &[("start", start_ns.to_string()), ("end", end_ns.to_string())],
            )
            .await
            .and_then(success)?
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let window = format!("between {} and {}", fmt_time(&start), fmt_time(&end));
        let Some(service_label) = self.first_present(&self.service_labels, &labels) else {
            let msg = format!(
                "Loki at {} has no stream with a service label ({}) {window}",
                self.src.shown_url(),
                self.service_labels.join(", ")
            );
            return answer(empty(), args, &msg, None);
        };
        let level_label = self
            .first_present(&self.level_labels, &labels)
            .or(self.level_labels.last().map(String::as_str))
            .unwrap_or("level");
        let levels = q.levels.clone().unwrap_or_default();
        let query = logql::log_query(&logql::Selection {
            service_label,
            service: q.service.as_deref(),
            level_label,
            levels: &levels,
            words: &q.words,
        });
        let lines = self
            .lines(
                &query,
                start_ns,
                end_ns,
                self.max_lines,
                false,
                service_label,
            )
            .await?;
        // The count is what makes figures exact; without it the answer
        // stands on the lines read, and says so.
        let (total, partial) = match self.count(&query, start_ns, end_ns).await {
            Ok(n) => (n.max(lines.len() as u64), None),
            Err(e) => (
                lines.len() as u64,
                Some(format!(
                    "the count of all matching lines could not be read ({e}); figures are of the {} lines read",
                    lines.len()
                )),
            ),
        };
        if total > 0 && lines.is_empty() {
            return Err(ToolError::BadResponse(format!(
                "Loki counted {total} matching lines but returned none"
            )));
        }
        let complete = total == lines.len() as u64;
        let first = if complete || lines.is_empty() {
            None
        } else {
            self.lines(&query, start_ns, end_ns, 1, true, service_label)
                .await?
                .first()
                .map(LogLine::ts_micros)
        };
        let mut sampler = Sampler::new(q.limit);
        for (i, l) in lines.iter().enumerate() {
            let key = (l.service.clone(), l.level.clone(), pattern(&l.message));
            sampler.add(l.ts_micros(), i as u64, Some(key));
        }
        let mut sample = sampler.finish();
        sample.total = total;
        // Counts per bucket are read only when the total was: a partial
        // answer draws no picture it cannot vouch for. Without them the
        // answer stands; only a timeline lacks this row's shape.
        if partial.is_none() && total > 0 {
            match self.buckets(&query, TimeBuckets::tiling(start, end)).await {
                Ok(b) => sample.buckets = Some(b),
                Err(e) => tracing::warn!("Loki counts per time bucket not read: {e}"),
            }
        }
        if let Some(f) = first {
            sample.first = Some(sample.first.map_or(f, |x| x.min(f)));
        }
        let picked: Vec<LogLine> = sample
            .picked
            .iter()
            .filter_map(|p| lines.get(p.id as usize).cloned())
            .collect();
        let msg = format!("Loki has no line matching {query} {window}");
        let mut out = answer(
            Found {
                sample,
                lines: picked,
                groups_counted: complete,
            },
            args,
            &msg,
            partial,
        )?;
        if let Value::Object(body) = &mut out.body {
            body.insert("source".into(), json!("loki"));
            body.insert("logql".into(), json!(query));
            body.insert(
                "window".into(),
                json!({"since": fmt_time(&start), "until": fmt_time(&end)}),
            );
        }
        Ok(out)
    }
}

fn empty() -> Found {
    Found {
        sample: Sampler::<()>::new(1).finish(),
        lines: Vec::new(),
        groups_counted: true,
    }
}

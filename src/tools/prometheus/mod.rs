//! `query_metrics` over the Prometheus HTTP API (or anything that speaks
//! it: VictoriaMetrics, Thanos, Mimir), for teams that point diagraph at
//! their own Prometheus instead of a pack's `alerts.json`.
//!
//! Active alerts come from `/api/v1/alerts` and are filtered here by
//! service (the configured label, else the pack backend's precedence
//! `service`, `job`, `app`, `instance`), alert name and state; each becomes
//! a `$.alerts[i]` ref whose code-made text has the pack backend's keys and
//! order, so the Gatekeeper and the offline model treat both alike.
//!
//! Metric values are evidence too: the model's `promql` (else, when a
//! service is named, the configured template for it) is evaluated as an
//! instant query, or as a range query over `window_minutes` or
//! since/until; each series becomes a `$.series[i]` ref stating its
//! metric, labels, window, min / max / last and unit ([`series`]). Both
//! requests run at once and stand on their own: when one fails, the other
//! still answers and the invocation is partial and says why. The call
//! fails (with the reason the Executor sees) only when nothing could be
//! read, or nothing was found and a part could not be read.

mod envelope;
mod refs;
pub use refs::format_value;
pub mod series;

pub use refs::{alert_service, alert_text, escape_label_value, render_promql};

use crate::config::{Config, DEFAULT_PROMQL_TEMPLATE, MetricsBackend, MetricsConfig};
use crate::tools::http::{Auth, HttpSource};
use crate::tools::{Tool, ToolError, ToolOutput};
use crate::vocab::tool::{EvidenceRef, EvidenceStatus, QUERY_METRICS, ToolSpec, summarize_args};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use series::Window;
use std::time::Duration;

/// At most this many alerts (and refs) go into the body.
const MAX_ALERTS: usize = 100;
/// At most this many instant-value series go into the body.
const MAX_VALUES: usize = 50;
const STATES: [&str; 5] = ["firing", "pending", "resolved", "inactive", "any"];

#[derive(Debug, Clone, PartialEq)]
pub struct PrometheusConfig {
    /// e.g. `http://prometheus:9090` (a path prefix is kept).
    pub base_url: String,
    /// PromQL for a service's instant values; `{service}` is replaced by
    /// the escaped service name. Empty disables the instant query.
    pub promql_template: String,
    /// The alert label that names the service.
    pub service_label: String,
    /// Per HTTP request.
    pub timeout: Duration,
}

impl PrometheusConfig {
    pub fn new(base_url: impl Into<String>) -> PrometheusConfig {
        PrometheusConfig {
            base_url: base_url.into(),
            promql_template: DEFAULT_PROMQL_TEMPLATE.into(),
            service_label: "service".into(),
            timeout: Duration::from_secs(10),
        }
    }

    /// `Some` when the effective configuration selects this backend.
    pub fn from_config(config: &Config) -> Option<PrometheusConfig> {
        (config.metrics.backend == MetricsBackend::Prometheus)
            .then(|| PrometheusConfig::from(&config.metrics))
    }
}

/// A missing URL becomes an empty one, which [`PrometheusMetrics::new`]
/// rejects with a clear message.
impl From<&MetricsConfig> for PrometheusConfig {
    fn from(m: &MetricsConfig) -> PrometheusConfig {
        PrometheusConfig {
            base_url: m.prometheus_url.clone().unwrap_or_default(),
            promql_template: m.promql_template.clone(),
            service_label: m.service_label.clone(),
            timeout: Duration::from_secs(m.timeout_secs.max(1)),
        }
    }
}

pub struct PrometheusMetrics {
    cfg: PrometheusConfig,
    http: HttpSource,
}

impl std::fmt::Debug for PrometheusMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusMetrics")
            .field("url", &self.http.shown_url())
            .finish()
    }
}

/// The arguments `query_metrics` accepts, validated.
#[derive(Debug, Default)]
struct Query {
    service: Option<String>,
    alertname: Option<String>,
    state: String,
    promql: Option<String>,
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
    window_minutes: Option<u64>,
    step_seconds: Option<u64>,
}

const ARGS: &str = "service, alertname, state, promql, window_minutes, since, until, step_seconds";

fn parse_args(args: &Map<String, Value>) -> Result<Query, ToolError> {
    let mut q = Query {
        state: "any".into(),
        ..Default::default()
    };
    for (k, v) in args {
        let bad = |want: &str| {
            ToolError::InvalidArguments(format!(
                "`{k}` must be {want}, got {}",
                crate::text::clean(&v.to_string(), 80)
            ))
        };
        let number = || match v {
            Value::Null => Ok(None),
            Value::Number(n) => n
                .as_u64()
                .filter(|n| *n > 0)
                .map(Some)
                .ok_or_else(|| bad("a whole number above 0")),
            Value::String(s) => s
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .map(Some)
                .ok_or_else(|| bad("a whole number above 0")),
            _ => Err(bad("a whole number above 0")),
        };
        match k.as_str() {
            "window_minutes" => {
                q.window_minutes = number()?.map(|m| m.min(366 * 24 * 60));
                continue;
            }
            "step_seconds" => {
                q.step_seconds = number()?;
                continue;
            }
            _ => {}
        }
        let text = match v {
            Value::String(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
            Value::Null => None,
            _ => return Err(bad("a string")),
        };
        let max = if k == "promql" { 2000 } else { 200 };
        if text.as_deref().is_some_and(|t| t.chars().count() > max) {
            return Err(ToolError::InvalidArguments(format!("`{k}` is too long")));
        }
        let time = |t: Option<String>| {
            t.map(|t| {
                crate::tools::common::parse_time(&t).ok_or_else(|| {
                    ToolError::InvalidArguments(format!(
                        "`{k}` is not an RFC 3339 time: {}",
                        crate::text::clean(&t, 60)
                    ))
                })
            })
            .transpose()
        };
        match k.as_str() {
            "service" => q.service = text,
            "alertname" => q.alertname = text,
            "promql" => q.promql = text,
            "since" => q.since = time(text)?,
            "until" => q.until = time(text)?,
            "state" => {
                let s = text.unwrap_or_else(|| "any".into()).to_ascii_lowercase();
                if !STATES.contains(&s.as_str()) {
                    return Err(ToolError::InvalidArguments(format!(
                        "state {s:?} is not one of {}",
                        STATES.join(", ")
                    )));
                }
                q.state = s;
            }
            other => {
                return Err(ToolError::InvalidArguments(format!(
                    "unknown argument `{other}`; query_metrics accepts {ARGS}"
                )));
            }
        }
    }
    if q.window_minutes.is_some() && (q.since.is_some() || q.until.is_some()) {
        return Err(ToolError::InvalidArguments(
            "give either window_minutes or since/until, not both".into(),
        ));
    }
    if let (Some(s), Some(u)) = (q.since, q.until)
        && s >= u
    {
        return Err(ToolError::InvalidArguments(
            "'since' is not before 'until'".into(),
        ));
    }
    Ok(q)
}

impl Query {
    /// An instant at `now`, or the range asked for.
    fn window(&self, now: DateTime<Utc>) -> Window {
        if let Some(m) = self.window_minutes {
            let m = i64::try_from(m).unwrap_or(i64::MAX);
            return Window::range(now - chrono::Duration::minutes(m), now, self.step_seconds);
        }
        match (self.since, self.until) {
            (None, None) => Window::Instant(now),
            (s, u) => {
                let until = u.unwrap_or(now);
                let since = s.unwrap_or(until - chrono::Duration::hours(1));
                Window::range(since, until, self.step_seconds)
            }
        }
    }
}

impl PrometheusMetrics {
    /// From a [`PrometheusConfig`] or the `[metrics]` configuration.
    pub fn new(cfg: impl Into<PrometheusConfig>) -> Result<PrometheusMetrics, ToolError> {
        let cfg = cfg.into();
        let http = HttpSource::new("Prometheus", &cfg.base_url, cfg.timeout, Auth::None, vec![])
            .map_err(ToolError::Unavailable)?;
        Ok(PrometheusMetrics { cfg, http })
    }

    /// GET `path` with optional `query=` (PromQL) and further parameters,
    /// read as a Prometheus envelope.
    async fn get(
        &self,
        path: &str,
        promql: Option<&str>,
        params: &[(&str, String)],
    ) -> Result<envelope::Answer, ToolError> {
        let mut query = Vec::with_capacity(params.len() + 1);
        if let Some(q) = promql {
            query.push(("query", q.to_string()));
        }
        query.extend(params.iter().cloned());
        let raw = self.http.get_raw(path, &query).await?;
        envelope::read(path, promql, raw)
    }

    fn matches(&self, alert: &Map<String, Value>, q: &Query) -> bool {
        let eq = |want: &Option<String>, got: Option<&str>| match want {
            None => true,
            Some(w) => got.is_some_and(|g| g.eq_ignore_ascii_case(w)),
        };
        let alertname = alert
            .get("labels")
            .and_then(|l| l.get("alertname"))
            .and_then(Value::as_str);
        let state = alert.get("state").and_then(Value::as_str).unwrap_or("");
        eq(
            &q.service,
            alert_service(alert, &self.cfg.service_label).as_deref(),
        ) && eq(&q.alertname, alertname)
            && (q.state == "any" || state.eq_ignore_ascii_case(&q.state))
    }

    /// The values query of this call, if any: the model's PromQL, else
    /// the template for the named service.
    fn values_query(&self, q: &Query) -> Option<String> {
        q.promql.clone().or_else(|| {
            let t = self.cfg.promql_template.trim();
            let service = q.service.as_deref()?;
            (!t.is_empty()).then(|| render_promql(t, service))
        })
    }

    /// The series of `promql` over `window`, as refs and body items.
    async fn series(
        &self,
        promql: &str,
        window: &Window,
    ) -> Result<(Vec<(String, Value)>, usize, Vec<String>), ToolError> {
        let (path, params) = window.request();
        let answer = self.get(path, Some(promql), &params).await?;
        let all = series::parse(&answer.data)?;
        let matched = all.len();
        let items = all
            .iter()
            .take(MAX_VALUES)
            .map(|s| series::evidence(s, promql, window))
            .collect();
        Ok((items, matched, answer.warnings))
    }
}

pub fn query_metrics_spec() -> ToolSpec {
    ToolSpec {
        name: QUERY_METRICS.into(),
        description: "Active alerts (Prometheus /api/v1/alerts), optionally for one service, \
                      alert name or state; each alert is evidence at $.alerts[i]. Metric values: \
                      `promql` (any PromQL expression; else, with a service, its default metrics) \
                      evaluated now, or over `window_minutes` before now or since/until (RFC 3339) \
                      with an optional `step_seconds`. Each series is evidence at $.series[i], \
                      stating its metric, labels, window, min/max/last and unit."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "service": {"type": "string", "description": "Service name, e.g. payment-service"},
                "alertname": {"type": "string", "description": "Exact alert name, e.g. HighCPUUsage"},
                "state": {"type": "string", "enum": STATES,
                          "description": "Alert state to keep (default any)"},
                "promql": {"type": "string", "description": "PromQL, e.g. histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{service=\"payment-service\"}[5m])))"},
                "window_minutes": {"type": "integer", "minimum": 1, "description": "A range query over this many minutes before now"},
                "since": {"type": "string", "description": "RFC 3339; a range query from here"},
                "until": {"type": "string", "description": "RFC 3339; a range query until here (default now)"},
                "step_seconds": {"type": "integer", "minimum": 1, "description": "Resolution of a range query (default: about 60 points)"}
            },
            "additionalProperties": false
        }),
        evidence_arrays: vec!["alerts".into(), "series".into()],
    }
}

#[async_trait]
impl Tool for PrometheusMetrics {
    fn spec(&self) -> ToolSpec {
        query_metrics_spec()
    }

    fn backend(&self) -> String {
        format!("prometheus:{}", self.http.shown_url())
    }

    /// Two requests (alerts and values, at the same time) each bounded by
    /// the configured timeout, plus a margin for the work around them.
    fn timeout(&self) -> Option<Duration> {
        Some(self.cfg.timeout * 2 + Duration::from_secs(1))
    }

    async fn call(&self, args: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
        let q = parse_args(args)?;
        let window = q.window(Utc::now());
        let promql = self.values_query(&q);
        let values = async {
            match &promql {
                Some(p) => Some(self.series(p, &window).await),
                None => None,
            }
        };
        let (alerts_answer, values) = tokio::join!(self.get("/api/v1/alerts", None, &[]), values);
        // Alerts and values stand on their own: one failing keeps the
        // other, and the invocation says what is missing. Only when
        // nothing could be read (or nothing was found and something could
        // not be read) does the call fail.
        let alerts = alerts_answer.and_then(|answer| {
            let all = answer
                .data
                .get("alerts")
                .and_then(Value::as_array)
                .ok_or_else(|| {
                    // A body that is not the API's is a bad answer, not an
                    // error the server reported.
                    ToolError::BadResponse(
                        "Prometheus /api/v1/alerts answered without a data.alerts list".into(),
                    )
                })?;
            let now = answer.server_time.unwrap_or_else(Utc::now);
            let matched: Vec<&Map<String, Value>> = all
                .iter()
                .filter_map(Value::as_object)
                .filter(|a| self.matches(a, &q))
                .collect();
            let total = matched.len();
            let listed: Vec<(Value, String)> = matched
                .into_iter()
                .take(MAX_ALERTS)
                .map(|a| {
                    (
                        Value::Object(a.clone()),
                        alert_text(a, &self.cfg.service_label, now),
                    )
                })
                .collect();
            Ok((listed, total, answer.warnings))
        });
        let mut missing: Vec<String> = Vec::new();
        let mut alerts_error = None;
        let (alerts, alerts_total, alerts_warnings) = match alerts {
            Ok(a) => a,
            Err(e) => match &values {
                Some(Ok(_)) => {
                    missing.push(format!(
                        "the alerts could not be read ({e}); the metric values were"
                    ));
                    alerts_error = Some(e);
                    (Vec::new(), 0, Vec::new())
                }
                _ => return Err(e),
            },
        };
        let (series, series_total, values_error, values_warnings) = match values {
            None => (Vec::new(), 0, None, Vec::new()),
            Some(Ok((s, n, w))) => (s, n, None, w),
            Some(Err(e)) => {
                missing.push(format!(
                    "the metric values could not be read ({e}); the alerts were"
                ));
                (Vec::new(), 0, Some(e), Vec::new())
            }
        };
        for (what, warnings) in [
            ("alerts", alerts_warnings),
            ("metric values", values_warnings),
        ] {
            if !warnings.is_empty() {
                missing.push(format!(
                    "Prometheus warned that the {what} may be incomplete: {}",
                    warnings.join("; ")
                ));
            }
        }
        if alerts_total > alerts.len() {
            missing.push(format!(
                "{alerts_total} alerts matched; only the first {} are listed as evidence",
                alerts.len()
            ));
        }
        if series_total > series.len() {
            missing.push(format!(
                "{series_total} series matched; only the first {} are listed as evidence",
                series.len()
            ));
        }
        let partial = (!missing.is_empty()).then(|| missing.join("; "));
        let mut output = if alerts.is_empty() && series.is_empty() {
            if let Some(e) = values_error.or(alerts_error) {
                return Err(e);
            }
            let what = if promql.is_some() {
                "no active alert and no series matching this query"
            } else {
                "no active alert matching this query"
            };
            ToolOutput::no_evidence(
                QUERY_METRICS,
                &summarize_args(&Value::Object(args.clone())),
                &format!("Prometheus at {} reports {what}", self.http.shown_url()),
            )
        } else {
            let refs = alerts
                .iter()
                .enumerate()
                .map(|(i, (_, text))| EvidenceRef {
                    raw_path: format!("$.alerts[{i}]"),
                    text: text.clone(),
                })
                .chain(series.iter().enumerate().map(|(i, (text, _))| EvidenceRef {
                    raw_path: format!("$.series[{i}]"),
                    text: text.clone(),
                }))
                .collect();
            ToolOutput {
                body: json!({
                    "alerts": alerts.iter().map(|a| a.0.clone()).collect::<Vec<_>>(),
                    "total": alerts_total,
                    "truncated": alerts_total > alerts.len(),
                }),
                evidence_status: EvidenceStatus::Supported,
                evidence_refs: refs,
                retrieved_domains: vec![],
                partial: None,
                buckets: None,
            }
        };
        if let Value::Object(body) = &mut output.body {
            body.insert("source".into(), json!("prometheus"));
            if let Some(p) = &promql {
                body.insert("promql".into(), json!(p));
                body.insert(
                    "series".into(),
                    Value::Array(series.iter().map(|s| s.1.clone()).collect()),
                );
                body.insert("series_total".into(), json!(series_total));
            }
            if let Some(why) = &partial {
                body.insert("partial".into(), json!(why));
            }
        }
        output.partial = partial;
        Ok(output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn arguments_are_validated() {
        assert_eq!(parse_args(&args(json!({}))).unwrap().state, "any");
        let q = parse_args(&args(
            json!({"service": " payment-service ", "state": "FIRING"}),
        ))
        .unwrap();
        assert_eq!(q.service.as_deref(), Some("payment-service"));
        assert_eq!(q.state, "firing");
        let now = DateTime::parse_from_rfc3339("2026-07-08T23:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let q = parse_args(&args(json!({"promql": "up", "window_minutes": "30"}))).unwrap();
        assert_eq!(
            q.window(now),
            Window::Range {
                start: now - chrono::Duration::minutes(30),
                end: now,
                step_secs: 30
            }
        );
        let q = parse_args(&args(
            json!({"since": "2026-07-08T22:00:00Z", "step_seconds": 10}),
        ))
        .unwrap();
        let Window::Range { step_secs, .. } = q.window(now) else {
            panic!("a range")
        };
        assert_eq!(step_secs, 10);
        assert_eq!(
            parse_args(&args(json!({}))).unwrap().window(now),
            Window::Instant(now)
        );
        for bad in [
            json!({"service": 3}),
            json!({"state": "on fire"}),
            json!({"window": "5m"}),
            json!({"alertname": "x".repeat(300)}),
            json!({"window_minutes": 0}),
            json!({"window_minutes": "soon"}),
            json!({"step_seconds": -5}),
            json!({"since": "yesterday"}),
            json!({"window_minutes": 5, "since": "2026-07-08T22:00:00Z"}),
            json!({"since": "2026-07-08T23:00:00Z", "until": "2026-07-08T22:00:00Z"}),
            json!({"promql": 1}),
        ] {
            assert!(
                matches!(
                    parse_args(&args(bad.clone())),
                    Err(ToolError::InvalidArguments(_))
                ),
                "{bad}"
            );
        }
    }
}

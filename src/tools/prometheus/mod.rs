//! `query_metrics` over the Prometheus HTTP API, for teams that point
//! diagraph at their own Prometheus instead of a pack's `alerts.json`.
//!
//! Active alerts come from `/api/v1/alerts` and are filtered here by
//! service (the configured label, else the pack backend's precedence
//! `service`, `job`, `app`, `instance`), alert name and state; each becomes
//! a `$.alerts[i]` ref whose code-made text has the pack backend's keys and
//! order, so the Gatekeeper and the offline model treat both alike. When a service is named, its instant values come
//! from `/api/v1/query` with a PromQL built from a configurable template;
//! they go into the body as `values` (context for the model) but carry no
//! refs, so a claim must still stand on an alert. A failed value query
//! keeps the alerts already read: the invocation is partial and says why.
//! Every failure of the alerts query (refused connection, timeout,
//! non-success status, a body that is not the API's) is a [`ToolError`]
//! whose message the Executor sees as the failed result.

mod client;
mod refs;

pub use refs::{alert_service, alert_text, escape_label_value, render_promql};

use crate::config::{Config, DEFAULT_PROMQL_TEMPLATE, MetricsBackend, MetricsConfig};
use crate::tools::{Tool, ToolError, ToolOutput};
use crate::vocab::tool::{EvidenceRef, EvidenceStatus, QUERY_METRICS, ToolSpec, summarize_args};
use async_trait::async_trait;
use chrono::Utc;
use serde_json::{Map, Value, json};
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
    client: client::Client,
}

impl std::fmt::Debug for PrometheusMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusMetrics")
            .field("url", &self.client.shown_url())
            .finish()
    }
}

/// The arguments `query_metrics` accepts, validated.
#[derive(Debug, Default)]
struct Query {
    service: Option<String>,
    alertname: Option<String>,
    state: String,
}

fn parse_args(args: &Map<String, Value>) -> Result<Query, ToolError> {
    let mut q = Query {
        state: "any".into(),
        ..Default::default()
    };
    for (k, v) in args {
        let text = match v {
            Value::String(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
            Value::Null => None,
            other => {
                return Err(ToolError::InvalidArguments(format!(
                    "`{k}` must be a string, got {other}"
                )));
            }
        };
        if text.as_deref().is_some_and(|t| t.chars().count() > 200) {
            return Err(ToolError::InvalidArguments(format!("`{k}` is too long")));
        }
        match k.as_str() {
            "service" => q.service = text,
            "alertname" => q.alertname = text,
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
                    "unknown argument `{other}`; query_metrics accepts service, alertname, state"
                )));
            }
        }
    }
    Ok(q)
}

impl PrometheusMetrics {
    /// From a [`PrometheusConfig`] or the `[metrics]` configuration.
    pub fn new(cfg: impl Into<PrometheusConfig>) -> Result<PrometheusMetrics, ToolError> {
        let cfg = cfg.into();
        let client = client::Client::new(&cfg.base_url, cfg.timeout)?;
        Ok(PrometheusMetrics { cfg, client })
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

    async fn instant_values(&self, service: &str) -> Result<(String, Vec<Value>, bool), ToolError> {
        let promql = render_promql(&self.cfg.promql_template, service);
        let answer = self.client.get("/api/v1/query", Some(&promql)).await?;
        let result = answer
            .data
            .get("result")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let truncated = result.len() > MAX_VALUES;
        let values = result
            .into_iter()
            .take(MAX_VALUES)
            .map(|series| {
                let sample = series.get("value").and_then(Value::as_array);
                json!({
                    "metric": series.get("metric").cloned().unwrap_or(Value::Null),
                    "value": sample.and_then(|s| s.get(1)).cloned().unwrap_or(Value::Null),
                    "timestamp": sample.and_then(|s| s.first()).cloned().unwrap_or(Value::Null),
                })
            })
            .collect();
        Ok((promql, values, truncated))
    }
}

pub fn query_metrics_spec() -> ToolSpec {
    ToolSpec {
        name: QUERY_METRICS.into(),
        description: "Active alerts (Prometheus /api/v1/alerts), optionally for one service, \
                      alert name or state. Each alert is evidence at $.alerts[i]; with a service, \
                      the body also has its current metric values."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "service": {"type": "string", "description": "Service name, e.g. payment-service"},
                "alertname": {"type": "string", "description": "Exact alert name, e.g. HighCPUUsage"},
                "state": {"type": "string", "enum": STATES,
                          "description": "Alert state to keep (default any)"}
            },
            "additionalProperties": false
        }),
    }
}

#[async_trait]
impl Tool for PrometheusMetrics {
    fn spec(&self) -> ToolSpec {
        query_metrics_spec()
    }

    fn backend(&self) -> String {
        format!("prometheus:{}", self.client.shown_url())
    }

    /// Two requests (alerts, then values) each bounded by the configured
    /// timeout, plus a margin for the work between them.
    fn timeout(&self) -> Option<Duration> {
        Some(self.cfg.timeout * 2 + Duration::from_secs(1))
    }

    async fn call(&self, args: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
        let q = parse_args(args)?;
        let answer = self.client.get("/api/v1/alerts", None).await?;
        let Some(all) = answer.data.get("alerts").and_then(Value::as_array) else {
            return Err(ToolError::Backend(
                "Prometheus /api/v1/alerts answered without data.alerts".into(),
            ));
        };
        let mut alerts: Vec<&Map<String, Value>> = all
            .iter()
            .filter_map(Value::as_object)
            .filter(|a| self.matches(a, &q))
            .collect();
        // A storm of alerts would drown the model; the total stays honest.
        let matched = alerts.len();
        alerts.truncate(MAX_ALERTS);
        // The values are context, not evidence: when they fail, the alerts
        // already read still answer, and the invocation says what is missing.
        let values = match (&q.service, self.cfg.promql_template.trim().is_empty()) {
            (Some(service), false) => Some(self.instant_values(service).await),
            _ => None,
        };
        let values_error = match &values {
            Some(Err(e)) => Some(format!(
                "the metric values for this service could not be read ({e}); the alerts were"
            )),
            _ => None,
        };
        let now = answer.server_time.unwrap_or_else(Utc::now);
        let mut output = if alerts.is_empty() {
            ToolOutput::no_evidence(
                QUERY_METRICS,
                &summarize_args(&Value::Object(args.clone())),
                &format!(
                    "Prometheus at {} reports no active alert matching this query",
                    self.client.shown_url()
                ),
            )
        } else {
            let refs = alerts
                .iter()
                .enumerate()
                .map(|(i, a)| EvidenceRef {
                    raw_path: format!("$.alerts[{i}]"),
                    text: alert_text(a, &self.cfg.service_label, now),
                })
                .collect();
            ToolOutput {
                body: json!({
                    "alerts": alerts,
                    "total": matched,
                    "truncated": matched > alerts.len(),
                }),
                evidence_status: EvidenceStatus::Supported,
                evidence_refs: refs,
                retrieved_domains: vec![],
                partial: None,
            }
        };
        if let Value::Object(body) = &mut output.body {
            body.insert("source".into(), json!("prometheus"));
            if let Some(Ok((promql, values, truncated))) = values {
                body.insert("promql".into(), json!(promql));
                body.insert("values".into(), Value::Array(values));
                if truncated {
                    body.insert("values_truncated".into(), json!(true));
                }
            }
            if let Some(why) = &values_error {
                body.insert("values_error".into(), json!(why));
            }
        }
        let listed = (matched > alerts.len()).then(|| {
            format!(
                "{matched} alerts matched; only the first {} are listed as evidence",
                alerts.len()
            )
        });
        output.partial = match (listed, values_error) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.or(b),
        };
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
        for bad in [
            json!({"service": 3}),
            json!({"state": "on fire"}),
            json!({"window": "5m"}),
            json!({"alertname": "x".repeat(300)}),
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

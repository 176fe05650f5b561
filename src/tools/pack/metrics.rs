//! `query_metrics`: the pack's alerts, filtered by service, alertname and
//! state. An alert's service is its `service` label, else `job`, `app` or
//! `instance` (with any `:port` dropped), as Prometheus setups differ in
//! which label names the service.

use crate::text::clean;
use crate::tools::common::{Args, Readable, fmt_time, human_duration, query_summary};
use crate::tools::pack::{Alert, Pack};
use crate::tools::{Tool, ToolError, ToolOutput};
use crate::vocab::tool::{
    EvidenceRef, EvidenceStatus, QUERY_METRICS, ToolSpec, UNKNOWN_SERVICE_NOTE,
};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use std::sync::Arc;

const STATES: [&str; 5] = ["firing", "pending", "resolved", "inactive", "any"];
const SERVICE_LABELS: [&str; 4] = ["service", "job", "app", "instance"];
const REF_SUMMARY_CHARS: usize = 200;

pub struct QueryMetrics {
    pack: Arc<Pack>,
    /// Per alert of the pack, in order: what filtering and citing need,
    /// worked out once. The pack and its reference time never change.
    indexed: Vec<IndexedAlert>,
}

struct IndexedAlert {
    service: Option<String>,
    ref_text: String,
    /// The alert as the body shows it.
    json: Value,
}

impl QueryMetrics {
    pub fn new(pack: Arc<Pack>) -> QueryMetrics {
        let now = pack.now();
        let indexed = pack
            .alerts
            .iter()
            .map(|a| IndexedAlert {
                service: alert_service(a),
                ref_text: alert_ref_text(a, now),
                json: serde_json::to_value(a).unwrap_or(Value::Null),
            })
            .collect();
        QueryMetrics { pack, indexed }
    }
}

/// The service an alert is about, by the label precedence above.
pub fn alert_service(a: &Alert) -> Option<String> {
    SERVICE_LABELS.iter().find_map(|k| {
        let v = a.labels.get(*k)?.as_str()?.trim();
        let v = if *k == "instance" {
            v.split(':').next().unwrap_or(v)
        } else {
            v
        };
        (!v.is_empty()).then(|| v.to_string())
    })
}

fn label<'a>(a: &'a Alert, k: &str) -> Option<&'a str> {
    a.labels.get(k).and_then(Value::as_str)
}

/// The ref text for one alert, made from its fields.
pub fn alert_ref_text(a: &Alert, now: DateTime<Utc>) -> String {
    let mut parts = Vec::new();
    let mut kv = |k: &str, v: &str| {
        let v = clean(v, REF_SUMMARY_CHARS);
        if !v.is_empty() {
            parts.push(format!("{k}={v}"));
        }
    };
    kv("alertname", label(a, "alertname").unwrap_or(""));
    kv("service", &alert_service(a).unwrap_or_default());
    kv("severity", label(a, "severity").unwrap_or(""));
    kv("state", &a.state);
    // as people write it: `1`, not the API's `1e+00`
    kv(
        "value",
        &crate::tools::prometheus::format_value(a.value.as_deref().unwrap_or("")),
    );
    if let Some(t) = a.active_at {
        // How long it has been active only means something while it is.
        if matches!(a.state.as_str(), "firing" | "pending") {
            kv("active_for", &human_duration(t, now));
        }
        kv("since", &fmt_time(&t));
    }
    let ann = |k: &str| a.annotations.get(k).and_then(Value::as_str).unwrap_or("");
    let summary = if ann("summary").trim().is_empty() {
        ann("description")
    } else {
        ann("summary")
    };
    kv("summary", summary);
    parts.join(" ")
}

#[async_trait]
impl Tool for QueryMetrics {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: QUERY_METRICS.into(),
            description: "Alerts of the environment (Prometheus alerts): alertname, service, severity, state, value, since when. Filter by service, alertname and state.".into(),
            evidence_arrays: vec!["alerts".into()],
            parameters: json!({
                "type": "object",
                "properties": {
                    "service": {"type": "string", "description": "service name, e.g. payment-service"},
                    "alertname": {"type": "string", "description": "alert name, case-insensitive"},
                    "state": {"type": "string", "enum": STATES, "description": "default any"}
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
        let a = Args::new(args, &["service", "alertname", "state"])?;
        let partial = self.pack.health.alerts.check()?;
        let service = a.string("service")?;
        let alertname = a.string("alertname")?;
        let state = a.string("state")?.map(|s| s.to_ascii_lowercase());
        if let Some(s) = &state
            && !STATES.contains(&s.as_str())
        {
            return Err(ToolError::InvalidArguments(format!(
                "'state' must be one of {}",
                STATES.join(", ")
            )));
        }
        let matches: Vec<(&Alert, &IndexedAlert)> = self
            .pack
            .alerts
            .iter()
            .zip(&self.indexed)
            .filter(|(al, ix)| {
                service.as_ref().is_none_or(|s| {
                    ix.service
                        .as_ref()
                        .is_some_and(|x| x.eq_ignore_ascii_case(s))
                }) && alertname.as_ref().is_none_or(|n| {
                    label(al, "alertname").is_some_and(|x| x.eq_ignore_ascii_case(n))
                }) && state.as_ref().is_none_or(|s| s == "any" || al.state == *s)
            })
            .collect();
        if matches.is_empty() {
            if let Some(why) = partial {
                return Err(Readable::nothing_found_in_part(why));
            }
            let known = self.pack.alerts.len();
            let mut msg = format!("no alert matched these filters ({known} alerts in the pack)");
            if service
                .as_ref()
                .is_some_and(|s| !self.pack.knows_service(s))
            {
                msg.push_str("; ");
                msg.push_str(UNKNOWN_SERVICE_NOTE);
            }
            return Ok(ToolOutput::no_evidence(
                QUERY_METRICS,
                &query_summary(args),
                &msg,
            ));
        }
        let refs = matches
            .iter()
            .enumerate()
            .map(|(i, (_, ix))| EvidenceRef {
                raw_path: format!("$.alerts[{i}]"),
                text: ix.ref_text.clone(),
            })
            .collect();
        let alerts: Vec<Value> = matches.iter().map(|(_, ix)| ix.json.clone()).collect();
        Ok(ToolOutput {
            body: json!({"alerts": alerts, "total": matches.len()}),
            evidence_status: EvidenceStatus::Supported,
            evidence_refs: refs,
            retrieved_domains: vec![],
            partial: partial.map(str::to_string),
            buckets: None,
        })
    }
}

//! Code-made evidence text for Prometheus alerts, and the PromQL template.
//!
//! An alert's ref text states what a claim about it needs: the alert name,
//! its labels, state, value, how long it has been active and the summary,
//! in the same `key=value` shape as the pack backend, so the Gatekeeper and
//! the offline model treat both backends alike. Label values are server
//! text: they are cleaned to one printable line, never interpreted.

use crate::text::clean;
use crate::tools::common::fmt_time;
use crate::tools::common::human_duration;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

const MAX_LABEL_CHARS: usize = 200;
/// The pack backend's precedence, after the configured label.
const FALLBACK_SERVICE_LABELS: [&str; 4] = ["service", "job", "app", "instance"];

fn label(alert: &Map<String, Value>, k: &str) -> Option<String> {
    alert
        .get("labels")
        .and_then(|l| l.get(k))
        .map(scalar)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The service an alert is about: the configured label, else `service`,
/// `job`, `app` or `instance` without its port, as the pack backend does.
pub fn alert_service(alert: &Map<String, Value>, service_label: &str) -> Option<String> {
    std::iter::once(service_label)
        .chain(FALLBACK_SERVICE_LABELS)
        .find_map(|k| {
            let v = label(alert, k)?;
            Some(if k == "instance" {
                v.split(':').next().unwrap_or(&v).to_string()
            } else {
                v
            })
        })
}

/// Same keys and order as the pack backend (`alertname service severity
/// state value active_for since ... summary`), plus the alert's other
/// labels before the summary:
/// `alertname=HighCPUUsage service=payment-service severity=critical
/// state=firing value=92 active_for=25m since=2026-07-08T22:40:00Z
/// instance=10.0.0.1:9100 summary=CPU usage above 90%`.
pub fn alert_text(alert: &Map<String, Value>, service_label: &str, now: DateTime<Utc>) -> String {
    let mut parts = Vec::new();
    let mut push = |k: &str, v: &str| {
        let v = clean(v, MAX_LABEL_CHARS);
        if !v.is_empty() {
            parts.push(format!("{}={v}", clean(k, 64)));
        }
    };
    push("alertname", &label(alert, "alertname").unwrap_or_default());
    push(
        "service",
        &alert_service(alert, service_label).unwrap_or_default(),
    );
    push("severity", &label(alert, "severity").unwrap_or_default());
    let state = alert.get("state").map(scalar).unwrap_or_default();
    push("state", &state);
    if let Some(v) = alert.get("value") {
        push("value", &format_value(&scalar(v)));
    }
    if let Some(since) = alert
        .get("activeAt")
        .and_then(Value::as_str)
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|t| t.with_timezone(&Utc))
    {
        if matches!(state.as_str(), "firing" | "pending") {
            push("active_for", &human_duration(since, now));
        }
        push("since", &fmt_time(&since));
    }
    if let Some(Value::Object(labels)) = alert.get("labels") {
        let shown = ["alertname", "severity", "service", service_label];
        let mut rest: Vec<(&String, &Value)> = labels
            .iter()
            .filter(|(k, _)| !shown.contains(&k.as_str()))
            .collect();
        rest.sort_by(|a, b| a.0.cmp(b.0));
        for (k, v) in rest {
            push(k, &scalar(v));
        }
    }
    let annotation = |k: &str| {
        alert
            .get("annotations")
            .and_then(|a| a.get(k))
            .map(scalar)
            .filter(|s| !s.trim().is_empty())
    };
    if let Some(summary) = annotation("summary").or_else(|| annotation("description")) {
        push("summary", &summary);
    }
    parts.join(" ")
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Prometheus sends values in Go's `%e` form (`9.2e+01`); people say 92.
pub fn format_value(raw: &str) -> String {
    match raw.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => {
            let rounded = (v * 10_000.0).round() / 10_000.0;
            format!("{rounded}")
        }
        _ => raw.trim().to_string(),
    }
}

/// The template with `{service}` replaced by the service as the inside of
/// a double-quoted PromQL string.
pub fn render_promql(template: &str, service: &str) -> String {
    template.replace("{service}", &escape_label_value(service))
}

pub fn escape_label_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn alert_text_states_name_labels_state_value_and_duration() {
        let alert = json!({
            "labels": {"alertname": "HighCPUUsage", "service": "payment-service",
                        "severity": "critical", "instance": "10.0.0.1:9100"},
            "annotations": {"summary": "CPU usage above 90%\n\u{1b}[2J"},
            "state": "firing", "activeAt": "2026-07-08T22:40:00.123456Z", "value": "9.2e+01"
        });
        let now = DateTime::parse_from_rfc3339("2026-07-08T23:05:00.2Z")
            .unwrap()
            .with_timezone(&Utc);
        let text = alert_text(alert.as_object().unwrap(), "service", now);
        assert_eq!(
            text,
            "alertname=HighCPUUsage service=payment-service severity=critical state=firing value=92 \
             active_for=25m since=2026-07-08T22:40:00Z instance=10.0.0.1:9100 summary=CPU usage above 90%"
        );
    }

    #[test]
    fn values_read_like_numbers() {
        assert_eq!(format_value("1e+00"), "1");
        assert_eq!(format_value("0.923456789"), "0.9235");
        assert_eq!(format_value("NaN"), "NaN");
    }

    #[test]
    fn service_names_cannot_break_out_of_the_label_string() {
        let q = render_promql(r#"up{service="{service}"}"#, "a\"} or vector(1) #\\");
        assert_eq!(q, r#"up{service="a\"} or vector(1) #\\"}"#);
    }
}

//! Code-made evidence text for Prometheus alerts, and the PromQL template.
//!
//! An alert's ref text states what a claim about it needs: the alert name,
//! its labels, state, value, how long it has been active and the summary,
//! in the same `key=value` shape as the pack backend, so the Gatekeeper and
//! the offline model treat both backends alike. Label values are server
//! text: they are cleaned to one printable line, never interpreted.

use super::client::clean;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

const MAX_LABEL_CHARS: usize = 200;

/// `alertname=HighCPUUsage service=payment-service severity=critical
/// state=firing value=92 active_for=25m since=2026-07-08T22:40:00Z
/// summary=CPU usage above 90%`.
pub fn alert_text(alert: &Map<String, Value>, service_label: &str, now: DateTime<Utc>) -> String {
    let labels = alert.get("labels").and_then(Value::as_object);
    let label = |k: &str| labels.and_then(|l| l.get(k)).map(scalar);
    let mut parts = Vec::new();
    let mut push = |k: &str, v: String| {
        if !v.is_empty() {
            parts.push(format!("{}={}", clean(k, 64), clean(&v, MAX_LABEL_CHARS)));
        }
    };
    let leading = ["alertname", service_label, "severity"];
    for k in leading {
        if let Some(v) = label(k) {
            push(k, v);
        }
    }
    if let Some(l) = labels {
        let mut rest: Vec<(&String, &Value)> = l
            .iter()
            .filter(|(k, _)| !leading.contains(&k.as_str()))
            .collect();
        rest.sort_by(|a, b| a.0.cmp(b.0));
        for (k, v) in rest {
            push(k, scalar(v));
        }
    }
    if let Some(s) = alert.get("state") {
        push("state", scalar(s));
    }
    if let Some(v) = alert.get("value") {
        push("value", format_value(&scalar(v)));
    }
    if let Some(since) = alert
        .get("activeAt")
        .and_then(Value::as_str)
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|t| t.with_timezone(&Utc))
    {
        let secs = ((now - since).num_milliseconds().max(0) + 500) / 1000;
        push("active_for", format_duration(secs));
        push("since", since.format("%Y-%m-%dT%H:%M:%SZ").to_string());
    }
    if let Some(summary) = alert
        .get("annotations")
        .and_then(|a| a.get("summary"))
        .map(scalar)
    {
        push("summary", summary);
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

/// `25m`, `1h5m`, `2d3h`, `40s`.
pub fn format_duration(secs: i64) -> String {
    let (d, h, m, s) = (
        secs / 86_400,
        secs % 86_400 / 3600,
        secs % 3600 / 60,
        secs % 60,
    );
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m"),
        (0, _, 0) => format!("{h}h"),
        (0, _, _) => format!("{h}h{m}m"),
        (_, 0, _) => format!("{d}d"),
        _ => format!("{d}d{h}h"),
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
        let now = DateTime::parse_from_rfc3339("2026-07-08T23:05:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let text = alert_text(alert.as_object().unwrap(), "service", now);
        assert_eq!(
            text,
            "alertname=HighCPUUsage service=payment-service severity=critical instance=10.0.0.1:9100 \
             state=firing value=92 active_for=25m since=2026-07-08T22:40:00Z summary=CPU usage above 90% [2J"
        );
    }

    #[test]
    fn durations_and_values() {
        assert_eq!(format_duration(40), "40s");
        assert_eq!(format_duration(1500), "25m");
        assert_eq!(format_duration(3900), "1h5m");
        assert_eq!(format_duration(7200), "2h");
        assert_eq!(format_duration(2 * 86_400 + 3 * 3600), "2d3h");
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

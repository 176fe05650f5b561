//! PromQL values as evidence: the series of an instant or range query
//! become `$.series[i]` refs whose code-made text states what a claim
//! about them needs (the metric, its labels, the window, min / max / last
//! and the unit), so "p99 latency of payment-service rose to 2.3 s" can be
//! bound to a series and checked by the Gatekeeper's fact rules.
//!
//! `metric=service:latency_seconds:p99 service=payment-service
//! from=2026-07-08T22:30:00Z until=2026-07-08T23:00:00Z step=30s min=0.41 s
//! max=2.3 s last=2.3 s points=61`; an instant query states `at=` and
//! `value=`. A series without a `__name__` (an expression's result) is
//! named by the expression (`expr=`).
//!
//! The unit comes from Prometheus' naming conventions (base units as
//! metric-name suffixes: `_seconds`, `_bytes`, `_ratio`...), from the
//! series name or else the first metric the expression reads, and `/s`
//! when the expression takes a `rate`. Seconds below one are stated in
//! milliseconds, as people say them. Values are server data: labels are
//! cleaned to one line and never interpreted.

use super::refs::format_value;
use crate::text::clean;
use crate::tools::ToolError;
use crate::tools::common::fmt_time;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

const MAX_LABELS: usize = 20;
const MAX_LABEL_CHARS: usize = 200;
/// Points of a series kept in the body (figures cover all of them).
const MAX_BODY_POINTS: usize = 120;
/// Points a range query asks for by default.
pub const DEFAULT_POINTS: i64 = 60;
/// Prometheus refuses more than 11,000 points per series.
const MAX_POINTS: i64 = 11_000;

/// When a query is evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    Instant(DateTime<Utc>),
    Range {
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        step_secs: i64,
    },
}

impl Window {
    /// A range with the given step, or one chosen for about
    /// [`DEFAULT_POINTS`] points; never more than Prometheus allows.
    pub fn range(start: DateTime<Utc>, end: DateTime<Utc>, step: Option<u64>) -> Window {
        let span = (end - start).num_seconds().max(1);
        let least = (span + MAX_POINTS - 1) / MAX_POINTS;
        let step_secs = match step {
            Some(s) => i64::try_from(s).unwrap_or(i64::MAX).max(least).max(1),
            None => (span / DEFAULT_POINTS).max(least).max(1),
        };
        Window::Range {
            start,
            end,
            step_secs,
        }
    }

    /// The API path and its time parameters.
    pub fn request(&self) -> (&'static str, Vec<(&'static str, String)>) {
        let secs =
            |t: &DateTime<Utc>| format!("{}.{:03}", t.timestamp(), t.timestamp_subsec_millis());
        match self {
            Window::Instant(at) => ("/api/v1/query", vec![("time", secs(at))]),
            Window::Range {
                start,
                end,
                step_secs,
            } => (
                "/api/v1/query_range",
                vec![
                    ("start", secs(start)),
                    ("end", secs(end)),
                    ("step", format!("{step_secs}s")),
                ],
            ),
        }
    }
}

/// A base unit, from a metric name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Seconds,
    Milliseconds,
    Bytes,
    Ratio,
    Percent,
    Celsius,
    None,
}

/// The unit of a series: its name's suffix, else the first metric the
/// expression reads; `per_second` when the expression takes a rate.
pub fn unit_of(name: Option<&str>, promql: &str) -> (Unit, bool) {
    let base = |n: &str| -> Unit {
        let n = n.to_ascii_lowercase();
        // Counts of observations are counts whatever they observe.
        if n.ends_with("_count") || n.ends_with("_bucket") && !n.contains("seconds") {
            return Unit::None;
        }
        for (suffix, unit) in [
            ("_seconds", Unit::Seconds),
            ("_milliseconds", Unit::Milliseconds),
            ("_ms", Unit::Milliseconds),
            ("_bytes", Unit::Bytes),
            ("_ratio", Unit::Ratio),
            ("_percent", Unit::Percent),
            ("_celsius", Unit::Celsius),
        ] {
            // `x_seconds`, `x_seconds_total`, `level:x_seconds:p99`.
            if n.split(':').any(|part| {
                part.ends_with(suffix)
                    || part.contains(&format!("{suffix}_")) && !part.ends_with("_count")
            }) {
                return unit;
            }
        }
        Unit::None
    };
    let first_metric = || {
        identifiers(promql)
            .into_iter()
            .find(|w| !is_promql_word(w))
            .map(str::to_string)
    };
    let unit = match name {
        Some(n) => base(n),
        None => first_metric().map_or(Unit::None, |n| base(&n)),
    };
    let lower = promql.to_ascii_lowercase();
    let quantile = lower.contains("histogram_quantile");
    let rate = !quantile
        && ["rate(", "irate(", "deriv("]
            .iter()
            .any(|f| lower.contains(f));
    // A recorded series keeps its own unit: its name says what it is.
    let per_second = rate && name.is_none_or(|n| !n.contains(':'));
    (unit, per_second)
}

fn identifiers(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    let mut in_string = false;
    let mut in_braces = 0usize;
    let mut in_brackets = false;
    let bytes = s.as_bytes();
    for (i, c) in s.char_indices() {
        let ident = c.is_ascii_alphanumeric() || c == '_' || c == ':';
        if in_string {
            if c == '"' && bytes.get(i.wrapping_sub(1)) != Some(&b'\\') {
                in_string = false;
            }
            continue;
        }
        if let Some(st) = start
            && !ident
        {
            out.push(&s[st..i]);
            start = None;
        }
        match c {
            '"' => in_string = true,
            '{' => in_braces += 1,
            '}' => in_braces = in_braces.saturating_sub(1),
            '[' => in_brackets = true,
            ']' => in_brackets = false,
            _ => {}
        }
        if ident && start.is_none() && in_braces == 0 && !in_brackets && !c.is_ascii_digit() {
            start = Some(i);
        }
    }
    if let Some(st) = start {
        out.push(&s[st..]);
    }
    out
}

/// PromQL's functions, aggregations and keywords: not metric names.
fn is_promql_word(w: &str) -> bool {
    const WORDS: [&str; 56] = [
        "sum",
        "min",
        "max",
        "avg",
        "count",
        "stddev",
        "stdvar",
        "topk",
        "bottomk",
        "quantile",
        "count_values",
        "group",
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "and",
        "or",
        "unless",
        "offset",
        "bool",
        "rate",
        "irate",
        "increase",
        "delta",
        "idelta",
        "deriv",
        "histogram_quantile",
        "avg_over_time",
        "min_over_time",
        "max_over_time",
        "sum_over_time",
        "count_over_time",
        "quantile_over_time",
        "last_over_time",
        "stddev_over_time",
        "abs",
        "ceil",
        "floor",
        "round",
        "clamp",
        "clamp_min",
        "clamp_max",
        "scalar",
        "vector",
        "time",
        "timestamp",
        "label_replace",
        "label_join",
        "absent",
        "absent_over_time",
        "predict_linear",
        "resets",
        "changes",
    ];
    WORDS.contains(&w) || w == "le" || w == "inf" || w == "nan"
}

/// One series as Prometheus answered it.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub labels: Map<String, Value>,
    /// (unix seconds, value); non-numbers (`NaN`, `+Inf`) are kept out of
    /// the figures but counted.
    pub points: Vec<(f64, f64)>,
}

/// The series of a `/api/v1/query` or `/query_range` answer's `data`.
pub fn parse(data: &Value) -> Result<Vec<Series>, ToolError> {
    let bad = |why: &str| ToolError::BadResponse(format!("Prometheus answered {why}"));
    let kind = data
        .get("resultType")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("a query result without resultType"))?;
    let result = data
        .get("result")
        .ok_or_else(|| bad("without data.result"))?;
    let sample = |v: &Value| -> Result<(f64, f64), ToolError> {
        let pair = v
            .as_array()
            .filter(|a| a.len() == 2)
            .ok_or_else(|| bad("a sample that is not a [time, value] pair"))?;
        let t = pair[0]
            .as_f64()
            .ok_or_else(|| bad("a sample time that is not a number"))?;
        let v = pair[1]
            .as_str()
            .and_then(parse_float)
            .ok_or_else(|| bad("a sample value that is not a number"))?;
        Ok((t, v))
    };
    let labels = |s: &Value| {
        s.get("metric")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let list = || {
        result
            .as_array()
            .ok_or_else(|| bad(&format!("a {kind} result that is not a list")))
    };
    match kind {
        "vector" => list()?
            .iter()
            // Native histograms carry `histogram`, not `value`: not a number.
            .filter(|s| s.get("value").is_some())
            .map(|s| {
                Ok(Series {
                    labels: labels(s),
                    points: vec![sample(&s["value"])?],
                })
            })
            .collect(),
        "matrix" => list()?
            .iter()
            .map(|s| {
                let points = s
                    .get("values")
                    .and_then(Value::as_array)
                    .map(|vs| vs.iter().map(sample).collect::<Result<Vec<_>, _>>())
                    .transpose()?
                    .unwrap_or_default();
                Ok(Series {
                    labels: labels(s),
                    points,
                })
            })
            .collect(),
        "scalar" => Ok(vec![Series {
            labels: Map::new(),
            points: vec![sample(result)?],
        }]),
        other => Err(bad(&format!(
            "a {:?} result, which has no numbers",
            clean(other, 20)
        ))),
    }
}

/// Go's float syntax as Prometheus writes it: `NaN`, `+Inf`, `-Inf`, `1e+03`.
fn parse_float(s: &str) -> Option<f64> {
    match s {
        "NaN" => Some(f64::NAN),
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        s => s.parse().ok(),
    }
}

/// How a series' values are written: the factor and the unit word.
fn display(unit: Unit, per_second: bool, max_abs: f64) -> (f64, String) {
    let (factor, word) = match unit {
        Unit::Seconds if max_abs < 1.0 && !per_second => (1000.0, "ms"),
        Unit::Seconds => (1.0, "s"),
        Unit::Milliseconds => (1.0, "ms"),
        Unit::Bytes => (1.0, "bytes"),
        Unit::Ratio => (100.0, "%"),
        Unit::Percent => (1.0, "%"),
        Unit::Celsius => (1.0, "°C"),
        Unit::None => (1.0, ""),
    };
    let word = match (word, per_second) {
        ("", true) => "/s".to_string(),
        (w, true) => format!("{w}/s"),
        (w, false) => w.to_string(),
    };
    (factor, word)
}

/// Figures over every point of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    pub min: f64,
    pub max: f64,
    pub last: f64,
    pub points: usize,
}

pub fn figures(s: &Series) -> Option<Figures> {
    let finite: Vec<f64> = s
        .points
        .iter()
        .map(|p| p.1)
        .filter(|v| v.is_finite())
        .collect();
    let last = s.points.iter().rev().map(|p| p.1).find(|v| v.is_finite())?;
    Some(Figures {
        min: finite.iter().copied().fold(f64::INFINITY, f64::min),
        max: finite.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        last,
        points: s.points.len(),
    })
}

fn time(t: DateTime<Utc>) -> String {
    fmt_time(&t)
}

fn name(s: &Series) -> Option<String> {
    s.labels
        .get("__name__")
        .and_then(Value::as_str)
        .map(|n| clean(n, MAX_LABEL_CHARS))
}

fn label_fields(s: &Series) -> Vec<String> {
    let mut labels: Vec<(&String, &Value)> = s
        .labels
        .iter()
        .filter(|(k, _)| k.as_str() != "__name__")
        .collect();
    labels.sort_by(|a, b| a.0.cmp(b.0));
    labels
        .into_iter()
        .take(MAX_LABELS)
        .map(|(k, v)| {
            let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            format!("{}={}", clean(k, 64), clean(&v, MAX_LABEL_CHARS))
        })
        .filter(|f| !f.ends_with('='))
        .collect()
}

/// The ref text of one series, and its body item.
pub fn evidence(s: &Series, promql: &str, window: &Window) -> (String, Value) {
    let name = name(s);
    let (unit, per_second) = unit_of(name.as_deref(), promql);
    let mut parts = vec![match &name {
        Some(n) => format!("metric={n}"),
        None => format!("expr={}", clean(promql, 300)),
    }];
    parts.extend(label_fields(s));
    let mut body = Map::new();
    body.insert("metric".into(), Value::Object(s.labels.clone()));
    match window {
        Window::Instant(at) => {
            let at = s
                .points
                .first()
                .and_then(|p| DateTime::from_timestamp_millis((p.0 * 1000.0) as i64))
                .unwrap_or(*at);
            parts.push(format!("at={}", time(at)));
            body.insert("at".into(), json!(time(at)));
        }
        Window::Range {
            start,
            end,
            step_secs,
        } => {
            parts.push(format!("from={}", time(*start)));
            parts.push(format!("until={}", time(*end)));
            parts.push(format!("step={step_secs}s"));
            body.insert("from".into(), json!(time(*start)));
            body.insert("until".into(), json!(time(*end)));
            body.insert("step_seconds".into(), json!(step_secs));
        }
    }
    match figures(s) {
        None => {
            parts.push("value=none (no finite sample)".into());
        }
        Some(f) => {
            let (factor, word) = display(unit, per_second, f.min.abs().max(f.max.abs()));
            let show = |v: f64| {
                let n = format_value(&(v * factor).to_string());
                if word.is_empty() {
                    n
                } else if word.starts_with('/') {
                    format!("{n}{word}")
                } else {
                    format!("{n} {word}")
                }
            };
            if matches!(window, Window::Instant(_)) {
                parts.push(format!("value={}", show(f.last)));
                body.insert("value".into(), json!(f.last));
            } else {
                parts.push(format!("min={}", show(f.min)));
                parts.push(format!("max={}", show(f.max)));
                parts.push(format!("last={}", show(f.last)));
                parts.push(format!("points={}", f.points));
                body.insert("min".into(), json!(f.min));
                body.insert("max".into(), json!(f.max));
                body.insert("last".into(), json!(f.last));
                body.insert("points".into(), json!(f.points));
            }
            body.insert("unit".into(), json!(unit_name(unit, per_second)));
            body.insert("shown_as".into(), json!(word));
        }
    }
    if matches!(window, Window::Range { .. }) {
        let step = (s.points.len() / MAX_BODY_POINTS).max(1);
        let mut kept: Vec<Value> = s
            .points
            .iter()
            .step_by(step)
            .map(|(t, v)| {
                json!([
                    t,
                    if v.is_finite() {
                        json!(v)
                    } else {
                        json!(v.to_string())
                    }
                ])
            })
            .collect();
        if step > 1
            && let Some((t, v)) = s.points.last()
        {
            kept.push(json!([t, v]));
        }
        body.insert("values".into(), Value::Array(kept));
    }
    (parts.join(" "), Value::Object(body))
}

fn unit_name(unit: Unit, per_second: bool) -> String {
    let base = match unit {
        Unit::Seconds => "seconds",
        Unit::Milliseconds => "milliseconds",
        Unit::Bytes => "bytes",
        Unit::Ratio => "ratio",
        Unit::Percent => "percent",
        Unit::Celsius => "celsius",
        Unit::None => "",
    };
    match (base, per_second) {
        ("", true) => "per second".into(),
        (b, true) => format!("{b} per second"),
        (b, false) => b.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn units_follow_the_naming_conventions() {
        assert_eq!(
            unit_of(Some("service:http_request_duration_seconds:p99"), ""),
            (Unit::Seconds, false)
        );
        assert_eq!(
            unit_of(
                None,
                "histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{service=\"a_bytes\"}[5m])))"
            ),
            (Unit::Seconds, false)
        );
        assert_eq!(
            unit_of(None, "sum(rate(http_requests_total[5m]))"),
            (Unit::None, true)
        );
        assert_eq!(
            unit_of(
                Some("process_resident_memory_bytes"),
                "process_resident_memory_bytes"
            ),
            (Unit::Bytes, false)
        );
        assert_eq!(
            unit_of(Some("http_request_duration_seconds_count"), ""),
            (Unit::None, false)
        );
        assert_eq!(unit_of(None, "vector(1)"), (Unit::None, false));
    }

    #[test]
    fn a_range_states_metric_labels_window_and_figures() {
        let s = Series {
            labels: serde_json::from_value(json!({"__name__": "service:latency_seconds:p99", "service": "payment-service", "quantile": "0.99\u{1b}[2J"})).unwrap(),
            points: vec![(1.0, 0.41), (2.0, f64::NAN), (3.0, 2.3), (4.0, 2.3)],
        };
        let w = Window::range(t("2026-07-08T22:30:00Z"), t("2026-07-08T23:00:00Z"), None);
        let (text, body) = evidence(&s, "q", &w);
        assert_eq!(
            text,
            "metric=service:latency_seconds:p99 quantile=0.99 service=payment-service \
             from=2026-07-08T22:30:00Z until=2026-07-08T23:00:00Z step=30s \
             min=0.41 s max=2.3 s last=2.3 s points=4"
        );
        assert_eq!(body["unit"], "seconds");
        assert_eq!(body["values"][1][1], "NaN");
        // Below a second: milliseconds; an instant: its time and value.
        let fast = Series {
            labels: Map::new(),
            points: vec![(1_783_550_400.0, 0.045)],
        };
        let (text, _) = evidence(
            &fast,
            "histogram_quantile(0.99, rate(rpc_seconds_bucket[5m]))",
            &Window::Instant(t("2026-07-08T22:40:00Z")),
        );
        assert_eq!(
            text,
            "expr=histogram_quantile(0.99, rate(rpc_seconds_bucket[5m])) at=2026-07-08T22:40:00Z value=45 ms"
        );
    }

    #[test]
    fn answers_are_parsed_and_malformed_ones_refused() {
        let m = parse(&json!({"resultType": "matrix", "result": [
            {"metric": {"a": "b"}, "values": [[1.5, "1e+00"], [2.5, "+Inf"]]}]}))
        .unwrap();
        assert_eq!(m[0].points[0], (1.5, 1.0));
        assert!(figures(&m[0]).unwrap().max == 1.0);
        let s = parse(&json!({"resultType": "scalar", "result": [1.0, "3"]})).unwrap();
        assert_eq!(s[0].points, vec![(1.0, 3.0)]);
        for bad in [
            json!({"result": []}),
            json!({"resultType": "vector"}),
            json!({"resultType": "vector", "result": [{"value": [1.0]}]}),
            json!({"resultType": "vector", "result": [{"value": ["x", "1"]}]}),
            json!({"resultType": "vector", "result": [{"value": [1.0, "abc"]}]}),
            json!({"resultType": "string", "result": [1.0, "s"]}),
            json!({"resultType": "matrix", "result": {}}),
        ] {
            assert!(parse(&bad).is_err(), "{bad}");
        }
        // More points than Prometheus serves: the step grows.
        let w = Window::range(
            t("2026-01-01T00:00:00Z"),
            t("2026-02-01T00:00:00Z"),
            Some(1),
        );
        let Window::Range { step_secs, .. } = w else {
            panic!()
        };
        assert!(31 * 86400 / step_secs <= MAX_POINTS);
    }
}

//! The `_search` request diagraph sends, and reading fields back from a
//! hit's `_source`.
//!
//! Every value from the model goes into the request as a JSON string in
//! a term or phrase query, never into query-string syntax, so no argument
//! can change the query's structure. The same body works on
//! Elasticsearch 7.10+ / 8 and OpenSearch 1 / 2 (`case_insensitive` on
//! `term` is the newest feature used).

use crate::tools::loki::logql::level_spellings;
use crate::vocab::buckets::TimeBuckets;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

/// Where a record keeps its time, service, level and message.
#[derive(Debug, Clone)]
pub struct Fields {
    pub timestamp: String,
    pub service: Vec<String>,
    pub level: Vec<String>,
    pub message: String,
}

/// What to search for.
pub struct Selection<'a> {
    pub service: Option<&'a str>,
    /// Normalised levels; empty = any.
    pub levels: &'a [String],
    /// Lowercased keywords; each must occur as a phrase of the message.
    pub words: &'a [String],
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

fn ts(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// One of several term queries (a field of several, a spelling of
/// several), ignoring case.
fn any_term(fields: &[String], values: &[&str]) -> Value {
    let should: Vec<Value> = fields
        .iter()
        .flat_map(|f| {
            values
                .iter()
                .map(move |v| json!({"term": {f: {"value": v, "case_insensitive": true}}}))
        })
        .collect();
    json!({"bool": {"should": should, "minimum_should_match": 1}})
}

/// The filter of every matching record.
pub fn filter(f: &Fields, s: &Selection) -> Value {
    let mut filter = vec![json!({"range": {f.timestamp.as_str(): {
        "gte": ts(&s.start),
        "lte": ts(&s.end),
        "format": "strict_date_optional_time",
    }}})];
    if let Some(svc) = s.service {
        // A name mapped as text (dynamic mapping) holds words; its whole
        // value is in the `.keyword` sub-field. Asking both finds the
        // service either way; a sub-field a mapping lacks matches nothing.
        let fields: Vec<String> = f
            .service
            .iter()
            .flat_map(|n| {
                let keyword = (!n.ends_with(".keyword")).then(|| format!("{n}.keyword"));
                std::iter::once(n.clone()).chain(keyword)
            })
            .collect();
        filter.push(any_term(&fields, &[svc]));
    }
    if !s.levels.is_empty() {
        let mut spellings: Vec<&str> = Vec::new();
        for l in s.levels {
            for sp in level_spellings(l) {
                if !spellings.contains(&sp) {
                    spellings.push(sp);
                }
            }
        }
        filter.push(any_term(&f.level, &spellings));
    }
    // A word without letters or digits analyses to no term, and a phrase
    // of no terms matches nothing: such a word cannot narrow the search.
    for w in s
        .words
        .iter()
        .filter(|w| w.chars().any(char::is_alphanumeric))
    {
        filter.push(json!({"match_phrase": {f.message.as_str(): w}}));
    }
    json!({"bool": {"filter": filter}})
}

/// The aggregation counting matches per bucket of the grid.
pub const PER_BUCKET: &str = "per_bucket";

/// The whole `_search` body: the newest `size` matching records, the
/// exact count of all of them (`track_total_hits`), the time of the
/// oldest and newest (`min` / `max` aggregations) and the count per bucket
/// of `grid` (a `date_histogram`; a grid of [`TimeBuckets::covering`] is on
/// epoch multiples of its step, as fixed intervals are), in one request.
pub fn search_body(
    f: &Fields,
    s: &Selection,
    size: usize,
    timeout_ms: u64,
    grid: &TimeBuckets,
) -> Value {
    let last_ms = grid.end_us().div_euclid(1000) - 1;
    json!({
        "size": size,
        "track_total_hits": true,
        "timeout": format!("{timeout_ms}ms"),
        "query": filter(f, s),
        // unmapped_type: an index of the pattern without the field sorts
        // instead of failing its shard.
        "sort": [{f.timestamp.as_str(): {"order": "desc", "unmapped_type": "date"}}],
        "aggs": {
            "first_ts": {"min": {"field": f.timestamp}},
            "last_ts": {"max": {"field": f.timestamp}},
            PER_BUCKET: {"date_histogram": {
                "field": f.timestamp,
                "fixed_interval": format!("{}ms", grid.step_ms.max(1)),
                "min_doc_count": 0,
                "extended_bounds": {"min": grid.start.timestamp_millis(), "max": last_ms},
            }},
        },
    })
}

/// A field of `_source`, written flat (`"service.name": …`) or nested
/// (`"service": {"name": …}`) or anything between; a `.keyword` sub-field
/// (a query-side name) is read from its parent.
pub fn field<'a>(source: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    if let Some(v) = source.get(path) {
        return Some(v);
    }
    for (i, _) in path.match_indices('.') {
        if let Some(Value::Object(inner)) = source.get(&path[..i])
            && let Some(v) = field(inner, &path[i + 1..])
        {
            return Some(v);
        }
    }
    path.strip_suffix(".keyword").and_then(|p| field(source, p))
}

/// A field's value as text: a string, a number, the first of an array.
pub fn field_text(source: &Map<String, Value>, path: &str) -> Option<String> {
    let v = field(source, path)?;
    let v = match v {
        Value::Array(a) => a.first()?,
        v => v,
    };
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `_source` flattened to dotted keys with scalar values (arrays of
/// scalars kept), skipping `skip` and anything under it; at most `max`.
pub fn flatten(source: &Map<String, Value>, skip: &[&str], max: usize) -> Map<String, Value> {
    fn walk(
        prefix: &str,
        m: &Map<String, Value>,
        skip: &[&str],
        max: usize,
        out: &mut Map<String, Value>,
    ) {
        for (k, v) in m {
            if out.len() >= max {
                return;
            }
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            let bare = |k: &str| k.strip_suffix(".keyword").unwrap_or(k).to_string();
            if skip.iter().any(|s| bare(&key) == bare(s)) {
                continue;
            }
            match v {
                Value::Object(inner) => walk(&key, inner, skip, max, out),
                Value::Null => {}
                v => {
                    out.insert(key, v.clone());
                }
            }
        }
    }
    let mut out = Map::new();
    walk("", source, skip, max, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> Fields {
        Fields {
            timestamp: "@timestamp".into(),
            service: vec!["service.name".into(), "service".into()],
            level: vec!["log.level".into()],
            message: "message".into(),
        }
    }

    #[test]
    fn model_text_stays_a_value() {
        let t = DateTime::parse_from_rfc3339("2026-07-08T22:40:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let words = vec!["\"} OR *:*".to_string()];
        let levels = vec!["WARN".to_string()];
        let body = search_body(
            &fields(),
            &Selection {
                service: Some("pay\"ment"),
                levels: &levels,
                words: &words,
                start: t,
                end: t,
            },
            10,
            3000,
            &TimeBuckets::covering(t.timestamp_micros(), t.timestamp_micros()),
        );
        let f = &body["query"]["bool"]["filter"];
        assert_eq!(
            f[0]["range"]["@timestamp"]["gte"],
            "2026-07-08T22:40:00.000Z"
        );
        assert_eq!(
            f[1]["bool"]["should"][2]["term"]["service"]["value"],
            "pay\"ment"
        );
        assert_eq!(
            f[1]["bool"]["should"][3]["term"]["service.keyword"]["value"],
            "pay\"ment"
        );
        assert_eq!(f[2]["bool"]["should"].as_array().unwrap().len(), 2);
        assert_eq!(f[3]["match_phrase"]["message"], "\"} OR *:*");
        assert_eq!(body["track_total_hits"], true);
        assert_eq!(body["timeout"], "3000ms");
    }

    #[test]
    fn fields_are_read_flat_nested_and_through_keyword() {
        let src: Map<String, Value> = serde_json::from_value(json!({
            "service": {"name": "checkout"},
            "log.level": "warn",
            "tags": ["a", "b"],
            "host": {"name": "h1", "ip": null},
            "message": "m",
        }))
        .unwrap();
        assert_eq!(field_text(&src, "service.name").unwrap(), "checkout");
        assert_eq!(
            field_text(&src, "service.name.keyword").unwrap(),
            "checkout"
        );
        assert_eq!(field_text(&src, "log.level").unwrap(), "warn");
        assert_eq!(field_text(&src, "tags").unwrap(), "a");
        assert!(field_text(&src, "service").is_none());
        assert!(field_text(&src, "nope.x").is_none());
        assert!(!flatten(&src, &["log.level.keyword"], 10).contains_key("log.level"));
        let flat = flatten(&src, &["service.name", "message"], 10);
        assert_eq!(
            flat.keys().collect::<Vec<_>>(),
            ["log.level", "tags", "host.name"]
        );
        assert_eq!(flatten(&src, &[], 2).len(), 2);
    }
}

//! A faithful fake of the Elasticsearch 8 / OpenSearch 2 `_search` API, as
//! far as diagraph uses it (neither server can be installed from the
//! registries these machines reach). Built from the documented request
//! and response shapes (Elasticsearch "Search API", "Query DSL",
//! "Common options"; OpenSearch "Search", "Query DSL"):
//! - `POST /{index}/_search` with a JSON body; `index` is a comma list of
//!   names and `*` patterns. A concrete name that does not exist is a 404
//!   `index_not_found_exception`; a pattern that matches nothing gives an
//!   empty result (`allow_no_indices` defaults to true).
//! - Body keys `size` (default 10), `from`, `track_total_hits` (default:
//!   count up to 10000, then `"relation": "gte"`; `true`: exact; `false`:
//!   no `hits.total`; a number: count up to it), `timeout`, `query`,
//!   `sort`, `aggs`/`aggregations`; another key is a 400
//!   `parsing_exception`. `from + size` above 10000 is the 400
//!   `search_phase_execution_exception` ("Result window is too large").
//! - Queries `bool` (`filter`, `must`, `should` with
//!   `minimum_should_match`, `must_not`), `range` (`gte`/`gt`/`lte`/`lt`
//!   on dates), `term` (with `case_insensitive`), `match_phrase`,
//!   `match_all`; another is a 400 `parsing_exception` "unknown query".
//! - Mapping as dynamic mapping makes it: a string field is `text`
//!   (analysed: lowercased words, so a `term` only matches one word of it)
//!   with a `.keyword` sub-field (the whole value); fields listed in
//!   `keyword_fields` are `keyword` (as ECS maps `service.name`,
//!   `log.level`).
//! - Sorting on a field no searched index has, without `unmapped_type`,
//!   is the 400 "No mapping found for [f] in order to sort on".
//! - `min` / `max` aggregations on a date: `{"value": <epoch ms>,
//!   "value_as_string": "<ISO>"}`, `{"value": null}` without documents;
//!   `date_histogram` with `fixed_interval`, `min_doc_count` and
//!   `extended_bounds`: `{"buckets": [{"key_as_string", "key": <epoch ms>,
//!   "doc_count"}]}`, buckets on epoch multiples of the interval.
//! - The response: `took`, `timed_out`, `_shards` (with `failures` when a
//!   test injects a failed shard), `hits.total {value, relation}`,
//!   `hits.hits[] {_index, _id, _score, _source, sort}`, `aggregations`.
//! - Security: Elasticsearch 8 answers a missing or wrong credential with
//!   a 401 JSON `security_exception`; the OpenSearch security plugin with
//!   a 401 plain-text `Unauthorized`.

// Handlers answer errors as ready responses; their size is no concern here.
#![allow(clippy::result_large_err)]

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Flavor {
    #[default]
    Elasticsearch8,
    OpenSearch2,
}

/// One request: the index path, the body and the Authorization header.
#[derive(Clone, Debug)]
pub struct Request {
    pub index: String,
    pub body: Value,
    pub authorization: Option<String>,
}

#[derive(Clone, Default)]
pub struct Es {
    pub flavor: Flavor,
    /// (index, document)
    pub docs: Arc<Mutex<Vec<(String, Value)>>>,
    /// Fields mapped as `keyword`; other string fields are `text`.
    pub keyword_fields: Vec<String>,
    pub requests: Arc<Mutex<Vec<Request>>>,
    /// The Authorization header required, if any.
    pub authorization: Option<String>,
    /// A status and JSON body every search is answered with instead.
    pub fail_all: Arc<Mutex<Option<(u16, Value)>>>,
    /// The server stops counting here whatever `track_total_hits` says
    /// (a cluster setting, a proxy): the total is then `gte`.
    pub count_cap: Arc<Mutex<Option<u64>>>,
    /// Answer `timed_out: true` (the results so far).
    pub timed_out: Arc<Mutex<bool>>,
    /// One of two shards failed with this reason.
    pub failed_shard: Arc<Mutex<Option<String>>>,
}

impl Es {
    pub fn push(&self, index: &str, doc: Value) {
        self.docs.lock().unwrap().push((index.to_string(), doc));
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    pub async fn serve(self) -> String {
        let app = Router::new()
            .route("/{index}/_search", post(search))
            .with_state(self);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.ok() });
        format!("http://{addr}")
    }

    fn is_keyword(&self, field: &str) -> bool {
        field.ends_with(".keyword") || self.keyword_fields.iter().any(|f| f == field)
    }
}

/// An error as both servers write it.
pub fn error_body(status: u16, kind: &str, reason: &str, root: Option<(&str, &str)>) -> Value {
    let (rk, rr) = root.unwrap_or((kind, reason));
    json!({
        "error": {
            "root_cause": [{"type": rk, "reason": rr}],
            "type": kind,
            "reason": reason,
        },
        "status": status,
    })
}

fn err(status: u16, body: Value) -> Response {
    (StatusCode::from_u16(status).unwrap(), axum::Json(body)).into_response()
}

fn bad_request(kind: &str, reason: &str) -> Response {
    err(400, error_body(400, kind, reason, None))
}

/// A 400 that every shard gave: the search phase error around its cause.
fn shard_error(kind: &str, reason: &str) -> Response {
    err(
        400,
        error_body(
            400,
            "search_phase_execution_exception",
            "all shards failed",
            Some((kind, reason)),
        ),
    )
}

async fn search(
    State(es): State<Es>,
    Path(index): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let authorization = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let parsed: Result<Value, _> = serde_json::from_slice(&body);
    es.requests.lock().unwrap().push(Request {
        index: index.clone(),
        body: parsed.as_ref().cloned().unwrap_or(Value::Null),
        authorization: authorization.clone(),
    });
    if let Some(want) = &es.authorization
        && authorization.as_deref() != Some(want.as_str())
    {
        return match es.flavor {
            Flavor::Elasticsearch8 => err(
                401,
                error_body(
                    401,
                    "security_exception",
                    &format!("unable to authenticate user for REST request [/{index}/_search]"),
                    None,
                ),
            ),
            Flavor::OpenSearch2 => (
                StatusCode::UNAUTHORIZED,
                [("content-type", "text/plain; charset=UTF-8")],
                "Unauthorized",
            )
                .into_response(),
        };
    }
    if let Some((status, body)) = es.fail_all.lock().unwrap().clone() {
        return err(status, body);
    }
    let body = match parsed {
        Ok(Value::Object(b)) => b,
        Ok(_) => return bad_request("parsing_exception", "request body must be an object"),
        Err(e) => {
            return bad_request(
                "x_content_parse_exception",
                &format!("[1:1] Unexpected character: {e}"),
            );
        }
    };
    match run(&es, &index, &body) {
        Ok(v) => axum::Json(v).into_response(),
        Err(r) => r,
    }
}

fn run(es: &Es, index: &str, body: &Map<String, Value>) -> Result<Value, Response> {
    const KEYS: [&str; 8] = [
        "size",
        "from",
        "track_total_hits",
        "timeout",
        "query",
        "sort",
        "aggs",
        "aggregations",
    ];
    if let Some(k) = body.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(bad_request(
            "parsing_exception",
            &format!("Unknown key for a START_OBJECT in [{k}]."),
        ));
    }
    let size = body.get("size").map_or(Some(10), Value::as_u64);
    let from = body.get("from").map_or(Some(0), Value::as_u64);
    let (Some(size), Some(from)) = (size, from) else {
        return Err(bad_request(
            "x_content_parse_exception",
            "[size] and [from] must be numbers",
        ));
    };
    if from + size > 10_000 {
        return Err(shard_error(
            "illegal_argument_exception",
            &format!(
                "Result window is too large, from + size must be less than or equal to: [10000] but was [{}]. See the scroll api for a more efficient way to request large data sets. This limit can be set by changing the [index.max_result_window] index level setting.",
                from + size
            ),
        ));
    }
    if let Some(t) = body.get("timeout") {
        let ok = t.as_str().is_some_and(|s| {
            ["ms", "s", "m"].iter().any(|u| {
                s.strip_suffix(u)
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
        });
        if !ok {
            return Err(bad_request(
                "illegal_argument_exception",
                &format!(
                    "failed to parse setting [timeout] with value [{t}] as a time value: unit is missing or unrecognized"
                ),
            ));
        }
    }
    let indices = resolve(es, index)?;
    let docs: Vec<(String, Value)> = es
        .docs
        .lock()
        .unwrap()
        .iter()
        .filter(|(ix, _)| indices.contains(ix))
        .cloned()
        .collect();
    let query = body
        .get("query")
        .cloned()
        .unwrap_or(json!({"match_all": {}}));
    let mut matched: Vec<(usize, &String, &Value)> = Vec::new();
    for (i, (ix, doc)) in docs.iter().enumerate() {
        if matches(es, &query, doc)? {
            matched.push((i, ix, doc));
        }
    }
    // Sort: one key, on a date field, as diagraph sends it.
    let mut sort_field = None;
    if let Some(sort) = body.get("sort") {
        let Some((field, spec)) = sort
            .get(0)
            .and_then(Value::as_object)
            .and_then(|o| o.iter().next())
        else {
            return Err(bad_request("parsing_exception", "malformed sort"));
        };
        let desc = spec.get("order").and_then(Value::as_str) == Some("desc");
        let mapped = docs.iter().any(|(_, d)| get(d, field).is_some());
        if !mapped && spec.get("unmapped_type").is_none() {
            return Err(shard_error(
                "query_shard_exception",
                &format!("No mapping found for [{field}] in order to sort on"),
            ));
        }
        // Documents without the field sort last either way.
        matched.sort_by_key(|(i, _, d)| {
            let t = date_of(d, field).map(|t| t.timestamp_millis());
            let key = t.map(|t| if desc { -t } else { t });
            (key.is_none(), key, *i)
        });
        sort_field = Some(field.clone());
    }
    let count = matched.len() as u64;
    let cap = match body.get("track_total_hits") {
        None => Some(10_000),
        Some(Value::Bool(true)) => None,
        Some(Value::Bool(false)) => Some(0),
        Some(v) => match v.as_u64() {
            Some(n) => Some(n),
            None => {
                return Err(bad_request(
                    "illegal_argument_exception",
                    "[track_total_hits] must be a boolean or an integer",
                ));
            }
        },
    };
    let cap = match (cap, *es.count_cap.lock().unwrap()) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let total = match cap {
        Some(0) => None,
        Some(c) if count > c => Some(json!({"value": c, "relation": "gte"})),
        _ => Some(json!({"value": count, "relation": "eq"})),
    };
    let mut aggregations = Map::new();
    if let Some(aggs) = body.get("aggs").or_else(|| body.get("aggregations")) {
        for (name, spec) in aggs.as_object().into_iter().flatten() {
            if let Some(h) = spec.get("date_histogram") {
                let times: Vec<i64> = matched
                    .iter()
                    .filter_map(|(_, _, d)| {
                        date_of(d, h.get("field")?.as_str()?).map(|t| t.timestamp_millis())
                    })
                    .collect();
                aggregations.insert(name.clone(), date_histogram(h, &times)?);
                continue;
            }
            let (kind, field) = match spec.as_object().and_then(|o| o.iter().next()) {
                Some((k, f)) if k == "min" || k == "max" => {
                    (k.as_str(), f.get("field").and_then(Value::as_str))
                }
                Some((k, _)) => {
                    return Err(bad_request(
                        "parsing_exception",
                        &format!("Unknown aggregation type [{k}] did you mean [min]?"),
                    ));
                }
                None => return Err(bad_request("parsing_exception", "empty aggregation")),
            };
            let Some(field) = field else {
                return Err(bad_request(
                    "illegal_argument_exception",
                    "Required [field]",
                ));
            };
            let times = matched.iter().filter_map(|(_, _, d)| date_of(d, field));
            let t = if kind == "min" {
                times.min()
            } else {
                times.max()
            };
            aggregations.insert(
                name.clone(),
                match t {
                    Some(t) => json!({
                        "value": t.timestamp_millis() as f64,
                        "value_as_string": t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                    }),
                    None => json!({"value": null}),
                },
            );
        }
    }
    let hits: Vec<Value> = matched
        .iter()
        .skip(from as usize)
        .take(size as usize)
        .map(|(i, ix, d)| {
            let mut h =
                json!({"_index": ix, "_id": format!("doc-{i}"), "_score": null, "_source": d});
            if let Some(f) = &sort_field {
                h["sort"] = json!([date_of(d, f).map(|t| t.timestamp_millis())]);
            }
            h
        })
        .collect();
    let mut shards = json!({"total": indices.len().max(1), "successful": indices.len().max(1), "skipped": 0, "failed": 0});
    if let Some(reason) = es.failed_shard.lock().unwrap().clone() {
        shards = json!({"total": 2, "successful": 1, "skipped": 0, "failed": 1, "failures": [
            {"shard": 1, "index": indices.first(), "node": "n1",
             "reason": {"type": "node_not_connected_exception", "reason": reason}}]});
    }
    let mut hits_obj = json!({"max_score": null, "hits": hits});
    if let Some(t) = total {
        hits_obj["total"] = t;
    }
    let mut resp = json!({
        "took": 3,
        "timed_out": *es.timed_out.lock().unwrap(),
        "_shards": shards,
        "hits": hits_obj,
    });
    if !aggregations.is_empty() {
        resp["aggregations"] = Value::Object(aggregations);
    }
    Ok(resp)
}

/// A `date_histogram` with a `fixed_interval` (`90s`, `1500ms`, `5m`, `1h`,
/// `1d`): buckets at epoch multiples of the interval (no offset, UTC),
/// keyed by their start in epoch ms, in key order; with `min_doc_count` 0
/// every bucket between the first and last document and across
/// `extended_bounds` is listed, else only buckets with documents.
fn date_histogram(h: &Value, times: &[i64]) -> Result<Value, Response> {
    if h.get("calendar_interval").is_some() || h.get("interval").is_some() {
        return Err(bad_request(
            "illegal_argument_exception",
            "the fake answers fixed_interval only",
        ));
    }
    let interval = h
        .get("fixed_interval")
        .and_then(Value::as_str)
        .and_then(|s| {
            let split = s.find(|c: char| !c.is_ascii_digit())?;
            let (n, unit) = s.split_at(split);
            let n: i64 = n.parse().ok()?;
            let ms = match unit {
                "ms" => 1,
                "s" => 1000,
                "m" => 60_000,
                "h" => 3_600_000,
                "d" => 86_400_000,
                _ => return None,
            };
            Some(n * ms)
        })
        .filter(|i| *i > 0)
        .ok_or_else(|| {
            bad_request(
                "illegal_argument_exception",
                "failed to parse setting [date_histogram.fixedInterval]",
            )
        })?;
    let key = |t: i64| t.div_euclid(interval) * interval;
    let mut counts: std::collections::BTreeMap<i64, u64> = Default::default();
    for t in times {
        *counts.entry(key(*t)).or_default() += 1;
    }
    let min_doc_count = h.get("min_doc_count").and_then(Value::as_u64).unwrap_or(1);
    if min_doc_count == 0 {
        let bound = |k: &str| {
            h.get("extended_bounds")
                .and_then(|b| b.get(k))
                .and_then(Value::as_i64)
        };
        let lo = counts
            .keys()
            .next()
            .copied()
            .into_iter()
            .chain(bound("min").map(key))
            .min();
        let hi = counts
            .keys()
            .last()
            .copied()
            .into_iter()
            .chain(bound("max").map(key))
            .max();
        if let (Some(lo), Some(hi)) = (lo, hi) {
            let mut k = lo;
            while k <= hi {
                counts.entry(k).or_default();
                k += interval;
            }
        }
    }
    let buckets: Vec<Value> = counts
        .into_iter()
        .filter(|(_, n)| *n >= min_doc_count)
        .map(|(k, n)| {
            json!({
                "key_as_string": DateTime::from_timestamp_millis(k)
                    .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
                "key": k,
                "doc_count": n,
            })
        })
        .collect();
    Ok(json!({"buckets": buckets}))
}

/// The indices an index expression names.
fn resolve(es: &Es, expr: &str) -> Result<Vec<String>, Response> {
    let existing: Vec<String> = {
        let mut v: Vec<String> = es
            .docs
            .lock()
            .unwrap()
            .iter()
            .map(|d| d.0.clone())
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let mut out = Vec::new();
    for part in expr.split(',') {
        if part.contains('*') {
            let re = regex::Regex::new(&format!("^{}$", regex::escape(part).replace("\\*", ".*")))
                .unwrap();
            out.extend(existing.iter().filter(|e| re.is_match(e)).cloned());
        } else if existing.iter().any(|e| e == part) {
            out.push(part.to_string());
        } else {
            let mut body = error_body(
                404,
                "index_not_found_exception",
                &format!("no such index [{part}]"),
                None,
            );
            for e in ["/error", "/error/root_cause/0"] {
                if let Some(e) = body.pointer_mut(e) {
                    e["resource.type"] = json!("index_or_alias");
                    e["resource.id"] = json!(part);
                    e["index"] = json!(part);
                }
            }
            return Err(err(404, body));
        }
    }
    Ok(out)
}

/// A field of a document, flat or nested; `x.keyword` reads `x`.
pub fn get<'a>(doc: &'a Value, path: &str) -> Option<&'a Value> {
    let o = doc.as_object()?;
    if let Some(v) = o.get(path) {
        return Some(v);
    }
    for (i, _) in path.match_indices('.') {
        if let Some(v) = o
            .get(&path[..i])
            .and_then(|inner| get(inner, &path[i + 1..]))
        {
            return Some(v);
        }
    }
    path.strip_suffix(".keyword").and_then(|p| get(doc, p))
}

fn string_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn date_of(doc: &Value, field: &str) -> Option<DateTime<Utc>> {
    match get(doc, field)? {
        Value::String(s) => parse_date(s),
        Value::Number(n) => DateTime::from_timestamp_millis(n.as_i64()?),
        _ => None,
    }
}

fn parse_date(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// The standard analyzer, near enough: words of letters and digits
/// (`_`, and `.` or `'` between letters, keep a word together), lowercased.
pub fn tokens(s: &str) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, c) in chars.iter().enumerate() {
        let joins = |c: char| c.is_alphanumeric() || c == '_';
        let mid = (*c == '.' || *c == '\'')
            && i > 0
            && joins(chars[i - 1])
            && chars.get(i + 1).is_some_and(|n| joins(*n));
        if joins(*c) || mid {
            cur.extend(c.to_lowercase());
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn field_values(doc: &Value, field: &str) -> Vec<String> {
    match get(doc, field) {
        Some(Value::Array(a)) => a.iter().filter_map(string_of).collect(),
        Some(v) => string_of(v).into_iter().collect(),
        None => vec![],
    }
}

fn clauses(v: Option<&Value>) -> Vec<&Value> {
    match v {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(v @ Value::Object(_)) => vec![v],
        _ => vec![],
    }
}

fn one_field<'a>(q: &'a Value, kind: &str) -> Result<(&'a String, &'a Value), Response> {
    let o = q.as_object().filter(|o| o.len() == 1).ok_or_else(|| {
        bad_request(
            "parsing_exception",
            &format!("[{kind}] query doesn't support multiple fields"),
        )
    })?;
    Ok(o.iter().next().unwrap())
}

fn matches(es: &Es, q: &Value, doc: &Value) -> Result<bool, Response> {
    let Some((kind, body)) = q
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.iter().next())
    else {
        return Err(bad_request(
            "parsing_exception",
            "[_na] query malformed, must start with start_object",
        ));
    };
    match kind.as_str() {
        "match_all" => Ok(true),
        "bool" => {
            let all = |k: &str| -> Result<bool, Response> {
                for c in clauses(body.get(k)) {
                    if !matches(es, c, doc)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            };
            if !all("filter")? || !all("must")? {
                return Ok(false);
            }
            for c in clauses(body.get("must_not")) {
                if matches(es, c, doc)? {
                    return Ok(false);
                }
            }
            let should = clauses(body.get("should"));
            let required = match body.get("minimum_should_match") {
                Some(v) => v.as_u64().unwrap_or(1) as usize,
                None if body.get("filter").is_none() && body.get("must").is_none() => {
                    usize::from(!should.is_empty())
                }
                None => 0,
            };
            let mut n = 0;
            for c in should {
                if matches(es, c, doc)? {
                    n += 1;
                }
            }
            Ok(n >= required)
        }
        "term" => {
            let (field, spec) = one_field(body, "term")?;
            let (value, ci) = match spec {
                Value::Object(o) => (
                    o.get("value").and_then(string_of),
                    o.get("case_insensitive").and_then(Value::as_bool) == Some(true),
                ),
                v => (string_of(v), false),
            };
            let Some(value) = value else {
                return Err(bad_request(
                    "parsing_exception",
                    "[term] query does not support [value] of this type",
                ));
            };
            let eq = |a: &str| {
                if ci {
                    a.to_lowercase() == value.to_lowercase()
                } else {
                    a == value
                }
            };
            let vals = field_values(doc, field);
            Ok(if es.is_keyword(field) {
                vals.iter().any(|v| eq(v))
            } else {
                // A term is not analysed; a text field holds words.
                vals.iter().flat_map(|v| tokens(v)).any(|t| eq(&t))
            })
        }
        "match_phrase" => {
            let (field, spec) = one_field(body, "match_phrase")?;
            let text = match spec {
                Value::Object(o) => o.get("query").and_then(string_of),
                v => string_of(v),
            }
            .unwrap_or_default();
            let vals = field_values(doc, field);
            if es.is_keyword(field) {
                return Ok(vals.contains(&text));
            }
            let want = tokens(&text);
            if want.is_empty() {
                return Ok(false);
            }
            Ok(vals.iter().any(|v| {
                let have = tokens(v);
                have.windows(want.len()).any(|w| w == want.as_slice())
            }))
        }
        "range" => {
            let (field, spec) = one_field(body, "range")?;
            let Some(spec) = spec.as_object() else {
                return Err(bad_request("parsing_exception", "[range] malformed"));
            };
            let Some(t) = date_of(doc, field) else {
                return Ok(false);
            };
            for (op, v) in spec {
                if op == "format" {
                    continue;
                }
                let Some(bound) = v.as_str().and_then(parse_date) else {
                    return Err(shard_error(
                        "parse_exception",
                        &format!(
                            "failed to parse date field [{v}] with format [strict_date_optional_time]"
                        ),
                    ));
                };
                let ok = match op.as_str() {
                    "gte" => t >= bound,
                    "gt" => t > bound,
                    "lte" => t <= bound,
                    "lt" => t < bound,
                    other => {
                        return Err(bad_request(
                            "parsing_exception",
                            &format!("[range] query does not support [{other}]"),
                        ));
                    }
                };
                if !ok {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        other => Err(bad_request(
            "parsing_exception",
            &format!("unknown query [{other}]"),
        )),
    }
}

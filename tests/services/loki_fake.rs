//! A faithful fake of Grafana Loki's HTTP API, as far as diagraph uses it
//! (Loki cannot be installed from the registries these machines reach).
//! Built from Loki's documented responses:
//! - `GET /loki/api/v1/labels?start&end` -> `{"status":"success","data":[names]}`;
//! - `GET /loki/api/v1/query_range?query&start&end&limit&direction` ->
//!   `{"status":"success","data":{"resultType":"streams","result":[{"stream":{labels},
//!   "values":[["<unix ns>","<line>"], ...]}],"stats":{}}}`, at most `limit`
//!   lines (the newest for `backward`), `limit` above 5000 refused as Loki's
//!   default `max_entries_limit_per_query` does;
//! - `GET /loki/api/v1/query?query=sum(count_over_time(<log query> [Ns]))&time` ->
//!   `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[<unix s>,"<n>"]}]}}`
//!   (an empty result when nothing matched);
//! - `GET /loki/api/v1/query_range?query=sum(count_over_time(<log query> [D]))&start&end&step` ->
//!   `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[<unix s>,"<n>"], ...]}]}}`:
//!   evaluated at `start`, `start + step`, … up to `end`, each point counting
//!   the lines in `(t - D, t]`, a step without lines left out, times in
//!   seconds with millisecond precision (`step` a duration or float seconds);
//! - errors as Loki writes them: HTTP 400 with a plain-text body
//!   (`parse error at line 1, col 7: syntax error: unexpected …`), and any
//!   status a test injects.
//!
//! It really evaluates the LogQL subset diagraph sends (stream matchers
//! `= != =~ !~`, label filters, line filters `|= != |~ !~`, Go-quoted
//! strings), so a query that is not well-formed is a 400 here, and a query
//! that selects the wrong lines gives the wrong answer.

// Handlers answer errors as ready responses; their size is no concern here.
#![allow(clippy::result_large_err)]

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use regex::Regex;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

pub type Labels = BTreeMap<String, String>;
/// (path, query parameters and the headers of interest) per request.
type Requests = Arc<Mutex<Vec<(String, HashMap<String, String>)>>>;

#[derive(Clone, Default)]
pub struct Loki {
    /// (labels, unix ns, line)
    pub entries: Arc<Mutex<Vec<(Labels, i64, String)>>>,
    /// Every request: (path, query parameters, headers of interest).
    pub requests: Requests,
    /// A status and body every request is answered with instead.
    pub fail_all: Arc<Mutex<Option<(u16, String)>>>,
    /// Same, for the metric (count) query only.
    pub fail_count: Arc<Mutex<Option<(u16, String)>>>,
    /// The bearer token required, if any.
    pub token: Option<String>,
}

impl Loki {
    pub fn push(&self, labels: &[(&str, &str)], ns: i64, line: &str) {
        let l = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.entries.lock().unwrap().push((l, ns, line.to_string()));
    }

    pub fn queries(&self) -> Vec<HashMap<String, String>> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.1.clone())
            .collect()
    }

    pub async fn serve(self) -> String {
        let app = Router::new()
            .route("/loki/api/v1/labels", get(labels))
            .route("/loki/api/v1/query_range", get(query_range))
            .route("/loki/api/v1/query", get(instant))
            .with_state(self);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.ok() });
        format!("http://{addr}")
    }

    fn gate(&self, path: &str, q: &HashMap<String, String>, h: &HeaderMap) -> Option<Response> {
        let mut rec = q.clone();
        for k in ["authorization", "x-scope-orgid"] {
            if let Some(v) = h.get(k).and_then(|v| v.to_str().ok()) {
                rec.insert(format!("header:{k}"), v.to_string());
            }
        }
        self.requests.lock().unwrap().push((path.to_string(), rec));
        if let Some(t) = &self.token {
            let want = format!("Bearer {t}");
            if h.get("authorization").and_then(|v| v.to_str().ok()) != Some(want.as_str()) {
                return Some(text(401, "no org id\n"));
            }
        }
        self.fail_all
            .lock()
            .unwrap()
            .clone()
            .map(|(s, b)| text(s, &b))
    }
}

fn text(status: u16, body: &str) -> Response {
    (
        StatusCode::from_u16(status).unwrap(),
        [("content-type", "text/plain; charset=utf-8")],
        body.to_string(),
    )
        .into_response()
}

fn ok(data: Value) -> Response {
    axum::Json(json!({"status": "success", "data": data})).into_response()
}

fn ns_param(q: &HashMap<String, String>, k: &str) -> Result<i64, Response> {
    q.get(k)
        .ok_or_else(|| text(400, &format!("missing {k}\n")))?
        .parse::<i64>()
        .map_err(|_| {
            text(
                400,
                &format!("invalid parameter \"{k}\": not a nanosecond timestamp\n"),
            )
        })
}

fn window(q: &HashMap<String, String>) -> Result<(i64, i64), Response> {
    let (start, end) = (ns_param(q, "start")?, ns_param(q, "end")?);
    if end < start {
        return Err(text(
            400,
            "end timestamp must not be before or equal to start time\n",
        ));
    }
    Ok((start, end))
}

async fn labels(
    State(l): State<Loki>,
    Query(q): Query<HashMap<String, String>>,
    h: HeaderMap,
) -> Response {
    if let Some(r) = l.gate("labels", &q, &h) {
        return r;
    }
    let (start, end) = match window(&q) {
        Ok(w) => w,
        Err(r) => return r,
    };
    let mut names: Vec<String> = l
        .entries
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.1 >= start && e.1 <= end)
        .flat_map(|e| e.0.keys().cloned())
        .collect();
    names.sort();
    names.dedup();
    ok(json!(names))
}

async fn query_range(
    State(l): State<Loki>,
    Query(q): Query<HashMap<String, String>>,
    h: HeaderMap,
) -> Response {
    if let Some(r) = l.gate("query_range", &q, &h) {
        return r;
    }
    let (start, end) = match window(&q) {
        Ok(w) => w,
        Err(r) => return r,
    };
    if let Some(count) = q.get("query").and_then(|s| parse_count(s)) {
        return matrix(&l, &q, start, end, count);
    }
    let limit: usize = q.get("limit").and_then(|s| s.parse().ok()).unwrap_or(100);
    if limit > 5000 {
        return text(
            400,
            &format!(
                "max entries limit per query exceeded, limit > max_entries_limit ({limit} > 5000)\n"
            ),
        );
    }
    let forward = match q.get("direction").map(String::as_str) {
        None | Some("backward") => false,
        Some("forward") => true,
        Some(_) => return text(400, "invalid direction\n"),
    };
    let query = match parse_log_query(q.get("query").map(String::as_str).unwrap_or("")) {
        Ok(p) => p,
        Err(e) => {
            return text(
                400,
                &format!("parse error at line 1, col 1: syntax error: {e}\n"),
            );
        }
    };
    let mut hits: Vec<(Labels, i64, String)> = l
        .entries
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.1 >= start && e.1 < end.max(start + 1) && query.matches(&e.0, &e.2))
        .cloned()
        .collect();
    hits.sort_by_key(|e| e.1);
    if !forward {
        hits.reverse();
    }
    hits.truncate(limit);
    let mut streams: Vec<(Labels, Vec<Value>)> = Vec::new();
    for (labels, ns, line) in hits {
        let v = json!([ns.to_string(), line]);
        match streams.iter_mut().find(|s| s.0 == labels) {
            Some(s) => s.1.push(v),
            None => streams.push((labels, vec![v])),
        }
    }
    let result: Vec<Value> = streams
        .into_iter()
        .map(|(labels, values)| json!({"stream": labels, "values": values}))
        .collect();
    ok(
        json!({"resultType": "streams", "result": result, "stats": {"summary": {"totalEntriesReturned": 0}}}),
    )
}

async fn instant(
    State(l): State<Loki>,
    Query(q): Query<HashMap<String, String>>,
    h: HeaderMap,
) -> Response {
    if let Some(r) = l.gate("query", &q, &h) {
        return r;
    }
    if let Some((s, b)) = l.fail_count.lock().unwrap().clone() {
        return text(s, &b);
    }
    let time = match ns_param(&q, "time") {
        Ok(t) => t,
        Err(r) => return r,
    };
    let Some((inner, range_ns)) = q.get("query").and_then(|s| parse_count(s)) else {
        return text(
            400,
            "parse error at line 1, col 1: syntax error: unexpected metric query\n",
        );
    };
    let query = match parse_log_query(&inner) {
        Ok(p) => p,
        Err(e) => {
            return text(
                400,
                &format!("parse error at line 1, col 1: syntax error: {e}\n"),
            );
        }
    };
    let start = time - range_ns;
    let n = l
        .entries
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.1 > start && e.1 <= time && query.matches(&e.0, &e.2))
        .count();
    let result = if n == 0 {
        json!([])
    } else {
        json!([{"metric": {}, "value": [time as f64 / 1e9, n.to_string()]}])
    };
    ok(json!({"resultType": "vector", "result": result}))
}

/// A range query of a count: one point per step with lines in its range.
fn matrix(
    l: &Loki,
    q: &HashMap<String, String>,
    start: i64,
    end: i64,
    (inner, range_ns): (String, i64),
) -> Response {
    let Some(step) = q
        .get("step")
        .and_then(|s| duration_ns(s))
        .filter(|s| *s > 0)
    else {
        return text(400, "invalid parameter \"step\"\n");
    };
    if (end - start) / step > 11_000 {
        return text(
            400,
            "exceeded maximum resolution of 11,000 points per timeseries\n",
        );
    }
    let query = match parse_log_query(&inner) {
        Ok(p) => p,
        Err(e) => {
            return text(
                400,
                &format!("parse error at line 1, col 1: syntax error: {e}\n"),
            );
        }
    };
    let entries = l.entries.lock().unwrap().clone();
    let mut values = Vec::new();
    let mut t = start;
    while t <= end {
        let n = entries
            .iter()
            .filter(|e| e.1 > t - range_ns && e.1 <= t && query.matches(&e.0, &e.2))
            .count();
        if n > 0 {
            // Prometheus-style times: seconds, millisecond precision.
            values.push(json!([
                (t.div_euclid(1_000_000)) as f64 / 1e3,
                n.to_string()
            ]));
        }
        t += step;
    }
    let result = if values.is_empty() {
        json!([])
    } else {
        json!([{"metric": {}, "values": values}])
    };
    ok(json!({"resultType": "matrix", "result": result}))
}

/// A Prometheus duration (`90s`, `1500ms`, `2m`, `1h`) or float seconds, in ns.
fn duration_ns(s: &str) -> Option<i64> {
    if let Ok(secs) = s.parse::<f64>() {
        return Some((secs * 1e9).round() as i64);
    }
    let split = s.find(|c: char| !c.is_ascii_digit())?;
    let (n, unit) = s.split_at(split);
    let n: i64 = n.parse().ok()?;
    let unit_ns = match unit {
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    };
    Some(n * unit_ns)
}

/// `sum(count_over_time(<q> [D]))` -> (q, D in ns).
fn parse_count(s: &str) -> Option<(String, i64)> {
    let inner = s.strip_prefix("sum(count_over_time(")?.strip_suffix("))")?;
    let (q, range) = inner.rsplit_once(" [")?;
    let ns = duration_ns(range.strip_suffix(']')?)?;
    Some((q.to_string(), ns))
}

enum Op {
    Eq,
    Ne,
    Re,
    NotRe,
}

struct Matcher {
    label: String,
    op: Op,
    value: String,
    re: Option<Regex>,
}

impl Matcher {
    fn matches(&self, v: &str) -> bool {
        match self.op {
            Op::Eq => v == self.value,
            Op::Ne => v != self.value,
            Op::Re => self.re.as_ref().is_some_and(|r| r.is_match(v)),
            Op::NotRe => self.re.as_ref().is_some_and(|r| !r.is_match(v)),
        }
    }
}

enum Stage {
    Label(Matcher),
    Line {
        contains: bool,
        regex: Option<Regex>,
        text: String,
    },
}

pub struct LogQuery {
    selector: Vec<Matcher>,
    stages: Vec<Stage>,
}

impl LogQuery {
    fn matches(&self, labels: &Labels, line: &str) -> bool {
        let get = |k: &str| labels.get(k).map(String::as_str).unwrap_or("");
        self.selector.iter().all(|m| m.matches(get(&m.label)))
            && self.stages.iter().all(|s| match s {
                Stage::Label(m) => m.matches(get(&m.label)),
                Stage::Line {
                    contains,
                    regex: Some(r),
                    ..
                } => r.is_match(line) == *contains,
                Stage::Line {
                    contains,
                    regex: None,
                    text,
                } => line.contains(text.as_str()) == *contains,
            })
    }
}

struct P<'a> {
    s: &'a str,
    i: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        while self.s[self.i..].starts_with(' ') {
            self.i += 1;
        }
    }
    fn eat(&mut self, t: &str) -> bool {
        self.ws();
        if self.s[self.i..].starts_with(t) {
            self.i += t.len();
            true
        } else {
            false
        }
    }
    fn ident(&mut self) -> Result<String, String> {
        self.ws();
        let rest = &self.s[self.i..];
        let n = rest
            .char_indices()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
            .map_or(rest.len(), |(i, _)| i);
        if n == 0 || rest.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!(
                "unexpected {:?}, expecting IDENTIFIER",
                &rest[..rest.len().min(10)]
            ));
        }
        self.i += n;
        Ok(rest[..n].to_string())
    }
    /// A Go double-quoted string.
    fn string(&mut self) -> Result<String, String> {
        self.ws();
        let mut chars = self.s[self.i..].char_indices();
        if chars.next().map(|c| c.1) != Some('"') {
            return Err("expecting STRING".into());
        }
        let mut out = String::new();
        while let Some((at, c)) = chars.next() {
            match c {
                '"' => {
                    self.i += at + 1;
                    return Ok(out);
                }
                '\\' => match chars.next().map(|c| c.1) {
                    Some('\\') => out.push('\\'),
                    Some('"') => out.push('"'),
                    Some('n') => out.push('\n'),
                    Some('r') => out.push('\r'),
                    Some('t') => out.push('\t'),
                    Some('u') => {
                        let hex: String =
                            (0..4).filter_map(|_| chars.next().map(|c| c.1)).collect();
                        let c = u32::from_str_radix(&hex, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .ok_or("bad \\u escape")?;
                        out.push(c);
                    }
                    other => return Err(format!("invalid escape {other:?} in string")),
                },
                c if c.is_control() => return Err("control character in string".into()),
                c => out.push(c),
            }
        }
        Err("unterminated string".into())
    }
    fn matcher(&mut self, label: String) -> Result<Matcher, String> {
        let op = if self.eat("=~") {
            Op::Re
        } else if self.eat("!~") {
            Op::NotRe
        } else if self.eat("!=") {
            Op::Ne
        } else if self.eat("=") {
            Op::Eq
        } else {
            return Err("expecting a matcher operator".into());
        };
        let value = self.string()?;
        let re = match op {
            // Label regexes are fully anchored.
            Op::Re | Op::NotRe => Some(
                Regex::new(&format!("^(?:{value})$")).map_err(|e| format!("invalid regex: {e}"))?,
            ),
            _ => None,
        };
        Ok(Matcher {
            label,
            op,
            value,
            re,
        })
    }
}

pub fn parse_log_query(s: &str) -> Result<LogQuery, String> {
    let mut p = P { s, i: 0 };
    if !p.eat("{") {
        return Err("expecting {".into());
    }
    let mut selector = Vec::new();
    loop {
        let label = p.ident()?;
        selector.push(p.matcher(label)?);
        if p.eat("}") {
            break;
        }
        if !p.eat(",") {
            return Err("expecting , or }".into());
        }
    }
    // Loki refuses a selector that can match everything.
    if selector
        .iter()
        .all(|m| matches!(m.op, Op::Re) && m.value == ".*" || matches!(m.op, Op::Ne))
    {
        return Err("queries require at least one regexp or equality matcher that does not have an empty-compatible value".into());
    }
    let mut stages = Vec::new();
    loop {
        p.ws();
        if p.i >= s.len() {
            break;
        }
        let (contains, re) = if p.eat("|=") {
            (true, false)
        } else if p.eat("|~") {
            (true, true)
        } else if p.eat("!=") {
            (false, false)
        } else if p.eat("!~") {
            (false, true)
        } else if p.eat("|") {
            let label = p.ident()?;
            stages.push(Stage::Label(p.matcher(label)?));
            continue;
        } else {
            return Err(format!("unexpected {:?}", &s[p.i..]));
        };
        let text = p.string()?;
        let regex = if re {
            Some(Regex::new(&text).map_err(|e| format!("invalid regex: {e}"))?)
        } else {
            None
        };
        stages.push(Stage::Line {
            contains,
            regex,
            text,
        });
    }
    Ok(LogQuery { selector, stages })
}

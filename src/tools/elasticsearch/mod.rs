//! `query_logs` over Elasticsearch 8 or OpenSearch 2
//! (`DIAGRAPH_ELASTICSEARCH_URL`, `DIAGRAPH_ELASTICSEARCH_INDEX`,
//! `[logs.elasticsearch]`).
//!
//! One call is one `POST /{index}/_search` ([`query::search_body`]): the
//! newest `max_lines` matching records sorted on the timestamp field (the
//! sample is chosen from those), `track_total_hits: true` for the exact
//! count of every matching record, `min` / `max` aggregations for the
//! times of the oldest and newest, and a `date_histogram` for the count per
//! time bucket. Records become [`LogLine`]s (time,
//! service, level and message from the configured fields; the level from
//! the message when no level field has it) and answer through
//! `tools::logs::answer` like every backend. A window not given is the
//! last `default_window_hours`.
//!
//! Elasticsearch counts records, not kinds of record, so figures per kind
//! are stated only when every matching record was read. A count that is
//! only a lower bound (`hits.total.relation` `gte`), a search that timed
//! out on the server or failed on some shards is a partial answer that
//! says so; every other failure (unreachable, an error status with the
//! server's `error.reason`, a body that is not a search response, the
//! timeout) fails the call with its reason.

pub mod query;

use crate::config::ElasticsearchConfig;
use crate::text::clean;
use crate::tools::common::fmt_time;
use crate::tools::http::{Auth, HttpSource};
use crate::tools::logs::format::parse_ts;
use crate::tools::logs::sample::Sampler;
use crate::tools::logs::{
    Found, LogLine, LogQuery, answer, detect_level, pattern, query_logs_spec,
};
use crate::tools::{Tool, ToolError, ToolOutput};
use crate::vocab::buckets::TimeBuckets;
use crate::vocab::tool::ToolSpec;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use query::{Fields, Selection, field_text, flatten};
use serde_json::{Map, Value, json};
use std::time::Duration;

/// Elasticsearch's default `index.max_result_window`: more cannot be
/// read in one search.
pub const MAX_RESULT_WINDOW: usize = 10_000;
/// Other `_source` fields kept with a line, at most.
const MAX_EXTRA_FIELDS: usize = 20;

pub struct ElasticsearchLogs {
    src: HttpSource,
    index: String,
    fields: Fields,
    max_lines: usize,
    default_window: chrono::Duration,
    timeout: Duration,
}

impl std::fmt::Debug for ElasticsearchLogs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElasticsearchLogs")
            .field("src", &self.src)
            .field("index", &self.index)
            .finish()
    }
}

/// What a `_search` answered, read.
struct Hits {
    lines: Vec<LogLine>,
    /// `hits.total.value`, and whether it is exact (`relation: eq`).
    total: Option<(u64, bool)>,
    first: Option<DateTime<Utc>>,
    last: Option<DateTime<Utc>>,
    /// The `date_histogram`'s counts in the grid asked for; `None` when
    /// the server answered without it.
    buckets: Option<TimeBuckets>,
    /// What the server says it left out (timed out, failed shards).
    incomplete: Vec<String>,
}

impl ElasticsearchLogs {
    /// From `[logs.elasticsearch]`: a bad URL, index pattern or field
    /// name is an error now.
    pub fn new(cfg: &ElasticsearchConfig, timeout: Duration) -> Result<ElasticsearchLogs, String> {
        let url = cfg.url.clone().unwrap_or_default();
        if url.trim().is_empty() {
            return Err("the elasticsearch log backend needs a URL (set DIAGRAPH_ELASTICSEARCH_URL or logs.elasticsearch.url)".into());
        }
        cfg.check_index()
            .map_err(|e| format!("logs.elasticsearch: {e}"))?;
        let names = std::iter::once(&cfg.timestamp_field)
            .chain(&cfg.service_fields)
            .chain(&cfg.level_fields)
            .chain(std::iter::once(&cfg.message_field));
        for n in names {
            if n.trim().is_empty() || n.chars().any(|c| c.is_control()) {
                return Err(format!("logs.elasticsearch: {n:?} is not a field name"));
            }
        }
        if cfg.service_fields.is_empty() || cfg.level_fields.is_empty() {
            return Err(
                "logs.elasticsearch: service_fields and level_fields need at least one field"
                    .into(),
            );
        }
        let auth = match (&cfg.api_key, &cfg.username) {
            (Some(k), _) => Auth::ApiKey(k.clone()),
            (None, Some(u)) => Auth::Basic {
                user: u.clone(),
                password: cfg.password.clone().unwrap_or_default(),
            },
            (None, None) => Auth::None,
        };
        Ok(ElasticsearchLogs {
            src: HttpSource::new("Elasticsearch", &url, timeout, auth, vec![])?,
            index: cfg.index.trim().to_string(),
            fields: Fields {
                timestamp: cfg.timestamp_field.clone(),
                service: cfg.service_fields.clone(),
                level: cfg.level_fields.clone(),
                message: cfg.message_field.clone(),
            },
            max_lines: cfg.max_lines.clamp(1, MAX_RESULT_WINDOW),
            default_window: chrono::Duration::hours(i64::from(cfg.default_window_hours.max(1))),
            timeout,
        })
    }

    /// The server gives up a little before the client does, so a slow
    /// search comes back as partial results rather than nothing.
    fn server_timeout_ms(&self) -> u64 {
        u64::try_from(self.timeout.as_millis() * 9 / 10)
            .unwrap_or(u64::MAX)
            .max(1)
    }

    fn line(&self, hit: &Value) -> Result<LogLine, ToolError> {
        let bad = |why: &str| {
            ToolError::BadResponse(format!("Elasticsearch _search answered a hit {why}"))
        };
        let source = hit
            .get("_source")
            .and_then(Value::as_object)
            .ok_or_else(|| bad("without _source (is _source disabled for the index?)"))?;
        let f = &self.fields;
        // The time from the record, else from the sort value (epoch ms).
        let ts = field_text(source, &f.timestamp)
            .and_then(|s| parse_ts(&s, None))
            .or_else(|| {
                hit.get("sort")
                    .and_then(|s| s.get(0))
                    .and_then(Value::as_i64)
                    .and_then(DateTime::from_timestamp_millis)
            })
            .ok_or_else(|| bad(&format!("without a readable {}", f.timestamp)))?;
        let message = field_text(source, &f.message).unwrap_or_default();
        let service = f
            .service
            .iter()
            .find_map(|k| field_text(source, k))
            .unwrap_or_default();
        let level = f
            .level
            .iter()
            .find_map(|k| field_text(source, k))
            .map(|l| l.to_ascii_uppercase())
            .or_else(|| detect_level(&message).map(str::to_string))
            .unwrap_or_else(|| "UNKNOWN".into());
        let used: Vec<&str> = std::iter::once(f.timestamp.as_str())
            .chain(f.service.iter().map(String::as_str))
            .chain(f.level.iter().map(String::as_str))
            .chain(std::iter::once(f.message.as_str()))
            .collect();
        let mut extra = flatten(source, &used, MAX_EXTRA_FIELDS);
        if let Some(ix) = hit.get("_index").and_then(Value::as_str) {
            extra.insert("_index".into(), json!(ix));
        }
        Ok(LogLine {
            ts,
            service,
            level,
            message,
            extra,
        })
    }

    async fn search(&self, body: &Value, grid: TimeBuckets) -> Result<Hits, ToolError> {
        let path = format!("/{}/_search", self.index);
        let resp = self.src.post(&path, body).await?;
        let bad =
            |why: &str| ToolError::BadResponse(format!("Elasticsearch {path} answered {why}"));
        let hits = resp
            .get("hits")
            .ok_or_else(|| bad("without hits: not a search response"))?;
        let list = hits
            .get("hits")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("without hits.hits"))?;
        let lines = list
            .iter()
            .map(|h| self.line(h))
            .collect::<Result<Vec<LogLine>, ToolError>>()?;
        // Elasticsearch 7+ and OpenSearch: {value, relation}; with
        // rest_total_hits_as_int (or a proxy that sets it): a number.
        let total = match hits.get("total") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => n.as_u64().map(|n| (n, true)),
            Some(t) => {
                let value = t
                    .get("value")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| bad("a hits.total without a count"))?;
                let exact = match t.get("relation").and_then(Value::as_str) {
                    Some("eq") | None => true,
                    Some("gte") => false,
                    Some(other) => {
                        return Err(bad(&format!("hits.total.relation {:?}", clean(other, 20))));
                    }
                };
                Some((value, exact))
            }
        };
        let agg_time = |name: &str| {
            let a = resp.get("aggregations")?.get(name)?;
            a.get("value_as_string")
                .and_then(Value::as_str)
                .and_then(|s| parse_ts(s, None))
                .or_else(|| {
                    a.get("value")
                        .and_then(Value::as_f64)
                        .filter(|v| v.is_finite())
                        .and_then(|ms| DateTime::from_timestamp_millis(ms as i64))
                })
        };
        let buckets = per_bucket(&resp, grid).map_err(|why| bad(&why))?;
        let mut incomplete = Vec::new();
        if resp.get("timed_out").and_then(Value::as_bool) == Some(true) {
            incomplete.push(format!(
                "the search timed out on the server after {}",
                crate::tools::human_ms(self.server_timeout_ms())
            ));
        }
        let shards = resp.get("_shards");
        let failed = shards
            .and_then(|s| s.get("failed"))
            .and_then(Value::as_u64)
            .unwrap_or(0);
        if failed > 0 {
            let of = shards
                .and_then(|s| s.get("total"))
                .and_then(Value::as_u64)
                .unwrap_or(failed);
            let reason = shards
                .and_then(|s| s.get("failures"))
                .and_then(|f| f.get(0))
                .and_then(|f| f.get("reason"))
                .and_then(|r| r.get("reason").or(Some(r)))
                .and_then(Value::as_str)
                .map(|r| format!(": {}", clean(r, 200)))
                .unwrap_or_default();
            incomplete.push(format!("{failed} of {of} shards failed{reason}"));
        }
        Ok(Hits {
            lines,
            total,
            first: agg_time("first_ts"),
            last: agg_time("last_ts"),
            buckets,
            incomplete,
        })
    }
}

/// The `date_histogram`'s buckets put in `grid` by their keys (epoch
/// ms). Absent: `None` (an older proxy may strip aggregations); a bucket
/// off the grid or without a count is a response that is not what was
/// asked for.
fn per_bucket(resp: &Value, mut grid: TimeBuckets) -> Result<Option<TimeBuckets>, String> {
    let Some(agg) = resp
        .get("aggregations")
        .and_then(|a| a.get(query::PER_BUCKET))
    else {
        return Ok(None);
    };
    let list = agg
        .get("buckets")
        .and_then(Value::as_array)
        .ok_or("a date_histogram without buckets")?;
    for b in list {
        let key = b
            .get("key")
            .and_then(|k| k.as_i64().or_else(|| k.as_f64().map(|f| f as i64)))
            .ok_or("a date_histogram bucket without a key")?;
        let n = b
            .get("doc_count")
            .and_then(Value::as_u64)
            .ok_or("a date_histogram bucket without a doc_count")?;
        let slot = grid
            .index_of(key.saturating_mul(1000))
            .and_then(|i| grid.counts.get_mut(i));
        match slot {
            Some(c) => *c += n,
            // Empty buckets off the grid (bounds rounded) say nothing.
            None if n == 0 => {}
            None => return Err(format!("a date_histogram bucket at {key} off the window")),
        }
    }
    Ok(Some(grid))
}

#[async_trait]
impl Tool for ElasticsearchLogs {
    fn spec(&self) -> ToolSpec {
        query_logs_spec()
    }

    fn backend(&self) -> String {
        format!("elasticsearch:{}", self.src.shown_url())
    }

    /// One request, bounded by the timeout.
    fn timeout(&self) -> Option<Duration> {
        Some(self.timeout + Duration::from_secs(1))
    }

    async fn call(&self, args: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
        let now = Utc::now();
        let q = LogQuery::parse(args, now)?;
        let end = q.until.unwrap_or(now);
        let start = q.since.unwrap_or(end - self.default_window);
        let levels = q.levels.clone().unwrap_or_default();
        let sel = Selection {
            service: q.service.as_deref(),
            levels: &levels,
            words: &q.words,
            start,
            end,
        };
        let grid = TimeBuckets::covering(start.timestamp_micros(), end.timestamp_micros());
        let body = query::search_body(
            &self.fields,
            &sel,
            self.max_lines,
            self.server_timeout_ms(),
            &grid,
        );
        let hits = self.search(&body, grid).await?;
        let read = hits.lines.len() as u64;
        let mut partial = hits.incomplete.clone();
        let total = match hits.total {
            Some((n, true)) => n.max(read),
            Some((n, false)) => {
                partial.push(format!(
                    "Elasticsearch counted at least {n} matching records and stopped counting; the total is a lower bound"
                ));
                n.max(read)
            }
            None => {
                partial.push(format!(
                    "Elasticsearch gave no count of all matching records; figures are of the {read} records read"
                ));
                read
            }
        };
        if total > 0 && read == 0 {
            return Err(ToolError::BadResponse(format!(
                "Elasticsearch counted {total} matching records but returned none"
            )));
        }
        let complete = partial.is_empty() && total == read;
        let mut sampler = Sampler::new(q.limit);
        for (i, l) in hits.lines.iter().enumerate() {
            let key = (l.service.clone(), l.level.clone(), pattern(&l.message));
            sampler.add(l.ts_micros(), i as u64, Some(key));
        }
        let mut sample = sampler.finish();
        sample.total = total;
        // Counts per bucket of a partial answer are not all the counts.
        if partial.is_empty() {
            sample.buckets = hits.buckets;
        }
        let us = |t: Option<DateTime<Utc>>| t.map(|t| t.timestamp_micros());
        if let Some(f) = us(hits.first) {
            sample.first = Some(sample.first.map_or(f, |x| x.min(f)));
        }
        if let Some(l) = us(hits.last) {
            sample.last = Some(sample.last.map_or(l, |x| x.max(l)));
        }
        let picked: Vec<LogLine> = sample
            .picked
            .iter()
            .filter_map(|p| hits.lines.get(p.id as usize).cloned())
            .collect();
        let window = format!("between {} and {}", fmt_time(&start), fmt_time(&end));
        let msg = format!(
            "Elasticsearch index {} has no record matching this query {window}",
            self.index
        );
        let partial = (!partial.is_empty()).then(|| partial.join("; "));
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
            body.insert("source".into(), json!("elasticsearch"));
            body.insert("index".into(), json!(self.index));
            // The sample was chosen from these, the newest; figures are
            // over every match.
            body.insert("records_read".into(), json!(read));
            body.insert("query".into(), query::filter(&self.fields, &sel));
            body.insert(
                "window".into(),
                json!({"since": fmt_time(&start), "until": fmt_time(&end)}),
            );
        }
        Ok(out)
    }
}

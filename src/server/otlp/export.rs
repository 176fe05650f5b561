//! Exporting finished runs over OTLP/HTTP (protobuf) without touching the
//! runs: the recorder hands the run id over when the run's end is stored
//! ([`ExportingRecorder`]), and one background task reads the run back,
//! builds its spans and posts them in batches. A full queue drops the run
//! (counted), an unreachable collector drops the batch; either is one
//! warning until the export works again.

use crate::store::Store;
use crate::text::error_line;
use crate::vocab::events::EngineEvent;
use crate::vocab::record::{AgentStep, RecordError, Recorder, RunFinish, RunHandle, RunStart};
use crate::vocab::tool::{InvocationId, ToolInvocation};
use async_trait::async_trait;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Runs waiting to be read back and exported.
const QUEUE: usize = 4096;
/// Spans per request.
const MAX_BATCH: usize = 512;
/// A batch is sent at least this often while spans wait.
const FLUSH_INTERVAL: Duration = Duration::from_secs(1);
const POST_TIMEOUT: Duration = Duration::from_secs(10);

/// Standard OpenTelemetry variable with extra request headers
/// (`key=value,key2=value2`, values percent-encoded), e.g. the
/// `Authorization` a hosted collector needs.
pub const HEADERS_ENV: &str = "OTEL_EXPORTER_OTLP_HEADERS";

/// Where warnings go (stderr for commands, the log for the TUI).
pub type Warn = Arc<dyn Fn(&str) + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("OTLP endpoint {0:?} is not an http(s) URL")]
    BadEndpoint(String),
    #[error("{HEADERS_ENV}: {0}")]
    BadHeaders(String),
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// `{base}/v1/traces`; a URL that already names the traces path is kept.
pub fn traces_url(base: &str) -> Result<String, ExportError> {
    let base = base.trim();
    if !crate::config::is_http_url(base) {
        return Err(ExportError::BadEndpoint(crate::text::mask_url(base)));
    }
    let base = base.trim_end_matches('/');
    Ok(if base.ends_with("/v1/traces") {
        base.to_string()
    } else {
        format!("{base}/v1/traces")
    })
}

/// Parses `key=value,key2=value2` with percent-encoded values.
pub fn parse_headers(text: &str) -> Result<Vec<(String, String)>, ExportError> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| ExportError::BadHeaders(format!("{:?} has no '='", clip(item))))?;
        let key = k.trim();
        if key.is_empty() {
            return Err(ExportError::BadHeaders("a header has no name".into()));
        }
        out.push((key.to_string(), percent_decode(v.trim())));
    }
    Ok(out)
}

/// Only the name part of a header item: values are secrets.
fn clip(item: &str) -> String {
    crate::text::clean(item.split(':').next().unwrap_or_default(), 20)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The batching exporter. `enqueue` never waits.
pub struct OtlpExporter {
    url: String,
    queue: Mutex<Option<mpsc::Sender<i64>>>,
    task: Mutex<Option<JoinHandle<()>>>,
    dropped: Arc<AtomicU64>,
    state: Arc<Health>,
}

/// One warning per outage: set when a warning was given, cleared when an
/// export works again.
struct Health {
    failing: AtomicBool,
    warn: Warn,
}

impl Health {
    fn failed(&self, what: &str) {
        if !self.failing.swap(true, Ordering::Relaxed) {
            let message = format!(
                "OpenTelemetry export: {what}; spans are dropped until it works again (runs are not affected)"
            );
            tracing::warn!("{message}");
            (self.warn)(&message);
        } else {
            tracing::debug!("OpenTelemetry export still failing: {what}");
        }
    }

    fn worked(&self) {
        if self.failing.swap(false, Ordering::Relaxed) {
            tracing::info!("OpenTelemetry export works again");
        }
    }
}

impl OtlpExporter {
    /// Starts the background task. `headers` are sent with every request.
    pub fn start(
        endpoint: &str,
        headers: Vec<(String, String)>,
        store: Arc<Store>,
        warn: Warn,
    ) -> Result<Arc<OtlpExporter>, ExportError> {
        let url = traces_url(endpoint)?;
        let mut header_map = reqwest::header::HeaderMap::new();
        for (k, v) in headers {
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes()).map_err(|_| {
                ExportError::BadHeaders(format!("{:?} is not a header name", clip(&k)))
            })?;
            let mut value = reqwest::header::HeaderValue::from_str(&v).map_err(|_| {
                ExportError::BadHeaders(format!("the value of {:?} is not valid", clip(&k)))
            })?;
            value.set_sensitive(true);
            header_map.insert(name, value);
        }
        let client = reqwest::Client::builder()
            .default_headers(header_map)
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| ExportError::Client(error_line(&e)))?;
        let (tx, rx) = mpsc::channel(QUEUE);
        let state = Arc::new(Health {
            failing: AtomicBool::new(false),
            warn,
        });
        let task = tokio::spawn(run(rx, store, client, url.clone(), state.clone()));
        Ok(Arc::new(OtlpExporter {
            url,
            queue: Mutex::new(Some(tx)),
            task: Mutex::new(Some(task)),
            dropped: Arc::new(AtomicU64::new(0)),
            state,
        }))
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Runs not exported because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Queues the run for export; never waits.
    pub fn enqueue(&self, run_id: i64) {
        let queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let Some(tx) = queue.as_ref() else {
            return;
        };
        if tx.try_send(run_id).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            self.state
                .failed("the export queue is full (the collector is slower than the runs)");
        }
    }

    /// Stops taking runs, exports what is queued and waits for the last
    /// request, for at most `deadline`.
    pub async fn shutdown(&self, deadline: Duration) {
        drop(self.queue.lock().unwrap_or_else(|e| e.into_inner()).take());
        let task = self.task.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(task) = task
            && tokio::time::timeout(deadline, task).await.is_err()
        {
            self.state.failed(&format!(
                "the collector at {} did not take the last spans within {} s",
                self.url,
                deadline.as_secs()
            ));
        }
    }
}

async fn run(
    mut rx: mpsc::Receiver<i64>,
    store: Arc<Store>,
    client: reqwest::Client,
    url: String,
    health: Arc<Health>,
) {
    let mut pending: Vec<Span> = Vec::new();
    let mut tick = tokio::time::interval(FLUSH_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            next = rx.recv() => match next {
                Some(run_id) => {
                    match load(&store, run_id).await {
                        Ok(spans) => pending.extend(spans),
                        Err(e) => health.failed(&format!("cannot read run {run_id}: {e}")),
                    }
                    if pending.len() >= MAX_BATCH {
                        flush(&client, &url, &mut pending, &health).await;
                    }
                }
                None => {
                    flush(&client, &url, &mut pending, &health).await;
                    return;
                }
            },
            _ = tick.tick() => flush(&client, &url, &mut pending, &health).await,
        }
    }
}

async fn load(store: &Store, run_id: i64) -> Result<Vec<Span>, String> {
    super::stored_run_spans(store, run_id)
        .await
        .map_err(|e| error_line(&e))
}

async fn flush(client: &reqwest::Client, url: &str, pending: &mut Vec<Span>, health: &Health) {
    if pending.is_empty() {
        return;
    }
    let body = super::spans::export_request(std::mem::take(pending)).encode_to_vec();
    let sent = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/x-protobuf")
        .timeout(POST_TIMEOUT)
        .body(body)
        .send()
        .await;
    match sent {
        Ok(r) if r.status().is_success() => {
            let bytes = r.bytes().await.unwrap_or_default();
            match ExportTraceServiceResponse::decode(bytes) {
                Ok(resp) => match resp.partial_success {
                    Some(p) if p.rejected_spans > 0 => health.failed(&format!(
                        "{url} rejected {} spans: {}",
                        p.rejected_spans,
                        crate::text::clean(&p.error_message, 200)
                    )),
                    _ => health.worked(),
                },
                // A collector that answers 200 without a protobuf body
                // still took the spans.
                Err(_) => health.worked(),
            }
        }
        Ok(r) => health.failed(&format!("{url} answered HTTP {}", r.status().as_u16())),
        Err(e) => health.failed(&format!(
            "cannot reach {url}: {}",
            crate::text::root_cause(&e)
        )),
    }
}

/// A recorder that hands every run to the exporter once all of it is
/// stored, and otherwise is the recorder it wraps.
///
/// "All of it" is the run row's final write and the terminal event; the
/// engine makes them in either order (the row first on success, the
/// journal first on failure), so the run is handed over at the second.
/// Read back then, the live export and a later file export of the run
/// are the same spans.
pub struct ExportingRecorder {
    inner: Arc<dyn Recorder>,
    exporter: Arc<OtlpExporter>,
    /// Runs with one of the two writes done: true = the row, false = the
    /// terminal event.
    half_done: Mutex<std::collections::HashMap<i64, bool>>,
}

impl ExportingRecorder {
    pub fn new(inner: Arc<dyn Recorder>, exporter: Arc<OtlpExporter>) -> ExportingRecorder {
        ExportingRecorder {
            inner,
            exporter,
            half_done: Mutex::new(std::collections::HashMap::new()),
        }
    }

    fn stored(&self, run_id: i64, row: bool) {
        let complete = {
            let mut half = self.half_done.lock().unwrap_or_else(|e| e.into_inner());
            match half.get(&run_id) {
                Some(seen) if *seen != row => {
                    half.remove(&run_id);
                    true
                }
                _ => {
                    half.insert(run_id, row);
                    false
                }
            }
        };
        if complete {
            self.exporter.enqueue(run_id);
        }
    }
}

#[async_trait]
impl Recorder for ExportingRecorder {
    async fn start_run(&self, start: &RunStart) -> Result<RunHandle, RecordError> {
        self.inner.start_run(start).await
    }

    async fn session_history(
        &self,
        session_id: &str,
        limit: usize,
    ) -> Result<Vec<crate::vocab::agent::HistoryTurn>, RecordError> {
        self.inner.session_history(session_id, limit).await
    }

    async fn record_step(&self, step: &AgentStep) -> Result<i64, RecordError> {
        self.inner.record_step(step).await
    }

    async fn record_tool_invocation(
        &self,
        invocation: &ToolInvocation,
    ) -> Result<InvocationId, RecordError> {
        self.inner.record_tool_invocation(invocation).await
    }

    async fn record_event(&self, event: &EngineEvent) -> Result<(), RecordError> {
        self.inner.record_event(event).await?;
        if event.is_terminal() {
            self.stored(event.run_id, false);
        }
        Ok(())
    }

    async fn finish_run(&self, finish: &RunFinish) -> Result<(), RecordError> {
        self.inner.finish_run(finish).await?;
        self.stored(finish.run_id, true);
        Ok(())
    }

    async fn foreign_invocation_id(&self, run_id: i64) -> Result<InvocationId, RecordError> {
        self.inner.foreign_invocation_id(run_id).await
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_traces_path_is_added_to_a_base_url() {
        assert_eq!(
            traces_url("http://127.0.0.1:4318").unwrap(),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            traces_url("https://x.example/api/public/otel/").unwrap(),
            "https://x.example/api/public/otel/v1/traces"
        );
        assert_eq!(
            traces_url("http://h:4318/v1/traces").unwrap(),
            "http://h:4318/v1/traces"
        );
        assert!(traces_url("localhost:4318").is_err());
        assert!(traces_url("").is_err());
    }

    #[test]
    fn headers_parse_with_percent_encoded_values() {
        let h = parse_headers("Authorization=Basic%20cGs6c2s=, x-tenant = a ,").unwrap();
        assert_eq!(
            h,
            vec![
                ("Authorization".to_string(), "Basic cGs6c2s=".to_string()),
                ("x-tenant".to_string(), "a".to_string()),
            ]
        );
        assert!(parse_headers("novalue").is_err());
        assert!(parse_headers("=v").is_err());
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }
}

//! Support for the server tests: an in-process `diagraph serve` on a
//! fresh SQLite file (or a given database), a model that can hold a run
//! mid-way until the test lets it go, an SSE reader, the binary started as
//! a server, and an OTLP receiver built on the official OpenTelemetry
//! protobuf definitions.

use crate::helpers::{diagraph_bin, isolate, pack_registry, shop_pack};
use async_trait::async_trait;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use diagraph::engine::Engine;
use diagraph::model::offline::OfflineModel;
use diagraph::model::{ChatModel, ChatRequest, ChatResponse, ModelError};
use diagraph::server::client::{SseFrame, SseParser};
use diagraph::server::{ServeError, ServeOptions, bind, serve};
use diagraph::store::Store;
use diagraph::vocab::catalog::Catalog;
use diagraph::vocab::record::Recorder;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, Semaphore, oneshot};
use tokio::task::JoinHandle;

/// Asserts that a stored run ended CANCELLED with the failure `cancelled`.
pub fn assert_cancelled(trace: &diagraph::vocab::run_trace::RunTrace) {
    assert_eq!(
        trace.run.status,
        diagraph::vocab::run::RunStatus::Cancelled,
        "run {}",
        trace.run.run_id
    );
    let failure = trace
        .run
        .failure
        .as_ref()
        .expect("a cancelled run says why");
    assert_eq!(
        failure.class,
        diagraph::vocab::run::FailureClass::Cancelled,
        "{failure:?}"
    );
}

// ---- a model the test can hold -----------------------------------------------

/// The offline model behind a gate: with the gate closed, every call
/// waits until the test adds permits (one per call) or opens it.
pub struct HeldModel {
    inner: OfflineModel,
    permits: Arc<Semaphore>,
    /// Calls that reached the gate (waiting or through).
    pub arrived: AtomicUsize,
    arrival: Notify,
}

impl HeldModel {
    pub fn closed() -> Arc<HeldModel> {
        Arc::new(HeldModel {
            inner: OfflineModel::new(),
            permits: Arc::new(Semaphore::new(0)),
            arrived: AtomicUsize::new(0),
            arrival: Notify::new(),
        })
    }

    /// Lets `n` more calls through.
    pub fn release(&self, n: usize) {
        self.permits.add_permits(n);
    }

    /// Lets every call through from now on.
    pub fn open(&self) {
        self.permits.add_permits(Semaphore::MAX_PERMITS / 2);
    }

    /// Waits until `n` calls have reached the gate.
    pub async fn wait_arrivals(&self, n: usize) {
        tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                let notified = self.arrival.notified();
                if self.arrived.load(Ordering::SeqCst) >= n {
                    return;
                }
                notified.await;
            }
        })
        .await
        .expect("the model was called in time");
    }
}

#[async_trait]
impl ChatModel for HeldModel {
    fn name(&self) -> String {
        self.inner.name()
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.arrived.fetch_add(1, Ordering::SeqCst);
        self.arrival.notify_waiters();
        let permit = self.permits.acquire().await.expect("the gate stays open");
        permit.forget();
        self.inner.chat(request).await
    }
}

// ---- an in-process server ------------------------------------------------------

/// The shop pack's engine on `store` with `model`, wired as `Setup` does.
pub async fn shop_engine(store: Arc<Store>, model: Arc<dyn ChatModel>) -> Engine {
    shop_engine_with(store.clone(), store, model).await
}

/// [`shop_engine`] recording through `recorder` (e.g. an exporting one).
pub async fn shop_engine_with(
    store: Arc<Store>,
    recorder: Arc<dyn Recorder>,
    model: Arc<dyn ChatModel>,
) -> Engine {
    let pack = shop_pack();
    store.sync_knowledge(&pack).await.unwrap();
    let domains = store.knowledge_domains().await.unwrap();
    Engine::new(model, pack_registry(&pack), recorder).with_catalog(Catalog::new(
        domains,
        pack.skill_catalog(),
        pack.manifest.services.clone(),
    ))
}

pub struct TestServer {
    pub url: String,
    pub store: Arc<Store>,
    pub db_url: String,
    stop: Option<oneshot::Sender<()>>,
    handle: Option<JoinHandle<Result<(), ServeError>>>,
    _dir: Option<tempfile::TempDir>,
}

impl TestServer {
    /// A server on a fresh SQLite file with the offline model.
    pub async fn start() -> TestServer {
        TestServer::start_with(ServeOptions::default(), Arc::new(OfflineModel::new())).await
    }

    pub async fn start_with(options: ServeOptions, model: Arc<dyn ChatModel>) -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let db_url = format!("sqlite:{}", dir.path().join("d.db").display());
        let mut server = TestServer::on(&db_url, options, model).await;
        server._dir = Some(dir);
        server
    }

    /// A server on the database at `db_url` (which may be shared).
    pub async fn on(db_url: &str, options: ServeOptions, model: Arc<dyn ChatModel>) -> TestServer {
        let store = Arc::new(Store::connect(db_url).await.unwrap());
        let engine = shop_engine(store.clone(), model).await;
        TestServer::with_engine(db_url, store, engine, options).await
    }

    pub async fn with_engine(
        db_url: &str,
        store: Arc<Store>,
        engine: Engine,
        options: ServeOptions,
    ) -> TestServer {
        let options = ServeOptions {
            listen: "127.0.0.1:0".into(),
            ..options
        };
        let listener = bind(&options).await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let serving_store = store.clone();
        let handle = tokio::spawn(async move {
            serve(listener, engine, serving_store, &options, async {
                let _ = stop_rx.await;
            })
            .await
        });
        TestServer {
            url,
            store,
            db_url: db_url.to_string(),
            stop: Some(stop_tx),
            handle: Some(handle),
            _dir: None,
        }
    }

    /// Triggers the graceful shutdown and waits for it.
    pub async fn shut_down(&mut self) -> Result<(), ServeError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.handle.take() {
            Some(h) => tokio::time::timeout(Duration::from_secs(30), h)
                .await
                .expect("the server shuts down in time")
                .unwrap(),
            None => Ok(()),
        }
    }

    pub fn at(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// Status and JSON body of a response.
pub async fn json_of(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("HTTP {status} body is not JSON ({e}): {text}"));
    (status, value)
}

/// POST `body` (raw) to `url`.
pub async fn post_raw(url: &str, body: &str) -> (u16, Value) {
    json_of(
        http()
            .post(url)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// Starts a run without waiting; returns its id.
pub async fn start_run(server: &TestServer, question: &str) -> i64 {
    let (status, v) = post_raw(
        &server.at("/api/chat"),
        &serde_json::json!({"question": question, "wait": false}).to_string(),
    )
    .await;
    assert_eq!(status, 202, "{v}");
    v["run_id"].as_i64().unwrap()
}

// ---- SSE ----------------------------------------------------------------------

/// An open event stream, read frame by frame.
pub struct SseStream {
    response: reqwest::Response,
    parser: SseParser,
    buffered: std::collections::VecDeque<SseFrame>,
}

impl SseStream {
    pub async fn open(url: &str, last_event_id: Option<u32>) -> SseStream {
        let mut req = http().get(url).timeout(Duration::from_secs(120));
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id.to_string());
        }
        let response = req.send().await.unwrap();
        assert_eq!(response.status().as_u16(), 200, "{url}");
        assert!(
            response.headers()[header::CONTENT_TYPE.as_str()]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        SseStream {
            response,
            parser: SseParser::default(),
            buffered: Default::default(),
        }
    }

    /// The next frame, or None when the stream closed.
    pub async fn next(&mut self) -> Option<SseFrame> {
        loop {
            if let Some(f) = self.buffered.pop_front() {
                return Some(f);
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.response.chunk())
                .await
                .expect("the stream sends within 30 s")
                .unwrap()?;
            self.buffered.extend(self.parser.feed(&chunk));
        }
    }

    /// Every frame until the stream closes.
    pub async fn rest(&mut self) -> Vec<SseFrame> {
        let mut out = Vec::new();
        while let Some(f) = self.next().await {
            out.push(f);
        }
        out
    }
}

/// The engine events among `frames` (the frames without an event name).
pub fn engine_events(frames: &[SseFrame]) -> Vec<diagraph::vocab::events::EngineEvent> {
    frames
        .iter()
        .filter(|f| f.event.is_none())
        .map(|f| serde_json::from_str(&f.data).unwrap())
        .collect()
}

// ---- the binary as a server ------------------------------------------------------

/// `diagraph serve` as a child process, isolated from the user's config.
pub struct ServerProcess {
    pub child: Child,
    pub url: String,
    _dir: tempfile::TempDir,
}

impl ServerProcess {
    /// Starts `diagraph --database-url DB serve --listen 127.0.0.1:0 ARGS`
    /// with `env`, and waits for its "serving" line.
    pub fn start(db_url: &str, args: &[&str], env: &[(&str, &str)]) -> ServerProcess {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = diagraph_bin();
        isolate(&mut cmd, dir.path());
        cmd.args(["--database-url", db_url, "serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(line);
            }
        });
        let line = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let out = child.wait_with_output().unwrap();
                panic!(
                    "the server did not start: {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            }
        };
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_string();
        ServerProcess {
            child,
            url,
            _dir: dir,
        }
    }

    pub fn at(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM and waits (bounded) for the exit; returns its stderr.
    pub fn terminate(mut self) -> (std::process::ExitStatus, String) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut err = String::new();
                if let Some(mut e) = self.child.stderr.take() {
                    use std::io::Read;
                    let _ = e.read_to_string(&mut err);
                }
                return (status, err);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the server did not exit within 60 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

// ---- an OTLP receiver ------------------------------------------------------------

/// Export requests received over OTLP/HTTP, decoded with the official
/// protobuf definitions (JSON is accepted too).
#[derive(Clone, Default)]
pub struct Received {
    requests: Arc<Mutex<Vec<ExportTraceServiceRequest>>>,
    notify: Arc<Notify>,
}

impl Received {
    pub fn spans(&self) -> Vec<Span> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .flat_map(|r| &r.resource_spans)
            .flat_map(|rs| &rs.scope_spans)
            .flat_map(|ss| ss.spans.iter().cloned())
            .collect()
    }

    pub fn requests(&self) -> Vec<ExportTraceServiceRequest> {
        self.requests.lock().unwrap().clone()
    }

    /// Waits until `pred` holds of the received spans (bounded).
    pub async fn wait_until(&self, pred: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let _ = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                let notified = self.notify.notified();
                if pred(&self.spans()) {
                    return;
                }
                notified.await;
            }
        })
        .await;
        self.spans()
    }
}

pub struct Receiver {
    pub url: String,
    pub received: Received,
    _handle: JoinHandle<()>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let received = Received::default();
        let app = Router::new()
            .route("/v1/traces", post(traces))
            .layer(DefaultBodyLimit::max(16 << 20))
            .with_state(received.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let handle = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Receiver {
            url,
            received,
            _handle: handle,
        }
    }
}

async fn traces(State(st): State<Received>, headers: HeaderMap, body: Bytes) -> Response {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let decoded = if ct.starts_with("application/x-protobuf") {
        ExportTraceServiceRequest::decode(body).map_err(|e| e.to_string())
    } else if ct.starts_with("application/json") {
        serde_json::from_slice(&body).map_err(|e| e.to_string())
    } else {
        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, "content type").into_response();
    };
    match decoded {
        Ok(req) => {
            st.requests.lock().unwrap().push(req);
            st.notify.notify_waiters();
            (
                [(header::CONTENT_TYPE, "application/x-protobuf")],
                ExportTraceServiceResponse::default().encode_to_vec(),
            )
                .into_response()
        }
        Err(e) => (StatusCode::BAD_REQUEST, e).into_response(),
    }
}

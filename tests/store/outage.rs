//! The database goes away in the middle of a run.
//!
//! Each test starts a PRIVATE MariaDB server (`mariadb-install-db` +
//! `mariadbd` on a free port with a temporary data directory; the shared
//! server on 3306 is never touched), kills it with SIGKILL while a run is
//! being recorded, and restarts it on the same data directory. Expected:
//! no panic and no hang (every call returns within a bound), the writes
//! fail as `Unavailable` while the server is down, the run ends FAILED
//! with its partial trace once the server is back (journal events
//! recorded during the outage included), and after a restart no run is
//! left RUNNING. Without the MariaDB binaries the tests skip outside CI
//! and fail under `CI=true`.

use crate::helpers::{base_engine, free_port, shop_pack, skip_or_fail};
use crate::suite::bare_run;
use diagraph::store::{ProcessOwner, Store};
use diagraph::vocab::events::{EngineEvent, EventKind};
use diagraph::vocab::graph::NodeId;
use diagraph::vocab::record::Recorder;
use diagraph::vocab::record::{AgentStep, RecordError, RunFinish, RunStart};
use diagraph::vocab::run::RunStatus;
use diagraph::vocab::run::{Failure, FailureClass, RunEnd};
use diagraph::vocab::tool::{EvidenceStatus, QUERY_LOGS, ToolInvocation};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A throwaway MariaDB server.
struct PrivateServer {
    dir: tempfile::TempDir,
    port: u16,
    child: Option<Child>,
}

fn find_binary(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    dirs.extend(["/usr/sbin", "/usr/local/sbin", "/usr/bin"].map(PathBuf::from));
    names
        .iter()
        .flat_map(|n| dirs.iter().map(move |d| d.join(n)))
        .find(|p| p.is_file())
}

/// Bootstraps a data directory. One at a time, and retried once into a
/// fresh directory: concurrent bootstraps of the tests in this file were
/// seen to fail on a loaded CI machine.
fn install_db(install: &Path, data: &Path) -> Result<(), String> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut last = String::new();
    for _ in 0..2 {
        let _ = std::fs::remove_dir_all(data);
        let mut cmd = Command::new(install);
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg("--auth-root-authentication-method=normal")
            .arg("--skip-test-db");
        if is_root() {
            cmd.arg("--user=root");
        }
        let out = cmd.stdin(Stdio::null()).output().unwrap();
        if out.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        last = format!(
            "mariadb-install-db failed ({}): {}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        );
    }
    Err(last)
}

impl PrivateServer {
    async fn start(test: &str) -> Option<PrivateServer> {
        let (Some(install), Some(_)) = (
            find_binary(&["mariadb-install-db", "mysql_install_db"]),
            find_binary(&["mariadbd", "mysqld"]),
        ) else {
            skip_or_fail(test, "mariadb-install-db / mariadbd not installed");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        if let Err(why) = install_db(&install, &data) {
            skip_or_fail(test, &why);
            return None;
        }
        let mut server = PrivateServer {
            dir,
            port: free_port(),
            child: None,
        };
        server.launch().await;
        Some(server)
    }

    fn url(&self, db: &str) -> String {
        format!("mysql://root@127.0.0.1:{}/{db}", self.port)
    }

    async fn launch(&mut self) {
        let d = self.dir.path();
        let server = find_binary(&["mariadbd", "mysqld"]).unwrap();
        let mut cmd = Command::new(server);
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", d.join("data").display()))
            .arg(format!("--port={}", self.port))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--socket={}", d.join("sock").display()))
            .arg(format!("--pid-file={}", d.join("pid").display()))
            .arg("--skip-log-bin")
            .arg("--innodb-buffer-pool-size=16M")
            .arg("--innodb-log-file-size=8M");
        if is_root() {
            cmd.arg("--user=root");
        }
        let log = std::fs::File::create(d.join("server.log")).unwrap();
        self.child = Some(cmd.stdout(Stdio::null()).stderr(log).spawn().unwrap());
        wait_ready(&self.url("mysql"), d).await;
    }

    /// SIGKILL: the server vanishes mid-conversation, like a crash.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

async fn wait_ready(url: &str, dir: &Path) {
    use sqlx::Connection;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let attempt =
            tokio::time::timeout(Duration::from_secs(2), sqlx::MySqlConnection::connect(url)).await;
        if let Ok(Ok(conn)) = attempt {
            let _ = conn.close().await;
            return;
        }
        if Instant::now() > deadline {
            let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
            panic!("private MariaDB did not come up within 60 s:\n{log}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn create_db(server: &PrivateServer, name: &str) {
    use sqlx::Connection;
    let mut conn = sqlx::MySqlConnection::connect(&server.url("mysql"))
        .await
        .unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE DATABASE {name} CHARACTER SET utf8mb4"
    )))
    .execute(&mut conn)
    .await
    .unwrap();
    conn.close().await.unwrap();
}

fn event(run_id: i64, seq: u32, node: NodeId) -> EngineEvent {
    EngineEvent {
        run_id,
        seq,
        at_ms: u64::from(seq),
        kind: EventKind::NodeEntered {
            node,
            attempt: 1,
            via: None,
        },
    }
}

fn step(run_id: i64, seq: u32, index: u32, agent: &str) -> AgentStep {
    AgentStep {
        id: 0,
        run_id,
        seq,
        step_index: index,
        agent_name: agent.into(),
        attempt: 1,
        model_input: "in".into(),
        model_output: "out".into(),
        thought: String::new(),
        has_tool_call: false,
        duration_ms: 1,
        token_count: 1,
        error: None,
        usage: Default::default(),
        parse_error: None,
    }
}

fn invocation(run_id: i64, seq: u32) -> ToolInvocation {
    crate::helpers::invocation(run_id, seq, QUERY_LOGS, EvidenceStatus::NoEvidence, vec![])
}

/// What the engine does with a write that failed: retry until it lands
/// or the recovery timeout passes.
async fn retry<T, F, Fut>(timeout: Duration, mut write: F) -> Result<T, RecordError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, RecordError>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        match write().await {
            Err(RecordError::Unavailable(e)) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            other => return other,
        }
    }
}

/// Every store call must come back within this, server up or down.
const NO_HANG: Duration = Duration::from_secs(15);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_killed_mid_run() {
    let Some(mut server) = PrivateServer::start("server_killed_mid_run").await else {
        return;
    };
    create_db(&server, "outage").await;
    let url = server.url("outage");
    let store = Store::connect(&url).await.unwrap();
    // A second "process" whose run will be orphaned by the outage.
    let doomed_owner = ProcessOwner {
        pid: 4_194_301,
        host: ProcessOwner::current().host,
        start: "7".into(),
    };
    let orphan_store = Store::connect_as(&url, doomed_owner).await.unwrap();
    let orphan = orphan_store
        .start_run(&bare_run("orphaned by the crash"))
        .await
        .unwrap();

    let handle = store
        .start_run(&RunStart {
            session_id: Some("outage-session".into()),
            model: "scripted".into(),
            ..bare_run("why is payment-service slow?")
        })
        .await
        .unwrap();
    let run_id = handle.run_id;
    let mut live: Vec<EngineEvent> = vec![];
    for (seq, node) in [(1, NodeId::Planner)] {
        let e = event(run_id, seq, node);
        store.record_event(&e).await.unwrap();
        live.push(e);
    }
    store
        .record_step(&step(run_id, 2, 1, "planner"))
        .await
        .unwrap();

    // The server dies between two writes of the run.
    server.kill();
    let e = event(run_id, 3, NodeId::Executor);
    // Journal events are buffered: recording one never blocks on the server.
    tokio::time::timeout(NO_HANG, store.record_event(&e))
        .await
        .unwrap()
        .unwrap();
    live.push(e);
    let inv = invocation(run_id, 4);
    let failed = tokio::time::timeout(NO_HANG, store.record_tool_invocation(&inv))
        .await
        .expect("a write during the outage must not hang");
    assert!(
        matches!(failed, Err(RecordError::Unavailable(_))),
        "{failed:?}"
    );
    let trace_down = tokio::time::timeout(NO_HANG, store.run_trace(run_id))
        .await
        .unwrap();
    assert!(trace_down.is_err());

    // The server comes back within the recovery window; the engine's
    // retry lands the write, then the run ends FAILED with its reason.
    server.launch().await;
    let inv_id = retry(Duration::from_secs(30), || {
        store.record_tool_invocation(&inv)
    })
    .await
    .unwrap();
    let e = event(run_id, 5, NodeId::Fallback);
    store.record_event(&e).await.unwrap();
    live.push(e);
    let finish = RunFinish {
        run_id,
        end: RunEnd {
            status: RunStatus::Failed,
            degraded: false,
            answer: String::new(),
            effective_verdict: None,
            trace: serde_json::from_value(json!({"version": "stategraph-v1", "transitions": [],
            "final_node": "executor", "termination_reason": "executor_failed", "degraded": false,
            "evidence_retry_count": 0}))
            .unwrap(),
            failure: Some(Failure::new(
                FailureClass::Store,
                "store unavailable mid-run",
            )),
        },
        duration_ms: 1234,
        token_count: 1,
        step_count: 1,
        tool_call_count: 1,
        self_evaluation: None,
    };
    retry(Duration::from_secs(30), || store.finish_run(&finish))
        .await
        .unwrap();

    let trace = serde_json::to_value(store.run_trace(run_id).await.unwrap()).unwrap();
    assert_eq!(trace["run"]["status"], "FAILED");
    assert_eq!(trace["run"]["failureReason"], "store unavailable mid-run");
    assert_eq!(trace["steps"].as_array().unwrap().len(), 1);
    let invs = trace["toolInvocations"].as_array().unwrap();
    assert_eq!(invs.len(), 1, "the retried invocation is stored once");
    assert_eq!(invs[0]["id"], json!(inv_id));
    assert_eq!(store.load_events(run_id).await.unwrap(), live);

    // After a restart of diagraph nothing is left RUNNING: the orphan of
    // the dead process is swept, with a reason.
    drop(orphan_store);
    let restarted = Store::connect(&url).await.unwrap();
    assert_eq!(restarted.running_count().await.unwrap(), 0);
    let t = serde_json::to_value(restarted.run_trace(orphan.run_id).await.unwrap()).unwrap();
    assert_eq!(t["run"]["status"], "FAILED");
    assert!(
        t["run"]["failureReason"]
            .as_str()
            .unwrap()
            .starts_with("interrupted")
    );
    restarted.close().await;
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_while_down_is_a_quick_error() {
    let Some(mut server) = PrivateServer::start("connect_while_down_is_a_quick_error").await else {
        return;
    };
    create_db(&server, "down").await;
    let url = server.url("down");
    server.kill();
    let started = Instant::now();
    let err = tokio::time::timeout(NO_HANG, Store::connect(&url))
        .await
        .unwrap()
        .err()
        .unwrap();
    assert!(err.to_string().starts_with("database unreachable"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// Wraps a real tool: tells the test when it is called, then takes a while,
/// so the test can kill the database while the run is mid-Executor.
struct SlowTool {
    inner: std::sync::Arc<dyn diagraph::tools::Tool>,
    called: std::sync::Arc<tokio::sync::Notify>,
}

#[async_trait::async_trait]
impl diagraph::tools::Tool for SlowTool {
    fn spec(&self) -> diagraph::vocab::tool::ToolSpec {
        self.inner.spec()
    }

    async fn call(
        &self,
        args: &serde_json::Map<String, Value>,
    ) -> Result<diagraph::tools::ToolOutput, diagraph::tools::ToolError> {
        self.called.notify_one();
        tokio::time::sleep(Duration::from_millis(1500)).await;
        self.inner.call(args).await
    }
}

/// The store as the engine's recorder, telling the test when a write
/// failed because the server was unreachable.
struct OutageReporting {
    store: std::sync::Arc<Store>,
    failed: std::sync::Arc<tokio::sync::Notify>,
}

impl OutageReporting {
    fn seen<T>(&self, result: Result<T, RecordError>) -> Result<T, RecordError> {
        if matches!(result, Err(RecordError::Unavailable(_))) {
            self.failed.notify_one();
        }
        result
    }
}

#[async_trait::async_trait]
impl Recorder for OutageReporting {
    async fn start_run(
        &self,
        start: &RunStart,
    ) -> Result<diagraph::vocab::record::RunHandle, RecordError> {
        self.seen(self.store.start_run(start).await)
    }
    async fn session_history(
        &self,
        session_id: &str,
        limit: usize,
    ) -> Result<Vec<diagraph::vocab::agent::HistoryTurn>, RecordError> {
        self.seen(self.store.session_history(session_id, limit).await)
    }
    async fn record_step(&self, step: &AgentStep) -> Result<i64, RecordError> {
        self.seen(self.store.record_step(step).await)
    }
    async fn record_tool_invocation(
        &self,
        invocation: &ToolInvocation,
    ) -> Result<diagraph::vocab::tool::InvocationId, RecordError> {
        self.seen(self.store.record_tool_invocation(invocation).await)
    }
    async fn record_event(&self, event: &EngineEvent) -> Result<(), RecordError> {
        self.seen(self.store.record_event(event).await)
    }
    async fn finish_run(&self, finish: &RunFinish) -> Result<(), RecordError> {
        self.seen(self.store.finish_run(finish).await)
    }
    async fn foreign_invocation_id(
        &self,
        run_id: i64,
    ) -> Result<diagraph::vocab::tool::InvocationId, RecordError> {
        self.seen(self.store.foreign_invocation_id(run_id).await)
    }
    fn describe(&self) -> String {
        self.store.describe()
    }
}

/// The whole engine, not just the recorder: the server is killed while the
/// Executor's first tool runs and comes back a few seconds later. The run
/// must neither panic nor hang, must end FAILED with its partial trace once
/// the server is back, and nothing may stay RUNNING.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_run_ends_failed_with_partial_trace_after_outage() {
    use diagraph::engine::{Engine, EngineConfig, RunRequest};
    use diagraph::model::offline::OfflineModel;
    use diagraph::tools::ToolRegistry;
    use diagraph::tools::pack::pack_tools;
    use std::sync::Arc;

    let test = "engine_run_ends_failed_with_partial_trace_after_outage";
    let Some(mut server) = PrivateServer::start(test).await else {
        return;
    };
    create_db(&server, "engine_outage").await;
    let url = server.url("engine_outage");
    let store = Arc::new(Store::connect(&url).await.unwrap());

    let pack = shop_pack();
    let called = Arc::new(tokio::sync::Notify::new());
    let write_failed = Arc::new(tokio::sync::Notify::new());
    let mut tools = ToolRegistry::new();
    for tool in pack_tools(pack.clone()) {
        if tool.spec().name == diagraph::vocab::tool::QUERY_METRICS {
            tools.register(Arc::new(SlowTool {
                inner: tool,
                called: called.clone(),
            }));
        } else {
            tools.register(tool);
        }
    }
    let engine = Engine {
        model: Arc::new(OfflineModel::new()),
        tools: Arc::new(tools),
        catalog: Arc::new(pack.catalog()),
        config: EngineConfig {
            store_recovery_timeout: Duration::from_secs(45),
            ..EngineConfig::default()
        },
        ..base_engine(Arc::new(OutageReporting {
            store: store.clone(),
            failed: write_failed.clone(),
        }))
    };

    let run = tokio::spawn(async move {
        engine
            .run(RunRequest::new("why is payment-service slow?"))
            .await
    });
    tokio::time::timeout(Duration::from_secs(30), called.notified())
        .await
        .expect("the executor never called query_metrics");
    server.kill();
    // The server comes back only once a write has failed, so the engine
    // has to recover.
    tokio::time::timeout(Duration::from_secs(60), write_failed.notified())
        .await
        .expect("a write failed while the server was down");
    server.launch().await;

    let outcome = tokio::time::timeout(Duration::from_secs(90), run)
        .await
        .expect("the run hung after the outage")
        .expect("the run panicked")
        .expect("the run was not persisted although the server came back");
    assert_eq!(outcome.end.status, RunStatus::Failed);
    assert!(
        outcome
            .end
            .failure
            .as_ref()
            .is_some_and(|f| !f.message.is_empty()),
        "a FAILED run names its reason"
    );

    // A fresh connection (a restarted diagraph) sees the FAILED run with
    // the partial trace the engine had, and nothing RUNNING.
    let fresh = Store::connect(&url).await.unwrap();
    assert_eq!(fresh.running_count().await.unwrap(), 0);
    let trace = serde_json::to_value(fresh.run_trace(outcome.run_id).await.unwrap()).unwrap();
    assert_eq!(trace["run"]["status"], "FAILED");
    let stored_route = &trace["run"]["orchestrationTrace"];
    assert!(stored_route.is_object(), "{trace}");
    assert_eq!(
        serde_json::to_value(&outcome.end.trace).unwrap(),
        *stored_route,
        "the stored partial trace is the one the engine built"
    );
    let replayed = fresh.load_events(outcome.run_id).await.unwrap();
    assert_eq!(
        replayed, outcome.events,
        "every event made it once the server was back"
    );
}

//! `diagraph mcp` as MCP clients see it: the official MCP inspector's CLI
//! lists its tools and calls them (its SDK also checks `diagnose`'s
//! `structuredContent` against the declared output schema), and an
//! `rmcp` client receives progress while a diagnosis runs and finds the
//! run ended, not RUNNING, when it goes away mid-run.

use crate::helpers::{diagraph_bin, isolate, without_caller_env};
use crate::mcp_support::{INSPECTOR, npm_program};
use diagraph::store::Store;
use diagraph::vocab::run::RunStatus;
use rmcp::model::{
    CallToolRequestParams, ClientRequest, ProgressNotificationParam, Request, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const QUESTION: &str = "Is HighCPUUsage firing on payment-service?";

pub struct Inspected {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Inspected {
    pub fn json(&self) -> Value {
        assert_eq!(self.code, Some(0), "stderr: {}", self.stderr);
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {}", self.stdout))
    }
}

/// The inspector's CLI with `args`, against `diagraph mcp` on database `db`.
async fn inspect(inspector: &Path, dir: &Path, db: &str, args: &[&str]) -> Inspected {
    let target = [env!("CARGO_BIN_EXE_diagraph"), "mcp"];
    // The inspector passes its environment on to the server it starts.
    run_inspector(
        inspector,
        dir,
        &target,
        args,
        &[("DIAGRAPH_DATABASE_URL", db)],
    )
    .await
}

/// The inspector's CLI on `target` (a command and its arguments, or a URL
/// and its transport) with `args` and `env`.
pub async fn run_inspector(
    inspector: &Path,
    dir: &Path,
    target: &[&str],
    args: &[&str],
    env: &[(&str, &str)],
) -> Inspected {
    let mut cmd = std::process::Command::new(inspector);
    cmd.arg("--cli").args(target).args(args);
    without_caller_env(&mut cmd);
    isolate(&mut cmd, dir);
    cmd.envs(env.iter().copied());
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .expect("the inspector finished within 2 minutes")
        .expect("the inspector ran");
    Inspected {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[tokio::test]
async fn the_inspector_lists_the_tools_and_diagnoses_with_verified_citations() {
    let Some(inspector) = npm_program("mcp inspector", INSPECTOR) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("d.db").display());

    let listed = inspect(&inspector, dir.path(), &db, &["--method", "tools/list"])
        .await
        .json();
    let tools = listed["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["diagnose", "get_run_trace", "list_runs"]);
    let description = tools[0]["description"].as_str().unwrap();
    for word in ["PASS", "LOW_CONFID", "REJECT", "degraded", "citations"] {
        assert!(description.contains(word), "{word}: {description}");
    }
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["question"]));

    let question = format!("question={QUESTION}");
    let called = inspect(
        &inspector,
        dir.path(),
        &db,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "diagnose",
            "--tool-arg",
            &question,
        ],
    )
    .await
    .json();
    assert_ne!(called["isError"], json!(true), "{called}");
    let answer = &called["structuredContent"];
    let text: Value = serde_json::from_str(called["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&text, answer, "the text content is the structured content");
    assert_eq!(answer["status"], "SUCCESS", "{answer}");
    assert_eq!(answer["degraded"], false, "{answer}");
    assert_eq!(answer["effective_verdict"], "PASS", "{answer}");
    assert!(answer["answer"].as_str().unwrap().contains("HighCPUUsage"));
    let run_id = answer["run_id"].as_i64().unwrap();

    // Every citation is a ref of a recorded invocation of this run.
    let citations = answer["citations"].as_array().unwrap();
    assert!(!citations.is_empty(), "{answer}");
    let store = Store::connect(&db).await.unwrap();
    let trace = store.run_trace(run_id).await.unwrap();
    for c in citations {
        let id = c["invocation_id"].as_i64().unwrap();
        let invocation = trace
            .tool_invocations
            .iter()
            .find(|i| i.id == id)
            .unwrap_or_else(|| panic!("invocation {id} is not run {run_id}'s"));
        assert_eq!(c["tool"], invocation.tool_name.as_str());
        let raw_path = c["raw_path"].as_str().unwrap();
        let diagraph::vocab::run_trace::Stored::Typed(details) = &invocation.retrieval_details
        else {
            panic!("unreadable retrieval_details of invocation {id}");
        };
        assert!(
            details.evidence_refs.iter().any(|r| r.raw_path == raw_path),
            "{c}"
        );
        assert!(!c["excerpt"].as_str().unwrap().is_empty());
    }
    store.close().await;

    // The trace and the runs list name the same run.
    let run_arg = format!("run_id={run_id}");
    let traced = inspect(
        &inspector,
        dir.path(),
        &db,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "get_run_trace",
            "--tool-arg",
            &run_arg,
        ],
    )
    .await
    .json();
    assert_eq!(traced["structuredContent"]["run"]["runId"], run_id);
    let listed = inspect(
        &inspector,
        dir.path(),
        &db,
        &["--method", "tools/call", "--tool-name", "list_runs"],
    )
    .await
    .json();
    assert_eq!(listed["structuredContent"]["runs"][0]["run_id"], run_id);
}

#[tokio::test]
async fn bad_calls_are_mcp_errors_that_say_what_was_wrong() {
    let Some(inspector) = npm_program("mcp inspector", INSPECTOR) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("d.db").display());
    let cases: [(&[&str], &str); 4] = [
        (
            &[
                "--tool-name",
                "get_run_trace",
                "--tool-arg",
                "run_id=987654",
            ],
            "no run 987654",
        ),
        (
            &["--tool-name", "diagnose", "--tool-arg", "question= "],
            "question is empty",
        ),
        (
            &[
                "--tool-name",
                "diagnose",
                "--tool-arg",
                "question=why",
                "--tool-arg",
                "pack=/nonexistent/pack",
            ],
            "cannot use pack /nonexistent/pack",
        ),
        (
            &["--tool-name", "list_runs", "--tool-arg", "status=DONE"],
            "unknown status",
        ),
    ];
    for (args, want) in cases {
        let mut all = vec!["--method", "tools/call"];
        all.extend_from_slice(args);
        let out = inspect(&inspector, dir.path(), &db, &all).await;
        assert_eq!(out.code, Some(1), "{args:?}: {}", out.stdout);
        assert!(out.stderr.contains(want), "{args:?}: {}", out.stderr);
    }
}

/// Collects the progress notifications the server sends.
#[derive(Clone, Default)]
struct Progress(Arc<Mutex<Vec<ProgressNotificationParam>>>);

impl ClientHandler for Progress {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push(params);
    }
}

fn diagraph_mcp(dir: &Path, db: &str, extra: &[(&str, &str)]) -> tokio::process::Command {
    let mut cmd = diagraph_bin();
    cmd.args(["--database-url", db, "mcp"]);
    isolate(&mut cmd, dir);
    for (k, v) in extra {
        cmd.env(k, v);
    }
    tokio::process::Command::from(cmd)
}

fn diagnose_request(question: &str) -> ClientRequest {
    let mut params = CallToolRequestParams::new("diagnose");
    params.arguments = json!({ "question": question }).as_object().cloned();
    ClientRequest::CallToolRequest(Request::new(params))
}

#[tokio::test]
async fn diagnose_sends_progress_while_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("d.db").display());
    let progress = Progress::default();
    let transport = TokioChildProcess::new(diagraph_mcp(dir.path(), &db, &[])).unwrap();
    let client = progress.clone().serve(transport).await.unwrap();
    let handle = client
        .send_cancellable_request(diagnose_request(QUESTION), PeerRequestOptions::no_options())
        .await
        .unwrap();
    let response = tokio::time::timeout(Duration::from_secs(60), handle.await_response())
        .await
        .unwrap()
        .unwrap();
    let ServerResult::CallToolResult(result) = response else {
        panic!("not a tool result: {response:?}");
    };
    let answer = result.structured_content.unwrap();
    client.cancel().await.unwrap();

    let seen = progress.0.lock().unwrap().clone();
    let messages: Vec<String> = seen.iter().filter_map(|p| p.message.clone()).collect();
    for want in ["planner", "executor", "gatekeeper", "verifier", "composer"] {
        assert!(messages.iter().any(|m| m == want), "{want}: {messages:?}");
    }
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("tool query_metrics #")),
        "{messages:?}"
    );
    assert_eq!(
        messages.last().map(String::as_str),
        Some("finished: SUCCESS")
    );
    // Progress only grows.
    assert!(seen.windows(2).all(|w| w[0].progress < w[1].progress));
    assert_eq!(answer["status"], "SUCCESS");
}

/// `diagraph mcp` on a fake LLM that takes 400 ms a call, its client
/// connected over the child's pipes (not rmcp's child-process transport,
/// which kills the server when the client drops), and the first
/// progress notification received.
async fn slow_session(
    dir: &Path,
    db: &str,
) -> (
    crate::openai_mock::MockServer,
    tokio::process::Child,
    rmcp::service::RunningService<RoleClient, Progress>,
    rmcp::service::RequestHandle<RoleClient>,
) {
    use crate::fake_llm::{KEY, fake_llm};
    use crate::openai_mock::MockServer;
    let inner = fake_llm("payment-service");
    let llm = MockServer::start_with(
        vec![],
        Arc::new(move |body: &Value| inner(body).delayed(Duration::from_millis(400))),
    )
    .await;
    let env = [
        ("DIAGRAPH_MODEL", "openai"),
        ("DIAGRAPH_OPENAI_BASE_URL", llm.base_url.as_str()),
        ("DIAGRAPH_OPENAI_MODEL", "fake-llm"),
        ("DIAGRAPH_OPENAI_API_KEY", KEY),
    ];
    let progress = Progress::default();
    let mut child = diagraph_mcp(dir, db, &env)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let io = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = progress.clone().serve(io).await.unwrap();
    let handle = client
        .send_cancellable_request(diagnose_request(QUESTION), PeerRequestOptions::no_options())
        .await
        .unwrap();
    let started = async {
        while !progress
            .0
            .lock()
            .unwrap()
            .iter()
            .any(|p| p.message.as_deref() == Some("planner"))
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), started)
        .await
        .unwrap();
    (llm, child, client, handle)
}

async fn only_run(db: &str) -> diagraph::vocab::run::RunSummary {
    let store = Store::connect(db).await.unwrap();
    let runs = store.list_runs(10).await.unwrap();
    store.close().await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs.into_iter().next().unwrap()
}

#[tokio::test]
async fn cancelling_the_request_cancels_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("d.db").display());
    let (_llm, mut child, client, handle) = slow_session(dir.path(), &db).await;
    handle
        .cancel(Some("the user stopped it".into()))
        .await
        .unwrap();
    let ended = async {
        loop {
            let store = Store::connect(&db).await.unwrap();
            let runs = store.list_runs(1).await.unwrap();
            store.close().await;
            if runs.first().is_some_and(|r| r.status != RunStatus::Running) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), ended)
        .await
        .expect("the run ended after its request was cancelled");
    assert_eq!(only_run(&db).await.status, RunStatus::Cancelled);
    drop(client);
    tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn a_session_that_ends_mid_run_leaves_no_run_running() {
    // The client goes away: the run goes on to its end (as a client that
    // stops waiting on `diagraph serve` does not stop a run), then the
    // server exits by itself.
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("d.db").display());
    let (_llm, mut child, client, _handle) = slow_session(dir.path(), &db).await;
    drop(client);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("diagraph mcp exited after its client went away")
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert_eq!(only_run(&db).await.status, RunStatus::Success);

    // SIGTERM mid-run: the run ends CANCELLED with its events saved.
    let db = format!("sqlite:{}", dir.path().join("e.db").display());
    let (_llm, mut child, _client, _handle) = slow_session(dir.path(), &db).await;
    let pid = child.id().unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("diagraph mcp exited on SIGTERM")
        .unwrap();
    assert!(status.success(), "{status:?}");
    let run = only_run(&db).await;
    assert_eq!(run.status, RunStatus::Cancelled, "{run:?}");
    let store = Store::connect(&db).await.unwrap();
    let events = store.load_events(run.run_id).await.unwrap();
    assert!(events.last().is_some_and(|e| e.is_terminal()), "{events:?}");
    store.close().await;
}

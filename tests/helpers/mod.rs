//! Helpers shared by every test crate, defined once: where the shipped
//! fixtures live, the one test engine, the offline model's run over the
//! shop pack, the one tool-invocation builder, a free port, and the one
//! rule for tests that need something from outside.
//!
//! Each crate (`tests/<name>/main.rs`) includes this file with
//! `#[path = "../helpers/mod.rs"] mod helpers;`, and so do the benchmarks
//! that reuse test support. Crate-specific support (the store suite, the
//! OpenAI mock, the TUI fixtures, ...) lives in its crate's directory.

#![allow(dead_code)]

use diagraph::engine::{Engine, MemoryRecorder, RunOutcome, RunRequest};
use diagraph::model::offline::OfflineModel;
use diagraph::model::scripted::UncoveredModel;
use diagraph::scenario::Scenario;
use diagraph::tools::pack::{Pack, pack_tools};
use diagraph::tools::{Tool, ToolRegistry};
use diagraph::vocab::record::Recorder;
use diagraph::vocab::tool::{EvidenceRef, EvidenceStatus, RetrievalDetails, ToolInvocation};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// A path inside the repository.
pub fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The shipped scenarios.
pub fn scenario_dir() -> PathBuf {
    repo("fixtures/scenarios")
}

/// A shipped scenario by file name.
pub fn load_scenario(file: &str) -> Scenario {
    Scenario::load(&scenario_dir().join(file)).expect("scenario loads")
}

/// The shipped shop pack's directory.
pub fn shop_pack_dir() -> PathBuf {
    repo("fixtures/packs/shop")
}

/// The shipped shop pack, loaded (and indexed) once per test crate.
pub fn shop_pack() -> Arc<Pack> {
    static PACK: OnceLock<Arc<Pack>> = OnceLock::new();
    PACK.get_or_init(|| Arc::new(Pack::load(&shop_pack_dir()).expect("shipped pack loads")))
        .clone()
}

/// A registry holding `pack`'s tools.
pub fn pack_registry(pack: &Arc<Pack>) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for t in pack_tools(pack.clone()) {
        registry.register(t);
    }
    registry
}

/// The engine every test starts from: shipped prompts and rules, default
/// config, no tools, an empty catalog, and a model that fails every call.
/// Tests replace what they exercise, e.g.
/// `Engine { model, tools, ..base_engine(recorder) }`.
pub fn base_engine(recorder: Arc<dyn Recorder>) -> Engine {
    Engine::new(Arc::new(UncoveredModel), ToolRegistry::new(), recorder)
}

/// A copy of the directory tree `src` at `dst`.
pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), to).unwrap();
        }
    }
}

/// The offline model's run of `question` over the shipped pack's tools,
/// with `logs` (when given) serving `query_logs` in the pack's place; the
/// recorder holds what the run called.
pub async fn offline_shop_run(
    question: &str,
    logs: Option<Arc<dyn Tool>>,
) -> (RunOutcome, Arc<MemoryRecorder>) {
    let pack = shop_pack();
    let mut tools = pack_registry(&pack);
    if let Some(l) = logs {
        tools.register(l);
    }
    let recorder = Arc::new(MemoryRecorder::new());
    let engine = Engine {
        model: Arc::new(OfflineModel::new()),
        tools: Arc::new(tools),
        catalog: Arc::new(pack.catalog()),
        ..base_engine(recorder.clone())
    };
    (
        engine.run(RunRequest::new(question)).await.unwrap(),
        recorder,
    )
}

/// The offline model found a likely cause from the pack, and the same one
/// with the same verdict from `other`, whose logs `backend` served.
pub fn assert_same_cause(from_pack: &RunOutcome, other: &RunOutcome, backend: &str) {
    let cause = |a: &str| {
        a.lines()
            .find(|l| l.contains("Likely cause"))
            .map(str::to_string)
            .unwrap_or_default()
    };
    let (a, b) = (&from_pack.end.answer, &other.end.answer);
    assert!(!cause(a).is_empty(), "{a}");
    assert_eq!(cause(a), cause(b), "pack:\n{a}\n\n{backend}:\n{b}");
    assert_eq!(from_pack.end.effective_verdict, other.end.effective_verdict);
}

/// A ref of a tool result: its JSON path and the text a binding may cite.
pub fn evidence(raw_path: &str, text: &str) -> EvidenceRef {
    EvidenceRef {
        raw_path: raw_path.into(),
        text: text.into(),
    }
}

/// A recorded tool invocation: `tool` called for payment-service by run
/// `run_id` at `seq`, with `status` and `refs`, succeeded unless `status`
/// is Failed. No id, step, dedup or block; a 2-byte `{}` output, 1 ms.
/// Tests set what else they need with struct-update syntax:
/// `ToolInvocation { id: 7, step_id: Some(1), ..invocation(...) }`.
pub fn invocation(
    run_id: i64,
    seq: u32,
    tool: &str,
    status: EvidenceStatus,
    refs: Vec<EvidenceRef>,
) -> ToolInvocation {
    ToolInvocation {
        tool_name: tool.into(),
        input_params: json!({"service": "payment-service"}),
        output_preview: "{}".into(),
        output_length: 2,
        retrieval_details: RetrievalDetails {
            evidence_refs: refs,
            ..RetrievalDetails::of(status)
        },
        duration_ms: 1,
        success: status != EvidenceStatus::Failed,
        ..ToolInvocation::placeholder(run_id, seq)
    }
}

/// The URL of `router` served on a free port of 127.0.0.1.
pub async fn serve_http(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.ok() });
    format!("http://{addr}")
}

/// The URL of a server that accepts connections and never answers.
pub async fn silent_http_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    format!("http://{addr}")
}

/// A TCP port on 127.0.0.1 that was free a moment ago (another process can
/// take it before the caller binds it: servers started on it should retry).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free local port")
}

/// The caller's diagraph settings, which a diagraph started by a test must
/// not inherit: the database, pack, model, backends, keys, API token and
/// trace export.
const CALLER_ENV: &[&str] = &[
    "DIAGRAPH_DATABASE_URL",
    "DIAGRAPH_PACK",
    "DIAGRAPH_MODEL",
    "DIAGRAPH_PROMETHEUS_URL",
    "DIAGRAPH_LOG_FILES",
    "DIAGRAPH_OPENAI_API_KEY",
    "DIAGRAPH_OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "DIAGRAPH_API_TOKEN",
    "DIAGRAPH_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_HEADERS",
];

/// The diagraph binary, without the caller's diagraph settings.
pub fn diagraph_bin() -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_diagraph"));
    without_caller_env(&mut cmd);
    cmd
}

/// `cmd` without the caller's diagraph settings, for a program that
/// starts diagraph with its own environment (an MCP client).
pub fn without_caller_env(cmd: &mut std::process::Command) {
    for var in CALLER_ENV {
        cmd.env_remove(var);
    }
}

/// `cmd` with its configuration, data and home under `dir`, so the
/// developer's own config file and database stay out of it.
pub fn isolate(cmd: &mut std::process::Command, dir: &Path) {
    cmd.env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("HOME", dir);
}

/// Whether this is a CI run (`CI=true` or `CI=1`).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The one rule for a test that needs something from outside (a MySQL
/// server, the MariaDB or Prometheus binaries, tmux) and cannot have it:
/// outside CI it skips with a note (the caller returns after this); under
/// CI it fails, because CI must never pass by skipping.
pub fn skip_or_fail(test: &str, why: &str) {
    assert!(!in_ci(), "{test}: {why}; CI=true requires it");
    eprintln!("SKIP {test}: {why}");
}

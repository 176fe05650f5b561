//! MCP servers as sources of evidence: the official reference test server
//! (`server-everything`, from npm) serves tools to a scripted Executor,
//! whose claim bound to one of its items passes the Gatekeeper while a
//! fabricated binding to an MCP item fails; a server that crashes or
//! hangs mid-call (`mcp_crash_server.py`), one that never starts, one that
//! exits at once and one that never answers are failed sources within
//! their timeouts, never a hang; a server that did not start is a failed
//! source of every run, and `diagraph config` and `ask` say why.

use crate::helpers::{base_engine, pack_registry, shop_pack, shop_pack_dir};
use crate::mcp_support::{EVERYTHING, npm_program};
use diagraph::config::{McpConfig, McpServerConfig};
use diagraph::engine::MemoryRecorder;
use diagraph::engine::invoker::ToolInvoker;
use diagraph::model::offline::OfflineModel;
use diagraph::scenario::Scenario;
use diagraph::tools::mcp::McpServers;
use diagraph::vocab::contracts::{BindingStatus, Verdict};
use diagraph::vocab::events::EventKind;
use diagraph::vocab::graph::NodeId;
use diagraph::vocab::run::{FailureClass, RunStatus};
use diagraph::vocab::tool::EvidenceStatus;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const MESSAGE: &str = "payment-service connection pool exhausted";
/// The scenario placeholder for the run's first invocation id.
pub const INVOCATION_1: &str = "{{invocation:1}}";

fn server(command: &Path, args: &[&str], timeout_secs: u64) -> McpServerConfig {
    McpServerConfig {
        command: Some(command.display().to_string()),
        args: args.iter().map(|a| a.to_string()).collect(),
        timeout_secs,
        ..McpServerConfig::default()
    }
}

pub fn config(servers: Vec<(&str, McpServerConfig)>) -> McpConfig {
    McpConfig {
        servers: servers
            .into_iter()
            .map(|(n, c)| (n.to_string(), c))
            .collect(),
        ..McpConfig::default()
    }
}

/// A scenario whose Executor calls `everything__echo` and binds one claim
/// to `raw_path` with `excerpt`; the Verifier and Composer are the
/// offline model's.
fn echo_scenario(source: &str, raw_path: &str, excerpt: &str) -> Scenario {
    let text = format!(
        r#"
name = "MCP evidence"
description = "A claim bound to an item of an MCP tool's result"
pack = {pack:?}
question = "Why does payment-service fail? Ask the echo tool."

[[script]]
role = "planner"
text = '''{{"selected_skill": "", "selection_reason": "the MCP tool answers", "plan": ["ask the echo tool"], "reasoning": "echo", "queries": [{{"tool": "everything__echo", "arguments": {{"message": "{MESSAGE}"}}, "purpose": "the echo"}}]}}'''

[[script]]
role = "executor"
tool_calls = [{{ name = "everything__echo", arguments = {{ message = "{MESSAGE}" }} }}]

[[script]]
role = "executor"
text = '''{{"answer_version": "executor_evidence_v2", "claims": [{{"claim_id": "claim-1", "claim_type": "observation", "claim_text": "payment-service reports its connection pool exhausted", "support_level": "direct", "evidence_bindings": [{{"tool_name": "everything__echo", "source_invocation_id": {source}, "raw_path": "{raw_path}", "evidence_excerpt": "{excerpt}"}}]}}], "hypotheses": [], "recommended_actions": [], "missing_info": []}}'''
"#,
        pack = shop_pack_dir().display().to_string(),
    );
    Scenario::parse(Path::new("mcp.toml"), &text).unwrap()
}

async fn everything() -> Option<McpServers> {
    let bin = npm_program("mcp server-everything", EVERYTHING)?;
    let servers = McpServers::start(&config(vec![("everything", server(&bin, &[], 30))])).await;
    assert_eq!(servers.warnings(), Vec::<String>::new());
    Some(servers)
}

pub async fn run_echo(
    servers: &McpServers,
    source: &str,
    raw_path: &str,
    excerpt: &str,
) -> (diagraph::engine::RunOutcome, Arc<MemoryRecorder>) {
    let recorder = Arc::new(MemoryRecorder::new());
    let mut registry = pack_registry(&shop_pack());
    servers.register(&mut registry);
    let mut base = diagraph::engine::Engine {
        tools: Arc::new(registry),
        ..base_engine(recorder.clone())
    };
    base.config.tool_permissions.extend(servers.tool_names());
    let scenario = echo_scenario(source, raw_path, excerpt);
    let engine = scenario.engine_with_pack(&base, Arc::new(OfflineModel::new()), shop_pack());
    let outcome = engine.run(scenario.request()).await.unwrap();
    (outcome, recorder)
}

#[tokio::test]
async fn a_claim_bound_to_an_mcp_item_passes_the_gatekeeper() {
    let Some(servers) = everything().await else {
        return;
    };
    let names = servers.tool_names();
    for want in ["everything__echo", "everything__get-structured-content"] {
        assert!(names.iter().any(|n| n == want), "{names:?}");
    }
    let excerpt = format!("Echo: {MESSAGE}");
    let (outcome, recorder) = run_echo(&servers, INVOCATION_1, "$.items[0]", &excerpt).await;

    let data = recorder.snapshot();
    let echo = data
        .invocations
        .iter()
        .find(|i| i.tool_name == "everything__echo")
        .unwrap();
    assert!(echo.success, "{echo:?}");
    assert!(
        echo.retrieval_details
            .source
            .backend
            .starts_with("mcp:everything"),
        "{echo:?}"
    );
    let refs = &echo.retrieval_details.evidence_refs;
    assert_eq!(refs.len(), 1);
    assert_eq!(refs[0].raw_path, "$.items[0]");
    assert_eq!(refs[0].text, excerpt);

    let gate = outcome
        .events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::GatekeeperChecked { result } => Some(result.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(gate.status, "pass", "{gate:?}");
    assert!(
        gate.checked_bindings
            .iter()
            .all(|b| b.status == BindingStatus::Pass)
    );
    let route = outcome.end.trace.route();
    assert!(route.contains(&NodeId::VerifiedInput), "{route:?}");
    assert!(!route.contains(&NodeId::Fallback), "{route:?}");
    assert_eq!(outcome.end.status, RunStatus::Success);
    assert_eq!(
        outcome.end.effective_verdict,
        Some(Verdict::Pass),
        "{outcome:?}"
    );
    assert!(
        outcome.end.answer.contains("connection pool"),
        "{}",
        outcome.end.answer
    );
    assert_eq!(
        outcome
            .sources
            .tools
            .get("everything__echo")
            .map(String::as_str),
        Some(echo.retrieval_details.source.backend.as_str())
    );
    servers.close().await;
}

#[tokio::test]
async fn a_fabricated_binding_to_an_mcp_item_fails_the_gatekeeper() {
    let Some(servers) = everything().await else {
        return;
    };
    // An item the result does not have, and an invocation the run never made.
    let excerpt = format!("Echo: {MESSAGE}");
    for (source, raw_path) in [(INVOCATION_1, "$.items[3]"), ("987654", "$.items[0]")] {
        let (outcome, _) = run_echo(&servers, source, raw_path, &excerpt).await;
        let gate = outcome
            .events
            .iter()
            .find_map(|e| match &e.kind {
                EventKind::GatekeeperChecked { result } => Some(result.clone()),
                _ => None,
            })
            .unwrap();
        assert_eq!(gate.checked_bindings.len(), 1);
        let binding = &gate.checked_bindings[0];
        assert_eq!(
            binding.status,
            BindingStatus::Fail,
            "{raw_path}: {binding:?}"
        );
        assert!(binding.failed_rule.is_some());
        let route = outcome.end.trace.route();
        assert_eq!(
            route.last(),
            Some(&NodeId::Fallback),
            "{raw_path}: {route:?}"
        );
        assert!(outcome.end.degraded);
        assert!(
            !outcome.end.answer.contains("connection pool"),
            "{}",
            outcome.end.answer
        );
    }
    servers.close().await;
}

#[tokio::test]
async fn structured_content_becomes_items_with_code_made_text() {
    let Some(servers) = everything().await else {
        return;
    };
    let tool = servers
        .tools
        .iter()
        .find(|t| t.spec().name == "everything__get-structured-content")
        .unwrap();
    let args = serde_json::json!({"location": "Chicago"});
    let out = tool.call(args.as_object().unwrap()).await.unwrap();
    assert_eq!(out.evidence_status, EvidenceStatus::Supported);
    assert_eq!(out.evidence_refs.len(), 1);
    assert_eq!(out.evidence_refs[0].raw_path, "$.items[0]");
    let text = &out.evidence_refs[0].text;
    for key in ["temperature=", "conditions=", "humidity="] {
        assert!(text.contains(key), "{text}");
    }
    assert_eq!(
        out.body["items"][0]["humidity"],
        out.body["items"][0]["humidity"]
    );
    // A schema the server declares reaches the model as it is.
    assert_eq!(
        tool.spec().parameters["properties"]["location"]["type"],
        "string"
    );
    servers.close().await;
}

#[tokio::test]
async fn a_server_that_does_not_start_is_a_failed_source_of_each_run() {
    let Some(bin) = npm_program("mcp server-everything", EVERYTHING) else {
        return;
    };
    let servers = McpServers::start(&config(vec![
        ("everything", server(&bin, &[], 30)),
        (
            "missing",
            server(Path::new("/nonexistent/mcp-server"), &[], 5),
        ),
    ]))
    .await;
    assert!(
        !servers
            .tool_names()
            .iter()
            .any(|t| t.starts_with("missing__"))
    );
    let excerpt = format!("Echo: {MESSAGE}");
    // Two runs share the servers started once; each names the missing one.
    // The script's first invocation is still the echo: the missing server,
    // recorded first, is not a call it made.
    for _ in 0..2 {
        let (outcome, recorder) = run_echo(&servers, INVOCATION_1, "$.items[0]", &excerpt).await;
        assert_eq!(
            outcome.failed_sources.len(),
            1,
            "{:?}",
            outcome.failed_sources
        );
        let failed = &outcome.failed_sources[0];
        assert_eq!(failed.tool, "missing__*");
        assert_eq!(failed.class, FailureClass::Connection);
        assert!(
            failed.message.contains(
                "MCP server missing offers no tools: MCP server missing could not be started"
            ),
            "{failed:?}"
        );
        let data = recorder.snapshot();
        let recorded = data
            .invocations
            .iter()
            .find(|i| i.id == failed.invocation_id)
            .unwrap();
        assert_eq!(recorded.step_id, None, "no step asked for it");
        assert!(
            recorded
                .retrieval_details
                .source
                .backend
                .starts_with("mcp:missing"),
            "{recorded:?}"
        );
        assert!(outcome.events.iter().any(|e| matches!(&e.kind,
            EventKind::ToolInvoked { invocation } if invocation.id == failed.invocation_id)));
        // The answer says what it could not check; the verdict stands on
        // what it did check, since no step could have asked that server.
        let answer = &outcome.end.answer;
        assert!(answer.contains("What could not be checked"), "{answer}");
        assert!(answer.contains("missing__*"), "{answer}");
        assert!(answer.contains("connection pool"), "{answer}");
        assert_eq!(outcome.end.effective_verdict, Some(Verdict::Pass));
        assert!(!outcome.end.degraded);
        assert_eq!(outcome.to_json()["failed_sources"][0]["tool"], "missing__*");
    }
    servers.close().await;
}

fn crash_server() -> McpServerConfig {
    let script = crate::helpers::repo("tests/services/mcp_crash_server.py");
    server(Path::new("python3"), &[script.to_str().unwrap()], 10)
}

#[tokio::test]
async fn a_crashing_mcp_server_gives_a_failed_invocation() {
    let servers = McpServers::start(&config(vec![("crash", crash_server())])).await;
    assert_eq!(
        servers.tool_names(),
        ["crash__boom", "crash__stall"],
        "{:?}",
        servers.warnings()
    );
    let mut registry = diagraph::tools::ToolRegistry::new();
    for tool in &servers.tools {
        registry.register(tool.clone());
    }
    let recorder = Arc::new(MemoryRecorder::new());
    let mut invoker = ToolInvoker::new(
        Arc::new(registry),
        vec!["crash__boom".into()],
        recorder.clone(),
        1,
    );
    // Twice: the second call starts the server again, and it dies again.
    for seq in 1..=2 {
        let started = Instant::now();
        let invoked = invoker
            .invoke("crash__boom", "{}", None, seq)
            .await
            .unwrap();
        let i = &invoked.invocation;
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(!i.success);
        assert_eq!(i.retrieval_details.evidence_status, EvidenceStatus::Failed);
        let failure = i.failure().unwrap();
        assert_eq!(failure.class, FailureClass::Connection, "{failure:?}");
        assert!(
            failure
                .message
                .contains("MCP server crash closed the connection"),
            "{failure:?}"
        );
        assert!(invoked.message.contains("\"evidence_status\":\"failed\""));
    }
    servers.close().await;
}

#[tokio::test]
async fn a_call_the_server_never_answers_times_out_and_the_server_still_serves() {
    let mut crash = crash_server();
    crash.timeout_secs = 2;
    let servers = McpServers::start(&config(vec![("crash", crash)])).await;
    let mut registry = diagraph::tools::ToolRegistry::new();
    servers.register(&mut registry);
    let recorder = Arc::new(MemoryRecorder::new());
    let mut invoker = ToolInvoker::new(
        Arc::new(registry),
        vec!["crash__stall".into(), "crash__boom".into()],
        recorder,
        1,
    );
    let started = Instant::now();
    let stalled = invoker.invoke("crash__stall", "{}", None, 1).await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let failure = stalled.invocation.failure().unwrap();
    assert_eq!(failure.class, FailureClass::Timeout, "{failure:?}");
    assert_eq!(failure.message, "timed out after 2 s");
    // The same connection still answers the next call (here: by dying).
    let boom = invoker.invoke("crash__boom", "{}", None, 2).await.unwrap();
    let failure = boom.invocation.failure().unwrap();
    assert!(
        failure
            .message
            .contains("MCP server crash closed the connection"),
        "{failure:?}"
    );
    servers.close().await;
}

#[tokio::test]
async fn a_server_that_does_not_start_or_answer_offers_no_tools_within_its_timeout() {
    let started = Instant::now();
    let servers = McpServers::start(&config(vec![
        (
            "missing",
            server(Path::new("/nonexistent/mcp-server"), &[], 5),
        ),
        (
            "quitter",
            server(Path::new("python3"), &["-c", "import sys; sys.exit(2)"], 5),
        ),
        (
            "silent",
            server(
                Path::new("python3"),
                &["-c", "import time; time.sleep(60)"],
                1,
            ),
        ),
        ("crash", crash_server()),
    ]))
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(servers.tool_names(), ["crash__boom", "crash__stall"]);
    let warnings = servers.warnings().join("\n");
    assert!(
        warnings.contains(
            "MCP server missing offers no tools: MCP server missing could not be started"
        ),
        "{warnings}"
    );
    assert!(
        warnings.contains(
            "MCP server silent offers no tools: MCP server silent did not answer within 1 s"
        ),
        "{warnings}"
    );
    assert!(
        warnings.contains("MCP server quitter offers no tools: MCP server quitter did not start"),
        "{warnings}"
    );
    let unavailable: Vec<&str> = servers
        .unavailable
        .iter()
        .map(|u| u.tool.as_str())
        .collect();
    assert_eq!(unavailable, ["missing__*", "quitter__*", "silent__*"]);
    servers.close().await;
}

/// `diagraph config` and `diagraph ask` with `config_toml` as the
/// configuration file: (exit code, stdout, stderr).
fn diagraph_cli(dir: &Path, config_toml: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let file = dir.join("config.toml");
    std::fs::write(&file, config_toml).unwrap();
    let mut cmd = crate::helpers::diagraph_bin();
    crate::helpers::isolate(&mut cmd, dir);
    cmd.arg("--config").arg(&file).args(args);
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_server_that_does_not_start_is_named_by_config_and_by_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let toml = r#"
[mcp.servers.broken]
command = "/nonexistent/mcp-server"
args = ["--token=tok-very-secret"]
timeout_secs = 5
"#;
    let (code, out, err) = diagraph_cli(dir.path(), toml, &["config"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("# broken: mcp:broken (/nonexistent/mcp-server)"),
        "{out}"
    );
    assert!(
        out.contains("#   offers no tools: MCP server broken could not be started"),
        "{out}"
    );
    assert!(!out.contains("tok-very-secret"), "{out}");

    let (code, out, err) = diagraph_cli(
        dir.path(),
        toml,
        &["ask", "--json", "why is payment-service slow?"],
    );
    let answer: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    assert_eq!(answer["status"], "SUCCESS", "{answer}");
    let failed = &answer["failed_sources"][0];
    assert_eq!(failed["tool"], "broken__*", "{answer}");
    assert_eq!(failed["class"], "connection", "{answer}");
    assert!(
        answer["answer"].as_str().unwrap().contains(
            "broken__* (mcp:broken (/nonexistent/mcp-server)): MCP server broken offers no tools"
        ),
        "{answer}"
    );
    // The run stands on the sources that answered.
    assert_eq!(code, Some(0), "{answer}");
}

/// A scenario whose Executor calls `tool` (no arguments) and then answers
/// with no claims.
fn call_scenario(tool: &str) -> Scenario {
    Scenario::parse(Path::new("late.toml"), &call_scenario_text(tool)).unwrap()
}

fn call_scenario_text(tool: &str) -> String {
    format!(
        r#"
name = "MCP late server"
description = "A tool of a server that came up after set-up"
pack = {pack:?}
question = "Why does payment-service fail? Ask the late server."

[[script]]
role = "planner"
text = '''{{"selected_skill": "", "selection_reason": "the MCP tool answers", "plan": ["ask it"], "reasoning": "late", "queries": [{{"tool": "{tool}", "arguments": {{}}, "purpose": "ask"}}]}}'''

[[script]]
role = "executor"
tool_calls = [{{ name = "{tool}", arguments = {{}} }}]
"#,
        pack = shop_pack_dir().display().to_string(),
    )
}

#[tokio::test]
async fn a_server_that_comes_up_after_set_up_serves_later_runs() {
    let dir = tempfile::tempdir().unwrap();
    // The server's program is not there yet: python3 exits at once.
    let script = dir.path().join("late_server.py");
    let starts = dir.path().join("starts");
    let mut late = server(Path::new("python3"), &[script.to_str().unwrap()], 5);
    late.env
        .insert("MCP_STARTS_FILE".into(), starts.display().to_string());
    let mut cfg = config(vec![("late", late)]);
    cfg.retry_seconds = 2;
    let interval = cfg.retry_interval();
    let servers = McpServers::start(&cfg).await;
    assert_eq!(servers.tool_names(), Vec::<String>::new());
    let recorder = Arc::new(MemoryRecorder::new());
    let mut registry = pack_registry(&shop_pack());
    servers.register(&mut registry);
    let base = diagraph::engine::Engine {
        tools: Arc::new(registry),
        ..base_engine(recorder.clone())
    };
    let scenario = call_scenario("late__boom");
    let engine = scenario.engine_with_pack(&base, Arc::new(OfflineModel::new()), shop_pack());
    let failed_tools = |o: &diagraph::engine::RunOutcome| -> Vec<String> {
        o.failed_sources.iter().map(|f| f.tool.clone()).collect()
    };

    // Down: the run records it as a failed source, and the Executor's call
    // of its tool is not one it may make.
    let first = engine.run(scenario.request()).await.unwrap();
    assert!(
        failed_tools(&first).contains(&"late__*".to_string()),
        "{:?}",
        first.failed_sources
    );
    assert!(!first.sources.tools.contains_key("late__boom"));

    // The server's program appears; within the interval no run tries it.
    std::fs::copy(
        crate::helpers::repo("tests/services/mcp_crash_server.py"),
        &script,
    )
    .unwrap();
    let second = engine.run(scenario.request()).await.unwrap();
    assert!(failed_tools(&second).contains(&"late__*".to_string()));
    assert!(!starts.exists(), "tried again within the interval");

    // After the interval, two concurrent runs start it once and both are
    // offered its tools.
    tokio::time::sleep(interval).await;
    let question = || diagraph::engine::RunRequest::new("why is payment-service slow?");
    let (third, fourth) = tokio::join!(base.run(question()), base.run(question()));
    for outcome in [third.unwrap(), fourth.unwrap()] {
        let failed = failed_tools(&outcome);
        assert!(!failed.contains(&"late__*".to_string()), "{failed:?}");
        assert!(outcome.sources.tools["late__boom"].starts_with("mcp:late"));
    }
    assert_eq!(std::fs::read_to_string(&starts).unwrap().lines().count(), 1);

    // A later run's Executor calls it: the server answers by dying.
    let fifth = engine.run(scenario.request()).await.unwrap();
    let failed = failed_tools(&fifth);
    assert!(!failed.contains(&"late__*".to_string()), "{failed:?}");
    let boom = fifth
        .failed_sources
        .iter()
        .find(|f| f.tool == "late__boom")
        .unwrap_or_else(|| panic!("{failed:?}"));
    assert!(
        boom.message
            .contains("MCP server late closed the connection"),
        "{boom:?}"
    );

    // A scenario that names its own tools keeps them: a server that came
    // up late does not widen the list.
    let text = call_scenario_text("late__boom").replace(
        "question = ",
        "tool_permissions = [\"query_logs\"]\nquestion = ",
    );
    let narrowed = Scenario::parse(Path::new("late-narrowed.toml"), &text).unwrap();
    let engine = narrowed.engine_with_pack(&base, Arc::new(OfflineModel::new()), shop_pack());
    let sixth = engine.run(narrowed.request()).await.unwrap();
    let refused = sixth
        .failed_sources
        .iter()
        .find(|f| f.tool == "late__boom")
        .unwrap_or_else(|| panic!("{:?}", sixth.failed_sources));
    assert!(refused.message.contains("is not permitted"), "{refused:?}");
    assert_eq!(std::fs::read_to_string(&starts).unwrap().lines().count(), 1);
    servers.close().await;
}

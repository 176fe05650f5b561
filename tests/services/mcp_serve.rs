//! `diagraph serve`'s `/mcp`: the MCP tools over streamable HTTP. The
//! official MCP inspector's CLI (`--transport http`) lists them and
//! diagnoses, the run is one of the server's runs, and with an API token
//! the endpoint wants it like every `/api` route. And the other way: the
//! MCP servers `serve` uses are started once for all its runs.

use crate::mcp_server::run_inspector;
use crate::mcp_support::{INSPECTOR, npm_program};
use crate::server_support::{ServerProcess, http};
use serde_json::{Value, json};

const QUESTION: &str = "Is HighCPUUsage firing on payment-service?";

#[tokio::test]
async fn the_inspector_diagnoses_over_http_at_serves_mcp_path() {
    let Some(inspector) = npm_program("mcp inspector over HTTP", INSPECTOR) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("d.db").display());
    let server = ServerProcess::start(&db, &[], &[]);
    let url = server.at("/mcp");
    let target = [url.as_str(), "--transport", "http"];

    let listed = run_inspector(
        &inspector,
        dir.path(),
        &target,
        &["--method", "tools/list"],
        &[],
    )
    .await
    .json();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["diagnose", "get_run_trace", "list_runs"]);

    let question = format!("question={QUESTION}");
    let called = run_inspector(
        &inspector,
        dir.path(),
        &target,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "diagnose",
            "--tool-arg",
            &question,
        ],
        &[],
    )
    .await
    .json();
    let answer = &called["structuredContent"];
    assert_eq!(answer["status"], "SUCCESS", "{called}");
    assert_eq!(answer["effective_verdict"], "PASS", "{answer}");
    assert!(
        !answer["citations"].as_array().unwrap().is_empty(),
        "{answer}"
    );

    // The run is the server's: its API lists and traces it.
    let run_id = answer["run_id"].as_i64().unwrap();
    let runs: Value = http()
        .get(server.at("/api/runs"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(runs["runs"][0]["run_id"], run_id, "{runs}");
    let (status, _) = server.terminate();
    assert!(status.success(), "{status:?}");
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}})
}

#[tokio::test]
async fn with_an_api_token_mcp_wants_it_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("d.db").display());
    let server = ServerProcess::start(&db, &[], &[("DIAGRAPH_API_TOKEN", "tok-123")]);
    let post = |token: Option<&str>| {
        let mut req = http()
            .post(server.at("/mcp"))
            .header("accept", "application/json, text/event-stream")
            .json(&initialize());
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        req.send()
    };
    assert_eq!(post(None).await.unwrap().status(), 401);
    assert_eq!(post(Some("wrong")).await.unwrap().status(), 401);
    let ok = post(Some("tok-123")).await.unwrap();
    assert_eq!(ok.status(), 200);
    assert!(
        ok.headers().contains_key("mcp-session-id"),
        "{:?}",
        ok.headers()
    );
    let body = ok.text().await.unwrap();
    assert!(body.contains("\"serverInfo\""), "{body}");
    assert!(body.contains("diagraph"), "{body}");
}

#[tokio::test]
async fn serve_starts_each_mcp_server_once_for_all_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("d.db").display());
    let starts = dir.path().join("starts.txt");
    let script = crate::helpers::repo("tests/services/mcp_crash_server.py");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[mcp.servers.crash]\ncommand = \"python3\"\nargs = [{:?}]\nenv = {{ MCP_STARTS_FILE = {:?} }}\n",
            script.display().to_string(),
            starts.display().to_string()
        ),
    )
    .unwrap();
    let config = config.display().to_string();
    let server = ServerProcess::start(&db, &["--config", &config], &[]);
    for _ in 0..2 {
        let answer: Value = http()
            .post(server.at("/api/chat"))
            .json(&json!({"question": QUESTION}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(answer["status"], "SUCCESS", "{answer}");
        assert!(
            answer["sources"]["tools"]["crash__boom"]
                .as_str()
                .is_some_and(|b| b.starts_with("mcp:crash")),
            "{answer}"
        );
    }
    let (status, _) = server.terminate();
    assert!(status.success(), "{status:?}");
    assert_eq!(std::fs::read_to_string(&starts).unwrap(), "start\n");
}

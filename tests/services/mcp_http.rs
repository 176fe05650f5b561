//! The MCP client over streamable HTTP: the official reference test
//! server (`server-everything`, from npm) started in its
//! `streamableHttp` mode serves tools to a scripted Executor through a
//! `url` server. A claim bound to one of its items passes the Gatekeeper,
//! a fabricated binding fails, and once the server is gone a call is a
//! failed invocation within its timeout, never a hang.

use crate::mcp_client::{INVOCATION_1, MESSAGE, config, run_echo};
use crate::mcp_support::{EVERYTHING, npm_program};
use diagraph::config::McpServerConfig;
use diagraph::engine::MemoryRecorder;
use diagraph::engine::invoker::ToolInvoker;
use diagraph::tools::mcp::McpServers;
use diagraph::vocab::contracts::{BindingStatus, GatekeeperResult, Verdict};
use diagraph::vocab::events::EventKind;
use diagraph::vocab::graph::NodeId;
use diagraph::vocab::run::FailureClass;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `server-everything` serving streamable HTTP on a free local port, and
/// its `/mcp` URL. Killed when dropped.
async fn everything_http() -> Option<(tokio::process::Child, String)> {
    let bin = npm_program("mcp server-everything over HTTP", EVERYTHING)?;
    // Another process may take the port first: try a few.
    for _ in 0..5 {
        let port = crate::helpers::free_port();
        if let Some(child) = listening(&bin, port).await {
            return Some((child, format!("http://127.0.0.1:{port}/mcp")));
        }
    }
    panic!("server-everything did not listen on a local port within 30 s");
}

/// `server-everything` in streamable HTTP mode on `port`, once it
/// accepts connections; `None` when it exits or does not listen in 30 s.
async fn listening(bin: &Path, port: u16) -> Option<tokio::process::Child> {
    let mut child = tokio::process::Command::new(bin)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return None;
        }
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Some(child);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = child.kill().await;
    None
}

fn url_server(url: &str, timeout_secs: u64) -> McpServerConfig {
    McpServerConfig {
        url: Some(url.to_string()),
        timeout_secs,
        ..McpServerConfig::default()
    }
}

fn gate(outcome: &diagraph::engine::RunOutcome) -> Arc<GatekeeperResult> {
    outcome
        .events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::GatekeeperChecked { result } => Some(result.clone()),
            _ => None,
        })
        .unwrap()
}

#[tokio::test]
async fn a_claim_bound_to_an_item_of_an_http_server_passes_and_a_fabricated_one_fails() {
    let Some((mut child, url)) = everything_http().await else {
        return;
    };
    let servers = McpServers::start(&config(vec![("everything", url_server(&url, 30))])).await;
    assert_eq!(servers.warnings(), Vec::<String>::new());
    assert!(
        servers.tool_names().iter().any(|n| n == "everything__echo"),
        "{:?}",
        servers.tool_names()
    );
    let excerpt = format!("Echo: {MESSAGE}");

    let (outcome, recorder) = run_echo(&servers, INVOCATION_1, "$.items[0]", &excerpt).await;
    let echo = recorder
        .snapshot()
        .invocations
        .iter()
        .find(|i| i.tool_name == "everything__echo")
        .cloned()
        .unwrap();
    assert!(echo.success, "{echo:?}");
    assert_eq!(
        echo.retrieval_details.source.backend,
        format!("mcp:everything@{url}")
    );
    assert_eq!(echo.retrieval_details.evidence_refs[0].text, excerpt);
    assert_eq!(gate(&outcome).status, "pass");
    assert_eq!(outcome.end.effective_verdict, Some(Verdict::Pass));
    assert!(
        outcome.failed_sources.is_empty(),
        "{:?}",
        outcome.failed_sources
    );

    // An item the result does not have.
    let (outcome, _) = run_echo(&servers, INVOCATION_1, "$.items[5]", &excerpt).await;
    let checked = gate(&outcome);
    assert_eq!(checked.checked_bindings[0].status, BindingStatus::Fail);
    assert_eq!(outcome.end.trace.route().last(), Some(&NodeId::Fallback));
    assert!(outcome.end.degraded);

    // The server goes away: the next call is a failed invocation, soon;
    // once it is back, the call after connects again and is served.
    child.kill().await.unwrap();
    child.wait().await.unwrap();
    let mut registry = diagraph::tools::ToolRegistry::new();
    servers.register(&mut registry);
    let mut invoker = ToolInvoker::new(
        Arc::new(registry),
        vec!["everything__echo".into()],
        Arc::new(MemoryRecorder::new()),
        1,
    );
    let started = Instant::now();
    let invoked = invoker
        .invoke(
            "everything__echo",
            r#"{"message": "still there?"}"#,
            None,
            1,
        )
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(31));
    let failure = invoked.invocation.failure().unwrap();
    assert!(
        matches!(
            failure.class,
            FailureClass::Connection | FailureClass::ServerError
        ),
        "{failure:?}"
    );
    assert!(
        failure.message.contains("MCP server everything"),
        "{failure:?}"
    );

    let port: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let bin = npm_program("mcp server-everything over HTTP", EVERYTHING).unwrap();
    let _back = listening(&bin, port)
        .await
        .expect("server-everything listens again on its port");
    let invoked = invoker
        .invoke("everything__echo", r#"{"message": "back"}"#, None, 2)
        .await
        .unwrap();
    assert!(invoked.invocation.success, "{:?}", invoked.invocation);
    assert_eq!(
        invoked.invocation.retrieval_details.evidence_refs[0].text,
        "Echo: back"
    );
    servers.close().await;
}

#[tokio::test]
async fn a_url_nobody_serves_is_an_unavailable_source_within_its_timeout() {
    let port = crate::helpers::free_port();
    let started = Instant::now();
    let servers = McpServers::start(&config(vec![(
        "nobody",
        url_server(&format!("http://127.0.0.1:{port}/mcp"), 3),
    )]))
    .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(servers.tools.is_empty());
    assert_eq!(servers.unavailable.len(), 1);
    let u = &servers.unavailable[0];
    assert_eq!(u.tool, "nobody__*");
    assert!(
        u.error
            .to_string()
            .starts_with("MCP server nobody offers no tools: MCP server nobody"),
        "{}",
        u.error
    );
}

//! `diagraph mcp`: the Model Context Protocol server on stdio, on this
//! machine's configuration. Stdout is the protocol's: set-up warnings go
//! to stderr, logs to the log file.

use super::CliError;
use super::setup::{Output, Setup};
use crate::config::Config;
use crate::server::mcp::{DiagnosisServer, serve_stdio};
use crate::server::termination_signal;
use crate::tools::mcp::McpServers;
use std::process::ExitCode;
use tokio_util::sync::CancellationToken;

pub async fn run(config: &Config, max_runs: usize) -> Result<ExitCode, CliError> {
    if max_runs == 0 {
        return Err(CliError::input("--max-runs must be at least 1"));
    }
    let setup = Setup::build(config, Output::Stderr).await?;
    let server = DiagnosisServer::new(
        setup.engine.clone(),
        setup.store.clone(),
        config.pack.as_ref().map(|p| p.display().to_string()),
        max_runs,
        CancellationToken::new(),
    );
    let served = serve_stdio(server, termination_signal()).await;
    setup.finish().await;
    setup.store.close().await;
    served.map_err(|e| CliError::other(e.to_string()))?;
    Ok(ExitCode::SUCCESS)
}

/// What `diagraph config` says about the configured MCP servers: each one
/// started (or connected to) once, with the tools it offers as the
/// Executor calls them, or why it offers none. Empty without servers.
pub async fn tools_report(config: &Config) -> String {
    use crate::text::sanitize_line;
    if config.mcp.servers.is_empty() {
        return String::new();
    }
    let servers = McpServers::start(&config.mcp).await;
    let mut out = String::from("\n# MCP servers, as started now, and the tools they offer:\n");
    for r in &servers.reports {
        out.push_str(&format!("# {}: {}\n", r.name, sanitize_line(&r.backend)));
        match &r.error {
            Some(e) => out.push_str(&format!("#   offers no tools: {}\n", sanitize_line(e))),
            None if r.tools.is_empty() => out.push_str("#   offers no tools\n"),
            None => {
                for t in &r.tools {
                    out.push_str(&format!("#   {}\n", sanitize_line(t)));
                }
            }
        }
        for s in &r.skipped {
            out.push_str(&format!("#   {}\n", sanitize_line(s)));
        }
    }
    servers.close().await;
    out
}

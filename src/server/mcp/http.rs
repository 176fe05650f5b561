//! `diagraph serve`'s [`PATH`]: the tools of `diagraph mcp` over
//! streamable HTTP, mounted on the API router. They share the server's
//! runs (its concurrent-run limit and its shutdown, which cancels them
//! and ends the MCP sessions) and its API token.

use super::DiagnosisServer;
use crate::server::api::ApiState;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;

/// Where MCP clients connect: `http://HOST:PORT/mcp`.
pub const PATH: &str = "/mcp";

pub type McpHttpService = StreamableHttpService<DiagnosisServer, LocalSessionManager>;

/// The MCP endpoint of a server with `state`.
pub fn service(state: &ApiState) -> McpHttpService {
    let server = DiagnosisServer::over(state.live.clone(), state.store.clone());
    let mut config =
        StreamableHttpServerConfig::default().with_cancellation_token(state.shutdown.clone());
    // rmcp accepts only loopback `Host`s by default, against DNS rebinding
    // of a local server. A server reachable beyond loopback has a token,
    // which a rebinding page cannot send, so there any host may connect.
    if state.token.is_some() {
        config = config.disable_allowed_hosts();
    }
    StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

//! One configured MCP server: starting it (a child process on stdio) or
//! connecting to it (streamable HTTP), listing its tools, calling one,
//! and starting it again when it died. Every step is bounded by the
//! server's timeout, so a server that hangs is a failure, never a hang.

use crate::config::McpServerConfig;
use crate::text::{clean, error_line, mask_url};
use crate::tools::ToolError;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    JsonObject, Tool,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::AsyncBufReadExt;

type Connection = RunningService<RoleClient, ClientConfig>;

/// Lines of a child's stderr kept to explain why it failed.
const STDERR_LINES: usize = 5;

/// A configured server and its connection, if it is up.
pub struct McpSession {
    pub name: String,
    pub config: McpServerConfig,
    connection: tokio::sync::Mutex<Option<Connection>>,
    /// Counts the connections made, so that a call that saw its
    /// connection break drops that one and not a newer one.
    generation: AtomicU64,
    /// The last lines the child wrote to stderr (also in the log).
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl McpSession {
    pub fn new(name: &str, config: McpServerConfig) -> McpSession {
        McpSession {
            name: name.to_string(),
            config,
            connection: tokio::sync::Mutex::new(None),
            generation: AtomicU64::new(0),
            stderr: Arc::default(),
        }
    }

    /// What answers this server's tools, as runs record it.
    pub fn backend(&self) -> String {
        match (&self.config.url, &self.config.command) {
            (Some(url), _) => format!("mcp:{}@{}", self.name, mask_url(url)),
            (None, Some(command)) => format!("mcp:{} ({})", self.name, clean(command, 120)),
            (None, None) => format!("mcp:{}", self.name),
        }
    }

    /// Starts (or connects to) the server and lists its tools.
    pub async fn start(&self) -> Result<Vec<Tool>, ToolError> {
        let mut connection = self.connection.lock().await;
        let fresh = self.connect().await?;
        let listed = self
            .bounded(fresh.peer().list_all_tools(), "listing its tools")
            .await;
        match listed {
            Ok(tools) => {
                *connection = Some(fresh);
                self.next_generation();
                Ok(tools)
            }
            Err(e) => {
                let _ = fresh.cancel().await;
                Err(e)
            }
        }
    }

    /// Calls `tool` (the server's own name for it) with `arguments`. A
    /// server that died since is started again first; one whose
    /// connection broke during the call is left to be started again by
    /// the next call.
    pub async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ToolError> {
        let (peer, generation) = {
            let mut connection = self.connection.lock().await;
            match connection.as_ref() {
                Some(c) if !c.is_closed() => (c.peer().clone(), self.generation()),
                _ => {
                    if let Some(dead) = connection.take() {
                        let _ = dead.cancel().await;
                    }
                    let fresh = self.connect().await?;
                    let peer = fresh.peer().clone();
                    *connection = Some(fresh);
                    (peer, self.next_generation())
                }
            }
        };
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = Some(arguments);
        let result = self.bounded(peer.call_tool(params), "calling a tool").await;
        if matches!(result, Err(ToolError::Unavailable(_))) {
            // The connection broke (a child that died, an HTTP server gone
            // or restarted without our session): the next call starts or
            // connects again, unless another call already did.
            let mut connection = self.connection.lock().await;
            if self.generation() == generation
                && let Some(broken) = connection.take()
            {
                let _ = broken.cancel().await;
            }
        }
        result
    }

    /// Which connection is current: it changes each time one is made.
    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    fn next_generation(&self) -> u64 {
        self.generation.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Closes the connection; a child process is ended.
    pub async fn close(&self) {
        if let Some(c) = self.connection.lock().await.take() {
            let _ = c.cancel().await;
        }
    }

    async fn connect(&self) -> Result<Connection, ToolError> {
        let client = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("diagraph", env!("CARGO_PKG_VERSION")),
        );
        match (&self.config.url, &self.config.command) {
            (Some(url), _) => {
                let transport = StreamableHttpClientTransport::from_uri(url.as_str());
                self.bounded_start(client.serve(transport)).await
            }
            (None, Some(command)) => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(&self.config.args).envs(&self.config.env);
                let (transport, stderr) = TokioChildProcess::builder(cmd)
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .map_err(|e| {
                        ToolError::Unavailable(format!(
                            "MCP server {} could not be started ({}): {}",
                            self.name,
                            clean(command, 120),
                            error_line(&e)
                        ))
                    })?;
                if let Some(stderr) = stderr {
                    self.keep_stderr(stderr);
                }
                self.bounded_start(client.serve(transport)).await
            }
            (None, None) => Err(ToolError::Unavailable(format!(
                "MCP server {} has neither a command nor a url",
                self.name
            ))),
        }
    }

    async fn bounded_start<E: std::fmt::Display>(
        &self,
        start: impl Future<Output = Result<Connection, E>>,
    ) -> Result<Connection, ToolError> {
        match tokio::time::timeout(self.config.timeout(), start).await {
            Ok(Ok(c)) => Ok(c),
            Ok(Err(e)) => Err(ToolError::Unavailable(format!(
                "MCP server {} did not start: {}{}",
                self.name,
                error_line(&e),
                self.stderr_note()
            ))),
            Err(_) => Err(ToolError::Unavailable(format!(
                "MCP server {} did not answer within {} s of starting{}",
                self.name,
                self.config.timeout_secs,
                self.stderr_note()
            ))),
        }
    }

    /// `request` within the server's timeout, its error in words.
    async fn bounded<T>(
        &self,
        request: impl Future<Output = Result<T, ServiceError>>,
        doing: &str,
    ) -> Result<T, ToolError> {
        match tokio::time::timeout(self.config.timeout(), request).await {
            Ok(Ok(t)) => Ok(t),
            Ok(Err(e)) => Err(self.service_error(e, doing)),
            Err(_) => Err(ToolError::Timeout(self.config.timeout_secs * 1000)),
        }
    }

    fn service_error(&self, e: ServiceError, doing: &str) -> ToolError {
        let name = &self.name;
        match e {
            ServiceError::McpError(data) => ToolError::Backend(format!(
                "MCP server {name} refused {doing}: {}",
                clean(&data.message, 300)
            )),
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                ToolError::Unavailable(format!(
                    "MCP server {name} closed the connection while {doing} (it exited or crashed){}",
                    self.stderr_note()
                ))
            }
            ServiceError::Timeout { .. } => {
                ToolError::Timeout(self.config.timeout_secs.saturating_mul(1000))
            }
            ServiceError::UnexpectedResponse => ToolError::BadResponse(format!(
                "MCP server {name} answered {doing} with the wrong kind of result"
            )),
            other => ToolError::Backend(format!(
                "MCP server {name} failed while {doing}: {}",
                error_line(&other)
            )),
        }
    }

    /// Reads the child's stderr into the log and keeps its last lines.
    fn keep_stderr(&self, stderr: tokio::process::ChildStderr) {
        let kept = self.stderr.clone();
        if let Ok(mut k) = kept.lock() {
            k.clear();
        }
        let name = self.name.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let line = clean(&line, 300);
                if line.is_empty() {
                    continue;
                }
                tracing::info!(server = %name, "mcp server stderr: {line}");
                if let Ok(mut k) = kept.lock() {
                    if k.len() == STDERR_LINES {
                        k.pop_front();
                    }
                    k.push_back(line);
                }
            }
        });
    }

    /// "; it said: …" with the child's last stderr line, if any.
    fn stderr_note(&self) -> String {
        self.stderr
            .lock()
            .ok()
            .and_then(|k| k.back().cloned())
            .map(|line| format!("; its last words on stderr: {line}"))
            .unwrap_or_default()
    }
}

//! Tools of MCP servers (Model Context Protocol) as the Executor's tools.
//!
//! Each server named in the configuration (`[mcp.servers.NAME]`) is
//! started or connected to when the program sets up its tools
//! ([`McpServers::start`]); each of its tools becomes a [`Tool`] named
//! `NAME__TOOL` with the server's description and input schema (a schema
//! over [`MAX_SCHEMA_BYTES`] is not offered: it would crowd out the
//! model's context). A call goes through the run's invoker like any other
//! tool's (permissions, dedup, timeout, recording); its result becomes
//! `$.items[i]` refs ([`refs`]). A server that does not start offers no
//! tools and is an unavailable source: every run records it as a failed
//! invocation (`NAME__*`) and names it among what it could not check. One
//! that dies makes the calls in flight failed invocations and is started
//! again at its next call.
//!
//! The servers are started once, when the program sets up its tools, and
//! shared by every run it makes (`cli::setup`). A server that did not
//! start is tried again at the start of a run, at most once per
//! `[mcp] retry_seconds` (so a dead server does not add its timeout to
//! every run of a long-lived `serve`, `mcp` or TUI) and by one run at a time;
//! once it is up its tools are offered to that run and every later one
//! ([`DownServers`]).

pub mod refs;
pub mod session;

use crate::config::McpConfig;
use crate::text::clean;
use crate::tools::registry::{RetriedSources, RetryOutcome, UnavailableSource};
use crate::tools::{Tool, ToolError, ToolOutput, ToolRegistry};
use crate::vocab::tool::{ToolSpec, summarize_args};
use async_trait::async_trait;
use serde_json::{Map, Value};
use session::McpSession;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Separates the server's name from its tool's in the name the Executor
/// calls.
pub const SEPARATOR: &str = "__";
/// The longest tool name model APIs accept.
const MAX_TOOL_NAME: usize = 64;
/// The largest input schema offered to the model, serialised.
pub const MAX_SCHEMA_BYTES: usize = 8 * 1024;
/// Characters of a server's tool description shown to the model.
const MAX_DESCRIPTION: usize = 1000;

/// What starting one server found: its tools as offered, or why it
/// offers none, and the tools it has that are not offered.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerReport {
    pub name: String,
    pub backend: String,
    /// The names the Executor calls, `NAME__TOOL`.
    pub tools: Vec<String>,
    pub error: Option<String>,
    /// Tools not offered, each with why.
    pub skipped: Vec<String>,
}

/// The configured servers, started, and the tools they offer.
#[derive(Default)]
pub struct McpServers {
    sessions: Vec<Arc<McpSession>>,
    pub tools: Vec<Arc<dyn Tool>>,
    /// The servers that did not start, as runs record them.
    pub unavailable: Vec<UnavailableSource>,
    pub reports: Vec<ServerReport>,
    /// The servers that did not start, tried again by later runs.
    down: Arc<DownServers>,
}

impl McpServers {
    /// Starts every configured server at once (each within its timeout)
    /// and lists its tools; a server that did not start is tried again at
    /// most once per the configured retry interval.
    pub async fn start(config: &McpConfig) -> McpServers {
        let sessions: Vec<Arc<McpSession>> = config
            .servers
            .iter()
            .map(|(name, c)| Arc::new(McpSession::new(name, c.clone())))
            .collect();
        let listed = futures::future::join_all(sessions.iter().map(|s| s.start())).await;
        let tried = Instant::now();
        let mut servers = McpServers::default();
        let mut down = Vec::new();
        let mut taken = BTreeSet::new();
        for (session, listed) in sessions.iter().zip(listed) {
            let mut report = ServerReport {
                name: session.name.clone(),
                backend: session.backend(),
                tools: vec![],
                error: None,
                skipped: vec![],
            };
            match listed {
                Err(e) => {
                    report.error = Some(e.to_string());
                    let source = unavailable(session, e);
                    servers.unavailable.push(source.clone());
                    down.push(DownServer {
                        session: session.clone(),
                        state: tokio::sync::Mutex::new(DownState::Down { tried, source }),
                    });
                }
                Ok(tools) => {
                    for tool in tools {
                        match McpTool::new(session.clone(), tool, &taken) {
                            Ok(t) => {
                                taken.insert(t.exposed.clone());
                                report.tools.push(t.exposed.clone());
                                servers.tools.push(Arc::new(t));
                            }
                            Err(why) => report.skipped.push(why),
                        }
                    }
                }
            }
            servers.reports.push(report);
        }
        servers.sessions = sessions;
        servers.down = Arc::new(DownServers {
            servers: down,
            interval: config.retry_interval(),
            taken,
        });
        servers
    }

    /// Adds the servers' tools to `registry`, and the servers that did not
    /// start as sources each run tries again (and records as unavailable
    /// while they are down).
    pub fn register(&self, registry: &mut ToolRegistry) {
        for tool in &self.tools {
            registry.register(tool.clone());
        }
        if !self.down.servers.is_empty() {
            registry.register_retried(self.down.clone());
        }
    }

    /// The names of every tool offered.
    pub fn tool_names(&self) -> Vec<String> {
        self.reports.iter().flat_map(|r| r.tools.clone()).collect()
    }

    /// One line per problem: a server that did not start, a tool not
    /// offered.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in &self.reports {
            if let Some(e) = &r.error {
                out.push(format!("MCP server {} offers no tools: {e}", r.name));
            }
            for s in &r.skipped {
                out.push(format!("MCP server {}: {s}", r.name));
            }
        }
        out
    }

    /// Ends every server's connection (child processes exit).
    pub async fn close(&self) {
        futures::future::join_all(self.sessions.iter().map(|s| s.close())).await;
    }
}

/// A server that did not start, as a run records it.
fn unavailable(session: &McpSession, e: ToolError) -> UnavailableSource {
    UnavailableSource {
        tool: format!("{}{SEPARATOR}*", session.name),
        backend: session.backend(),
        error: offers_no_tools(&session.name, e),
    }
}

/// The servers that did not start when the program set up its tools.
#[derive(Default)]
pub struct DownServers {
    servers: Vec<DownServer>,
    interval: Duration,
    /// The names the servers that started offer, which a server that
    /// comes up later may not take.
    taken: BTreeSet<String>,
}

struct DownServer {
    session: Arc<McpSession>,
    /// Locked while the server is tried, so that concurrent runs do not
    /// start it twice: a run that finds it locked waits (at most the
    /// server's timeout) for what that try found.
    state: tokio::sync::Mutex<DownState>,
}

enum DownState {
    /// Last tried at `tried`, which failed as `source` says.
    Down {
        tried: Instant,
        source: UnavailableSource,
    },
    /// It came up on a later try and offers these tools.
    Up(Vec<Arc<dyn Tool>>),
}

#[async_trait]
impl RetriedSources for DownServers {
    async fn retry(&self) -> RetryOutcome {
        let mut out = RetryOutcome::default();
        let mut taken = self.taken.clone();
        for server in &self.servers {
            let mut state = server.state.lock().await;
            if let DownState::Down { tried, .. } = &*state
                && tried.elapsed() >= self.interval
            {
                *state = match server.session.start().await {
                    Ok(listed) => {
                        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
                        for tool in listed {
                            match McpTool::new(server.session.clone(), tool, &taken) {
                                Ok(t) => {
                                    taken.insert(t.exposed.clone());
                                    tools.push(Arc::new(t));
                                }
                                Err(why) => tracing::warn!(
                                    server = %server.session.name,
                                    "MCP server came up; {why}"
                                ),
                            }
                        }
                        tracing::info!(
                            server = %server.session.name,
                            tools = tools.len(),
                            "MCP server that did not start is up"
                        );
                        DownState::Up(tools)
                    }
                    Err(e) => DownState::Down {
                        tried: Instant::now(),
                        source: unavailable(&server.session, e),
                    },
                };
            }
            match &*state {
                DownState::Up(tools) => {
                    taken.extend(tools.iter().map(|t| t.spec().name));
                    out.tools.extend(tools.iter().cloned());
                }
                DownState::Down { source, .. } => out.unavailable.push(source.clone()),
            }
        }
        out
    }
}

/// Why a server that did not start offers no tools, in words that name
/// it, classed as the failure was.
fn offers_no_tools(server: &str, e: ToolError) -> ToolError {
    let say = |m: &dyn std::fmt::Display| format!("MCP server {server} offers no tools: {m}");
    match e {
        ToolError::Status { status, message } => ToolError::Status {
            status,
            message: say(&message),
        },
        ToolError::BadResponse(m) => ToolError::BadResponse(say(&m)),
        ToolError::Unreadable(m) => ToolError::Unreadable(say(&m)),
        ToolError::Backend(m) => ToolError::Backend(say(&m)),
        ToolError::InvalidArguments(m) => ToolError::Backend(say(&m)),
        ToolError::Unavailable(m) => ToolError::Unavailable(say(&m)),
        // Starting bounds its own waits and words them; a bare timeout
        // still names the server.
        e @ ToolError::Timeout(_) => ToolError::Unavailable(say(&e)),
    }
}

/// One tool of an MCP server.
pub struct McpTool {
    session: Arc<McpSession>,
    /// The server's name for it.
    original: String,
    /// `SERVER__TOOL`, as the Executor calls it.
    exposed: String,
    description: String,
    schema: Value,
}

impl McpTool {
    /// The tool as offered, or why it is not: a name already taken or a
    /// schema over the limit.
    fn new(
        session: Arc<McpSession>,
        tool: rmcp::model::Tool,
        taken: &BTreeSet<String>,
    ) -> Result<McpTool, String> {
        let original = tool.name.to_string();
        let exposed = exposed_name(&session.name, &original);
        if taken.contains(&exposed) {
            return Err(format!(
                "tool {:?} is not offered: its name {exposed} is taken by another tool",
                clean(&original, 80)
            ));
        }
        let schema = Value::Object(tool.input_schema.as_ref().clone());
        let size = serde_json::to_string(&schema).map_or(usize::MAX, |s| s.len());
        if size > MAX_SCHEMA_BYTES {
            return Err(format!(
                "tool {exposed} is not offered: its input schema is {size} bytes, over the {MAX_SCHEMA_BYTES}-byte limit"
            ));
        }
        let description = format!(
            "[MCP server {}] {}",
            session.name,
            clean(tool.description.as_deref().unwrap_or(""), MAX_DESCRIPTION)
        );
        Ok(McpTool {
            session,
            original,
            exposed,
            description,
            schema,
        })
    }
}

/// `SERVER__TOOL` with every character a model API does not accept in a
/// function name made `_`, at most 64 bytes.
pub fn exposed_name(server: &str, tool: &str) -> String {
    let tool: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut name = format!("{server}{SEPARATOR}{tool}");
    name.truncate(MAX_TOOL_NAME);
    name
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.exposed.clone(),
            description: self.description.clone(),
            evidence_arrays: vec!["items".into()],
            parameters: self.schema.clone(),
        }
    }

    async fn call(&self, args: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
        let result = self.session.call(&self.original, args.clone()).await?;
        let query = summarize_args(&Value::Object(args.clone()));
        refs::to_output(&self.exposed, &query, result)
    }

    fn backend(&self) -> String {
        self.session.backend()
    }

    fn timeout(&self) -> Option<Duration> {
        Some(self.session.config.timeout())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposed_names_are_what_model_apis_accept() {
        assert_eq!(exposed_name("k8s", "get-pods"), "k8s__get-pods");
        assert_eq!(exposed_name("fs", "read.file/v2 ü"), "fs__read_file_v2__");
        let long = exposed_name("s", &"x".repeat(100));
        assert_eq!(long.len(), 64);
    }

    /// `[mcp] retry_seconds` decides how often a run tries a server that
    /// did not start: whose command here notes each start and exits.
    #[tokio::test]
    async fn a_down_server_is_tried_again_at_most_once_per_configured_interval() {
        let dir = tempfile::tempdir().unwrap();
        for (retry_seconds, starts_after_two_runs) in [(3600, 1), (0, 3)] {
            let starts = dir.path().join(format!("starts-{retry_seconds}"));
            let server = crate::config::McpServerConfig {
                command: Some("sh".into()),
                args: vec![
                    "-c".into(),
                    format!("echo started >> '{}'", starts.display()),
                ],
                timeout_secs: 5,
                ..Default::default()
            };
            let config = McpConfig {
                servers: [("dying".to_string(), server)].into(),
                retry_seconds,
            };
            let servers = McpServers::start(&config).await;
            assert!(servers.tools.is_empty());
            assert_eq!(servers.down.interval, Duration::from_secs(retry_seconds));
            for _ in 0..2 {
                let found = servers.down.retry().await;
                assert_eq!(found.unavailable.len(), 1, "{retry_seconds}");
                assert_eq!(found.unavailable[0].tool, "dying__*");
            }
            let count = std::fs::read_to_string(&starts).unwrap().lines().count();
            assert_eq!(
                count, starts_after_two_runs,
                "retry_seconds = {retry_seconds}"
            );
        }
    }
}

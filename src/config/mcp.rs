//! `[mcp.servers.NAME]`: MCP servers whose tools the Executor may call.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// How long an MCP server may take to start (or connect) and list its
/// tools, and one of its tool calls to answer, unless configured.
pub const DEFAULT_MCP_TIMEOUT_SECS: u64 = 20;

/// `[mcp.servers.NAME]`: an MCP server whose tools the Executor may call
/// as `NAME__TOOL`. Exactly one of `command` (started as a child process
/// speaking MCP on stdio) and `url` (streamable HTTP) is set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpServerConfig {
    pub command: Option<String>,
    pub args: Vec<String>,
    /// Set for the child process; values may be secrets and are never shown.
    pub env: BTreeMap<String, String>,
    pub url: Option<String>,
    /// Seconds for starting and listing tools, and for each call.
    pub timeout_secs: u64,
}

impl Default for McpServerConfig {
    fn default() -> Self {
        McpServerConfig {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            url: None,
            timeout_secs: DEFAULT_MCP_TIMEOUT_SECS,
        }
    }
}

impl McpServerConfig {
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// By name; the name prefixes the server's tools (`NAME__TOOL`).
    pub servers: BTreeMap<String, McpServerConfig>,
}

/// Whether `name` can prefix tool names: letters, digits, `-` and `_`,
/// no `__` (it separates the server from the tool), at most 32 bytes.
pub fn valid_mcp_server_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && !name.contains("__")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

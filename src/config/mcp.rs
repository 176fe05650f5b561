//! `[mcp.servers.NAME]`: MCP servers whose tools the Executor may call.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// How long an MCP server may take to start (or connect) and list its
/// tools, and one of its tool calls to answer, unless configured.
pub const DEFAULT_MCP_TIMEOUT_SECS: u64 = 20;
/// How long a server that did not start is left alone before a run tries
/// it again, unless configured.
pub const DEFAULT_MCP_RETRY_SECS: u64 = 30;

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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// By name; the name prefixes the server's tools (`NAME__TOOL`).
    pub servers: BTreeMap<String, McpServerConfig>,
    /// Seconds a server that did not start is left alone before a run
    /// tries it again: each try can cost a run the server's timeout.
    /// 0 tries it at the start of every run.
    pub retry_seconds: u64,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            servers: BTreeMap::new(),
            retry_seconds: DEFAULT_MCP_RETRY_SECS,
        }
    }
}

impl McpConfig {
    pub fn retry_interval(&self) -> Duration {
        Duration::from_secs(self.retry_seconds)
    }
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

/// What stands for a masked value.
const MASK: &str = "***";
/// Prefixes of well-known API tokens (GitHub, GitLab, Slack, OpenAI-style
/// keys, AWS access keys).
const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghs_",
    "ghu_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "sk-",
    "AKIA",
];

/// A server's `args` as `diagraph config` shows them, with whatever may
/// be a secret masked (when in doubt, masked): the value of a flag or
/// variable with a secret-looking name (`--token=…`, `--api-key …`,
/// `-e GITHUB_TOKEN=…`, `Authorization: Bearer …`), credentials and secret
/// query parameters of URLs, and bare tokens.
pub fn masked_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut value_of_secret_flag = false;
    for arg in args {
        if std::mem::take(&mut value_of_secret_flag) && !arg.starts_with('-') {
            out.push(MASK.to_string());
            continue;
        }
        let (shown, secret_flag) = mask_arg(arg);
        value_of_secret_flag = secret_flag;
        out.push(shown);
    }
    out
}

/// One argument masked, and whether it is a secret-named flag whose value
/// is the next argument (`--token VALUE`).
fn mask_arg(arg: &str) -> (String, bool) {
    use crate::text::{is_secret_name, mask_url};
    // `name=value`, `--name=value`, `NAME=value`.
    if let Some((name, value)) = arg.split_once('=')
        && !name.is_empty()
        && !name.contains("://")
    {
        if is_secret_name(name) && !value.is_empty() {
            return (format!("{name}={MASK}"), false);
        }
        return (format!("{name}={}", mask_arg(value).0), false);
    }
    if arg.contains("://") {
        return (mask_url(arg), false);
    }
    // A header: `Authorization: Bearer …`, `X-Api-Key: …`.
    if let Some((name, _)) = arg.split_once(':')
        && !name.is_empty()
        && !name.contains(char::is_whitespace)
        && is_secret_name(name)
    {
        return (format!("{name}: {MASK}"), false);
    }
    if arg.starts_with('-') {
        return (arg.to_string(), is_secret_name(arg));
    }
    if looks_like_token(arg) {
        return (MASK.to_string(), false);
    }
    (arg.to_string(), false)
}

/// A well-known token prefix, or a long run of letters and digits (and
/// `-_+=`, no path or version separators) with many digits in it.
fn looks_like_token(arg: &str) -> bool {
    if TOKEN_PREFIXES
        .iter()
        .any(|p| arg.len() >= p.len() + 12 && arg.starts_with(p))
    {
        return true;
    }
    let digits = arg.chars().filter(char::is_ascii_digit).count();
    arg.len() >= 20
        && digits >= 4
        && arg.chars().any(|c| c.is_ascii_alphabetic())
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '='))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(args: &[&str]) -> Vec<String> {
        masked_args(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn secrets_in_args_are_masked_and_the_rest_is_shown() {
        assert_eq!(
            masked(&[
                "-y",
                "@modelcontextprotocol/server-everything@2026.8.31",
                "--read-only",
                "--port",
                "3001",
            ]),
            [
                "-y",
                "@modelcontextprotocol/server-everything@2026.8.31",
                "--read-only",
                "--port",
                "3001"
            ]
        );
        assert_eq!(
            masked(&["--token=tok-1", "--api-key", "k-2", "--verbose"]),
            ["--token=***", "--api-key", "***", "--verbose"]
        );
        // A secret-named flag followed by another flag has no value to hide.
        assert_eq!(masked(&["--auth", "--verbose"]), ["--auth", "--verbose"]);
        assert_eq!(
            masked(&["-e", "GITHUB_TOKEN=ghx", "-e", "LEVEL=debug"]),
            ["-e", "GITHUB_TOKEN=***", "-e", "LEVEL=debug"]
        );
        assert_eq!(
            masked(&["--header", "Authorization: Bearer abc", "Accept: json"]),
            ["--header", "Authorization: ***", "Accept: json"]
        );
        assert_eq!(
            masked(&[
                "https://u:pw@h/mcp?api_key=k&x=1",
                "--url=https://h/?token=t",
            ]),
            [
                "https://u:***@h/mcp?api_key=***&x=1",
                "--url=https://h/?token=***"
            ]
        );
        assert_eq!(
            masked(&[
                "ghp_0123456789abcdefghij",
                "a1b2c3d4e5f6a7b8c9d0e1f2",
                "mcp-server-kubernetes"
            ]),
            ["***", "***", "mcp-server-kubernetes"]
        );
    }

    #[test]
    fn malformed_args_are_shown_masked_without_panicking() {
        for arg in [
            "=", "==", ":", "://", "-=", "a=b=c", "é=ü", "--=x", "", "\u{0}",
        ] {
            let out = masked(&[arg, "--token"]);
            assert_eq!(out.len(), 2);
        }
        assert_eq!(masked(&["pass=a=b"]), ["pass=***"]);
    }
}

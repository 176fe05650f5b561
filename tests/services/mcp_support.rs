//! The MCP programs the tests run, from the npm registry: the official
//! MCP inspector (its `--cli` mode is a scriptable MCP client) and the
//! official reference test server, `server-everything`.
//!
//! `.ci/run` installs both into a cache directory; the tests find their
//! `node_modules/.bin` through `DIAGRAPH_TEST_NPM_BIN`, else at the path
//! `.ci/run` uses (`${XDG_CACHE_HOME:-$HOME/.cache}/diagraph-tests/mcp`).
//! Without them a test is skipped with a note, except under CI, where a
//! missing program is a failure (`helpers::skip_or_fail`).

use crate::helpers::skip_or_fail;
use std::path::PathBuf;

pub const INSPECTOR: &str = "mcp-inspector";
pub const EVERYTHING: &str = "mcp-server-everything";

fn bin_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DIAGRAPH_TEST_NPM_BIN") {
        return Some(PathBuf::from(dir));
    }
    let cache = match std::env::var_os("XDG_CACHE_HOME") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".cache"),
    };
    Some(cache.join("diagraph-tests/mcp/node_modules/.bin"))
}

/// The npm program `name`, or `None` (with a note) when it is missing
/// outside CI.
pub fn npm_program(test: &str, name: &str) -> Option<PathBuf> {
    let found = bin_dir()
        .map(|d| d.join(name))
        .filter(|p| p.is_file() || p.is_symlink());
    if found.is_none() {
        skip_or_fail(
            test,
            &format!(
                "{name} not found (run .ci/run, or set DIAGRAPH_TEST_NPM_BIN to a node_modules/.bin with it)"
            ),
        );
    }
    found
}

//! `diagraph mcp`: evidence-gated diagnosis as Model Context Protocol
//! tools, served over stdio with the official Rust SDK (`rmcp`), and
//! over streamable HTTP at `diagraph serve`'s `/mcp` ([`http`]).
//!
//! Three tools ([`tools`]): `diagnose` runs a diagnosis and answers with
//! the verdict and the citations the Gatekeeper verified ([`diagnose`]),
//! `get_run_trace` returns the Run Trace projection (the bytes `diagraph
//! trace --json` prints, also as `structuredContent`), `list_runs` the
//! recent runs. Bad arguments, an unknown run and a store that fails are
//! MCP errors with a message that says what was wrong; a run that ended
//! FAILED or CANCELLED is a tool result marked `isError`.
//!
//! Runs go through the same registry as `diagraph serve`'s
//! ([`LiveRuns`]): the concurrent-run limit, and at the end of the session
//! (stdin closed, SIGTERM) every run in progress is cancelled and
//! persisted, never left RUNNING.

pub mod diagnose;
pub mod http;
pub mod tools;

use crate::engine::Engine;
use crate::server::live::LiveRuns;
use crate::store::{RunQuery, Store, StoreError};
use crate::text::error_line;
use crate::vocab::run::RunStatus;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Runs one MCP session executes at once; more are refused with an error.
pub const DEFAULT_MAX_CONCURRENT_RUNS: usize = 4;

const INSTRUCTIONS: &str = "diagraph diagnoses incidents and states nothing it cannot trace \
to a recorded tool result. Call diagnose with the question; read effective_verdict and \
degraded before relying on the answer, and cite its citations. get_run_trace shows how a \
run reached its answer.";

/// The MCP server: the run registry and the store it reads runs from.
#[derive(Clone)]
pub struct DiagnosisServer {
    live: Arc<LiveRuns>,
    store: Arc<Store>,
}

impl DiagnosisServer {
    /// A server whose runs are cancelled when `shutdown` is.
    pub fn new(
        engine: Engine,
        store: Arc<Store>,
        pack: Option<String>,
        max_concurrent_runs: usize,
        shutdown: CancellationToken,
    ) -> DiagnosisServer {
        let live = Arc::new(LiveRuns::new(
            engine,
            store.clone(),
            pack,
            max_concurrent_runs,
            shutdown,
        ));
        DiagnosisServer { live, store }
    }

    /// A server whose runs are `live`'s: `diagraph serve`'s runs, limit
    /// and shutdown.
    pub fn over(live: Arc<LiveRuns>, store: Arc<Store>) -> DiagnosisServer {
        DiagnosisServer { live, store }
    }

    /// Cancels the runs in progress and waits until each has persisted.
    pub async fn shut_down(&self) {
        self.live.shut_down().await;
    }

    async fn trace(&self, args: tools::TraceArgs) -> Result<CallToolResult, ErrorData> {
        if args.run_id < 1 {
            return Err(ErrorData::invalid_params(
                format!("run_id must be a positive number, got {}", args.run_id),
                None,
            ));
        }
        let trace = self
            .store
            .run_trace(args.run_id)
            .await
            .map_err(store_error)?;
        let text = trace.to_json_text();
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let mut result = CallToolResult::structured(value);
        result.content = vec![ContentBlock::text(text)];
        Ok(result)
    }

    async fn runs(&self, args: tools::ListArgs) -> Result<CallToolResult, ErrorData> {
        use crate::server::api::{DEFAULT_PAGE, MAX_PAGE};
        let limit = args.limit.unwrap_or(DEFAULT_PAGE);
        if limit == 0 || limit > MAX_PAGE {
            return Err(ErrorData::invalid_params(
                format!("limit must be 1 to {MAX_PAGE}"),
                None,
            ));
        }
        let status = match args.status.as_deref() {
            None => None,
            Some(s) => Some(
                RunStatus::parse(&s.trim().to_ascii_uppercase()).ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!(
                            "unknown status {:?}: one of RUNNING, SUCCESS, FAILED, CANCELLED",
                            crate::text::clean(s, 40)
                        ),
                        None,
                    )
                })?,
            ),
        };
        let query = RunQuery {
            limit,
            before: args.before,
            status,
            session_id: args.session_id.filter(|s| !s.is_empty()),
            text: None,
        };
        let runs = self.store.query_runs(&query).await.map_err(store_error)?;
        let next_before = (runs.len() == limit)
            .then(|| runs.last().map(|r| r.run_id))
            .flatten();
        Ok(structured(
            json!({ "runs": runs, "next_before": next_before }),
        ))
    }
}

/// A result whose text content is its structured content, pretty-printed.
fn structured(value: Value) -> CallToolResult {
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    let mut result = CallToolResult::structured(value);
    result.content = vec![ContentBlock::text(text)];
    result
}

fn store_error(e: StoreError) -> ErrorData {
    match e {
        StoreError::UnknownRun(id) => ErrorData::invalid_params(format!("no run {id}"), None),
        e => ErrorData::internal_error(format!("the database failed: {}", error_line(&e)), None),
    }
}

impl ServerHandler for DiagnosisServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("diagraph", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::all()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments;
        let result = match request.name.as_ref() {
            tools::DIAGNOSE => {
                let args = tools::parse(tools::DIAGNOSE, args)?;
                diagnose::diagnose(&self.live, args, &context).await?
            }
            tools::GET_RUN_TRACE => {
                self.trace(tools::parse(tools::GET_RUN_TRACE, args)?)
                    .await?
            }
            tools::LIST_RUNS => self.runs(tools::parse(tools::LIST_RUNS, args)?).await?,
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "unknown tool {:?}: diagraph offers {}, {} and {}",
                        crate::text::clean(other, 64),
                        tools::DIAGNOSE,
                        tools::GET_RUN_TRACE,
                        tools::LIST_RUNS
                    ),
                    None,
                ));
            }
        };
        Ok(result.into())
    }
}

/// Why the stdio session ended badly.
#[derive(Debug, thiserror::Error)]
pub enum McpServeError {
    #[error("the MCP session could not start: {0}")]
    Start(String),
    #[error("the MCP session failed: {0}")]
    Session(String),
}

/// Serves `server` on stdin/stdout until the client closes stdin or
/// `stop` resolves, then cancels and persists the runs in progress.
pub async fn serve_stdio(
    server: DiagnosisServer,
    stop: impl Future<Output = ()> + Send,
) -> Result<(), McpServeError> {
    let running = server
        .clone()
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| McpServeError::Start(error_line(&e)));
    let running = match running {
        Ok(r) => r,
        Err(e) => {
            server.shut_down().await;
            return Err(e);
        }
    };
    let cancel = running.cancellation_token();
    let ended = tokio::select! {
        ended = running.waiting() => ended.map(|_| ()).map_err(|e| McpServeError::Session(error_line(&e))),
        () = stop => {
            cancel.cancel();
            Ok(())
        }
    };
    server.shut_down().await;
    ended
}

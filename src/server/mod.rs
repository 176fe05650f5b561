//! `diagraph serve`: the HTTP API over the engine and the store, the event
//! streams that let anyone follow a run, the client the TUI uses to watch
//! a server, and the OpenTelemetry export of runs.
//!
//! - [`api`]: routes, errors, the token check (`POST /api/chat`,
//!   `GET /api/runs`, `GET /api/runs/{id}/trace`, `GET /api/runs/{id}/events`,
//!   `POST /api/runs/{id}/cancel`, `POST /api/runs/{id}/feedback`,
//!   `GET /healthz`), and `/mcp`, the tools of [`mcp`] over streamable
//!   HTTP (`mcp::http`), behind the same token.
//! - [`live`]: the runs this process executes and the concurrent-run limit.
//! - [`events`]: one event stream per run, live, tailed from the database
//!   (a run of another process) or replayed from the journal.
//! - [`client`]: the API from the other side, with an SSE reader.
//! - [`otlp`]: spans of a stored run, and their batched export.
//! - [`mcp`]: `diagraph mcp`, diagnosis as Model Context Protocol tools.
//!
//! Several processes may serve one MySQL database: every run is created,
//! read and listed through the store, so any of them answers for any run,
//! and a run of another process is followed by reading its journal.

pub mod api;
pub mod client;
pub mod events;
pub mod live;
pub mod mcp;
pub mod otlp;

use crate::engine::Engine;
use crate::store::Store;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// Environment variable holding the API token.
pub const TOKEN_ENV: &str = "DIAGRAPH_API_TOKEN";
/// A question is short; the limit keeps a mistaken upload from being read.
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024;
pub const DEFAULT_MAX_CONCURRENT_RUNS: usize = 32;

#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// `host:port`; a name is resolved and every address it has is checked.
    pub listen: String,
    /// From [`TOKEN_ENV`]; required unless every listening address is
    /// loopback.
    pub token: Option<String>,
    pub max_body_bytes: usize,
    pub max_concurrent_runs: usize,
    /// The pack recorded with each run (the configured one, if any).
    pub pack: Option<String>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            listen: DEFAULT_LISTEN.into(),
            token: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_concurrent_runs: DEFAULT_MAX_CONCURRENT_RUNS,
            pack: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}: {message}")]
    Listen { addr: String, message: String },
    #[error(
        "refusing to listen on {addr} without a token: it is reachable beyond this machine; set {TOKEN_ENV} (clients then send Authorization: Bearer <token>) or listen on 127.0.0.1"
    )]
    TokenRequired { addr: String },
    #[error("{TOKEN_ENV} is set but empty or blank")]
    BlankToken,
    #[error("the server failed: {0}")]
    Io(String),
}

/// Binds the listening socket after checking that an address beyond
/// loopback has a token to protect it.
pub async fn bind(options: &ServeOptions) -> Result<TcpListener, ServeError> {
    if options
        .token
        .as_deref()
        .is_some_and(|t| t.trim().is_empty())
    {
        return Err(ServeError::BlankToken);
    }
    let listen_error = |message: String| ServeError::Listen {
        addr: options.listen.clone(),
        message,
    };
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host(options.listen.as_str())
        .await
        .map_err(|e| listen_error(crate::text::error_line(&e)))?
        .collect();
    if addrs.is_empty() {
        return Err(listen_error("the name has no address".into()));
    }
    if options.token.is_none() && !addrs.iter().all(|a| a.ip().is_loopback()) {
        return Err(ServeError::TokenRequired {
            addr: options.listen.clone(),
        });
    }
    TcpListener::bind(addrs.as_slice())
        .await
        .map_err(|e| listen_error(crate::text::error_line(&e)))
}

/// Serves until `stop` resolves, then shuts down gracefully: new runs are
/// refused, every run in progress is cancelled and persisted, open event
/// streams end, and in-flight answers are sent.
pub async fn serve(
    listener: TcpListener,
    engine: Engine,
    store: Arc<Store>,
    options: &ServeOptions,
    stop: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let shutdown = CancellationToken::new();
    let live = Arc::new(live::LiveRuns::new(
        engine,
        store.clone(),
        options.pack.clone(),
        options.max_concurrent_runs,
        shutdown.clone(),
    ));
    let state = Arc::new(api::ApiState {
        store,
        live: live.clone(),
        token: options.token.clone(),
        shutdown: shutdown.clone(),
    });
    let app = api::router(state, options.max_body_bytes);
    let draining = live.clone();
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            stop.await;
            tracing::info!("shutting down: cancelling the runs in progress");
            // Cancelling the runs makes their waiting requests answer and
            // their event streams end; shutdown waits for both.
            draining.shut_down().await;
        })
        .await;
    // Also when serving failed: no run may be left RUNNING.
    live.shut_down().await;
    served.map_err(|e| ServeError::Io(crate::text::error_line(&e)))
}

/// Resolves on SIGTERM or Ctrl-C.
pub async fn termination_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}

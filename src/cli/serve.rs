//! `diagraph serve`: the HTTP API on this machine's configuration, until
//! SIGTERM or Ctrl-C; and `diagraph --server URL`: the workbench following
//! such a server.

use super::CliError;
use super::setup::{Output, Setup};
use crate::config::Config;
use crate::server::client::ServerClient;
use crate::server::{ServeOptions, TOKEN_ENV, bind, serve, termination_signal};
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

pub async fn run(
    config: &Config,
    listen: String,
    max_runs: usize,
    max_body: usize,
    lease_seconds: f64,
) -> Result<ExitCode, CliError> {
    let lease = std::time::Duration::try_from_secs_f64(lease_seconds)
        .ok()
        .filter(|d| d.as_millis() >= 100)
        .ok_or_else(|| CliError::input("--lease-seconds must be at least 0.1"))?;
    if max_runs == 0 {
        return Err(CliError::input("--max-runs must be at least 1"));
    }
    if max_body == 0 {
        return Err(CliError::input("--max-body must be at least 1 byte"));
    }
    let options = ServeOptions {
        listen,
        token: std::env::var(TOKEN_ENV).ok(),
        max_body_bytes: max_body,
        max_concurrent_runs: max_runs,
        pack: config.pack.as_ref().map(|p| p.display().to_string()),
    };
    // The address and the token are checked before the database is opened.
    let listener = bind(&options).await?;
    let setup = Setup::build(config, Output::Stderr).await?;
    // Held while serving: other servers on the database end this one's
    // runs if it dies, and this one ends theirs.
    let _lease = setup.store.hold_lease(lease);
    let addr = listener
        .local_addr()
        .map_err(|e| CliError::other(format!("cannot read the listening address: {e}")))?;
    let mut out = std::io::stdout();
    let _ = writeln!(
        out,
        "diagraph: serving http://{addr} (database {}, model {}{}{})",
        setup.store.describe(),
        setup.engine.model.name(),
        if options.token.is_some() {
            ", API token required"
        } else {
            ""
        },
        setup
            .exporter
            .as_ref()
            .map(|e| format!(", OpenTelemetry to {}", crate::text::mask_url(e.url())))
            .unwrap_or_default(),
    );
    let _ = out.flush();
    let (first_tx, first_rx) = tokio::sync::oneshot::channel();
    let stop = async move {
        termination_signal().await;
        let _ = first_tx.send(());
    };
    // A second signal while the runs end quits at once; the next start
    // marks the runs it left as interrupted.
    tokio::spawn(async move {
        if first_rx.await.is_ok() {
            eprintln!(
                "diagraph: shutting down: cancelling the runs in progress (signal again to quit at once)"
            );
            termination_signal().await;
            eprintln!("diagraph: quitting without waiting for the runs in progress");
            std::process::exit(130);
        }
    });
    let served = serve(
        listener,
        setup.engine.clone(),
        setup.store.clone(),
        &options,
        stop,
    )
    .await;
    setup.finish().await;
    setup.store.close().await;
    served?;
    Ok(ExitCode::SUCCESS)
}

/// The client for `--server URL`, with the token from the environment.
pub fn client(url: &str) -> Result<Arc<ServerClient>, CliError> {
    Ok(Arc::new(ServerClient::new(
        url,
        std::env::var(TOKEN_ENV).ok(),
    )?))
}

//! Sources that are not this process's engine: a `diagraph serve` the TUI
//! follows (`diagraph --server URL`: runs start there and every event
//! arrives over its SSE stream), and a run that another process is
//! executing on the same database (tailed from the store). Both feed the
//! loop the same `Msg::Engine` events a local run does, so the panes fold
//! them alike.

use crate::server::client::ServerClient;
use crate::server::events::{self, StreamItem};
use crate::store::Store;
use crate::tui::update::Msg;
use crate::vocab::events::{EngineEvent, ModelDelta};
use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How often the runs list is read from the server, so runs started by
/// others appear.
pub const RUNS_REFRESH: Duration = Duration::from_secs(3);
/// Runs listed from a server (its largest page).
pub const SERVER_RUNS: usize = crate::server::api::MAX_PAGE;

/// Sends the server's runs list to the loop now and every
/// [`RUNS_REFRESH`] until the loop is gone.
pub fn poll_runs(server: Arc<ServerClient>, tx: mpsc::Sender<Msg>) {
    tokio::spawn(async move {
        loop {
            let result = server.runs(SERVER_RUNS).await.map_err(|e| e.to_string());
            if tx.send(Msg::RunsLoaded(result)).await.is_err() {
                return;
            }
            tokio::time::sleep(RUNS_REFRESH).await;
        }
    });
}

pub fn load_runs(server: Arc<ServerClient>, tx: mpsc::Sender<Msg>) {
    tokio::spawn(async move {
        let result = server.runs(SERVER_RUNS).await.map_err(|e| e.to_string());
        let _ = tx.send(Msg::RunsLoaded(result)).await;
    });
}

/// How a followed run is let go of.
pub struct Watch {
    /// Stop following (the run goes on).
    pub stop: CancellationToken,
    /// Ask the server to cancel the run (only for runs this TUI started).
    pub cancel_run: Option<CancellationToken>,
    /// Held until a cancel request has been answered, so quitting waits
    /// for it (see `Effects::finish`).
    pub alive: Option<mpsc::Sender<()>>,
}

/// Starts the question on the server and follows the run it made.
pub fn start_run(
    server: Arc<ServerClient>,
    tx: mpsc::Sender<Msg>,
    generation: u64,
    question: String,
    watch: Watch,
) {
    tokio::spawn(async move {
        match server.start(&question, None).await {
            Ok(started) => follow_server(server, tx, generation, started.run_id, watch).await,
            Err(e) => {
                let _ = tx
                    .send(Msg::SourceDone {
                        generation,
                        error: Some(e.to_string()),
                    })
                    .await;
            }
        }
    });
}

/// Follows a run over the server's event stream until it ends, the watch
/// stops or the loop is gone; then reloads the runs list.
pub fn follow(
    server: Arc<ServerClient>,
    tx: mpsc::Sender<Msg>,
    generation: u64,
    run_id: i64,
    watch: Watch,
) {
    tokio::spawn(follow_server(server, tx, generation, run_id, watch));
}

async fn follow_server(
    server: Arc<ServerClient>,
    tx: mpsc::Sender<Msg>,
    generation: u64,
    run_id: i64,
    watch: Watch,
) {
    let Watch {
        stop,
        cancel_run,
        alive,
    } = watch;
    let cancel_run = cancel_run.unwrap_or_default();
    let mut alive = alive;
    let (events_tx, mut events_rx) = mpsc::channel::<EngineEvent>(super::effects::EVENT_CHANNEL);
    let (deltas_tx, mut deltas_rx) = mpsc::channel::<ModelDelta>(super::effects::EVENT_CHANNEL);
    let client = server.clone();
    let follow = tokio::spawn(async move {
        client
            .follow_live(run_id, 0, &events_tx, Some(&deltas_tx))
            .await
    });
    let mut cancel_sent = false;
    loop {
        let event = tokio::select! {
            biased;
            _ = cancel_run.cancelled(), if !cancel_sent => {
                cancel_sent = true;
                request_cancel(server.clone(), run_id, alive.take());
                continue;
            }
            e = events_rx.recv() => e.map(|event| Msg::Engine { generation, event: Box::new(event) }),
            Some(delta) = deltas_rx.recv() => Some(Msg::Delta { generation, delta: Box::new(delta) }),
            _ = stop.cancelled() => None,
        };
        let Some(msg) = event else { break };
        if tx.send(msg).await.is_err() {
            follow.abort();
            return;
        }
    }
    if cancel_run.is_cancelled() && !cancel_sent {
        request_cancel(server.clone(), run_id, alive.take());
    }
    // Closing the receiver makes `follow` return at its next event.
    drop(events_rx);
    let error = if stop.is_cancelled() {
        follow.abort();
        None
    } else {
        match follow.await {
            Ok(Ok(_)) => None,
            Ok(Err(e)) => Some(e.to_string()),
            Err(_) => Some("following the run failed unexpectedly".into()),
        }
    };
    let _ = tx.send(Msg::SourceDone { generation, error }).await;
    load_runs(server, tx);
}

/// Asks the server to cancel the run, holding `alive` until it answered.
fn request_cancel(server: Arc<ServerClient>, run_id: i64, alive: Option<mpsc::Sender<()>>) {
    tokio::spawn(async move {
        if let Err(e) = server.cancel(run_id).await {
            tracing::warn!(run_id, error = %e, "the server did not cancel the run");
        }
        drop(alive);
    });
}

/// Every event of a run the server has (for a replay).
pub fn load_replay(server: Arc<ServerClient>, tx: mpsc::Sender<Msg>, generation: u64, run_id: i64) {
    tokio::spawn(async move {
        let result = server.events(run_id).await.map_err(|e| e.to_string());
        let _ = tx.send(Msg::ReplayLoaded { generation, result }).await;
    });
}

/// Tails a run of another process from the store until it ends or `stop`
/// fires.
pub fn tail_store(
    store: Arc<Store>,
    tx: mpsc::Sender<Msg>,
    generation: u64,
    run_id: i64,
    stop: CancellationToken,
) {
    tokio::spawn(async move {
        let mut stream = Box::pin(events::stored(store.clone(), run_id, 0, stop));
        let mut error = None;
        while let Some(item) = stream.next().await {
            match item {
                Ok(StreamItem::Event(e)) => {
                    let msg = Msg::Engine {
                        generation,
                        event: Box::new((*e).clone()),
                    };
                    if tx.send(msg).await.is_err() {
                        return;
                    }
                }
                // A run tailed from the database has no streamed pieces.
                Ok(StreamItem::Delta(_)) => {}
                Ok(StreamItem::End(_)) => break,
                Err(e) => {
                    error = Some(e.to_string());
                    break;
                }
            }
        }
        let _ = tx.send(Msg::SourceDone { generation, error }).await;
        super::effects::send_runs_page(store, tx, String::new(), None);
    });
}

//! Performs the commands `update` returns: starts engine runs (live, or a
//! scenario in step mode), loads replays and run lists from the store, and
//! forwards step commands to the engine's gate. Every result goes back to
//! the loop as a `Msg` on one bounded channel, tagged with the generation
//! of the source, so the loop stays the only owner of the state.

use super::TuiContext;
use crate::engine::{Engine, RunRequest, StepCommand, StepGate};
use crate::server::client::ServerClient;
use crate::tui::update::{Command, Msg};
use crate::vocab::events::{EngineEvent, ModelDelta};
use crate::vocab::run::RunSummary;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Bounded: a fast engine waits for the UI instead of growing memory.
pub const EVENT_CHANNEL: usize = 256;
/// How often the newest runs are read again, and how many.
pub const RUNS_POLL: std::time::Duration = std::time::Duration::from_secs(2);
pub const RUNS_POLLED: usize = 50;

pub struct Effects {
    pub ctx: Arc<TuiContext>,
    pub tx: mpsc::Sender<Msg>,
    gate: Option<mpsc::Sender<StepCommand>>,
    cancel: Option<CancellationToken>,
    /// Following a server: fired to ask the server to cancel the run this
    /// TUI started there (stopping `cancel` only stops following it).
    cancel_on_server: Option<CancellationToken>,
    /// Each engine run holds a clone until it has ended and saved its end;
    /// [`Effects::finish`] waits for all of them to be dropped.
    alive: Option<mpsc::Sender<()>>,
    all_ended: mpsc::Receiver<()>,
}

impl Effects {
    pub fn new(ctx: Arc<TuiContext>, tx: mpsc::Sender<Msg>) -> Effects {
        let (alive, all_ended) = mpsc::channel(1);
        Effects {
            ctx,
            tx,
            gate: None,
            cancel: None,
            cancel_on_server: None,
            alive: Some(alive),
            all_ended,
        }
    }

    /// Stops the run on screen and waits (at most `wait`) until every run
    /// started here has ended and saved how it ended, so quitting never
    /// leaves a run RUNNING. Returns false when the wait ran out.
    pub async fn finish(&mut self, wait: std::time::Duration) -> bool {
        self.stop_current();
        self.alive = None;
        // `recv` yields None once every run task has dropped its sender.
        tokio::time::timeout(wait, self.all_ended.recv())
            .await
            .is_ok()
    }

    /// Stops the run on screen (if any): its events would be dropped
    /// anyway, and it should not keep using the model and tools.
    fn stop_current(&mut self) {
        if let Some(c) = self.cancel.take() {
            c.cancel();
        }
        self.gate = None;
    }

    pub fn handle(&mut self, cmd: Command) {
        // Following a server: runs, replays and the runs list come from
        // it; demos and step commands stay local.
        let cmd = match self.ctx.server.clone() {
            Some(server) => match self.handle_remote(server, cmd) {
                Some(local) => local,
                None => return,
            },
            None => cmd,
        };
        match cmd {
            Command::StartRun {
                generation,
                question,
                stepping,
            } => {
                self.stop_current();
                let prepared = Ok((self.ctx.engine.clone(), RunRequest::new(question)));
                self.spawn_run(generation, async move { prepared }, stepping);
            }
            Command::StartDemo { generation, path } => {
                self.stop_current();
                let ctx = self.ctx.clone();
                // Loading the pack reads files: keep it off the UI thread.
                let prepare = async move {
                    tokio::task::spawn_blocking(move || super::demo::prepare(&ctx, &path))
                        .await
                        .unwrap_or_else(|_| Err("loading the scenario failed".into()))
                };
                self.spawn_run(generation, prepare, true);
            }
            Command::Step(step) => {
                if let Some(gate) = &self.gate {
                    // A full or closed gate means the engine is not waiting;
                    // dropping the key press is the right outcome.
                    let _ = gate.try_send(step);
                }
                if step == StepCommand::Continue {
                    self.gate = None;
                }
            }
            Command::LoadReplay { generation, run_id } => {
                self.stop_current();
                let store = self.ctx.store.clone();
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let result = match store {
                        Some(s) => s.load_events(run_id).await.map_err(|e| e.to_string()),
                        None => Err(format!(
                            "run {run_id} is not in memory and no database is open"
                        )),
                    };
                    let _ = tx.send(Msg::ReplayLoaded { generation, result }).await;
                });
            }
            Command::Cancel => {
                // The run keeps its channel: its CANCELLED end still shows.
                if let Some(c) = &self.cancel {
                    c.cancel();
                }
            }
            Command::FollowRun { generation, run_id } => {
                self.stop_current();
                match self.ctx.store.clone() {
                    Some(store) => {
                        let stop = CancellationToken::new();
                        self.cancel = Some(stop.clone());
                        super::remote::tail_store(store, self.tx.clone(), generation, run_id, stop);
                    }
                    None => {
                        let tx = self.tx.clone();
                        tokio::spawn(async move {
                            let error = Some(format!(
                                "run {run_id} cannot be followed without a database"
                            ));
                            let _ = tx.send(Msg::SourceDone { generation, error }).await;
                        });
                    }
                }
            }
            Command::LoadRuns => self.load_runs(),
            Command::LoadRunsPage { filter, before } => self.load_runs_page(filter, before),
            Command::LoadTrace { run_id } => {
                let (ctx, tx) = (self.ctx.clone(), self.tx.clone());
                tokio::spawn(async move {
                    let result = read_trace(&ctx, run_id).await.map(Arc::new);
                    let _ = tx.send(Msg::TraceLoaded { run_id, result }).await;
                });
            }
            Command::CopyExport { run_id } => {
                let (ctx, tx) = (self.ctx.clone(), self.tx.clone());
                tokio::spawn(async move {
                    let result = read_trace(&ctx, run_id)
                        .await
                        .map(|t| crate::report::markdown::render(&t));
                    let _ = tx.send(Msg::ExportReady { run_id, result }).await;
                });
            }
            Command::LoadCompare { a, b } => {
                let (ctx, tx) = (self.ctx.clone(), self.tx.clone());
                tokio::spawn(async move {
                    let result = match tokio::join!(read_trace(&ctx, a), read_trace(&ctx, b)) {
                        (Ok(ta), Ok(tb)) => Ok((Arc::new(ta), Arc::new(tb))),
                        (Err(e), _) | (_, Err(e)) => Err(e),
                    };
                    let _ = tx.send(Msg::CompareLoaded { a, b, result }).await;
                });
            }
            Command::Copy(text) => {
                // Straight to the terminal, between frames: this runs on
                // the loop that draws.
                use std::io::Write;
                let mut out = std::io::stdout();
                let _ = out.write_all(osc52(&text).as_bytes());
                let _ = out.flush();
            }
            Command::ListScenarios => {
                let dir = self.ctx.scenarios_dir.clone();
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let entries = tokio::task::spawn_blocking(move || super::demo::list(&dir))
                        .await
                        .unwrap_or_default();
                    let _ = tx.send(Msg::ScenariosLoaded(entries)).await;
                });
            }
            Command::Quit => self.stop_current(),
        }
    }

    /// Performs `cmd` against the server; returns the commands that stay
    /// local. Leaving a run stops following it; the run itself goes on
    /// unless this TUI started it and the user agreed to stop it (the
    /// question `update` asks before leaving a live run), or asked to
    /// cancel it.
    fn handle_remote(&mut self, server: Arc<ServerClient>, cmd: Command) -> Option<Command> {
        let tx = self.tx.clone();
        match cmd {
            Command::StartRun {
                generation,
                question,
                ..
            } => {
                self.leave_remote();
                let stop = CancellationToken::new();
                let cancel_run = CancellationToken::new();
                self.cancel = Some(stop.clone());
                self.cancel_on_server = Some(cancel_run.clone());
                let watch = super::remote::Watch {
                    stop,
                    cancel_run: Some(cancel_run),
                    alive: self.alive.clone(),
                };
                super::remote::start_run(server, tx, generation, question, watch);
            }
            Command::FollowRun { generation, run_id } => {
                self.leave_remote();
                let stop = CancellationToken::new();
                self.cancel = Some(stop.clone());
                let watch = super::remote::Watch {
                    stop,
                    cancel_run: None,
                    alive: None,
                };
                super::remote::follow(server, tx, generation, run_id, watch);
            }
            Command::LoadReplay { generation, run_id } => {
                self.leave_remote();
                super::remote::load_replay(server, tx, generation, run_id);
            }
            Command::Cancel => {
                if let Some(c) = &self.cancel_on_server {
                    c.cancel();
                }
            }
            Command::LoadRuns => super::remote::load_runs(server, tx),
            local => return Some(local),
        }
        None
    }

    fn leave_remote(&mut self) {
        self.stop_current();
        if let Some(c) = self.cancel_on_server.take() {
            c.cancel();
        }
    }

    /// Polls the newest runs while the TUI is open, so runs other
    /// processes start or finish show without a restart. A few rows every
    /// `RUNS_POLL`; stops when the loop is gone.
    pub fn poll_runs(&self) {
        let Some(store) = self.ctx.store.clone() else {
            return;
        };
        let tx = self.tx.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(RUNS_POLL).await;
                // A failed poll changes nothing: the next one may succeed,
                // and a failed full load already says so.
                if let Ok(rows) = store.list_runs(RUNS_POLLED).await
                    && tx.send(Msg::RunsChanged(rows)).await.is_err()
                {
                    return;
                }
                if tx.is_closed() {
                    return;
                }
            }
        });
    }

    /// The newest page of runs.
    pub fn load_runs(&self) {
        self.load_runs_page(String::new(), None);
    }

    fn load_runs_page(&self, filter: String, before: Option<i64>) {
        let Some(store) = self.ctx.store.clone() else {
            return;
        };
        send_runs_page(store, self.tx.clone(), filter, before);
    }

    /// Starts a run once `prepare` yields its engine and request. The gate
    /// and the cancellation token exist from the start, so a key pressed
    /// while the scenario loads is not lost.
    fn spawn_run<P>(&mut self, generation: u64, prepare: P, stepping: bool)
    where
        P: Future<Output = Result<(Engine, RunRequest), String>> + Send + 'static,
    {
        let cancel = CancellationToken::new();
        self.cancel = Some(cancel.clone());
        let gate_rx = if stepping {
            let (gate_tx, gate_rx) = mpsc::channel(8);
            self.gate = Some(gate_tx);
            Some(gate_rx)
        } else {
            None
        };
        let tx = self.tx.clone();
        let store = self.ctx.store.clone();
        let alive = self.alive.clone();
        tokio::spawn(async move {
            let (engine, mut request) = match prepare.await {
                Ok(p) => p,
                Err(error) => {
                    let _ = tx
                        .send(Msg::SourceDone {
                            generation,
                            error: Some(error),
                        })
                        .await;
                    return;
                }
            };
            let (events_tx, mut events_rx) = mpsc::channel::<EngineEvent>(EVENT_CHANNEL);
            let (deltas_tx, mut deltas_rx) = mpsc::channel::<ModelDelta>(EVENT_CHANNEL);
            request.events = Some(events_tx);
            request.deltas = Some(deltas_tx);
            request.cancel = cancel;
            request.step_gate = gate_rx.map(|commands| StepGate { commands });
            // The run in its own task, so a panic in the engine becomes an
            // error message instead of killing the UI. It holds `alive`
            // until its end is saved, even if nobody forwards its events.
            let run = tokio::spawn(async move {
                let outcome = engine.run(request).await;
                drop(alive);
                outcome
            });
            let mut forwarded = 0usize;
            loop {
                // Events first; a piece that comes after the event that
                // ended its call is dropped by the view.
                let msg = tokio::select! {
                    biased;
                    event = events_rx.recv() => match event {
                        Some(event) => {
                            forwarded += 1;
                            Msg::Engine { generation, event: Box::new(event) }
                        }
                        None => break,
                    },
                    Some(delta) = deltas_rx.recv() => Msg::Delta { generation, delta: Box::new(delta) },
                };
                if tx.send(msg).await.is_err() {
                    return;
                }
            }
            let error = match run.await {
                Ok(Ok(outcome)) => {
                    // An engine that recorded but did not stream still
                    // shows its run.
                    if forwarded == 0 {
                        for event in outcome.events {
                            let _ = tx
                                .send(Msg::Engine {
                                    generation,
                                    event: Box::new(event),
                                })
                                .await;
                        }
                    }
                    None
                }
                Ok(Err(e)) => Some(e.to_string()),
                Err(e) if e.is_panic() => {
                    Some("the engine failed unexpectedly (see the log file)".into())
                }
                Err(_) => Some("the run was cancelled".into()),
            };
            if let Some(e) = &error {
                tracing::warn!(generation, error = %e, "run ended with an error");
            }
            let _ = tx.send(Msg::SourceDone { generation, error }).await;
            if let Some(store) = store {
                send_runs_page(store, tx, String::new(), None);
            }
        });
    }
}

/// Reads a page of stored runs (newest first, older than `before`,
/// matching `filter`) and how many match, and sends it to the loop.
pub(super) fn send_runs_page(
    store: Arc<crate::store::Store>,
    tx: mpsc::Sender<Msg>,
    filter: String,
    before: Option<i64>,
) {
    tokio::spawn(async move {
        let result = read_runs_page(&store, &filter, before).await;
        let _ = tx.send(Msg::RunsPage { filter, result }).await;
    });
}

/// A page of stored runs (newest first, older than `before`, matching
/// `filter`) and how many stored runs match.
pub async fn read_runs_page(
    store: &crate::store::Store,
    filter: &str,
    before: Option<i64>,
) -> Result<(Vec<RunSummary>, u64), String> {
    let query = crate::store::RunQuery {
        limit: crate::tui::update::RUNS_PAGE,
        before,
        text: Some(filter.to_string()).filter(|f| !f.is_empty()),
        ..Default::default()
    };
    let page = async {
        let rows = store.query_runs(&query).await?;
        let total = store
            .count_runs(&crate::store::RunQuery {
                before: None,
                ..query.clone()
            })
            .await?;
        Ok::<_, crate::store::StoreError>((rows, total))
    };
    page.await.map_err(|e| e.to_string())
}

/// A run's stored trace from where this TUI reads runs: the database, or
/// the server it follows.
async fn read_trace(
    ctx: &TuiContext,
    run_id: i64,
) -> Result<crate::vocab::run_trace::RunTrace, String> {
    if let Some(server) = &ctx.server {
        return server.trace(run_id).await.map_err(|e| e.to_string());
    }
    match &ctx.store {
        Some(store) => store.run_trace(run_id).await.map_err(|e| e.to_string()),
        None => Err("no database is open".into()),
    }
}

/// The OSC 52 sequence that puts `text` on the terminal's clipboard
/// (terminals and tmux with `set-clipboard on` honour it, also over ssh).
pub fn osc52(text: &str) -> String {
    use base64::Engine;
    format!(
        "\x1b]52;c;{}\x07",
        base64::engine::general_purpose::STANDARD.encode(text)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn osc52_is_base64_in_one_sequence() {
        assert_eq!(
            super::osc52("why? 为什么\n"),
            "\x1b]52;c;d2h5PyDkuLrku4DkuYgK\x07"
        );
    }
}

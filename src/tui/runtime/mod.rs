//! The TUI's entry point and terminal ownership.
//!
//! `run` sets the terminal up with `ratatui::try_init` (raw mode, alternate
//! screen, and a panic hook that restores the terminal) plus bracketed
//! paste and mouse capture (unless `[tui] mouse` is off), drives the event
//! loop, and restores the terminal on every exit path: normal quit, error
//! and panic. Nothing is printed to stdout while the screen is up; logs go
//! through `tracing` to the file the CLI configured.

pub mod demo;
pub mod effects;
pub mod event_loop;
pub mod remote;

use crate::engine::Engine;
use crate::model::ChatModel;
use crate::server::client::ServerClient;
use crate::store::Store;
use crate::tui::keymap::Keymap;
use crate::tui::state::AppState;
use crate::tui::theme::Theme;
use crate::tui::update::{Command, Msg};
use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    EventStream,
};
use effects::Effects;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::mpsc;

pub struct TuiContext {
    /// Base engine for live questions.
    pub engine: Engine,
    /// For demo scenarios' uncovered calls.
    pub fallthrough: Arc<dyn ChatModel>,
    /// Runs list and replay (None: memory only).
    pub store: Option<Arc<Store>>,
    pub scenarios_dir: PathBuf,
    /// Theme name or path.
    pub theme: String,
    /// Action -> key spec.
    pub key_overrides: BTreeMap<String, String>,
    /// Capture the mouse (`[tui] mouse`); off, the terminal keeps its own
    /// text selection.
    pub mouse: bool,
    /// e.g. "offline (rule-based)".
    pub model_label: String,
    pub db_label: String,
    /// Problems found loading the pack, shown until a run starts.
    pub pack_warnings: Vec<String>,
    /// Follow this `diagraph serve` instead of running questions here:
    /// runs start on it and their events arrive over its event streams.
    pub server: Option<Arc<ServerClient>>,
}

pub enum Launch {
    Live,
    Replay(i64),
    Demo(Option<PathBuf>),
}

/// Why the workbench could not start, or stopped: what it was doing, with
/// the cause as the error's source.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error("loading the theme")]
    Theme(#[source] crate::tui::theme::ThemeError),
    #[error("reading key overrides")]
    Keymap(#[source] crate::tui::keymap::KeymapError),
    #[error("loading the scenario")]
    Scenario(#[source] tokio::task::JoinError),
    #[error("setting up the terminal")]
    Terminal(#[source] std::io::Error),
    #[error("the TUI stopped")]
    Stopped(#[source] event_loop::LoopError),
    #[error("restoring the terminal")]
    Restore(#[source] std::io::Error),
}

/// Messages in flight from background work to the loop.
pub const MSG_CHANNEL: usize = 256;

/// The initial state and the first commands for a launch mode, without a
/// terminal (tests use it too).
pub fn initial_state(
    theme: Theme,
    keymap: Keymap,
    model_label: &str,
    db_label: &str,
    launch: &Launch,
) -> (AppState, Vec<Command>) {
    let mut state = AppState::new(theme, keymap, model_label, db_label);
    let mut cmds = vec![Command::LoadRuns];
    match launch {
        Launch::Live => {}
        Launch::Replay(run_id) => {
            let generation = state.begin(crate::tui::state::Mode::Replay, false, false);
            state.focus = crate::tui::state::Pane::Graph;
            cmds.push(Command::LoadReplay {
                generation,
                run_id: *run_id,
            });
        }
        Launch::Demo(given) => {
            state.mode = crate::tui::state::Mode::Demo;
            // A demo is watched node by node: the transitions tell it.
            state.focus = crate::tui::state::Pane::Transitions;
            state.table_pane = crate::tui::state::Pane::Transitions;
            if given.is_none() {
                state.open_demo_picker();
            }
        }
    }
    (state, cmds)
}

pub async fn run(ctx: TuiContext, launch: Launch) -> Result<(), TuiError> {
    // Everything that can fail before the screen is taken fails here, with
    // the terminal untouched.
    let theme = Theme::load(&ctx.theme).map_err(TuiError::Theme)?;
    let keymap = Keymap::with_overrides(&ctx.key_overrides).map_err(TuiError::Keymap)?;
    let (mut state, first) = initial_state(theme, keymap, &ctx.model_label, &ctx.db_label, &launch);
    if let Some(first) = ctx.pack_warnings.first() {
        state.notify(match ctx.pack_warnings.len() {
            1 => format!("pack warning: {first}"),
            n => format!("{n} pack warnings, first: {first}"),
        });
    }
    let ctx = Arc::new(ctx);
    let (tx, mut rx) = mpsc::channel::<Msg>(MSG_CHANNEL);
    let mut effects = Effects::new(ctx.clone(), tx.clone());
    for cmd in first {
        effects.handle(cmd);
    }
    if let Some(server) = &ctx.server {
        remote::poll_runs(server.clone(), tx.clone());
    } else {
        effects.poll_runs();
    }
    match launch {
        Launch::Demo(Some(path)) => {
            let dir = ctx.scenarios_dir.clone();
            let entry =
                tokio::task::spawn_blocking(move || demo::load_entry(&demo::resolve(&dir, &path)))
                    .await
                    .map_err(TuiError::Scenario)?;
            let _ = tx.send(Msg::StartDemo(entry)).await;
        }
        Launch::Demo(None) => effects.handle(Command::ListScenarios),
        _ => {}
    }
    stop_on_signal(tx.clone());
    drop(tx);

    let mut terminal = ratatui::try_init().map_err(TuiError::Terminal)?;
    // Undone on every exit, a panic included (before ratatui's own hook
    // restores the screen).
    let mouse = ctx.mouse;
    let _ = enable_input_modes(&mut std::io::stdout(), mouse);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = undo_input_modes(&mut std::io::stdout(), mouse);
        hook(info);
    }));
    let msgs = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
    let result =
        event_loop::event_loop(&mut terminal, &mut state, EventStream::new(), msgs, |cmd| {
            effects.handle(cmd)
        })
        .await;
    let _ = undo_input_modes(&mut std::io::stdout(), mouse);
    let restored = ratatui::try_restore();
    // A run stopped by quitting ends CANCELLED; wait until that is saved
    // (the screen is already back), so it is never left RUNNING.
    if !effects.finish(RUN_END_WAIT).await {
        tracing::warn!("a run had not saved its end when the TUI quit");
    }
    result.map_err(TuiError::Stopped)?;
    restored.map_err(TuiError::Restore)?;
    Ok(())
}

/// SIGTERM, SIGHUP (the terminal closed) or SIGINT become
/// `Msg::Terminate`, so the loop ends the usual way: the terminal restored
/// and a live run saved CANCELLED, never left RUNNING by a kill.
fn stop_on_signal(tx: mpsc::Sender<Msg>) {
    #[cfg(unix)]
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let kinds = [
            SignalKind::terminate(),
            SignalKind::hangup(),
            SignalKind::interrupt(),
        ];
        let mut streams: Vec<_> = kinds.into_iter().filter_map(|k| signal(k).ok()).collect();
        if streams.is_empty() {
            return;
        }
        let any = futures::future::select_all(streams.iter_mut().map(|s| Box::pin(s.recv())));
        let _ = any.await;
        let _ = tx.send(Msg::Terminate).await;
    });
    #[cfg(not(unix))]
    drop(tx);
}

/// Turns on what the workbench reads besides ratatui's raw mode and
/// alternate screen: bracketed paste (a paste arrives as one event, and a
/// pasted newline is part of the question, never Enter), and, unless the
/// mouse is left to the terminal, mouse capture (clicks and the wheel as
/// events, at the cost of the terminal's own text selection).
pub fn enable_input_modes(out: &mut impl std::io::Write, mouse: bool) -> std::io::Result<()> {
    crossterm::execute!(out, EnableBracketedPaste)?;
    if mouse {
        crossterm::execute!(out, EnableMouseCapture)?;
    }
    Ok(())
}

/// Turns off what [`enable_input_modes`] turned on.
pub fn undo_input_modes(out: &mut impl std::io::Write, mouse: bool) -> std::io::Result<()> {
    if mouse {
        crossterm::execute!(out, DisableMouseCapture)?;
    }
    crossterm::execute!(out, DisableBracketedPaste)
}

/// How long quitting waits for a cancelled run to save its end.
const RUN_END_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

//! The one place that changes [`AppState`]: `update(state, msg) -> commands`.
//!
//! Messages are terminal keys, engine events tagged with the generation
//! of their source, and results of background work. Commands are what the
//! runtime must do outside the state (start a run, load a replay, send a
//! step). Keeping side effects out of here makes every interaction a
//! "state + keys -> state" test.
//!
//! - [`input`]: keys and pastes, per input mode (confirm, filter, typing,
//!   popup, panes) turned into actions;
//! - [`actions`]: what an action does to the state (open, copy, compare,
//!   quit, start a run or demo, move the selection);
//! - [`mouse`]: clicks and the wheel, hit-tested against the view's
//!   geometry;
//! - [`events`]: engine events and the results of background work folded
//!   into the state.

mod actions;
mod events;
mod input;
mod mouse;
mod runs_pages;
mod timeline;

pub use runs_pages::{PAGE as RUNS_PAGE, stored_total};

pub use actions::node_boundary;
pub use mouse::WHEEL_STEP;

use crate::engine::StepCommand;
use crate::tui::state::{AppState, DemoEntry};
use crate::vocab::events::{EngineEvent, ModelDelta};
use crate::vocab::run::RunSummary;
use crate::vocab::run_trace::RunTrace;
use crossterm::event::{KeyEvent, KeyEventKind, MouseEvent};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub enum Msg {
    Key(KeyEvent),
    /// Text pasted into the terminal (bracketed paste): one piece.
    Paste(String),
    /// A click or a wheel notch (moves and drags are not sent).
    Mouse(MouseEvent),
    Resize(u16, u16),
    /// An event of the source with this generation.
    Engine {
        generation: u64,
        event: Box<EngineEvent>,
    },
    /// A piece of the answer a model of that source's run is streaming.
    Delta {
        generation: u64,
        delta: Box<ModelDelta>,
    },
    /// The source finished; `error` is set when it failed.
    SourceDone {
        generation: u64,
        error: Option<String>,
    },
    /// The screen clock: wall-clock milliseconds since the workbench
    /// started. The loop sends it before every other message and while a
    /// run goes on, so times and notices are measured against it.
    Tick {
        now_ms: u64,
    },
    RunsLoaded(Result<Vec<RunSummary>, String>),
    /// A page of stored runs (`Command::LoadRunsPage`) and how many match.
    RunsPage {
        filter: String,
        result: Result<(Vec<RunSummary>, u64), String>,
    },
    /// The newest runs, polled: merged into the list (other processes'
    /// runs appear, running ones change status).
    RunsChanged(Vec<RunSummary>),
    ReplayLoaded {
        generation: u64,
        result: Result<Vec<EngineEvent>, String>,
    },
    ScenariosLoaded(Vec<DemoEntry>),
    /// A run as Markdown, to copy.
    ExportReady {
        run_id: i64,
        result: Result<String, String>,
    },
    /// Two stored runs to compare.
    CompareLoaded {
        a: i64,
        b: i64,
        result: Result<(Arc<RunTrace>, Arc<RunTrace>), String>,
    },
    /// A run's stored trace, asked for by a detail popup.
    TraceLoaded {
        run_id: i64,
        result: Result<Arc<RunTrace>, String>,
    },
    /// Start this demo now (from `diagraph demo FILE` or the picker).
    StartDemo(DemoEntry),
    /// The process was told to stop (SIGTERM, SIGHUP: the terminal went
    /// away): quit without asking, a live run ending CANCELLED.
    Terminate,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    StartRun {
        generation: u64,
        question: String,
        /// The engine waits before each node (step mode).
        stepping: bool,
    },
    StartDemo {
        generation: u64,
        path: PathBuf,
    },
    LoadReplay {
        generation: u64,
        run_id: i64,
    },
    /// Watch a run that is still running elsewhere (another process on
    /// the database, or the server the TUI follows) as it goes.
    FollowRun {
        generation: u64,
        run_id: i64,
    },
    Step(StepCommand),
    /// Stop the live run: it ends CANCELLED with its events saved.
    Cancel,
    LoadRuns,
    /// Read the page of stored runs older than `before` that match
    /// `filter` (`RunsPage`).
    LoadRunsPage {
        filter: String,
        before: Option<i64>,
    },
    ListScenarios,
    /// Read a run's stored trace (prompts, responses, reasoning).
    LoadTrace {
        run_id: i64,
    },
    /// Render a stored run as Markdown and copy it (`ExportReady`).
    CopyExport {
        run_id: i64,
    },
    /// Read two stored runs to compare (`CompareLoaded`).
    LoadCompare {
        a: i64,
        b: i64,
    },
    /// Put text on the terminal's clipboard (OSC 52).
    Copy(String),
    Quit,
}

/// Applies one message to the state; returns what the runtime must do.
pub fn update(state: &mut AppState, msg: Msg) -> Vec<Command> {
    // What can move the runs list or its selection (a key, the wheel, a
    // page, a filter) may bring its end into view; engine events, deltas
    // and ticks, which come in floods, cannot.
    let moves_runs = matches!(
        msg,
        Msg::Key(_)
            | Msg::Mouse(_)
            | Msg::Paste(_)
            | Msg::RunsPage { .. }
            | Msg::RunsLoaded(_)
            | Msg::RunsChanged(_)
    );
    let mut commands = apply(state, msg);
    if moves_runs {
        commands.extend(runs_pages::more(state));
    }
    commands
}

fn apply(state: &mut AppState, msg: Msg) -> Vec<Command> {
    match msg {
        Msg::Key(key) if key.kind != KeyEventKind::Release => input::on_key(state, key),
        Msg::Key(_) => vec![],
        Msg::Paste(text) => {
            input::on_paste(state, &text);
            vec![]
        }
        Msg::Mouse(ev) => mouse::on_mouse(state, ev),
        Msg::Resize(w, h) => {
            state.screen = (w, h);
            vec![]
        }
        Msg::Engine { generation, event } => {
            events::on_engine_event(state, generation, *event);
            vec![]
        }
        Msg::Delta { generation, delta } => {
            events::on_delta(state, generation, &delta);
            vec![]
        }
        Msg::SourceDone { generation, error } => {
            events::on_source_done(state, generation, error);
            vec![]
        }
        Msg::Tick { now_ms } => {
            state.clock_ms = state.clock_ms.max(now_ms);
            vec![]
        }
        Msg::RunsLoaded(Ok(rows)) => {
            events::on_runs_loaded(state, rows);
            vec![]
        }
        Msg::RunsLoaded(Err(e)) => {
            state.runs_error = Some(e);
            vec![]
        }
        Msg::RunsPage { filter, result } => {
            runs_pages::on_page(state, &filter, result);
            vec![]
        }
        Msg::RunsChanged(rows) => {
            events::on_runs_changed(state, rows);
            vec![]
        }
        Msg::ReplayLoaded { generation, result } => {
            events::on_replay_loaded(state, generation, result);
            vec![]
        }
        Msg::ScenariosLoaded(loaded) => events::on_scenarios_loaded(state, loaded),
        Msg::StartDemo(entry) => actions::start_demo(state, entry),
        Msg::Terminate => actions::terminate(state),
        Msg::ExportReady { run_id, result } => events::on_export_ready(state, run_id, result),
        Msg::CompareLoaded { a, b, result } => {
            events::on_compare_loaded(state, a, b, result);
            vec![]
        }
        Msg::TraceLoaded { run_id, result } => {
            events::on_trace(state, run_id, result);
            vec![]
        }
    }
}

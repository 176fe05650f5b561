//! Application state for the Elm-style loop: [`AppState`] is changed only
//! by [`crate::tui::update::update`], and the view reads it without
//! mutating it.
//!
//! The shown run is a [`Shown`]: its events plus a cursor. A live run keeps
//! the cursor at the end; a replay moves it. The `RunView` is always
//! `fold(events[..cursor])`. Engine events carry the generation of the run
//! that sent them, and events of a generation that is no longer shown are
//! dropped, so a stale run can never overwrite a newer one.

pub mod run_view;

pub use run_view::{RunView, TransitionRow};

use crate::tui::keymap::{Context, Keymap};
use crate::tui::theme::Theme;
use crate::vocab::events::EngineEvent;
use crate::vocab::run::RunSummary;
use ratatui::text::Line;
use ratatui_textarea::TextArea;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Runs,
    Graph,
    Transitions,
    Tools,
    Bindings,
    Verdict,
    Answer,
    Input,
}

impl Pane {
    pub const CYCLE: [Pane; 8] = [
        Pane::Input,
        Pane::Runs,
        Pane::Graph,
        Pane::Transitions,
        Pane::Tools,
        Pane::Bindings,
        Pane::Verdict,
        Pane::Answer,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Pane::Runs => "Runs",
            Pane::Graph => "Graph",
            Pane::Transitions => "Transitions",
            Pane::Tools => "Tool invocations",
            Pane::Bindings => "Gatekeeper bindings",
            Pane::Verdict => "Verdict",
            Pane::Answer => "Answer",
            Pane::Input => "Question",
        }
    }

    /// Panes that share the table area on narrow terminals.
    pub fn is_table(self) -> bool {
        matches!(
            self,
            Pane::Runs | Pane::Transitions | Pane::Tools | Pane::Bindings
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Live,
    Replay,
    Demo,
}

impl Mode {
    pub fn label(self) -> &'static str {
        match self {
            Mode::Live => "LIVE",
            Mode::Replay => "REPLAY",
            Mode::Demo => "DEMO",
        }
    }
}

/// The run on screen: its events and how many of them are applied.
#[derive(Debug, Clone, Default)]
pub struct Shown {
    /// Generation of the source feeding this run; stale events are dropped.
    pub generation: u64,
    pub events: Vec<EngineEvent>,
    pub cursor: usize,
    /// The live end follows new events; a replay cursor stays put.
    pub follow: bool,
    pub view: RunView,
    /// The engine waits at a step gate before each node.
    pub stepping: bool,
    /// Error reported by the source (engine or store), code-made text.
    pub error: Option<String>,
    /// The source has ended (its task is done, whatever it sent).
    pub done: bool,
    /// The run executes elsewhere (another process, or the server this
    /// TUI follows) and was opened here only to watch: leaving it stops
    /// nothing.
    pub watched: bool,
}

impl Shown {
    pub fn seek(&mut self, k: usize) {
        let k = k.min(self.events.len());
        if k >= self.cursor {
            for e in self.events.get(self.cursor..k).unwrap_or_default() {
                self.view.apply(e);
            }
        } else {
            self.view = RunView::fold(self.events.get(..k).unwrap_or_default());
        }
        self.cursor = k;
    }
}

/// One row of the demo picker.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoEntry {
    pub path: PathBuf,
    pub name: String,
    pub description: String,
    pub question: String,
    /// The file did not load; the message names the problem.
    pub error: Option<String>,
}

/// What a yes/no question does when answered yes. Each one would stop
/// the live run, which then ends CANCELLED.
#[derive(Debug, Clone, PartialEq)]
pub enum Pending {
    Quit,
    Ask { question: String, stepping: bool },
    Replay(i64),
    Demo(DemoEntry),
}

impl Pending {
    pub fn prompt(&self, run_id: Option<i64>) -> String {
        let run = run_id.map_or_else(|| "The run".to_string(), |id| format!("Run {id}"));
        let what = match self {
            Pending::Quit => "Quit and cancel it?",
            Pending::Ask { .. } => "Cancel it and ask the new question?",
            Pending::Replay(_) => "Cancel it and open the other run?",
            Pending::Demo(_) => "Cancel it and start the demo?",
        };
        format!("{run} is still going. {what}")
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Popup {
    Help,
    /// A yes/no question before something that would stop the live run.
    Confirm(Pending),
    /// Highlighted JSON, computed once when opened.
    Detail {
        title: String,
        lines: Vec<Line<'static>>,
        scroll: u16,
    },
    DemoPicker {
        entries: Vec<DemoEntry>,
        selected: usize,
    },
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Selections {
    pub runs: usize,
    pub transitions: usize,
    pub tools: usize,
    pub bindings: usize,
    pub answer_scroll: u16,
    pub graph_scroll: u16,
}

pub struct AppState {
    pub mode: Mode,
    pub focus: Pane,
    /// The table pane shown when the layout has room for only one.
    pub table_pane: Pane,
    pub shown: Shown,
    pub next_generation: u64,
    pub runs: Vec<RunSummary>,
    pub runs_error: Option<String>,
    /// Events of runs finished in this session, replayable without a store.
    pub local_events: BTreeMap<i64, Vec<EngineEvent>>,
    pub filter: String,
    pub filter_editing: bool,
    pub sel: Selections,
    pub popup: Option<Popup>,
    pub input: TextArea<'static>,
    pub history: Vec<String>,
    /// Position while browsing history (None: editing a fresh line).
    pub history_pos: Option<usize>,
    /// Ask the next live question in step mode.
    pub step_live: bool,
    pub keymap: Keymap,
    pub theme: Theme,
    pub model_label: String,
    pub db_label: String,
    /// Scenario description shown in demo mode.
    pub demo: Option<DemoEntry>,
    /// Wall-clock milliseconds the shown live run has been going (ticks).
    pub live_elapsed_ms: u64,
    /// Last notice for the status line (errors, hints); code-made.
    pub notice: Option<String>,
    pub quit: bool,
}

impl AppState {
    pub fn new(theme: Theme, keymap: Keymap, model_label: &str, db_label: &str) -> AppState {
        let mut input = TextArea::default();
        input.set_placeholder_text(
            "Ask a question, e.g. why is payment-service slow?  (Enter runs it)",
        );
        AppState {
            mode: Mode::Live,
            focus: Pane::Input,
            table_pane: Pane::Tools,
            shown: Shown {
                follow: true,
                ..Shown::default()
            },
            next_generation: 1,
            runs: Vec::new(),
            runs_error: None,
            local_events: BTreeMap::new(),
            filter: String::new(),
            filter_editing: false,
            sel: Selections::default(),
            popup: None,
            input,
            history: Vec::new(),
            history_pos: None,
            step_live: false,
            keymap,
            theme,
            model_label: model_label.to_string(),
            db_label: db_label.to_string(),
            demo: None,
            live_elapsed_ms: 0,
            notice: None,
            quit: false,
        }
    }

    pub fn view(&self) -> &RunView {
        &self.shown.view
    }

    /// A run started here is still going: stopping it must be asked for.
    pub fn run_live(&self) -> bool {
        self.shown.generation != 0
            && self.mode != Mode::Replay
            && !self.shown.watched
            && !self.shown.done
            && self.shown.view.finished.is_none()
    }

    /// The keymap contexts active now, the most specific first.
    pub fn contexts(&self) -> Vec<Context> {
        let mut c = Vec::with_capacity(4);
        match &self.popup {
            Some(Popup::Confirm(_)) => return vec![Context::Confirm],
            Some(_) => c.push(Context::Popup),
            None => {}
        }
        // Stopping a live run is the key that must always be in sight.
        if self.run_live() {
            c.push(Context::Running);
        }
        if self.shown.stepping && self.shown.view.finished.is_none() {
            c.push(Context::Step);
        }
        if self.mode == Mode::Replay {
            c.push(Context::Replay);
        }
        c.push(Context::Global);
        c
    }

    /// Starts showing a new source and returns its generation; anything
    /// still arriving from the previous one is dropped from now on.
    pub fn begin(&mut self, mode: Mode, follow: bool, stepping: bool) -> u64 {
        let generation = self.next_generation;
        self.next_generation += 1;
        self.mode = mode;
        self.shown = Shown {
            generation,
            follow,
            stepping,
            ..Shown::default()
        };
        self.sel = Selections::default();
        self.live_elapsed_ms = 0;
        generation
    }

    /// Runs matching the filter (case-insensitive substring of id, status,
    /// verdict, session or question).
    pub fn filtered_runs(&self) -> Vec<&RunSummary> {
        let needle = self.filter.to_lowercase();
        self.runs
            .iter()
            .filter(|r| {
                needle.is_empty()
                    || r.run_id.to_string().contains(&needle)
                    || r.status.as_str().to_lowercase().contains(&needle)
                    || r.session_id.to_lowercase().contains(&needle)
                    || r.question.to_lowercase().contains(&needle)
                    || r.effective_verdict
                        .is_some_and(|v| v.as_str().to_lowercase().contains(&needle))
            })
            .collect()
    }
}

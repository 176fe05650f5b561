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
pub mod timeline;

pub use run_view::{RunView, TransitionRow};

use crate::tui::keymap::{Action, Context, Keymap};
use crate::tui::theme::Theme;
use crate::vocab::events::EngineEvent;
use crate::vocab::run::RunSummary;
use crate::vocab::run_trace::RunTrace;
use ratatui::text::Line;
use ratatui_textarea::TextArea;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The smallest screen the workbench draws on (below it, the view says
/// so); a new state assumes it until the first resize.
pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Runs,
    Graph,
    Transitions,
    Tools,
    Bindings,
    Timeline,
    Verdict,
    Answer,
    Input,
}

impl Pane {
    pub const CYCLE: [Pane; 9] = [
        Pane::Input,
        Pane::Runs,
        Pane::Graph,
        Pane::Transitions,
        Pane::Tools,
        Pane::Bindings,
        Pane::Timeline,
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
            Pane::Timeline => "Timeline",
            Pane::Verdict => "Verdict",
            Pane::Answer => "Answer",
            Pane::Input => "Question",
        }
    }

    /// Panes that share the table area on narrow terminals.
    pub fn is_table(self) -> bool {
        matches!(
            self,
            Pane::Runs | Pane::Transitions | Pane::Tools | Pane::Bindings | Pane::Timeline
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
    /// The screen clock (`AppState::clock_ms`) when the newest event
    /// arrived: the run's work clock has gone on from that event's time
    /// by as much as the screen clock has since.
    pub synced_at: Option<u64>,
    /// The screen clock when the engine began waiting at the step gate
    /// for the person to advance; that wait is not work, and is shown
    /// apart.
    pub waiting_since: Option<u64>,
}

impl Shown {
    /// The events applied so far (a replay: up to its cursor).
    pub fn applied(&self) -> &[EngineEvent] {
        self.events.get(..self.cursor).unwrap_or_default()
    }

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

/// How long a status notice stays on the status line.
pub const NOTICE_MS: u64 = 4_000;

/// A status-line notice ("copied…", "cancelling run 3…"): code-made text
/// and, unless it must stay, the screen-clock time it expires at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub text: String,
    pub until_ms: Option<u64>,
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

/// What a detail popup is about, so it can be rebuilt when the stored
/// run arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// The k-th node attempt of the run (0-based, in the order entered).
    Node(usize),
    Verdict,
    Answer,
}

/// The stored run (`RunTrace`: prompts, responses, reasoning), as far as
/// the TUI has it.
#[derive(Debug, Clone, PartialEq)]
pub enum StoredRun {
    Loading,
    Loaded(Arc<RunTrace>),
    /// Why it could not be read (no database, unknown run...).
    Missing(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Popup {
    /// Keys (from the keymap) and the glyph legend, scrolled by `scroll`.
    Help { scroll: u16 },
    /// A yes/no question before something that would stop the live run.
    Confirm(Pending),
    /// Highlighted JSON, computed once when opened.
    Detail {
        title: String,
        lines: Vec<Line<'static>>,
        scroll: u16,
        /// The run and what of it, when the lines depend on its stored
        /// trace (rebuilt when that arrives).
        subject: Option<(i64, Subject)>,
    },
    /// Opens at once, also before the scenario list has loaded: keys
    /// pressed meanwhile wait in `queued` and apply when it arrives.
    DemoPicker {
        entries: Vec<DemoEntry>,
        selected: usize,
        /// The first scenario drawn: kept, as a table's first row is, so
        /// a click picks the scenario under it without the list moving.
        top: usize,
        loading: bool,
        queued: Vec<Action>,
    },
}

/// The selected row of each table, and the first row each shows: the
/// scroll is state, not recomputed from the selection at each frame, so
/// what is drawn and what a click hits agree, and a click or the wheel
/// never makes the view jump.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Selections {
    pub runs: usize,
    pub transitions: usize,
    pub tools: usize,
    pub bindings: usize,
    /// First drawn row of each table (the runs list, transitions, tools,
    /// bindings), counting every row drawn (a group heading, the running
    /// node's row). The view moves it only as far as it must to keep the
    /// selection in sight.
    pub tops: [usize; 4],
    pub answer_scroll: u16,
    pub graph_scroll: u16,
    pub verdict_scroll: u16,
}

impl Selections {
    fn table_index(pane: Pane) -> Option<usize> {
        match pane {
            Pane::Runs => Some(0),
            Pane::Transitions => Some(1),
            Pane::Tools => Some(2),
            Pane::Bindings => Some(3),
            _ => None,
        }
    }

    /// The selected row of a table pane (0 for other panes).
    pub fn selected(&self, pane: Pane) -> usize {
        match pane {
            Pane::Runs => self.runs,
            Pane::Transitions => self.transitions,
            Pane::Tools => self.tools,
            Pane::Bindings => self.bindings,
            _ => 0,
        }
    }

    pub fn select(&mut self, pane: Pane, row: usize) {
        match pane {
            Pane::Runs => self.runs = row,
            Pane::Transitions => self.transitions = row,
            Pane::Tools => self.tools = row,
            Pane::Bindings => self.bindings = row,
            _ => {}
        }
    }

    /// The first row a table pane was last drawn from (0 for other panes).
    pub fn top(&self, pane: Pane) -> usize {
        Selections::table_index(pane).map_or(0, |i| self.tops[i])
    }

    pub fn set_top(&mut self, pane: Pane, top: usize) {
        if let Some(i) = Selections::table_index(pane) {
            self.tops[i] = top;
        }
    }
}

/// The runs list reads the store a page at a time, newest first: the
/// whole history is listed below `floor`'s run, and a filter reads its
/// matches further down.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunsPages {
    /// Every stored run newer than this one is listed (None: no page read
    /// from a store yet, or the store holds no runs).
    pub floor: Option<i64>,
    /// The filter whose matches below the floor are being read, and the
    /// oldest of them listed so far.
    pub search: Option<(String, Option<i64>)>,
    /// The filter whose every stored match is listed ("": all runs).
    pub complete: Option<String>,
    /// How many stored runs match a filter ("": all runs), as last counted.
    pub total: Option<(String, u64)>,
    /// A page is being read.
    pub pending: bool,
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
    /// How much of the stored history the runs list holds.
    pub runs_pages: RunsPages,
    /// Events of runs finished in this session, replayable without a store.
    pub local_events: BTreeMap<i64, Vec<EngineEvent>>,
    /// Stored traces of the shown run, loaded when a detail needs them.
    pub traces: BTreeMap<i64, StoredRun>,
    pub filter: String,
    pub filter_editing: bool,
    pub sel: Selections,
    /// The focused pane fills the body (toggled by the zoom key).
    pub zoom: bool,
    /// A run marked in the runs list to compare with the next one.
    pub compare_mark: Option<i64>,
    /// The terminal's size (columns, rows), for what depends on it
    /// outside drawing: how far a popup can scroll.
    pub screen: (u16, u16),
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
    /// The scenario list as last loaded, for the demo picker.
    pub scenarios: Option<Vec<DemoEntry>>,
    /// The screen clock: wall-clock milliseconds since the workbench
    /// started, advanced by ticks while a run is going on.
    pub clock_ms: u64,
    /// Last notice for the status line (errors, hints); code-made.
    pub notice: Option<Notice>,
    pub quit: bool,
    pub timeline: timeline::TimelineState,
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
            // Before any run the runs list is the table worth showing.
            table_pane: Pane::Runs,
            shown: Shown {
                follow: true,
                ..Shown::default()
            },
            next_generation: 1,
            runs: Vec::new(),
            runs_error: None,
            runs_pages: RunsPages::default(),
            local_events: BTreeMap::new(),
            traces: BTreeMap::new(),
            filter: String::new(),
            filter_editing: false,
            sel: Selections::default(),
            zoom: false,
            compare_mark: None,
            screen: (MIN_WIDTH, MIN_HEIGHT),
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
            scenarios: None,
            clock_ms: 0,
            notice: None,
            quit: false,
            timeline: timeline::TimelineState::default(),
        }
    }

    pub fn view(&self) -> &RunView {
        &self.shown.view
    }

    /// Opens the demo picker now, with the scenarios known so far.
    pub fn open_demo_picker(&mut self) {
        self.popup = Some(Popup::DemoPicker {
            entries: self.scenarios.clone().unwrap_or_default(),
            selected: 0,
            top: 0,
            loading: self.scenarios.is_none(),
            queued: Vec::new(),
        });
    }

    /// The pane drawn over the whole body, if one is zoomed.
    pub fn zoomed(&self) -> Option<Pane> {
        (self.zoom && self.focus != Pane::Input).then_some(self.focus)
    }

    /// The shown run is going on now (live here, or watched), so its
    /// clock runs: a replay stands still.
    pub fn clock_running(&self) -> bool {
        self.mode != Mode::Replay && !self.shown.done && self.shown.view.is_running()
    }

    /// The shown run's work clock now: while it goes on, the newest
    /// event's time plus what the screen clock has run since it arrived
    /// (standing still while the engine waits at the step gate); else
    /// the time of the last event applied, so a replay shows what the
    /// live run showed at that event.
    pub fn work_ms(&self) -> u64 {
        let v = &self.shown.view;
        if !self.clock_running() || self.shown.waiting_since.is_some() {
            return v.last_at_ms;
        }
        let since = self
            .shown
            .synced_at
            .map_or(0, |t| self.clock_ms.saturating_sub(t));
        v.last_at_ms.saturating_add(since)
    }

    /// The node running now and its work time so far.
    pub fn node_elapsed(&self) -> Option<(crate::vocab::graph::NodeId, u64)> {
        let v = &self.shown.view;
        if !v.is_running() {
            return None;
        }
        v.current
            .map(|n| (n, self.work_ms().saturating_sub(v.entered_at_ms)))
    }

    /// How long the engine has been waiting at the step gate for the
    /// person to advance, while it does.
    pub fn gate_wait_ms(&self) -> Option<u64> {
        let since = self.shown.waiting_since?;
        (self.clock_running() && self.shown.view.current.is_some())
            .then(|| self.clock_ms.saturating_sub(since))
    }

    /// A spinner frame that turns with the screen clock.
    pub fn spinner(&self) -> &'static str {
        const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
        FRAMES[(self.clock_ms / 125 % 10) as usize]
    }

    /// The status-line notice, unless it has expired.
    pub fn notice_text(&self) -> Option<&str> {
        self.notice
            .as_ref()
            .filter(|n| n.until_ms.is_none_or(|t| self.clock_ms < t))
            .map(|n| n.text.as_str())
    }

    /// Shows a notice that expires after a few seconds of the screen
    /// clock.
    pub fn notify(&mut self, text: impl Into<String>) {
        self.notice = Some(Notice {
            text: text.into(),
            until_ms: Some(self.clock_ms.saturating_add(NOTICE_MS)),
        });
    }

    /// Shows a notice that stays until something replaces it (an error
    /// the person must read).
    pub fn notify_sticky(&mut self, text: impl Into<String>) {
        self.notice = Some(Notice {
            text: text.into(),
            until_ms: None,
        });
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
            // Keys type while text is edited: only that context applies.
            None if self.filter_editing => return vec![Context::Filtering],
            None if self.focus == Pane::Input => return vec![Context::Typing],
            None if self.focus == Pane::Timeline => c.push(Context::Timeline),
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
        self.timeline.reset();
        self.mode = mode;
        self.shown = Shown {
            generation,
            follow,
            stepping,
            ..Shown::default()
        };
        self.sel = Selections::default();
        self.traces.clear();
        if self.table_pane == Pane::Runs {
            self.table_pane = Pane::Tools;
        }
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

//! The one event loop. A biased `select!` merges terminal input, app
//! messages (engine events, loaded data) and the frame deadline. Draws are
//! coalesced: a change marks the state dirty and the frame is drawn at most
//! once per `FRAME`, and when nothing changes nothing wakes the loop (the
//! clock that turns the spinner runs only while a live run is on screen).
//!
//! The loop is generic over its input and message streams and over the
//! backend, so tests drive it with scripted keys on a `TestBackend`.

use crate::tui::state::AppState;
use crate::tui::update::{Command, Msg, update};
use crate::tui::view::view;
use crossterm::event::{Event, MouseEventKind};
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use std::collections::HashMap;
use std::io;
use std::time::Duration;
use tokio::time::{Instant, sleep_until};

/// Frame coalescing interval while events stream in.
pub const FRAME: Duration = Duration::from_millis(16);
/// The live clock and spinner; it runs only while a live run is shown.
const CLOCK: Duration = Duration::from_millis(125);

#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    #[error("terminal input failed: {0}")]
    Input(io::Error),
    #[error("drawing failed: {0}")]
    Draw(String),
}

/// Counters for tests and the idle benchmark.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LoopStats {
    pub frames: u64,
    pub messages: u64,
    /// Times the select woke up, for any reason.
    pub wakeups: u64,
}

fn input_msg(ev: Event) -> Option<Msg> {
    match ev {
        Event::Key(k) => Some(Msg::Key(k)),
        Event::Resize(w, h) => Some(Msg::Resize(w, h)),
        Event::Paste(text) => Some(Msg::Paste(text)),
        // Moves and drags arrive by the hundred and change nothing: they
        // never wake a redraw.
        Event::Mouse(m)
            if matches!(
                m.kind,
                MouseEventKind::Down(_) | MouseEventKind::ScrollDown | MouseEventKind::ScrollUp
            ) =>
        {
            Some(Msg::Mouse(m))
        }
        _ => None,
    }
}

/// Runs until the state asks to quit or the input ends. `exec` performs
/// commands (start a run, load a replay...); results come back on `msgs`.
pub async fn event_loop<B, K, M, X>(
    terminal: &mut Terminal<B>,
    state: &mut AppState,
    mut input: K,
    mut msgs: M,
    mut exec: X,
) -> Result<LoopStats, LoopError>
where
    B: Backend,
    K: Stream<Item = io::Result<Event>> + Unpin,
    M: Stream<Item = Msg> + Unpin,
    X: FnMut(Command),
{
    let mut stats = LoopStats::default();
    let mut dirty = true;
    let mut last_draw = Instant::now() - FRAME;
    let mut input_open = true;
    let mut msgs_open = true;
    let mut started: HashMap<u64, Instant> = HashMap::new();
    let mut next_clock = Instant::now() + CLOCK;
    if let Ok(size) = terminal.size() {
        update(state, Msg::Resize(size.width, size.height));
    }
    loop {
        if state.quit {
            break;
        }
        let frame_due = last_draw + FRAME;
        let running = state.view().is_running() && started.contains_key(&state.shown.generation);
        let msg = tokio::select! {
            biased;
            ev = input.next(), if input_open => match ev {
                Some(Ok(ev)) => input_msg(ev),
                Some(Err(e)) => return Err(LoopError::Input(e)),
                None => { input_open = false; None }
            },
            _ = sleep_until(frame_due), if dirty => {
                terminal.draw(|f| view(state, f)).map_err(|e| LoopError::Draw(e.to_string()))?;
                stats.frames += 1;
                dirty = false;
                last_draw = Instant::now();
                None
            },
            m = msgs.next(), if msgs_open => match m {
                Some(m) => Some(m),
                None => { msgs_open = false; None }
            },
            _ = sleep_until(next_clock), if running => {
                next_clock = Instant::now() + CLOCK;
                let generation = state.shown.generation;
                started.get(&generation).map(|t0| Msg::Tick {
                    generation,
                    elapsed_ms: t0.elapsed().as_millis() as u64,
                })
            },
            else => break,
        };
        stats.wakeups += 1;
        let Some(msg) = msg else { continue };
        stats.messages += 1;
        for cmd in update(state, msg) {
            if let Command::StartRun { generation, .. } | Command::StartDemo { generation, .. } =
                &cmd
            {
                started.insert(*generation, Instant::now());
                next_clock = Instant::now() + CLOCK;
            }
            exec(cmd);
        }
        dirty = true;
    }
    // The last state is worth a frame: tests read it, and a quit key
    // arriving with other input should not leave a stale screen behind.
    if dirty {
        terminal
            .draw(|f| view(state, f))
            .map_err(|e| LoopError::Draw(e.to_string()))?;
        stats.frames += 1;
    }
    Ok(stats)
}

//! The one event loop. A biased `select!` merges terminal input, app
//! messages (engine events, loaded data) and the frame deadline. Draws are
//! coalesced: a change marks the state dirty and the frame is drawn at most
//! once per `FRAME`, and when nothing changes nothing wakes the loop (the
//! clock that turns the spinner runs only while a run going on is on
//! screen, wherever it runs; a notice wakes it once, when it expires).
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
use std::io;
use std::time::Duration;
use tokio::time::{Instant, sleep_until};

/// Frame coalescing interval while events stream in.
pub const FRAME: Duration = Duration::from_millis(16);
/// The live clock and spinner; it runs only while a running run is shown.
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
    let epoch = Instant::now();
    let now_ms = || u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
    let mut next_clock = Instant::now() + CLOCK;
    if let Ok(size) = terminal.size() {
        update(state, Msg::Resize(size.width, size.height));
    }
    loop {
        if state.quit {
            break;
        }
        let frame_due = last_draw + FRAME;
        let running = state.clock_running();
        // A notice that is shown wakes the loop once, when it expires.
        let notice_due = state
            .notice
            .as_ref()
            .and_then(|n| n.until_ms)
            .filter(|t| *t > state.clock_ms)
            .map(|t| epoch + Duration::from_millis(t));
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
                Some(Msg::Tick { now_ms: now_ms() })
            },
            _ = sleep_until(notice_due.unwrap_or(epoch)), if notice_due.is_some() => {
                Some(Msg::Tick { now_ms: now_ms() })
            },
            else => break,
        };
        stats.wakeups += 1;
        let Some(msg) = msg else { continue };
        stats.messages += 1;
        if !matches!(msg, Msg::Tick { .. }) {
            update(state, Msg::Tick { now_ms: now_ms() });
        }
        let was_running = running;
        for cmd in update(state, msg) {
            exec(cmd);
        }
        if !was_running && state.clock_running() {
            next_clock = Instant::now() + CLOCK;
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

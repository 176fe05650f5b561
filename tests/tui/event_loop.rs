//! The event loop, driven by scripted input on a TestBackend: it quits on
//! a key, coalesces a flood of engine events into few frames, and does not
//! wake up while nothing happens.

use crate::fixtures::{buffer_text, live_state, pass_run};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use diagraph::tui::runtime::event_loop::event_loop;
use diagraph::tui::update::{Command, Msg};
use futures::StreamExt;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::io;
use std::time::Duration;
use tokio::sync::mpsc;

fn keys_after(
    delay: Duration,
    keys: Vec<char>,
) -> impl futures::Stream<Item = io::Result<Event>> + Unpin {
    let (tx, mut rx) = mpsc::channel::<io::Result<Event>>(16);
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        for c in keys {
            let _ = tx
                .send(Ok(Event::Key(KeyEvent::new(
                    KeyCode::Char(c),
                    KeyModifiers::NONE,
                ))))
                .await;
        }
        // Keep the stream open, like a real terminal.
        std::future::pending::<()>().await;
    });
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx)).boxed()
}

#[tokio::test(start_paused = true)]
async fn idle_loop_does_not_wake_and_q_quits() {
    // A finished run on screen: nothing is live, so q quits without asking.
    let mut state = live_state(&pass_run(1));
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let (_tx, mut rx) = mpsc::channel::<Msg>(4);
    let msgs = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
    let mut commands = vec![];
    let stats = event_loop(
        &mut terminal,
        &mut state,
        keys_after(Duration::from_secs(30), vec!['q']),
        msgs,
        |c| commands.push(c),
    )
    .await
    .unwrap();
    assert_eq!(commands, vec![Command::Quit]);
    // First frame, the quit key, the final frame: nothing in the 30 idle seconds.
    assert!(stats.wakeups <= 3, "{stats:?}");
    assert_eq!(stats.messages, 1);
    assert_eq!(stats.frames, 2);
}

#[tokio::test(start_paused = true)]
async fn a_flood_of_events_is_coalesced_into_few_frames() {
    let events = pass_run(1);
    let mut state = live_state(&[]);
    let generation = state.shown.generation;
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let (tx, mut rx) = mpsc::channel::<Msg>(256);
    for e in &events {
        tx.send(Msg::Engine {
            generation,
            event: Box::new(e.clone()),
        })
        .await
        .unwrap();
    }
    let msgs = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
    let stats = event_loop(
        &mut terminal,
        &mut state,
        keys_after(Duration::from_secs(1), vec!['q']),
        msgs,
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(stats.messages as usize, events.len() + 1);
    assert!(stats.frames <= 4, "{stats:?}");
    let text = buffer_text(terminal.backend().buffer());
    assert!(text.contains("composer_completed"), "{text}");
    assert!(state.view().finished.is_some());
}

#[tokio::test(start_paused = true)]
async fn q_during_a_live_run_asks_and_y_cancels_then_quits() {
    let events = pass_run(1);
    // Half a run: it is still going.
    let mut state = live_state(&events[..events.len() / 2]);
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let (_tx, mut rx) = mpsc::channel::<Msg>(4);
    let msgs = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
    let mut commands = vec![];
    event_loop(
        &mut terminal,
        &mut state,
        keys_after(Duration::from_secs(1), vec!['q', 'n', 'q', 'y']),
        msgs,
        |c| commands.push(c),
    )
    .await
    .unwrap();
    // The first q was answered no; the second yes: cancel, then quit.
    assert_eq!(commands, vec![Command::Cancel, Command::Quit]);
    assert!(state.quit);
}

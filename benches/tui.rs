//! TUI benchmarks with printed figures (`cargo bench --bench tui`):
//! - frame render time for a run with 500 tool invocations and 50
//!   bindings at 200x60, the graph pane drawing its diagram (target
//!   <= 1 ms), `frame_render_us_p50`;
//! - time to the first frame with 10,000 runs listed (target <= 150 ms),
//!   `first_frame_ms`;
//! - from a key (or a click) to its frame drawn, `update` plus the draw,
//!   on that same run at 200x60: moving the selection, switching panes,
//!   opening and closing a detail (target <= 16 ms, one frame),
//!   `key_to_frame_us_p50` / `_p99`;
//! - frame render time with the Timeline tab zoomed over the body at
//!   200x60, 60 evidence rows (alerts and log counts of 120 buckets),
//!   the cursor moving every frame (target <= 1 ms),
//!   `timeline_frame_us_p50` / `_p99`;
//! - CPU used by the event loop idling for 2 s (target: near zero),
//!   `idle_cpu_percent`.

// A benchmark whose set-up fails should stop loudly, like a test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// The allocator the `diagraph` binary uses, so figures match the product.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

// The TUI tests' synthetic runs (test data, not in the library).
#[allow(dead_code)]
#[path = "../tests/tui/fixtures.rs"]
mod fixtures;

use diagraph::tui::keymap::Keymap;
use diagraph::tui::runtime::event_loop::event_loop;
use diagraph::tui::state::{AppState, Pane};
use diagraph::tui::theme::Theme;
use diagraph::tui::update::{Msg, update};
use diagraph::tui::view::view;
use diagraph::vocab::contracts::Verdict;
use diagraph::vocab::run::RunSummary;
use fixtures::{big_run, live_state};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::{Duration, Instant};

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or(0.0)
}

fn frame_render() {
    let events = big_run(1, 500, 50);
    let mut state = live_state(&events);
    state.focus = Pane::Tools;
    state.sel.tools = 250;
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    for _ in 0..20 {
        terminal.draw(|f| view(&state, f)).unwrap();
    }
    let screen = fixtures::buffer_text(terminal.backend().buffer());
    assert!(
        screen.contains("│evidence_retry│"),
        "the graph pane should draw its diagram at 200x60:\n{screen}"
    );
    let mut samples = Vec::new();
    for i in 0..500 {
        // Move the selection so every frame has real changes to diff.
        state.sel.tools = 200 + i % 100;
        let t0 = Instant::now();
        terminal.draw(|f| view(&state, f)).unwrap();
        samples.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    println!(
        "frame_render_us_p50={:.0}",
        percentile(samples.clone(), 0.5)
    );
    println!("frame_render_us_p99={:.0}", percentile(samples, 0.99));
}

fn timeline_frame() {
    let events = fixtures::timeline_run(1, 60);
    let mut state = live_state(&events);
    state.focus = Pane::Timeline;
    state.table_pane = Pane::Timeline;
    state.zoom = true;
    update(&mut state, Msg::Resize(200, 60));
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    for _ in 0..20 {
        terminal.draw(|f| view(&state, f)).unwrap();
    }
    let screen = fixtures::buffer_text(terminal.backend().buffer());
    assert!(
        screen.contains("Timeline (60)") && screen.contains("alert Alert"),
        "the timeline should be drawn with its rows:\n{screen}"
    );
    let right = Msg::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Right,
        crossterm::event::KeyModifiers::NONE,
    ));
    let mut samples = Vec::new();
    for i in 0..500 {
        // The cursor moves so every frame changes; the rows drawn change too.
        update(&mut state, right.clone());
        state.timeline.row = i % 60;
        let t0 = Instant::now();
        terminal.draw(|f| view(&state, f)).unwrap();
        samples.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    println!(
        "timeline_frame_us_p50={:.0}",
        percentile(samples.clone(), 0.5)
    );
    println!("timeline_frame_us_p99={:.0}", percentile(samples, 0.99));
}

fn key_latency() {
    use crossterm::event::{
        KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
    };
    let events = big_run(1, 500, 50);
    let mut state = live_state(&events);
    state.focus = Pane::Tools;
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    update(&mut state, Msg::Resize(200, 60));
    terminal.draw(|f| view(&state, f)).unwrap();
    let key = |c: KeyCode| Msg::Key(KeyEvent::new(c, KeyModifiers::NONE));
    // A click on the middle of the tools table (it selects a row there).
    let click = Msg::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: 40,
        row: 40,
        modifiers: KeyModifiers::NONE,
    });
    let script = [
        key(KeyCode::Char('j')),
        key(KeyCode::Char('j')),
        key(KeyCode::Char('k')),
        key(KeyCode::Enter),
        key(KeyCode::Esc),
        key(KeyCode::Tab),
        key(KeyCode::BackTab),
        click,
    ];
    let mut samples = Vec::new();
    for i in 0..800 {
        let msg = script[i % script.len()].clone();
        let t0 = Instant::now();
        update(&mut state, msg);
        terminal.draw(|f| view(&state, f)).unwrap();
        samples.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    println!(
        "key_to_frame_us_p50={:.0}",
        percentile(samples.clone(), 0.5)
    );
    println!("key_to_frame_us_p99={:.0}", percentile(samples, 0.99));
}

fn runs(n: i64) -> Vec<RunSummary> {
    (1..=n)
        .map(|i| RunSummary {
            rerun_of: None,
            run_id: i,
            session_id: format!("s-{}", i / 3),
            status: diagraph::vocab::run::RunStatus::Success,
            effective_verdict: Some(if i % 3 == 0 {
                Verdict::Pass
            } else {
                Verdict::LowConfid
            }),
            degraded: i % 7 == 0,
            duration_ms: Some(1200),
            question: format!("why is service-{i} slow since the last deploy?"),
            created_at: "2026-07-08T23:05:28Z".into(),
            tokens: 1500,
            cost_usd: None,
        })
        .collect()
}

fn first_frame() {
    let rows = runs(10_000);
    let t0 = Instant::now();
    let mut state = AppState::new(
        Theme::load("dark").unwrap(),
        Keymap::default(),
        "offline (rule-based)",
        "sqlite:bench.db",
    );
    update(&mut state, Msg::RunsLoaded(Ok(rows)));
    state.focus = Pane::Runs;
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    terminal.draw(|f| view(&state, f)).unwrap();
    println!("first_frame_ms={:.2}", t0.elapsed().as_secs_f64() * 1e3);
}

/// User + system CPU time of this process, from /proc/self/stat.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // USER_HZ is 100 on Linux.
    Some(Duration::from_millis(ticks * 10))
}

fn idle_cpu() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut state = live_state(&big_run(1, 50, 10));
        let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
        let (_tx, mut rx) = tokio::sync::mpsc::channel::<Msg>(4);
        let msgs = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
        let input = futures::stream::pending::<std::io::Result<crossterm::event::Event>>();
        let before = cpu_time();
        let wall = Instant::now();
        let idle = Duration::from_secs(2);
        let _ = tokio::time::timeout(
            idle,
            event_loop(&mut terminal, &mut state, input, msgs, |_| {}),
        )
        .await;
        let elapsed = wall.elapsed();
        match (before, cpu_time()) {
            (Some(b), Some(a)) => println!(
                "idle_cpu_percent={:.2}",
                (a - b).as_secs_f64() / elapsed.as_secs_f64() * 100.0
            ),
            _ => println!("idle_cpu_percent=unavailable (no /proc/self/stat)"),
        }
    });
}

fn main() {
    frame_render();
    timeline_frame();
    key_latency();
    first_frame();
    idle_cpu();
}

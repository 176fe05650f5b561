//! The Timeline tab: the shop pack's gateway-504 question run by the
//! offline model on a real store, drawn at three sizes (the connection
//! pool exhaustion on order-service starts before the 504 alert, and the
//! picture shows it), a run with a resolved alert, replay and live drawing
//! the same timeline (and the same as the stored run's), the cursor, zoom
//! and Enter on a row.

use crate::fixtures::{buffer_text, key, render};
use crate::helpers::{base_engine, pack_registry, shop_pack};
use crossterm::event::KeyCode;
use diagraph::engine::{Engine, RunRequest};
use diagraph::model::offline::OfflineModel;
use diagraph::report::timeline::{Axis, Cell, RowKind, Timeline, TimelineInput};
use diagraph::store::Store;
use diagraph::tui::keymap::Keymap;
use diagraph::tui::state::{AppState, Mode, Pane, Popup, RunView};
use diagraph::tui::theme::Theme;
use diagraph::tui::update::{Msg, update};
use diagraph::vocab::events::EngineEvent;
use std::sync::Arc;

const QUESTION_504: &str = "api-gateway 为什么一直返回 504？";

/// A question of the shop pack run by the offline model, recorded in a
/// SQLite store: the events as they were emitted live, and the store.
async fn stored_run(question: &str) -> (Vec<EngineEvent>, Store, i64, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("t.db").display());
    let store = Store::connect(&url).await.unwrap();
    let pack = shop_pack();
    let engine = Engine {
        model: Arc::new(OfflineModel::new()),
        tools: Arc::new(pack_registry(&pack)),
        catalog: Arc::new(pack.catalog()),
        ..base_engine(Arc::new(store.clone()))
    };
    let request = RunRequest {
        session_id: Some("timeline-session".into()),
        ..RunRequest::new(question)
    };
    let out = engine.run(request).await.unwrap();
    (fixed_times(out.events), store, out.run_id, dir)
}

fn state_with(events: &[EngineEvent], mode: Mode) -> AppState {
    let mut state = AppState::new(Theme::dark(), Keymap::default(), "offline", "sqlite:t.db");
    let generation = state.begin(mode, mode == Mode::Live, false);
    if mode == Mode::Live {
        for e in events {
            update(
                &mut state,
                Msg::Engine {
                    generation,
                    event: Box::new(e.clone()),
                },
            );
        }
    } else {
        state.shown.events = events.to_vec();
        state.shown.seek(events.len());
    }
    state.focus = Pane::Timeline;
    state.table_pane = Pane::Timeline;
    state
}

/// The Timeline tab's cells as drawn at `w`x`h`, below its tab line
/// (whose counts of the runs list are not the timeline's).
fn pane_text(state: &AppState, w: u16, h: u16) -> String {
    let term = render(state, w, h);
    let areas =
        diagraph::tui::view::screen_areas(state, ratatui::layout::Rect::new(0, 0, w, h)).unwrap();
    let r = areas
        .rect_of(Pane::Timeline)
        .expect("the timeline is drawn");
    let buf = term.backend().buffer();
    let mut out = String::new();
    for y in r.y + 1..r.y + r.height {
        for x in r.x..r.x + r.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// Events with their times made fixed, so a snapshot does not depend on
/// how fast this machine ran the engine.
fn fixed_times(mut events: Vec<EngineEvent>) -> Vec<EngineEvent> {
    for e in &mut events {
        e.at_ms = u64::from(e.seq) * 10;
    }
    events
}

fn timeline_of(view: &RunView) -> Timeline {
    Timeline::build(&TimelineInput::from_invocations(
        &view.question,
        &view.invocations,
        view.gatekeeper.as_deref(),
    ))
    .expect("a timeline")
}

#[tokio::test]
async fn the_504_question_shows_the_pool_exhaustion_before_the_alert() {
    let (events, store, run_id, _dir) = stored_run(QUESTION_504).await;
    let live = state_with(&events, Mode::Live);
    let t = timeline_of(live.view());
    // The 504 alert's row, and the order-service pool errors before it.
    let alert = t
        .rows
        .iter()
        .find(|r| r.label.contains("HighErrorRate"))
        .expect("the 504 alert");
    let RowKind::Alert { start, .. } = alert.kind else {
        panic!("{alert:?}")
    };
    let pool = t
        .rows
        .iter()
        .find(|r| {
            r.service.as_deref() == Some("order-service") && matches!(r.kind, RowKind::Logs { .. })
        })
        .expect("order-service's log row");
    let a = Axis::full(&t, 100);
    let first_pool = t
        .cells(pool, &a)
        .iter()
        .position(|c| matches!(c, Cell::Level(_)));
    let alert_col = a.column_of(start).unwrap();
    assert!(
        first_pool.is_some_and(|c| c < alert_col),
        "pool errors from column {first_pool:?}, the alert at {alert_col}"
    );
    // Rows of the question's subject come first.
    assert!(t.rows[0].subject, "{:?}", t.rows[0]);
    for (w, h) in [(80, 24), (120, 40), (200, 50)] {
        let term = render(&live, w, h);
        insta::assert_snapshot!(format!("timeline_504_{w}x{h}"), term.backend());
        let text = buffer_text(term.backend().buffer());
        assert!(text.contains("Timeline"), "{text}");
        assert!(text.contains('A'), "{text}");
    }
    // The whole width when zoomed.
    let mut zoomed = live;
    zoomed.zoom = true;
    insta::assert_snapshot!(
        "timeline_504_200x50_zoomed",
        render(&zoomed, 200, 50).backend()
    );

    // Replay from the store draws what live drew, and so does the stored run.
    let replayed = state_with(
        &fixed_times(store.load_events(run_id).await.unwrap()),
        Mode::Replay,
    );
    let trace = store.run_trace(run_id).await.unwrap();
    let stored = Timeline::build(&TimelineInput::from_trace(&trace)).unwrap();
    assert_eq!(timeline_of(replayed.view()), t);
    assert_eq!(stored, t);
    let live = state_with(&events, Mode::Live);
    for (w, h) in [(80, 24), (120, 40), (200, 50)] {
        assert_eq!(
            pane_text(&live, w, h),
            pane_text(&replayed, w, h),
            "{w}x{h}"
        );
    }
    // Mid-way, replay draws what live drew after as many events.
    let k = events.len() / 2;
    let mut half = state_with(&events[..k], Mode::Live);
    let mut mid = replayed;
    mid.shown.seek(k);
    half.focus = Pane::Timeline;
    assert_eq!(pane_text(&half, 120, 40), pane_text(&mid, 120, 40));
    store.close().await;
}

#[tokio::test]
async fn a_run_with_a_resolved_alert() {
    let (events, store, _, _dir) =
        stored_run("user-service pod restarted, PodRestarting alert: why?").await;
    let state = state_with(&events, Mode::Live);
    let t = timeline_of(state.view());
    let resolved = t
        .rows
        .iter()
        .find(|r| {
            matches!(
                r.kind,
                RowKind::Alert {
                    state: diagraph::report::timeline::AlertState::Resolved,
                    ..
                }
            )
        })
        .expect("the resolved alert's row");
    let RowKind::Alert { end, .. } = resolved.kind else {
        unreachable!()
    };
    assert_eq!(end, None, "a resolved alert states no end");
    for (w, h) in [(80, 24), (120, 40), (200, 50)] {
        insta::assert_snapshot!(
            format!("timeline_resolved_{w}x{h}"),
            render(&state, w, h).backend()
        );
    }
    store.close().await;
}

#[tokio::test]
async fn the_cursor_moves_in_time_zooms_and_enter_opens_the_evidence() {
    let (events, store, _, _dir) = stored_run(QUESTION_504).await;
    let mut state = state_with(&events, Mode::Live);
    update(&mut state, Msg::Resize(120, 40));
    let t = timeline_of(state.view());
    let before = state.timeline.cursor_us(&t);
    update(&mut state, key(KeyCode::Right));
    update(&mut state, key(KeyCode::Right));
    assert!(state.timeline.cursor_us(&t) > before);
    update(&mut state, key(KeyCode::Left));
    let step = state.timeline.cursor_us(&t);
    assert!(step > before && step < before + (t.end - t.start).num_microseconds().unwrap() / 10);
    update(
        &mut state,
        Msg::Key(crossterm::event::KeyEvent::new(
            KeyCode::Char('+'),
            crossterm::event::KeyModifiers::NONE,
        )),
    );
    assert_eq!(state.timeline.zoom, 1);
    let text = buffer_text(render(&state, 120, 40).backend().buffer());
    assert!(text.contains("zoom ×2"), "{text}");
    // The readout names the cursor's time and what the selected row holds.
    assert!(
        text.contains("matching lines") || text.contains("since"),
        "{text}"
    );
    update(&mut state, key(KeyCode::Down));
    assert_eq!(state.timeline.row, 1);
    update(&mut state, key(KeyCode::Enter));
    let Some(Popup::Detail { title, .. }) = &state.popup else {
        panic!("no detail: {:?}", state.popup.is_some())
    };
    assert!(title.contains("invocation"), "{title}");
    store.close().await;
}

#[test]
fn many_rows_scroll_with_the_selection() {
    let mut state = crate::fixtures::live_state(&crate::fixtures::timeline_run(1, 60));
    state.focus = Pane::Timeline;
    state.table_pane = Pane::Timeline;
    update(&mut state, Msg::Resize(120, 40));
    for _ in 0..70 {
        update(&mut state, key(KeyCode::Down));
    }
    assert_eq!(
        state.timeline.row, 59,
        "the selection stops at the last row"
    );
    assert!(state.timeline.top > 0, "the rows scrolled");
    let text = buffer_text(render(&state, 120, 40).backend().buffer());
    assert!(text.contains("Timeline (60)"), "{text}");
    // The question's subject (svc-3) leads.
    let t = timeline_of(state.view());
    assert_eq!(t.rows[0].service.as_deref(), Some("svc-3"));
}

//! A year of runs in the runs list: 100,000 stored runs, read a page at a
//! time as the selection goes down, down to the oldest; the title says
//! how many there are; the filter finds the oldest run in the store.

use crate::fixtures::{buffer_text, idle_state, key, render};
use crossterm::event::KeyCode;
use diagraph::store::Store;
use diagraph::tui::runtime::effects::read_runs_page;
use diagraph::tui::state::{AppState, Pane};
use diagraph::tui::update::{Command, Msg, update};

const RUNS: i64 = 100_000;
const OLDEST_QUESTION: &str = "why did ledger-db stop accepting writes?";

/// A store holding `RUNS` finished runs, written straight into the table
/// (the recorder would take minutes): run 1 asks `OLDEST_QUESTION`.
async fn year_of_runs(dir: &tempfile::TempDir) -> Store {
    let path = dir.path().join("runs.db");
    let url = format!("sqlite:{}", path.display());
    let store = Store::connect(&url).await.unwrap();
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::query(
        "INSERT INTO chat_session (session_id, title, created_at, updated_at) \
         VALUES ('s', 't', 0, 0)",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) \
         INSERT INTO diagnosis_run (id, session_id, status, query, effective_verdict, \
         total_duration_ms, created_at, updated_at, finished_at) \
         SELECT i, 's', 'SUCCESS', \
         CASE WHEN i = 1 THEN ? ELSE 'why is svc-' || (i % 97) || ' slow?' END, \
         'PASS', 40, 1700000000000 + i * 1000, 1700000000000 + i * 1000, \
         1700000000000 + i * 1000 FROM n",
    )
    .bind(RUNS)
    .bind(OLDEST_QUESTION)
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    store
}

/// Feeds `msg` to the state, then does what the runtime would do with
/// every page it asks for, until it asks for none.
async fn settle(state: &mut AppState, store: &Store, msg: Msg) -> usize {
    let mut reads = 0;
    let mut pending = vec![msg];
    while let Some(msg) = pending.pop() {
        for command in update(state, msg) {
            if let Command::LoadRunsPage { filter, before } = command {
                reads += 1;
                let result = read_runs_page(store, &filter, before).await;
                pending.push(Msg::RunsPage { filter, result });
            }
        }
    }
    reads
}

/// The workbench as it opens on the store: its first page read.
async fn opened(store: &Store) -> AppState {
    let mut state = idle_state();
    state.focus = Pane::Runs;
    let result = read_runs_page(store, "", None).await;
    settle(
        &mut state,
        store,
        Msg::RunsPage {
            filter: String::new(),
            result,
        },
    )
    .await;
    state
}

fn selected(state: &AppState) -> Option<i64> {
    state.filtered_runs().get(state.sel.runs).map(|r| r.run_id)
}

#[tokio::test]
async fn the_runs_list_reaches_the_oldest_of_100k_runs_and_the_filter_finds_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = year_of_runs(&dir).await;

    let mut state = opened(&store).await;
    assert!(state.runs.len() < 1_000, "one page, not the history");
    let screen = buffer_text(render(&state, 140, 40).backend().buffer());
    assert!(
        screen.contains(&format!("of {RUNS})")),
        "the title counts the stored runs:\n{screen}"
    );

    // End goes to the last listed run, which reads the next page; pressed
    // until it stays put, it reaches the oldest run of all.
    let mut presses = 0;
    loop {
        let before = selected(&state);
        settle(&mut state, &store, key(KeyCode::End)).await;
        presses += 1;
        if selected(&state) == before {
            break;
        }
        assert!(presses < 1_000, "End never reached the end");
    }
    assert_eq!(selected(&state), Some(1), "the oldest run is selected");
    assert_eq!(state.runs.len(), RUNS as usize, "every run listed once");
    let screen = buffer_text(render(&state, 140, 40).backend().buffer());
    assert!(screen.contains(&format!("Runs ({RUNS})")), "{screen}");

    // A fresh workbench: the filter searches the store, not the page.
    let mut state = opened(&store).await;
    settle(&mut state, &store, key(KeyCode::Char('/'))).await;
    let mut reads = 0;
    for c in "ledger-db".chars() {
        reads += settle(&mut state, &store, key(KeyCode::Char(c))).await;
    }
    assert!(reads > 0, "the filter read the store");
    let found: Vec<i64> = state.filtered_runs().iter().map(|r| r.run_id).collect();
    assert_eq!(found, [1]);
    assert!(
        state.runs.len() < 2_000,
        "the filter read its matches, not the history ({} runs listed)",
        state.runs.len()
    );
}

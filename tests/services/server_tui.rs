//! The workbench following a server (`diagraph --server URL`), without a
//! terminal: the TUI's own `update` and effects, with the server's runs
//! list and event streams as their source. A second engineer opens a run
//! someone else started over the API and watches it live to its end
//! (watching stops nothing, so nothing is asked); a question asked in the
//! TUI runs on the server, and its cancel key cancels it there. Without a
//! server, a run another process executes is watched from the database.

use crate::server_support::{HeldModel, TestServer, start_run};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use diagraph::server::ServeOptions;
use diagraph::server::client::ServerClient;
use diagraph::tui::keymap::Keymap;
use diagraph::tui::runtime::effects::Effects;
use diagraph::tui::runtime::{Launch, TuiContext, initial_state};
use diagraph::tui::state::{AppState, Mode, Pane};
use diagraph::tui::theme::Theme;
use diagraph::tui::update::{Command, Msg, update};
use diagraph::vocab::run::RunStatus;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

struct Tui {
    state: AppState,
    effects: Effects,
    rx: mpsc::Receiver<Msg>,
}

impl Tui {
    /// The workbench following `server`.
    async fn on(server: &TestServer) -> Tui {
        let client = Arc::new(ServerClient::new(&server.url, None).unwrap());
        Tui::with(server, Some(client)).await
    }

    /// The workbench on `server`'s database, as another process on it.
    async fn local(server: &TestServer) -> Tui {
        Tui::with(server, None).await
    }

    async fn with(server: &TestServer, client: Option<Arc<ServerClient>>) -> Tui {
        let store = client.is_none().then(|| server.store.clone());
        let engine = crate::server_support::shop_engine(
            server.store.clone(),
            Arc::new(diagraph::model::offline::OfflineModel::new()),
        )
        .await;
        let ctx = TuiContext {
            engine,
            fallthrough: Arc::new(diagraph::model::offline::OfflineModel::new()),
            store,
            scenarios_dir: crate::helpers::scenario_dir(),
            theme: "dark".into(),
            key_overrides: BTreeMap::new(),
            mouse: true,
            model_label: "server".into(),
            db_label: server.url.clone(),
            pack_warnings: Vec::new(),
            server: client,
        };
        let (state, first) = initial_state(
            Theme::load("dark").unwrap(),
            Keymap::with_overrides(&BTreeMap::new()).unwrap(),
            "server",
            &server.url,
            &Launch::Live,
        );
        let (tx, rx) = mpsc::channel(256);
        let mut tui = Tui {
            state,
            effects: Effects::new(Arc::new(ctx), tx),
            rx,
        };
        tui.exec(first);
        tui
    }

    fn exec(&mut self, cmds: Vec<Command>) {
        for c in cmds {
            self.effects.handle(c);
        }
    }

    /// Applies messages until `done` holds of the state.
    async fn pump_until(&mut self, done: impl Fn(&AppState) -> bool) {
        tokio::time::timeout(Duration::from_secs(30), async {
            while !done(&self.state) {
                let msg = self.rx.recv().await.expect("the effects keep sending");
                let cmds = update(&mut self.state, msg);
                self.exec(cmds);
            }
        })
        .await
        .expect("the TUI got there in time");
    }

    fn key(&mut self, code: KeyCode) {
        let cmds = update(
            &mut self.state,
            Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)),
        );
        self.exec(cmds);
    }
}

#[tokio::test]
async fn a_run_started_by_someone_else_is_watched_live_to_its_end() {
    let model = HeldModel::closed();
    let server = TestServer::start_with(ServeOptions::default(), model.clone()).await;
    let run_id = start_run(&server, "why is payment-service slow?").await;
    model.wait_arrivals(1).await;

    let mut tui = Tui::on(&server).await;
    tui.pump_until(|s| s.runs.iter().any(|r| r.run_id == run_id))
        .await;
    assert_eq!(tui.state.runs[0].status, RunStatus::Running);

    // Open it from the runs list: it is followed live, not replayed.
    tui.state.focus = Pane::Runs;
    tui.state.sel.runs = 0;
    tui.key(KeyCode::Enter);
    assert_eq!(tui.state.mode, Mode::Live);
    tui.pump_until(|s| s.view().run_id == Some(run_id) && s.view().current.is_some())
        .await;
    assert!(tui.state.view().is_running(), "watched while it runs");
    // Watching stops nothing: no question before leaving, and the cancel
    // key is not offered.
    assert!(!tui.state.run_live());
    tui.key(KeyCode::Char('x'));
    assert!(tui.state.popup.is_none());

    model.open();
    tui.pump_until(|s| s.view().finished.is_some()).await;
    let journal = server.store.load_events(run_id).await.unwrap();
    assert_eq!(tui.state.shown.events, journal);
    assert_eq!(
        tui.state.view().finished.as_ref().unwrap().status,
        RunStatus::Success
    );
}

#[tokio::test]
async fn a_question_asked_in_the_tui_runs_on_the_server() {
    let server = TestServer::start().await;
    let mut tui = Tui::on(&server).await;
    tui.state.focus = Pane::Input;
    for c in "why is payment-service slow?".chars() {
        tui.key(KeyCode::Char(c));
    }
    tui.key(KeyCode::Enter);
    tui.pump_until(|s| s.view().finished.is_some()).await;
    let run_id = tui.state.view().run_id.unwrap();
    let stored = server.store.run_trace(run_id).await.unwrap();
    assert_eq!(stored.run.query, "why is payment-service slow?");
    assert_eq!(
        tui.state.shown.events,
        server.store.load_events(run_id).await.unwrap()
    );
    // Replaying it from the list loads it from the server.
    tui.pump_until(|s| {
        s.runs
            .iter()
            .any(|r| r.run_id == run_id && r.status == RunStatus::Success)
    })
    .await;
    tui.state.focus = Pane::Runs;
    let index = tui
        .state
        .filtered_runs()
        .iter()
        .position(|r| r.run_id == run_id)
        .unwrap();
    tui.state.sel.runs = index;
    tui.state.local_events.clear();
    tui.key(KeyCode::Enter);
    assert_eq!(tui.state.mode, Mode::Replay);
    tui.pump_until(|s| !s.shown.events.is_empty()).await;
    assert_eq!(tui.state.shown.events.len(), stored.run.event_count);
}

#[tokio::test]
async fn the_cancel_key_cancels_a_run_this_tui_started_on_the_server() {
    let model = HeldModel::closed();
    let server = TestServer::start_with(ServeOptions::default(), model.clone()).await;
    let mut tui = Tui::on(&server).await;
    tui.state.focus = Pane::Input;
    for c in "why is payment-service slow?".chars() {
        tui.key(KeyCode::Char(c));
    }
    tui.key(KeyCode::Enter);
    tui.pump_until(|s| s.view().current.is_some()).await;
    model.wait_arrivals(1).await;
    assert!(tui.state.run_live(), "a run started here is live");
    tui.state.focus = Pane::Graph;
    tui.key(KeyCode::Char('x'));
    // The model stays held: only the cancel can end the run (its call in
    // flight is cut short).
    tui.pump_until(|s| s.view().finished.is_some()).await;
    let end = tui.state.view().finished.clone().unwrap();
    assert_eq!(end.status, RunStatus::Cancelled);
    let run_id = tui.state.view().run_id.unwrap();
    crate::server_support::assert_cancelled(&server.store.run_trace(run_id).await.unwrap());
}

#[tokio::test]
async fn a_run_of_another_process_is_watched_from_the_database() {
    let model = HeldModel::closed();
    let server = TestServer::start_with(ServeOptions::default(), model.clone()).await;
    let run_id = start_run(&server, "why is payment-service slow?").await;
    model.wait_arrivals(1).await;

    let mut tui = Tui::local(&server).await;
    tui.pump_until(|s| s.runs.iter().any(|r| r.run_id == run_id))
        .await;
    tui.state.focus = Pane::Runs;
    tui.state.sel.runs = 0;
    tui.key(KeyCode::Enter);
    assert_eq!(tui.state.mode, Mode::Live);
    assert!(!tui.state.run_live(), "watching, not running it");
    tui.pump_until(|s| s.view().run_id == Some(run_id)).await;
    model.open();
    tui.pump_until(|s| s.view().finished.is_some()).await;
    assert_eq!(
        tui.state.shown.events,
        server.store.load_events(run_id).await.unwrap()
    );
}

//! The runs this server is executing: started on request, held to the
//! concurrent-run limit, each with the events it emitted so far (for
//! event streams that join late) and its cancellation token.
//!
//! A run is not tied to the request that started it: a client that stops
//! waiting does not stop the run, and anyone may follow or cancel it by id.
//! Shutdown cancels every run through the server's token (each run's token
//! is a child of it) and waits for them to end and persist.

use crate::engine::{Engine, RunRequest};
use crate::store::Store;
use crate::tools::pack::{Pack, PackError};
use crate::vocab::events::{EngineEvent, EventKind, ModelDelta};
use crate::vocab::run::RunStatus;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Live events in flight between the engine and the registry.
const EVENT_CHANNEL: usize = 256;

/// How a run this server executed ended.
#[derive(Debug, Clone)]
pub enum RunResult {
    /// The engine returned: the `ask --json` object and the status.
    Ended { json: Value, status: RunStatus },
    /// The engine could not persist the run's end (see `EngineError`).
    Error(String),
}

struct LiveInner {
    events: Vec<Arc<EngineEvent>>,
    result: Option<RunResult>,
    /// The pieces of the model call streaming now (one call's, in order),
    /// for followers that join mid-call; not events, never journaled.
    deltas: Vec<Arc<ModelDelta>>,
}

/// One run in progress on this server.
pub struct LiveRun {
    pub run_id: i64,
    pub session_id: String,
    cancel: CancellationToken,
    inner: Mutex<LiveInner>,
    /// Bumped after every change, so followers wake up.
    changed: watch::Sender<u64>,
}

impl LiveRun {
    fn lock(&self) -> MutexGuard<'_, LiveInner> {
        // A poisoned lock only means a panic elsewhere mid-push; the data
        // is still a valid prefix of the run.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&self, event: EngineEvent) {
        let mut inner = self.lock();
        if matches!(event.kind, EventKind::ModelCalled { .. }) {
            inner.deltas.clear();
        }
        inner.events.push(Arc::new(event));
        drop(inner);
        self.changed.send_modify(|v| *v += 1);
    }

    fn push_delta(&self, delta: ModelDelta) {
        let mut inner = self.lock();
        if inner
            .deltas
            .first()
            .is_some_and(|d| d.step_index != delta.step_index)
        {
            inner.deltas.clear();
        }
        inner.deltas.push(Arc::new(delta));
        drop(inner);
        self.changed.send_modify(|v| *v += 1);
    }

    /// The streaming call's pieces a follower has not seen: it saw the
    /// first `seen` pieces of call `step_index`.
    pub fn deltas_after(&self, step_index: u32, seen: usize) -> Vec<Arc<ModelDelta>> {
        let inner = self.lock();
        match inner.deltas.first() {
            Some(d) if d.step_index == step_index => {
                inner.deltas.get(seen..).unwrap_or_default().to_vec()
            }
            _ => inner.deltas.clone(),
        }
    }

    fn finish(&self, result: RunResult) {
        self.lock().result = Some(result);
        self.changed.send_modify(|v| *v += 1);
    }

    /// Events from index `from` on, and whether the run has ended.
    pub fn events_from(&self, from: usize) -> (Vec<Arc<EngineEvent>>, bool) {
        let inner = self.lock();
        let events = inner.events.get(from..).unwrap_or_default().to_vec();
        (events, inner.result.is_some())
    }

    pub fn result(&self) -> Option<RunResult> {
        self.lock().result.clone()
    }

    /// A receiver that wakes on every new event and at the end.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Waits until the run has ended.
    pub async fn wait(&self) -> RunResult {
        let mut rx = self.subscribe();
        loop {
            if let Some(r) = self.result() {
                return r;
            }
            if rx.changed().await.is_err() {
                // The sender lives in `self`; this cannot happen while we
                // hold it, but an answer is better than a hang.
                return self
                    .result()
                    .unwrap_or_else(|| RunResult::Error("the run was lost".into()));
            }
        }
    }

    pub fn cancel(&self) {
        self.cancel.cancel();
    }
}

/// A run on another pack than the server's: the engine serving it, and
/// the pack as the run records it.
pub struct OnPack {
    pub engine: Engine,
    pub pack: String,
}

/// Packs named per run (`diagnose`'s `pack`), loaded once and shared by
/// the runs on them while their files stay as they were: loading a pack
/// reads its log index and indexes its knowledge.
#[derive(Default)]
pub struct LoadedPacks {
    packs: Mutex<Vec<(PathBuf, u64, Arc<Pack>)>>,
}

/// Packs kept loaded at once; the least recently loaded goes first.
const LOADED_PACKS: usize = 4;

impl LoadedPacks {
    /// The pack in `dir`, loaded now or earlier when no file of it changed
    /// since. Blocking: call it off the async threads.
    pub fn load(&self, dir: &Path) -> Result<Arc<Pack>, PackError> {
        let key = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        let stamp = files_stamp(&key);
        let lock = || self.packs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(stamp) = stamp
            && let Some((_, _, pack)) = lock().iter().find(|(k, s, _)| *k == key && *s == stamp)
        {
            return Ok(Arc::clone(pack));
        }
        let pack = Arc::new(Pack::load(dir)?);
        if let Some(stamp) = stamp {
            let mut packs = lock();
            packs.retain(|(k, _, _)| *k != key);
            if packs.len() >= LOADED_PACKS {
                packs.remove(0);
            }
            packs.push((key, stamp, Arc::clone(&pack)));
        }
        Ok(pack)
    }
}

/// A digest of the names, sizes and modification times of the files
/// under `dir` (metadata only, nothing read); None when it cannot be
/// listed, or holds too many entries to list on every call.
fn files_stamp(dir: &Path) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    const MAX_ENTRIES: usize = 10_000;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let mut pending = vec![dir.to_path_buf()];
    let mut seen = 0;
    while let Some(d) = pending.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&d).ok()?.filter_map(Result::ok).collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for e in entries {
            seen += 1;
            if seen > MAX_ENTRIES {
                return None;
            }
            let meta = e.metadata().ok()?;
            e.path().hash(&mut hasher);
            meta.len().hash(&mut hasher);
            meta.modified().ok().hash(&mut hasher);
            if meta.is_dir() {
                pending.push(e.path());
            }
        }
    }
    Some(hasher.finish())
}

/// Why a run could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("{limit} runs are already in progress on this server (its limit); retry shortly")]
    Busy { limit: usize },
    #[error("the server is shutting down")]
    ShuttingDown,
    #[error("{0}")]
    Engine(String),
}

/// Starts runs and keeps the ones in progress.
pub struct LiveRuns {
    engine: Engine,
    store: Arc<Store>,
    /// The pack named in the configuration, recorded with each run.
    pack: Option<String>,
    runs: Mutex<HashMap<i64, Arc<LiveRun>>>,
    slots: Arc<Semaphore>,
    limit: usize,
    shutdown: CancellationToken,
    tasks: TaskTracker,
    packs: Arc<LoadedPacks>,
}

impl LiveRuns {
    pub fn new(
        engine: Engine,
        store: Arc<Store>,
        pack: Option<String>,
        limit: usize,
        shutdown: CancellationToken,
    ) -> LiveRuns {
        let limit = limit.max(1);
        LiveRuns {
            engine,
            store,
            pack,
            runs: Mutex::new(HashMap::new()),
            slots: Arc::new(Semaphore::new(limit)),
            limit,
            shutdown,
            tasks: TaskTracker::new(),
            packs: Arc::new(LoadedPacks::default()),
        }
    }

    /// The packs runs named, loaded once.
    pub fn packs(&self) -> Arc<LoadedPacks> {
        Arc::clone(&self.packs)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<i64, Arc<LiveRun>>> {
        self.runs.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn get(&self, run_id: i64) -> Option<Arc<LiveRun>> {
        self.lock().get(&run_id).cloned()
    }

    pub fn count(&self) -> usize {
        self.lock().len()
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The engine runs start on unless they name another pack.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Starts a run and returns once the engine has created it (its id is
    /// known). The run goes on by itself.
    pub async fn start(
        self: &Arc<Self>,
        question: String,
        session_id: Option<String>,
    ) -> Result<Arc<LiveRun>, StartError> {
        self.start_on(question, session_id, None).await
    }

    /// [`LiveRuns::start`], on another pack than the server's when `on`
    /// names one (`diagraph mcp`'s `diagnose` takes a pack per call).
    pub async fn start_on(
        self: &Arc<Self>,
        question: String,
        session_id: Option<String>,
        on: Option<OnPack>,
    ) -> Result<Arc<LiveRun>, StartError> {
        if self.shutdown.is_cancelled() {
            return Err(StartError::ShuttingDown);
        }
        let permit = self
            .slots
            .clone()
            .try_acquire_owned()
            .map_err(|_| StartError::Busy { limit: self.limit })?;
        let (events_tx, events_rx) = mpsc::channel(EVENT_CHANNEL);
        let (deltas_tx, deltas_rx) = mpsc::channel(EVENT_CHANNEL);
        let mut request = RunRequest::new(question);
        request.session_id = session_id;
        let engine = match on {
            Some(on) => {
                request.pack = Some(on.pack);
                on.engine
            }
            None => {
                request.pack = self.pack.clone();
                self.engine.clone()
            }
        };
        request.events = Some(events_tx);
        request.deltas = Some(deltas_tx);
        request.cancel = self.shutdown.child_token();
        let (started_tx, started_rx) = oneshot::channel();
        let this = self.clone();
        self.tasks.spawn(async move {
            this.drive(engine, request, (events_rx, deltas_rx), started_tx, permit)
                .await
        });
        match started_rx.await {
            Ok(started) => started,
            Err(_) => Err(StartError::Engine("the run ended before it started".into())),
        }
    }

    /// One run from its first event to its end: registers it, forwards its
    /// events, records how it ended and makes sure its journal is in the
    /// database before the run leaves the registry.
    async fn drive(
        self: Arc<Self>,
        engine: Engine,
        request: RunRequest,
        (mut events_rx, mut deltas_rx): (mpsc::Receiver<EngineEvent>, mpsc::Receiver<ModelDelta>),
        started: oneshot::Sender<Result<Arc<LiveRun>, StartError>>,
        _permit: OwnedSemaphorePermit,
    ) {
        let cancel = request.cancel.clone();
        // Its own task, so a panic in the engine is an error here, not a
        // lost run.
        let run = tokio::spawn(async move { engine.run(request).await });
        let Some(first) = events_rx.recv().await else {
            let error = match run.await {
                Ok(Err(e)) => e.to_string(),
                Ok(Ok(_)) => "the engine emitted no events".to_string(),
                Err(_) => "the engine failed unexpectedly".to_string(),
            };
            let _ = started.send(Err(StartError::Engine(error)));
            return;
        };
        let session_id = match &first.kind {
            EventKind::RunStarted { session_id, .. } => session_id.clone(),
            _ => String::new(),
        };
        let (changed, _) = watch::channel(0);
        let live = Arc::new(LiveRun {
            run_id: first.run_id,
            session_id,
            cancel,
            inner: Mutex::new(LiveInner {
                events: Vec::with_capacity(64),
                result: None,
                deltas: Vec::new(),
            }),
            changed,
        });
        live.push(first);
        self.lock().insert(live.run_id, live.clone());
        let _ = started.send(Ok(live.clone()));

        loop {
            tokio::select! {
                biased;
                event = events_rx.recv() => match event {
                    Some(event) => live.push(event),
                    None => break,
                },
                Some(delta) = deltas_rx.recv() => live.push_delta(delta),
            }
        }
        let result = match run.await {
            Ok(Ok(outcome)) => RunResult::Ended {
                json: outcome.to_json(),
                status: outcome.end.status,
            },
            Ok(Err(e)) => RunResult::Error(e.to_string()),
            Err(_) => RunResult::Error("the engine failed unexpectedly".into()),
        };
        if let Err(e) = self.store.flush_run(live.run_id).await {
            tracing::warn!(run_id = live.run_id, error = %e, "could not write the run's last events");
        }
        live.finish(result);
        self.lock().remove(&live.run_id);
    }

    /// Cancels every run and waits until each has ended and persisted.
    pub async fn shut_down(&self) {
        self.shutdown.cancel();
        self.tasks.close();
        self.tasks.wait().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let target = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                copy_dir(&e.path(), &target);
            } else {
                std::fs::copy(e.path(), target).unwrap();
            }
        }
    }

    #[test]
    fn a_pack_is_loaded_once_until_one_of_its_files_changes() {
        let dir = tempfile::tempdir().unwrap();
        let shop = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/packs/shop");
        copy_dir(&shop, dir.path());
        let packs = LoadedPacks::default();
        let first = packs.load(dir.path()).unwrap();
        let again = packs.load(dir.path()).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "loaded twice");
        let alerts = dir.path().join("alerts.json");
        let text = std::fs::read_to_string(&alerts).unwrap();
        std::fs::write(&alerts, format!("{text}\n")).unwrap();
        let changed = packs.load(dir.path()).unwrap();
        assert!(
            !Arc::ptr_eq(&first, &changed),
            "a changed pack was not reloaded"
        );
        assert!(packs.load(&dir.path().join("missing")).is_err());
    }
}

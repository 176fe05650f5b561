//! Fault injection on the database beyond `faults.rs`: a SQLite file that
//! cannot be written (read-only, or its disk full). Each case checks the
//! one-line error and exit code the user gets, that what is already stored
//! can still be read, and that a process whose writes failed recovers once
//! the disk has room again.
//!
//! A full disk is a tiny tmpfs mounted for the test, so these cases need
//! to be allowed to mount (root); elsewhere they say SKIP. A read-only
//! file is `chmod 444`, or, for root (whom permissions do not stop),
//! `chattr +i`; where neither makes it read-only the case says SKIP.

use crate::helpers::{diagraph_bin, isolate};
use diagraph::store::{ProcessOwner, Store};
use diagraph::vocab::record::{Recorder, RunStart};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// One line, "diagraph: …", no panic or backtrace.
fn assert_one_line(o: &Output) {
    let err = stderr(o);
    assert!(err.starts_with("diagraph: "), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

fn cmd(home: &Path, db: &str) -> Command {
    let mut cmd = diagraph_bin();
    isolate(&mut cmd, home);
    cmd.arg("--database-url").arg(db);
    cmd
}

fn ask(home: &Path, db: &str, n: usize) -> Output {
    cmd(home, db)
        .args([
            "ask",
            &format!("why is payment-service slow? ({n})"),
            "--json",
        ])
        .output()
        .unwrap()
}

fn runs(home: &Path, db: &str) -> (Output, Vec<Value>) {
    let out = cmd(home, db)
        .args(["runs", "--json", "--limit", "100"])
        .output()
        .unwrap();
    let runs = serde_json::from_slice(&out.stdout).unwrap_or_default();
    (out, runs)
}

fn start(question: String) -> RunStart {
    RunStart {
        session_id: None,
        question,
        model: "m".into(),
        pack: None,
        scenario: None,
        sources: Default::default(),
        rerun_of: None,
    }
}

// ---- full disk ---------------------------------------------------------

/// A tmpfs of `kib` KiB at `dir`, unmounted when dropped.
struct TinyDisk {
    dir: PathBuf,
}

impl TinyDisk {
    fn mount(dir: &Path, kib: u32) -> Option<TinyDisk> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir)
            .output()
            .is_ok_and(|o| o.status.success());
        ok.then(|| TinyDisk {
            dir: dir.to_path_buf(),
        })
    }

    fn grow(&self, kib: u32) {
        let out = Command::new("mount")
            .args(["-o", &format!("remount,size={kib}k")])
            .arg(&self.dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
}

impl Drop for TinyDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}

fn tiny_disk(test: &str, dir: &Path, kib: u32) -> Option<TinyDisk> {
    let disk = TinyDisk::mount(dir, kib);
    if disk.is_none() {
        eprintln!("SKIP {test}: cannot mount a tmpfs here (needs root)");
    }
    disk
}

/// The disk fills while one process keeps writing: every failed write
/// says the disk is full (a COMMIT that failed must not leave the
/// process's one SQLite connection stuck "in a transaction" for good), and
/// once there is room the same store writes again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_whose_disk_filled_writes_again_once_there_is_room() {
    let home = tempfile::tempdir().unwrap();
    let Some(disk) = tiny_disk(
        "a_store_whose_disk_filled_writes_again_once_there_is_room",
        &home.path().join("tiny"),
        400,
    ) else {
        return;
    };
    let url = format!("sqlite:{}", disk.dir.join("d.db").display());
    let store = Store::connect(&url).await.unwrap();
    let mut failures = Vec::new();
    for i in 0..2000 {
        let question = format!("{i} {}", "why is it slow? ".repeat(256));
        if let Err(e) = store.start_run(&start(question)).await {
            failures.push(e.to_string());
            if failures.len() == 3 {
                break;
            }
        }
    }
    assert_eq!(failures.len(), 3, "the disk never filled");
    for f in &failures {
        assert!(f.contains("disk is full"), "{failures:?}");
    }
    disk.grow(16 * 1024);
    let again = store
        .start_run(&start("after the disk was grown".into()))
        .await;
    assert!(again.is_ok(), "{again:?} after {failures:?}");
    store.close().await;
}

/// `ask` on a full disk: one line, exit 2 "database cannot be written"
/// once the database cannot even start a run; `runs` still lists what is
/// stored (the run a full disk stopped is RUNNING until a start can end
/// it), and once there is room nothing is left RUNNING.
#[test]
fn ask_on_a_full_disk_is_a_clear_error_and_runs_still_reads() {
    let home = tempfile::tempdir().unwrap();
    let Some(disk) = tiny_disk(
        "ask_on_a_full_disk_is_a_clear_error_and_runs_still_reads",
        &home.path().join("tiny"),
        400,
    ) else {
        return;
    };
    let db = format!("sqlite:{}", disk.dir.join("d.db").display());
    let mut refused = None;
    for n in 0..12 {
        let out = ask(home.path(), &db, n);
        if code(&out) == 0 {
            continue;
        }
        assert_one_line(&out);
        let err = stderr(&out);
        assert!(!err.contains("transaction depth"), "{err}");
        assert!(err.contains("disk is full"), "{err}");
        if err.starts_with("diagraph: database cannot be written: ") {
            assert_eq!(code(&out), 2, "{err}");
            refused = Some(err);
            break;
        }
    }
    assert!(refused.is_some(), "the disk never filled");
    let (out, listed) = runs(home.path(), &db);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!listed.is_empty());
    disk.grow(16 * 1024);
    let (out, listed) = runs(home.path(), &db);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    for r in &listed {
        assert_ne!(r["status"], "RUNNING", "{r}");
    }
}

// ---- read-only file ----------------------------------------------------

/// Makes `file` read-only for this process; false where that cannot be
/// done (root without `chattr`). Undone by [`make_writable`].
fn make_read_only(file: &Path) -> bool {
    let mut perms = std::fs::metadata(file).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(file, perms).unwrap();
    if std::fs::OpenOptions::new().write(true).open(file).is_err() {
        return true;
    }
    let _ = Command::new("chattr").arg("+i").arg(file).status();
    std::fs::OpenOptions::new().write(true).open(file).is_err()
}

fn make_writable(file: &Path) {
    let _ = Command::new("chattr").arg("-i").arg(file).status();
    let mut perms = std::fs::metadata(file).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(file, perms).unwrap();
}

/// A database file that cannot be written: `ask` is one line, exit 2,
/// "database cannot be written"; `runs` and `trace` still read it, even
/// with a run of a dead process in it that cannot be ended now.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_database_refuses_ask_clearly_and_still_reads() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("ro.db");
    let db = format!("sqlite:{}", file.display());
    let out = ask(home.path(), &db, 0);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // A run left RUNNING by a process that died.
    let dead = ProcessOwner {
        pid: 4_194_300,
        host: ProcessOwner::current().host,
        start: "1".into(),
    };
    let ghost = Store::connect_as(&db, dead).await.unwrap();
    ghost
        .start_run(&start("left running by a crash".into()))
        .await
        .unwrap();
    ghost.close().await;
    if !make_read_only(&file) {
        eprintln!(
            "SKIP a_read_only_database_refuses_ask_clearly_and_still_reads: cannot make a file read-only here"
        );
        return;
    }
    let out = ask(home.path(), &db, 1);
    let (listed_out, listed) = runs(home.path(), &db);
    let trace = cmd(home.path(), &db)
        .args(["trace", "1", "--json"])
        .output()
        .unwrap();
    make_writable(&file);

    assert_one_line(&out);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("diagraph: database cannot be written: ") && err.contains("readonly"),
        "{err}"
    );
    assert_eq!(code(&listed_out), 0, "{}", stderr(&listed_out));
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert_eq!(code(&trace), 0, "{}", stderr(&trace));
    // Writable again, the next start ends the dead process's run.
    let (_, listed) = runs(home.path(), &db);
    for r in &listed {
        assert_ne!(r["status"], "RUNNING", "{r}");
    }
}

// ---- commands on a run that has not ended --------------------------------

/// `feedback` on a RUNNING run is the caller's mistake (exit 2, one line
/// that says why), not a database error; the run stays RUNNING and
/// unrated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn feedback_on_a_running_run_is_bad_input() {
    let home = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", home.path().join("d.db").display());
    // Started by this (live) process, so no other process sweeps it.
    let store = Store::connect(&db).await.unwrap();
    let run = store.start_run(&start("still going".into())).await.unwrap();
    store.close().await;
    let out = cmd(home.path(), &db)
        .args(["feedback", &run.run_id.to_string(), "useful"])
        .output()
        .unwrap();
    assert_one_line(&out);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(!err.contains("database error"), "{err}");
    assert!(err.contains("is still running"), "{err}");
    let (_, listed) = runs(home.path(), &db);
    assert_eq!(listed[0]["status"], "RUNNING", "{listed:?}");
}

/// A model endpoint that accepts and never answers; its base URL.
fn hanging_model() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().flatten() {
            held.push(conn);
        }
    });
    format!("http://{addr}/v1")
}

/// A run cancelled before its planner answered cannot be replayed: the
/// rerun says so (exit 2) and names the partial run as `runs` lists it,
/// DEGRADED, never as a plain SUCCESS.
#[test]
fn a_rerun_that_cannot_replay_names_its_partial_run_degraded() {
    let home = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", home.path().join("d.db").display());
    let mut child = cmd(home.path(), &db)
        .env("DIAGRAPH_OPENAI_BASE_URL", hanging_model())
        .env("DIAGRAPH_OPENAI_API_KEY", "sk-test-not-a-real-key")
        .args(["--model", "openai", "ask", "why is payment-service slow?"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the run is stored, then stop it.
    let started = std::time::Instant::now();
    while runs(home.path(), &db).1.is_empty() {
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    assert_eq!(child.wait().unwrap().code(), Some(4));
    let out = cmd(home.path(), &db).args(["rerun", "1"]).output().unwrap();
    assert_one_line(&out);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("cannot be rerun"), "{err}");
    let (_, listed) = runs(home.path(), &db);
    let partial = listed.iter().find(|r| r["run_id"] == 2).unwrap();
    assert_eq!(partial["degraded"], true, "{partial}");
    assert!(
        err.ends_with("the partial rerun is run 2 (DEGRADED)\n"),
        "{err}"
    );
}

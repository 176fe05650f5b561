//! End to end in a real pseudo-terminal (tmux): run the binary's demo mode
//! on a shipped scenario, step it to the end by keystrokes, read the
//! screen, quit, and check that the terminal was restored. Also checks the
//! "too small" message and that resizing brings the layout back.
//!
//! Skipped (with a note) when tmux is not installed, unless under CI.

use crate::helpers::{scenario_dir, skip_or_fail};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn tmux_available() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip_or_fail("pty end-to-end", "tmux not found");
    }
    ok
}

struct Session {
    name: String,
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Session {
    /// Starts `diagraph ARGS` in a detached tmux session of the given size,
    /// on a private tmux server and a fresh database.
    fn start(args: &str, w: u16, h: u16) -> Session {
        Session::start_then(args, "", w, h)
    }

    /// [`Session::start`], then `diagraph AFTER` on the same database once
    /// the TUI has exited (its output follows `DIAGRAPH_EXIT=`).
    fn start_then(args: &str, after: &str, w: u16, h: u16) -> Session {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("tmux.sock");
        let name = "diagraph-e2e".to_string();
        let bin = env!("CARGO_BIN_EXE_diagraph");
        let d = dir.path().display();
        let env = format!(
            "env DIAGRAPH_DATABASE_URL=sqlite:{d}/d.db XDG_DATA_HOME={d}/data XDG_CONFIG_HOME={d}/config"
        );
        let after = if after.is_empty() {
            String::new()
        } else {
            format!("{env} {bin} {after}; ")
        };
        let script = format!(
            "cd {root} && {env} {bin} {args}; echo DIAGRAPH_EXIT=$?; {after}echo DIAGRAPH_DONE; exec sleep 600",
            root = env!("CARGO_MANIFEST_DIR"),
        );
        let status = Command::new("tmux")
            .args(["-S"])
            .arg(&socket)
            .args([
                "new-session",
                "-d",
                "-s",
                &name,
                "-x",
                &w.to_string(),
                "-y",
                &h.to_string(),
                &script,
            ])
            .status()
            .unwrap();
        assert!(status.success());
        Session {
            name,
            socket,
            _dir: dir,
        }
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", &self.name])
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.name];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    fn alternate_on(&self) -> bool {
        self.tmux(&["display-message", "-p", "-t", &self.name, "#{alternate_on}"])
            .trim()
            == "1"
    }

    /// Waits until the screen satisfies `pred`, pressing `key` (if any)
    /// between looks.
    fn wait_for(&self, what: &str, key: Option<&str>, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let s = self.screen();
            if pred(&s) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; screen:\n{s}"
            );
            if let Some(k) = key {
                self.keys(&[k]);
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(["kill-server"])
            .status();
    }
}

fn scenario(name: &str) -> String {
    scenario_dir().join(name).display().to_string()
}

/// The graph pane shows END reached: a heavy box in the diagram, a filled
/// dot in the list.
fn reached_end(screen: &str) -> bool {
    screen.contains("END┃") || screen.contains("● END")
}

#[test]
fn demo_runs_to_the_end_by_keystrokes_and_restores_the_terminal() {
    if !tmux_available() {
        return;
    }
    let s = Session::start(&format!("demo {}", scenario("01_pass.toml")), 120, 36);
    let first = s.wait_for("the step gate", None, |s| s.contains("waiting:"));
    assert!(s.alternate_on(), "the TUI runs on the alternate screen");
    assert!(
        first.contains("Demo · "),
        "the scenario description is shown:\n{first}"
    );
    let end = s.wait_for("the end of the run", Some("Space"), |s| {
        s.contains("last: composer_completed")
    });
    assert!(end.contains("effective  PASS"), "{end}");
    assert!(reached_end(&end), "{end}");
    assert!(!end.contains("waiting:"), "{end}");
    s.keys(&["q"]);
    let after = s.wait_for("the shell", None, |s| s.contains("DIAGRAPH_EXIT="));
    assert!(after.contains("DIAGRAPH_EXIT=0"), "{after}");
    assert!(!s.alternate_on(), "alternate screen left");
    assert!(
        !after.contains("Graph · "),
        "TUI frame left behind:\n{after}"
    );
}

#[test]
fn gatekeeper_reject_demo_shows_the_fallback() {
    if !tmux_available() {
        return;
    }
    let s = Session::start(
        &format!("demo {}", scenario("13_gatekeeper_wrong_path.toml")),
        160,
        45,
    );
    s.wait_for("the step gate", None, |s| s.contains("waiting:"));
    // `c` lets the engine run to the end without further stops.
    s.keys(&["c"]);
    // The bindings pane may fill a frame after END shows on a loaded
    // machine; the deadline still fails the test if it never does.
    let end = s.wait_for("the fallback and its failed binding", None, |s| {
        reached_end(s) && s.contains("FAIL")
    });
    assert!(end.contains("Answer (degraded)"), "{end}");
    assert!(end.contains("DEGRADED"), "{end}");
    s.keys(&["C-c"]);
    let after = s.wait_for("the shell", None, |s| s.contains("DIAGRAPH_EXIT="));
    assert!(after.contains("DIAGRAPH_EXIT=0"), "{after}");
}

#[test]
fn a_small_terminal_gets_a_message_and_resizing_recovers() {
    if !tmux_available() {
        return;
    }
    let s = Session::start(&format!("demo {}", scenario("01_pass.toml")), 60, 20);
    s.wait_for("the size message", None, |s| {
        s.contains("terminal too small (need 80x24, have 60x20)")
    });
    s.tmux(&["resize-window", "-t", &s.name, "-x", "100", "-y", "30"]);
    s.wait_for("the layout", None, |s| s.contains("Graph · "));
    // The demo waits at its step gate: quitting asks first.
    s.keys(&["q"]);
    s.wait_for("the question", None, |s| s.contains("Quit and cancel it?"));
    s.keys(&["y"]);
    s.wait_for("the shell", None, |s| s.contains("DIAGRAPH_EXIT=0"));
}

/// The runs list as `diagraph runs` prints it after the TUI exits.
fn runs_after(s: &Session) -> String {
    s.wait_for("the runs list", None, |s| s.contains("DIAGRAPH_DONE"))
}

#[test]
fn the_cancel_key_ends_the_run_cancelled_and_it_stays_cancelled() {
    if !tmux_available() {
        return;
    }
    let s = Session::start_then(
        &format!("demo {}", scenario("01_pass.toml")),
        "runs",
        140,
        40,
    );
    s.wait_for("the step gate", None, |s| s.contains("waiting:"));
    let hints = s.screen();
    assert!(
        hints.contains("x cancel"),
        "the cancel key is hinted:\n{hints}"
    );
    s.keys(&["x"]);
    let end = s.wait_for("the cancelled run", None, |s| s.contains("CANCELLED ("));
    assert!(end.contains("stopped by the user"), "{end}");
    assert!(!end.contains("waiting:"), "{end}");
    // Nothing is live any more: q quits without asking.
    s.keys(&["q"]);
    let after = runs_after(&s);
    assert!(after.contains("DIAGRAPH_EXIT=0"), "{after}");
    assert!(after.contains("CANCELLED"), "{after}");
    assert!(!after.contains("RUNNING"), "{after}");
}

#[test]
fn quitting_a_live_run_asks_and_saves_it_cancelled() {
    if !tmux_available() {
        return;
    }
    let s = Session::start_then(
        &format!("demo {}", scenario("01_pass.toml")),
        "runs",
        140,
        40,
    );
    s.wait_for("the step gate", None, |s| s.contains("waiting:"));
    s.keys(&["q"]);
    s.wait_for("the question", None, |s| s.contains("Quit and cancel it?"));
    // No: the run is still there, waiting.
    s.keys(&["n"]);
    let kept = s.wait_for("the question closed", None, |s| {
        !s.contains("Quit and cancel it?")
    });
    assert!(kept.contains("waiting:"), "{kept}");
    s.keys(&["q"]);
    s.wait_for("the question again", None, |s| {
        s.contains("Quit and cancel it?")
    });
    s.keys(&["y"]);
    let after = runs_after(&s);
    assert!(after.contains("DIAGRAPH_EXIT=0"), "{after}");
    // Saved before the process ended: CANCELLED, never left RUNNING.
    assert!(after.contains("CANCELLED"), "{after}");
    assert!(!after.contains("RUNNING"), "{after}");
}

//! End to end in a real pseudo-terminal (tmux): run the binary's demo mode
//! on a shipped scenario, step it to the end by keystrokes, read the
//! screen, quit, and check that the terminal was restored. Also checks the
//! "too small" message and that resizing brings the layout back, and that
//! a mouse click (sent as the terminal encodes it) switches a tab, with
//! mouse capture on while the TUI runs and off after.
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
    /// the TUI has exited (its output follows `DIAGRAPH_EXIT=`); each line
    /// of AFTER is one such command.
    fn start_then(args: &str, after: &str, w: u16, h: u16) -> Session {
        Session::start_full(&[], args, after, w, h)
    }

    /// [`Session::start_then`], after running `diagraph BEFORE` (output
    /// discarded) for each of `before` on the same database.
    fn start_full(before: &[&str], args: &str, after: &str, w: u16, h: u16) -> Session {
        Session::start_in("", before, args, after, w, h)
    }

    /// [`Session::start`] with environment variables `vars` (`A=1 B=2`)
    /// set for the program.
    fn start_env(vars: &str, args: &str, w: u16, h: u16) -> Session {
        Session::start_in(vars, &[], args, "", w, h)
    }

    fn start_in(vars: &str, before: &[&str], args: &str, after: &str, w: u16, h: u16) -> Session {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("tmux.sock");
        let name = "diagraph-e2e".to_string();
        let bin = env!("CARGO_BIN_EXE_diagraph");
        let d = dir.path().display();
        // Run from an empty directory with a cache of its own, as an
        // installed binary would be: the shipped pack and scenarios come
        // from the binary, never from the source checkout.
        let env = format!(
            "env {vars} DIAGRAPH_DATABASE_URL=sqlite:{d}/d.db XDG_DATA_HOME={d}/data XDG_CONFIG_HOME={d}/config XDG_CACHE_HOME={d}/cache"
        );
        let after: String = after
            .lines()
            .filter(|a| !a.trim().is_empty())
            .map(|a| format!("{env} {bin} {a}; "))
            .collect();
        let before: String = before
            .iter()
            .map(|b| format!("{env} {bin} {b} >/dev/null 2>&1; "))
            .collect();
        let script = format!(
            "cd {d} && {before}{env} {bin} {args}; echo DIAGRAPH_EXIT=$?; {after}echo DIAGRAPH_DONE; exec sleep 600",
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

impl Session {
    /// The terminal modes the program in the pane asked for.
    fn flags(&self, names: &str) -> String {
        self.tmux(&["display-message", "-p", "-t", &self.name, names])
            .trim()
            .to_string()
    }

    /// A left click (press and release) at a 0-based cell, as a terminal
    /// reports it with SGR mouse encoding.
    fn click(&self, x: u16, y: u16) {
        for end in ['M', 'm'] {
            let seq = format!("\x1b[<0;{};{}{end}", x + 1, y + 1);
            let hex: Vec<String> = seq.bytes().map(|b| format!("{b:02x}")).collect();
            let mut args = vec!["send-keys", "-t", &self.name, "-H"];
            args.extend(hex.iter().map(String::as_str));
            self.tmux(&args);
        }
    }
}

#[test]
fn the_mouse_switches_tabs_and_capture_ends_with_the_tui() {
    if !tmux_available() {
        return;
    }
    let s = Session::start(&format!("demo {}", scenario("01_pass.toml")), 120, 36);
    let screen = s.wait_for("the step gate", None, |s| s.contains("waiting:"));
    assert_eq!(
        s.flags("#{mouse_any_flag}#{mouse_sgr_flag}"),
        "11",
        "mouse capture on"
    );
    let (y, line) = screen
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("Transitions (0)"))
        .unwrap_or_else(|| panic!("no tabs:\n{screen}"));
    let x = line
        .find("Transitions")
        .map(|b| line[..b].chars().count())
        .unwrap();
    s.click(x as u16 + 2, y as u16);
    s.wait_for("the transitions tab", None, |s| {
        s.contains("[Transitions (0)]")
    });
    s.keys(&["c"]);
    s.wait_for("the end of the run", None, reached_end);
    s.keys(&["q"]);
    let after = s.wait_for("the shell", None, |s| s.contains("DIAGRAPH_EXIT="));
    assert!(after.contains("DIAGRAPH_EXIT=0"), "{after}");
    assert_eq!(
        s.flags("#{mouse_any_flag}#{mouse_sgr_flag}"),
        "00",
        "mouse capture off again"
    );
}

#[test]
fn with_no_mouse_the_terminal_keeps_the_mouse() {
    if !tmux_available() {
        return;
    }
    // The flag, and the same through the environment.
    let demo = format!("demo {}", scenario("01_pass.toml"));
    for (vars, args) in [
        ("", format!("--no-mouse {demo}")),
        ("DIAGRAPH_TUI_MOUSE=false", demo.clone()),
    ] {
        let s = Session::start_env(vars, &args, 120, 36);
        s.wait_for("the step gate", None, |s| s.contains("waiting:"));
        // The terminal was never asked for mouse reports: a drag selects
        // text, as it does at the shell.
        assert_eq!(
            s.flags("#{mouse_any_flag}#{mouse_sgr_flag}"),
            "00",
            "no mouse capture ({vars} {args})"
        );
        // The keys still do it all.
        s.keys(&["c"]);
        s.wait_for("the end of the run", None, reached_end);
        s.keys(&["q"]);
        let after = s.wait_for("the shell", None, |s| s.contains("DIAGRAPH_EXIT="));
        assert!(after.contains("DIAGRAPH_EXIT=0"), "{after}");
    }
}

#[test]
fn a_run_another_process_makes_appears_by_itself() {
    if !tmux_available() {
        return;
    }
    let s = Session::start("", 120, 36);
    s.wait_for("the first screen", None, |s| s.contains("no runs yet"));
    // `diagraph ask` on the same database, from another process.
    let d = s._dir.path();
    let out = Command::new(env!("CARGO_BIN_EXE_diagraph"))
        .current_dir(d)
        .env(
            "DIAGRAPH_DATABASE_URL",
            format!("sqlite:{}/d.db", d.display()),
        )
        .env("XDG_DATA_HOME", d.join("data"))
        .env("XDG_CONFIG_HOME", d.join("config"))
        .env("XDG_CACHE_HOME", d.join("cache"))
        .args(["ask", "elsewhere: why is order-service failing?"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let screen = s.wait_for("the other process's run", None, |s| {
        s.contains("elsewhere: why is")
    });
    assert!(screen.contains("Runs (1)"), "{screen}");
    assert!(
        screen.contains("SUCCESS") || screen.contains("DEGRADED"),
        "{screen}"
    );
    s.keys(&["C-c"]);
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

#[test]
fn a_kill_restores_the_terminal_and_saves_the_live_run_cancelled() {
    if !tmux_available() {
        return;
    }
    let s = Session::start_then(
        &format!("demo {}", scenario("01_pass.toml")),
        "runs",
        120,
        36,
    );
    s.wait_for("the step gate", None, |s| s.contains("waiting:"));
    // The program in the pane: the shell's child.
    let shell = s.flags("#{pane_pid}");
    let out = Command::new("ps")
        .args(["-o", "pid=", "--ppid", &shell])
        .output()
        .unwrap();
    let pids: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect();
    assert_eq!(pids.len(), 1, "one child of the pane's shell: {pids:?}");
    let status = Command::new("kill")
        .args(["-TERM", &pids[0]])
        .status()
        .unwrap();
    assert!(status.success());
    let after = runs_after(&s);
    assert!(after.contains("DIAGRAPH_EXIT=0"), "{after}");
    assert!(after.contains("CANCELLED"), "{after}");
    assert!(!after.contains("RUNNING"), "{after}");
    assert!(!s.alternate_on(), "alternate screen left");
    assert_eq!(s.flags("#{mouse_any_flag}"), "0", "mouse capture off");
}

/// What the TUI last copied: tmux keeps an OSC 52 copy as its newest
/// paste buffer (with `set-clipboard on`).
fn copied(s: &Session) -> String {
    s.tmux(&["show-buffer"])
}

fn wait_copied(s: &Session, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let c = copied(s);
        if pred(&c) {
            return c;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what} to be copied; buffer:\n{c}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_pasted_question_runs_whole_and_its_nodes_open_and_copy() {
    if !tmux_available() {
        return;
    }
    let s = Session::start("", 140, 40);
    s.tmux(&["set-option", "-s", "set-clipboard", "on"]);
    s.wait_for("the first screen", None, |s| s.contains("no runs yet"));
    // Run from an empty directory, the shipped scenarios are listed all
    // the same (and the question below is answered from the shipped pack).
    s.keys(&["Escape"]);
    s.wait_for("the graph focused", None, |s| s.contains("q quit"));
    s.keys(&["d"]);
    s.wait_for("the demo picker", None, |s| s.contains("PASS path"));
    s.keys(&["Escape"]);
    s.wait_for("the picker closed", None, |s| !s.contains("PASS path"));
    // Two lines pasted at once: one question. Unbracketed, the newline
    // would run "why is payment-service slow?" and `sd` would toggle step
    // mode and open the demo picker.
    s.tmux(&["set-buffer", "why is payment-service slow?\nsd"]);
    s.tmux(&["paste-buffer", "-p", "-t", &s.name]);
    let typed = s.wait_for("the pasted question", None, |s| {
        s.contains("why is payment-service slow? sd")
    });
    assert!(typed.contains("step mode off"), "{typed}");
    assert!(!typed.contains("Demo scenarios"), "{typed}");
    s.keys(&["Enter"]);
    let end = s.wait_for("the answer", None, |s| {
        s.contains("last: composer_completed")
    });
    assert!(reached_end(&end), "{end}");
    // The input keeps the focus after asking; Escape leaves it for the
    // graph. Enter on the graph: the last node's own work, prompt and
    // response read from the stored run.
    s.keys(&["Escape"]);
    s.keys(&["Enter"]);
    let detail = s.wait_for("the node detail", None, |s| {
        s.contains("prompt (the input DTO, rendered):")
    });
    assert!(detail.contains("composer · attempt 1"), "{detail}");
    assert!(
        detail.contains("prompt (the input DTO, rendered):"),
        "{detail}"
    );
    // y copies what the popup shows.
    s.keys(&["y"]);
    let c = wait_copied(&s, "the node detail", |c| {
        c.contains("composer · attempt 1")
    });
    assert!(c.contains("model calls") && c.contains("response:"), "{c}");
    // Escape, then the run as Markdown from the graph pane.
    s.keys(&["Escape"]);
    s.keys(&["y"]);
    let md = wait_copied(&s, "the run as Markdown", |c| {
        c.starts_with("# diagraph run")
    });
    assert!(md.contains("## Citations"), "{md}");
    assert!(md.contains("why is payment-service slow? sd"), "{md}");
    s.keys(&["q"]);
    let after = s.wait_for("the shell", None, |s| s.contains("DIAGRAPH_EXIT="));
    assert!(after.contains("DIAGRAPH_EXIT=0"), "{after}");
}

#[test]
fn two_runs_compare_side_by_side_and_export() {
    if !tmux_available() {
        return;
    }
    let pass = format!("ask --scenario {}", scenario("01_pass.toml"));
    let capped = format!(
        "ask --scenario {}",
        scenario("16_gatekeeper_low_confid_capped.toml")
    );
    let s = Session::start_full(
        &[&pass, &capped],
        "",
        "export 2 --format markdown | head -1\n\
         export 2 --format mermaid | head -1\n\
         export 2 --format json | grep -m1 runId",
        140,
        40,
    );
    s.wait_for("the runs", None, |s| s.contains("Runs (2)"));
    // Tab from the question to the runs list; m on each run.
    s.keys(&["Tab"]);
    s.keys(&["m"]);
    s.wait_for("the mark", None, |s| s.contains("marked"));
    s.keys(&["j", "m"]);
    let cmp = s.wait_for("the comparison", None, |s| s.contains("compare run"));
    let ceiling = cmp
        .lines()
        .find(|l| l.contains("≠ ceiling"))
        .unwrap_or_default();
    assert!(
        ceiling.contains("LOW_CONFID") && ceiling.contains("PASS"),
        "{cmp}"
    );
    // Apart: an escape followed at once by q reads as alt-q.
    s.keys(&["Escape"]);
    s.wait_for("the popup closed", None, |s| !s.contains("compare run"));
    s.keys(&["q"]);
    let after = s.wait_for("the exports", None, |s| s.contains("DIAGRAPH_DONE"));
    assert!(after.contains("DIAGRAPH_EXIT=0"), "{after}");
    // The exported Markdown's title.
    let tail: Vec<&str> = after
        .lines()
        .skip_while(|l| !l.contains("DIAGRAPH_EXIT="))
        .collect();
    assert!(
        tail.iter().any(|l| l.starts_with("# diagraph run 2")),
        "{after}"
    );
    // The routing table as Mermaid, and the Run Trace of the same run.
    assert!(
        tail.iter().any(|l| l.starts_with("flowchart TD")),
        "{after}"
    );
    assert!(tail.iter().any(|l| l.trim() == "\"runId\": 2,"), "{after}");
}

#[test]
fn a_streaming_model_s_answer_grows_on_screen_while_its_node_runs() {
    if !tmux_available() {
        return;
    }
    // The Planner streams slowly (4 characters every 80 ms); the other
    // roles are not covered, so the run ends in its fallback.
    let plan = r#"{"selected_skill": null, "selection_reason": "no skill needed", "plan": ["Check the alerts of payment-service"], "reasoning": "alerts first", "queries": [{"tool": "query_metrics", "arguments": {"service": "payment-service"}, "purpose": "alerts"}]}"#;
    let Some(mock) = crate::aimock::Aimock::start(
        "a_streaming_model_s_answer_grows_on_screen_while_its_node_runs",
        serde_json::json!([{"match": {"systemMessage": "# Role: Planner"},
            "chunkSize": 4, "latency": 80, "response": {"content": plan}}]),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[model]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"gpt-4o-mini\"\napi_key_env = \"\"\nstreaming = true\n",
            mock.base_url()
        ),
    )
    .unwrap();
    let s = Session::start(&format!("--config {}", config.display()), 140, 40);
    s.wait_for("the first screen", None, |s| s.contains("no runs yet"));
    s.tmux(&[
        "send-keys",
        "-t",
        &s.name,
        "-l",
        "why is payment-service slow?",
    ]);
    s.keys(&["Enter"]);
    let early = s.wait_for("the streamed text", None, |s| {
        s.contains("planner is writing") && s.contains("selected_skill")
    });
    assert!(!early.contains("\"queries\""), "{early}");
    // Later the same call has more of its answer on screen.
    let later = s.wait_for("more of the streamed text", None, |s| {
        s.contains("\"queries\"")
    });
    assert!(later.contains("planner is writing"), "{later}");
    // The call's end replaces the text; the run ends in its fallback.
    let end = s.wait_for("the end of the run", None, |s| s.contains("DEGRADED"));
    assert!(!end.contains("is writing"), "{end}");
    // Typed after asking, `q` is text; Escape leaves the input, then it
    // quits.
    s.keys(&["q"]);
    s.wait_for("q typed in the input", None, |s| s.contains("┃q "));
    s.keys(&["Escape"]);
    s.wait_for("the graph focused", None, |s| s.contains("q quit"));
    s.keys(&["q"]);
    let after = s.wait_for("the shell", None, |s| s.contains("DIAGRAPH_EXIT="));
    assert!(after.contains("DIAGRAPH_EXIT=0"), "{after}");
}

//! The binary as the command-line tests start it: a private config, data
//! dir and SQLite file per test (`Sandbox`), the commands they run most,
//! and readers of what a command printed.

use crate::helpers::{copy_dir, diagraph_bin, isolate, repo, shop_pack_dir};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

/// A private config, data dir and SQLite file.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// With `config` as its config.toml.
    pub fn with_config(config: &str) -> Sandbox {
        let sb = Sandbox::new();
        sb.write_config(config);
        sb
    }

    /// Replaces its config.toml with `config`.
    pub fn write_config(&self, config: &str) {
        let dir = self.path("config/diagraph");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), config).unwrap();
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn db_url(&self) -> String {
        format!("sqlite:{}", self.path("d.db").display())
    }

    /// The binary on this sandbox's database.
    pub fn cmd(&self) -> Command {
        self.cmd_on(&self.db_url())
    }

    /// The binary on the database at `db`.
    pub fn cmd_on(&self, db: &str) -> Command {
        let mut cmd = diagraph_bin();
        isolate(&mut cmd, self.dir.path());
        cmd.arg("--database-url").arg(db);
        cmd
    }

    /// `ask --scenario` of a shipped scenario, with `args` after it.
    pub fn ask_scenario(&self, file: &str, args: &[&str]) -> Output {
        self.cmd()
            .arg("ask")
            .arg("--scenario")
            .arg(repo(&format!("fixtures/scenarios/{file}")))
            .args(args)
            .output()
            .unwrap()
    }

    /// `ask QUESTION --json` with extra arguments before `ask`.
    pub fn ask(&self, global: &[&str]) -> (Output, Value) {
        let out = self
            .cmd()
            .args(global)
            .args(["ask", "why is payment-service slow?", "--json"])
            .output()
            .unwrap();
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out, v)
    }

    /// `ask QUESTION --json` on the OpenAI-compatible endpoint at `url`,
    /// to run.
    pub fn ask_model_cmd(&self, url: &str) -> Command {
        let mut cmd = self.cmd();
        cmd.env("DIAGRAPH_OPENAI_BASE_URL", format!("{url}/v1"))
            .env("DIAGRAPH_OPENAI_API_KEY", "sk-test-not-a-real-key")
            .args([
                "--model",
                "openai",
                "ask",
                "why is payment-service slow?",
                "--json",
            ]);
        cmd
    }

    /// `ask QUESTION --json` on the OpenAI-compatible endpoint at `url`.
    pub fn ask_model(&self, url: &str) -> (Output, Value) {
        let out = self.ask_model_cmd(url).output().unwrap();
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out, v)
    }

    /// Every stored run is ended: none is left RUNNING.
    pub fn assert_nothing_running(&self) -> Vec<Value> {
        let out = self.cmd().args(["runs", "--json"]).output().unwrap();
        let runs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        for r in &runs {
            assert_ne!(r["status"], "RUNNING", "{r}");
        }
        runs
    }

    /// `trace RUN --json`, which must succeed.
    pub fn trace(&self, run_id: &Value) -> Value {
        let out = self
            .cmd()
            .args(["trace", &run_id.to_string(), "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// A copy of the shipped pack to break.
    pub fn pack(&self) -> PathBuf {
        let dst = self.path("pack");
        copy_dir(&shop_pack_dir(), &dst);
        dst
    }
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The exit code, -1 when a signal ended the process.
pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// Standard output as JSON.
pub fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

/// The failed sources of an `ask --json` object: (tool, class, message).
pub fn failed_sources(v: &Value) -> Vec<(String, String, String)> {
    v["failed_sources"]
        .as_array()
        .unwrap_or_else(|| panic!("no failed_sources in {v}"))
        .iter()
        .map(|f| {
            (
                f["tool"].as_str().unwrap().to_string(),
                f["class"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The command failed with one error line that says `needle`, and no panic.
pub fn assert_one_line_error(o: &Output, needle: &str) {
    assert!(!o.status.success(), "expected failure, got {:?}", o.status);
    let err = stderr(o);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one error line, got: {err}");
    assert!(
        lines[0].to_lowercase().contains(&needle.to_lowercase()),
        "error {:?} should mention {needle:?}",
        lines[0]
    );
    assert!(!err.contains("panicked"), "{err}");
}

/// Exit code `exit` and one error line that says `needle`.
pub fn assert_exits_in_one_line(o: &Output, exit: i32, needle: &str) {
    assert_eq!(code(o), exit, "{}", stderr(o));
    assert_one_line_error(o, needle);
}

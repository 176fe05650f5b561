//! An independent OpenAI-compatible mock server: `@copilotkit/aimock` from
//! the npm registry, run with Node. Tests give it fixtures (match + response,
//! in its documented JSON format) and read back what it received from its
//! request journal (`GET /__aimock/journal`).
//!
//! Where it lives: `DIAGRAPH_TEST_AIMOCK` (the package directory), else
//! `$XDG_CACHE_HOME/diagraph-tests/aimock` (or `~/.cache/...`), where
//! `.ci/run` installs it. When it is missing, the first test installs it
//! there with `npm install` (tests may download; the product never does).
//! Without Node or npm the tests skip outside CI and fail under CI.

use crate::helpers::skip_or_fail;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The version the tests were written against (fixture format, journal).
pub const AIMOCK_VERSION: &str = "1.43.0";

fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("diagraph-tests").join("aimock")
}

fn cli_in(package: &Path) -> PathBuf {
    package.join("dist").join("cli.js")
}

/// The aimock CLI script, installing the package once when it is missing;
/// Err says why it cannot be had.
fn aimock_cli() -> Result<PathBuf, String> {
    static CLI: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    CLI.get_or_init(|| {
        if let Some(dir) = std::env::var_os("DIAGRAPH_TEST_AIMOCK") {
            let cli = cli_in(Path::new(&dir));
            return if cli.is_file() {
                Ok(cli)
            } else {
                Err(format!(
                    "DIAGRAPH_TEST_AIMOCK={} has no dist/cli.js",
                    Path::new(&dir).display()
                ))
            };
        }
        let prefix = cache_dir();
        let package = prefix.join("node_modules/@copilotkit/aimock");
        if cli_in(&package).is_file() {
            return Ok(cli_in(&package));
        }
        if Command::new("node").arg("--version").output().is_err() {
            return Err("node is not installed (apt-get install nodejs npm)".into());
        }
        // Install beside, then move into place: another test process may
        // be doing the same.
        let staging = prefix.with_extension(format!("staging-{}", std::process::id()));
        std::fs::create_dir_all(&staging).map_err(|e| e.to_string())?;
        let out = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&staging)
            .arg(format!("@copilotkit/aimock@{AIMOCK_VERSION}"))
            .output()
            .map_err(|e| format!("npm could not run: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "npm install @copilotkit/aimock failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        if let Some(parent) = prefix.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        if std::fs::rename(&staging, &prefix).is_err() {
            // Someone else won the race; theirs is as good.
            let _ = std::fs::remove_dir_all(&staging);
        }
        let cli = cli_in(&package);
        if cli.is_file() {
            Ok(cli)
        } else {
            Err(format!("{} missing after npm install", cli.display()))
        }
    })
    .clone()
}

/// A running aimock, stopped on drop.
pub struct Aimock {
    child: Child,
    pub url: String,
    _dir: tempfile::TempDir,
}

impl Aimock {
    /// Starts aimock with these fixtures (the `fixtures` array of its JSON
    /// format). None when it cannot run here and the test should skip.
    pub fn start(test: &str, fixtures: Value) -> Option<Aimock> {
        let cli = match aimock_cli() {
            Ok(c) => c,
            Err(why) => {
                skip_or_fail(test, &why);
                return None;
            }
        };
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("fixtures.json");
        std::fs::write(&file, json!({ "fixtures": fixtures }).to_string()).unwrap();
        let mut child = Command::new("node")
            .arg(&cli)
            .args(["--host", "127.0.0.1", "--port", "0", "--log-level", "info"])
            .arg("--fixtures")
            .arg(&file)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(at) = line.find("listening on ") {
                    let _ = tx.send(line[at + "listening on ".len()..].trim().to_string());
                }
            }
        });
        let url = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                panic!("aimock did not report its address within 30 s");
            }
        };
        Some(Aimock {
            child,
            url,
            _dir: dir,
        })
    }

    /// The OpenAI base URL (`…/v1`).
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.url)
    }

    /// The bodies of the chat requests it received, oldest first.
    pub async fn received(&self) -> Vec<Value> {
        self.journal().await.into_iter().map(|(_, b)| b).collect()
    }

    /// (path with query, body) of each chat request, oldest first.
    pub async fn journal(&self) -> Vec<(String, Value)> {
        let started = Instant::now();
        loop {
            let got = reqwest::get(format!("{}/__aimock/journal?limit=1000", self.url)).await;
            if let Ok(r) = got {
                let entries: Value = r.json().await.unwrap();
                let mut bodies: Vec<(i64, String, Value)> = entries
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|e| {
                        let path = e["path"].as_str()?;
                        path.contains("/chat/completions").then(|| {
                            (
                                e["timestamp"].as_i64().unwrap_or(0),
                                path.to_string(),
                                e["body"].clone(),
                            )
                        })
                    })
                    .collect();
                bodies.sort_by_key(|(t, _, _)| *t);
                return bodies.into_iter().map(|(_, p, b)| (p, b)).collect();
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "journal unreachable"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Aimock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fixture answering `content` to requests whose last user message
/// contains `user`.
pub fn on_user(user: &str, response: Value) -> Value {
    json!({"match": {"userMessage": user}, "response": response})
}

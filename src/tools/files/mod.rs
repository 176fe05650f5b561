//! `query_logs` over local log files: one glob or several joined by `:`
//! (`DIAGRAPH_LOG_FILES`), each file JSON lines, a `journalctl -o json`
//! export, classic syslog, another shipped plain-text layout, or plain text
//! read with a configured regex (`tools::logs::format`).
//!
//! Files on a host grow and rotate: the glob is expanded at every call, and
//! the table of records is rebuilt when the set of files or any file's
//! [`Stamp`] (length, inode, modification and change times, a digest of
//! parts of its content) changed since it was built; otherwise the table
//! already built answers. A file that cannot be read, or too many
//! records that do not parse, make the invocation fail or say it read the
//! files in part; a glob that names no file fails with that reason.

mod glob;

use crate::config::LogFilesConfig;
use crate::tools::logs::format::{Defaults, Format, TextPattern, shipped, shipped_names};
use crate::tools::logs::index::Stamp;
use crate::tools::logs::table::{LogFile, LogTable};
use crate::tools::logs::{LogQuery, answer, query_logs_spec};
use crate::tools::{Tool, ToolError, ToolOutput};
use crate::vocab::tool::ToolSpec;
use async_trait::async_trait;
use chrono::Utc;
use serde_json::{Map, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Lines read from the start of a file to recognise its format.
const DETECT_LINES: usize = 20;

/// How the records of the files are to be read.
#[derive(Debug, Clone)]
enum Reading {
    /// Each file's own format, recognised from its first lines.
    Detect,
    Fixed(Format),
}

pub struct FileLogs {
    inner: Arc<Inner>,
    timeout: Duration,
}

/// What a query needs, shared with the blocking task that reads files.
struct Inner {
    globs: String,
    reading: Reading,
    service: Option<String>,
    built: Mutex<Option<Arc<Built>>>,
}

/// A table and what it was built from.
struct Built {
    stamps: Vec<(PathBuf, Option<Stamp>)>,
    table: LogTable,
    /// Files whose format could not be recognised, and why.
    skipped: Vec<String>,
}

impl std::fmt::Debug for FileLogs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileLogs")
            .field("globs", &self.inner.globs)
            .finish()
    }
}

impl FileLogs {
    /// From the `[logs.files]` configuration; a pattern that does not
    /// compile or a format that does not exist is an error now, not at the
    /// first query.
    pub fn new(cfg: &LogFilesConfig, timeout: Duration) -> Result<FileLogs, String> {
        let globs = cfg.paths.clone().unwrap_or_default();
        if globs.trim().is_empty() {
            return Err(
                "the files log backend needs paths (set DIAGRAPH_LOG_FILES or logs.files.paths)"
                    .into(),
            );
        }
        let bad = |m: String| format!("logs.files: {m}");
        glob::expand(&globs).map_err(bad)?;
        let reading = match (cfg.pattern.as_deref(), cfg.format.trim()) {
            (Some(p), _) => Reading::Fixed(Format::Text(
                TextPattern::new("configured", p, cfg.ts_format.as_deref()).map_err(bad)?,
            )),
            (None, "" | "auto") => Reading::Detect,
            (None, "json" | "journald") => Reading::Fixed(Format::Json),
            (None, name) => Reading::Fixed(Format::Text(shipped(name).ok_or_else(|| {
                bad(format!(
                    "format {name:?} is not auto, json, journald or one of {}; or set `pattern`",
                    shipped_names().join(", ")
                ))
            })?)),
        };
        Ok(FileLogs {
            inner: Arc::new(Inner {
                globs,
                reading,
                service: cfg.service.clone().filter(|s| !s.trim().is_empty()),
                built: Mutex::new(None),
            }),
            timeout,
        })
    }
}

impl Inner {
    /// The table for the files the globs name now, rebuilt only when they
    /// changed. Blocking: file reads.
    fn table(&self) -> Result<Arc<Built>, ToolError> {
        let files = glob::expand(&self.globs).map_err(ToolError::Unreadable)?;
        if files.is_empty() {
            return Err(ToolError::Unreadable(format!(
                "no log file matches {}",
                self.globs
            )));
        }
        let stamps: Vec<(PathBuf, Option<Stamp>)> = files
            .iter()
            .map(|p| (p.clone(), Stamp::of(p).ok()))
            .collect();
        let mut slot = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = slot.as_ref().filter(|b| b.stamps == stamps) {
            return Ok(Arc::clone(b));
        }
        let mut skipped = Vec::new();
        let log_files: Vec<LogFile> = files
            .iter()
            .filter_map(|p| match self.format_of(p) {
                Ok(format) => Some(LogFile {
                    path: p.clone(),
                    name: p.display().to_string(),
                    missing: format!("{} is missing", p.display()),
                    format,
                    defaults: Defaults {
                        service: Some(self.service.clone().unwrap_or_else(|| stem(p))),
                        strict: false,
                    },
                }),
                Err(why) => {
                    skipped.push(format!("{}: {why}", p.display()));
                    None
                }
            })
            .collect();
        let mut warnings = Vec::new();
        let table = LogTable::build(log_files, &mut warnings, &mut |_, _| {});
        for w in &warnings {
            tracing::warn!(warning = %w, "log file warning");
        }
        let built = Arc::new(Built {
            stamps,
            table,
            skipped,
        });
        *slot = Some(Arc::clone(&built));
        Ok(built)
    }

    fn format_of(&self, path: &Path) -> Result<Format, String> {
        if let Reading::Fixed(f) = &self.reading {
            return Ok(f.clone());
        }
        if let Some(why) = crate::tools::not_a_regular_file(path) {
            return Err(format!("cannot read: {why}"));
        }
        let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
        let lines: Vec<String> = BufReader::new(file)
            .lines()
            .take(DETECT_LINES)
            .map_while(Result::ok)
            .collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        if refs.iter().all(|l| l.trim().is_empty()) {
            // An empty file has no records, in any format.
            return Ok(Format::Json);
        }
        Format::detect(&refs).ok_or_else(|| {
            "its format was not recognised (set logs.files.format or logs.files.pattern)".into()
        })
    }
}

/// A file's service when its records name none: its name up to the first
/// dot (`/var/log/nginx/error.log` -> `error`).
fn stem(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .and_then(|n| n.split('.').next().map(str::to_string))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "logs".into())
}

#[async_trait]
impl Tool for FileLogs {
    fn spec(&self) -> ToolSpec {
        query_logs_spec()
    }

    fn backend(&self) -> String {
        format!("files:{}", self.inner.globs)
    }

    fn timeout(&self) -> Option<Duration> {
        Some(self.timeout)
    }

    async fn call(&self, args: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
        // Live files: relative windows end now.
        let q = LogQuery::parse(args, Utc::now())?;
        let inner = Arc::clone(&self.inner);
        let query = q.clone();
        let (built, found) = tokio::task::spawn_blocking(move || {
            let built = inner.table()?;
            let found = built.table.query(&query)?;
            Ok::<_, ToolError>((built, found))
        })
        .await
        .map_err(|e| ToolError::Backend(format!("the log query stopped: {e}")))??;
        // Files whose format was not recognised, or that were read in
        // part, were not checked whole: the answer says so.
        let mut problems: Vec<String> = built.skipped.clone();
        match built.table.readable.check() {
            Ok(Some(why)) => problems.push(why.to_string()),
            Ok(None) => {}
            Err(e) if built.table.files().is_empty() || built.skipped.is_empty() => {
                problems.push(e.to_string());
                return Err(ToolError::Unreadable(problems.join("; ")));
            }
            Err(e) => problems.push(e.to_string()),
        }
        let partial = (!problems.is_empty()).then(|| problems.join("; "));
        let mut nothing = String::from("no log line matched these filters");
        if let Some(s) = &q.service
            && !built.table.has_service(s)
        {
            nothing.push_str("; the log files have no lines at all for this service");
        }
        answer(found, args, &nothing, partial)
    }
}

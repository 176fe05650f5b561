//! Reading `pack.toml`, `alerts.json` and `logs.jsonl`.
//!
//! Everything here is user input. Only an unreadable `pack.toml` stops the
//! load; every other problem is a [`PackWarning`] naming the file and line,
//! and the usable rest is kept: a bad alert skips that alert, a bad log
//! line skips that line. Each data file also gets a [`Readable`] verdict:
//! a file that is missing, unreadable or corrupt, or whose bad items pass
//! [`too_many_bad`], makes its tool fail with the reason; a file read only
//! in part (the size cap, a tail cut mid-line) makes it say what was left
//! out. "Could not check" must never read as "found nothing".

use crate::text::clean;
use crate::tools::pack::jsonpos::array_item_lines;
use crate::tools::pack::text::parse_time;
use crate::tools::pack::{Alert, LogLine, PackError, PackManifest, PackWarning, Readable};
use serde_json::{Map, Value};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Files larger than this are not read whole (logs: read up to it).
pub const MAX_FILE_BYTES: u64 = 50 * 1024 * 1024;
/// Log lines longer than this are skipped.
pub const MAX_LOG_LINE_BYTES: usize = 64 * 1024;
/// Per-file cap on itemised warnings; the rest are counted.
const MAX_WARNINGS_PER_FILE: usize = 20;

/// More than one item in twenty unusable: the file as a whole cannot be
/// trusted to answer "is there any X", so its tool fails instead of
/// answering from the rest. Fewer are warnings recorded with the run.
pub fn too_many_bad(bad: usize, total: usize) -> bool {
    bad > 0 && bad * 20 > total
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
}

/// Collects warnings for one file, itemising the first few.
pub struct FileWarnings<'a> {
    file: String,
    out: &'a mut Vec<PackWarning>,
    count: usize,
}

impl<'a> FileWarnings<'a> {
    pub fn new(file: &str, out: &'a mut Vec<PackWarning>) -> Self {
        FileWarnings {
            file: file.to_string(),
            out,
            count: 0,
        }
    }

    pub fn warn(&mut self, line: Option<usize>, message: impl Into<String>) {
        self.count += 1;
        if self.count <= MAX_WARNINGS_PER_FILE {
            self.out.push(PackWarning {
                file: self.file.clone(),
                line,
                message: clean(&message.into(), 300),
            });
        }
    }
}

impl Drop for FileWarnings<'_> {
    fn drop(&mut self) {
        if self.count > MAX_WARNINGS_PER_FILE {
            self.out.push(PackWarning {
                file: self.file.clone(),
                line: None,
                message: format!(
                    "{} more problems in this file not listed",
                    self.count - MAX_WARNINGS_PER_FILE
                ),
            });
        }
    }
}

pub fn load_manifest(
    dir: &Path,
    warnings: &mut Vec<PackWarning>,
) -> Result<PackManifest, PackError> {
    let path = dir.join("pack.toml");
    let unreadable = |message: String| PackError::Unreadable {
        path: path.clone(),
        message,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| unreadable(e.to_string()))?;
    let table: toml::Table =
        toml::from_str(&text).map_err(|e| unreadable(clean(&e.to_string(), 300)))?;
    let mut w = FileWarnings::new("pack.toml", warnings);
    let string = |key: &str, w: &mut FileWarnings| match table.get(key) {
        None => None,
        Some(toml::Value::String(s)) => Some(s.clone()),
        Some(_) => {
            w.warn(None, format!("'{key}' must be a string; ignored"));
            None
        }
    };
    let name = string("name", &mut w).unwrap_or_else(|| {
        w.warn(None, "missing 'name'; using the directory name");
        dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "pack".into())
    });
    let description = string("description", &mut w).unwrap_or_default();
    let mut services = Vec::new();
    match table.get("services") {
        None => {}
        Some(toml::Value::Array(items)) => {
            for item in items {
                match item.as_str().map(str::trim) {
                    Some(s) if !s.is_empty() && !services.iter().any(|x| x == s) => {
                        services.push(s.to_string())
                    }
                    Some(_) => {}
                    None => w.warn(None, "'services' entries must be strings; one ignored"),
                }
            }
        }
        Some(_) => w.warn(None, "'services' must be a list of strings; ignored"),
    }
    let now = match table.get("now") {
        None => None,
        Some(v) => {
            let s = match v {
                toml::Value::String(s) => s.clone(),
                toml::Value::Datetime(d) => d.to_string(),
                other => other.to_string(),
            };
            let t = parse_time(&s);
            if t.is_none() {
                w.warn(
                    None,
                    format!("'now' is not an RFC 3339 time: {s}; using the newest log time"),
                );
            }
            t
        }
    };
    for key in table.keys() {
        if !["name", "description", "services", "now"].contains(&key.as_str()) {
            w.warn(None, format!("unknown key '{key}' ignored"));
        }
    }
    Ok(PackManifest {
        name,
        description,
        services,
        now,
    })
}

/// Why a small file could not be read whole.
pub enum Unread {
    Missing,
    /// Too big, or an I/O error: the message says which.
    Failed(String),
}

/// A whole small file, with invalid UTF-8 replaced (and warned about).
pub fn read_whole(
    dir: &Path,
    rel: &str,
    warnings: &mut Vec<PackWarning>,
) -> Result<String, Unread> {
    let path = dir.join(rel);
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Unread::Missing),
        Err(e) => return Err(Unread::Failed(format!("cannot read: {e}"))),
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(Unread::Failed(format!(
            "file is {}, over the {} limit; not read",
            mib(meta.len()),
            mib(MAX_FILE_BYTES)
        )));
    }
    let bytes = std::fs::read(&path).map_err(|e| Unread::Failed(format!("cannot read: {e}")))?;
    match String::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => {
            FileWarnings::new(rel, warnings)
                .warn(None, "file is not valid UTF-8; invalid bytes replaced");
            Ok(String::from_utf8_lossy(e.as_bytes()).into_owned())
        }
    }
}

/// Reads a whole small file, or warns why not. `None` if absent (warned
/// about when `missing_warning`) or unreadable.
pub fn read_small(
    dir: &Path,
    rel: &str,
    warnings: &mut Vec<PackWarning>,
    missing_warning: bool,
) -> Option<String> {
    match read_whole(dir, rel, warnings) {
        Ok(text) => Some(text),
        Err(Unread::Missing) => {
            if missing_warning {
                FileWarnings::new(rel, warnings)
                    .warn(None, "file is missing; the pack has none of this data");
            }
            None
        }
        Err(Unread::Failed(why)) => {
            FileWarnings::new(rel, warnings).warn(None, why);
            None
        }
    }
}

/// The pack's alerts and whether `alerts.json` could answer at all.
pub fn load_alerts(dir: &Path, warnings: &mut Vec<PackWarning>) -> (Vec<Alert>, Readable) {
    let text = match read_whole(dir, "alerts.json", warnings) {
        Ok(text) => text,
        Err(Unread::Missing) => {
            let why = "alerts.json is missing from the pack";
            FileWarnings::new("alerts.json", warnings).warn(None, "file is missing");
            return (Vec::new(), Readable::Unreadable(why.into()));
        }
        Err(Unread::Failed(why)) => {
            FileWarnings::new("alerts.json", warnings).warn(None, why.clone());
            return (
                Vec::new(),
                Readable::Unreadable(format!("alerts.json: {why}")),
            );
        }
    };
    let mut w = FileWarnings::new("alerts.json", warnings);
    let parsed = parse_alerts_checked(&text, &mut w);
    let readable = match parsed.broken {
        Some(why) => Readable::Unreadable(format!("alerts.json {why}")),
        None if too_many_bad(parsed.skipped.len(), parsed.total) => Readable::Unreadable(format!(
            "alerts.json: {} of {} alerts could not be read (first: {})",
            parsed.skipped.len(),
            parsed.total,
            parsed.skipped.first().map(String::as_str).unwrap_or("")
        )),
        None => Readable::Whole,
    };
    (parsed.alerts, readable)
}

/// Alerts parsed from `alerts.json` text, with what was wrong.
pub struct ParsedAlerts {
    pub alerts: Vec<Alert>,
    /// Items in the file, good and bad.
    pub total: usize,
    /// One line per skipped alert: "line 12: no 'labels'".
    pub skipped: Vec<String>,
    /// The file as a whole does not parse: "line 7: not valid JSON (...)".
    pub broken: Option<String>,
}

pub fn parse_alerts(text: &str, w: &mut FileWarnings) -> Vec<Alert> {
    parse_alerts_checked(text, w).alerts
}

pub fn parse_alerts_checked(text: &str, w: &mut FileWarnings) -> ParsedAlerts {
    let mut out = ParsedAlerts {
        alerts: Vec::new(),
        total: 0,
        skipped: Vec::new(),
        broken: None,
    };
    if text.trim().is_empty() {
        return out;
    }
    let broken = |w: &mut FileWarnings, line: usize, why: String| {
        w.warn(Some(line), why.clone());
        ParsedAlerts {
            alerts: Vec::new(),
            total: 0,
            skipped: Vec::new(),
            broken: Some(format!("line {line}: {why}")),
        }
    };
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let why = format!("not valid JSON ({})", strip_position(&e.to_string()));
            return broken(w, e.line().max(1), why);
        }
    };
    // The bare array, Prometheus' full response, or just {"alerts": [...]}.
    let (items, path): (&Vec<Value>, &[&str]) = match &root {
        Value::Array(a) => (a, &[]),
        Value::Object(o) => match (o.get("data").and_then(|d| d.get("alerts")), o.get("alerts")) {
            (Some(Value::Array(a)), _) => (a, &["data", "alerts"]),
            (_, Some(Value::Array(a))) => (a, &["alerts"]),
            _ => {
                return broken(
                    w,
                    1,
                    "expected an array of alerts, {\"data\": {\"alerts\": [...]}} or {\"alerts\": [...]}".into(),
                );
            }
        },
        _ => {
            return broken(
                w,
                1,
                "expected an array of alerts or an object holding one".into(),
            );
        }
    };
    let lines = array_item_lines(text, path).filter(|l| l.len() == items.len());
    out.total = items.len();
    out.alerts.reserve(items.len());
    for (i, item) in items.iter().enumerate() {
        let line = lines.as_ref().and_then(|l| l.get(i).copied());
        match parse_alert(item) {
            Ok(a) => out.alerts.push(a),
            Err(msg) => {
                let at = line.map_or_else(|| format!("alert #{}", i + 1), |l| format!("line {l}"));
                out.skipped.push(format!("{at}: {msg}"));
                w.warn(line, format!("alert #{} skipped: {msg}", i + 1));
            }
        }
    }
    out
}

/// serde_json's message without its " at line L column C" tail (the line
/// is reported apart).
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

fn parse_alert(v: &Value) -> Result<Alert, String> {
    let obj = v.as_object().ok_or("not an object")?;
    let labels = match obj.get("labels") {
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err("'labels' is not an object".into()),
        None => return Err("no 'labels'".into()),
    };
    if !labels.get("alertname").is_some_and(Value::is_string) {
        return Err("no string label 'alertname'".into());
    }
    let annotations = match obj.get("annotations") {
        Some(Value::Object(m)) => m.clone(),
        None | Some(Value::Null) => Map::new(),
        Some(_) => return Err("'annotations' is not an object".into()),
    };
    let state = obj
        .get("state")
        .and_then(Value::as_str)
        .map(|s| s.trim().to_ascii_lowercase())
        .ok_or("no string 'state'")?;
    if !["firing", "pending", "resolved", "inactive"].contains(&state.as_str()) {
        return Err(format!(
            "state '{}' is not firing, pending, resolved or inactive",
            clean(&state, 30)
        ));
    }
    let active_at = match obj.get("activeAt") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(
            parse_time(s)
                .ok_or_else(|| format!("activeAt '{}' is not an RFC 3339 time", clean(s, 40)))?,
        ),
        Some(_) => return Err("'activeAt' is not a string".into()),
    };
    let value = match obj.get("value") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(_) => return Err("'value' is not a string or number".into()),
    };
    Ok(Alert {
        labels,
        annotations,
        state,
        active_at,
        value,
    })
}

/// The pack's log lines and whether `logs.jsonl` could answer whole.
pub fn load_logs(dir: &Path, warnings: &mut Vec<PackWarning>) -> (Vec<LogLine>, Readable) {
    load_logs_capped(dir, warnings, MAX_FILE_BYTES)
}

/// [`load_logs`] with the size cap given (tests use a small one).
pub fn load_logs_capped(
    dir: &Path,
    warnings: &mut Vec<PackWarning>,
    cap: u64,
) -> (Vec<LogLine>, Readable) {
    let path = dir.join("logs.jsonl");
    let mut w = FileWarnings::new("logs.jsonl", warnings);
    let (file, size) = match std::fs::File::open(&path).and_then(|f| {
        let size = f.metadata()?.len();
        Ok((f, size))
    }) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            w.warn(None, "file is missing");
            return (
                Vec::new(),
                Readable::Unreadable("logs.jsonl is missing from the pack".into()),
            );
        }
        Err(e) => {
            w.warn(None, format!("cannot read: {e}"));
            return (
                Vec::new(),
                Readable::Unreadable(format!("logs.jsonl: cannot read: {e}")),
            );
        }
    };
    let mut reader = BufReader::new(file.take(cap));
    let mut logs = Vec::new();
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    let mut read_total = 0u64;
    // Non-empty lines seen, and those that could not be used.
    let mut lines = 0usize;
    let mut bad: Vec<String> = Vec::new();
    let mut stopped: Option<String> = None;
    let mut cut_tail: Option<usize> = None;
    loop {
        buf.clear();
        let n = match reader.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                w.warn(Some(line_no + 1), format!("read error: {e}; stopped here"));
                stopped = Some(format!("read error at line {}: {e}", line_no + 1));
                break;
            }
        };
        read_total += n as u64;
        line_no += 1;
        let ends_line = buf.last() == Some(&b'\n');
        if buf.len() > MAX_LOG_LINE_BYTES {
            w.warn(
                Some(line_no),
                format!(
                    "line is {} bytes, over the {MAX_LOG_LINE_BYTES}-byte limit; skipped",
                    buf.len()
                ),
            );
            lines += 1;
            bad.push(format!("line {line_no}: too long"));
            continue;
        }
        let Ok(text) = std::str::from_utf8(&buf) else {
            w.warn(Some(line_no), "line is not valid UTF-8; skipped");
            lines += 1;
            bad.push(format!("line {line_no}: not valid UTF-8"));
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        lines += 1;
        match parse_log_line(text) {
            Ok(l) => logs.push(l),
            // A last line without its newline that does not parse is a
            // write cut short (or the size cap), not a bad line.
            Err(_) if !ends_line => {
                w.warn(Some(line_no), "the file ends in the middle of this line");
                lines -= 1;
                cut_tail = Some(line_no);
            }
            Err(msg) => {
                bad.push(format!("line {line_no}: {msg}"));
                w.warn(Some(line_no), msg);
            }
        }
    }
    let readable = if let Some(why) = stopped {
        Readable::Partial(format!(
            "logs.jsonl was read only up to line {line_no}: {why}"
        ))
    } else if read_total >= cap && size > cap {
        let why = format!(
            "logs.jsonl is {}; only the first {} (up to line {line_no}) were read",
            mib(size),
            mib(cap)
        );
        w.warn(None, why.clone());
        Readable::Partial(why)
    } else if too_many_bad(bad.len(), lines) {
        Readable::Unreadable(format!(
            "logs.jsonl: {} of {} lines could not be read (first: {})",
            bad.len(),
            lines,
            bad.first().map(String::as_str).unwrap_or("")
        ))
    } else if let Some(line) = cut_tail {
        Readable::Partial(format!(
            "logs.jsonl ends in the middle of line {line}: the file looks cut short, and \
             what followed was not read"
        ))
    } else {
        Readable::Whole
    };
    // Chronological; stable, so lines with equal times keep file order.
    logs.sort_by_key(|l| l.ts);
    (logs, readable)
}

const TS_KEYS: [&str; 4] = ["ts", "timestamp", "time", "@timestamp"];
const SERVICE_KEYS: [&str; 3] = ["service", "app", "component"];
const LEVEL_KEYS: [&str; 3] = ["level", "severity", "lvl"];
const MESSAGE_KEYS: [&str; 2] = ["message", "msg"];

pub fn parse_log_line(text: &str) -> Result<LogLine, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not a JSON object: {e}"))?;
    let Value::Object(mut obj) = v else {
        return Err("not a JSON object".into());
    };
    let mut take = |keys: &[&str], what: &str| -> Result<String, String> {
        for k in keys {
            if let Some(v) = obj.get(*k) {
                let s = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => return Err(format!("'{k}' is not a string")),
                };
                obj.remove(*k);
                return Ok(s);
            }
        }
        Err(format!("missing '{what}'"))
    };
    let ts_text = take(&TS_KEYS, "ts")?;
    let service = take(&SERVICE_KEYS, "service")?;
    let level = take(&LEVEL_KEYS, "level")?;
    let message = take(&MESSAGE_KEYS, "message")?;
    let ts = parse_time(&ts_text)
        .ok_or_else(|| format!("ts '{}' is not an RFC 3339 time", clean(&ts_text, 40)))?;
    Ok(LogLine {
        ts,
        service: service.trim().to_string(),
        level: level.trim().to_ascii_uppercase(),
        message,
        extra: obj,
    })
}

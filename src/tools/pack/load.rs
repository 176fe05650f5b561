//! Reading `pack.toml`, `alerts.json` and `logs.jsonl`.
//!
//! Everything here is user input. Only an unreadable `pack.toml` stops the
//! load; every other problem is a [`PackWarning`] naming the file and line,
//! and the usable rest is kept: a bad alert skips that alert, a bad log
//! line skips that line.

use crate::text::clean;
use crate::tools::pack::jsonpos::array_item_lines;
use crate::tools::pack::text::parse_time;
use crate::tools::pack::{Alert, LogLine, PackError, PackManifest, PackWarning};
use serde_json::{Map, Value};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Files larger than this are not read whole (logs: read up to it).
pub const MAX_FILE_BYTES: u64 = 50 * 1024 * 1024;
/// Log lines longer than this are skipped.
pub const MAX_LOG_LINE_BYTES: usize = 64 * 1024;
/// Per-file cap on itemised warnings; the rest are counted.
const MAX_WARNINGS_PER_FILE: usize = 20;

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

/// Reads a whole small file, or warns why not. `None` if absent (and `required_warning`).
pub fn read_small(
    dir: &Path,
    rel: &str,
    warnings: &mut Vec<PackWarning>,
    missing_warning: bool,
) -> Option<String> {
    let path = dir.join(rel);
    let mut w = FileWarnings::new(rel, warnings);
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if missing_warning {
                w.warn(None, "file is missing; the pack has none of this data");
            }
            return None;
        }
        Err(e) => {
            w.warn(None, format!("cannot read: {e}"));
            return None;
        }
    };
    if meta.len() > MAX_FILE_BYTES {
        w.warn(
            None,
            format!(
                "file is {} bytes, over the {MAX_FILE_BYTES}-byte limit; skipped",
                meta.len()
            ),
        );
        return None;
    }
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            w.warn(None, format!("cannot read: {e}"));
            return None;
        }
    };
    match String::from_utf8(bytes) {
        Ok(s) => Some(s),
        Err(e) => {
            w.warn(None, "file is not valid UTF-8; invalid bytes replaced");
            Some(String::from_utf8_lossy(e.as_bytes()).into_owned())
        }
    }
}

pub fn load_alerts(dir: &Path, warnings: &mut Vec<PackWarning>) -> Vec<Alert> {
    let Some(text) = read_small(dir, "alerts.json", warnings, true) else {
        return Vec::new();
    };
    parse_alerts(&text, &mut FileWarnings::new("alerts.json", warnings))
}

pub fn parse_alerts(text: &str, w: &mut FileWarnings) -> Vec<Alert> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            w.warn(Some(e.line()), format!("not valid JSON: {e}"));
            return Vec::new();
        }
    };
    // The bare array, Prometheus' full response, or just {"alerts": [...]}.
    let (items, path): (&Vec<Value>, &[&str]) = match &root {
        Value::Array(a) => (a, &[]),
        Value::Object(o) => match (o.get("data").and_then(|d| d.get("alerts")), o.get("alerts")) {
            (Some(Value::Array(a)), _) => (a, &["data", "alerts"]),
            (_, Some(Value::Array(a))) => (a, &["alerts"]),
            _ => {
                w.warn(Some(1), "expected an array of alerts, {\"data\": {\"alerts\": [...]}} or {\"alerts\": [...]}");
                return Vec::new();
            }
        },
        _ => {
            w.warn(
                Some(1),
                "expected an array of alerts or an object holding one",
            );
            return Vec::new();
        }
    };
    let lines = array_item_lines(text, path).filter(|l| l.len() == items.len());
    let mut alerts = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let line = lines.as_ref().and_then(|l| l.get(i).copied());
        match parse_alert(item) {
            Ok(a) => alerts.push(a),
            Err(msg) => w.warn(line, format!("alert #{} skipped: {msg}", i + 1)),
        }
    }
    alerts
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

pub fn load_logs(dir: &Path, warnings: &mut Vec<PackWarning>) -> Vec<LogLine> {
    let path = dir.join("logs.jsonl");
    let mut w = FileWarnings::new("logs.jsonl", warnings);
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            w.warn(None, "file is missing; the pack has no logs");
            return Vec::new();
        }
        Err(e) => {
            w.warn(None, format!("cannot read: {e}"));
            return Vec::new();
        }
    };
    let mut reader = BufReader::new(file.take(MAX_FILE_BYTES));
    let mut logs = Vec::new();
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    let mut read_total = 0u64;
    loop {
        buf.clear();
        let n = match reader.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                w.warn(Some(line_no + 1), format!("read error: {e}; stopped here"));
                break;
            }
        };
        read_total += n as u64;
        line_no += 1;
        if buf.len() > MAX_LOG_LINE_BYTES {
            w.warn(
                Some(line_no),
                format!(
                    "line is {} bytes, over the {MAX_LOG_LINE_BYTES}-byte limit; skipped",
                    buf.len()
                ),
            );
            continue;
        }
        let Ok(text) = std::str::from_utf8(&buf) else {
            w.warn(Some(line_no), "line is not valid UTF-8; skipped");
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        match parse_log_line(text) {
            Ok(l) => logs.push(l),
            Err(msg) => w.warn(Some(line_no), msg),
        }
    }
    if read_total >= MAX_FILE_BYTES {
        w.warn(
            None,
            format!(
                "file is over {MAX_FILE_BYTES} bytes; only the first {MAX_FILE_BYTES} were read"
            ),
        );
    }
    // Chronological; stable, so lines with equal times keep file order.
    logs.sort_by_key(|l| l.ts);
    logs
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

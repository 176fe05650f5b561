//! Reading `pack.toml`, `alerts.json` and `logs.jsonl` (the last through
//! `tools::logs::table`, which streams it).
//!
//! Everything here is user input. Only an unreadable `pack.toml` stops the
//! load; every other problem is a [`PackWarning`] naming the file and line,
//! and the usable rest is kept: a bad alert skips that alert, a bad log
//! line skips that line. Each data file also gets a [`Readable`] verdict:
//! a file that is missing, unreadable or corrupt, or whose bad items pass
//! [`too_many_bad`], makes its tool fail with the reason; a file read only
//! in part (a tail cut mid-line, a read error) makes it say what was left
//! out. "Could not check" must never read as "found nothing".

use crate::text::clean;
use crate::tools::common::parse_time;
use crate::tools::common::{FileWarnings, PackWarning, Readable, too_many_bad};
use crate::tools::logs::LogLine;
use crate::tools::logs::format::{Defaults, Format};
use crate::tools::logs::index::{IndexPolicy, IndexUse};
use crate::tools::logs::table::{LogFile, LogTable};
use crate::tools::pack::jsonpos::array_item_lines;
use crate::tools::pack::{Alert, PackError, PackManifest};
use serde_json::{Map, Value};
use std::path::Path;

/// Files read whole (`alerts.json`, documents) larger than this are not
/// read; log files are streamed, whatever their size.
pub const MAX_FILE_BYTES: u64 = 50 * 1024 * 1024;
// `logs::index` still imports it from here.
pub(crate) use crate::tools::logs::MAX_LOG_LINE_BYTES;
fn mib(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
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
    let aliases = load_aliases(table.get("aliases"), &mut w);
    for key in table.keys() {
        if !["name", "description", "services", "now", "aliases"].contains(&key.as_str()) {
            w.warn(None, format!("unknown key '{key}' ignored"));
        }
    }
    Ok(PackManifest {
        name,
        description,
        services,
        now,
        aliases,
    })
}

/// `[aliases]`: `name = ["other", "names"]`, the names the sources hold
/// that a question's `name` stands for. A malformed entry is a warning and
/// left out; the rest load.
fn load_aliases(
    value: Option<&toml::Value>,
    w: &mut FileWarnings,
) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut out = std::collections::BTreeMap::new();
    let table = match value {
        None => return out,
        Some(toml::Value::Table(t)) => t,
        Some(_) => {
            w.warn(None, "'aliases' must be a table of name = [names]; ignored");
            return out;
        }
    };
    for (name, targets) in table {
        let name = clean(name, 120);
        let list: Vec<String> = match targets {
            toml::Value::String(s) => vec![clean(s, 120)],
            toml::Value::Array(items) => items
                .iter()
                .filter_map(|i| i.as_str().map(|s| clean(s, 120)))
                .collect(),
            _ => vec![],
        };
        let list: Vec<String> = list.into_iter().filter(|s| !s.is_empty()).collect();
        if name.is_empty() || list.is_empty() {
            w.warn(
                None,
                format!("alias '{name}' must name a list of strings; ignored"),
            );
            continue;
        }
        out.insert(name, list);
    }
    out
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
    if let Some(why) = crate::tools::not_a_regular_file(&path) {
        return Err(Unread::Failed(format!("cannot read: {why}")));
    }
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
    // A file cut to nothing (a failed copy, `> alerts.json`) is not "no
    // alerts firing": that is written `[]`, and only that reads as none.
    if text.trim().is_empty() {
        let why = "the file is empty (no alerts firing is written [])";
        w.warn(None, why);
        return (
            Vec::new(),
            Readable::Unreadable(format!("alerts.json: {why}")),
        );
    }
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

/// The pack's `logs.jsonl` as a [`LogTable`] (its verdict says whether it
/// can answer whole): from its index when it has one for this content,
/// else read once, streaming, and indexed as `index` says. `progress`
/// hears bytes read and bytes in all while the file is read.
pub fn load_logs(
    dir: &Path,
    index: &IndexPolicy,
    warnings: &mut Vec<PackWarning>,
    progress: &mut dyn FnMut(u64, u64),
) -> (LogTable, IndexUse) {
    crate::tools::logs::index::load_or_build(pack_log_file(dir), index, warnings, progress)
}

/// `logs.jsonl` as the table reads it: JSON lines with the pack's keys,
/// each line naming its service and level.
pub fn pack_log_file(dir: &Path) -> LogFile {
    LogFile {
        path: dir.join("logs.jsonl"),
        name: "logs.jsonl".into(),
        missing: "logs.jsonl is missing from the pack".into(),
        format: Format::Json,
        defaults: Defaults {
            service: None,
            strict: true,
        },
    }
}

/// One line of `logs.jsonl`: ts, service, level, message (extra keys kept).
pub fn parse_log_line(text: &str) -> Result<LogLine, String> {
    crate::tools::logs::format::parse_json(
        text,
        &Defaults {
            service: None,
            strict: true,
        },
    )
}

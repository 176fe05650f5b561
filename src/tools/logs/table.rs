//! Log files served as `query_logs` without holding their lines in memory.
//!
//! A [`LogTable`] reads its files once, streaming, and keeps per record
//! only what filtering and counting need (time, where it is in which file,
//! and ids of its service, level and pattern): a few dozen bytes a line,
//! whatever the lines' length. A query narrows by time (binary search),
//! service and level on that table, reads back from the files only the
//! records a keyword must be checked in (in file order, through one
//! buffered window) and the sample it returns, and counts every match
//! exactly.
//!
//! Files are user input: a record that does not parse is a warning with
//! its file and line, and the [`Readable`] verdict says whether the files
//! as a whole can answer (see `tools::pack::load`). A file that changed
//! after it was read makes the query fail with that reason.

use super::format::{Defaults, Format};
use super::sample::Sampler;
use super::{Found, LogLine, LogQuery, norm_level};
use crate::text::pattern::{Shape, letter_runs, shape};
use crate::tools::ToolError;
use crate::tools::pack::load::{FileWarnings, MAX_LOG_LINE_BYTES, too_many_bad};
use crate::tools::pack::{PackWarning, Readable};
use crate::vocab::buckets::TimeBuckets;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::PathBuf;

/// Distinct patterns remembered; records of further patterns are still
/// counted, but not as lines like any other.
pub(super) const MAX_PATTERNS: usize = 200_000;
pub(super) const UNTRACKED: u32 = u32::MAX;
/// Letter runs a pattern's records may hide before they are not known.
pub(super) const MAX_HIDDEN_RUNS: usize = 64;
/// Bytes read back from a file at a time.
const WINDOW_BYTES: usize = 1 << 20;

/// One file a table reads, and how.
#[derive(Debug, Clone)]
pub struct LogFile {
    pub path: PathBuf,
    /// How warnings and failures name it (`logs.jsonl`, or the path).
    pub name: String,
    /// What to say when it is missing.
    pub missing: String,
    pub format: Format,
    pub defaults: Defaults,
}

/// One record: what filtering and counting need, and where to read the
/// rest. The index (`super::index`) stores these as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Entry {
    /// µs since the epoch.
    pub(super) ts: i64,
    pub(super) offset: u64,
    pub(super) len: u32,
    pub(super) service: u32,
    /// An id of [`LogTable::patterns`], or [`UNTRACKED`].
    pub(super) pattern: u32,
    pub(super) level: u16,
    pub(super) file: u16,
}

pub struct LogTable {
    pub(super) files: Vec<LogFile>,
    /// Sorted by time; records of equal time keep file order.
    pub(super) entries: Vec<Entry>,
    pub(super) services: Vec<String>,
    /// Normalised ([`norm_level`]).
    pub(super) levels: Vec<String>,
    /// The message patterns ([`pattern`]) records are grouped by; a
    /// keyword found in a pattern is in every message of it.
    pub(super) patterns: Vec<String>,
    /// Per pattern, what its records hid from it ([`Shape::hidden`], and
    /// the letter runs of their extra keys): a word of letters in neither
    /// the pattern nor these is in none of its records. `None`: not known
    /// (a message cut short, too many runs).
    pub(super) hidden: Vec<Option<Vec<String>>>,
    pub readable: Readable,
}

/// Ids for strings seen again and again.
struct Interner<T> {
    ids: HashMap<String, T>,
    names: Vec<String>,
    cap: usize,
}

impl<T: Copy + TryFrom<usize>> Interner<T> {
    fn new(cap: usize) -> Self {
        Interner {
            ids: HashMap::new(),
            names: Vec::new(),
            cap,
        }
    }

    fn id(&mut self, s: &str) -> Option<T> {
        if let Some(id) = self.ids.get(s) {
            return Some(*id);
        }
        if self.names.len() >= self.cap {
            return None;
        }
        let id = T::try_from(self.names.len()).ok()?;
        self.ids.insert(s.to_string(), id);
        self.names.push(s.to_string());
        Some(id)
    }
}

/// What reading one file found.
struct FileRead {
    records: usize,
    bad: Vec<String>,
    stopped: Option<String>,
    cut_tail: Option<usize>,
    last_line: usize,
}

impl Default for LogTable {
    /// A table of no files and no records.
    fn default() -> Self {
        LogTable {
            files: Vec::new(),
            entries: Vec::new(),
            services: Vec::new(),
            levels: Vec::new(),
            patterns: Vec::new(),
            hidden: Vec::new(),
            readable: Readable::Whole,
        }
    }
}

impl LogTable {
    /// Reads every file once. `progress` hears (bytes read, bytes in all).
    pub fn build(
        files: Vec<LogFile>,
        warnings: &mut Vec<PackWarning>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> LogTable {
        let total_bytes: u64 = files
            .iter()
            .filter_map(|f| std::fs::metadata(&f.path).ok())
            .map(|m| m.len())
            .sum();
        let mut b = Builder {
            entries: Vec::new(),
            services: Interner::new(u32::MAX as usize - 1),
            levels: Interner::new(u16::MAX as usize - 1),
            patterns: Interner::new(MAX_PATTERNS),
            hidden: Vec::new(),
            done: 0,
            total_bytes,
        };
        let mut verdicts = Vec::new();
        for (i, f) in files.iter().enumerate() {
            let Ok(file_id) = u16::try_from(i) else {
                verdicts.push(Readable::Unreadable(format!(
                    "{}: more than {} log files; not read",
                    f.name,
                    u16::MAX
                )));
                continue;
            };
            let mut w = FileWarnings::new(&f.name, warnings);
            verdicts.push(b.read_file(f, file_id, &mut w, progress));
        }
        // Chronological; stable, so equal times keep file order.
        b.entries.sort_by_key(|e| e.ts);
        b.entries.shrink_to_fit();
        LogTable {
            readable: combine(&files, verdicts),
            files,
            entries: b.entries,
            services: b.services.names,
            levels: b.levels.names,
            patterns: b.patterns.names,
            hidden: b.hidden,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn files(&self) -> &[LogFile] {
        &self.files
    }

    /// The newest record's time.
    pub fn newest(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        self.entries
            .last()
            .and_then(|e| chrono::DateTime::from_timestamp_micros(e.ts))
    }

    pub fn has_service(&self, name: &str) -> bool {
        self.services.iter().any(|s| s.eq_ignore_ascii_case(name))
    }

    /// Every record, oldest first, read back from the files (small tables
    /// and tests).
    pub fn read_all(&self) -> Result<Vec<LogLine>, ToolError> {
        let mut reader = Reader::new(&self.files);
        (0..self.entries.len())
            .map(|i| self.line(&mut reader, i))
            .collect()
    }

    /// The matching records: exact figures over all of them and a sample.
    pub fn query(&self, q: &LogQuery) -> Result<Found, ToolError> {
        let lo = q.since.map_or(0, |s| {
            self.entries
                .partition_point(|e| e.ts < s.timestamp_micros())
        });
        let hi = q.until.map_or(self.entries.len(), |u| {
            self.entries
                .partition_point(|e| e.ts <= u.timestamp_micros())
        });
        let services: Option<Vec<bool>> = q.service.as_ref().map(|want| {
            self.services
                .iter()
                .map(|s| s.eq_ignore_ascii_case(want))
                .collect()
        });
        let levels: Option<Vec<bool>> = q
            .levels
            .as_ref()
            .map(|want| self.levels.iter().map(|l| want.contains(l)).collect());
        let pick = |flags: &Option<Vec<bool>>, id: usize| {
            flags
                .as_ref()
                .is_none_or(|f| f.get(id).copied().unwrap_or(false))
        };
        let candidates = self
            .entries
            .get(lo..hi.max(lo))
            .unwrap_or(&[])
            .iter()
            .enumerate()
            .filter(|(_, e)| pick(&services, e.service as usize) && pick(&levels, e.level as usize))
            .map(|(i, _)| lo + i);
        let mut sampler = Sampler::new(q.limit);
        if let Some(grid) = self.grid(q, lo, hi) {
            sampler = sampler.with_buckets(grid);
        }
        let key = |e: &Entry| (e.pattern != UNTRACKED).then_some((e.service, e.level, e.pattern));
        let mut reader = Reader::new(&self.files);
        if q.words.is_empty() {
            for i in candidates {
                let e = &self.entries[i];
                sampler.add(e.ts, i as u64, key(e));
            }
        } else {
            // A record whose pattern holds every word matches without being
            // read; the others are checked in the records themselves, read
            // in file order so each part of a file is read once.
            let mut in_pattern = PatternWords::new(&self.patterns, &self.hidden, &q.words);
            let mut order: Vec<usize> = Vec::new();
            for i in candidates {
                let e = &self.entries[i];
                match in_pattern.decide(e.pattern) {
                    Decided::All => sampler.add(e.ts, i as u64, key(e)),
                    Decided::None => {}
                    Decided::Read => order.push(i),
                }
            }
            order.sort_unstable_by_key(|i| (self.entries[*i].file, self.entries[*i].offset));
            let mut lower = Vec::new();
            for i in order {
                let e = self.entries[i];
                let raw = reader.record(&e)?;
                if !may_contain(raw, &q.words, &mut lower) {
                    continue;
                }
                let line = self.parse(&e, raw)?;
                if q.matches(&line) {
                    sampler.add(e.ts, i as u64, key(&e));
                }
            }
        }
        let sample = sampler.finish();
        let lines = sample
            .picked
            .iter()
            .map(|p| self.line(&mut reader, p.id as usize))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Found {
            sample,
            lines,
            groups_counted: true,
        })
    }

    /// The buckets a query's matches are counted in: its window, or as
    /// far as the records it covers reach where it leaves one end open.
    fn grid(&self, q: &LogQuery, lo: usize, hi: usize) -> Option<TimeBuckets> {
        let first = q
            .since
            .map(|s| s.timestamp_micros())
            .or_else(|| self.entries.get(lo).map(|e| e.ts))?;
        let last = q.until.map(|u| u.timestamp_micros()).or_else(|| {
            hi.checked_sub(1)
                .and_then(|i| self.entries.get(i))
                .map(|e| e.ts)
        })?;
        Some(TimeBuckets::covering(first, last))
    }

    fn line(&self, reader: &mut Reader, i: usize) -> Result<LogLine, ToolError> {
        let e = *self
            .entries
            .get(i)
            .ok_or_else(|| ToolError::Unreadable("log record out of range".into()))?;
        let raw = reader.record(&e)?;
        self.parse(&e, raw)
    }

    fn parse(&self, e: &Entry, raw: &[u8]) -> Result<LogLine, ToolError> {
        let f = &self.files[e.file as usize];
        let text = String::from_utf8_lossy(&raw[..raw.len().min(MAX_LOG_LINE_BYTES)]);
        f.format.parse(&text, &f.defaults).map_err(|_| changed(f))
    }
}

fn changed(f: &LogFile) -> ToolError {
    ToolError::Unreadable(format!(
        "{} changed after it was read; its records are no longer where they were",
        f.name
    ))
}

/// What a pattern says of a keyword query for all its records, known
/// from its text and what its records hid from it ([`Shape`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decided {
    /// Every record holds every word.
    All,
    /// No record holds some word.
    None,
    /// Read the records.
    Read,
}

/// A pattern keeps its message's text verbatim between the `*` and single
/// spaces it puts for variable words and whitespace, so a word with
/// neither that is in the pattern is in every message of it. A word of
/// ASCII letters lies inside one word of a message, so it is in a message
/// only if it is in the pattern or in a letter run the pattern hid. Only
/// ASCII words are decided: Unicode lowercasing depends on context (a
/// final sigma), which masking changes.
struct PatternWords<'a> {
    patterns: &'a [String],
    hidden: &'a [Option<Vec<String>>],
    words: &'a [String],
    /// Every word can be looked for in a pattern's text.
    usable: bool,
    known: Vec<Option<Decided>>,
}

impl<'a> PatternWords<'a> {
    fn new(
        patterns: &'a [String],
        hidden: &'a [Option<Vec<String>>],
        words: &'a [String],
    ) -> PatternWords<'a> {
        let usable = !words.is_empty()
            && words
                .iter()
                .all(|w| !w.is_empty() && w.is_ascii() && !w.contains(['*', ' ']));
        PatternWords {
            patterns,
            hidden,
            words,
            usable,
            known: vec![None; patterns.len()],
        }
    }

    fn decide(&mut self, id: u32) -> Decided {
        let i = id as usize;
        let (Some(slot), Some(pattern)) = (self.known.get(i), self.patterns.get(i)) else {
            return Decided::Read;
        };
        if let Some(d) = slot {
            return *d;
        }
        let text = pattern.to_lowercase();
        let hidden = self.hidden.get(i).and_then(Option::as_ref);
        let d = if self.usable && self.words.iter().all(|w| text.contains(w.as_str())) {
            Decided::All
        } else if let Some(hidden) = hidden
            && self.words.iter().any(|w| {
                w.bytes().all(|b| b.is_ascii_alphabetic())
                    && !text.contains(w.as_str())
                    && !hidden.iter().any(|h| h.contains(w.as_str()))
            })
        {
            Decided::None
        } else {
            Decided::Read
        };
        self.known[i] = Some(d);
        d
    }
}

/// Whether a record may hold every word: a cheap test on its raw bytes
/// that never says no to a record that does. Only plain ASCII records
/// without escapes are tested (elsewhere Unicode case folding and JSON
/// escapes could hide a match); the rest are parsed and checked.
fn may_contain(raw: &[u8], words: &[String], lower: &mut Vec<u8>) -> bool {
    if !raw.is_ascii() || raw.contains(&b'\\') {
        return true;
    }
    lower.clear();
    lower.extend(raw.iter().map(u8::to_ascii_lowercase));
    words
        .iter()
        .all(|w| memchr::memmem::find(lower, w.as_bytes()).is_some())
}

/// One verdict for all files: unreadable when none can answer, partial
/// (naming each problem) when some could not be read whole.
fn combine(files: &[LogFile], verdicts: Vec<Readable>) -> Readable {
    if files.len() == 1 {
        return verdicts.into_iter().next().unwrap_or_default();
    }
    let mut problems = Vec::new();
    let mut unreadable = 0;
    for v in &verdicts {
        match v {
            Readable::Whole | Readable::Absent => {}
            Readable::Partial(why) => problems.push(why.clone()),
            Readable::Unreadable(why) => {
                unreadable += 1;
                problems.push(why.clone());
            }
        }
    }
    if files.is_empty() {
        Readable::Unreadable("no log files".into())
    } else if unreadable == files.len() {
        Readable::Unreadable(problems.join("; "))
    } else if problems.is_empty() {
        Readable::Whole
    } else {
        Readable::Partial(problems.join("; "))
    }
}

struct Builder {
    entries: Vec<Entry>,
    services: Interner<u32>,
    levels: Interner<u16>,
    patterns: Interner<u32>,
    hidden: Vec<Option<Vec<String>>>,
    done: u64,
    total_bytes: u64,
}

/// A record being read: where it starts, its bytes so far (at most one
/// past the line limit) and its line.
struct Pending {
    offset: u64,
    /// Bytes of the record in the file, continuation lines included.
    span: u64,
    bytes: Vec<u8>,
    line: usize,
    /// Whether its last line ended with a newline.
    ended: bool,
}

impl Builder {
    fn read_file(
        &mut self,
        f: &LogFile,
        file_id: u16,
        w: &mut FileWarnings,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Readable {
        if let Some(why) = crate::tools::not_a_regular_file(&f.path) {
            w.warn(None, format!("cannot read: {why}"));
            return Readable::Unreadable(format!("{}: cannot read: {why}", f.name));
        }
        let file = match std::fs::File::open(&f.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                w.warn(None, "file is missing");
                return Readable::Unreadable(f.missing.clone());
            }
            Err(e) => {
                w.warn(None, format!("cannot read: {e}"));
                return Readable::Unreadable(format!("{}: cannot read: {e}", f.name));
            }
        };
        let mut reader = BufReader::with_capacity(256 * 1024, file);
        let mut r = FileRead {
            records: 0,
            bad: Vec::new(),
            stopped: None,
            cut_tail: None,
            last_line: 0,
        };
        let mut buf = Vec::new();
        let mut offset = 0u64;
        let mut pending: Option<Pending> = None;
        let mut last_report = 0u64;
        loop {
            buf.clear();
            let n = match reader.read_until(b'\n', &mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) => {
                    w.warn(
                        Some(r.last_line + 1),
                        format!("read error: {e}; stopped here"),
                    );
                    r.stopped = Some(format!("read error at line {}: {e}", r.last_line + 1));
                    break;
                }
            };
            r.last_line += 1;
            let line_no = r.last_line;
            let at = offset;
            offset += n as u64;
            self.done += n as u64;
            if self.done - last_report >= 8 << 20 {
                last_report = self.done;
                progress(self.done, self.total_bytes);
            }
            let ended = buf.last() == Some(&b'\n');
            let (blank, starts) = {
                let text = String::from_utf8_lossy(&buf);
                (text.trim().is_empty(), f.format.starts_record(&text))
            };
            if blank {
                continue;
            }
            if starts {
                if let Some(p) = pending.take() {
                    self.finish(f, file_id, p, w, &mut r);
                }
                let mut bytes = std::mem::take(&mut buf);
                bytes.truncate(MAX_LOG_LINE_BYTES + 1);
                pending = Some(Pending {
                    offset: at,
                    span: n as u64,
                    bytes,
                    line: line_no,
                    ended,
                });
            } else if let Some(p) = pending.as_mut().filter(|p| p.offset + p.span == at) {
                // A continuation line (a stack trace): part of the record.
                p.span += n as u64;
                let room = (MAX_LOG_LINE_BYTES + 1).saturating_sub(p.bytes.len());
                p.bytes.extend_from_slice(&buf[..buf.len().min(room)]);
                p.ended = ended;
            } else {
                r.bad.push(format!("line {line_no}: not a log record"));
                w.warn(
                    Some(line_no),
                    "not a log record in this file's format; skipped",
                );
            }
        }
        if let Some(p) = pending.take() {
            self.finish(f, file_id, p, w, &mut r);
        }
        progress(self.done, self.total_bytes);
        verdict(f, &r)
    }

    /// Adds what a record of pattern `id` hid from it.
    fn note_hidden(&mut self, id: u32, shape: Shape, l: &LogLine) {
        let Some(i) = (id != UNTRACKED).then_some(id as usize) else {
            return;
        };
        while self.hidden.len() <= i {
            self.hidden.push(Some(Vec::new()));
        }
        let slot = &mut self.hidden[i];
        let Some(runs) = slot.as_mut() else { return };
        if shape.cut {
            *slot = None;
            return;
        }
        for r in shape.hidden {
            if !runs.contains(&r) {
                runs.push(r);
            }
        }
        // What the keyword search reads besides the message (`haystack`).
        for v in l.extra.values() {
            match v {
                serde_json::Value::String(x) => letter_runs(x, runs),
                other => letter_runs(&other.to_string(), runs),
            }
        }
        if runs.len() > MAX_HIDDEN_RUNS {
            *slot = None;
        }
    }

    fn finish(
        &mut self,
        f: &LogFile,
        file_id: u16,
        p: Pending,
        w: &mut FileWarnings,
        r: &mut FileRead,
    ) {
        let json = matches!(f.format, Format::Json);
        if json && p.bytes.len() > MAX_LOG_LINE_BYTES {
            w.warn(
                Some(p.line),
                format!(
                    "line is {} bytes, over the {MAX_LOG_LINE_BYTES}-byte limit; skipped",
                    p.bytes.len()
                ),
            );
            r.bad.push(format!("line {}: too long", p.line));
            return;
        }
        // A long plain-text record (a deep stack trace) is read as far as
        // the limit; what matters is at its start.
        let text = if json || p.bytes.len() <= MAX_LOG_LINE_BYTES {
            let Ok(text) = std::str::from_utf8(&p.bytes) else {
                w.warn(Some(p.line), "line is not valid UTF-8; skipped");
                r.bad.push(format!("line {}: not valid UTF-8", p.line));
                return;
            };
            std::borrow::Cow::Borrowed(text)
        } else {
            String::from_utf8_lossy(&p.bytes[..MAX_LOG_LINE_BYTES])
        };
        match f.format.parse(&text, &f.defaults) {
            Ok(l) => {
                let (Some(service), Some(level)) = (
                    self.services.id(&l.service),
                    self.levels.id(&norm_level(&l.level)),
                ) else {
                    r.bad
                        .push(format!("line {}: too many services or levels", p.line));
                    return;
                };
                let shape = shape(&l.message, true);
                let pattern = self.patterns.id(&shape.pattern).unwrap_or(UNTRACKED);
                self.note_hidden(pattern, shape, &l);
                let Ok(len) = u32::try_from(p.bytes.len()) else {
                    r.bad.push(format!("line {}: too long", p.line));
                    return;
                };
                r.records += 1;
                self.entries.push(Entry {
                    ts: l.ts_micros(),
                    offset: p.offset,
                    len,
                    service,
                    pattern,
                    level,
                    file: file_id,
                });
            }
            // A last line without its newline that does not parse is a
            // write cut short, not a bad line.
            Err(_) if !p.ended => {
                w.warn(Some(p.line), "the file ends in the middle of this line");
                r.cut_tail = Some(p.line);
            }
            Err(msg) => {
                r.bad.push(format!("line {}: {msg}", p.line));
                w.warn(Some(p.line), msg);
            }
        }
    }
}

fn verdict(f: &LogFile, r: &FileRead) -> Readable {
    let lines = r.records + r.bad.len();
    if let Some(why) = &r.stopped {
        Readable::Partial(format!(
            "{} was read only up to line {}: {why}",
            f.name, r.last_line
        ))
    } else if too_many_bad(r.bad.len(), lines) {
        Readable::Unreadable(format!(
            "{}: {} of {} lines could not be read (first: {})",
            f.name,
            r.bad.len(),
            lines,
            r.bad.first().map(String::as_str).unwrap_or("")
        ))
    } else if let Some(line) = r.cut_tail {
        Readable::Partial(format!(
            "{} ends in the middle of line {line}: the file looks cut short, and \
             what followed was not read",
            f.name
        ))
    } else {
        Readable::Whole
    }
}

/// Reads records back from the table's files through one window.
struct Reader<'a> {
    files: &'a [LogFile],
    open: Vec<Option<std::fs::File>>,
    window: Vec<u8>,
    /// (file, offset) of `window[0]`.
    at: Option<(u16, u64)>,
}

impl<'a> Reader<'a> {
    fn new(files: &'a [LogFile]) -> Reader<'a> {
        Reader {
            files,
            open: files.iter().map(|_| None).collect(),
            window: Vec::new(),
            at: None,
        }
    }

    fn record(&mut self, e: &Entry) -> Result<&[u8], ToolError> {
        let len = e.len as usize;
        let inside = self.at.is_some_and(|(f, start)| {
            f == e.file
                && e.offset >= start
                && e.offset + len as u64 <= start + self.window.len() as u64
        });
        if !inside {
            self.fill(e)?;
        }
        let start = self.at.map_or(0, |(_, s)| s);
        let from = usize::try_from(e.offset - start).unwrap_or(usize::MAX);
        self.window
            .get(from..from.saturating_add(len))
            .ok_or_else(|| self.changed(e))
    }

    fn changed(&self, e: &Entry) -> ToolError {
        match self.files.get(e.file as usize) {
            Some(f) => changed(f),
            None => ToolError::Unreadable("log record out of range".into()),
        }
    }

    fn fill(&mut self, e: &Entry) -> Result<(), ToolError> {
        let f = self
            .files
            .get(e.file as usize)
            .ok_or_else(|| ToolError::Unreadable("log record out of range".into()))?;
        let slot = &mut self.open[e.file as usize];
        if slot.is_none() {
            *slot =
                Some(std::fs::File::open(&f.path).map_err(|err| {
                    ToolError::Unreadable(format!("{}: cannot read: {err}", f.name))
                })?);
        }
        let Some(file) = slot.as_mut() else {
            return Err(changed(f));
        };
        let want = WINDOW_BYTES.max(e.len as usize);
        self.window.clear();
        self.at = None;
        file.seek(SeekFrom::Start(e.offset))
            .and_then(|_| {
                file.by_ref()
                    .take(want as u64)
                    .read_to_end(&mut self.window)
            })
            .map_err(|err| ToolError::Unreadable(format!("{}: cannot read: {err}", f.name)))?;
        if self.window.len() < e.len as usize {
            return Err(changed(f));
        }
        self.at = Some((e.file, e.offset));
        Ok(())
    }
}

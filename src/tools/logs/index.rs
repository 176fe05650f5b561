//! The on-disk index of a large log file, so a pack of ten million lines
//! is read once, not at every start.
//!
//! An index is a [`LogTable`] as it was built from one file (its records'
//! times, places and ids, its services, levels and patterns, the file's
//! verdict and warnings), written under the cache directory
//! (`$XDG_CACHE_HOME/diagraph/log-index/`), never beside the file. It is
//! found by the file's path and format and used only when the file is the
//! one it was built from, judged by its [`Stamp`]: length, device and inode,
//! modification and change times, and a digest of its first and last
//! 64 KiB and of 32 blocks between. A file changed in any of these is read
//! again and its index rewritten. A file changed within [`SETTLE`] of the
//! build is not indexed on disk: timestamps that coarse could not tell a
//! second change in the same tick.
//!
//! Index files are untrusted input like the logs themselves: one that is
//! cut short, corrupt (a CRC-32 covers it), of another version or build,
//! or whose records do not fit the file (ids or places out of range, times
//! out of order) is rebuilt, never used. Processes building the same index
//! at once each write a file of their own and rename it into place, so a
//! reader sees a whole index or none.

use super::format::Format;
use super::table::{Entry, LogFile, LogTable, MAX_HIDDEN_RUNS, MAX_PATTERNS, UNTRACKED};
use crate::tools::pack::load::MAX_LOG_LINE_BYTES;
use crate::tools::pack::{PackWarning, Readable};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Bump when what an index holds or how a record is read changes.
pub const INDEX_VERSION: u32 = 2;
const MAGIC: &[u8; 16] = b"diagraph logidx\n";
/// Magic, version, body length, body CRC-32.
const HEADER_BYTES: u64 = 16 + 4 + 8 + 4;
const ENTRY_BYTES: usize = 32;
/// How long after its last change a file's timestamps are trusted to
/// show the next change (file systems keep times to a tick, some to 2 s).
pub const SETTLE: Duration = Duration::from_secs(2);
/// Files below this are read whole at every start: quicker than an index.
pub const MIN_INDEXED_BYTES: u64 = 8 << 20;
const SAMPLE_EDGE: u64 = 64 * 1024;
const SAMPLE_BLOCKS: u64 = 32;
const SAMPLE_BLOCK: u64 = 4096;
/// Longest string an index may hold (a warning, a service, a pattern).
const MAX_STRING: usize = 1 << 20;

/// Where and for which files indexes are kept.
#[derive(Debug, Clone)]
pub struct IndexPolicy {
    /// The directory of index files; `None`: no index, files are read
    /// whole every time.
    pub dir: Option<PathBuf>,
    /// Files smaller than this are not indexed.
    pub min_bytes: u64,
    /// How long a file must have been left alone before its index is
    /// written ([`SETTLE`]).
    pub settle: Duration,
}

impl IndexPolicy {
    /// `$XDG_CACHE_HOME/diagraph/log-index` (or the platform's cache
    /// directory) for files of [`MIN_INDEXED_BYTES`] or more.
    pub fn cache() -> IndexPolicy {
        use etcetera::BaseStrategy;
        IndexPolicy {
            dir: etcetera::choose_base_strategy()
                .ok()
                .map(|b| b.cache_dir().join("diagraph").join("log-index")),
            min_bytes: MIN_INDEXED_BYTES,
            settle: SETTLE,
        }
    }

    /// Never index: every file is read whole.
    pub fn none() -> IndexPolicy {
        IndexPolicy {
            dir: None,
            min_bytes: u64::MAX,
            settle: SETTLE,
        }
    }
}

/// What became of a file's index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum IndexUse {
    /// Not indexed (small file, no cache directory, file unreadable): read whole.
    #[default]
    NotIndexed,
    /// Read from its index.
    Loaded,
    /// Read whole and its index written.
    Built,
    /// Read whole; the index was not written, and why.
    BuiltUnsaved(String),
    /// The index there could not be used (why), so the file was read whole.
    Rebuilt { why: String, saved: bool },
}

/// What identifies a file's content without reading it all: equal
/// stamps mean the same content (see the module's notes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    dev: u64,
    ino: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    sample: [u8; 32],
}

/// The table of `file`, from its index when the file is still the one the
/// index was built from, else read whole (and indexed, when `policy` says
/// so). Warnings are those of reading the file, whichever way; `progress`
/// hears (bytes read, bytes in all) only when the file is read.
pub fn load_or_build(
    file: LogFile,
    policy: &IndexPolicy,
    warnings: &mut Vec<PackWarning>,
    progress: &mut dyn FnMut(u64, u64),
) -> (LogTable, IndexUse) {
    let Some(dir) = policy.dir.as_ref() else {
        return build(file, warnings, progress, IndexUse::NotIndexed);
    };
    let before = match stamp(&file.path) {
        Ok(s) if s.len >= policy.min_bytes => s,
        _ => return build(file, warnings, progress, IndexUse::NotIndexed),
    };
    let identity = identity(&file);
    let path = dir.join(format!(
        "{}.idx",
        &hex::encode(Sha256::digest(&identity))[..32]
    ));
    let why = match read_index(&path, &identity, &before, &file) {
        Ok((table, mut found)) => {
            warnings.append(&mut found);
            return (table, IndexUse::Loaded);
        }
        Err(Missing::No) => None,
        Err(Missing::Unusable(why)) => Some(why),
    };
    let started = SystemTime::now();
    let first = warnings.len();
    let table = LogTable::build(vec![file], warnings, progress);
    let saved = save(
        &path,
        &identity,
        &before,
        &table,
        &warnings[first..],
        policy,
        started,
    );
    let used = match (why, saved) {
        (Some(why), saved) => IndexUse::Rebuilt {
            why,
            saved: saved.is_ok(),
        },
        (None, Ok(())) => IndexUse::Built,
        (None, Err(e)) => IndexUse::BuiltUnsaved(e),
    };
    match &used {
        IndexUse::Rebuilt { why, .. } => {
            tracing::warn!(index = %path.display(), %why, "log index not used; the file was read again")
        }
        IndexUse::BuiltUnsaved(why) => {
            tracing::info!(index = %path.display(), %why, "log index not written")
        }
        _ => {}
    }
    (table, used)
}

fn build(
    file: LogFile,
    warnings: &mut Vec<PackWarning>,
    progress: &mut dyn FnMut(u64, u64),
    used: IndexUse,
) -> (LogTable, IndexUse) {
    (LogTable::build(vec![file], warnings, progress), used)
}

/// What the index is of: the file and how its records are read.
fn identity(file: &LogFile) -> String {
    let path = std::fs::canonicalize(&file.path).unwrap_or_else(|_| file.path.clone());
    let format = match &file.format {
        Format::Json => "json".to_string(),
        Format::Text(p) => format!("text:{}", p.name),
    };
    format!(
        "diagraph {} index {INDEX_VERSION}\n{}\n{}\n{}\n{:?}\n{}\n{}",
        env!("CARGO_PKG_VERSION"),
        path.display(),
        file.name,
        format,
        file.defaults.service,
        file.defaults.strict,
        file.missing,
    )
}

impl Stamp {
    /// The stamp of the file at `path` now.
    pub fn of(path: &Path) -> std::io::Result<Stamp> {
        stamp(path)
    }

    /// The SHA-256 of the parts of the content read: the head, the tail
    /// and 32 blocks between.
    pub fn sample(&self) -> &[u8; 32] {
        &self.sample
    }
}

fn stamp(path: &Path) -> std::io::Result<Stamp> {
    // Opening a named pipe waits for a writer: never open one.
    if let Some(why) = crate::tools::not_a_regular_file(path) {
        return Err(std::io::Error::other(why));
    }
    let mut f = File::open(path)?;
    let meta = f.metadata()?;
    let len = meta.len();
    let nanos = |t: std::io::Result<SystemTime>| {
        t.ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128)
    };
    #[cfg(unix)]
    let (dev, ino, ctime_ns) = {
        use std::os::unix::fs::MetadataExt;
        (
            meta.dev(),
            meta.ino(),
            i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        )
    };
    #[cfg(not(unix))]
    let (dev, ino, ctime_ns) = (0, 0, 0);
    // The head, the tail and blocks between: a rewrite of the same length
    // within one timestamp tick must still change something seen here.
    let mut h = Sha256::new();
    let mut buf = Vec::new();
    let mut take = |f: &mut File, at: u64, n: u64| -> std::io::Result<()> {
        buf.clear();
        f.seek(SeekFrom::Start(at))?;
        Read::by_ref(f).take(n).read_to_end(&mut buf)?;
        h.update((buf.len() as u64).to_le_bytes());
        h.update(&buf);
        Ok(())
    };
    take(&mut f, 0, SAMPLE_EDGE)?;
    take(&mut f, len.saturating_sub(SAMPLE_EDGE), SAMPLE_EDGE)?;
    if len > 2 * SAMPLE_EDGE {
        for i in 1..=SAMPLE_BLOCKS {
            take(&mut f, len / (SAMPLE_BLOCKS + 1) * i, SAMPLE_BLOCK)?;
        }
    }
    Ok(Stamp {
        len,
        dev,
        ino,
        mtime_ns: nanos(meta.modified()),
        ctime_ns,
        sample: h.finalize().into(),
    })
}

enum Missing {
    /// No index file.
    No,
    /// An index file that must not be used, and why.
    Unusable(String),
}

fn read_index(
    path: &Path,
    identity: &str,
    now: &Stamp,
    file: &LogFile,
) -> Result<(LogTable, Vec<PackWarning>), Missing> {
    let f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Missing::No),
        Err(e) => return Err(Missing::Unusable(format!("cannot read it: {e}"))),
    };
    let size = f
        .metadata()
        .map_err(|e| Missing::Unusable(format!("cannot read it: {e}")))?
        .len();
    let mut r = BufReader::with_capacity(256 * 1024, f);
    let bad = |why: &str| Missing::Unusable(why.to_string());
    let mut head = [0u8; HEADER_BYTES as usize];
    r.read_exact(&mut head)
        .map_err(|_| bad("it is shorter than its header"))?;
    if &head[..16] != MAGIC {
        return Err(bad("it is not a diagraph log index"));
    }
    let version = u32::from_le_bytes(head[16..20].try_into().unwrap_or_default());
    let body_len = u64::from_le_bytes(head[20..28].try_into().unwrap_or_default());
    let crc = u32::from_le_bytes(head[28..32].try_into().unwrap_or_default());
    if version != INDEX_VERSION {
        return Err(bad("it was written by another version"));
    }
    if size != HEADER_BYTES.saturating_add(body_len) {
        return Err(bad("its length is not the length it states (cut short?)"));
    }
    let mut b = Body {
        r,
        crc: crc32fast::Hasher::new(),
        left: body_len,
    };
    let corrupt = |_| bad("it is corrupt");
    if b.string().map_err(corrupt)? != identity {
        return Err(bad("it is of another file or build"));
    }
    let stamp = Stamp {
        len: b.u64().map_err(corrupt)?,
        dev: b.u64().map_err(corrupt)?,
        ino: b.u64().map_err(corrupt)?,
        mtime_ns: b.i128().map_err(corrupt)?,
        ctime_ns: b.i128().map_err(corrupt)?,
        sample: b.array().map_err(corrupt)?,
    };
    if &stamp != now {
        return Err(bad("the file changed since it was indexed"));
    }
    let table = decode(&mut b, file.clone(), stamp.len).map_err(Missing::Unusable)?;
    if b.left != 0 || b.crc.finalize() != crc {
        return Err(bad("its checksum does not match (corrupt)"));
    }
    Ok(table)
}

fn decode(
    b: &mut Body,
    file: LogFile,
    file_len: u64,
) -> Result<(LogTable, Vec<PackWarning>), String> {
    let corrupt = |_| "it is corrupt".to_string();
    let readable = match b.u8().map_err(corrupt)? {
        0 => Readable::Whole,
        1 => Readable::Partial(b.string().map_err(corrupt)?),
        2 => Readable::Unreadable(b.string().map_err(corrupt)?),
        3 => Readable::Absent,
        _ => return Err("it is corrupt (a verdict)".into()),
    };
    let n = b.count(3).map_err(corrupt)?;
    let mut warnings = Vec::with_capacity(n);
    for _ in 0..n {
        let file = b.string().map_err(corrupt)?;
        let line = match b.u64().map_err(corrupt)? {
            0 => None,
            l => Some(usize::try_from(l).map_err(|_| "it is corrupt (a line)".to_string())?),
        };
        let message = b.string().map_err(corrupt)?;
        warnings.push(PackWarning {
            file,
            line,
            message,
        });
    }
    let services = b.strings(u32::MAX as usize).map_err(corrupt)?;
    let levels = b.strings(u16::MAX as usize).map_err(corrupt)?;
    let patterns = b.strings(MAX_PATTERNS).map_err(corrupt)?;
    let mut hidden = Vec::with_capacity(patterns.len());
    for _ in 0..patterns.len() {
        hidden.push(match b.u8().map_err(corrupt)? {
            0 => None,
            1 => Some(b.strings(MAX_HIDDEN_RUNS).map_err(corrupt)?),
            _ => return Err("it is corrupt (a pattern)".into()),
        });
    }
    let n = b.count(ENTRY_BYTES as u64).map_err(corrupt)?;
    let mut entries = Vec::with_capacity(n);
    let mut chunk = vec![0u8; ENTRY_BYTES * 4096];
    let mut last = i64::MIN;
    while entries.len() < n {
        let k = (n - entries.len()).min(4096);
        let bytes = &mut chunk[..k * ENTRY_BYTES];
        b.fill(bytes).map_err(corrupt)?;
        for raw in bytes.chunks_exact(ENTRY_BYTES) {
            let e = Entry {
                ts: i64::from_le_bytes(le(&raw[0..8])),
                offset: u64::from_le_bytes(le(&raw[8..16])),
                len: u32::from_le_bytes(le(&raw[16..20])),
                service: u32::from_le_bytes(le(&raw[20..24])),
                pattern: u32::from_le_bytes(le(&raw[24..28])),
                level: u16::from_le_bytes(le(&raw[28..30])),
                file: u16::from_le_bytes(le(&raw[30..32])),
            };
            let fits = e.ts >= last
                && e.file == 0
                && (e.service as usize) < services.len()
                && (e.level as usize) < levels.len()
                && (e.pattern == UNTRACKED || (e.pattern as usize) < patterns.len())
                && e.len as usize <= MAX_LOG_LINE_BYTES + 1
                && e.offset
                    .checked_add(u64::from(e.len))
                    .is_some_and(|end| end <= file_len);
            if !fits {
                return Err("a record does not fit the file (corrupt)".into());
            }
            last = e.ts;
            entries.push(e);
        }
    }
    Ok((
        LogTable {
            files: vec![file],
            entries,
            services,
            levels,
            patterns,
            hidden,
            readable,
        },
        warnings,
    ))
}

fn le<const N: usize>(s: &[u8]) -> [u8; N] {
    s.try_into().unwrap_or([0; N])
}

/// The index body as it is read: every byte goes through the CRC, and no
/// length read from it may claim more than is left.
struct Body {
    r: BufReader<File>,
    crc: crc32fast::Hasher,
    left: u64,
}

impl Body {
    fn fill(&mut self, buf: &mut [u8]) -> std::io::Result<()> {
        let n = buf.len() as u64;
        if n > self.left {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        self.r.read_exact(buf)?;
        self.crc.update(buf);
        self.left -= n;
        Ok(())
    }

    fn array<const N: usize>(&mut self) -> std::io::Result<[u8; N]> {
        let mut a = [0u8; N];
        self.fill(&mut a)?;
        Ok(a)
    }

    fn u8(&mut self) -> std::io::Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    fn u64(&mut self) -> std::io::Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn i128(&mut self) -> std::io::Result<i128> {
        Ok(i128::from_le_bytes(self.array()?))
    }

    /// A count of items of at least `min_bytes` each, checked against
    /// what is left.
    fn count(&mut self, min_bytes: u64) -> std::io::Result<usize> {
        let n = self.u64()?;
        if n.saturating_mul(min_bytes.max(1)) > self.left {
            return Err(std::io::ErrorKind::InvalidData.into());
        }
        usize::try_from(n).map_err(|_| std::io::ErrorKind::InvalidData.into())
    }

    fn string(&mut self) -> std::io::Result<String> {
        let n = self.count(1)?;
        if n > MAX_STRING {
            return Err(std::io::ErrorKind::InvalidData.into());
        }
        let mut v = vec![0u8; n];
        self.fill(&mut v)?;
        String::from_utf8(v).map_err(|_| std::io::ErrorKind::InvalidData.into())
    }

    fn strings(&mut self, max: usize) -> std::io::Result<Vec<String>> {
        let n = self.count(8)?;
        if n > max {
            return Err(std::io::ErrorKind::InvalidData.into());
        }
        (0..n).map(|_| self.string()).collect()
    }
}

/// The index body being written, with its CRC.
struct Out<W: Write> {
    w: W,
    crc: crc32fast::Hasher,
    len: u64,
}

impl<W: Write> Out<W> {
    fn bytes(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.crc.update(b);
        self.len += b.len() as u64;
        self.w.write_all(b)
    }

    fn u64(&mut self, n: u64) -> std::io::Result<()> {
        self.bytes(&n.to_le_bytes())
    }

    fn string(&mut self, s: &str) -> std::io::Result<()> {
        self.u64(s.len() as u64)?;
        self.bytes(s.as_bytes())
    }

    fn strings(&mut self, v: &[String]) -> std::io::Result<()> {
        self.u64(v.len() as u64)?;
        v.iter().try_for_each(|s| self.string(s))
    }
}

/// Writes the index of `table`, unless the file changed while it was read
/// or too recently to be told apart from its next change.
fn save(
    path: &Path,
    identity: &str,
    before: &Stamp,
    table: &LogTable,
    warnings: &[PackWarning],
    policy: &IndexPolicy,
    started: SystemTime,
) -> Result<(), String> {
    let file = table
        .files
        .first()
        .ok_or_else(|| "the table has no file".to_string())?;
    let after = stamp(&file.path).map_err(|e| format!("cannot read the file: {e}"))?;
    if &after != before {
        return Err("the file changed while it was read".into());
    }
    let changed = i128::max(before.mtime_ns, before.ctime_ns);
    let started_ns = started
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128);
    if started_ns - changed < policy.settle.as_nanos() as i128 {
        return Err("the file changed too recently to be told apart from its next change".into());
    }
    if warnings.iter().any(|w| w.message.len() > MAX_STRING)
        || [&table.services, &table.levels, &table.patterns]
            .iter()
            .any(|v| v.iter().any(|s| s.len() > MAX_STRING))
    {
        return Err("a name is too long to index".into());
    }
    let dir = path
        .parent()
        .ok_or_else(|| "the index has no directory".to_string())?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // A name no other process uses; renamed into place when whole.
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id(),
        started_ns
    ));
    let written = write_index(&tmp, identity, before, table, warnings)
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("cannot write {}: {e}", path.display()));
    }
    Ok(())
}

fn write_index(
    tmp: &Path,
    identity: &str,
    stamp: &Stamp,
    table: &LogTable,
    warnings: &[PackWarning],
) -> std::io::Result<()> {
    let mut f = File::create(tmp)?;
    f.write_all(&[0u8; HEADER_BYTES as usize])?;
    let mut o = Out {
        w: BufWriter::with_capacity(256 * 1024, f),
        crc: crc32fast::Hasher::new(),
        len: 0,
    };
    o.string(identity)?;
    o.u64(stamp.len)?;
    o.u64(stamp.dev)?;
    o.u64(stamp.ino)?;
    o.bytes(&stamp.mtime_ns.to_le_bytes())?;
    o.bytes(&stamp.ctime_ns.to_le_bytes())?;
    o.bytes(&stamp.sample)?;
    match &table.readable {
        Readable::Whole => o.bytes(&[0])?,
        Readable::Partial(why) => {
            o.bytes(&[1])?;
            o.string(why)?;
        }
        Readable::Unreadable(why) => {
            o.bytes(&[2])?;
            o.string(why)?;
        }
        Readable::Absent => o.bytes(&[3])?,
    }
    o.u64(warnings.len() as u64)?;
    for w in warnings {
        o.string(&w.file)?;
        o.u64(w.line.map_or(0, |l| l as u64))?;
        o.string(&w.message)?;
    }
    o.strings(&table.services)?;
    o.strings(&table.levels)?;
    o.strings(&table.patterns)?;
    for i in 0..table.patterns.len() {
        match table.hidden.get(i).and_then(Option::as_ref) {
            Some(runs) => {
                o.bytes(&[1])?;
                o.strings(runs)?;
            }
            None => o.bytes(&[0])?,
        }
    }
    o.u64(table.entries.len() as u64)?;
    let mut raw = [0u8; ENTRY_BYTES];
    for e in &table.entries {
        raw[0..8].copy_from_slice(&e.ts.to_le_bytes());
        raw[8..16].copy_from_slice(&e.offset.to_le_bytes());
        raw[16..20].copy_from_slice(&e.len.to_le_bytes());
        raw[20..24].copy_from_slice(&e.service.to_le_bytes());
        raw[24..28].copy_from_slice(&e.pattern.to_le_bytes());
        raw[28..30].copy_from_slice(&e.level.to_le_bytes());
        raw[30..32].copy_from_slice(&e.file.to_le_bytes());
        o.bytes(&raw)?;
    }
    let (len, crc) = (o.len, o.crc.finalize());
    let mut f = o.w.into_inner().map_err(|e| e.into_error())?;
    let mut head = Vec::with_capacity(HEADER_BYTES as usize);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&INDEX_VERSION.to_le_bytes());
    head.extend_from_slice(&len.to_le_bytes());
    head.extend_from_slice(&crc.to_le_bytes());
    f.seek(SeekFrom::Start(0))?;
    f.write_all(&head)?;
    f.sync_all()
}

//! The pack backend: an environment pack directory (README.md, "Packs and
//! scenarios") served as tools. `pack.toml`, `alerts.json`, `logs.jsonl`,
//! `knowledge/<domain>/*.md`, `skills/<name>/SKILL.md`.
//!
//! Packs are user input: a malformed line or front matter block is a
//! warning naming the file and line, and the rest still loads. Only a
//! missing or unreadable directory or `pack.toml` is an error. Whether
//! each data file can answer at all is its [`Readable`] verdict: the tools
//! fail with it, or say what part they could not read.
//!
//! Evidence ref texts are shown in the TUI, stored, and matched by the
//! Gatekeeper, so the pack tools make them plain with
//! [`crate::text::clean`]: terminal escape sequences, control, bidi and
//! invisible characters are removed and whitespace is collapsed.

mod jsonpos;
pub mod knowledge_tool;
pub mod load;
pub mod load_knowledge;
pub mod logs;
pub mod metrics;
pub mod skill_tool;

use crate::knowledge::chunk::chunk_markdown;
use crate::knowledge::{KnowledgeDoc, KnowledgeIndex, Skill, summarize_domains};
use crate::tools::Tool;
// `logs::index` still imports these two from here.
pub(crate) use crate::tools::common::{PackWarning, Readable};
use crate::tools::logs::index::{IndexPolicy, IndexUse, Stamp};
use crate::tools::logs::table::LogTable;
use crate::vocab::catalog::{Catalog, HeldNames};
use crate::vocab::catalog::{DomainInfo, SkillInfo};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackManifest {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub services: Vec<String>,
    /// Reference time for relative windows; default: newest timestamp in the pack.
    #[serde(default)]
    pub now: Option<DateTime<Utc>>,
    /// `[aliases]`: a name a question may use -> the names the sources
    /// hold for it (`storefront = ["web-frontend", "nginx"]`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub aliases: BTreeMap<String, Vec<String>>,
}

/// An alert in Prometheus `/api/v1/alerts` `data.alerts` shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alert {
    pub labels: Map<String, Value>,
    #[serde(default)]
    pub annotations: Map<String, Value>,
    pub state: String,
    #[serde(default, rename = "activeAt")]
    pub active_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub value: Option<String>,
}

pub use crate::tools::logs::LogLine;

/// The [`Readable`] verdict of each of the pack's sources.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackHealth {
    pub alerts: Readable,
    pub logs: Readable,
    pub knowledge: Readable,
    /// Skill directory -> why its SKILL.md could not be read.
    pub unreadable_skills: BTreeMap<String, String>,
}

#[derive(Debug, thiserror::Error)]
pub enum PackError {
    #[error("pack {path}: {message}")]
    Unreadable { path: PathBuf, message: String },
}

pub struct Pack {
    pub dir: PathBuf,
    pub manifest: PackManifest,
    pub alerts: Vec<Alert>,
    /// `logs.jsonl`, streamed once into a table; lines are read back
    /// from the file when a query needs them.
    pub logs: LogTable,
    pub documents: Vec<KnowledgeDoc>,
    pub domains: Vec<DomainInfo>,
    pub index: KnowledgeIndex,
    pub skills: Vec<Skill>,
    pub warnings: Vec<PackWarning>,
    pub health: PackHealth,
    /// `sha256:…` over the pack's file names and contents.
    pub content_hash: String,
    /// Whether `logs.jsonl` was read from its index, or read and indexed.
    pub log_index: IndexUse,
}

impl Pack {
    /// Loads the pack at `dir`. Errors only if `dir` or its `pack.toml`
    /// cannot be read; every other problem is in `warnings`.
    pub fn load(dir: &Path) -> Result<Pack, PackError> {
        Pack::load_with(dir, &IndexPolicy::cache(), &mut |_, _| {})
    }

    /// [`Pack::load`], with a large `logs.jsonl` indexed as `index` says
    /// (`IndexPolicy::cache()` for [`Pack::load`]), telling `progress` how
    /// far the log file has been read when it is read (bytes read, bytes
    /// in all).
    pub fn load_with(
        dir: &Path,
        index: &IndexPolicy,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<Pack, PackError> {
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(PackError::Unreadable {
                    path: dir.to_path_buf(),
                    message: "not a directory".into(),
                });
            }
            Err(e) => {
                return Err(PackError::Unreadable {
                    path: dir.to_path_buf(),
                    message: e.to_string(),
                });
            }
        }
        // Runs record where their pack was; a relative path would not say.
        let canonical = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let dir = canonical.as_path();
        let mut warnings = Vec::new();
        let manifest = load::load_manifest(dir, &mut warnings)?;
        let (alerts, alerts_read) = load::load_alerts(dir, &mut warnings);
        let (logs, log_index) = load::load_logs(dir, index, &mut warnings, progress);
        let logs_read = logs.readable.clone();
        let knowledge = load_knowledge::load_knowledge(dir, &mut warnings);
        let skills = load_knowledge::load_skills(dir, &mut warnings);
        let domains = summarize_domains(&knowledge.documents, &knowledge.domain_meta);
        let chunks = knowledge
            .documents
            .iter()
            .flat_map(|d| chunk_markdown(&d.source, &d.title, &d.domain, &d.body))
            .collect();
        let index = match KnowledgeIndex::build(chunks) {
            Ok(i) => i,
            Err(e) => {
                warnings.push(PackWarning {
                    file: "knowledge/".into(),
                    line: None,
                    message: e,
                });
                KnowledgeIndex::build(Vec::new()).map_err(|message| PackError::Unreadable {
                    path: dir.join("knowledge"),
                    message,
                })?
            }
        };
        Ok(Pack {
            dir: dir.to_path_buf(),
            manifest,
            alerts,
            logs,
            documents: knowledge.documents,
            domains,
            index,
            skills: skills.skills,
            warnings,
            health: PackHealth {
                alerts: alerts_read,
                logs: logs_read,
                knowledge: knowledge.readable,
                unreadable_skills: skills.unreadable,
            },
            content_hash: content_hash(dir),
            log_index,
        })
    }

    /// How the run records this pack as a tool's backend.
    pub fn backend(&self) -> String {
        format!("pack:{}", self.dir.display())
    }

    /// The reference "now" for relative time windows.
    pub fn now(&self) -> DateTime<Utc> {
        // Default: the newest timestamp in the pack, so a
        // recorded incident is read as of its own time, not the wall clock.
        self.manifest
            .now
            .or_else(|| {
                self.logs
                    .newest()
                    .into_iter()
                    .chain(self.alerts.iter().filter_map(|a| a.active_at))
                    .max()
            })
            .unwrap_or_else(Utc::now)
    }

    /// Whether any part of the pack names this service: `pack.toml`'s
    /// list, an alert, a log line (case-insensitive).
    pub fn knows_service(&self, name: &str) -> bool {
        self.manifest
            .services
            .iter()
            .any(|s| s.eq_ignore_ascii_case(name))
            || self
                .alerts
                .iter()
                .any(|a| metrics::alert_service(a).is_some_and(|s| s.eq_ignore_ascii_case(name)))
            || self.logs.has_service(name)
    }

    pub fn skill_catalog(&self) -> Vec<SkillInfo> {
        self.skills
            .iter()
            .map(|s| SkillInfo {
                name: s.name.clone(),
                description: s.description.clone(),
                procedure: crate::knowledge::skills::procedure(&s.body),
            })
            .collect()
    }

    /// What the Planner may know about this pack: its domains, skills and
    /// services, as of its `now`, and the names its sources hold.
    pub fn catalog(&self) -> Catalog {
        Catalog::new(
            self.domains.clone(),
            self.skill_catalog(),
            self.manifest.services.clone(),
        )
        .at(self.now())
        .with_names(self.held_names())
    }

    /// Every name the pack's sources hold: services (pack.toml, log
    /// records, alerts), alert names and label values, and the aliases.
    pub fn held_names(&self) -> HeldNames {
        let mut services: Vec<String> = self.manifest.services.clone();
        let push = |list: &mut Vec<String>, s: &str| {
            let s = s.trim();
            if !s.is_empty() && !list.iter().any(|x| x.eq_ignore_ascii_case(s)) {
                list.push(s.to_string());
            }
        };
        for s in self.logs.services().iter() {
            push(&mut services, s.as_str());
        }
        let mut alerts = Vec::new();
        let mut labels = Vec::new();
        for a in &self.alerts {
            if let Some(s) = metrics::alert_service(a) {
                push(&mut services, &s);
            }
            for (k, v) in &a.labels {
                let Some(v) = v.as_str() else { continue };
                if k == "alertname" {
                    push(&mut alerts, v);
                } else if k != "severity" {
                    push(&mut labels, v);
                }
            }
        }
        HeldNames {
            services,
            alerts,
            labels,
            aliases: self
                .manifest
                .aliases
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }
}

/// Files up to this size go into the content hash whole. A larger one (a
/// big `logs.jsonl`) is hashed by its [`Stamp`]'s digest of its head, tail
/// and blocks between, with its length and modification time, so that a
/// start does not read it all just to name it: that is the test its index
/// passes too.
const HASHED_BYTES_PER_FILE: u64 = crate::tools::logs::index::MIN_INDEXED_BYTES;
const HASH_MAX_DEPTH: usize = 8;

/// `sha256:` over every file under `dir` (hidden ones and symlinks
/// excepted, as the loaders skip them): its relative path, its length and
/// its contents (sampled past [`HASHED_BYTES_PER_FILE`]). Equal hashes
/// mean the runs read the same pack.
pub fn content_hash(dir: &Path) -> String {
    let mut files = Vec::new();
    collect_files(dir, dir, 0, &mut files);
    files.sort();
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    for (rel, path) in files {
        h.update(rel.as_bytes());
        h.update([0]);
        let Ok(file) = std::fs::File::open(&path) else {
            h.update(b"unreadable");
            continue;
        };
        let meta = file.metadata().ok();
        let len = meta.as_ref().map_or(0, std::fs::Metadata::len);
        h.update(len.to_le_bytes());
        if len > HASHED_BYTES_PER_FILE {
            let modified = meta
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            h.update(modified.to_le_bytes());
            match Stamp::of(&path) {
                Ok(stamp) => h.update(stamp.sample()),
                Err(_) => h.update(b"read error"),
            }
            continue;
        }
        let mut limited = file.take(HASHED_BYTES_PER_FILE);
        loop {
            match limited.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => h.update(&buf[..n]),
                Err(_) => {
                    h.update(b"read error");
                    break;
                }
            }
        }
    }
    format!("sha256:{}", hex::encode(h.finalize()))
}

fn collect_files(root: &Path, dir: &Path, depth: usize, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(ft) = entry.file_type() else { continue };
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        if ft.is_dir() && depth < HASH_MAX_DEPTH {
            collect_files(root, &path, depth + 1, out);
        } else if ft.is_file() {
            let rel = path
                .strip_prefix(root)
                .map(|r| r.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default();
            out.push((rel, path));
        }
    }
}

/// query_metrics, query_logs, lookup_knowledge and read_skill over a pack
/// (lookup_knowledge only when the pack has a `knowledge/` directory).
pub fn pack_tools(pack: Arc<Pack>) -> Vec<Arc<dyn Tool>> {
    let mut tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(metrics::QueryMetrics::new(Arc::clone(&pack))),
        Arc::new(logs::QueryLogs::new(Arc::clone(&pack))),
    ];
    if pack.health.knowledge != Readable::Absent {
        tools.push(Arc::new(knowledge_tool::LookupKnowledge {
            pack: Arc::clone(&pack),
        }));
    }
    tools.push(Arc::new(skill_tool::ReadSkill { pack }));
    tools
}

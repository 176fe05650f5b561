//! The pack backend: an environment pack directory (README.md, "Packs and
//! scenarios") served as tools. `pack.toml`, `alerts.json`, `logs.jsonl`,
//! `knowledge/<domain>/*.md`, `skills/<name>/SKILL.md`.
//!
//! Packs are user input: a malformed line or front matter block is a
//! warning naming the file and line, and the rest still loads. Only a
//! missing or unreadable directory or `pack.toml` is an error.

mod jsonpos;
pub mod knowledge_tool;
pub mod load;
pub mod load_knowledge;
pub mod logs;
pub mod metrics;
pub mod skill_tool;
pub mod text;

use crate::knowledge::chunk::chunk_markdown;
use crate::knowledge::{KnowledgeDoc, KnowledgeIndex, Skill, summarize_domains};
use crate::tools::Tool;
use crate::vocab::catalog::Catalog;
use crate::vocab::catalog::{DomainInfo, SkillInfo};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogLine {
    pub ts: DateTime<Utc>,
    pub service: String,
    pub level: String,
    pub message: String,
    /// Extra keys of the line, kept as they were.
    #[serde(default, flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackWarning {
    /// File relative to the pack directory.
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for PackWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.file, l, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
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
    pub logs: Vec<LogLine>,
    pub documents: Vec<KnowledgeDoc>,
    pub domains: Vec<DomainInfo>,
    pub index: KnowledgeIndex,
    pub skills: Vec<Skill>,
    pub warnings: Vec<PackWarning>,
}

impl Pack {
    /// Loads the pack at `dir`. Errors only if `dir` or its `pack.toml`
    /// cannot be read; every other problem is in `warnings`.
    pub fn load(dir: &Path) -> Result<Pack, PackError> {
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
        let mut warnings = Vec::new();
        let manifest = load::load_manifest(dir, &mut warnings)?;
        let alerts = load::load_alerts(dir, &mut warnings);
        let logs = load::load_logs(dir, &mut warnings);
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
            skills,
            warnings,
        })
    }

    /// The reference "now" for relative time windows.
    pub fn now(&self) -> DateTime<Utc> {
        // Default: the newest timestamp in the pack, so a
        // recorded incident is read as of its own time, not the wall clock.
        self.manifest
            .now
            .or_else(|| {
                let logs = self.logs.iter().map(|l| l.ts);
                logs.chain(self.alerts.iter().filter_map(|a| a.active_at))
                    .max()
            })
            .unwrap_or_else(Utc::now)
    }

    pub fn skill_catalog(&self) -> Vec<SkillInfo> {
        self.skills
            .iter()
            .map(|s| SkillInfo {
                name: s.name.clone(),
                description: s.description.clone(),
            })
            .collect()
    }

    /// What the Planner may know about this pack: its domains, skills and
    /// services.
    pub fn catalog(&self) -> Catalog {
        Catalog::new(
            self.domains.clone(),
            self.skill_catalog(),
            self.manifest.services.clone(),
        )
    }
}

/// query_metrics, query_logs, lookup_knowledge and read_skill over a pack.
pub fn pack_tools(pack: Arc<Pack>) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(metrics::QueryMetrics::new(Arc::clone(&pack))),
        Arc::new(logs::QueryLogs::new(Arc::clone(&pack))),
        Arc::new(knowledge_tool::LookupKnowledge {
            pack: Arc::clone(&pack),
        }),
        Arc::new(skill_tool::ReadSkill { pack }),
    ]
}

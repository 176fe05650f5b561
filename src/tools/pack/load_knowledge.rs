//! Reading `knowledge/**/*.md` and `skills/<name>/SKILL.md`.
//!
//! A document's domain is its front matter `domain`, else the first
//! directory under `knowledge/`, else `general`. Its title is the front
//! matter `title`, else its first `# ` heading, else the file name.
//! `_domain.md` in a domain directory describes the domain instead of being
//! a document. Front matter problems are warnings with the file's line.

use crate::knowledge::domains::DomainMeta;
use crate::knowledge::frontmatter::{self, Parsed};
use crate::knowledge::{KnowledgeDoc, Skill};
use crate::tools::common::{FileWarnings, PackWarning, Readable, too_many_bad};
use crate::tools::pack::load::{Unread, read_whole};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Directory nesting below `knowledge/` that is searched.
const MAX_DEPTH: usize = 6;
/// Markdown files larger than this are not knowledge, they are accidents.
const MAX_DOC_BYTES: u64 = 5 * 1024 * 1024;

pub struct LoadedKnowledge {
    pub documents: Vec<KnowledgeDoc>,
    pub domain_meta: BTreeMap<String, DomainMeta>,
    /// Whether the documents can answer a search: the directory is there
    /// and few enough of its files failed to read.
    pub readable: Readable,
}

pub struct LoadedSkills {
    pub skills: Vec<Skill>,
    /// Skill directory -> why its SKILL.md could not be read.
    pub unreadable: BTreeMap<String, String>,
}

pub fn load_knowledge(dir: &Path, warnings: &mut Vec<PackWarning>) -> LoadedKnowledge {
    let root = dir.join("knowledge");
    let mut files = Vec::new();
    let mut readable = Readable::Whole;
    if root.is_dir() {
        walk(&root, 0, &mut files, warnings, dir);
    } else {
        warnings.push(PackWarning {
            file: "knowledge/".into(),
            line: None,
            message: "directory is missing; lookup_knowledge is not offered".into(),
        });
        readable = Readable::Absent;
    }
    files.sort();
    let total = files.len();
    let mut unread: Vec<String> = Vec::new();
    let mut documents = Vec::new();
    let mut domain_meta = BTreeMap::new();
    for path in files {
        let Ok(rel_k) = path.strip_prefix(&root) else {
            continue;
        };
        let source = slash_path(rel_k);
        let rel = format!("knowledge/{source}");
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(e) => {
                FileWarnings::new(&rel, warnings).warn(None, format!("cannot read: {e}"));
                unread.push(format!("{rel}: cannot read: {e}"));
                continue;
            }
        };
        if meta.len() > MAX_DOC_BYTES {
            FileWarnings::new(&rel, warnings).warn(
                None,
                format!(
                    "file is {} bytes, over the {MAX_DOC_BYTES}-byte limit; skipped",
                    meta.len()
                ),
            );
            unread.push(format!("{rel}: over the size limit"));
            continue;
        }
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                FileWarnings::new(&rel, warnings).warn(None, format!("cannot read: {e}"));
                unread.push(format!("{rel}: cannot read: {e}"));
                continue;
            }
        };
        let hash = hex::encode(Sha256::digest(&bytes));
        let text = String::from_utf8_lossy(&bytes);
        if std::str::from_utf8(&bytes).is_err() {
            // As for every other pack file: the replaced bytes may be what
            // a search or a citation would have needed.
            FileWarnings::new(&rel, warnings)
                .warn(None, "file is not valid UTF-8; invalid bytes replaced");
        }
        let parsed = parsed_with_warnings(&text, &rel, warnings);
        let dir_domain = rel_k
            .parent()
            .and_then(|p| p.components().next())
            .map(|c| c.as_os_str().to_string_lossy().into_owned());
        let domain = parsed
            .front
            .get("domain")
            .map(str::to_string)
            .or(dir_domain)
            .unwrap_or_else(|| "general".into())
            .trim()
            .to_lowercase();
        let when = parsed
            .front
            .get("when_to_retrieve")
            .unwrap_or_default()
            .to_string();
        if path.file_name().is_some_and(|n| n == "_domain.md") {
            let description = parsed
                .front
                .get("description")
                .map(str::to_string)
                .unwrap_or_else(|| first_paragraph(&parsed.body));
            domain_meta.insert(
                domain,
                DomainMeta {
                    description,
                    when_to_retrieve: when,
                },
            );
            continue;
        }
        let title = parsed
            .front
            .get("title")
            .map(str::to_string)
            .or_else(|| first_h1(&parsed.body))
            .unwrap_or_else(|| {
                path.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| source.clone())
            });
        documents.push(KnowledgeDoc {
            source,
            title,
            domain,
            when_to_retrieve: when,
            hash,
            body: parsed.body,
        });
    }
    if too_many_bad(unread.len(), total) {
        readable = Readable::Unreadable(format!(
            "{} of {} knowledge files could not be read (first: {})",
            unread.len(),
            total,
            unread.first().map(String::as_str).unwrap_or("")
        ));
    }
    LoadedKnowledge {
        documents,
        domain_meta,
        readable,
    }
}

fn walk(
    d: &Path,
    depth: usize,
    out: &mut Vec<PathBuf>,
    warnings: &mut Vec<PackWarning>,
    pack: &Path,
) {
    let entries = match std::fs::read_dir(d) {
        Ok(e) => e,
        Err(e) => {
            let rel = d.strip_prefix(pack).map(slash_path).unwrap_or_default();
            FileWarnings::new(&rel, warnings).warn(None, format!("cannot list directory: {e}"));
            return;
        }
    };
    for entry in entries.flatten() {
        let Ok(ft) = entry.file_type() else { continue };
        let path = entry.path();
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if hidden {
            continue;
        }
        // Symlinks are not followed: a pack must not reach outside itself.
        if ft.is_dir() && depth < MAX_DEPTH {
            walk(&path, depth + 1, out, warnings, pack);
        } else if ft.is_file()
            && path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("md"))
        {
            out.push(path);
        }
    }
}

pub fn load_skills(dir: &Path, warnings: &mut Vec<PackWarning>) -> LoadedSkills {
    let root = dir.join("skills");
    let mut unreadable = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(&root) else {
        warnings.push(PackWarning {
            file: "skills/".into(),
            line: None,
            message: "directory is missing; the pack has no skills".into(),
        });
        return LoadedSkills {
            skills: Vec::new(),
            unreadable,
        };
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    let mut skills: Vec<Skill> = Vec::new();
    for d in dirs {
        let dir_name = d
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if dir_name.starts_with('.') {
            continue;
        }
        let rel = format!("skills/{dir_name}/SKILL.md");
        let text = match read_whole(dir, &rel, warnings) {
            Ok(text) => text,
            Err(unread) => {
                let why = match unread {
                    Unread::Missing => "file is missing".to_string(),
                    Unread::Failed(why) => why,
                };
                FileWarnings::new(&rel, warnings).warn(None, why.clone());
                unreadable.insert(dir_name, format!("{rel}: {why}"));
                continue;
            }
        };
        let parsed = parsed_with_warnings(&text, &rel, warnings);
        let mut w = FileWarnings::new(&rel, warnings);
        let name = parsed
            .front
            .get("name")
            .unwrap_or(&dir_name)
            .trim()
            .to_string();
        let description = match parsed.front.get("description") {
            Some(d) => d.trim().to_string(),
            None => {
                w.warn(
                    Some(1),
                    "front matter has no 'description'; using the first paragraph",
                );
                first_paragraph(&parsed.body)
            }
        };
        if parsed.body.trim().is_empty() {
            w.warn(None, "skill has no procedure body; skipped");
            continue;
        }
        if skills.iter().any(|s| s.name == name) {
            w.warn(
                Some(1),
                format!("skill name '{name}' is already used; skipped"),
            );
            continue;
        }
        skills.push(Skill {
            name,
            description,
            body: parsed.body.trim().to_string(),
            source: rel,
        });
    }
    LoadedSkills { skills, unreadable }
}

fn parsed_with_warnings(text: &str, rel: &str, warnings: &mut Vec<PackWarning>) -> Parsed {
    let parsed = frontmatter::parse(text);
    let mut w = FileWarnings::new(rel, warnings);
    for issue in &parsed.issues {
        w.warn(Some(issue.line), issue.message.clone());
    }
    parsed
}

fn first_h1(body: &str) -> Option<String> {
    body.lines()
        .find_map(|l| l.strip_prefix("# "))
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

fn first_paragraph(body: &str) -> String {
    body.split("\n\n")
        .map(|p| {
            p.lines()
                .filter(|l| !l.trim_start().starts_with('#'))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .find(|p| !p.trim().is_empty())
        .map(|p| crate::text::clean(&p, 300))
        .unwrap_or_default()
}

fn slash_path(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

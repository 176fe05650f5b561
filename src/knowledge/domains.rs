//! The Planner's domain map: one [`DomainInfo`] per knowledge domain.
//!
//! A domain may describe itself in `knowledge/<domain>/_domain.md` (front
//! matter `description`, `when_to_retrieve`). Otherwise the description is
//! derived from its documents' titles and `when_to_retrieve` is the
//! documents' own `when_to_retrieve` lines joined, so a pack author only has
//! to annotate runbooks.

use crate::knowledge::KnowledgeDoc;
use crate::text::clean;
use crate::vocab::catalog::DomainInfo;
use std::collections::BTreeMap;

/// Domain-level metadata from `_domain.md`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DomainMeta {
    pub description: String,
    pub when_to_retrieve: String,
}

/// Bounds what one domain contributes to the Planner prompt.
const MAX_FIELD_CHARS: usize = 1000;

/// Domains of `docs` (plus described-but-empty ones), sorted by name.
pub fn summarize_domains(
    docs: &[KnowledgeDoc],
    meta: &BTreeMap<String, DomainMeta>,
) -> Vec<DomainInfo> {
    let mut by_domain: BTreeMap<&str, Vec<&KnowledgeDoc>> = BTreeMap::new();
    for d in docs {
        by_domain.entry(d.domain.as_str()).or_default().push(d);
    }
    for name in meta.keys() {
        by_domain.entry(name.as_str()).or_default();
    }
    by_domain
        .into_iter()
        .map(|(domain, docs)| {
            let m = meta.get(domain).cloned().unwrap_or_default();
            let description = if m.description.trim().is_empty() {
                let titles: Vec<&str> = docs.iter().map(|d| d.title.as_str()).collect();
                format!("{} document(s): {}", docs.len(), titles.join(", "))
            } else {
                m.description
            };
            let when = if m.when_to_retrieve.trim().is_empty() {
                let mut seen: Vec<&str> = Vec::new();
                for d in &docs {
                    let w = d.when_to_retrieve.trim();
                    if !w.is_empty() && !seen.contains(&w) {
                        seen.push(w);
                    }
                }
                seen.join("; ")
            } else {
                m.when_to_retrieve
            };
            DomainInfo {
                domain: domain.to_string(),
                description: clean(&description, MAX_FIELD_CHARS),
                when_to_retrieve: clean(&when, MAX_FIELD_CHARS),
                document_count: docs.len(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(domain: &str, title: &str, when: &str) -> KnowledgeDoc {
        KnowledgeDoc {
            source: format!("{domain}/{title}.md"),
            title: title.into(),
            domain: domain.into(),
            when_to_retrieve: when.into(),
            hash: String::new(),
            body: String::new(),
        }
    }

    #[test]
    fn derives_and_overrides() {
        let docs = vec![
            doc("database", "Pool", "pool errors"),
            doc("database", "Locks", "lock waits"),
            doc("jvm", "GC", ""),
        ];
        let mut meta = BTreeMap::new();
        meta.insert(
            "jvm".to_string(),
            DomainMeta {
                description: "JVM runtime".into(),
                when_to_retrieve: "GC or heap trouble".into(),
            },
        );
        let d = summarize_domains(&docs, &meta);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].domain, "database");
        assert_eq!(d[0].document_count, 2);
        assert_eq!(d[0].when_to_retrieve, "pool errors; lock waits");
        assert!(d[0].description.contains("Pool"));
        assert_eq!(d[1].when_to_retrieve, "GC or heap trouble");
    }
}

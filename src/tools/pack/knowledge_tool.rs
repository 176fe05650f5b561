//! `lookup_knowledge`: BM25 search over the pack's runbook sections,
//! optionally within one domain.

use crate::knowledge::KnowledgeHit;
use crate::text::clean;
use crate::tools::common::{Args, query_summary};
use crate::tools::pack::Pack;
use crate::tools::{Tool, ToolError, ToolOutput};
use crate::vocab::tool::{EvidenceRef, EvidenceStatus, LOOKUP_KNOWLEDGE, ToolSpec};
use async_trait::async_trait;
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub const DEFAULT_LIMIT: u64 = 5;
pub const MAX_LIMIT: u64 = 20;
const REF_TEXT_CHARS: usize = 600;

pub struct LookupKnowledge {
    pub(super) pack: Arc<Pack>,
}

pub fn knowledge_ref_text(h: &KnowledgeHit) -> String {
    format!(
        "[{}] {} > {}: {}",
        clean(&h.domain, 60),
        clean(&h.source, 200),
        clean(&h.breadcrumb, 200),
        clean(&h.text, REF_TEXT_CHARS)
    )
}

#[async_trait]
impl Tool for LookupKnowledge {
    fn spec(&self) -> ToolSpec {
        let domains: Vec<&str> = self
            .pack
            .domains
            .iter()
            .map(|d| d.domain.as_str())
            .collect();
        ToolSpec {
            name: LOOKUP_KNOWLEDGE.into(),
            description: "Search the runbooks and docs (BM25, English and Chinese). Returns matching sections with source, breadcrumb and domain.".into(),
            evidence_arrays: vec!["evidence_blocks".into()],
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "keywords, e.g. 'connection pool exhausted'"},
                    "domain": {"type": "string", "enum": domains},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        }
    }

    fn backend(&self) -> String {
        self.pack.backend()
    }

    fn pack(&self) -> Option<&Arc<Pack>> {
        Some(&self.pack)
    }

    async fn call(&self, args: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
        self.pack.health.knowledge.check()?;
        let a = Args::new(args, &["query", "domain", "limit"])?;
        let query = a.required_string("query")?;
        let domain = a.string("domain")?.map(|d| d.to_lowercase());
        let limit = a
            .uint("limit")?
            .unwrap_or(DEFAULT_LIMIT)
            .clamp(1, MAX_LIMIT) as usize;
        let summary = query_summary(args);
        if let Some(d) = &domain
            && !self.pack.domains.iter().any(|x| x.domain == *d)
        {
            let known: Vec<&str> = self
                .pack
                .domains
                .iter()
                .map(|x| x.domain.as_str())
                .collect();
            return Ok(ToolOutput::no_evidence(
                LOOKUP_KNOWLEDGE,
                &summary,
                &format!(
                    "the pack has no knowledge domain '{}'; domains: {}",
                    clean(d, 60),
                    known.join(", ")
                ),
            ));
        }
        let pack = Arc::clone(&self.pack);
        let q = query.clone();
        let dom = domain.clone();
        // Search is CPU work; keep it off the async workers.
        let hits =
            tokio::task::spawn_blocking(move || pack.index.search(&q, dom.as_deref(), limit))
                .await
                .map_err(|e| ToolError::Backend(format!("knowledge search failed: {e}")))?;
        if hits.is_empty() {
            return Ok(ToolOutput::no_evidence(
                LOOKUP_KNOWLEDGE,
                &summary,
                "no knowledge section matched this query",
            ));
        }
        let mut domains: Vec<String> = Vec::new();
        for h in &hits {
            if !domains.contains(&h.domain) {
                domains.push(h.domain.clone());
            }
        }
        Ok(ToolOutput {
            body: json!({"evidence_blocks": hits, "total": hits.len()}),
            evidence_status: EvidenceStatus::Supported,
            evidence_refs: hits
                .iter()
                .enumerate()
                .map(|(i, h)| EvidenceRef {
                    raw_path: format!("$.evidence_blocks[{i}]"),
                    text: knowledge_ref_text(h),
                })
                .collect(),
            retrieved_domains: domains,
            partial: None,
            buckets: None,
        })
    }
}

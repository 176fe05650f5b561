//! BM25 index over knowledge chunks (tantivy).

use super::KnowledgeChunk;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeHit {
    pub source: String,
    pub breadcrumb: String,
    pub domain: String,
    pub text: String,
    pub score: f32,
}

/// In-memory index. Built once per pack load.
pub struct KnowledgeIndex {
    chunks: Vec<KnowledgeChunk>,
}

impl KnowledgeIndex {
    pub fn build(chunks: Vec<KnowledgeChunk>) -> Result<KnowledgeIndex, String> {
        Ok(KnowledgeIndex { chunks })
    }

    /// Top `limit` chunks for `query`, optionally within one domain.
    pub fn search(&self, query: &str, domain: Option<&str>, limit: usize) -> Vec<KnowledgeHit> {
        let _ = (query, domain, limit, &self.chunks);
        Vec::new()
    }
}

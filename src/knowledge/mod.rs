//! Knowledge the tools serve: runbooks and docs indexed for BM25 search
//! (tantivy, with a tokenizer that makes Chinese searchable), their domains,
//! and the skills catalog.

pub mod chunk;
pub mod domains;
pub mod frontmatter;
pub mod index;
pub mod skills;
pub mod tokenizer;

pub use domains::summarize_domains;
pub use index::{KnowledgeHit, KnowledgeIndex};
pub use skills::Skill;

use serde::{Deserialize, Serialize};

/// A loaded knowledge document (one markdown file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeDoc {
    /// Path relative to the pack's `knowledge/` directory.
    pub source: String,
    pub title: String,
    pub domain: String,
    pub when_to_retrieve: String,
    /// sha256 hex of the file bytes (api_document.hash).
    pub hash: String,
    pub body: String,
}

/// One searchable section of a document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeChunk {
    pub source: String,
    /// "Title > Section > Subsection".
    pub breadcrumb: String,
    pub domain: String,
    pub text: String,
}

//! Tools the Executor may call, and the evidence they return.
//!
//! A tool returns JSON whose evidence sits in arrays (`$.alerts[i]`,
//! `$.logs[i]`, `$.evidence_blocks[i]`) or, when it found nothing,
//! `$.no_evidence`. Alongside the body it returns `evidence_refs`: for each
//! array item a `raw_path` and a minimal evidence `text` made by code. Those
//! refs are what the Gatekeeper checks bindings against, so tool *text* is
//! never trusted: it is only ever copied into refs, never interpreted.
//!
//! The run's tool invoker (`engine::invoker`) wraps the registry for one
//! run: permission checks, dedup of repeated queries, timing and recording.

pub mod pack;
pub mod prometheus;
pub mod registry;

pub use registry::ToolRegistry;

use crate::vocab::tool::{EvidenceRef, EvidenceStatus, ToolSpec};
use async_trait::async_trait;
use serde_json::{Map, Value};

/// What a tool hands back: the JSON body the model sees plus the refs.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub body: Value,
    pub evidence_status: EvidenceStatus,
    pub evidence_refs: Vec<EvidenceRef>,
    pub retrieved_domains: Vec<String>,
}

impl ToolOutput {
    /// The canonical "found nothing" output for a tool and query summary.
    pub fn no_evidence(tool: &str, query_summary: &str, message: &str) -> ToolOutput {
        let text = format!(
            "{tool} returned no evidence; evidence_status=no_evidence; query={query_summary}; total=0; message={message}"
        );
        ToolOutput {
            body: serde_json::json!({ "no_evidence": text.clone(), "total": 0 }),
            evidence_status: EvidenceStatus::NoEvidence,
            evidence_refs: vec![EvidenceRef {
                raw_path: crate::vocab::contracts::NO_EVIDENCE_PATH.into(),
                text,
            }],
            retrieved_domains: vec![],
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    #[error("backend unavailable: {0}")]
    Unavailable(String),
    #[error("backend timed out after {0} ms")]
    Timeout(u64),
    #[error("backend error: {0}")]
    Backend(String),
}

#[async_trait]
pub trait Tool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    async fn call(&self, args: &Map<String, Value>) -> Result<ToolOutput, ToolError>;
}

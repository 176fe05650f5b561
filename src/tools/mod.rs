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

pub mod common;
pub mod elasticsearch;
pub mod files;
pub mod http;
pub mod logs;
pub mod loki;
pub mod mcp;
pub mod pack;
pub mod prometheus;
pub mod registry;
pub mod replay;

pub use registry::ToolRegistry;

use crate::vocab::buckets::TimeBuckets;
use crate::vocab::run::FailureClass;
use crate::vocab::tool::{EvidenceRef, EvidenceStatus, ToolSpec};
use async_trait::async_trait;
use serde_json::{Map, Value};
use std::time::Duration;

/// What a tool hands back: the JSON body the model sees plus the refs.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub body: Value,
    pub evidence_status: EvidenceStatus,
    pub evidence_refs: Vec<EvidenceRef>,
    pub retrieved_domains: Vec<String>,
    /// The source was read only in part: what was left out. The answer
    /// stands on what was read, and says so.
    pub partial: Option<String>,
    /// Matches per time bucket, over every match (`query_logs`).
    pub buckets: Option<TimeBuckets>,
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
            partial: None,
            buckets: None,
        }
    }
}

/// Why a tool could not answer, in words a person can act on; the
/// variant decides the [`FailureClass`] the run records.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The backend could not be reached (refused, reset, DNS).
    #[error("{0}")]
    Unavailable(String),
    /// No answer within this many milliseconds.
    #[error("timed out after {}", human_ms(*.0))]
    Timeout(u64),
    /// The backend answered with an error status.
    #[error("{message}")]
    Status { status: u16, message: String },
    /// The backend answered, but not with what its API promises.
    #[error("{0}")]
    BadResponse(String),
    /// A file behind the tool is missing, unreadable or corrupt.
    #[error("{0}")]
    Unreadable(String),
    #[error("backend error: {0}")]
    Backend(String),
}

impl ToolError {
    pub fn class(&self) -> FailureClass {
        match self {
            ToolError::InvalidArguments(_) => FailureClass::InvalidOutput,
            ToolError::Unavailable(_) => FailureClass::Connection,
            ToolError::Timeout(_) => FailureClass::Timeout,
            ToolError::Status { status, .. } => FailureClass::of_http_status(*status),
            ToolError::BadResponse(_) => FailureClass::BadResponse,
            ToolError::Unreadable(_) => FailureClass::SourceUnreadable,
            ToolError::Backend(_) => FailureClass::ServerError,
        }
    }
}

/// "8 s", "1.5 s", "200 ms": how long a person waited.
/// Why the file at `path` (symlinks followed) is not one a source may
/// read, or None for a regular file or one that does not exist (opening
/// it says so). A named pipe blocks its reader until a writer comes and a
/// device like `/dev/zero` never ends: reading either would hang the run
/// or exhaust memory.
pub fn not_a_regular_file(path: &std::path::Path) -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    let kind = std::fs::metadata(path).ok()?.file_type();
    let what = if kind.is_file() {
        return None;
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a named pipe"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    };
    Some(format!("not a regular file ({what})"))
}

pub fn human_ms(ms: u64) -> String {
    match ms {
        ms if ms < 1000 => format!("{ms} ms"),
        ms if ms % 1000 == 0 => format!("{} s", ms / 1000),
        ms => format!("{:.1} s", ms as f64 / 1000.0),
    }
}

#[async_trait]
pub trait Tool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    async fn call(&self, args: &Map<String, Value>) -> Result<ToolOutput, ToolError>;

    /// What answers this tool, as the run records it: `pack:/path`,
    /// `prometheus:http://…`.
    fn backend(&self) -> String {
        "builtin".into()
    }

    /// The pack this tool reads, if it is a pack tool: the run records its
    /// path, content hash and load warnings.
    fn pack(&self) -> Option<&std::sync::Arc<pack::Pack>> {
        None
    }

    /// The longest one call may take, when the tool bounds its own I/O
    /// (a configured backend timeout); `None` leaves the run's default.
    fn timeout(&self) -> Option<Duration> {
        None
    }
}

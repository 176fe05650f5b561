//! Tool invocations as the Gatekeeper, the store and the TUI see them: the
//! recorded call, its evidence status and the code-made evidence refs that
//! bindings are checked against, and the static spec of a tool.

use super::buckets::TimeBuckets;
use super::run::{Failure, FailureClass};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub const QUERY_METRICS: &str = "query_metrics";
pub const QUERY_LOGS: &str = "query_logs";
pub const LOOKUP_KNOWLEDGE: &str = "lookup_knowledge";
pub const READ_SKILL: &str = "read_skill";

/// What a log or alert source says in its no-evidence message when no
/// part of it (service list, alerts, logs) names the service asked about:
/// the model then says "no service named X in these sources" rather than
/// "X logged nothing matching", which would suggest a quiet service.
pub const UNKNOWN_SERVICE_NOTE: &str = "no service of this name in these sources";

/// The tools an Executor may use unless a scenario narrows the set.
pub const DEFAULT_EXECUTOR_TOOLS: [&str; 4] =
    [QUERY_METRICS, QUERY_LOGS, LOOKUP_KNOWLEDGE, READ_SKILL];

pub type InvocationId = i64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceStatus {
    Supported,
    NoEvidence,
    Deduped,
    Failed,
}

impl EvidenceStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceStatus::Supported => "supported",
            EvidenceStatus::NoEvidence => "no_evidence",
            EvidenceStatus::Deduped => "deduped",
            EvidenceStatus::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceRef {
    pub raw_path: String,
    pub text: String,
}

/// Stored as `tool_invocation.retrieval_details`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetrievalDetails {
    pub evidence_status: EvidenceStatus,
    pub evidence_refs: Vec<EvidenceRef>,
    /// For `deduped`: the earlier invocation that already answered this query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deduped_from: Option<InvocationId>,
    /// The tool was refused by the permission layer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub blocked: bool,
    /// Knowledge domains the results came from (lookup_knowledge).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retrieved_domains: Vec<String>,
    /// Which backend answered, why it failed, whether it was read whole.
    #[serde(default, flatten)]
    pub source: SourceOutcome,
    /// How many records matched per time bucket (`query_logs`): what a
    /// timeline draws from the stored run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buckets: Option<TimeBuckets>,
}

impl RetrievalDetails {
    /// Details with this status and nothing else.
    pub fn of(evidence_status: EvidenceStatus) -> RetrievalDetails {
        RetrievalDetails {
            evidence_status,
            evidence_refs: vec![],
            deduped_from: None,
            blocked: false,
            retrieved_domains: vec![],
            source: SourceOutcome::default(),
            buckets: None,
        }
    }
}

/// How the source behind an invocation answered. A source that could not
/// be read makes a *failed* invocation with its class; one read only in
/// part (a size cap, a page limit, a broken tail) says what was left out,
/// so "could not check" never reads as "found nothing".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SourceOutcome {
    /// `pack:/path`, `prometheus:http://…`; empty when not recorded.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub backend: String,
    /// Set on a failed invocation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_class: Option<FailureClass>,
    /// What part of the source was not read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<String>,
}

/// The static description of a tool; the OpenAI provider turns
/// `parameters` (a JSON schema) into a function definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
    /// The arrays of its answer whose items are evidence (`logs` for
    /// `$.logs[i]`): the Gatekeeper accepts a binding's raw_path only into
    /// one of these (or `$.no_evidence`). Not shown to models: the
    /// description says where the evidence is.
    #[serde(default, skip_serializing)]
    pub evidence_arrays: Vec<String>,
}

/// One recorded tool invocation of a run, as the Gatekeeper, the store and
/// the TUI see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInvocation {
    /// Database-generated id (or the in-memory recorder's counter).
    pub id: InvocationId,
    pub run_id: i64,
    pub step_id: Option<i64>,
    /// Per-run event order, shared with agent steps.
    pub seq: u32,
    pub tool_name: String,
    pub input_params: Value,
    /// The body the model saw, truncated for storage.
    pub output_preview: String,
    pub output_length: usize,
    pub is_truncated: bool,
    pub retrieval_details: RetrievalDetails,
    pub dedup_reason: Option<String>,
    pub duration_ms: u64,
    pub success: bool,
    pub error_message: Option<String>,
}

impl ToolInvocation {
    /// An empty, evidence-less invocation owned by `run_id`. Recorders use it
    /// to mint an id that belongs to another run (`{{invocation:foreign}}`).
    pub fn placeholder(run_id: i64, seq: u32) -> ToolInvocation {
        ToolInvocation {
            id: 0,
            run_id,
            step_id: None,
            seq,
            tool_name: QUERY_LOGS.into(),
            input_params: Value::Object(Map::new()),
            output_preview: String::new(),
            output_length: 0,
            is_truncated: false,
            retrieval_details: RetrievalDetails::of(EvidenceStatus::NoEvidence),
            dedup_reason: None,
            duration_ms: 0,
            success: true,
            error_message: None,
        }
    }

    /// Why this invocation failed, when it did: its class and message.
    pub fn failure(&self) -> Option<Failure> {
        let d = &self.retrieval_details;
        if d.evidence_status != EvidenceStatus::Failed {
            return None;
        }
        let class = d.source.failure_class.unwrap_or(if d.blocked {
            FailureClass::InvalidOutput
        } else {
            FailureClass::Internal
        });
        let message = self
            .error_message
            .clone()
            .unwrap_or_else(|| "the tool call failed".into());
        Some(Failure::new(class, message))
    }

    /// A short human summary of the query, e.g. `service=payment-service keyword=timeout`.
    pub fn query_summary(&self) -> String {
        summarize_args(&self.input_params)
    }
}

/// `k=v` pairs of a tool's arguments in key order, for display and refs.
pub fn summarize_args(args: &Value) -> String {
    match args {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            keys.iter()
                .map(|k| {
                    let v = &m[*k];
                    let v = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    format!("{k}={v}")
                })
                .collect::<Vec<_>>()
                .join(" ")
        }
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

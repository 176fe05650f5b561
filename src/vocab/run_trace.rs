//! The Run Trace projection of one stored run: `{run: {...,
//! orchestrationTrace}, steps, toolInvocations}`, every row of exactly
//! that run. One typed structure for the store that builds it, `trace
//! --json` that prints it, and the TUI and server that read it.
//!
//! Stored JSON columns come back typed when they still parse as this
//! binary's types, and as the JSON (or raw text) that was stored when they
//! do not, so an old or damaged row never fails the whole trace.

use super::contracts::{GatekeeperResult, Verdict};
use super::evaluation::SelfEvaluation;
use super::graph::NodeId;
use super::run::{FailedSource, Failure, RunSources, RunStatus, VerdictSnapshot};
use super::tool::RetrievalDetails;
use super::trace::OrchestrationTrace;
use super::usage::Usage;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunTrace {
    pub run: TracedRun,
    pub steps: Vec<TracedStep>,
    pub tool_invocations: Vec<TracedInvocation>,
}

impl RunTrace {
    /// The projection as text: what `trace --json` prints and the server's
    /// trace endpoint sends, byte for byte (pretty JSON, one final newline).
    pub fn to_json_text(&self) -> String {
        // Every key is a string and every number finite, so this cannot
        // fail; an empty body would still be an honest error for a client.
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// A stored JSON column: typed when it parses as `T`, else the JSON that
/// was stored (a string holding the raw text when it was not JSON at all).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Stored<T> {
    Typed(T),
    Other(Value),
}

impl<T: for<'de> Deserialize<'de>> Stored<T> {
    pub fn from_text(text: &str) -> Stored<T> {
        match serde_json::from_str::<T>(text) {
            Ok(t) => Stored::Typed(t),
            Err(_) => Stored::Other(
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string())),
            ),
        }
    }

    pub fn typed(&self) -> Option<&T> {
        match self {
            Stored::Typed(t) => Some(t),
            Stored::Other(_) => None,
        }
    }
}

/// The run row, with what the engine's journal adds: the node path, the
/// last verdict snapshot and the last Gatekeeper result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TracedRun {
    pub run_id: i64,
    pub session_id: String,
    pub status: RunStatus,
    pub agent_flow: String,
    pub query: String,
    pub answer: String,
    pub model: String,
    pub pack: Option<String>,
    pub scenario: Option<String>,
    pub degraded: bool,
    pub effective_verdict: Option<Verdict>,
    pub total_duration_ms: Option<i64>,
    pub total_token_count: i64,
    pub step_count: i64,
    pub tool_call_count: i64,
    pub self_evaluation: Option<Stored<SelfEvaluation>>,
    pub orchestration_trace: Option<Stored<OrchestrationTrace>>,
    pub failure_reason: Option<String>,
    /// What stopped or degraded the run: its class and the message above.
    pub failure: Option<Failure>,
    /// What served the run: backends per tool, pack, models per role.
    pub sources: Option<Stored<RunSources>>,
    /// Every failed tool invocation of the run.
    pub failed_sources: Vec<FailedSource>,
    pub feedback: Option<String>,
    /// The stored run this one re-executed (`diagraph rerun`); null for
    /// an ordinary run.
    #[serde(default)]
    pub rerun_of: Option<i64>,
    pub created_at: String,
    pub finished_at: Option<String>,
    /// Present when the orchestration trace parses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<Vec<NodeId>>,
    #[serde(with = "camel_verdicts")]
    pub verdicts: Option<VerdictSnapshot>,
    pub gatekeeper_result: Option<GatekeeperResult>,
    pub event_count: usize,
    /// The sum of the steps' usage: tokens split, and cost when priced.
    #[serde(default)]
    pub usage: Usage,
}

impl TracedRun {
    pub fn orchestration_trace(&self) -> Option<&OrchestrationTrace> {
        self.orchestration_trace.as_ref().and_then(Stored::typed)
    }

    pub fn self_evaluation(&self) -> Option<&SelfEvaluation> {
        self.self_evaluation.as_ref().and_then(Stored::typed)
    }

    pub fn sources(&self) -> Option<&RunSources> {
        self.sources.as_ref().and_then(Stored::typed)
    }
}

impl TracedInvocation {
    /// The invocation this row records, as the engine held it; None when
    /// the row's details no longer read as this binary's type.
    pub fn to_invocation(&self) -> Option<super::tool::ToolInvocation> {
        Some(super::tool::ToolInvocation {
            id: self.id,
            run_id: self.run_id,
            step_id: self.step_id,
            seq: u32::try_from(self.seq).ok()?,
            tool_name: self.tool_name.clone(),
            input_params: self.input_params.clone(),
            output_preview: self.output_preview.clone(),
            output_length: usize::try_from(self.output_length).ok()?,
            is_truncated: self.is_truncated,
            retrieval_details: self.retrieval_details.typed()?.clone(),
            dedup_reason: self.dedup_reason.clone(),
            duration_ms: u64::try_from(self.duration_ms).ok()?,
            success: self.success,
            error_message: self.error_message.clone(),
        })
    }

    /// Why this invocation failed, when it did.
    pub fn failure(&self) -> Option<Failure> {
        let d = self.retrieval_details.typed()?;
        if d.evidence_status != super::tool::EvidenceStatus::Failed {
            return None;
        }
        let class = d
            .source
            .failure_class
            .unwrap_or(super::run::FailureClass::Internal);
        let message = self
            .error_message
            .clone()
            .unwrap_or_else(|| "the tool call failed".into());
        Some(Failure::new(class, message))
    }
}

/// An agent_step row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TracedStep {
    pub id: i64,
    pub run_id: i64,
    pub session_id: String,
    pub seq: i64,
    pub step_index: i64,
    pub agent_name: String,
    pub attempt: i64,
    pub model_input: String,
    pub model_output: String,
    pub thought: String,
    pub has_tool_call: bool,
    pub duration_ms: i64,
    pub token_count: i64,
    pub error: Option<String>,
    pub created_at: String,
    /// Prompt / completion (reasoning, cached) tokens and cost of the call.
    #[serde(default)]
    pub usage: Usage,
    /// Why `modelOutput` was rejected as the role's contract; null when it
    /// was used or there was nothing to parse.
    #[serde(default)]
    pub parse_error: Option<String>,
}

/// A tool_invocation row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TracedInvocation {
    pub id: i64,
    pub run_id: i64,
    pub session_id: String,
    pub step_id: Option<i64>,
    pub seq: i64,
    pub tool_name: String,
    pub input_params: Value,
    pub output_preview: String,
    pub output_length: i64,
    pub retrieval_layer: Option<String>,
    pub l0_match_count: Option<i64>,
    pub l1_match_count: Option<i64>,
    pub is_truncated: bool,
    pub relevance_level: Option<String>,
    pub dedup_reason: Option<String>,
    pub retrieval_details: Stored<RetrievalDetails>,
    pub duration_ms: i64,
    pub success: bool,
    pub error_message: Option<String>,
    pub created_at: String,
}

/// The trace spells the verdict snapshot in camelCase like the rest of
/// the projection, while events carry it in snake_case.
mod camel_verdicts {
    use super::{Verdict, VerdictSnapshot};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Camel {
        model_verdict: Option<Verdict>,
        ceiling: Option<Verdict>,
        effective_verdict: Option<Verdict>,
        groundedness_score: Option<f64>,
        evidence_retry_count: u32,
    }

    pub fn serialize<S: Serializer>(v: &Option<VerdictSnapshot>, s: S) -> Result<S::Ok, S::Error> {
        v.map(|v| Camel {
            model_verdict: v.model_verdict,
            ceiling: v.ceiling,
            effective_verdict: v.effective_verdict,
            groundedness_score: v.groundedness_score,
            evidence_retry_count: v.evidence_retry_count,
        })
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<VerdictSnapshot>, D::Error> {
        Ok(Option::<Camel>::deserialize(d)?.map(|c| VerdictSnapshot {
            model_verdict: c.model_verdict,
            ceiling: c.ceiling,
            effective_verdict: c.effective_verdict,
            groundedness_score: c.groundedness_score,
            evidence_retry_count: c.evidence_retry_count,
        }))
    }
}

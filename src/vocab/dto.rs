//! Agent input DTOs: one whitelist projection of the run state per agent
//! (ARCHITECTURE.md, "Evidence trust boundary"). An agent sees exactly
//! these fields and nothing else; in particular the Verifier never sees the
//! tool trace, failed bindings or Executor free text, and the Composer
//! never sees raw tool results.

use super::contracts::{
    ExecutorEvidence, Hypothesis, Lang, PlannerPlan, RecommendedAction, Verdict, Verification,
};
use crate::vocab::agent::AgentRole;
use crate::vocab::agent::HistoryTurn;
use crate::vocab::catalog::{DomainInfo, SkillInfo};
use crate::vocab::tool::ToolSpec;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::vocab::prerendered::Prerendered;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PlannerMode {
    #[default]
    Normal,
    EvidenceGapOnly,
}

/// One critical fact the Verifier could not confirm directly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvidenceGap {
    pub claim_id: Option<String>,
    pub fact: String,
    pub verification: Verification,
    pub reason: String,
}

/// A query that already ran in this run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletedQuery {
    pub tool: String,
    pub arguments: Value,
    pub invocation_id: i64,
    pub evidence_status: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetryConstraints {
    pub max_retry: u32,
    pub do_not_repeat_successful_queries: bool,
    pub only_execute_incremental_queries: bool,
    pub preserve_prior_verified_claims: bool,
}

impl Default for RetryConstraints {
    fn default() -> Self {
        RetryConstraints {
            max_retry: 1,
            do_not_repeat_successful_queries: true,
            only_execute_incremental_queries: true,
            preserve_prior_verified_claims: true,
        }
    }
}

/// The EVIDENCE_GAP_ONLY retry context, built by the EvidenceRetry node
/// (`engine::nodes::evidence_retry`): only verified material, the gaps and
/// the queries that already succeeded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetryContext {
    pub mode: PlannerMode,
    pub round: u32,
    pub prior_verified_output: ExecutorEvidence,
    pub prior_verified_evidence: Vec<VerifiedEvidence>,
    pub evidence_gaps: Vec<EvidenceGap>,
    pub completed_queries: Vec<CompletedQuery>,
    pub constraints: RetryConstraints,
    pub instruction: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannerInput {
    pub question: String,
    pub lang: Lang,
    pub mode: PlannerMode,
    pub history: Vec<HistoryTurn>,
    pub available_knowledge_domains: Prerendered<Vec<DomainInfo>>,
    pub skill_catalog: Prerendered<Vec<SkillInfo>>,
    /// Services the tool backend knows (pack.toml), to ground entity names.
    pub known_services: Prerendered<Vec<String>>,
    /// Other names the question may use for what the sources hold (the
    /// pack's `[aliases]`: name -> held names). Absent in older inputs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<(String, Vec<String>)>,
    /// The reference time relative windows in the question resolve
    /// against ("since 10:00", "yesterday"): the pack's `now`, or the
    /// clock when live sources answer. Absent in older inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now: Option<chrono::DateTime<chrono::Utc>>,
    /// Tools the Executor will be allowed to call, with their argument
    /// schemas.
    pub available_tools: Prerendered<Vec<Arc<ToolSpec>>>,
    /// The planner's view of the retry: gaps, completed queries and a
    /// summary of confirmed facts (EVIDENCE_GAP_ONLY only).
    pub retry_context: Option<PlannerRetryView>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannerRetryView {
    pub round: u32,
    pub evidence_gaps: Vec<EvidenceGap>,
    pub completed_queries: Vec<CompletedQuery>,
    pub confirmed_facts: Vec<String>,
    pub instruction: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ExecutorInput {
    pub question: String,
    pub lang: Lang,
    pub planner_plan: PlannerPlan,
    pub selected_skill: Option<String>,
    pub history: Vec<HistoryTurn>,
    pub tool_permissions: Vec<String>,
    /// EVIDENCE_GAP_ONLY round: prior verified output/evidence (read only),
    /// the gaps and the completed queries.
    pub retry_context: Option<RetryContext>,
    /// Budget the Executor loop enforces, stated so a model can plan for it.
    pub max_tool_calls: u32,
}

/// Evidence the Gatekeeper verified: built from passing bindings'
/// matched_text only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifiedEvidence {
    pub claim_id: String,
    pub source_invocation_id: i64,
    pub tool_name: String,
    pub raw_path: String,
    pub matched_text: String,
}

/// The Gatekeeper-verified part of an Executor output: what the Verifier
/// is allowed to see, and the ceiling it is capped by.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedProjection {
    pub verified_output: ExecutorEvidence,
    pub verified_evidence: Vec<VerifiedEvidence>,
    pub verified_binding_count: usize,
    pub ceiling: Verdict,
}

/// What the Verifier may know about the Gatekeeper: its verdict, not its
/// failed bindings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatekeeperSummary {
    pub status: String,
    pub severity: String,
    pub rule_set_version: String,
    pub verified_binding_count: usize,
    pub verdict_ceiling: Verdict,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifierInput {
    pub original_query: String,
    pub lang: Lang,
    pub verified_executor_output: ExecutorEvidence,
    pub verified_evidence: Vec<VerifiedEvidence>,
    pub gatekeeper_result: GatekeeperSummary,
}

/// A claim the Verifier allowed, with how it was supported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllowedClaim {
    pub claim_id: String,
    pub claim_type: String,
    pub claim_text: String,
    pub verification: Verification,
    /// True for negative observations and claims bound to `$.no_evidence`:
    /// they may only be worded as "this query found nothing".
    pub is_negative: bool,
    pub evidence: Vec<VerifiedEvidence>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComposerInput {
    pub original_query: String,
    pub lang: Lang,
    pub verdict: Verdict,
    pub allowed_claims: Vec<AllowedClaim>,
    pub allowed_hypotheses: Vec<Hypothesis>,
    pub missing_info: Vec<String>,
    pub recommended_actions: Vec<RecommendedAction>,
    pub rationale: String,
}

/// One agent's input DTO, typed. Models read it structurally (the offline
/// model) or as the rendered prompt text (LLMs); it is shared, not copied,
/// across the turns of a node.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum AgentInput {
    Planner(Arc<PlannerInput>),
    Executor(Arc<ExecutorInput>),
    Verifier(Arc<VerifierInput>),
    Composer(Arc<ComposerInput>),
}

impl AgentInput {
    pub fn role(&self) -> AgentRole {
        match self {
            AgentInput::Planner(_) => AgentRole::Planner,
            AgentInput::Executor(_) => AgentRole::Executor,
            AgentInput::Verifier(_) => AgentRole::Verifier,
            AgentInput::Composer(_) => AgentRole::Composer,
        }
    }

    /// The DTO as the JSON object a model is shown.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Object(Map::new()))
    }

    /// The DTO as the compact JSON text prompts embed. Compact, not pretty:
    /// models read it equally well, and indentation was about a third of
    /// the input tokens of every call.
    pub fn to_json(&self) -> String {
        // Sized for a typical input, so serialising rarely reallocates.
        let mut out = Vec::with_capacity(4 * 1024);
        // Serialising plain data structs into memory cannot fail, and
        // serde_json writes only UTF-8.
        if serde_json::to_writer(&mut out, self).is_err() {
            return String::new();
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

impl From<PlannerInput> for AgentInput {
    fn from(input: PlannerInput) -> Self {
        AgentInput::Planner(Arc::new(input))
    }
}

impl From<ExecutorInput> for AgentInput {
    fn from(input: ExecutorInput) -> Self {
        AgentInput::Executor(Arc::new(input))
    }
}

impl From<VerifierInput> for AgentInput {
    fn from(input: VerifierInput) -> Self {
        AgentInput::Verifier(Arc::new(input))
    }
}

impl From<ComposerInput> for AgentInput {
    fn from(input: ComposerInput) -> Self {
        AgentInput::Composer(Arc::new(input))
    }
}

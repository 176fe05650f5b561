//! The model port: [`ChatModel`] and its providers.
//!
//! A request carries the role's input DTO (typed, so the offline model
//! reads it without parsing prose, and it names the role), the rendered
//! messages (what an LLM reads) and, for the Executor, the tool specs. A
//! response is text and/or tool calls; failures are classified errors so
//! the graph can decide whether a technical retry is allowed.

pub mod offline;
pub mod openai;
pub mod replay;
pub mod routed;
pub mod scripted;

use crate::vocab::agent::AgentRole;
use crate::vocab::dto::AgentInput;
use crate::vocab::tool::ToolSpec;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider call id, echoed back in the tool result message.
    pub id: String,
    pub name: String,
    /// Raw JSON text of the arguments, exactly as the model produced it (it
    /// may be invalid JSON; the Executor handles that).
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        content: Option<String>,
        #[serde(default)]
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// Per-run facts only the scripted provider uses to fill placeholders.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScriptContext {
    pub run_id: i64,
    /// The ids of this run's tool calls in order (`{{invocation:N}}`,
    /// 1-based); a source recorded as unavailable is not one.
    pub invocation_ids: Vec<i64>,
    /// An id owned by another run (`{{invocation:foreign}}`).
    pub foreign_invocation_id: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatRequest {
    /// 1-based attempt of the node (technical retries re-send the same input).
    pub attempt: u32,
    /// The role's input DTO; it also names the role.
    pub input: AgentInput,
    pub messages: Vec<Message>,
    /// Tool specs of the conversation (Executor only). They stay in the
    /// request on the forced last turn, where `tool_choice` is `None`:
    /// some gateways reject tool history sent without its `tools`.
    pub tools: Vec<Arc<ToolSpec>>,
    pub tool_choice: ToolChoice,
    pub script: ScriptContext,
}

/// Whether the model may call the offered tools on this turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    #[default]
    Auto,
    /// Answer now, without calling a tool (the Executor's forced last turn).
    None,
}

impl ChatRequest {
    pub fn role(&self) -> AgentRole {
        self.input.role()
    }

    /// Tools the model may call on this turn: none on a forced last turn.
    pub fn callable_tools(&self) -> &[Arc<ToolSpec>] {
        match self.tool_choice {
            ToolChoice::Auto => &self.tools,
            ToolChoice::None => &[],
        }
    }

    /// The tool results received so far in this Executor conversation,
    /// parsed back from the tool messages (the offline model reads these).
    pub fn tool_results(&self) -> Vec<Value> {
        self.messages
            .iter()
            .filter_map(|m| match m {
                Message::Tool { content, .. } => serde_json::from_str(content).ok(),
                _ => None,
            })
            .collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    #[default]
    Stop,
    ToolCalls,
    /// The provider cut the answer at its token limit.
    Length,
    Other,
}

pub use crate::vocab::usage::Usage;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ChatResponse {
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: FinishReason,
    pub usage: Usage,
    /// The model that answered, when it is not the one the role names
    /// (a fallback served it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_by: Option<String>,
    /// Reasoning the server sent beside the answer (`reasoning_content`,
    /// `reasoning`): recorded with the step, never parsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Provider notes worth keeping in the step (e.g. "429 back-off 500ms").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl ChatResponse {
    pub fn text(content: impl Into<String>) -> Self {
        ChatResponse {
            content: Some(content.into()),
            ..Default::default()
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelErrorKind {
    Timeout,
    RateLimited,
    ServerError,
    Connection,
    Unauthorized,
    BadRequest,
    /// Quota or credit exhausted (`insufficient_quota`, HTTP 402): waiting
    /// does not help, so it is not retried.
    Quota,
    Config,
    /// The answer broke the provider protocol (no choices, bad body...).
    Protocol,
    /// A scripted call that the script does not cover and nothing answers.
    Uncovered,
}

impl ModelErrorKind {
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ModelErrorKind::Timeout
                | ModelErrorKind::RateLimited
                | ModelErrorKind::ServerError
                | ModelErrorKind::Connection
                | ModelErrorKind::Protocol
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ModelErrorKind::Timeout => "timeout",
            ModelErrorKind::RateLimited => "rate_limited",
            ModelErrorKind::ServerError => "server_error",
            ModelErrorKind::Connection => "connection",
            ModelErrorKind::Unauthorized => "unauthorized",
            ModelErrorKind::BadRequest => "bad_request",
            ModelErrorKind::Quota => "quota",
            ModelErrorKind::Config => "config",
            ModelErrorKind::Protocol => "protocol",
            ModelErrorKind::Uncovered => "uncovered",
        }
    }

    pub fn parse(s: &str) -> Option<ModelErrorKind> {
        use ModelErrorKind::*;
        [
            Timeout,
            RateLimited,
            ServerError,
            Connection,
            Unauthorized,
            BadRequest,
            Quota,
            Config,
            Protocol,
            Uncovered,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{}: {message}", kind.as_str())]
pub struct ModelError {
    pub kind: ModelErrorKind,
    pub message: String,
    /// How long the server asked the caller to wait (Retry-After), already
    /// capped; the graph waits at least this long before a retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<std::time::Duration>,
}

impl ModelError {
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        ModelError {
            kind,
            message: message.into(),
            retry_after: None,
        }
    }

    pub fn is_retryable(&self) -> bool {
        self.kind.is_retryable()
    }
}

pub use crate::vocab::events::DeltaPart;

/// Where a streaming provider reports each piece of the answer as it
/// arrives (for live views; the response returned at the end is what
/// counts).
pub type DeltaSink<'a> = &'a (dyn Fn(DeltaPart, &str) + Send + Sync);

#[async_trait]
pub trait ChatModel: Send + Sync {
    /// Display name, e.g. "offline (rule-based)" or "openai:gpt-4o-mini".
    fn name(&self) -> String;
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError>;

    /// [`ChatModel::chat`], reporting the answer's pieces to `deltas` as
    /// they stream in. Providers that do not stream answer at once;
    /// providers that wrap another must pass `deltas` on.
    async fn chat_streaming(
        &self,
        request: &ChatRequest,
        _deltas: DeltaSink<'_>,
    ) -> Result<ChatResponse, ModelError> {
        self.chat(request).await
    }

    /// The model that answers this role, as the run records it.
    fn model_for(&self, _role: AgentRole) -> String {
        self.name()
    }
}

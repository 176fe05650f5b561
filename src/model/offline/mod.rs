//! The offline model: deterministic, rule-based, no network. It reads each
//! role's input DTO and answers in exactly the contract an LLM must follow,
//! so every node, parser and check runs the same way it would with an LLM.
//!
//! - [`planner`]: entities in the question -> skill choice -> tool queries
//!   (narrow questions get one exact query; evidence-gap rounds only new
//!   queries for the gaps).
//! - [`executor`]: calls the planned tools through the tool-call protocol,
//!   then builds claims only from the refs they returned.
//! - [`verifier`]: checks each claim's details against its verified
//!   evidence and derives the verdict.
//! - [`composer`]: renders the allowed material in the question's language.
//!
//! Same input, same output: no clocks, no hash-map iteration in output.
//! Tool text is data: it is grouped, counted and quoted, never obeyed.

mod claims;
pub mod composer;
mod depend;
pub mod entities;
mod evidence;
pub mod executor;
pub mod planner;
mod relevance;
mod runbook;
mod symptoms;
pub mod text;
pub mod verifier;

use crate::model::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelErrorKind};
use crate::vocab::dto::AgentInput;
use async_trait::async_trait;

/// How the offline model reasons, where a team may differ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OfflineOptions {
    /// How long before an alert became active an error pattern may have
    /// stopped and still be offered as its likely cause; older patterns
    /// are labelled earlier history.
    pub cause_margin: chrono::Duration,
}

impl Default for OfflineOptions {
    fn default() -> Self {
        OfflineOptions {
            // An alert's `for:` clause and scrape interval put its start
            // some minutes after the errors that raised it.
            cause_margin: chrono::Duration::minutes(DEFAULT_CAUSE_MARGIN_MINUTES),
        }
    }
}

/// See [`OfflineOptions::cause_margin`].
pub const DEFAULT_CAUSE_MARGIN_MINUTES: i64 = 30;

#[derive(Debug, Clone, Default)]
pub struct OfflineModel {
    options: OfflineOptions,
}

impl OfflineModel {
    pub fn new() -> Self {
        OfflineModel::default()
    }

    pub fn with_options(options: OfflineOptions) -> Self {
        OfflineModel { options }
    }

    /// The answer for one request, synchronously (the trait method wraps
    /// this; benchmarks and tests may call it directly).
    pub fn respond(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        match &request.input {
            AgentInput::Planner(input) => Ok(ChatResponse::text(to_json(&planner::plan(input))?)),
            AgentInput::Executor(input) => Ok(executor::respond(input, request, &self.options)),
            AgentInput::Verifier(input) => {
                Ok(ChatResponse::text(to_json(&verifier::verify(input))?))
            }
            AgentInput::Composer(input) => {
                Ok(ChatResponse::text(to_json(&composer::compose(input))?))
            }
        }
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, ModelError> {
    serde_json::to_string(value).map_err(|e| {
        ModelError::new(
            ModelErrorKind::Protocol,
            format!("offline model output: {e}"),
        )
    })
}

#[async_trait]
impl ChatModel for OfflineModel {
    fn name(&self) -> String {
        "offline (rule-based)".into()
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.respond(request)
    }
}

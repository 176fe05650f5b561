//! `[model]` and `[run]`: which model serves each role, how it is called,
//! and the limits of one run.

use super::{ConfigError, is_http_url};
use crate::text::mask_url;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

pub const DEFAULT_API_KEY_ENV: &str = "DIAGRAPH_OPENAI_API_KEY";
/// Read when `api_key_env` is the default and that variable is unset.
pub const FALLBACK_API_KEY_ENV: &str = "OPENAI_API_KEY";
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";
/// A server's Retry-After is honoured up to this many seconds by default.
pub const DEFAULT_RETRY_AFTER_CAP_SECS: u64 = 30;
/// The agent roles a model can be named for in `[model.roles]`.
pub const MODEL_ROLES: [&str; 4] = ["planner", "executor", "verifier", "composer"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    #[default]
    Offline,
    #[serde(rename = "openai")]
    OpenAi,
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Offline => "offline",
            Provider::OpenAi => "openai",
        }
    }

    pub fn parse(s: &str) -> Option<Provider> {
        match s.trim().to_ascii_lowercase().as_str() {
            "offline" => Some(Provider::Offline),
            "openai" => Some(Provider::OpenAi),
            _ => None,
        }
    }
}

/// The request field that carries the token limit: `max_tokens` for most
/// servers, `max_completion_tokens` for OpenAI's reasoning models (which
/// reject `max_tokens`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensField {
    #[default]
    MaxTokens,
    MaxCompletionTokens,
}

impl MaxTokensField {
    pub fn as_str(self) -> &'static str {
        match self {
            MaxTokensField::MaxTokens => "max_tokens",
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelConfig {
    pub provider: Provider,
    /// Chat-completions base, e.g. `https://api.openai.com/v1`; the provider
    /// appends `/chat/completions`.
    pub base_url: String,
    pub model: String,
    /// Name of the environment variable holding the key; empty = keyless
    /// (local Ollama or vLLM).
    pub api_key_env: String,
    pub timeout_secs: u64,
    pub max_tokens: Option<u32>,
    pub max_tokens_field: MaxTokensField,
    /// Sent only when set: OpenAI's reasoning models reject any value.
    pub temperature: Option<f64>,
    /// Ask for streamed answers (SSE): the TUI shows them as they arrive,
    /// usage comes from the final chunk. Some servers serve only this way
    /// (DashScope's qwen3 with thinking on).
    pub streaming: bool,
    /// With `streaming`, ask for the token counts in a last chunk
    /// (`stream_options.include_usage`). Off for gateways that reject
    /// `stream_options`: it is not sent, and a stream's usage is then
    /// unknown unless the server reports it anyway.
    pub stream_usage: bool,
    /// Merged into every request body (e.g. `enable_thinking = false` for
    /// DashScope's qwen3); it cannot replace `model`, `messages`, `tools`
    /// or `tool_choice`.
    pub extra_body: BTreeMap<String, serde_json::Value>,
    /// A server's Retry-After is honoured up to this.
    pub retry_after_cap_secs: u64,
    /// USD per million tokens; unset: costs are unknown (shown as such).
    pub price_per_million: Option<PricePerMillion>,
    /// Named models (`[model.models.NAME]`), with the same keys as
    /// `[model]` and the same defaults; they cannot nest.
    pub models: BTreeMap<String, ModelConfig>,
    /// Which named model serves a role; unset roles use `[model]`.
    pub roles: BTreeMap<String, String>,
    /// Named models tried in order after a retryable failure of a role's
    /// model.
    pub fallbacks: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PricePerMillion {
    pub prompt: f64,
    pub completion: f64,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            provider: Provider::Offline,
            base_url: DEFAULT_BASE_URL.into(),
            model: DEFAULT_MODEL.into(),
            api_key_env: DEFAULT_API_KEY_ENV.into(),
            timeout_secs: 60,
            max_tokens: None,
            max_tokens_field: MaxTokensField::MaxTokens,
            temperature: None,
            streaming: false,
            stream_usage: true,
            extra_body: BTreeMap::new(),
            retry_after_cap_secs: DEFAULT_RETRY_AFTER_CAP_SECS,
            price_per_million: None,
            models: BTreeMap::new(),
            roles: BTreeMap::new(),
            fallbacks: BTreeMap::new(),
        }
    }
}

/// Request fields `extra_body` may not replace: the conversation itself.
pub const RESERVED_BODY_FIELDS: [&str; 4] = ["model", "messages", "tools", "tool_choice"];

/// Limits of one run (`[run]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Wall-clock budget of a run; model calls after it fail as timeouts
    /// and the run ends in its fallback. Unset: no deadline.
    pub deadline_secs: Option<u64>,
    /// Tool calls the Executor may make per round before it must answer.
    pub max_tool_calls: u32,
    /// Model turns of the Executor per round, the final answer included.
    pub max_executor_turns: u32,
    /// The offline model offers an error pattern as an alert's likely
    /// cause only when its lines reach to within this many minutes of the
    /// alert becoming active; older patterns are earlier history.
    pub cause_margin_minutes: u32,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            deadline_secs: None,
            max_tool_calls: 12,
            max_executor_turns: 8,
            cause_margin_minutes: 30,
        }
    }
}

impl AsRef<ModelConfig> for ModelConfig {
    fn as_ref(&self) -> &ModelConfig {
        self
    }
}

impl ModelConfig {
    /// The API key, read from the environment now (never stored).
    pub fn api_key(&self) -> Option<String> {
        self.api_key_with(&|k| std::env::var(k).ok())
    }

    pub fn api_key_with(&self, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
        self.api_key_source(env)
            .and_then(|name| env(&name))
            .filter(|v| !v.trim().is_empty())
    }

    /// Which variable the key comes from, if one is set.
    pub(super) fn api_key_source(&self, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
        let name = self.api_key_env.trim();
        if name.is_empty() {
            return None;
        }
        let set = |n: &str| env(n).is_some_and(|v| !v.trim().is_empty());
        if set(name) {
            return Some(name.to_string());
        }
        if name == DEFAULT_API_KEY_ENV && set(FALLBACK_API_KEY_ENV) {
            return Some(FALLBACK_API_KEY_ENV.to_string());
        }
        None
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs)
    }
}

pub(super) fn check_role(role: &str, at: &str) -> Result<(), ConfigError> {
    if MODEL_ROLES.contains(&role) {
        Ok(())
    } else {
        Err(ConfigError::BadValue {
            source_name: format!("{at}.{role}"),
            message: format!("{role:?} is not a role ({})", MODEL_ROLES.join(" | ")),
        })
    }
}

/// The checks every model section passes, `[model]` and each named one.
pub(super) fn validate_model(m: &ModelConfig, at: &str) -> Result<(), ConfigError> {
    let bad = |key: &str, message: String| ConfigError::BadValue {
        source_name: format!("{at}.{key}"),
        message,
    };
    if m.timeout_secs == 0 {
        return Err(bad("timeout_secs", "must be at least 1".into()));
    }
    if let Some(t) = m.temperature
        && !(0.0..=2.0).contains(&t)
    {
        return Err(bad(
            "temperature",
            format!("{t} is outside 0 to 2 (leave it unset to send none)"),
        ));
    }
    if let Some(k) = m
        .extra_body
        .keys()
        .find(|k| RESERVED_BODY_FIELDS.contains(&k.as_str()))
    {
        return Err(bad(
            "extra_body",
            format!("{k:?} is part of the conversation and cannot be overridden"),
        ));
    }
    if let Some(p) = m.price_per_million
        && !(p.prompt.is_finite()
            && p.prompt >= 0.0
            && p.completion.is_finite()
            && p.completion >= 0.0)
    {
        return Err(bad(
            "price_per_million",
            "prices must be zero or more USD per million tokens".into(),
        ));
    }
    if m.provider == Provider::OpenAi && !is_http_url(&m.base_url) {
        return Err(bad(
            "base_url",
            format!("{:?} is not an http(s) URL", mask_url(&m.base_url)),
        ));
    }
    Ok(())
}

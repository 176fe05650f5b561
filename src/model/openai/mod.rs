//! OpenAI-compatible chat-completions provider: OpenAI, Qwen (DashScope
//! compatible mode), DeepSeek, Ollama, vLLM.
//!
//! One `chat` is one HTTP exchange bounded by the configured timeout. The
//! only retry inside the provider is a single back-off after a 429, kept
//! inside the same time budget and reported in [`ChatResponse::notes`];
//! every other retry decision belongs to the graph, which sees the error
//! class ([`ModelErrorKind`]).
//!
//! The API key lives in [`ApiKey`], whose `Debug` prints `***`, and every
//! error message is redacted before it leaves the provider.

mod errors;
mod stream;
mod wire;

pub use wire::{parse_response, request_body};

use crate::config::{MaxTokensField, ModelConfig};
use crate::model::{
    ChatModel, ChatRequest, ChatResponse, DeltaPart, DeltaSink, ModelError, ModelErrorKind,
};
use crate::text::mask_url;
use async_trait::async_trait;
use reqwest::header::{HeaderMap, RETRY_AFTER};
use std::fmt;
use std::time::Duration;
use tokio::time::Instant;

/// A response larger than this is not a chat answer.
const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;
/// Below this much remaining budget a 429 retry cannot succeed anyway.
const MIN_RETRY_BUDGET: Duration = Duration::from_millis(50);

/// An API key. Never printed: `Debug` shows `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// e.g. `https://api.openai.com/v1`; `/chat/completions` is appended.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<ApiKey>,
    /// The variable the key is read from; empty means a keyless endpoint.
    /// Only used to word errors.
    pub api_key_env: String,
    /// Budget of one `chat` call, the 429 back-off included.
    pub timeout: Duration,
    pub max_tokens: Option<u32>,
    pub max_tokens_field: MaxTokensField,
    /// Omitted from the request unless set.
    pub temperature: Option<f64>,
    /// Ask for a streamed answer (SSE); its pieces reach the caller's
    /// delta sink as they arrive, and usage comes from the final chunk.
    pub streaming: bool,
    /// With `streaming`, send `stream_options.include_usage` (the token
    /// counts arrive in a last chunk); some gateways reject the field.
    pub stream_usage: bool,
    /// Merged into every request body.
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// Wait before the one 429 retry when the server sends no Retry-After.
    pub rate_limit_backoff: Duration,
    /// Upper bound on a Retry-After the provider (and the graph after it)
    /// will honour.
    pub max_rate_limit_backoff: Duration,
    /// USD per million tokens; None: cost unknown.
    pub price: Option<Price>,
}

/// USD per million prompt and completion tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub prompt: f64,
    pub completion: f64,
}

impl Price {
    pub fn cost(&self, usage: &crate::model::Usage) -> f64 {
        (usage.prompt_tokens as f64 * self.prompt
            + usage.completion_tokens as f64 * self.completion)
            / 1_000_000.0
    }
}

impl OpenAiConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            api_key_env: crate::config::DEFAULT_API_KEY_ENV.into(),
            timeout: Duration::from_secs(60),
            max_tokens: None,
            max_tokens_field: MaxTokensField::MaxTokens,
            temperature: None,
            streaming: false,
            stream_usage: true,
            extra_body: serde_json::Map::new(),
            rate_limit_backoff: Duration::from_millis(500),
            max_rate_limit_backoff: Duration::from_secs(
                crate::config::DEFAULT_RETRY_AFTER_CAP_SECS,
            ),
            price: None,
        }
    }

    /// From the `[model]` configuration; the key is read from the
    /// environment now.
    /// Takes a `&Config` or a `&ModelConfig`.
    pub fn from_config(model: impl AsRef<ModelConfig>) -> OpenAiConfig {
        let model = model.as_ref();
        OpenAiConfig {
            api_key: model.api_key().map(ApiKey::new),
            api_key_env: model.api_key_env.clone(),
            timeout: model.timeout(),
            max_tokens: model.max_tokens,
            max_tokens_field: model.max_tokens_field,
            temperature: model.temperature,
            streaming: model.streaming,
            stream_usage: model.stream_usage,
            extra_body: model
                .extra_body
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            max_rate_limit_backoff: Duration::from_secs(model.retry_after_cap_secs),
            price: model.price_per_million.map(|p| Price {
                prompt: p.prompt,
                completion: p.completion,
            }),
            ..OpenAiConfig::new(&model.base_url, &model.model)
        }
    }
}

#[derive(Debug)]
pub struct OpenAiModel {
    cfg: OpenAiConfig,
    endpoint: reqwest::Url,
    /// `base_url` with any password masked, for messages.
    shown_url: String,
    client: reqwest::Client,
}

fn config_error(message: impl Into<String>) -> ModelError {
    ModelError::new(ModelErrorKind::Config, message)
}

impl OpenAiModel {
    /// From the `[model]` configuration (key read from the environment now).
    /// Takes a `&Config` or a `&ModelConfig`.
    pub fn from_config(model: impl AsRef<ModelConfig>) -> Result<OpenAiModel, ModelError> {
        OpenAiModel::new(OpenAiConfig::from_config(model))
    }

    pub fn new(cfg: OpenAiConfig) -> Result<OpenAiModel, ModelError> {
        let shown_url = mask_url(cfg.base_url.trim());
        let endpoint = endpoint(cfg.base_url.trim())
            .map_err(|e| config_error(format!("model.base_url {shown_url:?} is not a URL: {e}")))?;
        if !matches!(endpoint.scheme(), "http" | "https") {
            return Err(config_error(format!(
                "model.base_url {shown_url:?} must be http:// or https://"
            )));
        }
        if cfg.model.trim().is_empty() {
            return Err(config_error("model.model is empty"));
        }
        if cfg.timeout.is_zero() {
            return Err(config_error("model.timeout_secs must be at least 1"));
        }
        let keyless = cfg.api_key_env.trim().is_empty() || is_local(&endpoint);
        if cfg.api_key.is_none() && !keyless {
            let var = cfg.api_key_env.trim();
            let also = if var == crate::config::DEFAULT_API_KEY_ENV {
                format!(" (or {})", crate::config::FALLBACK_API_KEY_ENV)
            } else {
                String::new()
            };
            return Err(config_error(format!(
                "no API key for {shown_url}: set {var}{also}, or set model.api_key_env = \"\" for a keyless endpoint"
            )));
        }
        let client = reqwest::Client::builder()
            .timeout(cfg.timeout)
            .connect_timeout(cfg.timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| config_error(format!("cannot build the HTTP client: {e}")))?;
        Ok(OpenAiModel {
            cfg,
            endpoint,
            shown_url,
            client,
        })
    }

    fn redacted(&self, mut e: ModelError) -> ModelError {
        e.message = errors::redact(&e.message, self.key());
        e
    }

    fn key(&self) -> Option<&str> {
        self.cfg.api_key.as_ref().map(ApiKey::expose)
    }

    /// Sends the request: the response with its body still to read.
    async fn send(
        &self,
        body: &serde_json::Value,
        timeout: Duration,
    ) -> Result<reqwest::Response, ModelError> {
        let accept = if self.cfg.streaming {
            "text/event-stream, application/json"
        } else {
            "application/json"
        };
        let mut req = self
            .client
            .post(self.endpoint.clone())
            .timeout(timeout)
            .header(reqwest::header::ACCEPT, accept)
            .json(body);
        if let Some(key) = self.key() {
            req = req.bearer_auth(key);
        }
        req.send().await.map_err(|e| self.transport(e, timeout))
    }

    /// Without the URL: its query string may hold a secret.
    fn transport(&self, e: reqwest::Error, timeout: Duration) -> ModelError {
        errors::transport_error(&e.without_url(), &self.shown_url, timeout)
    }

    /// One request: its status, headers and the response whose body is
    /// still to read.
    async fn post(
        &self,
        body: &serde_json::Value,
        timeout: Duration,
    ) -> Result<(u16, HeaderMap, reqwest::Response), ModelError> {
        let resp = self.send(body, timeout).await?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        Ok((status, headers, resp))
    }

    /// The whole body, bounded.
    async fn read_all(
        &self,
        mut resp: reqwest::Response,
        timeout: Duration,
    ) -> Result<Vec<u8>, ModelError> {
        let mut bytes = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| self.transport(e, timeout))? {
            if bytes.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(too_large());
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }

    /// A streamed body read as it arrives, each piece reported to
    /// `deltas`; a connection that breaks mid-stream is a transport
    /// failure like any other, and a stream that ends early is cut.
    async fn read_stream(
        &self,
        mut resp: reqwest::Response,
        timeout: Duration,
        deltas: Option<DeltaSink<'_>>,
    ) -> Result<ChatResponse, ModelError> {
        let mut assembler = stream::Assembler::default();
        let mut sink = |part: DeltaPart, piece: &str| {
            if let Some(d) = deltas {
                d(part, piece);
            }
        };
        let mut read = 0usize;
        loop {
            let chunk = match resp.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(e) => {
                    let mut e = self.transport(e, timeout);
                    e.message =
                        format!("{} (mid-stream; the partial answer is not used)", e.message);
                    return Err(e);
                }
            };
            read += chunk.len();
            if read > MAX_BODY_BYTES {
                return Err(too_large());
            }
            assembler.feed(&chunk, &mut sink)?;
        }
        wire::parse_value(assembler.finish(&mut sink)?)
    }

    /// The server's wait hint of a 429 or 503: `retry-after-ms` (OpenAI's
    /// more precise one), else `Retry-After` in seconds.
    fn retry_hint(headers: &HeaderMap) -> Option<Duration> {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        header("retry-after-ms")
            .and_then(|v| errors::retry_after(Some(v)))
            .map(|d| d / 1000)
            .or_else(|| errors::retry_after(header(RETRY_AFTER.as_str())))
    }

    /// A non-2xx answer as an error carrying the server's (capped) wait
    /// hint, which the graph honours before its own retry.
    fn status_failure(&self, status: u16, headers: &HeaderMap, bytes: &[u8]) -> ModelError {
        let mut e = errors::status_error(status, bytes);
        if e.is_retryable() {
            e.retry_after =
                Self::retry_hint(headers).map(|h| h.min(self.cfg.max_rate_limit_backoff));
        }
        e
    }

    async fn exchange(
        &self,
        request: &ChatRequest,
        deltas: Option<DeltaSink<'_>>,
    ) -> Result<ChatResponse, ModelError> {
        let deadline = Instant::now() + self.cfg.timeout;
        let body = wire::request_body(&self.cfg, request);
        let (mut status, mut headers, mut resp) = self.post(&body, self.cfg.timeout).await?;
        let mut budget = self.cfg.timeout;
        let mut notes = Vec::new();
        // One back-off inside the budget for a rate limit; never for an
        // exhausted quota, which waiting does not cure.
        if status == 429 {
            let bytes = self.read_all(resp, budget).await?;
            if errors::status_error(status, &bytes).kind == ModelErrorKind::Quota {
                return Err(self.status_failure(status, &headers, &bytes));
            }
            let hinted = Self::retry_hint(&headers);
            let cap = self.cfg.max_rate_limit_backoff;
            let wait = hinted.unwrap_or(self.cfg.rate_limit_backoff).min(cap);
            let remaining = deadline.saturating_duration_since(Instant::now() + wait);
            if remaining < MIN_RETRY_BUDGET {
                let mut e = self.status_failure(status, &headers, &bytes);
                e.message = format!(
                    "{}; a back-off of {} ms does not fit the {} ms budget of this call",
                    e.message,
                    wait.as_millis(),
                    self.cfg.timeout.as_millis()
                );
                e.retry_after = Some(wait);
                return Err(e);
            }
            tokio::time::sleep(wait).await;
            budget = remaining;
            (status, headers, resp) = self.post(&body, budget).await?;
            if status == 429 {
                let bytes = self.read_all(resp, budget).await?;
                let mut e = self.status_failure(status, &headers, &bytes);
                e.message = format!(
                    "{} (again after one back-off of {} ms{})",
                    e.message,
                    wait.as_millis(),
                    capped(hinted, cap)
                );
                return Err(e);
            }
            notes.push(format!(
                "429 back-off {} ms{}, then retried once",
                wait.as_millis(),
                capped(hinted, cap)
            ));
        }
        if !(200..300).contains(&status) {
            let bytes = self.read_all(resp, budget).await?;
            return Err(self.status_failure(status, &headers, &bytes));
        }
        let event_stream = headers
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().starts_with("text/event-stream"));
        let mut response = if event_stream {
            self.read_stream(resp, budget, deltas).await?
        } else {
            // Also a server that streams under another content type:
            // `parse_response` recognises the frames.
            wire::parse_response(&self.read_all(resp, budget).await?)?
        };
        response.usage.cost_usd = self.cfg.price.map(|p| p.cost(&response.usage));
        response.notes.extend(notes);
        Ok(response)
    }
}

/// How a Retry-After was used, for messages and notes.
fn capped(hinted: Option<Duration>, cap: Duration) -> String {
    match hinted {
        Some(h) if h > cap => format!(
            " (Retry-After {} ms, capped at {} ms)",
            h.as_millis(),
            cap.as_millis()
        ),
        Some(_) => " (Retry-After)".to_string(),
        None => String::new(),
    }
}

fn too_large() -> ModelError {
    ModelError::new(
        ModelErrorKind::Protocol,
        format!("response body larger than {} MiB", MAX_BODY_BYTES >> 20),
    )
}

/// `{base}/chat/completions`, keeping the base's query string (Azure's
/// `?api-version=…`, a gateway's `?key=…`) after the path rather than
/// appending the path to the query.
fn endpoint(base: &str) -> Result<reqwest::Url, String> {
    let mut url = reqwest::Url::parse(base).map_err(|e| e.to_string())?;
    url.set_fragment(None);
    let path = url.path().trim_end_matches('/').to_string();
    if !path.ends_with("/chat/completions") {
        url.set_path(&format!("{path}/chat/completions"));
    }
    Ok(url)
}

/// Local endpoints (Ollama, vLLM on this machine) may run without a key.
fn is_local(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback() || ip.is_unspecified(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

#[async_trait]
impl ChatModel for OpenAiModel {
    fn name(&self) -> String {
        format!("openai:{}", self.cfg.model)
    }

    fn model_for(&self, _role: crate::vocab::agent::AgentRole) -> String {
        format!("openai:{} at {}", self.cfg.model, self.shown_url)
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.exchange(request, None)
            .await
            .map_err(|e| self.redacted(e))
    }

    async fn chat_streaming(
        &self,
        request: &ChatRequest,
        deltas: DeltaSink<'_>,
    ) -> Result<ChatResponse, ModelError> {
        self.exchange(request, Some(deltas))
            .await
            .map_err(|e| self.redacted(e))
    }
}

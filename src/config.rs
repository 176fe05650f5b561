//! Configuration: `$XDG_CONFIG_HOME/diagraph/config.toml`, overridden by
//! environment variables, overridden by flags.
//!
//! Layers apply in a fixed order: defaults < file < env < flags. The file is
//! strict (unknown keys are errors naming the file and line) because a typo
//! in a production config should not silently fall back to a default.
//!
//! The model's API key is never part of [`Config`]: the file names the
//! environment variable that holds it (`api_key_env`) and the key is read
//! at the moment it is used ([`Config::api_key`]). Log backends'
//! credentials (bearer token, password) live in the file only, as the
//! design asks; their `Debug` hides them, `Serialize` skips them and
//! [`Config::render_masked`] shows `***`.

use crate::text::mask_url;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
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
pub const DEFAULT_PROMQL_TEMPLATE: &str = r#"{__name__=~"up|.*cpu.*", service="{service}"}"#;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum MetricsBackend {
    #[default]
    Pack,
    Prometheus,
}

impl MetricsBackend {
    pub fn as_str(self) -> &'static str {
        match self {
            MetricsBackend::Pack => "pack",
            MetricsBackend::Prometheus => "prometheus",
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

/// What serves `query_logs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LogsBackend {
    /// The pack's `logs.jsonl`.
    #[default]
    Pack,
    /// Local log files (`[logs.files]`, `DIAGRAPH_LOG_FILES`).
    Files,
    /// Grafana Loki (`[logs.loki]`, `DIAGRAPH_LOKI_URL`).
    Loki,
}

impl LogsBackend {
    pub fn as_str(self) -> &'static str {
        match self {
            LogsBackend::Pack => "pack",
            LogsBackend::Files => "files",
            LogsBackend::Loki => "loki",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogsConfig {
    pub backend: LogsBackend,
    /// Per query (files: reading and scanning them).
    pub timeout_secs: u64,
    pub files: LogFilesConfig,
    pub loki: LokiConfig,
}

impl Default for LogsConfig {
    fn default() -> Self {
        LogsConfig {
            backend: LogsBackend::Pack,
            timeout_secs: 30,
            files: LogFilesConfig::default(),
            loki: LokiConfig::default(),
        }
    }
}

/// Local log files: `paths` is one glob or several joined by `:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogFilesConfig {
    pub paths: Option<String>,
    /// `auto` (recognised per file), `json` (JSON lines and `journalctl -o
    /// json`), or a shipped plain-text layout (`syslog`, `nginx-access`,
    /// `nginx-error`, `apache-error`, ...).
    pub format: String,
    /// A regex with named groups `ts` and `message` (optional `service`,
    /// `level`, `status`; others are kept); overrides `format`.
    pub pattern: Option<String>,
    /// chrono `strftime` layout of the `ts` group; default: the common ones.
    pub ts_format: Option<String>,
    /// Service of records that name none; default: the file's name up to
    /// its first dot.
    pub service: Option<String>,
}

/// Grafana Loki. Credentials live here only (never in the environment)
/// and are never shown.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LokiConfig {
    /// e.g. `http://loki:3100` (a path prefix is kept).
    pub url: Option<String>,
    /// The first of these labels Loki has names the service.
    pub service_labels: Vec<String>,
    /// The first of these labels Loki has gives the level (else the last
    /// one is used as a filter, as Loki 3's `detected_level` is not listed
    /// among labels).
    pub level_labels: Vec<String>,
    /// Newest lines read per query (the sample is chosen from them); at
    /// most 5000, Loki's default `max_entries_limit_per_query`.
    pub max_lines: usize,
    /// The window of a query that gives none.
    pub default_window_hours: u32,
    #[serde(skip_serializing)]
    pub bearer_token: Option<String>,
    pub username: Option<String>,
    #[serde(skip_serializing)]
    pub password: Option<String>,
    /// Sent as `X-Scope-OrgID` (multi-tenant Loki).
    pub tenant: Option<String>,
}

impl std::fmt::Debug for LokiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LokiConfig")
            .field("url", &self.url.as_deref().map(mask_url))
            .field("service_labels", &self.service_labels)
            .field("level_labels", &self.level_labels)
            .field("max_lines", &self.max_lines)
            .field(
                "credentials",
                &(self.bearer_token.is_some() || self.password.is_some()),
            )
            .finish()
    }
}

impl Default for LokiConfig {
    fn default() -> Self {
        LokiConfig {
            url: None,
            service_labels: ["service", "service_name", "app", "job"]
                .map(String::from)
                .to_vec(),
            level_labels: ["level", "detected_level"].map(String::from).to_vec(),
            max_lines: 1000,
            default_window_hours: 24,
            bearer_token: None,
            username: None,
            password: None,
            tenant: None,
        }
    }
}

impl Default for LogFilesConfig {
    fn default() -> Self {
        LogFilesConfig {
            paths: None,
            format: "auto".into(),
            pattern: None,
            ts_format: None,
            service: None,
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
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            deadline_secs: None,
            max_tool_calls: 12,
            max_executor_turns: 8,
        }
    }
}

impl AsRef<ModelConfig> for ModelConfig {
    fn as_ref(&self) -> &ModelConfig {
        self
    }
}

impl AsRef<ModelConfig> for Config {
    fn as_ref(&self) -> &ModelConfig {
        &self.model
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
    fn api_key_source(&self, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    pub backend: MetricsBackend,
    pub prometheus_url: Option<String>,
    /// PromQL for a service's instant values; `{service}` is replaced by the
    /// escaped service name.
    pub promql_template: String,
    /// The alert label that names the service.
    pub service_label: String,
    pub timeout_secs: u64,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            backend: MetricsBackend::Pack,
            prometheus_url: None,
            promql_template: DEFAULT_PROMQL_TEMPLATE.into(),
            service_label: "service".into(),
            timeout_secs: 10,
        }
    }
}

/// How long an MCP server may take to start (or connect) and list its
/// tools, and one of its tool calls to answer, unless configured.
pub const DEFAULT_MCP_TIMEOUT_SECS: u64 = 20;

/// `[mcp.servers.NAME]`: an MCP server whose tools the Executor may call
/// as `NAME__TOOL`. Exactly one of `command` (started as a child process
/// speaking MCP on stdio) and `url` (streamable HTTP) is set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpServerConfig {
    pub command: Option<String>,
    pub args: Vec<String>,
    /// Set for the child process; values may be secrets and are never shown.
    pub env: BTreeMap<String, String>,
    pub url: Option<String>,
    /// Seconds for starting and listing tools, and for each call.
    pub timeout_secs: u64,
}

impl Default for McpServerConfig {
    fn default() -> Self {
        McpServerConfig {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            url: None,
            timeout_secs: DEFAULT_MCP_TIMEOUT_SECS,
        }
    }
}

impl McpServerConfig {
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// By name; the name prefixes the server's tools (`NAME__TOOL`).
    pub servers: BTreeMap<String, McpServerConfig>,
}

/// Whether `name` can prefix tool names: letters, digits, `-` and `_`,
/// no `__` (it separates the server from the tool), at most 32 bytes.
pub fn valid_mcp_server_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && !name.contains("__")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub model: ModelConfig,
    pub metrics: MetricsConfig,
    pub run: RunConfig,
    pub logs: LogsConfig,
    pub database_url: Option<String>,
    pub pack: Option<PathBuf>,
    pub prompts_dir: Option<PathBuf>,
    pub theme: String,
    /// Key binding overrides for the TUI (action -> key).
    pub keys: BTreeMap<String, String>,
    /// OTLP/HTTP base URL: every run is exported to `{base}/v1/traces`.
    pub otlp_endpoint: Option<String>,
    /// MCP servers whose tools the Executor may call.
    pub mcp: McpConfig,
    /// The config file that was read, if any (not a setting).
    #[serde(skip)]
    pub file: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            model: ModelConfig::default(),
            metrics: MetricsConfig::default(),
            run: RunConfig::default(),
            logs: LogsConfig::default(),
            database_url: None,
            pack: None,
            prompts_dir: None,
            theme: "dark".into(),
            keys: BTreeMap::new(),
            otlp_endpoint: None,
            mcp: McpConfig::default(),
            file: None,
        }
    }
}

/// Command-line overrides; `None` leaves the lower layers alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConfigFlags {
    pub config_file: Option<PathBuf>,
    pub database_url: Option<String>,
    pub pack: Option<PathBuf>,
    /// `offline` | `openai`.
    pub model: Option<String>,
    pub prompts_dir: Option<PathBuf>,
    pub theme: Option<String>,
    pub prometheus_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("config file {path}: {message}")]
    Unreadable { path: PathBuf, message: String },
    /// Invalid TOML or an unknown/mistyped key; `message` carries the line.
    #[error("config file {path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("{source_name}: {message}")]
    BadValue {
        source_name: String,
        message: String,
    },
}

/// The file layer: every field optional so that only what is written
/// overrides the defaults.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    model: Option<ModelConfig>,
    metrics: Option<MetricsConfig>,
    run: Option<RunConfig>,
    logs: Option<LogsConfig>,
    database_url: Option<String>,
    pack: Option<PathBuf>,
    prompts_dir: Option<PathBuf>,
    theme: Option<String>,
    keys: Option<BTreeMap<String, String>>,
    otlp_endpoint: Option<String>,
    mcp: Option<McpConfig>,
}

impl Config {
    /// The effective configuration from the real environment and the
    /// default config path.
    pub fn load(flags: &ConfigFlags) -> Result<Config, ConfigError> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Config::load_with(flags, &env, default_path(&env).as_deref())
    }

    /// [`Config::load`] with the environment and default path injected.
    pub fn load_with(
        flags: &ConfigFlags,
        env: &dyn Fn(&str) -> Option<String>,
        default_path: Option<&Path>,
    ) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        let file = match (&flags.config_file, default_path) {
            (Some(explicit), _) => Some(read_file(explicit)?),
            (None, Some(p)) if p.is_file() => Some(read_file(p)?),
            _ => None,
        };
        if let Some((path, file)) = file {
            config.apply_file(file, &path);
            config.file = Some(path);
        }
        config.apply_env(env)?;
        config.apply_flags(flags)?;
        config.validate()?;
        Ok(config)
    }

    fn apply_file(&mut self, file: FileConfig, path: &Path) {
        // Relative paths in a file mean "next to the file", not the cwd of
        // whoever runs diagraph.
        let base = path.parent().unwrap_or(Path::new("."));
        let resolve = |p: PathBuf| if p.is_relative() { base.join(p) } else { p };
        if let Some(m) = file.model {
            self.model = m;
        }
        if let Some(m) = file.metrics {
            self.metrics = m;
        }
        if let Some(r) = file.run {
            self.run = r;
        }
        if let Some(l) = file.logs {
            self.logs = l;
        }
        if file.database_url.is_some() {
            self.database_url = file.database_url;
        }
        if let Some(p) = file.pack {
            self.pack = Some(resolve(p));
        }
        if let Some(p) = file.prompts_dir {
            self.prompts_dir = Some(resolve(p));
        }
        if let Some(t) = file.theme {
            self.theme = t;
        }
        if let Some(k) = file.keys {
            self.keys = k;
        }
        if file.otlp_endpoint.is_some() {
            self.otlp_endpoint = file.otlp_endpoint;
        }
        if let Some(mut mcp) = file.mcp {
            // A relative command path is next to the file, as other paths
            // are; a bare program name is looked up on PATH.
            for server in mcp.servers.values_mut() {
                if let Some(c) = &server.command
                    && c.contains('/')
                    && Path::new(c).is_relative()
                {
                    server.command = Some(base.join(c).display().to_string());
                }
            }
            self.mcp = mcp;
        }
    }

    fn apply_env(&mut self, env: &dyn Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        if let Some(v) = env("DIAGRAPH_DATABASE_URL") {
            self.database_url = Some(v);
        }
        if let Some(v) = env("DIAGRAPH_PACK") {
            self.pack = Some(PathBuf::from(v));
        }
        if let Some(v) = env("DIAGRAPH_MODEL") {
            self.model.provider = parse_provider(&v, "DIAGRAPH_MODEL")?;
        }
        if let Some(v) = env("DIAGRAPH_OPENAI_BASE_URL") {
            self.model.base_url = v;
        }
        if let Some(v) = env("DIAGRAPH_OPENAI_MODEL") {
            self.model.model = v;
        }
        if let Some(v) = env("DIAGRAPH_MODEL_TIMEOUT") {
            self.model.timeout_secs = v.trim().parse().map_err(|_| ConfigError::BadValue {
                source_name: "DIAGRAPH_MODEL_TIMEOUT".into(),
                message: format!("{:?} is not a whole number of seconds", v.trim()),
            })?;
        }
        if let Some(v) = env("DIAGRAPH_PROMETHEUS_URL") {
            self.metrics.backend = MetricsBackend::Prometheus;
            self.metrics.prometheus_url = Some(v);
        }
        if let Some(v) = env("DIAGRAPH_LOG_FILES") {
            self.logs.backend = LogsBackend::Files;
            self.logs.files.paths = Some(v);
        }
        if let Some(v) = env("DIAGRAPH_LOKI_URL") {
            if env("DIAGRAPH_LOG_FILES").is_some() {
                return Err(ConfigError::BadValue {
                    source_name: "DIAGRAPH_LOKI_URL".into(),
                    message: "DIAGRAPH_LOG_FILES is set too; query_logs has one backend".into(),
                });
            }
            self.logs.backend = LogsBackend::Loki;
            self.logs.loki.url = Some(v);
        }
        // diagraph's own name wins over the standard OpenTelemetry one.
        if let Some(v) =
            env("DIAGRAPH_OTLP_ENDPOINT").or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT"))
        {
            self.otlp_endpoint = Some(v);
        }
        Ok(())
    }

    fn apply_flags(&mut self, flags: &ConfigFlags) -> Result<(), ConfigError> {
        if let Some(v) = &flags.database_url {
            self.database_url = Some(v.clone());
        }
        if let Some(v) = &flags.pack {
            self.pack = Some(v.clone());
        }
        if let Some(v) = &flags.model {
            self.model.provider = parse_provider(v, "--model")?;
        }
        if let Some(v) = &flags.prompts_dir {
            self.prompts_dir = Some(v.clone());
        }
        if let Some(v) = &flags.theme {
            self.theme = v.clone();
        }
        if let Some(v) = &flags.prometheus_url {
            self.metrics.backend = MetricsBackend::Prometheus;
            self.metrics.prometheus_url = Some(v.clone());
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let bad = |name: &str, message: String| ConfigError::BadValue {
            source_name: name.into(),
            message,
        };
        validate_model(&self.model, "model")?;
        for (name, m) in &self.model.models {
            let at = format!("model.models.{name}");
            validate_model(m, &at)?;
            if !(m.models.is_empty() && m.roles.is_empty() && m.fallbacks.is_empty()) {
                return Err(bad(
                    &at,
                    "a named model cannot have models, roles or fallbacks of its own".into(),
                ));
            }
        }
        let known = |name: &str, at: String| {
            if self.model.models.contains_key(name) {
                Ok(())
            } else {
                Err(bad(
                    &at,
                    format!("{name:?} is not a model defined under [model.models]"),
                ))
            }
        };
        for (role, name) in &self.model.roles {
            check_role(role, "model.roles")?;
            known(name, format!("model.roles.{role}"))?;
        }
        for (role, names) in &self.model.fallbacks {
            check_role(role, "model.fallbacks")?;
            for name in names {
                known(name, format!("model.fallbacks.{role}"))?;
            }
        }
        if self.run.deadline_secs == Some(0) {
            return Err(bad("run.deadline_secs", "must be at least 1".into()));
        }
        if self.run.max_executor_turns == 0 {
            return Err(bad("run.max_executor_turns", "must be at least 1".into()));
        }
        if self.metrics.timeout_secs == 0 {
            return Err(bad("metrics.timeout_secs", "must be at least 1".into()));
        }
        if self.logs.timeout_secs == 0 {
            return Err(bad("logs.timeout_secs", "must be at least 1".into()));
        }
        if self.logs.backend == LogsBackend::Files
            && self
                .logs
                .files
                .paths
                .as_deref()
                .is_none_or(|p| p.trim().is_empty())
        {
            return Err(bad(
                "logs.files.paths",
                "the files log backend needs paths (set DIAGRAPH_LOG_FILES)".into(),
            ));
        }
        if self.logs.backend == LogsBackend::Loki {
            match self.logs.loki.url.as_deref() {
                None | Some("") => {
                    return Err(bad(
                        "logs.loki.url",
                        "the loki log backend needs a URL (set DIAGRAPH_LOKI_URL)".into(),
                    ));
                }
                Some(u) if !is_http_url(u) => {
                    return Err(bad(
                        "logs.loki.url",
                        format!("{:?} is not an http(s) URL", mask_url(u)),
                    ));
                }
                Some(_) => {}
            }
        }
        if self.metrics.backend == MetricsBackend::Prometheus
            && self
                .metrics
                .prometheus_url
                .as_deref()
                .is_none_or(str::is_empty)
        {
            return Err(bad(
                "metrics.prometheus_url",
                "the prometheus backend needs a URL (set DIAGRAPH_PROMETHEUS_URL or --prometheus-url)"
                    .into(),
            ));
        }
        if let Some(url) = &self.otlp_endpoint
            && !is_http_url(url)
        {
            return Err(bad(
                "otlp_endpoint",
                format!("{:?} is not an http(s) URL", mask_url(url)),
            ));
        }
        for (name, server) in &self.mcp.servers {
            let key = format!("mcp.servers.{}", toml_key(name));
            if !valid_mcp_server_name(name) {
                return Err(bad(
                    &key,
                    "a server name is 1 to 32 letters, digits, '-' or '_', without \"__\" (it prefixes the server's tools as NAME__TOOL)".into(),
                ));
            }
            match (&server.command, &server.url) {
                (Some(c), None) if !c.trim().is_empty() => {}
                (None, Some(url)) if is_http_url(url) => {}
                (None, Some(url)) => {
                    return Err(bad(
                        &key,
                        format!("url {:?} is not an http(s) URL", mask_url(url)),
                    ));
                }
                (Some(_), Some(_)) => {
                    return Err(bad(&key, "set command or url, not both".into()));
                }
                _ => {
                    return Err(bad(
                        &key,
                        "needs a command (a program speaking MCP on stdio) or a url (streamable HTTP)".into(),
                    ));
                }
            }
            if server.url.is_some() && (!server.args.is_empty() || !server.env.is_empty()) {
                return Err(bad(
                    &key,
                    "args and env are for a command, not a url".into(),
                ));
            }
            if server.timeout_secs == 0 {
                return Err(bad(
                    &format!("{key}.timeout_secs"),
                    "must be at least 1".into(),
                ));
            }
        }
        Ok(())
    }

    /// The API key, read from the environment now (never stored).
    pub fn api_key(&self) -> Option<String> {
        self.model.api_key()
    }

    pub fn api_key_with(&self, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
        self.model.api_key_with(env)
    }

    /// The effective configuration as TOML, for `diagraph config`.
    pub fn render_masked(&self) -> String {
        self.render_masked_with(&|k| std::env::var(k).ok())
    }

    pub fn render_masked_with(&self, env: &dyn Fn(&str) -> Option<String>) -> String {
        render(self, env)
    }
}

fn check_role(role: &str, at: &str) -> Result<(), ConfigError> {
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
fn validate_model(m: &ModelConfig, at: &str) -> Result<(), ConfigError> {
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

fn parse_provider(v: &str, source_name: &str) -> Result<Provider, ConfigError> {
    Provider::parse(v).ok_or_else(|| ConfigError::BadValue {
        source_name: source_name.into(),
        message: format!("{:?} is not a model provider (offline | openai)", v.trim()),
    })
}

fn read_file(path: &Path) -> Result<(PathBuf, FileConfig), ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Unreadable {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let file: FileConfig = toml::from_str(&text).map_err(|e| ConfigError::Invalid {
        path: path.to_path_buf(),
        message: toml_error_message(&text, &e),
    })?;
    Ok((path.to_path_buf(), file))
}

/// One line: "line N: message" (toml's own Display spans several lines).
fn toml_error_message(text: &str, e: &toml::de::Error) -> String {
    let msg = e.message().trim().replace('\n', " ");
    match e.span() {
        Some(span) => {
            let line = text
                .get(..span.start)
                .map(|s| s.matches('\n').count() + 1)
                .unwrap_or(1);
            format!("line {line}: {msg}")
        }
        None => msg,
    }
}

/// `$XDG_CONFIG_HOME/diagraph/config.toml`, else `~/.config/diagraph/config.toml`.
pub fn default_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(x) = env("XDG_CONFIG_HOME").filter(|x| Path::new(x).is_absolute()) {
        return Some(PathBuf::from(x).join("diagraph").join("config.toml"));
    }
    env("HOME").map(|h| PathBuf::from(h).join(".config/diagraph/config.toml"))
}

pub(crate) fn is_http_url(s: &str) -> bool {
    let s = s.trim();
    (s.starts_with("http://") || s.starts_with("https://")) && s.len() > "https://".len()
}

fn render(c: &Config, env: &dyn Fn(&str) -> Option<String>) -> String {
    let q = |s: &str| toml::Value::String(s.to_string()).to_string();
    let opt = |k: &str, v: Option<String>| match v {
        Some(v) => format!("{k} = {}\n", q(&v)),
        None => format!("# {k} = (not set)\n"),
    };
    let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    let mut out = String::new();
    out.push_str(&match &c.file {
        Some(f) => format!("# config file: {}\n", f.display()),
        None => "# config file: none (defaults, environment and flags only)\n".into(),
    });
    out.push_str(&opt(
        "database_url",
        c.database_url.as_deref().map(mask_url),
    ));
    out.push_str(&opt("pack", path(&c.pack)));
    out.push_str(&opt("prompts_dir", path(&c.prompts_dir)));
    out.push_str(&format!("theme = {}\n", q(&c.theme)));
    out.push_str(&opt(
        "otlp_endpoint",
        c.otlp_endpoint.as_deref().map(mask_url),
    ));

    render_model(&mut out, &c.model, "model", env);
    if !c.model.roles.is_empty() {
        out.push_str("\n[model.roles]\n");
        for (role, name) in &c.model.roles {
            out.push_str(&format!("{} = {}\n", toml_key(role), q(name)));
        }
    }
    if !c.model.fallbacks.is_empty() {
        out.push_str("\n[model.fallbacks]\n");
        for (role, names) in &c.model.fallbacks {
            let list: Vec<String> = names.iter().map(|n| q(n)).collect();
            out.push_str(&format!("{} = [{}]\n", toml_key(role), list.join(", ")));
        }
    }
    for (name, m) in &c.model.models {
        render_model(
            &mut out,
            m,
            &format!("model.models.{}", toml_key(name)),
            env,
        );
    }

    let r = &c.run;
    out.push_str("\n[run]\n");
    out.push_str(&match r.deadline_secs {
        Some(d) => format!("deadline_secs = {d}\n"),
        None => "# deadline_secs = (not set: no deadline)\n".into(),
    });
    out.push_str(&format!("max_tool_calls = {}\n", r.max_tool_calls));
    out.push_str(&format!("max_executor_turns = {}\n", r.max_executor_turns));

    let x = &c.metrics;
    out.push_str("\n[metrics]\n");
    out.push_str(&format!("backend = {}\n", q(x.backend.as_str())));
    out.push_str(&opt(
        "prometheus_url",
        x.prometheus_url.as_deref().map(mask_url),
    ));
    out.push_str(&format!("promql_template = {}\n", q(&x.promql_template)));
    out.push_str(&format!("service_label = {}\n", q(&x.service_label)));
    out.push_str(&format!("timeout_secs = {}\n", x.timeout_secs));

    let l = &c.logs;
    out.push_str("\n[logs]\n");
    out.push_str(&format!("backend = {}\n", q(l.backend.as_str())));
    out.push_str(&format!("timeout_secs = {}\n", l.timeout_secs));
    let f = &l.files;
    out.push_str("\n[logs.files]\n");
    out.push_str(&opt("paths", f.paths.clone()));
    out.push_str(&format!("format = {}\n", q(&f.format)));
    out.push_str(&opt("pattern", f.pattern.clone()));
    out.push_str(&opt("ts_format", f.ts_format.clone()));
    out.push_str(&opt("service", f.service.clone()));
    let k = &l.loki;
    let list = |v: &[String]| {
        toml::Value::Array(v.iter().map(|s| toml::Value::String(s.clone())).collect()).to_string()
    };
    let secret = |k: &str, v: &Option<String>| match v {
        Some(_) => format!("{k} = \"***\"\n"),
        None => format!("# {k} = (not set)\n"),
    };
    out.push_str("\n[logs.loki]\n");
    out.push_str(&opt("url", k.url.as_deref().map(mask_url)));
    out.push_str(&format!("service_labels = {}\n", list(&k.service_labels)));
    out.push_str(&format!("level_labels = {}\n", list(&k.level_labels)));
    out.push_str(&format!("max_lines = {}\n", k.max_lines));
    out.push_str(&format!(
        "default_window_hours = {}\n",
        k.default_window_hours
    ));
    out.push_str(&secret("bearer_token", &k.bearer_token));
    out.push_str(&opt("username", k.username.clone()));
    out.push_str(&secret("password", &k.password));
    out.push_str(&opt("tenant", k.tenant.clone()));

    for (name, server) in &c.mcp.servers {
        out.push_str(&format!("\n[mcp.servers.{}]\n", toml_key(name)));
        if let Some(command) = &server.command {
            out.push_str(&format!("command = {}\n", q(command)));
            let args: Vec<String> = server.args.iter().map(|a| q(a)).collect();
            out.push_str(&format!("args = [{}]\n", args.join(", ")));
        }
        if let Some(url) = &server.url {
            out.push_str(&format!("url = {}\n", q(&mask_url(url))));
        }
        if !server.env.is_empty() {
            let env: Vec<String> = server
                .env
                .keys()
                .map(|k| format!("{} = \"***\"", toml_key(k)))
                .collect();
            out.push_str(&format!("env = {{ {} }}\n", env.join(", ")));
        }
        out.push_str(&format!("timeout_secs = {}\n", server.timeout_secs));
    }

    if !c.keys.is_empty() {
        out.push_str("\n[keys]\n");
        for (k, v) in &c.keys {
            out.push_str(&format!("{} = {}\n", toml_key(k), q(v)));
        }
    }
    out
}

fn render_model(
    out: &mut String,
    m: &ModelConfig,
    table: &str,
    env: &dyn Fn(&str) -> Option<String>,
) {
    let q = |s: &str| toml::Value::String(s.to_string()).to_string();
    out.push_str(&format!("\n[{table}]\n"));
    out.push_str(&format!("provider = {}\n", q(m.provider.as_str())));
    out.push_str(&format!("base_url = {}\n", q(&mask_url(&m.base_url))));
    out.push_str(&format!("model = {}\n", q(&m.model)));
    out.push_str(&format!("api_key_env = {}\n", q(&m.api_key_env)));
    let key = match m.api_key_source(env) {
        Some(var) => format!("*** (from {var})"),
        None if m.api_key_env.trim().is_empty() => "not used (keyless endpoint)".into(),
        None => format!("not set (export {})", m.api_key_env.trim()),
    };
    out.push_str(&format!("api_key = {}\n", q(&key)));
    out.push_str(&format!("timeout_secs = {}\n", m.timeout_secs));
    out.push_str(&match m.max_tokens {
        Some(t) => format!("max_tokens = {t}\n"),
        None => "# max_tokens = (not set)\n".into(),
    });
    out.push_str(&format!(
        "max_tokens_field = {}\n",
        q(m.max_tokens_field.as_str())
    ));
    out.push_str(&match m.temperature {
        Some(t) => format!("temperature = {t}\n"),
        None => "# temperature = (not set: not sent)\n".into(),
    });
    out.push_str(&format!(
        "retry_after_cap_secs = {}\n",
        m.retry_after_cap_secs
    ));
    if let Some(p) = m.price_per_million {
        out.push_str(&format!(
            "price_per_million = {{ prompt = {}, completion = {} }}\n",
            p.prompt, p.completion
        ));
    }
    if !m.extra_body.is_empty() {
        out.push_str(&format!("\n[{table}.extra_body]\n"));
        for (k, v) in &m.extra_body {
            let value =
                toml::Value::try_from(v).map_or_else(|_| q(&v.to_string()), |t| t.to_string());
            out.push_str(&format!("{} = {value}\n", toml_key(k)));
        }
    }
}

fn toml_key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        toml::Value::String(k.to_string()).to_string()
    }
}

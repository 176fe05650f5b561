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
//! credentials (bearer token, password) live in the file only; their
//! `Debug` hides them, `Serialize` skips them and
//! [`Config::render_masked`] shows `***`.

mod mcp;
mod model;
mod render;
mod telemetry;
mod tui;

pub use mcp::*;
pub use model::*;
pub use telemetry::*;
pub use tui::TuiConfig;

use crate::text::mask_url;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

impl AsRef<ModelConfig> for Config {
    fn as_ref(&self) -> &ModelConfig {
        &self.model
    }
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
    /// The workbench's use of the terminal (`[tui]`).
    pub tui: TuiConfig,
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
            tui: TuiConfig::default(),
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
    /// `--no-mouse`: the workbench leaves the mouse to the terminal.
    pub no_mouse: bool,
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
    tui: Option<TuiConfig>,
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
        if let Some(t) = file.tui {
            self.tui = t;
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
        if let Some(v) = env("DIAGRAPH_ELASTICSEARCH_URL") {
            if let Some(other) = ["DIAGRAPH_LOG_FILES", "DIAGRAPH_LOKI_URL"]
                .into_iter()
                .find(|n| env(n).is_some())
            {
                return Err(ConfigError::BadValue {
                    source_name: "DIAGRAPH_ELASTICSEARCH_URL".into(),
                    message: format!("{other} is set too; query_logs has one backend"),
                });
            }
            self.logs.backend = LogsBackend::Elasticsearch;
            self.logs.elasticsearch.url = Some(v);
        }
        if let Some(v) = env("DIAGRAPH_ELASTICSEARCH_INDEX") {
            self.logs.elasticsearch.index = v;
        }
        if let Some(v) = env("DIAGRAPH_TUI_MOUSE") {
            self.tui.mouse = tui::parse_switch(&v, "DIAGRAPH_TUI_MOUSE")?;
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
        if flags.no_mouse {
            self.tui.mouse = false;
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
        if self.logs.backend == LogsBackend::Elasticsearch {
            let es = &self.logs.elasticsearch;
            match es.url.as_deref() {
                None | Some("") => {
                    return Err(bad(
                        "logs.elasticsearch.url",
                        "the elasticsearch log backend needs a URL (set DIAGRAPH_ELASTICSEARCH_URL)"
                            .into(),
                    ));
                }
                Some(u) if !is_http_url(u) => {
                    return Err(bad(
                        "logs.elasticsearch.url",
                        format!("{:?} is not an http(s) URL", mask_url(u)),
                    ));
                }
                Some(_) => {}
            }
            if let Err(e) = es.check_index() {
                return Err(bad("logs.elasticsearch.index", e));
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
            let key = format!("mcp.servers.{}", render::toml_key(name));
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
        render::render(self, env)
    }
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

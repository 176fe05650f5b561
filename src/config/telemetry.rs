//! `[metrics]` and `[logs]`: where alerts, metric values and logs come from.

use crate::text::mask_url;
use serde::{Deserialize, Serialize};

pub const DEFAULT_PROMQL_TEMPLATE: &str = r#"{__name__=~"up|.*cpu.*", service="{service}"}"#;

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

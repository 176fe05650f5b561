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
    /// Elasticsearch or OpenSearch (`[logs.elasticsearch]`,
    /// `DIAGRAPH_ELASTICSEARCH_URL`); `opensearch` is the same backend.
    #[serde(alias = "opensearch")]
    Elasticsearch,
}

impl LogsBackend {
    pub fn as_str(self) -> &'static str {
        match self {
            LogsBackend::Pack => "pack",
            LogsBackend::Files => "files",
            LogsBackend::Loki => "loki",
            LogsBackend::Elasticsearch => "elasticsearch",
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
    pub elasticsearch: ElasticsearchConfig,
}

impl Default for LogsConfig {
    fn default() -> Self {
        LogsConfig {
            backend: LogsBackend::Pack,
            timeout_secs: 30,
            files: LogFilesConfig::default(),
            loki: LokiConfig::default(),
            elasticsearch: ElasticsearchConfig::default(),
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

/// Elasticsearch 8 or OpenSearch 2 (`_search`). Credentials live here
/// only (never in the environment) and are never shown.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ElasticsearchConfig {
    /// e.g. `https://es:9200` (a path prefix is kept).
    pub url: Option<String>,
    /// The index pattern searched: `logs-*`, `filebeat-*,app-*`.
    pub index: String,
    /// A `date` (or `date_nanos`) field.
    pub timestamp_field: String,
    /// Fields naming the service, in order: a record's service is the
    /// first it has; a service filter matches any of them (keyword
    /// fields, compared ignoring case).
    pub service_fields: Vec<String>,
    /// Fields giving the level, in order (else the level is read from the
    /// message).
    pub level_fields: Vec<String>,
    pub message_field: String,
    /// Newest records read per query (the sample is chosen from them); at
    /// most 10000, the default `index.max_result_window`.
    pub max_lines: usize,
    /// The window of a query that gives none.
    pub default_window_hours: u32,
    /// `Authorization: ApiKey …` (the base64 `encoded` form).
    #[serde(skip_serializing)]
    pub api_key: Option<String>,
    pub username: Option<String>,
    #[serde(skip_serializing)]
    pub password: Option<String>,
}

impl std::fmt::Debug for ElasticsearchConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElasticsearchConfig")
            .field("url", &self.url.as_deref().map(mask_url))
            .field("index", &self.index)
            .field("timestamp_field", &self.timestamp_field)
            .field("service_fields", &self.service_fields)
            .field("level_fields", &self.level_fields)
            .field("message_field", &self.message_field)
            .field("max_lines", &self.max_lines)
            .field(
                "credentials",
                &(self.api_key.is_some() || self.password.is_some()),
            )
            .finish()
    }
}

impl ElasticsearchConfig {
    /// The index pattern goes into the request path: it must be names and
    /// patterns Elasticsearch accepts (`logs-*`, `a,b`, `remote:logs-*`),
    /// nothing that could change the path or the query.
    pub fn check_index(&self) -> Result<(), String> {
        let ix = self.index.trim();
        let bad = |why: &str| Err(format!("index pattern {ix:?} {why}"));
        if ix.is_empty() {
            return bad("is empty");
        }
        if let Some(c) = ix
            .chars()
            .find(|c| c.is_whitespace() || c.is_control() || "\\/?\"<>|#&%".contains(*c))
        {
            return bad(&format!("contains {c:?}, which an index name cannot"));
        }
        if ix
            .split(',')
            .any(|part| part.is_empty() || part.starts_with('_'))
        {
            return bad("has an empty name or one starting with '_'");
        }
        Ok(())
    }
}

impl Default for ElasticsearchConfig {
    fn default() -> Self {
        ElasticsearchConfig {
            url: None,
            index: "logs-*".into(),
            timestamp_field: "@timestamp".into(),
            service_fields: ["service.name", "service"].map(String::from).to_vec(),
            level_fields: ["log.level", "level"].map(String::from).to_vec(),
            message_field: "message".into(),
            max_lines: 1000,
            default_window_hours: 24,
            api_key: None,
            username: None,
            password: None,
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

//! Wiring: configuration, logging, the store, the pack, the tools and the
//! model, assembled into an [`Engine`]. One place decides what the
//! embedded defaults are.

use super::shipped::{shipped_pack_dir, shipped_scenarios_dir};
use super::{Cli, CliError, ModelChoice};
use crate::config::{Config, ConfigFlags, LogsBackend, MetricsBackend};
use crate::engine::prompts::Prompts;
use crate::engine::{Engine, EngineConfig};
use crate::model::ChatModel;
use crate::model::offline::OfflineModel;
use crate::server::otlp::export::{HEADERS_ENV, Warn, parse_headers};
use crate::server::otlp::{ExportingRecorder, OtlpExporter};
use crate::store::Store;
use crate::tools::ToolRegistry;
use crate::tools::mcp::McpServers;
use crate::tools::pack::{Pack, pack_tools};
use crate::vocab::catalog::Catalog;
use crate::vocab::record::Recorder;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub fn load_config(cli: &Cli) -> Result<Config, CliError> {
    let flags = ConfigFlags {
        config_file: cli.config.clone(),
        database_url: cli.database_url.clone(),
        pack: cli.pack.clone(),
        model: cli.model.map(|m| match m {
            ModelChoice::Offline => "offline".to_string(),
            ModelChoice::Openai => "openai".to_string(),
        }),
        prompts_dir: cli.prompts.clone(),
        theme: cli.theme.clone(),
        prometheus_url: cli.prometheus_url.clone(),
        no_mouse: cli.no_mouse,
    };
    Ok(Config::load(&flags)?)
}

/// Logs go to a file, never to the terminal (the TUI owns it). Returns the
/// writer guard that flushes on drop; None when no log file can be opened.
pub fn init_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    use etcetera::BaseStrategy;
    let dir = etcetera::choose_base_strategy()
        .ok()?
        .data_dir()
        .join("diagraph");
    std::fs::create_dir_all(&dir).ok()?;
    let appender = tracing_appender::rolling::never(dir, "diagraph.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = tracing_subscriber::EnvFilter::try_from_env("DIAGRAPH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .try_init()
        .ok()?;
    Some(guard)
}

/// Where the warnings of set-up and of the trace export go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Both to stderr (`serve`).
    Stderr,
    /// Pack warnings to the log (the command reports them with its
    /// answer); a failing trace export to stderr (`ask`).
    Quiet,
    /// The TUI owns the terminal: everything to the log.
    Screen,
}

pub struct Setup {
    pub store: Arc<Store>,
    /// None when a live backend is configured and no pack is named: then
    /// no demo pack serves the other tools behind the user's back.
    pub pack: Option<Arc<Pack>>,
    pub engine: Engine,
    /// Answers the calls a scenario does not script.
    pub fallthrough: Arc<dyn ChatModel>,
    /// The demo scenarios the TUI offers.
    pub scenarios_dir: PathBuf,
    /// Exports every finished run when an OTLP endpoint is configured.
    pub exporter: Option<Arc<OtlpExporter>>,
    /// The configured MCP servers, started, and their tools.
    pub mcp: Arc<McpServers>,
    /// Servers that offer no tools and tools not offered, one line each.
    pub mcp_warnings: Vec<String>,
}

/// How long a command waits at exit for its runs' spans to be sent.
const EXPORT_DEADLINE: Duration = Duration::from_secs(5);

impl Setup {
    pub async fn build(config: &Config, output: Output) -> Result<Setup, CliError> {
        let store = Arc::new(open_store(config).await?);
        let live_metrics = config.metrics.backend == MetricsBackend::Prometheus;
        let live = live_metrics || config.logs.backend != LogsBackend::Pack;
        // The shipped pack is a demo: with a live backend and no pack
        // named, the other tools have no source rather than a fictional one.
        let pack_dir = match (&config.pack, live) {
            (Some(dir), _) => Some(dir.clone()),
            (None, false) => Some(shipped_pack_dir()?),
            (None, true) => None,
        };
        let pack = match pack_dir {
            Some(dir) => Some(Arc::new(super::progress::load_pack(&dir)?)),
            None => None,
        };
        for warning in pack.iter().flat_map(|p| &p.warnings) {
            match output {
                Output::Stderr => {
                    eprintln!(
                        "diagraph: warning: {}",
                        crate::text::sanitize_line(&warning.to_string())
                    )
                }
                Output::Quiet | Output::Screen => tracing::warn!(%warning, "pack warning"),
            }
        }
        if let Some(pack) = &pack {
            store.sync_knowledge(pack).await?;
        }
        // The Planner's domain map comes from the knowledge metadata tables.
        let domains = match &pack {
            Some(_) => store.knowledge_domains().await?,
            None => Vec::new(),
        };

        let mut tools = registry(config, pack.as_ref())?;

        // The configured MCP servers' tools sit next to the built-in ones,
        // permitted like them.
        // Started once here and shared by every run of this process; a
        // server that did not start is an unavailable source of each run.
        let mcp = Arc::new(McpServers::start(&config.mcp).await);
        mcp.register(&mut tools);
        let mut run_config = engine_config(config);
        run_config.tool_permissions.extend(mcp.tool_names());
        let mcp_warnings = mcp.warnings();
        for warning in &mcp_warnings {
            match output {
                Output::Stderr => {
                    eprintln!("diagraph: warning: {}", crate::text::sanitize_line(warning))
                }
                Output::Quiet | Output::Screen => tracing::warn!(%warning, "MCP warning"),
            }
        }

        let fallthrough: Arc<dyn ChatModel> = Arc::new(offline_model(config));
        let model = crate::model::routed::from_config(&config.model, fallthrough.clone())?;
        let prompts = match &config.prompts_dir {
            Some(dir) => Prompts::from_dir(dir)?,
            None => Prompts::shipped(),
        };
        let exporter = match &config.otlp_endpoint {
            Some(endpoint) => Some(start_exporter(endpoint, store.clone(), output)?),
            None => None,
        };
        let recorder: Arc<dyn Recorder> = match &exporter {
            Some(e) => Arc::new(ExportingRecorder::new(store.clone(), e.clone())),
            None => store.clone(),
        };
        let catalog = catalog(domains, pack.as_ref(), &tools);
        let engine = Engine::new(model, tools, recorder)
            .with_catalog(catalog)
            .with_prompts(prompts)
            .with_config(run_config);
        Ok(Setup {
            store,
            pack,
            engine,
            fallthrough,
            scenarios_dir: shipped_scenarios_dir()?,
            exporter,
            mcp,
            mcp_warnings,
        })
    }

    /// The engine of this set-up serving another pack: the same model,
    /// store, prompts and rules, the pack's tools (a live backend set in
    /// the configuration still serves its tool) and its catalog.
    pub async fn engine_for_pack(
        &self,
        config: &Config,
        dir: &std::path::Path,
    ) -> Result<Engine, CliError> {
        let pack = Arc::new(super::progress::load_pack(dir)?);
        self.store.sync_knowledge(&pack).await?;
        let mut tools = registry(config, Some(&pack))?;
        self.mcp.register(&mut tools);
        // This pack's own domains: the store's table holds every pack's.
        let catalog = catalog(pack.domains.clone(), Some(&pack), &tools);
        Ok(Engine {
            tools: Arc::new(tools),
            catalog: Arc::new(catalog),
            ..self.engine.clone()
        })
    }

    /// Sends the spans still queued (for a few seconds at most) and writes
    /// the journal's last events. Call before the command exits.
    pub async fn finish(&self) {
        self.mcp.close().await;
        if let Some(e) = &self.exporter {
            e.shutdown(EXPORT_DEADLINE).await;
        }
        if let Err(e) = self.store.flush_all().await {
            tracing::warn!(error = %e, "could not write the last journal events");
        }
    }

    pub fn tui_context(&self, config: &Config) -> crate::tui::TuiContext {
        crate::tui::TuiContext {
            engine: self.engine.clone(),
            fallthrough: self.fallthrough.clone(),
            store: Some(self.store.clone()),
            scenarios_dir: self.scenarios_dir.clone(),
            theme: config.theme.clone(),
            key_overrides: config.keys.clone(),
            mouse: config.tui.mouse,
            model_label: self.engine.model.name(),
            db_label: self.store.describe(),
            pack_warnings: self
                .pack
                .iter()
                .flat_map(|p| &p.warnings)
                .map(ToString::to_string)
                .chain(self.mcp_warnings.iter().cloned())
                .collect(),
            server: None,
        }
    }
}

/// The offline model with the `[run]` settings it reasons by.
pub fn offline_model(config: &Config) -> OfflineModel {
    OfflineModel::with_options(crate::model::offline::OfflineOptions {
        cause_margin: chrono::Duration::minutes(i64::from(config.run.cause_margin_minutes)),
    })
}

/// The `[run]` limits as the engine takes them.
pub fn engine_config(config: &Config) -> EngineConfig {
    EngineConfig {
        max_tool_calls: config.run.max_tool_calls,
        max_executor_turns: config.run.max_executor_turns,
        run_deadline: config.run.deadline_secs.map(Duration::from_secs),
        ..EngineConfig::default()
    }
}

/// The configured `query_logs` backend, replacing the pack's.
fn register_log_backend(config: &Config, tools: &mut ToolRegistry) -> Result<(), CliError> {
    let timeout = Duration::from_secs(config.logs.timeout_secs.max(1));
    match config.logs.backend {
        LogsBackend::Pack => {}
        LogsBackend::Files => {
            let files = crate::tools::files::FileLogs::new(&config.logs.files, timeout)
                .map_err(CliError::input)?;
            tools.register(Arc::new(files));
        }
        LogsBackend::Loki => {
            let loki = crate::tools::loki::LokiLogs::new(&config.logs.loki, timeout)
                .map_err(CliError::input)?;
            tools.register(Arc::new(loki));
        }
        LogsBackend::Elasticsearch => {
            let es = crate::tools::elasticsearch::ElasticsearchLogs::new(
                &config.logs.elasticsearch,
                timeout,
            )
            .map_err(CliError::input)?;
            tools.register(Arc::new(es));
        }
    }
    Ok(())
}

/// The tools: the pack's, then the live backends configured for a tool,
/// which replace the pack's.
fn registry(config: &Config, pack: Option<&Arc<Pack>>) -> Result<ToolRegistry, CliError> {
    let mut tools = ToolRegistry::new();
    for tool in pack.iter().flat_map(|p| pack_tools(Arc::clone(p))) {
        tools.register(tool);
    }
    register_log_backend(config, &mut tools)?;
    if config.metrics.backend == MetricsBackend::Prometheus {
        use crate::tools::prometheus::{PrometheusConfig, PrometheusMetrics};
        let prometheus = PrometheusConfig::from_config(config).ok_or_else(|| {
            CliError::input("the prometheus metrics backend needs a URL (DIAGRAPH_PROMETHEUS_URL or --prometheus-url)")
        })?;
        tools.register(Arc::new(PrometheusMetrics::new(prometheus)?));
    }
    Ok(tools)
}

/// What the Planner may know: the pack's catalog, read as of the pack's
/// `now` when the pack serves the logs (a live log backend reads the
/// clock, so questions about "since 10:00" mean today).
fn catalog(
    domains: Vec<crate::vocab::catalog::DomainInfo>,
    pack: Option<&Arc<Pack>>,
    tools: &ToolRegistry,
) -> Catalog {
    let catalog = Catalog::new(
        domains,
        pack.map(|p| p.skill_catalog()).unwrap_or_default(),
        pack.map(|p| p.manifest.services.clone())
            .unwrap_or_default(),
    );
    let catalog = match pack {
        Some(p) => catalog.with_names(p.held_names()),
        None => catalog,
    };
    let logs_pack = tools
        .get(crate::vocab::tool::QUERY_LOGS)
        .and_then(|t| t.pack().cloned());
    match logs_pack {
        Some(p) => catalog.at(p.now()),
        None => catalog,
    }
}

fn start_exporter(
    endpoint: &str,
    store: Arc<Store>,
    output: Output,
) -> Result<Arc<OtlpExporter>, CliError> {
    let headers = match std::env::var(HEADERS_ENV) {
        Ok(text) => parse_headers(&text)?,
        Err(_) => Vec::new(),
    };
    let warn: Warn = match output {
        Output::Stderr | Output::Quiet => Arc::new(|m: &str| {
            eprintln!("diagraph: warning: {}", crate::text::sanitize_line(m));
        }),
        // tracing already has it, in the log file.
        Output::Screen => Arc::new(|_: &str| {}),
    };
    Ok(OtlpExporter::start(endpoint, headers, store, warn)?)
}

/// The store for a command that only reads: a SQLite file that does not
/// exist is an error naming it, and nothing is created.
pub async fn open_existing_store(config: &Config) -> Result<Store, CliError> {
    require_existing_database(config)?;
    open_store(config).await
}

/// A read-only command on a SQLite path that does not exist says so
/// instead of creating an empty database there.
fn require_existing_database(config: &Config) -> Result<(), CliError> {
    match crate::store::sqlite_path(config.database_url.as_deref())? {
        Some(path) if !path.exists() => Err(CliError::input(format!(
            "no database at {}: nothing has been stored there yet (ask a question first, or give --database-url)",
            path.display()
        ))),
        _ => Ok(()),
    }
}

pub async fn open_store(config: &Config) -> Result<Store, CliError> {
    Ok(match &config.database_url {
        Some(url) => Store::connect(url).await?,
        None => Store::open_default().await?,
    })
}

/// The workbench following a server: runs start there and are watched
/// over its event streams. Demo scenarios still run here, in memory,
/// with the shipped prompts and rules.
pub fn remote_tui_context(
    config: &Config,
    server: Arc<crate::server::client::ServerClient>,
) -> Result<crate::tui::TuiContext, CliError> {
    let fallthrough: Arc<dyn ChatModel> = Arc::new(offline_model(config));
    let prompts = match &config.prompts_dir {
        Some(dir) => Prompts::from_dir(dir)?,
        None => Prompts::shipped(),
    };
    let engine = Engine::new(
        fallthrough.clone(),
        ToolRegistry::new(),
        Arc::new(crate::engine::MemoryRecorder::default()),
    )
    .with_prompts(prompts);
    let label = server.describe();
    Ok(crate::tui::TuiContext {
        engine,
        fallthrough,
        store: None,
        scenarios_dir: shipped_scenarios_dir()?,
        theme: config.theme.clone(),
        key_overrides: config.keys.clone(),
        mouse: config.tui.mouse,
        model_label: format!("server {label}"),
        db_label: label,
        pack_warnings: Vec::new(),
        server: Some(server),
    })
}

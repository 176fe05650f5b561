//! Command line: clap subcommands and their dispatch.
//!
//! Every command returns `Result<ExitCode, CliError>`; `main` prints an
//! error as one line (`diagraph: <message: its causes>`) and exits 2 for
//! bad input or configuration, 1 for anything else. `ask` itself exits 0
//! for an answer that is not degraded, 3 for a degraded one, 4 for a run
//! that ended FAILED or CANCELLED. Output goes through [`out::emit`], so a
//! reader that goes away (`diagraph runs | head -1`) ends the command
//! quietly. Nothing here panics on user input.

mod ask;
mod eval;
mod export;
mod inspect;
mod mcp;
pub mod out;
mod progress;
mod rerun;
mod serve;
mod setup;
mod shipped;

pub use export::ExportFormat;
pub use setup::{Setup, engine_config};
pub use shipped::{shipped_pack_dir, shipped_scenarios_dir};

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "diagraph",
    version,
    about = "A terminal workbench for evidence-gated incident diagnosis",
    long_about = "A terminal workbench for evidence-gated incident diagnosis.\n\nWith no subcommand, opens the full-screen workbench on the embedded defaults: an SQLite file in your data directory, the offline rule-based model and the shipped pack."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Database URL: sqlite:PATH or mysql://user:pass@host:port/db
    #[arg(long, global = true, value_name = "URL")]
    pub database_url: Option<String>,
    /// Configuration file (default: $XDG_CONFIG_HOME/diagraph/config.toml)
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Environment pack directory
    #[arg(long, global = true, value_name = "DIR")]
    pub pack: Option<PathBuf>,
    /// Model provider
    #[arg(long, global = true, value_enum)]
    pub model: Option<ModelChoice>,
    /// Read query_metrics from this Prometheus instead of the pack
    #[arg(long, global = true, value_name = "URL")]
    pub prometheus_url: Option<String>,
    /// Directory with planner.md, executor.md, verifier.md, composer.md
    #[arg(long, global = true, value_name = "DIR")]
    pub prompts: Option<PathBuf>,
    /// TUI theme name (dark, light, high-contrast) or path to a theme file
    #[arg(long, global = true, value_name = "NAME")]
    pub theme: Option<String>,
    /// Leave the mouse to the terminal (its own text selection) instead of
    /// clicks and the wheel in the workbench ([tui] mouse = false,
    /// DIAGRAPH_TUI_MOUSE=false)
    #[arg(long, global = true)]
    pub no_mouse: bool,
    /// Open the workbench on a `diagraph serve` at this URL: its runs list,
    /// its runs live, and questions asked there (token: DIAGRAPH_API_TOKEN)
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModelChoice {
    Offline,
    Openai,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Ask one question and print the answer
    Ask {
        /// The question (taken from the scenario when --scenario is given)
        question: Option<String>,
        /// Run a scenario file (scripted model calls, its own pack)
        #[arg(long, value_name = "FILE")]
        scenario: Option<PathBuf>,
        /// Continue this session (its history goes to the Planner and Executor)
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Print the result as one JSON object
        #[arg(long)]
        json: bool,
    },
    /// List recent runs, newest first
    Runs {
        #[arg(long)]
        json: bool,
        /// How many runs to list
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Only runs older than this run id (the next page starts before
        /// the last id listed)
        #[arg(long, value_name = "RUN_ID")]
        before: Option<String>,
    },
    /// Delete finished runs older than a duration; runs with feedback stay
    Prune {
        /// How old a run must be to go: a number and a unit, d (days),
        /// h (hours) or m (minutes), e.g. 90d
        #[arg(long, value_name = "AGE")]
        older_than: String,
    },
    /// The Run Trace projection of one run
    Trace {
        run_id: String,
        #[arg(long)]
        json: bool,
    },
    /// Step through a past run in the TUI
    Replay { run_id: String },
    /// Re-execute a stored run from its recorded model answers and tool
    /// results (no network) as a new run; with --prompts, --rules or
    /// --model, see whether a change flips its verdict
    Rerun {
        run_id: String,
        /// Run live (configured model, real tools) from this agent node on
        #[arg(long, value_name = "NODE")]
        from: Option<String>,
        /// Gatekeeper rules file (JSON, as gatekeeper-rules.json) to check with
        #[arg(long, value_name = "FILE")]
        rules: Option<PathBuf>,
        /// Print the `ask --json` object plus rerun_of
        #[arg(long)]
        json: bool,
    },
    /// Demo a scenario in step mode (pick one when none is given)
    Demo {
        /// A shipped scenario's name or file stem (`01_pass`, `pass`), or
        /// a scenario file's path; an unknown name lists the names
        scenario: Option<PathBuf>,
    },
    /// Record feedback on a run; `useful` files it in the case library
    Feedback {
        run_id: String,
        verdict: FeedbackVerdict,
    },
    /// Print the effective configuration, secrets masked
    Config,
    /// Print the routing table as a Mermaid flowchart
    Graph {
        /// Print the diagram the TUI's graph pane draws, as plain text
        #[arg(long)]
        text: bool,
    },
    /// Serve the HTTP API (token: DIAGRAPH_API_TOKEN, required beyond loopback)
    Serve {
        /// Address to listen on
        #[arg(long, value_name = "ADDR", default_value = crate::server::DEFAULT_LISTEN)]
        listen: String,
        /// Runs executed at once; more are answered 429
        #[arg(long, value_name = "N", default_value_t = crate::server::DEFAULT_MAX_CONCURRENT_RUNS)]
        max_runs: usize,
        /// Largest request body in bytes; larger ones are answered 413
        #[arg(long, value_name = "BYTES", default_value_t = crate::server::DEFAULT_MAX_BODY_BYTES)]
        max_body: usize,
        /// Seconds this server's lease on the database lasts unrenewed: when
        /// it dies, another server sharing the database ends its runs
        /// (interrupted) within this time and a third of it
        #[arg(long, value_name = "SECONDS", default_value_t = crate::store::DEFAULT_LEASE.as_secs_f64())]
        lease_seconds: f64,
    },
    /// Two stored runs side by side: route, claims, bindings, verdicts, usage
    Compare {
        run_a: String,
        run_b: String,
        /// Print one JSON object
        #[arg(long)]
        json: bool,
        /// Exit 1 when the route, verdicts, claims or bindings differ (a
        /// regression check after `rerun`); invocations are matched by
        /// tool, arguments and call order, not by id
        #[arg(long)]
        fail_on_diff: bool,
    },
    /// Serve diagnosis as Model Context Protocol tools over stdio
    /// (diagnose, get_run_trace, list_runs), for an MCP client to start
    Mcp {
        /// Runs executed at once; more are refused with an error
        #[arg(long, value_name = "N", default_value_t = crate::server::mcp::DEFAULT_MAX_CONCURRENT_RUNS)]
        max_runs: usize,
    },
    /// Run an evaluation set: each case as a stored run, scored for recall,
    /// traceability and over-claims; exits 1 under the thresholds
    Eval {
        /// The evaluation set (TOML: `[[case]]` id, question, kind, expect_any)
        file: PathBuf,
        /// Print the report as one JSON object
        #[arg(long)]
        json: bool,
        /// Fail (exit 1) when recall is below this fraction, e.g. 0.9
        #[arg(long, value_name = "R")]
        min_recall: Option<f64>,
        /// Fail (exit 1) when more cases than this over-claim
        #[arg(long, value_name = "N")]
        max_over_claims: Option<usize>,
    },
    /// What the run's evidence says happened when, on one time axis
    /// (drawn from what its tool invocations recorded)
    Timeline {
        run_id: String,
        /// Plain ASCII glyphs
        #[arg(long)]
        ascii: bool,
        /// Print the timeline and its recorded counts per bucket as JSON
        #[arg(long)]
        json: bool,
        /// Columns to draw in
        #[arg(long, value_name = "N", default_value_t = 120)]
        width: usize,
    },
    /// Write a stored run in another tool's format
    Export {
        run_id: String,
        #[arg(long, value_enum)]
        format: ExportFormat,
        /// Write to this file instead of stdout
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FeedbackVerdict {
    Useful,
    /// Spelled as the README and the stored label spell it; the kebab-case
    /// form clap would derive still works.
    #[value(name = "not_useful", alias = "not-useful")]
    NotUseful,
}

/// Exit code of bad input or configuration.
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code of anything else that went wrong.
pub const EXIT_OTHER: u8 = 1;

/// A user-facing failure: printed as one line, with the exit code it
/// ends the command with.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub code: u8,
}

impl CliError {
    /// Bad input or configuration (exit 2).
    pub fn input(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: EXIT_BAD_INPUT,
        }
    }

    /// Anything else (exit 1).
    pub fn other(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: EXIT_OTHER,
        }
    }

    /// Stdout was closed by its reader: nothing to say, nothing wrong.
    pub fn closed_stdout() -> CliError {
        CliError {
            message: String::new(),
            code: 0,
        }
    }

    fn is_quiet(&self) -> bool {
        self.code == 0
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // One line whatever the source error looked like, and safe for the
        // terminal: it may quote a server body, a file or a model.
        f.write_str(crate::text::sanitize_line(&self.message).trim())
    }
}

/// An error and every cause under it, as one line: "a: b: c". A cause
/// whose text the message already contains is not repeated.
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut links = vec![e.to_string()];
    let mut source = e.source();
    while let Some(cause) = source {
        links.push(cause.to_string());
        source = cause.source();
    }
    join_chain(links)
}

/// Error texts, outermost first, as "a: b: c", skipping a cause whose text
/// an outer one already quotes.
fn join_chain(links: impl IntoIterator<Item = String>) -> String {
    let mut text = String::new();
    for link in links {
        if link.is_empty() || text.contains(&link) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&link);
    }
    text
}

impl<E: std::error::Error + 'static> From<E> for CliError {
    fn from(e: E) -> Self {
        use crate::engine::EngineError;
        use crate::store::StoreError;
        let any: &dyn std::any::Any = &e;
        // Only a run that broke after it started, or a database that
        // misbehaved mid-query, is not the caller's input or config.
        let code = match (
            any.downcast_ref::<EngineError>(),
            any.downcast_ref::<StoreError>(),
        ) {
            (Some(EngineError::Unpersisted { .. }), _) => EXIT_OTHER,
            (_, Some(StoreError::Query(_))) => EXIT_OTHER,
            _ => EXIT_BAD_INPUT,
        };
        CliError {
            message: chain(&e),
            code,
        }
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("diagraph: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_OTHER);
        }
    };
    let result = runtime.block_on(dispatch(cli));
    // A blocking read of stdin (`diagraph mcp` ended by a signal while its
    // client still holds the pipe open) would keep the runtime from ever
    // dropping: everything that matters has been awaited by now.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match result {
        Ok(code) => code,
        Err(e) if e.is_quiet() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("diagraph: {e}");
            ExitCode::from(e.code)
        }
    }
}

async fn dispatch(cli: Cli) -> Result<ExitCode, CliError> {
    let _log_guard = setup::init_logging();
    let config = setup::load_config(&cli)?;
    if let Some(url) = &cli.server {
        let launch = match cli.command {
            None => crate::tui::Launch::Live,
            Some(Command::Replay { run_id }) => crate::tui::Launch::Replay(parse_run_id(&run_id)?),
            Some(_) => {
                return Err(CliError::input(
                    "--server opens the workbench on a server: use it alone, or with `replay RUN_ID`",
                ));
            }
        };
        return remote_tui_launch(&config, url, launch).await;
    }
    match cli.command {
        None => tui_launch(&config, crate::tui::Launch::Live).await,
        Some(Command::Ask {
            question,
            scenario,
            session,
            json,
        }) => ask::run(&config, question, scenario, session, json).await,
        Some(Command::Runs {
            json,
            limit,
            before,
        }) => {
            let before = before.as_deref().map(parse_run_id).transpose()?;
            inspect::runs(&config, json, limit, before).await
        }
        Some(Command::Prune { older_than }) => {
            inspect::prune(&config, parse_age(&older_than)?).await
        }
        Some(Command::Trace { run_id, json }) => {
            inspect::trace(&config, parse_run_id(&run_id)?, json).await
        }
        Some(Command::Replay { run_id }) => {
            let id = parse_run_id(&run_id)?;
            tui_launch(&config, crate::tui::Launch::Replay(id)).await
        }
        Some(Command::Rerun {
            run_id,
            from,
            rules,
            json,
        }) => rerun::run(&config, parse_run_id(&run_id)?, from, rules, json).await,
        Some(Command::Demo { scenario }) => {
            tui_launch(&config, crate::tui::Launch::Demo(scenario)).await
        }
        Some(Command::Feedback { run_id, verdict }) => {
            let useful = verdict == FeedbackVerdict::Useful;
            inspect::feedback(&config, parse_run_id(&run_id)?, useful).await
        }
        Some(Command::Config) => {
            let mut text = config.render_masked();
            text.push_str(&mcp::tools_report(&config).await);
            out::emit(&text)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Graph { text }) => {
            let out = if text {
                use crate::tui::view::diagram::{Names, shipped};
                shipped(Names::Full)
                    .map_err(|e| CliError::other(format!("cannot draw the graph: {e}")))?
                    .to_text()
            } else {
                crate::engine::graph::to_mermaid()
            };
            out::emit(&out)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Serve {
            listen,
            max_runs,
            max_body,
            lease_seconds,
        }) => serve::run(&config, listen, max_runs, max_body, lease_seconds).await,
        Some(Command::Mcp { max_runs }) => mcp::run(&config, max_runs).await,
        Some(Command::Eval {
            file,
            json,
            min_recall,
            max_over_claims,
        }) => {
            let thresholds = crate::eval::Thresholds {
                min_recall,
                max_over_claims,
            };
            eval::run(&config, file, json, thresholds).await
        }
        Some(Command::Export {
            run_id,
            format,
            output,
        }) => export::run(&config, parse_run_id(&run_id)?, format, output).await,
        Some(Command::Timeline {
            run_id,
            ascii,
            json,
            width,
        }) => export::timeline(&config, parse_run_id(&run_id)?, ascii, json, width).await,
        Some(Command::Compare {
            run_a,
            run_b,
            json,
            fail_on_diff,
        }) => {
            let (a, b) = (parse_run_id(&run_a)?, parse_run_id(&run_b)?);
            export::compare(&config, a, b, json, fail_on_diff).await
        }
    }
}

/// `90d`, `12h`, `30m` as milliseconds.
fn parse_age(text: &str) -> Result<i64, CliError> {
    let t = text.trim();
    let unit_ms: i64 = match t.chars().last() {
        Some('d') => 24 * 3_600_000,
        Some('h') => 3_600_000,
        Some('m') => 60_000,
        _ => 0,
    };
    t.get(..t.len().saturating_sub(1))
        .and_then(|n| n.parse::<i64>().ok())
        .filter(|n| *n > 0 && unit_ms > 0)
        .and_then(|n| n.checked_mul(unit_ms))
        .ok_or_else(|| {
            CliError::input(format!(
                "invalid age {text:?}: expected a positive number and d, h or m, e.g. 90d"
            ))
        })
}

fn parse_run_id(text: &str) -> Result<i64, CliError> {
    text.trim()
        .parse::<i64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| {
            CliError::input(format!(
                "invalid run id {text:?}: expected a positive number"
            ))
        })
}

/// The workbench draws on a terminal: without one (a pipe, a CI job) it
/// says so before anything is opened or created.
fn require_terminal() -> Result<(), CliError> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        return Ok(());
    }
    Err(CliError::input(
        "the workbench needs a terminal (stdin and stdout are not one); in scripts use `diagraph ask`, `runs`, `trace` or `export`",
    ))
}

/// The theme and key overrides, checked before the terminal is: a
/// configuration error is named as such wherever the command runs.
fn check_workbench_config(config: &crate::config::Config) -> Result<(), CliError> {
    crate::tui::theme::Theme::load(&config.theme)
        .map_err(|e| CliError::input(format!("loading the theme: {}", chain(&e))))?;
    crate::tui::keymap::Keymap::with_overrides(&config.keys)
        .map_err(|e| CliError::input(format!("reading key overrides: {}", chain(&e))))?;
    Ok(())
}

/// `demo NAME`: a name that matches no scenario fails with the names
/// there are, before the screen is taken.
fn require_demo(given: &std::path::Path) -> Result<(), CliError> {
    let dir = shipped_scenarios_dir()?;
    if crate::tui::runtime::demo::resolve(&dir, given).is_file() {
        return Ok(());
    }
    let names: Vec<String> = crate::tui::runtime::demo::list(&dir)
        .into_iter()
        .filter_map(|e| e.path.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    Err(CliError::input(format!(
        "no demo scenario {:?}: give a scenario file's path or one of {}",
        given.display().to_string(),
        names.join(", ")
    )))
}

async fn tui_launch(
    config: &crate::config::Config,
    launch: crate::tui::Launch,
) -> Result<ExitCode, CliError> {
    match &launch {
        crate::tui::Launch::Replay(run_id) => {
            // An unknown run is a one-line error, not an empty screen.
            let store = setup::open_existing_store(config).await?;
            let events = store.load_events(*run_id).await;
            store.close().await;
            events?;
        }
        crate::tui::Launch::Demo(Some(given)) => require_demo(given)?,
        _ => {}
    }
    check_workbench_config(config)?;
    require_terminal()?;
    let setup = Setup::build(config, setup::Output::Screen).await?;
    let ctx = setup.tui_context(config);
    let result = crate::tui::run(ctx, launch).await;
    setup.finish().await;
    result.map_err(tui_error)?;
    Ok(ExitCode::SUCCESS)
}

/// A theme or key override is configuration; the rest is not.
fn tui_error(e: crate::tui::TuiError) -> CliError {
    use crate::tui::TuiError;
    let config = matches!(e, TuiError::Theme(_) | TuiError::Keymap(_));
    let chain = std::iter::successors(Some(&e as &dyn std::error::Error), |e| e.source());
    let message = join_chain(chain.map(ToString::to_string));
    if config {
        CliError::input(message)
    } else {
        CliError::other(message)
    }
}

async fn remote_tui_launch(
    config: &crate::config::Config,
    url: &str,
    launch: crate::tui::Launch,
) -> Result<ExitCode, CliError> {
    check_workbench_config(config)?;
    require_terminal()?;
    let client = serve::client(url)?;
    // An unreachable server or a wrong token is a one-line error before
    // the screen is taken.
    client.runs(1).await?;
    if let crate::tui::Launch::Replay(run_id) = &launch {
        client.events(*run_id).await?;
    }
    let ctx = setup::remote_tui_context(config, client)?;
    crate::tui::run(ctx, launch).await.map_err(tui_error)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::CliError;

    #[test]
    fn errors_print_as_one_inert_line() {
        let e = CliError::input("cannot read pack: bad\x1b[2J\nline\u{202e}gnp.\r\n");
        assert_eq!(e.to_string(), "cannot read pack: bad␛[2J linegnp.");
    }

    #[test]
    fn an_error_prints_its_causes_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("loading the theme")]
        struct Outer(#[source] std::io::Error);
        let e = CliError::from(Outer(std::io::Error::other("no such theme")));
        assert_eq!(e.to_string(), "loading the theme: no such theme");
        assert_eq!(e.code, super::EXIT_BAD_INPUT);
        #[derive(Debug, thiserror::Error)]
        #[error("reading: {0}")]
        struct Repeats(#[source] std::io::Error);
        let e = CliError::from(Repeats(std::io::Error::other("gone")));
        assert_eq!(e.to_string(), "reading: gone");
    }
}

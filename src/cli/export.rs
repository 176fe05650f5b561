//! `diagraph export RUN_ID --format F`: a stored run in a format another
//! tool reads, and `diagraph compare RUN_A RUN_B`. Each format is an arm
//! of [`ExportFormat`] and one function from the stored run to text (in
//! `crate::report`, which the TUI shares).

use super::CliError;
use super::setup::open_existing_store;
use crate::config::Config;
use crate::server::otlp;
use crate::store::Store;
use clap::ValueEnum;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// An incident note: question, answer, verdicts, route, citations
    Markdown,
    /// The routing table as a Mermaid flowchart, this run's path marked
    Mermaid,
    /// The Run Trace projection (what `trace --json` prints)
    Json,
    /// OpenTelemetry spans as OTLP/JSON (one export request per line, as
    /// the Collector's file exporter writes them)
    #[value(name = "otlp-json")]
    OtlpJson,
}

pub async fn run(
    config: &Config,
    run_id: i64,
    format: ExportFormat,
    output: Option<PathBuf>,
) -> Result<ExitCode, CliError> {
    let store = open_existing_store(config).await?;
    let text = render(&store, run_id, format).await;
    store.close().await;
    let text = text?;
    match output {
        Some(path) => {
            std::fs::write(&path, &text)
                .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))?;
            // Stdout stays free for the data; the note goes to stderr.
            eprintln!(
                "diagraph: wrote run {run_id} as {} to {} ({} bytes)",
                format_name(format),
                crate::text::sanitize_line(&path.display().to_string()),
                text.len()
            );
        }
        None => super::out::emit(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn format_name(format: ExportFormat) -> &'static str {
    match format {
        ExportFormat::Markdown => "Markdown",
        ExportFormat::Mermaid => "Mermaid",
        ExportFormat::Json => "the Run Trace JSON",
        ExportFormat::OtlpJson => "OTLP/JSON",
    }
}

async fn render(store: &Store, run_id: i64, format: ExportFormat) -> Result<String, CliError> {
    Ok(match format {
        ExportFormat::Markdown => crate::report::markdown::render(&store.run_trace(run_id).await?),
        ExportFormat::Mermaid => crate::report::mermaid(&store.run_trace(run_id).await?),
        ExportFormat::Json => store.run_trace(run_id).await?.to_json_text(),
        ExportFormat::OtlpJson => {
            otlp::to_json_line(&otlp::stored_run_request(store, run_id).await?)
        }
    })
}

/// `diagraph compare RUN_A RUN_B [--json]`.
/// `compare`; with `fail_on_diff`, runs that differ in route, verdicts,
/// claims or bindings end it with exit 1 (after printing the comparison).
pub async fn compare(
    config: &Config,
    a: i64,
    b: i64,
    json: bool,
    fail_on_diff: bool,
) -> Result<ExitCode, CliError> {
    let store = open_existing_store(config).await?;
    let traces =
        async { Ok::<_, CliError>((store.run_trace(a).await?, store.run_trace(b).await?)) }.await;
    store.close().await;
    let (ta, tb) = traces?;
    let text = if json {
        let mut t = serde_json::to_string_pretty(&crate::report::compare::to_json(&ta, &tb))
            .unwrap_or_default();
        t.push('\n');
        t
    } else {
        crate::report::compare::to_text(&ta, &tb, COMPARE_COLUMN)
    };
    super::out::emit(&text)?;
    let differs = crate::report::compare::differences(&ta, &tb);
    if fail_on_diff && !differs.is_empty() {
        return Err(CliError::other(format!(
            "runs {a} and {b} differ in {}",
            differs.join(", ")
        )));
    }
    Ok(ExitCode::SUCCESS)
}

/// `diagraph timeline RUN_ID [--ascii] [--json] [--width N]`.
pub async fn timeline(
    config: &Config,
    run_id: i64,
    ascii: bool,
    json: bool,
    width: usize,
) -> Result<ExitCode, CliError> {
    use crate::report::timeline::{Timeline, TimelineInput, text};
    let store = open_existing_store(config).await?;
    let trace = store.run_trace(run_id).await;
    store.close().await;
    let trace = trace?;
    let timeline = Timeline::build(&TimelineInput::from_trace(&trace));
    let out = match (&timeline, json) {
        (_, true) => {
            let mut t = serde_json::to_string_pretty(&timeline).unwrap_or_default();
            t.push('\n');
            t
        }
        (Some(t), false) => {
            let mut lines = vec![format!(
                "run {run_id}: {}",
                crate::text::clean(&trace.run.query, width.max(20))
            )];
            lines.extend(text::render(t, width.clamp(40, 400), ascii));
            lines.join("\n") + "\n"
        }
        (None, false) => format!(
            "run {run_id}: no recorded evidence with a time (alerts, log counts, series) to draw\n"
        ),
    };
    super::out::emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// Width of each run's column in `compare`'s text.
const COMPARE_COLUMN: usize = 48;

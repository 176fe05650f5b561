//! `diagraph export RUN_ID --format F`: a stored run in a format another
//! tool reads. Each format is an arm of [`ExportFormat`] and one function
//! from the stored run to text.

use super::CliError;
use super::setup::open_store;
use crate::config::Config;
use crate::server::otlp;
use crate::store::Store;
use clap::ValueEnum;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
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
    let store = open_store(config).await?;
    let text = render(&store, run_id, format).await;
    store.close().await;
    let text = text?;
    match output {
        Some(path) => std::fs::write(&path, text)
            .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))?,
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

async fn render(store: &Store, run_id: i64, format: ExportFormat) -> Result<String, CliError> {
    Ok(match format {
        ExportFormat::OtlpJson => {
            otlp::to_json_line(&otlp::stored_run_request(store, run_id).await?)
        }
    })
}

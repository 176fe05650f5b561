//! `diagraph eval FILE [--json] [--min-recall R] [--max-over-claims N]`:
//! every case of an evaluation set as an ordinary stored run on the
//! configured model, scored and totalled (`crate::eval`).
//!
//! Exit codes: 0 when the thresholds hold, 1 when recall is under
//! `--min-recall`, over-claims exceed `--max-over-claims` or any answer
//! is not traceable; 2 for a bad set, pack or configuration, found before
//! any case runs.

use super::CliError;
use super::out::emit;
use super::setup::{Output, Setup};
use crate::config::Config;
use crate::eval::{EvalSet, Thresholds};
use std::path::PathBuf;
use std::process::ExitCode;

pub async fn run(
    config: &Config,
    file: PathBuf,
    json: bool,
    thresholds: Thresholds,
) -> Result<ExitCode, CliError> {
    if let Some(r) = thresholds.min_recall
        && !(0.0..=1.0).contains(&r)
    {
        return Err(CliError::input(format!(
            "--min-recall {r}: a fraction between 0 and 1 (0.9 for 90%)"
        )));
    }
    let set = EvalSet::load(&file)?;
    let setup = Setup::build(config, Output::Quiet).await?;
    // Every pack loads before the first case runs: a typo is one error,
    // not a half-run evaluation.
    let mut engines = Vec::new();
    for pack in set.packs() {
        let engine = match &pack {
            Some(dir) => setup.engine_for_pack(config, dir).await?,
            None => setup.engine.clone(),
        };
        engines.push((pack, engine));
    }
    let report = crate::eval::run(&set, &engines).await;
    setup.finish().await;
    let shortfalls = report.shortfalls(&thresholds);
    let text = if json {
        let mut t = serde_json::to_string_pretty(&report.to_json()).unwrap_or_default();
        t.push('\n');
        t
    } else {
        report.to_text()
    };
    emit(&text)?;
    if shortfalls.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    for s in &shortfalls {
        eprintln!("diagraph eval: {}", crate::text::sanitize_line(s));
    }
    Ok(ExitCode::from(super::EXIT_OTHER))
}

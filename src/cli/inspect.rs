//! `runs`, `trace` and `feedback`: reading and annotating stored runs.

use super::CliError;
use super::setup::open_store;
use crate::config::Config;
use crate::engine::case::case_from_evaluation;
use crate::text::{one_line, sanitize_line, sanitize_multiline, truncate_width};
use crate::vocab::contracts::Verdict;
use crate::vocab::graph::{NodeId, ReasonCode};
use crate::vocab::run_trace::RunTrace;
use serde_json::Value;
use std::process::ExitCode;

pub async fn runs(config: &Config, json: bool, limit: usize) -> Result<ExitCode, CliError> {
    let store = open_store(config).await?;
    let runs = store.list_runs(limit).await?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&runs).unwrap_or_default()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        println!("no runs yet: try `diagraph ask \"why is payment-service slow?\"`");
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:>6}  {:<8}  {:<10}  {:<8}  {:>8}  question",
        "run", "status", "verdict", "degraded", "ms"
    );
    for r in runs {
        println!(
            "{:>6}  {:<8}  {:<10}  {:<8}  {:>8}  {}",
            r.run_id,
            r.status,
            r.effective_verdict.map_or("-", Verdict::as_str),
            if r.degraded { "yes" } else { "no" },
            r.duration_ms
                .map(|d| d.to_string())
                .unwrap_or_else(|| "-".into()),
            truncate_width(&one_line(&sanitize_line(&r.question)), 70),
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn trace(config: &Config, run_id: i64, json: bool) -> Result<ExitCode, CliError> {
    let store = open_store(config).await?;
    let projection = store.run_trace(run_id).await?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&projection).unwrap_or_default()
        );
    } else {
        print_trace(&projection);
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn feedback(config: &Config, run_id: i64, useful: bool) -> Result<ExitCode, CliError> {
    let store = open_store(config).await?;
    match store
        .record_feedback(run_id, useful, case_from_evaluation)
        .await?
    {
        Some(case_id) => {
            println!("run {run_id}: marked useful; case {case_id} in the case library")
        }
        None if useful => println!("run {run_id}: marked useful"),
        None => println!("run {run_id}: marked not useful"),
    }
    Ok(ExitCode::SUCCESS)
}

fn text(v: Option<&str>) -> String {
    v.map_or_else(|| "-".into(), sanitize_multiline)
}

fn print_trace(p: &RunTrace) {
    let run = &p.run;
    println!(
        "run {} · session {} · {} · verdict {}",
        run.run_id,
        text(Some(&run.session_id)),
        run.status,
        text(run.effective_verdict.map(Verdict::as_str)),
    );
    println!("question: {}", text(Some(&run.query)));
    if let Some(trace) = run.orchestration_trace() {
        println!("transitions:");
        for t in &trace.transitions {
            println!(
                "  {:<15} -> {:<15} {:<32} attempt {}",
                t.from.as_str(),
                t.to.as_str(),
                t.reason_code.as_str(),
                t.attempt,
            );
        }
        println!(
            "final: {} ({}){}",
            text(trace.final_node.map(NodeId::as_str)),
            text(trace.termination_reason.map(ReasonCode::as_str)),
            if trace.degraded { " · degraded" } else { "" }
        );
    }
    println!("agent steps: {}", p.steps.len());
    println!("tool invocations: {}", p.tool_invocations.len());
    for inv in &p.tool_invocations {
        let details = inv.retrieval_details.typed();
        let status = details.map(|d| d.evidence_status.as_str());
        let refs = details.map_or(0, |d| d.evidence_refs.len());
        let params = match &inv.input_params {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        println!(
            "  #{:<6} {:<17} {:<12} refs {:<3} {}",
            inv.id,
            text(Some(&inv.tool_name)),
            text(status),
            refs,
            truncate_width(&one_line(&sanitize_line(&params)), 60),
        );
    }
    println!("\nanswer:\n{}", text(Some(&run.answer)));
}

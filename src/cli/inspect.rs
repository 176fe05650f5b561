//! `runs`, `trace` and `feedback`: reading and annotating stored runs.

use super::CliError;
use super::ask::sanitize_for_terminal;
use super::setup::open_store;
use crate::config::Config;
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
            r.effective_verdict.as_deref().unwrap_or("-"),
            if r.degraded { "yes" } else { "no" },
            r.duration_ms
                .map(|d| d.to_string())
                .unwrap_or_else(|| "-".into()),
            sanitize_for_terminal(&one_line(&r.question, 70)),
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
    match store.record_feedback(run_id, useful).await? {
        Some(case_id) => {
            println!("run {run_id}: marked useful; case {case_id} in the case library")
        }
        None if useful => println!("run {run_id}: marked useful"),
        None => println!("run {run_id}: marked not useful"),
    }
    Ok(ExitCode::SUCCESS)
}

fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

fn field<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().find_map(|k| v.get(*k))
}

fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => sanitize_for_terminal(s),
        Some(Value::Null) | None => "-".into(),
        Some(other) => other.to_string(),
    }
}

fn print_trace(p: &Value) {
    let run = p.get("run").cloned().unwrap_or(Value::Null);
    println!(
        "run {} · session {} · {} · verdict {}",
        text(field(&run, &["runId", "run_id", "id"])),
        text(field(&run, &["sessionId", "session_id"])),
        text(field(&run, &["status"])),
        text(field(&run, &["effectiveVerdict", "effective_verdict"])),
    );
    println!("question: {}", text(field(&run, &["query", "question"])));
    if let Some(trace) = run.get("orchestrationTrace") {
        println!("transitions:");
        for t in trace
            .get("transitions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            println!(
                "  {:<15} -> {:<15} {:<32} attempt {}",
                text(t.get("from")),
                text(t.get("to")),
                text(t.get("reason_code")),
                text(t.get("attempt")),
            );
        }
        println!(
            "final: {} ({}){}",
            text(trace.get("final_node")),
            text(trace.get("termination_reason")),
            if trace.get("degraded") == Some(&Value::Bool(true)) {
                " · degraded"
            } else {
                ""
            }
        );
    }
    let steps = p.get("steps").and_then(Value::as_array);
    println!("agent steps: {}", steps.map(Vec::len).unwrap_or(0));
    let invocations = p.get("toolInvocations").and_then(Value::as_array);
    println!(
        "tool invocations: {}",
        invocations.map(Vec::len).unwrap_or(0)
    );
    for inv in invocations.into_iter().flatten() {
        let details = field(inv, &["retrievalDetails", "retrieval_details"]);
        let status = details.and_then(|d| d.get("evidence_status"));
        let refs = details
            .and_then(|d| d.get("evidence_refs"))
            .and_then(Value::as_array)
            .map(Vec::len)
            .unwrap_or(0);
        println!(
            "  #{:<6} {:<17} {:<12} refs {:<3} {}",
            text(inv.get("id")),
            text(field(inv, &["toolName", "tool_name"])),
            text(status),
            refs,
            one_line(&text(field(inv, &["inputParams", "input_params"])), 60),
        );
    }
    println!("\nanswer:\n{}", text(field(&run, &["answer"])));
}

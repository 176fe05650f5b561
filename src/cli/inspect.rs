//! `runs`, `trace` and `feedback`: reading and annotating stored runs.

use super::CliError;
use super::out::{emit, line};
use super::setup::open_existing_store;
use crate::config::Config;
use crate::engine::case::case_from_evaluation;
use crate::text::{one_line, sanitize_line, sanitize_multiline, truncate_width};
use crate::vocab::contracts::Verdict;
use crate::vocab::graph::{NodeId, ReasonCode};
use crate::vocab::run::RunStatus;
use crate::vocab::run_trace::RunTrace;
use serde_json::Value;
use std::process::ExitCode;

pub async fn runs(
    config: &Config,
    json: bool,
    limit: usize,
    before: Option<i64>,
) -> Result<ExitCode, CliError> {
    let store = open_existing_store(config).await?;
    let runs = store
        .query_runs(&crate::store::RunQuery {
            limit,
            before,
            ..Default::default()
        })
        .await?;
    let mut out = String::new();
    if json {
        line(
            &mut out,
            serde_json::to_string_pretty(&runs).unwrap_or_default(),
        );
        emit(&out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() && before.is_some() {
        emit("no runs before that one\n")?;
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        emit("no runs yet: try `diagraph ask \"why is payment-service slow?\"`\n")?;
        return Ok(ExitCode::SUCCESS);
    }
    line(
        &mut out,
        format!(
            "{:>6}  {:<9}  {:<10}  {:<8}  {:>8}  {:>8}  {:>9}  question",
            "run", "status", "verdict", "degraded", "ms", "tokens", "cost"
        ),
    );
    for r in runs {
        // A fallback answer is a success of the run, but not of the
        // diagnosis: the list says so.
        let status = match (r.status, r.degraded) {
            (RunStatus::Success, true) => "DEGRADED",
            (s, _) => s.as_str(),
        };
        line(
            &mut out,
            format!(
                "{:>6}  {:<9}  {:<10}  {:<8}  {:>8}  {:>8}  {:>9}  {}",
                r.run_id,
                status,
                r.effective_verdict.map_or("-", Verdict::as_str),
                if r.degraded { "yes" } else { "no" },
                r.duration_ms
                    .map(|d| d.to_string())
                    .unwrap_or_else(|| "-".into()),
                r.tokens,
                // Unpriced: unknown, never $0.
                r.cost_usd
                    .map(crate::vocab::usage::cost_text)
                    .unwrap_or_else(|| "-".into()),
                truncate_width(&one_line(&sanitize_line(&r.question)), 70),
            ),
        );
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// `diagraph prune --older-than AGE`: deletes finished runs created more
/// than `age_ms` ago, except those with feedback.
pub async fn prune(config: &Config, age_ms: i64) -> Result<ExitCode, CliError> {
    let store = open_existing_store(config).await?;
    let cutoff = chrono::Utc::now().timestamp_millis().saturating_sub(age_ms);
    let deleted = store.prune_runs(cutoff).await?;
    emit(&format!(
        "deleted {deleted} run{} older than {} (runs with feedback kept)\n",
        if deleted == 1 { "" } else { "s" },
        crate::text::clean(
            &chrono::DateTime::from_timestamp_millis(cutoff)
                .map(|t| t.to_rfc3339())
                .unwrap_or_default(),
            40
        )
    ))?;
    Ok(ExitCode::SUCCESS)
}

pub async fn trace(config: &Config, run_id: i64, json: bool) -> Result<ExitCode, CliError> {
    let store = open_existing_store(config).await?;
    let projection = store.run_trace(run_id).await?;
    let text = if json {
        projection.to_json_text()
    } else {
        trace_text(&projection)
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

pub async fn feedback(config: &Config, run_id: i64, useful: bool) -> Result<ExitCode, CliError> {
    let store = open_existing_store(config).await?;
    let text = match store
        .record_feedback(run_id, useful, case_from_evaluation)
        .await?
    {
        Some(case_id) => {
            format!("run {run_id}: marked useful; case {case_id} in the case library\n")
        }
        None if useful => format!("run {run_id}: marked useful\n"),
        None => format!("run {run_id}: marked not useful\n"),
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn text(v: Option<&str>) -> String {
    v.map_or_else(|| "-".into(), sanitize_multiline)
}

fn trace_text(p: &RunTrace) -> String {
    let mut out = String::new();
    let run = &p.run;
    line(
        &mut out,
        format!(
            "run {} · session {} · {} · verdict {}",
            run.run_id,
            text(Some(&run.session_id)),
            run.status,
            text(run.effective_verdict.map(Verdict::as_str)),
        ),
    );
    line(&mut out, format!("question: {}", text(Some(&run.query))));
    if let Some(of) = run.rerun_of {
        line(&mut out, format!("rerun of run {of}"));
    }
    let u = &run.usage;
    line(
        &mut out,
        format!(
            "usage: {} prompt + {} completion tokens{}{} · cost {}",
            u.prompt_tokens,
            u.completion_tokens,
            u.reasoning_tokens
                .map(|r| format!(" ({r} reasoning)"))
                .unwrap_or_default(),
            u.cached_tokens
                .map(|c| format!(" · {c} cached"))
                .unwrap_or_default(),
            u.cost_usd
                .map(crate::vocab::usage::cost_text)
                .unwrap_or_else(|| "unknown (no price configured)".into()),
        ),
    );
    if let Some(f) = &run.failure {
        line(
            &mut out,
            format!("failure ({}): {}", f.class, sanitize_line(&f.message)),
        );
    }
    if let Some(sources) = run.sources() {
        line(&mut out, "sources:");
        for (tool, backend) in &sources.tools {
            line(
                &mut out,
                format!("  {:<17} {}", sanitize_line(tool), sanitize_line(backend)),
            );
        }
        if let Some(pack) = &sources.pack {
            line(
                &mut out,
                format!(
                    "  pack              {} ({})",
                    sanitize_line(&pack.path),
                    sanitize_line(&pack.content_hash)
                ),
            );
        }
        for (role, model) in &sources.models {
            line(
                &mut out,
                format!("  {:<17} {}", sanitize_line(role), sanitize_line(model)),
            );
        }
        for w in &sources.pack_warnings {
            line(&mut out, format!("  pack warning: {}", sanitize_line(w)));
        }
    }
    if let Some(trace) = run.orchestration_trace() {
        line(&mut out, "transitions:");
        for t in &trace.transitions {
            line(
                &mut out,
                format!(
                    "  {:<15} -> {:<15} {:<32} attempt {}",
                    t.from.as_str(),
                    t.to.as_str(),
                    t.reason_code.as_str(),
                    t.attempt,
                ),
            );
        }
        line(
            &mut out,
            format!(
                "final: {} ({}){}",
                text(trace.final_node.map(NodeId::as_str)),
                text(trace.termination_reason.map(ReasonCode::as_str)),
                if trace.degraded { " · degraded" } else { "" }
            ),
        );
    }
    line(&mut out, format!("agent steps: {}", p.steps.len()));
    // Failed and rejected calls: their output and why are in --json.
    for step in &p.steps {
        let why = match (&step.error, &step.parse_error) {
            (Some(e), _) => format!("failed: {}", sanitize_line(e)),
            (None, Some(e)) => format!("answer rejected: {}", sanitize_line(e)),
            (None, None) => continue,
        };
        line(
            &mut out,
            format!(
                "  step {} {} attempt {}: {}",
                step.step_index,
                sanitize_line(&step.agent_name),
                step.attempt,
                truncate_width(&one_line(&why), 160)
            ),
        );
    }
    line(
        &mut out,
        format!("tool invocations: {}", p.tool_invocations.len()),
    );
    for inv in &p.tool_invocations {
        let details = inv.retrieval_details.typed();
        let status = details.map(|d| d.evidence_status.as_str());
        let refs = details.map_or(0, |d| d.evidence_refs.len());
        let params = match &inv.input_params {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        line(
            &mut out,
            format!(
                "  #{:<6} {:<17} {:<12} refs {:<3} {}",
                inv.id,
                text(Some(&inv.tool_name)),
                text(status),
                refs,
                truncate_width(&one_line(&sanitize_line(&params)), 60),
            ),
        );
        if let Some(f) = inv.failure() {
            line(
                &mut out,
                format!(
                    "          failed ({}): {}",
                    f.class,
                    sanitize_line(&f.message)
                ),
            );
        } else if let Some(partial) = details.and_then(|d| d.source.partial.as_deref()) {
            line(
                &mut out,
                format!("          read in part: {}", sanitize_line(partial)),
            );
        }
    }
    line(&mut out, "");
    line(&mut out, "answer:");
    line(&mut out, text(Some(&run.answer)));
    out
}

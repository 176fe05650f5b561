//! The deterministic nodes wired into the run: Gatekeeper, VerifiedInput,
//! EvidenceRetry and Fallback. Their logic lives in `engine::nodes`; this
//! file only reads the run state, calls it and stores the result.

use crate::engine::ctx::{NodeResult, RunCtx, Unhandled, result};
use crate::engine::nodes::{evidence_retry, fallback, gatekeeper, verified_input};
use crate::engine::subjects::Focus;
use crate::engine::unchecked::{self, Met, Origin};
use crate::text::truncate_middle;
use crate::vocab::contracts::Verdict;
use crate::vocab::contracts::{GatekeeperResult, normalize_gatekeeper, parse_gatekeeper_result};
use crate::vocab::events::EventKind;
use crate::vocab::graph::{Outcome, ReasonCode};
use serde_json::Value;
use std::sync::Arc;

/// An injected raw result (fault injection): JSON text or an object. One
/// that does not parse is missing, which normalises to REJECT.
fn injected_result(value: &Value) -> Option<GatekeeperResult> {
    match value {
        Value::String(text) => parse_gatekeeper_result(text).ok(),
        Value::Object(_) => serde_json::from_value(value.clone()).ok(),
        _ => None,
    }
}

pub(super) async fn gatekeeper(ctx: &mut RunCtx<'_>) -> Result<NodeResult, Unhandled> {
    let state = &mut ctx.state;
    let raw = state.executor_output.as_ref().map(|out| {
        gatekeeper::check_cached(
            out,
            &state.invocations,
            &ctx.engine.rules,
            Some(&ctx.engine.tools),
            &mut state.facts,
        )
    });
    let checked = match &ctx.faults.gatekeeper_result {
        Some(injected) => injected_result(injected),
        None => raw,
    }
    .map(Arc::new);
    let outcome = normalize_gatekeeper(checked.as_deref());
    let detail = match &checked {
        None => "gatekeeper result missing or unknown".to_string(),
        Some(r) if !r.failed_rules.is_empty() => {
            format!("failed rules: {}", r.failed_rules.join(", "))
        }
        Some(r) if outcome == Outcome::Reject && r.status != "fail" => {
            format!(
                "unknown gatekeeper status {:?}/{:?}",
                truncate_middle(&r.status, 32),
                truncate_middle(&r.severity, 32)
            )
        }
        Some(_) => String::new(),
    };
    if let Some(r) = &checked {
        ctx.emit(EventKind::GatekeeperChecked {
            result: Arc::clone(r),
        })
        .await?;
    }
    ctx.state.set_gatekeeper(checked, outcome);
    Ok(result(outcome, detail))
}

pub(super) fn verified_input(ctx: &mut RunCtx<'_>) -> Result<NodeResult, Unhandled> {
    let (Some(output), Some(gk)) = (&ctx.state.executor_output, &ctx.state.gatekeeper_result)
    else {
        return Err(Unhandled::Internal(
            "verified_input reached without executor output and gatekeeper result".into(),
        ));
    };
    let mut projection = verified_input::project(output, gk);
    // A planned source that could not be read at all: the run did not look
    // where it meant to, so whatever the bindings say it cannot be PASS.
    let unread = unchecked::unread_planned_tools(&ctx.state.planned_tools, &ctx.state.invocations);
    let capped = !unread.is_empty() && projection.ceiling > Verdict::LowConfid;
    if capped {
        projection.ceiling = Verdict::LowConfid;
    }
    // A question whose subjects no verified claim is about is not
    // answered, whatever else was verified.
    let focus = verified_focus(&ctx.state, &projection);
    let off_topic = !focus.answered() && projection.ceiling > Verdict::LowConfid;
    if off_topic {
        projection.ceiling = Verdict::LowConfid;
    }
    let mut detail = format!(
        "{} verified binding(s), ceiling {}",
        projection.verified_binding_count, projection.ceiling
    );
    if capped {
        detail.push_str(&format!(" (every call of {} failed)", unread.join(", ")));
    }
    if off_topic {
        detail.push_str(" (no verified claim is about the question's subjects)");
    }
    ctx.state.set_projection(projection);
    Ok(result(Outcome::Completed, detail))
}

/// Which verified claims of `projection` are about the run's subjects.
fn verified_focus(
    state: &crate::engine::state::RunState,
    projection: &crate::vocab::dto::VerifiedProjection,
) -> Focus {
    let claims = &projection.verified_output.claims;
    let evidence: Vec<Vec<crate::vocab::dto::VerifiedEvidence>> = claims
        .iter()
        .map(|c| {
            projection
                .verified_evidence
                .iter()
                .filter(|e| e.claim_id == c.claim_id)
                .cloned()
                .collect()
        })
        .collect();
    Focus::new(
        state.subjects.clone(),
        claims
            .iter()
            .zip(&evidence)
            .map(|(c, e)| (c.claim_id.as_str(), c.is_negative(), e.as_slice())),
        &state.invocations,
    )
}

pub(super) fn evidence_retry(ctx: &mut RunCtx<'_>) -> Result<NodeResult, Unhandled> {
    let Some(projection) = &ctx.state.verified else {
        return Err(Unhandled::Internal(
            "evidence_retry reached without a verified projection".into(),
        ));
    };
    let gaps = ctx.state.evidence_gaps.clone();
    let count = gaps.len();
    let context = evidence_retry::build_retry_context(
        ctx.state.evidence_retry_count + 1,
        projection,
        &gaps,
        &ctx.state.invocations,
        ctx.state.lang,
    );
    ctx.state.retry_context = Some(context);
    Ok(result(
        Outcome::Completed,
        format!("{count} evidence gap(s)"),
    ))
}

pub(super) fn fallback(ctx: &mut RunCtx<'_>) -> NodeResult {
    let reason = ctx.state.fallback_reason;
    let answer = if reason.is_some_and(ReasonCode::is_post_verifier_fallback) {
        let names = crate::engine::nodes::composer::known_names(ctx);
        let input = match &ctx.state.composer_input {
            Some(input) => Arc::clone(input),
            None => Arc::new(crate::engine::nodes::composer::build_input(ctx)),
        };
        let focus = Focus::of_claims(
            ctx.state.subjects.clone(),
            &input.allowed_claims,
            &ctx.state.invocations,
        );
        fallback::post_verifier_answer_focused(ctx.state.lang, &input, &names, &focus)
    } else {
        fallback::pre_verification_answer(
            ctx.state.lang,
            reason,
            model_cause(&ctx.state.failures),
            fallback::ToolCounts::from_invocations(&ctx.state.invocations),
            ctx.state.run_id,
        )
    };
    ctx.state.final_answer = Some(answer);
    result(
        Outcome::Completed,
        reason.map_or("unknown", ReasonCode::as_str),
    )
}

/// The model failure that ended the node before the fallback, if a failed
/// model call (not its output) is what ended it: the failure the run met
/// just before the node's own.
fn model_cause(failures: &[Met]) -> Option<fallback::ModelCause> {
    let [.., before, last] = failures else {
        return None;
    };
    match (before.origin, last.origin) {
        (Origin::Model(role), Origin::Node) => Some(fallback::ModelCause {
            role,
            class: before.failure.class,
        }),
        _ => None,
    }
}

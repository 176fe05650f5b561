//! The Verifier node: sees only the verified projection (query, verified
//! executor output, verified evidence, a Gatekeeper summary: the
//! [`VerifierInput`] whitelist), parses `verifier_output` and stores the
//! model verdict next to the effective verdict `min(model, ceiling)`. A
//! failure touches only `verifier_status`, never a verdict.

use crate::engine::ctx::{NodeResult, RunCtx, Unhandled};
use crate::engine::nodes::evidence_retry;
use crate::vocab::contracts::{Verdict, parse_verifier_output};
use crate::vocab::dto::{AgentInput, GatekeeperSummary, VerifierInput};
use crate::vocab::graph::Outcome;

pub(crate) fn build_input(ctx: &RunCtx<'_>) -> Result<VerifierInput, Unhandled> {
    let s = &ctx.state;
    let Some(projection) = &s.verified else {
        return Err(Unhandled::Internal(
            "verifier reached without a verified projection".into(),
        ));
    };
    let (status, severity, rule_set_version) = match &s.gatekeeper_result {
        Some(g) => (
            g.status.clone(),
            g.severity.clone(),
            g.rule_set_version.clone(),
        ),
        None => (
            String::new(),
            String::new(),
            ctx.engine.rules.rule_set_version.clone(),
        ),
    };
    Ok(VerifierInput {
        original_query: s.question.clone(),
        lang: s.lang,
        verified_executor_output: projection.verified_output.clone(),
        verified_evidence: projection.verified_evidence.clone(),
        gatekeeper_result: GatekeeperSummary {
            status,
            severity,
            rule_set_version,
            verified_binding_count: projection.verified_binding_count,
            verdict_ceiling: s.ceiling.unwrap_or(Verdict::LowConfid),
        },
    })
}

pub(crate) async fn run(ctx: &mut RunCtx<'_>, attempt: u32) -> Result<NodeResult, Unhandled> {
    let input = AgentInput::from(build_input(ctx)?);
    let parsed = ctx
        .call_json_agent(attempt, input, "verifier_output", parse_verifier_output)
        .await?;
    match parsed {
        Ok(output) => {
            let gaps = evidence_retry::extract_gaps(&output);
            let detail = format!(
                "model verdict {}, {} critical gap(s)",
                output.verdict,
                gaps.len()
            );
            ctx.state.set_verifier_output(output, gaps);
            Ok(NodeResult {
                outcome: Outcome::Completed,
                detail,
            })
        }
        Err(failure) => Ok(failure),
    }
}

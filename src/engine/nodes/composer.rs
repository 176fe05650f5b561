//! The Composer node: renders only Verifier-allowed material
//! ([`ComposerInput`](crate::vocab::dto::ComposerInput), built once per
//! stage so a technical retry re-sends it unchanged). Code, not the prompt,
//! rejects an answer that turns a negative observation into "ruled out"
//! (ARCHITECTURE.md, "Evidence trust boundary").

use crate::engine::ctx::{NodeResult, RunCtx, Unhandled, invalid};
use crate::engine::nodes::allowed;
use crate::engine::nodes::fallback;
use crate::vocab::contracts::{Verdict, find_overstatement, parse_composer_output};
use crate::vocab::dto::AgentInput;
use crate::vocab::graph::Outcome;
use std::sync::Arc;

pub(crate) async fn run(ctx: &mut RunCtx<'_>, attempt: u32) -> Result<NodeResult, Unhandled> {
    let composer_input = match &ctx.state.composer_input {
        Some(input) => Arc::clone(input),
        None => {
            let input = Arc::new(build_input(ctx));
            ctx.state.composer_input = Some(Arc::clone(&input));
            input
        }
    };
    let input = AgentInput::Composer(Arc::clone(&composer_input));
    let parsed = ctx
        .call_json_agent(attempt, input, "composer_output", parse_composer_output)
        .await?;
    let output = match parsed {
        Ok(output) => output,
        Err(failure) => return Ok(failure),
    };
    let has_negative = composer_input.allowed_claims.iter().any(|c| c.is_negative);
    if has_negative && let Some(phrase) = find_overstatement(&output) {
        return Ok(invalid(&format!(
            "over-statement {phrase:?} about a negative observation"
        )));
    }
    let verdict = composer_input.verdict;
    let answer = match fallback::verdict_banner(ctx.state.lang, verdict) {
        Some(banner) if verdict != Verdict::Pass => {
            format!("{banner}\n\n{}", output.user_facing_answer)
        }
        _ => output.user_facing_answer.clone(),
    };
    ctx.state.final_answer = Some(answer);
    ctx.state.composer_output = Some(output);
    Ok(NodeResult {
        outcome: Outcome::Completed,
        detail: format!("verdict {verdict}"),
    })
}

/// The Composer's whitelist input, from the Verifier-allowed material only.
pub(crate) fn build_input(ctx: &RunCtx<'_>) -> crate::vocab::dto::ComposerInput {
    let s = &ctx.state;
    let verdict = s
        .effective_verdict
        .unwrap_or(crate::vocab::contracts::Verdict::Reject);
    let empty_output = crate::vocab::contracts::ExecutorEvidence::default();
    let (output, evidence) = match &s.verified {
        Some(p) => (&p.verified_output, p.verified_evidence.as_slice()),
        None => (&empty_output, &[][..]),
    };
    match &s.verifier_output {
        Some(v) => allowed::build_composer_input(&s.question, s.lang, verdict, output, evidence, v),
        None => crate::vocab::dto::ComposerInput {
            original_query: s.question.clone(),
            lang: s.lang,
            verdict,
            allowed_claims: vec![],
            allowed_hypotheses: vec![],
            missing_info: vec![],
            recommended_actions: vec![],
            rationale: String::new(),
        },
    }
}

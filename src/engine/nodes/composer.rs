//! The Composer node: the model chooses statements from Verifier-allowed
//! material only ([`ComposerInput`](crate::vocab::dto::ComposerInput),
//! built once per stage so a technical retry re-sends it unchanged), each
//! naming the verified claims it rests on; code assembles the answer
//! (`nodes::answer`) and makes the output INVALID_OUTPUT when a statement
//! names no verified claim or says more than its claims' evidence
//! (ARCHITECTURE.md, "Evidence trust boundary").

use crate::engine::ctx::{NodeResult, RunCtx, Unhandled, invalid};
use crate::engine::nodes::allowed;
use crate::engine::nodes::answer;
use crate::vocab::contracts::parse_composer_output;
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
    let names = known_names(ctx);
    let assembled = match answer::assemble_cached(
        &composer_input,
        &output,
        &names,
        &ctx.engine.rules,
        &mut ctx.state.facts,
    ) {
        Ok(a) => a,
        Err(rejection) => {
            ctx.state.retry_note = Some(retry_note(&rejection));
            return Ok(invalid(&rejection.to_string()));
        }
    };
    let verdict = composer_input.verdict;
    let mut detail = format!(
        "verdict {verdict}, {} statement(s)",
        output.statements.len()
    );
    for w in &assembled.warnings {
        detail.push_str("; ");
        detail.push_str(w);
    }
    ctx.state.final_answer = Some(assembled.text);
    ctx.state.composer_output = Some(output);
    Ok(NodeResult {
        outcome: Outcome::Completed,
        detail,
    })
}

/// What the Composer's technical retry is told about its rejected output:
/// the rule, and the word its evidence did not ground.
fn retry_note(r: &answer::Rejection) -> String {
    let word = r
        .word
        .as_deref()
        .map(|w| {
            format!(
                " The word {:?} is not grounded in the verified evidence of the claims it names: leave it out, or say only what the evidence says, in its words, the connective words and the equivalences.",
                crate::text::clean(w, 80)
            )
        })
        .unwrap_or_default();
    format!(
        "Your previous statements were rejected under rule {}.{word}",
        r.rule.as_str()
    )
}

/// Service names the sources know, lower case: a single-word one is a
/// name wherever a statement says it.
pub(crate) fn known_names(ctx: &RunCtx<'_>) -> Vec<String> {
    ctx.engine
        .catalog
        .services
        .iter()
        .map(|s| crate::evidence::facts::normalize(s).to_lowercase())
        .filter(|s| !s.is_empty())
        .collect()
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

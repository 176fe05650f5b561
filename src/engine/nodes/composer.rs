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
    let names = known_names(ctx);
    let engine = ctx.engine;
    let focus = crate::engine::subjects::Focus::of_claims(
        ctx.state.subjects.clone(),
        &composer_input.allowed_claims,
        &ctx.state.invocations,
    );
    // The answer is assembled once, inside the step's check: a rejection
    // is recorded on the Composer's step (what `trace` and the TUI show)
    // and the assembled answer is kept for the node.
    let facts = std::sync::Mutex::new(std::mem::take(&mut ctx.state.facts));
    let assembled: std::sync::OnceLock<Result<answer::Assembled, answer::Rejection>> =
        std::sync::OnceLock::new();
    let check = |output: &crate::vocab::contracts::ComposerOutput| {
        let r = assembled.get_or_init(|| {
            let mut f = facts
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            answer::assemble_focused(
                &composer_input,
                output,
                &names,
                &engine.rules,
                &mut f,
                &focus,
            )
        });
        r.as_ref().err().map(|e| e.to_string())
    };
    let parsed = ctx
        .call_json_agent_checked(
            attempt,
            input,
            "composer_output",
            parse_composer_output,
            &check,
        )
        .await;
    ctx.state.facts = facts
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let output = match parsed? {
        Ok(output) => output,
        Err(failure) => return Ok(failure),
    };
    let result = match assembled.into_inner() {
        Some(r) => r,
        None => answer::assemble_focused(
            &composer_input,
            &output,
            &names,
            &engine.rules,
            &mut ctx.state.facts,
            &focus,
        ),
    };
    let assembled = match result {
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

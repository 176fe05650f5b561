//! The Executor node: a bounded ReAct loop. The model asks for tools, the
//! invoker runs (or refuses, or dedups) each call and the result goes back
//! as a tool message carrying the invocation id, until the model answers
//! with text. That text must be `executor_evidence_v2`.
//!
//! The status says whether the output contract was met, not whether the
//! tools worked: a valid output is COMPLETED even when every tool failed or
//! found nothing. Without a valid output, a blocked tool call this round
//! makes it TOOL_BLOCKED, a model error FAILED, anything else
//! INVALID_OUTPUT. The Executor is never retried.

use crate::engine::ctx::{
    NodeResult, RunCtx, Unhandled, parse_status_str, rendered_input, step_text,
};
use crate::engine::invoker::unexecuted_message;
use crate::engine::unchecked::{Met, Origin};
use crate::model::{ChatResponse, FinishReason, Message, ModelError, ToolChoice};
use crate::text::truncate_bytes;
use crate::vocab::contracts::{ParseFailure, ParseStatus, parse_executor_evidence};
use crate::vocab::dto::{AgentInput, ExecutorInput, PlannerMode};
use crate::vocab::evaluation::ParseStatusRecord;
use crate::vocab::events::EventKind;
use crate::vocab::graph::Outcome;
use crate::vocab::run::FailureClass;
use std::sync::Arc;

/// Sent once the tool budget is spent; the tools stay in the request with
/// `tool_choice: none`.
pub const FINAL_ANSWER_NOW: &str = "The tool budget for this round is spent. Do not call tools. \
     Answer now with the final executor_evidence_v2 JSON object, binding claims only to the \
     invocations you already have.";

pub(crate) fn build_input(ctx: &RunCtx<'_>) -> ExecutorInput {
    let s = &ctx.state;
    let plan = s.planner_plan.clone().unwrap_or_default();
    ExecutorInput {
        question: s.question.clone(),
        lang: s.lang,
        selected_skill: plan.selected_skill.clone(),
        planner_plan: plan,
        history: s.history.clone(),
        tool_permissions: ctx.engine.config.tool_permissions.clone(),
        retry_context: match s.planner_mode {
            PlannerMode::EvidenceGapOnly => s.retry_context.clone(),
            PlannerMode::Normal => None,
        },
        max_tool_calls: ctx.engine.config.max_tool_calls,
    }
}

/// How the loop ended.
enum End {
    Text(String, FinishReason),
    ModelError(ModelError),
}

pub(crate) async fn run(ctx: &mut RunCtx<'_>, attempt: u32) -> Result<NodeResult, Unhandled> {
    let input = AgentInput::from(build_input(ctx));
    let mut messages = ctx.engine.prompts.render(&input);
    let specs = ctx
        .engine
        .tools
        .specs_for(&ctx.engine.config.tool_permissions);
    let max_calls = ctx.engine.config.max_tool_calls;
    let max_turns = ctx.engine.config.max_executor_turns.max(1);
    let mut calls = 0u32;
    let mut turns = 0u32;
    let mut blocked = 0usize;
    let mut model_input = step_text(rendered_input(&messages));

    let end = loop {
        let forced = calls >= max_calls || turns >= max_turns;
        if forced {
            messages.push(Message::User {
                content: FINAL_ANSWER_NOW.to_string(),
            });
        }
        let choice = if forced {
            ToolChoice::None
        } else {
            ToolChoice::Auto
        };
        turns += 1;
        // The turn that ends the conversation is the answer to parse.
        let parse_error = |r: &ChatResponse| {
            if !(r.tool_calls.is_empty() || forced) {
                return None;
            }
            answer_failure(r.content.as_deref().unwrap_or_default(), r.finish_reason)
                .map(|f| format!("{}: {}", parse_status_str(f.status), f.detail))
        };
        let (call, returned) = ctx
            .call_model(
                attempt,
                input.clone(),
                messages,
                (specs.clone(), choice),
                std::mem::take(&mut model_input),
                &parse_error,
            )
            .await?;
        messages = returned;
        let response = match call.response {
            Ok(r) => r,
            Err(e) => break End::ModelError(e),
        };
        if response.tool_calls.is_empty() || forced {
            break End::Text(response.content.unwrap_or_default(), response.finish_reason);
        }
        messages.push(Message::Assistant {
            content: response.content.clone(),
            tool_calls: response.tool_calls.clone(),
        });
        let mut results = Vec::with_capacity(response.tool_calls.len());
        for tc in &response.tool_calls {
            if calls >= max_calls {
                // Every tool call needs an answer in the conversation.
                messages.push(Message::Tool {
                    tool_call_id: tc.id.clone(),
                    content: unexecuted_message(
                        &tc.name,
                        "tool call budget exhausted; not executed",
                    ),
                });
                continue;
            }
            calls += 1;
            let seq = ctx.state.counters.next_seq();
            let invoked = ctx
                .invoker
                .invoke(&tc.name, &tc.arguments, Some(call.step_id), seq)
                .await?;
            if invoked.invocation.retrieval_details.blocked {
                blocked += 1;
            }
            ctx.state.counters.tool_calls += 1;
            let invocation = Arc::new(invoked.invocation);
            ctx.state.invocations.push(Arc::clone(&invocation));
            let failure = invocation.failure();
            ctx.emit(EventKind::ToolInvoked { invocation }).await?;
            if let Some(failure) = failure {
                if failure.class == FailureClass::Cancelled {
                    return Err(Unhandled::Cancelled);
                }
                ctx.state.failures.push(Met {
                    origin: Origin::Tool,
                    failure,
                });
            }
            results.push(invoked.message.clone());
            messages.push(Message::Tool {
                tool_call_id: tc.id.clone(),
                content: invoked.message,
            });
        }
        // The next step row keeps what is new to the model: the results.
        model_input = step_text(&format!("[{}]", results.join(",")));
    };

    let model_failed = matches!(end, End::ModelError(_));
    let failure = match end {
        End::Text(_, FinishReason::Length) => truncated(),
        End::Text(text, _) => match parse_executor_evidence(&text) {
            Ok(output) => {
                let detail = format!("{} claim(s), {} tool call(s)", output.claims.len(), calls);
                ctx.state.executor_parse_status = Some(ParseStatusRecord {
                    status: ParseStatus::Valid,
                    detail: "parsed executor evidence contract".into(),
                });
                ctx.state.executor_output = Some(output);
                return Ok(NodeResult {
                    outcome: Outcome::Completed,
                    detail,
                });
            }
            Err(f) => f,
        },
        End::ModelError(e) => ParseFailure::missing(format!("model error: {e}")),
    };
    let detail = truncate_bytes(&failure.detail, 300);
    ctx.state.executor_parse_status = Some(ParseStatusRecord {
        status: failure.status,
        detail: detail.clone(),
    });
    ctx.state.executor_output = None;
    let outcome = if blocked > 0 {
        Outcome::ToolBlocked
    } else if model_failed {
        Outcome::Failed
    } else {
        Outcome::InvalidOutput
    };
    let detail = match outcome {
        Outcome::ToolBlocked => format!("{blocked} blocked tool call(s); {detail}"),
        _ => detail,
    };
    Ok(NodeResult { outcome, detail })
}

/// Why the Executor's final answer is not its contract, if it is not.
fn answer_failure(text: &str, finish: FinishReason) -> Option<ParseFailure> {
    if finish == FinishReason::Length {
        return Some(truncated());
    }
    parse_executor_evidence(text).err()
}

fn truncated() -> ParseFailure {
    ParseFailure::malformed("output truncated at the token limit")
}

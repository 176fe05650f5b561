//! What the four agent nodes share: one model call recorded as an agent
//! step plus a ModelCalled event, and the mapping of a model answer to a
//! node outcome.

use crate::engine::ctx::{RunCtx, Unhandled};
use crate::engine::unchecked::{Met, Origin, model_failure};
use crate::model::{
    ChatRequest, ChatResponse, FinishReason, Message, ModelError, ModelErrorKind, ScriptContext,
    ToolChoice,
};
use crate::text::truncate_bytes;
use crate::vocab::contracts::ParseFailure;
use crate::vocab::contracts::reasoning_around_json;
use crate::vocab::dto::AgentInput;
use crate::vocab::events::{DeltaPart, EventKind, ModelDelta};
use crate::vocab::graph::Outcome;
use crate::vocab::record::AgentStep;
use crate::vocab::tool::ToolSpec;
use std::sync::Arc;
use std::time::Instant;

/// Step input and reasoning kept in agent_step rows; the full text is not
/// needed to audit a run and would make rows unbounded.
pub(crate) const STEP_TEXT_LIMIT: usize = 8 * 1024;
/// The model's answer is kept whole up to this (answers are bounded by
/// the token limit long before): a rejected answer must be auditable as
/// it was, not as a prefix that looks cut.
pub(crate) const STEP_OUTPUT_LIMIT: usize = 1024 * 1024;

/// Sent as an extra user turn on a technical retry: the input is the same,
/// only the format is recalled.
pub(crate) fn format_reminder(contract: &str) -> Message {
    Message::User {
        content: format!(
            "Reminder: your previous answer could not be used. Answer with exactly one JSON \
             object following the {contract} contract, and nothing else."
        ),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeResult {
    pub outcome: Outcome,
    pub detail: String,
}

pub(crate) struct ModelCall {
    pub response: Result<ChatResponse, ModelError>,
    pub step_id: i64,
}

/// The rendered DTO (the first user turn), kept as the step's model_input
/// without serialising the input a second time.
pub(crate) fn rendered_input(messages: &[Message]) -> &str {
    messages
        .iter()
        .find_map(|m| match m {
            Message::User { content } => Some(content.as_str()),
            _ => None,
        })
        .unwrap_or("")
}

/// Text as an agent_step row keeps it.
pub(crate) fn step_text(text: &str) -> String {
    truncate_bytes(text, STEP_TEXT_LIMIT)
}

impl RunCtx<'_> {
    /// Calls the model once, records the agent step and emits ModelCalled.
    /// `model_input` is what the step row keeps (see [`step_text`]);
    /// `parse_error` says why an answer is unusable as the role's
    /// contract (None: usable, or not an answer to parse), and the step
    /// keeps that reason beside the raw output.
    pub async fn call_model(
        &mut self,
        attempt: u32,
        input: AgentInput,
        messages: Vec<Message>,
        (tools, tool_choice): (Vec<Arc<ToolSpec>>, ToolChoice),
        model_input: String,
        parse_error: &(dyn Fn(&ChatResponse) -> Option<String> + Sync),
    ) -> Result<(ModelCall, Vec<Message>), Unhandled> {
        let role = input.role();
        let request = ChatRequest {
            attempt,
            input,
            messages,
            tools,
            tool_choice,
            script: self.script_context(),
        };
        let waited = match self.backoff.take() {
            Some(wait) => {
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = self.cancel.cancelled() => {}
                }
                Some(wait)
            }
            None => None,
        };
        let t0 = Instant::now();
        let response = tokio::select! {
            r = self.chat_within_deadline(&request) => Some(r),
            _ = self.cancel.cancelled() => None,
        };
        let cancelled = response.is_none();
        let response = response.unwrap_or_else(|| {
            Err(ModelError::new(
                crate::model::ModelErrorKind::Timeout,
                "cancelled before the model answered",
            ))
        });
        let duration_ms = u64::try_from(t0.elapsed().as_millis()).unwrap_or(u64::MAX);
        let usage = response.as_ref().map(|r| r.usage).unwrap_or_default();
        let parse_error = response.as_ref().ok().and_then(parse_error);
        let (model_output, thought, has_tool_call, tokens, tool_calls, error) = match &response {
            Ok(r) => {
                let has_calls = !r.tool_calls.is_empty();
                let output = if has_calls {
                    serde_json::to_string(&r.tool_calls).unwrap_or_default()
                } else {
                    r.content.clone().unwrap_or_default()
                };
                (
                    output,
                    step_thought(r, waited),
                    has_calls,
                    r.usage.total(),
                    r.tool_calls.len(),
                    None,
                )
            }
            Err(e) => (
                String::new(),
                String::new(),
                false,
                0,
                0,
                Some(if cancelled {
                    "cancelled before the model answered".to_string()
                } else {
                    e.to_string()
                }),
            ),
        };
        if let (Err(e), false) = (&response, cancelled) {
            self.state.failures.push(Met {
                origin: Origin::Model(role),
                failure: model_failure(role, e),
            });
            if e.is_retryable() {
                self.backoff = Some(self.retry_wait(attempt, e.retry_after));
            }
        }
        self.state.counters.tokens += tokens;
        self.state.counters.agent_steps += 1;
        let step = AgentStep {
            id: 0,
            run_id: self.state.run_id,
            seq: self.state.counters.next_seq(),
            step_index: self.state.counters.agent_steps,
            agent_name: role.as_str().to_string(),
            attempt,
            model_input,
            model_output: truncate_bytes(&model_output, STEP_OUTPUT_LIMIT),
            thought: step_text(&thought),
            has_tool_call,
            duration_ms,
            token_count: tokens,
            error: error.clone(),
            usage,
            parse_error: parse_error.clone(),
        };
        let step_id = self.engine.recorder.record_step(&step).await?;
        self.emit(EventKind::ModelCalled {
            role,
            attempt,
            step_id,
            duration_ms,
            tokens,
            tool_calls,
            error,
            usage: Some(usage),
            parse_error,
        })
        .await?;
        if cancelled {
            return Err(Unhandled::Cancelled);
        }
        Ok((ModelCall { response, step_id }, request.messages))
    }

    /// What a scripted model may refer to: the calls the Executor made (a
    /// source recorded as unavailable at the start does not shift a
    /// script's ids).
    fn script_context(&self) -> ScriptContext {
        ScriptContext {
            run_id: self.state.run_id,
            invocation_ids: self
                .state
                .invocations
                .iter()
                .filter(|i| i.step_id.is_some())
                .map(|i| i.id)
                .collect(),
            foreign_invocation_id: None,
        }
    }
}

/// The reasoning a step keeps: what the server sent as such, the text
/// beside tool calls, or the think blocks and prose around the JSON answer
/// (stripped before parsing), then the engine's and the provider's notes
/// (e.g. a reported 429 back-off), which belong in the audit trail of the
/// step that incurred them.
fn step_thought(r: &ChatResponse, waited: Option<std::time::Duration>) -> String {
    let mut thought = r.reasoning.clone().unwrap_or_default();
    let beside = match (&r.content, !r.tool_calls.is_empty()) {
        (Some(c), true) => c.trim().to_string(),
        (Some(c), false) => reasoning_around_json(c),
        (None, _) => String::new(),
    };
    if !beside.is_empty() {
        if !thought.is_empty() {
            thought.push_str("\n\n");
        }
        thought.push_str(&beside);
    }
    let engine_note =
        waited.map(|w| format!("[engine] waited {} ms before this retry", w.as_millis()));
    for note in engine_note.iter().chain(&r.notes) {
        if !thought.is_empty() {
            thought.push('\n');
        }
        if !note.starts_with("[engine]") {
            thought.push_str("[provider] ");
        }
        thought.push_str(note);
    }
    thought
}

impl RunCtx<'_> {
    /// The model call, bounded by what is left of the run deadline; once
    /// it has passed, agent calls fail at once as timeouts, so the graph
    /// ends in its fallback instead of running on.
    async fn chat_within_deadline(
        &self,
        request: &ChatRequest,
    ) -> Result<ChatResponse, ModelError> {
        let Some(deadline) = self.engine.config.run_deadline else {
            return self.chat_live(request).await;
        };
        let reached = || {
            ModelError::new(
                ModelErrorKind::Timeout,
                format!(
                    "the run deadline of {} s was reached before the {} answered",
                    deadline.as_secs_f64(),
                    request.role().as_str()
                ),
            )
        };
        let left = deadline.saturating_sub(self.started.elapsed());
        if left.is_zero() {
            return Err(reached());
        }
        tokio::time::timeout(left, self.chat_live(request))
            .await
            .unwrap_or_else(|_| Err(reached()))
    }

    /// The model call, its streamed pieces sent to live viewers when there
    /// are any.
    async fn chat_live(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let Some(out) = &self.deltas else {
            return self.engine.model.chat(request).await;
        };
        let (run_id, role, attempt) = (self.state.run_id, request.role(), request.attempt);
        // The step this call is recorded as once it returns.
        let step_index = self.state.counters.agent_steps + 1;
        let sink = |part: DeltaPart, text: &str| {
            out.send(ModelDelta {
                run_id,
                step_index,
                role,
                attempt,
                part,
                text: text.to_string(),
            })
        };
        let response = self.engine.model.chat_streaming(request, &sink).await;
        out.end_call();
        response
    }

    /// The wait before the retry that follows a retryable failure of
    /// `attempt`: exponential (base × 2^(attempt-1)) with jitter (half to
    /// all of it), at least the server's hint, at most the configured
    /// maximum and what is left of the run deadline.
    fn retry_wait(&self, attempt: u32, hint: Option<std::time::Duration>) -> std::time::Duration {
        let cfg = &self.engine.config;
        let exp = cfg
            .retry_backoff
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
        let jittered = exp.mul_f64(0.5 + 0.5 * jitter());
        let mut wait = jittered
            .max(hint.unwrap_or_default())
            .min(cfg.retry_backoff_max);
        if let Some(deadline) = cfg.run_deadline {
            wait = wait.min(deadline.saturating_sub(self.started.elapsed()));
        }
        wait
    }

    /// One attempt of a JSON-only role (Planner, Verifier, Composer): render
    /// the prompt with the DTO, add the format reminder on a technical retry,
    /// call the model without tools and parse the answer into its contract.
    pub(crate) async fn call_json_agent<T>(
        &mut self,
        attempt: u32,
        input: AgentInput,
        contract: &str,
        parse: impl Fn(&str) -> Result<T, ParseFailure> + Sync,
    ) -> Result<Result<T, NodeResult>, Unhandled> {
        self.call_json_agent_checked(attempt, input, contract, parse, &|_: &T| None)
            .await
    }

    /// [`Self::call_json_agent`], with a check of the parsed answer whose
    /// failure is recorded on the step as why the answer was not used
    /// (the Composer's answer rules), so `trace` and the TUI show it.
    pub(crate) async fn call_json_agent_checked<T>(
        &mut self,
        attempt: u32,
        input: AgentInput,
        contract: &str,
        parse: impl Fn(&str) -> Result<T, ParseFailure> + Sync,
        check: &(dyn Fn(&T) -> Option<String> + Sync),
    ) -> Result<Result<T, NodeResult>, Unhandled> {
        let mut messages = self.engine.prompts.render(&input);
        if attempt > 1 {
            messages.push(format_reminder(contract));
        }
        if let Some(note) = self.state.retry_note.take()
            && attempt > 1
        {
            messages.push(Message::User { content: note });
        }
        let model_input = step_text(rendered_input(&messages));
        let parse_error = |r: &ChatResponse| match judge(r, &parse) {
            Err(n) => Some(n.detail),
            Ok(t) => check(&t),
        };
        let (call, _) = self
            .call_model(
                attempt,
                input,
                messages,
                (vec![], ToolChoice::Auto),
                model_input,
                &parse_error,
            )
            .await?;
        Ok(classify(call.response, parse))
    }
}

/// Maps a model answer of a JSON-only role (Planner, Verifier, Composer) to
/// its parsed contract or to the failure outcome and a short detail.
pub(crate) fn classify<T>(
    response: Result<ChatResponse, ModelError>,
    parse: impl FnOnce(&str) -> Result<T, ParseFailure>,
) -> Result<T, NodeResult> {
    match response {
        Ok(r) => judge(&r, parse),
        Err(e) => {
            let outcome = if e.is_retryable() {
                Outcome::RetryableFailed
            } else {
                Outcome::NonRetryableFailed
            };
            Err(NodeResult {
                outcome,
                detail: format!("model error: {}", truncate_bytes(&e.to_string(), 200)),
            })
        }
    }
}

/// An answer of a JSON-only role as its contract, or why it is not one.
fn judge<T>(
    response: &ChatResponse,
    parse: impl FnOnce(&str) -> Result<T, ParseFailure>,
) -> Result<T, NodeResult> {
    if response.finish_reason == FinishReason::Length {
        return Err(invalid("output truncated at the token limit"));
    }
    let text = response.content.as_deref().unwrap_or_default();
    if text.trim().is_empty() && !response.tool_calls.is_empty() {
        return Err(invalid("tool calls instead of a JSON answer"));
    }
    parse(text).map_err(|f| invalid(&format!("{}: {}", parse_status_str(f.status), f.detail)))
}

pub(crate) fn invalid(detail: &str) -> NodeResult {
    NodeResult {
        outcome: Outcome::InvalidOutput,
        detail: truncate_bytes(detail, 300),
    }
}

pub(crate) fn parse_status_str(status: crate::vocab::contracts::ParseStatus) -> &'static str {
    use crate::vocab::contracts::ParseStatus;
    match status {
        ParseStatus::Valid => "valid",
        ParseStatus::Missing => "missing",
        ParseStatus::Malformed => "malformed",
    }
}

/// A number in [0, 1) that differs between calls and processes (the
/// jitter of retry back-offs; not for anything that needs real randomness).
fn jitter() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

//! The replay provider (`diagraph rerun`): answers from a stored run's
//! recorded model calls, per (role, call order), with no network.
//!
//! A [`Recording`] is read from the stored run's Run Trace: each agent
//! step is one call of its role, counted in step order, and keeps the
//! answer whole (text, tool calls, or the error the call ended in) with
//! its usage. Recorded answers cite the *old* run's invocation ids; the
//! replay maps each of them to the new run's invocation at the same
//! position (tool-call order), so the Gatekeeper's ownership rule judges
//! the citation as it judged it then. An id the old run did not own, or
//! one whose position the new run has not reached, is passed through
//! unchanged and stays foreign to the new run.
//!
//! From the first call of the `from` role on (`--from NODE`), every call
//! goes to the live model, and [`ReplayState::is_live`] tells the replayed
//! tools (`tools::replay`) to call the real tools too. A call the
//! recording does not cover is never answered by guessing: it fails as
//! `uncovered`, and [`ReplayState::missing`] says which call it was, so
//! the caller can refuse the rerun.
//!
//! One replay model serves one run: its call counters are not per run.

use crate::model::{
    ChatModel, ChatRequest, ChatResponse, DeltaSink, FinishReason, ModelError, ModelErrorKind,
    ToolCall,
};
use crate::vocab::agent::AgentRole;
use crate::vocab::run_trace::{RunTrace, TracedStep};
use async_trait::async_trait;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The parse error a step keeps when the answer was cut at the token
/// limit (`engine::ctx`): the one finish reason a replay must restore.
const TRUNCATED_AT_LIMIT: &str = "output truncated at the token limit";
/// What a step keeps as its error when the run was cancelled mid-call:
/// nothing was answered, so there is nothing to replay.
const CANCELLED_CALL: &str = "cancelled before the model answered";

/// What one recorded call answered.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordedCall {
    Answer(ChatResponse),
    Error(ModelError),
}

/// A stored run's model calls, by (role, 1-based call order), and its
/// invocation ids in tool-call order.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    pub run_id: i64,
    calls: BTreeMap<(AgentRole, u32), RecordedCall>,
    invocation_ids: Vec<i64>,
}

/// Why a stored run cannot be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("run {run_id} cannot be rerun: {reason}")]
pub struct RecordingError {
    pub run_id: i64,
    pub reason: String,
}

impl Recording {
    /// The recording of a stored run. A step whose answer an older
    /// version cut (`…[truncated N bytes]`), whose tool calls do not parse
    /// back, or whose role is unknown makes the run unreplayable: a replay
    /// of half an answer would not be the run it claims to reproduce.
    pub fn from_trace(trace: &RunTrace) -> Result<Recording, RecordingError> {
        let run_id = trace.run.run_id;
        let fail = |reason: String| RecordingError { run_id, reason };
        let mut calls = BTreeMap::new();
        let mut counters: HashMap<AgentRole, u32> = HashMap::new();
        let mut steps: Vec<&TracedStep> = trace.steps.iter().collect();
        steps.sort_by_key(|s| (s.step_index, s.seq, s.id));
        for step in steps {
            let role = AgentRole::parse(&step.agent_name).ok_or_else(|| {
                fail(format!(
                    "step {} has an unknown role {:?}",
                    step.step_index,
                    crate::text::clean(&step.agent_name, 40)
                ))
            })?;
            let n = counters.entry(role).or_insert(0);
            *n += 1;
            let where_ = || format!("{role} call {n} (step {})", step.step_index);
            if let Some(call) =
                recorded_call(step).map_err(|e| fail(format!("{}: {e}", where_())))?
            {
                calls.insert((role, *n), call);
            }
        }
        let mut invocations: Vec<_> = trace.tool_invocations.iter().collect();
        invocations.sort_by_key(|i| (i.seq, i.id));
        Ok(Recording {
            run_id,
            calls,
            invocation_ids: invocations.iter().map(|i| i.id).collect(),
        })
    }

    pub fn call(&self, role: AgentRole, n: u32) -> Option<&RecordedCall> {
        self.calls.get(&(role, n))
    }
}

/// One step as the call it records; None when the call never answered
/// (the run was cancelled during it).
fn recorded_call(step: &TracedStep) -> Result<Option<RecordedCall>, String> {
    if let Some(error) = &step.error {
        if error == CANCELLED_CALL {
            return Ok(None);
        }
        let (kind, message) = match error.split_once(": ") {
            Some((k, m)) => match ModelErrorKind::parse(k) {
                Some(kind) => (kind, m.to_string()),
                None => (ModelErrorKind::Protocol, error.clone()),
            },
            None => (ModelErrorKind::Protocol, error.clone()),
        };
        return Ok(Some(RecordedCall::Error(ModelError::new(kind, message))));
    }
    if is_cut(&step.model_output) {
        return Err("the answer was stored cut (by an older version), not whole".into());
    }
    let mut response = ChatResponse {
        usage: step.usage,
        ..ChatResponse::default()
    };
    if step.has_tool_call {
        response.tool_calls = serde_json::from_str::<Vec<ToolCall>>(&step.model_output)
            .map_err(|e| format!("its tool calls do not parse back: {e}"))?;
        response.finish_reason = FinishReason::ToolCalls;
    } else {
        response.content = Some(step.model_output.clone());
        if step.parse_error.as_deref() == Some(TRUNCATED_AT_LIMIT) {
            response.finish_reason = FinishReason::Length;
        }
    }
    Ok(Some(RecordedCall::Answer(response)))
}

/// `text::truncate_bytes`'s marker at the end of a stored text.
fn is_cut(text: &str) -> bool {
    let Some(rest) = text.strip_suffix(" bytes]") else {
        return false;
    };
    match rest.rfind("…[truncated ") {
        Some(at) => {
            let digits = &rest[at + "…[truncated ".len()..];
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

/// Rewrites every `"source_invocation_id": ID` (a number or a quoted
/// number) whose ID is in `map`. Only that key is touched, outside JSON
/// strings (a key inside a string has escaped quotes), so excerpts,
/// reasoning and layout stay byte for byte.
pub fn remap_invocation_ids(text: &str, map: &HashMap<i64, i64>) -> String {
    const KEY: &str = "\"source_invocation_id\"";
    if map.is_empty() || !text.contains(KEY) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(KEY) {
        let escaped = rest[..at].ends_with('\\');
        let after_key = at + KEY.len();
        out.push_str(&rest[..after_key]);
        rest = &rest[after_key..];
        if escaped {
            continue;
        }
        let colon = rest.len() - rest.trim_start().len();
        if !rest[colon..].starts_with(':') {
            continue;
        }
        let value_start =
            colon + 1 + (rest[colon + 1..].len() - rest[colon + 1..].trim_start().len());
        let value = &rest[value_start..];
        let quoted = value.starts_with('"');
        let digits_from = usize::from(quoted);
        let digits_len = value[digits_from..]
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'-')
            .count();
        let number = &value[digits_from..digits_from + digits_len];
        let closes = !quoted || value[digits_from + digits_len..].starts_with('"');
        if let (Some(new), true) = (
            number.parse::<i64>().ok().and_then(|id| map.get(&id)),
            closes,
        ) {
            out.push_str(&rest[..value_start + digits_from]);
            out.push_str(&new.to_string());
            rest = &rest[value_start + digits_from + digits_len..];
        }
    }
    out.push_str(rest);
    out
}

/// What a replay run shares with its replayed tools: whether it has gone
/// live, and the first call the recording did not cover.
#[derive(Debug, Default)]
pub struct ReplayState {
    live: AtomicBool,
    missing: Mutex<Option<String>>,
}

impl ReplayState {
    /// The run has reached its `--from` node: model and tools are live.
    pub fn is_live(&self) -> bool {
        self.live.load(Ordering::SeqCst)
    }

    fn go_live(&self) {
        self.live.store(true, Ordering::SeqCst);
    }

    /// The first call (model or tool) the recording did not cover.
    pub fn missing(&self) -> Option<String> {
        self.missing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn note_missing(&self, what: String) {
        let mut missing = self.missing.lock().unwrap_or_else(|e| e.into_inner());
        missing.get_or_insert(what);
    }
}

pub struct ReplayModel {
    recording: Recording,
    /// Serves every call from the first call of `from` on.
    live: Arc<dyn ChatModel>,
    from: Option<AgentRole>,
    state: Arc<ReplayState>,
    calls: Mutex<[u32; 4]>,
}

impl ReplayModel {
    pub fn new(
        recording: Recording,
        live: Arc<dyn ChatModel>,
        from: Option<AgentRole>,
    ) -> ReplayModel {
        ReplayModel {
            recording,
            live,
            from,
            state: Arc::new(ReplayState::default()),
            calls: Mutex::new([0; 4]),
        }
    }

    /// Shared with the replayed tools and read by the caller after the run.
    pub fn state(&self) -> Arc<ReplayState> {
        Arc::clone(&self.state)
    }

    fn next_call(&self, role: AgentRole) -> u32 {
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        let slot = &mut calls[AgentRole::ALL.iter().position(|r| *r == role).unwrap_or(0)];
        *slot += 1;
        *slot
    }

    /// The old run's invocation ids to this run's, position by position.
    fn id_map(&self, request: &ChatRequest) -> HashMap<i64, i64> {
        self.recording
            .invocation_ids
            .iter()
            .zip(&request.script.invocation_ids)
            .map(|(old, new)| (*old, *new))
            .collect()
    }

    async fn answer(
        &self,
        request: &ChatRequest,
        deltas: Option<DeltaSink<'_>>,
    ) -> Result<ChatResponse, ModelError> {
        let role = request.role();
        let n = self.next_call(role);
        if self.from == Some(role) {
            self.state.go_live();
        }
        if self.state.is_live() {
            return match deltas {
                Some(d) => self.live.chat_streaming(request, d).await,
                None => self.live.chat(request).await,
            };
        }
        match self.recording.call(role, n) {
            Some(RecordedCall::Error(e)) => Err(e.clone()),
            Some(RecordedCall::Answer(r)) => {
                let mut r = r.clone();
                let map = self.id_map(request);
                if let Some(content) = &r.content {
                    r.content = Some(remap_invocation_ids(content, &map));
                }
                Ok(r)
            }
            None => {
                let what = format!(
                    "run {} recorded no {role} call {n} to replay (the route changed, or the run ended before it)",
                    self.recording.run_id
                );
                self.state.note_missing(what.clone());
                Err(ModelError::new(ModelErrorKind::Uncovered, what))
            }
        }
    }
}

#[async_trait]
impl ChatModel for ReplayModel {
    fn name(&self) -> String {
        match self.from {
            Some(role) => format!(
                "replay of run {}, live from {role}: {}",
                self.recording.run_id,
                self.live.name()
            ),
            None => format!("replay of run {}", self.recording.run_id),
        }
    }

    fn model_for(&self, role: AgentRole) -> String {
        match self.from {
            Some(_) => format!(
                "replay of run {}, else {}",
                self.recording.run_id,
                self.live.model_for(role)
            ),
            None => format!("replay of run {}", self.recording.run_id),
        }
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.answer(request, None).await
    }

    async fn chat_streaming(
        &self,
        request: &ChatRequest,
        deltas: DeltaSink<'_>,
    ) -> Result<ChatResponse, ModelError> {
        self.answer(request, Some(deltas)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_remapped_only_under_their_key_and_only_when_known() {
        let map = HashMap::from([(7, 101), (8, 102)]);
        let text = r#"<think>cite 7</think>{"claims":[{"evidence_bindings":[
            {"source_invocation_id": 7, "evidence_excerpt": "id 7 \"source_invocation_id\": 8"},
            {"source_invocation_id":"8"}, {"source_invocation_id": 9},
            {"source_invocation_id": 77}, {"source_invocation_id": null}]}]}"#;
        let out = remap_invocation_ids(text, &map);
        assert!(out.contains(r#""source_invocation_id": 101"#), "{out}");
        assert!(out.contains(r#""source_invocation_id":"102""#), "{out}");
        // Unknown (foreign) ids, a longer number and null pass unchanged.
        assert!(out.contains(r#""source_invocation_id": 9}"#), "{out}");
        assert!(out.contains(r#""source_invocation_id": 77}"#), "{out}");
        assert!(out.contains(r#""source_invocation_id": null"#), "{out}");
        // Text inside strings (reasoning, an excerpt quoting the key) stays.
        assert!(out.starts_with("<think>cite 7</think>"));
        assert!(out.contains(r#""evidence_excerpt": "id 7 \"source_invocation_id\": 8""#));
    }

    #[test]
    fn malformed_text_is_passed_through_without_panic() {
        let map = HashMap::from([(1, 2)]);
        for t in [
            "\"source_invocation_id\"",
            "\"source_invocation_id\":",
            "\"source_invocation_id\": \"1",
            "\"source_invocation_id\" x 1",
            "\"source_invocation_id\": -",
            "\"source_invocation_id\": 99999999999999999999999",
        ] {
            assert_eq!(remap_invocation_ids(t, &map), t);
        }
        assert_eq!(
            remap_invocation_ids("\"source_invocation_id\": \"1\"", &map),
            "\"source_invocation_id\": \"2\""
        );
    }

    #[test]
    fn a_cut_answer_is_recognised_by_its_marker_only() {
        assert!(is_cut("{\"a\": 1…[truncated 12 bytes]"));
        assert!(!is_cut("{\"a\": \"…[truncated x bytes]\"}"));
        assert!(!is_cut("{}"));
        assert!(!is_cut(" bytes]"));
    }
}

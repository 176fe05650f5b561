//! The scripted provider: replays a scenario's responses per (role, call
//! order); uncovered calls fall through to another model (the offline one
//! in the shipped scenarios).
//!
//! Call order is counted per run and role, so one scripted engine can run
//! a scenario several times. `{{invocation:N}}` in scripted text (and tool
//! arguments) becomes this run's N-th invocation id, and
//! `{{invocation:foreign}}` an id owned by another run. An index with no
//! invocation becomes `-1`, an id no run owns, so the Gatekeeper rejects it
//! rather than the script silently citing something else.

use crate::model::{
    ChatModel, ChatRequest, ChatResponse, DeltaSink, FinishReason, ModelError, ModelErrorKind,
    ToolCall, Usage,
};
use crate::vocab::agent::AgentRole;
use crate::vocab::record::Recorder;
use async_trait::async_trait;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// What one scripted call answers.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptReply {
    Text(String),
    ToolCalls(Vec<ScriptToolCall>),
    Error(ModelErrorKind),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ScriptToolCall {
    pub name: String,
    pub arguments: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ScriptEntry {
    pub role: AgentRole,
    /// 1-based call index of the role; None = the next unclaimed call.
    pub call: Option<u32>,
    pub reply: ScriptReply,
}

impl ScriptEntry {
    pub fn text(role: AgentRole, text: impl Into<String>) -> ScriptEntry {
        ScriptEntry {
            role,
            call: None,
            reply: ScriptReply::Text(text.into()),
        }
    }

    pub fn error(role: AgentRole, kind: ModelErrorKind) -> ScriptEntry {
        ScriptEntry {
            role,
            call: None,
            reply: ScriptReply::Error(kind),
        }
    }

    pub fn tool_calls(role: AgentRole, calls: Vec<(&str, Value)>) -> ScriptEntry {
        ScriptEntry {
            role,
            call: None,
            reply: ScriptReply::ToolCalls(
                calls
                    .into_iter()
                    .map(|(name, arguments)| ScriptToolCall {
                        name: name.to_string(),
                        arguments,
                    })
                    .collect(),
            ),
        }
    }

    pub fn at(mut self, call: u32) -> ScriptEntry {
        self.call = Some(call);
        self
    }
}

/// The error kinds a script may name.
pub const SCRIPT_ERROR_KINDS: [&str; 5] = [
    "timeout",
    "rate_limited",
    "server_error",
    "unauthorized",
    "bad_request",
];

/// Resolves call indices: pinned entries keep theirs; unpinned entries take
/// the next index of their role not yet claimed, in file order. Two entries
/// for one (role, call) are an error naming both.
pub fn resolve_calls(
    entries: &[ScriptEntry],
) -> Result<BTreeMap<(AgentRole, u32), ScriptReply>, String> {
    let mut map: BTreeMap<(AgentRole, u32), ScriptReply> = BTreeMap::new();
    let mut owner: HashMap<(AgentRole, u32), usize> = HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        if let Some(call) = e.call {
            if call == 0 {
                return Err(format!("script entry {}: call must be >= 1", i + 1));
            }
            if let Some(first) = owner.insert((e.role, call), i) {
                return Err(format!(
                    "script entries {} and {} both script {} call {}",
                    first + 1,
                    i + 1,
                    e.role,
                    call
                ));
            }
            map.insert((e.role, call), e.reply.clone());
        }
    }
    let mut next: HashMap<AgentRole, u32> = HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        if e.call.is_some() {
            continue;
        }
        let n = next.entry(e.role).or_insert(1);
        while owner.contains_key(&(e.role, *n)) {
            *n += 1;
        }
        owner.insert((e.role, *n), i);
        map.insert((e.role, *n), e.reply.clone());
    }
    Ok(map)
}

/// A model for fully scripted runs: every call is an `uncovered` error.
#[derive(Debug, Clone, Default)]
pub struct UncoveredModel;

#[async_trait]
impl ChatModel for UncoveredModel {
    fn name(&self) -> String {
        "uncovered".into()
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        Err(ModelError::new(
            ModelErrorKind::Uncovered,
            format!("the script does not cover this {} call", request.role()),
        ))
    }
}

/// Runs whose counters are kept; older runs are forgotten.
const KEPT_RUNS: usize = 64;

pub struct ScriptedModel {
    replies: BTreeMap<(AgentRole, u32), ScriptReply>,
    fallthrough: Arc<dyn ChatModel>,
    recorder: Option<Arc<dyn Recorder>>,
    calls: Mutex<HashMap<i64, [u32; 4]>>,
    foreign: Mutex<HashMap<i64, i64>>,
}

impl ScriptedModel {
    /// Duplicate (role, call) pairs keep the first entry; use
    /// [`resolve_calls`] first to report them.
    pub fn new(entries: Vec<ScriptEntry>, fallthrough: Arc<dyn ChatModel>) -> ScriptedModel {
        let mut replies = resolve_calls(&entries).unwrap_or_else(|_| {
            let mut map = BTreeMap::new();
            let mut next: HashMap<AgentRole, u32> = HashMap::new();
            for e in entries {
                let n = e.call.unwrap_or_else(|| {
                    let n = next.entry(e.role).or_insert(0);
                    *n += 1;
                    *n
                });
                map.entry((e.role, n)).or_insert(e.reply);
            }
            map
        });
        // Arguments are sent as text: render JSON ones once, not per call.
        for reply in replies.values_mut() {
            if let ScriptReply::ToolCalls(calls) = reply {
                for c in calls {
                    if !c.arguments.is_string() {
                        c.arguments = Value::String(c.arguments.to_string());
                    }
                }
            }
        }
        ScriptedModel {
            replies,
            fallthrough,
            recorder: None,
            calls: Mutex::new(HashMap::new()),
            foreign: Mutex::new(HashMap::new()),
        }
    }

    /// Lets `{{invocation:foreign}}` ask the recorder for an id owned by
    /// another run when the request does not carry one.
    pub fn with_recorder(mut self, recorder: Arc<dyn Recorder>) -> ScriptedModel {
        self.recorder = Some(recorder);
        self
    }

    fn next_call(&self, run_id: i64, role: AgentRole) -> u32 {
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        if !calls.contains_key(&run_id)
            && calls.len() >= KEPT_RUNS
            && let Some(&oldest) = calls.keys().min()
        {
            calls.remove(&oldest);
        }
        let counters = calls.entry(run_id).or_insert([0; 4]);
        let slot = &mut counters[role_index(role)];
        *slot += 1;
        *slot
    }

    async fn foreign_id(&self, request: &ChatRequest) -> i64 {
        if let Some(id) = request.script.foreign_invocation_id {
            return id;
        }
        let run_id = request.script.run_id;
        if let Some(id) = self
            .foreign
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&run_id)
        {
            return *id;
        }
        let Some(recorder) = &self.recorder else {
            return -1;
        };
        let id = recorder.foreign_invocation_id(run_id).await.unwrap_or(-1);
        self.foreign
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(run_id, id);
        id
    }

    async fn fill(&self, text: &str, request: &ChatRequest) -> String {
        if !text.contains("{{invocation:") {
            return text.to_string();
        }
        let foreign = if text.contains("{{invocation:foreign}}") {
            self.foreign_id(request).await
        } else {
            -1
        };
        fill_placeholders(text, &request.script.invocation_ids, foreign)
    }
}

fn role_index(role: AgentRole) -> usize {
    match role {
        AgentRole::Planner => 0,
        AgentRole::Executor => 1,
        AgentRole::Verifier => 2,
        AgentRole::Composer => 3,
    }
}

/// Replaces `{{invocation:N}}` and `{{invocation:foreign}}`; anything
/// unknown inside the braces becomes `-1`.
pub fn fill_placeholders(text: &str, ids: &[i64], foreign: i64) -> String {
    const OPEN: &str = "{{invocation:";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        out.push_str(&rest[..start]);
        let after = &rest[start + OPEN.len()..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let key = after[..end].trim();
        let id = if key == "foreign" {
            foreign
        } else {
            key.parse::<usize>()
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| ids.get(i))
                .copied()
                .unwrap_or(-1)
        };
        out.push_str(&id.to_string());
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// Rough token count (4 bytes a token) so that scripted runs have
/// plausible totals.
fn estimate_tokens(request: &ChatRequest) -> u64 {
    let bytes: usize = request
        .messages
        .iter()
        .map(|m| match m {
            super::Message::System { content }
            | super::Message::User { content }
            | super::Message::Tool { content, .. } => content.len(),
            super::Message::Assistant { content, .. } => content.as_ref().map_or(0, String::len),
        })
        .sum();
    (bytes / 4) as u64
}

#[async_trait]
impl ChatModel for ScriptedModel {
    fn name(&self) -> String {
        format!("scripted over {}", self.fallthrough.name())
    }

    fn model_for(&self, role: AgentRole) -> String {
        if self.replies.keys().any(|(r, _)| *r == role) {
            format!("scripted, else {}", self.fallthrough.model_for(role))
        } else {
            self.fallthrough.model_for(role)
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

impl ScriptedModel {
    /// The script's reply to this call, else the fall-through model's
    /// (streaming when a sink is given).
    async fn answer(
        &self,
        request: &ChatRequest,
        deltas: Option<DeltaSink<'_>>,
    ) -> Result<ChatResponse, ModelError> {
        let n = self.next_call(request.script.run_id, request.role());
        let Some(reply) = self.replies.get(&(request.role(), n)) else {
            return match deltas {
                Some(d) => self.fallthrough.chat_streaming(request, d).await,
                None => self.fallthrough.chat(request).await,
            };
        };
        let prompt_tokens = estimate_tokens(request);
        match reply {
            ScriptReply::Error(kind) => Err(ModelError::new(
                *kind,
                format!(
                    "scripted {} error on {} call {n}",
                    kind.as_str(),
                    request.role()
                ),
            )),
            ScriptReply::Text(text) => {
                let content = self.fill(text, request).await;
                let completion_tokens = (content.len() / 4) as u64;
                Ok(ChatResponse {
                    content: Some(content),
                    tool_calls: vec![],
                    finish_reason: FinishReason::Stop,
                    usage: Usage {
                        prompt_tokens,
                        completion_tokens,
                        ..Usage::default()
                    },
                    reasoning: None,
                    served_by: None,
                    notes: vec![],
                })
            }
            ScriptReply::ToolCalls(calls) => {
                let mut tool_calls = Vec::with_capacity(calls.len());
                for (i, c) in calls.iter().enumerate() {
                    let arguments = match &c.arguments {
                        // A string is passed through raw, so a script can
                        // send invalid JSON arguments on purpose.
                        Value::String(raw) => self.fill(raw, request).await,
                        other => self.fill(&other.to_string(), request).await,
                    };
                    tool_calls.push(ToolCall {
                        id: format!("call_{}_{n}_{}", request.role(), i + 1),
                        name: c.name.clone(),
                        arguments,
                    });
                }
                Ok(ChatResponse {
                    content: None,
                    tool_calls,
                    finish_reason: FinishReason::ToolCalls,
                    usage: Usage {
                        prompt_tokens,
                        completion_tokens: 16,
                        ..Usage::default()
                    },
                    reasoning: None,
                    served_by: None,
                    notes: vec![],
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_fill_known_ids_and_poison_unknown_ones() {
        let s = fill_placeholders(
            "a {{invocation:1}} b {{invocation:2}} c {{invocation:foreign}} d {{invocation:x}}",
            &[11],
            99,
        );
        assert_eq!(s, "a 11 b -1 c 99 d -1");
        assert_eq!(
            fill_placeholders("{{invocation:1", &[1], 2),
            "{{invocation:1"
        );
    }

    #[test]
    fn pinned_calls_are_kept_and_unpinned_take_the_next_free_index() {
        let entries = vec![
            ScriptEntry::text(AgentRole::Planner, "b").at(1),
            ScriptEntry::text(AgentRole::Planner, "c"),
            ScriptEntry::text(AgentRole::Verifier, "v"),
        ];
        let map = resolve_calls(&entries).unwrap();
        assert_eq!(map[&(AgentRole::Planner, 1)], ScriptReply::Text("b".into()));
        assert_eq!(map[&(AgentRole::Planner, 2)], ScriptReply::Text("c".into()));
        assert_eq!(
            map[&(AgentRole::Verifier, 1)],
            ScriptReply::Text("v".into())
        );
        let dup = vec![
            ScriptEntry::text(AgentRole::Planner, "a").at(2),
            ScriptEntry::text(AgentRole::Planner, "b").at(2),
        ];
        assert!(resolve_calls(&dup).unwrap_err().contains("entries 1 and 2"));
    }
}

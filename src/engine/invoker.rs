//! Per-run tool invocation: permissions, dedup, timing and recording.
//!
//! Every call the Executor model asks for becomes exactly one recorded
//! [`ToolInvocation`], whatever happens: a refused or unknown tool is a
//! *blocked* invocation, unparsable arguments or a tool error a *failed*
//! one, and a query that already succeeded in this run a *deduped* one that
//! points at the earlier id without calling the tool again (an evidence
//! retry round must not repeat a query that already succeeded). The id is
//! the recorder's, so a database id the Gatekeeper can check.
//!
//! A failed invocation carries the [`FailureClass`] of why it failed, and
//! every invocation the backend that answered it, so the run can say
//! which source could not be checked and why.

use crate::text::{json_kind, one_line, truncate_bytes, truncate_middle};
use crate::tools::registry::UnavailableSource;
use crate::tools::{ToolError, ToolRegistry};
use crate::vocab::record::{RecordError, Recorder};
use crate::vocab::run::FailureClass;
use crate::vocab::tool::{
    EvidenceRef, EvidenceStatus, InvocationId, RetrievalDetails, SourceOutcome, ToolInvocation,
};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Bytes of a tool body kept as `output_preview`.
pub const OUTPUT_PREVIEW_LIMIT: usize = 4 * 1024;
/// A tool call that takes longer is a failed invocation, unless the tool
/// bounds its own I/O with a longer configured timeout.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(20);

pub struct ToolInvoker {
    registry: Arc<ToolRegistry>,
    permitted: Vec<String>,
    recorder: Arc<dyn Recorder>,
    run_id: i64,
    timeout: Duration,
    /// Canonical `tool + args` of queries that succeeded, to their id.
    succeeded: HashMap<String, InvocationId>,
    /// Stops a tool call in flight when the run is cancelled.
    cancel: CancellationToken,
}

/// A recorded invocation and the tool-result message content the model
/// sees (its format: `ResultMessage` below).
#[derive(Debug, Clone)]
pub struct Invoked {
    pub invocation: ToolInvocation,
    pub message: String,
}

/// What the invoker decided before recording.
struct Draft {
    args_value: Value,
    body: Option<Value>,
    details: RetrievalDetails,
    success: bool,
    error: Option<String>,
    dedup_reason: Option<String>,
}

impl Draft {
    fn answered_by(mut self, backend: String) -> Draft {
        self.details.source.backend = backend;
        self
    }
}

impl ToolInvoker {
    pub fn new(
        registry: Arc<ToolRegistry>,
        permitted: Vec<String>,
        recorder: Arc<dyn Recorder>,
        run_id: i64,
    ) -> ToolInvoker {
        ToolInvoker {
            registry,
            permitted,
            recorder,
            run_id,
            timeout: DEFAULT_TOOL_TIMEOUT,
            succeeded: HashMap::new(),
            cancel: CancellationToken::new(),
        }
    }

    pub fn with_timeout(mut self, timeout: Duration) -> ToolInvoker {
        self.timeout = timeout;
        self
    }

    pub fn with_cancel(mut self, cancel: CancellationToken) -> ToolInvoker {
        self.cancel = cancel;
        self
    }

    /// Runs (or refuses, or dedups) one tool call and records it. Only a
    /// recorder failure is an error; everything the tool or the model did
    /// wrong is a recorded, failed invocation.
    pub async fn invoke(
        &mut self,
        name: &str,
        raw_arguments: &str,
        step_id: Option<i64>,
        seq: u32,
    ) -> Result<Invoked, RecordError> {
        let started = Instant::now();
        let parsed = parse_arguments(raw_arguments);
        // The arguments as recorded: the object, or the raw text when it
        // is not one.
        let recorded = |parsed: Result<Map<String, Value>, String>| match parsed {
            Ok(map) => Value::Object(map),
            Err(_) => Value::String(truncate_bytes(raw_arguments, 512)),
        };
        let draft = match (self.registry.get(name), parsed) {
            (None, parsed) => blocked(
                recorded(parsed),
                format!("tool '{}' does not exist", short(name)),
            ),
            (Some(_), parsed) if !self.permitted.iter().any(|p| p == name) => blocked(
                recorded(parsed),
                format!("tool '{}' is not permitted", short(name)),
            ),
            (Some(tool), Err(detail)) => {
                let message = format!("invalid arguments JSON: {detail}");
                failed(recorded(Err(detail)), FailureClass::InvalidOutput, message)
                    .answered_by(tool.backend())
            }
            (Some(tool), Ok(map)) => {
                let key = format!("{name}\u{0}{}", canonical_map(&map));
                match self.succeeded.get(&key) {
                    Some(&earlier) => {
                        deduped(Value::Object(map), earlier).answered_by(tool.backend())
                    }
                    None => {
                        let tool = tool.clone();
                        // A tool with its own, longer I/O timeout (a slow
                        // backend someone configured for) gets that long.
                        let timeout = tool.timeout().map_or(self.timeout, |t| t.max(self.timeout));
                        let out = tokio::select! {
                            out = tokio::time::timeout(timeout, tool.call(&map)) => Some(out),
                            _ = self.cancel.cancelled() => None,
                        };
                        let args_value = Value::Object(map);
                        let draft = match out {
                            None => failed(
                                args_value,
                                FailureClass::Cancelled,
                                "cancelled before the tool answered".into(),
                            ),
                            Some(Err(_)) => {
                                let e = ToolError::Timeout(
                                    u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                                );
                                failed(args_value, e.class(), e.to_string())
                            }
                            Some(Ok(Err(e))) => failed(args_value, e.class(), e.to_string()),
                            Some(Ok(Ok(output))) => Draft {
                                args_value,
                                body: Some(output.body),
                                details: RetrievalDetails {
                                    evidence_status: output.evidence_status,
                                    evidence_refs: output.evidence_refs,
                                    deduped_from: None,
                                    blocked: false,
                                    retrieved_domains: output.retrieved_domains,
                                    source: SourceOutcome {
                                        backend: String::new(),
                                        failure_class: None,
                                        partial: output.partial,
                                    },
                                    buckets: output.buckets,
                                },
                                success: true,
                                error: None,
                                dedup_reason: None,
                            },
                        };
                        let draft = draft.answered_by(tool.backend());
                        return self
                            .record(name, draft, step_id, seq, started, Some(key))
                            .await;
                    }
                }
            }
        };
        self.record(name, draft, step_id, seq, started, None).await
    }

    /// Records a source that could not be set up (an MCP server that did
    /// not start) as one failed invocation of this run, so the run names
    /// it among what it could not check. Its tools were never offered, so
    /// no step asked for it.
    pub async fn record_unavailable(
        &mut self,
        source: &UnavailableSource,
        seq: u32,
    ) -> Result<Invoked, RecordError> {
        let draft = failed(
            Value::Object(Map::new()),
            source.error.class(),
            source.error.to_string(),
        )
        .answered_by(source.backend.clone());
        self.record(&source.tool, draft, None, seq, Instant::now(), None)
            .await
    }

    async fn record(
        &mut self,
        name: &str,
        draft: Draft,
        step_id: Option<i64>,
        seq: u32,
        started: Instant,
        success_key: Option<String>,
    ) -> Result<Invoked, RecordError> {
        // Serialised once: the message embeds this text as it is, without
        // parsing it back.
        let body: Option<Box<RawValue>> = draft
            .body
            .as_ref()
            .and_then(|b| serde_json::value::to_raw_value(b).ok());
        let body_text = body.as_deref().map_or("", RawValue::get);
        let output_length = body_text.len();
        let is_truncated = output_length > OUTPUT_PREVIEW_LIMIT;
        // The model sees the whole body; the row keeps a preview.
        let output_preview = truncate_bytes(body_text, OUTPUT_PREVIEW_LIMIT);
        let mut invocation = ToolInvocation {
            id: 0,
            run_id: self.run_id,
            step_id,
            seq,
            tool_name: name.to_string(),
            input_params: draft.args_value,
            output_preview,
            output_length,
            is_truncated,
            retrieval_details: draft.details,
            dedup_reason: draft.dedup_reason,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            success: draft.success,
            error_message: draft.error,
        };
        invocation.id = self.recorder.record_tool_invocation(&invocation).await?;
        let counts_as_success = matches!(
            invocation.retrieval_details.evidence_status,
            EvidenceStatus::Supported | EvidenceStatus::NoEvidence
        );
        if let (Some(key), true) = (success_key, invocation.success && counts_as_success) {
            self.succeeded.insert(key, invocation.id);
        }
        let message = result_message(&invocation, body.as_deref());
        Ok(Invoked {
            invocation,
            message,
        })
    }
}

/// The tool result message the model reads: the content of the `tool`
/// message answering one tool call, one JSON object with exactly these
/// keys, in this order:
///
/// - `invocation_id`: the recorded id to cite as `source_invocation_id`;
///   null only for a call that was never executed (the call budget was
///   spent, see [`unexecuted_message`]);
/// - `tool`, `arguments`: the call as recorded (arguments that were not a
///   JSON object are kept as their raw text, cut);
/// - `evidence_status`: `supported`, `no_evidence`, `deduped` or `failed`;
/// - `evidence_refs`: `[{raw_path, text}]`, the code-made refs a binding may
///   cite (empty unless the tool served the call);
/// - `deduped_from`: for `deduped`, the earlier invocation to cite instead;
/// - `blocked`: the tool is unknown or not permitted for this run;
/// - `error`: why the call failed or was blocked, else null;
/// - `result`: the tool's whole JSON body, else null.
///
/// `prompts/executor.md` describes the same object to the model, and the
/// offline Executor reads it back (`ChatRequest::tool_results`); change all
/// three together.
#[derive(Serialize)]
struct ResultMessage<'a> {
    invocation_id: Option<InvocationId>,
    tool: &'a str,
    arguments: &'a Value,
    evidence_status: &'static str,
    evidence_refs: &'a [EvidenceRef],
    deduped_from: Option<InvocationId>,
    blocked: bool,
    error: Option<&'a str>,
    /// The source was read only in part: what was left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    partial: Option<&'a str>,
    /// The tool's JSON body, passed through as the text it was serialised to.
    result: Option<&'a RawValue>,
}

/// The tool result message content for a recorded invocation, embedding
/// the tool's JSON body.
fn result_message(invocation: &ToolInvocation, body: Option<&RawValue>) -> String {
    let d = &invocation.retrieval_details;
    ResultMessage {
        invocation_id: Some(invocation.id),
        tool: &invocation.tool_name,
        arguments: &invocation.input_params,
        evidence_status: d.evidence_status.as_str(),
        evidence_refs: &d.evidence_refs,
        deduped_from: d.deduped_from,
        blocked: d.blocked,
        error: invocation.error_message.as_deref(),
        partial: d.source.partial.as_deref(),
        result: body,
    }
    .to_json()
}

/// The answer to a tool call that was not executed and has no invocation
/// (the call budget was spent): every call needs an answer in the
/// conversation.
pub fn unexecuted_message(tool: &str, error: &str) -> String {
    ResultMessage {
        invocation_id: None,
        tool,
        arguments: &Value::Null,
        evidence_status: EvidenceStatus::Failed.as_str(),
        evidence_refs: &[],
        deduped_from: None,
        blocked: false,
        error: Some(error),
        partial: None,
        result: None,
    }
    .to_json()
}

impl ResultMessage<'_> {
    fn to_json(&self) -> String {
        // Strings, numbers and already-valid JSON: serialising cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

fn parse_arguments(raw: &str) -> Result<Map<String, Value>, String> {
    if raw.trim().is_empty() {
        // Providers send "" for a call without arguments.
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "arguments must be an object, got {}",
            json_kind(&other)
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// An argument object as JSON with keys sorted at every level, so that the
/// same query written with a different key order dedups.
fn canonical_map(map: &Map<String, Value>) -> String {
    let mut out = Vec::with_capacity(64);
    write_object(map, &mut out);
    // Only serde_json output and ASCII punctuation were written.
    String::from_utf8(out).unwrap_or_default()
}

fn write_object(map: &Map<String, Value>, out: &mut Vec<u8>) {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.push(b'{');
    for (i, (k, v)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_scalar(k, out);
        out.push(b':');
        write_canonical(v, out);
    }
    out.push(b'}');
}

fn write_canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(map) => write_object(map, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        scalar => write_scalar(scalar, out),
    }
}

fn write_scalar(v: &(impl Serialize + ?Sized), out: &mut Vec<u8>) {
    // Writing a string or scalar into memory cannot fail.
    let _ = serde_json::to_writer(&mut *out, v);
}

/// A model-supplied tool name in a message: one line, both ends kept.
fn short(name: &str) -> String {
    truncate_middle(&one_line(name), 64)
}

fn blocked(args_value: Value, error: String) -> Draft {
    let mut details = RetrievalDetails::of(EvidenceStatus::Failed);
    details.blocked = true;
    // The model asked for a tool it may not use: its output was wrong.
    details.source.failure_class = Some(FailureClass::InvalidOutput);
    Draft {
        args_value,
        body: None,
        details,
        success: false,
        error: Some(error),
        dedup_reason: None,
    }
}

fn failed(args_value: Value, class: FailureClass, error: String) -> Draft {
    let mut details = RetrievalDetails::of(EvidenceStatus::Failed);
    details.source.failure_class = Some(class);
    Draft {
        args_value,
        body: None,
        details,
        success: false,
        error: Some(error),
        dedup_reason: None,
    }
}

fn deduped(args_value: Value, earlier: InvocationId) -> Draft {
    let mut details = RetrievalDetails::of(EvidenceStatus::Deduped);
    details.deduped_from = Some(earlier);
    Draft {
        args_value,
        body: None,
        details,
        success: true,
        error: None,
        dedup_reason: Some(format!(
            "the same query already succeeded in this run as invocation {earlier}; cite it"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MemoryRecorder;
    use crate::tools::{Tool, ToolOutput};
    use crate::vocab::tool::ToolSpec;
    use async_trait::async_trait;
    use serde_json::json;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// Answers with a big body, counts its calls; `slow` never returns.
    struct Fake {
        name: &'static str,
        calls: AtomicU32,
        slow: bool,
        fail: bool,
    }

    #[async_trait]
    impl crate::tools::Tool for Fake {
        fn spec(&self) -> ToolSpec {
            ToolSpec {
                name: self.name.into(),
                description: String::new(),
                evidence_arrays: vec![],
                parameters: json!({}),
            }
        }
        async fn call(&self, _args: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            if self.slow {
                std::future::pending::<()>().await;
            }
            if self.fail {
                return Err(ToolError::Backend("disk on fire".into()));
            }
            Ok(ToolOutput {
                body: json!({"logs": ["x".repeat(10_000)], "total": 1}),
                evidence_status: EvidenceStatus::Supported,
                evidence_refs: vec![EvidenceRef {
                    raw_path: "$.logs[0]".into(),
                    text: "line".into(),
                }],
                retrieved_domains: vec![],
                partial: None,
                buckets: None,
            })
        }
    }

    fn fake(name: &'static str, slow: bool, fail: bool) -> Arc<Fake> {
        Arc::new(Fake {
            name,
            calls: AtomicU32::new(0),
            slow,
            fail,
        })
    }

    fn invoker(tools: Vec<Arc<Fake>>, permitted: &[&str]) -> (ToolInvoker, Arc<MemoryRecorder>) {
        let mut reg = ToolRegistry::new();
        for t in tools {
            reg.register(t as Arc<dyn Tool>);
        }
        let rec = Arc::new(MemoryRecorder::new());
        let inv = ToolInvoker::new(
            Arc::new(reg),
            permitted.iter().map(|s| s.to_string()).collect(),
            rec.clone(),
            7,
        );
        (inv, rec)
    }

    #[test]
    fn canonical_map_sorts_keys_at_every_level_and_escapes_strings() {
        let v = json!({"b": [{"y": 1, "x": "q\"é"}, 2.5], "a": null, "c": {}});
        let Value::Object(map) = v else {
            unreachable!()
        };
        assert_eq!(
            canonical_map(&map),
            r#"{"a":null,"b":[{"x":"q\"é","y":1},2.5],"c":{}}"#
        );
    }

    #[tokio::test]
    async fn unknown_and_unpermitted_tools_are_blocked_and_recorded() {
        let logs = fake("query_logs", false, false);
        let (mut inv, rec) = invoker(vec![logs.clone()], &[]);
        let a = inv.invoke("query_logs", "{}", None, 1).await.unwrap();
        let b = inv.invoke("rm_rf", "{}", None, 2).await.unwrap();
        for (i, want) in [(&a, "is not permitted"), (&b, "does not exist")] {
            assert!(i.invocation.retrieval_details.blocked);
            assert!(!i.invocation.success);
            assert_eq!(
                i.invocation.retrieval_details.evidence_status,
                EvidenceStatus::Failed
            );
            assert!(
                i.invocation
                    .error_message
                    .as_deref()
                    .unwrap()
                    .contains(want)
            );
            let msg: Value = serde_json::from_str(&i.message).unwrap();
            assert_eq!(msg["blocked"], true);
            assert_eq!(msg["invocation_id"], i.invocation.id);
        }
        assert_eq!(logs.calls.load(Ordering::SeqCst), 0);
        assert_eq!(rec.snapshot().invocations.len(), 2);
    }

    #[tokio::test]
    async fn invalid_arguments_are_a_failed_invocation_the_model_sees() {
        let logs = fake("query_logs", false, false);
        let (mut inv, _) = invoker(vec![logs.clone()], &["query_logs"]);
        for raw in ["{not json", "[1,2]"] {
            let i = inv.invoke("query_logs", raw, None, 1).await.unwrap();
            assert_eq!(
                i.invocation.retrieval_details.evidence_status,
                EvidenceStatus::Failed
            );
            assert!(!i.invocation.retrieval_details.blocked);
            let msg: Value = serde_json::from_str(&i.message).unwrap();
            assert!(
                msg["error"]
                    .as_str()
                    .unwrap()
                    .starts_with("invalid arguments JSON")
            );
        }
        assert_eq!(logs.calls.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_repeated_successful_query_is_deduped_whatever_the_key_order() {
        let logs = fake("query_logs", false, false);
        let (mut inv, _) = invoker(vec![logs.clone()], &["query_logs"]);
        let first = inv
            .invoke(
                "query_logs",
                r#"{"a": 1, "b": {"c": 2, "d": 3}}"#,
                Some(4),
                1,
            )
            .await
            .unwrap();
        let again = inv
            .invoke(
                "query_logs",
                r#"{"b": {"d": 3, "c": 2}, "a": 1}"#,
                Some(5),
                2,
            )
            .await
            .unwrap();
        assert_eq!(logs.calls.load(Ordering::SeqCst), 1);
        let d = &again.invocation.retrieval_details;
        assert_eq!(d.evidence_status, EvidenceStatus::Deduped);
        assert_eq!(d.deduped_from, Some(first.invocation.id));
        assert!(d.evidence_refs.is_empty());
        assert!(again.invocation.dedup_reason.is_some());
        let msg: Value = serde_json::from_str(&again.message).unwrap();
        assert_eq!(msg["result"], Value::Null);
        assert_eq!(msg["deduped_from"], first.invocation.id);
        // Truncated preview, full length kept.
        assert!(first.invocation.is_truncated);
        assert!(first.invocation.output_preview.len() < first.invocation.output_length);
    }

    #[tokio::test]
    async fn failures_are_not_deduped_and_carry_the_error() {
        let broken = fake("query_logs", false, true);
        let (mut inv, _) = invoker(vec![broken.clone()], &["query_logs"]);
        let a = inv.invoke("query_logs", "{}", None, 1).await.unwrap();
        let b = inv.invoke("query_logs", "{}", None, 2).await.unwrap();
        assert_eq!(broken.calls.load(Ordering::SeqCst), 2);
        assert_eq!(
            a.invocation.error_message.as_deref(),
            Some("backend error: disk on fire")
        );
        assert_eq!(
            b.invocation.retrieval_details.evidence_status,
            EvidenceStatus::Failed
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_tool_that_hangs_times_out_as_a_failed_invocation() {
        let slow = fake("query_logs", true, false);
        let (inv, _) = invoker(vec![slow], &["query_logs"]);
        let mut inv = inv.with_timeout(Duration::from_secs(1));
        let i = inv.invoke("query_logs", "{}", None, 1).await.unwrap();
        assert!(!i.invocation.success);
        assert!(i.invocation.error_message.unwrap().contains("timed out"));
    }
}

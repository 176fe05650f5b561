//! The spans of one stored run, built from its Run Trace projection and its
//! event journal after the fact, following the OpenTelemetry GenAI
//! semantic conventions:
//!
//! ```text
//! invoke_workflow diagraph                  the run (root)
//! ├─ invoke_agent planner                   one per agent node attempt
//! │  └─ chat <model>                        one per model call
//! ├─ invoke_agent executor
//! │  ├─ chat <model>
//! │  └─ execute_tool query_logs             one per tool invocation
//! ├─ gatekeeper                             deterministic nodes: internal spans
//! └─ ...
//! ```
//!
//! Ids are derived from the run (its id, session and creation time), so
//! the live export and `diagraph export --format otlp-json` of the same
//! run carry the same trace and span ids, and exporting twice does not
//! make a second trace. Times come from the journal (milliseconds since
//! the run started) on top of the run row's creation time.

use crate::text::clean;
use crate::vocab::events::{EngineEvent, EventKind};
use crate::vocab::graph::{NodeId, Outcome, ReasonCode};
use crate::vocab::run::{RunStatus, VerdictSnapshot};
use crate::vocab::run_trace::RunTrace;
use crate::vocab::tool::ToolInvocation;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    AnyValue, ArrayValue, InstrumentationScope, KeyValue, any_value,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status};
use sha2::{Digest, Sha256};

pub const SERVICE_NAME: &str = "diagraph";
/// The workflow name on the root span.
pub const WORKFLOW: &str = "diagraph";

/// Attribute names. The GenAI ones are the conventions' (which are still
/// in development upstream, hence written here rather than taken from a
/// crate that marks them deprecated); `diagraph.*` are this program's.
pub mod attr {
    pub const OPERATION: &str = "gen_ai.operation.name";
    pub const PROVIDER: &str = "gen_ai.provider.name";
    pub const AGENT_NAME: &str = "gen_ai.agent.name";
    /// Older readers name the workflow with this; newer ones use the agent
    /// name on the workflow span. Both are written.
    pub const WORKFLOW_NAME: &str = "gen_ai.workflow.name";
    pub const CONVERSATION: &str = "gen_ai.conversation.id";
    pub const REQUEST_MODEL: &str = "gen_ai.request.model";
    pub const INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
    pub const OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
    pub const TOOL_NAME: &str = "gen_ai.tool.name";
    pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
    pub const TOOL_TYPE: &str = "gen_ai.tool.type";
    pub const ERROR_TYPE: &str = "error.type";

    pub const RUN_ID: &str = "diagraph.run.id";
    pub const RUN_STATUS: &str = "diagraph.run.status";
    pub const DEGRADED: &str = "diagraph.degraded";
    pub const ROUTE: &str = "diagraph.route";
    pub const REASON_CODE: &str = "diagraph.reason_code";
    pub const GATEKEEPER_STATUS: &str = "diagraph.gatekeeper.status";
    pub const MODEL_VERDICT: &str = "diagraph.verdict.model";
    pub const CEILING: &str = "diagraph.verdict.ceiling";
    pub const EFFECTIVE: &str = "diagraph.verdict.effective";
    pub const EVIDENCE_RETRIES: &str = "diagraph.evidence_retry_count";
    pub const NODE: &str = "diagraph.node";
    pub const ATTEMPT: &str = "diagraph.attempt";
    pub const OUTCOME: &str = "diagraph.outcome";
    pub const NEXT_NODE: &str = "diagraph.next_node";
    pub const STEP_ID: &str = "diagraph.step.id";
    pub const TOTAL_TOKENS: &str = "diagraph.usage.total_tokens";
    pub const EVIDENCE_STATUS: &str = "diagraph.tool.evidence_status";
    pub const EVIDENCE_REFS: &str = "diagraph.tool.evidence_refs";
    pub const DEDUPED_FROM: &str = "diagraph.tool.deduped_from";
    pub const TOOL_BACKEND: &str = "diagraph.tool.backend";
    pub const TOOL_PARTIAL: &str = "diagraph.tool.partial";
    pub const FAILURE_CLASS: &str = "diagraph.failure.class";
}

/// W3C "sampled", and "the parent is known not to be remote".
const FLAGS: u32 = 0x01 | 0x100;
const MS: u64 = 1_000_000;

/// One export request holding the run's spans.
pub fn run_request(trace: &RunTrace, events: &[EngineEvent]) -> ExportTraceServiceRequest {
    export_request(run_spans(trace, events))
}

/// `spans` under diagraph's resource and instrumentation scope.
pub fn export_request(spans: Vec<Span>) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![
                    kv("service.name", SERVICE_NAME),
                    kv("service.version", env!("CARGO_PKG_VERSION")),
                ],
                ..Default::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: SERVICE_NAME.into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    ..Default::default()
                }),
                spans,
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

// ---- attribute values ------------------------------------------------------

fn value(v: any_value::Value) -> Option<AnyValue> {
    Some(AnyValue { value: Some(v) })
}

fn kv(key: &str, v: &str) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: value(any_value::Value::StringValue(v.into())),
        ..Default::default()
    }
}

fn kv_int(key: &str, v: i64) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: value(any_value::Value::IntValue(v)),
        ..Default::default()
    }
}

fn kv_bool(key: &str, v: bool) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: value(any_value::Value::BoolValue(v)),
        ..Default::default()
    }
}

fn kv_strings(key: &str, items: &[&str]) -> KeyValue {
    let values = items
        .iter()
        .map(|s| AnyValue {
            value: Some(any_value::Value::StringValue((*s).into())),
        })
        .collect();
    KeyValue {
        key: key.into(),
        value: value(any_value::Value::ArrayValue(ArrayValue { values })),
        ..Default::default()
    }
}

fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn ok() -> Option<Status> {
    Some(Status::default())
}

fn error(message: &str) -> Option<Status> {
    Some(Status {
        code: StatusCode::Error as i32,
        // Messages quote tools and servers: keep them short and inert.
        message: clean(message, 300),
    })
}

fn verdict_attrs(attrs: &mut Vec<KeyValue>, v: &VerdictSnapshot) {
    if let Some(m) = v.model_verdict {
        attrs.push(kv(attr::MODEL_VERDICT, m.as_str()));
    }
    if let Some(c) = v.ceiling {
        attrs.push(kv(attr::CEILING, c.as_str()));
    }
    if let Some(e) = v.effective_verdict {
        attrs.push(kv(attr::EFFECTIVE, e.as_str()));
    }
}

// ---- ids and times -----------------------------------------------------------

fn trace_id(trace: &RunTrace) -> [u8; 16] {
    let run = &trace.run;
    let mut h = Sha256::new();
    h.update(b"diagraph run\0");
    h.update(run.run_id.to_be_bytes());
    h.update(run.session_id.as_bytes());
    h.update(b"\0");
    h.update(run.created_at.as_bytes());
    let digest = h.finalize();
    let mut id = [0u8; 16];
    id.copy_from_slice(&digest[..16]);
    nonzero(&mut id);
    id
}

fn span_id(trace_id: &[u8; 16], key: &str) -> [u8; 8] {
    let mut h = Sha256::new();
    h.update(trace_id);
    h.update(key.as_bytes());
    let digest = h.finalize();
    let mut id = [0u8; 8];
    id.copy_from_slice(&digest[..8]);
    nonzero(&mut id);
    id
}

/// An all-zero id is invalid in OTLP.
fn nonzero(id: &mut [u8]) {
    if id.iter().all(|b| *b == 0)
        && let Some(last) = id.last_mut()
    {
        *last = 1;
    }
}

fn epoch_ms(rfc3339: &str) -> Option<u64> {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .ok()
        .and_then(|t| u64::try_from(t.timestamp_millis()).ok())
}

/// (provider, model) from the model's display name: `openai:gpt-4o-mini`
/// is OpenAI's; anything else runs inside diagraph (offline, scripted).
fn provider_and_model(name: &str) -> (&str, &str, SpanKind) {
    match name.strip_prefix("openai:") {
        Some(model) => ("openai", model, SpanKind::Client),
        None => ("diagraph", name, SpanKind::Internal),
    }
}

fn is_failure(outcome: Outcome) -> bool {
    matches!(
        outcome,
        Outcome::InvalidOutput
            | Outcome::RetryableFailed
            | Outcome::NonRetryableFailed
            | Outcome::ToolBlocked
            | Outcome::Failed
    )
}

// ---- the builder -------------------------------------------------------------

/// What differs between spans (the trace id, flags and clock are the
/// builder's).
struct Parts {
    id: [u8; 8],
    parent: Option<[u8; 8]>,
    name: String,
    kind: SpanKind,
    /// Milliseconds after the run's start.
    times: (u64, u64),
    attributes: Vec<KeyValue>,
    status: Option<Status>,
}

/// One model call, from its event or its agent_step row.
struct ModelCall<'a> {
    /// Unique within the run: names the span id.
    key: String,
    parent: [u8; 8],
    role: &'a str,
    attempt: u32,
    step_id: i64,
    times: (u64, u64),
    tokens: u64,
    /// The split, when the call recorded one.
    usage: Option<crate::vocab::usage::Usage>,
    error: Option<&'a str>,
}

/// A node attempt that has been entered and not finished yet.
struct OpenNode {
    node: NodeId,
    attempt: u32,
    via: Option<ReasonCode>,
    start_ms: u64,
    id: [u8; 8],
    gatekeeper: Option<String>,
    verdicts: Option<VerdictSnapshot>,
}

struct Builder<'a> {
    trace: &'a RunTrace,
    trace_id: [u8; 16],
    root: [u8; 8],
    /// Epoch milliseconds of the run's start.
    t0: u64,
    /// Milliseconds after t0 at which the run ended (or was last seen).
    end: u64,
    model: String,
    spans: Vec<Span>,
}

impl Builder<'_> {
    fn ns(&self, after_start_ms: u64) -> u64 {
        self.t0
            .saturating_add(after_start_ms.min(self.end))
            .saturating_mul(MS)
    }

    fn span(&self, p: Parts) -> Span {
        let (start_ms, end_ms) = p.times;
        Span {
            trace_id: self.trace_id.to_vec(),
            span_id: p.id.to_vec(),
            parent_span_id: p.parent.map(|p| p.to_vec()).unwrap_or_default(),
            flags: FLAGS,
            name: p.name,
            kind: p.kind as i32,
            start_time_unix_nano: self.ns(start_ms),
            end_time_unix_nano: self.ns(end_ms.max(start_ms)),
            attributes: p.attributes,
            status: p.status,
            ..Default::default()
        }
    }

    fn conversation(&self) -> KeyValue {
        kv(attr::CONVERSATION, &self.trace.run.session_id)
    }

    fn close_node(
        &mut self,
        open: OpenNode,
        end_ms: u64,
        finished: Option<(Outcome, ReasonCode, NodeId, &str)>,
    ) {
        let (provider, model, _) = provider_and_model(&self.model);
        let mut attrs = Vec::with_capacity(12);
        let name = match open.node.agent_role() {
            Some(role) => {
                attrs.push(kv(attr::OPERATION, "invoke_agent"));
                attrs.push(kv(attr::AGENT_NAME, role.as_str()));
                attrs.push(kv(attr::PROVIDER, provider));
                attrs.push(kv(attr::REQUEST_MODEL, model));
                attrs.push(self.conversation());
                format!("invoke_agent {}", role.as_str())
            }
            None => open.node.as_str().to_string(),
        };
        attrs.push(kv(attr::NODE, open.node.as_str()));
        attrs.push(kv_int(attr::ATTEMPT, i64::from(open.attempt)));
        if let Some(gk) = &open.gatekeeper {
            attrs.push(kv(attr::GATEKEEPER_STATUS, gk));
        }
        if let Some(v) = &open.verdicts {
            verdict_attrs(&mut attrs, v);
        }
        let status = match finished {
            Some((outcome, reason, next, detail)) => {
                attrs.push(kv(attr::OUTCOME, outcome.as_str()));
                attrs.push(kv(attr::REASON_CODE, reason.as_str()));
                attrs.push(kv(attr::NEXT_NODE, next.as_str()));
                if is_failure(outcome) {
                    attrs.push(kv(attr::ERROR_TYPE, outcome.as_str()));
                    error(if detail.is_empty() {
                        outcome.as_str()
                    } else {
                        detail
                    })
                } else {
                    ok()
                }
            }
            None => {
                if let Some(via) = open.via {
                    attrs.push(kv(attr::REASON_CODE, via.as_str()));
                }
                attrs.push(kv(attr::ERROR_TYPE, "unfinished"));
                error("the run ended before this node finished")
            }
        };
        let span = self.span(Parts {
            id: open.id,
            parent: Some(self.root),
            name,
            kind: SpanKind::Internal,
            times: (open.start_ms, end_ms),
            attributes: attrs,
            status,
        });
        self.spans.push(span);
    }

    fn chat(&mut self, call: ModelCall<'_>) {
        let ModelCall {
            key,
            parent,
            role,
            attempt,
            step_id,
            times: (start_ms, end_ms),
            tokens,
            usage,
            error: error_message,
        } = call;
        let (provider, model, kind) = provider_and_model(&self.model);
        let mut attrs = vec![
            kv(attr::OPERATION, "chat"),
            kv(attr::PROVIDER, provider),
            kv(attr::REQUEST_MODEL, model),
            kv(attr::AGENT_NAME, role),
            self.conversation(),
            kv_int(attr::ATTEMPT, i64::from(attempt)),
            kv_int(attr::STEP_ID, step_id),
            kv_int(attr::TOTAL_TOKENS, int(tokens)),
        ];
        // The GenAI conventions' input/output split; a call recorded
        // without one (an old journal) carries only the total.
        if let Some(u) = usage.filter(|u| u.total() > 0) {
            attrs.push(kv_int(attr::INPUT_TOKENS, int(u.prompt_tokens)));
            attrs.push(kv_int(attr::OUTPUT_TOKENS, int(u.completion_tokens)));
        }
        let status = match error_message {
            Some(e) => {
                attrs.push(kv(attr::ERROR_TYPE, "model_error"));
                error(e)
            }
            None => ok(),
        };
        let span = self.span(Parts {
            id: span_id(&self.trace_id, &key),
            parent: Some(parent),
            name: format!("chat {model}"),
            kind,
            times: (start_ms, end_ms),
            attributes: attrs,
            status,
        });
        self.spans.push(span);
    }

    fn tool(&mut self, inv: &ToolInvocation, parent: [u8; 8], (start_ms, end_ms): (u64, u64)) {
        let details = &inv.retrieval_details;
        let mut attrs = vec![
            kv(attr::OPERATION, "execute_tool"),
            kv(attr::TOOL_NAME, &inv.tool_name),
            kv(attr::TOOL_CALL_ID, &inv.id.to_string()),
            kv(attr::TOOL_TYPE, "function"),
            kv(attr::EVIDENCE_STATUS, details.evidence_status.as_str()),
            kv_int(
                attr::EVIDENCE_REFS,
                i64::try_from(details.evidence_refs.len()).unwrap_or(i64::MAX),
            ),
        ];
        if let Some(from) = details.deduped_from {
            attrs.push(kv_int(attr::DEDUPED_FROM, from));
        }
        if !details.source.backend.is_empty() {
            attrs.push(kv(attr::TOOL_BACKEND, &details.source.backend));
        }
        if let Some(partial) = &details.source.partial {
            attrs.push(kv(attr::TOOL_PARTIAL, &clean(partial, 300)));
        }
        let status = if inv.success {
            ok()
        } else {
            let class = match (details.blocked, details.source.failure_class) {
                (true, _) => "blocked",
                (false, Some(class)) => class.as_str(),
                (false, None) => "_OTHER",
            };
            attrs.push(kv(attr::ERROR_TYPE, class));
            error(
                inv.error_message
                    .as_deref()
                    .unwrap_or("the tool call failed"),
            )
        };
        let span = self.span(Parts {
            id: span_id(&self.trace_id, &format!("tool:{}", inv.id)),
            parent: Some(parent),
            name: format!("execute_tool {}", inv.tool_name),
            kind: SpanKind::Internal,
            times: (start_ms, end_ms),
            attributes: attrs,
            status,
        });
        self.spans.push(span);
    }

    fn root_span(&self, failure_class: Option<&str>) -> Span {
        let run = &self.trace.run;
        let mut attrs = vec![
            kv(attr::OPERATION, "invoke_workflow"),
            kv(attr::AGENT_NAME, WORKFLOW),
            kv(attr::WORKFLOW_NAME, WORKFLOW),
            self.conversation(),
            kv_int(attr::RUN_ID, run.run_id),
            kv(attr::RUN_STATUS, run.status.as_str()),
            kv_bool(attr::DEGRADED, run.degraded),
            kv_int(attr::TOTAL_TOKENS, run.total_token_count),
        ];
        if let Some(v) = &run.verdicts {
            verdict_attrs(&mut attrs, v);
        }
        if !attrs.iter().any(|a| a.key == attr::EFFECTIVE)
            && let Some(e) = run.effective_verdict
        {
            attrs.push(kv(attr::EFFECTIVE, e.as_str()));
        }
        if let Some(gk) = &run.gatekeeper_result {
            attrs.push(kv(attr::GATEKEEPER_STATUS, &gk.status));
        }
        if let Some(t) = run.orchestration_trace() {
            if let Some(reason) = t.termination_reason {
                attrs.push(kv(attr::REASON_CODE, reason.as_str()));
            }
            attrs.push(kv_int(
                attr::EVIDENCE_RETRIES,
                i64::from(t.evidence_retry_count),
            ));
        }
        if let Some(route) = &run.route {
            let names: Vec<&str> = route.iter().map(|n| n.as_str()).collect();
            attrs.push(kv_strings(attr::ROUTE, &names));
        }
        // The stored failure names what stopped or degraded the run; a
        // run recorded before it existed has the journal's, or a bare
        // message.
        let class = run
            .failure
            .as_ref()
            .map(|f| f.class.as_str())
            .or(failure_class);
        if let Some(class) = class {
            attrs.push(kv(attr::FAILURE_CLASS, class));
        }
        let status = match run.status {
            RunStatus::Failed | RunStatus::Cancelled => {
                attrs.push(kv(attr::ERROR_TYPE, class.unwrap_or("_OTHER")));
                let message = run
                    .failure
                    .as_ref()
                    .map(|f| f.message.as_str())
                    .or(run.failure_reason.as_deref())
                    .unwrap_or(run.status.as_str());
                error(message)
            }
            RunStatus::Running | RunStatus::Success => ok(),
        };
        self.span(Parts {
            id: self.root,
            parent: None,
            name: format!("invoke_workflow {WORKFLOW}"),
            kind: SpanKind::Internal,
            times: (0, self.end),
            attributes: attrs,
            status,
        })
    }
}

/// Every span of the run: the root first, then node, model-call and tool
/// spans in the order they started. Without a journal (a run recorded by
/// an older diagraph) the model calls and tool invocations come from the
/// stored rows instead, directly under the root.
pub fn run_spans(trace: &RunTrace, events: &[EngineEvent]) -> Vec<Span> {
    let run = &trace.run;
    let t0 = epoch_ms(&run.created_at).unwrap_or(0);
    let last_event = events.iter().map(|e| e.at_ms).max().unwrap_or(0);
    let end = run
        .finished_at
        .as_deref()
        .and_then(epoch_ms)
        .map(|f| f.saturating_sub(t0))
        .or_else(|| run.total_duration_ms.and_then(|d| u64::try_from(d).ok()))
        .unwrap_or(0)
        .max(last_event);
    let trace_id = trace_id(trace);
    let mut model = run.model.clone();
    for e in events {
        if let EventKind::RunStarted { model: m, .. } = &e.kind {
            model.clone_from(m);
        }
    }
    let mut b = Builder {
        trace,
        trace_id,
        root: span_id(&trace_id, "run"),
        t0,
        end,
        model,
        spans: Vec::with_capacity(events.len() / 2 + trace.tool_invocations.len() + 1),
    };
    let mut failure_class = None;
    if events.is_empty() {
        from_rows(&mut b);
    } else {
        let mut open: Option<OpenNode> = None;
        for e in events {
            let parent = open.as_ref().map_or(b.root, |o| o.id);
            match &e.kind {
                EventKind::NodeEntered { node, attempt, via } => {
                    if let Some(o) = open.take() {
                        b.close_node(o, e.at_ms, None);
                    }
                    open = Some(OpenNode {
                        node: *node,
                        attempt: *attempt,
                        via: *via,
                        start_ms: e.at_ms,
                        id: span_id(&trace_id, &format!("node:{}", e.seq)),
                        gatekeeper: None,
                        verdicts: None,
                    });
                }
                EventKind::NodeFinished {
                    outcome,
                    reason_code,
                    next,
                    detail,
                    ..
                } => {
                    if let Some(o) = open.take() {
                        b.close_node(o, e.at_ms, Some((*outcome, *reason_code, *next, detail)));
                    }
                }
                EventKind::ModelCalled {
                    role,
                    attempt,
                    step_id,
                    duration_ms,
                    tokens,
                    error,
                    usage,
                    ..
                } => b.chat(ModelCall {
                    key: format!("chat:{}", e.seq),
                    parent,
                    role: role.as_str(),
                    attempt: *attempt,
                    step_id: *step_id,
                    times: (e.at_ms.saturating_sub(*duration_ms), e.at_ms),
                    tokens: *tokens,
                    usage: *usage,
                    error: error.as_deref(),
                }),
                EventKind::ToolInvoked { invocation } => b.tool(
                    invocation,
                    parent,
                    (e.at_ms.saturating_sub(invocation.duration_ms), e.at_ms),
                ),
                EventKind::GatekeeperChecked { result } => {
                    if let Some(o) = open.as_mut() {
                        o.gatekeeper = Some(result.status.clone());
                    }
                }
                EventKind::VerdictUpdated(v) => match open.as_mut() {
                    Some(o) => o.verdicts = Some(*v),
                    // The engine updates the verdicts as it leaves the node
                    // that changed them (the Verifier): they are that
                    // node's.
                    None => {
                        if let Some(span) = b
                            .spans
                            .iter_mut()
                            .rev()
                            .find(|s| s.parent_span_id == b.root.to_vec())
                        {
                            verdict_attrs(&mut span.attributes, v);
                        }
                    }
                },
                EventKind::RunFinished(end) => {
                    failure_class = end.failure.as_ref().map(|f| f.class.as_str());
                }
                EventKind::RunStarted { .. } => {}
            }
        }
        if let Some(o) = open.take() {
            b.close_node(o, end, None);
        }
    }
    let root = b.root_span(failure_class);
    let mut spans = Vec::with_capacity(b.spans.len() + 1);
    spans.push(root);
    b.spans.sort_by_key(|s| s.start_time_unix_nano);
    spans.append(&mut b.spans);
    spans
}

/// Model calls and tool invocations from the stored rows, timed by their
/// creation (the end of the call) and duration.
fn from_rows(b: &mut Builder<'_>) {
    let t0 = b.t0;
    let trace = b.trace;
    let rel = |at: &str| epoch_ms(at).map_or(0, |ms| ms.saturating_sub(t0));
    let root = b.root;
    for step in &trace.steps {
        let end = rel(&step.created_at);
        let duration = u64::try_from(step.duration_ms).unwrap_or(0);
        b.chat(ModelCall {
            key: format!("step:{}", step.id),
            parent: root,
            role: &step.agent_name,
            attempt: u32::try_from(step.attempt).unwrap_or(0),
            step_id: step.id,
            times: (end.saturating_sub(duration), end),
            tokens: u64::try_from(step.token_count).unwrap_or(0),
            usage: Some(step.usage),
            error: step.error.as_deref(),
        });
    }
    for row in &trace.tool_invocations {
        let end = rel(&row.created_at);
        let duration = u64::try_from(row.duration_ms).unwrap_or(0);
        let inv = ToolInvocation {
            id: row.id,
            tool_name: row.tool_name.clone(),
            duration_ms: duration,
            success: row.success,
            error_message: row.error_message.clone(),
            retrieval_details: match row.retrieval_details.typed() {
                Some(d) => d.clone(),
                None => ToolInvocation::placeholder(row.run_id, 0).retrieval_details,
            },
            ..ToolInvocation::placeholder(row.run_id, 0)
        };
        b.tool(&inv, root, (end.saturating_sub(duration), end));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_are_read_from_the_model_name() {
        assert_eq!(
            provider_and_model("openai:gpt-4o-mini"),
            ("openai", "gpt-4o-mini", SpanKind::Client)
        );
        assert_eq!(
            provider_and_model("offline (rule-based)"),
            ("diagraph", "offline (rule-based)", SpanKind::Internal)
        );
    }

    #[test]
    fn ids_are_never_all_zero() {
        let mut id = [0u8; 8];
        nonzero(&mut id);
        assert_ne!(id, [0u8; 8]);
        let mut id = [3u8; 8];
        nonzero(&mut id);
        assert_eq!(id, [3u8; 8]);
    }

    #[test]
    fn times_parse_from_the_stored_format() {
        assert_eq!(epoch_ms("1970-01-01T00:00:01.500Z"), Some(1500));
        assert_eq!(epoch_ms("not a time"), None);
    }
}

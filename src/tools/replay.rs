//! Replayed tools (`diagraph rerun`): a stored run's tool results served
//! again, with no network and no pack read.
//!
//! Each tool the new run can reach is wrapped: a call whose (tool,
//! arguments) the stored run answered gets that answer back, in the
//! order they were recorded: the same evidence refs, evidence status,
//! partial note, or the same failure (class and message). Invocations
//! the stored run never sent to a tool (blocked, deduped) are not served:
//! the run's invoker decides those again itself. Once the run has gone
//! live (`--from NODE`, [`ReplayState::is_live`]) calls reach the real
//! tool. A call the recording does not answer while replaying fails as an
//! unreadable source and is noted as missing, so the rerun is refused
//! rather than silently reading the pack. A replayed tool reports the
//! backend that served the stored run (the results are its), and the
//! tools the stored run was refused stay refused.

use crate::model::replay::ReplayState;
use crate::tools::{Tool, ToolError, ToolOutput, ToolRegistry};
use crate::vocab::run::FailureClass;
use crate::vocab::run_trace::RunTrace;
use crate::vocab::tool::{EvidenceStatus, ToolSpec};
use async_trait::async_trait;
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One answer the stored run got from a tool.
#[derive(Debug, Clone)]
struct Served {
    tool: String,
    arguments: Map<String, Value>,
    result: Result<ToolOutput, ToolError>,
    taken: bool,
}

/// The stored run's tool answers, shared by its replayed tools.
#[derive(Debug, Default)]
pub struct RecordedResults {
    run_id: i64,
    served: Mutex<Vec<Served>>,
    /// Tools the stored run's invoker blocked, and whether because they
    /// did not exist (else: not permitted). A rerun keeps those decisions.
    blocked: Vec<(String, bool)>,
}

impl RecordedResults {
    /// The answers of a stored run; an invocation whose details no longer
    /// parse as this version's is an error naming it.
    pub fn from_trace(trace: &RunTrace) -> Result<RecordedResults, String> {
        let mut invocations: Vec<_> = trace.tool_invocations.iter().collect();
        invocations.sort_by_key(|i| (i.seq, i.id));
        let mut served = Vec::new();
        let mut blocked = Vec::new();
        for inv in invocations {
            let Some(details) = inv.retrieval_details.typed() else {
                return Err(format!(
                    "invocation {} has retrieval details this version cannot read",
                    inv.id
                ));
            };
            if details.blocked {
                // The invoker's own words (`engine::invoker`) say which.
                let unknown = inv
                    .error_message
                    .as_deref()
                    .is_some_and(|m| m.ends_with("does not exist"));
                blocked.push((inv.tool_name.clone(), unknown));
                continue;
            }
            if details.evidence_status == EvidenceStatus::Deduped {
                continue;
            }
            let Value::Object(arguments) = &inv.input_params else {
                // Arguments that were not a JSON object never reached the tool.
                continue;
            };
            let result = match inv.failure() {
                Some(failure) => Err(tool_error(
                    failure.class,
                    failure.message,
                    u64::try_from(inv.duration_ms).unwrap_or(0),
                )),
                None => Ok(ToolOutput {
                    // The model saw the whole body; the row keeps a preview,
                    // which is what a replay can show. Refs are what count.
                    body: serde_json::from_str(&inv.output_preview)
                        .unwrap_or_else(|_| serde_json::json!({ "preview": inv.output_preview })),
                    evidence_status: details.evidence_status,
                    evidence_refs: details.evidence_refs.clone(),
                    retrieved_domains: details.retrieved_domains.clone(),
                    partial: details.source.partial.clone(),
                    buckets: details.buckets.clone(),
                }),
            };
            served.push(Served {
                tool: inv.tool_name.clone(),
                arguments: arguments.clone(),
                result,
                taken: false,
            });
        }
        Ok(RecordedResults {
            run_id: trace.run.run_id,
            served: Mutex::new(served),
            blocked,
        })
    }

    /// The next recorded answer to this (tool, arguments), once each.
    fn take(&self, tool: &str, args: &Map<String, Value>) -> Option<Result<ToolOutput, ToolError>> {
        let mut served = self.served.lock().unwrap_or_else(|e| e.into_inner());
        let s = served
            .iter_mut()
            .find(|s| !s.taken && s.tool == tool && &s.arguments == args)?;
        s.taken = true;
        Some(s.result.clone())
    }

    /// Tools the stored run called or was refused as not permitted: they
    /// existed then.
    fn tool_names(&self) -> Vec<String> {
        let served = self.served.lock().unwrap_or_else(|e| e.into_inner());
        let mut names: Vec<String> = served.iter().map(|s| s.tool.clone()).collect();
        names.extend(
            self.blocked
                .iter()
                .filter(|(_, unknown)| !unknown)
                .map(|(t, _)| t.clone()),
        );
        names.sort();
        names.dedup();
        names
    }

    /// Tools the stored run was refused because they did not exist.
    fn unknown_tools(&self) -> impl Iterator<Item = &str> {
        self.blocked
            .iter()
            .filter(|(_, unknown)| *unknown)
            .map(|(t, _)| t.as_str())
    }

    /// Tools the stored run was refused as not permitted.
    pub fn unpermitted_tools(&self) -> impl Iterator<Item = &str> {
        self.blocked
            .iter()
            .filter(|(_, unknown)| !unknown)
            .map(|(t, _)| t.as_str())
    }
}

/// The error a recorded failure becomes, keeping its class and message.
fn tool_error(class: FailureClass, message: String, duration_ms: u64) -> ToolError {
    match class {
        FailureClass::Connection => ToolError::Unavailable(message),
        FailureClass::Timeout => ToolError::Timeout(duration_ms),
        FailureClass::Unauthorized => ToolError::Status {
            status: 401,
            message,
        },
        FailureClass::Forbidden => ToolError::Status {
            status: 403,
            message,
        },
        FailureClass::RateLimited => ToolError::Status {
            status: 429,
            message,
        },
        FailureClass::InvalidOutput => ToolError::InvalidArguments(
            message
                .strip_prefix("invalid arguments: ")
                .unwrap_or(&message)
                .to_string(),
        ),
        FailureClass::SourceUnreadable => ToolError::Unreadable(message),
        FailureClass::ServerError => ToolError::Status {
            status: 500,
            message,
        },
        _ => ToolError::BadResponse(message),
    }
}

/// One tool of a rerun: the recording first, the real tool once live.
pub struct ReplayTool {
    spec: ToolSpec,
    /// The backend that served this tool for the stored run: the results
    /// are its, and an answer naming it reads as it read then.
    recorded_backend: Option<String>,
    real: Option<Arc<dyn Tool>>,
    recorded: Arc<RecordedResults>,
    state: Arc<ReplayState>,
}

#[async_trait]
impl Tool for ReplayTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    async fn call(&self, args: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
        if self.state.is_live() {
            return match &self.real {
                Some(tool) => tool.call(args).await,
                None => Err(ToolError::Unavailable(format!(
                    "tool {} is not configured here",
                    self.spec.name
                ))),
            };
        }
        if let Some(result) = self.recorded.take(&self.spec.name, args) {
            return result;
        }
        let what = format!(
            "run {} recorded no {} call with these arguments to replay",
            self.recorded.run_id, self.spec.name
        );
        self.state.note_missing(what.clone());
        Err(ToolError::Unreadable(what))
    }

    fn backend(&self) -> String {
        if let Some(b) = &self.recorded_backend {
            return b.clone();
        }
        match &self.real {
            Some(tool) => format!(
                "replay:run/{}, else {}",
                self.recorded.run_id,
                tool.backend()
            ),
            None => format!("replay:run/{}", self.recorded.run_id),
        }
    }

    fn pack(&self) -> Option<&Arc<crate::tools::pack::Pack>> {
        self.real.as_ref().and_then(|t| t.pack())
    }

    fn timeout(&self) -> Option<Duration> {
        self.real.as_ref().and_then(|t| t.timeout())
    }
}

/// The registry of a rerun: every real tool wrapped, plus the tools the
/// stored run had that are not configured here (served from the
/// recording only, with a bare spec), less the tools that did not exist
/// for the stored run.
pub fn replay_registry(
    real: &ToolRegistry,
    recorded: Arc<RecordedResults>,
    backends: &std::collections::BTreeMap<String, String>,
    state: Arc<ReplayState>,
) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    let mut names: Vec<String> = real.names().map(str::to_string).collect();
    names.extend(recorded.tool_names());
    names.sort();
    names.dedup();
    names.retain(|n| !recorded.unknown_tools().any(|u| u == n));
    for name in names {
        let tool = real.get(&name).cloned();
        let spec = match &tool {
            Some(t) => t.spec(),
            None => ToolSpec {
                name: name.clone(),
                description: format!("{name} (served from a stored run)"),
                parameters: serde_json::json!({"type": "object"}),
                // Unknown here: the Gatekeeper holds its refs to the shape.
                evidence_arrays: vec![],
            },
        };
        registry.register(Arc::new(ReplayTool {
            spec,
            recorded_backend: backends.get(&name).cloned(),
            real: tool,
            recorded: Arc::clone(&recorded),
            state: Arc::clone(&state),
        }));
    }
    registry
}

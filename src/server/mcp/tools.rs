//! The tools `diagraph mcp` offers: their names, descriptions and JSON
//! schemas (what an MCP client and the model behind it read to decide how
//! to call them), and the parsing of their arguments.
//!
//! The descriptions say what a verdict means, because the model reading
//! them decides from that how far to trust an answer.

use rmcp::ErrorData;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;

pub const DIAGNOSE: &str = "diagnose";
pub const GET_RUN_TRACE: &str = "get_run_trace";
pub const LIST_RUNS: &str = "list_runs";

/// The longest accepted session id (the column's width, as `POST /api/chat`).
pub const MAX_SESSION_ID: usize = 128;

/// What the verdict means, said once for every description.
pub const VERDICTS: &str = "effective_verdict is what the code allows the answer to claim, \
the lower of the Verifier's verdict and a ceiling the code sets from what the evidence gate \
checked: PASS = every finding rests on tool output the Gatekeeper traced to a recorded tool \
call of this run and the Verifier accepted; LOW_CONFID = some findings are verified but the \
evidence is incomplete or some sources could not be checked, so treat the answer as a lead, \
not a root cause; REJECT = nothing could be verified; null = the run ended before \
verification. degraded = true means the answer is a fallback that states no root cause \
(only what could and could not be checked). Findings not in citations are not verified.";

const DIAGNOSE_DESCRIPTION: &str = "Diagnose an incident from a question (\"why is \
payment-service slow?\"). Runs diagraph's evidence-gated diagnosis: a planner, an executor \
that queries alerts, logs and runbooks, a code-level Gatekeeper that checks every evidence \
citation against the recorded tool calls, a verifier and a composer. Returns the answer, \
the verdict, whether it is degraded, the verified citations (tool, invocation_id, raw_path, \
excerpt: each one a recorded tool result the answer rests on) and the run id for \
get_run_trace. Sends progress notifications while it runs.";

fn diagnose_description() -> String {
    format!("{DIAGNOSE_DESCRIPTION} {VERDICTS}")
}

const GET_RUN_TRACE_DESCRIPTION: &str = "The full audit record of one diagnosis run, by \
run_id: the run (status, answer, verdicts, the orchestration trace of the graph's route), \
every agent step and every tool invocation with its evidence refs.";

const LIST_RUNS_DESCRIPTION: &str = "Recent diagnosis runs, newest first: run_id, session_id, \
status (RUNNING, SUCCESS, FAILED, CANCELLED), effective_verdict, degraded, duration, question \
and time. Page with `before` (the next_before of the previous page).";

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn read_only() -> ToolAnnotations {
    ToolAnnotations::new().read_only(true).open_world(false)
}

/// The three tools, in the order `tools/list` shows them.
pub fn all() -> Vec<Tool> {
    vec![
        Tool::new(
            DIAGNOSE,
            diagnose_description(),
            object(json!({
                "type": "object",
                "properties": {
                    "question": {
                        "type": "string",
                        "description": "What to diagnose, in English or Chinese."
                    },
                    "session_id": {
                        "type": "string",
                        "maxLength": MAX_SESSION_ID,
                        "description": "Continue this session: its earlier turns are given to the planner and executor."
                    },
                    "pack": {
                        "type": "string",
                        "description": "A pack directory on the server's machine to serve the tools (alerts, logs, runbooks) instead of the configured one."
                    }
                },
                "required": ["question"],
                "additionalProperties": false
            })),
        )
        .with_title("Evidence-gated incident diagnosis")
        .with_raw_output_schema(object(diagnose_output_schema()))
        .with_annotations(ToolAnnotations::new().read_only(false).open_world(true)),
        Tool::new(
            GET_RUN_TRACE,
            GET_RUN_TRACE_DESCRIPTION,
            object(json!({
                "type": "object",
                "properties": {
                    "run_id": {"type": "integer", "minimum": 1, "description": "The run id diagnose or list_runs returned."}
                },
                "required": ["run_id"],
                "additionalProperties": false
            })),
        )
        .with_title("Run trace")
        .with_annotations(read_only()),
        Tool::new(
            LIST_RUNS,
            LIST_RUNS_DESCRIPTION,
            object(json!({
                "type": "object",
                "properties": {
                    "limit": {"type": "integer", "minimum": 1, "maximum": crate::server::api::MAX_PAGE, "description": "How many runs (default 20)."},
                    "before": {"type": "integer", "description": "Only runs with a smaller id."},
                    "status": {"type": "string", "enum": ["RUNNING", "SUCCESS", "FAILED", "CANCELLED"]},
                    "session_id": {"type": "string"}
                },
                "additionalProperties": false
            })),
        )
        .with_title("Recent runs")
        .with_annotations(read_only()),
    ]
}

/// The shape of `diagnose`'s `structuredContent`.
fn diagnose_output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "run_id": {"type": "integer"},
            "session_id": {"type": "string"},
            "status": {"type": "string", "enum": ["SUCCESS", "FAILED", "CANCELLED"]},
            "answer": {"type": "string"},
            "effective_verdict": {"type": ["string", "null"], "enum": ["PASS", "LOW_CONFID", "REJECT", null]},
            "degraded": {"type": "boolean"},
            "citations": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "claim_id": {"type": "string"},
                        "tool": {"type": "string"},
                        "invocation_id": {"type": "integer"},
                        "raw_path": {"type": "string"},
                        "excerpt": {"type": "string"}
                    },
                    "required": ["tool", "invocation_id", "raw_path", "excerpt"]
                }
            },
            "failure": {
                "type": "object",
                "properties": {"class": {"type": "string"}, "message": {"type": "string"}}
            },
            "failed_sources": {"type": "array"}
        },
        "required": ["run_id", "session_id", "status", "answer", "effective_verdict", "degraded", "citations"]
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiagnoseArgs {
    pub question: String,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub pack: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceArgs {
    pub run_id: i64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub before: Option<i64>,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
}

/// A tool's arguments, or an `invalid_params` error naming the tool and
/// what serde found wrong (a missing field, an unknown one, a wrong type).
pub fn parse<T: for<'de> Deserialize<'de>>(
    tool: &str,
    arguments: Option<JsonObject>,
) -> Result<T, ErrorData> {
    let value = Value::Object(arguments.unwrap_or_default());
    serde_json::from_value(value).map_err(|e| {
        ErrorData::invalid_params(
            format!(
                "invalid arguments for {tool}: {}",
                crate::text::error_line(&e)
            ),
            None,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_schema_and_a_description() {
        let tools = all();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, [DIAGNOSE, GET_RUN_TRACE, LIST_RUNS]);
        for t in &tools {
            assert_eq!(t.input_schema.get("type"), Some(&json!("object")));
            assert!(t.description.as_deref().is_some_and(|d| d.len() > 40));
        }
        let d = tools[0].description.as_deref().unwrap_or_default();
        for word in ["PASS", "LOW_CONFID", "REJECT", "degraded"] {
            assert!(d.contains(word), "{word}");
        }
    }

    #[test]
    fn bad_arguments_are_invalid_params_that_say_what_is_wrong() {
        let args = |v: Value| match v {
            Value::Object(m) => Some(m),
            _ => None,
        };
        let e = parse::<DiagnoseArgs>(DIAGNOSE, None).unwrap_err();
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(
            e.message.contains("missing field `question`"),
            "{}",
            e.message
        );
        let e =
            parse::<DiagnoseArgs>(DIAGNOSE, args(json!({"question": "q", "x": 1}))).unwrap_err();
        assert!(e.message.contains("unknown field `x`"), "{}", e.message);
        let e = parse::<TraceArgs>(GET_RUN_TRACE, args(json!({"run_id": "seven"}))).unwrap_err();
        assert!(e.message.contains("get_run_trace"), "{}", e.message);
        let ok = parse::<ListArgs>(LIST_RUNS, None).unwrap();
        assert!(ok.limit.is_none());
    }
}

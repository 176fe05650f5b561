//! Scenario files (`fixtures/scenarios/*.toml`): a question, a pack, an
//! optional expected route and scripted model responses. They drive the
//! demo mode and the route tests, so a scenario names what it demonstrates.
//! The keys a file may use are the fields of `RawScenario`, `RawEntry`,
//! `RawToolCall` and `RawFaults` below; `model::scripted` says how a
//! script is replayed.
//!
//! Scenario files are user input: every load error is one line naming the
//! file and the problem.

use crate::engine::{Engine, FaultInjection, RunRequest};
use crate::model::scripted::{ScriptEntry, ScriptReply, ScriptToolCall, resolve_calls};
use crate::model::{ChatModel, ModelErrorKind};
use crate::text::one_line;
use crate::tools::pack::Pack;
use crate::vocab::agent::AgentRole;
use crate::vocab::graph::NodeId;
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub path: PathBuf,
    pub name: String,
    pub description: String,
    /// Resolved against the scenario file's directory.
    pub pack: PathBuf,
    pub question: String,
    pub session: Option<String>,
    pub expect_route: Option<Vec<NodeId>>,
    pub tool_permissions: Option<Vec<String>>,
    /// `[faults] gatekeeper_result`: JSON when it parses, else the raw text
    /// (which the engine treats as an unknown result).
    pub gatekeeper_fault: Option<Value>,
    pub script: Vec<ScriptEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: String,
    description: String,
    pack: String,
    question: String,
    session: Option<String>,
    expect_route: Option<Vec<String>>,
    tool_permissions: Option<Vec<String>>,
    faults: Option<RawFaults>,
    #[serde(default)]
    script: Vec<RawEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFaults {
    gatekeeper_result: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    role: String,
    call: Option<i64>,
    text: Option<String>,
    tool_calls: Option<Vec<RawToolCall>>,
    error: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToolCall {
    name: String,
    #[serde(default)]
    arguments: Option<toml::Value>,
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset.min(text.len()))
        .map_or(1, |t| t.matches('\n').count() + 1)
}

impl Scenario {
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let err = |message: String| ScenarioError {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(format!("cannot read: {e}")))?;
        Self::parse(path, &text).map_err(err)
    }

    /// Parses scenario text as if it were at `path` (the pack resolves
    /// against its directory).
    pub fn parse(path: &Path, text: &str) -> Result<Scenario, String> {
        let raw: RawScenario = toml::from_str(text).map_err(|e| match e.span() {
            Some(span) => format!(
                "line {}: {}",
                line_of(text, span.start),
                one_line(e.message())
            ),
            None => one_line(e.message()),
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        let pack = base.join(&raw.pack);
        if !pack.is_dir() {
            return Err(format!("pack directory {} does not exist", pack.display()));
        }
        let expect_route = match raw.expect_route {
            None => None,
            Some(names) => Some(
                names
                    .iter()
                    .map(|n| {
                        NodeId::parse(n).ok_or_else(|| format!("expect_route: unknown node {n:?}"))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        let mut script = Vec::with_capacity(raw.script.len());
        for (i, e) in raw.script.into_iter().enumerate() {
            script.push(entry(i + 1, e)?);
        }
        resolve_calls(&script)?;
        let gatekeeper_fault = raw
            .faults
            .and_then(|f| f.gatekeeper_result)
            .map(|t| serde_json::from_str::<Value>(&t).unwrap_or(Value::String(t)));
        Ok(Scenario {
            path: path.to_path_buf(),
            name: raw.name,
            description: raw.description,
            pack,
            question: raw.question,
            session: raw.session,
            expect_route,
            tool_permissions: raw.tool_permissions,
            gatekeeper_fault,
            script,
        })
    }

    /// Every `*.toml` in `dir`, sorted by file name, each loaded or not.
    pub fn list(dir: &Path) -> Vec<(PathBuf, Result<Scenario, ScenarioError>)> {
        let mut paths: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(rd) => rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect(),
            Err(_) => vec![],
        };
        paths.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
        paths
            .into_iter()
            .map(|p| {
                let s = Scenario::load(&p);
                (p, s)
            })
            .collect()
    }

    /// An engine for this scenario: `base`'s recorder, prompts, rules and
    /// config, the scenario pack's tools and catalog, and a scripted model
    /// over `fallthrough`. A live backend of `base` (one that is not a
    /// pack) keeps serving its tool; the scenario's pack serves the rest.
    pub fn engine(
        &self,
        base: &Engine,
        fallthrough: Arc<dyn ChatModel>,
    ) -> Result<Engine, ScenarioError> {
        let pack = Pack::load(&self.pack).map_err(|e| ScenarioError {
            path: self.path.display().to_string(),
            message: one_line(&e.to_string()),
        })?;
        Ok(self.engine_with_pack(base, fallthrough, Arc::new(pack)))
    }

    /// Like [`Scenario::engine`] with an already loaded pack (tests and
    /// benchmarks load it once).
    pub fn engine_with_pack(
        &self,
        base: &Engine,
        fallthrough: Arc<dyn ChatModel>,
        pack: Arc<Pack>,
    ) -> Engine {
        let on_pack = base.on_pack(pack);
        let mut config = base.config.clone();
        if let Some(p) = &self.tool_permissions {
            config.tool_permissions = p.clone();
            config.permit_late_tools = false;
        }
        let model = crate::model::scripted::ScriptedModel::new(self.script.clone(), fallthrough)
            .with_recorder(base.recorder.clone());
        Engine {
            model: Arc::new(model),
            config,
            ..on_pack
        }
    }

    /// The run request: question, session, scenario name, pack and faults.
    pub fn request(&self) -> RunRequest {
        let mut r = RunRequest::new(self.question.clone());
        r.session_id = self.session.clone();
        r.scenario = Some(self.name.clone());
        r.pack = Some(self.pack.display().to_string());
        r.faults = FaultInjection {
            gatekeeper_result: self.gatekeeper_fault.clone(),
        };
        r
    }
}

fn entry(index: usize, e: RawEntry) -> Result<ScriptEntry, String> {
    let role = AgentRole::parse(&e.role).ok_or_else(|| {
        format!(
            "script entry {index}: unknown role {:?} (planner, executor, verifier, composer)",
            e.role
        )
    })?;
    let call = match e.call {
        None => None,
        Some(n) if n >= 1 => Some(
            u32::try_from(n).map_err(|_| format!("script entry {index}: call {n} is too large"))?,
        ),
        Some(n) => return Err(format!("script entry {index}: call must be >= 1, got {n}")),
    };
    let reply = match (e.text, e.tool_calls, e.error) {
        (Some(t), None, None) => ScriptReply::Text(t),
        (None, Some(calls), None) => ScriptReply::ToolCalls(
            calls
                .into_iter()
                .map(|c| ScriptToolCall {
                    name: c.name,
                    arguments: c
                        .arguments
                        .and_then(|a| serde_json::to_value(a).ok())
                        .unwrap_or(Value::Object(Default::default())),
                })
                .collect(),
        ),
        (None, None, Some(kind)) => {
            let k = crate::model::scripted::SCRIPT_ERROR_KINDS
                .contains(&kind.as_str())
                .then(|| ModelErrorKind::parse(&kind))
                .flatten()
                .ok_or_else(|| {
                    format!(
                        "script entry {index}: unknown error kind {kind:?} (timeout, rate_limited, server_error, unauthorized, bad_request)"
                    )
                })?;
            ScriptReply::Error(k)
        }
        (None, None, None) => {
            return Err(format!(
                "script entry {index}: needs one of text, tool_calls, error"
            ));
        }
        _ => {
            return Err(format!(
                "script entry {index}: has more than one of text, tool_calls, error"
            ));
        }
    };
    Ok(ScriptEntry { role, call, reply })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Scenario, String> {
        let dir = std::env::temp_dir();
        Scenario::parse(&dir.join("x.toml"), &format!("pack = \".\"\n{text}"))
    }

    const HEAD: &str = "name = \"n\"\ndescription = \"d\"\nquestion = \"q\"\n";

    #[test]
    fn load_errors_are_one_line_and_name_the_problem() {
        let cases = [
            (
                "[[script]]\nrole = \"critic\"\ntext = \"x\"\n",
                "unknown role",
            ),
            (
                "[[script]]\nrole = \"planner\"\ntext = \"x\"\nerror = \"timeout\"\n",
                "more than one",
            ),
            (
                "[[script]]\nrole = \"planner\"\nerror = \"boom\"\n",
                "unknown error kind",
            ),
            ("expect_route = [\"planner\", \"judge\"]\n", "unknown node"),
            ("[[script]\nrole = 1\n", "line 5"),
            ("[[script]]\nrole = \"planner\"\n", "needs one of"),
        ];
        for (body, want) in cases {
            let e = parse(&format!("{HEAD}{body}")).unwrap_err();
            assert!(e.contains(want), "{e:?} should mention {want:?}");
            assert!(!e.contains('\n'), "{e:?}");
        }
        let e = Scenario::parse(
            Path::new("/nonexistent/x.toml"),
            &format!("pack = \"nope\"\n{HEAD}"),
        )
        .unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
    }

    #[test]
    fn parses_script_entries_and_faults() {
        let s = parse(&format!(
            "{HEAD}expect_route = [\"planner\", \"fallback\"]\n[faults]\ngatekeeper_result = '{{\"status\": \"maybe\"}}'\n\
             [[script]]\nrole = \"executor\"\ntool_calls = [{{ name = \"query_logs\", arguments = {{ service = \"a\" }} }}]\n\
             [[script]]\nrole = \"planner\"\ncall = 2\nerror = \"timeout\"\n"
        ))
        .unwrap();
        assert_eq!(
            s.expect_route,
            Some(vec![NodeId::Planner, NodeId::Fallback])
        );
        assert_eq!(
            s.gatekeeper_fault,
            Some(serde_json::json!({"status": "maybe"}))
        );
        assert_eq!(s.script.len(), 2);
        assert_eq!(s.script[1].call, Some(2));
        match &s.script[0].reply {
            ScriptReply::ToolCalls(c) => assert_eq!(c[0].arguments["service"], "a"),
            other => panic!("{other:?}"),
        }
    }
}

//! How a run stands and how it ended: its lifecycle status, the verdict
//! snapshot the verdict panel shows, the failure that stopped or degraded
//! it, and [`RunEnd`], the one record of a run's end that the engine
//! returns, journals, stores and every surface shows.

use super::contracts::Verdict;
use super::tool::ToolInvocation;
use super::trace::OrchestrationTrace;
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Lifecycle only: a fallback answer is SUCCESS with `degraded`, never a
/// failure (ARCHITECTURE.md, "Run status").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RunStatus {
    Running,
    Success,
    Failed,
    Cancelled,
}

impl RunStatus {
    pub const ALL: [RunStatus; 4] = [
        RunStatus::Running,
        RunStatus::Success,
        RunStatus::Failed,
        RunStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "RUNNING",
            RunStatus::Success => "SUCCESS",
            RunStatus::Failed => "FAILED",
            RunStatus::Cancelled => "CANCELLED",
        }
    }

    pub fn parse(s: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// The verdicts of a run at one moment: what the verdict panel shows and
/// what a `VerdictUpdated` event carries.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct VerdictSnapshot {
    pub model_verdict: Option<Verdict>,
    pub ceiling: Option<Verdict>,
    /// min(model verdict, ceiling).
    pub effective_verdict: Option<Verdict>,
    pub groundedness_score: Option<f64>,
    pub evidence_retry_count: u32,
}

impl VerdictSnapshot {
    /// The ceiling lowered the model's verdict.
    pub fn is_capped(&self) -> bool {
        matches!((self.model_verdict, self.ceiling), (Some(m), Some(c)) if c < m)
    }
}

/// What kind of thing went wrong, so a surface can say it in plain words
/// and a script can branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    Connection,
    Timeout,
    Unauthorized,
    Forbidden,
    RateLimited,
    Quota,
    ServerError,
    BadResponse,
    InvalidOutput,
    SourceUnreadable,
    Cancelled,
    Interrupted,
    Store,
    /// A bug or a broken invariant (recursion limit, internal error).
    Internal,
}

impl FailureClass {
    pub const ALL: [FailureClass; 14] = [
        FailureClass::Connection,
        FailureClass::Timeout,
        FailureClass::Unauthorized,
        FailureClass::Forbidden,
        FailureClass::RateLimited,
        FailureClass::Quota,
        FailureClass::ServerError,
        FailureClass::BadResponse,
        FailureClass::InvalidOutput,
        FailureClass::SourceUnreadable,
        FailureClass::Cancelled,
        FailureClass::Interrupted,
        FailureClass::Store,
        FailureClass::Internal,
    ];

    pub fn parse(s: &str) -> Option<FailureClass> {
        FailureClass::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// A dependency outside the run failed (a model endpoint, a backend, a
    /// file, the store), as opposed to a model answer that broke a contract.
    /// Such a failure explains the invalid outputs that follow it, so it is
    /// the root cause a degraded run names first.
    pub fn is_external(self) -> bool {
        !matches!(self, FailureClass::InvalidOutput | FailureClass::Internal)
    }

    /// The class of a failure recorded before classes were, from its
    /// message.
    pub fn of_legacy_message(message: &str) -> FailureClass {
        if message.starts_with("cancelled") {
            FailureClass::Cancelled
        } else if message.starts_with("interrupted") {
            FailureClass::Interrupted
        } else if message.starts_with("store") {
            FailureClass::Store
        } else {
            FailureClass::Internal
        }
    }

    /// The class of an HTTP status from a model endpoint or a backend.
    pub fn of_http_status(status: u16) -> FailureClass {
        match status {
            401 => FailureClass::Unauthorized,
            403 => FailureClass::Forbidden,
            408 | 504 => FailureClass::Timeout,
            429 => FailureClass::RateLimited,
            500..=599 => FailureClass::ServerError,
            _ => FailureClass::BadResponse,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::Connection => "connection",
            FailureClass::Timeout => "timeout",
            FailureClass::Unauthorized => "unauthorized",
            FailureClass::Forbidden => "forbidden",
            FailureClass::RateLimited => "rate_limited",
            FailureClass::Quota => "quota",
            FailureClass::ServerError => "server_error",
            FailureClass::BadResponse => "bad_response",
            FailureClass::InvalidOutput => "invalid_output",
            FailureClass::SourceUnreadable => "source_unreadable",
            FailureClass::Cancelled => "cancelled",
            FailureClass::Interrupted => "interrupted",
            FailureClass::Store => "store",
            FailureClass::Internal => "internal",
        }
    }
}

impl fmt::Display for FailureClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// The first root cause of a run that failed, was cancelled, or ended
/// degraded, in plain words ("connection refused to http://…").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub class: FailureClass,
    pub message: String,
}

impl Failure {
    pub fn new(class: FailureClass, message: impl Into<String>) -> Failure {
        Failure {
            class,
            message: message.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A tool invocation that failed, as every surface lists it under what
/// could not be checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedSource {
    pub tool: String,
    pub invocation_id: i64,
    pub class: FailureClass,
    pub message: String,
}

impl FailedSource {
    /// Every failed invocation, in order.
    pub fn list<'a>(
        invocations: impl IntoIterator<Item = &'a ToolInvocation>,
    ) -> Vec<FailedSource> {
        invocations
            .into_iter()
            .filter_map(|i| {
                let f = i.failure()?;
                Some(FailedSource {
                    tool: i.tool_name.clone(),
                    invocation_id: i.id,
                    class: f.class,
                    message: f.message,
                })
            })
            .collect()
    }
}

/// A pack as a run used it: where it was and what it held.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PackIdentity {
    pub path: String,
    /// `sha256:` of the pack's files (names and contents), so two runs
    /// can tell whether they read the same data.
    pub content_hash: String,
}

/// What served a run: the backend of each tool, the pack (and what was
/// wrong with it when it loaded) and the model of each agent role.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSources {
    /// Tool name -> backend, e.g. `query_metrics` -> `prometheus:http://…`.
    pub tools: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pack: Option<PackIdentity>,
    /// Problems found while loading the pack ("alerts.json:7: not valid
    /// JSON"), in file order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pack_warnings: Vec<String>,
    /// Agent role -> the model that served it.
    pub models: BTreeMap<String, String>,
}

impl RunSources {
    pub fn is_empty(&self) -> bool {
        self == &RunSources::default()
    }
}

/// One row of a runs list: enough to find a run and see how it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub run_id: i64,
    pub session_id: String,
    pub status: RunStatus,
    pub effective_verdict: Option<Verdict>,
    pub degraded: bool,
    pub duration_ms: Option<u64>,
    pub question: String,
    pub created_at: String,
    /// Model tokens the run used (0 while it runs).
    #[serde(default)]
    pub tokens: u64,
    /// USD, the sum of its priced model calls so far; None when no call
    /// had a price.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// The stored run this one re-executed (`diagraph rerun`).
    #[serde(default)]
    pub rerun_of: Option<i64>,
}

/// How a run ended: the one shape the engine returns (inside
/// `RunOutcome`), journals (`RunFinished`), records (`RunFinish`) and the
/// TUI shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunEnd {
    pub status: RunStatus,
    /// The answer came from a fallback.
    pub degraded: bool,
    pub answer: String,
    pub effective_verdict: Option<Verdict>,
    pub trace: OrchestrationTrace,
    /// Journals written before `failure` existed carry `failure_reason`, a
    /// bare message.
    #[serde(
        default,
        alias = "failure_reason",
        deserialize_with = "failure_or_message",
        skip_serializing_if = "Option::is_none"
    )]
    pub failure: Option<Failure>,
}

fn failure_or_message<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Failure>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stored {
        Failure(Failure),
        Message(String),
    }
    Ok(match Option::<Stored>::deserialize(d)? {
        None => None,
        Some(Stored::Failure(f)) => Some(f),
        Some(Stored::Message(message)) => {
            let class = FailureClass::of_legacy_message(&message);
            Some(Failure { class, message })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_round_trips_through_its_text() {
        for s in RunStatus::ALL {
            assert_eq!(RunStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert_eq!(RunStatus::parse("success"), None);
    }

    #[test]
    fn a_journal_with_a_bare_failure_reason_still_reads() {
        let old = r#"{"status":"FAILED","degraded":false,"answer":"","effective_verdict":null,
            "trace":{"version":"stategraph-v1","transitions":[],"final_node":null,
            "termination_reason":null,"degraded":false,"evidence_retry_count":0},
            "failure_reason":"cancelled"}"#;
        let end: RunEnd = serde_json::from_str(old).unwrap();
        assert_eq!(
            end.failure,
            Some(Failure::new(FailureClass::Cancelled, "cancelled"))
        );
        let again: RunEnd = serde_json::from_str(&serde_json::to_string(&end).unwrap()).unwrap();
        assert_eq!(again, end);
    }

    #[test]
    fn the_cap_shows_only_when_the_ceiling_lowered_the_verdict() {
        let mut v = VerdictSnapshot {
            model_verdict: Some(Verdict::Pass),
            ceiling: Some(Verdict::LowConfid),
            ..Default::default()
        };
        assert!(v.is_capped());
        v.ceiling = Some(Verdict::Pass);
        assert!(!v.is_capped());
    }
}

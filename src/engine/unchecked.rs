//! What a run could not check, and what that does to it.
//!
//! A source that could not be read is a failed invocation, never "found
//! nothing"; a model endpoint that could not be reached is a failed model
//! call, never only "did not pass validation". This module turns those
//! records into the three things the run owes the user:
//!
//! - the "What could not be checked" section that code appends to every
//!   answer, whichever node wrote it ([`append_section`]);
//! - the ceiling cap: when every call of a planned tool failed, the run
//!   did not look where it meant to, so it cannot end PASS
//!   ([`unread_planned_tools`]);
//! - the root cause a degraded, failed or cancelled run names
//!   ([`root_cause`]).

use crate::model::{ModelError, ModelErrorKind};
use crate::text::clean;
use crate::vocab::agent::AgentRole;
use crate::vocab::contracts::Lang;
use crate::vocab::run::{Failure, FailureClass};
use crate::vocab::tool::{EvidenceStatus, ToolInvocation};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Characters of one failure message in the answer.
const MESSAGE_CHARS: usize = 240;

/// Where a recorded failure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A model call of this role failed.
    Model(AgentRole),
    /// A tool invocation failed (its record is in the run's invocations).
    Tool,
    /// A node's output broke its contract or was rejected.
    Node,
}

/// A failure as the run met it, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Met {
    pub origin: Origin,
    pub failure: Failure,
}

/// A failed model call in plain words, classed for the run's record.
pub fn model_failure(role: AgentRole, e: &ModelError) -> Failure {
    let lower = e.message.to_ascii_lowercase();
    let class = match e.kind {
        ModelErrorKind::Timeout => FailureClass::Timeout,
        ModelErrorKind::Quota => FailureClass::Quota,
        ModelErrorKind::RateLimited if lower.contains("quota") => FailureClass::Quota,
        ModelErrorKind::RateLimited => FailureClass::RateLimited,
        ModelErrorKind::ServerError => FailureClass::ServerError,
        ModelErrorKind::Connection => FailureClass::Connection,
        ModelErrorKind::Unauthorized if lower.contains("403") => FailureClass::Forbidden,
        ModelErrorKind::Unauthorized => FailureClass::Unauthorized,
        ModelErrorKind::BadRequest if lower.contains("quota") => FailureClass::Quota,
        ModelErrorKind::BadRequest | ModelErrorKind::Protocol => FailureClass::BadResponse,
        ModelErrorKind::Config | ModelErrorKind::Uncovered => FailureClass::Internal,
    };
    let what = match class {
        FailureClass::BadResponse | FailureClass::Internal => "could not be used",
        _ => "could not be reached",
    };
    Failure::new(
        class,
        format!(
            "the {role} model {what}: {}",
            clean(&e.message, MESSAGE_CHARS)
        ),
    )
}

/// The first root cause among the failures a run met: the first failed
/// dependency (model endpoint, backend, file, store) when there is one,
/// since it explains the invalid outputs after it; else the first failure.
pub fn root_cause(met: &[Met]) -> Option<Failure> {
    met.iter()
        .find(|m| m.failure.class.is_external() && m.failure.class != FailureClass::Cancelled)
        .or_else(|| met.first())
        .map(|m| m.failure.clone())
}

/// Tools the plan meant to use whose every call failed: the run could not
/// look where it meant to. Planned means named in a plan's queries; a
/// plan without queries (an LLM may give only step text) counts every tool
/// the Executor called. Blocked calls do not count: the tool was never
/// asked.
pub fn unread_planned_tools(
    planned: &BTreeSet<String>,
    invocations: &[Arc<ToolInvocation>],
) -> Vec<String> {
    let mut by_tool: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for inv in invocations {
        let d = &inv.retrieval_details;
        // Blocked: the tool was never asked. No step: a source that could
        // not be set up, whose tools the plan could not name.
        if d.blocked || inv.step_id.is_none() {
            continue;
        }
        let entry = by_tool.entry(inv.tool_name.as_str()).or_default();
        entry.0 += 1;
        if d.evidence_status == EvidenceStatus::Failed {
            entry.1 += 1;
        }
    }
    by_tool
        .into_iter()
        .filter(|(tool, (calls, failed))| {
            *calls > 0 && calls == failed && (planned.is_empty() || planned.contains(*tool))
        })
        .map(|(tool, _)| tool.to_string())
        .collect()
}

/// The section that says what could not be checked: unreachable models,
/// failed invocations (by tool and reason) and sources read only in part.
/// `None` when everything answered.
pub fn section(lang: Lang, met: &[Met], invocations: &[Arc<ToolInvocation>]) -> Option<String> {
    let zh = lang == Lang::Zh;
    let mut lines: Vec<String> = Vec::new();
    let mut seen_models: BTreeSet<String> = BTreeSet::new();
    for m in met {
        if let Origin::Model(_) = m.origin
            && m.failure.class.is_external()
            && seen_models.insert(m.failure.message.clone())
        {
            lines.push(format!("- {}", clean(&m.failure.message, MESSAGE_CHARS)));
        }
    }
    // One line per tool, backend and reason, with the invocations it
    // covers, so three refused calls read as one refused source.
    let mut groups: Vec<(String, Vec<i64>)> = Vec::new();
    for inv in invocations {
        let d = &inv.retrieval_details;
        if d.blocked {
            continue;
        }
        let backend = if d.source.backend.is_empty() {
            String::new()
        } else {
            format!(" ({})", clean(&d.source.backend, 120))
        };
        let head = match (d.evidence_status, &d.source.partial) {
            (EvidenceStatus::Failed, _) => {
                let Some(f) = inv.failure() else { continue };
                format!(
                    "{}{backend}: {}",
                    inv.tool_name,
                    clean(&f.message, MESSAGE_CHARS)
                )
            }
            (_, Some(partial)) => {
                let read = if zh {
                    "只读取了部分"
                } else {
                    "read in part"
                };
                format!(
                    "{}{backend}, {read}: {}",
                    inv.tool_name,
                    clean(partial, MESSAGE_CHARS)
                )
            }
            _ => continue,
        };
        match groups.iter_mut().find(|(h, _)| *h == head) {
            Some((_, ids)) => ids.push(inv.id),
            None => groups.push((head, vec![inv.id])),
        }
    }
    for (head, ids) in groups {
        let ids: Vec<String> = ids.iter().map(|id| format!("#{id}")).collect();
        let label = if zh { "调用" } else { "invocation" };
        lines.push(format!("- {head} [{label} {}]", ids.join(", ")));
    }
    if lines.is_empty() {
        return None;
    }
    let title = if zh {
        "未能检查的内容（来源失败或只读取了部分，不代表“没有发现问题”）："
    } else {
        "What could not be checked (a failed or partly read source is not \"nothing found\"):"
    };
    Some(format!("{title}\n{}", lines.join("\n")))
}

/// The answer with the section appended, whatever node wrote it.
pub fn append_section(
    answer: String,
    lang: Lang,
    met: &[Met],
    invocations: &[Arc<ToolInvocation>],
) -> String {
    match section(lang, met, invocations) {
        None => answer,
        Some(section) if answer.trim().is_empty() => section,
        Some(section) => format!("{}\n\n{section}", answer.trim_end()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::tool::{RetrievalDetails, SourceOutcome};

    fn inv(
        id: i64,
        tool: &str,
        status: EvidenceStatus,
        error: Option<&str>,
    ) -> Arc<ToolInvocation> {
        let mut i = ToolInvocation::placeholder(1, 1);
        i.id = id;
        i.step_id = Some(10);
        i.tool_name = tool.into();
        i.retrieval_details = RetrievalDetails {
            source: SourceOutcome {
                backend: "prometheus:http://p:9090".into(),
                failure_class: error.map(|_| FailureClass::Connection),
                partial: None,
            },
            ..RetrievalDetails::of(status)
        };
        i.success = error.is_none();
        i.error_message = error.map(str::to_string);
        Arc::new(i)
    }

    #[test]
    fn a_tool_whose_every_call_failed_is_unread_and_one_that_answered_once_is_not() {
        let refused = Some("connection refused to http://p:9090");
        let invs = vec![
            inv(1, "query_metrics", EvidenceStatus::Failed, refused),
            inv(2, "query_logs", EvidenceStatus::Failed, refused),
            inv(3, "query_logs", EvidenceStatus::NoEvidence, None),
            inv(4, "query_metrics", EvidenceStatus::Failed, refused),
        ];
        let planned: BTreeSet<String> = ["query_metrics", "query_logs"]
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(unread_planned_tools(&planned, &invs), ["query_metrics"]);
        // Not planned: not a planned source that failed.
        let only_logs: BTreeSet<String> = ["query_logs".to_string()].into();
        assert!(unread_planned_tools(&only_logs, &invs).is_empty());
        // A plan without queries counts every tool called.
        assert_eq!(
            unread_planned_tools(&BTreeSet::new(), &invs),
            ["query_metrics"]
        );
        // A source that could not be set up was asked by no step: the plan
        // could not name its tools, so it does not cap the run.
        let mut unavailable = (*inv(5, "k8s__*", EvidenceStatus::Failed, refused)).clone();
        unavailable.step_id = None;
        let invs = vec![Arc::new(unavailable)];
        assert!(unread_planned_tools(&BTreeSet::new(), &invs).is_empty());
        assert!(section(Lang::En, &[], &invs).unwrap().contains("k8s__*"));
    }

    #[test]
    fn the_section_groups_a_source_that_failed_the_same_way_and_names_partial_reads() {
        let refused = Some("connection refused to http://p:9090");
        let mut partial = (*inv(5, "query_logs", EvidenceStatus::Supported, None)).clone();
        partial.retrieval_details.source.partial = Some("logs.jsonl ends mid-line".into());
        let invs = vec![
            inv(1, "query_metrics", EvidenceStatus::Failed, refused),
            inv(2, "query_metrics", EvidenceStatus::Failed, refused),
            Arc::new(partial),
        ];
        let met = vec![Met {
            origin: Origin::Model(AgentRole::Planner),
            failure: Failure::new(
                FailureClass::Unauthorized,
                "the planner model could not be reached: HTTP 401",
            ),
        }];
        let s = section(Lang::En, &met, &invs).unwrap();
        assert!(s.starts_with("What could not be checked"), "{s}");
        assert!(
            s.contains("- the planner model could not be reached: HTTP 401"),
            "{s}"
        );
        assert!(
            s.contains("query_metrics (prometheus:http://p:9090): connection refused to http://p:9090 [invocation #1, #2]"),
            "{s}"
        );
        assert!(s.contains("query_logs (prometheus:http://p:9090), read in part: logs.jsonl ends mid-line [invocation #5]"), "{s}");
        let zh = section(Lang::Zh, &met, &invs).unwrap();
        assert!(zh.starts_with("未能检查的内容"), "{zh}");
        assert_eq!(section(Lang::En, &[], &[]), None);
        assert_eq!(append_section("A".into(), Lang::En, &[], &[]), "A");
    }

    #[test]
    fn the_root_cause_is_the_first_failed_dependency() {
        let m = |origin, class, msg: &str| Met {
            origin,
            failure: Failure::new(class, msg),
        };
        let met = vec![
            m(
                Origin::Node,
                FailureClass::InvalidOutput,
                "planner: not JSON",
            ),
            m(Origin::Tool, FailureClass::Timeout, "timed out after 8 s"),
            m(Origin::Tool, FailureClass::Connection, "refused"),
        ];
        assert_eq!(root_cause(&met).unwrap().message, "timed out after 8 s");
        assert_eq!(
            root_cause(&met[..1]).unwrap().class,
            FailureClass::InvalidOutput
        );
        assert_eq!(root_cause(&[]), None);
    }

    #[test]
    fn model_errors_read_as_unreachable_with_their_class() {
        let f = model_failure(
            AgentRole::Planner,
            &ModelError::new(ModelErrorKind::Unauthorized, "HTTP 401: bad key"),
        );
        assert_eq!(f.class, FailureClass::Unauthorized);
        assert_eq!(
            f.message,
            "the planner model could not be reached: HTTP 401: bad key"
        );
        let q = model_failure(
            AgentRole::Executor,
            &ModelError::new(ModelErrorKind::RateLimited, "HTTP 429: insufficient_quota"),
        );
        assert_eq!(q.class, FailureClass::Quota);
        let bad = model_failure(
            AgentRole::Verifier,
            &ModelError::new(ModelErrorKind::Protocol, "no choices"),
        );
        assert_eq!(bad.class, FailureClass::BadResponse);
        assert!(bad.message.contains("could not be used"));
    }
}

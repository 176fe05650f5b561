//! Scoring one run against its case, from what the run recorded about
//! itself (`RunOutcome`: the Executor's final output, the Gatekeeper's
//! checked bindings, the Verifier's fact checks, the answer). Nothing here
//! asks the model; the same code scores the offline model and an LLM.
//!
//! - A *verified finding* is a claim that is not a negative observation,
//!   has at least one binding the Gatekeeper passed, and was not found
//!   unsupported by the Verifier; the run must have got past the
//!   Gatekeeper (a pre-verification fallback shows no claim at all).
//! - *Recall*: a verified finding's text, or the evidence text one of its
//!   passing bindings matched, contains an expected phrase
//!   (case-insensitive).
//! - *Traceable*: no claim without a passing binding has its text in the
//!   answer.
//! - *Over-claim* (negatives): the answer words "found nothing" as a
//!   conclusion ("ruled out", "healthy", …), a verified finding names a
//!   likely cause, or a verified finding contains a `forbid` phrase. A
//!   `forbid` phrase counts for every kind of case.

use super::set::{Case, CaseKind};
use crate::engine::RunOutcome;
use crate::vocab::contracts::{BindingStatus, Claim, NO_EVIDENCE_PATH, OVERSTATEMENT_PHRASES};
use crate::vocab::events::{EngineEvent, EventKind};
use crate::vocab::graph::NodeId;
use serde::Serialize;

/// Model usage of a run. Cost is null when no call had a price.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct EvalUsage {
    pub tokens: u64,
    pub cost_usd: Option<f64>,
}

impl EvalUsage {
    pub fn add(&mut self, other: EvalUsage) {
        self.tokens += other.tokens;
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }
}

/// One case's result: the `--json` `cases[i]` object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseResult {
    pub id: String,
    pub question: String,
    pub kind: CaseKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    pub run_id: Option<i64>,
    pub status: String,
    pub route: Vec<String>,
    pub effective_verdict: Option<String>,
    pub degraded: bool,
    /// Null for negatives.
    pub recall_hit: Option<bool>,
    /// The expected phrase that was found, for reading a report.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<String>,
    pub traceable: bool,
    pub over_claim: bool,
    /// Why the over-claim or the untraceable verdict was given.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub latency_ms: u64,
    pub usage: EvalUsage,
}

/// A case whose run could not be made at all (the engine refused it):
/// everything scores as a miss.
pub fn failed(case: &Case, message: &str, latency_ms: u64) -> CaseResult {
    CaseResult {
        id: case.id.clone(),
        question: case.question.clone(),
        kind: case.kind,
        lang: case.lang.clone(),
        run_id: None,
        status: "ERROR".into(),
        route: vec![],
        effective_verdict: None,
        degraded: true,
        recall_hit: (case.kind != CaseKind::Negative).then_some(false),
        matched: None,
        traceable: true,
        over_claim: false,
        notes: vec![crate::text::clean(message, 300)],
        latency_ms,
        usage: EvalUsage::default(),
    }
}

/// A claim with the evidence texts of its passing bindings.
struct Verified<'a> {
    claim: &'a Claim,
    evidence: Vec<&'a str>,
}

fn is_negative(c: &Claim) -> bool {
    c.is_negative()
        || (!c.evidence_bindings.is_empty()
            && c.evidence_bindings
                .iter()
                .all(|b| b.raw_path.as_deref() == Some(NO_EVIDENCE_PATH)))
}

/// Lowercase, whitespace collapsed: how texts are compared.
fn norm(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

pub fn score(case: &Case, o: &RunOutcome, latency_ms: u64) -> CaseResult {
    let ev = &o.self_evaluation.verifier_evaluation;
    let route = o.end.trace.route();
    let verified_stage = route.contains(&NodeId::VerifiedInput);
    let claims: &[Claim] = ev
        .executor_structured_output
        .as_ref()
        .map_or(&[], |e| e.claims.as_slice());
    let checked = ev
        .gatekeeper_result
        .as_ref()
        .map_or(&[][..], |g| g.checked_bindings.as_slice());
    let unsupported = |c: &Claim| {
        ev.facts_checked.iter().flatten().any(|f| {
            f.claim_id.as_deref() == Some(c.claim_id.as_str()) && !f.verification.is_supported()
        })
    };
    let mut verified: Vec<Verified> = Vec::new();
    let mut unverified: Vec<&Claim> = Vec::new();
    for c in claims {
        let passing: Vec<&str> = checked
            .iter()
            .filter(|b| b.claim_id == c.claim_id && b.status == BindingStatus::Pass)
            .map(|b| b.matched_text.as_str())
            .collect();
        if passing.is_empty() || !verified_stage {
            unverified.push(c);
        } else if !is_negative(c) && !unsupported(c) {
            verified.push(Verified {
                claim: c,
                evidence: passing,
            });
        }
    }
    let answer = norm(&o.end.answer);
    let mut notes = Vec::new();

    let contains = |v: &Verified, phrase: &str| {
        let p = norm(phrase);
        norm(&v.claim.claim_text).contains(&p) || v.evidence.iter().any(|e| norm(e).contains(&p))
    };
    let (recall_hit, matched) = if case.kind == CaseKind::Negative {
        (None, None)
    } else {
        let hit = case
            .expect_any
            .iter()
            .find(|p| verified.iter().any(|v| contains(v, p)));
        (Some(hit.is_some()), hit.cloned())
    };

    let mut traceable = true;
    for c in &unverified {
        let text = norm(&crate::text::clean(&c.claim_text, 400));
        let probe: String = text.chars().take(80).collect();
        if probe.chars().count() >= 16 && answer.contains(&probe) {
            traceable = false;
            notes.push(format!(
                "claim {} is in the answer without a verified binding",
                crate::text::clean(&c.claim_id, 40)
            ));
        }
    }

    let mut over_claim = false;
    for p in &case.forbid {
        if let Some(v) = verified.iter().find(|v| contains(v, p)) {
            over_claim = true;
            notes.push(format!(
                "verified finding {} contains forbidden {:?}",
                crate::text::clean(&v.claim.claim_id, 40),
                crate::text::clean(p, 80)
            ));
        }
    }
    if case.kind == CaseKind::Negative {
        if let Some(p) = OVERSTATEMENT_PHRASES.iter().find(|p| answer.contains(*p)) {
            over_claim = true;
            notes.push(format!("the answer concludes {p:?} from finding nothing"));
        }
        if let Some(v) = verified.iter().find(|v| v.claim.claim_type == "root_cause") {
            over_claim = true;
            notes.push(format!(
                "a likely cause is stated ({})",
                crate::text::clean(&v.claim.claim_id, 40)
            ));
        }
    }

    let usage = run_usage(&o.events);
    CaseResult {
        id: case.id.clone(),
        question: case.question.clone(),
        kind: case.kind,
        lang: case.lang.clone(),
        run_id: Some(o.run_id),
        status: o.end.status.as_str().to_string(),
        route: route.iter().map(|n| n.as_str().to_string()).collect(),
        effective_verdict: o.end.effective_verdict.map(|v| v.as_str().to_string()),
        degraded: o.end.degraded,
        recall_hit,
        matched,
        traceable,
        over_claim,
        notes,
        latency_ms,
        usage,
    }
}

/// The run's tokens and cost, summed over its model calls as the journal
/// records them: the cost is known when every priced call reported one
/// (a model without a price table leaves it null, never 0).
fn run_usage(events: &[EngineEvent]) -> EvalUsage {
    let mut out = EvalUsage::default();
    for e in events {
        if let EventKind::ModelCalled { tokens, usage, .. } = &e.kind {
            out.add(EvalUsage {
                tokens: *tokens,
                cost_usd: usage.as_ref().and_then(|u| u.cost_usd),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::agent::AgentRole;
    use crate::vocab::usage::Usage;

    fn called(tokens: u64, cost: Option<f64>) -> EngineEvent {
        EngineEvent {
            run_id: 1,
            seq: 1,
            at_ms: 0,
            kind: EventKind::ModelCalled {
                role: AgentRole::Planner,
                attempt: 1,
                step_id: 1,
                duration_ms: 1,
                tokens,
                tool_calls: 0,
                error: None,
                parse_error: None,
                usage: Some(Usage {
                    prompt_tokens: tokens,
                    cost_usd: cost,
                    ..Usage::default()
                }),
            },
        }
    }

    #[test]
    fn usage_sums_tokens_and_the_recorded_cost() {
        let u = run_usage(&[called(100, Some(0.002)), called(50, Some(0.001))]);
        assert_eq!(u.tokens, 150);
        assert!((u.cost_usd.unwrap() - 0.003).abs() < 1e-12);
        // No price anywhere: null, not 0.
        let u = run_usage(&[called(10, None), called(5, None)]);
        assert_eq!((u.tokens, u.cost_usd), (15, None));
        assert_eq!(run_usage(&[]), EvalUsage::default());
    }
}

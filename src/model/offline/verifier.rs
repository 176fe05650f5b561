//! The offline Verifier: checks each verified claim against its verified
//! evidence (matched_text of the Gatekeeper-passed bindings) and nothing
//! else.
//!
//! A claim's checkable details are the service names, CamelCase alert
//! names, all-caps words, `key=value` pairs, timestamps, numbers and quoted
//! phrases in its text. All present in the bound evidence: direct_evidence.
//! The main entity present but a detail missing: indirect_support. Nothing
//! found: no_evidence. A state or percentage the evidence states
//! differently, a positive claim resting only on `$.no_evidence`, or a
//! negative claim worded as a conclusion: contradicted.

use crate::model::offline::text::{
    contains_ci, contains_word, content_tokens, literal_pieces, ref_fields,
};
use crate::text::literal_regex;
use crate::vocab::contracts::{
    Claim, FactCheck, FactRef, NO_EVIDENCE_PATH, OVERSTATEMENT_PHRASES, Verdict, Verification,
    VerifierOutput,
};
use crate::vocab::dto::{VerifiedEvidence, VerifierInput};
use regex::Regex;
use std::sync::LazyLock;

static QUOTED: LazyLock<Regex> = LazyLock::new(|| literal_regex(r#""([^"]+)"|“([^”]+)”"#));
static NUMBER: LazyLock<Regex> =
    LazyLock::new(|| literal_regex(r"^(\d+(?:\.\d+)?)(%|ms|s|m|h|d|mb|gb|kb|b)?$"));
static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| literal_regex(r"^\d{4}-\d{2}-\d{2}"));
const STATES: &[&str] = &["firing", "pending", "resolved", "inactive"];

#[derive(Debug, Default)]
struct Details {
    /// Service-like and CamelCase names; the first is the main entity.
    names: Vec<String>,
    /// Exact-text details: timestamps, key=value, all-caps words.
    exact: Vec<String>,
    numbers: Vec<String>,
    quotes: Vec<String>,
    states: Vec<String>,
}

fn details(text: &str) -> Details {
    let mut d = Details::default();
    let mut rest = text.to_string();
    for c in QUOTED.captures_iter(text) {
        if let Some(m) = (1..=2).find_map(|i| c.get(i)) {
            d.quotes.push(m.as_str().to_string());
            rest = rest.replace(m.as_str(), " ");
        }
    }
    for raw in
        rest.split(|c: char| c.is_whitespace() || ",;()[]{}\"“”（），。；、！？!?：".contains(c))
    {
        let tok = raw
            .trim_end_matches(['.', ':'])
            .trim_start_matches(['(', '[']);
        if tok.is_empty() {
            continue;
        }
        let lower = tok.to_ascii_lowercase();
        if STATES.contains(&lower.as_str()) {
            d.states.push(lower.clone());
        }
        if TIMESTAMP.is_match(tok) {
            d.exact.push(tok.to_string());
        } else if let Some((k, v)) = tok.split_once('=') {
            if !k.is_empty() && !v.is_empty() {
                match NUMBER.captures(v) {
                    Some(_) => d.numbers.push(v.to_string()),
                    None => d.exact.push(v.to_string()),
                }
            }
        } else if NUMBER.is_match(&lower) {
            d.numbers.push(lower);
        } else if is_service_like(tok) || super::entities::is_camel(tok) {
            if !d.names.iter().any(|n| n.eq_ignore_ascii_case(tok)) {
                d.names.push(tok.to_string());
            }
        } else if tok.len() >= 3
            && tok
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
            && tok.chars().any(|c| c.is_ascii_uppercase())
        {
            d.exact.push(tok.to_string());
        }
    }
    d
}

fn is_service_like(tok: &str) -> bool {
    tok.len() >= 4
        && tok.contains(['-', '_'])
        && tok
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        && tok.chars().any(|c| c.is_ascii_alphabetic())
        && !tok.starts_with(['-', '_'])
}

pub fn verify(input: &VerifierInput) -> VerifierOutput {
    let question = details(&input.original_query);
    let claims = &input.verified_executor_output.claims;
    let mut facts = Vec::with_capacity(claims.len());
    for claim in claims {
        let evidence: Vec<&VerifiedEvidence> = input
            .verified_evidence
            .iter()
            .filter(|e| e.claim_id == claim.claim_id)
            .collect();
        let (verification, detail) = check(claim, &evidence, &input.verified_evidence);
        let critical = is_critical(claim, &question, claims.len());
        let mut ids: Vec<i64> = evidence.iter().map(|e| e.source_invocation_id).collect();
        ids.dedup();
        let mut tools: Vec<&str> = evidence.iter().map(|e| e.tool_name.as_str()).collect();
        tools.sort_unstable();
        tools.dedup();
        facts.push(FactCheck {
            claim_id: Some(claim.claim_id.clone()),
            fact: claim.claim_text.clone(),
            is_critical: critical,
            verification,
            detail,
            evidence_refs: tools
                .iter()
                .map(|t| FactRef {
                    trace_ref: String::new(),
                    tool_name: t.to_string(),
                    topic_domain: String::new(),
                    source_invocation_ids: {
                        let mut v: Vec<i64> = evidence
                            .iter()
                            .filter(|e| e.tool_name == *t)
                            .map(|e| e.source_invocation_id)
                            .collect();
                        v.sort_unstable();
                        v.dedup();
                        v
                    },
                    note: format!(
                        "{} verified item(s)",
                        evidence.iter().filter(|e| e.tool_name == *t).count()
                    ),
                })
                .collect(),
        });
    }
    let (verdict, score, rationale) = decide(&facts, input.gatekeeper_result.verdict_ceiling);
    VerifierOutput {
        verdict,
        groundedness_score: score,
        critical_fact_count: facts.iter().filter(|f| f.is_critical).count() as u32,
        claim_checks: vec![],
        facts_checked: facts,
        rationale,
    }
}

/// Root causes are always critical; other claims when they name what the
/// question names (or the question names nothing checkable, or they are
/// the only claim).
fn is_critical(claim: &Claim, question: &Details, total: usize) -> bool {
    if claim.claim_type == "root_cause" || total == 1 {
        return true;
    }
    if question.names.is_empty() {
        return claim.claim_type != "negative_observation";
    }
    let text = claim.claim_text.to_ascii_lowercase();
    question
        .names
        .iter()
        .any(|n| text.contains(&n.to_ascii_lowercase()))
}

fn check(
    claim: &Claim,
    evidence: &[&VerifiedEvidence],
    all: &[VerifiedEvidence],
) -> (Verification, String) {
    if evidence.is_empty() {
        return (
            Verification::NoEvidence,
            "no verified evidence is bound to this claim".into(),
        );
    }
    let negative_ev = evidence.iter().all(|e| e.raw_path == NO_EVIDENCE_PATH);
    let text_lower = claim.claim_text.to_lowercase();
    if claim.is_negative() {
        if !negative_ev {
            return (
                Verification::Contradicted,
                "a negative observation must rest on $.no_evidence only, but positive evidence is bound".into(),
            );
        }
        if let Some(p) = OVERSTATEMENT_PHRASES
            .iter()
            .find(|p| text_lower.contains(*p))
        {
            return (
                Verification::Contradicted,
                format!(
                    "$.no_evidence only says the query found nothing; the claim concludes more (\"{p}\")"
                ),
            );
        }
    } else if negative_ev {
        return (
            Verification::Contradicted,
            "the only bound evidence says the query found nothing".into(),
        );
    }
    let joined: String = evidence
        .iter()
        .map(|e| e.matched_text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let joined_lower = joined.to_ascii_lowercase();
    let d = details(&claim.claim_text);

    if let Some(why) = contradiction(&d, evidence) {
        return (Verification::Contradicted, why);
    }
    let mut missing: Vec<String> = Vec::new();
    let names_found: Vec<bool> = d
        .names
        .iter()
        .map(|n| contains_word(&joined_lower, &n.to_ascii_lowercase()))
        .collect();
    for (n, ok) in d.names.iter().zip(&names_found) {
        if !ok {
            missing.push(n.clone());
        }
    }
    for x in &d.exact {
        if !contains_ci(&joined, x) {
            missing.push(x.clone());
        }
    }
    for n in &d.numbers {
        if !number_supported(n, &joined_lower, evidence) {
            missing.push(n.clone());
        }
    }
    for q in &d.quotes {
        let pieces = literal_pieces(q);
        if pieces.is_empty() || !pieces.iter().all(|p| contains_ci(&joined, p)) {
            missing.push(format!("\"{q}\""));
        }
    }
    let checkable = d.names.len() + d.exact.len() + d.numbers.len() + d.quotes.len();
    if checkable == 0 {
        // Nothing concrete to check: fall back to word overlap.
        let want = content_tokens(&claim.claim_text);
        let have = content_tokens(&joined);
        let shared = want.intersection(&have).count();
        return if shared > 0 && shared * 2 >= want.len() {
            (
                Verification::IndirectSupport,
                format!(
                    "no concrete detail to check; {shared} of {} words appear in the evidence",
                    want.len()
                ),
            )
        } else if shared > 0 {
            (
                Verification::IndirectSupport,
                format!(
                    "only {shared} of {} words appear in the evidence",
                    want.len()
                ),
            )
        } else {
            (
                Verification::NoEvidence,
                "none of the claim's words appear in the bound evidence".into(),
            )
        };
    }
    let main_found = names_found.first().copied().unwrap_or(true);
    if missing.is_empty()
        && let Some(why) = cause_without_own_evidence(claim, &d, evidence, all)
    {
        return (Verification::IndirectSupport, why);
    }
    if missing.is_empty() {
        (
            Verification::DirectEvidence,
            format!(
                "all {checkable} detail(s) appear in {} verified evidence item(s)",
                evidence.len()
            ),
        )
    } else if main_found && missing.len() < checkable {
        (
            Verification::IndirectSupport,
            format!(
                "main entity found, but not in the evidence: {}",
                missing.join(", ")
            ),
        )
    } else {
        (
            Verification::NoEvidence,
            format!(
                "the bound evidence does not contain: {}",
                missing.join(", ")
            ),
        )
    }
}

/// A root cause names a service first; it is direct only when evidence
/// from that service itself (its log lines, its alerts) is verified in
/// this run, not when other services' lines merely blame it.
fn cause_without_own_evidence(
    claim: &Claim,
    d: &Details,
    evidence: &[&VerifiedEvidence],
    all: &[VerifiedEvidence],
) -> Option<String> {
    if claim.claim_type != "root_cause" {
        return None;
    }
    let main = d.names.first().filter(|n| is_service_like(n))?;
    let alert_name = evidence.iter().any(|e| {
        ref_fields(&e.matched_text)
            .iter()
            .any(|(k, v)| k == "alertname" && v.eq_ignore_ascii_case(main))
    });
    if alert_name
        || evidence.iter().any(|e| comes_from(e, main))
        || all.iter().any(|e| comes_from(e, main))
    {
        return None;
    }
    Some(format!(
        "{main} is named as the cause only in other services' evidence; nothing from {main} itself is verified"
    ))
}

/// The item is `main`'s own: an alert with `service=main`, or a log line
/// written by it (`TS LEVEL SERVICE message`).
fn comes_from(e: &VerifiedEvidence, main: &str) -> bool {
    if e.raw_path == NO_EVIDENCE_PATH {
        return false;
    }
    let fields = ref_fields(&e.matched_text);
    if fields.iter().any(|(k, _)| k == "alertname") {
        return fields
            .iter()
            .any(|(k, v)| k == "service" && v.eq_ignore_ascii_case(main));
    }
    e.matched_text
        .split_whitespace()
        .take(3)
        .any(|t| t.trim_matches(['[', ']', ':']).eq_ignore_ascii_case(main))
}

/// A number is supported when it appears in the evidence as a word, or
/// when it counts the claim's bound items (all of them, or one tool's).
fn number_supported(n: &str, joined_lower: &str, evidence: &[&VerifiedEvidence]) -> bool {
    if contains_word(joined_lower, n) {
        return true;
    }
    let Ok(count) = n.parse::<usize>() else {
        return false;
    };
    if count == evidence.len() {
        return true;
    }
    let mut tools: Vec<&str> = evidence.iter().map(|e| e.tool_name.as_str()).collect();
    tools.sort_unstable();
    tools.dedup();
    tools
        .iter()
        .any(|t| evidence.iter().filter(|e| e.tool_name == *t).count() == count)
}

/// A claimed alert state the evidence states otherwise, or a claimed
/// percentage where the evidence gives a different one.
fn contradiction(d: &Details, evidence: &[&VerifiedEvidence]) -> Option<String> {
    let mut ev_states: Vec<String> = Vec::new();
    let mut ev_percents: Vec<String> = Vec::new();
    for e in evidence {
        for (k, v) in ref_fields(&e.matched_text) {
            if k == "state" {
                ev_states.push(v.to_ascii_lowercase());
            }
            if v.ends_with('%') {
                ev_percents.push(v.split_whitespace().next().unwrap_or("").to_string());
            }
        }
    }
    if !ev_states.is_empty() {
        for s in &d.states {
            if !ev_states.contains(s) {
                return Some(format!(
                    "the claim says {s}, the evidence says state={}",
                    ev_states.join("/")
                ));
            }
        }
    }
    if !ev_percents.is_empty() {
        for n in d.numbers.iter().filter(|n| n.ends_with('%')) {
            if !ev_percents.iter().any(|p| p == n)
                && !evidence.iter().any(|e| e.matched_text.contains(n.as_str()))
            {
                return Some(format!(
                    "the claim says {n}, the evidence says {}",
                    ev_percents.join("/")
                ));
            }
        }
    }
    None
}

fn decide(facts: &[FactCheck], ceiling: Verdict) -> (Verdict, f64, String) {
    if facts.is_empty() {
        return (
            Verdict::LowConfid.min(ceiling),
            1.0,
            "no verified claim to check: nothing can be stated beyond the missing information"
                .into(),
        );
    }
    let critical: Vec<&FactCheck> = facts.iter().filter(|f| f.is_critical).collect();
    let considered: Vec<&FactCheck> = if critical.is_empty() {
        facts.iter().collect()
    } else {
        critical
    };
    let total = considered.len();
    let direct = considered
        .iter()
        .filter(|f| f.verification == Verification::DirectEvidence)
        .count();
    let supported = considered
        .iter()
        .filter(|f| f.verification.is_supported())
        .count();
    let contradicted = facts
        .iter()
        .filter(|f| f.is_critical && f.verification == Verification::Contradicted)
        .count();
    let any_supported = facts.iter().any(|f| f.verification.is_supported());
    let score = (supported as f64 / total as f64 * 100.0).round() / 100.0;
    let (verdict, why) = if contradicted > 0 {
        (
            Verdict::Reject,
            format!("{contradicted} critical fact(s) contradicted by the evidence"),
        )
    } else if !any_supported {
        (
            Verdict::Reject,
            "no claim is supported by the verified evidence".to_string(),
        )
    } else if direct == total {
        (
            Verdict::Pass,
            format!("all {total} critical fact(s) have direct evidence"),
        )
    } else {
        (
            Verdict::LowConfid,
            format!(
                "{} of {total} critical fact(s) lack direct evidence",
                total - direct
            ),
        )
    };
    let verdict = verdict.min(ceiling);
    let why = if verdict < ceiling || ceiling == Verdict::Pass {
        why
    } else {
        format!("{why}; capped by the gatekeeper ceiling {ceiling}")
    };
    (verdict, score, why)
}

//! `diagraph compare RUN_A RUN_B`: two runs side by side: route, claims,
//! bindings, verdicts and usage. Useful after a `rerun`, or for the same
//! question on two models. The JSON shape is an interface and stays fixed:
//! `{a, b, route: {a, b, same}, verdicts: {a, b}, claims: {only_a, only_b,
//! both}, bindings: {a, b}, usage: {a, b}}`, plus `unverified_bindings:
//! {a, b}` (each `{pass, fail, bindings}`): the hypotheses' and actions'
//! bindings, kept out of `bindings` and `claims` because they verify
//! nothing.
//!
//! Claims are matched by their text (claim ids are numbered per run), the
//! id when a claim has no text.

use crate::text::{display_width, sanitize_line, truncate_middle, truncate_width};
use crate::vocab::contracts::{BindingStatus, CheckedBinding};
use crate::vocab::run_trace::RunTrace;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The claims of a run, by the key they are matched on.
fn claims(t: &RunTrace) -> BTreeSet<String> {
    bindings(t)
        .iter()
        .map(|b| {
            let text = b.claim_text.trim();
            sanitize_line(if text.is_empty() { &b.claim_id } else { text })
        })
        .collect()
}

fn bindings(t: &RunTrace) -> &[CheckedBinding] {
    t.run
        .gatekeeper_result
        .as_ref()
        .map(|g| g.checked_bindings.as_slice())
        .unwrap_or_default()
}

/// The bindings on hypotheses and recommended actions: checked, never
/// verified, so always reported apart from `bindings`.
fn unverified(t: &RunTrace) -> &[CheckedBinding] {
    t.run
        .gatekeeper_result
        .as_ref()
        .map(|g| g.unverified_bindings.as_slice())
        .unwrap_or_default()
}

/// (pass, fail) of some bindings.
fn pass_fail(bs: &[CheckedBinding]) -> (usize, usize) {
    let pass = bs
        .iter()
        .filter(|b| b.status == BindingStatus::Pass)
        .count();
    (pass, bs.len() - pass)
}

fn unverified_json(t: &RunTrace) -> Value {
    let bs = unverified(t);
    let (pass, fail) = pass_fail(bs);
    json!({ "pass": pass, "fail": fail, "bindings": binding_list_json(bs) })
}

fn run_json(t: &RunTrace) -> Value {
    let r = &t.run;
    json!({
        "run_id": r.run_id,
        "session_id": r.session_id,
        "question": r.query,
        "status": r.status.as_str(),
        "degraded": r.degraded,
        "model": r.model,
    })
}

fn verdicts_json(t: &RunTrace) -> Value {
    let v = t.run.verdicts.unwrap_or_default();
    json!({
        "model_verdict": v.model_verdict,
        "ceiling": v.ceiling,
        "effective_verdict": v.effective_verdict.or(t.run.effective_verdict),
        "groundedness_score": v.groundedness_score,
        "evidence_retry_count": v.evidence_retry_count,
    })
}

fn bindings_json(t: &RunTrace) -> Value {
    binding_list_json(bindings(t))
}

fn binding_list_json(bs: &[CheckedBinding]) -> Value {
    Value::Array(
        bs.iter()
            .map(|b| {
                json!({
                    "claim_id": b.claim_id,
                    "claim_text": b.claim_text,
                    "tool": b.tool_name,
                    "invocation_id": b.source_invocation_id,
                    "raw_path": b.raw_path,
                    "status": if b.status == BindingStatus::Pass { "PASS" } else { "FAIL" },
                    "failed_rule": b.failed_rule,
                })
            })
            .collect(),
    )
}

fn usage_json(t: &RunTrace) -> Value {
    let r = &t.run;
    json!({
        "tokens": r.total_token_count,
        "model_calls": r.step_count,
        "tool_calls": r.tool_call_count,
        "duration_ms": r.total_duration_ms,
    })
}

fn route_names(t: &RunTrace) -> Vec<&'static str> {
    super::route(t).iter().map(|n| n.as_str()).collect()
}

/// The comparison as JSON (`compare --json`).
pub fn to_json(a: &RunTrace, b: &RunTrace) -> Value {
    let (ca, cb) = (claims(a), claims(b));
    let (ra, rb) = (route_names(a), route_names(b));
    json!({
        "a": run_json(a),
        "b": run_json(b),
        "route": { "a": ra, "b": rb, "same": ra == rb },
        "verdicts": { "a": verdicts_json(a), "b": verdicts_json(b) },
        "claims": {
            "only_a": ca.difference(&cb).collect::<Vec<_>>(),
            "only_b": cb.difference(&ca).collect::<Vec<_>>(),
            "both": ca.intersection(&cb).collect::<Vec<_>>(),
        },
        "bindings": { "a": bindings_json(a), "b": bindings_json(b) },
        "unverified_bindings": { "a": unverified_json(a), "b": unverified_json(b) },
        "usage": { "a": usage_json(a), "b": usage_json(b) },
    })
}

/// Two columns of `w` each, with a label column in front.
struct Table {
    w: usize,
    out: String,
}

impl Table {
    fn row(&mut self, label: &str, a: &str, b: &str) {
        let mark = if a == b { ' ' } else { '≠' };
        let cell = |s: &str| {
            let s = truncate_width(&sanitize_line(s), self.w);
            let pad = self.w.saturating_sub(display_width(&s));
            format!("{s}{}", " ".repeat(pad))
        };
        let line = format!("{mark} {label:<14} {} │ {}", cell(a), cell(b));
        self.out.push_str(line.trim_end());
        self.out.push('\n');
    }

    fn heading(&mut self, title: &str) {
        self.out.push_str(&format!("\n{title}\n"));
    }
}

fn v(s: Option<crate::vocab::contracts::Verdict>) -> String {
    s.map_or("—".into(), |v| v.as_str().into())
}

fn status(b: &CheckedBinding) -> String {
    if b.status == BindingStatus::Pass {
        "PASS".to_string()
    } else {
        format!("FAIL {}", b.failed_rule.as_deref().unwrap_or(""))
    }
}

/// An unverified binding's line: the rule a failing one broke gets a row
/// of its own (below), so the column's truncation cannot cut it.
fn unverified_line(b: &CheckedBinding) -> String {
    let outcome = if b.status == BindingStatus::Pass {
        "PASS"
    } else {
        "FAIL"
    };
    format!(
        "{outcome} {} #{}",
        truncate_middle(&sanitize_line(&b.claim_id), 24),
        b.source_invocation_id
            .map_or_else(|| "—".into(), |i| i.to_string()),
    )
}

fn failed_rule(b: Option<&CheckedBinding>) -> &str {
    b.filter(|b| b.status != BindingStatus::Pass)
        .map_or("", |b| {
            b.failed_rule.as_deref().unwrap_or("(no rule named)")
        })
}

fn binding_line(b: &CheckedBinding) -> String {
    let status = status(b);
    format!(
        "{} {} #{} {} {status}",
        truncate_middle(&sanitize_line(&b.claim_id), 16),
        sanitize_line(&b.tool_name),
        b.source_invocation_id
            .map_or_else(|| "—".into(), |i| i.to_string()),
        sanitize_line(b.raw_path.as_deref().unwrap_or("—")),
    )
}

/// The comparison as text, two columns of `col` width each (a line marked
/// `≠` differs). The TUI's compare view draws these lines too.
pub fn to_text(a: &RunTrace, b: &RunTrace, col: usize) -> String {
    let mut t = Table {
        w: col.max(12),
        out: String::new(),
    };
    let (ra, rb) = (a.run.run_id.to_string(), b.run.run_id.to_string());
    t.row("run", &ra, &rb);
    t.row("question", &a.run.query, &b.run.query);
    t.row("status", a.run.status.as_str(), b.run.status.as_str());
    t.row(
        "degraded",
        &a.run.degraded.to_string(),
        &b.run.degraded.to_string(),
    );
    t.row("model", &a.run.model, &b.run.model);

    t.heading("verdicts");
    let (va, vb) = (
        a.run.verdicts.unwrap_or_default(),
        b.run.verdicts.unwrap_or_default(),
    );
    t.row("model verdict", &v(va.model_verdict), &v(vb.model_verdict));
    t.row("ceiling", &v(va.ceiling), &v(vb.ceiling));
    t.row(
        "effective",
        &v(va.effective_verdict.or(a.run.effective_verdict)),
        &v(vb.effective_verdict.or(b.run.effective_verdict)),
    );
    let g = |s: Option<f64>| s.map_or("—".into(), |g| format!("{g:.2}"));
    t.row(
        "groundedness",
        &g(va.groundedness_score),
        &g(vb.groundedness_score),
    );

    t.heading("route");
    let (pa, pb) = (route_names(a), route_names(b));
    for i in 0..pa.len().max(pb.len()) {
        t.row(
            &format!("step {}", i + 1),
            pa.get(i).copied().unwrap_or(""),
            pb.get(i).copied().unwrap_or(""),
        );
    }

    t.heading("claims");
    let (ca, cb) = (claims(a), claims(b));
    for c in ca.union(&cb) {
        let mark = |set: &BTreeSet<String>| if set.contains(c) { c.as_str() } else { "" };
        t.row("claim", mark(&ca), mark(&cb));
    }

    t.heading("bindings");
    let (ba, bb) = (bindings(a), bindings(b));
    for i in 0..ba.len().max(bb.len()) {
        t.row(
            "binding",
            &ba.get(i).map(binding_line).unwrap_or_default(),
            &bb.get(i).map(binding_line).unwrap_or_default(),
        );
    }

    // Only when a run has any, so comparisons of runs without hypotheses'
    // or actions' bindings read as before.
    let (ua, ub) = (unverified(a), unverified(b));
    if !ua.is_empty() || !ub.is_empty() {
        t.heading("unverified bindings (hypotheses/actions)");
        let counts = |bs: &[CheckedBinding]| {
            let (pass, fail) = pass_fail(bs);
            format!("{pass} pass / {fail} fail")
        };
        t.row("pass/fail", &counts(ua), &counts(ub));
        for i in 0..ua.len().max(ub.len()) {
            t.row(
                "unverified",
                &ua.get(i).map(unverified_line).unwrap_or_default(),
                &ub.get(i).map(unverified_line).unwrap_or_default(),
            );
            let (fa, fb) = (failed_rule(ua.get(i)), failed_rule(ub.get(i)));
            if !fa.is_empty() || !fb.is_empty() {
                t.row("  failed rule", fa, fb);
            }
        }
    }

    t.heading("usage");
    t.row(
        "tokens",
        &a.run.total_token_count.to_string(),
        &b.run.total_token_count.to_string(),
    );
    t.row(
        "model calls",
        &a.run.step_count.to_string(),
        &b.run.step_count.to_string(),
    );
    t.row(
        "tool calls",
        &a.run.tool_call_count.to_string(),
        &b.run.tool_call_count.to_string(),
    );
    let d = |ms: Option<i64>| ms.map_or("—".into(), |ms| format!("{ms} ms"));
    t.row(
        "duration",
        &d(a.run.total_duration_ms),
        &d(b.run.total_duration_ms),
    );
    t.out
}

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
//! id when a claim has no text. Invocations are matched by what was
//! called, not by their ids (numbered per database): the tool, its
//! arguments and which call of that tool with those arguments it was, so a
//! run and its exact `rerun` compare equal. Each side also shows its
//! Gatekeeper status and the reason codes of its route, so a fallback run
//! reads with its reason.

use crate::text::{display_width, sanitize_line, truncate_middle, truncate_width};
use crate::vocab::contracts::{BindingStatus, CheckedBinding};
use crate::vocab::run_trace::RunTrace;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// An invocation as a rerun repeats it: the tool, its arguments (keys
/// sorted) and which call of that tool with those arguments it was, in
/// call order.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Call {
    tool: String,
    arguments: String,
    occurrence: usize,
}

impl Call {
    fn json(&self) -> Value {
        json!({
            "tool": self.tool,
            "arguments": serde_json::from_str::<Value>(&self.arguments).unwrap_or(Value::Null),
            "occurrence": self.occurrence,
        })
    }
}

/// A JSON value with object keys sorted at every level, as text.
fn canonical(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(map) => {
                let sorted: BTreeMap<&String, Value> =
                    map.iter().map(|(k, v)| (k, sort(v))).collect();
                Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(v).to_string()
}

/// Each invocation id of a run -> the call it was.
fn calls(t: &RunTrace) -> BTreeMap<i64, Call> {
    let mut ordered: Vec<_> = t.tool_invocations.iter().collect();
    ordered.sort_by_key(|i| (i.seq, i.id));
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    ordered
        .into_iter()
        .map(|inv| {
            let arguments = canonical(&inv.input_params);
            let n = seen
                .entry((inv.tool_name.clone(), arguments.clone()))
                .or_default();
            *n += 1;
            let call = Call {
                tool: inv.tool_name.clone(),
                arguments,
                occurrence: *n,
            };
            (inv.id, call)
        })
        .collect()
}

/// What a binding says, with its invocation as the call it was: equal
/// for a run and its exact rerun.
fn binding_key(b: &CheckedBinding, calls: &BTreeMap<i64, Call>) -> String {
    let call = b
        .source_invocation_id
        .map(|id| {
            calls
                .get(&id)
                .map_or_else(|| format!("unknown invocation {id}"), |c| format!("{c:?}"))
        })
        .unwrap_or_default();
    format!(
        "{}\u{1f}{}\u{1f}{call}\u{1f}{:?}\u{1f}{}",
        claim_key(b),
        b.tool_name,
        b.raw_path,
        status(b)
    )
}

fn claim_key(b: &CheckedBinding) -> String {
    let text = b.claim_text.trim();
    sanitize_line(if text.is_empty() { &b.claim_id } else { text })
}

fn binding_keys(t: &RunTrace) -> Vec<String> {
    let calls = calls(t);
    bindings(t).iter().map(|b| binding_key(b, &calls)).collect()
}

/// The Gatekeeper's status, or why there is none.
fn gatekeeper_status(t: &RunTrace) -> String {
    t.run
        .gatekeeper_result
        .as_ref()
        .map_or_else(|| "— (not reached)".into(), |g| sanitize_line(&g.status))
}

/// The reason codes of the run's route, in order.
fn reason_codes(t: &RunTrace) -> Vec<&'static str> {
    super::path(t).iter().map(|s| s.2.as_str()).collect()
}

/// What differs between two runs in what a regression check watches:
/// `route`, `verdicts`, `claims`, `bindings` (empty when they agree).
pub fn differences(a: &RunTrace, b: &RunTrace) -> Vec<&'static str> {
    let mut out = Vec::new();
    if super::path(a) != super::path(b) {
        out.push("route");
    }
    if verdicts_json(a) != verdicts_json(b) {
        out.push("verdicts");
    }
    if claims(a) != claims(b) {
        out.push("claims");
    }
    if binding_keys(a) != binding_keys(b) {
        out.push("bindings");
    }
    out
}

/// The claims of a run, by the key they are matched on.
fn claims(t: &RunTrace) -> BTreeSet<String> {
    bindings(t).iter().map(claim_key).collect()
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
    json!({ "pass": pass, "fail": fail, "bindings": binding_list_json(bs, &calls(t)) })
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
        "gatekeeper_status": t.run.gatekeeper_result.as_ref().map(|g| g.status.clone()),
        "reason_codes": reason_codes(t),
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
    binding_list_json(bindings(t), &calls(t))
}

fn binding_list_json(bs: &[CheckedBinding], calls: &BTreeMap<i64, Call>) -> Value {
    Value::Array(
        bs.iter()
            .map(|b| {
                let call = b
                    .source_invocation_id
                    .and_then(|id| calls.get(&id))
                    .map(Call::json);
                json!({
                    "claim_id": b.claim_id,
                    "claim_text": b.claim_text,
                    "tool": b.tool_name,
                    "invocation_id": b.source_invocation_id,
                    "raw_path": b.raw_path,
                    "status": if b.status == BindingStatus::Pass { "PASS" } else { "FAIL" },
                    "failed_rule": b.failed_rule,
                    "call": call,
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
    let (va, vb) = (verdicts_json(a), verdicts_json(b));
    json!({
        "a": run_json(a),
        "b": run_json(b),
        "route": { "a": ra, "b": rb, "same": super::path(a) == super::path(b) },
        "verdicts": { "same": va == vb, "a": va, "b": vb },
        "claims": {
            "only_a": ca.difference(&cb).collect::<Vec<_>>(),
            "only_b": cb.difference(&ca).collect::<Vec<_>>(),
            "both": ca.intersection(&cb).collect::<Vec<_>>(),
        },
        "bindings": {
            "a": bindings_json(a),
            "b": bindings_json(b),
            "same": binding_keys(a) == binding_keys(b),
        },
        "unverified_bindings": { "a": unverified_json(a), "b": unverified_json(b) },
        "usage": { "a": usage_json(a), "b": usage_json(b) },
        "differs": differences(a, b),
    })
}

/// Two columns of `w` each, with a label column in front.
struct Table {
    w: usize,
    out: String,
}

impl Table {
    fn row(&mut self, label: &str, a: &str, b: &str) {
        self.row_same(label, a, b, a == b);
    }

    /// A row whose sameness is decided by the caller (invocation ids
    /// differ between a run and its rerun; the calls do not).
    fn row_same(&mut self, label: &str, a: &str, b: &str, same: bool) {
        let mark = if same { ' ' } else { '≠' };
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
    t.row("gatekeeper", &gatekeeper_status(a), &gatekeeper_status(b));

    t.heading("verdicts");
    let (va, vb) = (
        a.run.verdicts.unwrap_or_default(),
        b.run.verdicts.unwrap_or_default(),
    );
    t.row("model verdict", &v(va.model_verdict), &v(vb.model_verdict));
    t.row("ceiling", &v(va.ceiling), &v(vb.ceiling));
    // A run without a verdict (a fallback, a failure) says why.
    let effective = |t: &RunTrace, s: crate::vocab::run::VerdictSnapshot| match (
        s.effective_verdict.or(t.run.effective_verdict),
        super::path(t).last(),
    ) {
        (Some(verdict), _) => verdict.as_str().to_string(),
        (None, Some((_, _, reason))) => format!("— ({reason})"),
        (None, None) => "—".to_string(),
    };
    t.row("effective", &effective(a, va), &effective(b, vb));
    let g = |s: Option<f64>| s.map_or("—".into(), |g| format!("{g:.2}"));
    t.row(
        "groundedness",
        &g(va.groundedness_score),
        &g(vb.groundedness_score),
    );

    t.heading("route");
    let step = |t: &RunTrace| -> Vec<String> {
        super::path(t)
            .iter()
            .map(|(_, to, reason)| format!("{to} · {reason}"))
            .collect()
    };
    let (pa, pb) = (step(a), step(b));
    for i in 0..pa.len().max(pb.len()) {
        t.row(
            &format!("step {}", i + 1),
            pa.get(i).map_or("", String::as_str),
            pb.get(i).map_or("", String::as_str),
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
    let (ka, kb) = (binding_keys(a), binding_keys(b));
    for i in 0..ba.len().max(bb.len()) {
        t.row_same(
            "binding",
            &ba.get(i).map(binding_line).unwrap_or_default(),
            &bb.get(i).map(binding_line).unwrap_or_default(),
            ka.get(i) == kb.get(i),
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

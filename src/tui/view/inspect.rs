//! What Enter shows on the graph, transitions, verdict and answer panes:
//! a node attempt's own work, the verdict and how it was reached, the
//! answer and what served the run.
//!
//! Everything the events carry is shown at once (outcome, reason code,
//! timing, model calls with their tokens and errors, the node's tool
//! invocations, the Gatekeeper's result). The prompts, responses and
//! reasoning text live in the stored run (`RunTrace` steps), which the
//! runtime loads on demand; until it arrives the popup says so, and it is
//! rebuilt when it does. The Verifier's facts and rationale are read from
//! its stored response with the same contract parser the engine uses.
//!
//! Every text is sanitised; these lines are built once when the popup
//! opens (or the trace arrives), never per frame.

use super::detail::highlight_json;
use super::tables::fmt_ms;
use crate::text::{sanitize_line, sanitize_multiline};
use crate::tui::state::{AppState, RunView, StoredRun as Stored, Subject};
use crate::tui::theme::{Role, Theme};
use crate::vocab::contracts::{
    BindingStatus, CheckedBinding, GatekeeperResult, parse_verifier_output,
};
use crate::vocab::events::{EngineEvent, EventKind};
use crate::vocab::graph::NodeId;
use crate::vocab::run_trace::TracedStep;
use ratatui::text::{Line, Span};

/// Longest stored text shown per block; the rest is counted.
const BLOCK_LINES: usize = 400;

struct Out<'t> {
    lines: Vec<Line<'static>>,
    t: &'t Theme,
}

impl Out<'_> {
    fn section(&mut self, title: &str) {
        if !self.lines.is_empty() {
            self.lines.push(Line::from(""));
        }
        self.lines.push(Line::styled(
            format!("── {title} "),
            self.t.style(Role::Title),
        ));
    }

    fn kv(&mut self, label: &str, value: impl Into<String>, role: Role) {
        self.lines.push(Line::from(vec![
            Span::styled(format!("{label:<14}"), self.t.style(Role::Muted)),
            Span::styled(sanitize_line(&value.into()), self.t.style(role)),
        ]));
    }

    fn note(&mut self, text: &str) {
        self.lines
            .push(Line::styled(sanitize_line(text), self.t.style(Role::Muted)));
    }

    /// A block of stored text: highlighted when it is JSON, else as lines.
    fn block(&mut self, label: &str, text: &str) {
        self.lines.push(Line::styled(
            format!("{label}:"),
            self.t.style(Role::KeyHint),
        ));
        if text.trim().is_empty() {
            self.note("  (empty)");
            return;
        }
        let pretty = serde_json::from_str::<serde_json::Value>(text.trim())
            .ok()
            .filter(|v| v.is_object() || v.is_array())
            .and_then(|v| serde_json::to_string_pretty(&v).ok());
        let lines = match pretty {
            Some(json) => highlight_json(&json, self.t),
            None => sanitize_multiline(text)
                .lines()
                .map(|l| Line::styled(l.to_string(), self.t.style(Role::Text)))
                .collect(),
        };
        let total = lines.len();
        for mut l in lines.into_iter().take(BLOCK_LINES) {
            l.spans.insert(0, Span::raw("  "));
            self.lines.push(l);
        }
        if total > BLOCK_LINES {
            self.note(&format!(
                "  … {} more lines (diagraph trace RUN --json has them all)",
                total - BLOCK_LINES
            ));
        }
    }
}

/// Event ranges of each node attempt: (entered index, finished index or
/// the end), in the order the attempts ran.
fn attempts(events: &[EngineEvent]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        match e.kind {
            EventKind::NodeEntered { .. } => out.push((i, events.len())),
            EventKind::NodeFinished { .. } => {
                if let Some(last) = out.last_mut().filter(|a| a.1 == events.len()) {
                    last.1 = i;
                }
            }
            _ => {}
        }
    }
    out
}

/// The title and lines of a detail about the shown run, from its applied
/// events and whatever of its stored trace has arrived.
pub fn subject(state: &AppState, subject: Subject) -> Option<(String, Vec<Line<'static>>)> {
    let v = state.view();
    let stored = v
        .run_id
        .and_then(|id| state.traces.get(&id))
        .cloned()
        .unwrap_or(Stored::Loading);
    let t = &state.theme;
    let run = v
        .run_id
        .map_or_else(String::new, |id| format!("run {id} · "));
    let events = state.shown.applied();
    match subject {
        Subject::Node(k) => node(events, k, &stored, state.shown.waiting_since.is_some(), t)
            .map(|(title, lines)| (format!("{run}{title}"), lines)),
        Subject::Verdict => Some((format!("{run}verdict"), verdict(v, events, &stored, t))),
        Subject::Answer => Some((format!("{run}answer"), answer(v, &stored, t))),
    }
}

/// How many node attempts the events hold.
pub fn attempt_count(events: &[EngineEvent]) -> usize {
    attempts(events).len()
}

fn step_of(stored: &Stored, step_id: i64) -> Option<&TracedStep> {
    match stored {
        Stored::Loaded(trace) => trace.steps.iter().find(|s| s.id == step_id),
        _ => None,
    }
}

fn stored_note(out: &mut Out, stored: &Stored) {
    match stored {
        Stored::Loading => out.note("loading the prompts and responses of the stored run…"),
        Stored::Missing(why) => out.note(&format!("prompts and responses unavailable: {why}")),
        Stored::Loaded(_) => {}
    }
}

/// The k-th node attempt: (popup title, lines). `at_gate`: the run's
/// newest node has been entered and waits at the step gate for the person
/// to advance, so it has not started yet.
pub fn node(
    events: &[EngineEvent],
    k: usize,
    stored: &Stored,
    at_gate: bool,
    t: &Theme,
) -> Option<(String, Vec<Line<'static>>)> {
    let (from, to) = *attempts(events).get(k)?;
    let entered = events.get(from)?;
    let EventKind::NodeEntered { node, attempt, via } = entered.kind else {
        return None;
    };
    let mut out = Out {
        lines: Vec::new(),
        t,
    };
    let title = format!("{node} · attempt {attempt}");
    out.section(&format!("node {node} · attempt {attempt}"));
    out.kv(
        "reached over",
        via.map_or("start", |r| r.as_str()),
        Role::EdgeTaken,
    );
    let span = events.get(from..to.min(events.len())).unwrap_or_default();
    let mut tokens = 0u64;
    let mut model_ms = 0u64;
    match events.get(to) {
        Some(EngineEvent {
            kind:
                EventKind::NodeFinished {
                    outcome,
                    reason_code,
                    next,
                    detail,
                    ..
                },
            at_ms,
            ..
        }) => {
            let failed = outcome.is_technical_failure() || *next == NodeId::Fallback;
            out.kv(
                "outcome",
                format!("{outcome} · {reason_code} → {next}"),
                if failed { Role::Error } else { Role::Text },
            );
            out.kv(
                "took",
                fmt_ms(at_ms.saturating_sub(entered.at_ms)),
                Role::Text,
            );
            if !detail.is_empty() {
                // Parse errors and failed rules, in the engine's words.
                out.kv("detail", detail.clone(), Role::Error);
            }
        }
        _ if at_gate && to >= events.len() => out.kv(
            "outcome",
            "waiting at the step gate (not started)",
            Role::NodeCurrent,
        ),
        _ => out.kv("outcome", "still running", Role::NodeCurrent),
    }

    let calls: Vec<&EngineEvent> = span
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ModelCalled { .. }))
        .collect();
    // What the node decided comes first; its calls, prompts and
    // responses (long) follow.
    let mut detail = Out {
        lines: Vec::new(),
        t,
    };
    let mut verifier_response: Option<&str> = None;
    if !calls.is_empty() {
        detail.section(&format!("model calls ({})", calls.len()));
        stored_note(&mut detail, stored);
    }
    for (i, e) in calls.iter().enumerate() {
        let EventKind::ModelCalled {
            role,
            step_id,
            duration_ms,
            tokens: n,
            tool_calls,
            error,
            parse_error,
            ..
        } = &e.kind
        else {
            continue;
        };
        tokens += n;
        model_ms += duration_ms;
        detail.lines.push(Line::styled(
            format!(
                "call {} · {role} · step {step_id} · {} · {n} tokens · {tool_calls} tool calls",
                i + 1,
                fmt_ms(*duration_ms)
            ),
            t.style(Role::Title),
        ));
        if let Some(err) = error {
            detail.kv("error", err.clone(), Role::Error);
        }
        if let Some(why) = parse_error {
            detail.kv("answer rejected", why.clone(), Role::Error);
        }
        if let Some(step) = step_of(stored, *step_id) {
            if let Some(err) = step.error.as_ref().filter(|e| Some(*e) != error.as_ref()) {
                detail.kv("error", err.clone(), Role::Error);
            }
            detail.block("prompt (the input DTO, rendered)", &step.model_input);
            detail.block("response", &step.model_output);
            if !step.thought.trim().is_empty() {
                detail.block("reasoning", &step.thought);
            }
            if node == NodeId::Verifier {
                verifier_response = Some(&step.model_output);
            }
        }
    }

    let invocations: Vec<_> = span
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolInvoked { invocation } => Some(invocation),
            _ => None,
        })
        .collect();
    if !invocations.is_empty() {
        detail.section(&format!("tool invocations ({})", invocations.len()));
        for inv in invocations {
            let rd = &inv.retrieval_details;
            let role = super::tables::evidence_role(rd.evidence_status);
            detail.lines.push(Line::from(vec![
                Span::styled(format!("{} ", inv.id), t.style(Role::Text)),
                Span::styled(
                    format!("{} ", sanitize_line(&inv.tool_name)),
                    t.style(Role::KeyHint),
                ),
                Span::styled(rd.evidence_status.as_str().to_string(), t.style(role)),
                Span::styled(
                    format!(
                        " · {} refs · {} · {}",
                        rd.evidence_refs.len(),
                        fmt_ms(inv.duration_ms),
                        sanitize_line(&inv.query_summary())
                    ),
                    t.style(Role::Muted),
                ),
            ]));
            if let Some(f) = inv.failure() {
                detail.kv(
                    "  failed",
                    format!("{}: {}", f.class, f.message),
                    Role::Error,
                );
            }
        }
    }

    for e in span {
        if let EventKind::GatekeeperChecked { result } = &e.kind {
            gatekeeper(&mut out, result);
        }
    }
    for e in span {
        if let EventKind::VerdictUpdated(v) = &e.kind {
            out.section("verdict after this node");
            let s = |v: Option<crate::vocab::contracts::Verdict>| v.map_or("—", |v| v.as_str());
            out.kv("model verdict", s(v.model_verdict), Role::Text);
            out.kv("ceiling", s(v.ceiling), Role::Text);
            out.kv("effective", s(v.effective_verdict), Role::Text);
        }
    }
    if let Some(response) = verifier_response {
        verifier_output(&mut out, response);
    }
    if !detail.lines.is_empty() {
        out.lines.push(Line::from(""));
        out.lines.extend(detail.lines);
    }

    out.section("usage");
    out.kv(
        "tokens",
        format!("{tokens} (cost is not recorded for this model)"),
        Role::Text,
    );
    out.kv("model time", fmt_ms(model_ms), Role::Text);
    Some((title, out.lines))
}

/// The Verifier's facts and rationale, from its stored response.
fn verifier_output(out: &mut Out, response: &str) {
    match parse_verifier_output(response) {
        Ok(v) => {
            out.section("verifier facts");
            out.kv(
                "verdict",
                format!(
                    "{} · groundedness {:.2} · {} critical facts",
                    v.verdict.as_str(),
                    v.groundedness_score,
                    v.critical_fact_count
                ),
                Role::Text,
            );
            for f in &v.facts_checked {
                let verification = serde_json::to_value(f.verification)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                let role = if f.verification.is_supported() {
                    Role::BindingPass
                } else {
                    Role::BindingFailed
                };
                let claim = f.claim_id.as_deref().unwrap_or("");
                out.lines.push(Line::from(vec![
                    Span::styled(
                        format!(
                            "{} {verification} ",
                            if f.verification.is_supported() {
                                "✓"
                            } else {
                                "✗"
                            }
                        ),
                        out.t.style(role),
                    ),
                    Span::styled(
                        format!(
                            "{}{}{}",
                            if f.is_critical { "[critical] " } else { "" },
                            if claim.is_empty() {
                                String::new()
                            } else {
                                format!("{} · ", sanitize_line(claim))
                            },
                            sanitize_line(&f.fact)
                        ),
                        out.t.style(Role::Text),
                    ),
                ]));
                if !f.detail.is_empty() {
                    out.note(&format!("    {}", f.detail));
                }
            }
            out.section("verifier rationale");
            out.block("rationale", &v.rationale);
        }
        Err(e) => {
            out.section("verifier facts");
            out.kv("parse error", e.to_string(), Role::Error);
        }
    }
}

/// The Gatekeeper's result: status, bindings, and its claim-level errors,
/// failed rules and warnings; then, in a section of their own, the
/// unverified bindings of hypotheses and actions.
fn gatekeeper(out: &mut Out, g: &GatekeeperResult) {
    out.section("gatekeeper");
    let pass = g.verified_binding_count();
    out.kv(
        "status",
        format!("{}/{}", g.status, g.severity),
        if g.status == "pass" {
            Role::BindingPass
        } else {
            Role::BindingFailed
        },
    );
    out.kv(
        "bindings",
        format!("{pass}/{} pass", g.checked_bindings.len()),
        Role::Text,
    );
    out.kv("rule set", g.rule_set_version.clone(), Role::Muted);
    let failed_line = |b: &CheckedBinding| {
        format!(
            "{} · {} · {}{}",
            b.claim_id,
            b.failed_rule.as_deref().unwrap_or(""),
            b.raw_path.as_deref().unwrap_or("—"),
            if b.detail.is_empty() {
                String::new()
            } else {
                format!(" · {}", b.detail)
            }
        )
    };
    for b in g
        .checked_bindings
        .iter()
        .filter(|b| b.failed_rule.is_some())
    {
        out.kv("failed binding", failed_line(b), Role::BindingFailed);
    }
    for e in &g.errors {
        out.kv("claim error", e.clone(), Role::Error);
    }
    for r in &g.failed_rules {
        out.kv("failed rule", r.clone(), Role::Error);
    }
    for w in &g.warnings {
        out.kv("warning", w.clone(), Role::Degraded);
    }
    if !g.unverified_bindings.is_empty() {
        // Apart from the claims' bindings: they ground no finding.
        out.section(super::tables::bindings::UNVERIFIED);
        let (pass, total) = super::tables::bindings::passed(&g.unverified_bindings);
        out.kv(
            "bindings",
            format!("{pass}/{total} pass"),
            if pass < total {
                Role::BindingFailed
            } else {
                Role::Muted
            },
        );
        for b in &g.unverified_bindings {
            match b.status {
                BindingStatus::Fail => out.kv("failed", failed_line(b), Role::BindingFailed),
                BindingStatus::Pass => out.kv(
                    "pass",
                    format!(
                        "{} · {} · {}",
                        b.claim_id,
                        b.tool_name,
                        b.raw_path.as_deref().unwrap_or("—")
                    ),
                    Role::Muted,
                ),
            }
        }
    }
}

/// The verdict panel in full: each verdict, why the ceiling is what it
/// is, the Gatekeeper's result and the Verifier's facts.
pub fn verdict(
    view: &RunView,
    events: &[EngineEvent],
    stored: &Stored,
    t: &Theme,
) -> Vec<Line<'static>> {
    let mut out = Out {
        lines: Vec::new(),
        t,
    };
    let v = &view.verdict;
    let s = |v: Option<crate::vocab::contracts::Verdict>| v.map_or("—", |v| v.as_str());
    out.section("verdict");
    out.kv("model verdict", s(v.model_verdict), Role::Text);
    out.kv("ceiling", s(v.ceiling), Role::Text);
    out.kv(
        "effective",
        format!(
            "{}{}",
            s(v.effective_verdict),
            if v.is_capped() {
                " ▼ capped by the ceiling"
            } else {
                ""
            }
        ),
        if v.is_capped() {
            Role::VerdictCapped
        } else {
            Role::Text
        },
    );
    for why in super::panels::ceiling_reasons(view) {
        out.kv("why", why, Role::Error);
    }
    out.kv(
        "groundedness",
        v.groundedness_score
            .map_or_else(|| "—".into(), |g| format!("{g:.2}")),
        Role::Text,
    );
    out.kv(
        "evidence retry",
        v.evidence_retry_count.to_string(),
        Role::Text,
    );
    if let Some(g) = &view.gatekeeper {
        gatekeeper(&mut out, g);
    }
    // The last Verifier call that has a stored response.
    let verifier_step = events.iter().rev().find_map(|e| match &e.kind {
        EventKind::ModelCalled {
            role: crate::vocab::agent::AgentRole::Verifier,
            step_id,
            ..
        } => Some(*step_id),
        _ => None,
    });
    if let Some(step_id) = verifier_step {
        match step_of(stored, step_id) {
            Some(step) => verifier_output(&mut out, &step.model_output),
            None => {
                out.section("verifier facts");
                stored_note(&mut out, stored);
            }
        }
    }
    out.section("usage");
    out.kv(
        "model calls",
        format!(
            "{} ({} failed) · {} tokens{}",
            view.model_calls,
            view.model_errors,
            view.tokens,
            super::panels::usage_detail(&view.usage)
        ),
        Role::Text,
    );
    out.lines
}

/// The answer in full, how the run ended and what served it.
pub fn answer(view: &RunView, stored: &Stored, t: &Theme) -> Vec<Line<'static>> {
    let mut out = Out {
        lines: Vec::new(),
        t,
    };
    out.section("run");
    if let Some(id) = view.run_id {
        out.kv("run", id.to_string(), Role::Text);
    }
    out.kv("session", view.session_id.clone(), Role::Text);
    out.kv("question", view.question.clone(), Role::Text);
    out.kv("model", view.model.clone(), Role::Text);
    if let Some(s) = &view.scenario {
        out.kv("scenario", s.clone(), Role::Text);
    }
    match &view.finished {
        Some(fin) => {
            let status = match (fin.status, fin.degraded) {
                (crate::vocab::run::RunStatus::Success, true) => "DEGRADED (a fallback answer)",
                (s, _) => s.as_str(),
            };
            out.kv("status", status, Role::Text);
            if let Some(f) = &fin.failure {
                out.kv(
                    "failure",
                    format!("{}: {}", f.class, f.message),
                    Role::Error,
                );
            }
            out.kv("took", fmt_ms(view.last_at_ms), Role::Text);
            out.kv("tokens", view.tokens.to_string(), Role::Text);
            out.section("answer");
            out.block("answer", &fin.answer);
        }
        None => out.kv("status", "no answer yet", Role::Muted),
    }
    let failed: Vec<_> = view
        .invocations
        .iter()
        .filter_map(|i| i.failure().map(|f| (i, f)))
        .collect();
    if !failed.is_empty() {
        out.section("could not be checked");
        for (inv, f) in failed {
            out.kv(
                &format!("{} #{}", inv.tool_name, inv.id),
                format!("{}: {}", f.class, f.message),
                Role::Error,
            );
        }
    }
    let src = &view.sources;
    out.section("sources");
    if let Some(p) = &src.pack {
        out.kv(
            "pack",
            format!("{} ({})", p.path, p.content_hash),
            Role::Text,
        );
    }
    for (tool, backend) in &src.tools {
        out.kv(tool, backend.clone(), Role::Text);
    }
    for (role, model) in &src.models {
        out.kv(role, model.clone(), Role::Text);
    }
    for w in &src.pack_warnings {
        out.kv("pack warning", w.clone(), Role::Degraded);
    }
    if let Stored::Loaded(trace) = stored
        && let Some(eval) = trace.run.self_evaluation()
    {
        out.section("self evaluation");
        let value = serde_json::to_value(eval).unwrap_or_default();
        out.lines.extend(super::detail::json_lines(&value, t));
    }
    out.lines
}

//! `diagraph export RUN --format markdown`: a run as an incident note:
//! the question, the answer, the verdicts, the route and a citations
//! table (claim, tool, invocation id, raw_path, excerpt, pass/fail).

use crate::text::{sanitize_line, sanitize_multiline, truncate_width};
use crate::vocab::contracts::{BindingStatus, CheckedBinding, Verdict};
use crate::vocab::run::RunStatus;
use crate::vocab::run_trace::RunTrace;
use std::fmt::Write;

/// Longest excerpt in the citations table, in columns.
const EXCERPT_W: usize = 160;

/// Untrusted text inline: one line, with what Markdown would read as
/// structure (emphasis, links, images, HTML, table pipes) escaped.
pub fn inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in sanitize_line(s).chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '!' | '|' | '#' | '~'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// An identifier as inline code; backticks inside cannot close it.
fn code(s: &str) -> String {
    let s = sanitize_line(s).replace('`', "'");
    format!("`{s}`")
}

fn verdict(v: Option<Verdict>) -> &'static str {
    v.map_or("—", |v| v.as_str())
}

pub fn render(trace: &RunTrace) -> String {
    let r = &trace.run;
    let mut md = String::new();
    let _ = writeln!(md, "# diagraph run {}\n", r.run_id);
    let _ = writeln!(md, "**Question:** {}\n", inline(&r.query));
    let status = match (r.status, r.degraded) {
        (RunStatus::Success, true) => "SUCCESS, degraded (a fallback answer)".to_string(),
        (s, _) => s.as_str().to_string(),
    };
    let _ = writeln!(
        md,
        "Status: {status} · session {} · model {} · {} · {} tokens · {}\n",
        code(&r.session_id),
        inline(&r.model),
        r.total_duration_ms
            .map_or_else(|| "—".into(), |ms| format!("{ms} ms")),
        r.total_token_count,
        inline(&r.created_at),
    );
    if let Some(f) = &r.failure {
        let _ = writeln!(md, "Failure: {} — {}\n", f.class, inline(&f.message));
    }

    let _ = writeln!(md, "## Answer\n");
    let answer = sanitize_multiline(&r.answer);
    if answer.trim().is_empty() {
        let _ = writeln!(md, "_(no answer)_\n");
    } else {
        for line in answer.lines() {
            let _ = writeln!(md, "> {}", inline(line));
        }
        md.push('\n');
    }

    let v = r.verdicts.unwrap_or_default();
    let _ = writeln!(md, "## Verdicts\n");
    let _ = writeln!(
        md,
        "| model verdict | ceiling | effective verdict | groundedness | evidence retries |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|");
    let _ = writeln!(
        md,
        "| {} | {} | {} | {} | {} |\n",
        verdict(v.model_verdict),
        verdict(v.ceiling),
        verdict(v.effective_verdict.or(r.effective_verdict)),
        v.groundedness_score
            .map_or_else(|| "—".into(), |g| format!("{g:.2}")),
        v.evidence_retry_count,
    );
    if let Some(g) = &r.gatekeeper_result {
        let _ = writeln!(
            md,
            "Gatekeeper: {}/{} · {}/{} bindings pass",
            inline(&g.status),
            inline(&g.severity),
            g.verified_binding_count(),
            g.checked_bindings.len()
        );
        if !g.unverified_bindings.is_empty() {
            let _ = writeln!(
                md,
                "Unverified (hypotheses/actions): {}/{} bindings pass",
                pass_count(&g.unverified_bindings),
                g.unverified_bindings.len()
            );
        }
        for e in &g.errors {
            let _ = writeln!(md, "- claim error: {}", inline(e));
        }
        for rule in &g.failed_rules {
            let _ = writeln!(md, "- failed rule: {}", code(rule));
        }
        md.push('\n');
    }

    let _ = writeln!(md, "## Route\n");
    let path = super::path(trace);
    if path.is_empty() {
        let _ = writeln!(md, "_(the stored orchestration trace does not parse)_\n");
    } else {
        let nodes = super::route(trace)
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join(" → ");
        let _ = writeln!(md, "{nodes}\n");
        for (i, (from, to, reason)) in path.iter().enumerate() {
            let _ = writeln!(md, "{}. {from} → {to} ({})", i + 1, code(reason.as_str()));
        }
        md.push('\n');
    }

    let _ = writeln!(md, "## Citations\n");
    let (bindings, unverified) = r
        .gatekeeper_result
        .as_ref()
        .map(|g| {
            (
                g.checked_bindings.as_slice(),
                g.unverified_bindings.as_slice(),
            )
        })
        .unwrap_or_default();
    if bindings.is_empty() {
        let _ = writeln!(md, "_(no evidence bindings were checked)_\n");
    } else {
        binding_table(&mut md, bindings);
    }

    // Hypotheses and actions cite evidence too, and the gatekeeper checks
    // those citations, but they never verify a finding: a section of their
    // own keeps a passing one from reading as a verified citation.
    if !unverified.is_empty() {
        let _ = writeln!(md, "## Unverified bindings (hypotheses/actions)\n");
        let _ = writeln!(
            md,
            "{}/{} pass · checked by the same rules, not verified citations and not counted above\n",
            pass_count(unverified),
            unverified.len()
        );
        binding_table(&mut md, unverified);
    }

    // Model answers that were not used, and why (a Composer statement the
    // evidence did not ground names its rule and word here).
    let rejected: Vec<_> = trace
        .steps
        .iter()
        .filter(|s| s.parse_error.is_some())
        .collect();
    if !rejected.is_empty() {
        let _ = writeln!(md, "## Rejected model answers\n");
        for s in rejected {
            let _ = writeln!(
                md,
                "- {} attempt {}: {}",
                code(&s.agent_name),
                s.attempt,
                inline(s.parse_error.as_deref().unwrap_or_default())
            );
        }
        md.push('\n');
    }

    timeline_section(&mut md, trace);

    if !r.failed_sources.is_empty() {
        let _ = writeln!(md, "## Could not be checked\n");
        for f in &r.failed_sources {
            let _ = writeln!(
                md,
                "- {} invocation {} ({}): {}",
                code(&f.tool),
                f.invocation_id,
                f.class,
                inline(&f.message)
            );
        }
        md.push('\n');
    }
    md
}

/// The evidence timeline as a text picture in a fence no run text can
/// close (longer than any run of backticks in it).
fn timeline_section(md: &mut String, trace: &RunTrace) {
    use super::timeline::{Timeline, TimelineInput, text};
    let Some(t) = Timeline::build(&TimelineInput::from_trace(trace)) else {
        return;
    };
    let body = text::render(&t, TIMELINE_WIDTH, false).join("\n");
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    let _ = writeln!(md, "## Timeline\n\n{fence}text\n{body}\n{fence}\n");
}

/// Columns of the timeline picture in the Markdown note.
const TIMELINE_WIDTH: usize = 100;

fn pass_count(bindings: &[CheckedBinding]) -> usize {
    bindings
        .iter()
        .filter(|b| b.status == BindingStatus::Pass)
        .count()
}

/// One row per binding: what it cites, and PASS or FAIL with its rule.
/// The claim cell of a citation row whose claim is the row above's.
const SAME_CLAIM: &str = "″";

fn binding_table(md: &mut String, bindings: &[CheckedBinding]) {
    let _ = writeln!(
        md,
        "| claim | tool | invocation | raw_path | excerpt | check |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|");
    let mut previous: Option<String> = None;
    for b in bindings {
        let pass = b.status == BindingStatus::Pass;
        let claim = if b.claim_text.is_empty() {
            b.claim_id.clone()
        } else {
            format!("{}: {}", b.claim_id, b.claim_text)
        };
        // A claim with several citations is stated on its first row; the
        // rows under it say "″" (ditto).
        let shown = if previous.as_deref() == Some(claim.as_str()) {
            SAME_CLAIM.to_string()
        } else {
            inline(&claim)
        };
        previous = Some(claim);
        let excerpt = if pass {
            &b.matched_text
        } else {
            &b.evidence_excerpt
        };
        let check = match (&b.failed_rule, pass) {
            (_, true) => "PASS".to_string(),
            (Some(rule), false) => format!("FAIL {}", code(rule)),
            (None, false) => "FAIL".to_string(),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {check} |",
            shown,
            code(&b.tool_name),
            b.source_invocation_id
                .map_or_else(|| "—".into(), |i| i.to_string()),
            b.raw_path.as_deref().map_or_else(|| "—".into(), code),
            inline(&truncate_width(&sanitize_line(excerpt), EXCERPT_W)),
        );
    }
    md.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_with_several_citations_is_stated_once() {
        let b = |path: &str| CheckedBinding {
            claim_id: "claim-1".into(),
            claim_text: "DB pool exhausted".into(),
            tool_name: "query_logs".into(),
            source_invocation_id: Some(7),
            raw_path: Some(path.into()),
            status: BindingStatus::Pass,
            claim_type: String::new(),
            evidence_excerpt: String::new(),
            matched_text: "ERROR pool".into(),
            failed_rule: None,
            detail: String::new(),
            backfilled: false,
        };
        let mut md = String::new();
        binding_table(&mut md, &[b("$.logs[0]"), b("$.logs[1]")]);
        assert_eq!(md.matches("DB pool exhausted").count(), 1, "{md}");
        assert!(md.contains("| ″ | `query_logs`"), "{md}");
    }

    #[test]
    fn inline_escapes_structure_and_controls() {
        let s = inline("a|b ![x](http://e) <img> *bold*\u{1b}[2J");
        assert!(!s.contains('\u{1b}'));
        assert!(s.contains("a\\|b"));
        assert!(s.contains("\\!\\[x\\]"));
        assert!(s.contains("\\<img\\>"));
        assert!(s.contains("\\*bold\\*"));
    }

    #[test]
    fn a_rejected_model_answer_is_exported_with_its_rule_and_word() {
        let step = |attempt: i64, why: Option<&str>| {
            serde_json::json!({
                "id": attempt, "runId": 1, "sessionId": "s", "seq": attempt, "stepIndex": attempt,
                "agentName": "composer", "attempt": attempt, "modelInput": "", "modelOutput": "{}",
                "thought": "", "hasToolCall": false, "durationMs": 1, "tokenCount": 1,
                "error": null, "createdAt": "2026-07-08T23:05:28Z", "parseError": why
            })
        };
        let trace: RunTrace = serde_json::from_value(serde_json::json!({
            "run": {
                "runId": 1, "sessionId": "s", "status": "SUCCESS", "agentFlow": "CHAT",
                "query": "why?", "answer": "a", "model": "m", "pack": null, "scenario": null,
                "degraded": false, "effectiveVerdict": "PASS", "totalDurationMs": 1,
                "totalTokenCount": 1, "stepCount": 2, "toolCallCount": 0,
                "selfEvaluation": null, "orchestrationTrace": null, "failureReason": null,
                "failure": null, "sources": null, "failedSources": [], "feedback": null,
                "createdAt": "2026-07-08T23:05:28Z", "finishedAt": null,
                "verdicts": null, "gatekeeperResult": null, "eventCount": 0
            },
            "steps": [
                step(1, Some("answer.statement_grounded: statements[0] says \"revenue\"")),
                step(2, None)
            ],
            "toolInvocations": []
        }))
        .unwrap();
        let md = render(&trace);
        assert!(md.contains("## Rejected model answers"), "{md}");
        assert!(
            md.contains("`composer` attempt 1: answer.statement\\_grounded"),
            "{md}"
        );
        assert!(md.contains("revenue"), "{md}");
        assert!(!md.contains("attempt 2"), "{md}");
    }

    #[test]
    fn code_cannot_be_closed_early() {
        assert_eq!(code("$.a`b"), "`$.a'b`");
    }
}

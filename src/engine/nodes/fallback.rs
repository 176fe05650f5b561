//! The deterministic Fallback and the user-facing templates, in English and
//! Chinese.
//!
//! Two fallbacks, two trust levels. Before the Verifier nothing the
//! Executor said is trustworthy, so [`pre_verification_answer`] takes no
//! claim or tool text at all: only the reason code, code-made tool counts
//! and the run id. After the Verifier, [`post_verifier_answer`] renders only
//! Verifier-allowed material ([`ComposerInput`]), and never lets a
//! "found nothing" result read as "ruled out": any model-written line with
//! an over-statement phrase is replaced by a code-made sentence or dropped.

use crate::text::{clean, one_line};
use crate::vocab::contracts::{Lang, OVERSTATEMENT_PHRASES, Verdict, Verification};
use crate::vocab::dto::{AllowedClaim, ComposerInput, VerifiedEvidence};
use crate::vocab::graph::ReasonCode;
use crate::vocab::tool::{EvidenceStatus, ToolInvocation};
use serde::{Deserialize, Serialize};
use std::borrow::Borrow;

/// Code-made tool call counts of one run, for the pre-verification answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ToolCounts {
    pub succeeded: usize,
    pub failed: usize,
    pub blocked: usize,
}

impl ToolCounts {
    /// Blocked = refused by the permission layer; failed = any other error;
    /// succeeded = returned a result (supported, no_evidence or deduped).
    pub fn from_invocations(invocations: &[impl Borrow<ToolInvocation>]) -> ToolCounts {
        let mut c = ToolCounts::default();
        for i in invocations.iter().map(Borrow::borrow) {
            let d = &i.retrieval_details;
            if d.blocked {
                c.blocked += 1;
            } else if d.evidence_status == EvidenceStatus::Failed || !i.success {
                c.failed += 1;
            } else {
                c.succeeded += 1;
            }
        }
        c
    }

    pub fn describe(self, lang: Lang) -> String {
        let ToolCounts {
            succeeded,
            failed,
            blocked,
        } = self;
        match lang {
            Lang::En => format!("{succeeded} succeeded, {failed} failed, {blocked} blocked"),
            Lang::Zh => format!("成功 {succeeded} 次，失败 {failed} 次，阻断 {blocked} 次"),
        }
    }
}

fn reason_line(lang: Lang, reason_code: Option<ReasonCode>) -> &'static str {
    use ReasonCode as R;
    match (lang, reason_code) {
        (Lang::En, Some(R::PlannerFailed)) => {
            "The diagnosis did not pass structure validation: no valid investigation plan could be produced."
        }
        (Lang::En, Some(R::ExecutorInvalidOutput)) => {
            "The diagnosis did not pass structure validation: the executor's output was not a valid evidence contract."
        }
        (Lang::En, Some(R::ExecutorToolBlocked)) => {
            "The diagnosis did not pass validation: the executor tried to use a tool that is not permitted."
        }
        (Lang::En, Some(R::ExecutorFailed)) => {
            "The diagnosis did not pass structure validation: the executor failed before producing a valid evidence contract."
        }
        (Lang::En, Some(R::GatekeeperReject)) => {
            "Some evidence was collected, but the diagnosis did not pass evidence-citation validation: cited evidence could not be matched to the recorded tool results."
        }
        (Lang::En, Some(R::GatekeeperNoVerifiedBinding)) => {
            "Some evidence was collected, but the diagnosis did not pass evidence-citation validation: none of its citations could be verified against the recorded tool results."
        }
        (Lang::En, Some(R::VerifierFailed)) => {
            "The diagnosis could not be verified: the evidence verification step failed."
        }
        (Lang::En, _) => "The diagnosis did not pass structure or evidence-citation validation.",
        (Lang::Zh, Some(R::PlannerFailed)) => {
            "本次诊断未能生成有效的排查计划，诊断结果未通过结构校验。"
        }
        (Lang::Zh, Some(R::ExecutorInvalidOutput)) => {
            "本次诊断的执行结果未通过结构校验（输出不符合证据契约）。"
        }
        (Lang::Zh, Some(R::ExecutorToolBlocked)) => {
            "本次诊断调用了未被允许的工具，诊断结果未通过校验。"
        }
        (Lang::Zh, Some(R::ExecutorFailed)) => {
            "本次诊断在执行阶段失败，未产生通过结构校验的诊断结果。"
        }
        (Lang::Zh, Some(R::GatekeeperReject)) => {
            "本次诊断已完成部分证据采集，但诊断结果未通过证据引用校验。"
        }
        (Lang::Zh, Some(R::GatekeeperNoVerifiedBinding)) => {
            "本次诊断已完成部分证据采集，但没有任何证据引用通过校验。"
        }
        (Lang::Zh, Some(R::VerifierFailed)) => "本次诊断的证据校验步骤失败，诊断结果未经验证。",
        (Lang::Zh, _) => "本次诊断未通过结构或证据引用校验。",
    }
}

/// The answer for a failure before the Verifier. It has no parameter that
/// could carry Executor or tool text, so it cannot leak any.
pub fn pre_verification_answer(
    lang: Lang,
    reason_code: Option<ReasonCode>,
    counts: ToolCounts,
    run_id: i64,
) -> String {
    let reason = reason_line(lang, reason_code);
    let counts = counts.describe(lang);
    match lang {
        Lang::En => format!(
            "{reason}\nNo trustworthy root cause can be given from this run.\n\
             Tool calls: {counts}.\n\
             Review the tool calls in the trace (`diagraph trace {run_id}`), or gather more evidence and ask again."
        ),
        Lang::Zh => format!(
            "{reason}\n当前无法给出可信根因。\n工具调用：{counts}。\n\
             建议结合 Trace 中的工具调用记录进行人工复核（`diagraph trace {run_id}`），或补充证据后重新提问。"
        ),
    }
}

/// The caution line the engine prepends to a Composer answer.
pub fn verdict_banner(lang: Lang, verdict: Verdict) -> Option<&'static str> {
    match (lang, verdict) {
        (_, Verdict::Pass) => None,
        (Lang::En, Verdict::LowConfid) => Some(
            "The following is based on the evidence gathered so far; some evidence is still missing, so use it with caution.",
        ),
        (Lang::Zh, Verdict::LowConfid) => {
            Some("以下结论基于当前已获取证据，仍存在部分证据缺口，请谨慎参考。")
        }
        (Lang::En, Verdict::Reject) => {
            Some("No reliable conclusion can be drawn from the evidence gathered.")
        }
        (Lang::Zh, Verdict::Reject) => Some("当前无法基于已获取证据生成可靠结论。"),
    }
}

struct Labels {
    confirmed_findings: &'static str,
    confirmed_info: &'static str,
    hypotheses: &'static str,
    current_gaps: &'static str,
    evidence_gaps: &'static str,
    still_missing: &'static str,
    next_steps: &'static str,
    none: &'static str,
    default_step: &'static str,
    indirect: &'static str,
}

const EN: Labels = Labels {
    confirmed_findings: "Confirmed findings:",
    confirmed_info: "Confirmed information:",
    hypotheses: "Hypotheses (not confirmed):",
    current_gaps: "Current gaps:",
    evidence_gaps: "Evidence gaps:",
    still_missing: "Still missing:",
    next_steps: "Suggested next steps:",
    none: "(none)",
    default_step: "Review the tool calls in the trace and gather the missing evidence.",
    indirect: " (indirect support only)",
};

const ZH: Labels = Labels {
    confirmed_findings: "已确认信息：",
    confirmed_info: "已确认信息：",
    hypotheses: "待验证假设（未确认）：",
    current_gaps: "当前缺口：",
    evidence_gaps: "证据缺口：",
    still_missing: "仍缺少的信息：",
    next_steps: "建议下一步：",
    none: "无",
    default_step: "结合 Trace 中的工具调用记录人工复核，并补充缺失证据。",
    indirect: "（仅有间接支持）",
};

fn labels(lang: Lang) -> &'static Labels {
    match lang {
        Lang::En => &EN,
        Lang::Zh => &ZH,
    }
}

/// Whether model text turns "found nothing" into a conclusion.
pub fn has_overstatement(text: &str) -> bool {
    let lower = text.to_lowercase();
    OVERSTATEMENT_PHRASES.iter().any(|p| lower.contains(p))
}

/// The `query=...` part of a no-evidence ref text, if it is clean.
fn query_of(matched_text: &str) -> Option<String> {
    let start = matched_text.find("query=")? + "query=".len();
    let rest = matched_text.get(start..)?;
    let q = clean(rest.split(';').next()?, 120);
    (!q.is_empty() && !has_overstatement(&q)).then_some(q)
}

/// A code-made sentence for a claim whose own text cannot be shown.
fn neutral_sentence(lang: Lang, negative: bool, evidence: &[VerifiedEvidence]) -> String {
    let Some(e) = evidence.first() else {
        return match (lang, negative) {
            (Lang::En, true) => "This query found no matching evidence.".into(),
            (Lang::Zh, true) => "本次查询未检索到匹配证据。".into(),
            (Lang::En, false) => "A verified finding is recorded in the trace.".into(),
            (Lang::Zh, false) => "一条已验证的发现记录在 Trace 中。".into(),
        };
    };
    let (tool, id) = (one_line(&e.tool_name), e.source_invocation_id);
    match (lang, negative, query_of(&e.matched_text)) {
        (Lang::En, true, Some(q)) => {
            format!("This query ({tool} #{id}, {q}) found no matching evidence.")
        }
        (Lang::En, true, None) => format!("This query ({tool} #{id}) found no matching evidence."),
        (Lang::Zh, true, Some(q)) => format!("本次查询（{tool} #{id}，{q}）未检索到匹配证据。"),
        (Lang::Zh, true, None) => format!("本次查询（{tool} #{id}）未检索到匹配证据。"),
        (Lang::En, false, _) => {
            format!("A verified finding from {tool} #{id} is recorded in the trace.")
        }
        (Lang::Zh, false, _) => format!("一条来自 {tool} #{id} 的已验证发现记录在 Trace 中。"),
    }
}

fn claim_line(lang: Lang, c: &AllowedClaim) -> String {
    let text = one_line(&c.claim_text);
    if text.is_empty() || has_overstatement(&text) {
        return neutral_sentence(lang, c.is_negative, &c.evidence);
    }
    if c.is_negative {
        return match lang {
            Lang::En => format!("No matching evidence was found by this query: {text}"),
            Lang::Zh => format!("本次查询未检索到匹配证据：{text}"),
        };
    }
    if c.verification == Verification::IndirectSupport {
        format!("{text}{}", labels(lang).indirect)
    } else {
        text
    }
}

/// Model-written lines that may be shown as they are (clean, non-empty).
fn safe_lines<'a>(items: impl Iterator<Item = &'a str>) -> Vec<String> {
    items
        .map(one_line)
        .filter(|l| !l.is_empty() && !has_overstatement(l))
        .collect()
}

fn section(out: &mut String, title: &str, lines: &[String], empty: &str) {
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(title);
    if lines.is_empty() {
        out.push_str("\n- ");
        out.push_str(empty);
    }
    for l in lines {
        out.push_str("\n- ");
        out.push_str(l);
    }
}

/// The post-verifier fallback: fixed templates over allowed material only.
pub fn post_verifier_answer(lang: Lang, input: &ComposerInput) -> String {
    let t = labels(lang);
    let claims: Vec<String> = input
        .allowed_claims
        .iter()
        .map(|c| claim_line(lang, c))
        .collect();
    let gaps = safe_lines(input.missing_info.iter().map(String::as_str));
    let hypotheses = safe_lines(
        input
            .allowed_hypotheses
            .iter()
            .map(|h| h.hypothesis_text.as_str()),
    );
    let mut steps = safe_lines(
        input
            .recommended_actions
            .iter()
            .map(|a| a.action_text.as_str()),
    );
    if steps.is_empty() {
        steps.push(t.default_step.to_string());
    }
    let mut out = String::new();
    match input.verdict {
        Verdict::Pass => {
            section(&mut out, t.confirmed_findings, &claims, t.none);
            section(&mut out, t.hypotheses, &hypotheses, t.none);
            if !gaps.is_empty() {
                section(&mut out, t.still_missing, &gaps, t.none);
            }
        }
        Verdict::LowConfid | Verdict::Reject => {
            out.push_str(verdict_banner(lang, input.verdict).unwrap_or_default());
            let gap_title = if input.verdict == Verdict::Reject {
                t.evidence_gaps
            } else {
                t.current_gaps
            };
            section(&mut out, t.confirmed_info, &claims, t.none);
            section(&mut out, gap_title, &gaps, t.none);
        }
    }
    section(&mut out, t.next_steps, &steps, t.none);
    out
}

#[cfg(test)]
mod tests;

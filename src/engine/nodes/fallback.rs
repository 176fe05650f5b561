//! The deterministic Fallback and the user-facing templates, in English and
//! Chinese.
//!
//! Two fallbacks, two trust levels. Before the Verifier nothing the
//! Executor said is trustworthy, so [`pre_verification_answer`] takes no
//! claim or tool text at all: only the reason code, code-made tool counts
//! and the run id. After the Verifier, [`post_verifier_answer`] renders only
//! Verifier-allowed material ([`ComposerInput`]) under the answer rules
//! (`nodes::answer`): a claim text that says more than its verified
//! evidence is replaced by that evidence, quoted; negative findings are
//! the code template; hypotheses and next steps stand only in the section
//! marked unverified, without lines that conclude.
//!
//! The reason line of the pre-verification answer names the failure
//! class: a model that timed out, ran out of quota or could not be reached
//! is said so, never "did not pass structure validation".

use crate::engine::nodes::answer::{self, check_text};
use crate::engine::subjects::{self, Focus};
pub use crate::evidence::answer::verdict_banner;
use crate::evidence::answer::{evidence_quote, finding_line, negative_line, titles};
use crate::text::one_line;
use crate::vocab::agent::AgentRole;
use crate::vocab::contracts::{Lang, Severity, Verdict};
use crate::vocab::dto::{AllowedClaim, ComposerInput};
use crate::vocab::graph::ReasonCode;
use crate::vocab::run::FailureClass;
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

/// A model call that failed, ending the node that led to the fallback:
/// the role and the class of the failure (never its text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelCause {
    pub role: AgentRole,
    pub class: FailureClass,
}

/// The reason line for a node whose model call failed.
fn model_reason_line(lang: Lang, cause: ModelCause) -> String {
    use FailureClass as C;
    match lang {
        Lang::En => {
            let what = match cause.class {
                C::Timeout => "timed out",
                C::Quota => "is out of quota",
                C::RateLimited => "was rate limited",
                C::Connection => "could not be reached",
                C::Unauthorized => "refused the credentials (check the API key)",
                C::Forbidden => "refused access",
                C::ServerError => "failed with a server error",
                C::BadResponse => "returned a response that could not be used",
                _ => "failed",
            };
            format!(
                "The diagnosis could not be completed: the {} model {what}.",
                cause.role
            )
        }
        Lang::Zh => {
            let role = match cause.role {
                AgentRole::Planner => "规划",
                AgentRole::Executor => "执行",
                AgentRole::Verifier => "校验",
                AgentRole::Composer => "撰写",
            };
            let what = match cause.class {
                C::Timeout => "调用超时",
                C::Quota => "配额已用尽",
                C::RateLimited => "被限流",
                C::Connection => "无法连接",
                C::Unauthorized => "拒绝了凭据（请检查 API key）",
                C::Forbidden => "拒绝访问",
                C::ServerError => "返回了服务器错误",
                C::BadResponse => "返回了无法使用的响应",
                _ => "调用失败",
            };
            format!("本次诊断未能完成：{role}模型{what}。")
        }
    }
}

/// The answer for a failure before the Verifier. It has no parameter that
/// could carry Executor or tool text, so it cannot leak any. `cause`: the
/// model failure that ended the failing node, if that is what ended it.
pub fn pre_verification_answer(
    lang: Lang,
    reason_code: Option<ReasonCode>,
    cause: Option<ModelCause>,
    counts: ToolCounts,
    run_id: i64,
) -> String {
    let reason = match cause {
        Some(c) => model_reason_line(lang, c),
        None => reason_line(lang, reason_code).to_string(),
    };
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

/// A positive claim as the fallback shows it: its text when the text says
/// nothing its verified evidence lacks, else that evidence, quoted.
fn claim_line(lang: Lang, c: &AllowedClaim, names: &[String]) -> String {
    let text = one_line(&c.claim_text);
    if text.is_empty() || check_text(&text, &[c], names).is_some() {
        return finding_line(lang, &evidence_quote(lang, c), &[c]);
    }
    finding_line(lang, &text, &[c])
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

/// The post-verifier fallback: fixed templates over allowed material only,
/// every finding checked against its verified evidence. `names`: service
/// names the sources know (lower case).
pub fn post_verifier_answer(lang: Lang, input: &ComposerInput, names: &[String]) -> String {
    post_verifier_answer_focused(lang, input, names, &Focus::default())
}

/// [`post_verifier_answer`] for a question with subjects: what was found
/// per subject first, findings about none of them under "Other activity"
/// (`engine::subjects`).
pub fn post_verifier_answer_focused(
    lang: Lang,
    input: &ComposerInput,
    names: &[String],
    focus: &Focus,
) -> String {
    let t = titles(lang);
    let rule = Some(Severity::None);
    let mut ignored = Vec::new();
    // a cause only a runbook states is background, never a finding
    let (background, observed): (Vec<&AllowedClaim>, Vec<&AllowedClaim>) = input
        .allowed_claims
        .iter()
        .filter(|c| !c.is_negative)
        .partition(|c| answer::runbook_only_cause(&[*c]));
    let (observed, other): (Vec<&AllowedClaim>, Vec<&AllowedClaim>) = observed
        .into_iter()
        .partition(|c| focus.is_about(&c.claim_id));
    let claims: Vec<String> = observed
        .iter()
        .map(|c| claim_line(lang, c, names))
        .collect();
    let other: Vec<String> = other.iter().map(|c| claim_line(lang, c, names)).collect();
    let background: Vec<String> = background
        .iter()
        .map(|c| format!("{}{}", t.background, claim_line(lang, c, names)))
        .collect();
    let negatives: Vec<String> = input
        .allowed_claims
        .iter()
        .filter(|c| c.is_negative)
        .map(|c| negative_line(lang, c))
        .collect();
    let gaps = answer::unverified(
        input.missing_info.iter().map(String::as_str),
        "",
        rule,
        &mut ignored,
    );
    let mut unverified = background;
    unverified.extend(answer::unverified(
        input
            .allowed_hypotheses
            .iter()
            .map(|h| h.hypothesis_text.as_str()),
        t.hypothesis,
        rule,
        &mut ignored,
    ));
    let steps = answer::unverified(
        input
            .recommended_actions
            .iter()
            .map(|a| a.action_text.as_str()),
        t.next_step,
        rule,
        &mut ignored,
    );
    if steps.is_empty() {
        unverified.push(format!("{}{}", t.next_step, t.default_step));
    }
    unverified.extend(steps);
    let mut out = String::new();
    if focus.applies() {
        crate::evidence::answer::section(
            &mut out,
            subjects::title(lang),
            &focus.status_lines(lang),
        );
    }
    match input.verdict {
        Verdict::Pass => {
            section(&mut out, t.confirmed_findings, &claims, t.none);
            if !negatives.is_empty() {
                section(&mut out, t.not_found, &negatives, t.none);
            }
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
            if !negatives.is_empty() {
                section(&mut out, t.not_found, &negatives, t.none);
            }
            section(&mut out, gap_title, &gaps, t.none);
        }
    }
    crate::evidence::answer::section(&mut out, subjects::other_title(lang), &other);
    section(&mut out, t.unverified, &unverified, t.none);
    out
}

#[cfg(test)]
mod tests;

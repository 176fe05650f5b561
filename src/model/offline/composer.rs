//! The offline Composer: renders the Verifier-allowed material into the
//! final answer, in the question's language.
//!
//! Structure: a verdict-appropriate opening, the likely cause (root_cause
//! claims), findings (indirect ones marked), what the queries did not find
//! (worded only as "the query found no matching ..."), unconfirmed
//! hypotheses, missing information and next steps. Negative claims are
//! re-worded from their `$.no_evidence` text rather than copied, and any
//! over-statement phrase that reached the text through quoted tool text is
//! scrubbed before the answer leaves.
//!
//! The engine shows only the `statements` (each naming its claim) and
//! assembles the answer itself; `user_facing_answer` is the draft a
//! seed-002 Composer would write. A claim text that says more than its
//! verified evidence (the answer check, `evidence::answer::check_text`) is
//! stated by its evidence instead, so an honest offline run is never
//! rejected for the Executor's wording.

use crate::evidence::answer::{self, check_text, evidence_quote};
use crate::text::clean;
use crate::vocab::contracts::{
    ComposerAction, ComposerOutput, ComposerStatement, Lang, OVERSTATEMENT_PHRASES, Verdict,
    find_overstatement,
};
use crate::vocab::dto::{AllowedClaim, ComposerInput};
use std::fmt::Write;

pub fn compose(input: &ComposerInput) -> ComposerOutput {
    let zh = input.lang == Lang::Zh;
    let causes: Vec<&AllowedClaim> = input
        .allowed_claims
        .iter()
        .filter(|c| !c.is_negative && c.claim_type == "root_cause")
        .collect();
    let findings: Vec<&AllowedClaim> = input
        .allowed_claims
        .iter()
        .filter(|c| !c.is_negative && c.claim_type != "root_cause")
        .collect();
    let negatives: Vec<&AllowedClaim> = input
        .allowed_claims
        .iter()
        .filter(|c| c.is_negative)
        .collect();

    let mut out = String::new();
    out.push_str(opening(
        input.verdict,
        causes.is_empty() && findings.is_empty(),
        zh,
    ));
    out.push('\n');
    section(
        &mut out,
        if zh { "可能原因" } else { "Likely cause" },
        causes.iter().map(|c| finding_line(c, input.lang)),
    );
    section(
        &mut out,
        if zh { "发现" } else { "Findings" },
        findings.iter().map(|c| finding_line(c, input.lang)),
    );
    section(
        &mut out,
        if zh {
            "本次查询未检索到"
        } else {
            "What the queries did not find"
        },
        negatives
            .iter()
            .map(|c| answer::negative_line(input.lang, c)),
    );
    section(
        &mut out,
        if zh {
            "未经证实的假设（来自知识库，未在当前环境中观测到）"
        } else {
            "Unconfirmed hypotheses (runbook guidance, not observed here)"
        },
        input
            .allowed_hypotheses
            .iter()
            .map(|h| clean(&h.hypothesis_text, 300)),
    );
    section(
        &mut out,
        if zh {
            "缺少的信息"
        } else {
            "Missing information"
        },
        input.missing_info.iter().map(|m| clean(m, 300)),
    );
    let actions: Vec<ComposerAction> = input
        .recommended_actions
        .iter()
        .take(5)
        .map(|a| ComposerAction {
            action_text: scrub(&clean(&a.action_text, 200)),
            reason: scrub(&clean(&a.reason, 200)),
        })
        .collect();
    section(
        &mut out,
        if zh { "下一步" } else { "Next steps" },
        actions.iter().map(|a| a.action_text.clone()),
    );
    let summary = summary(input, &causes, &findings, &negatives, zh);
    let statements: Vec<ComposerStatement> = causes
        .iter()
        .chain(findings.iter())
        .map(|c| statement(c, input.lang))
        .collect();
    let candidate = ComposerOutput {
        answer_summary: scrub(&summary),
        statements: statements.clone(),
        recommended_actions: actions,
        user_facing_answer: scrub(out.trim_end()),
    };
    if find_overstatement(&candidate).is_none() {
        return candidate;
    }
    // Unicode case folding can defeat the scrub; answer with counts only.
    let n = input.allowed_claims.len();
    let text = if zh {
        format!("共有 {n} 条经核验的结论，其原文无法安全展示，请查看运行轨迹。")
    } else {
        format!(
            "{n} verified finding(s) could not be rendered safely; see the run trace for the evidence."
        )
    };
    let statements = statements
        .into_iter()
        .filter(|s| {
            let alone = ComposerOutput {
                statements: vec![s.clone()],
                ..Default::default()
            };
            find_overstatement(&alone).is_none()
        })
        .collect();
    ComposerOutput {
        answer_summary: text.clone(),
        statements,
        recommended_actions: vec![],
        user_facing_answer: text,
    }
}

/// A positive claim as a statement: its text when that says nothing its
/// verified evidence lacks, else its evidence, quoted.
fn statement(c: &AllowedClaim, lang: Lang) -> ComposerStatement {
    let text = clean(&c.claim_text, 400);
    let text = if text.is_empty() || check_text(&text, &[c], &[]).is_some() {
        bounded_quote(lang, c)
    } else {
        text
    };
    // Quoted tool text may carry an over-statement phrase; removing words
    // adds no fact, so the scrubbed statement still passes the check.
    ComposerStatement {
        text: scrub(&text),
        claim_ids: vec![c.claim_id.clone()],
    }
}

/// The claim's evidence quoted, as many whole refs as fit in a statement:
/// the answer cuts a longer statement, and a cut inside a quote can leave
/// a piece of a number ("between 20…") the evidence does not state.
fn bounded_quote(lang: Lang, c: &AllowedClaim) -> String {
    let whole = evidence_quote(lang, c);
    if whole.chars().count() <= QUOTE_CHARS
        && c.evidence
            .iter()
            .all(|e| e.matched_text.chars().count() <= 300)
    {
        return whole;
    }
    let mut out = evidence_quote(
        lang,
        &AllowedClaim {
            evidence: vec![],
            ..c.clone()
        },
    );
    let lead_len = out.chars().count();
    let mut quoted = 0;
    for e in &c.evidence {
        let q = format!(
            "\"{}\"",
            super::text::whole_words(&e.matched_text, QUOTE_CHARS - lead_len)
        );
        let sep = if quoted == 0 { "" } else { "; " };
        if out.chars().count() + sep.len() + q.chars().count() > QUOTE_CHARS {
            break;
        }
        out.push_str(sep);
        out.push_str(&q);
        quoted += 1;
    }
    if quoted < c.evidence.len() {
        out.push_str(" …");
    }
    out
}

/// A statement's room for quoted evidence, below the answer's cut.
const QUOTE_CHARS: usize = crate::evidence::answer::STATEMENT_CHARS / 2;

fn opening(verdict: Verdict, nothing_positive: bool, zh: bool) -> &'static str {
    match (verdict, nothing_positive, zh) {
        (Verdict::Pass, false, false) => "Diagnosis, checked against the recorded evidence:",
        (Verdict::Pass, false, true) => "诊断结果（已与记录的证据逐条核对）：",
        (Verdict::Pass, true, false) => {
            "The queries returned no positive evidence; here is what was checked:"
        }
        (Verdict::Pass, true, true) => "本次查询没有检索到正向证据，以下是已检查的内容：",
        (Verdict::LowConfid, _, false) => {
            "Partial diagnosis with low confidence: some points are only indirectly supported, so treat them with caution."
        }
        (Verdict::LowConfid, _, true) => {
            "低置信度的部分诊断：部分结论只有间接证据支撑，请谨慎参考。"
        }
        (Verdict::Reject, _, false) => {
            "The evidence does not support a trustworthy diagnosis. Only the verified observations below can be stated."
        }
        (Verdict::Reject, _, true) => "现有证据不足以给出可信的诊断，只能陈述以下经核验的观察。",
    }
}

fn section(out: &mut String, title: &str, lines: impl Iterator<Item = String>) {
    let lines: Vec<String> = lines.filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return;
    }
    let colon = if title.chars().any(super::text::is_han) {
        "："
    } else {
        ":"
    };
    let _ = write!(out, "\n{title}{colon}\n");
    for l in lines {
        let _ = writeln!(out, "- {l}");
    }
}

/// A positive finding line: the claim's own text and its citation.
fn finding_line(c: &AllowedClaim, lang: Lang) -> String {
    answer::finding_line(lang, &clean(&c.claim_text, 400), &[c])
}

fn summary(
    input: &ComposerInput,
    causes: &[&AllowedClaim],
    findings: &[&AllowedClaim],
    negatives: &[&AllowedClaim],
    zh: bool,
) -> String {
    if let Some(c) = causes.first() {
        return clean(&c.claim_text, 300);
    }
    if findings.len() == 1 && negatives.is_empty() {
        return findings
            .first()
            .map_or(String::new(), |c| clean(&c.claim_text, 300));
    }
    if findings.is_empty()
        && let Some(service) = negatives.iter().find_map(|c| answer::unknown_service(c))
    {
        return if zh {
            format!("这些数据源中没有名为 {service} 的服务。")
        } else {
            format!("No service named {service} in these sources.")
        };
    }
    if findings.is_empty() && !negatives.is_empty() {
        return if zh {
            format!(
                "{} 个查询未检索到匹配结果，没有可陈述的正向证据。",
                negatives.len()
            )
        } else {
            format!(
                "{} quer(ies) found no matching results; there is no positive evidence to state.",
                negatives.len()
            )
        };
    }
    let verdict = input.verdict.as_str();
    if zh {
        format!(
            "{verdict}：{} 条经核验的发现，{} 个查询未检索到匹配结果，尚无可确认的根因。",
            findings.len(),
            negatives.len()
        )
    } else {
        format!(
            "{verdict}: {} verified finding(s), {} quer(ies) with no matching results; no cause is confirmed.",
            findings.len(),
            negatives.len()
        )
    }
}

/// Removes over-statement phrases (ASCII case-insensitively) that quoted
/// tool text may carry, so quoting a log line can never make the answer
/// claim more than the evidence.
pub fn scrub(text: &str) -> String {
    let mut s = text.to_string();
    for phrase in OVERSTATEMENT_PHRASES {
        loop {
            let lower = s.to_ascii_lowercase();
            let Some(pos) = lower.find(phrase) else { break };
            let end = pos + phrase.len();
            if !s.is_char_boundary(pos) || !s.is_char_boundary(end) {
                break;
            }
            s.replace_range(pos..end, "…");
        }
    }
    s
}

//! The parts of an answer that code writes itself, in English and Chinese:
//! section titles, citations, and the one template a negative finding is
//! ever shown in ("the query X found no matching …"). The engine assembles
//! answers from them (`engine::nodes::answer`, the post-verifier
//! fallback), and the offline model drafts with the same words.
//!
//! A negative finding is rendered from its evidence only (tool,
//! invocation, the query the tool recorded), never from a model's
//! wording, so "found nothing" cannot read as "ruled out" whoever wrote
//! the claim.

use crate::evidence::facts::grounded::{Added, added, concludes};
use crate::evidence::facts::{FactCache, FactText};
use crate::evidence::ground::{Source, Ungrounded, UngroundedKind, fold, ungrounded};
use crate::text::{clean, one_line};
use crate::vocab::contracts::{Lang, Verdict, Verification};
use crate::vocab::dto::{AllowedClaim, VerifiedEvidence};
use crate::vocab::tool::{LOOKUP_KNOWLEDGE, QUERY_METRICS, UNKNOWN_SERVICE_NOTE};
use std::sync::Arc;

/// Characters a statement may have on screen. Long enough that no honest
/// statement is cut: a cut would leave half an identifier, and the text
/// shown must be the text checked.
pub const STATEMENT_CHARS: usize = 2000;

/// Section titles of an assembled answer.
pub struct Titles {
    pub likely_cause: &'static str,
    pub findings: &'static str,
    pub not_found: &'static str,
    pub missing: &'static str,
    pub unverified: &'static str,
    pub hypothesis: &'static str,
    pub next_step: &'static str,
    /// A root_cause claim that rests only on runbook text.
    pub background: &'static str,
    pub indirect: &'static str,
    pub none: &'static str,
    /// The post-verifier fallback's sections.
    pub confirmed_findings: &'static str,
    pub confirmed_info: &'static str,
    pub current_gaps: &'static str,
    pub evidence_gaps: &'static str,
    pub still_missing: &'static str,
    /// The next step the fallback gives when the Executor gave none.
    pub default_step: &'static str,
}

const EN: Titles = Titles {
    likely_cause: "Likely cause:",
    findings: "Findings:",
    not_found: "What the queries did not find:",
    missing: "Missing: ",
    unverified: "Not verified (hypotheses and next steps, not checked against the evidence):",
    hypothesis: "Hypothesis: ",
    next_step: "Next step: ",
    background: "Runbook background (not observed here): ",
    indirect: " (indirect support only)",
    none: "(none)",
    confirmed_findings: "Confirmed findings:",
    confirmed_info: "Confirmed information:",
    current_gaps: "Current gaps (not verified):",
    evidence_gaps: "Evidence gaps (not verified):",
    still_missing: "Still missing (not verified):",
    default_step: "Review the tool calls in the trace and gather the missing evidence.",
};

const ZH: Titles = Titles {
    likely_cause: "可能原因：",
    findings: "发现：",
    not_found: "本次查询未检索到：",
    missing: "缺少：",
    unverified: "未经验证（假设与下一步建议，未与证据核对）：",
    hypothesis: "假设：",
    next_step: "下一步：",
    background: "运行手册背景（未在本系统中观测到）：",
    indirect: "（仅有间接证据）",
    none: "无",
    confirmed_findings: "已确认信息：",
    confirmed_info: "已确认信息：",
    current_gaps: "当前缺口（未经验证）：",
    evidence_gaps: "证据缺口（未经验证）：",
    still_missing: "仍缺少的信息（未经验证）：",
    default_step: "结合 Trace 中的工具调用记录人工复核，并补充缺失证据。",
};

pub fn titles(lang: Lang) -> &'static Titles {
    match lang {
        Lang::En => &EN,
        Lang::Zh => &ZH,
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

/// Appends a titled list; nothing when `lines` is empty.
pub fn section(out: &mut String, title: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(title);
    for l in lines {
        out.push_str("\n- ");
        out.push_str(l);
    }
}

/// `[query_logs #12 $.logs[0]]`, `[query_logs #12 x5]`: which invocations
/// back a claim. Code-made from the verified evidence.
pub fn citation(c: &AllowedClaim) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut seen: Vec<(&str, i64)> = Vec::new();
    for e in &c.evidence {
        let key = (e.tool_name.as_str(), e.source_invocation_id);
        if seen.contains(&key) {
            continue;
        }
        let n = c
            .evidence
            .iter()
            .filter(|x| {
                x.tool_name == e.tool_name && x.source_invocation_id == e.source_invocation_id
            })
            .count();
        let tool = one_line(&e.tool_name);
        parts.push(if n > 1 {
            format!("{tool} #{} x{n}", e.source_invocation_id)
        } else {
            format!(
                "{tool} #{} {}",
                e.source_invocation_id,
                one_line(&e.raw_path)
            )
        });
        seen.push(key);
    }
    if parts.is_empty() {
        return String::new();
    }
    format!("[{}]", parts.join("; "))
}

/// A positive finding: its text (already checked against its evidence),
/// the indirect-support mark and its citation.
pub fn finding_line(lang: Lang, text: &str, claims: &[&AllowedClaim]) -> String {
    let indirect = claims
        .iter()
        .any(|c| c.verification == Verification::IndirectSupport);
    let mark = if indirect { titles(lang).indirect } else { "" };
    let cites: Vec<String> = claims
        .iter()
        .map(|c| citation(c))
        .filter(|c| !c.is_empty())
        .collect();
    let mut line = format!("{}{mark}", clean(text, STATEMENT_CHARS));
    for c in cites {
        line.push(' ');
        line.push_str(&c);
    }
    line
}

/// The `query=` part of a `$.no_evidence` text, when it can be shown: a
/// query whose own words conclude ("healthy", "ruled out") is left out.
pub fn no_evidence_query(matched_text: &str) -> Option<String> {
    let q = matched_text
        .split(';')
        .find_map(|s| s.trim().strip_prefix("query="))
        .map(|q| clean(q, 160))?;
    (!q.is_empty() && concludes(&FactText::new(&q)).is_none()).then_some(q)
}

/// The service a source said it does not name, from the query of the
/// `$.no_evidence` text that says so.
pub fn unknown_service(c: &AllowedClaim) -> Option<String> {
    c.evidence
        .iter()
        .filter(|e| e.matched_text.contains(UNKNOWN_SERVICE_NOTE))
        .find_map(|e| {
            let query = no_evidence_query(&e.matched_text)?;
            let value = query
                .split_whitespace()
                .find_map(|kv| kv.strip_prefix("service="))?;
            Some(value.to_string()).filter(|v| !v.is_empty())
        })
}

/// A negative finding, from its evidence only: which query found nothing.
pub fn negative_line(lang: Lang, c: &AllowedClaim) -> String {
    let zh = lang == Lang::Zh;
    let cite = citation(c);
    if let Some(service) = unknown_service(c) {
        let queries: Vec<String> = c
            .evidence
            .iter()
            .map(|e| match no_evidence_query(&e.matched_text) {
                Some(q) => format!("{} ({q})", one_line(&e.tool_name)),
                None => one_line(&e.tool_name),
            })
            .collect();
        return if zh {
            format!(
                "这些数据源中没有名为 {service} 的服务：{} 都没有它的任何记录。请核对服务名，或接入记录它的数据源。 {cite}",
                queries.join("、")
            )
        } else {
            format!(
                "No service named {service} in these sources: {} returned nothing from it. Check the name, or add the source that holds it. {cite}",
                queries.join(", ")
            )
        };
    }
    let Some(e) = c.evidence.first() else {
        return if zh {
            "本次查询未检索到匹配证据。".into()
        } else {
            "This query found no matching evidence.".into()
        };
    };
    let (noun_en, noun_zh) = match e.tool_name.as_str() {
        QUERY_METRICS => ("alerts", "告警"),
        LOOKUP_KNOWLEDGE => ("documents", "文档"),
        _ => ("logs", "日志"),
    };
    let tool = one_line(&e.tool_name);
    let q = no_evidence_query(&e.matched_text).map_or(String::new(), |q| format!(" ({q})"));
    if zh {
        format!(
            "查询 {tool}{q} 未检索到匹配的{noun_zh}。这只说明本次查询没有命中结果，不能据此下结论。 {cite}"
        )
    } else {
        format!(
            "The query {tool}{q} found no matching {noun_en}. This only means the query returned nothing; it is not a conclusion about the system. {cite}"
        )
    }
}

/// A positive claim said by its evidence, when its own text says more:
/// the verified ref texts, quoted (without the citation).
pub fn evidence_quote(lang: Lang, c: &AllowedClaim) -> String {
    let quotes: Vec<String> = c
        .evidence
        .iter()
        .map(|e| format!("\"{}\"", clean(&e.matched_text, 300)))
        .collect();
    let lead = match lang {
        Lang::En => "Recorded evidence: ",
        Lang::Zh => "记录的证据：",
    };
    format!("{lead}{}", quotes.join("; "))
}

/// The evidence a statement about `claims` may rest on: every verified
/// evidence of theirs, except that knowledge-base text (runbooks) grounds
/// nothing when any of it was observed in this system, so a mixed claim
/// shows only its observed part as a finding.
pub fn grounding_evidence<'a>(claims: &[&'a AllowedClaim]) -> Vec<&'a VerifiedEvidence> {
    let all = claims.iter().flat_map(|c| c.evidence.iter());
    let observed = all.clone().any(|e| e.tool_name != LOOKUP_KNOWLEDGE);
    all.filter(|e| !observed || e.tool_name != LOOKUP_KNOWLEDGE)
        .collect()
}

/// What a statement or claim text is checked against: the verified
/// evidence texts of its claims (as [`grounding_evidence`] keeps them),
/// folded as the statement check reads them. Never the claim texts, and
/// no invocation id or array index (code writes the citation; a `0` there
/// must not back "zero errors").
pub fn evidence_texts(claims: &[&AllowedClaim], facts: &mut FactCache) -> Vec<Arc<FactText>> {
    grounding_evidence(claims)
        .into_iter()
        .map(|e| facts.get(&fold(&e.matched_text)))
        .collect()
}

/// What `text` adds to its claims' verified evidence, if anything: a word
/// the evidence does not ground (`evidence::ground`), then a negation,
/// state or recombination of facts the evidence does not make
/// (`evidence::facts::grounded::added`). `names`: service names the
/// sources know, lower case.
pub fn check_text(text: &str, claims: &[&AllowedClaim], names: &[String]) -> Option<Added> {
    check_text_cached(text, claims, names, &mut FactCache::default())
}

/// [`check_text`], with the evidence texts parsed through `facts`.
pub fn check_text_cached(
    text: &str,
    claims: &[&AllowedClaim],
    names: &[String],
    facts: &mut FactCache,
) -> Option<Added> {
    let kept = grounding_evidence(claims);
    let evidence: Vec<Arc<FactText>> = kept
        .iter()
        .map(|e| facts.get(&fold(&e.matched_text)))
        .collect();
    let sources: Vec<Source<'_>> = evidence
        .iter()
        .zip(&kept)
        .map(|(t, e)| Source {
            text: t,
            tool: &e.tool_name,
        })
        .collect();
    let raw: Vec<&str> = kept.iter().map(|e| e.matched_text.as_str()).collect();
    let statement = FactText::new(&fold(text));
    let hedged_cause = rests_on_observed_cause(claims);
    if let Some(u) = ungrounded(text, &statement, &sources, &raw, hedged_cause) {
        return Some(Added::Ungrounded(u));
    }
    if let Some(word) = crate::evidence::fields::level_only_in_a_message(&fold(text), &kept) {
        return Some(Added::Ungrounded(Ungrounded {
            word,
            kind: UngroundedKind::Field,
        }));
    }
    added(&statement, &evidence, names)
}

/// Whether one of `claims` is a root_cause claim with evidence observed in
/// this system (not only runbook text): only then may a statement call
/// something a "likely cause" (可能根因) without a cause in its evidence.
pub fn rests_on_observed_cause(claims: &[&AllowedClaim]) -> bool {
    claims
        .iter()
        .any(|c| c.claim_type == "root_cause" && !is_background(c))
}

/// A claim whose evidence is only knowledge-base text (runbooks): what a
/// document says may happen, not what this system did. Such a claim, of
/// any type, is shown as runbook background in the unverified section,
/// never as a finding or a likely cause.
pub fn is_background(c: &AllowedClaim) -> bool {
    !c.evidence.is_empty() && c.evidence.iter().all(|e| e.tool_name == LOOKUP_KNOWLEDGE)
}

/// Model-written lines that may appear in the unverified section: clean,
/// non-empty, and not concluding about the system ("healthy", "ruled
/// out", "no problem", 正常, 已排除...). Returns the kept lines and the
/// dropped ones (with the word that dropped them).
pub fn unverified_lines<'a>(
    items: impl Iterator<Item = &'a str>,
) -> (Vec<String>, Vec<(String, String)>) {
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for item in items {
        let line = clean(item, 300);
        if line.is_empty() {
            continue;
        }
        match concludes(&FactText::new(&line)) {
            Some(w) => dropped.push((line, w)),
            None => kept.push(line),
        }
    }
    (kept, dropped)
}

//! Runbook blocks (lookup_knowledge results) -> hypotheses and next steps.
//!
//! Runbooks describe what *can* go wrong in general, so their prose becomes
//! unconfirmed hypotheses (with the source named in `basis`) and the list
//! items, or else the paragraphs, of their diagnosis/mitigation sections
//! become investigation steps. None of it is ever a claim about the
//! current environment. Only sections on the answer's topic are used
//! ([`Topic`]), and none when every service asked about is unknown to
//! the sources.

use crate::model::offline::entities;
use crate::model::offline::evidence::{Collected, KnowledgeItem};
use crate::model::offline::planner::split_camel;
use crate::model::offline::text::{content_tokens, is_han};
use crate::text::clean;
use crate::vocab::contracts::{Hypothesis, RecommendedAction};
use crate::vocab::tool::{LOOKUP_KNOWLEDGE, QUERY_LOGS};
use std::collections::BTreeSet;

const MAX_HYPOTHESES: usize = 2;
const MAX_ACTIONS: usize = 3;
/// Topic words a runbook section must share to be used at all.
const MIN_SHARED_TERMS: usize = 2;

/// Section names whose lists are things to do rather than symptoms.
const ACTION_SECTIONS: &[&str] = &[
    "diagnos",
    "mitigat",
    "fix",
    "remed",
    "step",
    "check",
    "investigat",
    "resolv",
    "action",
    "what to do",
    "procedure",
    "troubleshoot",
    "排查",
    "处理",
    "解决",
    "步骤",
    "缓解",
    "诊断",
];

/// What the answer is about: the question's words, its symptoms' terms,
/// and the alert names and error patterns the evidence holds. A runbook
/// section is used only when it shares enough of these.
pub struct Topic {
    terms: BTreeSet<String>,
    /// Alert names, lowercase, spaces removed: a section titled by one is
    /// on topic whatever its words.
    alerts: BTreeSet<String>,
}

impl Topic {
    /// `patterns`: the templates of the log groups the answer is about
    /// (not earlier history).
    pub fn new(question: &str, c: &Collected, patterns: &[&str]) -> Topic {
        let mut terms = content_tokens(question);
        let e = entities::extract(question, &[]);
        for s in &e.symptoms {
            terms.extend(content_tokens(s.knowledge));
        }
        let mut alerts: BTreeSet<String> = e.alerts.iter().map(|a| squash(a)).collect();
        for a in &c.alerts {
            if a.is_active() {
                terms.extend(content_tokens(&split_camel(&a.alertname)));
                alerts.insert(squash(&a.alertname));
            }
        }
        for p in patterns.iter().take(3) {
            terms.extend(content_tokens(p));
            // "HikariPool" is about a pool too.
            terms.extend(content_tokens(&split_camel(p)));
        }
        Topic {
            terms: terms
                .iter()
                .filter(|t| !WEAK_TERMS.contains(&t.as_str()))
                .map(|t| stem(t))
                .collect(),
            alerts,
        }
    }

    /// On topic: titled by an alert of the question or evidence, or
    /// sharing at least [`MIN_SHARED_TERMS`] topic words, one of them in
    /// its document's title. The title says what the document is about
    /// (the router, the heap); its body's words ("slow", "latency") are
    /// shared by documents about other components.
    fn covers(&self, b: &KnowledgeItem) -> bool {
        let title = b.breadcrumb.split('>').next().unwrap_or("");
        if !title.trim().is_empty() && self.alerts.contains(&squash(title)) {
            return true;
        }
        let title = if title.trim().is_empty() {
            b.source.rsplit('/').next().unwrap_or("")
        } else {
            title
        };
        let stems = |text: &str| -> BTreeSet<String> {
            content_tokens(text).iter().map(|t| stem(t)).collect()
        };
        let have = stems(&format!("{} {}", b.breadcrumb, b.text));
        let mut titled = stems(title);
        titled.extend(stems(&split_camel(title)));
        self.terms.intersection(&have).count() >= MIN_SHARED_TERMS
            && self.terms.intersection(&titled).next().is_some()
    }
}

/// Words nearly every runbook section uses: sharing them says nothing.
const WEAK_TERMS: &[&str] = &[
    "high", "low", "rate", "request", "requests", "usage", "error", "errors", "failed", "failure",
    "failing", "time", "log", "logs", "alert", "alerts", "value", "total", "count", "response",
    "after", "before", "service", "server", "check", "issue", "problem",
];

/// `connections` and `connection` are one term.
fn stem(t: &str) -> String {
    match t.strip_suffix('s') {
        Some(base) if base.len() >= 4 && !base.ends_with('s') => base.to_string(),
        _ => t.to_string(),
    }
}

fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

pub fn material(
    c: &Collected,
    topic: &Topic,
    zh: bool,
) -> (Vec<Hypothesis>, Vec<RecommendedAction>) {
    let mut hypotheses: Vec<Hypothesis> = Vec::new();
    let mut actions: Vec<RecommendedAction> = Vec::new();
    let positive = !c.alerts.is_empty() || !c.logs.is_empty();
    // Asked only about services no source names: a runbook step would be
    // advice for something that does not exist here.
    let only_unknown = !positive
        && c.no_evidence.iter().any(|n| n.unknown_service)
        && c.no_evidence
            .iter()
            .filter(|n| n.src.tool != LOOKUP_KNOWLEDGE)
            .all(|n| n.unknown_service || n.service.is_none());
    if only_unknown {
        return (hypotheses, actions);
    }
    for b in c.knowledge.iter().filter(|b| topic.covers(b)).take(5) {
        let label = if b.breadcrumb.is_empty() {
            b.source.clone()
        } else {
            b.breadcrumb.clone()
        };
        let section = b.breadcrumb.rsplit('>').next().unwrap_or("").to_lowercase();
        let action_section =
            b.breadcrumb.is_empty() || ACTION_SECTIONS.iter().any(|w| section.contains(w));
        if action_section {
            let mut steps = list_items(&b.text);
            if steps.is_empty() {
                // Diagnosis and Mitigation are often prose: its
                // paragraphs are the steps.
                steps = paragraphs(&b.text);
            }
            for item in steps.into_iter().take(2) {
                if actions.len() < MAX_ACTIONS && !actions.iter().any(|a| a.action_text == item) {
                    actions.push(RecommendedAction {
                        action_text: item,
                        reason: if zh {
                            format!("来自知识库 {label} 的排查步骤")
                        } else {
                            format!("investigation step from runbook {label}")
                        },
                        evidence_bindings: vec![],
                    });
                }
            }
        }
        let gist = gist(&b.text);
        if gist.is_empty()
            || hypotheses.len() >= MAX_HYPOTHESES
            || (action_section && !b.breadcrumb.is_empty())
        {
            continue;
        }
        if hypotheses.iter().any(|h| h.hypothesis_text.contains(&gist)) {
            continue;
        }
        hypotheses.push(Hypothesis {
            hypothesis_text: if zh {
                format!("知识库（{label}）提示的可能方向：{gist}")
            } else {
                format!("Runbook guidance ({label}) suggests a possible direction: {gist}")
            },
            basis: if zh {
                format!("lookup_knowledge 返回的 {}；这是通用知识，不是当前环境的观测事实", b.source)
            } else {
                format!(
                    "lookup_knowledge returned {}; general runbook knowledge, not an observation of this environment",
                    b.source
                )
            },
            needed_evidence: vec![if zh {
                "能直接显示该情况的告警或日志".into()
            } else {
                "alerts or log lines that show this directly".into()
            }],
            evidence_bindings: vec![],
        });
    }
    if let Some(n) = c
        .no_evidence
        .iter()
        .filter(|_| !positive)
        // A wider window helps a log query; alerts have no window.
        .find(|n| n.src.tool == QUERY_LOGS && !n.narrowed && !n.unknown_service)
    {
        actions.push(RecommendedAction {
            action_text: if zh {
                format!(
                    "扩大时间窗口或换用其他数据源复查 {} {}",
                    n.src.tool, n.query
                )
            } else {
                format!(
                    "Re-check {} {} with a wider time window or another data source",
                    n.src.tool, n.query
                )
            },
            reason: if zh {
                "本次查询未检索到匹配结果，只说明该查询没有命中".into()
            } else {
                "the query found no matching results, which only says this query returned nothing"
                    .into()
            },
            evidence_bindings: vec![],
        });
    }
    (hypotheses, actions)
}

fn is_list_start(line: &str) -> Option<&str> {
    let l = line.trim_start();
    l.strip_prefix("- ")
        .or_else(|| l.strip_prefix("* "))
        .or_else(|| {
            let digits = l.chars().take_while(char::is_ascii_digit).count();
            (digits > 0)
                .then(|| l.get(digits..))
                .flatten()?
                .strip_prefix(". ")
        })
}

/// The first prose paragraph's first sentences: not a heading, list, table
/// or code, and starting like a sentence (not a wrapped fragment).
fn gist(text: &str) -> String {
    let mut paragraph: Vec<&str> = Vec::new();
    let mut skipping = false;
    let mut in_code = false;
    for line in text.lines().map(str::trim).chain(std::iter::once("")) {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        if line.is_empty() {
            if !paragraph.is_empty() {
                break;
            }
            skipping = false;
            continue;
        }
        if skipping {
            continue;
        }
        let structural = line.starts_with(['#', '|', '>']) || is_list_start(line).is_some();
        let starts_like_sentence = line
            .chars()
            .next()
            .is_some_and(|c| c.is_uppercase() || is_han(c) || c == '`');
        if structural || (paragraph.is_empty() && !starts_like_sentence) {
            // The rest of this block (a list item's wrapped lines) is not prose.
            if paragraph.is_empty() {
                skipping = true;
                continue;
            }
            break;
        }
        paragraph.push(line);
    }
    let body = paragraph.join(" ");
    let mut out = String::new();
    for (i, sentence) in body.split_inclusive(['.', '。']).enumerate() {
        if i >= 2 || out.chars().count() > 160 {
            break;
        }
        out.push_str(sentence);
    }
    let out = clean(&out, 220);
    if out.chars().count() < 30 {
        String::new()
    } else {
        out
    }
}

/// Prose paragraphs (not headings, lists, tables, code or HTML tags),
/// each joined onto one line.
fn paragraphs(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut in_code = false;
    for line in text.lines().map(str::trim).chain(std::iter::once("")) {
        if line.starts_with("```") || line.starts_with("~~~") {
            in_code = !in_code;
            continue;
        }
        let structural =
            in_code || line.starts_with(['#', '|', '>', '<']) || is_list_start(line).is_some();
        if line.is_empty() || structural {
            if !current.is_empty() {
                out.push(clean(&current.join(" "), 200));
                current.clear();
            }
            continue;
        }
        current.push(line);
    }
    out.into_iter()
        .filter(|p| p.chars().count() >= 20)
        .collect()
}

/// List items with their wrapped continuation lines joined.
fn list_items(text: &str) -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(item) = is_list_start(line) {
            items.extend(current.take());
            current = Some(item.trim().to_string());
        } else if line.trim().is_empty() || line.trim_start().starts_with(['#', '|', '`']) {
            items.extend(current.take());
        } else if let Some(c) = current.as_mut() {
            c.push(' ');
            c.push_str(line.trim());
        }
    }
    items.extend(current);
    items
        .into_iter()
        .map(|i| clean(i.trim_matches(['*', ' ']), 200))
        .filter(|i| i.chars().count() >= 8)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gist_skips_fragments_and_lists() {
        let t = "the maximum heap size.\n\n- item one that is long\n  continued here\n\nWhen the heap is full, GC runs back to back. Second sentence. Third.";
        assert_eq!(
            gist(t),
            "When the heap is full, GC runs back to back. Second sentence."
        );
        assert_eq!(
            list_items(t),
            vec!["item one that is long continued here".to_string()]
        );
    }

    #[test]
    fn prose_sections_give_paragraph_steps() {
        let t = "`/targets` page in Prometheus UI can be used to check the scrape error.\n\n<details>\n<summary>More</summary>\n\n`up == 0` query can be used to check the trend\nover time.\n\n```\ncode here that is long enough\n```\n| a | b |\n";
        assert_eq!(
            paragraphs(t),
            vec![
                "`/targets` page in Prometheus UI can be used to check the scrape error."
                    .to_string(),
                "`up == 0` query can be used to check the trend over time.".to_string(),
            ]
        );
        assert!(paragraphs("").is_empty());
        assert!(paragraphs("```\nunclosed fence with text in it").is_empty());
    }
}

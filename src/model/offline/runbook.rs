//! Runbook blocks (lookup_knowledge results) -> hypotheses and next steps.
//!
//! Runbooks describe what *can* go wrong in general, so their prose becomes
//! unconfirmed hypotheses (with the source named in `basis`) and the list
//! items of their diagnosis/mitigation sections become investigation
//! steps. None of it is ever a claim about the current environment.

use crate::model::offline::evidence::{KnowledgeItem, NoEvidence};
use crate::model::offline::text::is_han;
use crate::text::clean;
use crate::vocab::contracts::{Hypothesis, RecommendedAction};
use crate::vocab::tool::LOOKUP_KNOWLEDGE;

const MAX_HYPOTHESES: usize = 3;
const MAX_ACTIONS: usize = 4;

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

pub fn material(
    blocks: &[KnowledgeItem],
    negatives: &[NoEvidence],
    zh: bool,
) -> (Vec<Hypothesis>, Vec<RecommendedAction>) {
    let mut hypotheses: Vec<Hypothesis> = Vec::new();
    let mut actions: Vec<RecommendedAction> = Vec::new();
    for b in blocks.iter().take(5) {
        let label = if b.breadcrumb.is_empty() {
            b.source.clone()
        } else {
            b.breadcrumb.clone()
        };
        let section = b.breadcrumb.rsplit('>').next().unwrap_or("").to_lowercase();
        let action_section =
            b.breadcrumb.is_empty() || ACTION_SECTIONS.iter().any(|w| section.contains(w));
        if action_section {
            for item in list_items(&b.text).into_iter().take(2) {
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
    if let Some(n) = negatives
        .iter()
        .find(|n| n.src.tool != LOOKUP_KNOWLEDGE && !n.narrowed && !n.unknown_service)
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
}

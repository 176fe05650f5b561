//! State and health words beyond the excerpt rules' polarity lists, for
//! the answer check (a statement adds no state its evidence lacks) and for the unverified section (a line that concludes
//! the system is fine, resolved or ignorable is dropped).
//!
//! These words are not polarity words of the excerpt rules: a ref may say
//! them in passing, and a quotation keeps them anyway. A statement may use
//! one only when its evidence says it, verbatim or as the same concept
//! (`working` = `healthy`, `silenced` = `resolved`, 误报 = `ignorable`).

use super::{FactText, Join, Kind};

/// The concept of an English or Chinese state word of this module, or
/// None when `w` is none of them.
pub fn concept_of(w: &str) -> Option<&'static str> {
    Some(match w {
        "working" | "works" | "operational" | "responsive" | "nominal" | "unaffected" | "green"
        | "clean" | "畅通" | "顺畅" | "平稳" => "healthy",
        "ready" | "就绪" => "ready",
        "online" | "在线" => "online",
        "idle" | "空闲" => "idle",
        "plenty" | "spare" | "充足" | "充裕" => "plenty",
        "fixed" | "silenced" | "acknowledged" | "acked" | "gone" | "disappeared" | "ended"
        | "subsided" | "mitigated" | "quiet" | "quieted" | "解除" | "消除" | "清除" | "静默"
        | "修复" | "消失" | "好转" | "缓解" | "平息" | "结束" | "停止" => "resolved",
        "benign" | "harmless" | "ignorable" | "ignore" | "ignored" | "negligible" | "spurious"
        | "noise" | "noisy" | "flapping" | "transient" | "blip" | "忽略" | "误报" | "无害"
        | "良性" | "抖动" | "预期" => "ignorable",
        "saturated" | "overloaded" | "overload" | "过载" | "饱和" | "爆满" => "overloaded",
        "关闭" => "closed",
        _ => return None,
    })
}

/// English words of this module that name a state only in a state's
/// place (after a copula, or ending their clause): "working set" and
/// "fixed delay" are no states.
fn needs_frame(w: &str) -> bool {
    matches!(
        w,
        "working"
            | "works"
            | "ready"
            | "online"
            | "green"
            | "clean"
            | "idle"
            | "gone"
            | "fixed"
            | "ended"
            | "quiet"
    )
}

/// Words after which a state word stands in a state's place.
fn is_frame(w: &str) -> bool {
    matches!(
        w,
        "is" | "are"
            | "was"
            | "were"
            | "be"
            | "been"
            | "being"
            | "s"
            | "remain"
            | "remains"
            | "stay"
            | "stays"
            | "back"
            | "now"
            | "still"
            | "all"
            | "looks"
            | "look"
            | "seems"
            | "appears"
            | "fully"
            | "went"
            | "got"
            | "of"
    )
}

/// Whether the English part `i` of `t` is a state word of this module in
/// a state's place.
pub fn is_state_en(t: &FactText, i: usize) -> bool {
    let w = t.text_at(i);
    if concept_of(w).is_none() || !w.is_ascii() {
        return false;
    }
    if !needs_frame(w) {
        return true;
    }
    let parts = t.parts();
    let prev_frame = i > 0 && is_frame(t.text_at(i - 1));
    let clause_end = parts
        .get(i + 1)
        .is_none_or(|q| Some(q.clause) != parts.get(i).map(|p| p.clause));
    prev_frame || clause_end
}

/// Chinese state words of this module in `t`: (first part index, word).
pub fn han_states(t: &FactText) -> Vec<(usize, &'static str)> {
    const WORDS: &[&str] = &[
        "畅通", "顺畅", "平稳", "就绪", "在线", "空闲", "充足", "充裕", "解除", "消除", "清除",
        "静默", "修复", "消失", "好转", "缓解", "平息", "忽略", "误报", "无害", "良性", "抖动",
        "预期", "过载", "饱和", "爆满", "关闭", "结束", "停止",
    ];
    han_pairs(t, WORDS)
}

/// The word of `words` that is `a` followed by `b`, without joining them
/// (this runs for every character pair of every checked text).
pub(super) fn pair_in(words: &[&'static str], a: &str, b: &str) -> Option<&'static str> {
    words
        .iter()
        .find(|w| w.len() == a.len() + b.len() && w.starts_with(a) && w.ends_with(b))
        .copied()
}

/// The two-character words of `words` in `t`: (first part index, word).
pub(super) fn han_pairs(
    t: &FactText,
    words: &'static [&'static str],
) -> Vec<(usize, &'static str)> {
    let parts = t.parts();
    let mut out = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let Some(q) = parts.get(i + 1) else { break };
        if q.join != Join::HanRun {
            continue;
        }
        if let Some(w) = pair_in(words, t.text(p), t.text(q)) {
            out.push((i, w));
        }
    }
    out
}

/// The word by which an unverified line concludes the system is resolved
/// or can be ignored ("the alert resolved", "has recovered", "benign",
/// "no action needed"; 告警已解除, 可以忽略, 误报, 无需处理), beyond the
/// health words `grounded::concludes` knows. A resolved state concludes
/// only when asserted (a past form, or 已/了 with a Chinese verb), so
/// "restore the dependency" (恢复依赖) stays a next step.
pub fn concludes_resolved(t: &FactText) -> Option<String> {
    let parts = t.parts();
    let negated_before = |i: usize| {
        (i.saturating_sub(3)..i).any(|k| parts.get(k).is_some_and(|p| p.kind == Kind::Negation))
    };
    for (i, p) in parts.iter().enumerate() {
        let w = t.text(p);
        if !w.is_ascii() {
            continue;
        }
        let asserted_resolved = matches!(
            w,
            "resolved"
                | "recovered"
                | "cleared"
                | "silenced"
                | "acknowledged"
                | "disappeared"
                | "subsided"
                | "mitigated"
        ) || (matches!(w, "fixed" | "gone" | "ended") && is_state_en(t, i));
        let ignorable = matches!(
            w,
            "benign"
                | "harmless"
                | "ignorable"
                | "ignored"
                | "negligible"
                | "spurious"
                | "noise"
                | "noisy"
                | "flapping"
                | "transient"
                | "blip"
        );
        let no_action = matches!(
            w,
            "action" | "actions" | "needed" | "necessary" | "required"
        ) && negated_before(i);
        if (asserted_resolved && !negated_before(i)) || ignorable || no_action {
            return Some(w.to_string());
        }
    }
    // Chinese: the Han text with a space where a run breaks
    let mut han = String::new();
    let mut last: Option<usize> = None;
    for (i, p) in parts.iter().enumerate() {
        let w = t.text(p);
        if w.is_ascii() {
            continue;
        }
        if last.is_some_and(|l| l + 1 != i) || p.join != Join::HanRun {
            han.push(' ');
        }
        han.push_str(w);
        last = Some(i);
    }
    const RESOLVED: &[&str] = &[
        "恢复", "解除", "解决", "消除", "清除", "静默", "修复", "消失", "好转", "缓解", "平息",
        "关闭", "结束", "停止",
    ];
    for r in RESOLVED {
        for (at, _) in han.match_indices(r) {
            let before = han.get(..at).unwrap_or("");
            let after = han.get(at + r.len()..).unwrap_or("");
            if before.ends_with('已') || before.ends_with("已经") || after.starts_with('了') {
                return Some((*r).to_string());
            }
        }
    }
    const IGNORABLE: &[&str] = &[
        "忽略",
        "误报",
        "无害",
        "良性",
        "无需处理",
        "无需关注",
        "无需操作",
        "无需担心",
        "无需干预",
        "不需要处理",
        "不用处理",
        "不必处理",
        "无需介入",
    ];
    IGNORABLE
        .iter()
        .find(|w| {
            han.match_indices(**w).any(|(at, _)| {
                let before = han.get(..at).unwrap_or("");
                !(before.ends_with('不') || before.ends_with("不要") || before.ends_with("不能"))
            })
        })
        .map(|w| (*w).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_words_need_a_state_place_when_they_are_also_nouns() {
        let at = |s: &str, w: &str| {
            let t = FactText::new(s);
            let i = t.tokens().position(|x| x == w).unwrap();
            is_state_en(&t, i)
        };
        assert!(at("order-service is working again", "working"));
        assert!(at("all green", "green"));
        assert!(at("the pool is idle", "idle"));
        assert!(!at("the working set grew", "working"));
        assert!(!at("a fixed delay of 5s", "fixed"));
        assert!(at("payment-service is operational", "operational"));
    }

    #[test]
    fn resolved_and_ignorable_conclusions_are_found() {
        for s in [
            "No action needed: payment-service has recovered and the alert resolved",
            "the timeouts are benign and can be ignored",
            "无需处理，告警已解除",
            "HikariPool-1 超时可以忽略，只是误报",
            "告警已经静默",
            "问题修复了",
        ] {
            assert!(concludes_resolved(&FactText::new(s)).is_some(), "{s}");
        }
        for s in [
            "Restore the dependency first",
            "依赖不可用时先恢复依赖",
            "Check whether the alert resolves after the fix",
            "不要忽略 WARN 日志",
            "Raise the memory limit if the working set grew",
        ] {
            assert_eq!(concludes_resolved(&FactText::new(s)), None, "{s}");
        }
    }
}

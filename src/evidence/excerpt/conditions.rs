//! A condition or modal the ref puts on a clause is part of what it says:
//! "当连接池耗尽时" (when the pool is exhausted) is a runbook's condition,
//! not an observation, and "requests may time out" is not "requests time
//! out". An excerpt that quotes such a clause keeps its marker, like a
//! negation (`binding.excerpt_polarity`).

use super::{unit_matches, units};
use crate::evidence::facts::{FactText, Join};

/// English condition and modal words.
fn is_condition_en(w: &str) -> bool {
    matches!(
        w,
        "if" | "when" | "whenever" | "unless" | "may" | "might" | "should" | "could" | "would"
    )
}

/// Chinese condition and modal words: single characters that are one on
/// their own, and two-character words.
const CONDITION_HAN_ONE: &[&str] = &["当", "若", "应"];
const CONDITION_HAN_TWO: &[&str] = &[
    "如果", "假如", "假设", "可能", "一旦", "万一", "应该", "倘若",
];

/// (ref clause, marker) of every condition marker of `r`.
fn markers(r: &FactText) -> Vec<(u16, String)> {
    let parts = r.parts();
    let mut out = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let w = r.text(p);
        if w.is_ascii() {
            if is_condition_en(w) {
                out.push((p.clause, w.to_string()));
            }
            continue;
        }
        let pair = parts
            .get(i + 1)
            .filter(|q| q.join == Join::HanRun)
            .map(|q| format!("{w}{}", r.text(q)));
        if let Some(pair) = pair.filter(|x| CONDITION_HAN_TWO.contains(&x.as_str())) {
            out.push((p.clause, pair));
        } else if CONDITION_HAN_ONE.contains(&w) && !in_other_word(r, i) {
            out.push((p.clause, w.to_string()));
        }
    }
    out
}

/// Whether the single-character marker at part `i` belongs to a word
/// that is no condition: 当前 "current", 应用 "application", 响应
/// "response".
fn in_other_word(r: &FactText, i: usize) -> bool {
    let parts = r.parts();
    let next = parts
        .get(i + 1)
        .filter(|q| q.join == Join::HanRun)
        .map_or("", |q| r.text(q));
    let prev = parts
        .get(i)
        .filter(|p| p.join == Join::HanRun && i > 0)
        .map_or("", |_| r.text_at(i - 1));
    match r.text_at(i) {
        "当" => matches!(
            next,
            "前" | "天"
                | "日"
                | "地"
                | "中"
                | "然"
                | "初"
                | "年"
                | "月"
                | "下"
                | "作"
                | "做"
                | "成"
        ),
        "应" => {
            matches!(next, "用" | "答" | "对" | "急" | "变" | "届")
                || matches!(
                    prev,
                    "响" | "反"
                        | "适"
                        | "对"
                        | "供"
                        | "相"
                        | "回"
                        | "效"
                        | "感"
                        | "呼"
                        | "报"
                        | "答"
                )
        }
        _ => false,
    }
}

/// Whether `ex` says the marker `m`.
fn says(ex: &FactText, m: &str) -> bool {
    if m.is_ascii() || m.chars().count() == 1 {
        return ex.tokens().any(|t| t == m);
    }
    let tokens: Vec<&str> = ex.tokens().collect();
    tokens.windows(2).any(|w| w.concat() == m)
}

/// The first condition marker of a ref clause the excerpt quotes from
/// (some fact unit of the excerpt occurs in the ref only in that clause)
/// that the excerpt does not say.
pub(super) fn dropped_condition(ex: &FactText, r: &FactText) -> Option<String> {
    let found = markers(r);
    if found.is_empty() {
        return None;
    }
    let clause_of = |j: usize| r.parts().get(j).map(|p| p.clause);
    let quoted: Vec<u16> = units(ex)
        .iter()
        .filter(|u| u.content)
        .filter_map(|u| {
            let m = unit_matches(ex, u, r);
            let first = clause_of(m.first()?.0)?;
            m.iter()
                .all(|(a, _)| clause_of(*a) == Some(first))
                .then_some(first)
        })
        .collect();
    found
        .into_iter()
        .find(|(clause, m)| quoted.contains(clause) && !says(ex, m))
        .map(|(_, m)| m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(s: &str) -> Vec<String> {
        markers(&FactText::new(s))
            .into_iter()
            .map(|(_, m)| m)
            .collect()
    }

    #[test]
    fn condition_markers_and_the_words_that_only_look_like_them() {
        assert_eq!(found("当连接池耗尽时，请求超时"), vec!["当"]);
        assert_eq!(found("如果连接池耗尽，可能超时"), vec!["如果", "可能"]);
        assert_eq!(found("应检查慢查询"), vec!["应"]);
        assert_eq!(
            found("if the pool is exhausted, requests may time out"),
            vec!["if", "may"]
        );
        for s in [
            "当前值=92%",
            "应用 CPU 使用率",
            "响应时间升高",
            "order-service timed out",
        ] {
            assert!(found(s).is_empty(), "{s}");
        }
    }
}

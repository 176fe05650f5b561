//! Scope, quantity, change and relative-time words (red team H5): "all
//! requests", "only a warning", "CPU doubled", "since yesterday"; 所有,
//! 只有, 大部分, 翻倍, 昨天. Each widens or narrows what the evidence
//! says, so a statement may use one only when its evidence says it (the
//! word, or the same concept in the other language).

use super::{FactText, Join, Kind};

/// The concept of a scope word, English or Chinese (two characters).
fn concept(w: &str) -> Option<&'static str> {
    Some(match w {
        "all" | "every" | "entire" | "所有" | "全部" | "每个" | "每次" => "all",
        "only" | "solely" | "merely" | "只有" | "仅有" | "只是" | "仅仅" => "only",
        "most" | "mostly" | "majority" | "大部分" | "大多" | "多数" => "most",
        "many" | "numerous" | "hundreds" | "thousands" | "dozens" | "大量" | "很多" | "许多" => {
            "many"
        }
        "always" | "constantly" | "总是" | "一直" | "始终" => "always",
        "occasionally" | "sporadically" | "rarely" | "偶尔" | "偶发" | "很少" => {
            "occasionally"
        }
        "frequently" | "often" | "频繁" | "经常" => "frequently",
        "doubled" | "翻倍" => "doubled",
        "tripled" => "tripled",
        "halved" | "减半" => "halved",
        "spiked" | "spike" | "surged" | "jumped" | "soared" | "skyrocketed" | "激增" | "暴涨"
        | "飙升" | "骤增" => "spike",
        "plummeted" | "plunged" | "骤降" | "暴跌" => "plunge",
        "yesterday" | "昨天" | "昨晚" | "昨日" => "yesterday",
        "today" | "tonight" | "今天" | "今晚" | "今日" => "today",
        "overnight" | "通宵" => "overnight",
        // an approximate amount is not the reading ("half an hour" for 25m)
        "half" | "一半" | "半小时" | "半个" | "半天" => "half",
        "quarter" | "一刻" => "quarter",
        "roughly" | "approximately" | "nearly" | "almost" | "大约" | "左右" | "将近" | "接近"
        | "差不多" => "about",
        _ => return None,
    })
}

/// (first part index, word) of the scope words of `t`: English words,
/// and Chinese words of two or three characters (大部分).
fn scope_words(t: &FactText) -> Vec<(usize, String)> {
    let parts = t.parts();
    let mut out = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let w = t.text(p);
        if w.is_ascii() {
            if matches!(p.kind, Kind::Word | Kind::Filler | Kind::Polarity) && concept(w).is_some()
            {
                out.push((i, w.to_string()));
            }
            continue;
        }
        let mut run = w.to_string();
        for n in 1..3 {
            let Some(q) = parts.get(i + n) else { break };
            if q.join != Join::HanRun {
                break;
            }
            run.push_str(t.text(q));
            if concept(&run).is_some() {
                out.push((i, run.clone()));
                break;
            }
        }
    }
    out
}

/// The first scope word of `statement` that no evidence text says.
pub fn unsupported_scope(statement: &FactText, evidence: &[&FactText]) -> Option<String> {
    scope_words(statement).into_iter().find_map(|(_, w)| {
        let c = concept(&w)?;
        let said = evidence
            .iter()
            .any(|e| scope_words(e).iter().any(|(_, x)| concept(x) == Some(c)));
        (!said).then_some(w)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "ERROR order-service HikariPool-1 - Connection is not available, request timed out after 30000ms";

    fn check(s: &str, e: &str) -> Option<String> {
        unsupported_scope(&FactText::new(s), &[&FactText::new(e)])
    }

    #[test]
    fn scope_words_must_be_in_the_evidence() {
        for s in [
            "All order-service requests time out after 30000ms.",
            "order-service requests time out every minute.",
            "order-service CPU doubled.",
            "order-service has timed out since yesterday.",
            "大部分 order-service 请求超时。",
            "order-service 的请求全部超时。",
            "order-service 昨天开始超时。",
            "order-service 只是偶尔超时。",
        ] {
            assert!(check(s, LOG).is_some(), "{s}");
        }
        for s in [
            "order-service requests time out after 30000ms.",
            "order-service 的请求在 30000ms 后超时。",
        ] {
            assert_eq!(check(s, LOG), None, "{s}");
        }
        assert_eq!(
            check("all connections are busy", "all 20 connections are busy"),
            None
        );
        assert_eq!(
            check("所有连接都在使用", "all 20 connections are busy"),
            None
        );
    }
}

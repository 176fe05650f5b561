//! The new answer checks never over-reject the evidence's own words: a
//! statement that quotes any run of an evidence text's sentences, with a
//! neutral lead-in, passes, whatever cause, scope, state, comparison,
//! severity, condition or time words the text holds (English and Chinese).

use crate::statement_paraphrase::{claim_on, names};
use diagraph::evidence::answer::check_text;
use proptest::prelude::*;

const REFS: &[&str] = &[
    "2026-07-08T23:05:28Z ERROR order-service HikariPool-1 - Connection is not available, request timed out after 30000ms.",
    "2026-07-08T23:05:30Z ERROR order-service PaymentClient - call failed. Caused by java.net.SocketTimeoutException: Read timed out after 5000ms.",
    "2026-07-08T23:00:30Z WARN order-service HikariPool-1 - all 20 connections are busy; 48 requests waiting. The pool is saturated.",
    "alertname=HighCPUUsage service=payment-service severity=critical state=firing value=92% active_for=25m summary=CPU usage above 90%",
    "alertname=DiskUsageHigh service=inventory-service severity=warning state=resolved value=70% summary=disk usage back under 80%",
    "[database] runbooks/db.md > Likely causes: slow queries hold connections for a long time. If the pool is exhausted, requests may time out after 30000ms.",
    "[database] runbooks/db.md > 连接池: 当连接池耗尽时，请求会在 30000ms 后超时。应检查慢查询和最大连接数 maximumPoolSize=20。",
    "告警=CPU使用率过高 服务=payment-service 级别=严重 状态=触发 当前值=92% 说明=CPU 使用率高于 90%",
    "2026-07-08 23:06:03 ERROR 订单服务 order-service 数据库连接池 HikariPool-1 已耗尽，获取连接失败，等待 30000 毫秒后超时。原因是慢查询占用连接。",
    "Jul 8 23:05:28 order-service kernel: memory usage 91% of limit, the container was OOMKilled and restarted",
];

const LEADS: &[&str] = &[
    "",
    "The evidence says: ",
    "Recorded: ",
    "记录显示：",
    "证据：",
];

/// The sentences of `text` (ending at '.', '。' or ';').
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        cur.push(*c);
        let end = matches!(c, '。' | ';')
            || (*c == '.' && chars.get(i + 1).is_none_or(|n| n.is_whitespace()));
        if end {
            out.push(std::mem::take(&mut cur));
        }
    }
    out.push(cur);
    out.retain(|s| !s.trim().is_empty());
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_statement_in_the_evidences_own_words_passes(
        r in 0..REFS.len(),
        from in 0usize..4,
        len in 1usize..4,
        lead in 0..LEADS.len(),
        root_cause in any::<bool>(),
    ) {
        let text = REFS[r];
        let parts = sentences(text);
        let from = from % parts.len();
        let to = (from + len).min(parts.len());
        let statement = format!("{}{}", LEADS[lead], parts[from..to].concat().trim());
        let ty = if root_cause { "root_cause" } else { "observation" };
        let tool = if text.starts_with("[database]") { "lookup_knowledge" } else { "query_logs" };
        let claim = claim_on("c1", ty, tool, &[text]);
        prop_assert_eq!(check_text(&statement, &[&claim], &names()), None, "{}", statement);
    }
}

//! The Gatekeeper's excerpt rules at the rule level on Chinese
//! refs (the shop pack's evidence is English; `executor_rules_engine.rs`
//! drives the English attacks through the engine): every doctored quote
//! fails by its rule, every faithful one passes.

use crate::helpers::{evidence, invocation};
use diagraph::engine::nodes::gatekeeper::{GatekeeperRules, check};
use diagraph::vocab::contracts::{GatekeeperResult, parse_executor_evidence};
use diagraph::vocab::tool::{EvidenceStatus, ToolInvocation};
use serde_json::json;

const LOG_ZH: &str = "2026-07-08 23:06:03 ERROR 订单服务 order-service 数据库连接池 HikariPool-1 已耗尽，获取连接失败，等待 30000 毫秒后超时";
const ALERT_ZH: &str = "告警=CPU使用率过高 服务=payment-service 级别=严重 状态=触发 当前值=92% 持续=25分钟 说明=CPU 使用率高于 90%";
const KB_ZH: &str = "[database] runbooks/db.md > 连接池: 当连接池耗尽时，请求会在 30000ms 后超时，应检查慢查询和最大连接数 maximumPoolSize=20";
const NONE_ZH: &str = "query_logs returned no evidence; evidence_status=no_evidence; query=service=inventory-service level=ERROR; total=0; message=未找到匹配的日志";

fn inv(id: i64, tool: &str, status: EvidenceStatus, path: &str, text: &str) -> ToolInvocation {
    ToolInvocation {
        id,
        step_id: Some(1),
        duration_ms: 3,
        ..invocation(7, id as u32, tool, status, vec![evidence(path, text)])
    }
}

/// One claim of `claim_type` with one binding on the ref at `path`.
fn gate(claim_type: &str, path: &str, excerpt: &str) -> GatekeeperResult {
    let invocations = vec![
        inv(
            11,
            "query_logs",
            EvidenceStatus::Supported,
            "$.logs[0]",
            LOG_ZH,
        ),
        inv(
            12,
            "query_metrics",
            EvidenceStatus::Supported,
            "$.alerts[0]",
            ALERT_ZH,
        ),
        inv(
            13,
            "lookup_knowledge",
            EvidenceStatus::Supported,
            "$.evidence_blocks[0]",
            KB_ZH,
        ),
        inv(
            14,
            "query_logs",
            EvidenceStatus::NoEvidence,
            "$.no_evidence",
            NONE_ZH,
        ),
    ];
    let (tool, id) = match path {
        "$.logs[0]" => ("query_logs", 11),
        "$.alerts[0]" => ("query_metrics", 12),
        "$.evidence_blocks[0]" => ("lookup_knowledge", 13),
        _ => ("query_logs", 14),
    };
    let text = json!({"answer_version": "executor_evidence_v2", "claims": [{"claim_id": "c1",
        "claim_type": claim_type, "claim_text": "t", "support_level": "direct",
        "evidence_bindings": [{"tool_name": tool, "source_invocation_id": id, "raw_path": path,
        "evidence_excerpt": excerpt}]}], "hypotheses": [], "recommended_actions": [], "missing_info": []})
    .to_string();
    check(
        &parse_executor_evidence(&text).unwrap(),
        &invocations,
        &GatekeeperRules::shipped(),
    )
}

const LOG: &str = "$.logs[0]";
const ALERT: &str = "$.alerts[0]";
const KB: &str = "$.evidence_blocks[0]";
const NONE: &str = "$.no_evidence";

#[test]
fn faithful_chinese_quotes_pass() {
    for (ty, path, excerpt) in [
        (
            "observation",
            LOG,
            "ERROR 订单服务 order-service 数据库连接池 HikariPool-1 已耗尽，获取连接失败",
        ),
        // the ref's own timestamp in other renderings
        (
            "observation",
            LOG,
            "2026年7月8日 23:06:03 ERROR 订单服务 order-service 数据库连接池 HikariPool-1 已耗尽",
        ),
        (
            "observation",
            LOG,
            "23:06:03 ERROR 订单服务 order-service 数据库连接池 HikariPool-1 已耗尽",
        ),
        // a gap marked by an ellipsis
        (
            "observation",
            LOG,
            "订单服务 order-service 数据库连接池 HikariPool-1 已耗尽 ... 等待 30000 毫秒后超时",
        ),
        // the same number in Chinese numerals, full width or Arabic-Indic digits
        (
            "observation",
            LOG,
            "订单服务 order-service 获取连接失败，等待 三万 毫秒后超时",
        ),
        (
            "observation",
            LOG,
            "订单服务 order-service 获取连接失败，等待 ３００００ 毫秒后超时",
        ),
        (
            "observation",
            LOG,
            "订单服务 order-service 获取连接失败，等待 ٣٠٠٠٠ 毫秒后超时",
        ),
        // the same name in full width, or with an invisible joiner
        (
            "observation",
            LOG,
            "订单服务 ｏｒｄｅｒ-service 数据库连接池 HikariPool-1 已耗尽",
        ),
        (
            "observation",
            LOG,
            "订单服务 order\u{200c}-service 数据库连接池 HikariPool-1 已耗尽",
        ),
        (
            "observation",
            ALERT,
            "告警=CPU使用率过高 服务=payment-service 级别=严重 状态=触发 当前值=92%",
        ),
        ("observation", KB, "当连接池耗尽时，请求会在 30000ms 后超时"),
        (
            "negative_observation",
            NONE,
            "query_logs returned no evidence; total=0; message=未找到匹配的日志",
        ),
    ] {
        let r = gate(ty, path, excerpt);
        assert_eq!(r.status, "pass", "{excerpt}: {:?}", r.errors);
    }
}

#[test]
fn doctored_chinese_quotes_fail_by_their_rule() {
    let polarity = "binding.excerpt_polarity";
    let facts = "binding.excerpt_facts";
    for (ty, path, excerpt, rule) in [
        // antonyms and dropped or added negations
        (
            "observation",
            LOG,
            "订单服务 order-service 数据库连接池 HikariPool-1 已耗尽，获取连接成功",
            polarity,
        ),
        (
            "observation",
            LOG,
            "订单服务 order-service 数据库连接池 HikariPool-1 未耗尽，获取连接失败",
            polarity,
        ),
        (
            "observation",
            LOG,
            "订单服务 order-service 数据库连接池 HikariPool-1 已恢复",
            polarity,
        ),
        (
            "observation",
            LOG,
            "订单服务 order-service 数据库连接池 HikariPool-1 已耗尽，获取连接正常",
            polarity,
        ),
        (
            "observation",
            ALERT,
            "告警=CPU使用率过高 服务=payment-service 级别=严重 状态=恢复 当前值=92%",
            polarity,
        ),
        (
            "observation",
            ALERT,
            "告警=CPU使用率过高 服务=payment-service 状态=触发 说明=CPU 使用率低于 90%",
            polarity,
        ),
        (
            "observation",
            KB,
            "当连接池耗尽时，请求会在 30000ms 后成功",
            polarity,
        ),
        (
            "observation",
            KB,
            "当连接池耗尽时，请求不会在 30000ms 后超时",
            polarity,
        ),
        (
            "observation",
            KB,
            "不应检查慢查询和最大连接数 maximumPoolSize=20",
            polarity,
        ),
        (
            "negative_observation",
            NONE,
            "query_logs returned no evidence; message=已找到匹配的日志",
            polarity,
        ),
        // level, severity, service, identifier swapped; homoglyph
        (
            "observation",
            LOG,
            "WARN 订单服务 order-service 数据库连接池 HikariPool-1 已耗尽",
            facts,
        ),
        (
            "observation",
            LOG,
            "ERROR 支付服务 payment-service 数据库连接池 HikariPool-1 已耗尽",
            facts,
        ),
        (
            "observation",
            LOG,
            "ERROR 订单服务 order-service 数据库连接池 HikariPool-2 已耗尽",
            facts,
        ),
        (
            "observation",
            LOG,
            "订单服务 оrder-service 数据库连接池 HikariPool-1 已耗尽",
            facts,
        ),
        (
            "observation",
            ALERT,
            "告警=CPU使用率过高 服务=payment-service 级别=警告 状态=触发 当前值=92%",
            facts,
        ),
        (
            "observation",
            ALERT,
            "告警=CPU使用率过低 服务=payment-service 状态=触发",
            facts,
        ),
        (
            "observation",
            ALERT,
            "告警=CPU使用率过高 服务=order-service 状态=触发",
            facts,
        ),
        (
            "observation",
            KB,
            "当连接池充足时，请求会在 30000ms 后超时",
            facts,
        ),
        // numbers, units and dates
        (
            "observation",
            LOG,
            "订单服务 order-service 获取连接失败，等待 3000 毫秒后超时",
            facts,
        ),
        (
            "observation",
            LOG,
            "订单服务 order-service 获取连接失败，等待 30000 秒后超时",
            facts,
        ),
        (
            "observation",
            LOG,
            "订单服务 order-service 获取连接失败，等待 ٣٠٠٠١ 毫秒后超时",
            facts,
        ),
        (
            "observation",
            LOG,
            "2026-07-09 23:06:03 ERROR 订单服务 order-service",
            facts,
        ),
        (
            "observation",
            LOG,
            "2026年7月9日 23:06:03 ERROR 订单服务 order-service",
            facts,
        ),
        (
            "observation",
            ALERT,
            "告警=CPU使用率过高 服务=payment-service 级别=严重 状态=触发 当前值=92MB",
            facts,
        ),
        (
            "observation",
            ALERT,
            "告警=CPU使用率过高 服务=payment-service 级别=严重 状态=触发 当前值=百分之九十七",
            facts,
        ),
        (
            "observation",
            ALERT,
            "告警=CPU使用率过高 服务=payment-service 状态=触发 持续=25小时",
            facts,
        ),
        (
            "observation",
            KB,
            "当连接池耗尽时，请求会在 30 秒后超时",
            facts,
        ),
        (
            "observation",
            KB,
            "应检查慢查询和最大连接数 maximumPoolSize=200",
            facts,
        ),
        (
            "negative_observation",
            NONE,
            "query_logs returned no evidence; service=inventory-service; message=服务正常",
            facts,
        ),
        // a clause spliced from another ref
        (
            "observation",
            ALERT,
            "告警=CPU使用率过高 服务=payment-service 状态=触发 ... 等待 30000 毫秒后超时",
            facts,
        ),
        // too little to identify a ref
        ("observation", LOG, "失败", "binding.excerpt_identifies"),
        ("observation", LOG, "订单", "binding.excerpt_identifies"),
        // a negative observation on positive evidence, and the reverse
        (
            "negative_observation",
            LOG,
            "订单服务 order-service 数据库连接池 HikariPool-1 已耗尽",
            "binding.negative_binds_no_evidence",
        ),
        (
            "observation",
            NONE,
            "query_logs returned no evidence; total=0; message=未找到匹配的日志",
            "binding.positive_needs_positive_evidence",
        ),
    ] {
        let r = gate(ty, path, excerpt);
        assert_eq!(r.status, "fail", "{excerpt}");
        assert!(
            r.failed_rules.iter().any(|f| f == rule),
            "{excerpt}: expected {rule}, got {:?}",
            r.failed_rules
        );
        assert!(
            r.checked_bindings.iter().all(|b| b.matched_text.is_empty()),
            "{excerpt}"
        );
    }
}

use super::*;

fn is_number(a: &Option<Added>) -> bool {
    use crate::evidence::ground::UngroundedKind;
    matches!(a, Some(Added::Ungrounded(u)) if u.kind == UngroundedKind::Number)
}

/// The whole statement check: the allowlist, then the structure.
fn check(statement: &str, evidence: &[&str]) -> Option<Added> {
    use crate::evidence::ground::{Source, fold, ungrounded};
    let ev: Vec<FactText> = evidence.iter().map(|e| FactText::new(&fold(e))).collect();
    let sources: Vec<Source<'_>> = ev
        .iter()
        .map(|text| Source {
            text,
            tool: "query_logs",
        })
        .collect();
    let s = FactText::new(&fold(statement));
    if let Some(u) = ungrounded(statement, &s, &sources, evidence, false) {
        return Some(Added::Ungrounded(u));
    }
    let names = vec!["redis".to_string(), "payment-service".to_string()];
    added(&s, &ev, &names)
}

const ALERT: &str =
    "alert HighCPUUsage service=payment-service severity=critical state=firing value=92 for=25m";
const POOL: &str = "2026-07-08 23:06:03 ERROR order-service HikariPool-1 - Connection is not available, request timed out after 30000ms";
const NOTHING: &str = "query_logs returned no evidence; evidence_status=no_evidence; query=service=inventory-service level=ERROR; total=0";

#[test]
fn faithful_paraphrases_pass() {
    for (s, e) in [
        (
            "payment-service has the HighCPUUsage alert firing at 92% for 25 minutes.",
            ALERT,
        ),
        ("The CPU alert on payment-service is critical.", ALERT),
        (
            "order-service: HikariPool-1 connections were not available; requests timed out after 30000 ms.",
            POOL,
        ),
        ("At 23:06 order-service logged a pool timeout.", POOL),
        (
            "The query found no ERROR logs for inventory-service.",
            NOTHING,
        ),
        (
            "payment-service 的 HighCPUUsage 告警正在触发，CPU 为 92%。",
            ALERT,
        ),
        (
            "order-service 的 HikariPool-1 连接不可用，30000ms 后超时。",
            POOL,
        ),
        (
            "payment-service 的 HighCPUUsage 告警正在触发，CPU 为 ９２%。",
            ALERT,
        ),
        (
            "order-service requests timed out after 30000 milliseconds.",
            POOL,
        ),
        ("order-service 请求在 30000 毫秒后超时。", POOL),
        ("order-service 的服务连接不可用。", POOL),
    ] {
        assert_eq!(check(s, &[e]), None, "{s}");
    }
}

#[test]
fn added_names_numbers_and_times_fail() {
    for (s, e) in [
        ("order-service has the HighCPUUsage alert firing.", ALERT),
        ("payment-service CPU is at 95%.", ALERT),
        ("payment-service CPU has been at 92% for 40 minutes.", ALERT),
        ("redis has the HighCPUUsage alert firing.", ALERT),
        ("At 23:09 order-service logged a pool timeout.", POOL),
        ("HikariPool-2 connections were not available.", POOL),
        ("payment-service has zero errors.", ALERT),
        ("order-service 零错误。", POOL),
        ("支付服务连接不可用。", POOL),
        ("order-service 连接不可用，支付服务也受影响。", POOL),
        ("order-service requests timed out after 30000 s.", POOL),
        ("order-service 请求在 30000 秒后超时。", POOL),
        (
            "order-service 的 HikariPool-1 连接在 ٤٠٠٠٠ms 后超时。",
            POOL,
        ),
    ] {
        let got = check(s, &[e]);
        assert!(got.is_some(), "{s}: {got:?}");
    }
}

#[test]
fn added_negations_and_states_fail_in_english_and_chinese() {
    for (s, e) in [
        ("payment-service's alert is resolved.", ALERT),
        ("The HighCPUUsage alert is not firing.", ALERT),
        ("order-service has no errors.", POOL),
        ("inventory-service errors are ruled out.", NOTHING),
        ("inventory-service errors are ruled-out.", NOTHING),
        ("inventory-service was confirmed to be healthy.", NOTHING),
        ("There is no problem with inventory-service.", NOTHING),
        ("Nothing is wrong with inventory-service.", NOTHING),
        ("inventory-service 的错误已经排除。", NOTHING),
        ("inventory-service 一切正常。", NOTHING),
        ("inventory-service 没有问题。", NOTHING),
        ("inventory-service 确认没有错误。", NOTHING),
        ("payment-service 的告警已经恢复。", ALERT),
        ("order-service 连接可用。", POOL),
        ("order-service is free of errors.", POOL),
        ("order-service lacks errors.", POOL),
        ("payment-service looks good.", ALERT),
    ] {
        let got = check(s, &[e]);
        assert!(got.is_some(), "{s}: {got:?}");
    }
}

const CHECKOUT: &str = "2026-07-08 23:10:00 ERROR checkout-service call to order-service failed: payment-service timed out after 5 minutes";

#[test]
fn a_chinese_service_name_that_translates_to_an_evidence_service_passes() {
    for s in [
        "订单服务连接不可用。",
        "order-service 的订单服务超时。",
        "订单服务失败，支付服务超时。",
    ] {
        let e = if s.contains("支付") { CHECKOUT } else { POOL };
        assert_eq!(check(s, &[e]), None, "{s}");
    }
    // the glossary's other spellings of one word and of the head
    assert_eq!(
        check("订单服务超时。", &["orders_svc timed out after 30000ms"]),
        None
    );
    assert_eq!(
        check("购物车服务报错。", &["ERROR CartService exception"]),
        None
    );
}

#[test]
fn a_chinese_service_name_the_evidence_does_not_name_fails() {
    for (s, e) in [
        // translates, but to a service the evidence does not name
        ("用户服务连接不可用。", POOL),
        ("库存服务超时。", CHECKOUT),
        // the glossary cannot translate it
        ("风暴服务连接不可用。", POOL),
        ("订单风暴服务连接不可用。", POOL),
        // a translatable word after an unknown one is not the name
        ("清算订单服务连接不可用。", POOL),
    ] {
        let got = check(s, &[e]);
        assert!(got.is_some(), "{s}: {got:?}");
    }
}

#[test]
fn an_infrastructure_component_the_evidence_does_not_name_fails() {
    for (s, e) in [
        ("payment-service is slow because redis is down.", ALERT),
        ("order-service timed out waiting for kafka.", POOL),
        ("order-service lost its postgres connection.", POOL),
        ("payment-service 变慢是因为 redis 超时。", ALERT),
        ("order-service 的 k8s 节点超时。", POOL),
        ("order-service pod7 timed out.", POOL),
        ("order-service 依赖的 mongodb 超时。", POOL),
    ] {
        let got = check(s, &[e]);
        assert!(got.is_some(), "{s}: {got:?}");
    }
    // named by the evidence, in any of its spellings
    for (s, e) in [
        (
            "order-service timed out on redis.",
            "ERROR order-service redis timed out",
        ),
        (
            "订单服务的 k8s 节点超时。",
            "k8s node of order-service timed out",
        ),
    ] {
        assert_eq!(check(s, &[e]), None, "{s}");
    }
    // ordinary words are not names
    assert_eq!(
        check(
            "The payment-service CPU alert is critical and firing.",
            &[ALERT]
        ),
        None
    );
}

#[test]
fn spelled_out_numbers_are_numbers_with_their_unit() {
    let five = "ERROR order-service retried for 5 minutes";
    let ten = "ERROR order-service retried for 10 minutes";
    for (s, e) in [
        ("order-service retried for five minutes.", five),
        ("order-service retried for ten minutes.", ten),
        ("order-service 重试了五分钟。", five),
        ("order-service 重试了十分钟。", ten),
        (
            "order-service retried for twenty-five minutes.",
            "order-service retried for 25m",
        ),
        (
            "order-service 重试了二十分钟。",
            "order-service retried for 20 minutes",
        ),
        (
            "order-service retried for one minute.",
            "order-service retried for 1 min",
        ),
        (
            "order-service logged ten errors.",
            "order-service logged 10 errors",
        ),
    ] {
        assert_eq!(check(s, &[e]), None, "{s}");
    }
    for (s, e) in [
        ("order-service retried for five minutes.", ten),
        ("order-service retried for ten minutes.", five),
        ("order-service 重试了五分钟。", ten),
        ("order-service 重试了两分钟。", five),
        ("order-service 重试了二十分钟。", ten),
        (
            "order-service retried for twenty-five minutes.",
            "order-service retried for 20m",
        ),
        ("order-service retried for one minute.", five),
        (
            "order-service logged ten errors.",
            "order-service logged 5 errors",
        ),
        (
            "order-service 出现了三次错误。",
            "order-service logged 5 errors",
        ),
    ] {
        let got = check(s, &[e]);
        assert!(is_number(&got), "{s}: {got:?}");
    }
    // a lone numeral inside a word is no number: 十分 "very", 一切 "all"
    // (the words themselves are not grounded here, the numbers are no issue)
    let got = check("order-service 的连接十分缓慢，一切请求都超时。", &[POOL]);
    assert!(got.is_some() && !is_number(&got), "{got:?}");
}

#[test]
fn plurals_of_identifiers_are_the_identifier() {
    assert_eq!(
        check("order-service logged ERRORs from HikariPool-1.", &[POOL]),
        None
    );
}

#[test]
fn a_negation_must_speak_of_the_negated_facts() {
    // the evidence negates availability, not the service's errors
    assert!(check("Connection is not available on order-service.", &[POOL]).is_none());
    assert_eq!(
        check("order-service never logged HikariPool-1 errors.", &[POOL]),
        Some(Added::Negation("never".into()))
    );
}

#[test]
fn conclusions_are_found_by_their_state_words() {
    for s in [
        "ruled out",
        "ruled-out",
        "confirmed to be healthy",
        "no problem found",
        "does not exist",
        "已经排除",
        "一切正常",
        "没有问题",
        "不存在",
    ] {
        assert!(concludes(&FactText::new(s)).is_some(), "{s}");
    }
    for s in [
        "Check the top CPU consumers on payment-service hosts.",
        "查看 payment-service 的慢查询日志",
    ] {
        assert_eq!(concludes(&FactText::new(s)), None, "{s}");
    }
}

#[test]
fn a_firing_alert_has_not_resolved_and_a_resolved_one_is_not_firing() {
    const RESOLVED: &str =
        "alert HighRequestLatency service=order-service severity=warning state=resolved value=1.1";
    for s in [
        "payment-service HighCPUUsage has not resolved.",
        "payment-service 的 HighCPUUsage 告警仍未结束。",
        "payment-service 的 HighCPUUsage 告警尚未解除。",
    ] {
        assert_eq!(check(s, &[ALERT]), None, "{s}");
    }
    assert_eq!(
        check(
            "order-service HighRequestLatency is not firing.",
            &[RESOLVED]
        ),
        None
    );
    // the negation still has to be true of what the clause names
    for (s, e) in [
        ("payment-service HighCPUUsage is not firing.", &[ALERT][..]),
        (
            "order-service HighRequestLatency has not resolved.",
            &[RESOLVED][..],
        ),
        (
            "order-service HighRequestLatency has not resolved.",
            &[ALERT, RESOLVED][..],
        ),
        (
            "order-service 的 HighRequestLatency 告警仍未结束。",
            &[ALERT, RESOLVED][..],
        ),
    ] {
        assert!(check(s, e).is_some(), "{s} passed against {e:?}");
    }
}

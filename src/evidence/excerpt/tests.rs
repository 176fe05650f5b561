use super::*;

fn check(excerpt: &str, reference: &str) -> Result<(), Unsupported> {
    supports(
        &FactText::new(excerpt),
        &FactText::new(reference),
        &ExcerptParams::default(),
    )
}

fn rule(excerpt: &str, reference: &str) -> Option<&'static str> {
    check(excerpt, reference).err().map(|e| e.rule().as_str())
}

const ALERT: &str = "alertname=HighCPUUsage service=payment-service severity=critical state=firing value=92% active_for=25m since=2026-07-08T22:40:00Z summary=CPU usage above 90%";
const LOG: &str = "2026-07-08T23:05:28Z ERROR order-service HikariPool-1 - Connection is not available, request timed out after 30000ms";
const KB: &str = "[database] runbooks/db.md > 连接池: 当连接池耗尽时，请求会在 30000ms 后超时，应检查慢查询和最大连接数 maximumPoolSize=20";
const ZH_LOG: &str = "2026-07-08T23:06:03Z ERROR order-service 数据库连接不可用，请求超时";

#[test]
fn quotes_and_field_reorderings_pass() {
    for ok in [
        "state=firing value=92%",
        "HighCPUUsage, service=payment-service, state=firing, value=92%",
        "HighCPUUsage, payment-service, firing, value 92%, active for 25m",
        "service=payment-service, alertname=HighCPUUsage",
        "ＨｉｇｈＣＰＵＵｓａｇｅ　ｓｔａｔｅ＝ｆｉｒｉｎｇ",
        "CPU usage above 90%",
        "HighCPUUsage firing for 25 minutes",
    ] {
        assert_eq!(check(ok, ALERT), Ok(()), "{ok}");
    }
    for ok in [
        "Connection is not available, request timed out after 30000ms",
        "connection is NOT available; request TIMED OUT after 30000ms",
        "ERROR order-service … request timed out after 30,000ms",
        "order-service HikariPool-1 - Connection isn't available",
    ] {
        assert_eq!(check(ok, LOG), Ok(()), "{ok}");
    }
    assert_eq!(check("当连接池耗尽时请求会在30000ms后超时", KB), Ok(()));
    // the runbook's condition is part of what it says
    assert!(check("连接池耗尽时请求会在30000ms后超时", KB).is_err());
    assert_eq!(check("数据库连接不可用，请求超时", ZH_LOG), Ok(()));
}

#[test]
fn the_refs_own_timestamp_counts_as_quoted_in_any_rendering() {
    for ts in [
        "2026-07-08 23:05:28",
        "2026-07-08T23:05:28Z",
        "2026/07/08 23:05:28.000",
        "2026-07-09 07:05:28 +08:00",
        "07-08 23:05:28",
        "23:05:28",
        "2026年7月8日 23:05:28",
    ] {
        let excerpt =
            format!("{ts} ERROR order-service HikariPool-1 - Connection is not available");
        assert_eq!(check(&excerpt, LOG), Ok(()), "{excerpt}");
    }
    // another instant is a fact the ref does not hold
    for ts in [
        "2026-07-08 23:06:28",
        "2026-07-08T23:05:28+08:00",
        "22:05:28",
    ] {
        let excerpt = format!("{ts} ERROR order-service HikariPool-1");
        assert_eq!(
            rule(&excerpt, LOG),
            Some("binding.excerpt_facts"),
            "{excerpt}"
        );
    }
}

#[test]
fn dropped_or_added_negations_fail_in_english_and_chinese() {
    for bad in [
        "Connection is available",
        "HikariPool-1 - Connection is available, request timed out after 30000ms",
        "Connection is … available",
        "ERROR order-service HikariPool-1 Connection available request timed out",
    ] {
        assert_eq!(rule(bad, LOG), Some("binding.excerpt_polarity"), "{bad}");
    }
    assert_eq!(
        rule(
            "HighCPUUsage service=payment-service state=not firing",
            ALERT
        ),
        Some("binding.excerpt_polarity")
    );
    assert_eq!(
        rule("数据库连接可用，请求超时", ZH_LOG),
        Some("binding.excerpt_polarity")
    );
    assert_eq!(
        rule("数据库连接可用", ZH_LOG),
        Some("binding.excerpt_polarity")
    );
    assert_eq!(
        rule("连接池未耗尽", "连接池耗尽，请求超时"),
        Some("binding.excerpt_polarity")
    );
    assert_eq!(
        rule("连接池没有耗尽", "连接池耗尽，请求超时"),
        Some("binding.excerpt_polarity")
    );
    // the negation of one clause cannot be moved to another
    let two = "pool-a is not available; pool-b is available";
    assert_eq!(check("pool-b is available", two), Ok(()));
    assert_eq!(
        rule("pool-b is not available", two),
        Some("binding.excerpt_polarity")
    );
    // who did what: one ref clause keeps its order
    let call = "ERROR order-service timeout calling payment-service";
    assert_eq!(
        check("order-service timeout calling payment-service", call),
        Ok(())
    );
    assert_eq!(
        rule("payment-service timeout calling order-service", call),
        Some("binding.excerpt_facts")
    );
    assert_eq!(
        rule("pool-a is available", two),
        Some("binding.excerpt_polarity")
    );
}

#[test]
fn swapped_facts_fail() {
    for bad in [
        "HighCPUUsage service=inventory-service state=firing value=92%",
        "HighCPUUsage inventory service firing 92%",
        "HighCPUUsage service=payment-service state=resolved value=92%",
        "HighCPUUsage payment-service firing value=97%",
        "HighCPUUsage payment-service firing value=9%",
        "HighCPUUsage payment-service firing value=٩٧%",
        "HighCPUUsage payment-service firing value=９７%",
        "HighCPUUsage payment-service firing for 25 seconds",
        "HighCPUUsage payment-service severity=warning",
        "HighMemoryUsage payment-service firing",
    ] {
        let r = rule(bad, ALERT);
        assert!(
            matches!(
                r,
                Some("binding.excerpt_facts" | "binding.excerpt_polarity")
            ),
            "{bad}: {r:?}"
        );
    }
    assert_eq!(
        rule("当连接池耗尽时，请求会在 60000ms 后超时", KB),
        Some("binding.excerpt_facts")
    );
    assert_eq!(
        rule("九十七 HighCPUUsage payment-service", ALERT),
        Some("binding.excerpt_facts")
    );
}

#[test]
fn a_clause_spliced_from_another_ref_fails() {
    let other = "2026-07-08T23:05:31Z WARN order-service Retrying payment call attempt=2";
    let spliced = "ERROR order-service HikariPool-1 Retrying payment call attempt=2";
    assert_eq!(rule(spliced, LOG), Some("binding.excerpt_facts"));
    assert_eq!(rule(spliced, other), Some("binding.excerpt_facts"));
    assert_eq!(
        rule(
            "request timed out after 30000ms, HighCPUUsage payment-service",
            LOG
        ),
        Some("binding.excerpt_facts")
    );
}

#[test]
fn an_excerpt_must_identify_its_ref() {
    for weak in ["ERROR", "error.", "92", "超时", "firing"] {
        assert_eq!(
            rule(weak, LOG),
            Some("binding.excerpt_identifies"),
            "{weak}"
        );
    }
    assert_eq!(rule("", LOG), Some("binding.excerpt_identifies"));
    assert_eq!(check("ERROR order-service", LOG), Ok(()));
    assert_eq!(check("请求超时", ZH_LOG), Ok(()));
}

#[test]
fn filler_paraphrase_is_bounded_by_the_overlap_threshold() {
    assert_eq!(
        rule(
            "HighCPUUsage payment-service is the alert that has it",
            ALERT
        ),
        Some("binding.excerpt_supported")
    );
}

#[test]
fn a_units_spacing_is_not_a_fact_but_the_unit_is() {
    const SLOW: &str = "2026-07-08T23:05:28Z WARN checkout-service slow query took 2300ms, pool usage 92%, heap 512MB, 120req/s";
    const SLOW_ZH: &str = "checkout-service 慢查询耗时 2300 毫秒，持续 5 分钟";
    for ok in [
        "checkout-service slow query took 2300 ms",
        "slow query took 2300 milliseconds, pool usage 92 %",
        "checkout-service heap 512 MB, 120 req/s",
        "checkout-service pool usage 92 percent",
    ] {
        assert_eq!(check(ok, SLOW), Ok(()), "{ok}");
    }
    for ok in [
        "checkout-service 慢查询耗时2300毫秒",
        "checkout-service 慢查询耗时 2300ms，持续 5min",
    ] {
        assert_eq!(check(ok, SLOW_ZH), Ok(()), "{ok}");
    }
    for bad in [
        "checkout-service slow query took 2300 s",
        "checkout-service slow query took 2300 seconds",
        "checkout-service slow query took 2400 ms",
        "checkout-service heap 512 GB",
    ] {
        assert_eq!(rule(bad, SLOW), Some("binding.excerpt_facts"), "{bad}");
    }
    assert_eq!(
        rule("checkout-service 慢查询耗时 2300 秒", SLOW_ZH),
        Some("binding.excerpt_facts")
    );
}

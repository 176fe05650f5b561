use super::*;

fn check(statement: &str, evidence: &[(&str, &str)]) -> Option<Ungrounded> {
    let texts: Vec<FactText> = evidence
        .iter()
        .map(|(t, _)| FactText::new(&fold(t)))
        .collect();
    let sources: Vec<Source<'_>> = texts
        .iter()
        .zip(evidence)
        .map(|(text, (_, tool))| Source { text, tool })
        .collect();
    let raw: Vec<&str> = evidence.iter().map(|(t, _)| *t).collect();
    ungrounded(
        statement,
        &FactText::new(&fold(statement)),
        &sources,
        &raw,
        false,
    )
}

const LOG: &str = "2026-03-01T10:00:00Z payment-service ERROR Connection is not available, request timed out after 30000ms";
const ALERT: &str =
    "alert HighCPUUsage state=firing severity=critical service=order-service value=0.35";

#[test]
fn quotes_and_connectives_pass() {
    for s in [
        "payment-service logged Connection is not available",
        "The logs show that the request timed out after 30000ms",
        "Loki reports payment-service ERROR: the request timed out after 30 s",
        "the request timed out after 30,000 ms",
        "the request timed out after 30 000 ms",
    ] {
        assert_eq!(check(s, &[(LOG, "query_logs")]), None, "{s}");
    }
    for s in [
        "Prometheus reports the HighCPUUsage alert firing on order-service",
        "The alert HighCPUUsage is firing with value 35%",
        "order-service 的 HighCPUUsage 告警 触发，数值为 35%",
    ] {
        assert_eq!(check(s, &[(ALERT, "query_metrics")]), None, "{s}");
    }
}

#[test]
fn words_outside_the_evidence_are_ungrounded() {
    for (s, w) in [
        ("payment-service threads are deadlocked", "threads"),
        ("revenue is dropping on payment-service", "revenue"),
        ("the request timed out again and again", "again"),
        ("payment-service 收入 下降", "收入"),
    ] {
        let u = check(s, &[(LOG, "query_logs")]);
        assert_eq!(u.map(|u| u.word), Some(w.to_string()), "{s}");
    }
}

#[test]
fn links_need_one_text_that_states_them() {
    for s in [
        "payment-service ERROR, which then timed out",
        "Connection is not available => request timed out",
        "Connection is not available, 于是 request timed out",
        "the request timed out because Connection is not available",
    ] {
        let u = check(s, &[(LOG, "query_logs")]);
        assert_eq!(u.map(|u| u.kind), Some(UngroundedKind::Link), "{s}");
    }
    let stated = "request timed out because Connection is not available";
    assert_eq!(
        check(
            "the request timed out because Connection is not available",
            &[(stated, "query_logs")]
        ),
        None
    );
}

#[test]
fn values_compare_by_value() {
    let e = &[(LOG, "query_logs")];
    assert_eq!(check("timed out after 30 seconds", e), None);
    assert_eq!(check("timed out after half a minute", e), None);
    assert_eq!(
        check("timed out after half an hour", e).map(|u| u.kind),
        Some(UngroundedKind::Number)
    );
    assert_eq!(
        check("timed out after 31 seconds", e).map(|u| u.kind),
        Some(UngroundedKind::Number)
    );
    assert_eq!(check("timed out after about 29 seconds", e), None);
    assert_eq!(
        check("timed out after about 20 seconds", e).map(|u| u.kind),
        Some(UngroundedKind::Number)
    );
    let ratio = &[(ALERT, "query_metrics")];
    assert_eq!(check("HighCPUUsage value 35 percent", ratio), None);
    let pct = &[("cpu usage 35%", "query_metrics")];
    assert_eq!(check("cpu usage 0.35", pct), None);
    let big = &[("rejected 12500 requests", "query_logs")];
    assert_eq!(check("rejected 12,500 requests", big), None);
    assert_eq!(check("rejected 12 500 requests", big), None);
}

#[test]
fn look_alike_letters_read_as_the_letters_they_imitate() {
    // Cyrillic о in "nоt": the negation is a negation, a word of the lexicon
    assert_eq!(fold("n\u{43e}t"), "not");
    // a look-alike of an evidence word is that word
    assert_eq!(
        check("p\u{430}yment-service logged ERROR", &[(LOG, "query_logs")]),
        None
    );
    // a look-alike of a word the evidence lacks is still lacking
    assert!(
        check(
            "\u{440}\u{430}ym\u{435}nt-gateway logged ERROR",
            &[(LOG, "query_logs")]
        )
        .is_some()
    );
}

#[test]
fn other_languages_have_no_free_words() {
    let u = check("payment-service est en panne", &[(LOG, "query_logs")]);
    assert_eq!(u.map(|u| u.word), Some("est".to_string()));
}

#[test]
fn source_names_are_grounded_by_the_tool_that_served() {
    assert_eq!(
        check(
            "Prometheus shows payment-service ERROR",
            &[(LOG, "query_logs")]
        )
        .map(|u| u.word),
        Some("prometheus".into())
    );
    assert_eq!(
        check("Loki shows payment-service ERROR", &[(LOG, "query_logs")]),
        None
    );
}

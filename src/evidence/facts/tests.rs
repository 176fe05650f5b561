use super::*;

fn toks(s: &str) -> Vec<String> {
    FactText::new(s).tokens().map(str::to_string).collect()
}

fn kinds(s: &str) -> Vec<(String, Kind)> {
    let t = FactText::new(s);
    t.parts()
        .iter()
        .map(|p| (t.text(p).to_string(), p.kind))
        .collect()
}

#[test]
fn normalises_width_digits_case_and_invisibles() {
    assert_eq!(toks("ＣＰＵ＝９２％"), ["cpu", "92%"]);
    assert_eq!(toks("value=٩٢"), ["value", "92"]);
    assert_eq!(toks("value=९२"), ["value", "92"]);
    assert_eq!(toks("pay\u{200B}ment-service"), ["payment", "service"]);
    assert_eq!(toks("①②"), ["12"]);
    assert_eq!(toks("30,000ms 1,5"), ["30000ms", "1", "5"]);
    assert_eq!(toks("v=92.5%. end."), ["v", "92.5%", "end"]);
    assert_eq!(toks("连接池耗尽abc"), ["连", "接", "池", "耗", "尽", "abc"]);
}

#[test]
fn camel_case_and_joins() {
    let t = FactText::new("HighCPUUsage payment-service HikariPool-1");
    assert_eq!(
        t.tokens().collect::<Vec<_>>(),
        [
            "high", "cpu", "usage", "payment", "service", "hikari", "pool", "1"
        ]
    );
    assert_eq!(t.units(), vec![(0, 2), (3, 4), (5, 7)]);
    assert!(t.parts().iter().all(|p| p.ident));
}

#[test]
fn classifies_negations_polarity_and_filler() {
    let k = kinds("Connection isn't available, the pool is not firing");
    let find = |w: &str| k.iter().find(|(t, _)| t == w).map(|(_, k)| *k);
    assert_eq!(find("t"), Some(Kind::Negation));
    assert_eq!(find("not"), Some(Kind::Negation));
    assert_eq!(find("available"), Some(Kind::Polarity));
    assert_eq!(find("firing"), Some(Kind::Polarity));
    assert_eq!(find("the"), Some(Kind::Filler));
    assert_eq!(find("connection"), Some(Kind::Word));
    let zh = FactText::new("连接池不可用，服务非常正常");
    assert!(zh.has_negation());
    assert!(zh.has_polarity_word("可用"));
    assert!(zh.has_polarity_word("正常"));
    // 非常 is "very", not a negation
    let very = FactText::new("非常慢");
    assert!(!very.has_negation());
    assert_eq!(toks("CPU 九十二"), ["cpu", "92"]);
}

#[test]
fn clauses_break_at_punctuation_dashes_and_fields() {
    let t = FactText::new(
        "ERROR order-service HikariPool-1 - Connection is not available, request timed out",
    );
    let clause = |w: &str| {
        t.parts()
            .iter()
            .find(|p| t.text(p) == w)
            .map(|p| p.clause)
            .unwrap()
    };
    assert_eq!(clause("error"), clause("hikari"));
    assert_ne!(clause("hikari"), clause("connection"));
    assert_eq!(clause("connection"), clause("not"));
    assert_ne!(clause("available"), clause("request"));
    let a = FactText::new("alertname=HighCPUUsage service=payment-service state=firing");
    let c = |w: &str| {
        a.parts()
            .iter()
            .find(|p| a.text(p) == w)
            .map(|p| (p.clause, p.key))
            .unwrap()
    };
    assert_ne!(c("usage").0, c("firing").0);
    assert!(c("state").1 && !c("firing").1);
    assert_eq!(c("state").0, c("firing").0);
}

#[test]
fn ellipses_start_segments() {
    let t = FactText::new("Connection is … available");
    let segs: Vec<u16> = t.parts().iter().map(|p| p.segment).collect();
    assert_eq!(segs, [0, 0, 1]);
    let t = FactText::new("a b ... c");
    assert_eq!(t.parts().last().unwrap().segment, 1);
}

#[test]
fn timestamps_are_one_part() {
    let t = FactText::new("2026-07-08 23:05:28 ERROR order-service");
    assert!(matches!(t.parts()[0].kind, Kind::Stamp(0)));
    assert_eq!(t.stamps().len(), 1);
    assert_eq!(toks("2026-07-08T23:05:28Z ERROR")[1], "error");
}

#[test]
fn numbers_compare_by_value_and_unit() {
    assert!(numbers_match("27", "min", "27m", ""));
    assert!(numbers_match("27", "", "27m", ""));
    assert!(!numbers_match("27", "s", "27m", ""));
    assert!(numbers_match("92", "", "92.0", ""));
    assert!(!numbers_match("9", "", "92", ""));
    assert!(numbers_match("30000ms", "", "30000", "ms"));
}

proptest::proptest! {
    #[test]
    fn never_panics_and_parts_are_in_order(s in "\\PC{0,80}") {
        let t = FactText::new(&s);
        let mut last = 0u32;
        for p in t.parts() {
            proptest::prop_assert!(p.start >= last);
            last = p.end;
        }
    }
}

#[test]
fn a_number_and_its_unit_are_one_part_however_spaced() {
    for (a, b) in [
        ("took 2300 ms", "took 2300ms"),
        ("took 2300 milliseconds", "took 2300MS"),
        ("used 512 MB", "used 512MB"),
        ("4 GiB free", "4GiB free"),
        ("at 120 req/s", "at 120req/s"),
        ("at 120 rps", "at 120 req/s"),
        ("cpu 92 %", "cpu 92%"),
        ("cpu 92 percent", "cpu 92%"),
        ("for 25 minutes", "for 25m"),
        ("耗时 2300 毫秒", "耗时2300ms"),
        ("持续5分钟", "持续 5 min"),
        ("持续三十个小时", "持续 30h"),
        ("等待 30 秒", "等待30s"),
    ] {
        assert_eq!(toks(a), toks(b), "{a} / {b}");
    }
    // a different unit stays a different fact
    assert_ne!(toks("took 2300 s"), toks("took 2300ms"));
    assert_ne!(toks("用了 2300 秒"), toks("用了 2300ms"));
    // a number inside an identifier keeps its text; so does a non-unit word
    assert_eq!(toks("HikariPool-1 s"), ["hikari", "pool", "1", "s"]);
    assert_eq!(toks("2300 requests failed")[0], "2300");
    assert_eq!(toks("2300, ms")[0], "2300");
}

//! Counts per time bucket, as `query_logs` records them for a timeline,
//! are exact: on generated packs (any lines, any filters, any window) and
//! on log files, each bucket holds exactly the matching lines of its
//! slice of time, and the buckets hold every match.

use diagraph::config::LogFilesConfig;
use diagraph::tools::Tool;
use diagraph::tools::files::FileLogs;
use diagraph::tools::logs::{LogLine, LogQuery};
use diagraph::tools::pack::Pack;
use diagraph::vocab::buckets::TimeBuckets;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::time::Duration;

fn assert_exact(b: &TimeBuckets, matching: &[i64]) -> Result<(), TestCaseError> {
    prop_assert!(b.is_sound(), "{:?}", b);
    for (i, n) in b.counts.iter().enumerate() {
        let lo = b.bucket_start_us(i);
        let hi = lo + b.step_us();
        let want = matching.iter().filter(|t| **t >= lo && **t < hi).count() as u64;
        prop_assert_eq!(*n, want, "bucket {} of {:?}", i, b);
    }
    prop_assert_eq!(b.total(), matching.len() as u64);
    Ok(())
}

const WORDS: [&str; 4] = [
    "pool exhausted",
    "timeout upstream",
    "ok served",
    "retry later",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn buckets_of_a_pack_query_are_the_exact_counts(
        lines in prop::collection::vec((0u8..3, 0u8..3, 0u32..20_000, 0u8..4), 1..150),
        span_exp in 0u32..4,
        queries in prop::collection::vec(
            (prop::option::of(0u8..3), prop::option::of(0u8..3), prop::option::of(0u8..4),
             prop::option::of((0u32..20_000, 0u32..20_000))),
            1..6),
    ) {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("pack.toml"), "name = \"p\"\n").unwrap();
        std::fs::write(d.path().join("alerts.json"), "[]").unwrap();
        let services = ["api", "db", "web"];
        let levels = ["ERROR", "WARN", "INFO"];
        // Spans from minutes to days, so every kind of step is used.
        let scale = [1u32, 7, 60, 400][span_exp as usize];
        let base = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").unwrap().to_utc();
        let at = |s: u32| base + chrono::Duration::milliseconds(i64::from(s) * i64::from(scale) * 100);
        let mut text = String::new();
        for (s, l, t, w) in &lines {
            let v = json!({"ts": at(*t).to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                "service": services[*s as usize], "level": levels[*l as usize], "message": WORDS[*w as usize]});
            text.push_str(&v.to_string());
            text.push('\n');
        }
        std::fs::write(d.path().join("logs.jsonl"), &text).unwrap();
        let pack = Pack::load(d.path()).unwrap();
        let every: Vec<LogLine> = pack.logs.read_all().unwrap();
        for (s, l, w, window) in queries {
            let mut args = Map::new();
            if let Some(s) = s { args.insert("service".into(), json!(services[s as usize])); }
            if let Some(l) = l { args.insert("level".into(), json!(levels[l as usize])); }
            if let Some(w) = w { args.insert("keyword".into(), json!(WORDS[w as usize].split(' ').next())); }
            if let Some((a, b)) = window {
                let fmt = |t: u32| at(t).to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
                args.insert("since".into(), json!(fmt(a.min(b))));
                args.insert("until".into(), json!(fmt(a.max(b))));
            }
            let q = LogQuery::parse(&args, pack.now()).unwrap();
            let found = pack.logs.query(&q).unwrap();
            let matching: Vec<i64> = every.iter().filter(|l| q.matches(l)).map(LogLine::ts_micros).collect();
            prop_assert_eq!(found.sample.total, matching.len() as u64);
            match &found.sample.buckets {
                Some(b) => assert_exact(b, &matching)?,
                // Only a query that covers no record at all has no grid.
                None => prop_assert!(matching.is_empty(), "{:?}", args),
            }
        }
    }
}

#[tokio::test]
async fn log_files_record_their_exact_counts_per_bucket() {
    let d = tempfile::tempdir().unwrap();
    let mut text = String::new();
    let mut matching = Vec::new();
    let base = chrono::DateTime::parse_from_rfc3339("2026-02-03T10:00:00Z")
        .unwrap()
        .to_utc();
    for i in 0..400i64 {
        let t = base + chrono::Duration::seconds(i * i % 5_400);
        let level = if i % 3 == 0 { "INFO" } else { "ERROR" };
        text.push_str(&format!(
            "{} {level} checkout pool wait {i}\n",
            t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ));
        if level == "ERROR" {
            matching.push(t.timestamp_micros());
        }
    }
    std::fs::write(d.path().join("app.log"), text).unwrap();
    let t = FileLogs::new(
        &LogFilesConfig {
            paths: Some(d.path().join("*.log").display().to_string()),
            ..LogFilesConfig::default()
        },
        Duration::from_secs(10),
    )
    .unwrap();
    let args: Map<String, Value> =
        serde_json::from_value(json!({"level": "ERROR", "limit": 5})).unwrap();
    let out = t.call(&args).await.unwrap();
    assert_eq!(out.body["total"], matching.len());
    let b = out.buckets.expect("counts per bucket recorded");
    assert_exact(&b, &matching).unwrap();
    assert!(b.counts.len() > 40, "a fine grid over 90 minutes: {b:?}");
}

//! The on-disk index of a pack's logs: built once per content, outside
//! the pack; read back it answers exactly what a full read answers; a
//! changed file, or an index cut short, corrupt or from elsewhere, is read
//! again and never trusted; processes building it at once leave a whole
//! one.

use crate::pack_scale::flood_pack;
use diagraph::tools::logs::index::{IndexPolicy, IndexUse};
use diagraph::tools::logs::{LogLine, LogQuery};
use diagraph::tools::pack::Pack;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn policy(cache: &Path) -> IndexPolicy {
    IndexPolicy {
        dir: Some(cache.to_path_buf()),
        min_bytes: 0,
        settle: Duration::ZERO,
    }
}

fn load(pack: &Path, cache: &Path) -> Pack {
    Pack::load_with(pack, &policy(cache), &mut |_, _| {}).unwrap()
}

fn full_read(pack: &Path) -> Pack {
    Pack::load_with(pack, &IndexPolicy::none(), &mut |_, _| {}).unwrap()
}

fn index_files(cache: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(cache)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

const QUERIES: &[&str] = &[
    r#"{}"#,
    r#"{"service": "rm-client", "level": "ERROR", "limit": 10}"#,
    r#"{"keyword": "contacting rm"}"#,
    r#"{"keyword": "contacting rm", "since": "2026-03-01T05:00:00Z", "until": "2026-03-01T06:00:00Z"}"#,
    r#"{"keyword": "café"}"#,
    r#"{"keyword": "t-2999"}"#,
    r#"{"keyword": "GET 200", "service": "WEB", "limit": 200}"#,
    r#"{"level": "warn,error", "window_minutes": 90}"#,
];

/// Everything a query answers, for comparing two tables.
fn answers(pack: &Pack) -> Vec<String> {
    QUERIES
        .iter()
        .map(|q| {
            let map: Map<String, Value> = serde_json::from_str(q).unwrap();
            let found = pack
                .logs
                .query(&LogQuery::parse(&map, pack.now()).unwrap())
                .unwrap();
            format!("{:?} {:?}", found.sample, found.lines)
        })
        .collect()
}

/// The flood pack with one unreadable line, so there are warnings to keep.
fn pack_with_a_warning(d: &Path) {
    flood_pack(d);
    let mut logs = std::fs::read_to_string(d.join("logs.jsonl")).unwrap();
    logs.push_str("not json at all\n");
    std::fs::write(d.join("logs.jsonl"), logs).unwrap();
}

#[test]
fn an_index_is_built_once_outside_the_pack_and_answers_like_a_full_read() {
    let (pack_dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (d, c) = (pack_dir.path(), cache.path());
    pack_with_a_warning(d);
    let before: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();

    let first = load(d, c);
    assert_eq!(first.log_index, IndexUse::Built);
    assert_eq!(index_files(c).len(), 1, "one index file, no temporary left");
    let second = load(d, c);
    assert_eq!(second.log_index, IndexUse::Loaded);
    let whole = full_read(d);
    assert_eq!(whole.log_index, IndexUse::NotIndexed);

    assert_eq!(second.logs.len(), whole.logs.len());
    assert_eq!(
        second.logs.read_all().unwrap(),
        whole.logs.read_all().unwrap()
    );
    assert_eq!(answers(&second), answers(&whole));
    assert_eq!(second.warnings, whole.warnings);
    assert!(
        second
            .warnings
            .iter()
            .any(|w| w.file == "logs.jsonl" && w.line.is_some())
    );
    assert_eq!(second.health, whole.health);
    assert_eq!(second.now(), whole.now());
    let after: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(before, after, "nothing is written into the pack");
}

#[test]
fn a_changed_file_is_read_again_whatever_changed() {
    let (pack_dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (d, c) = (pack_dir.path(), cache.path());
    flood_pack(d);
    let logs = d.join("logs.jsonl");
    load(d, c);
    assert_eq!(load(d, c).log_index, IndexUse::Loaded);

    // Appended.
    let mut text = std::fs::read_to_string(&logs).unwrap();
    text.push_str(
        r#"{"ts":"2026-03-01T10:00:00Z","service":"web","level":"ERROR","message":"appended"}"#,
    );
    text.push('\n');
    std::fs::write(&logs, &text).unwrap();
    let p = load(d, c);
    assert!(
        matches!(p.log_index, IndexUse::Rebuilt { .. }),
        "{:?}",
        p.log_index
    );
    assert_eq!(answers(&p), answers(&full_read(d)));

    // Rewritten to the same length with its modification time put back:
    // one level changed in the middle.
    let modified = std::fs::metadata(&logs).unwrap().modified().unwrap();
    assert_eq!(load(d, c).log_index, IndexUse::Loaded);
    let at = text.len() / 2 + text[text.len() / 2..].find(r#""level":"INFO""#).unwrap();
    let changed = format!("{}\"level\":\"WARN\"{}", &text[..at], &text[at + 14..]);
    assert_eq!(changed.len(), text.len());
    std::fs::write(&logs, &changed).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&logs)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    let p = load(d, c);
    assert!(
        matches!(p.log_index, IndexUse::Rebuilt { .. }),
        "{:?}",
        p.log_index
    );
    assert_eq!(answers(&p), answers(&full_read(d)));
    assert_eq!(load(d, c).log_index, IndexUse::Loaded);
}

#[test]
fn an_index_cut_short_corrupt_or_foreign_is_rebuilt_never_used() {
    let (pack_dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (d, c) = (pack_dir.path(), cache.path());
    pack_with_a_warning(d);
    load(d, c);
    let index = index_files(c).pop().unwrap();
    let good = std::fs::read(&index).unwrap();
    let want = answers(&full_read(d));
    let header = 32;
    let body = |bytes: &[u8]| bytes[header..].to_vec();
    // The body with a fresh checksum: only the structural checks stand
    // between it and a wrong answer.
    let with_crc = |mut bytes: Vec<u8>| {
        let crc = crc32fast::hash(&bytes[header..]);
        bytes[28..32].copy_from_slice(&crc.to_le_bytes());
        bytes
    };
    let last_entry = good.len() - 32;
    let mut out_of_range = good.clone();
    out_of_range[last_entry + 20..last_entry + 24].copy_from_slice(&u32::MAX.to_le_bytes());
    let mut past_the_file = good.clone();
    past_the_file[last_entry + 8..last_entry + 16].copy_from_slice(&u64::MAX.to_le_bytes());
    let mut out_of_order = good.clone();
    out_of_order[last_entry..last_entry + 8].copy_from_slice(&i64::MIN.to_le_bytes());
    let mut flipped = good.clone();
    flipped[good.len() / 2] ^= 0x40;
    let mut huge_count = good.clone();
    huge_count[header..header + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    let mut other_version = good.clone();
    other_version[16] ^= 1;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("header only", good[..header].to_vec()),
        ("cut short", good[..good.len() / 2].to_vec()),
        ("one byte short", good[..good.len() - 1].to_vec()),
        ("one byte long", [good.clone(), vec![0]].concat()),
        ("a flipped bit", flipped),
        ("garbage", body(&good).iter().rev().copied().collect()),
        ("another version", other_version),
        ("a huge count", with_crc(huge_count)),
        ("a service out of range", with_crc(out_of_range)),
        ("a record past the file", with_crc(past_the_file)),
        ("records out of order", with_crc(out_of_order)),
    ];
    for (what, bytes) in cases {
        std::fs::write(&index, &bytes).unwrap();
        let p = load(d, c);
        assert!(
            matches!(p.log_index, IndexUse::Rebuilt { saved: true, .. }),
            "{what}: {:?}",
            p.log_index
        );
        assert_eq!(answers(&p), want, "{what}");
        assert_eq!(
            std::fs::read(&index).unwrap(),
            good,
            "{what}: rewritten whole"
        );
    }
    // Another file's index under this file's name.
    let other_dir = tempfile::tempdir().unwrap();
    flood_pack(other_dir.path());
    let other_cache = tempfile::tempdir().unwrap();
    load(other_dir.path(), other_cache.path());
    let other = index_files(other_cache.path()).pop().unwrap();
    std::fs::copy(other, &index).unwrap();
    let p = load(d, c);
    assert!(
        matches!(p.log_index, IndexUse::Rebuilt { .. }),
        "{:?}",
        p.log_index
    );
    assert_eq!(answers(&p), want);
}

#[test]
fn processes_building_the_same_index_at_once_leave_a_whole_one() {
    let (pack_dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (d, c) = (pack_dir.path().to_path_buf(), cache.path().to_path_buf());
    flood_pack(&d);
    let want = answers(&full_read(&d));
    let built: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4).map(|_| s.spawn(|| answers(&load(&d, &c)))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(built.iter().all(|a| *a == want));
    assert_eq!(index_files(&c).len(), 1, "{:?}", index_files(&c));
    let p = load(&d, &c);
    assert_eq!(p.log_index, IndexUse::Loaded);
    assert_eq!(answers(&p), want);
}

#[test]
fn a_file_changed_just_now_or_a_small_one_is_not_indexed() {
    let (pack_dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (d, c) = (pack_dir.path(), cache.path());
    flood_pack(d);
    let recent = IndexPolicy {
        settle: Duration::from_secs(3600),
        ..policy(c)
    };
    let p = Pack::load_with(d, &recent, &mut |_, _| {}).unwrap();
    assert!(
        matches!(p.log_index, IndexUse::BuiltUnsaved(_)),
        "{:?}",
        p.log_index
    );
    let small = IndexPolicy {
        min_bytes: u64::MAX,
        ..policy(c)
    };
    let p = Pack::load_with(d, &small, &mut |_, _| {}).unwrap();
    assert_eq!(p.log_index, IndexUse::NotIndexed);
    assert!(index_files(c).is_empty());
}

const WORDS: &[&str] = &[
    "container01",
    "30000ms",
    "ms",
    "container",
    "padding",
    "timeout",
    "Timeout",
    "pool",
    "rm",
    "ERROR",
    "café",
    "Σ",
    "ΣΑΣ",
    "K",
    "\\\"",
    "x1",
    "42",
    "-7",
    "deadbeefcafe00",
    "3fa85f64-5717-4562-b3fc-2c963f66afa6",
    "0x1f3a",
    "ab12cd34ef56",
    "bad",
    "cafe",
    "fade",
    "a-b",
    "*",
    "conn.",
    "日志",
    "\u{212A}elvin",
    "İx",
    "kelvin",
];

/// Service, level, minute, message words, an extra key's words, and
/// whether the message is long (its pattern cut short).
type Line = (u8, u8, u8, Vec<usize>, Option<Vec<usize>>, bool);

fn line() -> impl Strategy<Value = Line> {
    (
        0u8..3,
        0u8..4,
        0u8..60,
        prop::collection::vec(0..WORDS.len(), 0..6),
        prop::option::of(prop::collection::vec(0..WORDS.len(), 1..3)),
        prop::bool::weighted(0.1),
    )
}

/// Service, level, keyword words and a window (minutes), each optional.
type Query = (Option<u8>, Option<u8>, Vec<usize>, Option<(u8, u8)>);

fn query() -> impl Strategy<Value = Query> {
    // Service 3 and level 4 are in no line: the table's dictionary
    // answers them.
    (
        prop::option::of(0u8..4),
        prop::option::of(0u8..5),
        prop::collection::vec(0..WORDS.len(), 0..3),
        prop::option::of((0u8..60, 0u8..60)),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// On generated packs, the indexed table answers every query exactly
    /// as a full read does and as a check of every line does: counts,
    /// first and last times, sample.
    #[test]
    fn the_index_gives_the_answers_of_a_full_scan(
        lines in prop::collection::vec(line(), 1..120),
        queries in prop::collection::vec(query(), 1..8),
    ) {
        let (pack_dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (d, c) = (pack_dir.path(), cache.path());
        std::fs::write(d.join("pack.toml"), "name = \"p\"\n").unwrap();
        std::fs::write(d.join("alerts.json"), "[]").unwrap();
        let services = ["api", "db", "Web"];
        let levels = ["ERROR", "warning", "INFO", "err"];
        let mut text = String::new();
        for (s, l, minute, words, extra, long) in &lines {
            let mut message: Vec<&str> = words.iter().map(|w| WORDS[*w]).collect();
            if *long {
                message = [vec!["padding"; 40], message].concat();
            }
            let mut v = json!({"ts": format!("2026-01-01T00:{minute:02}:00Z"), "service": services[*s as usize],
                "level": levels[*l as usize], "message": message.join(" ")});
            if let Some(extra) = extra {
                let words: Vec<&str> = extra.iter().map(|w| WORDS[*w]).collect();
                v["trace"] = json!(words.join("-"));
            }
            text.push_str(&v.to_string());
            text.push('\n');
        }
        std::fs::write(d.join("logs.jsonl"), &text).unwrap();
        load(d, c);
        let indexed = load(d, c);
        prop_assert_eq!(&indexed.log_index, &IndexUse::Loaded);
        let whole = full_read(d);
        let every: Vec<LogLine> = whole.logs.read_all().unwrap();
        for (s, l, words, window) in queries {
            let mut args = Map::new();
            let asked_services = ["api", "db", "Web", "ghost-service"];
            let asked_levels = ["ERROR", "warning", "INFO", "err", "FATAL"];
            if let Some(s) = s { args.insert("service".into(), json!(asked_services[s as usize])); }
            if let Some(l) = l { args.insert("level".into(), json!(asked_levels[l as usize])); }
            if !words.is_empty() {
                let k: Vec<&str> = words.iter().map(|w| WORDS[*w]).collect();
                args.insert("keyword".into(), json!(k.join(" ")));
            }
            if let Some((a, b)) = window {
                let (a, b) = (a.min(b), a.max(b));
                args.insert("since".into(), json!(format!("2026-01-01T00:{a:02}:00Z")));
                args.insert("until".into(), json!(format!("2026-01-01T00:{b:02}:00Z")));
            }
            let q = LogQuery::parse(&args, whole.now()).unwrap();
            let a = indexed.logs.query(&q).unwrap();
            let b = whole.logs.query(&q).unwrap();
            let matching: Vec<&LogLine> = every.iter().filter(|l| q.matches(l)).collect();
            prop_assert_eq!(a.sample.total, matching.len() as u64, "{:?}", args);
            prop_assert_eq!(a.sample.first, matching.iter().map(|l| l.ts_micros()).min());
            prop_assert_eq!(a.sample.last, matching.iter().map(|l| l.ts_micros()).max());
            prop_assert_eq!(&a.sample, &b.sample);
            prop_assert_eq!(&a.lines, &b.lines);
        }
    }
}

/// Routine messages that each carry their own hex and UUID ids keep their
/// pattern's words: a keyword no record holds is decided from the index
/// alone (the file is gone by the time the query runs), while a word of
/// the letters a-f, which an id may hold, is still looked for in the
/// records.
#[test]
fn hex_ids_in_every_message_do_not_stop_the_index_deciding_words() {
    let (pack_dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (d, c) = (pack_dir.path(), cache.path());
    std::fs::write(d.join("pack.toml"), "name = \"p\"\n").unwrap();
    std::fs::write(d.join("alerts.json"), "[]").unwrap();
    let mut text = String::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..400 {
        // A different id per line, from a fixed sequence.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let v = json!({
            "ts": format!("2026-01-01T00:{:02}:{:02}Z", i / 60 % 60, i % 60),
            "service": "api", "level": "INFO",
            "message": format!("request {:016x}-{:04x}-4562-b3fc-{:012x} served by worker {:x} in {}ms",
                x, x >> 48, x >> 16, x >> 8, i % 97),
        });
        text.push_str(&v.to_string());
        text.push('\n');
    }
    std::fs::write(d.join("logs.jsonl"), &text).unwrap();
    load(d, c);
    let indexed = load(d, c);
    assert_eq!(indexed.log_index, IndexUse::Loaded);
    // The records cannot be read back any more: what is answered is
    // answered from the index.
    std::fs::write(d.join("logs.jsonl"), "").unwrap();
    let ask = |keyword: &str| {
        let mut args = Map::new();
        args.insert("keyword".into(), json!(keyword));
        indexed
            .logs
            .query(&LogQuery::parse(&args, indexed.now()).unwrap())
    };
    for absent in ["timeout", "refused", "Timeout"] {
        let found = ask(absent).unwrap_or_else(|e| panic!("{absent}: {e}"));
        assert_eq!(found.sample.total, 0, "{absent}");
    }
    // `bad` may be in an id: only the records can tell.
    assert!(
        ask("bad").is_err(),
        "a word of a-f letters was decided without the records"
    );
}

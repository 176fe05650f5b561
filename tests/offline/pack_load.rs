//! Loading packs: the shipped shop pack, and malformed user packs that must
//! still load what is usable while warnings name the file and line.

use crate::helpers::shop_pack_dir;
use diagraph::tools::pack::{Pack, PackError};
use std::path::Path;

#[test]
fn shop_pack_loads_cleanly() {
    let pack = Pack::load(&shop_pack_dir()).unwrap();
    assert!(pack.warnings.is_empty(), "{:?}", pack.warnings);
    assert_eq!(pack.manifest.name, "shop");
    for s in [
        "api-gateway",
        "order-service",
        "payment-service",
        "inventory-service",
        "user-service",
    ] {
        assert!(pack.manifest.services.iter().any(|x| x == s), "{s}");
    }
    assert_eq!(pack.now().to_rfc3339(), "2026-07-08T23:12:00+00:00");
    assert!(pack.alerts.len() >= 4);
    for state in ["firing", "pending", "resolved"] {
        assert!(pack.alerts.iter().any(|a| a.state == state), "{state}");
    }
    let logs = pack.logs.read_all().unwrap();
    assert_eq!(logs.len(), pack.logs.len());
    assert!(
        logs.windows(2).all(|w| w[0].ts <= w[1].ts),
        "logs are sorted"
    );
    assert!(!logs.iter().any(|l| l.service == "inventory-service"));
    assert!(pack.documents.len() >= 6);
    let domains: Vec<&str> = pack.domains.iter().map(|d| d.domain.as_str()).collect();
    assert!(domains.len() >= 3, "{domains:?}");
    assert!(pack.domains.iter().all(|d| !d.when_to_retrieve.is_empty()));
    let db = pack
        .domains
        .iter()
        .find(|d| d.domain == "database")
        .unwrap();
    assert!(db.description.contains("HikariCP"), "from _domain.md");
    assert_eq!(db.document_count, 2);
    assert!(pack.documents.iter().all(|d| d.hash.len() == 64));
    assert!(pack.documents.iter().any(|d| d.body.contains("存活探针")));
    let catalog = pack.skill_catalog();
    assert!(catalog.len() >= 2);
    assert!(catalog.iter().all(|s| !s.description.is_empty()));
    assert!(
        pack.index.len() > pack.documents.len(),
        "documents are chunked by section"
    );
}

#[test]
fn missing_dir_or_manifest_is_a_one_line_error() {
    let err = Pack::load(Path::new("/nonexistent/pack")).err().unwrap();
    assert!(matches!(err, PackError::Unreadable { .. }));
    let dir = tempfile::tempdir().unwrap();
    let msg = Pack::load(dir.path()).err().unwrap().to_string();
    assert!(msg.contains("pack.toml") && !msg.contains('\n'), "{msg}");
    std::fs::write(dir.path().join("pack.toml"), "name = [unclosed").unwrap();
    let msg = Pack::load(dir.path()).err().unwrap().to_string();
    assert!(msg.contains("pack.toml") && !msg.contains('\n'), "{msg}");
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn has_warning(pack: &Pack, file: &str, line: Option<usize>) -> bool {
    pack.warnings
        .iter()
        .any(|w| w.file == file && w.line == line)
}

#[test]
fn malformed_inputs_warn_with_file_and_line_and_keep_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "pack.toml",
        "name = \"bad\"\nservices = [\"a\"]\nnow = \"yesterday\"\n",
    );
    write(
        d,
        "alerts.json",
        r#"[
  {"labels": {"alertname": "Ok", "service": "a"}, "state": "firing", "value": "1"},
  {"labels": {"service": "a"}, "state": "firing"},
  {"labels": {"alertname": "BadState"}, "state": "exploding"},
  {"labels": {"alertname": "Resolved", "job": "b"}, "state": "resolved", "activeAt": "2026-01-01T00:00:00Z"}
]"#,
    );
    let long = "x".repeat(70 * 1024);
    write(
        d,
        "logs.jsonl",
        &format!(
            "{{\"ts\":\"2026-01-01T00:00:00Z\",\"service\":\"a\",\"level\":\"error\",\"message\":\"boom\"}}\nnot json at all\n\n{{\"ts\":\"2026-01-01T00:01:00Z\",\"service\":\"a\",\"level\":\"INFO\"}}\n{{\"ts\":\"nope\",\"service\":\"a\",\"level\":\"INFO\",\"message\":\"m\"}}\n{{\"ts\":\"2026-01-01T00:02:00Z\",\"service\":\"a\",\"level\":\"INFO\",\"message\":\"{long}\"}}\n{{\"timestamp\":\"2026-01-01 00:03:00\",\"app\":\"a\",\"severity\":\"warning\",\"msg\":\"aliases\"}}\n"
        ),
    );
    write(
        d,
        "knowledge/db/a.md",
        "---\ntitle: A\nnot a key value line\n---\n# A\n## Section\ntext about pools\n",
    );
    write(
        d,
        "knowledge/db/b.md",
        "---\ntitle: B never closed\n# B\ntext\n",
    );
    write(d, "skills/s1/SKILL.md", "---\nname: s1\n---\nDo things.\n");
    std::fs::create_dir_all(d.join("skills/s2")).unwrap();

    let pack = Pack::load(d).unwrap();
    let w = |f, l| has_warning(&pack, f, l);
    assert!(w("pack.toml", None), "bad now: {:?}", pack.warnings);
    assert!(
        w("alerts.json", Some(3)),
        "no alertname: {:?}",
        pack.warnings
    );
    assert!(w("alerts.json", Some(4)), "bad state: {:?}", pack.warnings);
    assert_eq!(pack.alerts.len(), 2);
    assert!(w("logs.jsonl", Some(2)), "not json");
    assert!(w("logs.jsonl", Some(4)), "no message");
    assert!(w("logs.jsonl", Some(5)), "bad ts");
    assert!(w("logs.jsonl", Some(6)), "too long");
    assert!(!w("logs.jsonl", Some(3)), "blank lines are fine");
    assert_eq!(pack.logs.len(), 2);
    let logs = pack.logs.read_all().unwrap();
    assert_eq!(logs[1].level, "WARNING");
    assert_eq!(logs[1].service, "a");
    assert!(w("knowledge/db/a.md", Some(3)), "{:?}", pack.warnings);
    assert!(w("knowledge/db/b.md", Some(1)));
    assert_eq!(pack.documents.len(), 2, "both documents still load");
    assert!(w("skills/s1/SKILL.md", Some(1)), "no description");
    assert!(w("skills/s2/SKILL.md", None), "missing SKILL.md");
    assert_eq!(pack.skills.len(), 1);
    for warning in &pack.warnings {
        assert!(!warning.to_string().contains('\n'));
    }
}

#[test]
fn alerts_json_accepts_three_shapes_and_reports_syntax_line() {
    for text in [
        r#"[{"labels":{"alertname":"X"},"state":"firing"}]"#,
        r#"{"alerts":[{"labels":{"alertname":"X"},"state":"firing"}]}"#,
        r#"{"status":"success","data":{"alerts":[{"labels":{"alertname":"X"},"state":"firing"}]}}"#,
    ] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "pack.toml", "name = \"x\"");
        write(dir.path(), "alerts.json", text);
        let pack = Pack::load(dir.path()).unwrap();
        assert_eq!(pack.alerts.len(), 1, "{text}");
    }
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "pack.toml", "name = \"x\"");
    write(dir.path(), "alerts.json", "[\n{\"labels\": {},\n,}\n]");
    let pack = Pack::load(dir.path()).unwrap();
    assert!(pack.alerts.is_empty());
    assert!(
        pack.warnings
            .iter()
            .any(|w| w.file == "alerts.json" && w.line == Some(3)),
        "{:?}",
        pack.warnings
    );
    // A pack with only a manifest loads, with warnings for what is missing.
    assert!(pack.warnings.iter().any(|w| w.file == "logs.jsonl"));
}

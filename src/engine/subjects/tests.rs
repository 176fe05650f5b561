use super::*;
use crate::vocab::tool::{EvidenceRef, EvidenceStatus, RetrievalDetails, ToolInvocation};
use serde_json::json;

fn held() -> HeldNames {
    HeldNames {
        services: vec![
            "sshd".into(),
            "blob-datanode".into(),
            "payment-service".into(),
            "web-frontend".into(),
            "kernel".into(),
        ],
        alerts: vec!["HighErrorRate".into()],
        labels: vec!["node-17.example".into()],
        aliases: vec![("storefront".into(), vec!["web-frontend".into()])],
    }
}

fn subjects(services: &[&str], hosts: &[&str], keywords: &[&str]) -> Subjects {
    Subjects {
        services: services.iter().map(|s| s.to_string()).collect(),
        hosts: hosts.iter().map(|s| s.to_string()).collect(),
        keywords: keywords.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn resolved(asked: &str) -> Vec<String> {
    resolve(&subjects(&[asked], &[], &[]), &held())[0]
        .names
        .clone()
}

#[test]
fn names_resolve_across_case_punctuation_daemons_suites_aliases_and_chinese() {
    assert_eq!(resolved("Payment_Service"), vec!["payment-service"]);
    assert_eq!(resolved("payment"), vec!["payment-service"]);
    assert_eq!(resolved("ssh"), vec!["sshd"], "a protocol finds its daemon");
    assert_eq!(
        resolved("OpenSSH"),
        vec!["sshd"],
        "a suite finds its program"
    );
    assert_eq!(resolved("datanode"), vec!["blob-datanode"]);
    assert_eq!(resolved("storefront"), vec!["web-frontend"], "an alias");
    assert_eq!(
        resolved("支付服务"),
        vec!["payment-service"],
        "a Chinese name"
    );
    assert!(resolved("billing-db").is_empty());
    assert!(resolved("db").is_empty(), "too short to rest on a part");
}

#[test]
fn a_plain_word_of_the_question_is_never_a_subject() {
    let found = from_question("why is the kernel of storefront slow today?", &held());
    let asked: Vec<&str> = found.iter().map(|s| s.asked.as_str()).collect();
    assert_eq!(asked, vec!["kernel", "storefront"]);
    assert!(from_question("why is the checkout slow?", &held()).is_empty());
    let mut with_zh = held();
    with_zh
        .aliases
        .push(("收银台".into(), vec!["payment-service".into()]));
    let found = from_question("收银台为什么慢？", &with_zh);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].names, vec!["payment-service"]);
}

fn invocation(id: i64, args: serde_json::Value, refs: &[&str]) -> Arc<ToolInvocation> {
    let mut inv = ToolInvocation::placeholder(1, id as u32);
    inv.id = id;
    inv.input_params = args;
    inv.retrieval_details = RetrievalDetails {
        evidence_refs: refs
            .iter()
            .enumerate()
            .map(|(i, t)| EvidenceRef {
                raw_path: format!("$.logs[{i}]"),
                text: t.to_string(),
            })
            .collect(),
        ..RetrievalDetails::of(EvidenceStatus::Supported)
    };
    Arc::new(inv)
}

fn ev(claim: &str, inv: i64, path: &str, text: &str) -> VerifiedEvidence {
    VerifiedEvidence {
        claim_id: claim.into(),
        source_invocation_id: inv,
        tool_name: "query_logs".into(),
        raw_path: path.into(),
        matched_text: text.into(),
    }
}

#[test]
fn a_claim_is_about_a_subject_by_record_fields_filter_or_message() {
    let invs = vec![
        invocation(
            1,
            json!({"level": "ERROR"}),
            &[
                "2026-01-01T00:00:00Z ERROR payment-service pool exhausted",
                "2026-01-01T00:00:01Z ERROR kernel disk full",
            ],
        ),
        invocation(
            2,
            json!({"keyword": "node-17.example"}),
            &["2026-01-01T00:00:02Z INFO sshd accepted"],
        ),
    ];
    let subs = resolve(
        &subjects(&["payment"], &["node-17.example"], &["Failed password"]),
        &held(),
    );
    let e1 = [ev("c1", 1, "$.logs[0]", "pool exhausted")];
    let e2 = [ev("c2", 1, "$.logs[1]", "disk full")];
    let e3 = [ev("c3", 2, "$.logs[0]", "accepted")];
    let focus = Focus::new(
        subs,
        [
            ("c1", false, &e1[..]),
            ("c2", false, &e2[..]),
            ("c3", false, &e3[..]),
        ]
        .into_iter(),
        &invs,
    );
    assert!(focus.is_about("c1"), "the record's service field");
    assert!(!focus.is_about("c2"), "another service's line");
    assert!(focus.is_about("c3"), "the query filtered on the host");
    assert_eq!(focus.found, vec![true, true, false]);
    assert!(focus.answered());
    let lines = focus.status_lines(Lang::En).join("\n");
    assert!(
        lines.contains("No verified evidence about Failed password"),
        "{lines}"
    );
}

#[test]
fn a_subject_nothing_holds_is_said_so_and_leaves_the_question_unanswered() {
    let invs = [invocation(
        1,
        json!({"level": "ERROR"}),
        &["2026-01-01T00:00:00Z ERROR kernel disk full"],
    )];
    let subs = resolve(&subjects(&["billing-db"], &[], &[]), &held());
    let e = [ev("c1", 1, "$.logs[0]", "disk full")];
    // a no-evidence claim about a name nothing holds is not an answer
    let neg = invocation(2, json!({"service": "billing-db"}), &[]);
    let en = [ev("c2", 2, "$.no_evidence", "no matching logs")];
    let focus = Focus::new(
        subs,
        [("c1", false, &e[..]), ("c2", true, &en[..])].into_iter(),
        &[invs[0].clone(), neg],
    );
    assert!(!focus.answered());
    assert!(!focus.is_about("c1") && !focus.is_about("c2"));
    let lines = focus.status_lines(Lang::En);
    assert_eq!(
        lines,
        vec![
            "No evidence about billing-db: no source holds that name.".to_string(),
            "The question is not answered: no verified finding is about billing-db.".to_string()
        ]
    );
    assert!(focus.status_lines(Lang::Zh)[0].contains("billing-db"));
}

#[test]
fn without_subjects_every_claim_is_about_the_question() {
    let focus = Focus::default();
    assert!(focus.answered() && focus.is_about("anything") && !focus.applies());
}

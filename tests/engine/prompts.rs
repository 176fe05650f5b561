//! The shipped prompts an LLM provider receives: each states its input DTO
//! placeholder and carries JSON examples that parse with its role's
//! contract parser and use only the contract's field names.

use diagraph::engine::prompts::Prompts;
use diagraph::model::Message;
use diagraph::vocab::agent::AgentRole;
use diagraph::vocab::contracts::{
    find_overstatement, parse_composer_output, parse_executor_evidence, parse_planner_plan,
    parse_verifier_output,
};
use diagraph::vocab::dto::{AgentInput, ExecutorInput};
use serde::Serialize;
use serde_json::Value;

fn json_blocks(text: &str) -> Vec<String> {
    let mut out = vec![];
    let mut rest = text;
    while let Some(start) = rest.find("```json\n") {
        let after = &rest[start + 8..];
        let end = after.find("```").expect("unclosed json fence");
        out.push(after[..end].to_string());
        rest = &after[end + 3..];
    }
    out
}

/// Every key of `example` exists in `typed` (the parsed contract serialized
/// back), recursively: a misspelled field in a prompt would teach the model
/// a field the parser ignores.
fn keys_within(example: &Value, typed: &Value, path: &str) {
    match (example, typed) {
        (Value::Object(e), Value::Object(t)) => {
            for (k, v) in e {
                let Some(tv) = t.get(k) else {
                    panic!("{path}.{k} is not a contract field");
                };
                keys_within(v, tv, &format!("{path}.{k}"));
            }
        }
        (Value::Array(e), Value::Array(t)) => {
            assert_eq!(e.len(), t.len(), "{path}");
            for (i, (ev, tv)) in e.iter().zip(t).enumerate() {
                keys_within(ev, tv, &format!("{path}[{i}]"));
            }
        }
        _ => {}
    }
}

fn check_examples<T: Serialize, E: std::fmt::Debug>(
    role: AgentRole,
    parse: impl Fn(&str) -> Result<T, E>,
) -> Vec<(Value, T)> {
    let prompts = Prompts::shipped();
    let text = &prompts.get(role).text;
    assert!(
        text.contains("{{input}}"),
        "{role} prompt lacks the input placeholder"
    );
    let blocks = json_blocks(text);
    assert!(!blocks.is_empty(), "{role} prompt has no JSON example");
    blocks
        .iter()
        .map(|b| {
            let parsed =
                parse(b).unwrap_or_else(|e| panic!("{role} example does not parse: {e:?}"));
            let example: Value = serde_json::from_str(b).unwrap();
            keys_within(
                &example,
                &serde_json::to_value(&parsed).unwrap(),
                role.as_str(),
            );
            (example, parsed)
        })
        .collect()
}

#[test]
fn planner_example_matches_the_contract() {
    for (_, plan) in check_examples(AgentRole::Planner, parse_planner_plan) {
        assert!(!plan.queries.is_empty(), "the example must show queries");
        assert!(plan.queries.iter().all(|q| !q.arguments.is_empty()));
    }
}

#[test]
fn executor_example_matches_the_contract_and_cites_precisely() {
    let item = regex::Regex::new(r"^\$\.(alerts|logs|evidence_blocks)\[\d+\]$").unwrap();
    for (example, out) in check_examples(AgentRole::Executor, parse_executor_evidence) {
        assert_eq!(out.answer_version, "executor_evidence_v2");
        assert!(example.get("diagnosis_summary").is_none());
        assert!(example.get("user_facing_answer").is_none());
        assert!(!out.claims.is_empty());
        for c in &out.claims {
            assert!(!c.evidence_bindings.is_empty());
            for b in &c.evidence_bindings {
                assert!(b.source_invocation_id.is_some());
                assert!(!b.evidence_excerpt.is_empty());
                let path = b.raw_path.as_deref().unwrap();

                assert!(item.is_match(path) || path == "$.no_evidence", "{path}");
                if c.is_negative() {
                    assert_eq!(path, "$.no_evidence");
                }
            }
        }
    }
}

#[test]
fn verifier_example_matches_the_contract() {
    for (example, out) in check_examples(AgentRole::Verifier, parse_verifier_output) {
        assert!(out.facts_checked.iter().all(|f| f.claim_id.is_some()));
        assert_eq!(
            example["critical_fact_count"].as_u64(),
            Some(out.critical_fact_count as u64)
        );
    }
}

#[test]
fn composer_example_matches_the_contract_and_does_not_overstate() {
    for (example, out) in check_examples(AgentRole::Composer, parse_composer_output) {
        assert_eq!(find_overstatement(&out), None);
        // the contract code assembles from: statements naming their claims
        assert!(example.get("user_facing_answer").is_none());
        assert!(!out.statements.is_empty());
        assert!(out.statements.iter().all(|s| !s.claim_ids.is_empty()));
    }
}

#[test]
fn prompts_state_their_boundaries() {
    let p = Prompts::shipped();
    let executor = &p.get(AgentRole::Executor).text;
    for needle in [
        "source_invocation_id",
        "raw_path",
        "evidence_excerpt",
        "$.no_evidence",
    ] {
        assert!(executor.contains(needle), "executor prompt lacks {needle}");
    }
    let verifier = &p.get(AgentRole::Verifier).text;
    assert!(verifier.contains("verified_evidence"));
    assert!(verifier.contains("verdict_ceiling"));
    let composer = &p.get(AgentRole::Composer).text;
    assert!(composer.contains("is_negative"));
    assert!(composer.contains("found nothing"));
}

#[test]
fn rendering_fills_the_dto_and_versions_are_content_hashes() {
    let p = Prompts::shipped();
    let input = AgentInput::from(ExecutorInput {
        question: "why is payment-service slow?".into(),
        ..Default::default()
    });
    let msgs = p.render(&input);
    let Message::System { content } = &msgs[0] else {
        panic!("first message is not the system prompt");
    };
    // The DTO is sent once, in the user message; the system prompt points
    // at it.
    assert!(!content.contains("why is payment-service slow?"));
    assert!(!content.contains("{{input}}"));
    assert!(content.contains(diagraph::engine::prompts::INPUT_POINTER));
    let Message::User { content: user } = &msgs[1] else {
        panic!("second message is not the user turn");
    };
    assert_eq!(user, &input.to_json());
    let sent: usize = msgs
        .iter()
        .map(|m| match m {
            Message::System { content } | Message::User { content } => {
                content.matches("why is payment-service slow?").count()
            }
            _ => 0,
        })
        .sum();
    assert_eq!(sent, 1, "the question is sent exactly once");

    let versions = p.versions();
    for role in AgentRole::ALL {
        let v = &versions[role.as_str()];
        assert!(v.starts_with("sha256:") && v.len() == 23, "{v}");
    }

    // --prompts DIR: a changed prompt has a different version.
    let dir = tempfile::tempdir().unwrap();
    for role in AgentRole::ALL {
        let mut text = p.get(role).text.clone();
        if role == AgentRole::Composer {
            text.push_str("\nBe brief.\n");
        }
        std::fs::write(dir.path().join(format!("{}.md", role.as_str())), text).unwrap();
    }
    let custom = Prompts::from_dir(dir.path()).unwrap();
    assert_eq!(custom.versions()["planner"], versions["planner"]);
    assert_ne!(custom.versions()["composer"], versions["composer"]);
}

#[test]
fn the_composer_prompt_shows_the_connective_vocabulary() {
    let p = Prompts::shipped();
    let text = &p.get(AgentRole::Composer).text;
    assert!(!text.contains("{{connectives}}"), "{text}");
    for w in ["the", "reports", "显示", "约", "not"] {
        assert!(
            text.contains(&format!(" {w},"))
                || text.contains(&format!("、{w}"))
                || text.contains(&format!(": {w},")),
            "{w} is not shown: {text}"
        );
    }
    // a cause or sequence link is not a connective
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("English:"))
        .unwrap();
    for w in [" because,", " then,", " so,"] {
        assert!(!line.contains(w), "{line}");
    }
}

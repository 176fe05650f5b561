//! Claims carrying unique marker words must never reach the user through a
//! pre-verification fallback (executor invalid, tool blocked, gatekeeper
//! reject with some passing bindings, zero verified bindings, verifier
//! failure), nor through the post-verifier template when the Verifier did
//! not allow them. The marker may stay in the audit (self_evaluation),
//! never in the answer, the RunFinished event or the run row.

use crate::helpers::load_scenario;
use crate::runs::scenario_engine;
use diagraph::model::ModelErrorKind;
use diagraph::model::scripted::ScriptEntry;
use diagraph::scenario::Scenario;
use diagraph::vocab::agent::AgentRole;
use diagraph::vocab::events::EventKind;
use diagraph::vocab::graph::NodeId;
use diagraph::vocab::run::RunEnd;
use serde_json::json;

const MARKER: &str = "zebracorn-17";
const EXCERPT: &str =
    "alertname=HighCPUUsage service=payment-service severity=critical state=firing value=92";

fn binding(inv: &str) -> serde_json::Value {
    json!({"tool_name": "query_metrics", "source_invocation_id": inv, "raw_path": "$.alerts[0]",
           "evidence_excerpt": EXCERPT})
}

/// executor_evidence_v2 text; `INV` in an id becomes the placeholder.
fn evidence(claims: Vec<(&str, String, Vec<serde_json::Value>)>) -> String {
    evidence_with(claims, MARKER)
}

/// `extra` goes into hypotheses, actions and missing info.
fn evidence_with(claims: Vec<(&str, String, Vec<serde_json::Value>)>, extra: &str) -> String {
    let claims: Vec<_> = claims
        .into_iter()
        .map(|(id, text, b)| {
            json!({"claim_id": id, "claim_type": "observation", "claim_text": text,
                   "support_level": "direct", "evidence_bindings": b})
        })
        .collect();
    json!({"answer_version": "executor_evidence_v2", "claims": claims,
           "hypotheses": [{"hypothesis_text": format!("{extra} hypothesis"), "basis": extra}],
           "recommended_actions": [{"action_text": format!("restart {extra}"), "reason": extra}],
           "missing_info": [format!("{extra} missing")]})
    .to_string()
    .replace("\"INV1\"", "{{invocation:1}}")
    .replace("\"FAKE\"", "424242")
}

fn marked_claim() -> String {
    format!("payment-service has a critical HighCPUUsage alert at 92% because of {MARKER}")
}

/// The pass scenario with its executor answer (and the rest) replaced.
fn with_executor(text: String, tail: Vec<ScriptEntry>) -> Scenario {
    let mut s = load_scenario("01_pass.toml");
    s.script.truncate(2);
    s.script.push(ScriptEntry::text(AgentRole::Executor, text));
    s.script.extend(tail);
    s
}

async fn assert_marker_hidden(name: &str, s: Scenario, want_reason: &str) {
    let (engine, recorder) = scenario_engine(&s);
    let out = engine.run(s.request()).await.unwrap();
    assert_eq!(
        out.end.trace.termination_reason.map(|r| r.as_str()),
        Some(want_reason),
        "{name}"
    );
    assert_eq!(out.end.trace.final_node, Some(NodeId::Fallback), "{name}");
    assert!(
        !out.end.answer.contains(MARKER),
        "{name}: {}",
        out.end.answer
    );
    assert!(
        !out.end.answer.contains("HighCPUUsage"),
        "{name}: {}",
        out.end.answer
    );
    for e in &out.events {
        if let EventKind::RunFinished(RunEnd { answer, .. }) = &e.kind {
            assert!(!answer.contains(MARKER), "{name}");
        }
    }
    let data = recorder.snapshot();
    let finish = data.runs[0].2.as_ref().unwrap();
    assert!(!finish.end.answer.contains(MARKER), "{name}");
}

#[tokio::test]
async fn executor_invalid_output_never_shows_its_claims() {
    // Prose, a forbidden field, and claims that are not an array.
    let forbidden = evidence(vec![("claim-1", marked_claim(), vec![binding("INV1")])]).replacen(
        '{',
        &format!("{{\"user_facing_answer\": \"{MARKER} is the root cause\", "),
        1,
    );
    for text in [
        format!("The root cause is {MARKER}."),
        forbidden,
        format!("{{\"answer_version\": \"executor_evidence_v2\", \"claims\": \"{MARKER}\"}}"),
    ] {
        assert_marker_hidden(
            "executor invalid",
            with_executor(text, vec![]),
            "executor_invalid_output",
        )
        .await;
    }
}

#[tokio::test]
async fn tool_blocked_never_shows_the_executor_text() {
    let mut s = with_executor(format!("Blocked, but {MARKER} is the cause."), vec![]);
    s.tool_permissions = Some(vec!["query_logs".into()]);
    assert_marker_hidden("tool blocked", s, "executor_tool_blocked").await;
}

#[tokio::test]
async fn gatekeeper_reject_with_some_passing_bindings_shows_no_claim() {
    let text = evidence(vec![
        ("claim-1", marked_claim(), vec![binding("INV1")]),
        (
            "claim-2",
            format!("{MARKER} exhausted the pool"),
            vec![binding("FAKE")],
        ),
    ]);
    assert_marker_hidden(
        "gatekeeper reject",
        with_executor(text, vec![]),
        "gatekeeper_reject",
    )
    .await;
}

#[tokio::test]
async fn zero_verified_bindings_shows_no_claim() {
    let text = evidence(vec![("claim-1", marked_claim(), vec![])]);
    assert_marker_hidden(
        "zero verified",
        with_executor(text, vec![]),
        "gatekeeper_no_verified_binding",
    )
    .await;
}

#[tokio::test]
async fn verifier_failure_shows_no_claim_even_when_bindings_passed() {
    let text = evidence(vec![("claim-1", marked_claim(), vec![binding("INV1")])]);
    let non_retryable = vec![ScriptEntry::error(
        AgentRole::Verifier,
        ModelErrorKind::BadRequest,
    )];
    assert_marker_hidden(
        "verifier 400",
        with_executor(text.clone(), non_retryable),
        "verifier_failed",
    )
    .await;
    let twice = vec![
        ScriptEntry::text(AgentRole::Verifier, format!("PASS: {MARKER} confirmed")),
        ScriptEntry::error(AgentRole::Verifier, ModelErrorKind::Timeout),
    ];
    assert_marker_hidden(
        "verifier twice",
        with_executor(text, twice),
        "verifier_failed",
    )
    .await;
}

#[tokio::test]
async fn post_verifier_template_shows_only_allowed_claims() {
    // claim-1 is allowed; claim-2 (the marker) is contradicted. The
    // Composer fails twice, so the template answers from allowed material.
    // (Executor missing_info and actions are allowed material by design.)
    let text = evidence_with(
        vec![
            (
                "claim-1",
                "payment-service has a critical HighCPUUsage alert firing at 92%".into(),
                vec![binding("INV1")],
            ),
            ("claim-2", marked_claim(), vec![binding("INV1")]),
        ],
        "payment-service",
    );
    let verifier = json!({"verdict": "LOW_CONFID", "groundedness_score": 0.5, "facts_checked": [
        {"claim_id": "claim-1", "fact": "HighCPUUsage firing", "is_critical": true, "verification": "direct_evidence", "detail": "ok"},
        {"claim_id": "claim-2", "fact": "the cause", "is_critical": false, "verification": "contradicted", "detail": "no"}
    ], "rationale": "only the alert is supported"})
    .to_string();
    let s = with_executor(
        text,
        vec![
            ScriptEntry::text(AgentRole::Verifier, verifier),
            ScriptEntry::error(AgentRole::Composer, ModelErrorKind::ServerError),
            ScriptEntry::error(AgentRole::Composer, ModelErrorKind::ServerError),
        ],
    );
    let (engine, _) = scenario_engine(&s);
    let out = engine.run(s.request()).await.unwrap();
    assert_eq!(
        out.end.trace.termination_reason.map(|r| r.as_str()),
        Some("composer_failed")
    );
    assert!(
        out.end.answer.contains("HighCPUUsage"),
        "the allowed claim is shown: {}",
        out.end.answer
    );
    assert!(!out.end.answer.contains(MARKER), "{}", out.end.answer);
}

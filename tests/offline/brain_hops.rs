//! The offline model reasoning over time and dependencies, on the shipped
//! shop pack and on a pack generated here with other names (so nothing
//! passes by knowing the shop): a cause is offered only inside the
//! alert's window, older errors are earlier history, question windows
//! reach the tools, and a caller's errors that blame another service are
//! followed one hop to that service's own evidence and runbook.

use crate::brain::ask;
use crate::helpers::shop_pack_dir;
use crate::support::{plan, planner_input};
use diagraph::engine::RunOutcome;
use diagraph::vocab::contracts::{BindingStatus, find_overstatement};
use diagraph::vocab::events::EventKind;
use serde_json::{Value, json};
use std::path::Path;

/// A payments platform: edge-proxy calls billing-api, whose database pool
/// runs dry; edge-proxy also had TLS errors four weeks before.
fn write_billing_pack(dir: &Path) {
    std::fs::create_dir_all(dir.join("knowledge/database")).unwrap();
    std::fs::create_dir_all(dir.join("knowledge/proxy")).unwrap();
    std::fs::create_dir_all(dir.join("skills/follow-the-request")).unwrap();
    std::fs::write(
        dir.join("pack.toml"),
        "name = \"billing\"\ndescription = \"generated\"\nservices = [\"edge-proxy\", \"billing-api\", \"ledger-worker\", \"web-frontend\"]\nnow = \"2030-03-04T10:15:00Z\"\n",
    )
    .unwrap();
    let mut logs: Vec<Value> = Vec::new();
    for i in 0..3 {
        logs.push(json!({"ts": format!("2030-02-05T08:0{i}:00Z"), "service": "edge-proxy", "level": "ERROR",
            "message": format!("TLS handshake failed with client 10.1.2.{i}: certificate expired")}));
    }
    for i in 0..9 {
        logs.push(json!({"ts": format!("2030-03-04T10:0{i}:10Z"), "service": "billing-api", "level": "ERROR",
            "message": format!("could not acquire a database connection for invoice inv-{i}: pool ledgerpool exhausted after 5000ms")}));
    }
    for i in 2..9 {
        logs.push(json!({"ts": format!("2030-03-04T10:0{i}:40Z"), "service": "edge-proxy", "level": "ERROR",
            "message": format!("upstream billing-api timed out after 15000ms: GET /v1/invoices/{i} returned 504")}));
    }
    for i in 1..6 {
        logs.push(json!({"ts": format!("2030-03-04T10:0{i}:30Z"), "service": "web-frontend", "level": "ERROR",
            "message": format!("request to geo-lookup failed after {i}00ms: connection refused")}));
    }
    for i in 0..5 {
        logs.push(json!({"ts": format!("2030-03-04T10:0{i}:20Z"), "service": "ledger-worker", "level": "INFO",
            "message": "batch committed"}));
    }
    logs.sort_by(|a, b| a["ts"].as_str().cmp(&b["ts"].as_str()));
    let body: String = logs.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("logs.jsonl"), body).unwrap();
    let alerts = json!({"status": "success", "data": {"alerts": [
        {"labels": {"alertname": "ProxyUpstreamErrors", "service": "edge-proxy", "severity": "critical"},
         "annotations": {"summary": "5xx ratio of edge-proxy above 5%"}, "state": "firing",
         "activeAt": "2030-03-04T10:03:00Z", "value": "0.21"},
        {"labels": {"alertname": "BillingSlowRequests", "service": "billing-api", "severity": "warning"},
         "annotations": {"summary": "p99 latency of billing-api above 3s"}, "state": "firing",
         "activeAt": "2030-03-04T10:02:00Z", "value": "5.1"},
        {"labels": {"alertname": "FrontendErrors", "service": "web-frontend", "severity": "warning"},
         "annotations": {"summary": "web-frontend error ratio above 1%"}, "state": "firing",
         "activeAt": "2030-03-04T10:03:00Z", "value": "0.04"}
    ]}});
    std::fs::write(dir.join("alerts.json"), alerts.to_string()).unwrap();
    std::fs::write(
        dir.join("knowledge/database/pool-exhausted.md"),
        "# Database pool exhausted\n\n## Meaning\n\nEvery connection of the pool is in use and new requests wait until they time out.\n\n## Diagnosis\n\nCompare the pool's active and idle connections: an exhausted pool shows idle at zero and a growing queue of waiting requests.\n\nList the longest running queries on the database; one slow statement often holds many connections.\n\n## Mitigation\n\nCancel the long running queries, then size the pool to what the database can serve.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("knowledge/proxy/tls.md"),
        "# Expired certificates\n\n## Mitigation\n\n- Rotate the certificate of the listener\n- Reload the proxy after the rotation\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("skills/follow-the-request/SKILL.md"),
        "---\nname: follow-the-request\ndescription: A proxy or gateway returns 504 or 5xx; follow the request to the upstream that fails.\n---\n\n1. Query the alerts of the proxy.\n2. Query the proxy ERROR logs to see which upstream fails.\n3. Follow the upstream: query its logs and alerts.\n",
    )
    .unwrap();
}

fn billing_pack() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("billing");
    write_billing_pack(&dir);
    (tmp, dir)
}

/// Claims with a binding the Gatekeeper passed, with their types.
fn verified(o: &RunOutcome) -> Vec<(String, String)> {
    let ev = &o.self_evaluation.verifier_evaluation;
    let (Some(gk), Some(out)) = (&ev.gatekeeper_result, &ev.executor_structured_output) else {
        return vec![];
    };
    out.claims
        .iter()
        .filter(|c| {
            gk.checked_bindings
                .iter()
                .any(|b| b.claim_id == c.claim_id && b.status == BindingStatus::Pass)
        })
        .map(|c| (c.claim_type.clone(), c.claim_text.clone()))
        .collect()
}

fn route(o: &RunOutcome) -> Vec<String> {
    o.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::NodeEntered { node, .. } => Some(node.as_str().to_string()),
            _ => None,
        })
        .collect()
}

/// Arguments of every query_logs call the run made.
fn log_queries(o: &RunOutcome) -> Vec<Value> {
    o.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolInvoked { invocation } if invocation.tool_name == "query_logs" => {
                Some(invocation.input_params.clone())
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn gateway_504s_reach_the_pool_behind_them_on_the_shop_pack() {
    let shop = shop_pack_dir();
    for q in [
        "Why is checkout failing with 504s at the api-gateway?",
        "api-gateway 为什么一直返回 504？",
    ] {
        let o = ask(&shop, q).await;
        let r = route(&o);
        assert!(
            r.iter().any(|n| n == "evidence_retry"),
            "{q}: the hop is the evidence-gap round: {r:?}"
        );
        let claims = verified(&o);
        assert!(
            claims.iter().any(|(t, c)| t == "root_cause"
                && c.contains("order-service")
                && c.contains("Connection is not available")),
            "{q}: {claims:#?}\n{}",
            o.end.answer
        );
        // The pool runbook, found by the evidence, not by the question.
        assert!(
            o.end.answer.contains("Connection pool exhaustion"),
            "{q}: {}",
            o.end.answer
        );
        assert_eq!(
            o.end.effective_verdict.map(|v| v.as_str()),
            Some("PASS"),
            "{q}: {}",
            o.end.answer
        );
        assert!(find_overstatement_in(&o).is_none());
    }
}

fn find_overstatement_in(o: &RunOutcome) -> Option<String> {
    o.self_evaluation
        .verifier_evaluation
        .composer_output
        .as_ref()
        .and_then(|c| find_overstatement(c).map(|s| s.to_string()))
}

#[tokio::test]
async fn a_proxy_timeout_is_followed_to_the_upstream_on_another_pack() {
    let (_tmp, dir) = billing_pack();
    for q in [
        "Why is edge-proxy returning 504s?",
        "edge-proxy 为什么返回 504？",
    ] {
        let o = ask(&dir, q).await;
        let claims = verified(&o);
        assert!(
            claims.iter().any(|(t, c)| t == "root_cause"
                && c.contains("billing-api")
                && c.contains("pool ledgerpool exhausted")),
            "{q}: {claims:#?}\n{}",
            o.end.answer
        );
        // Its runbook's Diagnosis is prose: its paragraphs are the steps.
        assert!(
            o.end.answer.contains("longest running queries"),
            "{q}: {}",
            o.end.answer
        );
        // The certificate errors of four weeks ago are history, not the
        // cause, and their runbook is not advice for this incident.
        assert!(
            !claims
                .iter()
                .any(|(t, c)| t == "root_cause" && c.contains("TLS")),
            "{claims:#?}"
        );
        assert!(
            !o.end.answer.contains("Rotate the certificate"),
            "{}",
            o.end.answer
        );
    }
}

/// The blamed dependency is not in the sources: the hop asks, the answer
/// says no service has that name, and the cause stays unconfirmed.
#[tokio::test]
async fn a_blamed_dependency_the_sources_lack_stays_unconfirmed() {
    let (_tmp, dir) = billing_pack();
    for (q, none) in [
        (
            "Why is web-frontend failing?",
            "No service named geo-lookup",
        ),
        ("web-frontend 为什么报错？", "没有名为 geo-lookup 的服务"),
    ] {
        let o = ask(&dir, q).await;
        assert!(route(&o).iter().any(|n| n == "evidence_retry"), "{q}");
        assert!(o.end.answer.contains(none), "{q}: {}", o.end.answer);
        assert_eq!(
            o.end.effective_verdict.map(|v| v.as_str()),
            Some("LOW_CONFID"),
            "{q}: {}",
            o.end.answer
        );
        assert!(find_overstatement_in(&o).is_none());
    }
}

#[tokio::test]
async fn old_errors_are_earlier_history_not_a_cause() {
    let (_tmp, dir) = billing_pack();
    // Only the old TLS errors are ERROR lines of edge-proxy within this
    // window; the alert became active weeks later.
    let o = ask(
        &dir,
        "why did edge-proxy fail between 2030-02-05 07:00 and 2030-02-05 09:00?",
    )
    .await;
    let claims = verified(&o);
    assert!(
        claims.iter().all(|(t, _)| t != "root_cause"),
        "{claims:#?}\n{}",
        o.end.answer
    );
    assert!(
        claims.iter().any(|(_, c)| c.contains("TLS handshake")),
        "{claims:#?}\n{}",
        o.end.answer
    );
    assert!(
        log_queries(&o)
            .iter()
            .any(|a| a["since"] == "2030-02-05T07:00:00Z" && a["until"] == "2030-02-05T09:00:00Z"),
        "{:#?}",
        log_queries(&o)
    );
}

#[tokio::test]
async fn question_windows_reach_the_log_queries() {
    let (_tmp, dir) = billing_pack();
    let cases: &[(&str, &str, Option<&str>)] = &[
        (
            "did billing-api log errors since 10:05?",
            "2030-03-04T10:05:00Z",
            None,
        ),
        (
            "billing-api 昨天有没有错误日志？",
            "2030-03-03T00:00:00Z",
            Some("2030-03-04T00:00:00Z"),
        ),
        (
            "did edge-proxy log errors between 10:00 and 10:04?",
            "2030-03-04T10:00:00Z",
            Some("2030-03-04T10:04:00Z"),
        ),
    ];
    for (q, since, until) in cases {
        let o = ask(&dir, q).await;
        let qs = log_queries(&o);
        assert!(
            qs.iter()
                .any(|a| a["since"] == *since && until.is_none_or(|u| a["until"] == u)),
            "{q}: {qs:#?}"
        );
    }
    // Yesterday billing-api logged nothing: a quiet window, said as such.
    let o = ask(&dir, "billing-api 昨天有没有错误日志？").await;
    assert!(o.end.answer.contains("未检索到"), "{}", o.end.answer);
    // A relative window stays relative: the tool anchors it to its now.
    let o = ask(&dir, "did billing-api log errors in the last 2 days?").await;
    assert!(
        log_queries(&o).iter().any(|a| a["window_minutes"] == 2880),
        "{:#?}",
        log_queries(&o)
    );
    let o = ask(&dir, "过去3小时 billing-api 有没有错误？").await;
    assert!(
        log_queries(&o).iter().any(|a| a["window_minutes"] == 180),
        "{:#?}",
        log_queries(&o)
    );
}

#[tokio::test]
async fn a_runbook_question_gets_the_diagnosis_prose() {
    let (_tmp, dir) = billing_pack();
    for q in [
        "what should I check when the database pool is exhausted?",
        "数据库连接池耗尽时应该检查什么？",
    ] {
        let o = ask(&dir, q).await;
        assert!(
            o.end.answer.contains("active and idle connections"),
            "{q}: {}",
            o.end.answer
        );
    }
}

/// On a pack built from the real runbooks: a runbook question is
/// answered from the runbook (its Diagnosis is prose), not with every
/// error of every service.
#[tokio::test]
async fn what_to_check_when_an_alert_fires_is_the_runbooks_diagnosis() {
    let Some((_tmp, dir)) = crate::brain::eval_pack("zookeeper") else {
        return;
    };
    for q in [
        "what to check when TargetDown fires",
        "TargetDown 告警触发时应该检查什么？",
    ] {
        let o = ask(&dir, q).await;
        assert!(
            o.end.answer.contains("`/targets` page"),
            "{q}: {}",
            o.end.answer
        );
        assert!(
            o.end.answer.contains("`up == 0` query"),
            "{q}: {}",
            o.end.answer
        );
        assert!(
            !o.end.answer.contains("Unexpected exception"),
            "{q}: {}",
            o.end.answer
        );
    }
}

#[tokio::test]
async fn no_runbook_steps_for_a_service_the_sources_do_not_know() {
    let (_tmp, dir) = billing_pack();
    for q in [
        "why is payroll-service timing out?",
        "payroll-service 为什么超时？",
    ] {
        let o = ask(&dir, q).await;
        let answer = &o.end.answer;
        assert!(answer.contains("payroll-service"), "{q}: {answer}");
        let c = o
            .self_evaluation
            .verifier_evaluation
            .composer_output
            .clone()
            .unwrap();
        assert!(c.recommended_actions.is_empty(), "{q}: {answer}");
    }
}

#[test]
fn the_planner_plans_from_the_selected_skill() {
    let mut input = planner_input(
        "why is ledger-api failing?",
        &["ledger-api", "web"],
        &[
            ("ledger-pool", "ledger-api fails when its pool runs dry"),
            ("other", "disks"),
        ],
    );
    let mut skills = input.skill_catalog.to_vec();
    skills[0].procedure = vec![
        "Query the service's ERROR logs for \"lease expired\" and note when it started.".into(),
        "Query WARN logs of the same service.".into(),
        "Query alerts of its callers.".into(),
        "Look up the knowledge base for lease expiry.".into(),
        "Claim only what the evidence shows.".into(),
    ];
    input.skill_catalog = skills.into();
    let p = plan(&input);
    assert_eq!(p.selected_skill.as_deref(), Some("ledger-pool"));
    let step = |i: usize| p.plan.get(i).cloned().unwrap_or_default();
    assert!(step(0).starts_with("Skill step 1:"), "{:#?}", p.plan);
    let has = |tool: &str, args: Value| {
        p.queries.iter().any(|q| {
            q.tool == tool
                && args
                    .as_object()
                    .unwrap()
                    .iter()
                    .all(|(k, v)| q.arguments.get(k) == Some(v))
        })
    };
    assert!(
        has(
            "query_logs",
            json!({"service": "ledger-api", "level": "ERROR,FATAL", "keyword": "lease expired"})
        ),
        "{:#?}",
        p.queries
    );
    assert!(has(
        "query_logs",
        json!({"service": "ledger-api", "level": "WARN"})
    ));
    assert!(
        has("lookup_knowledge", json!({"query": "expiry lease"}))
            || has("lookup_knowledge", json!({"query": "lease expiry"})),
        "{:#?}",
        p.queries
    );
    // The callers step is the dependency hop's job, not a blind query;
    // the procedure was read here, so it is not fetched again.
    assert!(
        step(2).starts_with("Skill step 3:") && !step(2).contains("->"),
        "{:#?}",
        p.plan
    );
    assert!(
        p.queries.iter().all(|q| q.tool != "read_skill"),
        "{:#?}",
        p.queries
    );
    // The skill's queries come first.
    assert_eq!(p.queries[0].tool, "query_logs");
}

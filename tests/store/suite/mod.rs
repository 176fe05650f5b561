//! The store test body shared by `sqlite.rs` and `mysql.rs`: every check
//! takes a connected store (or its URL), so the same assertions run on
//! both backends.

/// Expands `$m!(check, ...)` with every check below that takes a connected
/// store, so each backend's entry point runs all of them from this one list.
macro_rules! each_store_check {
    ($m:ident) => {
        $m!(
            scenario_suite,
            trace_projection,
            replay_equals_live,
            runs_list,
            runs_pages_and_search,
            prune_keeps_feedback,
            session_history_and_isolation,
            foreign_invocation_on_empty_store,
            rerecording_is_idempotent,
            failed_run_keeps_partial_trace,
            feedback_creates_case,
            knowledge_metadata,
            knowledge_from_shipped_pack,
            unknown_run,
        );
    };
}

pub mod scenarios;
pub mod synthetic;

use diagraph::engine::case::case_from_evaluation;
use diagraph::knowledge::chunk::chunk_markdown;
use diagraph::knowledge::{KnowledgeDoc, KnowledgeIndex};
use diagraph::store::{ProcessOwner, Store, StoreError};
use diagraph::tools::pack::{Pack, PackManifest};
use diagraph::vocab::catalog::DomainInfo;
use diagraph::vocab::events::{EngineEvent, EventKind};
use diagraph::vocab::graph::NodeId;
use diagraph::vocab::record::Recorder;
use diagraph::vocab::record::{AgentStep, RunFinish, RunStart};
use diagraph::vocab::run::RunStatus;
use diagraph::vocab::run::{Failure, FailureClass, RunEnd};
use diagraph::vocab::trace::build_trace;
use serde_json::{Value, json};
use std::collections::HashSet;
use synthetic::pass_run;

/// The shipped scenario suite through the engine (see `scenarios.rs`).
pub async fn scenario_suite(store: &Store) {
    scenarios::scenario_suite(store).await;
}

/// The Run Trace projection of one run: exactly its rows, the trace under
/// `run` only, and what the engine produced (route, counts, verdicts,
/// gatekeeper result).
pub async fn trace_projection(store: &Store) {
    let other = pass_run(store, None, "why is order-service slow?", "order-service").await;
    let run = pass_run(
        store,
        None,
        "why is payment-service slow?",
        "payment-service",
    )
    .await;
    let trace = serde_json::to_value(store.run_trace(run.handle.run_id).await.unwrap()).unwrap();
    let top: HashSet<&str> = trace
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(top, HashSet::from(["run", "steps", "toolInvocations"]));
    let r = &trace["run"];
    assert_eq!(r["runId"], json!(run.handle.run_id));
    assert_eq!(r["status"], "SUCCESS");
    assert_eq!(r["agentFlow"], "CHAT");
    assert_eq!(r["effectiveVerdict"], "PASS");
    assert_eq!(r["degraded"], false);
    assert_eq!(r["stepCount"], json!(run.step_ids.len()));
    assert_eq!(r["toolCallCount"], json!(1));
    assert_eq!(r["orchestrationTrace"]["version"], "stategraph-v1");
    assert_eq!(
        r["orchestrationTrace"]["termination_reason"],
        "composer_completed"
    );
    assert_eq!(
        r["route"],
        json!([
            "planner",
            "executor",
            "gatekeeper",
            "verified_input",
            "verifier",
            "composer"
        ])
    );
    assert_eq!(r["verdicts"]["effectiveVerdict"], "PASS");
    assert_eq!(r["verdicts"]["groundednessScore"], json!(0.875));
    assert_eq!(r["gatekeeperResult"]["status"], "pass");
    assert_eq!(
        r["gatekeeperResult"]["checked_bindings"][0]["source_invocation_id"],
        json!(run.invocation_ids[0])
    );
    // orchestrationTrace lives under run only.
    let text = trace.to_string();
    assert_eq!(text.matches("\"orchestrationTrace\"").count(), 1);
    // Exactly this run's rows, in order.
    let steps = trace["steps"].as_array().unwrap();
    let step_ids: Vec<i64> = steps.iter().map(|s| s["id"].as_i64().unwrap()).collect();
    assert_eq!(step_ids, run.step_ids);
    assert!(steps.iter().all(|s| s["runId"] == json!(run.handle.run_id)));
    assert_eq!(steps[0]["agentName"], "planner");
    let invs = trace["toolInvocations"].as_array().unwrap();
    assert_eq!(invs.len(), 1);
    assert_eq!(invs[0]["id"], json!(run.invocation_ids[0]));
    assert_eq!(invs[0]["runId"], json!(run.handle.run_id));
    assert_eq!(invs[0]["retrievalDetails"]["evidence_status"], "supported");
    assert_eq!(
        invs[0]["retrievalDetails"]["evidence_refs"][0]["raw_path"],
        "$.logs[0]"
    );
    assert_eq!(invs[0]["inputParams"]["service"], "payment-service");
    assert!(
        !text.contains("order-service"),
        "another run's rows leaked in"
    );
    assert_ne!(other.invocation_ids[0], run.invocation_ids[0]);
}

/// Replaying a stored run yields exactly the events the live run emitted.
pub async fn replay_equals_live(store: &Store) {
    let run = pass_run(store, None, "why is checkout failing?", "checkout").await;
    let replay = store.load_events(run.handle.run_id).await.unwrap();
    assert_eq!(replay, run.events);
    let seqs: Vec<u32> = replay.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=replay.len() as u32).collect::<Vec<_>>());
    assert!(replay.last().unwrap().is_terminal());
}

/// Runs list newest first with status, verdict, degraded, duration, question.
pub async fn runs_list(store: &Store) {
    let a = pass_run(store, None, "first question", "svc-a").await;
    let b = pass_run(store, None, "second question", "svc-b").await;
    let runs = store.list_runs(10).await.unwrap();
    assert_eq!(runs[0].run_id, b.handle.run_id);
    assert_eq!(runs[1].run_id, a.handle.run_id);
    assert_eq!(runs[0].status, RunStatus::Success);
    assert_eq!(
        runs[0].effective_verdict,
        Some(diagraph::vocab::contracts::Verdict::Pass)
    );
    assert!(!runs[0].degraded);
    assert_eq!(runs[0].duration_ms, Some(42));
    assert_eq!(runs[0].question, "second question");
    assert!(runs[0].created_at.starts_with("20"));
    assert_eq!(store.list_runs(1).await.unwrap().len(), 1);
}

/// Pages reach every run, the count says how many match, and the text
/// filter searches the question, id and status in the database.
pub async fn runs_pages_and_search(store: &Store) {
    let mut ids = Vec::new();
    for i in 0..7 {
        let q = if i == 2 {
            "50%_off payment timeout".to_string()
        } else {
            format!("question {i}")
        };
        ids.push(pass_run(store, None, &q, "svc").await.handle.run_id);
    }
    let all = diagraph::store::RunQuery {
        limit: 3,
        ..Default::default()
    };
    assert_eq!(store.count_runs(&all).await.unwrap(), 7);
    let mut seen = Vec::new();
    let mut before = None;
    loop {
        let page = store
            .query_runs(&diagraph::store::RunQuery {
                before,
                ..all.clone()
            })
            .await
            .unwrap();
        if page.is_empty() {
            break;
        }
        assert!(page.len() <= 3);
        before = page.last().map(|r| r.run_id);
        seen.extend(page.iter().map(|r| r.run_id));
    }
    let mut newest_first = ids.clone();
    newest_first.reverse();
    assert_eq!(
        seen, newest_first,
        "the pages hold every run once, newest first"
    );
    let search = |text: &str| diagraph::store::RunQuery {
        limit: 10,
        text: Some(text.into()),
        ..Default::default()
    };
    // LIKE's wildcards in the text are literal characters.
    let found = store.query_runs(&search("50%_OFF")).await.unwrap();
    assert_eq!(found.iter().map(|r| r.run_id).collect::<Vec<_>>(), [ids[2]]);
    assert_eq!(store.count_runs(&search("%")).await.unwrap(), 1);
    assert_eq!(store.count_runs(&search("_")).await.unwrap(), 1);
    assert_eq!(store.count_runs(&search("question")).await.unwrap(), 6);
    assert_eq!(store.count_runs(&search("success")).await.unwrap(), 7);
    assert_eq!(store.count_runs(&search("no such words")).await.unwrap(), 0);
    let by_id = store
        .query_runs(&search(&ids[4].to_string()))
        .await
        .unwrap();
    assert!(by_id.iter().any(|r| r.run_id == ids[4]));
}

/// Pruning deletes old runs with their rows, and keeps runs with feedback
/// whole.
pub async fn prune_keeps_feedback(store: &Store) {
    let kept = pass_run(
        store,
        None,
        "why is payment-service slow?",
        "payment-service",
    )
    .await;
    let gone = pass_run(store, None, "why is order-service slow?", "order-service").await;
    store
        .record_feedback(kept.handle.run_id, false, case_from_evaluation)
        .await
        .unwrap();
    let before_kept = store.run_trace(kept.handle.run_id).await.unwrap();
    // A cut-off in the past prunes nothing.
    assert_eq!(store.prune_runs(0).await.unwrap(), 0);
    let future = chrono::Utc::now().timestamp_millis() + 60_000;
    assert_eq!(store.prune_runs(future).await.unwrap(), 1);
    assert!(matches!(
        store.run_trace(gone.handle.run_id).await,
        Err(StoreError::UnknownRun(_))
    ));
    assert_eq!(
        store.run_trace(kept.handle.run_id).await.unwrap(),
        before_kept
    );
    assert_eq!(
        store.load_events(kept.handle.run_id).await.unwrap().len(),
        before_kept.run.event_count
    );
    let listed: Vec<i64> = store
        .list_runs(10)
        .await
        .unwrap()
        .iter()
        .map(|r| r.run_id)
        .collect();
    assert_eq!(listed, [kept.handle.run_id]);
}

/// A session's history feeds the next run; runs of one session stay apart.
pub async fn session_history_and_isolation(store: &Store) {
    let first = pass_run(
        store,
        Some("incident-42"),
        "why is payment slow?",
        "payment-service",
    )
    .await;
    let second = pass_run(
        store,
        Some("incident-42"),
        "and the orders?",
        "order-service",
    )
    .await;
    let third = pass_run(store, Some("incident-43"), "unrelated", "search").await;
    let history = store.session_history("incident-42", 5).await.unwrap();
    let questions: Vec<&str> = history.iter().map(|h| h.question.as_str()).collect();
    assert_eq!(questions, ["why is payment slow?", "and the orders?"]);
    assert_eq!(history[0].run_id, first.handle.run_id);
    assert_eq!(
        store.session_history("incident-42", 1).await.unwrap()[0].run_id,
        second.handle.run_id
    );
    assert!(
        store
            .session_history("no-such-session", 5)
            .await
            .unwrap()
            .is_empty()
    );
    // Same session, separate runs: each trace holds only its own invocations.
    let t1 = serde_json::to_value(store.run_trace(first.handle.run_id).await.unwrap()).unwrap();
    let t2 = serde_json::to_value(store.run_trace(second.handle.run_id).await.unwrap()).unwrap();
    assert_eq!(t1["run"]["sessionId"], "incident-42");
    assert_eq!(t2["run"]["sessionId"], "incident-42");
    let ids = |t: &Value| -> Vec<i64> {
        t["toolInvocations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(ids(&t1), first.invocation_ids);
    assert_eq!(ids(&t2), second.invocation_ids);
    // The foreign id handed to a run is never one of its own, and while
    // other runs have invocations it is one of theirs (no placeholder).
    let foreign = store
        .foreign_invocation_id(second.handle.run_id)
        .await
        .unwrap();
    assert!(!second.invocation_ids.contains(&foreign));
    assert!(
        [&first, &third]
            .iter()
            .any(|r| r.invocation_ids.contains(&foreign)),
        "foreign id {foreign} is not an invocation of another run"
    );
}

/// A run of `question` on model "m", with no session, pack, scenario or
/// sources: what the checks of the run table start.
pub fn bare_run(question: &str) -> RunStart {
    RunStart {
        session_id: None,
        question: question.into(),
        model: "m".into(),
        pack: None,
        scenario: None,
        sources: Default::default(),
        rerun_of: None,
    }
}

/// The foreign id exists even on an empty database, and is not this run's.
pub async fn foreign_invocation_on_empty_store(store: &Store) {
    let handle = store.start_run(&bare_run("q")).await.unwrap();
    let foreign = store.foreign_invocation_id(handle.run_id).await.unwrap();
    assert!(foreign > 0);
    // The placeholder owner never shows up as a run.
    let runs = store.list_runs(10).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].run_id, handle.run_id);
    assert_eq!(
        store.foreign_invocation_id(handle.run_id).await.unwrap(),
        foreign
    );
}

/// Re-recording the same (run_id, seq) returns the same id and adds no row.
pub async fn rerecording_is_idempotent(store: &Store) {
    let handle = store.start_run(&bare_run("retry me")).await.unwrap();
    let step = AgentStep {
        id: 0,
        run_id: handle.run_id,
        seq: 2,
        step_index: 1,
        agent_name: "planner".into(),
        attempt: 1,
        model_input: "in".into(),
        model_output: "out".into(),
        thought: String::new(),
        has_tool_call: false,
        duration_ms: 1,
        token_count: 52,
        error: None,
        usage: diagraph::vocab::usage::Usage {
            prompt_tokens: 40,
            completion_tokens: 12,
            reasoning_tokens: Some(4),
            cached_tokens: None,
            cost_usd: Some(0.00123),
        },
        parse_error: Some("malformed: expected one JSON object".into()),
    };
    let listed = |runs: Vec<diagraph::vocab::run::RunSummary>| {
        runs.into_iter()
            .find(|r| r.run_id == handle.run_id)
            .unwrap()
    };
    // No priced call yet: the cost is unknown, not $0.
    assert_eq!(listed(store.list_runs(50).await.unwrap()).cost_usd, None);
    let a = store.record_step(&step).await.unwrap();
    let b = store.record_step(&step).await.unwrap();
    assert_eq!(a, b);
    // A different step under a used seq is refused, not merged.
    let mut clash = step.clone();
    clash.agent_name = "executor".into();
    assert!(store.record_step(&clash).await.is_err());
    let event = EngineEvent {
        run_id: handle.run_id,
        seq: 1,
        at_ms: 0,
        kind: EventKind::NodeEntered {
            node: NodeId::Planner,
            attempt: 1,
            via: None,
        },
    };
    store.record_event(&event).await.unwrap();
    store.record_event(&event).await.unwrap();
    store.flush_all().await.unwrap();
    store.record_event(&event).await.unwrap();
    let events = store.load_events(handle.run_id).await.unwrap();
    assert_eq!(events, vec![event]);
    let trace = serde_json::to_value(store.run_trace(handle.run_id).await.unwrap()).unwrap();
    assert_eq!(trace["steps"].as_array().unwrap().len(), 1);
    assert_eq!(trace["run"]["status"], "RUNNING");
    // The usage split and cost round-trip; what was not reported is null.
    let usage = serde_json::json!({"prompt_tokens": 40, "completion_tokens": 12,
        "reasoning_tokens": 4, "cached_tokens": null, "cost_usd": 0.00123});
    assert_eq!(trace["steps"][0]["usage"], usage);
    assert_eq!(trace["run"]["usage"], usage, "the run sums its steps");
    // The runs list sums the run's priced calls.
    assert_eq!(
        listed(store.list_runs(50).await.unwrap()).cost_usd,
        Some(0.00123)
    );
    assert_eq!(
        store.run_summary(handle.run_id).await.unwrap().cost_usd,
        Some(0.00123)
    );
    // The rejected output keeps why it was rejected.
    assert_eq!(trace["steps"][0]["modelOutput"], "out");
    assert_eq!(
        trace["steps"][0]["parseError"],
        "malformed: expected one JSON object"
    );
}

/// A failed run ends FAILED with its reason and its partial trace.
pub async fn failed_run_keeps_partial_trace(store: &Store) {
    let handle = store.start_run(&bare_run("doomed")).await.unwrap();
    let entered = EngineEvent {
        run_id: handle.run_id,
        seq: 1,
        at_ms: 0,
        kind: EventKind::NodeEntered {
            node: NodeId::Planner,
            attempt: 1,
            via: Some("start".parse().unwrap()),
        },
    };
    store.record_event(&entered).await.unwrap();
    store
        .finish_run(&RunFinish { run_id: handle.run_id, end: RunEnd { status: RunStatus::Failed, degraded: false, answer: String::new(), effective_verdict: None, trace: serde_json::from_value(json!({"version": "stategraph-v1",
                "transitions": [], "final_node": null, "termination_reason": null, "degraded": false,
                "evidence_retry_count": 0}))
            .unwrap(), failure: Some(Failure::new(FailureClass::Store, "store unavailable: connection refused")) }, duration_ms: 5, token_count: 0, step_count: 0, tool_call_count: 0, self_evaluation: None })
        .await
        .unwrap();
    let trace = serde_json::to_value(store.run_trace(handle.run_id).await.unwrap()).unwrap();
    assert_eq!(trace["run"]["status"], "FAILED");
    assert_eq!(
        trace["run"]["failureReason"],
        "store unavailable: connection refused"
    );
    assert_eq!(
        store.load_events(handle.run_id).await.unwrap(),
        vec![entered]
    );
    // Finishing a run that does not exist is refused.
    let mut ghost = RunFinish {
        run_id: handle.run_id + 10_000,
        end: RunEnd {
            status: RunStatus::Failed,
            degraded: false,
            answer: String::new(),
            effective_verdict: None,
            trace: build_trace(&[], 0),
            failure: None,
        },
        duration_ms: 0,
        token_count: 0,
        step_count: 0,
        tool_call_count: 0,
        self_evaluation: None,
    };
    assert!(store.finish_run(&ghost).await.is_err());
    ghost.run_id = handle.run_id;
    ghost.end.status = RunStatus::Running;
    assert!(store.finish_run(&ghost).await.is_err());
}

/// Useful feedback makes one case from verified claims and actions.
pub async fn feedback_creates_case(store: &Store) {
    let run = pass_run(
        store,
        None,
        "why is payment-service timing out?",
        "payment-service",
    )
    .await;
    let case_id = store
        .record_feedback(run.handle.run_id, true, case_from_evaluation)
        .await
        .unwrap()
        .unwrap();
    let again = store
        .record_feedback(run.handle.run_id, true, case_from_evaluation)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        case_id, again,
        "a second 'useful' must not create a second case"
    );
    let case = store.case(&case_id).await.unwrap().unwrap();
    assert_eq!(case.run_id, run.handle.run_id);
    assert_eq!(case.diagnosis_id, run.handle.session_id);
    assert_eq!(case.source_type, "AUTO");
    assert_eq!(case.fault_category, "DATABASE");
    assert_eq!(case.title, "why is payment-service timing out?");
    assert!(
        case.root_cause
            .contains("payment-service database connection pool is exhausted")
    );
    assert!(
        case.root_cause.contains("HikariPool-1"),
        "evidence text expected: {}",
        case.root_cause
    );
    assert!(
        !case
            .root_cause
            .contains("The payment-service connection pool is exhausted."),
        "raw answer leaked"
    );
    assert!(case.solution.contains("Raise the Hikari pool size"));
    let trace = serde_json::to_value(store.run_trace(run.handle.run_id).await.unwrap()).unwrap();
    assert_eq!(trace["run"]["feedback"], "useful");
    assert_eq!(
        store
            .record_feedback(run.handle.run_id, false, case_from_evaluation)
            .await
            .unwrap(),
        None
    );
    assert!(store.case(&case_id).await.unwrap().is_none());
    match store
        .record_feedback(987_654_321, true, case_from_evaluation)
        .await
    {
        Err(StoreError::UnknownRun(987_654_321)) => {}
        other => panic!("expected UnknownRun, got {other:?}"),
    }
}

fn doc(source: &str, domain: &str, body: &str) -> KnowledgeDoc {
    KnowledgeDoc {
        source: source.into(),
        title: source.into(),
        domain: domain.into(),
        when_to_retrieve: format!("when {domain} misbehaves"),
        hash: format!("sha-{source}"),
        body: body.into(),
    }
}

fn pack(docs: Vec<KnowledgeDoc>, domains: Vec<DomainInfo>) -> Pack {
    let chunks = docs
        .iter()
        .flat_map(|d| chunk_markdown(&d.source, &d.title, &d.domain, &d.body))
        .collect();
    Pack {
        dir: "/packs/shop".into(),
        manifest: PackManifest {
            name: "shop".into(),
            description: String::new(),
            services: vec![],
            now: None,
            aliases: Default::default(),
        },
        alerts: vec![],
        logs: Default::default(),
        documents: docs,
        domains,
        index: KnowledgeIndex::build(chunks).unwrap(),
        skills: vec![],
        warnings: vec![],
        health: Default::default(),
        content_hash: String::new(),
        log_index: Default::default(),
    }
}

fn domain(name: &str, count: usize) -> DomainInfo {
    DomainInfo {
        domain: name.into(),
        description: format!("{name} runbooks"),
        when_to_retrieve: format!("when {name} misbehaves"),
        document_count: count,
    }
}

/// Pack sync records documents and domains, and re-syncs in place.
pub async fn knowledge_metadata(store: &Store) {
    let p = pack(
        vec![
            doc(
                "database/pool.md",
                "database",
                "# Pool\nintro\n## Exhausted\ntext\n```\n# not a heading\n```\n",
            ),
            doc("network/dns.md", "network", "# DNS\n"),
        ],
        vec![domain("database", 1), domain("network", 1)],
    );
    store.sync_knowledge(&p).await.unwrap();
    store.sync_knowledge(&p).await.unwrap();
    let domains = store.knowledge_domains().await.unwrap();
    assert_eq!(domains, vec![domain("database", 1), domain("network", 1)]);
    let docs = store.knowledge_documents("shop").await.unwrap();
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0].file_name, "database/pool.md");
    assert_eq!(docs[0].file_hash, "sha-database/pool.md");
    assert_eq!(docs[0].chunk_count, 2);
    assert_eq!(docs[0].status, "INDEXED");
    assert_eq!(docs[0].domain, "database");
    // A document removed from the pack goes; a changed one is updated.
    let mut changed = doc("database/pool.md", "database", "# Pool\nresized\n");
    changed.hash = "sha-new".into();
    let p2 = pack(
        vec![changed],
        vec![domain("database", 1), domain("network", 0)],
    );
    store.sync_knowledge(&p2).await.unwrap();
    let docs = store.knowledge_documents("shop").await.unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0].file_hash, "sha-new");
    assert_eq!(docs[0].chunk_count, 1);
    assert_eq!(
        store.knowledge_domains().await.unwrap()[1].document_count,
        0
    );
}

/// The shipped pack's documents and domains land in the store as loaded.
pub async fn knowledge_from_shipped_pack(store: &Store) {
    let pack = crate::helpers::shop_pack();
    store.sync_knowledge(&pack).await.unwrap();
    let mut expected = pack.domains.clone();
    expected.sort_by(|a, b| a.domain.cmp(&b.domain));
    assert!(!expected.is_empty());
    assert_eq!(store.knowledge_domains().await.unwrap(), expected);
    let docs = store
        .knowledge_documents(&pack.manifest.name)
        .await
        .unwrap();
    assert_eq!(docs.len(), pack.documents.len());
    for d in &docs {
        let source = pack
            .documents
            .iter()
            .find(|x| x.source == d.file_name)
            .unwrap();
        assert_eq!(d.file_hash, source.hash);
        let indexed = pack
            .index
            .chunks()
            .iter()
            .filter(|c| c.source == d.file_name)
            .count();
        assert_eq!(d.chunk_count, indexed as u64);
        assert!(d.chunk_count > 0);
    }
}

/// Unknown run ids are a clear error everywhere.
pub async fn unknown_run(store: &Store) {
    for result in [
        store.run_trace(424_242).await.map(|_| ()),
        store.load_events(424_242).await.map(|_| ()),
    ] {
        match result {
            Err(e @ StoreError::UnknownRun(424_242)) => {
                assert_eq!(e.to_string(), "unknown run 424242")
            }
            other => panic!("expected UnknownRun, got {other:?}"),
        }
    }
}

/// RUNNING runs of a dead process are marked FAILED at the next connect;
/// runs of this live process are left alone.
pub async fn stale_runs_swept(url: &str) {
    let dead = ProcessOwner {
        pid: 4_194_303,
        host: ProcessOwner::current().host,
        start: "1".into(),
    };
    let ghost_store = Store::connect_as(url, dead).await.unwrap();
    let ghost = ghost_store
        .start_run(&bare_run("left running by a crash"))
        .await
        .unwrap();
    let live_store = Store::connect(url).await.unwrap();
    let live = live_store
        .start_run(&bare_run("still running here"))
        .await
        .unwrap();
    // A second store of the same process must not sweep the live run.
    let again = Store::connect(url).await.unwrap();
    let t = serde_json::to_value(again.run_trace(ghost.run_id).await.unwrap()).unwrap();
    assert_eq!(t["run"]["status"], "FAILED");
    assert!(
        t["run"]["failureReason"]
            .as_str()
            .unwrap()
            .starts_with("interrupted")
    );
    let t = serde_json::to_value(again.run_trace(live.run_id).await.unwrap()).unwrap();
    assert_eq!(t["run"]["status"], "RUNNING");
    assert_eq!(again.running_count().await.unwrap(), 1);
}

/// A run whose process died mid-run (the engine's future dropped while
/// the verifier waited on its model) is ended by the next store to start:
/// FAILED, class `interrupted`, with the transitions, steps and
/// invocations it made, counts that match them, and a journal that ends on
/// why it ended, so its replay does not stop at "running…".
pub async fn interrupted_run_keeps_what_happened(url: &str) {
    use diagraph::engine::RunRequest;
    use diagraph::model::{ChatModel, ChatRequest, ChatResponse, ModelError};
    use diagraph::vocab::agent::AgentRole;
    use std::sync::Arc;

    /// The scenario's model, except that the verifier never answers.
    struct HangAtVerifier(Arc<dyn ChatModel>);
    #[async_trait::async_trait]
    impl ChatModel for HangAtVerifier {
        fn name(&self) -> String {
            "hangs at the verifier".into()
        }
        async fn chat(&self, r: &ChatRequest) -> Result<ChatResponse, ModelError> {
            if r.role() == AgentRole::Verifier {
                std::future::pending::<()>().await;
            }
            self.0.chat(r).await
        }
    }

    let dead = ProcessOwner {
        pid: 4_194_302,
        host: ProcessOwner::current().host,
        start: "1".into(),
    };
    let ghost = Store::connect_as(url, dead).await.unwrap();
    let s =
        diagraph::scenario::Scenario::load(&crate::helpers::scenario_dir().join("01_pass.toml"))
            .unwrap();
    let base = crate::helpers::base_engine(Arc::new(ghost.clone()));
    let mut engine = s
        .engine(
            &base,
            Arc::new(diagraph::model::offline::OfflineModel::new()),
        )
        .unwrap();
    engine.model = Arc::new(HangAtVerifier(engine.model.clone()));
    let (tx, mut rx) = tokio::sync::mpsc::channel(256);
    let mut request: RunRequest = s.request();
    request.events = Some(tx);
    let run = tokio::spawn(async move { engine.run(request).await });
    let mut run_id = None;
    while let Some(e) = rx.recv().await {
        run_id = Some(e.run_id);
        if let EventKind::NodeEntered {
            node: diagraph::vocab::graph::NodeId::Verifier,
            ..
        } = e.kind
        {
            break;
        }
    }
    let run_id = run_id.unwrap();
    // The process dies: what reached the database is all there is.
    ghost.flush_all().await.unwrap();
    run.abort();
    let _ = run.await;
    drop(ghost);

    let survivor = Store::connect(url).await.unwrap();
    let t = serde_json::to_value(survivor.run_trace(run_id).await.unwrap()).unwrap();
    let r = &t["run"];
    assert_eq!(r["status"], "FAILED", "{r}");
    assert_eq!(r["failure"]["class"], "interrupted", "{r}");
    assert!(
        r["failure"]["message"]
            .as_str()
            .unwrap()
            .starts_with("interrupted")
    );
    let trace = &r["orchestrationTrace"];
    assert_eq!(trace["termination_reason"], "interrupted");
    assert_eq!(trace["final_node"], "verifier");
    let route: Vec<&str> = trace["transitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["to"].as_str().unwrap())
        .collect();
    assert_eq!(
        route,
        ["executor", "gatekeeper", "verified_input", "verifier"],
        "{trace}"
    );
    let steps = t["steps"].as_array().unwrap().len() as i64;
    let invocations = t["toolInvocations"].as_array().unwrap().len() as i64;
    assert!(steps >= 2 && invocations >= 1, "{t}");
    assert_eq!(r["stepCount"], steps);
    assert_eq!(r["toolCallCount"], invocations);
    assert_eq!(r["route"].as_array().unwrap().last().unwrap(), "verifier");
    // The replay ends on how the run ended.
    let events = survivor.load_events(run_id).await.unwrap();
    match &events.last().unwrap().kind {
        EventKind::RunFinished(end) => {
            assert_eq!(end.status, diagraph::vocab::run::RunStatus::Failed);
            assert_eq!(
                end.failure.as_ref().map(|f| f.class),
                Some(diagraph::vocab::run::FailureClass::Interrupted)
            );
        }
        other => panic!("the journal ends on {other:?}"),
    }
    let seqs: Vec<u32> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=events.len() as u32).collect::<Vec<_>>());
    // Sweeping again changes nothing.
    assert_eq!(survivor.sweep_interrupted().await.unwrap(), 0);
    assert_eq!(
        survivor.load_events(run_id).await.unwrap().len(),
        events.len()
    );
}

//! `diagraph serve` as the binary: it refuses an unguarded public address,
//! SIGTERM mid-run leaves every run ended with its events saved, and two
//! processes on one MySQL database serve 32 concurrent requests as 32
//! separate runs.

use crate::fake_llm::{KEY, fake_llm};
use crate::helpers::diagraph_bin as bin;
use crate::mysql_db::TestDatabase;
use crate::openai_mock::MockServer;
use crate::server_support::{
    ServerProcess, SseStream, assert_cancelled, engine_events, http, json_of,
};
use diagraph::store::Store;
use diagraph::vocab::events::EventKind;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

#[test]
fn serve_refuses_a_public_address_without_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("HOME", dir.path())
        .args(["serve", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("DIAGRAPH_API_TOKEN"), "{err}");
    assert!(lines[0].contains("0.0.0.0:0"), "{err}");
    // Nothing was created: the check runs before the database is opened.
    assert!(!dir.path().join("data/diagraph/diagraph.db").exists());

    let out = bin()
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .args(["serve", "--max-runs", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-runs"));
}

/// A fake LLM over the OpenAI protocol that takes `delay` per call.
async fn slow_llm(delay: Duration) -> MockServer {
    let inner = fake_llm("payment-service");
    MockServer::start_with(
        vec![],
        Arc::new(move |body: &Value| inner(body).delayed(delay)),
    )
    .await
}

fn openai_env(base_url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("DIAGRAPH_MODEL", "openai".to_string()),
        ("DIAGRAPH_OPENAI_BASE_URL", base_url.to_string()),
        ("DIAGRAPH_OPENAI_MODEL", "fake-llm".to_string()),
        ("DIAGRAPH_OPENAI_API_KEY", KEY.to_string()),
    ]
}

#[tokio::test]
async fn sigterm_mid_run_ends_every_run_with_its_events_saved() {
    let llm = slow_llm(Duration::from_millis(300)).await;
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite:{}", dir.path().join("d.db").display());
    let env = openai_env(&llm.base_url);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let server = ServerProcess::start(&db_url, &[], &env);

    let mut ids = Vec::new();
    for q in [
        "Is HighCPUUsage firing on payment-service?",
        "why is payment-service slow?",
    ] {
        let (status, v) = json_of(
            http()
                .post(server.at("/api/chat"))
                .json(&json!({"question": q, "wait": false}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 202, "{v}");
        ids.push(v["run_id"].as_i64().unwrap());
    }
    // Mid-run: the first model call has answered and the run goes on.
    let mut stream =
        SseStream::open(&server.at(&format!("/api/runs/{}/events", ids[0])), None).await;
    let mut seen = Vec::new();
    while !seen.iter().any(|e: &diagraph::vocab::events::EngineEvent| {
        matches!(e.kind, EventKind::ModelCalled { .. })
    }) {
        let f = stream.next().await.expect("events before the end");
        seen.extend(engine_events(std::slice::from_ref(&f)));
    }
    assert!(
        !seen.iter().any(|e| e.is_terminal()),
        "the run ended too early"
    );

    let (status, stderr) = tokio::task::spawn_blocking(move || server.terminate())
        .await
        .unwrap();
    assert!(status.success(), "exit {status:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The open stream saw the run to its end.
    let rest = stream.rest().await;
    assert_eq!(
        rest.last().unwrap().event.as_deref(),
        Some("end"),
        "{rest:?}"
    );

    let store = Store::connect(&db_url).await.unwrap();
    assert_eq!(store.running_count().await.unwrap(), 0);
    for id in ids {
        let trace = store.run_trace(id).await.unwrap();
        assert_cancelled(&trace);
        let events = store.load_events(id).await.unwrap();
        assert!(events.last().unwrap().is_terminal(), "run {id}");
        assert_eq!(trace.run.event_count, events.len());
        // What happened before the signal is kept.
        assert!(!trace.steps.is_empty(), "run {id} lost its steps");
    }
    store.close().await;
}

#[tokio::test]
async fn two_processes_on_one_mysql_serve_32_concurrent_requests_as_32_runs() {
    let Some(db) = TestDatabase::create("two_processes_on_one_mysql").await else {
        return;
    };
    // Migrate once before the servers start.
    Store::connect(&db.url).await.unwrap().close().await;
    let a = ServerProcess::start(&db.url, &["--max-runs", "32"], &[]);
    let b = ServerProcess::start(&db.url, &["--max-runs", "32"], &[]);
    let servers = [&a, &b];

    let client = http();
    let requests = (0..32).map(|i| {
        let url = servers[i % 2].at("/api/chat");
        let client = client.clone();
        async move {
            let question = format!("why is payment-service slow? request {i}");
            let r = client
                .post(url)
                .json(&json!({"question": question}))
                .send()
                .await
                .unwrap();
            let (status, v) = json_of(r).await;
            assert_eq!(status, 200, "request {i}: {v}");
            (i, question, v)
        }
    });
    let answers = futures::future::join_all(requests).await;
    let ids: BTreeSet<i64> = answers
        .iter()
        .map(|(_, _, v)| v["run_id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids.len(), 32, "32 distinct runs");

    for (i, question, answer) in &answers {
        let id = answer["run_id"].as_i64().unwrap();
        assert_eq!(answer["status"], "SUCCESS", "request {i}: {answer}");
        // Read back through the other process.
        let other = servers[(i + 1) % 2];
        let r = client
            .get(other.at(&format!("/api/runs/{id}/trace")))
            .send()
            .await
            .unwrap();
        let (status, trace) = json_of(r).await;
        assert_eq!(status, 200, "{trace}");
        let run = &trace["run"];
        assert_eq!(run["runId"], id);
        assert_eq!(run["query"], question.as_str());
        assert_eq!(run["answer"], answer["answer"]);
        assert_eq!(run["sessionId"], answer["session_id"]);
        let steps = trace["steps"].as_array().unwrap();
        let invocations = trace["toolInvocations"].as_array().unwrap();
        assert!(!steps.is_empty() && !invocations.is_empty(), "{trace}");
        for row in steps.iter().chain(invocations) {
            assert_eq!(row["runId"], id, "a row of another run in {id}: {row}");
            assert_eq!(row["sessionId"], answer["session_id"]);
        }
        assert_eq!(run["stepCount"], steps.len());
        assert_eq!(run["toolCallCount"], invocations.len());
        let events = SseStream::open(&other.at(&format!("/api/runs/{id}/events")), None)
            .await
            .rest()
            .await;
        let events = engine_events(&events);
        assert_eq!(run["eventCount"], events.len());
        assert!(events.iter().all(|e| e.run_id == id));
        assert!(events.last().unwrap().is_terminal());
    }
    let (_, list) = json_of(
        client
            .get(a.at("/api/runs?limit=100"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(list["runs"].as_array().unwrap().len(), 32);

    for server in [a, b] {
        let (status, stderr) = tokio::task::spawn_blocking(move || server.terminate())
            .await
            .unwrap();
        assert!(status.success(), "{stderr}");
    }
    let store = Store::connect(&db.url).await.unwrap();
    assert_eq!(store.running_count().await.unwrap(), 0);
    store.close().await;
}

/// Two servers share a MySQL database; one is killed with SIGKILL in the
/// middle of a run. The other ends that run FAILED (interrupted) once the
/// dead one's lease expires, keeping its events, and leaves its own
/// running run alone.
#[tokio::test]
async fn a_killed_servers_run_is_ended_interrupted_by_the_other_server() {
    let Some(db) = TestDatabase::create("killed_server_lease").await else {
        return;
    };
    Store::connect(&db.url).await.unwrap().close().await;
    // Every model call waits far longer than the test: runs stay RUNNING.
    let llm = slow_llm(Duration::from_secs(600)).await;
    let env = openai_env(&llm.base_url);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let lease = ["--lease-seconds", "1"];
    let mut doomed = ServerProcess::start(&db.url, &lease, &env);
    let survivor = ServerProcess::start(&db.url, &lease, &env);

    let start = |server: &ServerProcess| {
        let url = server.at("/api/chat");
        async move {
            let (status, v) = json_of(
                http()
                    .post(url)
                    .json(&json!({"question": "why is payment-service slow?", "wait": false}))
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            assert_eq!(status, 202, "{v}");
            v["run_id"].as_i64().unwrap()
        }
    };
    let orphan = start(&doomed).await;
    let own = start(&survivor).await;
    let trace_of = |id: i64| {
        let url = survivor.at(&format!("/api/runs/{id}/trace"));
        async move {
            let (status, v) = json_of(http().get(url).send().await.unwrap()).await;
            assert_eq!(status, 200, "{v}");
            v
        }
    };
    // The doomed server's run has reached the database with its first
    // events (its model call is under way).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let events_before = loop {
        let t = trace_of(orphan).await;
        let n = t["run"]["eventCount"].as_u64().unwrap_or(0);
        if n >= 2 {
            assert_eq!(t["run"]["status"], "RUNNING", "{t}");
            break n;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no events stored: {t}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };

    doomed.child.kill().unwrap();
    doomed.child.wait().unwrap();
    let killed = std::time::Instant::now();
    let ended = loop {
        let t = trace_of(orphan).await;
        if t["run"]["status"] != "RUNNING" {
            break t;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(30),
            "the run of the killed server is still RUNNING after 30 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let run = &ended["run"];
    assert_eq!(run["status"], "FAILED", "{ended}");
    assert_eq!(run["failure"]["class"], "interrupted", "{ended}");
    assert!(
        run["failure"]["message"]
            .as_str()
            .unwrap()
            .contains("lease"),
        "{ended}"
    );
    // What it recorded stays, and its journal ends on why it ended.
    assert_eq!(
        run["eventCount"].as_u64().unwrap(),
        events_before + 1,
        "{ended}"
    );
    let events = SseStream::open(&survivor.at(&format!("/api/runs/{orphan}/events")), None)
        .await
        .rest()
        .await;
    let events = engine_events(&events);
    assert!(events.last().unwrap().is_terminal());
    // The survivor's own run is alive and was not touched.
    assert_eq!(trace_of(own).await["run"]["status"], "RUNNING");

    let (status, stderr) = tokio::task::spawn_blocking(move || survivor.terminate())
        .await
        .unwrap();
    assert!(status.success(), "{stderr}");
}

//! `diagraph serve` in process, endpoint by endpoint: the answers, the
//! token, the limits (413, 429), bad input of every kind (400 with a
//! message), event streams (live, resumed, replayed, tailed from another
//! server), cancel, feedback, and a graceful shutdown that leaves no run
//! RUNNING.

use crate::server_support::{
    HeldModel, SseStream, TestServer, assert_cancelled, engine_events, http, json_of, post_raw,
    start_run,
};
use diagraph::server::{ServeError, ServeOptions, bind};
use diagraph::vocab::events::EventKind;
use diagraph::vocab::run::RunStatus;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

fn assert_error(status: u16, body: &Value, want: u16, needle: &str) {
    assert_eq!(status, want, "{body}");
    let message = body["error"].as_str().unwrap_or_else(|| panic!("{body}"));
    assert!(
        message.to_lowercase().contains(&needle.to_lowercase()),
        "{message:?} should mention {needle:?}"
    );
}

#[tokio::test]
async fn healthz_answers_with_the_limits() {
    let server = TestServer::start().await;
    let (status, v) = json_of(http().get(server.at("/healthz")).send().await.unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(v["status"], "ok");
    assert_eq!(v["runs_in_progress"], 0);
    assert_eq!(v["max_concurrent_runs"], 32);
}

#[tokio::test]
async fn chat_waits_for_the_answer_and_returns_the_ask_json_object() {
    let server = TestServer::start().await;
    let (status, v) = post_raw(
        &server.at("/api/chat"),
        r#"{"question": "why is payment-service slow?"}"#,
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    // The keys of `RunOutcome::to_json`, in its order (`failure` only
    // when something failed).
    assert_eq!(
        keys,
        [
            "run_id",
            "session_id",
            "status",
            "answer",
            "degraded",
            "effective_verdict",
            "orchestration_trace",
            "failed_sources",
            "sources"
        ]
    );
    assert_eq!(v["status"], "SUCCESS");
    assert!(v["answer"].as_str().unwrap().contains("payment-service"));
    let run_id = v["run_id"].as_i64().unwrap();
    let stored = server.store.run_trace(run_id).await.unwrap();
    assert_eq!(stored.run.status, RunStatus::Success);
    assert_eq!(stored.run.session_id, v["session_id"].as_str().unwrap());
    assert_eq!(
        serde_json::to_value(stored.run.orchestration_trace().unwrap()).unwrap(),
        v["orchestration_trace"]
    );

    // A second question in the same session is that session's second run.
    let (status, again) = post_raw(
        &server.at("/api/chat"),
        &json!({"question": "and now?", "session_id": v["session_id"]}).to_string(),
    )
    .await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["session_id"], v["session_id"]);
    assert_ne!(again["run_id"], v["run_id"]);
}

#[tokio::test]
async fn chat_can_return_at_once_with_the_run_id() {
    let model = HeldModel::closed();
    let server = TestServer::start_with(ServeOptions::default(), model.clone()).await;
    // The body's `wait` and the query's `wait` both work.
    let (status, v) = post_raw(
        &server.at("/api/chat?wait=false"),
        r#"{"question": "why is payment-service slow?"}"#,
    )
    .await;
    assert_eq!(status, 202, "{v}");
    assert_eq!(v["status"], "RUNNING");
    let run_id = v["run_id"].as_i64().unwrap();
    assert_eq!(v["events"], format!("/api/runs/{run_id}/events"));
    assert_eq!(v["trace"], format!("/api/runs/{run_id}/trace"));
    assert_eq!(
        server.store.run_summary(run_id).await.unwrap().status,
        RunStatus::Running
    );
    model.open();
    let mut stream = SseStream::open(&server.at(&format!("/api/runs/{run_id}/events")), None).await;
    let frames = stream.rest().await;
    assert_eq!(frames.last().unwrap().event.as_deref(), Some("end"));
    assert_eq!(
        server.store.run_summary(run_id).await.unwrap().status,
        RunStatus::Success
    );
}

#[tokio::test]
async fn bad_input_is_400_with_a_message() {
    let server = TestServer::start().await;
    let chat = server.at("/api/chat");
    for (body, needle) in [
        (r#"{"question": "#, "invalid JSON"),
        ("not json", "invalid JSON"),
        ("", "empty"),
        ("   ", "empty"),
        ("[1, 2]", "invalid JSON"),
        (r#"{"session_id": "s"}"#, "question"),
        (r#"{"question": 42}"#, "invalid JSON"),
        (r#"{"question": "  "}"#, "question is empty"),
        (r#"{"question": "q", "sessionId": "s"}"#, "unknown field"),
        (r#"{"question": "q", "wait": "soon"}"#, "invalid JSON"),
        (r#"{"question": "q", "session_id": ""}"#, "session_id"),
    ] {
        let (status, v) = post_raw(&chat, body).await;
        assert_error(status, &v, 400, needle);
    }
    let long = "s".repeat(129);
    let (status, v) = post_raw(
        &chat,
        &json!({"question": "q", "session_id": long}).to_string(),
    )
    .await;
    assert_error(status, &v, 400, "session_id");
    let (status, v) = post_raw(&server.at("/api/chat?wait=maybe"), r#"{"question": "q"}"#).await;
    assert_error(status, &v, 400, "query");

    for path in [
        "/api/runs/abc/trace",
        "/api/runs/0/events",
        "/api/runs/-1/cancel",
    ] {
        let r = if path.ends_with("cancel") {
            http().post(server.at(path)).send().await.unwrap()
        } else {
            http().get(server.at(path)).send().await.unwrap()
        };
        let (status, v) = json_of(r).await;
        assert_error(status, &v, 400, "invalid run id");
    }
    let (status, v) = json_of(http().get(server.at("/api/nothing")).send().await.unwrap()).await;
    assert_error(status, &v, 404, "no such endpoint");
    let r = http().get(server.at("/api/chat")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 405);
    // Nothing of the above started a run.
    assert!(server.store.list_runs(10).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_body_over_the_limit_is_413() {
    let options = ServeOptions {
        max_body_bytes: 256,
        ..ServeOptions::default()
    };
    let server = TestServer::start_with(
        options,
        Arc::new(diagraph::model::offline::OfflineModel::new()),
    )
    .await;
    let big = json!({"question": "x".repeat(1024)}).to_string();
    let (status, v) = post_raw(&server.at("/api/chat"), &big).await;
    assert_error(status, &v, 413, "too large");
    // Chunked, without a length: the same.
    let status_line = chunked_post(&server.url, "/api/chat", big.as_bytes()).await;
    assert!(status_line.contains(" 413 "), "{status_line}");
    let (status, v) = post_raw(
        &server.at("/api/chat"),
        r#"{"question": "why is payment-service slow?"}"#,
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(server.store.list_runs(10).await.unwrap().len(), 1);
}

#[tokio::test]
async fn runs_beyond_the_concurrency_limit_are_429() {
    let model = HeldModel::closed();
    let options = ServeOptions {
        max_concurrent_runs: 2,
        ..ServeOptions::default()
    };
    let server = TestServer::start_with(options, model.clone()).await;
    let a = start_run(&server, "why is payment-service slow?").await;
    let b = start_run(&server, "why is checkout-service slow?").await;
    let r = http()
        .post(server.at("/api/chat"))
        .json(&json!({"question": "one more?", "wait": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["retry-after"], "1");
    let (status, v) = json_of(r).await;
    assert_error(status, &v, 429, "2 runs are already in progress");
    model.open();
    for id in [a, b] {
        SseStream::open(&server.at(&format!("/api/runs/{id}/events")), None)
            .await
            .rest()
            .await;
    }
    // The slots are free again once the runs ended.
    let (status, v) = post_raw(&server.at("/api/chat"), r#"{"question": "and now?"}"#).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(server.store.list_runs(10).await.unwrap().len(), 3);
}

#[tokio::test]
async fn the_token_guards_every_api_route_but_not_healthz() {
    let options = ServeOptions {
        token: Some("s3cret-token".into()),
        ..ServeOptions::default()
    };
    let server = TestServer::start_with(
        options,
        Arc::new(diagraph::model::offline::OfflineModel::new()),
    )
    .await;
    let client = http();
    let runs = server.at("/api/runs");
    let r = client.get(&runs).send().await.unwrap();
    assert_eq!(r.headers()["www-authenticate"], "Bearer");
    let (status, v) = json_of(r).await;
    assert_error(status, &v, 401, "DIAGRAPH_API_TOKEN");
    for header in ["Bearer wrong-token!", "Basic czNjcmV0LXRva2Vu", "Bearer"] {
        let (status, v) = json_of(
            client
                .get(&runs)
                .header("authorization", header)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 401, "{header}: {v}");
    }
    // A chat without the token does not start a run.
    let (status, _) = json_of(
        client
            .post(server.at("/api/chat"))
            .json(&json!({"question": "q"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 401);
    for header in ["Bearer s3cret-token", "bearer   s3cret-token "] {
        let r = client
            .get(&runs)
            .header("authorization", header)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200, "{header}");
    }
    let r = client.get(server.at("/healthz")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(server.store.list_runs(10).await.unwrap().is_empty());
}

#[tokio::test]
async fn listening_beyond_loopback_needs_a_token() {
    let open = ServeOptions {
        listen: "0.0.0.0:0".into(),
        ..ServeOptions::default()
    };
    let err = bind(&open).await.unwrap_err();
    assert!(matches!(err, ServeError::TokenRequired { .. }), "{err}");
    assert!(err.to_string().contains("DIAGRAPH_API_TOKEN"), "{err}");
    let blank = ServeOptions {
        token: Some("  ".into()),
        ..ServeOptions::default()
    };
    assert!(matches!(
        bind(&blank).await.unwrap_err(),
        ServeError::BlankToken
    ));
    let guarded = ServeOptions {
        listen: "0.0.0.0:0".into(),
        token: Some("t".into()),
        ..ServeOptions::default()
    };
    assert!(bind(&guarded).await.is_ok());
    for local in ["127.0.0.1:0", "[::1]:0", "localhost:0"] {
        let options = ServeOptions {
            listen: local.into(),
            ..ServeOptions::default()
        };
        // ::1 may be missing on a host without IPv6: only the token rule
        // matters here.
        if let Err(e) = bind(&options).await {
            assert!(
                !matches!(e, ServeError::TokenRequired { .. }),
                "{local}: {e}"
            );
        }
    }
    let bad = ServeOptions {
        listen: "no-port".into(),
        ..ServeOptions::default()
    };
    assert!(matches!(
        bind(&bad).await.unwrap_err(),
        ServeError::Listen { .. }
    ));
}

#[tokio::test]
async fn runs_list_in_pages_with_filters() {
    let server = TestServer::start().await;
    let mut sessions = Vec::new();
    for i in 0..5 {
        let body = if i % 2 == 1 {
            json!({"question": format!("q{i}"), "session_id": "team-a"})
        } else {
            json!({"question": format!("why is payment-service slow? {i}")})
        };
        let (status, v) = post_raw(&server.at("/api/chat"), &body.to_string()).await;
        assert_eq!(status, 200, "{v}");
        sessions.push(v["session_id"].as_str().unwrap().to_string());
    }
    let get = |path: String| {
        let url = server.at(&path);
        async move { json_of(http().get(url).send().await.unwrap()).await }
    };
    let (status, page1) = get("/api/runs?limit=2".into()).await;
    assert_eq!(status, 200, "{page1}");
    let ids = |v: &Value| -> Vec<i64> {
        v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["run_id"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(ids(&page1), [5, 4]);
    assert_eq!(page1["next_before"], 4);
    let (_, page2) = get("/api/runs?limit=2&before=4".into()).await;
    assert_eq!(ids(&page2), [3, 2]);
    let (_, page3) = get("/api/runs?limit=2&before=2".into()).await;
    assert_eq!(ids(&page3), [1]);
    assert_eq!(page3["next_before"], Value::Null);
    // The rows are what `runs --json` prints.
    let row = &page1["runs"][0];
    for key in [
        "run_id",
        "session_id",
        "status",
        "effective_verdict",
        "degraded",
        "duration_ms",
        "question",
        "created_at",
    ] {
        assert!(row.get(key).is_some(), "{key} in {row}");
    }

    let (_, team) = get("/api/runs?session_id=team-a".into()).await;
    assert_eq!(ids(&team), [4, 2]);
    let (_, ok) = get("/api/runs?status=success".into()).await;
    assert_eq!(ids(&ok).len(), 5);
    let (_, failed) = get("/api/runs?status=FAILED".into()).await;
    assert!(ids(&failed).is_empty());
    let (_, default) = get("/api/runs".into()).await;
    assert_eq!(ids(&default).len(), 5);

    for (query, needle) in [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=x", "invalid query"),
        ("before=x", "invalid query"),
        ("status=DONE", "unknown status"),
    ] {
        let (status, v) = get(format!("/api/runs?{query}")).await;
        assert_error(status, &v, 400, needle);
    }
}

#[tokio::test]
async fn the_trace_is_byte_for_byte_what_trace_json_prints() {
    let server = TestServer::start().await;
    let (_, v) = post_raw(
        &server.at("/api/chat"),
        r#"{"question": "why is payment-service slow?"}"#,
    )
    .await;
    let run_id = v["run_id"].as_i64().unwrap();
    let r = http()
        .get(server.at(&format!("/api/runs/{run_id}/trace")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.headers()["content-type"], "application/json");
    let served = r.bytes().await.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let out = crate::helpers::diagraph_bin()
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("HOME", dir.path())
        .args([
            "--database-url",
            &server.db_url,
            "trace",
            &run_id.to_string(),
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&served),
        String::from_utf8_lossy(&out.stdout)
    );
    let trace: Value = serde_json::from_slice(&served).unwrap();
    assert_eq!(trace["run"]["runId"], run_id);

    let (status, v) = json_of(
        http()
            .get(server.at("/api/runs/999/trace"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(status, &v, 404, "unknown run 999");
}

#[tokio::test]
async fn the_event_stream_follows_a_live_run_to_its_end() {
    let model = HeldModel::closed();
    let server = TestServer::start_with(ServeOptions::default(), model.clone()).await;
    let run_id = start_run(&server, "why is payment-service slow?").await;
    let mut stream = SseStream::open(&server.at(&format!("/api/runs/{run_id}/events")), None).await;
    // The run waits at its first model call: what arrives now is live.
    let first = stream.next().await.unwrap();
    let second = stream.next().await.unwrap();
    let live = engine_events(&[first, second]);
    assert!(matches!(live[0].kind, EventKind::RunStarted { .. }));
    assert!(matches!(live[1].kind, EventKind::NodeEntered { .. }));
    model.wait_arrivals(1).await;
    assert_eq!(
        server.store.run_summary(run_id).await.unwrap().status,
        RunStatus::Running
    );
    // One model call at a time: each call's event comes before the next.
    model.release(1);
    let mut seen = live;
    loop {
        let f = stream.next().await.unwrap();
        let e = engine_events(std::slice::from_ref(&f)).remove(0);
        let is_call = matches!(e.kind, EventKind::ModelCalled { .. });
        seen.push(e);
        if is_call {
            break;
        }
    }
    model.open();
    let rest = stream.rest().await;
    let end = rest.last().unwrap();
    assert_eq!(end.event.as_deref(), Some("end"));
    assert_eq!(
        serde_json::from_str::<Value>(&end.data).unwrap()["status"],
        "SUCCESS"
    );
    seen.extend(engine_events(&rest));
    // Ids are the gapless event indexes, and the stream is the journal.
    let ids: Vec<u32> = seen.iter().map(|e| e.seq).collect();
    assert_eq!(ids, (1..=seen.len() as u32).collect::<Vec<_>>());
    assert!(seen.last().unwrap().is_terminal());
    let journal = server.store.load_events(run_id).await.unwrap();
    assert_eq!(seen, journal);
    let frame_ids: Vec<Option<String>> = rest.iter().map(|f| f.id.clone()).collect();
    assert_eq!(frame_ids.last().unwrap(), &None, "the end frame has no id");
}

#[tokio::test]
async fn event_streams_resume_after_the_last_event_id() {
    let model = HeldModel::closed();
    let server = TestServer::start_with(ServeOptions::default(), model.clone()).await;
    let run_id = start_run(&server, "why is payment-service slow?").await;
    let url = server.at(&format!("/api/runs/{run_id}/events"));
    // Live: read two events, drop the connection, resume after the second.
    let mut stream = SseStream::open(&url, None).await;
    let a = stream.next().await.unwrap();
    let b = stream.next().await.unwrap();
    assert_eq!((a.id.as_deref(), b.id.as_deref()), (Some("1"), Some("2")));
    drop(stream);
    model.release(1);
    let mut resumed = SseStream::open(&url, Some(2)).await;
    model.open();
    let rest = resumed.rest().await;
    assert_eq!(rest[0].id.as_deref(), Some("3"));
    let events = engine_events(&rest);
    let journal = server.store.load_events(run_id).await.unwrap();
    assert_eq!(events, journal[2..]);

    // Ended: the journal replayed from the store, from any index.
    let replay = SseStream::open(&url, None).await.rest().await;
    assert_eq!(engine_events(&replay), journal);
    let from5 = SseStream::open(&url, Some(5)).await.rest().await;
    assert_eq!(engine_events(&from5), journal[5..]);
    let by_query = SseStream::open(&format!("{url}?after=5"), None)
        .await
        .rest()
        .await;
    assert_eq!(engine_events(&by_query), journal[5..]);
    let past = SseStream::open(&url, Some(10_000)).await.rest().await;
    assert_eq!(past.len(), 1);
    assert_eq!(past[0].event.as_deref(), Some("end"));

    let r = http()
        .get(&url)
        .header("Last-Event-ID", "three")
        .send()
        .await
        .unwrap();
    let (status, v) = json_of(r).await;
    assert_error(status, &v, 400, "Last-Event-ID");
    let (status, v) = json_of(
        http()
            .get(server.at("/api/runs/404/events"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(status, &v, 404, "unknown run");
}

#[tokio::test]
async fn a_run_of_another_server_is_followed_through_the_database() {
    let model = HeldModel::closed();
    let a = TestServer::start_with(ServeOptions::default(), model.clone()).await;
    let b = TestServer::on(
        &a.db_url,
        ServeOptions::default(),
        Arc::new(diagraph::model::offline::OfflineModel::new()),
    )
    .await;
    let run_id = start_run(&a, "why is payment-service slow?").await;
    model.wait_arrivals(1).await;
    let mut stream = SseStream::open(&b.at(&format!("/api/runs/{run_id}/events")), None).await;
    let first = stream.next().await.unwrap();
    assert_eq!(first.id.as_deref(), Some("1"));
    model.open();
    let mut frames = vec![first];
    frames.extend(stream.rest().await);
    assert_eq!(frames.last().unwrap().event.as_deref(), Some("end"));
    let journal = a.store.load_events(run_id).await.unwrap();
    assert_eq!(engine_events(&frames), journal);

    // Server B lists it and serves its trace; it cannot cancel it.
    let (_, list) = json_of(http().get(b.at("/api/runs")).send().await.unwrap()).await;
    assert_eq!(list["runs"][0]["run_id"], run_id);
}

#[tokio::test]
async fn cancel_ends_a_live_run_and_says_why_it_cannot_end_others() {
    let model = HeldModel::closed();
    let server = TestServer::start_with(ServeOptions::default(), model.clone()).await;
    let other = TestServer::on(
        &server.db_url,
        ServeOptions::default(),
        Arc::new(diagraph::model::offline::OfflineModel::new()),
    )
    .await;
    let run_id = start_run(&server, "why is payment-service slow?").await;
    model.wait_arrivals(1).await;

    let (status, v) = json_of(
        http()
            .post(other.at(&format!("/api/runs/{run_id}/cancel")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(status, &v, 409, "another diagraph process");

    // The model stays held: only the cancel can end the run, and the
    // answer comes once it has (the call in flight is cut short).
    let (status, v) = json_of(
        http()
            .post(server.at(&format!("/api/runs/{run_id}/cancel")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["run_id"], run_id);
    assert_eq!(v["status"], "CANCELLED");
    assert_eq!(v["failure"]["class"], "cancelled", "{v}");
    let trace = server.store.run_trace(run_id).await.unwrap();
    assert_cancelled(&trace);
    let journal = server.store.load_events(run_id).await.unwrap();
    assert!(journal.last().unwrap().is_terminal());
    assert_eq!(server.store.running_count().await.unwrap(), 0);

    let (status, v) = json_of(
        http()
            .post(server.at(&format!("/api/runs/{run_id}/cancel")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(status, &v, 409, "already ended");
    let (status, v) = json_of(
        http()
            .post(server.at("/api/runs/77/cancel"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(status, &v, 404, "unknown run 77");
}

#[tokio::test]
async fn feedback_is_recorded_and_checked() {
    let model = HeldModel::closed();
    let server = TestServer::start_with(ServeOptions::default(), model.clone()).await;
    let running = start_run(&server, "why is payment-service slow?").await;
    let url = |id: i64| server.at(&format!("/api/runs/{id}/feedback"));
    let (status, v) = post_raw(&url(running), r#"{"feedback": "useful"}"#).await;
    assert_error(status, &v, 409, "still running");
    model.open();
    SseStream::open(&server.at(&format!("/api/runs/{running}/events")), None)
        .await
        .rest()
        .await;

    let (status, v) = post_raw(&url(running), r#"{"feedback": "useful"}"#).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["feedback"], "useful");
    assert!(v["case_id"].as_str().unwrap().starts_with("case-"), "{v}");
    let trace = server.store.run_trace(running).await.unwrap();
    assert_eq!(trace.run.feedback.as_deref(), Some("useful"));
    let (status, v) = post_raw(&url(running), r#"{"feedback": "not_useful"}"#).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["case_id"], Value::Null);

    for (body, needle) in [
        (r#"{"feedback": "great"}"#, "useful"),
        (r#"{"useful": true}"#, "unknown field"),
        ("{", "invalid JSON"),
        ("", "empty"),
    ] {
        let (status, v) = post_raw(&url(running), body).await;
        assert_error(status, &v, 400, needle);
    }
    let (status, v) = post_raw(&url(4242), r#"{"feedback": "useful"}"#).await;
    assert_error(status, &v, 404, "unknown run");
}

#[tokio::test]
async fn shutdown_cancels_runs_in_progress_and_leaves_none_running() {
    let model = HeldModel::closed();
    let mut server = TestServer::start_with(ServeOptions::default(), model.clone()).await;
    let a = start_run(&server, "why is payment-service slow?").await;
    let chat = server.at("/api/chat");
    let waiting = tokio::spawn(async move {
        post_raw(&chat, r#"{"question": "why is checkout-service slow?"}"#).await
    });
    model.wait_arrivals(2).await;
    let mut stream = SseStream::open(&server.at(&format!("/api/runs/{a}/events")), None).await;
    let store = server.store.clone();
    let stopping = tokio::spawn(async move {
        let stopped = server.shut_down().await;
        (server, stopped)
    });
    // The model stays held: only the shutdown can end the runs (their
    // calls in flight are cut short).
    let (_server, stopped) = stopping.await.unwrap();
    stopped.unwrap();

    let (status, v) = waiting.await.unwrap();
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["status"], "CANCELLED");
    let frames = stream.rest().await;
    assert_eq!(frames.last().unwrap().event.as_deref(), Some("end"));
    assert_eq!(store.running_count().await.unwrap(), 0);
    for run in store.list_runs(10).await.unwrap() {
        let events = store.load_events(run.run_id).await.unwrap();
        assert!(events.last().unwrap().is_terminal(), "run {}", run.run_id);
        assert_cancelled(&store.run_trace(run.run_id).await.unwrap());
    }
    assert_eq!(store.list_runs(10).await.unwrap().len(), 2);
}

/// POSTs `body` with `Transfer-Encoding: chunked` (no length given) and
/// returns the response's status line.
async fn chunked_post(base: &str, path: &str, body: &[u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = base.trim_start_matches("http://");
    let mut conn = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    .into_bytes();
    for chunk in body.chunks(300) {
        request.extend(format!("{:x}\r\n", chunk.len()).as_bytes());
        request.extend(chunk);
        request.extend(b"\r\n");
    }
    request.extend(b"0\r\n\r\n");
    conn.write_all(&request).await.unwrap();
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut response)).await;
    String::from_utf8_lossy(&response)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

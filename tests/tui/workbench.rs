//! The workbench for real incidents: hints that follow the input mode,
//! pastes that stay one question, a demo picker that never races typed
//! keys, popups that stop at their end, zoom, marked tabs, and Enter on
//! every pane opening its detail (node attempts with their model calls,
//! the Gatekeeper's claim-level errors, the Verifier's facts).

use crate::fixtures::{
    RunBuilder, binding, buffer_text, capped_run, ch, idle_state, key, live_state, pass_run,
    render, summary,
};
use crossterm::event::KeyCode;
use diagraph::tui::state::{DemoEntry, Pane, Popup, StoredRun, Subject};
use diagraph::tui::update::{Command, Msg, update};
use diagraph::vocab::agent::AgentRole;
use diagraph::vocab::contracts::Verdict;
use diagraph::vocab::graph::{NodeId, Outcome};
use std::sync::Arc;

fn status_bar(state: &diagraph::tui::state::AppState, w: u16, h: u16) -> String {
    let text = buffer_text(render(state, w, h).backend().buffer());
    text.lines().last().unwrap_or_default().to_string()
}

fn popup_text(state: &diagraph::tui::state::AppState) -> String {
    match &state.popup {
        Some(Popup::Detail { title, lines, .. }) => {
            let mut out = format!("{title}\n");
            for l in lines {
                for s in &l.spans {
                    out.push_str(&s.content);
                }
                out.push('\n');
            }
            out
        }
        other => panic!("no detail popup: {other:?}"),
    }
}

#[test]
fn q_types_while_typing_or_filtering_and_the_hints_say_so() {
    let mut state = idle_state();
    state.focus = Pane::Input;
    let bar = status_bar(&state, 80, 24);
    assert!(!bar.contains("q quit"), "{bar}");
    assert!(bar.contains("enter ask"), "{bar}");
    assert!(bar.contains("ctrl-c quit"), "{bar}");
    for c in "q quit?".chars() {
        assert!(update(&mut state, ch(c)).is_empty());
    }
    assert!(!state.quit);
    assert_eq!(state.input.lines().join(""), "q quit?");
    assert!(state.popup.is_none(), "? typed, not help");

    // The filter too.
    update(&mut state, key(KeyCode::Esc));
    update(&mut state, ch('/'));
    assert!(state.filter_editing);
    let bar = status_bar(&state, 80, 24);
    assert!(!bar.contains("q quit"), "{bar}");
    assert!(bar.contains("enter keep filter"), "{bar}");
    update(&mut state, ch('q'));
    assert_eq!(state.filter, "q");
    assert!(!state.quit);
    update(&mut state, key(KeyCode::Enter));
    assert!(!state.filter_editing);
    // Outside text, q quits again and the hint says so.
    let bar = status_bar(&state, 80, 24);
    assert!(bar.contains("q quit"), "{bar}");
    update(&mut state, ch('q'));
    assert!(state.quit);
}

#[test]
fn a_multi_line_paste_is_one_question_never_commands() {
    let mut state = idle_state();
    state.focus = Pane::Graph;
    // Pasted anywhere: it goes to the question, newlines become spaces.
    let cmds = update(
        &mut state,
        Msg::Paste("why is checkout slow?\nsd q\r\n\tand payments?\n".into()),
    );
    assert!(cmds.is_empty(), "{cmds:?}");
    assert_eq!(state.focus, Pane::Input);
    assert!(state.popup.is_none());
    assert!(!state.step_live && !state.quit);
    assert_eq!(
        state.input.lines(),
        ["why is checkout slow? sd q   and payments?"]
    );
    // Enter asks it, whole.
    match update(&mut state, key(KeyCode::Enter)).as_slice() {
        [Command::StartRun { question, .. }] => {
            assert_eq!(question, "why is checkout slow? sd q   and payments?")
        }
        other => panic!("{other:?}"),
    }
    // Escapes in a paste stay inert.
    state.focus = Pane::Input;
    update(&mut state, Msg::Paste("a\u{1b}[2Jb".into()));
    assert!(!state.input.lines().join("").contains('\u{1b}'));
}

fn entry(n: &str) -> DemoEntry {
    DemoEntry {
        path: format!("fixtures/scenarios/{n}.toml").into(),
        name: n.into(),
        description: format!("{n} description"),
        question: "q".into(),
        error: None,
    }
}

#[test]
fn the_demo_picker_opens_at_once_and_keys_typed_before_the_list_wait_for_it() {
    let mut state = idle_state();
    assert_eq!(update(&mut state, ch('d')), vec![Command::ListScenarios]);
    assert!(
        matches!(state.popup, Some(Popup::DemoPicker { loading: true, .. })),
        "{:?}",
        state.popup
    );
    let text = buffer_text(render(&state, 80, 24).backend().buffer());
    assert!(text.contains("loading scenarios"), "{text}");
    // Typed fast, before the list arrives: they go to the picker, not the
    // panes behind it.
    for m in [ch('j'), ch('j'), ch('i')] {
        assert!(update(&mut state, m).is_empty());
    }
    assert!(update(&mut state, key(KeyCode::Enter)).is_empty());
    assert_ne!(state.focus, Pane::Input, "i did not reach the panes");
    let cmds = update(
        &mut state,
        Msg::ScenariosLoaded(vec![entry("a"), entry("b"), entry("c")]),
    );
    match cmds.as_slice() {
        [Command::StartDemo { path, .. }] => {
            assert_eq!(path, std::path::Path::new("fixtures/scenarios/c.toml"))
        }
        other => panic!("{other:?}"),
    }
    // The list is kept: the next picker opens with it, already loaded.
    update(&mut state, key(KeyCode::Esc));
    state.popup = None;
    update(&mut state, ch('d'));
    assert!(matches!(
        &state.popup,
        Some(Popup::DemoPicker { loading: false, entries, .. }) if entries.len() == 3
    ));
    // A list arriving after the picker was closed does not reopen it.
    update(&mut state, key(KeyCode::Esc));
    assert!(state.popup.is_none());
    update(&mut state, Msg::ScenariosLoaded(vec![entry("a")]));
    assert!(state.popup.is_none());
}

#[test]
fn g_in_a_popup_stops_at_the_end() {
    let mut state = live_state(&pass_run(1));
    update(&mut state, Msg::Resize(80, 24));
    state.focus = Pane::Tools;
    update(&mut state, key(KeyCode::Enter));
    let Some(Popup::Detail { lines, .. }) = &state.popup else {
        panic!("no detail");
    };
    let n = lines.len() as u16;
    update(&mut state, ch('G'));
    let Some(Popup::Detail { scroll, .. }) = &state.popup else {
        panic!()
    };
    let end = *scroll;
    // The last line is at the bottom of the popup, not alone at its top.
    assert!(end > 0 && end < n - 1, "scroll {end} of {n}");
    let text = buffer_text(render(&state, 80, 24).backend().buffer());
    assert!(text.contains("success"), "the last lines show:\n{text}");
    update(&mut state, ch('j'));
    assert!(matches!(&state.popup, Some(Popup::Detail { scroll, .. }) if *scroll == end));
    update(&mut state, ch('k'));
    assert!(matches!(&state.popup, Some(Popup::Detail { scroll, .. }) if *scroll == end - 1));
    update(&mut state, ch('g'));
    assert!(matches!(
        &state.popup,
        Some(Popup::Detail { scroll: 0, .. })
    ));
}

#[test]
fn text_panes_stop_at_their_end_too() {
    // An answer longer than its pane: j past the end, then one k moves
    // the text at once (the scroll never ran on past what is drawn).
    let mut b = RunBuilder::new(3, "q");
    b.node(
        NodeId::Planner,
        Outcome::Completed,
        "completed",
        NodeId::End,
    );
    let answer: Vec<String> = (0..40).map(|i| format!("line {i}")).collect();
    let events = b.done(&answer.join("\n"), Some(Verdict::Pass));
    let mut state = live_state(&events);
    update(&mut state, Msg::Resize(120, 40));
    state.focus = Pane::Answer;
    for _ in 0..200 {
        update(&mut state, ch('j'));
    }
    let end = state.sel.answer_scroll;
    assert!(end > 0 && end < 40, "{end}");
    let text = buffer_text(render(&state, 120, 40).backend().buffer());
    assert!(text.contains("line 39"), "{text}");
    update(&mut state, ch('k'));
    assert_eq!(state.sel.answer_scroll, end - 1);
    let text = buffer_text(render(&state, 120, 40).backend().buffer());
    assert!(!text.contains("line 39"), "moved up one line:\n{text}");
    update(&mut state, ch('G'));
    assert_eq!(state.sel.answer_scroll, end);
    // The verdict pane fits its text at this size: nothing to scroll.
    state.focus = Pane::Verdict;
    update(&mut state, ch('G'));
    assert_eq!(state.sel.verdict_scroll, 0);
}

#[test]
fn the_help_fits_80x24_scrolls_and_explains_the_glyphs() {
    let mut state = live_state(&pass_run(1));
    update(&mut state, Msg::Resize(80, 24));
    update(&mut state, ch('?'));
    let text = buffer_text(render(&state, 80, 24).backend().buffer());
    insta::assert_snapshot!("help_80x24", text);
    assert!(text.contains("Keys and glyphs"), "{text}");
    // Scrolling to the end shows the legend, its last line included.
    update(&mut state, ch('G'));
    let text = buffer_text(render(&state, 80, 24).backend().buffer());
    assert!(text.contains("identifiers keep both ends"), "{text}");
    assert!(text.contains("▼ capped"), "{text}");
}

#[test]
fn the_first_screen_shows_the_runs_tab_marked_as_active() {
    let mut state = idle_state();
    state.focus = Pane::Input;
    let text = buffer_text(render(&state, 80, 24).backend().buffer());
    insta::assert_snapshot!("first_screen_80x24", text);
    assert!(text.contains("[Runs (0)]"), "{text}");
    assert!(text.contains("no runs yet"), "{text}");
    // A run shows its tool invocations, and the empty state names its
    // own table.
    let state = live_state(&RunBuilder::new(1, "q").events);
    let text = buffer_text(render(&state, 80, 24).backend().buffer());
    assert!(text.contains("[Tools (0)]"), "{text}");
    assert!(text.contains("no tool invocations yet"), "{text}");
    assert!(!text.contains("nothing yet"), "{text}");
}

#[test]
fn zoom_gives_the_focused_pane_the_whole_body() {
    let mut state = live_state(&pass_run(1));
    state.focus = Pane::Answer;
    update(&mut state, ch('z'));
    let text = buffer_text(render(&state, 80, 24).backend().buffer());
    assert!(
        text.lines().next().unwrap_or_default().contains("Answer"),
        "{text}"
    );
    assert!(!text.contains("Verdict"), "{text}");
    assert!(
        text.contains("Recommended: check long-running transactions."),
        "{text}"
    );
    update(&mut state, ch('z'));
    let text = buffer_text(render(&state, 80, 24).backend().buffer());
    assert!(text.contains("Verdict"), "{text}");
}

#[test]
fn the_answer_pane_grows_with_the_terminal() {
    let state = live_state(&pass_run(1));
    let rows = |w, h| {
        let text = buffer_text(render(&state, w, h).backend().buffer());
        let lines: Vec<Vec<char>> = text.lines().map(|l| l.chars().collect()).collect();
        let title: Vec<char> = "┌ Answer".chars().collect();
        let (top, col) = lines
            .iter()
            .enumerate()
            .find_map(|(y, l)| {
                l.windows(title.len())
                    .position(|w| w == title.as_slice())
                    .map(|x| (y, x))
            })
            .unwrap();
        // Rows inside the pane: its left border continues below the title.
        lines[top + 1..]
            .iter()
            .take_while(|l| l.get(col) == Some(&'│'))
            .count()
    };
    let (small, big) = (rows(120, 30), rows(200, 60));
    assert!(big >= 30, "answer pane {big} rows at 200x60");
    assert!(big > small * 2, "{small} -> {big}");
}

#[test]
fn a_capped_ceiling_says_why_beside_the_bindings() {
    // The Gatekeeper failed on a claim-level rule while every binding
    // passed: the pane does not leave "1/1 pass" unexplained.
    let mut b = RunBuilder::new(7, "why is checkout slow?");
    b.enter(NodeId::Executor, None);
    let inv = b.tool("query_logs", "checkout", "ERROR pool exhausted", 1);
    b.finish(
        NodeId::Executor,
        Outcome::Completed,
        "completed",
        NodeId::Gatekeeper,
    );
    b.enter(NodeId::Gatekeeper, Some("completed"));
    b.gatekeeper(
        "fail",
        "low_confid",
        vec![binding(
            "claim-1",
            "pool",
            "query_logs",
            inv,
            "$.logs[0]",
            true,
        )],
    );
    let mut events = b.events.clone();
    if let diagraph::vocab::events::EventKind::GatekeeperChecked { result } =
        &mut events.last_mut().unwrap().kind
    {
        let mut r = (**result).clone();
        r.errors = vec!["claim claim-1: root_cause claim has one binding, needs 2".into()];
        r.failed_rules = vec!["claim.min_bindings".into()];
        *result = Arc::new(r);
    }
    let mut b2 = RunBuilder::new(7, "x");
    b2.events = events;
    let _ = b2.verdict(None, Some(Verdict::LowConfid), None);
    let state = live_state(&b2.events);
    let mut state = state;
    state.focus = Pane::Verdict;
    let text = buffer_text(render(&state, 120, 40).backend().buffer());
    assert!(text.contains("1/1 pass"), "{text}");
    assert!(text.contains("why"), "{text}");
    assert!(text.contains("root_cause claim"), "{text}");
    // Enter shows it all.
    update(&mut state, key(KeyCode::Enter));
    let popup = popup_text(&state);
    assert!(popup.contains("claim error"), "{popup}");
    assert!(popup.contains("claim.min_bindings"), "{popup}");
}

/// A stored run for the fixture: one step per ModelCalled event, with a
/// prompt, a response and reasoning text.
pub(crate) fn stored_trace(
    events: &[diagraph::vocab::events::EngineEvent],
) -> diagraph::vocab::run_trace::RunTrace {
    use diagraph::vocab::events::EventKind;
    let steps = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelCalled { role, step_id, .. } => Some((*role, *step_id)),
            _ => None,
        })
        .map(|(role, id)| {
            let output = if role == AgentRole::Verifier {
                serde_json::json!({
                    "verdict": "PASS", "groundedness_score": 0.92, "critical_fact_count": 1,
                    "facts_checked": [{"claim_id": "claim-1", "fact": "pool exhausted",
                        "is_critical": true, "verification": "direct_evidence",
                        "detail": "HikariPool-1 timed out"}],
                    "rationale": "The log line shows the pool timing out."
                })
                .to_string()
            } else {
                format!("{{\"role\": \"{role}\", \"out\": \"answer of step {id}\"}}")
            };
            serde_json::json!({
                "id": id, "runId": 1, "sessionId": "s-1", "seq": id, "stepIndex": id,
                "agentName": role.as_str(), "attempt": 1,
                "modelInput": format!("SYSTEM: you are the {role}\nUSER: the DTO of step {id}"),
                "modelOutput": output, "thought": format!("thinking about step {id}"),
                "hasToolCall": false, "durationMs": 12, "tokenCount": 300, "error": null,
                "createdAt": "2026-07-08T23:05:28Z"
            })
        })
        .collect::<Vec<_>>();
    serde_json::from_value(serde_json::json!({
        "run": {
            "runId": 1, "sessionId": "s-1", "status": "SUCCESS", "agentFlow": "CHAT",
            "query": "why?", "answer": "a", "model": "m", "pack": null, "scenario": null,
            "degraded": false, "effectiveVerdict": "PASS", "totalDurationMs": 900,
            "totalTokenCount": 1500, "stepCount": 5, "toolCallCount": 2,
            "selfEvaluation": null, "orchestrationTrace": null, "failureReason": null,
            "failure": null, "sources": null, "failedSources": [], "feedback": null,
            "createdAt": "2026-07-08T23:05:28Z", "finishedAt": null,
            "verdicts": null, "gatekeeperResult": null, "eventCount": 0
        },
        "steps": steps,
        "toolInvocations": []
    }))
    .unwrap()
}

#[test]
fn enter_on_a_node_shows_its_work_and_the_stored_prompts_when_they_arrive() {
    let events = pass_run(1);
    let mut state = live_state(&events);
    update(&mut state, Msg::Resize(120, 40));
    // Transitions: the Verifier's attempt is the fifth node entered.
    state.focus = Pane::Transitions;
    for _ in 0..4 {
        update(&mut state, ch('j'));
    }
    let cmds = update(&mut state, key(KeyCode::Enter));
    assert_eq!(cmds, vec![Command::LoadTrace { run_id: 1 }]);
    assert!(matches!(
        &state.popup,
        Some(Popup::Detail {
            subject: Some((1, Subject::Node(4))),
            ..
        })
    ));
    let before = popup_text(&state);
    assert!(before.contains("verifier · attempt 1"), "{before}");
    assert!(
        before.contains("COMPLETED · completed → composer"),
        "{before}"
    );
    assert!(before.contains("300 tokens"), "{before}");
    assert!(before.contains("loading the prompts"), "{before}");

    // The stored run arrives: prompt, response, reasoning, facts.
    update(
        &mut state,
        Msg::TraceLoaded {
            run_id: 1,
            result: Ok(Arc::new(stored_trace(&events))),
        },
    );
    let after = popup_text(&state);
    for needle in [
        "prompt (the input DTO, rendered):",
        "SYSTEM: you are the verifier",
        "response:",
        "reasoning:",
        "thinking about step",
        "verifier facts",
        "direct_evidence",
        "[critical] claim-1 · pool exhausted",
        "The log line shows the pool timing out.",
    ] {
        assert!(after.contains(needle), "{needle} missing:\n{after}");
    }
    assert!(!after.contains("loading the prompts"), "{after}");
    let text = buffer_text(render(&state, 120, 40).backend().buffer());
    assert!(text.contains("run 1 · verifier · attempt 1"), "{text}");

    // A trace already complete is not read again; a missing one says why.
    update(&mut state, key(KeyCode::Esc));
    state.focus = Pane::Graph;
    assert!(update(&mut state, key(KeyCode::Enter)).is_empty());
    assert!(popup_text(&state).contains("composer · attempt 1"));
    let mut other = live_state(&pass_run(3));
    other.focus = Pane::Graph;
    update(&mut other, key(KeyCode::Enter));
    update(
        &mut other,
        Msg::TraceLoaded {
            run_id: 3,
            result: Err("no database is open".into()),
        },
    );
    assert!(popup_text(&other).contains("unavailable: no database is open"));
    assert!(matches!(other.traces.get(&3), Some(StoredRun::Missing(_))));
}

#[test]
fn enter_opens_a_detail_on_every_pane() {
    let mut state = live_state(&capped_run(3));
    for pane in [
        Pane::Graph,
        Pane::Transitions,
        Pane::Tools,
        Pane::Bindings,
        Pane::Verdict,
        Pane::Answer,
    ] {
        state.popup = None;
        state.focus = pane;
        update(&mut state, key(KeyCode::Enter));
        assert!(
            matches!(state.popup, Some(Popup::Detail { .. })),
            "{pane:?}: {:?}",
            state.popup
        );
    }
    let answer = popup_text(&state);
    assert!(answer.contains("Likely cause (low confidence)"), "{answer}");
    state.popup = None;
    state.focus = Pane::Verdict;
    update(&mut state, key(KeyCode::Enter));
    let verdict = popup_text(&state);
    assert!(
        verdict.contains("LOW_CONFID ▼ capped by the ceiling"),
        "{verdict}"
    );
    assert!(verdict.contains("failed rule"), "{verdict}");
}

#[test]
fn a_live_run_shows_its_running_node_with_a_clock() {
    let mut b = RunBuilder::new(5, "q");
    b.node(
        NodeId::Planner,
        Outcome::Completed,
        "completed",
        NodeId::Executor,
    );
    b.enter(NodeId::Executor, Some("completed"));
    let mut state = live_state(&b.events);
    update(&mut state, Msg::Tick { now_ms: 2_500 });
    state.focus = Pane::Transitions;
    let text = buffer_text(render(&state, 120, 40).backend().buffer());
    // The executor's entry was the newest event, 2.5 s of the screen
    // clock ago.
    assert!(text.contains("running executor · 2.5s"), "{text}");
    let bar = text.lines().last().unwrap_or_default();
    assert!(bar.contains("executor 2.5s"), "{bar}");
    assert!(bar.contains("x cancel the run"), "{bar}");
    let row = text.lines().find(|l| l.contains("▶ executor")).unwrap();
    assert!(row.contains("running") && row.contains("2.5s"), "{row}");
}

#[test]
fn the_runs_list_is_an_incident_log_grouped_by_session_and_polled() {
    let mut state = idle_state();
    update(
        &mut state,
        Msg::RunsLoaded(Ok(vec![
            summary(4, "s-b", "SUCCESS"),
            summary(3, "s-a", "RUNNING"),
            summary(2, "s-b", "CANCELLED"),
            summary(1, "s-a", "SUCCESS"),
        ])),
    );
    let order: Vec<i64> = state.runs.iter().map(|r| r.run_id).collect();
    assert_eq!(order, [4, 2, 3, 1], "sessions together, newest first");
    state.focus = Pane::Runs;
    state.sel.runs = 2;
    let text = buffer_text(render(&state, 120, 30).backend().buffer());
    for needle in ["07-08 23:05", "CANCELLED", "RUNNING", "1.2s", "1504", "s-b"] {
        assert!(text.contains(needle), "{needle}:\n{text}");
    }
    let row2 = text.lines().find(|l| l.contains("question 2")).unwrap();
    assert!(row2.contains("  ·") && !row2.contains("s-b"), "{row2}");

    // A poll: run 3 finished, run 5 came from another process; the
    // selection stays on run 3.
    update(
        &mut state,
        Msg::RunsChanged(vec![
            summary(5, "s-c", "RUNNING"),
            summary(3, "s-a", "SUCCESS"),
        ]),
    );
    let order: Vec<i64> = state.runs.iter().map(|r| r.run_id).collect();
    assert_eq!(order, [5, 4, 2, 3, 1]);
    assert_eq!(state.runs[3].status.as_str(), "SUCCESS");
    assert_eq!(state.filtered_runs()[state.sel.runs].run_id, 3);
}

#[test]
fn y_copies_and_m_compares_two_runs() {
    let mut state = live_state(&pass_run(1));
    update(&mut state, Msg::Resize(120, 40));
    // The answer pane copies the answer itself.
    state.focus = Pane::Answer;
    match update(&mut state, ch('y')).as_slice() {
        [Command::Copy(text)] => assert!(text.starts_with("order-service's database")),
        other => panic!("{other:?}"),
    }
    // Elsewhere the run as Markdown, once it is rendered.
    state.focus = Pane::Graph;
    assert_eq!(
        update(&mut state, ch('y')),
        vec![Command::CopyExport { run_id: 1 }]
    );
    let cmds = update(
        &mut state,
        Msg::ExportReady {
            run_id: 1,
            result: Ok("# diagraph run 1\n".into()),
        },
    );
    assert_eq!(cmds, vec![Command::Copy("# diagraph run 1\n".into())]);
    assert!(
        state
            .notice_text()
            .unwrap_or_default()
            .contains("copied run 1")
    );
    // A detail popup copies what it shows.
    state.focus = Pane::Tools;
    update(&mut state, key(KeyCode::Enter));
    match update(&mut state, ch('y')).as_slice() {
        [Command::Copy(text)] => assert!(text.contains("query_logs"), "{text}"),
        other => panic!("{other:?}"),
    }
    update(&mut state, key(KeyCode::Esc));

    // m on one run, m on another: the two are compared.
    update(
        &mut state,
        Msg::RunsLoaded(Ok(vec![
            summary(9, "s-x", "SUCCESS"),
            summary(8, "s-y", "SUCCESS"),
        ])),
    );
    state.focus = Pane::Graph;
    assert!(
        update(&mut state, ch('m')).is_empty(),
        "only in the runs list"
    );
    state.focus = Pane::Runs;
    state.sel.runs = 1;
    assert!(update(&mut state, ch('m')).is_empty());
    let text = buffer_text(render(&state, 120, 40).backend().buffer());
    assert!(text.contains("8◆"), "{text}");
    state.sel.runs = 0;
    let first = state.filtered_runs()[0].run_id;
    assert_eq!(
        update(&mut state, ch('m')),
        vec![Command::LoadCompare { a: 8, b: first }]
    );
    let events = pass_run(1);
    let (a, b) = (stored_trace(&events), stored_trace(&events));
    update(
        &mut state,
        Msg::CompareLoaded {
            a: 8,
            b: first,
            result: Ok((Arc::new(a), Arc::new(b))),
        },
    );
    let popup = popup_text(&state);
    assert!(
        popup.starts_with(&format!("compare run 8 │ run {first}")),
        "{popup}"
    );
    for needle in ["verdicts", "route", "claims", "bindings", "usage", "tokens"] {
        assert!(popup.contains(needle), "{needle}:\n{popup}");
    }
}

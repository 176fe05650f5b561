//! The binary as a user meets it: exit codes, one-line errors, the
//! `ask --json` object, and that bad input never leaves a RUNNING run.

use crate::helpers::{diagraph_bin as bin, repo};
use crate::sandbox::{Sandbox, assert_exits_in_one_line, assert_one_line_error, json_of, stderr};
use serde_json::Value;

#[test]
fn ask_json_prints_the_design_object() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["ask", "why is payment-service slow?", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "run_id",
        "session_id",
        "status",
        "answer",
        "degraded",
        "effective_verdict",
        "orchestration_trace",
    ] {
        assert!(v.get(key).is_some(), "missing {key} in {v}");
    }
    assert_eq!(v["status"], "SUCCESS");
    assert_eq!(v["orchestration_trace"]["version"], "stategraph-v1");

    // The run is stored and its trace is served for exactly that run.
    let run_id = v["run_id"].as_i64().unwrap();
    let trace = sb
        .cmd()
        .args(["trace", &run_id.to_string(), "--json"])
        .output()
        .unwrap();
    assert!(trace.status.success(), "{}", stderr(&trace));
    let t: Value = serde_json::from_slice(&trace.stdout).unwrap();
    assert!(t["run"]["orchestrationTrace"].is_object());
    assert!(t.get("orchestrationTrace").is_none());
    assert!(t["steps"].is_array() && t["toolInvocations"].is_array());
}

#[test]
fn a_rejected_answer_and_why_show_in_trace_and_the_runs_list_has_tokens_and_cost() {
    let sb = Sandbox::new();
    let out = sb.ask_scenario("02_planner_invalid_then_ok.toml", &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let run_id = serde_json::from_slice::<Value>(&out.stdout).unwrap()["run_id"].to_string();
    let json = sb
        .cmd()
        .args(["trace", &run_id, "--json"])
        .output()
        .unwrap();
    let t: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        t["steps"][0]["modelOutput"],
        "I would start by looking at the alerts."
    );
    let why = t["steps"][0]["parseError"].as_str().unwrap_or_default();
    assert!(why.contains("JSON"), "{t}");
    assert!(t["steps"][1]["parseError"].is_null(), "{t}");
    let text = sb.cmd().args(["trace", &run_id]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("step 1 planner attempt 1: answer rejected:"),
        "{text}"
    );
    let runs = sb.cmd().args(["runs"]).output().unwrap();
    let runs = String::from_utf8_lossy(&runs.stdout);
    let header = runs.lines().next().unwrap_or_default();
    assert!(
        header.contains("tokens") && header.contains("cost"),
        "{runs}"
    );
}

#[test]
fn session_continues_across_asks() {
    let sb = Sandbox::new();
    let first = sb
        .cmd()
        .args(["ask", "why is order-service slow?", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&first.stdout).unwrap();
    let session = v["session_id"].as_str().unwrap().to_string();
    let second = sb
        .cmd()
        .args([
            "ask",
            "and payment-service?",
            "--session",
            &session,
            "--json",
        ])
        .output()
        .unwrap();
    assert!(second.status.success(), "{}", stderr(&second));
    let w: Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(w["session_id"], session.as_str());
    assert_ne!(w["run_id"], v["run_id"]);
}

#[test]
fn scenario_runs_follow_their_expected_route() {
    let sb = Sandbox::new();
    let out = sb.ask_scenario("01_pass.toml", &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["orchestration_trace"]["final_node"], "composer");
}

#[test]
fn malformed_scenario_is_a_one_line_error_naming_the_file() {
    let sb = Sandbox::new();
    let path = sb.path("broken.toml");
    std::fs::write(&path, "name = \"x\"\nquestion = [unterminated\n").unwrap();
    let out = sb
        .cmd()
        .arg("ask")
        .arg("--scenario")
        .arg(&path)
        .output()
        .unwrap();
    assert_one_line_error(&out, "broken.toml");
}

#[test]
fn unreadable_pack_is_a_one_line_error() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .arg("--pack")
        .arg(sb.path("no-such-pack"))
        .args(["ask", "why?"])
        .output()
        .unwrap();
    assert_one_line_error(&out, "no-such-pack");
}

#[test]
fn unknown_run_is_a_one_line_error() {
    let sb = Sandbox::new();
    sb.ask_scenario("01_pass.toml", &[]);
    let out = sb.cmd().args(["trace", "987654"]).output().unwrap();
    assert_one_line_error(&out, "987654");
    let replay = sb.cmd().args(["replay", "987654"]).output().unwrap();
    assert_one_line_error(&replay, "987654");
    let bad = sb.cmd().args(["trace", "abc"]).output().unwrap();
    assert_one_line_error(&bad, "run id");
}

#[test]
fn unreachable_database_is_a_one_line_error_and_quick() {
    let sb = Sandbox::new();
    let started = std::time::Instant::now();
    let out = bin()
        .env("XDG_CONFIG_HOME", sb.path("config"))
        .env("XDG_DATA_HOME", sb.path("data"))
        .args([
            "--database-url",
            "mysql://root@127.0.0.1:1/nothing",
            "ask",
            "why?",
        ])
        .output()
        .unwrap();
    assert_one_line_error(&out, "database");
    assert!(started.elapsed().as_secs() < 30);
}

#[test]
fn empty_question_is_rejected_before_any_run() {
    let sb = Sandbox::new();
    let out = sb.cmd().args(["ask", "   "]).output().unwrap();
    assert_one_line_error(&out, "question");
    // No run, and not even a database, was made.
    let runs = sb.cmd().args(["runs", "--json"]).output().unwrap();
    assert_exits_in_one_line(&runs, 2, "no database at");
}

#[test]
fn config_masks_the_api_key() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .env("DIAGRAPH_OPENAI_API_KEY", "sk-very-secret-value")
        .arg("config")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("sk-very-secret-value"), "{text}");
}

#[test]
fn config_shows_whether_the_workbench_takes_the_mouse() {
    let sb = Sandbox::new();
    let shown = |env: Option<&str>, args: &[&str]| {
        let mut cmd = sb.cmd();
        if let Some(v) = env {
            cmd.env("DIAGRAPH_TUI_MOUSE", v);
        }
        let out = cmd.args(args).arg("config").output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(shown(None, &[]).contains("[tui]\nmouse = true\n"));
    assert!(shown(Some("false"), &[]).contains("[tui]\nmouse = false\n"));
    assert!(shown(None, &["--no-mouse"]).contains("[tui]\nmouse = false\n"));
    let out = sb
        .cmd()
        .env("DIAGRAPH_TUI_MOUSE", "sometimes")
        .arg("config")
        .output()
        .unwrap();
    assert_one_line_error(&out, "DIAGRAPH_TUI_MOUSE");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn runs_lists_what_ask_stored() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["ask", "is there a HighCPUUsage alert on payment-service?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let runs = sb.cmd().args(["runs", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&runs.stdout).unwrap();
    let list = v.as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["status"], "SUCCESS");
}

#[test]
fn graph_prints_every_edge() {
    let out = bin().arg("graph").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("flowchart TD"));
    assert!(text.contains("gatekeeper_no_verified_binding"));
}

#[test]
fn feedback_takes_the_verdicts_as_the_readme_spells_them() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["ask", "--json", "why is payment-service slow?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = run["run_id"].to_string();
    for verdict in ["not_useful", "not-useful", "useful"] {
        let fb = sb.cmd().args(["feedback", &id, verdict]).output().unwrap();
        assert!(fb.status.success(), "{verdict}: {}", stderr(&fb));
    }
    let bad = sb.cmd().args(["feedback", &id, "meh"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn the_shipped_pack_comes_from_the_binary_not_the_checkout() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .current_dir(sb.dir.path())
        .env("XDG_CACHE_HOME", sb.path("cache"))
        .args(["ask", "--json", "why is payment-service slow?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let shipped = sb.path("cache").join("diagraph").join("shipped");
    let copies: Vec<_> = std::fs::read_dir(&shipped)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert_eq!(copies.len(), 1, "one copy per content");
    let root = copies[0].path();
    assert!(root.join("packs/shop/pack.toml").is_file());
    assert!(root.join("scenarios/01_pass.toml").is_file());
}

/// `diagraph trace 4 | head -1` used to panic on the broken pipe (exit
/// 101). Every command now ends quietly when its reader goes away.
#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["ask", "why is payment-service slow?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    for args in [
        vec!["trace", "1"],
        vec!["trace", "1", "--json"],
        vec!["runs"],
        vec!["runs", "--json"],
        vec!["ask", "why is order-service slow?"],
        vec!["graph"],
        vec!["config"],
    ] {
        let mut child = sb
            .cmd()
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader is gone before the command writes a byte.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            matches!(out.status.code(), Some(0) | Some(141)),
            "{args:?}: {:?} {err}",
            out.status
        );
        assert!(err.trim().is_empty(), "{args:?}: {err}");
    }
}

#[test]
fn an_unknown_theme_lists_the_available_ones_and_exits_2() {
    let sb = Sandbox::new();
    let out = sb.cmd().args(["--theme", "solarized"]).output().unwrap();
    assert_exits_in_one_line(&out, 2, "unknown theme \"solarized\"");
    let err = stderr(&out);
    assert!(err.contains("dark, light, high-contrast"), "{err}");
    assert!(err.starts_with("diagraph: loading the theme: "), "{err}");
}

#[test]
fn a_bad_key_override_says_why_once_and_exits_2() {
    let sb = Sandbox::with_config("[keys]\nquit = \"hyper-q\"\n");
    let out = sb.cmd().output().unwrap();
    assert_exits_in_one_line(&out, 2, "action quit: unknown key \"hyper-q\"");
    assert_eq!(
        stderr(&out).matches("hyper-q").count(),
        1,
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_key_override_that_clashes_is_refused_naming_both_actions() {
    // The README's own example once was `quit = "x, ctrl-q"`: x cancels
    // a live run.
    let sb = Sandbox::with_config("[keys]\nquit = \"x, ctrl-q\"\n");
    let out = sb.cmd().output().unwrap();
    assert_exits_in_one_line(&out, 2, "key x would both quit and cancel");
}

/// Exit codes of `ask`: 0 an answer that is not degraded, 3 a degraded
/// one, 2 bad input; the runs list calls a degraded run DEGRADED.
#[test]
fn ask_exit_codes_follow_how_the_run_ended() {
    let sb = Sandbox::new();
    let ok = sb.ask_scenario("01_pass.toml", &[]);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let degraded = sb.ask_scenario("06_executor_invalid_output.toml", &["--json"]);
    assert_eq!(degraded.status.code(), Some(3), "{}", stderr(&degraded));
    let v: Value = serde_json::from_slice(&degraded.stdout).unwrap();
    assert_eq!(v["degraded"], true);
    assert_eq!(v["failure"]["class"], "invalid_output", "{v}");
    let bad = sb.cmd().args(["ask", " "]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let runs = sb.cmd().arg("runs").output().unwrap();
    let text = String::from_utf8_lossy(&runs.stdout);
    assert!(
        text.lines().any(|l| l.contains("DEGRADED")),
        "the degraded run is labelled:\n{text}"
    );
}

#[test]
fn log_files_serve_query_logs_and_no_demo_pack_serves_the_rest() {
    let sb = Sandbox::new();
    let logs = sb.path("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(
        logs.join("orders.jsonl"),
        "{\"ts\":\"2026-07-08T22:40:00Z\",\"service\":\"order-service\",\"level\":\"ERROR\",\"message\":\"pool exhausted after 30000ms\"}\n\
         {\"ts\":\"2026-07-08T22:41:00Z\",\"service\":\"order-service\",\"level\":\"ERROR\",\"message\":\"pool exhausted after 30000ms\"}\n",
    )
    .unwrap();
    let glob = format!("{}/*.jsonl", logs.display());
    let out = sb
        .cmd()
        .env("DIAGRAPH_LOG_FILES", &glob)
        .args([
            "ask",
            "are there errors in the order-service logs?",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["answer"].as_str().unwrap().contains("pool exhausted"),
        "{v}"
    );
    let trace = sb
        .cmd()
        .args(["trace", &v["run_id"].to_string(), "--json"])
        .output()
        .unwrap();
    let t: Value = serde_json::from_slice(&trace.stdout).unwrap();
    let tools = &t["run"]["sources"]["tools"];
    assert_eq!(tools["query_logs"], format!("files:{glob}"), "{t}");
    assert!(tools.get("query_metrics").is_none(), "no demo pack: {t}");

    let shown = sb
        .cmd()
        .env("DIAGRAPH_LOG_FILES", &glob)
        .arg("config")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("[logs]\nbackend = \"files\""), "{text}");
    assert!(text.contains(&format!("paths = \"{glob}\"")), "{text}");

    let bad = sb
        .cmd()
        .env("DIAGRAPH_LOG_FILES", "/var/log/[oops")
        .args(["ask", "anything?"])
        .output()
        .unwrap();
    assert_exits_in_one_line(&bad, 2, "unclosed '['");
}

#[test]
fn rerun_reproduces_a_stored_run_links_it_and_a_stricter_rules_file_flips_it() {
    let sb = Sandbox::new();
    let ask = sb
        .cmd()
        .args(["ask", "why is payment-service slow?", "--json"])
        .output()
        .unwrap();
    assert_eq!(ask.status.code(), Some(0), "{}", stderr(&ask));
    let a = json_of(&ask);
    let id = a["run_id"].as_i64().unwrap().to_string();

    let rerun = sb.cmd().args(["rerun", &id, "--json"]).output().unwrap();
    assert_eq!(rerun.status.code(), Some(0), "{}", stderr(&rerun));
    let r = json_of(&rerun);
    assert_eq!(r["rerun_of"], a["run_id"]);
    assert_ne!(r["run_id"], a["run_id"]);
    for key in ["status", "degraded", "effective_verdict"] {
        assert_eq!(r[key], a[key], "{key}");
    }
    // The same answer but for the invocation ids its citations name (the
    // rerun's own; the store suite checks they map one to one).
    let ids = regex::Regex::new(r"#\d+\b").unwrap();
    let unnumbered = |v: &Value| ids.replace_all(v.as_str().unwrap_or(""), "#N").into_owned();
    assert!(!unnumbered(&a["answer"]).is_empty());
    assert_eq!(unnumbered(&r["answer"]), unnumbered(&a["answer"]));
    assert_eq!(
        r["orchestration_trace"]["transitions"],
        a["orchestration_trace"]["transitions"]
    );
    let new_id = r["run_id"].as_i64().unwrap().to_string();
    let trace = sb
        .cmd()
        .args(["trace", &new_id, "--json"])
        .output()
        .unwrap();
    assert_eq!(json_of(&trace)["run"]["rerunOf"], a["run_id"]);
    let runs = json_of(&sb.cmd().args(["runs", "--json"]).output().unwrap());
    let row = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["run_id"] == r["run_id"])
        .unwrap()
        .clone();
    assert_eq!(row["rerun_of"], a["run_id"]);

    // Human output names what it reran.
    let text = sb.cmd().args(["rerun", &id]).output().unwrap();
    assert_eq!(text.status.code(), Some(0), "{}", stderr(&text));
    assert!(String::from_utf8_lossy(&text.stdout).starts_with(&format!("rerun of run {id}\n")));

    // A stricter rules file: the same recorded answers, now degraded.
    let mut rules: Value = serde_json::from_str(
        &std::fs::read_to_string(repo("src/engine/nodes/gatekeeper-rules.json")).unwrap(),
    )
    .unwrap();
    for rule in rules["rules"].as_array_mut().unwrap() {
        if rule["id"] == "binding.excerpt_identifies" {
            rule["params"]["min_excerpt_chars"] = 100_000.into();
        }
    }
    let strict = sb.path("strict.json");
    std::fs::write(&strict, rules.to_string()).unwrap();
    let flipped = sb
        .cmd()
        .args(["rerun", &id, "--json", "--rules"])
        .arg(&strict)
        .output()
        .unwrap();
    assert_eq!(flipped.status.code(), Some(3), "{}", stderr(&flipped));
    let f = json_of(&flipped);
    assert_eq!(f["degraded"], true);
    assert_eq!(f["rerun_of"], a["run_id"]);

    // --from the Composer: the rest replayed, the Composer live (offline).
    let from = sb
        .cmd()
        .args(["rerun", &id, "--from", "composer", "--json"])
        .output()
        .unwrap();
    assert_eq!(from.status.code(), Some(0), "{}", stderr(&from));
    assert_eq!(json_of(&from)["effective_verdict"], a["effective_verdict"]);
}

#[test]
fn rerun_of_a_scripted_failing_run_keeps_its_route_and_exit_code() {
    let sb = Sandbox::new();
    let ask = sb.ask_scenario("11_gatekeeper_fabricated_id.toml", &["--json"]);
    assert_eq!(ask.status.code(), Some(3), "{}", stderr(&ask));
    let a = json_of(&ask);
    let id = a["run_id"].as_i64().unwrap().to_string();
    let rerun = sb.cmd().args(["rerun", &id, "--json"]).output().unwrap();
    assert_eq!(rerun.status.code(), Some(3), "{}", stderr(&rerun));
    let r = json_of(&rerun);
    assert_eq!(
        r["orchestration_trace"]["transitions"],
        a["orchestration_trace"]["transitions"]
    );
    assert_eq!(r["failure"]["class"], a["failure"]["class"]);
}

#[test]
fn rerun_refuses_what_it_cannot_replay_in_one_line_with_exit_2() {
    let sb = Sandbox::new();
    let ask = sb
        .cmd()
        .args(["ask", "why is payment-service slow?", "--json"])
        .output()
        .unwrap();
    let id = json_of(&ask)["run_id"].as_i64().unwrap().to_string();
    let unknown = sb.cmd().args(["rerun", "424242"]).output().unwrap();
    assert_exits_in_one_line(&unknown, 2, "424242");
    let node = sb
        .cmd()
        .args(["rerun", &id, "--from", "gatekeeper"])
        .output()
        .unwrap();
    assert_exits_in_one_line(&node, 2, "not an agent node");
    let bad = sb
        .cmd()
        .args(["rerun", &id, "--from", "nowhere"])
        .output()
        .unwrap();
    assert_exits_in_one_line(&bad, 2, "not a node");
    let rules = sb
        .cmd()
        .args(["rerun", &id, "--rules"])
        .arg(sb.path("missing.json"))
        .output()
        .unwrap();
    assert_exits_in_one_line(&rules, 2, "rules file");
    // Nothing was left RUNNING.
    let runs = json_of(&sb.cmd().args(["runs", "--json"]).output().unwrap());
    assert!(
        runs.as_array()
            .unwrap()
            .iter()
            .all(|r| r["status"] != "RUNNING")
    );
}

/// `runs --limit/--before` pages the history; `prune --older-than` keeps
/// recent runs and refuses a malformed age.
#[test]
fn runs_page_with_before_and_prune_keeps_recent_runs() {
    let sb = Sandbox::new();
    for q in [
        "why is payment-service slow?",
        "why is order-service slow?",
        "why is checkout failing?",
    ] {
        let out = sb.cmd().args(["ask", q]).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let page = |args: &[&str]| -> Vec<i64> {
        let out = sb
            .cmd()
            .args(["runs", "--json"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r["run_id"].as_i64().unwrap())
            .collect()
    };
    let first = page(&["--limit", "2"]);
    assert_eq!(first.len(), 2);
    let before = first[1].to_string();
    let rest = page(&["--limit", "2", "--before", &before]);
    assert_eq!(rest.len(), 1);
    assert!(rest[0] < first[1]);
    let out = sb
        .cmd()
        .args(["runs", "--before", "zero"])
        .output()
        .unwrap();
    assert_one_line_error(&out, "run id");

    let out = sb
        .cmd()
        .args(["prune", "--older-than", "90d"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("deleted 0 runs"));
    assert_eq!(page(&["--limit", "10"]).len(), 3);
    for bad in ["90", "d", "90y", "0d"] {
        let out = sb
            .cmd()
            .args(["prune", "--older-than", bad])
            .output()
            .unwrap();
        assert_one_line_error(&out, "age");
    }
}

#[test]
fn read_only_commands_on_a_missing_database_say_so_and_create_nothing() {
    let sb = Sandbox::new();
    let db = sb.path("d.db");
    for args in [
        vec!["runs"],
        vec!["runs", "--json"],
        vec!["trace", "1"],
        vec!["replay", "1"],
        vec!["export", "1", "--format", "markdown"],
        vec!["compare", "1", "2"],
    ] {
        let out = sb.cmd().args(&args).output().unwrap();
        assert_exits_in_one_line(&out, 2, "no database at");
        assert!(stderr(&out).contains("d.db"), "{args:?}: {}", stderr(&out));
        assert!(!db.exists(), "{args:?} created {}", db.display());
    }
    // Without --database-url: the default file in the data directory.
    let mut cmd = crate::helpers::diagraph_bin();
    crate::helpers::isolate(&mut cmd, sb.dir.path());
    let out = cmd.arg("runs").output().unwrap();
    assert_exits_in_one_line(&out, 2, "no database at");
    assert!(stderr(&out).contains("diagraph.db"), "{}", stderr(&out));
}

#[test]
fn demo_with_an_unknown_name_lists_the_names() {
    let sb = Sandbox::new();
    let out = sb.cmd().args(["demo", "no-such-demo"]).output().unwrap();
    assert_exits_in_one_line(&out, 2, "no demo scenario \"no-such-demo\"");
    let err = stderr(&out);
    assert!(err.contains("01_pass"), "{err}");
    let help = sb.cmd().args(["demo", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    assert!(help.contains("name") && help.contains("path"), "{help}");
}

#[test]
fn the_workbench_without_a_terminal_says_it_needs_one() {
    let sb = Sandbox::new();
    for args in [vec![], vec!["demo", "01_pass"]] {
        let out = sb
            .cmd()
            .args(&args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_exits_in_one_line(&out, 2, "the workbench needs a terminal");
    }
    assert!(!sb.path("d.db").exists());
}

#[test]
fn export_to_a_file_says_what_it_wrote() {
    let sb = Sandbox::new();
    let out = sb.ask_scenario("01_pass.toml", &["--json"]);
    let id = json_of(&out)["run_id"].as_i64().unwrap().to_string();
    let file = sb.path("run.md");
    let out = sb
        .cmd()
        .args(["export", &id, "--format", "markdown", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(
        err.contains(&format!("wrote run {id} as Markdown to"))
            && err.contains("run.md")
            && err.contains(&format!("({size} bytes)")),
        "{err}"
    );
}

#[test]
fn ask_reads_degraded_for_a_fallback_answer() {
    let sb = Sandbox::new();
    let out = sb.ask_scenario("08_executor_model_failed.toml", &[]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let first = text.lines().next().unwrap_or_default();
    assert!(first.contains("· DEGRADED ·"), "{first}");
    assert!(!first.contains("SUCCESS"), "{first}");
}

//! `diagraph export --format markdown|mermaid|json` and `diagraph
//! compare` on runs the binary stored: what each format must hold, the
//! compare JSON's shape (DESIGN.md §8), and one-line errors.

use crate::sandbox::{Sandbox, assert_one_line_error, stderr};
use serde_json::Value;

/// Runs a shipped scenario and returns its run id.
fn run_scenario(sb: &Sandbox, file: &str) -> i64 {
    let out = sb.ask_scenario(file, &["--json"]);
    let v: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    v["run_id"].as_i64().unwrap()
}

fn export(sb: &Sandbox, run: i64, format: &str) -> String {
    let out = sb
        .cmd()
        .args(["export", &run.to_string(), "--format", format])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn markdown_holds_question_answer_verdicts_route_and_citations() {
    let sb = Sandbox::new();
    let run = run_scenario(&sb, "01_pass.toml");
    let md = export(&sb, run, "markdown");
    let trace: Value = serde_json::from_str(&export(&sb, run, "json")).unwrap();
    for needle in [
        format!("# diagraph run {run}"),
        "**Question:**".into(),
        "## Answer".into(),
        "## Verdicts".into(),
        "| model verdict | ceiling | effective verdict |".into(),
        "## Route".into(),
        "START → planner → executor → gatekeeper".into(),
        "## Citations".into(),
        "| claim | tool | invocation | raw_path | excerpt | check |".into(),
    ] {
        assert!(md.contains(&needle), "{needle} missing:\n{md}");
    }
    // Every checked binding is a row, with its invocation id and path.
    let bindings = trace["run"]["gatekeeperResult"]["checked_bindings"]
        .as_array()
        .unwrap();
    assert!(!bindings.is_empty());
    for b in bindings {
        let id = b["source_invocation_id"].as_i64().unwrap().to_string();
        let path = format!("`{}`", b["raw_path"].as_str().unwrap());
        assert!(
            md.lines()
                .any(|l| l.starts_with('|') && l.contains(&id) && l.contains(&path)),
            "no citation row for {id} {path}:\n{md}"
        );
    }
    assert!(md.contains("| PASS |"), "{md}");
}

#[test]
fn json_is_the_trace_projection_and_mermaid_marks_the_path() {
    let sb = Sandbox::new();
    let run = run_scenario(&sb, "13_gatekeeper_wrong_path.toml");
    let trace_out = sb
        .cmd()
        .args(["trace", &run.to_string(), "--json"])
        .output()
        .unwrap();
    assert_eq!(
        export(&sb, run, "json"),
        String::from_utf8(trace_out.stdout).unwrap()
    );
    let mermaid = export(&sb, run, "mermaid");
    assert!(mermaid.starts_with("flowchart TD\n"), "{mermaid}");
    assert!(mermaid.contains("classDef visited"), "{mermaid}");
    let class = mermaid
        .lines()
        .find(|l| l.trim_start().starts_with("class ") && l.ends_with(" visited"))
        .unwrap();
    for node in [
        "START",
        "planner",
        "executor",
        "gatekeeper",
        "fallback",
        "END",
    ] {
        assert!(class.contains(node), "{node} not marked: {class}");
    }
    assert!(!class.contains("composer"), "{class}");
    // The marked links are the rows of the path: START->planner is row 0.
    let links = mermaid
        .lines()
        .find(|l| l.trim_start().starts_with("linkStyle "))
        .unwrap();
    assert!(links.trim_start().starts_with("linkStyle 0,"), "{links}");
}

#[test]
fn compare_puts_two_runs_side_by_side() {
    let sb = Sandbox::new();
    let a = run_scenario(&sb, "01_pass.toml");
    let b = run_scenario(&sb, "16_gatekeeper_low_confid_capped.toml");
    let out = sb
        .cmd()
        .args(["compare", &a.to_string(), &b.to_string(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["a"]["run_id"], a);
    assert_eq!(v["b"]["run_id"], b);
    for key in ["route", "verdicts", "claims", "bindings", "usage"] {
        assert!(v[key].is_object(), "{key}: {v}");
    }
    assert_eq!(v["route"]["a"][0], "START");
    assert!(v["route"]["same"].is_boolean());
    assert_eq!(v["verdicts"]["a"]["effective_verdict"], "PASS");
    assert_eq!(v["verdicts"]["b"]["effective_verdict"], "LOW_CONFID");
    for k in ["only_a", "only_b", "both"] {
        assert!(v["claims"][k].is_array(), "{k}");
    }
    assert!(v["bindings"]["a"].as_array().is_some_and(|b| !b.is_empty()));
    assert!(v["usage"]["a"]["tokens"].is_number());

    let text = sb
        .cmd()
        .args(["compare", &a.to_string(), &b.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("verdicts") && text.contains("route"),
        "{text}"
    );
    let effective = text.lines().find(|l| l.contains("effective")).unwrap();
    assert!(effective.starts_with('≠'), "{effective}");
    assert!(effective.contains("PASS") && effective.contains("LOW_CONFID"));

    // The same run twice: nothing differs in route or verdicts.
    let same = sb
        .cmd()
        .args(["compare", &a.to_string(), &a.to_string(), "--json"])
        .output()
        .unwrap();
    let same: Value = serde_json::from_slice(&same.stdout).unwrap();
    assert_eq!(same["route"]["same"], true);
    assert_eq!(same["claims"]["only_a"], Value::Array(vec![]));
}

#[test]
fn unknown_runs_and_formats_are_one_line_errors() {
    let sb = Sandbox::new();
    let a = run_scenario(&sb, "01_pass.toml");
    let out = sb
        .cmd()
        .args(["compare", &a.to_string(), "999"])
        .output()
        .unwrap();
    assert_one_line_error(&out, "999");
    assert_eq!(out.status.code(), Some(2));
    let out = sb
        .cmd()
        .args(["export", "999", "--format", "markdown"])
        .output()
        .unwrap();
    assert_one_line_error(&out, "999");
    let out = sb
        .cmd()
        .args(["export", &a.to_string(), "--format", "pdf"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("markdown"), "{}", stderr(&out));
}

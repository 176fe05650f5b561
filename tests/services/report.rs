//! `diagraph export --format markdown|mermaid|json` and `diagraph
//! compare` on runs the binary stored: what each format must hold, the
//! compare JSON's shape (DESIGN.md §8), and one-line errors.

use crate::helpers::{repo, shop_pack_dir};
use crate::sandbox::{Sandbox, assert_one_line_error, stderr};
use serde_json::Value;

const INVOCATION_OWNED: &str = "binding.invocation_owned";

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

/// A run whose hypothesis cites the alert it was given (passes) and whose
/// recommended action cites an invocation the run never made (fails
/// `binding.invocation_owned`): shipped scenario 52 with a hypothesis
/// added, written into the sandbox.
fn run_with_unverified_bindings(sb: &Sandbox) -> i64 {
    let shipped = std::fs::read_to_string(repo(
        "fixtures/scenarios/52_gatekeeper_fabricated_action_binding.toml",
    ))
    .unwrap();
    let hypothesis = r#""hypotheses": [{"hypothesis_text": "CPU saturation slows payment requests", "basis": "the alert", "needed_evidence": [], "evidence_bindings": [{"tool_name": "query_metrics", "source_invocation_id": {{invocation:1}}, "raw_path": "$.alerts[0]", "evidence_excerpt": "alertname=HighCPUUsage service=payment-service severity=critical state=firing value=92"}]}]"#;
    assert!(shipped.contains(r#""hypotheses": []"#));
    let scenario = shipped
        .replace(
            r#"pack = "../packs/shop""#,
            &format!("pack = {:?}", shop_pack_dir().display().to_string()),
        )
        .replace(r#""hypotheses": []"#, hypothesis);
    let path = sb.path("unverified.toml");
    std::fs::write(&path, scenario).unwrap();
    let out = sb
        .cmd()
        .arg("ask")
        .arg("--scenario")
        .arg(&path)
        .arg("--json")
        .output()
        .unwrap();
    let v: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    v["run_id"].as_i64().unwrap()
}

#[test]
fn unverified_bindings_are_exported_apart_from_the_citations() {
    let sb = Sandbox::new();
    let run = run_with_unverified_bindings(&sb);
    // The JSON export (the Run Trace) carries them, checked, with the rule.
    let trace: Value = serde_json::from_str(&export(&sb, run, "json")).unwrap();
    let g = &trace["run"]["gatekeeperResult"];
    let unverified = g["unverified_bindings"].as_array().unwrap();
    let ids: Vec<&str> = unverified
        .iter()
        .map(|b| b["claim_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["hypotheses[0]", "recommended_actions[0]"], "{g}");
    assert_eq!(unverified[1]["failed_rule"], INVOCATION_OWNED);
    let checked = g["checked_bindings"].as_array().unwrap();
    assert!(checked.iter().all(|b| b["claim_id"] == "claim-1"), "{g}");

    let md = export(&sb, run, "markdown");
    let citations = md.find("## Citations").expect(&md);
    let heading = md
        .find("## Unverified bindings (hypotheses/actions)")
        .unwrap_or_else(|| panic!("{md}"));
    assert!(citations < heading, "{md}");
    // Neither the citations nor the gatekeeper's verified count hold them
    // (the gatekeeper's errors above may name the failing one).
    let (above, below) = md.split_at(heading);
    let cited = &above[citations..];
    assert!(!cited.contains("hypotheses\\[0\\]"), "{md}");
    assert!(!cited.contains("recommended\\_actions"), "{md}");
    let verified = checked.iter().filter(|b| b["status"] == "pass").count();
    assert!(
        above.contains(&format!("{verified}/{} bindings pass", checked.len())),
        "{md}"
    );
    assert!(
        above.contains("Unverified (hypotheses/actions): 1/2 bindings pass"),
        "{md}"
    );
    assert!(below.contains("1/2 pass"), "{md}");
    let row = |id: &str| {
        below
            .lines()
            .find(|l| l.starts_with('|') && l.contains(id))
            .unwrap_or_else(|| panic!("no row for {id}:\n{md}"))
    };
    assert!(row("hypotheses\\[0\\]").ends_with("| PASS |"), "{md}");
    let action = row("recommended\\_actions\\[0\\]");
    assert!(
        action.ends_with(&format!("| FAIL `{INVOCATION_OWNED}` |")),
        "{action}"
    );
    assert!(action.contains("| 99999 |"), "{action}");
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
fn compare_counts_unverified_bindings_side_by_side() {
    let sb = Sandbox::new();
    let a = run_with_unverified_bindings(&sb);
    let b = run_scenario(&sb, "01_pass.toml");
    let out = sb
        .cmd()
        .args(["compare", &a.to_string(), &b.to_string(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let u = &v["unverified_bindings"];
    assert_eq!(
        (u["a"]["pass"].as_u64(), u["a"]["fail"].as_u64()),
        (Some(1), Some(1)),
        "{u}"
    );
    assert_eq!(
        (u["b"]["pass"].as_u64(), u["b"]["fail"].as_u64()),
        (Some(0), Some(0)),
        "{u}"
    );
    assert_eq!(u["a"]["bindings"][1]["failed_rule"], INVOCATION_OWNED);
    // Not in the claims' bindings, nor among the claims.
    let a_ids: Vec<&str> = v["bindings"]["a"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["claim_id"].as_str().unwrap())
        .collect();
    assert_eq!(a_ids, ["claim-1"], "{v}");
    let claims = v["claims"].to_string();
    assert!(!claims.contains("CPU saturation"), "{claims}");
    assert!(!claims.contains("restart payment-service"), "{claims}");

    let text = sb
        .cmd()
        .args(["compare", &a.to_string(), &b.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("unverified bindings (hypotheses/actions)"),
        "{text}"
    );
    let counts = text.lines().find(|l| l.contains("pass/fail")).expect(&text);
    assert!(counts.starts_with('≠'), "{counts}");
    let (left, right) = counts.split_once('│').unwrap();
    assert!(left.contains("1 pass / 1 fail"), "{counts}");
    assert!(right.contains("0 pass / 0 fail"), "{counts}");
    // Each says whether it passed; a failing one's rule has its own row.
    let lines: Vec<&str> = text.lines().collect();
    let action = lines
        .iter()
        .position(|l| l.contains("unverified") && l.contains("FAIL recommended_actions[0]"))
        .expect(&text);
    assert!(
        lines[action + 1].contains("failed rule") && lines[action + 1].contains(INVOCATION_OWNED),
        "{text}"
    );
    assert!(
        lines.iter().any(|l| l.contains("PASS hypotheses[0]")),
        "{text}"
    );

    // Runs without any keep their comparison as it was.
    let plain = sb
        .cmd()
        .args(["compare", &b.to_string(), &b.to_string()])
        .output()
        .unwrap();
    let plain = String::from_utf8(plain.stdout).unwrap();
    assert!(!plain.contains("unverified"), "{plain}");
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

/// `rerun` + `compare --fail-on-diff` as a regression check: a run and
/// its exact rerun compare equal (their invocations are matched by tool,
/// arguments and call order, not by id); a run that differs fails it.
#[test]
fn a_run_and_its_rerun_compare_equal() {
    let sb = Sandbox::new();
    let a = run_scenario(&sb, "01_pass.toml");
    let rerun = sb
        .cmd()
        .args(["rerun", &a.to_string(), "--json"])
        .output()
        .unwrap();
    assert_eq!(rerun.status.code(), Some(0), "{}", stderr(&rerun));
    let r: Value = serde_json::from_slice(&rerun.stdout).unwrap();
    let r = r["run_id"].as_i64().unwrap();
    let (a, r) = (a.to_string(), r.to_string());

    let out = sb
        .cmd()
        .args(["compare", &a, &r, "--json", "--fail-on-diff"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["differs"], Value::Array(vec![]), "{v}");
    assert_eq!(v["bindings"]["same"], true);
    assert_eq!(v["verdicts"]["same"], true);
    // The invocation ids are the rerun's own; the calls are the same.
    let (ba, bb) = (&v["bindings"]["a"][0], &v["bindings"]["b"][0]);
    assert_ne!(ba["invocation_id"], bb["invocation_id"]);
    assert_eq!(ba["call"], bb["call"]);
    assert!(ba["call"]["tool"].is_string(), "{ba}");
    assert_eq!(v["a"]["gatekeeper_status"], "pass");
    assert_eq!(v["a"]["reason_codes"], v["b"]["reason_codes"]);

    // As text, only the lines that are the runs' own (ids, the replaying
    // model, time) differ.
    let text = sb.cmd().args(["compare", &a, &r]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    let differing: Vec<&str> = text.lines().filter(|l| l.starts_with('≠')).collect();
    for line in &differing {
        let label = line.trim_start_matches('≠').trim_start();
        assert!(
            ["run ", "model ", "duration"]
                .iter()
                .any(|l| label.starts_with(l)),
            "{line}\n{text}"
        );
    }
    assert!(
        text.contains("gatekeeper") && text.contains("· start"),
        "{text}"
    );

    // A run that reaches another verdict fails the check, naming what.
    let c = run_scenario(&sb, "16_gatekeeper_low_confid_capped.toml").to_string();
    let out = sb
        .cmd()
        .args(["compare", &a, &c, "--fail-on-diff"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!out.stdout.is_empty());
    let err = stderr(&out);
    assert!(
        err.contains("differ in") && err.contains("verdicts"),
        "{err}"
    );
    // Without the flag, a difference is not an error.
    let out = sb.cmd().args(["compare", &a, &c]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
}

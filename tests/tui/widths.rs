//! Widths are counted in columns, not chars: a wide (CJK) label is cut to
//! fit and leaves the key hints on screen, and long identifiers in the
//! tables keep both of their distinctive ends.

use crate::fixtures::{RunBuilder, binding, buffer_text, live_state, pass_run, render};
use diagraph::tui::state::Pane;
use diagraph::vocab::contracts::Verdict;
use diagraph::vocab::graph::{NodeId, Outcome};

#[test]
fn wide_labels_do_not_push_the_key_hints_off() {
    let mut state = live_state(&pass_run(1));
    // Two columns per character: counted in chars, this label would
    // take twice the room it was given.
    state.model_label = "模型".repeat(40);
    state.notice = Some("通知".repeat(10));
    let text = buffer_text(render(&state, 80, 24).backend().buffer());
    let bar = text.lines().last().unwrap_or_default();
    assert!(bar.contains("q quit"), "{bar}");
    assert!(bar.contains('…'), "{bar}");
}

#[test]
fn long_identifiers_keep_both_ends() {
    let mut b = RunBuilder::new(1, "q");
    b.enter(NodeId::Executor, None);
    let inv = b.tool("query_logs_of_the_whole_fleet", "svc", "text", 1);
    b.finish(
        NodeId::Executor,
        Outcome::Completed,
        "completed",
        NodeId::Gatekeeper,
    );
    b.enter(NodeId::Gatekeeper, Some("completed"));
    let mut bad = binding("claim-1", "t", "query_logs", inv, "$.logs[12345]", false);
    bad.failed_rule = Some("binding.invocation_owned".into());
    b.gatekeeper("fail", "reject", vec![bad]);
    b.verdict(None, Some(Verdict::Reject), None);
    let events = b.done("a", None);

    let mut state = live_state(&events);
    state.focus = Pane::Bindings;
    let text = buffer_text(render(&state, 100, 30).backend().buffer());
    // 16 columns on a narrow screen: the rule's distinctive end stays.
    assert!(text.contains("binding.…n_owned"), "{text}");
    assert!(text.contains("$.log…2345]"), "{text}");

    state.focus = Pane::Tools;
    let text = buffer_text(render(&state, 100, 30).backend().buffer());
    assert!(text.contains("query_lo…e_fleet"), "{text}");
}

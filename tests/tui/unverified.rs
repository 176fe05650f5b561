//! The bindings of the Executor's hypotheses and recommended actions
//! (`GatekeeperResult::unverified_bindings`): drawn in a group of their
//! own under the claims' bindings, with pass/fail and the rule a failing
//! one broke, and never counted with the verified bindings.

use crate::fixtures::{buffer_text, ch, find_text, key, live_state, render, unverified_run};
use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use diagraph::tui::state::{AppState, Pane, Popup};
use diagraph::tui::theme::Role;
use diagraph::tui::update::{Msg, update};

const RULE: &str = "binding.positive_needs_positive_evidence";
const HEADING: &str = "unverified (hypotheses/actions)";

fn bindings_state(w: u16, h: u16) -> AppState {
    let mut state = live_state(&unverified_run(9));
    update(&mut state, Msg::Resize(w, h));
    state.focus = Pane::Bindings;
    state.table_pane = Pane::Bindings;
    state
}

#[test]
fn unverified_bindings_are_a_group_of_their_own_at_120x40() {
    let state = bindings_state(120, 40);
    let term = render(&state, 120, 40);
    insta::assert_snapshot!("unverified_bindings_120x40", term.backend());
    let buf = term.backend().buffer();
    let text = buffer_text(buf);
    // The verified count is the claims' alone; the unverified ones are
    // counted apart, in the title, the heading and the verdict panel.
    assert!(
        text.contains("[Gatekeeper bindings (2) +2 unverified ✗1]"),
        "{text}"
    );
    assert!(text.contains(&format!("── {HEADING}: 1/2 pass")), "{text}");
    assert!(text.contains("bindings   2/2 pass"), "{text}");
    assert!(
        text.contains("unverified 1/2 pass (hypotheses/actions)"),
        "{text}"
    );
    // The heading is below every claim's binding and above every
    // hypothesis' or action's.
    let row = |needle: &str| {
        find_text(buf, needle)
            .unwrap_or_else(|| panic!("{needle}:\n{text}"))
            .1
    };
    let heading = row(HEADING);
    assert!(row("claim-1") < heading && row("claim-2") < heading);
    assert!(row("hypotheses[0]") > heading && row("recommended_actions[0]") > heading);
    // Each says whether it passed, and the failing one its rule, whole.
    let line = |y: u16| {
        text.lines()
            .nth(usize::from(y))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line(row("hypotheses[0]")).contains("PASS"), "{text}");
    let failed = line(row("recommended_actions[0]"));
    assert!(failed.contains("FAIL") && failed.contains(RULE), "{failed}");
    let (x, y) = find_text(buf, RULE).unwrap();
    assert_eq!(
        buf[(x, y)].style().bg,
        state.theme.style(Role::BindingFailed).bg
    );
    // A passing unverified binding is not drawn as a verified one.
    let (x, y) = find_text(buf, "hypotheses[0]").unwrap();
    assert_ne!(
        buf[(x, y)].style().fg,
        state.theme.style(Role::BindingPass).fg
    );
}

#[test]
fn the_rule_of_a_failing_unverified_binding_is_whole_at_120_columns_and_more() {
    for (w, h) in [(120, 40), (160, 40), (200, 60)] {
        let mut state = bindings_state(w, h);
        // The last row in view (the wide layout's pane is short).
        update(&mut state, ch('G'));
        let text = buffer_text(render(&state, w, h).backend().buffer());
        for needle in [RULE, "recommended_actions[0]", "hypotheses[0]", HEADING] {
            assert!(text.contains(needle), "{needle} cut at {w}x{h}:\n{text}");
        }
    }
    // At 80 columns the group and its heading are there all the same.
    let state = bindings_state(80, 24);
    let text = buffer_text(render(&state, 80, 24).backend().buffer());
    assert!(text.contains(HEADING), "{text}");
}

#[test]
fn keys_and_clicks_select_unverified_bindings_and_never_the_heading() {
    let mut state = bindings_state(120, 40);
    // j walks the claims' bindings and then the unverified ones.
    for want in [1, 2, 3, 3] {
        update(&mut state, ch('j'));
        assert_eq!(state.sel.bindings, want);
    }
    update(&mut state, key(KeyCode::Enter));
    match &state.popup {
        Some(Popup::Detail { title, lines, .. }) => {
            assert!(
                title.contains(&format!("{HEADING} binding recommended_actions[0]")),
                "{title}"
            );
            let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
            assert!(body.contains(RULE), "{body}");
        }
        other => panic!("{other:?}"),
    }
    update(&mut state, key(KeyCode::Esc));
    // A claim's binding opens as one.
    update(&mut state, ch('g'));
    update(&mut state, key(KeyCode::Enter));
    match &state.popup {
        Some(Popup::Detail { title, .. }) => {
            assert!(title.starts_with("binding claim-1"), "{title}")
        }
        other => panic!("{other:?}"),
    }
    update(&mut state, key(KeyCode::Esc));
    // A click on the heading selects nothing; one on a row below it
    // selects that binding.
    let click = |x: u16, y: u16| {
        Msg::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: x,
            row: y,
            modifiers: KeyModifiers::NONE,
        })
    };
    let buf = render(&state, 120, 40).backend().buffer().clone();
    let (x, y) = find_text(&buf, HEADING).unwrap();
    update(&mut state, click(x, y));
    assert_eq!(state.sel.bindings, 0);
    let (x, y) = find_text(&buf, "hypotheses[0]").unwrap();
    update(&mut state, click(x, y));
    assert_eq!(state.sel.bindings, 2);
}

#[test]
fn the_verdict_detail_lists_them_in_a_section_of_their_own() {
    let mut state = live_state(&unverified_run(9));
    update(&mut state, Msg::Resize(120, 40));
    state.focus = Pane::Verdict;
    update(&mut state, key(KeyCode::Enter));
    let term = render(&state, 120, 40);
    insta::assert_snapshot!("unverified_verdict_detail_120x40", term.backend());
    let Some(Popup::Detail { lines, .. }) = &state.popup else {
        panic!("{:?}", state.popup)
    };
    let body: Vec<String> = lines.iter().map(ToString::to_string).collect();
    let at = |needle: &str| {
        body.iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle}:\n{}", body.join("\n")))
    };
    let section = at(&format!("── {HEADING}"));
    // The Gatekeeper's own count stays the claims' (2/2), above it.
    assert!(
        at("bindings      2/2 pass") < section,
        "{}",
        body.join("\n")
    );
    assert!(body[section..].iter().any(|l| l.contains("1/2 pass")));
    assert!(
        body[section..].iter().any(|l| l.contains("failed")
            && l.contains("recommended_actions[0]")
            && l.contains(RULE)),
        "{}",
        body.join("\n")
    );
    assert!(
        body[section..]
            .iter()
            .any(|l| l.contains("pass") && l.contains("hypotheses[0]")),
        "{}",
        body.join("\n")
    );
}

#[test]
fn the_compare_view_counts_them_side_by_side_apart_from_the_bindings() {
    use diagraph::vocab::events::EventKind;
    use std::sync::Arc;
    let events = unverified_run(9);
    let result = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::GatekeeperChecked { result, .. } => Some(result.as_ref().clone()),
            _ => None,
        })
        .expect("the fixture's gatekeeper result");
    let mut a = crate::workbench::stored_trace(&events);
    a.run.gatekeeper_result = Some(result);
    let b = crate::workbench::stored_trace(&events);
    let mut state = live_state(&events);
    update(&mut state, Msg::Resize(120, 40));
    update(
        &mut state,
        Msg::CompareLoaded {
            a: 9,
            b: 1,
            result: Ok((Arc::new(a), Arc::new(b))),
        },
    );
    let Some(Popup::Detail { lines, .. }) = &state.popup else {
        panic!("{:?}", state.popup)
    };
    let body: Vec<String> = lines.iter().map(ToString::to_string).collect();
    let text = body.join("\n");
    let heading = body
        .iter()
        .position(|l| l.contains("unverified bindings (hypotheses/actions)"))
        .unwrap_or_else(|| panic!("{text}"));
    let counts = &body[heading + 1];
    let (left, right) = counts.split_once('│').expect(&text);
    assert!(
        left.contains("pass/fail") && left.contains("1 pass / 1 fail"),
        "{counts}"
    );
    assert!(right.contains("0 pass / 0 fail"), "{counts}");
    // The failing one's rule, on a row of its own, survives the column's
    // width.
    let action = body
        .iter()
        .position(|l| l.contains("FAIL recommended_actions[0]"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(action > heading, "{text}");
    assert!(
        body[action + 1].contains("failed rule") && body[action + 1].contains(RULE),
        "{text}"
    );
    assert!(
        body[heading..]
            .iter()
            .any(|l| l.contains("PASS hypotheses[0]")),
        "{text}"
    );
    // The claims' bindings are theirs alone.
    let bindings = body
        .iter()
        .position(|l| l == "bindings")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        body[bindings..heading]
            .iter()
            .all(|l| !l.contains("hypotheses") && !l.contains("recommended")),
        "{text}"
    );
}

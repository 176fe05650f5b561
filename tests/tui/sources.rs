//! The status bar names the kinds of source the run in view read, from
//! the backends its tools recorded.

use crate::fixtures::{buffer_text, live_state, pass_run, render};
use diagraph::tui::view::chrome::sources_label;
use diagraph::vocab::events::EventKind;
use diagraph::vocab::run::RunSources;
use std::sync::Arc;

fn sources(backends: &[(&str, &str)]) -> RunSources {
    RunSources {
        tools: backends
            .iter()
            .map(|(t, b)| (t.to_string(), b.to_string()))
            .collect(),
        ..RunSources::default()
    }
}

#[test]
fn the_label_names_each_kind_of_source_once_in_a_fixed_order() {
    assert_eq!(sources_label(&RunSources::default()), None);
    let s = sources(&[
        ("query_logs", "loki:http://loki:3100"),
        ("query_metrics", "prometheus:http://prom:9090"),
        ("lookup_knowledge", "pack:/packs/shop"),
        ("read_skill", "pack:/packs/shop"),
        ("wiki__search", "mcp:wiki@http://wiki"),
        ("clock", "builtin"),
    ]);
    assert_eq!(
        sources_label(&s).as_deref(),
        Some("pack, Prometheus, Loki, MCP")
    );
    let s = sources(&[
        ("query_logs", "elasticsearch:http://es:9200"),
        ("query_metrics", "files:/var/log/*.log"),
        ("x", "weird\u{1b}[2J:thing"),
    ]);
    assert_eq!(sources_label(&s).as_deref(), Some("files, ES, weird␛[2J"));
}

#[test]
fn the_status_bar_shows_the_sources_of_the_run_in_view() {
    let mut events = pass_run(7);
    if let EventKind::RunStarted { sources: s, .. } = &mut events[0].kind {
        *s = Arc::new(sources(&[
            ("query_logs", "files:/var/log/app/*.log"),
            ("query_metrics", "prometheus:http://prom:9090"),
            ("lookup_knowledge", "pack:/packs/shop"),
        ]));
    }
    let state = live_state(&events);
    let text = buffer_text(render(&state, 160, 40).backend().buffer());
    let bar = text.lines().last().unwrap();
    assert!(
        bar.contains("│ sources: pack, Prometheus, files │ model:"),
        "{bar}"
    );
    // A run that recorded no sources shows no label.
    let state = live_state(&pass_run(8));
    let text = buffer_text(render(&state, 160, 40).backend().buffer());
    assert!(!text.lines().last().unwrap().contains("sources:"));
}

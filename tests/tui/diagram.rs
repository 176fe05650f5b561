//! The graph pane's diagram: laid out from the edge table, drawn with a
//! run's state, never outside its area. Snapshots don't carry colour, so
//! the styles that carry meaning are asserted cell by cell, and every
//! theme is checked to tell the states apart without colour.

use crate::fixtures::{RunBuilder, live_state, pass_run, reject_run, render};
use diagraph::engine::graph::{EDGES, Edge, Guard, On};
use diagraph::tui::state::{AppState, Pane};
use diagraph::tui::theme::{Role, Theme};
use diagraph::tui::view::diagram::{Diagram, Ink, Live, Names, layout, paint, shipped};
use diagraph::tui::view::graph::GraphPane;
use diagraph::vocab::events::{EngineEvent, EventKind};
use diagraph::vocab::graph::{NodeId, Outcome, ReasonCode};
use proptest::prelude::*;
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::Widget;

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 60)];

/// The verifier finds a critical gap, evidence_retry sends the run back to
/// the planner, the verifier fails once technically, the composer answers.
fn evidence_retry_run(run_id: i64) -> Vec<EngineEvent> {
    use NodeId::*;
    let mut b = RunBuilder::new(run_id, "why is checkout slow?");
    let to_verifier = |b: &mut RunBuilder| {
        b.node(Planner, Outcome::Completed, "completed", Executor);
        b.node(Executor, Outcome::Completed, "completed", Gatekeeper);
        b.node(Gatekeeper, Outcome::Pass, "gatekeeper_pass", VerifiedInput);
        b.node(VerifiedInput, Outcome::Completed, "completed", Verifier);
    };
    to_verifier(&mut b);
    b.node(
        Verifier,
        Outcome::Completed,
        "verifier_low_confid_gap",
        EvidenceRetry,
    );
    b.node(
        EvidenceRetry,
        Outcome::Completed,
        "evidence_gap_retry",
        Planner,
    );
    to_verifier(&mut b);
    b.node(
        Verifier,
        Outcome::InvalidOutput,
        "verifier_technical_retry",
        Verifier,
    );
    b.node(Verifier, Outcome::Completed, "completed", Composer);
    b.node(Composer, Outcome::Completed, "composer_completed", End);
    b.done("The pool is exhausted (invocation 1).", None)
}

/// A live step-mode run waiting at the gate before the first `node`.
fn stepping_at(events: &[EngineEvent], node: NodeId) -> AppState {
    let k = events
        .iter()
        .position(|e| matches!(e.kind, EventKind::NodeEntered { node: n, .. } if n == node))
        .unwrap();
    let mut s = live_state(&events[..=k]);
    s.shown.stepping = true;
    s
}

fn states() -> Vec<(&'static str, AppState)> {
    vec![
        ("before", live_state(&[])),
        ("step", stepping_at(&pass_run(1), NodeId::Gatekeeper)),
        ("evidence_retry", live_state(&evidence_retry_run(2))),
        ("fallback", live_state(&reject_run(3))),
    ]
}

/// The graph pane's text at a terminal size.
fn pane_text(state: &AppState, w: u16, h: u16) -> String {
    let term = render(state, w, h);
    let buf = term.backend().buffer();
    let r = graph_area(w, h);
    (r.top()..r.bottom())
        .map(|y| {
            (r.left()..r.right())
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn graph_area(w: u16, h: u16) -> Rect {
    diagraph::tui::view::layout(Rect::new(0, 0, w, h), Pane::Tools).graph
}

#[test]
fn snapshots_at_three_sizes() {
    for (name, state) in states() {
        for (w, h) in SIZES {
            insta::assert_snapshot!(format!("diagram_{name}_{w}x{h}"), pane_text(&state, w, h));
        }
    }
}

#[test]
fn small_panes_fall_back_to_the_list_and_say_so() {
    let state = live_state(&reject_run(3));
    let text = pane_text(&state, 80, 24);
    assert!(
        text.starts_with("┏ Graph · list · last: gatekeeper_reject"),
        "{text}"
    );
    assert!(
        text.contains("● gate     ×1  →vinput →fallback·1"),
        "{text}"
    );
    // With room in the title it says why.
    let mut buf = Buffer::empty(Rect::new(0, 0, 70, 11));
    GraphPane {
        view: live_state(&[]).view(),
        theme: &Theme::dark(),
        focused: false,
        scroll: 0,
        waiting: false,
    }
    .render(buf.area, &mut buf);
    let d = shipped(Names::Short).unwrap();
    let title: String = (0..70).map(|x| buf[(x, 0)].symbol()).collect();
    let want = format!("list: the diagram needs {}×{}", d.width + 2, d.height + 2);
    assert!(title.contains(&want), "{title}");
    // Larger terminals show the diagram: full names at 200x60, short at 120x40.
    assert!(pane_text(&state, 200, 60).contains("│evidence_retry│"));
    assert!(pane_text(&state, 120, 40).contains("│eretry│"));
}

/// Where the full diagram sits in the 200x60 screen, and the screen.
struct Drawn {
    d: &'static Diagram,
    buf: Buffer,
    origin: (u16, u16),
    theme: Theme,
}

impl Drawn {
    fn new(state: &AppState) -> Drawn {
        let term = render(state, 200, 60);
        let d = shipped(Names::Full).unwrap();
        let inner = ratatui::widgets::Block::bordered().inner(graph_area(200, 60));
        let origin = (inner.x + (inner.width - d.width) / 2, inner.y);
        Drawn {
            d,
            buf: term.backend().buffer().clone(),
            origin,
            theme: state.theme.clone(),
        }
    }

    fn cell(&self, x: u16, y: u16) -> &Cell {
        &self.buf[(self.origin.0 + x, self.origin.1 + y)]
    }

    /// The top-left corner of a node's box.
    fn corner(&self, node: NodeId) -> &Cell {
        let b = self.d.boxes.iter().find(|b| b.node == node).unwrap();
        self.cell(b.x, b.y)
    }

    /// The first cell of a node's label.
    fn label(&self, node: NodeId) -> &Cell {
        let b = self.d.boxes.iter().find(|b| b.node == node).unwrap();
        let x = b.x + 1 + (b.w - 2 - b.label.len() as u16) / 2;
        self.cell(x, b.y + 1)
    }

    /// The straight cells of this edge's line (shared bus cells included,
    /// crossings and corners left out).
    fn line(&self, from: NodeId, to: NodeId) -> Vec<&Cell> {
        let link = self.d.link(from, to).unwrap();
        self.d
            .ink
            .iter()
            .filter(|(_, _, ink)| match ink {
                Ink::Line { arms } => {
                    let straight = (arms[0].is_empty() && arms[1].is_empty())
                        || (arms[2].is_empty() && arms[3].is_empty());
                    straight && arms.iter().flatten().any(|l| *l == link)
                }
                _ => false,
            })
            .map(|(x, y, _)| self.cell(*x, *y))
            .collect()
    }

    /// The first cell of `needle` inside the diagram.
    fn text_at(&self, needle: &str) -> Option<&Cell> {
        (0..self.d.height).find_map(|y| {
            let row: Vec<&str> = (0..self.d.width)
                .map(|x| self.cell(x, y).symbol())
                .collect();
            let first = needle.chars().next()?.to_string();
            (0..row.len()).find_map(|x| {
                let fits = row[x] == first
                    && needle
                        .chars()
                        .enumerate()
                        .all(|(i, c)| row.get(x + i).is_some_and(|s| *s == c.to_string()));
                fits.then(|| self.cell(x as u16, y))
            })
        })
    }

    fn style(&self, role: Role) -> Style {
        self.theme.style(role)
    }
}

fn same_colours(cell: &Cell, style: Style) -> bool {
    style.fg.is_none_or(|fg| cell.fg == fg) && style.bg.is_none_or(|bg| cell.bg == bg)
}

#[test]
fn step_mode_shows_the_current_node_and_the_edge_about_to_be_taken() {
    use NodeId::*;
    let d = Drawn::new(&stepping_at(&pass_run(1), Gatekeeper));
    let current = d.style(Role::NodeCurrent);
    assert_eq!(d.corner(Gatekeeper).symbol(), "╔");
    assert!(same_colours(d.corner(Gatekeeper), current));
    assert!(same_colours(d.label(Gatekeeper), current));
    assert!(d.label(Gatekeeper).modifier.contains(current.add_modifier));
    // The pending edge is dashed and in the pending style.
    let pending = d.line(Executor, Gatekeeper);
    assert!(!pending.is_empty());
    for c in &pending {
        assert!(["┅", "1"].contains(&c.symbol()), "{}", c.symbol());
        assert!(same_colours(c, d.style(Role::EdgePending)));
    }
    // Visited nodes are heavy boxes, unvisited ones light.
    assert_eq!(d.corner(Planner).symbol(), "┏");
    assert!(same_colours(d.corner(Planner), d.style(Role::NodeVisited)));
    assert_eq!(d.corner(Verifier).symbol(), "┌");
    assert!(same_colours(d.corner(Verifier), d.style(Role::NodeIdle)));
    // Taken edges are heavy with their count; idle ones light.
    let taken = d.line(Planner, Executor);
    assert!(taken.iter().any(|c| c.symbol() == "1"));
    for c in taken {
        assert!(["━", "1"].contains(&c.symbol()));
        assert!(same_colours(c, d.style(Role::EdgeTaken)));
    }
    for c in d.line(VerifiedInput, Verifier) {
        assert_eq!(c.symbol(), "─");
        assert!(same_colours(c, d.style(Role::EdgeIdle)));
    }
    // The last reason code labels the edge it belongs to.
    let label = d.text_at("completed").unwrap();
    assert!(same_colours(label, d.style(Role::EdgePending)));
}

#[test]
fn an_evidence_retry_run_marks_the_loop_and_the_retry() {
    use NodeId::*;
    let d = Drawn::new(&live_state(&evidence_retry_run(2)));
    let taken = d.style(Role::EdgeTaken);
    let back = d.line(EvidenceRetry, Planner);
    assert!(!back.is_empty());
    for c in back {
        assert!(["━", "┃", "┏", "┓", "┗", "┛", "1"].contains(&c.symbol()));
        assert!(same_colours(c, taken));
    }
    // The technical retry is counted on the verifier's border, visits too.
    let retry = d.text_at("↺1").unwrap();
    assert!(same_colours(retry, taken));
    assert!(d.text_at("×3").is_some(), "verifier entered three times");
    assert!(same_colours(
        d.text_at("composer_completed").unwrap(),
        taken
    ));
    // The untaken fallback path is idle, light, in the warning colour.
    let warning = d.style(Role::Warning).fg.unwrap();
    for c in d.line(Fallback, End) {
        assert_eq!(c.fg, warning);
        assert!(["─", "│"].contains(&c.symbol()));
    }
    assert_eq!(d.corner(Fallback).fg, warning);
    assert_eq!(d.corner(Fallback).symbol(), "┌");
}

#[test]
fn a_fallback_run_draws_its_path_in_the_warning_role() {
    use NodeId::*;
    let d = Drawn::new(&live_state(&reject_run(3)));
    let warning = d.style(Role::Warning).fg.unwrap();
    let bold = d.style(Role::EdgeTaken).add_modifier;
    let path: Vec<_> = d
        .line(Gatekeeper, Fallback)
        .into_iter()
        .chain(d.line(Fallback, End))
        .collect();
    assert!(!path.is_empty());
    for c in path {
        assert_eq!(c.fg, warning);
        assert!(c.modifier.contains(bold));
        assert!(
            ["━", "┃", "┏", "┓", "┗", "┛", "1"].contains(&c.symbol()),
            "{}",
            c.symbol()
        );
    }
    assert_eq!(d.corner(Fallback).symbol(), "┏");
    assert_eq!(d.corner(Fallback).fg, warning);
    assert_eq!(d.text_at("gatekeeper_reject").unwrap().fg, warning);
    // Edges of other nodes keep their own roles.
    assert!(same_colours(
        d.line(Planner, Executor)[0],
        d.style(Role::EdgeTaken)
    ));
}

#[test]
fn every_theme_tells_states_apart_without_colour() {
    use NodeId::*;
    for (name, _) in diagraph::tui::theme::BUILTIN {
        let mut step = stepping_at(&pass_run(1), Gatekeeper);
        step.theme = Theme::load(name).unwrap();
        let d = Drawn::new(&step);
        let mono = |c: &Cell| (c.symbol().to_string(), c.modifier);
        let nodes = [
            mono(d.corner(Gatekeeper)),
            mono(d.corner(Planner)),
            mono(d.corner(Verifier)),
        ];
        let edges = [
            mono(d.line(Executor, Gatekeeper).last().unwrap()),
            mono(d.line(Planner, Executor).last().unwrap()),
            mono(d.line(Verifier, Composer).last().unwrap()),
        ];
        for set in [nodes, edges] {
            assert_ne!(set[0], set[1], "{name}");
            assert_ne!(set[1], set[2], "{name}");
            assert_ne!(set[0], set[2], "{name}");
        }
        // The fallback path differs from other idle edges by colour in
        // every theme.
        let fb = d.line(Fallback, End)[0].fg;
        assert_ne!(fb, d.line(Verifier, Composer)[0].fg, "{name}");
    }
}

#[test]
fn the_layout_follows_the_table() {
    let shipped_text = layout(EDGES, Names::Full).unwrap().to_text();
    // A new edge appears without touching the view.
    let mut table = EDGES.to_vec();
    table.push(Edge {
        from: NodeId::Gatekeeper,
        on: On::Is(Outcome::Failed),
        guard: Guard::Always,
        to: NodeId::Planner,
        reason_code: Some(ReasonCode::Start),
    });
    let d = layout(&table, Names::Full).unwrap();
    assert_ne!(d.to_text(), shipped_text);
    let link = d.link(NodeId::Gatekeeper, NodeId::Planner).unwrap();
    let heads = d
        .ink
        .iter()
        .filter(|(_, _, i)| matches!(i, Ink::Head { links, .. } if links.contains(&link)))
        .count();
    assert_eq!(heads, 1, "the new edge ends in an arrowhead");
    // A retry added to the executor is marked on its box.
    let mut table = EDGES.to_vec();
    table.push(Edge {
        from: NodeId::Executor,
        on: On::TechnicalFailure,
        guard: Guard::RetryUnused(NodeId::Executor),
        to: NodeId::Executor,
        reason_code: Some(ReasonCode::Start),
    });
    let text = layout(&table, Names::Full).unwrap().to_text();
    assert_eq!(
        text.matches('↺').count(),
        shipped_text.matches('↺').count() + 1
    );
    // Without its edges a node disappears.
    let table: Vec<Edge> = EDGES
        .iter()
        .filter(|e| e.from != NodeId::Fallback && e.to != NodeId::Fallback)
        .copied()
        .collect();
    let text = layout(&table, Names::Full).unwrap().to_text();
    assert!(!text.contains("fallback") && shipped_text.contains("│fallback│"));
    assert!(layout(&[], Names::Full).is_err());
}

#[test]
fn the_shipped_table_has_the_flow_of_the_graph() {
    use NodeId::*;
    let d = shipped(Names::Full).unwrap();
    let row = |n: NodeId| {
        d.boxes
            .iter()
            .find(|b| b.node == n)
            .map(|b| (b.y, b.x))
            .unwrap()
    };
    let main = [
        Start,
        Planner,
        Executor,
        Gatekeeper,
        VerifiedInput,
        Verifier,
        Composer,
        End,
    ];
    for pair in main.windows(2) {
        let (a, b) = (row(pair[0]), row(pair[1]));
        assert_eq!(a.0, b.0, "{:?} and {:?} on one line", pair[0], pair[1]);
        assert!(a.1 < b.1, "{:?} before {:?}", pair[0], pair[1]);
    }
    for side in [EvidenceRetry, Fallback] {
        assert!(
            row(side).0 > row(Planner).0,
            "{side:?} beside the main line"
        );
    }
    assert!(row(EvidenceRetry).1 < row(Fallback).1);
    // Every edge of the table is drawn: technical retries as markers,
    // the rest ending in an arrowhead.
    for e in EDGES {
        let link = d.link(e.from, e.to).unwrap();
        let drawn = d.ink.iter().any(|(_, _, i)| match i {
            Ink::Head { links, .. } => links.contains(&link),
            _ => false,
        });
        assert_eq!(drawn, e.from != e.to, "{e}");
    }
    assert_eq!(d.to_text().matches('↺').count(), 3);
}

#[test]
fn graph_text_prints_the_pane_diagram_and_graph_keeps_mermaid() {
    let bin = env!("CARGO_BIN_EXE_diagraph");
    let out = std::process::Command::new(bin)
        .args(["graph", "--text"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text, shipped(Names::Full).unwrap().to_text());
    assert!(text.contains("▶verified_input├"));
    let out = std::process::Command::new(bin)
        .arg("graph")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("flowchart TD"));
}

#[test]
fn the_readme_shows_the_current_diagram() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let drawn = shipped(Names::Full).unwrap().to_text();
    assert!(
        readme.contains(&drawn),
        "README.md's graph is stale; paste `diagraph graph --text`:\n{drawn}"
    );
}

/// A sentinel no widget draws.
fn sentinel() -> Cell {
    let mut c = Cell::new("¤");
    c.set_style(Style::new().add_modifier(Modifier::SLOW_BLINK));
    c
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// At any size and position the pane draws inside its area only and
    /// never panics, with any run state.
    #[test]
    fn the_pane_stays_inside_its_area(
        w in 0u16..230, h in 0u16..40, x in 0u16..6, y in 0u16..6,
        which in 0usize..4, waiting: bool, focused: bool,
    ) {
        let (_, state) = states().swap_remove(which);
        let outer = Rect::new(0, 0, w + 12, h + 12);
        let mut buf = Buffer::filled(outer, sentinel());
        let area = Rect::new(x, y, w, h);
        GraphPane {
            view: state.view(),
            theme: &state.theme,
            focused,
            scroll: 0,
            waiting,
        }
        .render(area, &mut buf);
        for cy in 0..outer.height {
            for cx in 0..outer.width {
                if !area.contains((cx, cy).into()) {
                    prop_assert_eq!(&buf[(cx, cy)], &sentinel(), "({}, {}) outside {:?}", cx, cy, area);
                }
            }
        }
    }

    /// Any table lays out, and its drawing is sound: boxes apart, lines
    /// continuous from port to arrowhead, never inside a box, and two
    /// lines share a stroke only when they run into the same border.
    #[test]
    fn any_table_lays_out_soundly(
        pairs in prop::collection::vec((0usize..10, 0usize..10), 1..40),
        short: bool,
    ) {
        let nodes = [NodeId::Start, NodeId::Planner, NodeId::Executor, NodeId::Gatekeeper,
            NodeId::VerifiedInput, NodeId::Verifier, NodeId::EvidenceRetry, NodeId::Composer,
            NodeId::Fallback, NodeId::End];
        let table: Vec<Edge> = pairs.iter().map(|(f, t)| Edge {
            from: nodes[*f], on: On::Any, guard: Guard::Always, to: nodes[*t], reason_code: None,
        }).collect();
        let d = layout(&table, if short { Names::Short } else { Names::Full }).unwrap();
        check_sound(&d);
        let text = d.to_text();
        for b in &d.boxes {
            prop_assert!(text.contains(b.label));
        }
        let mut buf = Buffer::empty(Rect::new(0, 0, d.width, d.height));
        let view = live_state(&pass_run(1)).view().clone();
        paint(&d, Live { view: &view, waiting: true }, &Theme::dark(), buf.area, &mut buf);
    }
}

fn check_sound(d: &Diagram) {
    use diagraph::tui::view::diagram::Dir;
    let inside = |x: u16, y: u16| {
        d.boxes
            .iter()
            .find(|b| x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + b.h)
    };
    for (i, a) in d.boxes.iter().enumerate() {
        assert!(a.x + a.w <= d.width && a.y + a.h <= d.height);
        for b in &d.boxes[i + 1..] {
            let apart = a.x + a.w < b.x || b.x + b.w < a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
            assert!(apart, "{:?} and {:?} overlap", a.node, b.node);
        }
    }
    let at = |x: i32, y: i32| {
        d.ink
            .iter()
            .find(|(ix, iy, _)| i32::from(*ix) == x && i32::from(*iy) == y)
            .map(|(_, _, ink)| ink)
    };
    for (x, y, ink) in &d.ink {
        assert!(*x < d.width && *y < d.height);
        let b = inside(*x, *y);
        match ink {
            Ink::Line { arms } => {
                assert!(
                    b.is_none(),
                    "line at ({x}, {y}) inside {:?}",
                    b.map(|b| b.node)
                );
                // Lines share a stroke only within one bus (same target);
                // lines of different buses meet only in a clean crossing.
                let target = |owners: &[&Vec<usize>]| {
                    let mut t: Vec<NodeId> = owners
                        .iter()
                        .copied()
                        .flatten()
                        .map(|l| d.links[*l].to)
                        .collect();
                    t.dedup();
                    t
                };
                let (v, h) = (target(&[&arms[0], &arms[1]]), target(&[&arms[2], &arms[3]]));
                assert!(
                    v.len() <= 1 && h.len() <= 1,
                    "({x}, {y}) shared by two buses"
                );
                if !v.is_empty() && !h.is_empty() && v != h {
                    assert!(
                        arms.iter().all(|a| !a.is_empty()),
                        "({x}, {y}) joins lines into different nodes"
                    );
                }
                for (dir, (dx, dy), back) in [
                    (Dir::Up, (0, -1), Dir::Down),
                    (Dir::Down, (0, 1), Dir::Up),
                    (Dir::Left, (-1, 0), Dir::Right),
                    (Dir::Right, (1, 0), Dir::Left),
                ] {
                    for l in &arms[dir as usize] {
                        let next = at(i32::from(*x) + dx, i32::from(*y) + dy);
                        let joined = match next {
                            Some(Ink::Line { arms }) => arms[back as usize].contains(l),
                            Some(Ink::Port { links, .. } | Ink::Head { links, .. }) => {
                                links.contains(l)
                            }
                            None => false,
                        };
                        assert!(joined, "line {l} breaks at ({x}, {y}) going {dir:?}");
                    }
                }
            }
            Ink::Port { node, .. } | Ink::Head { node, .. } => {
                let b = &d.boxes[*node];
                let on_border =
                    (*y == b.y || *y == b.y + b.h - 1 || *x == b.x || *x == b.x + b.w - 1)
                        && inside(*x, *y) == Some(b);
                let corner =
                    (*x == b.x || *x == b.x + b.w - 1) && (*y == b.y || *y == b.y + b.h - 1);
                assert!(
                    on_border && !corner,
                    "port or head at ({x}, {y}) off {:?}'s border",
                    b.node
                );
            }
        }
    }
}

//! The TUI crate of tests: `update` as "state + keys -> state", the event
//! loop on scripted input, whole-screen snapshots on a TestBackend (insta,
//! files in `snapshots/`), untrusted text reaching the screen inert, and a
//! few end-to-end runs of the binary in a real pseudo-terminal (tmux).
//! Also the mouse as synthetic events (`mouse`), widths counted in columns (`widths`), the unverified bindings group (`unverified`), and the graph pane's diagram
//! (`diagram`): layout from the edge table, run state, any size.
//!
//! Shared helpers live in `tests/helpers`; `fixtures` (synthetic runs,
//! rendering) is this crate's own, and `benches/tui.rs` reuses it.

// A test (or a helper of one) fails by unwrapping or panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// aimock (an OpenAI-compatible mock from npm) serves the pty test of a
// streaming model; this crate uses only its start.
#[allow(dead_code)]
#[path = "../services/aimock.rs"]
mod aimock;
mod fixtures;
#[path = "../helpers/mod.rs"]
mod helpers;

mod diagram;
mod event_loop;
mod live;
mod models;
mod mouse;
mod pty;
mod runs_history;
mod sanitize;
mod snapshots;
mod sources;
mod timeline;
mod unverified;
mod update;
mod widths;
mod workbench;

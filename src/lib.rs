//! diagraph: a terminal workbench for evidence-gated incident diagnosis.
//!
//! Module direction: `cli -> tui -> server -> engine, store`; `engine ->
//! model, tools, knowledge` (ARCHITECTURE.md, "Layering"). Nothing outside
//! `tui` (and the binary) knows it has a terminal.

pub mod cli;
pub mod config;
pub mod engine;
pub mod eval;
pub mod evidence;
pub mod knowledge;
pub mod model;
pub mod report;
pub mod scenario;
pub mod server;
pub mod store;
pub mod text;
pub mod tools;
pub mod tui;
pub mod vocab;
